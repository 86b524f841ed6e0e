"""The build's stages over the page model: parallel parsing gives the serial result byte for byte, and a
language is data (a folder, a strings file, an entry in site.yaml): a third one builds and checks."""

from __future__ import annotations

import hashlib
import re
import shutil

import pytest
from conftest import ROOT, build_here, course_from, make_big_course, make_course, run_build, with_evidence

from lessonkit.errors import BuildError


def files(site):
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_parallel_parsing_and_rendering_are_byte_identical_to_serial(tmp_path):
    course = make_big_course(tmp_path / "big", 30)
    _, said = build_here(course, seeds=1, jobs=1, out=tmp_path / "serial")
    assert "parsing 60 of 60 pages" in said and "rendering 60 of 60 pages" in said
    shutil.rmtree(course / ".cache")
    # In a subprocess: a test worker has threads of its own, and a build forks only where none run.
    parallel = run_build("--no-search", "--seeds", "1", "--jobs", "2", "--out", tmp_path / "parallel", root=course)
    assert parallel.returncode == 0, parallel.stderr
    assert "parsing 60 of 60 pages in 2 processes" in parallel.stdout
    assert files(tmp_path / "serial") == files(tmp_path / "parallel")
    shutil.rmtree(course / ".cache")
    _, said = build_here(course, seeds=1, jobs=2, fork=False, out=tmp_path / "unforked")  # as the preview builds
    assert "parsing 60 of 60 pages" in said
    assert files(tmp_path / "serial") == files(tmp_path / "unforked")


def test_a_course_written_inline_builds_in_process(tmp_path):
    course = course_from(tmp_path / "c", """
-- content/zh/page.md --
---
title: 一页
---

## 均值 {#mean}

均值是 {val}`tiny.mean`。
-- content/en/page.md --
---
title: One page
translated_from: {digest:zh/page.md}
---

## The mean {#mean}

The mean is {val}`tiny.mean`.
""")
    result, said = build_here(course)
    assert result["rendered"] == 2 and result["seeds"] == 2, said  # both languages, over the fixture's 2 seeds
    assert 'data-key="tiny.mean"' in (course / "site" / "en" / "page.html").read_text("utf-8")
    assert build_here(course)[0] is None  # nothing changed: no build
    en = course / "content" / "en" / "page.md"
    en.write_text(en.read_text("utf-8").replace("The mean is", "The average is"), "utf-8")
    result, said = build_here(course)  # the edited page alone, the experiment from the cache
    assert result["rendered"] == 1 and result["runs"] == 0, said
    assert "The average is" in (course / "site" / "en" / "page.html").read_text("utf-8")
    en.write_text(en.read_text("utf-8").replace("tiny.mean", "tiny.maen"), "utf-8")
    with pytest.raises(BuildError, match="unknown value key 'tiny.maen'"):
        build_here(course)


@pytest.mark.slow
def test_an_error_in_a_parallel_worker_is_one_line_with_its_file_and_line(tmp_path):
    course = make_big_course(tmp_path / "big", 30)
    page = course / "content" / "en" / "p017.md"
    page.write_text(page.read_text("utf-8").replace("{val}`tiny.mean`", "{val}`tiny.maen`"), "utf-8")
    result = run_build("--no-search", "--seeds", "1", "--jobs", "2", "--out", tmp_path / "site", root=course)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    line = next(i for i, text in enumerate(page.read_text("utf-8").splitlines(), 1) if "tiny.maen" in text)
    assert result.stderr.startswith(f"error: content/en/p017.md:{line}: unknown value key 'tiny.maen'"), result.stderr


JA = {"tag": "ja", "lang_name": "日本語", "list_sep": "、", "label_sep": "：", "comma": "，", "closing": "、。）」"}


