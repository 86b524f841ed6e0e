"""Markdown to HTML: one markdown-it-py parser with the lessonkit plugins.

A page's plugins read the course-wide Inputs (measurements, interface strings, glossary …)
and write what they find into the page's Collected (model.py). The body they produce
keeps two kinds of slots for the render stage: figure sizes (known once figures are
drawn) and the place of the verification summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from lessonkit.errors import BuildError, NotChecked, raise_all
from lessonkit.markdown.conversions import Memo
from lessonkit.markdown.plugins.blocks import blocks_plugin
from lessonkit.markdown.plugins.citations import citations_plugin
from lessonkit.markdown.plugins.headings import headings_plugin
from lessonkit.markdown.plugins.lines import line_of, lines_plugin
from lessonkit.markdown.plugins.links import links_plugin
from lessonkit.markdown.plugins.math import math_plugin
from lessonkit.markdown.plugins.outline import outline_plugin
from lessonkit.markdown.plugins.punct import punct_plugin
from lessonkit.markdown.plugins.spans import spans_plugin
from lessonkit.markdown.plugins.unaccounted import unaccounted_plugin
from lessonkit.markdown.plugins.values import values_plugin
from lessonkit.model import Collected, Page


@dataclass
class Inputs:
    """What every page's plugins read: the same for all pages of a build."""

    measurements: object  # claims.Measurements
    strings: dict  # language -> interface strings (with the language's tag and typography)
    slugs: set  # every page of the course
    glossary: list = field(default_factory=list)
    references: dict = field(default_factory=dict)
    plugins: tuple = ()  # the course's plugins (lessonkit/load/plugins.py): their markdown() adds syntax
    parts: object = None  # the theme's partials (lessonkit/load/parts.py): the HTML each feature writes
    unloaded: dict = field(default_factory=dict)  # "glossary"/"references" -> why the pages' uses are not checked

    def glossary_entry(self, lang: str, text: str, key: str | None) -> dict:
        for entry in self.glossary:
            if (key and entry["id"] == key) or (not key and entry[lang] == text.strip()):
                return entry
        if "glossary" in self.unloaded:
            raise NotChecked(self.unloaded["glossary"])
        wanted = f"key={key!r}" if key else repr(text.strip())
        raise BuildError(f"glossary term {wanted} is not in content/glossary.yaml{self._closest_terms(lang, text, key)}")

    def _closest_terms(self, lang: str, text: str, key: str | None) -> str:
        """A did-you-mean: entries whose id (for key=) or whose term in this language is close to, contains or is
        contained in what was written; for a term, also how to name an entry whatever the text says (key=)."""
        import difflib

        if key:
            ids = [e["id"] for e in self.glossary]
            close = difflib.get_close_matches(key, ids, n=3, cutoff=0.6)
            return f" (did you mean key={close[0]!r}?)" if close else ""
        written = text.strip()
        terms = {e[lang]: e["id"] for e in self.glossary if isinstance(e.get(lang), str)}
        low = written.casefold()
        close = [t for t in terms if low in t.casefold() or t.casefold() in low]
        close += [t for t in difflib.get_close_matches(written, list(terms), n=3, cutoff=0.6) if t not in close]
        if not close:
            return ""
        best = close[0]
        return (f" (did you mean {best!r}? or keep the text and name the entry: "
                f"[{written}]{{.term key={terms[best]}}})")

    def reference(self, key: str) -> dict:
        if key not in self.references:
            from lessonkit.load.references import unknown

            if "references" in self.unloaded:
                raise NotChecked(self.unloaded["references"])

            raise unknown(key, self.references)
        return self.references[key]


@dataclass
class PageContext:
    """One page being parsed: its source, the shared inputs, what it collects, and per-page counters."""

    page: Page
    inputs: Inputs
    out: Collected = field(default_factory=Collected)
    ids: set = field(default_factory=set)  # ids given so far (headings, spans)
    exercises: int = 0
    marked: dict = field(default_factory=dict)  # paragraph -> value keys already marked in it
    errors: list = field(default_factory=list)  # what the plugins found wrong, all raised once the page is done

    @property
    def lang(self) -> str:
        return self.page.lang

    @property
    def path(self):
        return self.page.path

    @property
    def body_line(self) -> int:
        return self.page.body_line

    @property
    def strings(self) -> dict:
        return self.inputs.strings[self.page.lang]

    @property
    def measurements(self):
        return self.inputs.measurements

    @property
    def root(self) -> str:
        """The relative path from this page to the site root: '../' or '../../'."""
        return "../" * self.page.url.count("/")

    def report(self, exc: BuildError, token=None) -> str:
        """An error in one place of the page: kept, so that the page's other errors are found in the same pass;
        the page fails once parsed. Returns what the place renders as meanwhile (nothing)."""
        self.errors.append(exc.located(self.path, None if token is None else line_of(token, self)))
        return ""

    def lang_tag(self, lang: str) -> str:
        return self.inputs.strings[lang]["tag"]

    def use_value(self, key: str) -> None:
        if key not in self.out.values:
            self.out.values.append(key)

    def show_claim(self, key: str) -> None:
        if key not in self.out.claims:
            self.out.claims.append(key)
        self.show_experiment(key.split(".", 1)[0])

    def show_experiment(self, name: str) -> None:
        if name not in self.out.experiments:
            self.out.experiments.append(name)

    def need_figure(self, fid: str, line: int) -> None:
        if fid not in [f for f, _ in self.out.figures]:
            self.out.figures.append((fid, line))


