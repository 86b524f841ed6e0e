"""The parse stage: every page's Markdown as body HTML, from the page cache when its inputs are unchanged,
and in parallel processes when enough pages changed to pay for them (a cold build, a big edit).

Results are the same whichever way a page was parsed: a test compares a serial and a parallel build
byte for byte.
"""

from __future__ import annotations

import threading

from lessonkit.errors import BuildError
from lessonkit.markdown import parser
from lessonkit.model import Built

# Below this many pages to parse, forking workers costs more than it saves.
PARALLEL_MIN = 24

_MAKE = None  # in_processes' function: forked workers inherit it, nothing is pickled


def shared_inputs_key(course, engine, renderers: str) -> str:
    """What every page depends on beyond its own file: templates, site.yaml, glossary, references, the engine."""
    from lessonkit.cache.pagecache import tree_digest

    content = course.root / "content"
    extra = [content / n for n in ("glossary.yaml", "references.yaml") if (content / n).is_file()]
    return tree_digest(course.root / "templates", content / "site.yaml", engine / "lessonkit", engine / "build.py",
                       *extra) + renderers + course.site.config.get("base_url", "")


def parse_all(course, measurements, cache, shared: str, *, force: bool, jobs: int | None, info: dict,
              meanwhile=None, say=print) -> list[Built]:
    """Every page: from the cache, or parsed (and put through its template) here or in worker processes.
    meanwhile(names), if given, runs here while the workers parse, with the site files that the parsed
    pages will be written to."""
    import hashlib
    import json

    site = course.site
    common = f"{shared}\0{course.seeds}"
    inputs = parser.Inputs(measurements, course.strings, set(site.config["pages"]), course.glossary,
                             course.references)
    navs = site.navigation()
    built, todo = [], []
    for page in site.pages:
        nav = navs[page.lang, page.slug]
        own = f"{common}\0{page.path}\0{page.digest}\0{json.dumps(nav.key(), ensure_ascii=False)}\0{site.is_stale(page)}"
        key = hashlib.sha256(own.encode()).hexdigest()[:24]
        hit = None if force else cache.load(page, nav, key)
        built.append(hit or Built(page, nav, key, None, "", parsed=True))
        if hit is None:
            todo.append(len(built) - 1)
    if todo:
        memos = parser.memos()
        for name, memo in memos.items():
            memo.open(course.root / ".cache" / name)
        workers = workers_for(jobs, len(todo))
        say(f"parsing {len(todo)} of {len(built)} pages" + (f" in {workers} processes" if workers > 1 else ""))
        env = course.templates
        shells = [built[i] for i in todo]
        parent = (lambda: meanwhile(_files_of(shells, site))) if meanwhile else None
        for b, (body, collected, html) in zip(shells, _parse(shells, (inputs, course, env, info), workers,
                                                             parent), strict=True):
            b.body, b.collected, b.html = body, collected, html
        for memo in memos.values():
            memo.save()
    return built


def parse_again(course, measurements, built: Built) -> None:
    """A cached page whose body the cache cannot give back: parse it now."""
    inputs = parser.Inputs(measurements, course.strings, set(course.site.config["pages"]), course.glossary,
                             course.references)
    built.body, built.collected = parser.to_html(built.page, inputs)
    built.parsed = True


def _files_of(shells: list, site) -> list[str]:
    """The site files made from these pages: each page's own, and the side-by-side pages it is part of."""
    from lessonkit.render import side_by_side

    source, names = site.source_language, {}
    for b in shells:
        names[b.page.url] = None
        others = [lang for lang in site.languages if lang != source] if b.lang == source else [b.lang]
        names.update(dict.fromkeys(side_by_side.url(lang, b.page.slug) for lang in others))
    return list(names)


def _parse(shells: list, work: tuple, workers: int, meanwhile=None) -> list:
    if workers == 1:
        return in_processes(lambda i: _page(shells[i], *work), len(shells), 1, meanwhile)
    parser.parser()  # made once, before the fork, and inherited

    def one(i: int) -> tuple:
        """In a worker: one page, and the conversions it made (for the caches of the parent)."""
        memos = parser.memos()
        before = {name: set(memo.data) for name, memo in memos.items()}
        try:
            result = _page(shells[i], *work)
        except BuildError as exc:
            raise exc.located(shells[i].page.path) from None
        except Exception as exc:  # a worker's failure travels back in one line, with its page
            raise BuildError(f"internal error while parsing: {type(exc).__name__}: {exc}",
                             shells[i].page.path) from None
        return (*result, {name: {k: memo.data[k] for k in set(memo.data) - before[name]}
                          for name, memo in memos.items()})

    results = in_processes(one, len(shells), workers, meanwhile)
    memos = parser.memos()
    for *_, made in results:  # conversions made in the workers join the parent's caches
        for name, entries in made.items():
            memos[name].merge(entries)
    return [result[:3] for result in results]


def _page(shell: Built, inputs, course, env, info) -> tuple:
    """One page: its body and what it collected, then the page through its template (slots still open)."""
    from lessonkit.render import templates

    shell.body, shell.collected = parser.to_html(shell.page, inputs)
    return shell.body, shell.collected, templates.page_html(env, course, shell, inputs.measurements, info)


def workers_for(jobs: int | None, count: int) -> int:
    """How many processes `count` items are worth: one below PARALLEL_MIN, or in a process with threads."""
    from lessonkit.measure.executors import cores

    # A preview server's threads must not be forked; a build has none.
    if count < PARALLEL_MIN or threading.active_count() > 1:
        return 1
    return max(1, min(jobs or cores(), count // (PARALLEL_MIN // 2)))


def in_processes(make, count: int, workers: int, meanwhile=None) -> list:
    """[make(0), …, make(count - 1)], in `workers` forked processes (here when 1).

    make is inherited by the workers, not pickled; what it returns travels back. A worker's failure
    comes back as a one-line BuildError. meanwhile(), if given, runs here while the workers work (it must
    not fork); with one worker, after make."""
    global _MAKE
    if workers == 1:
        results = [make(i) for i in range(count)]
        if meanwhile is not None:
            meanwhile()
        return results
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _MAKE = make
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            results = pool.map(_make_one, range(count), chunksize=max(1, count // (workers * 4)))
            if meanwhile is not None:  # every worker is forked by now: map has handed them all the work
                meanwhile()
            return list(results)
    finally:
        _MAKE = None


def _make_one(i: int):
    try:
        return _MAKE(i)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError(f"internal error: {type(exc).__name__}: {exc}") from None


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
    from lessonkit.measure import shown

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


def check_alignment(built: list[Built], source: str) -> list[BuildError]:
    """Within each section, a translation has the same blocks, in the same order, as its source: a paragraph
    left out or added is found with both files' lines."""
    by_key = {(b.page.lang, b.page.slug): b for b in built}
    problems = []
    for b in built:
        if b.page.lang == source:
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
