"""Publishing: a built site served below a path (/course/) works there, link by link and asset by
asset; --base-url; the GitHub Pages workflow runs the README's test command and deploys site/."""

import re
import shutil
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
import yaml
from conftest import ROOT, http_server, make_book, run_build, with_data_files

BASE = "https://example.org/course/"


class _Refs(HTMLParser):
    """Every address a page makes the browser follow or load."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [value for name, value in attrs if name in ("href", "src") and value]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A fixture course built for https://example.org/course/, with search, served at /course/."""
    tmp = tmp_path_factory.mktemp("publish")
    root = with_data_files(make_book(tmp / "c"))
    result = run_build("--check", "--base-url", BASE, "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    shutil.copytree(root / "site", tmp / "host" / "course")
    for address in http_server(tmp / "host"):
        yield root / "site", address


def _followed(site: Path, address: str, page: str, served_at: str | None = None) -> dict[str, int]:
    """Status of every same-server address the page refers to, the page read from `served_at`."""
    here = served_at or f"{address}/course/{page}"
    parser = _Refs()
    parser.feed((site / page).read_text("utf-8"))
    out = {}
    for ref in parser.refs:
        if ref.startswith("#"):
            continue  # a place on the page itself
        url = urldefrag(urljoin(here, ref)).url
        if urlsplit(url).netloc != urlsplit(address).netloc:
            continue  # an external source's link
        out[url] = _get(url)[0]
    return out


def test_every_link_and_asset_of_every_page_works_under_the_sub_path(published):
    site, address = published
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")
    assert {"index.html", "zh/p000.html", "en/p000.html", "en/search.html", "parallel/en/p000.html"} <= set(pages)
    broken, outside, seen = [], [], set()
    for page in pages:
        assert _get(f"{address}/course/{page}")[0] == 200, page
        for url, status in _followed(site, address, page).items():
            seen.add(url)
            if not urlsplit(url).path.startswith("/course/"):
                outside.append((page, url))
            elif status != 200:
                broken.append((page, url, status))
    assert not broken and not outside, (broken, outside)
    kinds = {Path(urlsplit(u).path).suffix for u in seen}
    assert {".html", ".css", ".js", ".svg"} <= kinds, kinds  # pages, styles, scripts and figures were loaded
    # Fonts load from the stylesheet: every url() in it resolves below /course/ too.
    css_url = next(u for u in seen if u.endswith("static/style.css"))
    fonts = re.findall(r"url\((['\"]?)([^)'\"]+)\1\)", _get(css_url)[1].decode())
    assert fonts
    for _, ref in fonts:
        url = urljoin(css_url, ref)
        assert urlsplit(url).path.startswith("/course/") and _get(url)[0] == 200, url


def test_the_404_page_works_at_any_depth_below_the_sub_path(published):
    site, address = published
    missing = f"{address}/course/no/such/deep/page.html"
    assert _get(missing)[0] == 404
    followed = _followed(site, address, "404.html", served_at=missing)
    assert followed and all(status == 200 for status in followed.values()), followed
    assert all(urlsplit(url).path.startswith("/course/") for url in followed), followed


def test_published_addresses_carry_the_base_url(published):
    site, _ = published
    locs = [e.text for e in ET.parse(site / "sitemap.xml").iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert locs and all(loc.startswith(BASE) for loc in locs), locs
    html = (site / "en" / "p001.html").read_text("utf-8")
    assert f'<link rel="canonical" href="{BASE}en/p001.html">' in html


def test_search_results_lead_inside_the_sub_path(page, published):
    site, address = published
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{address}/course/en/search.html?q=mean")
    page.wait_for_selector(".pagefind-ui__result-link", timeout=10000)
    links = page.eval_on_selector_all(".pagefind-ui__result-link", "els => els.map(e => e.getAttribute('href'))")
    assert links and all(link.startswith("/course/en/") for link in links), links
    with page.expect_navigation():
        page.click(".pagefind-ui__result-link >> nth=0")
    assert page.url.startswith(f"{address}/course/en/") and page.title()
    assert errors == []


def test_a_bad_base_url_option_is_one_line(tmp_path):
    root = make_book(tmp_path / "c", pages=1)
    result = run_build("--no-search", "--base-url", "course/", root=root)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("error: --base-url: expected an http(s) address such as "
                                     "https://example.org/course/, got 'course/'")
    assert not (root / "site").exists()


@pytest.mark.slow
def test_without_a_base_url_there_is_no_sitemap_and_the_404_page_links_from_the_root(tmp_path):
    root = make_book(tmp_path / "c", pages=1)
    assert run_build("--no-search", root=root).returncode == 0
    assert not (root / "site" / "sitemap.xml").exists()
    assert 'href="/index.html"' in (root / "site" / "404.html").read_text("utf-8")


def _readme_test_command() -> str:
    block = re.search(r"## Quick start.*?```sh\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 2, commands  # one builds, one tests
    return commands[1]


def test_the_pages_workflow_tests_builds_for_its_address_and_deploys_site():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text("utf-8"))
    assert set(flow["jobs"]) == {"build", "deploy"}
    push = flow[True]["push"]  # YAML 1.1 reads the key `on` as True
    assert push["branches"] == ["main"]
    build = flow["jobs"]["build"]
    assert build["container"]["image"].startswith("debian:")
    runs = [step.get("run", "") for step in build["steps"]]
    uses = [step.get("uses", "") for step in build["steps"]]
    assert _readme_test_command() in runs
    tested = runs.index(_readme_test_command())
    built = next(i for i, r in enumerate(runs) if "build.py" in r)
    assert tested < built and "--check" in runs[built] and "--base-url" in runs[built]
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "site" and uses.index(upload["uses"]) > built
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
