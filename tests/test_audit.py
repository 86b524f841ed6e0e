"""The claims audit: five statuses that say what the evidence says, and no number in prose left unaccounted."""

from __future__ import annotations

import json

import pytest
from conftest import TINY_PAGES, make_course, run_build, with_evidence

from lessonkit import markup

REFS = """src2020:
  authors: "A. Author"
  year: 2020
  title: "A paper"
  url: "https://example.org/paper"
"""

AUDITED = {
    "zh": "---\ntitle: 审计\ndescription: 一页。\n---\n\n## 句子 {#s}\n\n"
          "[均值接近零]{.claim audit=verified key=\"tiny.mean\"}。"
          "[训练后也成立]{.claim audit=partly key=\"tiny.spread\" scope=\"只在初始化时测量\"}。"
          "[论文这样说]{.claim audit=cited ref=src2020 at=\"第 3 节\"}。"
          "[有人这样认为]{.claim audit=unverified why=\"没有出处\"}。"
          "[均值很大]{.claim audit=refuted key=\"tiny.mean\" why=\"测得的均值接近零\" fix=\"均值很小。\"}。\n",
    "en": "---\ntitle: Audit\ndescription: One page.\ntranslated_from: {digest}\n---\n\n## Sentences {#s}\n\n"
          "[The mean is near zero]{.claim audit=verified key=\"tiny.mean\"}. "
          "[It holds after training too]{.claim audit=partly key=\"tiny.spread\" scope=\"measured at init only\"}. "
          "[A paper says so]{.claim audit=cited ref=src2020 at=\"Section 3\"}. "
          "[Some believe it]{.claim audit=unverified why=\"no source\"}. "
          "[The mean is large]{.claim audit=refuted key=\"tiny.mean\" why=\"the measured mean is near zero\" "
          "fix=\"The mean is small.\"}.\n",
}


def course(tmp_path, pages=AUDITED):
    root = make_course(tmp_path / "c", pages=pages)
    (root / "content" / "references.yaml").write_text(REFS, "utf-8")
    return root


def build(root, *args):
    return run_build("--no-search", "--seeds", "2", "--out", root / "site", *args, root=root)


