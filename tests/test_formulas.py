"""Math: the formula gallery of common notation converts, reads as MathML Core (no run-together operator
names), and renders. The course's own formulas are checked the same way in test_course.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import ROOT, make_course, run_build
from formulas import ML, typesetting_problems

from lessonkit.markdown.plugins.math import tex_to_mathml

SHOTS = ROOT / "artifacts" / "screenshots"


def test_the_gallery_has_the_common_notation_once():
    assert len(set(ML)) == len(ML) >= 30


@pytest.mark.parametrize("tex", ML)
def test_each_formula_converts_without_run_together_names(tex):
    for display in (False, True):
        mathml = tex_to_mathml(tex, display)
        assert mathml.startswith("<math") and typesetting_problems(mathml) == [], mathml


def test_operator_names_are_applied_with_their_spacing():
    assert "<mi>ln</mi><mo>\u2061</mo><mspace" in tex_to_mathml(r"\ln n", False)
    assert "<mi>softmax</mi>" in tex_to_mathml(r"\mathrm{softmax}(z)", False)
    assert typesetting_problems('<mi>ln</mi><mi>n</mi>') == ['<mi>ln</mi><mi']
    assert typesetting_problems('<mi mathvariant="normal">r</mi><mi mathvariant="normal">a</mi>'
                                '<mi mathvariant="normal">n</mi>')


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> Path:
    """The gallery as a page of a fixture course, built."""
    rows = "\n\n".join(f"$${tex}$$" for tex in ML)
    zh = f"---\ntitle: 公式\n---\n\n## 公式 {{#formulas}}\n\n{rows}\n"
    en = (f"---\ntitle: Formulas\ntranslated_from: {hashlib.sha256(zh.encode()).hexdigest()[:12]}\n---\n\n"
          f"## Formulas {{#formulas}}\n\n{rows}\n")
    root = make_course(tmp_path_factory.mktemp("gallery") / "c", pages={"zh": zh, "en": en})
    config = root / "content" / "site.yaml"  # formulas only: no experiment
    config.write_text(config.read_text("utf-8").replace("experiments: [tiny]", "experiments: []"), "utf-8")
    result = run_build("--no-search", "--seeds", "1", "--check", "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "site"


def test_the_gallery_page_builds_and_checks(gallery):
    html = (gallery / "en" / "page.html").read_text("utf-8")
    assert html.count("<math") >= len(ML) and typesetting_problems(html) == []


def test_the_gallery_renders_in_chromium(gallery, browser):
    """Every formula lays out with a size; screenshots for a reader's look in light and dark."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(gallery))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport={"width": 1000, "height": 800}, color_scheme=scheme)
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/en/page.html")
            page.evaluate("document.fonts.ready")
            sizes = page.eval_on_selector_all("math", "ms => ms.map(m => m.getBoundingClientRect().width)")
            assert sizes and min(sizes) > 0
            page.screenshot(path=str(SHOTS / f"formulas.{scheme}.png"), full_page=True)
            context.close()
    finally:
        httpd.shutdown()
