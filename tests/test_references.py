"""Sources from BibTeX: content/references.bib read with pybtex, formatted by a CSL style per language, listed in
each page's bibliography and in the audit panels that cite them."""

from __future__ import annotations

import re

import pytest
from conftest import append_to_page, build_here, course_from, run_build

from lessonkit.errors import BuildError

BIB = r"""% sources
@article{mueller2020,
  author  = {Anna M{\"u}ller and Bo Li and others},
  title   = {Spread of {Gaussian} Means},
  journal = {Journal of Tiny Results},
  volume  = {3},
  pages   = {10--20},
  year    = {2020},
  doi     = {10.1234/jtr.2020.3},
}

@misc{adams2019,
  author = {Cy Adams},
  title  = {Means & <Medians> "in" Practice},
  year   = {2019},
  url    = {https://example.org/a?x=1&y=2},
}

@book{unused1900,
  author = {Nobody Cited},
  title  = {A Book No Page Cites},
  year   = {1900},
}
"""

PAGES = """
-- content/references.bib --
{bib}
-- content/zh/page.md --
---
title: 出处
description: 一页。
---

## 句子 {{#s}}

[均值接近零]{{.claim audit=cited ref=mueller2020 at="表 2"}}。[中位数也是]{{.claim audit=cited ref=adams2019 at="第 5 页"}}。
-- content/en/page.md --
---
title: Sources
description: One page.
translated_from: {{digest:zh/page.md}}
---

## Sentences {{#s}}

[The mean is near zero]{{.claim audit=cited ref=mueller2020 at="Table 2"}}. [So is the median]{{.claim audit=cited ref=adams2019 at="p. 5"}}.
"""


def cited_course(root, bib: str = BIB, extra: str = ""):
    return course_from(root, PAGES.format(bib=bib) + extra)


def edit_both(root, edit) -> None:
    """edit(text) -> text on both pages; the translation stays marked up to date with its source."""
    import hashlib

    for lang in ("zh", "en"):
        page = root / f"content/{lang}/page.md"
        page.write_text(edit(page.read_text("utf-8")), "utf-8")
    digest = hashlib.sha256((root / "content/zh/page.md").read_bytes()).hexdigest()[:12]
    en = root / "content/en/page.md"
    en.write_text(re.sub(r"translated_from: \w+", f"translated_from: {digest}", en.read_text("utf-8")), "utf-8")


def bibliography(html: str) -> list[tuple[str, str]]:
    section = html[html.index('<section class="bibliography" id="references"'):]
    section = section[:section.index("</section>")]
    return re.findall(r'<li id="ref-([^"]+)"><span class="csl-entry">(.*?)</span></li>', section, re.S)


