"""The real course's pages in Debian's Chromium: a light pass per page, as its CI runs it.

What the engine does on every kind of page is checked once, on the kitchen-sink course
(tests/test_site_browser.py). What a lesson's own content can still break is checked here on each of its
pages: it loads with no console or page error and no failed or outside request, its formulas are laid out,
it fits a 375 px phone, and it stays within the byte and layout-shift budgets. Its links and anchors are `--check`'s
(tests/test_course.py runs it).
"""

from __future__ import annotations

import re

import pytest
import yaml
from browsing import marked_pages, named_pages, overflow, tabs_of, within_budgets
from conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "content" / "site.yaml").read_text("utf-8"))


def _markdown(lang: str, page: str) -> str:
    return (ROOT / "content" / lang / f"{page}.md").read_text("utf-8")


NAMED = named_pages(CONFIG, _markdown, glossary=(ROOT / "content" / "glossary.yaml").is_file())
PAGES = NAMED["pages"]


@pytest.fixture(scope="module")
def tabs(browser, server):
    yield from tabs_of(browser, server)


def test_pages_named_at_collection_are_the_pages_of_the_site(site):
    assert NAMED["pages"] == marked_pages(site)["pages"]


@pytest.mark.parametrize("rel", PAGES)
def test_page_loads_clean_and_fits_a_phone(tabs, rel, site_checks):
    """Also: every formula of the lesson is laid out (a formula converts to MathML the kitchen sink may not
    hold, and an empty box is invisible math)."""
    tab = tabs()
    page = tab.visit(rel)
    site_checks["pages"].add(rel)
    assert tab.problems == [], "\n".join(tab.problems)
    flat = page.eval_on_selector_all("main math", """els => els.filter(e => {
        const r = e.getBoundingClientRect(); return !(r.width > 0 && r.height > 0) && !e.closest('[popover], details');
    }).map(e => e.getAttribute('alttext') || e.textContent.slice(0, 40))""")
    assert flat == [], f"{rel}: {len(flat)} formulas with an empty box: {flat[:5]}"
    phone = tabs("phone")
    page = phone.visit(rel)
    assert not (wide := overflow(page)), f"{rel}: {wide}"
    assert phone.problems == [], "\n".join(phone.problems)


@pytest.mark.parametrize("rel", [rel for rel in PAGES if not re.match(r"[a-z-]+/experiments/", rel)])
def test_budgets_bytes_and_layout_shift(browser, server, site, rel, site_checks):
    site_checks["budgets"][rel] = within_budgets(browser, server, site, rel, CONFIG["source_language"])
