"""The parse stage: every page's Markdown as body HTML, from the page cache when its inputs are unchanged,
and in parallel processes when enough pages changed to pay for them (a cold build, a big edit).

Results are the same whichever way a page was parsed: a test compares a serial and a parallel build
byte for byte.
"""

from __future__ import annotations

import threading

from . import markdown
from .errors import BuildError
from .model import Built

# Below this many pages to parse, forking workers costs more than it saves.
PARALLEL_MIN = 24

_WORK: tuple | None = None  # (pages, inputs) for forked workers: they inherit it, nothing is pickled


def shared_inputs_key(course, engine, renderers: str) -> str:
    """What every page depends on beyond its own file: templates, site.yaml, glossary, references, the engine."""
    from .pagecache import tree_digest

    content = course.root / "content"
    extra = [content / n for n in ("glossary.yaml", "references.yaml") if (content / n).is_file()]
    return tree_digest(course.root / "templates", content / "site.yaml", engine / "lessonkit", engine / "build.py",
                       *extra) + renderers


def parse_all(course, measurements, cache, shared: str, *, force: bool, jobs: int | None, say=print) -> list[Built]:
    from .pagecache import digest

    site = course.site
    inputs = markdown.Inputs(measurements, course.strings, set(site.config["pages"]), course.glossary,
                             course.references)
    navs = site.navigation()
    built, todo = [], []
    for page in site.pages:
        nav = navs[page.lang, page.slug]
        key = digest(shared, course.seeds, str(page.path), page.digest, nav.key(), site.is_stale(page))
        hit = None if force else cache.load(page, nav, key)
        built.append(hit or Built(page, nav, key, None, "", parsed=True))
        if hit is None:
            todo.append(len(built) - 1)
    if todo:
        math = markdown.math_cache()
        math.open(course.root / ".cache" / "math.json")
        workers = _workers(jobs, len(todo))
        say(f"parsing {len(todo)} of {len(built)} pages" + (f" in {workers} processes" if workers > 1 else ""))
        for i, (body, collected) in zip(todo, _parse([site.pages[i] for i in todo], inputs, workers), strict=True):
            built[i].body, built[i].collected = body, collected
        math.save()
    return built


def _workers(jobs: int | None, count: int) -> int:
    from .executors import cores

    # A preview server's threads must not be forked; a build has none.
    if count < PARALLEL_MIN or threading.active_count() > 1:
        return 1
    return max(1, min(jobs or cores(), count // (PARALLEL_MIN // 2)))


def _parse(pages: list, inputs, workers: int) -> list:
    if workers == 1:
        return [markdown.to_html(page, inputs) for page in pages]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORK
    markdown.parser()  # made once, before the fork, and inherited
    _WORK = (pages, inputs)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            chunk = max(1, len(pages) // (workers * 4))
            results = list(pool.map(_parse_one, range(len(pages)), chunksize=chunk))
    finally:
        _WORK = None
    formulas = markdown.math_cache()
    for _, _, converted in results:  # formulas converted in the workers join the cache
        if converted:
            formulas.data.update(converted)
            formulas.dirty = True
    return [(body, collected) for body, collected, _ in results]


def _parse_one(i: int):
    """In a worker: one page, and the formulas it converted (for the cache of the parent)."""
    pages, inputs = _WORK
    cache = markdown.math_cache()
    before = set(cache.data)
    try:
        body, collected = markdown.to_html(pages[i], inputs)
    except BuildError:
        raise
    except Exception as exc:  # a worker's failure travels back in one line
        raise BuildError(f"internal error while parsing: {type(exc).__name__}: {exc}", pages[i].path) from None
    return body, collected, {k: cache.data[k] for k in set(cache.data) - before}


def check_twins(built: list[Built], source: str) -> None:
    """A translation keeps its source's section ids, in order: the language switch lands on them."""
    heads = {(b.page.lang, b.page.slug): b.collected.toc for b in built}
    for b in built:
        if b.page.lang == source:
            continue
        mine, theirs = b.collected.toc, [h["id"] for h in heads[source, b.page.slug]]
        for i, heading in enumerate(mine):
            if i >= len(theirs) or heading["id"] != theirs[i]:
                expected = repr(theirs[i]) if i < len(theirs) else "no heading"
                raise BuildError(f"heading id {heading['id']!r} where the {source} page has {expected}",
                                 b.page.path, heading["line"])
        if len(mine) < len(theirs):
            raise BuildError(f"missing heading {theirs[len(mine)]!r} that the {source} page has", b.page.path)



def page_ids(built: Built) -> set:
    """Every id the finished page will have: the body's, and those its template writes."""
    from . import shown

    c = built.collected
    ids = {"top", "main", *c.ids, *(shown.claim_anchor(k) for k in c.claims),
           *(shown.experiment_anchor(e) for e in c.experiments)}
    if c.claims or c.experiments:
        ids.add("verification-summary")
    if c.audits:
        ids.add("claims-audit")
        ids.update(f"audit-list-{a['n']}" for a in c.audits)
    return ids


def check_links(built: list[Built]) -> None:
    """Every #anchor a page links to, and every figure, table or equation it names with {ref}, exists on
    the page it names; else file:line and a did-you-mean."""
    import difflib

    by_url = {b.page.url: b for b in built}
    known: dict = {}
    for b in built:
        for url, label, line in b.collected.refs:
            labels = by_url[url].collected.labels
            if label not in labels:
                kind, _, name = label.partition(":")
                close = difflib.get_close_matches(label, sorted(labels), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                where = "this page" if url == b.page.url else url.replace(".html", ".md")
                raise BuildError(f"{{ref}} {label!r}: {where} has no {dict(fig='figure', table='table', eq='equation')[kind]} "
                                 f"{name!r}{hint}", b.page.path, line)
        for url, anchor, line, href in b.collected.links:
            if not anchor:
                continue
            if url not in known:
                known[url] = page_ids(by_url[url])
            if anchor not in known[url]:
                close = difflib.get_close_matches(anchor, sorted(known[url]), n=1)
                hint = f" (did you mean #{close[0]}?)" if close else ""
                where = "this page" if url == b.page.url else url.replace(".html", ".md")
                raise BuildError(f"link {href!r}: {where} has no anchor #{anchor}{hint}", b.page.path, line)
