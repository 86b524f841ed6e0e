"""Every page of the kitchen-sink course (tests/kitchen.py: each feature and template of the engine once), both
languages, in Debian's Chromium over http on 127.0.0.1. The real course's pages get a lighter pass of their own
(tests/test_course_browser.py), so that what is checked here does not grow with its lessons.

Per page: no console or page error, no failed or outside request; math laid out, figures loaded,
shown numbers match their data-value; the language switch keeps the section; contents links land
below the sticky header; no horizontal overflow on a phone; axe-core finds nothing serious or critical in
the light theme, and no contrast problem in either (the dark theme changes colours only, which a test checks);
budgets that do not depend on how busy the machine is (bytes, layout shift, a first frame that has the whole
page) are asserted and printed with the prefix "budget:" (first paint is timed in bench/fcp.py); the page reads
with JavaScript off. Beyond that list, what a reader sees at once: the text column is wide on a desktop, text
keeps a margin on a phone, placeholders are readable, and axe also runs its layout-dependent rules at phone
width (where display math and source listings scroll). Screenshots to look at are `make screenshots` (tests/screenshots.py), not a test.

One browser for the module, one context per theme and width, one page per context, reused.
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata

import kitchen
import pytest
import yaml
from axe_playwright_python.sync_playwright import Axe
from browsing import (
    DESKTOP,
    PHONE,
    drawn_in,
    marked_pages,
    named_pages,
    overflow,
    site_pages,
    tabs_of,
    twin_of,
    within_budgets,
)
from conftest import ROOT

AXE = Axe()
# The axe rules of its default set whose outcome a 375 px layout can change (display math and source listings
# scroll there; the viewport meta decides zoom). Every other rule sees the same at both widths.
# (Contrast is the same at both widths: the themes' colours do not depend on the width.)
PHONE_RULES = ["scrollable-region-focusable", "meta-viewport", "meta-viewport-large"]
# The dark theme changes colours and nothing else (test_the_dark_theme_changes_colours_only): what it can
# change is these rules' outcome. The rest run in the light theme.
DARK_RULES = ["color-contrast", "link-in-text-block"]


# --- pages, named at collection time from the course's sources (collecting builds nothing) -------------
# test_pages_named_at_collection_are_the_pages_of_the_site holds each list to the built site's HTML.

CONFIG = yaml.safe_load(kitchen.FILES["content/site.yaml"])
LANGUAGE_FOLDERS = tuple(f"{lang}/" for lang in CONFIG["languages"])


@pytest.fixture(scope="module")
def site(kitchen_site):
    return kitchen_site


@pytest.fixture(scope="module")
def server(kitchen_site):
    from conftest import http_server
    yield from http_server(kitchen_site)


NAMED = named_pages(CONFIG, kitchen.markdown, glossary="content/glossary.yaml" in kitchen.FILES)
ALL_PAGES = NAMED["pages"]
# The experiments' source pages (<lang>/experiments/NAME.html) are listings, not lessons: they get the checks
# that apply to any page (loads clean, fits a phone, axe), not those about numbers, math, figures or sections.
SOURCE_PAGES = [rel for rel in ALL_PAGES if re.match(r"[a-z-]+/experiments/", rel)]
PAGES = [rel for rel in ALL_PAGES if rel not in SOURCE_PAGES]
TOC_PAGES = NAMED["toc"]
SWITCH_PAGES = [rel for rel in ALL_PAGES if rel.startswith(LANGUAGE_FOLDERS)]
HINT_PAGES = NAMED["hints"]


def first_per_language(rels: list[str]) -> list[str]:
    """One page per language folder: the first in the site's order."""
    return list({rel.partition("/")[0]: rel for rel in reversed(rels) if rel.startswith(LANGUAGE_FOLDERS)}.values())[::-1]


TERM_PAGES = first_per_language(NAMED["terms"])
FIGURE_PAGES = first_per_language(NAMED["figures"])


def test_every_page_in_a_language_has_a_language_switch(site):
    """The bilingual home and the side-by-side pages, which show both languages, have none."""
    switch = [rel for rel in site_pages(site) if "data-lang-switch" in (site / rel).read_text("utf-8")]
    assert switch == SWITCH_PAGES and "index.html" not in switch


def test_every_course_page_with_sections_has_a_contents_list(site):
    course = {f"{lang}/{page}.html" for lang in CONFIG["languages"] for page in CONFIG["pages"]}
    assert course <= set(PAGES)
    sections = {rel for rel in course if re.search(r'<h[23] id="', (site / rel).read_text("utf-8"))}
    assert sections == {rel for rel in course if rel in marked_pages(site)["toc"]}


# --- browser tabs: one context (theme × width × JS) with one page each, reused ----------------------

@pytest.fixture(scope="module")
def tabs(browser, server):
    yield from tabs_of(browser, server)


@pytest.fixture(scope="module")
def axe_results(tabs):
    """axe-core on every page in each theme at desktop width, run once and shared by the tests below.

    Collapsed hints and answers are opened and the provenance popovers shown in the flow of the page,
    so that what a reader can open is checked too.
    """
    cache: dict = {}

    def get(rel: str, scheme: str, width: str = "desktop") -> dict:
        if (rel, scheme, width) not in cache:
            tab = tabs(width, scheme)
            page = tab.visit(rel)
            reveal_hidden_content(page)
            options = {"resultTypes": ["violations"]}
            if width == "phone":  # the rest were run at desktop width; what 375 px changes is these
                options["runOnly"] = {"type": "rule", "values": PHONE_RULES}
            elif scheme == "dark":  # and in the light theme; what the dark one changes is these
                options["runOnly"] = {"type": "rule", "values": DARK_RULES}
            result = AXE.run(page, options=options)
            cache[rel, scheme, width] = {"violations": result.response["violations"],
                                         "placeholders": placeholders(page)}
        return cache[rel, scheme, width]

    return get


def placeholders(page) -> list[dict]:
    """Placeholder text of every text field, with the colours it is drawn in (axe does not check it)."""
    return page.evaluate(r"""() => [...document.querySelectorAll('input[placeholder], textarea[placeholder]')]
        .filter(e => e.getClientRects().length).map(e => {
            const ph = getComputedStyle(e, '::placeholder');
            let back = null;
            for (let n = e; n && !back; n = n.parentElement) {
                const c = getComputedStyle(n).backgroundColor;
                if (!/rgba\(.*, 0\)$|transparent/.test(c)) back = c;
            }
            return {text: e.placeholder, color: ph.color, opacity: ph.opacity, back: back || 'rgb(255, 255, 255)',
                    cls: e.className};
        })""")