@lru_cache(maxsize=64)
def _lexer(lang: str):
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang) if lang else TextLexer()
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=1)
def _formatter():
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)  # made once: its style sheet costs a millisecond per block


def _highlight_made_by() -> str:
    from lessonkit.io import files_digest
    from lessonkit.versions import package_version

    return f"pygments {package_version('Pygments')} {files_digest(Path(__file__), length=12)}"


HIGHLIGHTED = Memo(_highlight_made_by)


def _highlighted(code: str, lang: str) -> str:
    def make() -> str:
        from pygments import highlight

        return highlight(code, _lexer(lang), _formatter())

    return HIGHLIGHTED.get(f"{lang}\0{code}", make)


def _fence(self, tokens, idx, options, env):
    """A fenced code block, highlighted, through the partial parts/code.html."""
    from markdown_it.common.utils import unescapeAll
    from markupsafe import Markup

    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    lang = info.split(maxsplit=1)[0] if info else ""
    code = Markup(_highlighted(token.content, lang))
    return env["ctx"].inputs.parts("code", language=lang or "text", code=code) + "\n"


def _table_open(self, tokens, idx, options, env):
    # Wide tables scroll inside their own box instead of widening the page.
    return '<div class="table-wrap" tabindex="0">' + self.renderToken(tokens, idx, options, env)


def _table_close(self, tokens, idx, options, env):
    return self.renderToken(tokens, idx, options, env) + "</div>\n"


@lru_cache(maxsize=4)
def parser(plugins: tuple = ()) -> MarkdownIt:
    """The parser, with the course's plugins' syntax after the engine's own."""
    from lessonkit.load.plugins import call

    md = MarkdownIt("commonmark", {"html": False})
    md.enable(["table", "strikethrough"])
    md.use(lines_plugin)
    md.use(math_plugin)
    md.use(punct_plugin)
    md.use(values_plugin)
    md.use(headings_plugin)  # before spans: a span's id that repeats a heading's is the span's error
    md.use(spans_plugin)
    md.use(blocks_plugin)
    md.use(links_plugin)
    md.use(citations_plugin)
    md.use(unaccounted_plugin)
    md.use(footnote_plugin)
    md.use(outline_plugin)  # last: it marks the top-level blocks the others made
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    md.add_render_rule("fence", _fence)
    for plugin in plugins:
        call(plugin, "markdown", md)
    return md


def memos() -> dict:
    """The conversions kept between builds, by cache file name: the parse stage opens, merges and saves them."""
    from lessonkit.markdown.plugins.math import CACHE

    return {"math.json": CACHE, "highlight-code.json": HIGHLIGHTED}


def to_html(page: Page, inputs: Inputs, errors: list | None = None) -> tuple[str, Collected]:
    """A page's Markdown as body HTML (with slots), and what its plugins collected. The errors the plugins
    find in one place each (a value key, LaTeX, a term, a link …) are raised together once the page is done,
    or, given `errors`, appended to it: what the page collected is then whole, for the checks across pages."""
    md = parser(inputs.plugins)
    ctx = PageContext(page, inputs)
    env = {"ctx": ctx}
    try:
        tokens = md.parse(page.body, env)
        body = md.renderer.render(tokens, md.options, env)
    except BuildError:
        raise
    except Exception as exc:
        if not inputs.plugins:  # the engine's own: a bug, with its traceback
            raise
        names = ", ".join(repr(p.name) for p in inputs.plugins)
        raise BuildError(f"the syntax of plugin {names} failed here: {type(exc).__name__}: {exc}", page.path) from exc
    ctx.out.ids = _IDS.findall(body)  # for links into this page, checked once every page is parsed
    if "$" in page.meta["title"] or "{" in page.meta["title"]:  # math or a value in the title: its <h1> shows it
        found = len(ctx.errors)
        ctx.out.title_html = md.renderInline(page.meta["title"], {"ctx": ctx, "title": True})
        for exc in ctx.errors[found:]:  # said of the front matter's title, not of a line of the body
            exc.line, exc.message = None, f"title: {exc.message}"
    if errors is None:  # (after the title: its mistakes are the page's too)
        raise_all(ctx.errors)
    else:
        errors.extend(ctx.errors)
    return body, ctx.out


_IDS = re.compile(r' id="([^"]+)"')