def panel(html: str, n: int) -> str:
    start = html.index(f'id="audit-panel-{n}"')
    return html[start:html.index("</section>", start)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = cited_course(tmp_path_factory.mktemp("refs") / "c")
    build_here(root)
    return root


def test_each_page_lists_the_sources_it_cites_in_its_language_style(built):
    en = (built / "site/en/page.html").read_text("utf-8")
    zh = (built / "site/zh/page.html").read_text("utf-8")
    # Cited entries only, in the style's order (by author), each formatted in the page's language.
    assert [key for key, _ in bibliography(en)] == ["adams2019", "mueller2020"]
    assert [key for key, _ in bibliography(zh)] == ["adams2019", "mueller2020"]
    mueller_en, mueller_zh = dict(bibliography(en))["mueller2020"], dict(bibliography(zh))["mueller2020"]
    # TeX accents decoded, "and others" cut to et al. by the style, pages as a range, the DOI a link.
    assert mueller_en.startswith("Müller, A. <i>et al.</i> (2020) “Spread of Gaussian Means”, "
                                 "<i>Journal of Tiny Results</i>, 3, pp. 10–20.")
    assert mueller_zh.startswith("Müller, A. <i>等</i> (2020) 《Spread of Gaussian Means》")
    assert "载于：" in zh and "载于:" not in zh  # the locale's word, with the Chinese colon after it
    assert '<a class="external" rel="noopener external" href="https://doi.org/10.1234/jtr.2020.3">' in mueller_en
    assert "A Book No Page Cites" not in en


def test_text_from_bibtex_is_escaped_and_its_address_is_one_link(built):
    en = (built / "site/en/page.html").read_text("utf-8")
    adams = dict(bibliography(en))["adams2019"]
    assert "Means &amp; &lt;Medians&gt; &quot;in&quot; Practice" in adams and "<Medians>" not in en
    assert adams.count('href="https://example.org/a?x=1&amp;y=2"') == 1


def test_an_audit_panel_shows_its_source_as_the_bibliography_does_and_where_in_it(built):
    en = (built / "site/en/page.evidence.html").read_text("utf-8")
    first = panel(en, 1)
    assert dict(bibliography(en))["mueller2020"] in first
    assert '<a href="#ref-mueller2020">References</a>' in first
    assert "Where: Table 2" in first
    assert dict(bibliography(en))["adams2019"] in panel(en, 2) and "Where: p. 5" in panel(en, 2)
    assert "位置：表 2" in panel((built / "site/zh/page.evidence.html").read_text("utf-8"), 1)


def test_the_side_by_side_page_carries_the_source_pages_bibliography(built):
    both = (built / "site/parallel/en/page.html").read_text("utf-8")
    assert [key for key, _ in bibliography(both)] == ["adams2019", "mueller2020"]


@pytest.mark.slow
def test_an_edited_entry_rebuilds_the_pages_that_cite_it(tmp_path):
    root = cited_course(tmp_path / "c")
    build_here(root)
    bib = root / "content/references.bib"
    bib.write_text(bib.read_text("utf-8").replace("Spread of {Gaussian} Means", "Spread of Means"), "utf-8")
    build_here(root)
    assert "“Spread of Means”" in (root / "site/en/page.html").read_text("utf-8")


def fails(root, *parts: str) -> str:
    with pytest.raises(BuildError) as caught:
        build_here(root)
    message = str(caught.value)
    for part in parts:
        assert part in message, message
    return message


def test_a_malformed_entry_names_its_line_and_the_entry_it_is_in(tmp_path):
    broken = BIB.replace("  year   = {2019},\n", "  year   = {2019,\n")
    root = cited_course(tmp_path / "c", broken)
    line = next(n for n, text in enumerate(broken.split("\n"), 1) if text.startswith("@misc{adams2019"))
    message = fails(root, "content/references.bib:", "syntax error", f"in the entry 'adams2019' that begins on "
                    f"line {line}")
    assert "\n" not in message
    # On the command line: one line, exit 1, no traceback.
    result = run_build("--out", root / "site", root=root)
    assert result.returncode == 1 and result.stderr.strip().count("\n") == 0, result.stderr
    assert result.stderr.startswith("error: content/references.bib:") and "Traceback" not in result.stderr


def test_a_key_written_twice_is_refused_at_the_second(tmp_path):
    twice = BIB + "\n@misc{adams2019,\n  title = {Again},\n}\n"
    line = twice.split("\n").index("@misc{adams2019,", twice.split("\n").index("@misc{adams2019,") + 1) + 1
    fails(cited_course(tmp_path / "c", twice), f"content/references.bib:{line}: repeated bibliography entry")


def test_a_key_in_both_files_is_refused(tmp_path):
    root = cited_course(tmp_path / "c", extra='-- content/references.yaml --\nmueller2020:\n  authors: "A"\n'
                        '  title: "T"\n')
    fails(root, "content/references.bib:2: reference 'mueller2020' is also defined at content/references.yaml:1")


@pytest.mark.parametrize(("change", "expected"), [
    (("  title   = {Spread of {Gaussian} Means},\n", ""), "content/references.bib:2: reference 'mueller2020' needs "
                                                         "a title"),
    (("https://example.org/a?x=1&y=2", "javascript:alert(1)"), "content/references.bib:12: reference 'adams2019': "
                                                               "url 'javascript:alert(1)' is not an http(s)"),
    (("{2020}", "{circa 2020}"), "content/references.bib:2: reference 'mueller2020': year must be a number"),
    (("Bo Li and others", "Li, Bo, Jr, Extra"), "content/references.bib:3: Too many commas in"),
    (("Bo Li and others", "others and Bo Li"), "content/references.bib:2: reference 'mueller2020': 'and others' may "
                                               "only end a list of names"),
    (("{Journal of Tiny Results}", "jtr"), "content/references.bib:5: undefined string: jtr (in the entry "
                                           "'mueller2020' that begins on line 2)"),    (("  author = {Cy Adams},\n", ""), "content/references.bib:12: reference 'adams2019' needs an author or an "
                                       "editor"),
    (("  author = {Cy Adams},\n", "  author = {Cy Adams},\n  crossref = {unused1900},\n"),
     "content/references.bib:12: reference 'adams2019': crossref is not read"),
    (("{Cy Adams}", "{Cy Ad\ue001ams}"), "content/references.bib:12: reference 'adams2019' has a private-use "
                                         "character"),
    (("@misc{adams2019,", "@misc{adams 2019,"), "content/references.bib:"),
    (("@misc{adams2019,", "@misc{adams<2019>,"), "reference 'adams<2019>': a key begins with a letter or digit"),
    (("{Means & <Medians> \"in\" Practice}", "{50% of means}"), "content/references.bib:12: reference 'adams2019': "
                                                                  "title has a % (a comment in TeX"),
    (("{Means & <Medians> \"in\" Practice}", "{Means {of} means"), "content/references.bib:"),
    (("{Cy Adams}", "{Cy Adams and {}}"), "content/references.bib:12: reference 'adams2019': an empty name"),
])
def test_an_entry_it_cannot_use_is_one_line_at_the_entry(tmp_path, change, expected):
    fails(cited_course(tmp_path / "c", BIB.replace(*change)), expected)


def test_an_unknown_key_suggests_the_closest_and_names_the_page(tmp_path):
    root = cited_course(tmp_path / "c")
    page = root / "content/zh/page.md"
    page.write_text(page.read_text("utf-8").replace("ref=mueller2020", "ref=muller2020"), "utf-8")
    fails(root, "content/zh/page.md:8:", "unknown reference 'muller2020' (did you mean 'mueller2020'?): add it to "
          "content/references.bib")


PLAIN_CSL = """<?xml version="1.0" encoding="utf-8"?>
<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">
  <info><title>Plain</title><id>plain</id><updated>2026-01-01T00:00:00+00:00</updated></info>
  <citation><layout><text variable="title"/></layout></citation>
  <bibliography>
    <sort><key variable="title"/></sort>
    <layout><text value="TITLE " /><text variable="title"/>{names}</layout>
  </bibliography>
</style>
"""


def with_style(root, csl: str, setting: str):
    (root / "content/styles").mkdir(exist_ok=True)
    (root / "content/styles/plain.csl").write_text(csl, "utf-8")
    with (root / "content/site.yaml").open("a", encoding="utf-8") as f:
        f.write(setting)
    return root


@pytest.mark.slow
def test_a_course_may_choose_a_csl_style_per_language(tmp_path):
    root = with_style(cited_course(tmp_path / "c"), PLAIN_CSL.format(names=""), "citation_style:\n  en: styles/plain.csl\n")
    build_here(root)
    en = bibliography((root / "site/en/page.html").read_text("utf-8"))
    assert en == [("adams2019", "TITLE Means &amp; &lt;Medians&gt; &quot;in&quot; Practice"),
                  ("mueller2020", "TITLE Spread of Gaussian Means")]  # sorted by title now
    assert dict(bibliography((root / "site/zh/page.html").read_text("utf-8")))["mueller2020"].startswith("Müller")
    # The style is an input: editing it rebuilds the pages.
    (root / "content/styles/plain.csl").write_text(PLAIN_CSL.format(names="").replace("TITLE ", "T: "), "utf-8")
    build_here(root)
    assert "T: Spread of Gaussian Means" in (root / "site/en/page.html").read_text("utf-8")


@pytest.mark.slow
def test_what_a_style_writes_itself_is_text_not_markup(tmp_path):
    """A course's style is an input: its affixes, delimiters, literal text and terms reach the page escaped."""
    script = "&lt;script&gt;alert(1)&lt;/script&gt;"
    csl = PLAIN_CSL.format(names="").replace('<text value="TITLE " />', f'<text value="{script} " prefix="{script}"/>')
    csl = csl.replace('<layout>', '<layout suffix="&lt;img src=x onerror=alert(2)&gt;">', 2)
    csl = csl.replace("<info>", '<locale><terms><term name="and">&lt;b onclick=x&gt;</term></terms></locale><info>')
    root = with_style(cited_course(tmp_path / "c"), csl, "citation_style: styles/plain.csl\n")
    build_here(root)
    for lang in ("zh", "en"):
        page = (root / f"site/{lang}/page.html").read_text("utf-8")
        assert "<script>alert" not in page and "<img src=x" not in page, lang
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize(("csl", "setting", "expected"), [
    (None, "citation_style: styles/none.csl\n", "content/site.yaml:8: citation_style: no file content/styles/none.csl"),
    (None, "citation_style: /etc/passwd.csl\n", "content/site.yaml:8: citation_style: expected a .csl file"),
    (None, "citation_style:\n  fr: styles/plain.csl\n", "content/site.yaml:8: citation_style: expected a .csl"),
    ("<style>not CSL</style>", "citation_style: styles/plain.csl\n",
     "content/styles/plain.csl: this citation style cannot format the sources"),
    (PLAIN_CSL.format(names='<text macro="nowhere"/>'), "citation_style: styles/plain.csl\n",
     "content/styles/plain.csl: this citation style cannot format the sources"),
    (PLAIN_CSL.format(names='<names variable="author" prefix=" by "><name/></names>'),
     "citation_style: styles/plain.csl\n", "content/references.bib:2: reference 'mueller2020': its names end in "
                                            "'and others', but the citation style would show names that are not written"),
])
def test_a_style_it_cannot_use_is_one_line(tmp_path, csl, setting, expected):
    root = with_style(cited_course(tmp_path / "c"), csl or PLAIN_CSL.format(names=""), setting)
    fails(root, expected)


def entry_html(root, key: str, lang: str = "en") -> str:
    return dict(bibliography((root / f"site/{lang}/page.html").read_text("utf-8")))[key]


def test_keys_keep_their_case_and_may_not_differ_only_in_it(tmp_path):
    root = cited_course(tmp_path / "c", BIB.replace("mueller2020", "Mueller:2020"))
    edit_both(root, lambda text: text.replace("ref=mueller2020", 'ref="Mueller:2020"'))
    build_here(root)
    assert entry_html(root, "Mueller:2020").startswith("Müller, A.")
    (root / "content/references.yaml").write_text('mueller:2020:\n  authors: "A"\n  title: "T"\n', "utf-8")
    fails(root, "content/references.bib:2: reference 'Mueller:2020' is also defined at content/references.yaml:1 "
          "(as 'mueller:2020': BibTeX keys ignore case)")


@pytest.mark.slow
def test_only_the_entrys_own_address_is_a_link_and_a_relative_one_is_too(tmp_path):
    twice = BIB.replace("  url    = {https://example.org/a?x=1&y=2},",
                        "  howpublished = {\\url{https://example.org/a}},\n  url    = {https://example.org/a},")
    twice = twice.replace("title  = {Means & <Medians> \"in\" Practice}", "title  = {Mirror at https://x.example/m}")
    root = cited_course(tmp_path / "c", twice, '-- content/references.yaml --\nrel:\n  authors: "Cy"\n'
                                                '  title: "Notes"\n  url: "../notes.pdf"\n')
    build_here(root)
    adams = entry_html(root, "adams2019")
    assert adams.count("<a ") == 1 and adams.count('href="https://example.org/a"') == 1, adams
    assert "Mirror at https://x.example/m" in adams and "\\url" not in adams
    from lessonkit.load.references import load
    rel = load(root, ["en"], {"en": "en"})["rel"]["html"]["en"]
    assert '<a class="external" rel="noopener external" href="../notes.pdf">../notes.pdf</a>' in rel


@pytest.mark.slow
def test_a_doi_is_read_with_or_without_its_address_and_checked(tmp_path):
    root = cited_course(tmp_path / "c", BIB.replace("doi     = {10.1234/jtr.2020.3}",
                                                    "doi     = {https://doi.org/10.1234/jtr.2020.3}"))
    build_here(root)
    assert entry_html(root, "mueller2020").count('href="https://doi.org/10.1234/jtr.2020.3"') == 1
    hashed = cited_course(tmp_path / "e", BIB.replace("{10.1234/jtr.2020.3}", "{10.1234/jtr#3}"))
    build_here(hashed)
    assert 'href="https://doi.org/10.1234/jtr%233">https://doi.org/10.1234/jtr#3</a>' in entry_html(hashed, "mueller2020")
    assert "doi.org/https" not in entry_html(root, "mueller2020")
    bad = cited_course(tmp_path / "d", BIB.replace("{10.1234/jtr.2020.3}", '{javascript:alert(1)}'))
    fails(bad, "content/references.bib:2: reference 'mueller2020': doi 'javascript:alert(1)' is not a DOI")


def test_tex_that_styles_text_is_read_and_other_tex_is_refused(tmp_path):
    root = cited_course(tmp_path / "c", BIB.replace(
        "{Spread of {Gaussian} Means}", "{Spread of \\emph{in situ} {\\em Gaussian} \\mbox{Means}, 50\\% \\{x\\}}")
        .replace("  year   = {2019},", "  year   = {2019},\n  howpublished = {\\url{https://x.example/a~b--c}},"))
    build_here(root)
    assert "“Spread of in situ Gaussian Means, 50% {x}”" in entry_html(root, "mueller2020")
    assert "https://x.example/a~b--c" in entry_html(root, "adams2019")  # an address is not TeX
    fails(cited_course(tmp_path / "d", BIB.replace("{Spread of {Gaussian} Means}", "{Spread \\cite{x}}")),
          "content/references.bib:2: reference 'mueller2020': title has TeX this build cannot read as text (\\cite)")


@pytest.mark.slow
def test_an_entry_with_editors_only_names_them_once(tmp_path):
    root = cited_course(tmp_path / "c", BIB.replace("author = {Cy Adams}", "editor = {Cy Adams}"))
    build_here(root)
    assert entry_html(root, "adams2019").count("Adams") == 1


def test_an_at_sign_inside_a_field_does_not_move_an_entrys_line(tmp_path):
    moved = "@misc{other,\n  title = {O}, author = {O Ther},\n  note = {cf. @misc{adams2019, in an old file}},\n}\n" \
        + BIB.replace("{2019}", "{twenty}")
    line = moved.split("\n").index("@misc{adams2019,") + 1
    fails(cited_course(tmp_path / "c", moved), f"content/references.bib:{line}: reference 'adams2019': year must be "
                                               f"a number")


@pytest.mark.slow
def test_the_bibliographys_ids_are_reserved_and_a_page_may_link_to_an_entry(tmp_path):
    root = cited_course(tmp_path / "c")
    edit_both(root, lambda text: text + "\nSee [the entry](#ref-adams2019).\n")
    build_here(root)
    assert 'href="#ref-adams2019"' in (root / "site/en/page.html").read_text("utf-8")
    edit_both(root, lambda text: text + "\n## References {#references}\n")
    fails(root, "id 'references' is reserved for the page's own elements")



@pytest.mark.parametrize("doublings, tail, expected", [
    (19, "", "@string 's14' expands to more than 100,000 characters"),
    (13, "@misc{big, title = s13 # s13, author = {A}, year = 2020}\n",
     "entry 'big' expands to more than 100,000 characters"),
])
def test_strings_that_double_are_refused_before_they_fill_the_memory(tmp_path, doublings, tail, expected):
    """A 1.5 KB file of @strings, each two of the one before, expanded to 10 GB (MemoryError)."""
    bib = BIB.rstrip("\n") + '\n@string{s0 = "xxxxxxxxxx"}\n' + "".join(
        f"@string{{s{i} = s{i - 1} # s{i - 1}}}\n" for i in range(1, doublings + 1)) + tail
    where = "@string{s14 " if "@string" in expected else "@misc{big"
    line = next(n for n, text in enumerate(bib.splitlines(), 1) if text.startswith(where))
    fails(cited_course(tmp_path / "c", bib), f"content/references.bib:{line}: {expected}")


def test_a_style_that_is_a_fifo_is_named_as_one_not_missing(tmp_path):
    import os

    root = with_style(cited_course(tmp_path / "c"), PLAIN_CSL.format(names=""), "citation_style: styles/plain.csl\n")
    (root / "content/styles/plain.csl").unlink()
    os.mkfifo(root / "content/styles/plain.csl")
    fails(root, "content/site.yaml:8: citation_style: content/styles/plain.csl is not a regular file (a FIFO")


def test_a_string_joined_from_many_is_refused_before_it_is_joined(tmp_path):
    """5,000 references to one 99,000-character @string in 119 KB of BibTeX made 500 MB before the bound."""
    bib = BIB.rstrip("\n") + '\n@string{a = "' + "x" * 99_000 + '"}\n@string{b = ' + " # ".join(["a"] * 5000) + "}\n"
    line = next(n for n, text in enumerate(bib.splitlines(), 1) if text.startswith("@string{b"))
    fails(cited_course(tmp_path / "c", bib), f"content/references.bib:{line}: @string 'b' expands to more than 100,000")


def test_the_sources_are_formatted_once_until_what_they_read_changes(tmp_path, monkeypatch):
    """pybtex and citeproc-py took a fifth of a second on every page edit: the formatted sources are kept by
    the digest of the .bib, the styles, the languages and the code, and made again when one changes."""
    from lessonkit.load import references

    calls = []
    real = references._load
    monkeypatch.setattr(references, "_load", lambda *a: calls.append(1) or real(*a))
    root = cited_course(tmp_path / "c")
    build_here(root)
    first = entry_html(root, "mueller2020")
    append_to_page(root, "page", {"zh": "\n再一句。\n", "en": "\nOne more.\n"})
    build_here(root)
    assert len(calls) == 1 and entry_html(root, "mueller2020") == first
    bib = root / "content/references.bib"
    bib.write_text(bib.read_text("utf-8").replace("Spread of {Gaussian} Means", "Spread of {Cauchy} Means"), "utf-8")
    build_here(root)
    assert len(calls) == 2 and "Spread of Cauchy Means" in entry_html(root, "mueller2020")
    # and another process finds the same key (nothing in it may differ between processes: an object's address)
    kept = (root / ".cache/references.json").stat().st_mtime_ns
    append_to_page(root, "page", {"zh": "\n又一句。\n", "en": "\nAnother.\n"})
    assert run_build("--no-search", "--out", root / "site", root=root, fresh=True).returncode == 0
    assert (root / ".cache/references.json").stat().st_mtime_ns == kept


CITED = """
-- content/references.bib --
{bib}
-- content/zh/page.md --
---
title: 出处
description: 一页。
---

## 句子 {{#s}}

均值接近零 [@mueller2020]，中位数也是 [@adams2019, 第 5 页; @mueller2020]。{{claim}}`tiny.spread` {{claim}}`tiny.mean`
-- content/en/page.md --
---
title: Sources
description: One page.
translated_from: {{digest:zh/page.md}}
---

## Sentences {{#s}}

The mean is near zero [@mueller2020], and so is the median [@adams2019, p. 5; @mueller2020]. {{claim}}`tiny.spread` {{claim}}`tiny.mean`
"""


def test_a_citation_in_prose_is_the_styles_in_text_form_linked_to_the_pages_references(tmp_path):
    """Quarto's [@key]: "(Müller et al., 2020)" in en, the zh locale's form in zh, one pair of brackets around
    several, a locator after its source; each links to its entry, which the page lists. An unknown key is one line
    at its line, with the closest key."""
    root = course_from(tmp_path / "c", CITED.format(bib=BIB))
    result = run_build("--no-search", "--seeds", "2", "--check", "--strict", "--out", root / "site", root=root)
    assert result.returncode == 0, result.stdout + result.stderr
    en = (root / "site/en/page.html").read_text("utf-8")
    zh = (root / "site/zh/page.html").read_text("utf-8")
    assert ('near zero <span class="citation">(<a class="cite" href="#ref-mueller2020">Müller <i>et al.</i>, 2020'
            '</a>)</span>') in en
    assert ('<span class="citation">(<a class="cite" href="#ref-adams2019">Adams, 2019, p. 5</a>; '
            '<a class="cite" href="#ref-mueller2020">Müller <i>et al.</i>, 2020</a>)</span>') in en
    assert '<a class="cite" href="#ref-mueller2020">Müller <i>等</i>, 2020</a>' in zh
    assert [key for key, _ in bibliography(en)] == ["adams2019", "mueller2020"] == [k for k, _ in bibliography(zh)]
    assert "[@" not in en and "[@" not in zh
    bad = (root / "content/en/page.md").read_text("utf-8").replace("[@mueller2020]", "[@muller2020]")
    (root / "content/en/page.md").write_text(bad, "utf-8")
    result = run_build("--no-search", "--seeds", "2", "--out", root / "site", root=root)
    line = bad[:bad.index("[@muller2020]")].count("\n") + 1
    assert result.returncode == 1 and result.stderr.startswith(
        f"error: content/en/page.md:{line}: unknown reference 'muller2020' (did you mean 'mueller2020'?)"), \
        result.stderr
