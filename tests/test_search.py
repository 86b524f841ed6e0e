"""Search (Pagefind) in both languages, in the browser, on a fixture course built with its search index;
and what the page says where search cannot work."""

import pytest
from conftest import TINY_PAGES, http_server, make_course, run_build, with_data_files

FILLER = {"zh": "\n这一段只是让页面足够长。\n", "en": "\nThis paragraph only makes the page long enough.\n"}
SECTION = {
    "zh": "\n## 方差的估计 {#variance}\n\n样本方差估计总体的离散程度，即[标准差]{.term}的平方。\n",
    "en": "\n## Estimating the variance {#variance}\n\nThe sample variance estimates how widely the population is spread.\n",
}
QUERIES = [
    ("zh", "方差", "zh/page.html#variance"),
    ("en", "variance", "en/page.html#variance"),
    ("zh", "均值", "zh/page.html"),
    ("en", "spread", "en/page.html"),
]


@pytest.fixture(scope="module")
def search_site(tmp_path_factory):
    pages = {lang: TINY_PAGES[lang] + SECTION[lang] + FILLER[lang] * 40 for lang in TINY_PAGES}
    root = with_data_files(make_course(tmp_path_factory.mktemp("search") / "c", pages=pages, config="seeds: 2\n"))
    result = run_build("--out", root / "site", root=root)  # with the search index
    assert result.returncode == 0, result.stderr
    return root / "site"


@pytest.fixture(scope="module")
def search_server(search_site):
    yield from http_server(search_site)


@pytest.mark.parametrize("lang, query, expected", QUERIES)
def test_a_query_finds_the_section_and_the_result_leads_there(page, search_server, lang, query, expected):
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{search_server}/{lang}/search.html")
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


def test_a_terms_tip_is_not_searched_nor_in_an_excerpt(page, search_server):
    """The zh page's term 标准差 carries the English 'spread' in its tip: the zh index does not hold it."""
    page.goto(f"{search_server}/zh/search.html")
    page.fill(".pagefind-ui__search-input", "方差")
    page.wait_for_selector(".pagefind-ui__result-excerpt", timeout=10000)
    excerpts = page.eval_on_selector_all(".pagefind-ui__result-excerpt", "els => els.map(e => e.textContent)")
    assert excerpts and not any("spread" in e for e in excerpts), excerpts
    page.fill(".pagefind-ui__search-input", "spread")
    page.wait_for_timeout(1500)
    found = page.eval_on_selector_all(".pagefind-ui__result-link", "els => els.map(e => e.getAttribute('href'))")
    assert not [href for href in found if "page.html" in href], found  # (the glossary lists it: it is its text)


def test_search_index_is_built_per_language(search_site):
    meta = sorted(p.name for p in (search_site / "pagefind").glob("pagefind.*.pf_meta"))
    assert any(".en_" in m for m in meta) and any(".zh-cn_" in m for m in meta), meta


def test_search_from_file_url_says_it_needs_http(page, search_site):
    page.goto((search_site / "zh" / "search.html").as_uri())
    notice = page.locator("#search-needs-http")
    assert notice.is_visible() and "http" in notice.inner_text()


@pytest.mark.parametrize("lang, tag", [("zh", "zh-CN"), ("en", "en")])
def test_header_links_to_search_in_the_page_language(page, search_server, lang, tag):
    page.goto(f"{search_server}/{lang}/page.html")
    page.click(".search-link")
    assert page.url.endswith(f"/{lang}/search.html")
    assert page.locator("html").get_attribute("lang") == tag


@pytest.mark.parametrize("lang, query, least", [("zh", "方差", 40), ("en", "variance", 80)])
def test_an_excerpt_is_long_enough_to_read_in_each_language(page, search_server, lang, query, least):
    """Pagefind's excerpt is counted in words; a Chinese word is a character or two, so zh asks for more."""
    page.goto(f"{search_server}/{lang}/search.html")
    page.fill(".pagefind-ui__search-input", query)
    page.wait_for_selector(".pagefind-ui__result-excerpt", timeout=10000)
    excerpts = page.eval_on_selector_all(".pagefind-ui__result-excerpt", "els => els.map(e => e.textContent)")
    assert excerpts and all(len("".join(e.split())) >= least for e in excerpts), excerpts