def rgba(css: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", css)]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def contrast(fore: str, opacity: float, back: str) -> float:
    """WCAG contrast of a colour drawn at an opacity over an opaque background."""
    *f, fa = rgba(fore)
    b = rgba(back)[:3]
    alpha = fa * opacity
    mixed = [alpha * fc + (1 - alpha) * bc for fc, bc in zip(f, b, strict=True)]

    def luminance(rgb):
        lin = [(c / 255 / 12.92) if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(mixed), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def reveal_hidden_content(page):
    """Hints and answers opened (the panels are the evidence pages', in their flow)."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")


# Known findings and their fix, printed with the violation (the fix belongs in templates or the build).
FIXES = {
    ("scrollable-region-focusable", "prov-source"): 'the provenance source <pre> scrolls sideways but cannot take '
    'focus: in templates/_summary.html give <pre class="code prov-source" …> tabindex="0" (as .table-wrap has)',
    ("scrollable-region-focusable", "math-display"): "wide display math scrolls sideways on a phone but cannot "
    'take focus: in lessonkit/markdown/plugins/math.py (lines 60 and 62) render <div class="math-display" tabindex="0"> '
    'and <span class="math-display" tabindex="0">',
    ("label-title-only", "pagefind-ui__search-input"): "Pagefind UI's search box has only a title and placeholder: "
    "in templates/static/search.js, after new PagefindUI(…), set the input's aria-label "
    '(box.querySelector("input").setAttribute("aria-label", box.dataset.placeholder)) or give it a <label>',
}


def violation_lines(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        target = v["nodes"][0]["target"] if v["nodes"] else ""
        first = v["nodes"][0] if v["nodes"] else {}
        why = next((c["message"] for c in first.get("any", []) + first.get("all", []) + first.get("none", [])), "")
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes) first: {target} {why}")
        seen = " ".join(str(n["target"]) + n.get("html", "") for n in v["nodes"])
        lines += [f"  FIX: {fix}" for (rule, where), fix in FIXES.items() if rule == v["id"] and where in seen]
    return "\n".join(lines)


# --- discovery ----------------------------------------------------------------------------------------

def test_pages_named_at_collection_are_the_pages_of_the_site(site):
    marked = marked_pages(site)
    assert NAMED == marked
    assert TOC_PAGES and HINT_PAGES and TERM_PAGES
    assert SOURCE_PAGES and all(rel.split("/")[0] in ("zh", "en") for rel in SOURCE_PAGES)
    assert "index.html" in PAGES and any(p.startswith("zh/") for p in PAGES) and any(p.startswith("en/") for p in PAGES)


# --- 1-3 and the shown numbers: desktop, light ---------------------------------------------------------

@pytest.mark.parametrize("rel", PAGES + SOURCE_PAGES)
def test_page_loads_without_errors_or_outside_requests(tabs, rel, site_checks):
    tab = tabs()
    tab.visit(rel)
    site_checks["pages"].add(rel)
    assert tab.problems == [], "\n".join(tab.problems)


@pytest.mark.parametrize("rel", PAGES)
def test_every_math_element_is_laid_out(tabs, rel):
    page = tabs().visit(rel)
    reveal_hidden_content(page)  # hints, answers, and the provenance and audit panels (popovers)
    boxes = page.eval_on_selector_all("main math", """els => els.map(e => {
        const r = e.getBoundingClientRect();
        return [r.width, r.height, e.getAttribute('alttext') || e.textContent.slice(0, 40)];
    })""")
    flat = [alt for w, h, alt in boxes if not (w > 0 and h > 0)]
    assert flat == [], f"{len(flat)} of {len(boxes)} <math> have an empty box: {flat[:5]}"
    if boxes:
        assert page.evaluate("document.fonts.check('16px LessonMath')"), "the math font did not load"
        family = page.evaluate("getComputedStyle(document.querySelector('main math')).fontFamily")
        assert family.startswith("LessonMath"), f"math is set in {family}"


@pytest.mark.parametrize("rel", PAGES)
def test_every_figure_image_is_loaded(tabs, rel):
    page = tabs().visit(rel)
    images = page.eval_on_selector_all("main img", "els => els.map(e => [e.currentSrc, e.complete, e.naturalWidth, e.alt])")
    broken = [src for src, done, width, _ in images if not (done and width > 0)]
    assert broken == [], f"images not loaded: {broken}"
    assert all(alt.strip() for *_, alt in images), f"an image without alt text: {images}"
    # Its box is reserved before it loads (width and height attributes), so the text does not move when it does
    # (on a loopback server it loads before the first paint, and no layout shift can be seen).
    unsized = page.eval_on_selector_all("main img", "els => els.filter(e => !(e.getAttribute('width') > 0 && "
                                        "e.getAttribute('height') > 0)).map(e => e.currentSrc)")
    assert unsized == [], f"images without their size: {unsized}"


@pytest.mark.parametrize("rel", FIGURE_PAGES)
def test_a_figure_fits_a_phone_whole(tabs, rel):
    """A figure scales to the column at 375 px; its box scrolls only what cannot shrink, so a figure wider than
    the screen is clipped with no sign of it, which the page's own width does not show."""
    page = tabs("phone").visit(rel)
    wide = page.eval_on_selector_all("main figure img", """els => els.map(e => [e.currentSrc,
        e.getBoundingClientRect().left, e.getBoundingClientRect().right])
        .filter(([, left, right]) => left < 0 || right > innerWidth)""")
    assert page.locator("main figure img").count(), f"{rel}: no figure"
    assert wide == [], f"figures wider than a {PHONE['width']} px screen: {wide}"


NUMBER = re.compile(r"^([-−]?\d+(?:\.\d+)?)(%?)(?:\s*×\s*10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?$")
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def shown_number(text: str) -> tuple[float, float] | None:
    """'8.8 × 10⁻⁸' → (8.8e-8, half a unit of its last digit); '33%' → (0.33, 0.005); else None."""
    m = NUMBER.match(text.strip().replace(",", "").replace("\u2009", "").replace("\u202f", ""))
    if not m:
        return None
    mantissa, percent, exponent = m.groups()
    decimals = len(mantissa.partition(".")[2])
    scale = (10 ** int(exponent.translate(SUPERSCRIPT)) if exponent else 1) * (0.01 if percent else 1)
    return float(mantissa.replace("−", "-")) * scale, 0.5 * 10 ** -decimals * scale


BOUND = re.compile(r"((?:\d+(?:\.\d+)?\s*×\s*)?10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def bound_problem(raw: str, bound: str, text: str) -> str | None:
    """A value shown as a bound ("below 10⁻¹²"; a list: "all below 10⁻¹²", or "0.0032, below 10⁻¹²" element by
    element, data-bound then a JSON list with null for an element shown as digits): the text names each
    bound, and each value is within it."""
    value = json.loads(raw)
    if bound.startswith("["):  # one bound (or none) per element
        parts = re.split(r"\s*[,、，]\s*", text.strip())
        bounds = json.loads(bound)
        if len(parts) != len(value) or len(bounds) != len(value):
            return f"{len(parts)} parts shown for {len(value)} values"
        for part, v, b in zip(parts, value, bounds, strict=True):
            problem = bound_problem(json.dumps(v), b, part) if b else value_problem(json.dumps(v), part)
            if problem:
                return problem
        return None
    op, limit = bound[0], float(bound[1:])
    power = BOUND.search(text)
    written = power.group(1).replace(" ", "") if power else ""
    shown = shown_number(written if "×" in written else "1×" + written) if power else None
    if shown is None or abs(shown[0] - limit) > 1e-9 * limit:
        return f"does not name the bound {bound}"
    for v in value if isinstance(value, list) else [value]:
        if not (v < limit if op == "<" else v > limit):
            return f"{v!r} is not {op} {limit:g}"
    return None


def value_problem(raw: str, text: str) -> str | None:
    """Why the shown text does not read as data-value, or None."""
    if re.search(r"\de[-+]?\d", text):
        return "raw scientific notation"
    try:
        value = json.loads(raw)
    except ValueError:
        return None if text.strip() == raw.strip() else "text differs from data-value"
    values = value if isinstance(value, list) else [value]
    parts = re.split(r"\s*[,、，]\s*", text.strip()) if isinstance(value, list) else [text]
    if len(parts) != len(values):
        return f"{len(parts)} numbers shown for {len(values)} values"
    for part, v in zip(parts, values, strict=True):
        if isinstance(v, bool) or not isinstance(v, int | float):
            if part.strip() != str(v):
                return f"{part!r} is not {v!r}"
            continue
        shown = shown_number(part)
        if shown is None:
            return f"{part!r} does not read as a number"
        number, half_unit = shown
        if abs(number - v) > half_unit * 1.0001 + 1e-12 * abs(v):
            return f"{part!r} is not {v!r} rounded"
    return None


VALUES = """els => els.map(e => ({
        key: e.getAttribute('data-key'), raw: e.getAttribute('data-value'), claim: e.getAttribute('data-claim'),
        bound: e.getAttribute('data-bound'),
        num: e.querySelector('.num') ? e.querySelector('.num').textContent : null,
        inSummary: !!e.closest('tr[data-claim]'), row: e.closest('tr[data-claim]')?.dataset.claim ?? null}))"""


def evidence_of(rel: str) -> str | None:
    """A page's evidence page (a side-by-side page's is its source page's)."""
    if rel.startswith("parallel/"):
        rel = CONFIG["source_language"] + "/" + rel.removeprefix("parallel/").partition("/")[2]
    evidence = rel.removesuffix(".html") + ".evidence.html"
    return evidence if evidence in PAGES and evidence != rel else None


@pytest.mark.parametrize("rel", PAGES)
def test_shown_numbers_match_their_data_value_and_claims(tabs, rel, site_checks, site):
    page = tabs().visit(rel)
    values = page.eval_on_selector_all(".value", VALUES)
    claims = page.eval_on_selector_all("[data-claim]", "els => [...new Set(els.flatMap(e => e.dataset.claim.split(/\\s+/)))]")
    marks = page.eval_on_selector_all("main a.audit-mark[data-label], main .value > a", "els => els.map(e => e.getAttribute('href'))")
    own = len(values)
    if evidence_of(rel):  # the page's summary rows are its evidence page's
        page = tabs().visit(evidence_of(rel))
        values += page.eval_on_selector_all(".value", VALUES)
    bad = []
    for v in values:
        if not (v["key"] and v["raw"] is not None and v["num"] and v["num"].strip()):
            bad.append(f"{v['key']}: missing data-key, data-value or .num text ({v})")
            continue
        problem = bound_problem(v["raw"], v["bound"], v["num"]) if v["bound"] else value_problem(v["raw"], v["num"])
        if problem:
            bad.append(f"{v['key']} = {v['raw']} shown as {v['num']!r}: {problem}")
    site_checks["values"] += own

    # Every claim a page refers to has a passed row in that page's summary, listing the values it verifies.
    # An audit mark may name several claims (data-claim="a.x b.y").
    rows = dict(page.eval_on_selector_all("tr[data-claim]", "els => els.map(e => [e.dataset.claim, e.dataset.passed])"))
    for claim in claims:
        if rows.get(claim) != "true":
            bad.append(f"claim {claim}: no passed row in this page's verification summary ({rows.get(claim)})")
    listed = {(v["row"], v["key"]) for v in values if v["inSummary"]}
    for v in values:
        if v["claim"] and not v["inSummary"] and (v["claim"], v["key"]) not in listed:
            bad.append(f"{v['key']} links to claim {v['claim']}, whose summary row does not list it")
    site_checks["claims"].update(claims)

    # Every mark in the text leads to a panel on the page's evidence page.
    folder = rel.rpartition("/")[0]
    panels = {}
    for href in set(marks):
        file, _, target = href.partition("#")
        path = posixpath.normpath(posixpath.join(folder, file))
        if path not in panels:
            panels[path] = set(re.findall(r'<section class="prov[^"]*" id="([^"]+)"', (site / path).read_text("utf-8")))
        if target not in panels[path]:
            bad.append(f"a mark leads to {href}, which is no panel")
    assert bad == [], "\n".join(bad)


def test_an_experiments_page_links_to_the_pages_that_show_it_and_is_indexed(site):
    for lang in CONFIG["languages"]:
        for name in CONFIG["experiments"]:
            html = (site / lang / "experiments" / f"{name}.html").read_text("utf-8")
            showing = sorted(f"../../{lang}/{page}.html" for page in CONFIG["pages"]
                             if f'data-key="{name}.' in (site / lang / f"{page}.html").read_text("utf-8"))
            used = re.search(r'<p class="used-on">(.*?)</p>', html, re.S)
            assert showing and used, (lang, name)
            assert sorted(re.findall(r'<a href="([^"]+)"', used.group(1))) == showing
            assert re.search(r"<main [^>]*data-pagefind-body", html)  # the search finds it by its name
            assert re.search(r'<div class="table-wrap"[^>]*data-pagefind-ignore', html)  # not by its code


def test_a_side_by_side_page_says_its_chrome_in_both_languages(site):
    import html as html_module

    source = CONFIG["source_language"]
    strings = {lang: yaml.safe_load((ROOT / "templates" / "i18n" / f"{lang}.yaml").read_text("utf-8"))
               for lang in CONFIG["languages"]}
    for lang in CONFIG["languages"]:
        if lang == source:
            continue
        page = html_module.unescape((site / "parallel" / lang / "lesson.html").read_text("utf-8"))
        tag = strings[lang]["tag"]
        for key in ("skip", "search", "home", "audit_layer"):
            assert strings[source][key] in page, key
            assert f'lang="{tag}">· {strings[lang][key]}</span>' in page, key
        assert strings[lang]["footer_measured"].split("{")[0] in page  # the footer in both languages
        single = html_module.unescape((site / source / "lesson.html").read_text("utf-8"))
        assert f'lang="{tag}">· {strings[lang]["skip"]}' not in single  # a page in one language: its own


def test_every_course_page_has_the_course_in_site_yaml_order_and_the_home_page_too(site):
    """The course's pages on every page (closed: one stop until opened), the page itself marked; a folder's index
    heads its pages there and on the home page (it was nested under the page before it)."""
    depth = {page: page.count("/") - page.endswith("/index") for page in CONFIG["pages"]}
    for lang in CONFIG["languages"]:
        for page in CONFIG["pages"]:
            html = (site / lang / f"{page}.html").read_text("utf-8")
            nav = re.search(r'<nav class="course-nav"[^>]*>\s*<details>(.*?)</details>', html, re.S)
            assert nav, f"{lang}/{page}: no course navigation, or it starts open"
            items = re.findall(r'<li class="depth-(\d)"><a href="([^"]+)"( aria-current="page")?', nav.group(1))
            up = "../" * (1 + page.count("/"))
            assert [(int(d), href) for d, href, _ in items] == [
                (depth[p], f"{up}{lang}/{p}.html") for p in CONFIG["pages"]], (lang, page, items)
            assert [href for _, href, current in items if current] == [f"{up}{lang}/{page}.html"]
    import html5lib

    home = html5lib.parse((site / "index.html").read_text("utf-8"), namespaceHTMLElements=False)
    for lang in CONFIG["languages"]:
        section = home.find(f".//section[@aria-labelledby='home-{lang}']")
        found = [(link.get("href"), depth) for depth, path in ((0, "./ol/li/a"), (1, "./ol/li/ol/li/a"))
                 for link in section.findall(path)]
        assert sorted(found, key=lambda f: [x.get("href") for x in section.iter("a")].index(f[0])) == [
            (f"{lang}/{p}.html", depth[p]) for p in CONFIG["pages"]], found  # numbered 1, 2, 3: its pages under it


@pytest.mark.parametrize("rel", PAGES)
def test_reading_column_is_wide_on_a_desktop(tabs, rel):
    """Not asked by the list above, but a reader sees it at once: at 1280 px the text column is wide."""
    page = tabs().visit(rel)
    box = page.locator("main").bounding_box()
    measure = page.evaluate("parseFloat(getComputedStyle(document.querySelector('main')).maxWidth) || 0")
    assert box and box["width"] >= min(measure or 640, 640), (
        f"main is {box and box['width']:.0f} px wide at {DESKTOP['width']} px (max-width {measure:.0f} px): "
        "on a page without contents the grid puts main into the 15rem contents column. Fix in "
        "templates/static/style.css, inside @media (min-width: 1100px): "
        ".layout:not(:has(> .side > *)) { grid-template-columns: minmax(0, var(--measure)); }")


# --- 4-5: navigation on a desktop ---------------------------------------------------------------------

HEADER_BOTTOM = "document.querySelector('.site-header').getBoundingClientRect().bottom"
TOP_OF = "id => document.getElementById(id).getBoundingClientRect().top"
SCROLL_PADDING = "parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0"
AT_BOTTOM = "scrollY + innerHeight >= document.documentElement.scrollHeight - 2"


def scroll_to_top(page, id_: str) -> float:
    return page.evaluate("id => { const e = document.getElementById(id); e.scrollIntoView({block: 'start'});"
                         " return e.getBoundingClientRect().top; }", id_)


@pytest.mark.parametrize("rel", SWITCH_PAGES)
def test_language_switch_lands_on_the_same_section_of_the_twin(tabs, rel):
    tab = tabs()
    page = tab.visit(rel)
    switch = page.locator("[data-lang-switch]")
    assert switch.count() == 1, f"{rel} has no language switch"
    twin = twin_of(rel)
    assert switch.evaluate("a => new URL(a.href).pathname") == f"/{twin}"
    heads = page.eval_on_selector_all("main h2[id]", "els => els.map(e => e.id)")
    chosen = None
    # The middle heading, or the nearest one to it that can scroll to the top of the page.
    for i in sorted(range(len(heads)), key=lambda i: (abs(i - len(heads) // 2), -i)):
        if scroll_to_top(page, heads[i]) <= 100:
            chosen = heads[i]
            break
    if not chosen:  # no heading, or a page too short to bring one to the top: read from its top
        assert not heads or page.evaluate("document.documentElement.scrollHeight < innerHeight + 400"), \
            f"no h2 of {heads} can be scrolled to the top of a long page"
        page.evaluate("scrollTo(0, 0)")
    # Activate by keyboard: a pointer click in Playwright first scrolls the target, which moves the reader.
    page.evaluate("document.querySelector('[data-lang-switch]').focus({preventScroll: true})")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    if not chosen:
        assert page.url == f"{tab.server}/{twin}"
        assert tab.problems == [], "\n".join(tab.problems)
        return
    assert page.url == f"{tab.server}/{twin}#{chosen}", f"scrolled to #{chosen}, landed on {page.url}"
    top = page.evaluate(TOP_OF, chosen)
    header = page.evaluate(HEADER_BOTTOM)
    near_top = header - 1 <= top < 100
    # A twin too short below the section to bring it to the top still shows it, at the end of the page.
    at_end = page.evaluate(AT_BOTTOM) and header - 1 <= top < page.evaluate("innerHeight") / 2
    assert near_top or at_end, f"#{chosen} is at {top:.0f} px on the twin (header ends at {header:.0f} px)"
    assert tab.problems == [], "\n".join(tab.problems)


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("rel", TOC_PAGES)
def test_contents_links_scroll_to_their_section_below_the_header(tabs, rel, width):
    page = tabs(width).visit(rel)
    links = page.eval_on_selector_all(".toc a[href^='#']", "els => els.map(e => e.getAttribute('href').slice(1))")
    assert links, f"{rel}: the contents list has no links"
    folded = page.evaluate("!document.querySelector('.toc details').open")
    assert folded == (width == "phone"), f"contents {'folded' if folded else 'open'} at {width} width on load"
    # Targets the page can bring to the top (the last sections of a page may end before the viewport does).
    reachable = page.evaluate("""ids => ids.filter(id => {
        const el = document.getElementById(id); if (!el) return true;
        const pad = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
        return el.getBoundingClientRect().top + scrollY - pad <= document.documentElement.scrollHeight - innerHeight;
    })""", links)
    picks = list(dict.fromkeys([reachable[0], reachable[len(reachable) // 2], links[-1]])) if reachable else links[-1:]
    for target in picks:
        assert page.evaluate("id => !!document.getElementById(id)", target), f"#{target} has no target"
        page.evaluate("scrollTo(0, 0)")
        if page.evaluate("!document.querySelector('.toc details').open"):
            page.click(".toc summary")  # folded on a phone: the reader opens the contents first
        page.click(f".toc a[href='#{target}']")
        page.wait_for_function("id => location.hash === '#' + id", arg=target, timeout=2000)
        top, header = page.evaluate(TOP_OF, target), page.evaluate(HEADER_BOTTOM)
        if target in reachable:
            hint = ("" if top >= header - 1 else
                    f" (scroll-padding-top is {page.evaluate(SCROLL_PADDING):.0f} px: the header is taller, its links"
                    " wrap to a second line; fix in templates/static/style.css: .header-links { display: flex;"
                    " align-items: center; gap: .75rem; flex-shrink: 0; white-space: nowrap; })")
            assert header - 1 <= top <= header + 40, f"#{target} at {top:.0f} px, header ends at {header:.0f} px{hint}"
        else:
            assert page.evaluate(AT_BOTTOM) and header - 1 <= top < page.evaluate("innerHeight"), \
                f"#{target} (near the end) at {top:.0f} px, not shown below the header"


@pytest.mark.parametrize("rel", SWITCH_PAGES)
def test_language_switch_without_javascript_still_leads_to_the_twin(tabs, rel):
    tab = tabs(js=False)
    page = tab.visit(rel)
    twin = twin_of(rel)
    with page.expect_navigation():
        page.click("[data-lang-switch]")
    assert page.url == f"{tab.server}/{twin}"
    assert page.locator("h1").is_visible()
    assert page.locator("[data-lang-switch]").evaluate("a => new URL(a.href).pathname") == f"/{rel}"
    assert tab.problems == [], "\n".join(tab.problems)


def language_tag(lang: str) -> str:
    return yaml.safe_load((ROOT / "templates" / "i18n" / f"{lang}.yaml").read_text("utf-8"))["tag"]


@pytest.mark.parametrize("rel", TERM_PAGES)
def test_a_marked_term_shows_its_counterparts_on_focus_and_hover(tabs, rel):
    page = tabs().visit(rel)
    page.mouse.move(0, 0)
    term = page.locator("main .term").first
    tip = term.locator(".term-tip")
    assert not tip.is_visible()
    term.focus()
    assert tip.is_visible(), "the counterpart does not show on focus"
    lang = rel.partition("/")[0]
    others = sorted(language_tag(other) for other in CONFIG["languages"] if other != lang)
    shown = sorted(tip.locator("[lang]").evaluate_all("els => els.map(e => e.lang)"))
    assert shown == others, f"the tip shows {shown}, not the other languages {others}"
    page.keyboard.press("Tab")
    term.hover()
    assert tip.is_visible(), "the counterpart does not show on hover"


# --- the reading layer and the audit layer ------------------------------------------------------------

AUDIT_PAGES = NAMED["audits"]
ONE_AUDIT_PAGE = first_per_language(AUDIT_PAGES)

# What the stylesheet draws for each inline audit mark (its ::before), and the legend's display.
MARKS = """() => [...document.querySelectorAll("main .audit-mark[data-label]")].map(b => {
  const r = b.getBoundingClientRect();
  return {text: b.textContent, drawn: getComputedStyle(b, "::before").content, label: b.dataset.label,
          width: r.width, height: r.height};
})"""
LEGEND = "() => getComputedStyle(document.querySelector('.audit-legend')).display"


def drawn(marks: list[dict]) -> set[str]:
    return {m["drawn"] for m in marks}


@pytest.mark.parametrize("rel", AUDIT_PAGES)
def test_the_reading_layer_marks_each_statement_with_one_quiet_sign(tabs, rel):
    """No words, one small sign in a target a finger can hit (WCAG 2.2, 2.5.8: 24 × 24 px), no legend."""
    page = tabs().visit(rel)
    marks = page.evaluate(MARKS)
    assert marks, "no audit mark"
    assert {m["text"] for m in marks} == {""}, "an audit mark holds text: it would be copied with the sentence"
    assert drawn(marks) == {'""'}, f"the reading layer names statuses: {drawn(marks)}"
    small = [m for m in marks if m["width"] < 24 or m["height"] < 24]
    assert not small, f"marks smaller than 24 × 24 px: {small[:3]}"
    assert page.evaluate(LEGEND) == "none"
    # The reading layer still says, once, under the title, what its quiet marks are.
    hint = """() => { const e = document.querySelector(".evidence-line small");
        return e && getComputedStyle(e).display !== "none" ? e.textContent : null; }"""
    assert page.evaluate(hint) and "✓" in page.evaluate(hint), "no word in the reading layer of what its marks are"
    # A dotted underline means one thing here, a glossary term: a parameter's number is underlined in the audit
    # layer only, and no audited statement is.
    underlined = """() => [...document.querySelectorAll("main .value .param, main .audit:not(.audit-refuted)")]
        .filter(e => !e.closest("[popover]")).map(e => getComputedStyle(e).textDecorationLine)"""
    assert set(page.evaluate(underlined)) == {"none"}
    page.locator(".layer-switch").click()
    assert set(page.evaluate(underlined)) == {"underline"}
    page.locator(".layer-switch").click()


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_the_audit_layer_names_each_status_and_is_remembered_and_linkable(tabs, rel):
    tab = tabs()
    page = tab.visit(rel)
    page.locator(".layer-switch").click()
    marks = page.evaluate(MARKS)
    assert all(m["drawn"] == f'"{m["label"]}"' for m in marks), marks[:3]
    assert all(m["width"] >= 24 and m["height"] >= 24 for m in marks)
    assert page.evaluate(LEGEND) == "block"
    assert "✓" in page.locator(".audit-legend").inner_text(), "the legend leaves out the ✓ of a value's claim"
    assert not page.locator(".evidence-line small").is_visible(), "the audit layer still speaks of faint dots"
    # Remembered by this reader on the next page they open, and left again with the switch.
    page = tab.visit(AUDIT_PAGES[-1] if AUDIT_PAGES[-1] != rel else AUDIT_PAGES[0])
    assert page.locator("#audit-layer").is_checked() and page.evaluate(LEGEND) == "block"
    page.locator(".layer-switch").click()
    page = tab.visit(rel)
    assert not page.locator("#audit-layer").is_checked() and drawn(page.evaluate(MARKS)) == {'""'}
    # A reviewer's link opens it, with JavaScript and without.
    for js in (True, False):
        linked = tabs(js=js).visit(rel + "#audit-layer")
        assert linked.evaluate(LEGEND) == "block", f"#audit-layer, JavaScript {'on' if js else 'off'}"
        assert all(m["drawn"] == f'"{m["label"]}"' for m in linked.evaluate(MARKS))
    assert not tab.problems, tab.problems


# Where each correction is drawn, against the block it corrects and the page's width.
CORRECTIONS = """() => [...document.querySelectorAll("main .correction")].map(c => {
  const note = c.getBoundingClientRect(), block = c.closest(".corrected").firstElementChild.getBoundingClientRect();
  return {left: note.left, right: note.right, top: note.top, height: note.height, width: innerWidth,
          blockRight: block.right, blockTop: block.top, blockBottom: block.bottom,
          shown: getComputedStyle(c).display !== "none"}; })"""


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_a_refuted_statement_shows_its_correction_in_the_margin_or_after_it(tabs, rel):
    """Without a click, in both layers: beside its paragraph, in the margin, on a desktop; after it on a phone."""
    for layer in ("reading", "audit"):
        wide = tabs().visit(rel + ("#audit-layer" if layer == "audit" else "")).evaluate(CORRECTIONS)
        assert wide and all(n["shown"] and n["height"] > 0 for n in wide), (layer, wide)
        for n in wide:
            assert n["left"] >= n["blockRight"] and n["right"] <= n["width"], f"not in the margin: {n}"
            assert abs(n["top"] - n["blockTop"]) < 24, f"not beside its paragraph: {n}"
    for n in tabs("phone").visit(rel).evaluate(CORRECTIONS):
        assert n["top"] >= n["blockBottom"] and n["right"] <= n["width"], f"not after its paragraph: {n}"


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_a_copied_paragraph_is_its_words(tabs, rel):
    """Marks are not text: selecting a paragraph with audited statements or verified values copies its words,
    without the statuses' words, a ✓ or a tooltip, in either layer."""
    page = tabs().visit(rel)
    # (the words: the paragraph's text outside the marks and the tooltips, which are not text)
    select = """() => [...document.querySelectorAll("main article > p, main article > .corrected > p")].filter(
        p => p.querySelector(".audit-mark[data-label], .value .mark")).map(p => {
      const r = document.createRange(); r.selectNodeContents(p);
      const s = getSelection(); s.removeAllRanges(); s.addRange(r);
      const words = p.cloneNode(true);
      words.querySelectorAll(".audit-mark, .mark, .term-tip").forEach(e => e.remove());
      return [s.toString(), words.textContent]; })"""
    for layer in ("reading", "audit"):
        copied = page.evaluate(select)
        assert len(copied) >= 2, "no paragraphs with audit marks and verified values"
        for text, words in copied:  # (a formula copies as its letters, 𝑥 for x: compared as NFKC, spaces aside)
            assert "".join(unicodedata.normalize("NFKC", text).split()) == \
                "".join(unicodedata.normalize("NFKC", words).split()), layer
        page.locator(".layer-switch").click()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_axe_finds_nothing_serious_in_the_audit_layer(tabs, rel, scheme):
    page = tabs("desktop", scheme).visit(rel + "#audit-layer")
    assert page.evaluate(LEGEND) == "block"
    result = AXE.run(page, options={"resultTypes": ["violations"]})
    serious = [v for v in result.response["violations"] if v["impact"] in ("serious", "critical")
               or v["id"] == "color-contrast"]
    assert serious == [], f"{scheme}: " + violation_lines(serious)


# --- 6: phone width -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", HINT_PAGES)
def test_hints_start_collapsed_and_open_when_asked(tabs, rel):
    page = tabs("phone").visit(rel)
    hints = page.locator("details.hint")
    opened = [i for i in range(hints.count()) if hints.nth(i).evaluate("d => d.open")]
    assert hints.count() and not opened, f"hints open on load: {opened} of {hints.count()}"
    hints.first.locator("summary").click()
    assert hints.first.evaluate("d => d.open")


@pytest.mark.parametrize("rel", PAGES + SOURCE_PAGES)
def test_no_horizontal_overflow_at_phone_width(tabs, rel):
    assert not (wide := overflow(tabs("phone").visit(rel))), wide


def drawn_fonts(page, selector: str) -> set[str]:
    return {f["familyName"] for f in drawn_in(page, selector)}


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_every_mark_in_the_text_is_a_target_a_finger_can_hit(tabs, rel):
    """On a phone, an audit mark, a value's ✓ and a parameter's number are each 24 × 24 px (WCAG 2.2, 2.5.8)."""
    page = tabs("phone").visit(rel)
    boxes = page.eval_on_selector_all("main .audit-mark[data-label], main .value > a", """els => els.map(e => {
        const r = e.getBoundingClientRect(); return [e.className, r.width, r.height]; })""")
    assert {cls for cls, _, _ in boxes} >= {"mark", "num param"}, boxes[:3]
    small = sorted({(cls, round(w, 1), round(h, 1)) for cls, w, h in boxes if w < 24 or h < 24})
    assert not small, f"targets smaller than 24 × 24 px: {small[:4]}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_the_reading_layers_dots_are_seen_against_the_page(tabs, rel, scheme):
    """Quiet, but a visual sign of a control: 3:1 against the page (WCAG 2.2, 1.4.11), in both themes."""
    page = tabs(scheme=scheme).visit(rel)
    dots = page.evaluate("""() => [...document.querySelectorAll("main .audit-mark[data-label]")].map(b => {
        const d = getComputedStyle(b, "::before");
        return [b.className, d.backgroundColor, d.opacity, getComputedStyle(document.body).backgroundColor]; })""")
    assert dots
    faint = {(cls, round(contrast(color, float(opacity), back), 2)) for cls, color, opacity, back in dots
             if contrast(color, float(opacity), back) < 3}
    assert not faint, f"dots below 3:1 against the page: {sorted(faint)}"


def test_each_language_is_set_in_its_own_type_on_mixed_pages(tabs):
    """English in a Latin face (a CJK face sets its quotes full-width), Chinese in a CJK one, on the home page and
    on a side-by-side page; Chinese is never slanted (no synthetic italics)."""
    page = tabs().visit("index.html")
    english = drawn_fonts(page, 'section[lang="en"] li a')
    assert english and not any("CJK" in f for f in english), english
    assert any("CJK" in f for f in drawn_fonts(page, 'section[lang="zh-CN"] li a'))
    page = tabs().visit("parallel/en/lesson.html")
    english = drawn_fonts(page, '.cell[lang="en"] p')
    assert english and not any("CJK" in f for f in english), english
    page = tabs().visit("zh/lesson.html")
    assert page.eval_on_selector(".epigraph p", "e => getComputedStyle(e).fontStyle") == "normal"
    assert tabs().visit("en/lesson.html").eval_on_selector(".epigraph p", "e => getComputedStyle(e).fontStyle") == "italic"


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_the_evidence_is_on_its_own_page_one_link_away_with_or_without_javascript(browser, server, rel):
    """The claims table, the experiments, the audit list and their panels are the evidence page's: the page has
    none of them; the line under the title says what they hold and leads to each, and the evidence page leads
    back to the text."""
    for script in (True, False):
        context = browser.new_context(viewport=DESKTOP, java_script_enabled=script)
        try:
            page = context.new_page()
            page.goto(f"{server}/{rel}")
            assert page.locator("table.claims, #claims-audit, .panels, .prov").count() == 0
            line = page.locator(".evidence-line")
            assert line.count() == 1 and re.search(r"\d", line.inner_text())
            evidence = rel.rpartition("/")[2].removesuffix(".html") + ".evidence.html"
            line.locator(f'a[href="{evidence}#verification-evidence"]').click()
            page.wait_for_url(f"**/{evidence}#verification-evidence")
            assert page.locator("table.claims").first.is_visible(), "the evidence link did not lead to it"
            page.goto(f"{server}/{rel}")
            line.locator(f'a[href="{evidence}#claims-audit"]').click()
            page.wait_for_url(f"**/{evidence}#claims-audit")
            assert page.locator("#claims-audit li").first.is_visible(), "the audit link did not lead to the list"
            page.locator(".evidence-back a").click()
            page.wait_for_url(f"**/{rel}")
        finally:
            context.close()


def tab_through(page, stops: int = 250) -> list[str]:
    """The classes of what Tab focuses, from the top of the page, until it leaves the page."""
    page.evaluate("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    seen = []
    for _ in range(stops):
        page.keyboard.press("Tab")
        here = page.evaluate("(() => { const a = document.activeElement; return a === document.body ? null"
                             " : a.tagName.toLowerCase() + '.' + a.className + (a.dataset.label ? '[data-label]' : ''); })()")
        if here is None or (seen and here == seen[0]):
            break
        seen.append(here)
    return seen


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_marks_in_the_text_are_tab_stops_in_the_audit_layer_only(tabs, rel):
    """A page has dozens of marks: in the reading layer none is a stop, and the evidence page's audit list (one
    stop per statement) leads to the same panels; with the audit layer on, each mark is a stop."""
    page = tabs().visit(rel)
    page.evaluate("localStorage.removeItem('lessonkit-layer')")
    page = tabs().visit(rel)
    marks = page.locator("main .audit-mark[data-label]").count()
    values = page.locator("main .value > a").count()  # a value's ✓, a parameter's number
    reading = tab_through(page)
    assert marks and not [s for s in reading if s.endswith("[data-label]")], reading
    assert values and not [s for s in reading if s in ("a.mark", "a.num param")], reading
    evidence = tabs().visit(rel.removesuffix(".html") + ".evidence.html")
    listed = [s for s in tab_through(evidence) if s.startswith("a.audit-mark") and not s.endswith("[data-label]")]
    assert len(listed) == marks, (len(listed), marks)  # the audit list: one per statement
    page = tabs().visit(rel)
    page.locator("#audit-layer").check()  # remembered: the next visit opens in the audit layer
    audit = tab_through(tabs().visit(rel))
    assert len([s for s in audit if s.endswith("[data-label]")]) == marks, audit
    assert len([s for s in audit if s in ("a.mark", "a.num param")]) == values, audit
    tabs().page.evaluate("localStorage.removeItem('lessonkit-layer')")
    plain = tab_through(tabs(js=False).visit(rel))  # without JavaScript, the reading layer is the same
    assert plain and not [s for s in plain if s.endswith("[data-label]")], plain


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_the_text_comes_before_the_side_column_in_tab_order(tabs, rel):
    """The lesson first: after the skip link and the header, Tab goes into the text; the course's pages and the
    contents (drawn at the left) come after it. The header is at most 6 stops (skip link included)."""
    page = tabs().visit(rel)
    page.evaluate("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    where = []
    for _ in range(400):
        page.keyboard.press("Tab")
        here = page.evaluate("""() => { const a = document.activeElement;
            return a === document.body || (a.classList.contains('skip') && document.hasFocus() && window.__seen)
                 ? null : (window.__seen = true, a.closest('.side') ? 'side' : a.closest('main article') ? 'text'
                 : a.closest('main') ? 'main' : 'chrome'); }""")
        if here is None:
            break
        where.append(here)
    first_text = where.index("text")
    assert first_text <= 6 and "side" not in where[:first_text], where[:12]
    assert "side" in where and where.index("side") > len(where) - 1 - where[::-1].index("text"), where


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_the_skip_link_is_the_first_stop_and_seen_above_the_header(tabs, rel, width):
    page = tabs(width).visit(rel)
    page.evaluate("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Tab")
    seen = page.evaluate("""() => { const a = document.activeElement, r = a.getBoundingClientRect();
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return [a.className, r.left >= 0 && r.top >= 0 && r.width > 0, top === a || a.contains(top)]; }""")
    assert seen == ["skip", True, True], seen


@pytest.mark.parametrize("rel", ONE_AUDIT_PAGE)
def test_a_claims_table_is_labelled_lines_on_a_phone(tabs, rel):
    """Four columns at 375 px pushed the status off screen: on a phone every cell is on it, under its label."""
    rel = rel.removesuffix(".html") + ".evidence.html"
    page = tabs("phone").visit(rel)
    cells = page.eval_on_selector_all("table.claims td", """els => els.map(e => {
        const r = e.getBoundingClientRect();
        return [r.left, r.right, getComputedStyle(e, '::before').content, e.getAttribute('data-label')]; })""")
    assert cells, "no claims table on the page"
    off = [(left, right) for left, right, _, _ in cells if left < 0 or right > PHONE["width"]]
    assert off == [], f"{len(off)} of {len(cells)} cells off the screen: {off[:3]}"
    assert all(label and shown == f'"{label}"' for _, _, shown, label in cells), cells[:4]
    desktop = tabs().visit(rel)
    assert desktop.eval_on_selector("table.claims td", "e => getComputedStyle(e).display") == "table-cell"


@pytest.mark.parametrize("rel", PAGES + SOURCE_PAGES)
def test_text_keeps_a_margin_at_phone_width(tabs, rel):
    """Not asked by the list above, but a reader sees it at once: text does not touch the screen's edges."""
    page = tabs("phone").visit(rel)
    edges = page.eval_on_selector_all("main h1, main p, main li", """els => els.filter(e => e.getClientRects().length
        && !e.closest('.table-wrap, .math-display, pre, [popover], details:not([open])'))
        .map(e => { const r = e.getBoundingClientRect(); return [e.tagName.toLowerCase(), r.left, r.right]; })""")
    touching = sorted({f"{tag} at {left:.0f}..{right:.0f} px" for tag, left, right in edges
                       if left < 8 or right > PHONE["width"] - 8})
    assert not touching, (
        f"text touches the edge of a {PHONE['width']} px screen: {touching[:4]}. main sits outside .layout, "
        "which gives the side padding; fix in templates/static/style.css: body > main.content "
        "{ padding-left: 1.25rem; padding-right: 1.25rem; } (1rem under 600 px), or wrap main in .layout")


# --- 7-8: axe-core, light and dark ----------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("rel", PAGES + SOURCE_PAGES)
def test_axe_finds_nothing_serious_or_critical_and_text_contrast_is_readable(axe_results, rel, scheme):
    """One test per page and theme, so that axe runs once for each (it is most of this file's time): its
    serious and critical findings (a colour-contrast failure is serious), and placeholder text at 4.5:1."""
    found = axe_results(rel, scheme)
    violations = found["violations"]
    serious = [v for v in violations if v["impact"] in ("serious", "critical") or v["id"] == "color-contrast"]
    minor = [v for v in violations if v not in serious]
    if minor:
        print(f"axe ({rel}, {scheme}, minor): " + violation_lines(minor).replace("\n", "; "))
    assert serious == [], f"{scheme}: " + violation_lines(serious)
    faint = [f"{p['text']!r} ({p['cls']}): {contrast(p['color'], float(p['opacity']), p['back']):.2f}:1"
             for p in found["placeholders"] if contrast(p["color"], float(p["opacity"]), p["back"]) < 4.5]
    assert faint == [], f"{scheme}: placeholder text below 4.5:1: {faint}"


COLOUR = re.compile(r"#[0-9a-f]{3,8}|rgba?\([^()]*\)|transparent|currentcolor|var\(--[-\w]+\)", re.I)
COLOUR_PROPERTIES = {"color", "background", "background-color", "border-color", "outline-color",
                     "text-decoration-color", "fill", "stroke", "caret-color", "accent-color"}


def dark_declarations(css: str):
    """(property, value) of every declaration inside a prefers-color-scheme block of a style sheet."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for media in re.finditer(r"@media[^{]*prefers-color-scheme[^{]*\{", css):
        depth, i = 1, media.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(css[i], 0)
            i += 1
        block = re.sub(r"[^{};]*\{", "{", css[media.end():i - 1])  # selectors go, declarations stay
        yield from ((p, v.strip()) for p, v in re.findall(r"([-\w]+)\s*:\s*([^;{}]+)", block))


def test_the_dark_theme_changes_colours_only(site):
    """What lets axe run only DARK_RULES in the dark theme: every declaration inside a prefers-color-scheme
    block, in the site's style sheets and its pages' <style> elements, gives a colour property or a custom
    property a colour; and nothing else (a <picture> source, a media attribute, a script, light-dark())
    depends on the scheme."""
    sheets = {path.relative_to(site).as_posix(): path.read_text("utf-8") for path in sorted(site.rglob("*.css"))}
    for path in sorted(site.rglob("*.html")):
        html = path.read_text("utf-8")
        rel = path.relative_to(site).as_posix()
        sheets.update({f"{rel} <style> {n}": css for n, css in
                       enumerate(re.findall(r"<style[^>]*>(.*?)</style>", html, re.S))})
        outside = re.sub(r"<style[^>]*>.*?</style>", "", html, flags=re.S)
        assert "prefers-color-scheme" not in outside and "light-dark(" not in outside, f"{rel}: depends on the scheme"
    for path in sorted(site.rglob("*.js")):
        text = path.read_text("utf-8", errors="replace")
        assert "prefers-color-scheme" not in text, f"{path.relative_to(site)}: a script reads the colour scheme"
    found = 0
    for name, css in sheets.items():
        assert "light-dark(" not in css, f"{name}: light-dark() changes with the scheme"
        for prop, value in dark_declarations(css):
            found += 1
            colour = all(COLOUR.fullmatch(part) for part in re.findall(r"[^\s(]+(?:\([^()]*\))?", value))
            ok = (prop.lower() in COLOUR_PROPERTIES or prop.startswith("--")) and colour
            assert ok, f"{name}: the dark theme sets {prop}: {value}, not a colour"
    assert found, "no dark theme found in the site's style sheets"


@pytest.mark.parametrize("rel", PAGES)
def test_axe_finds_nothing_serious_or_critical_at_phone_width(axe_results, rel):
    """Layout-dependent rules (scrollable regions) see other things at 375 px."""
    serious = [v for v in axe_results(rel, "light", "phone")["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], "phone, light: " + violation_lines(serious)


# --- 10: budgets -----------------------------------------------------------------------------------------



def test_every_page_is_painted_once_it_is_all_parsed(site):
    """What keeps the layout still on a slow machine, whatever its speed: each page blocks its first paint
    until the element after its content is parsed (Chromium unblocks at its start tag), and that element is the
    footer, the page's last, followed only by its scripts."""
    for path in sorted(site.rglob("*.html")):
        html = path.read_text("utf-8")
        rel = path.relative_to(site).as_posix()
        wanted = re.findall(r'<link rel="expect" href="#([^"]+)" blocking="render">', html.split("</head>")[0])
        assert len(wanted) == 1, f"{rel}: no render-blocking expect link in <head>"
        found = re.search(rf'<footer [^>]*id="{wanted[0]}">.*?</footer>', html, re.S)
        assert found and html.count(f'id="{wanted[0]}"') == 1, f"{rel}: no one footer #{wanted[0]}"
        after = re.sub(r"<script [^>]*></script>|\s+", "", html[found.end():])
        assert after == "</body></html>", f"{rel}: content after #{wanted[0]}: {after[:80]!r}"


@pytest.mark.parametrize("rel", PAGES)
def test_budgets_bytes_and_layout_shift(browser, server, site, rel, site_checks):
    site_checks["budgets"][rel] = within_budgets(browser, server, site, rel, CONFIG["source_language"])


@pytest.mark.parametrize("rel", PAGES)
def test_readable_without_javascript(tabs, rel):
    tab = tabs(js=False)
    page = tab.visit(rel)
    h1 = page.locator("h1")
    assert h1.count() == 1 and h1.is_visible() and h1.inner_text().strip(), "no visible h1 without JavaScript"
    main = page.locator("main")
    assert main.is_visible(), "main is hidden without JavaScript"
    text = main.inner_text().strip()
    notice = page.locator("main noscript")
    if notice.count():
        # A page that needs JavaScript (search) says so in place of its content.
        said = notice.first.evaluate("n => n.textContent.replace(/<[^>]+>/g, '').trim()")
        assert said and said in text, f"the <noscript> notice is not shown: {said!r}"
    else:
        scripted = tabs().visit(rel).locator("main").inner_text().strip()
        assert text and len(text) >= 0.9 * len(scripted), (
            f"main shows {len(text)} characters without JavaScript, {len(scripted)} with it: {text[:80]!r}")
    assert tab.problems == [], "\n".join(tab.problems)
