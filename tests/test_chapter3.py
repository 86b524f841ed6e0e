"""Chapter 3: every section page in both languages, the claims audit, the glossary, no box-drawing art."""

import re

import pytest
import yaml
from conftest import ROOT

SECTIONS = ["index", "intro", "3-1", "3-2", "3-3", "3-4", "3-5", "3-6", "3-7"]
BOX_DRAWING = re.compile("[\u2500-\u257f]")


def test_every_section_exists_in_both_languages_with_the_same_anchors(site):
    for slug in SECTIONS:
        zh = (site / f"zh/chapter-3/{slug}.html").read_text()
        en = (site / f"en/chapter-3/{slug}.html").read_text()
        ids = [re.findall(r'<h[23] id="([^"]+)"', html) for html in (zh, en)]
        assert ids[0] == ids[1], slug
        keys = [sorted(set(re.findall(r'data-key="([^"]+)"', html))) for html in (zh, en)]
        assert keys[0] == keys[1], slug


def test_no_box_drawing_characters_remain_anywhere(site):
    for page in site.rglob("*.html"):
        assert not BOX_DRAWING.search(page.read_text()), page
    for md in (ROOT / "content").rglob("*.md"):
        assert not BOX_DRAWING.search(md.read_text()), md


def test_the_audit_uses_all_three_statuses_and_each_page_lists_its_statements(site):
    statuses = set()
    for slug in SECTIONS:
        html = (site / f"zh/chapter-3/{slug}.html").read_text()
        marked = re.findall(r'<span class="audit audit-\w+" data-audit="(\w+)" id="(audit-\d+)"', html)
        listed = re.findall(r'<li id="audit-list-\d+" data-audit="(\w+)"><a href="#(audit-\d+)"', html)
        assert sorted(marked) == sorted(listed), slug  # every annotated statement is in the page's list
        statuses |= {status for status, _ in marked}
    assert statuses == {"verified", "cited", "unverified"}


def test_verified_statements_point_at_claims_that_passed(site):
    html = "".join((site / f"en/chapter-3/{slug}.html").read_text() for slug in SECTIONS)
    items = re.findall(r'<li id="audit-list-\d+" data-audit="verified">(.*?)</li>', html, re.S)
    verified = [re.search(r'— <a href="#(claim-[^"]+)"', item).group(1) for item in items]
    assert len(verified) >= 5
    for anchor in verified:
        assert f'<tr id="{anchor}" data-claim=' in html and 'data-passed="true"' in html


def test_cited_statements_name_authors_year_and_title(site):
    refs = yaml.safe_load((ROOT / "content/references.yaml").read_text())
    html = (site / "en/chapter-3/3-3.html").read_text()
    cited = re.findall(r'data-audit="cited">.*?</a>\s*(.*?)\s*</li>', html, re.S)
    assert cited
    assert any(str(r["year"]) in html and r["title"] in html for r in refs.values())


def test_glossary_pages_pair_every_term(site):
    glossary = yaml.safe_load((ROOT / "content/glossary.yaml").read_text())
    zh = (site / "zh/glossary.html").read_text()
    en = (site / "en/glossary.html").read_text()
    for entry in glossary:
        assert f'<dt id="{entry["id"]}">' in zh and f'<dt id="{entry["id"]}">' in en
        assert entry["zh"] in zh and entry["en"] in en


@pytest.mark.parametrize("lang, other_lang", [("zh", "en"), ("en", "zh-CN")])
def test_a_marked_term_shows_its_counterpart_on_focus(page, server, lang, other_lang):
    page.goto(f"{server}/{lang}/chapter-3/3-1.html")
    term = page.locator(".term").first
    tip = term.locator(".term-tip")
    assert not tip.is_visible()
    term.focus()
    assert tip.is_visible() and tip.get_attribute("lang") == other_lang
    page.keyboard.press("Tab")
    term.hover()
    assert tip.is_visible()
