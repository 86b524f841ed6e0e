"""Provenance and audit panels on a fixture course, in Chromium with JavaScript off: a value's mark is a
button named by what vouches for the number (a parameter's number is itself the button), it opens the panel that says where the number comes from,
Escape closes it; an audit mark and its entry in the audit list open the same panel."""

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


@pytest.fixture
def page(browser, served):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.goto(f"{served}/en/p000.html")
    yield tab
    context.close()


def _open(page) -> list[str]:
    return page.eval_on_selector_all(":popover-open", "els => els.map(e => e.id)")


def test_a_values_mark_names_the_number_and_opens_its_provenance_without_javascript(page):
    mark = page.locator('.value[data-key="tiny.mean"] button').first
    name = mark.get_attribute("aria-label")
    assert name == "Verified: tiny.mean", name  # read after the number it follows: what vouches for it
    unnamed = page.eval_on_selector_all(".value button", "bs => bs.filter(b => !(b.getAttribute('aria-label') || '')"
                                        ".includes(b.closest('.value').dataset.key)).map(b => b.outerHTML)")
    assert unnamed == []  # every mark says which value it vouches for
    target = mark.get_attribute("popovertarget")
    assert _open(page) == []
    mark.click()
    assert _open(page) == [target]
    panel = page.locator(f"#{target}")
    assert panel.is_visible() and "experiments/tiny.py" in panel.inner_text()
    page.keyboard.press("Escape")
    assert _open(page) == []


def test_an_audit_mark_and_its_list_entry_open_the_same_panel(page):
    mark = page.locator("#audit-1 + .audit-mark, .audit-mark[popovertarget='audit-panel-1']").first
    mark.click()
    assert _open(page) == ["audit-panel-1"]
    assert "The mean is about" in page.locator("#audit-panel-1").inner_text()
    page.keyboard.press("Escape")
    page.locator("#evidence > summary").click()  # the audit list waits, closed, where the page ends
    entry = page.locator("#audit-list-1 button")
    assert entry.get_attribute("popovertarget") == "audit-panel-1"
    entry.click()
    assert _open(page) == ["audit-panel-1"]
    # The entry names the statement with its number as shown, and leads to the sentence.
    link = page.locator("#audit-list-1 a")
    assert link.get_attribute("href") == "#audit-1" and "The mean is about" in link.inner_text()
