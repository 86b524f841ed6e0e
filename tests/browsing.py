"""What the browser checks share: tabs that record what goes wrong, a cold load that measures layout shift, a
page's weight, and the pages a course's sources name (collection builds nothing)."""

from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from pathlib import Path

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 800}
# bytes, uncompressed, before figures and fonts; popover panels apart. 96 KB since the audit covers every statement
# of fact: the L5 page then carried 40 audited statements (a mark, a list entry and a panel each) and measured 87 KB.
# 100 KB since the panels print as numbered notes (--pdf): each mark's data-note and the print rules added 3.8 KB
# to the L5 page (92.4 → 96.2 KB). 80 KB since each page's evidence (its summary, audit list and panels) is its
# evidence page's: the L5 page then measured 73 KB, and the largest evidence page less.
HTML_CSS_BUDGET = 80_000
PANEL_BUDGET = 6_000  # bytes, one provenance or audit panel
CLS_BUDGET = 0.001
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


# --- pages, named from a course's sources -----------------------------------------------------------------

def named_pages(config: dict, markdown, glossary: bool) -> dict[str, list[str]]:
    """The site's pages as site.yaml and the Markdown (`markdown(lang, page)`, its text) name them, and which of
    them have sections (a heading of level 2 or 3: a contents list), a hint and a glossary term (`glossary`: the
    course has one); parallel/LANG/PAGE.html shows both languages."""

    def text_of(lang: str, page: str) -> str:
        return _FENCE.sub("", markdown(lang, page))

    source, langs = config["source_language"], config["languages"]
    pages = ["index.html"]
    marks: dict[str, list[str]] = {"toc": [], "hints": [], "terms": [], "figures": [], "audits": []}
    for lang in langs:
        pages += [f"{lang}/{name}.html" for name in ("search", "glossary")
                  if name == "search" or glossary]
        pages += [f"{lang}/experiments/{name}.html" for name in config["experiments"]]
        for page in config["pages"]:
            text = text_of(lang, page)
            rels = [f"{lang}/{page}.html"] + ([f"parallel/{lang}/{page}.html"] if lang != source else [])
            pages += rels[1:] + rels[:1]
            if re.search(r"\{(?:val|claim)\}`|\baudit=", text):  # a shown value, claim or audit: an evidence page
                pages.append(f"{lang}/{page}.evidence.html")
            if re.search(r"^#{2,3} ", text, re.M):
                marks["toc"].append(rels[0])
            for kind, mark in (("hints", r"^:::+ *hint\b"), ("terms", r"\]\{\.term\b"), ("figures", r"^:::+ *figure\b"),
                               ("audits", r"\{\.claim\b[^}]*\baudit=")):
                both = text + ("" if lang == source else text_of(source, page))
                marks[kind] += [rels[0]] * bool(re.search(mark, text, re.M)) + rels[1:] * bool(re.search(mark, both, re.M))
    return {"pages": sorted(pages), **{kind: sorted(set(rels)) for kind, rels in marks.items()}}


def site_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if not p.name.startswith("404"))


def marked_pages(site: Path) -> dict[str, list[str]]:
    """The same lists, read from the built site's HTML."""
    html = {rel: (site / rel).read_text("utf-8") for rel in site_pages(site)}
    return {"pages": sorted(html), **{kind: sorted(rel for rel, text in html.items() if mark in text) for kind, mark
                                      in (("toc", 'class="toc"'), ("hints", '<details class="hint"'),
                                          ("terms", 'class="term"'), ("figures", '<figure class="figure"'),
                                          ("audits", 'id="audit-layer"'))}}


def twin_of(rel: str) -> str | None:
    lang, _, rest = rel.partition("/")
    other = {"zh": "en", "en": "zh"}.get(lang)
    return f"{other}/{rest}" if other else None


# --- browser tabs: one context (theme × width × JS) with one page each, reused ----------------------

