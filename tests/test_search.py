"""Search (Pagefind) in both languages, in the browser; and what the page says where search cannot work."""

import pytest

QUERIES = [
    ("zh", "注意力", "zh/chapter-3/"),
    ("zh", "残差", "zh/chapter-3/3-4.html#residual-solution"),
    ("zh", "低秩", "zh/lesson-l5.html#low-rank"),
    ("en", "residual", "en/chapter-3/3-4.html#residual-solution"),
    ("en", "low rank", "en/lesson-l5.html#low-rank"),
]


@pytest.mark.parametrize("lang, query, expected", QUERIES)
def test_a_query_finds_the_section_and_the_result_leads_there(page, server, lang, query, expected):
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{server}/{lang}/search.html")
    page.fill(".pagefind-ui__search-input", query)
    page.wait_for_selector(".pagefind-ui__result-link", timeout=10000)
    links = page.eval_on_selector_all(".pagefind-ui__result-link", "els => els.map(e => e.getAttribute('href'))")
    assert all(link.startswith(f"/{lang}/") for link in links), links  # one index per language
    assert f"/{expected}" in links, links
    if "#" in expected:
        with page.expect_navigation():
            page.click(f".pagefind-ui__result-link[href='/{expected}']")
        section = expected.split("#")[1]
        assert page.url.endswith(f"#{section}")
        top = page.evaluate(f"document.getElementById('{section}').getBoundingClientRect().top")
        assert 0 <= top < 120
    assert errors == []


def test_search_index_is_built_per_language(site):
    meta = sorted(p.name for p in (site / "pagefind").glob("pagefind.*.pf_meta"))
    assert any(".en_" in m for m in meta) and any(".zh-cn_" in m for m in meta), meta


def test_search_from_file_url_says_it_needs_http(page, site):
    page.goto((site / "zh" / "search.html").as_uri())
    notice = page.locator("#search-needs-http")
    assert notice.is_visible() and "http" in notice.inner_text()


def test_header_links_to_search_in_the_page_language(page, server):
    page.goto(f"{server}/en/lesson-l5.html")
    page.click(".search-link")
    assert page.url.endswith("/en/search.html")
    assert page.locator("html").get_attribute("lang") == "en"
