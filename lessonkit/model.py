"""The course as the build sees it: its pages, the site they make, and what building a page yields.

Every stage of the pipeline (lessonkit/pipeline.py) passes these along: `load` makes a Site of Pages,
`parse` turns each Page into a Built page (its body's HTML and what it Collected), `render` finishes it.
This module imports nothing from the engine: every stage may use it.
Lookups a stage needs across pages (a page's twins, its neighbours) are indexes made once,
so no stage looks at every page for every page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Page:
    slug: str  # "chapter-3/intro": the path below content/<lang>/, without .md
    lang: str
    path: Path  # relative to the course root, for error messages
    meta: dict
    body: str
    body_line: int  # the file line on which the body starts (1-based)
    digest: str  # sha256 of the file, first 12 hex digits
    error: Exception | None = None  # why it could not be read (its front matter): it is not parsed, and fails the build

    @property
    def url(self) -> str:
        return f"{self.lang}/{self.slug}.html"

    @property
    def title(self) -> str:
        """The title as text (for <title>, links and lists): math in it as close as Unicode gets."""
        return tex_text(self.meta["title"])


_TEX_SYMBOLS = {
    r"\cdot": "·", r"\times": "×", r"\top": "ᵀ", r"\le": "≤", r"\ge": "≥", r"\ne": "≠", r"\approx": "≈",
    r"\infty": "∞", r"\sum": "∑", r"\prod": "∏", r"\to": "→", r"\in": "∈", r"\ldots": "…", r"\dots": "…",
    r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ", r"\epsilon": "ε", r"\theta": "θ",
    r"\lambda": "λ", r"\mu": "μ", r"\pi": "π", r"\sigma": "σ", r"\tau": "τ", r"\phi": "φ", r"\omega": "ω",
    r"\Sigma": "Σ", r"\Delta": "Δ", r"\nabla": "∇", r"\partial": "∂", r"\|": "‖",
}


def tex_text(text: str) -> str:
    r"""'Why divide by $\sqrt{d_k}$' -> 'Why divide by √d_k': a title's math as plain text."""
    import re

    def plain(m):
        tex = m.group(1)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", tex)
        tex = re.sub(r"\\(?:mathrm|text|operatorname|mathbf|mathit)\{([^{}]*)\}", r"\1", tex)
        for command, symbol in sorted(_TEX_SYMBOLS.items(), key=lambda kv: -len(kv[0])):
            tex = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, tex)
        tex = re.sub(r"\\(left|right|quad|qquad)(?![A-Za-z])|\\[,;!]", "", tex)
        tex = re.sub(r"\\([A-Za-z]+)", r"\1", tex).replace("{", "").replace("}", "").strip()
        return tex.replace("^ᵀ", "ᵀ")

    return re.sub(r"\$\$?([^$]+)\$\$?", plain, text)


@dataclass
class Nav:
    """Where a page sits: the previous and next page in its language, the section index above it."""

    prev: Page | None = None
    next: Page | None = None
    crumbs: list = field(default_factory=list)  # [{"url", "title"}]
    course: list = field(default_factory=list)  # the language's pages in site.yaml's order: [{"url", "title", "depth"}]
    course_key: str = ""  # their digest, made once per language (a page's key stays short in a large course)

    def key(self) -> list:
        """What of the navigation ends up in a page: neighbours' addresses and titles, the course's pages."""
        return [[p.url, p.title] if p else None for p in (self.prev, self.next)] + [self.crumbs, self.course_key]


@dataclass
class Site:
    config: dict
    pages: list = field(default_factory=list)  # every Page, in site order, language by language
    stale: dict = field(default_factory=dict)  # translation page path -> why it is behind its source
    errors: list = field(default_factory=list)  # the pages' own errors found while loading (their front matter)

    def __post_init__(self):
        self._index()

    def _index(self) -> None:
        self._by_key = {(p.lang, p.slug): p for p in self.pages}
        self._twins: dict = {}
        for p in self.pages:
            self._twins.setdefault(p.slug, []).append(p)

    def add(self, page: Page) -> None:
        self.pages.append(page)
        self._by_key[page.lang, page.slug] = page
        self._twins.setdefault(page.slug, []).append(page)

    @property
    def languages(self) -> list[str]:
        return self.config["languages"]

    @property
    def source_language(self) -> str:
        return self.config["source_language"]

    def page(self, lang: str, slug: str) -> Page | None:
        return self._by_key.get((lang, slug))

    def twins(self, page: Page) -> list[Page]:
        """The page in every language, itself included, in the site's language order."""
        return self._twins[page.slug]

    def is_stale(self, page: Page) -> bool:
        return str(page.path) in self.stale

    def navigation(self) -> dict:
        """Every page's Nav, keyed by (lang, slug), in one pass over the pages."""
        import hashlib
        import json

        out = {}
        for lang in self.languages:
            same = [p for p in self.pages if p.lang == lang]
            # A folder's index heads its pages: chapter-3/index sits beside lesson-l5, chapter-3/3-1 under it.
            course = [{"url": p.url, "title": p.title, "depth": p.slug.count("/") - p.slug.endswith("/index")}
                      for p in same]
            course_key = hashlib.sha256(json.dumps(course, ensure_ascii=False).encode()).hexdigest()[:24]
            for i, page in enumerate(same):
                crumbs = []
                if "/" in page.slug:
                    index = self.page(lang, page.slug.rsplit("/", 1)[0] + "/index")
                    if index is not None and index is not page:
                        crumbs = [{"url": index.url, "title": index.title}]
                out[lang, page.slug] = Nav(same[i - 1] if i else None, same[i + 1] if i + 1 < len(same) else None,
                                           crumbs, course, course_key)
        return out