class Tab:
    """A page in its own context that records console errors, page errors, failed and outside requests."""

    def __init__(self, browser, server: str, **context_args):
        self.server = server
        self.js = context_args.get("java_script_enabled", True)
        self.context = browser.new_context(**context_args)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        page = self.page
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed request: {r.url} ({r.failure})"))
        page.on("request", lambda r: r.url.startswith(server + "/") or r.url.startswith("data:")
                or self.problems.append(f"request leaving 127.0.0.1: {r.url}"))

    def visit(self, rel: str):
        """Open a page and wait until its images, stylesheets and fonts are in (no 500 ms network-idle wait)."""
        page = self.page
        # Leave the last page first: a request of its still in flight fails when it is left, and that is not
        # this page's problem.
        page.goto("about:blank")
        self.problems.clear()
        response = page.goto(f"{self.server}/{rel}", wait_until="load")
        assert response is not None and response.ok, f"{rel}: HTTP {response and response.status}"
        page.wait_for_function("[...document.images].every(i => i.complete)", timeout=5000)
        # With JavaScript off, timers and animation frames never fire: wait for the fonts only.
        page.evaluate("document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => r())))"
                      if self.js else "document.fonts.ready.then(() => true)")
        return page

    def close(self):
        self.context.close()


def tabs_of(browser, server: str):
    """`get(width, scheme, js)`: one Tab per context, made when first asked for; closes them when done."""
    made: dict = {}

    def get(width: str = "desktop", scheme: str = "light", js: bool = True) -> Tab:
        key = (width, scheme, js)
        if key not in made:
            made[key] = Tab(browser, server, viewport=DESKTOP if width == "desktop" else PHONE,
                            color_scheme=scheme, java_script_enabled=js)
        return made[key]

    yield get
    for tab in made.values():
        tab.close()


# --- a cold load, and what a page weighs ---------------------------------------------------------------------

LAYOUT_SHIFT = """
window.__cls = 0;
try {
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) window.__cls += e.value;
  }).observe({type: 'layout-shift', buffered: true});
} catch (e) { window.__cls = -1; }
// Whether the first frame had the whole page: its render-blocking link's element was parsed by then.
window.__whole = null;
requestAnimationFrame(() => {
  const expect = document.querySelector('link[rel=expect][blocking~=render]');
  window.__whole = !!(expect && document.querySelector(expect.getAttribute('href')));
});
"""


def drawn_in(page, selector: str) -> list[dict]:
    """The fonts Chromium drew the first matching element's text with (DevTools' own account, not a guess from
    metrics): familyName, isCustomFont (a web font) …"""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    node = cdp.send("DOM.querySelector", {"nodeId": cdp.send("DOM.getDocument")["root"]["nodeId"], "selector": selector})
    assert node["nodeId"], f"no {selector} on the page"
    return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]


def cold_load(browser, url: str) -> tuple[float, list[str]]:
    """Layout shift once the fonts are in, and the stylesheets, in a fresh context.

    A fresh context has an empty cache, as a first-time reader has (the math font included). Also whether the
    first frame had the whole page: a page painted as it parses shifts when later table rows widen a column,
    as on a loaded machine, where Chromium paints sooner (CLS 0.011 on a CI run; at 6x CPU throttling, 3 of 6
    loads of that page shifted), and on a slow network.
    """
    context = browser.new_context(viewport=DESKTOP)
    try:
        context.add_init_script(LAYOUT_SHIFT)
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.evaluate("document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => "
                      "requestAnimationFrame(() => setTimeout(r, 50)))))")
        cls = page.evaluate("window.__cls")
        assert page.evaluate("window.__whole") is True, f"{url}: the first frame was painted before the page was parsed"
        sheets = page.evaluate("[...document.styleSheets].map(s => s.href).filter(Boolean)")
    finally:
        context.close()
    return cls, sheets


