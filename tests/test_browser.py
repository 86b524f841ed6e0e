"""Real pages in Debian's Chromium: math and figures laid out, the language switch keeps the section."""

import re

import pytest

LESSON = ["zh/lesson-l5.html", "en/lesson-l5.html"]


@pytest.fixture
def visit(page, server):
    """Open a page and collect console errors and any request that leaves 127.0.0.1."""
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("request", lambda r: r.url.startswith(server) or r.url.startswith("data:")
            or problems.append(f"outside request: {r.url}"))

    def go(rel):
        page.goto(f"{server}/{rel}")
        page.wait_for_load_state("networkidle")
        # Images below the fold may still be decoding after the network is idle.
        page.wait_for_function("[...document.images].every(i => i.complete)", timeout=5000)
        return page

    go.problems = problems
    return go


@pytest.mark.parametrize("rel", LESSON)
def test_math_and_figures_are_laid_out(visit, rel):
    page = visit(rel)
    boxes = page.eval_on_selector_all("math", "els => els.map(e => e.getBoundingClientRect()).map(r => [r.width, r.height])")
    assert len(boxes) >= 20
    assert all(w > 0 and h > 0 for w, h in boxes), boxes
    figures = page.eval_on_selector_all(".figure img", "els => els.map(e => [e.complete, e.naturalWidth, e.alt])")
    assert len(figures) == 3 and all(done and width > 0 and alt for done, width, alt in figures), figures
    assert page.evaluate("getComputedStyle(document.querySelector('math')).fontFamily").startswith('LessonMath')
    assert page.evaluate("document.fonts.check('16px LessonMath')")
    assert visit.problems == []


@pytest.mark.parametrize("rel, twin", [(LESSON[0], LESSON[1]), (LESSON[1], LESSON[0])])
def test_language_switch_lands_on_the_same_section(visit, rel, twin):
    page = visit(rel)
    page.evaluate("document.getElementById('stream-growth').scrollIntoView({block: 'start'})")
    # Activate by keyboard: a pointer click in Playwright first scrolls the target, which moves the reader.
    page.evaluate("document.querySelector('[data-lang-switch]').focus({preventScroll: true})")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"{twin}#stream-growth")
    top = page.evaluate("document.getElementById('stream-growth').getBoundingClientRect().top")
    assert 0 <= top < 100  # just below the sticky header
    assert visit.problems == []


def test_language_switch_without_javascript_still_leads_to_the_twin(browser, server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{server}/{LESSON[0]}#gradient-highway")
    page.click("[data-lang-switch]")
    assert page.url == f"{server}/{LESSON[1]}"
    assert page.locator("h1").inner_text().startswith("L5")
    context.close()


@pytest.mark.parametrize("rel", LESSON)
def test_phone_width_has_no_horizontal_overflow_and_hints_start_collapsed(browser, server, rel):
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(f"{server}/{rel}")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    hints = page.locator("details.hint")
    assert hints.count() >= 2 and all(not hints.nth(i).evaluate("d => d.open") for i in range(hints.count()))
    hints.first.locator("summary").click()
    assert hints.first.evaluate("d => d.open")
    context.close()


@pytest.mark.parametrize("rel", LESSON)
def test_shown_numbers_match_their_data_value(visit, rel):
    page = visit(rel)
    values = page.eval_on_selector_all(
        ".value", "els => els.map(e => [e.dataset.key, e.dataset.value, e.querySelector('.num').textContent])")
    assert len(values) >= 15
    for key, raw, text in values:
        assert raw and text and not re.search(r"\de[-+]?\d", text), (key, text)