@dataclass(kw_only=True)
class Collected:
    """What building a page tells the rest of the build; the parse stage fills it, the page cache keeps it."""

    toc: list = field(default_factory=list)  # headings: level, id, text, line
    figures: list = field(default_factory=list)  # (figure id, line)
    captions: dict = field(default_factory=dict)  # figure id -> [(value key, line)]: what its caption quotes
    terms: list = field(default_factory=list)  # glossary ids
    audits: list = field(default_factory=list)  # audited statements
    citations: list = field(default_factory=list)  # the sources its prose cites ([@key]): their entries
    claims: list = field(default_factory=list)  # claim keys shown
    values: list = field(default_factory=list)  # value keys shown
    experiments: list = field(default_factory=list)  # experiment names shown
    warnings: list = field(default_factory=list)  # (line, message): said on every build, cached or not
    unaccounted: list = field(default_factory=list)  # (line, number, excerpt): numbers in prose nothing backs
    ids: list = field(default_factory=list)  # every id the body defines (headings, spans, figures, footnotes …)
    links: list = field(default_factory=list)  # (page url, #anchor or "", line, href): checked once all are parsed
    labels: dict = field(default_factory=dict)  # "fig:id" -> [number, anchor]: what cross-references name
    refs: list = field(default_factory=list)  # (page url, "fig:id", line): {ref}s, filled in once all are parsed
    title_html: str = ""  # the page's title as inline Markdown (math as MathML), for its <h1>
    shown: dict = field(default_factory=dict)  # value key (with its format) -> the text the page shows
    outline: list = field(default_factory=list)  # (section id, block kind, line) of every top-level block
    math: str = ""  # the characters its formulas may be drawn with, sorted: the site's math font holds them

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in COLLECTED}

    @classmethod
    def from_json(cls, data: dict) -> Collected:
        made = cls(**{name: data[name] for name in COLLECTED})
        made.figures = [tuple(f) for f in made.figures]
        return made


COLLECTED = tuple(Collected.__dataclass_fields__)


@dataclass
class Built:
    """A page on its way out: what parsing it collected, its body's HTML, and what its finished page was made with."""

    page: Page
    nav: Nav
    key: str  # the page-cache key of its own inputs
    collected: Collected
    body: str | None  # the Markdown as HTML, with the slots the render stage fills (None: still in the cache)
    parsed: bool = False  # parsed by this build (False: from the cache)
    sizes: dict = field(default_factory=dict)  # the figure sizes its page was rendered with
    resolved: dict = field(default_factory=dict)  # "url#label" -> [number, anchor] its {ref}s were filled with
    stamp: list | None = None  # how its file in the site looked when the last build wrote it

    @property
    def lang(self) -> str:
        return self.page.lang


@dataclass
class Course:
    """What the load stage gives every later stage: the site and the course-wide data around it."""

    root: Path
    site: Site
    strings: dict  # language -> interface strings
    glossary: list
    references: dict
    seeds: list  # the seeds every experiment runs on; the first is the course seed
    templates: object = None  # the Jinja environment the load stage made: every page (and worker) renders with it
    plugins: tuple = ()  # the plugins site.yaml names, made (lessonkit/load/plugins.py)
    parts: object = None  # the theme's partials (lessonkit/load/parts.py)
    data_files: tuple = ()  # the data files the load stage read (glossary, references, styles): every page's inputs
    errors: list = field(default_factory=list)  # the load stage's: pages' front matter, data files (with the pages')
    unloaded: dict = field(default_factory=dict)  # "glossary"/"references" -> why the pages' uses are not checked

    @property
    def cache(self) -> Path:
        return self.root / ".cache"

    @property
    def seed(self) -> int:
        return self.seeds[0]