class _Panels(HTMLParser):
    """Byte ranges of the page's panels (provenance, audit details): popovers, opened on demand, and the evidence
    page's panels (section.prov), each read alone, by the mark that leads to it."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=False)
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line.encode("utf-8")))
        self.open: tuple[str, int, int] | None = None  # tag, depth, start byte
        self.sizes: list[int] = []  # each panel
        self.collapsed: list[int] = []  # each closed block of evidence (<details class="evidence">)
        self.feed(source)

    def _at(self) -> int:
        line, col = self.getpos()
        return self.starts[line - 1] + len(self.lines[line - 1][:col].encode("utf-8"))

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        collapsed = tag == "details" and "open" not in names and "evidence" in (names.get("class") or "").split()
        panel = "popover" in names or (tag == "section" and "prov" in (names.get("class") or "").split())
        if self.open is None and (panel or collapsed):
            self.open = (tag, 1, self._at(), collapsed)
        elif self.open and tag == self.open[0]:
            self.open = (tag, self.open[1] + 1, *self.open[2:])

    def handle_endtag(self, tag):
        if self.open and tag == self.open[0]:
            tag, depth, start, collapsed = self.open
            self.open = (tag, depth - 1, start, collapsed) if depth > 1 else None
            if depth == 1:
                (self.collapsed if collapsed else self.sizes).append(self._at() + len(f"</{tag}>") - start)


def page_weight(site: Path, rel: str, sheets: list[str]) -> dict:
    """What a reader downloads to read the page: HTML outside its panels, each panel, the stylesheets, gzipped."""
    raw = (site / rel).read_bytes()
    parsed = _Panels(raw.decode("utf-8"))
    panels, hidden = parsed.sizes, sum(parsed.sizes) + sum(parsed.collapsed)
    css = b"".join((site / sheet).read_bytes() for sheet in sheets)
    return {"html": len(raw), "panels": len(panels), "panel_bytes": sum(panels), "largest_panel": max(panels, default=0),
            "collapsed": sum(parsed.collapsed),
            "reading": len(raw) - hidden, "css": len(css), "bytes": len(raw) - hidden + len(css),
            "gzip": len(gzip.compress(raw, mtime=0)) + len(gzip.compress(css, mtime=0))}


def overflow(page) -> str | None:
    """Why a page is wider than a phone's screen (its widest elements, outside the boxes that scroll), or None."""
    width = page.evaluate("document.documentElement.scrollWidth")
    if width <= PHONE["width"]:
        return None
    wide = page.evaluate("""w => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > w + 1 && !e.closest('.table-wrap, .math-display, pre, [popover]'))
        .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')
                         + ' right=' + Math.round(e.getBoundingClientRect().right))""", PHONE["width"])
    return f"page is {width} px wide at {PHONE['width']} px; widest: {wide}"


def within_budgets(browser, server: str, site: Path, rel: str, source_language: str) -> dict:
    """Budgets a busy machine cannot break, asserted and printed ("budget:"); first paint is a timing, reported
    by bench/fcp.py. Returns the page's row.

    The budget is for what is read: the page's HTML outside its popover panels and its closed blocks of
    evidence, which open on demand (each panel has its own budget), plus its stylesheets. A side-by-side page holds two pages' text:
    it may be as large as its two pages together, and no larger."""
    cls, sheets = cold_load(browser, f"{server}/{rel}")
    row = {**page_weight(site, rel, [h.removeprefix(server + "/").split("#")[0] for h in sheets]), "cls": round(cls, 4)}
    print(f"budget: {rel:32} {row['bytes']:7d} B to read (html {row['reading']} + css {row['css']}), "
          f"{row['panels']} panels {row['panel_bytes']} B (largest {row['largest_panel']}), "
          f"collapsed evidence {row['collapsed']} B, gzip {row['gzip']}, CLS {cls:.4f}")
    assert cls >= 0, "layout-shift entries are not reported by this browser"
    assert row["largest_panel"] <= PANEL_BUDGET, f"{rel}: a panel of {row['largest_panel']} bytes, budget {PANEL_BUDGET}"
    budget = HTML_CSS_BUDGET
    if rel.startswith("parallel/"):
        lang, _, page = rel.removeprefix("parallel/").partition("/")
        budget = max(budget, sum(page_weight(site, f"{twin}/{page}", [])["reading"] for twin in (source_language, lang))
                     + row["css"])
    assert row["bytes"] <= budget, f"{rel}: {row['bytes']} bytes of HTML (outside panels) + CSS, budget {budget}"
    assert cls < CLS_BUDGET, f"{rel}: layout shift {cls:.4f} while fonts load, budget {CLS_BUDGET}"
    return row
