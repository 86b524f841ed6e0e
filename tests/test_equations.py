"""Numbered equations as a reader sees them in Chromium: the number at the right, on the equation's line, at
every width where both fit; under the equation, still at the right, only where they do not."""

from __future__ import annotations

import pytest
from conftest import append_to_page, build_here, http_server, make_course

SHORT = "\n$$ a = b + c $$ (sum)\n\n见{ref}`eq:sum`。\n"
LONG = ("\n$$ y = x_1 + x_2 + x_3 + x_4 + x_5 + x_6 + x_7 + x_8 + x_9 + x_{10} + x_{11} + x_{12} + x_{13} $$ (long)\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = make_course(tmp_path_factory.mktemp("eq") / "c")
    append_to_page(root, "page", {"zh": SHORT + LONG, "en": SHORT.replace("见", "See ") + LONG})
    build_here(root)
    yield from http_server(root / "site")


def boxes(page, anchor: str) -> dict:
    return page.evaluate("""id => { const d = document.getElementById(id);
        const r = e => { const b = e.getBoundingClientRect(); return {l: b.left, r: b.right, t: b.top, b: b.bottom}; };
        return {box: r(d), math: r(d.querySelector('math')), num: r(d.querySelector('.eq-number')),
                text: d.querySelector('.eq-number').textContent}; }""", anchor)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("width", [1280, 375])
def test_the_number_sits_at_the_right_on_the_equations_line(browser, served, lang, width):
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(f"{served}/{lang}/page.html")
    b = boxes(page, "eq-sum")
    assert b["text"] == "(1)"
    middle = (b["num"]["t"] + b["num"]["b"]) / 2
    assert b["math"]["t"] <= middle <= b["math"]["b"], b  # on the equation's line
    assert b["num"]["l"] >= b["math"]["r"] - 1, b  # right of the equation
    assert abs(b["num"]["r"] - b["box"]["r"]) <= 2, b  # at the column's right edge
    page.close()


def test_a_line_too_narrow_for_both_puts_the_number_under_at_the_right(browser, served):
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.goto(f"{served}/en/page.html")
    b = boxes(page, "eq-long")
    assert b["text"] == "(2)"
    assert b["num"]["t"] >= b["math"]["b"] - 1, b  # wrapped under the equation
    assert b["math"]["l"] >= b["box"]["l"] - 1, b  # wider than the column: it starts at the left and scrolls
    assert abs(b["num"]["r"] - b["box"]["r"]) <= 2, b
    page.close()
    wide = browser.new_page(viewport={"width": 1280, "height": 800})
    wide.goto(f"{served}/en/page.html")
    b = boxes(wide, "eq-long")
    assert b["math"]["t"] <= (b["num"]["t"] + b["num"]["b"]) / 2 <= b["math"]["b"], b  # it fits on a desktop
    wide.close()
