"""Provenance and audit panels on a fixture course, in Chromium. A value's mark is a link named by what vouches
for the number (a parameter's number is itself the link); with JavaScript off it leads to the panel that says
where the number comes from, on the page's evidence page, and back; with JavaScript on that panel opens in
place and Escape closes it. An audit mark and its entry in the evidence page's audit list lead to the same
panel."""

from __future__ import annotations

import shutil

import pytest
from conftest import append_to_page, http_server, make_book, run_build, with_data_files

AUDITED = {
    "zh": "\n## 审计 {#audit}\n\n[均值约为 {val}`tiny.mean`]{.claim audit=verified key=\"tiny.mean\"}。\n",
    "en": "\n## Audit {#audit}\n\n[The mean is about {val}`tiny.mean`]{.claim audit=verified key=\"tiny.mean\"}.\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = with_data_files(make_book(tmp_path_factory.mktemp("panels") / "book", pages=1))
    append_to_page(root, "p000", AUDITED)
    result = run_build("--no-search", "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    host = tmp_path_factory.mktemp("host")
    shutil.copytree(root / "site", host / "site")
    yield from http_server(host / "site")


def _page(browser, served, javascript: bool):
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.goto(f"{served}/en/p000.html")
    return context, tab


@pytest.fixture
def page(browser, served):
    context, tab = _page(browser, served, javascript=False)
    yield tab
    context.close()


@pytest.fixture
def scripted(browser, served):
    context, tab = _page(browser, served, javascript=True)
    yield tab
    context.close()


def _open(page) -> list[str]:
    return page.eval_on_selector_all(":popover-open", "els => els.map(e => e.id)")


def _target(page) -> str:
    return page.evaluate("() => location.pathname.split('/').pop() + location.hash")


def test_a_values_mark_names_the_number_and_leads_to_its_provenance_without_javascript(page):
    mark = page.locator('.value[data-key="tiny.mean"] a').first
    name = mark.get_attribute("aria-label")
    assert name == "Verified: tiny.mean", name  # read after the number it follows: what vouches for it
    unnamed = page.eval_on_selector_all(".value a", "bs => bs.filter(b => !(b.getAttribute('aria-label') || '')"
                                        ".includes(b.closest('.value').dataset.key)).map(b => b.outerHTML)")
    assert unnamed == []  # every mark says which value it vouches for
    href = mark.get_attribute("href")
    assert href.startswith("p000.evidence.html#prov-claim-")
    mark.click()
    page.wait_for_url(f"**/{href}")
    panel = page.locator(f"#{href.split('#')[1]}")
    assert panel.is_visible() and "experiments/tiny.py" in panel.inner_text()
    assert page.evaluate("() => document.querySelector(':target').id") == href.split("#")[1]


def test_with_javascript_a_mark_opens_its_panel_in_place_and_escape_closes_it(scripted):
    page = scripted
    mark = page.locator('.value[data-key="tiny.mean"] a').first
    target = mark.get_attribute("href").split("#")[1]
    assert _open(page) == []
    mark.click()
    page.wait_for_function("id => document.getElementById(id)?.matches(':popover-open')", arg=target)
    assert _target(page) == "p000.html" and _open(page) == [target]
    panel = page.locator(f"#{target}")
    assert "experiments/tiny.py" in panel.inner_text()
    # Its link to the evidence page's summary leads there; the close button is the one with focus.
    assert panel.locator("a", has_text="Machine-verification summary").get_attribute("href").startswith(
        "p000.evidence.html#claim-")
    assert page.evaluate("() => document.activeElement.className") == "prov-close"
    page.keyboard.press("Escape")
    assert _open(page) == []
    assert page.evaluate("() => document.activeElement.closest('.value')?.dataset.key") == "tiny.mean"


def test_an_audit_mark_and_its_list_entry_lead_to_the_same_panel(page):
    mark = page.locator("#audit-1 + .audit-mark, .audit-mark[href$='#audit-panel-1']").first
    assert mark.get_attribute("href") == "p000.evidence.html#audit-panel-1"
    mark.click()
    page.wait_for_url("**/p000.evidence.html#audit-panel-1")
    assert "The mean is about" in page.locator("#audit-panel-1").inner_text()
    entry = page.locator("#audit-list-1 a.audit-mark")
    assert entry.get_attribute("href") == "#audit-panel-1"
    # The entry names the statement with its number as shown, and leads to the sentence in the page.
    link = page.locator("#audit-list-1 a:not(.audit-mark)")
    assert link.get_attribute("href") == "p000.html#audit-1" and "The mean is about" in link.inner_text()
    link.click()
    page.wait_for_url("**/p000.html#audit-1")
    assert page.locator("#audit-1").is_visible()


def test_a_panel_opened_again_or_after_another_takes_the_focus(scripted):
    """Each opening moves the focus into the panel (its close button), the second of the same panel too, and
    a panel closed because another opened does not pull the focus back behind it."""
    page = scripted
    marks = page.locator("main .value > a.mark, main a.audit-mark[data-label]")
    first, second = marks.nth(0), page.locator("main a.audit-mark[data-label]").first
    assert first.get_attribute("href") != second.get_attribute("href")
    focused = "() => [document.activeElement.className, document.activeElement.closest('[popover]')?.id]"
    for _ in range(2):
        first.click()
        page.wait_for_function("() => document.querySelector('.prov:popover-open')")
        assert page.evaluate(focused) == ["prov-close", first.get_attribute("href").split("#")[1]]
        page.keyboard.press("Escape")
    first.click()
    page.wait_for_function("() => document.querySelector('.prov:popover-open')")
    second.click(force=True)  # (through the first panel's light dismiss)
    target = second.get_attribute("href").split("#")[1]
    page.wait_for_function("id => document.getElementById(id)?.matches(':popover-open')", arg=target)
    page.wait_for_timeout(100)  # the first panel's toggle event comes after
    assert page.evaluate(focused) == ["prov-close", target]


def test_a_panel_opened_on_the_side_by_side_page_keeps_its_links(browser, served):
    """There the panel comes from the source page's evidence page, elsewhere in the site: its link to the
    experiment's source lines leads to that page, not to a missing one beside the side-by-side page."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{served}/parallel/en/p000.html")
        mark = page.locator(".value > a.mark").first
        mark.click()
        target = mark.get_attribute("href").split("#")[1]
        page.wait_for_function("id => document.getElementById(id)?.matches(':popover-open')", arg=target)
        source = page.locator(f"#{target} a", has_text="experiments/tiny.py").or_(
            page.locator(f"#{target} a[href*='/experiments/tiny.html']")).first.get_attribute("href")
        assert source.startswith(f"{served}/zh/experiments/tiny.html"), source
        assert page.request.get(source).ok
    finally:
        context.close()
