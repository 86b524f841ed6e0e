"""Every author-controlled field, given quote, angle-bracket and on…= payloads, is refused in one line or shown as
text: no page gains an element or an attribute the same course without the payload does not have. The pages are
parsed, not grepped."""

from __future__ import annotations

from collections import Counter

import html5lib
import pytest
from conftest import GLOSSARY, TINY_FIGURE, append_to_page, make_course, run_build, with_data_files

PAYLOADS = ['x"><img src=x onerror=alert(1)><script>alert(1)</script>', "x' autofocus onfocus='alert(1)",
            "javascript:alert(1)"]


BUILD = ("--no-search", "--seeds", "1")


def build(root):
    return run_build(*BUILD, "--out", root / "site", root=root)


def shape(site) -> tuple[Counter, set]:
    """Every element (by name) and every (element, attribute) pair on every page of a site."""
    elements, attributes = Counter(), set()
    for page in sorted(site.rglob("*.html")):
        tree = html5lib.parse(page.read_text("utf-8"), namespaceHTMLElements=False)
        for el in tree.iter():
            if not isinstance(el.tag, str):
                continue
            elements[el.tag] += 1
            attributes |= {(el.tag, a) for a in el.attrib}
            for a, v in el.attrib.items():
                assert not (a in ("href", "src") and v.strip().lower().startswith("javascript:")), (page, el.tag, v)
    return elements, attributes


FIGURE = "\n::: figure tiny.bars Two bars.\nThe bars.\n:::\n"
TABLE = "\n::: table costs The costs.\n| a | b |\n|---|---|\n| 1 | 2 |\n:::\n"
TERM = "\n[均值]{.term} [mean]{.term}\n"


def with_figure_and_more(root):
    (root / "figures" / "tiny.py").write_text(TINY_FIGURE, "utf-8")
    with_data_files(root, glossary=GLOSSARY)
    more = '\n[s]{.claim audit=unverified why="plain"} [a link](https://example.org/x)\n'
    return append_to_page(root, "page", {"zh": FIGURE + TABLE + "\n[均值]{.term}\n" + more,
                                         "en": FIGURE + TABLE + "\n[mean]{.term}\n" + more})


# field -> how to put a payload into it (root, payload)
def _edit(root, rel, old, new):
    path = root / rel
    text = path.read_text("utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), "utf-8")


FIELDS = {
    "table id": lambda r, p: [_edit(r, f"content/{lang}/page.md", "::: table costs", f"::: table {p}")
                              for lang in ("zh", "en")],
    "figure id": lambda r, p: [_edit(r, f"content/{lang}/page.md", "::: figure tiny.bars", f"::: figure {p}")
                               for lang in ("zh", "en")],
    "caption": lambda r, p: [_edit(r, f"content/{lang}/page.md", "::: table costs The costs.",
                                   f"::: table costs {p}") for lang in ("zh", "en")],
    "figure alt": lambda r, p: [_edit(r, f"content/{lang}/page.md", "tiny.bars Two bars.", f"tiny.bars {p}")
                                for lang in ("zh", "en")],
    "title": lambda r, p: _edit(r, "content/zh/page.md", "title: 小实验", f"title: {p!r}"),
    "description": lambda r, p: _edit(r, "content/zh/page.md", "description: 一页。", f"description: {p!r}"),
    "site title": lambda r, p: _edit(r, "content/site.yaml", "zh: 小课", f"zh: {p!r}"),
    "heading id": lambda r, p: [_edit(r, f"content/{lang}/page.md", "{#mean}", "{#" + p + "}") for lang in ("zh", "en")],
    "language tag": lambda r, p: _edit(r, "templates/i18n/en.yaml", "tag: en", f"tag: {p!r}"),
    "interface string": lambda r, p: _edit(r, "templates/i18n/en.yaml", "verified: Verified",
                                           f"verified: {p!r}"),
    # an entry no page marks (a marked one would no longer match its page): the glossary page shows it
    "glossary term": lambda r, p: _edit(r, "content/glossary.yaml", "en: spread", f"en: {p!r}"),
    # a marked term's counterpart in the other language, in its tip (the en page names its entry by key)
    "glossary counterpart": lambda r, p: [_edit(r, "content/en/page.md", "[mean]{.term}", "[mean]{.term key=mean}"),
                                          _edit(r, "content/glossary.yaml", "en: mean", f"en: {p!r}")],
    "claim id": lambda r, p: _edit(r, "experiments/tiny.py", 'Claim(id="spread"', f"Claim(id={p!r}"),
    "claim text": lambda r, p: _edit(r, "experiments/tiny.py", '"en": "the spread is near 1"', f'"en": {p!r}'),
    "value id": lambda r, p: _edit(r, "experiments/tiny.py", '"odd": seed % 2,', f'"odd": seed % 2, {p!r}: 1,'),
    "why": lambda r, p: [_edit(r, f"content/{lang}/page.md", 'why="plain"', f"why={p!r}") for lang in ("zh", "en")],
    "link": lambda r, p: [_edit(r, f"content/{lang}/page.md", "(https://example.org/x)", f"({p})")
                          for lang in ("zh", "en")],
}


@pytest.fixture(scope="module")
def filled(prebuilt):
    """The course with every field filled, built once (its site and cache copied per test)."""
    return prebuilt("escaping", lambda root: with_figure_and_more(make_course(root)), *BUILD)


@pytest.fixture(scope="module")
def baseline(filled, tmp_path_factory):
    return shape(filled(tmp_path_factory.mktemp("base") / "c") / "site")


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("field", list(FIELDS))
def test_a_payload_in_any_field_is_refused_or_shown_as_text(tmp_path, filled, baseline, field, payload):
    root = filled(tmp_path / "c")
    FIELDS[field](root, payload)
    run_build("--mark-translated", "en/page.md", root=root)
    result = build(root)
    if result.returncode:  # refused: one line per error (the payload may sit in both pages), then their count
        lines = result.stderr.strip().splitlines()
        errors = lines[:-1] if len(lines) > 1 else lines
        assert errors and all(line.startswith("error: ") for line in errors), result.stderr
        assert len(lines) == 1 or lines[-1] == f"{len(errors)} errors", result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        return
    # Shown as text or an attribute's value (an image's alt), so it is there to see: an edit the incremental
    # build missed would test nothing.
    shown = []  # not counting the experiment's source listing, which shows its file as written
    for page in (p for p in (root / "site").rglob("*.html") if p.parent.name != "experiments"):
        tree = html5lib.parse(page.read_text("utf-8"), namespaceHTMLElements=False)
        shown += [*tree.itertext(), *(v for el in tree.iter() for v in el.attrib.values())]
    assert any("alert(1)" in text for text in shown), "the payload is on no page"
    elements, attributes = shape(root / "site")
    base_elements, base_attributes = baseline
    assert elements["script"] == base_elements["script"], "a script element appeared"
    assert not {name for name in elements if name not in base_elements}, "an element appeared"
    assert not attributes - base_attributes, f"attributes appeared: {attributes - base_attributes}"


def test_the_fixture_course_carries_every_field_the_payloads_go_into(baseline):
    """The payloads land somewhere: the baseline page has a figure, a table, a term, a claim mark and a title."""
    elements, attributes = baseline
    assert {("figure", "id"), ("img", "alt"), ("span", "lang"), ("a", "aria-label")} <= attributes
    assert elements["figcaption"] >= 2 and elements["title"] >= 1