@pytest.mark.slow
def test_a_third_language_is_a_folder_a_strings_file_and_a_line_in_site_yaml(tmp_path):
    import hashlib

    import yaml

    course = make_course(tmp_path / "c")
    config = course / "content" / "site.yaml"
    config.write_text(config.read_text("utf-8").replace("languages: [zh, en]", "languages: [zh, en, ja]")
                      .replace("  en: A tiny course", "  en: A tiny course\n  ja: 小さな講座"), "utf-8")
    strings = yaml.safe_load((ROOT / "templates/i18n/en.yaml").read_text("utf-8"))
    strings.update(JA)
    (course / "templates/i18n/ja.yaml").write_text(yaml.safe_dump(strings, allow_unicode=True), "utf-8")
    zh = (course / "content/zh/page.md").read_text("utf-8")
    (course / "content/ja").mkdir()
    digest = hashlib.sha256(zh.encode()).hexdigest()[:12]
    (course / "content/ja/page.md").write_text(
        f"---\ntitle: 小さな実験\ntranslated_from: {digest}\n---\n\n## 平均 {{#mean}}\n\n"
        "{val}`tiny.n` 個の数の平均 $\\bar{x}$ は {val}`tiny.mean`、標準偏差 {val}`tiny.spread`、二つの和の差は"
        "{val}`tiny.noise`。\n", "utf-8")
    experiment = course / "experiments/tiny.py"
    experiment.write_text(experiment.read_text("utf-8").replace('"en": "the spread is near 1"}',
                                                               '"en": "the spread is near 1", "ja": "標準偏差は 1 に近い"}')
                          .replace('"en": "the mean is near 0"}', '"en": "the mean is near 0", "ja": "平均は 0 に近い"}'),
                          "utf-8")
    result = run_build("--no-search", "--seeds", "2", "--strict", "--check", "--out", course / "site", root=course)
    assert result.returncode == 0, result.stdout + result.stderr
    ja = (course / "site/ja/page.html").read_text("utf-8")
    assert '<html lang="ja">' in ja and "標準偏差は 1 に近い" in with_evidence(course / "site/ja/page.html")
    for lang, tag in (("zh", "zh-CN"), ("en", "en")):
        assert f'hreflang="{tag}" href="../{lang}/page.html"' in ja
    assert 'hreflang="ja" href="../ja/page.html"' in (course / "site/zh/page.html").read_text("utf-8")
    assert "小さな講座" in (course / "site/index.html").read_text("utf-8")


# -- the staging folder: files made ahead while pages parse, written by workers, swapped in whole --------------

def test_files_made_ahead_but_never_written_do_not_reach_the_site(tmp_path):
    from lessonkit.write import staging

    out = tmp_path / "site"
    with staging.Staging(out) as site:
        site.prepare(["a.html", "deep/er/b.html", "c.html"])
        site.put("c.html", b"from a worker")  # a worker's file: the parent marks it WRITTEN
        site.write({"a.html": b"<p>a</p>", "c.html": staging.WRITTEN})
    assert files(out) == {"a.html": b"<p>a</p>", "c.html": b"from a worker"}
    assert not (out / "deep").exists(), "no empty folder is left where a file was made ahead"
    assert [p.name for p in tmp_path.iterdir()] == ["site"], "the staging folder is gone"


def test_a_kept_file_made_ahead_is_the_current_sites_file(tmp_path):
    from lessonkit.write import staging

    out = tmp_path / "site"
    with staging.Staging(out) as site:
        site.write({"a.html": b"old a", "b.html": b"old b"})
    with staging.Staging(out) as site:
        site.prepare(["a.html", "b.html"])
        site.write({"a.html": staging.KEEP, "b.html": b"new b"})
    assert files(out) == {"a.html": b"old a", "b.html": b"new b"}


def test_a_failure_before_the_write_leaves_the_current_site_and_no_staging_folder(tmp_path):
    from lessonkit.write import staging

    out = tmp_path / "site"
    with staging.Staging(out) as site:
        site.write({"a.html": b"a"})
    try:
        with staging.Staging(out) as site:
            site.prepare(["a.html", "b.html"])
            site.put("b.html", b"half a build")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert files(out) == {"a.html": b"a"}
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_fact_of_the_build_a_page_template_reads_is_part_of_the_pages_key(tmp_path):
    """A course's own page template that shows whether the site has search renders again when the option
    changes: what the templates read of `build` is found in them, not listed by the engine."""
    course = course_from(tmp_path / "c", """
-- templates/page.html --
{% extends "theme/page.html" %}
{% block meta %}{{ super() }}<meta name="searchable" content="{{ build['search'] }}">{% endblock %}
""")
    build_here(course, search=False)
    assert 'content="False"' in (course / "site" / "en" / "page.html").read_text("utf-8")
    result, _ = build_here(course, search=True)
    assert result["rendered"] == 2
    assert 'content="True"' in (course / "site" / "en" / "page.html").read_text("utf-8")
    result, _ = build_here(course, search=True, force=False)
    assert result is None or result["rendered"] == 0  # unchanged: nothing rendered again