def test_five_statuses_each_name_their_evidence(tmp_path):
    root = course(tmp_path)
    result = build(root, "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 verified, 1 partly, 1 cited, 1 unverified, 1 refuted" in result.stdout
    html = with_evidence(root / "site/en/page.html")
    assert [(mark.status, mark.claims) for mark in markup.scan(html).audits] == [
        ("verified", ("tiny.mean",)), ("partly", ("tiny.spread",)), ("cited", ()), ("unverified", ()),
        ("refuted", ("tiny.mean",))]
    assert "On this page: 1 verified, 1 partly verified, 1 cited, 1 unverified, 1 refuted." in html
    # Each mark opens a panel beside the sentence: the claim's statement, criterion and setting.
    panel = html[html.index('id="audit-panel-2"'):]
    panel = panel[:panel.index("</section>")]
    assert "the spread is near 1" in panel and "0.5 &lt; spread &lt; 1.5" in panel
    assert "experiments/tiny.py" in panel and "held on 2 of 2 seeds" in panel
    assert "Tested in a narrower setting</strong>: measured at init only" in panel
    cited = html[html.index('id="audit-panel-3"'):]
    assert "A paper" in cited[:cited.index("</section>")] and "Section 3" in cited[:cited.index("</section>")]
    refuted = html[html.index('id="audit-panel-5"'):]
    assert "Contradicted by" in refuted[:refuted.index("</section>")]
    zh = with_evidence(root / "site/zh/page.html")
    assert "本页共 1 条已验证、1 条部分验证、1 条有文献、1 条未验证、1 条被否证。" in zh


@pytest.mark.parametrize("markup, message", [
    ('[x]{.claim audit=partly key="tiny.mean"}', "audit=partly needs scope"),
    ('[x]{.claim audit=cited ref=src2020}', "audit=cited needs at"),
    ('[x]{.claim audit=refuted why="no" fix="yes"}', "audit=refuted needs key or ref (the evidence)"),
    ('[x]{.claim audit=refuted key="tiny.mean" why="no"}', "audit=refuted needs fix"),
    ('[x]{.claim audit=cited ref=src2020 at="§1" fix="so"}', "fix= is the correction of a refuted statement"),
    ('[x]{.claim audit=refuted key="tiny.mean" why="no" fix="' + "y" * 161 + '"}', "a correction is one line"),
    ('[x]{.claim audit=refuted key="tiny.mean" why="no" fix="$d_{k}$"}', "a value holds no { or }"),
    ('[x]{.claim audit=verified}', "audit=verified needs key"),
    ('[x]{.claim audit=verified key="tiny.maen"}', "unknown claim 'tiny.maen' (did you mean 'tiny.mean'?)"),
    ('[x]{.claim audit=probably}', "audit must be one of verified, partly, cited, unverified, refuted"),
])
def test_an_audit_without_its_evidence_is_a_one_line_error(tmp_path, markup, message):
    """The same audit in both pages: one line for each page, then their count."""
    pages = {lang: text + f"\n{markup}\n" for lang, text in TINY_PAGES.items()}
    root = course(tmp_path, pages)
    result = build(root)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[1:] == [lines[1], "2 errors"] and lines[0].startswith("error: content/en/page.md:"), result.stderr
    assert lines[1].startswith(f"error: content/zh/page.md:{len(pages['zh'].splitlines())}: "), result.stderr
    assert message in lines[0] and message in lines[1]


CORRECTED = {
    "zh": AUDITED["zh"] + "\n| 头 | 成本 |\n|---|---|\n"
          "| [四头]{.literal} | [低]{.claim audit=refuted key=\"tiny.mean\" why=\"w\" fix=\"成本相同。\"} |\n"
          "| [八头]{.literal} | [高]{.claim audit=refuted key=\"tiny.mean\" why=\"w\" fix=\"成本相同。\"} |\n",
    "en": AUDITED["en"] + "\n| heads | cost |\n|---|---|\n"
          "| [four]{.literal} | [low]{.claim audit=refuted key=\"tiny.mean\" why=\"w\" fix=\"The cost is the same.\"} |\n"
          "| [eight]{.literal} | [high]{.claim audit=refuted key=\"tiny.mean\" why=\"w\" fix=\"The cost is the same.\"} |\n",
}


def test_a_refuted_statement_shows_its_correction_after_its_paragraph_or_table(tmp_path):
    """Without a click: after the block that holds it (the stylesheet moves it to the margin on a wide page),
    labelled, one per distinct correction, naming the statements it corrects; its panel repeats it."""
    root = course(tmp_path, CORRECTED)
    result = build(root, "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    html = (root / "site/en/page.html").read_text("utf-8")
    body = html[html.index("<h2"):html.index('id="page-end"')]
    paragraph = body.index('<div class="corrected">\n<p>')
    assert body.index('id="audit-5"', paragraph) < body.index("</p>", paragraph) < body.index(
        '<div class="corrections"><aside class="correction" id="fix-5" data-fix="audit-5">'
        '<span class="correction-label">Correction</span>: The mean is small.</aside></div></div>', paragraph)
    table = body.index('<div class="corrected">', paragraph + 1)
    assert body.index("<table", table) < body.index("</table>", table) < body.index(
        '<aside class="correction" id="fix-6" data-fix="audit-6 audit-7"><span class="correction-label">'
        'Correction</span>: The cost is the same.</aside></div></div>', table)
    assert body.count('class="correction"') == 2
    panel = with_evidence(root / "site/en/page.html")
    panel = panel[panel.index('id="audit-panel-5"'):]
    assert "<strong>Correction</strong>: The mean is small." in panel[:panel.index("</section>")]
    zh = (root / "site/zh/page.html").read_text("utf-8")
    assert '<span class="correction-label">更正</span>：均值很小。</aside>' in zh
    # The side-by-side page pairs the paragraph, its corrections with it, with its translation.
    parallel = (root / "site/parallel/en/page.html").read_text("utf-8")
    cells = parallel.split('<div class="cell"')[1:]
    corrected = [c for c in cells if '<div class="corrected">' in c]
    assert len(corrected) == 4, len(corrected)  # paragraph and table, in each language
    assert all(c.index("<aside") > c.index('<div class="corrected">') for c in corrected)
    assert all(c.count("<div") <= c.count("</div>") for c in corrected)  # closed inside its cell


BARE = {
    "zh": "---\ntitle: 数字\ndescription: 一页。\n---\n\n## 第 3 节 {#s}\n\n"
          "L5 与 GPT-2 在 3.4.1 节；fp16 的 70B 模型。Vaswani et al. 2017 说过。$d = 512$ 与 `x = 8`。"
          "LLaMA 3.1 与 GPT-3 也是；见 Shazeer (2019) 与 (Ainslie et al., 2023)。"
          "[第 2 课](#s)。[8 头]{.literal}。[有 12 层]{.claim audit=unverified}。{val}`tiny.n` 个数。\n\n"
          "它有 25 个头。\n\n| 头 | 值 |\n|---|---|\n| 4 头 | 低 |\n",
    "en": "---\ntitle: Numbers\ndescription: One page.\ntranslated_from: {digest}\n---\n\n## Section 3 {#s}\n\n"
          "L5 and GPT-2 in 3.4.1; a 70B model in fp16. Vaswani et al. 2017 said so. $d = 512$ and `x = 8`. "
          "So do LLaMA 3.1 and GPT-3; see Shazeer (2019) and (Ainslie et al., 2023). In 2018 it spread. "
          "[Lesson 2](#s). [8 rows]{.literal}. [It has 12 layers]{.claim audit=unverified}. "
          "{val}`tiny.n` numbers.\n\nIt has 25 rows.\n\n| rows | value |\n|---|---|\n| 4 rows | low |\n",
}


def test_check_lists_every_number_nothing_accounts_for(tmp_path):
    root = course(tmp_path, BARE)
    result = build(root)
    assert result.returncode == 0, result.stderr
    # Names with versions and cited years are identifiers; a year in a sentence ("In 2018") is a number.
    assert "note: 5 number(s) in prose are neither measured, audited nor marked literal" in result.stdout
    manifest = json.loads((root / "site/lessonkit.json").read_text("utf-8"))
    found = sorted((path, number) for path, _, number, _ in manifest["unaccounted"])
    assert found == [("content/en/page.md", "2018"), ("content/en/page.md", "25"), ("content/en/page.md", "4"),
                     ("content/zh/page.md", "25"), ("content/zh/page.md", "4")]
    check = run_build("--check-only", "--out", root / "site", root=root)
    assert check.returncode == 1
    lines = BARE["zh"].splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "25 个头" in text)
    assert (f"content/zh/page.md:{line}: number '25' in prose is neither measured, audited nor marked literal: "
            "'它有 25 个头。'") in check.stderr


@pytest.mark.parametrize("text, numbers", [
    ("它有九十三个头。", ["九十三"]),
    ("训练了一千步，误差降到三点五。", ["一千", "三点五"]),
    ("百分之九十的头，二〇二三年。", ["九十", "二〇二三"]),
    ("It has ٣٤ heads and 𝟗𝟑 % of them; 10⁹ steps.", ["٣٤", "𝟗𝟑", "10⁹"]),
    ("Ｌ５ has ２５ heads.", ["２５"]),
    # Words written with numerals, ordinals and a lone numeral are not numbers a reader checks.
    ("一个头、统一、一点点、千万不要、万一、十分重要、第三章、两个头。", []),
    ("x² and d₂ are names.", []),
])
def test_a_number_in_another_script_is_a_number(text, numbers):
    from lessonkit.markdown.plugins.unaccounted import bare_numbers

    assert bare_numbers(text) == numbers


QUOTED = {lang: text + ("\n[它这样说]{.claim audit=cited ref=src2020 at=\"第 4 节\" quote=\"the mean is, in our words, zero\" "
                        "quote_at=\"Abstract\"}。\n" if lang == "zh" else
                        "\n[It says so]{.claim audit=cited ref=src2020 at=\"Section 4\" quote=\"the mean is, in our words, "
                        "zero\" quote_at=\"Abstract\"}.\n")
          for lang, text in AUDITED.items()}


def test_a_cited_statement_shows_its_sources_words_or_says_its_place_was_not_checked(tmp_path):
    root = course(tmp_path, QUOTED)
    result = build(root, "--check", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 cited" in result.stdout and "(1 resting on a source quote none of its text" in result.stdout
    # --check --strict names the one that quotes nothing, in each language, at its line: notes, not problems.
    notes = [line for line in result.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: content/{lang}/page.md:{line}: rests on src2020 but quotes none of its text: place "
                     f"not checked against it" for lang, line in (("zh", 8), ("en", 9))], result.stdout
    html = with_evidence(root / "site/en/page.html")
    unquoted, quoted = (html[html.index(f'id="audit-panel-{n}"'):] for n in (3, 6))
    unquoted, quoted = unquoted[:unquoted.index("</section>")], quoted[:quoted.index("</section>")]
    assert "Place not checked against the source" in unquoted and "audit-quote" not in unquoted
    assert '<p lang="en">the mean is, in our words, zero</p>' in quoted and "Quoted from: Abstract" in quoted
    assert "not checked" not in quoted
    assert "1 of the statements that rest on a source quote none of its text" in html
    zh = with_evidence(root / "site/zh/page.html")
    assert "其中 1 条依据文献的陈述没有引用原话" in zh and '<p lang="en">the mean is, in our words, zero</p>' in zh


@pytest.mark.parametrize("markup, message", [
    ('[x]{.claim audit=unverified quote="words"}', "quote= holds a source's own words: it needs the source, ref="),
    ('[x]{.claim audit=cited ref=src2020 at="§1" quote_at="§2"}', "quote_at= is where the quoted words stand"),
    ('[x]{.claim audit=cited ref=src2020 at="§1" quote="' + "w" * 301 + '"}', "quote= is 301 characters"),
])
def test_a_quote_without_its_source_or_too_long_is_a_one_line_error(tmp_path, markup, message):
    pages = {lang: text + f"\n{markup}\n" for lang, text in TINY_PAGES.items()}
    result = build(course(tmp_path, pages))
    assert result.returncode == 1 and result.stderr.count(message) == 2, result.stderr
    assert result.stderr.startswith("error: content/en/page.md:"), result.stderr


def test_a_statement_verified_by_a_criterion_that_cannot_fail_is_refused_at_its_line(tmp_path):
    """`abs(mean) < 0.6` fails once the mean moves past 0.6 (set just above it); `abs(mean) >= 0` fails on no
    value at all: it verifies nothing, in the build and in --check."""
    from conftest import TINY_EXPERIMENT

    root = course(tmp_path)
    assert build(root).returncode == 0
    experiment = root / "experiments" / "tiny.py"
    experiment.write_text(TINY_EXPERIMENT.replace('criterion="abs(mean) < 0.6"', 'criterion="abs(mean) >= 0"'), "utf-8")
    result = run_build("--no-search", "--seeds", "2", "--out", root / "site", "--check-only", root=root)
    assert result.returncode == 1
    assert "en/page.html: audit-1 is marked verified by claim tiny.mean, whose criterion cannot fail on what it " \
           "measures (abs(mean) >= 0)" in result.stderr, result.stderr
    result = build(root)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: content/en/page.md:9: audit=verified rests on claim tiny.mean, whose "
                               "criterion 'abs(mean) >= 0' no move of the measured values it reads can make fail")
    assert lines[-1] == "2 errors" and lines[1].startswith("error: content/zh/page.md:8: "), result.stderr


def test_the_footer_states_what_the_page_shows_counted_by_the_build(tmp_path):
    """No fixed sentence about what was measured: the footer counts this page's measured numbers (mean, spread and
    noise: n is a parameter), its experiments and their seeds, and its statements resting on a source."""
    import html as html_module

    from conftest import edit

    root = course(tmp_path, {lang: text.replace("{val}`tiny.mean`", "{val}`tiny.mean` {val}`tiny.mean:.2f`")
                             for lang, text in TINY_PAGES.items()})
    assert build(root).returncode == 0

    def footer(lang="en"):
        page = html_module.unescape((root / "site" / lang / "page.html").read_text("utf-8"))
        return page[page.index('<footer class="site-footer"'):page.index("</footer>")]

    assert ("Numbers on this page measured by experiments: 3, by 1 experiment, each over 2 seeds, of which 2 ran on "
            "the machine that built the site.") in footer()  # (mean shown twice is one number)
    assert "Experiments' parameters shown (set, not measured): 1." in footer()
    assert "Statements resting on a source" not in footer()
    assert "本页由实验测得的数值：3 个，来自 1 个实验" in footer("zh")
    for lang, words in (("en", "[A paper says so]{.claim audit=cited ref=src2020 at=\"§3\" quote=\"so\"} "
                                "and the parity {val}`tiny.odd`"),
                        ("zh", "[论文这样说]{.claim audit=cited ref=src2020 at=\"§3\"}，奇偶 {val}`tiny.odd`")):
        edit(root, f"content/{lang}/page.md", "## ", f"{words}\n\n## ")
    assert build(root).returncode == 0
    assert "measured by experiments: 4, by 1 experiment," in footer()
    assert "Statements resting on a source: 1, of which 1 quote its own words." in footer()
    assert "依据文献的陈述：1 条，其中 0 条引用了出处的原话。" in footer("zh")
