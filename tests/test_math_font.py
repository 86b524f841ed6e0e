"""The math font: the theme's whole font (templates/static/fonts/math.otf) is published cut to the characters of
the site's formulas, as WOFF2, fetched by pages with math only; and a font that comes late moves nothing."""

from __future__ import annotations

import functools
import http.server
import io
import re
import threading
import time
from pathlib import Path

import pytest
from browsing import DESKTOP, LAYOUT_SHIFT, drawn_in
from conftest import ROOT, append_to_page, build_here, make_course
from fontTools.ttLib import TTFont

from lessonkit.errors import BuildError
from lessonkit.markdown.plugins.math import characters
from lessonkit.write import mathfont

FORMULAS = {
    "zh": "\n行内 $\\alpha_i + \\hat{h}$，显示：\n\n$$ \\sum_{k=1}^{n} \\left( \\frac{\\partial L}{\\partial W} \\right)^2"
          " \\le \\sqrt{\\lVert x \\rVert} $$\n",
    "en": "\nInline $\\alpha_i + \\hat{h}$, a display:\n\n$$ \\sum_{k=1}^{n} \\left( \\frac{\\partial L}{\\partial W}"
          " \\right)^2 \\le \\sqrt{\\lVert x \\rVert} $$\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = make_course(tmp_path_factory.mktemp("mathfont") / "c")
    append_to_page(root, "page", FORMULAS)
    build_here(root)
    return root


def math_text(site: Path) -> dict[str, set[str]]:
    """Every page of the site, and the characters its formulas are drawn with."""
    return {p.relative_to(site).as_posix(): characters(p.read_text("utf-8")) for p in site.rglob("*.html")}


def test_the_published_font_is_a_small_woff2_that_holds_every_character_of_every_formula(built):
    site = built / "site"
    data = (site / "static" / mathfont.PUBLISHED).read_bytes()
    assert data[:4] == b"wOF2"
    assert len(data) <= 60_000, f"{len(data)} bytes"
    assert not list(site.rglob("*.otf")), "the whole font is published"
    font = TTFont(io.BytesIO(data))
    cmap = {chr(c) for c in font.getBestCmap()}
    drawn = set().union(*math_text(site).values())
    assert {"α", "∑", "∂", "√", "‖", "𝛼", "ℎ", "𝐿"} <= drawn  # the letters, and their italic forms
    whole = {chr(c) for c in TTFont(ROOT / "templates" / "static" / mathfont.SOURCE).getBestCmap()}
    assert (drawn & whole) - cmap == set()  # (what the whole font lacks, the reader's own math font draws)
    # The stretchy delimiters and the large operator are built from the MATH table's variants: kept.
    assert "MATH" in font and "GSUB" in font
    assert len(font.getGlyphOrder()) > len(cmap)  # variants and script forms beyond the characters
    assert "GUST-FONT-LICENSE.txt" in {p.name for p in (site / "static" / "fonts").iterdir()}


def test_only_pages_with_math_fetch_the_font(built):
    site = built / "site"
    preloads = {rel: bool(re.search(r'<link rel="preload" href="[./]*static/fonts/math\.woff2"', (site / rel).read_text("utf-8")))
                for rel in math_text(site)}
    with_math = {rel for rel, chars in math_text(site).items() if chars}
    assert with_math >= {"zh/page.html", "en/page.html"}
    assert {rel for rel, yes in preloads.items() if yes} == with_math
    assert "index.html" not in with_math and not preloads["index.html"]


def test_the_cut_follows_the_formulas_and_is_kept_between_builds(tmp_path, monkeypatch):
    root = make_course(tmp_path / "c")
    append_to_page(root, "page", FORMULAS)
    cuts = []
    real = mathfont._cut
    monkeypatch.setattr(mathfont, "_cut", lambda data, chars: cuts.append(chars) or real(data, chars))
    monkeypatch.setattr(mathfont, "_CUT", {})  # this process's cuts: cleared before each build, so that
    build_here(root)                            # what is kept between builds is the course's cache
    first = (root / "site" / "static" / mathfont.PUBLISHED).read_bytes()
    assert len(cuts) == 1
    (root / "content" / "zh" / "page.md").write_text((root / "content" / "zh" / "page.md").read_text("utf-8")
                                                     + "\n又一句话。\n", "utf-8")
    mathfont._CUT.clear()
    build_here(root)
    assert len(cuts) == 1, "a prose edit cut the font again"
    build_here(root, out=tmp_path / "elsewhere")
    assert (tmp_path / "elsewhere" / "static" / mathfont.PUBLISHED).read_bytes() == first  # same bytes: no timestamp
    append_to_page(root, "page", {"zh": "\n$\\oint \\aleph$\n", "en": "\n$\\oint \\aleph$\n"})
    build_here(root)
    assert len(cuts) == 2
    cmap = TTFont(io.BytesIO((root / "site" / "static" / mathfont.PUBLISHED).read_bytes())).getBestCmap()
    assert {ord("∮"), ord("ℵ")} <= set(cmap)
    from lessonkit.io import read_cache, write_cache

    kept = read_cache(root / ".cache" / "math-font.json")  # (damaged by this machine's own build: sealed again)
    write_cache(root / ".cache" / "math-font.json", {**kept, "woff2": "not base64!"})
    append_to_page(root, "page", {"zh": "\n再一句。\n", "en": "\nOne more.\n"})
    mathfont._CUT.clear()
    build_here(root)  # a damaged entry is a miss, never an error
    assert len(cuts) == 3
    (root / "templates" / "static" / "fonts" / "math.otf").write_bytes(b"not a font")  # a theme's own, broken
    with pytest.raises(BuildError, match=r"^templates/static/fonts/math.otf: not an OpenType math font the build can cut"):
        build_here(root)


# --- in Chromium: a font that comes late ----------------------------------------------------------------

class _SlowFont(http.server.SimpleHTTPRequestHandler):
    """The site, its math font sent `delay` seconds late and kept by the browser's cache."""

    delay = 0.0

    def end_headers(self):
        if self.path.endswith(".woff2"):
            self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def do_GET(self):
        if self.path.endswith(".woff2"):
            time.sleep(type(self).delay)
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_font(kitchen_site):
    handler = type("Handler", (_SlowFont,), {})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(kitchen_site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()


def test_a_late_math_font_moves_nothing_and_the_next_page_has_it(browser, slow_font):
    address, handler = slow_font
    handler.delay = 1.0  # a slow first visit: the font comes long after the page is drawn
    context = browser.new_context(viewport=DESKTOP)
    try:
        context.add_init_script(LAYOUT_SHIFT)
        page = context.new_page()
        page.goto(f"{address}/zh/lesson.html", wait_until="load")
        page.wait_for_function("performance.getEntriesByType('resource').some(e => e.name.endsWith('.woff2') && e.responseEnd > 0)")
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100))))")
        assert page.evaluate("window.__cls") == 0, "the formulas moved when their font came"
        boxes = page.eval_on_selector_all("main math", "els => els.map(e => e.getBoundingClientRect().width > 0 "
                                          "&& e.getBoundingClientRect().height > 0)")
        assert boxes and all(boxes), "a formula is blank"
        assert not any(f["isCustomFont"] for f in drawn_in(page, "main math mi")), "redrawn in the late font"
        handler.delay = 0.0
        page.goto(f"{address}/en/lesson.html", wait_until="load")  # the next page: the font is in the cache
        page.evaluate("document.fonts.ready")
        assert any(f["isCustomFont"] for f in drawn_in(page, "main math mi")), "the cached font is not used"
        assert page.evaluate("window.__cls") == 0
    finally:
        context.close()


def test_paper_waits_for_the_math_font(browser, kitchen_site):
    """The printer (--pdf) reads the site from disk, where the preload is refused (a file: page has no origin)
    and the font comes too late for `optional`; its stylesheets wait for their fonts instead."""
    from lessonkit.write.pdf import _site_only

    root = kitchen_site.resolve().as_uri() + "/"
    context = browser.new_context(viewport=DESKTOP)
    try:
        context.route("**/*", lambda route: _site_only(route, kitchen_site, root))
        page = context.new_page()
        page.emulate_media(media="print")
        page.goto(root + "en/lesson.html", wait_until="load")
        page.evaluate("document.fonts.ready.then(() => true)")
        assert any(f["isCustomFont"] for f in drawn_in(page, "main math mi")), "printed in another math font"
    finally:
        context.close()