def test_the_facts_a_template_reads_are_found_through_what_it_extends_and_includes():
    import jinja2

    from lessonkit.render.environment import build_facts_read

    env = jinja2.Environment(loader=jinja2.DictLoader({
        "page.html": '{% extends "base.html" %}{% block b %}{{ build.pdf }}{% include "part.html" %}{% endblock %}',
        "base.html": "{{ build.seed }}{% block b %}{% endblock %}", "part.html": "{{ build['search'] }}",
        "whole.html": '{% extends "base.html" %}{% block b %}{{ build | length }}{% endblock %}',
        "computed.html": "{{ build[name] }}"}))
    assert build_facts_read(env, ("page.html",)) == {"pdf", "seed", "search"}
    assert build_facts_read(env, ("whole.html",)) is None  # build as a whole: every fact counts
    assert build_facts_read(env, ("computed.html",)) is None


def test_the_data_files_every_page_depends_on_are_those_the_load_stage_read(tmp_path):
    """Recorded as they are read, not listed: a style that no source is formatted with is no input, and a
    data file that is there is one."""
    from conftest import with_data_files

    from lessonkit import pipeline

    course = make_course(tmp_path / "c")
    (course / "content" / "plain.csl").write_text("<style/>", "utf-8")
    with (course / "content" / "site.yaml").open("a", encoding="utf-8") as f:
        f.write("citation_style: plain.csl\n")

    def read():
        loaded = pipeline.load(pipeline.Options(root=course, out=course / "site"), say=lambda line: None)
        return {p.relative_to(course).as_posix() for p in loaded.data_files}

    assert read() == set()  # no glossary, no sources: the style is never used
    with_data_files(course)
    (course / "content" / "plain.csl").unlink()
    (course / "content" / "site.yaml").write_text(
        (course / "content" / "site.yaml").read_text("utf-8").replace("citation_style: plain.csl\n", ""), "utf-8")
    assert read() == {"content/glossary.yaml", "content/references.yaml"}


