"""--pdf: every page of each language printed by Chromium (the print stylesheet), and each language's whole
course joined in reading order, into site/pdf/; each page links to both."""

from __future__ import annotations

import re

import pytest
from conftest import EXERCISE, append_to_page, make_course, run_build, with_figure

NUMBERED = {"zh": "\n$$\nz = \\frac{x - \\bar{x}}{s}\n$$ (zscore)\n\n见 {ref}`eq:zscore`。\n",
            "en": "\n$$\nz = \\frac{x - \\bar{x}}{s}\n$$ (zscore)\n\nSee {ref}`eq:zscore`.\n"}


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    root = make_course(tmp_path_factory.mktemp("pdf") / "c")
    append_to_page(append_to_page(with_figure(root), "page", EXERCISE), "page", NUMBERED)
    result = run_build("--pdf", "evidence", "--no-search", "--check", "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "site"


def text_of(pdf, nfkc: bool = True) -> str:
    """A PDF's text without white space (the extraction spaces runs of text as it pleases), NFKC-normalised
    unless asked (the shown values compare so with the page's)."""
    import unicodedata

    from pypdf import PdfReader

    text = "".join(page.extract_text() for page in PdfReader(pdf).pages)
    return "".join((unicodedata.normalize("NFKC", text) if nfkc else text).split())


@pytest.mark.browser
def test_chinese_text_copies_as_the_page_has_it_not_as_radicals(printed):
    """Noto Sans CJK shares a glyph between a radical and its ideograph (⼩ and 小); Chromium writes the glyph's
    text as the radical. The build maps it back: what a reader copies or searches is the page's text."""
    from lessonkit.write.pdf import cjk_radicals

    text = text_of(printed / "pdf" / "zh" / "page.pdf", nfkc=False) + text_of(printed / "pdf" / "zh.pdf", nfkc=False)
    assert "小实验" in text and "均值" in text
    if cjk_radicals():  # Noto Sans CJK SC is there (make site installs it): no radical is left
        assert not [c for c in text if 0x2E80 <= ord(c) <= 0x2FDF or 0x31C0 <= ord(c) <= 0x31EF]


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_page_prints_with_its_measured_values_and_numbered_notes(printed, lang):
    from lessonkit import markup

    html = (printed / lang / "page.html").read_text("utf-8")
    assert f'href="../pdf/{lang}/page.pdf"' in html and f'href="../pdf/{lang}.pdf"' in html
    import unicodedata

    shown = ["".join(unicodedata.normalize("NFKC", text).split()) for text in (v.text for v in markup.scan(html).values)]
    assert len(shown) >= 4
    text = text_of(printed / "pdf" / lang / "page.pdf")
    for value in shown:
        assert value in text, (value, text[:500])
    # The panels are notes on paper (the evidence page's, printed after the page): each mark that leads to one
    # carries the panel's number.
    notes = re.findall(r'href="page\.evidence\.html#([^"]+)" data-note="(\d+)"', html)
    assert notes and {n for _, n in notes} == {str(i) for i in range(1, len({p for p, _ in notes}) + 1)}
    # In reading order: the text's first mark is note 1, the next new one note 2 …; the panels say the same.
    firsts = list(dict.fromkeys(n for _, n in notes))
    assert firsts == [str(i) for i in range(1, len(firsts) + 1)], firsts
    evidence = (printed / lang / "page.evidence.html").read_text("utf-8")
    assert all(f'id="{panel}" data-note="{n}"' in evidence for panel, n in notes)
    assert re.search(r"\[1\].*\[2\]", text_of(printed / "pdf" / lang / "page.pdf"))
    assert "(1)" in text  # the numbered equation keeps its number
    assert "zscore" not in text  # (its label is an anchor, not text)


@pytest.mark.browser
def test_plain_pdf_prints_the_reading_layer_and_evidence_asks_for_the_notes(printed, tmp_path):
    """--pdf prints what a reader reads: the text with its numbers, no notes, no claims table, no audit list;
    --pdf evidence (the fixture) adds them, as the audit layer shows them."""
    import unicodedata

    from pypdf import PdfReader

    result = run_build("--pdf", "--no-search", "--out", tmp_path / "reading", root=printed.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    for lang in ("zh", "en"):
        reading, evidence = tmp_path / "reading" / "pdf" / lang / "page.pdf", printed / "pdf" / lang / "page.pdf"
        plain, full = text_of(reading), text_of(evidence)
        assert "[1]" in full and "[1]" not in plain
        assert "tiny.mean" in full and "tiny.mean" not in plain  # the claims table's keys
        assert len(PdfReader(reading).pages) <= len(PdfReader(evidence).pages)
        shown = re.findall(r'<span class="num">([^<]+)</span>', (printed / lang / "page.html").read_text("utf-8"))
        assert shown and all("".join(unicodedata.normalize("NFKC", v).split()) in plain for v in shown), shown


@pytest.mark.browser
def test_the_whole_course_of_a_language_is_one_pdf_with_a_bookmark_per_page(printed):
    from pypdf import PdfReader

    for lang, title in (("zh", "小实验"), ("en", "A tiny experiment")):
        book = PdfReader(printed / "pdf" / f"{lang}.pdf")
        one = PdfReader(printed / "pdf" / lang / "page.pdf")
        assert len(book.pages) == len(one.pages) >= 1
        assert [item.title for item in book.outline] == [title]
        assert book.metadata.title == {"zh": "小课", "en": "A tiny course"}[lang]


def links_of(pdf) -> set[str]:
    from pypdf import PdfReader

    return {str(a.get_object()["/A"]["/URI"]) for page in PdfReader(pdf).pages for a in page.get("/Annots") or []
            if "/A" in a.get_object() and "/URI" in a.get_object()["/A"]}


@pytest.mark.browser
def test_a_course_printed_again_gives_the_same_pdfs_whose_links_lead_into_the_site(printed, tmp_path):
    """Chromium stamps each PDF with the time it printed it, and writes links as file: addresses of the folder
    it printed from; the build writes its own date over the time, and makes the links relative to the PDF (or
    absolute under base_url), so a second print of the same commit is byte-identical wherever it is built."""
    import time

    root = printed.parent
    first = {p.relative_to(printed): p.read_bytes() for p in sorted((printed / "pdf").rglob("*.pdf"))}
    time.sleep(1.1)  # a print a second later would carry another time
    result = run_build("--pdf", "evidence", "--no-search", "--force", "--out", tmp_path / "again", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    again = {p.relative_to(tmp_path / "again"): p.read_bytes() for p in sorted((tmp_path / "again" / "pdf").rglob("*.pdf"))}
    assert list(first) == list(again) and len(first) == 4
    assert [name for name in first if first[name] != again[name]] == []
    from pypdf import PdfReader

    assert PdfReader(printed / "pdf/en/page.pdf").metadata["/CreationDate"] == "D:19700101000000+00'00'"
    page_links, book_links = links_of(printed / "pdf/en/page.pdf"), links_of(printed / "pdf/en.pdf")
    assert "../../en/experiments/tiny.html#L17" in page_links
    assert page_links and all(link.startswith(("../../en/", "../../figures/")) for link in page_links), page_links
    assert book_links == {link.removeprefix("../") for link in page_links}
    published = run_build("--pdf", "evidence", "--no-search", "--base-url", "https://example.org/c/", "--out",
                          tmp_path / "published", root=root)
    assert published.returncode == 0, published.stderr
    assert links_of(tmp_path / "published/pdf/en/page.pdf") == {
        "https://example.org/c/" + link.removeprefix("../../") for link in page_links}


def test_without_pdf_no_page_links_to_one(tmp_path):
    root = make_course(tmp_path / "c")
    assert run_build("--no-search", "--out", root / "site", root=root).returncode == 0
    html = (root / "site" / "en" / "page.html").read_text("utf-8")
    assert "pdf/" not in html and not (root / "site" / "pdf").exists()


@pytest.mark.browser
def test_a_page_that_never_loads_is_named_with_its_time_limit_not_blamed_on_chromium(tmp_path):
    """A page that spins under --pdf was "Chromium could not print the pages; it needs Debian's chromium"."""
    root = make_course(tmp_path / "c", config="experiment_timeout: 3\n")
    page = root / "templates" / "page.html"
    page.write_text(page.read_text("utf-8").replace("{% block main %}", "{% block main %}<script>for(;;){}</script>",
                                                    1), "utf-8")
    result = run_build("--pdf", "--no-search", "--out", root / "site", root=root)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "did not load and print within 3 s (content/site.yaml: experiment_timeout)" in lines[0], lines[0]
    assert "needs Debian's chromium" not in lines[0]
