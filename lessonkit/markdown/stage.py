"""The parse stage: every page's Markdown as body HTML and what it collected, from the page cache when its
inputs are unchanged, and in forked processes when enough pages changed to pay for them (a cold build, a
big edit).

    parsing = Parsing(course, measurements, cache, shared, force=…, jobs=…)
    with parsing:          # the workers parse parsing.todo
        …                  # meanwhile the parent prepares what it can (the files these pages go to)
    parsing.pages          # every page, parsed or from the cache

Results are the same whichever way a page was parsed: a test compares a serial and a parallel build
byte for byte.
"""

from __future__ import annotations

import hashlib
import json

from lessonkit import processes
from lessonkit.errors import BuildError
from lessonkit.markdown import parser
from lessonkit.model import Built


def shared_inputs_key(course, engine, renderers: str) -> str:
    """What every page depends on beyond its own file: templates, site.yaml, the data files the load stage read
    (glossary, references, their styles), the engine package; `renderers`, what else makes the pages
    (libraries' versions, options, plugins)."""
    from lessonkit.io import files_digest
    from lessonkit.load import theme
    from lessonkit.load.inputs import skipped

    return files_digest(*theme.folders(course.root), course.root / "content" / "site.yaml", engine / "lessonkit",
                        *course.data_files, skip=skipped) + renderers + course.site.config.get("base_url", "")


class Parsing:
    """Every page of the course: from the cache, or parsed inside the `with` block (here or in workers)."""

    def __init__(self, course, measurements, cache, shared: str, *, force: bool, jobs: int | None,
                 fork: bool = True, say=print):
        site = course.site
        common = f"{shared}\0{course.seeds}"
        self.inputs = parser.Inputs(measurements, course.strings, set(site.config["pages"]), course.glossary,
                                    course.references, course.plugins, course.parts, course.unloaded)
        self.course, self.say = course, say
        navs = site.navigation()
        self.pages: list[Built] = []
        self.todo: list[Built] = []  # the pages to parse
        for page in site.pages:
            nav = navs[page.lang, page.slug]
            own = f"{common}\0{page.path}\0{page.digest}\0{json.dumps(nav.key(), ensure_ascii=False)}\0" \
                  f"{site.is_stale(page)}"
            key = hashlib.sha256(own.encode()).hexdigest()[:24]
            hit = None if force or page.error else cache.load(page, nav, key)
            self.pages.append(hit or Built(page, nav, key, None, "", parsed=True))
            if hit is None:
                self.todo.append(self.pages[-1])
        self.workers = processes.workers_for(jobs, len(self.todo), fork)
        self.errors: list[BuildError] = []  # every page's errors: one page's do not stop the others' parse
        self._pool = None

    def __enter__(self) -> Parsing:
        if not self.todo:
            return self
        self.memos = parser.memos()
        for name, memo in self.memos.items():
            memo.open(self.course.root / ".cache" / name)
        self.say(f"parsing {len(self.todo)} of {len(self.pages)} pages"
                 + (f" in {self.workers} processes" if self.workers > 1 else ""))
        if self.workers > 1:
            parser.parser(self.inputs.plugins)  # made once, before the fork, and inherited
        self._pool = processes.Pool(self._one, len(self.todo), self.workers).__enter__()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if self._pool is None:
            return
        self._pool.__exit__(kind, exc, tb)
        if kind is not None:
            return
        for b, (body, collected, made, errors) in zip(self.todo, self._pool.results, strict=True):
            self.errors += errors
            if collected is None:  # stopped at its error: the checks across pages leave it out
                continue
            b.body, b.collected = body, collected
            for name, entries in made.items():  # conversions made in the workers join the parent's caches
                self.memos[name].merge(entries)
        for memo in self.memos.values():
            memo.save()

    def _one(self, i: int) -> tuple:
        """One page (in a worker when there are several): its body, what it collected, and the conversions it
        made (for the parent's caches)."""
        shell = self.todo[i]
        before = {name: set(memo.data) for name, memo in self.memos.items()} if self.workers > 1 else {}
        errors: list[BuildError] = []  # this page's, reported with every other page's
        if shell.page.error:  # its front matter could not be read: the load stage reported it
            return None, None, {}, []
        try:
            body, collected = parser.to_html(shell.page, self.inputs, errors)
        except BuildError as exc:  # one the page cannot be parsed past
            return None, None, {}, [exc.located(shell.page.path)]
        except Exception as exc:
            if self.workers == 1:
                raise
            # a worker's failure travels back in one line, with its page
            raise BuildError(f"internal error while parsing: {type(exc).__name__}: {exc}", shell.page.path) from None
        if self.workers == 1:
            return body, collected, {}, errors
        return body, collected, {name: {k: memo.data[k] for k in set(memo.data) - before[name]}
                                 for name, memo in self.memos.items()}, errors


def parse_again(course, measurements, built: Built) -> None:
    """A cached page whose body the cache cannot give back: parse it now."""
    inputs = parser.Inputs(measurements, course.strings, set(course.site.config["pages"]), course.glossary,
                           course.references, course.plugins, course.parts, course.unloaded)
    built.body, built.collected = parser.to_html(built.page, inputs)
    built.parsed = True
