"""The side-by-side page: a page in the source language and in a translation, block by block.

Both bodies are cut at their block markers (markdown/plugins/outline.py) and paired section by section, in
order: a paragraph with its translation, a figure with the other language's figure. The source column
keeps its ids, so a link or the language switch lands on the same section; the translation's ids
take a prefix ("en-low-rank"), and so do the links that point at them. Values, terms, audit marks and
math are the single pages' own markup; the value and audit marks of both columns lead to the same
panels (a claim is one claim in every language): the source page's evidence page's.
"""

from __future__ import annotations

import posixpath
import re

from lessonkit.io import digest
from lessonkit.markdown.plugins import SUMMARY_SLOT, fill_figure_slots
from lessonkit.markdown.plugins.outline import blocks
from lessonkit.markup import ids, in_tags

_ID = re.compile(r'(\s(?:id|aria-describedby|aria-labelledby))="([^"]+)"')
_LOCAL = re.compile(r'(\shref)="#([^"]+)"')
_URL = re.compile(r'(\s(?:href|src))="([^"#:][^":]*?)(#[^"]*)?"')


def url(lang: str, slug: str) -> str:
    """Where the side-by-side page of a source page and its translation into `lang` lives."""
    return f"parallel/{lang}/{slug}.html"


def files_of(built: list, site) -> list[str]:
    """The site files made from these pages: each page's own, and the side-by-side pages it is part of."""
    source, names = site.source_language, {}
    for b in built:
        names[b.page.url] = None
        others = [lang for lang in site.languages if lang != source] if b.lang == source else [b.lang]
        names.update(dict.fromkeys(url(lang, b.page.slug) for lang in others))
    return list(names)


def to_make(course, pages: list, rendered: list, sizes: dict, pages_cache, out) -> tuple[list, list]:
    """The side-by-side pages to make again, (url, key, source, translation) each: those one of whose two
    pages is rendered, or whose file is not the one written for them; and the urls of the others, kept."""
    by_key = {(b.lang, b.page.slug): b for b in pages}
    again = {id(b) for b in rendered}
    todo, kept = [], []
    for src in (b for b in pages if b.lang == course.site.source_language):
        for other in (by_key[lang, src.page.slug] for lang in course.site.languages if lang != src.lang):
            here = url(other.lang, src.page.slug)
            # What the pair page is made of: both pages, the sizes of their figures, their {ref} numbers.
            shown = sorted({(fid, b.lang): sizes.get((fid, b.lang)) for b in (src, other)
                            for fid, _ in b.collected.figures}.items())
            key = digest(src.key, other.key, shown, sorted(src.resolved.items()), sorted(other.resolved.items()))
            if id(src) not in again and id(other) not in again and pages_cache.unchanged_extra(here, key, out):
                kept.append(here)
            else:
                todo.append((here, key, src, other))
    return todo, kept


def _rows(src_body: str, src_outline: list, other_body: str, other_outline: list) -> list[tuple[str, str]]:
    """Pairs of blocks, section by section; a block without a counterpart stands next to an empty cell."""
    def by_section(body, outline):
        sections: dict = {}
        tops = [section for section, _, _, level in outline if level == 0]
        for section, block in zip(tops, blocks(body), strict=False):
            sections.setdefault(section, []).append(block)
        return sections

    src, other = by_section(src_body, src_outline), by_section(other_body, other_outline)
    rows = []
    for section in list(src) + [s for s in other if s not in src]:
        a, b = src.get(section, []), other.get(section, [])
        rows += [(a[i] if i < len(a) else "", b[i] if i < len(b) else "") for i in range(max(len(a), len(b)))]
    return rows


def _relocate(html: str, page_url: str, here: str) -> str:
    """Relative links and images of a page, as seen from another place in the site."""
    base, to = posixpath.dirname(page_url), posixpath.dirname(here)

    def move(m):
        target = posixpath.normpath(posixpath.join(base, m.group(2)))
        return f'{m.group(1)}="{posixpath.relpath(target, to)}{m.group(3) or ""}"'

    return in_tags(_URL, move, html)


def _prefixed(html: str, prefix: str) -> str:
    """The translation's ids (and the links and references to them) with a prefix: no id is defined twice."""
    own = ids(html)
    html = in_tags(_ID, lambda m: f'{m.group(1)}="{" ".join(prefix + v if v in own else v for v in m.group(2).split())}"',
                   html)
    return in_tags(_LOCAL, lambda m: f'{m.group(1)}="#{prefix + m.group(2) if m.group(2) in own else m.group(2)}"',
                   html)


def body(src, other, here: str, sizes: dict, labels: dict, strings: dict, parts) -> tuple[list[tuple[str, str]], list[str]]:
    """The aligned rows of the two pages (slots filled, links relocated, the translation's ids prefixed), and the
    glossary terms both show."""
    from lessonkit.markdown.plugins import fill_refs

    prefix = f"{other.lang}-"
    columns = []
    for built, own_prefix in ((src, ""), (other, prefix)):
        html = fill_figure_slots(built.body.replace(SUMMARY_SLOT, ""), sizes, built.lang)
        html = fill_refs(html, built.page.url, labels, strings[built.lang], parts)
        html = _relocate(html, built.page.url, here)
        # A cross-reference into the page itself points at this column's copy of the figure or equation.
        own_file = posixpath.relpath(built.page.url, posixpath.dirname(here))
        html = html.replace(f'href="{own_file}#', 'href="#')
        columns.append(_prefixed(html, own_prefix) if own_prefix else html)
    rows = _rows(columns[0], src.collected.outline, columns[1], other.collected.outline)
    terms = sorted(set(src.collected.terms) & set(other.collected.terms))
    return rows, terms
