"""Checks across the parsed pages: a translation's headings and blocks follow its source's, and every
#anchor and {ref} names something that exists on the page it names. Each failure is file:line."""

from __future__ import annotations

from lessonkit.errors import BuildError, raise_all
from lessonkit.model import Built
from lessonkit.names import did_you_mean

# Each check raises every error it finds at once. A page missing from `built` (it failed to parse) is left out:
# what links to it, or translates it, is checked once it parses.


def check_twins(built: list[Built], source: str) -> None:
    """A translation keeps its source's section ids, in order: the language switch lands on them."""
    heads = {(b.page.lang, b.page.slug): b.collected.toc for b in built}
    errors = []
    for b in built:
        if b.page.lang == source or (source, b.page.slug) not in heads:
            continue
        mine, theirs = b.collected.toc, [h["id"] for h in heads[source, b.page.slug]]
        for i, heading in enumerate(mine):
            if i >= len(theirs) or heading["id"] != theirs[i]:
                expected = repr(theirs[i]) if i < len(theirs) else "no heading"
                errors.append(BuildError(f"heading id {heading['id']!r} where the {source} page has {expected}",
                                         b.page.path, heading["line"]))
                break
        else:
            if len(mine) < len(theirs):
                errors.append(BuildError(f"missing heading {theirs[len(mine)]!r} that the {source} page has",
                                         b.page.path))
    raise_all(errors)


def page_ids(built: Built) -> set:
    """Every id the finished page will have: the body's, and those its template writes."""
    from lessonkit import names

    c = built.collected
    ids = {*names.TEMPLATE_IDS, *c.ids, *(names.claim_anchor(k) for k in c.claims),
           *(names.experiment_anchor(e) for e in c.experiments)}
    if c.claims or c.experiments:
        ids.add("verification-summary")
    if c.audits:
        ids.add("claims-audit")
        ids.update(f"audit-list-{a['n']}" for a in c.audits)
    cited = {a["ref"]["key"] for a in c.audits if a["ref"]}
    if cited:  # the bibliography (_audit.html)
        ids.update({"references", *(f"ref-{key}" for key in cited)})
    return ids


def check_links(built: list[Built], figures_unsure: set = frozenset()) -> None:
    """Every #anchor a page links to, and every figure, table or equation it names with {ref}, exists on
    the page it names; else file:line and a did-you-mean. (figures_unsure: pages with an unknown figure, whose
    missing figures are not reported: the figure's own error says what to fix.)"""

    from lessonkit.markdown.plugins import ANYWHERE

    by_url = {b.page.url: b for b in built}
    known: dict = {}
    errors = []
    for b in built:
        for url, label, line in b.collected.refs:
            if url == ANYWHERE:
                errors += _anywhere(b, label, line, built, figures_unsure)
                continue
            if url not in by_url or (url in figures_unsure and label.startswith("fig:")):
                continue
            labels = by_url[url].collected.labels
            if label not in labels:
                kind, _, name = label.partition(":")
                hint = did_you_mean(label, labels)
                where = "this page" if url == b.page.url else url.replace(".html", ".md")
                errors.append(BuildError(f"{{ref}} {label!r}: {where} has no "
                                         f"{dict(fig='figure', table='table', eq='equation')[kind]} {name!r}{hint}",
                                         b.page.path, line))
        for url, anchor, line, href in b.collected.links:
            if not anchor or url not in by_url:
                continue
            if url not in known:
                known[url] = page_ids(by_url[url])
            if anchor not in known[url]:
                hint = did_you_mean(anchor, known[url], shown=lambda found: f"#{found}")
                where = "this page" if url == b.page.url else url.replace(".html", ".md")
                errors.append(BuildError(f"link {href!r}: {where} has no anchor #{anchor}{hint}", b.page.path, line))
    raise_all(errors)


_WHAT = {"fig": "figure", "table": "table", "eq": "equation", "sec": "section"}