def test_quartos_cross_references_reach_another_pages_figure_equation_and_section(tmp_path):
    """Quarto's syntax, as a Quarto author writes it: [@key] a citation, @fig-x and @eq-x the figure and the
    equation of another page (the one page that has them), numbered in its chapter, @sec-x its section; in each
    language's words. A target no page has, or several have, is an error at its line."""
    from conftest import TWO_PAGES, with_data_files, with_figure

    more = {"zh": "见 @fig-tiny.bars 与 [@eq-zscore]，@sec-mean 一节的方法出自 [@gauss1809]。"
                  "[@fig-tiny.bars 里的柱子一样高]{.claim audit=unverified why=\"没有检验\"}。",
            "en": "See @fig-tiny.bars and [@eq-zscore]; the method of @sec-mean is from [@gauss1809]. "
                  "[The bars in @fig-tiny.bars are alike]{.claim audit=unverified why=\"not tested\"}."}
    course = with_data_files(with_figure(course_from(tmp_path / "c", TWO_PAGES + f"""-- content/zh/more.md --
---
title: 更多
---

## 更多 {{#more}}

{more["zh"]}
-- content/en/more.md --
---
title: More
translated_from: {{digest:zh/more.md}}
---

## More {{#more}}

{more["en"]}
""")))
    for lang, title, eq in (("zh", "title: 小实验", "\n$$\nz = x - 1\n$$ (zscore)\n"),
                            ("en", "title: A tiny experiment", "\n$$\nz = x - 1\n$$ (zscore)\n")):
        page = course / "content" / lang / "page.md"
        page.write_text(page.read_text("utf-8").replace(title, f"{title}\nnumber: 3", 1) + eq, "utf-8")
    mark = course / "content" / "en" / "page.md"
    mark.write_text(re.sub(r"translated_from: \w+", "translated_from: "
                           + hashlib.sha256((course / "content/zh/page.md").read_bytes()).hexdigest()[:12],
                           mark.read_text("utf-8")), "utf-8")
    build_here(course, strict=True)

    def shown(lang: str) -> list[tuple[str, str]]:
        html = (course / "site" / lang / "more.html").read_text("utf-8")
        return re.findall(r'<a class="(?:xref|cite)" href="([^"]+)">(.*?)</a>', html)

    assert shown("en") == [("page.html#fig-tiny-bars", "Figure 3.1"), ("page.html#eq-zscore", "Equation (3.1)"),
                           ("page.html#mean", "Section “The mean” of “A tiny experiment”"),
                           ("#ref-gauss1809", "C. F. Gauss, 1809"), ("page.html#fig-tiny-bars", "Figure 3.1")], \
        shown("en")
    # The audit entry names the statement as it reads, its cross-reference as words: the entry is the link.
    entry = re.search(r'<li id="audit-list-1".*?</li>', (course / "site/en/more.evidence.html").read_text("utf-8"),
                      re.S).group(0)
    assert "The bars in Figure 3.1 are alike" in entry and "@fig" not in entry and "xref" not in entry, entry
    assert shown("zh") == [("page.html#fig-tiny-bars", "图 3.1"), ("page.html#eq-zscore", "式 (3.1)"),
                           ("page.html#mean", "“小实验”的“均值”一节"), ("#ref-gauss1809", "C. F. Gauss, 1809"),
                           ("page.html#fig-tiny-bars", "图 3.1")], shown("zh")
    page = course / "content" / "zh" / "more.md"
    page.write_text(page.read_text("utf-8").replace("@fig-tiny.bars", "@fig-tiny.barz"), "utf-8")
    with pytest.raises(BuildError) as caught:
        build_here(course)
    assert str(caught.value) == ("content/zh/more.md:7: @fig-tiny.barz: no page of the course has figure "
                                 "'tiny.barz' (did you mean @fig-tiny.bars?)"), caught.value


def test_a_reference_to_another_pages_figure_names_that_page_or_its_chapters_number(tmp_path):
    """{ref} to a figure on another page reads "Figure 1 of “A tiny experiment”" (that page's own Figure 1 is not
    this page's); once that page gives its chapter's number (front matter `number: 3`), the figure is
    "Figure 3.1" on its page and wherever it is referred to, and the referring page is rendered again."""
    from conftest import TWO_PAGES, with_figure

    course = with_figure(course_from(tmp_path / "c", TWO_PAGES + """-- content/zh/more.md --
---
title: 更多
---

## 更多 {#more}

见{ref}`page.md#fig:tiny.bars`。
-- content/en/more.md --
---
title: More
translated_from: {digest:zh/more.md}
---

## More {#more}

See {ref}`page.md#fig:tiny.bars`.
"""))
    build_here(course)
    site = course / "site"

    def xref(url: str) -> str:
        return re.search(r'<a class="xref" href="page\.html#fig-tiny-bars">(.*?)</a>',
                         (site / url).read_text("utf-8")).group(1)

    assert xref("zh/more.html") == "“小实验”的图 1" and xref("en/more.html") == "Figure 1 of “A tiny experiment”"
    assert '<span class="caption-label">Figure 1</span>' in (site / "en" / "page.html").read_text("utf-8")
    for lang, title in (("zh", "title: 小实验"), ("en", "title: A tiny experiment")):
        page = course / "content" / lang / "page.md"
        page.write_text(page.read_text("utf-8").replace(title, f"{title}\nnumber: 3", 1), "utf-8")
    build_here(course)
    assert xref("zh/more.html") == "图 3.1" and xref("en/more.html") == "Figure 3.1"
    assert '<span class="caption-label">Figure 3.1</span>' in (site / "en" / "page.html").read_text("utf-8")
