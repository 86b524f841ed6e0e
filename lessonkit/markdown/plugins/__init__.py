"""markdown-it-py plugins: each is ``plugin(md, **options)`` and registers rules.

They share one convention: the render ``env`` carries the page's context
(``env["ctx"]``, a ``PageContext``) and collects what the page uses.
"""

import re

# Where the verification summary goes; the blocks plugin writes it, the page renderer fills it.
SUMMARY_SLOT = "<!--lessonkit:verification-summary-->"


def figure_slot(fid: str, dimension: str) -> str:
    """Where a figure's width ("w") or height ("h") goes, once the figures are drawn (the render stage)."""
    return f"\x00{dimension}:{fid}\x00"


_FIGURE_SLOT = re.compile("\x00([wh]):([^\x00]+)\x00")
_REF_SLOT = re.compile("\x00(ref|reftext):([^#\x00]+)#([^\x00]+)\x00")


# The page of a Quarto cross-reference (@fig-x): the one that has its target, this page first.
ANYWHERE = "*"


def target_page(label: str, page_url: str, labels: dict) -> str | None:
    """The page a cross-reference from page_url leads to: its own page, else ANYWHERE's one page of its language
    (its folder) that has the label; None when none has it or several do (markdown/crosscheck.py says which)."""
    if label in labels.get(page_url, {}):
        return page_url
    lang = page_url.partition("/")[0] + "/"
    found = [url for url, own in labels.items() if label in own and url.startswith(lang)]
    return found[0] if len(found) == 1 else None


def ref_slot(url: str, label: str, linked: bool = True) -> str:
    """Where a cross-reference goes ({ref}); the render stage fills in its number and link (not linked: its
    words alone, as an audit entry names its statement)."""
    return f"\x00{'ref' if linked else 'reftext'}:{url}#{label}\x00"


def fill_refs(body: str, page_url: str, labels: dict, strings: dict, parts) -> str:
    """Each {ref} as a link that names its target (the partial parts/xref.html): "图 2" / "Eq. (3)"; labels:
    url -> {label: [number (a section's: its title), anchor, page]}. A target on another page whose number names no chapter says which
    page it is on: "Figure 2 of “Residuals”", not this page's own Figure 2; a chapter's is "Figure 3.2"."""
    import posixpath

    names = {"fig": "figure_label", "table": "table_label", "eq": "eq_label", "sec": "section_label"}

    from markupsafe import escape

    def fill(m):
        url, label = m.group(2), m.group(3)
        if url == ANYWHERE:
            url = target_page(label, page_url, labels)
        number, anchor, *page = labels[url][label]
        href = f"#{anchor}" if url == page_url else \
            posixpath.relpath(url, posixpath.dirname(page_url) or ".") + f"#{anchor}"
        text = strings[names[label.partition(":")[0]]].format(n=number)
        if url != page_url and page and page[0]:
            text = strings["xref_elsewhere"].format(label=text, page=page[0])
        return parts("xref", href=href, text=text, strings=strings) if m.group(1) == "ref" else str(escape(text))

    return _REF_SLOT.sub(fill, body)


def fill_figure_slots(body: str, sizes: dict, lang: str) -> str:
    """Put each figure's width and height (CSS pixels) where the page asks for them."""
    return _FIGURE_SLOT.sub(lambda m: str(sizes[m.group(2), lang][0 if m.group(1) == "w" else 1]), body)


def number_label(ctx, label: str, anchor: str, token) -> int | str:
    """Number a figure, table or equation of the page ("fig:…", "table:…", "eq:…"); unique per page. On a page
    whose front matter gives its chapter's `number`, the number is that chapter's: 3.2 for the second."""
    from lessonkit.errors import BuildError
    from lessonkit.markdown.plugins.lines import line_of

    kind, _, name = label.partition(":")
    if label in ctx.out.labels:
        raise BuildError(f"{kind} id {name!r} is used twice on this page", ctx.path, line_of(token, ctx))
    other = next((k for k, (_, a) in ctx.out.labels.items() if a == anchor), None)
    if other:  # a_b.c and a.b_c both make fig-a-b-c: one link would open the other
        raise BuildError(f"{kind} id {name!r} makes the same anchor {anchor!r} as {other!r}; rename one",
                         ctx.path, line_of(token, ctx))
    number = 1 + sum(1 for key in ctx.out.labels if key.startswith(kind + ":"))
    chapter = ctx.page.meta.get("number")
    shown = f"{chapter}.{number}" if chapter else number
    ctx.out.labels[label] = [shown, anchor]
    return shown