def _anywhere(b: Built, label: str, line: int, built: list[Built], figures_unsure: set) -> list[BuildError]:
    """A Quarto cross-reference (@fig-x): its target on this page, or on exactly one page of the course."""
    def labels_of(page: Built) -> set:
        return {*page.collected.labels, *(f"sec:{h['id']}" for h in page.collected.toc)}

    from lessonkit.markdown.plugins.citations import QUARTO_KINDS

    kind, _, name = label.partition(":")
    prefix = next(quarto for quarto, own in QUARTO_KINDS.items() if own == kind)
    written, what = f"@{prefix}-{name}", _WHAT[kind]
    if label in labels_of(b):
        return []
    holding = [p for p in built if p.lang == b.lang and label in labels_of(p)]
    if len(holding) == 1:
        return []
    if holding:
        import posixpath

        pages = ", ".join(str(p.page.path) for p in holding[:4])
        first = posixpath.relpath(holding[0].page.slug + ".md", posixpath.dirname(b.page.slug) or ".")
        hint = f"{{ref}}`{first}#{label}`" if kind != "sec" else f"[the section]({first}#{name})"
        return [BuildError(f"{written}: {len(holding)} pages have {what} {name!r} ({pages}): name the page, "
                           f"{hint}", b.page.path, line)]
    if kind == "fig" and (b.page.url in figures_unsure or any(p.page.url in figures_unsure for p in built)):
        return []  # (the unknown figure's own error says what to fix)
    every = {lab.partition(":")[2] for p in built if p.lang == b.lang for lab in labels_of(p) if lab.startswith(kind + ":")}
    return [BuildError(f"{written}: no page of the course has {what} {name!r}"
                       f"{did_you_mean(name, every, shown=lambda n: f'@{prefix}-{n}')}", b.page.path, line)]


def check_alignment(built: list[Built], source: str) -> list[BuildError]:
    """Within each section, a translation has the same blocks, in the same order, as its source: a paragraph
    left out or added is found with both files' lines."""
    by_key = {(b.page.lang, b.page.slug): b for b in built}
    problems = []
    for b in built:
        if b.page.lang == source or (source, b.page.slug) not in by_key:
            continue
        src = by_key[source, b.page.slug]
        theirs, mine = _sections(src.collected.outline), _sections(b.collected.outline)
        for section, blocks in theirs.items():
            other = mine.get(section, [])
            if [k for k, _ in other] == [k for k, _ in blocks]:
                continue
            name = f"section {section!r}" if section else "the text before the first section"
            def kinds(items):
                return [k.lstrip(">") for k, _ in items]

            counts = {k: (kinds(other).count(k), kinds(blocks).count(k))
                      for k in dict.fromkeys(kinds(blocks) + kinds(other))}
            differ = next(((k, n, m) for k, (n, m) in counts.items() if n != m), None)
            at = next((i for i, (x, y) in enumerate(zip(other, blocks, strict=False)) if x[0] != y[0]),
                      min(len(other), len(blocks)))
            line = other[at][1] if at < len(other) else (other[-1][1] if other else None)
            their_line = blocks[at][1] if at < len(blocks) else blocks[-1][1]
            if differ:
                kind, n, m = differ
                what = f"has {_count(n, kind)} where {src.page.path}:{their_line} has {m}"
            else:
                what = (f"has a {other[at][0].lstrip('>')} where {src.page.path}:{their_line} has a "
                        f"{blocks[at][0].lstrip('>')} (the same blocks, nested or ordered otherwise)")
            problems.append(BuildError(f"{name} {what}", b.page.path, line))
    return problems


def _sections(outline: list) -> dict:
    """section -> [(kind, line)], nested blocks marked by their depth ("paragraph" in a callout: ">paragraph")."""
    out: dict = {}
    for section, kind, line, level in outline:
        out.setdefault(section, []).append((">" * (level // 2) + kind, line))
    return out


def _count(n: int, kind: str) -> str:
    plural = {"list": "lists", "math": "displayed formulas", "code": "code blocks", "quote": "quotations",
              "rule": "rules", "footnotes": "footnote blocks"}
    return f"{n} {plural.get(kind, kind + 's') if n != 1 else kind}"
