"""Side-by-side pages on a fixture course: every page of the source language next to its translation,
block by block; the same values in both columns; ids defined once; linked from both single pages and
back; out of the search index and the sitemap, canonical to the source page; a translation that drops
a block is reported with both files' lines (--strict: fails); a side-by-side page is made again only
when one of its two pages changed; in the browser, a glossary term lights up its counterpart and the
columns stack on a phone."""

from __future__ import annotations

import gzip
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser

import pytest
from conftest import append_to_page, edit, http_server, make_book, run_build, with_data_files

BASE = "https://example.org/book/"
PAGES = ["p000", "p001", "p002", "p003"]
EXTRA = {  # a glossary term and an audited statement, so that both columns carry marks that open panels
    "zh": "\n## 术语 {#terms}\n\n[均值]{.term key=mean} 的计算[很简单]{.claim audit=unverified why=\"常识\"}。\n",
    "en": "\n## Terms {#terms}\n\nThe [mean]{.term key=mean} is [easy to compute]{.claim audit=unverified "
          "why=\"common knowledge\"}.\n",
}


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Page(HTMLParser):
    """Ids, links, rows and cells of a side-by-side page, and the values each column shows."""

    def __init__(self, html: str):
        super().__init__()
        self.ids: Counter = Counter()
        self.links: list[dict] = []
        self.main: dict | None = None
        self.rows = 0
        self.cells: list[str] = []  # the lang of each cell, in order
        self.values: dict[str, list[tuple[str, str]]] = {}  # lang -> [(key, data-value)]
        self._cell: list[tuple[str, int]] = []  # (lang, depth) of the open cell
        self._depth = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._depth += tag not in _VOID
        if "id" in a:
            self.ids[a["id"]] += 1
        if tag == "a":
            self.links.append(a)
        if tag == "main":
            self.main = a
        classes = (a.get("class") or "").split()
        if "row" in classes and "data-align" in a:
            self.rows += 1
        if "data-align" not in a and ("cell" in classes or (self._cell == [] and a.get("data-label") and "lang" in a)):
            self.cells.append(a["lang"])
            self._cell.append((a["lang"], self._depth))
        if "value" in classes and self._cell:
            self.values.setdefault(self._cell[-1][0], []).append((a["data-key"], a["data-value"]))

    def handle_endtag(self, tag):
        if self._cell and self._cell[-1][1] == self._depth:
            self._cell.pop()
        self._depth -= 1


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    root = with_data_files(make_book(tmp_path_factory.mktemp("parallel") / "book"))
    append_to_page(root, "p001", EXTRA)
    result = run_build("--check", "--strict", "--base-url", BASE, "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.mark.parametrize("page", PAGES)
def test_every_page_stands_next_to_its_translation_block_by_block(book, page):
    html = (book / "site" / "parallel" / "en" / f"{page}.html").read_text("utf-8")
    seen = _Page(html)
    assert seen.main is not None and "data-parallel" in seen.main and seen.main["data-prefix"] == "en-"
    # One row per block of the page (title row included); each row holds the source's cell, then the translation's.
    blocks = sum(1 for _ in re.finditer(r"<!--lk-block-->", (book / "site" / "zh" / f"{page}.html").read_text("utf-8")))
    assert seen.rows >= 4 and (blocks == 0 or seen.rows >= blocks)
    assert seen.cells == ["zh-CN", "en"] * seen.rows, seen.cells
    assert [i for i, n in seen.ids.items() if n > 1] == []  # the translation's ids carry the prefix
    # The same numbers, measured once, in both columns.
    assert seen.values.get("zh-CN") and seen.values["zh-CN"] == seen.values["en"]
    # Both single pages link here, and this page links back to both, each in its language.
    for lang in ("zh", "en"):
        single = (book / "site" / lang / f"{page}.html").read_text("utf-8")
        assert f'class="side-by-side" href="../parallel/en/{page}.html"' in single
        back = [a for a in seen.links if a.get("href") == f"../../{lang}/{page}.html" and a.get("hreflang")]
        assert back, f"no link back to {lang}/{page}.html"


def test_a_side_by_side_page_leads_to_the_previous_and_next_side_by_side_pages(book):
    """Read side by side from start to end without going back to a single page: each page's pager points at its
    neighbours' side-by-side pages, in the course's order, and the first has no previous one."""
    order = PAGES
    for i, page in enumerate(order):
        seen = _Page((book / "site" / "parallel" / "en" / f"{page}.html").read_text("utf-8"))
        prev = [a["href"] for a in seen.links if a.get("rel") == "prev"]
        after = [a["href"] for a in seen.links if a.get("rel") == "next"]
        assert prev == ([f"../../parallel/en/{order[i - 1]}.html"] if i else []), (page, prev)
        assert after == ([f"../../parallel/en/{order[i + 1]}.html"] if i + 1 < len(order) else []), (page, after)


def test_the_marks_of_both_columns_open_the_same_panels(book):
    """Those of the source page's evidence page (a claim is one claim in every language)."""
    html = (book / "site" / "parallel" / "en" / "p001.html").read_text("utf-8")
    evidence = (book / "site" / "zh" / "p001.evidence.html").read_text("utf-8")
    marks = re.findall(r'<a class="(?:audit-mark|mark|num param)[^"]*" tabindex="-1" href="([^"#]*)#([^"]+)"', html)
    targets = [target for _, target in marks]
    panels = set(re.findall(r'<section class="prov[^"]*" id="([^"]+)"', evidence))
    assert targets and {file for file, _ in marks} == {"../../zh/p001.evidence.html"} and set(targets) <= panels, \
        set(targets) - panels
    audits = [t for t in targets if t.startswith("audit-panel-")]
    assert len(audits) >= 2 and len(set(audits)) < len(audits)  # a statement and its translation: one panel
    assert html.count('class="term"') == 2 and 'data-term="mean"' in html


def test_side_by_side_pages_are_out_of_search_and_sitemap_and_canonical_to_the_source(book):
    site = book / "site"
    for page in PAGES:
        html = (site / "parallel" / "en" / f"{page}.html").read_text("utf-8")
        assert f'<link rel="canonical" href="{BASE}zh/{page}.html">' in html
    locs = [e.text for e in ET.parse(site / "sitemap.xml").iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert f"{BASE}zh/p000.html" in locs and not [loc for loc in locs if "/parallel/" in loc]
    indexed = set()
    for fragment in (site / "pagefind" / "fragment").iterdir():
        indexed |= set(re.findall(rb'"url":"([^"]+)"', gzip.decompress(fragment.read_bytes())))
    assert b"/en/p001.html" in indexed and b"/zh/p001.html" in indexed
    assert not [u for u in indexed if b"/parallel/" in u], indexed


@pytest.mark.slow
def test_a_translation_that_drops_a_block_is_found_with_both_files_lines(tmp_path):
    root = make_book(tmp_path / "book", pages=2)
    zh_line = next(n for n, line in enumerate((root / "content/zh/p001.md").read_text("utf-8").splitlines(), 1)
                   if line == "Text p001.")
    en_line = edit(root, "content/en/p001.md", "### More {#more}\n\nText p001.\n", "### More {#more}\n")
    result = run_build("--no-search", "--out", root / "site", root=root)
    assert result.returncode == 0, result.stderr
    expected = (f"content/en/p001.md:{en_line}: section 'more' has 0 paragraphs where "
                f"content/zh/p001.md:{zh_line} has 1")
    assert f"warning: {expected}" in result.stdout, result.stdout
    # The page still stands next to its source, the missing paragraph next to an empty cell.
    seen = _Page((root / "site/parallel/en/p001.html").read_text("utf-8"))
    assert seen.cells == ["zh-CN", "en"] * seen.rows
    strict = run_build("--no-search", "--strict", "--out", root / "site", root=root)
    assert strict.returncode == 1
    assert strict.stderr.strip() == f"error: {expected}", strict.stderr


@pytest.mark.slow
def test_a_side_by_side_page_is_made_again_only_when_one_of_its_pages_changed(tmp_path):
    root = make_book(tmp_path / "book", pages=3)
    out = root / "site"
    first = run_build("--no-search", "--out", out, root=root)
    assert "rendering 3 of 3 side-by-side pages" in first.stdout, first.stdout
    again = run_build("--no-search", "--out", out, root=root)
    assert "side-by-side" not in again.stdout, again.stdout
    before = {p: (out / f"parallel/en/{p}.html").read_bytes() for p in ("p000", "p001", "p002")}
    edit(root, "content/en/p002.md", "Text p002.", "Text p002, revised.")  # the translation
    changed = run_build("--no-search", "--out", out, root=root)
    assert "rendering 1 of 3 side-by-side pages" in changed.stdout, changed.stdout
    after = {p: (out / f"parallel/en/{p}.html").read_bytes() for p in before}
    assert after["p002"] != before["p002"] and b"Text p002, revised." in after["p002"]
    assert after["p000"] == before["p000"] and after["p001"] == before["p001"]


@pytest.fixture(scope="module")
def served(book, tmp_path_factory):
    host = tmp_path_factory.mktemp("served")
    shutil.copytree(book / "site", host / "site")
    yield from http_server(host / "site")


def test_a_term_lights_up_its_counterpart_in_the_other_column(served, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(f"{served}/parallel/en/p001.html")
        terms = page.locator('[data-term="mean"]')
        assert terms.count() == 2
        plain = terms.nth(1).evaluate("e => getComputedStyle(e).backgroundColor")
        terms.nth(0).focus()
        lit = terms.nth(1).evaluate("e => getComputedStyle(e).backgroundColor")
        assert lit != plain, "the counterpart does not change when its term has focus"
    finally:
        page.close()


def test_the_columns_stack_on_a_phone(served, browser):
    for width, side_by_side in ((1280, True), (375, False)):
        page = browser.new_page(viewport={"width": width, "height": 800})
        try:
            page.goto(f"{served}/parallel/en/p000.html")
            boxes = page.eval_on_selector_all(
                ".row:not(.title-row) > [lang]", "els => els.slice(0, 2).map(e => e.getBoundingClientRect().toJSON())")
            zh, en = boxes
            assert (abs(zh["top"] - en["top"]) < 1 and en["left"] > zh["left"]) == side_by_side, (width, boxes)
            if not side_by_side:
                assert en["top"] >= zh["bottom"] - 1, boxes
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            page.close()
