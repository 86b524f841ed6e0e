"""Each markdown-it plugin: Markdown in, HTML out."""

import re

import pytest
from rendering import PARTS, STRINGS, error_of, render

# math ------------------------------------------------------------------------

def test_inline_and_display_math_become_mathml():
    html, ctx = render("Let $x^2$ be.\n\n$$\\frac{a}{b}$$\n")
    assert '<math alttext="x^2">' in html
    assert '<div class="math-display" tabindex="0"><math alttext="\\frac{a}{b}" display="block"' in html and "<mfrac>" in html
    assert html.count("<math ") == 2


def test_display_math_inside_a_paragraph_stays_phrasing_content():
    html, _ = render("Text $$a+b$$ more.")
    assert "<p>Text <span class=\"math-display\" tabindex=\"0\"><math" in html
    assert "<div" not in html


@pytest.mark.parametrize("src, message", [
    ("x\n\nbad $\\frac{a}{b$ here", "unbalanced braces"),
    ("x\n\nbad $\\foo{x}$ here", "unknown LaTeX command \\foo"),
    ("x\n\nbad $x^$ here", "LaTeX the converter rejects"),
    # Temml's message underlines each UTF-16 unit, cutting this character in two halves that are no text
    ("x\n\nbad $ \U000100000000](other.md#x) $ here", "LaTeX the converter cannot write back (U+10000"),
])
def test_bad_latex_names_file_and_line(src, message):
    err = error_of(src)
    assert err.startswith("content/en/a.md:7: ") and message in err


# values ------------------------------------------------------------------------

def test_value_carries_key_raw_value_and_a_mark_to_its_claim():
    html, ctx = render("ratio {val}`exp.ratio` and rank {val}`exp.rank`")
    assert 'data-key="exp.ratio" data-value="1.08e-07"' in html
    assert '<span class="num">1.1 × 10⁻⁷</span>' in html
    assert 'href="#prov-claim-exp-vanish"' in html
    assert 'data-key="exp.rank" data-value="4"' in html and 'href="#prov-experiment-exp"' in html
    assert ctx.values == ["exp.ratio", "exp.rank"] and ctx.claims == ["exp.vanish"]


def test_value_format_and_list_in_chinese():
    html, _ = render("{val}`exp.d:.1f` 与 {val}`exp.ranks`", lang="zh")
    assert '<a class="num param" tabindex="-1" href="#prov-experiment-exp" aria-label="48.0，由实验测得 ' \
           'exp.d">48.0</a>' in html and 'data-format=".1f"' in html
    assert '>4、4</a>' in html


def test_unknown_value_key_names_file_and_line_and_suggests():
    err = error_of("line one\nline two {val}`exp.ratoi`")
    assert err.startswith("content/en/a.md:6: unknown value key 'exp.ratoi'")
    assert "did you mean 'exp.ratio'" in err


def test_claim_role_and_unknown_role():
    html, _ = render("{claim}`exp.vanish`")
    assert 'class="claim-status"' in html and "passed" in html
    assert "unknown role {foo}" in error_of("{foo}`x`")


# headings ----------------------------------------------------------------------

def test_explicit_and_positional_heading_ids_and_toc():
    html, ctx = render("## One {#first}\n\n### Sub\n\n## Two\n")
    assert '<h2 id="first">One<a class="anchor" href="#first"' in html
    assert '<h3 id="s-1-1">' in html and '<h2 id="s-2">' in html
    assert [h["id"] for h in ctx.toc] == ["first", "s-1-1", "s-2"]
    assert ctx.toc[0]["text"] == "One"


def test_duplicate_heading_id_is_an_error_with_line():
    assert error_of("## A {#x}\n\n## B {#x}\n").startswith("content/en/a.md:7: duplicate heading id 'x'")


@pytest.mark.parametrize("hid", ["verification-evidence", "claims-audit", "audit-panel-1", "prov-x"])
def test_an_id_the_evidence_page_holds_is_not_an_authors(hid):
    """A link to one leads to the evidence page: an author's heading of that id would take its links."""
    assert f"id {hid!r} is reserved for the page's own elements" in error_of(f"## A {{#{hid}}}\n")


# blocks ------------------------------------------------------------------------

def test_exercise_with_collapsed_hint():
    html, _ = render(":::: exercise\nProve it.\n\n::: hint\nUse columns.\n:::\n::::\n", lang="zh")
    assert '<section class="exercise" id="exercise-1"' in html and "练习 1" in html
    assert '<details class="hint"><summary>提示</summary>' in html and "<p>Use columns.</p>" in html
    assert "<details open" not in html


def test_callout_with_title_and_epigraph_attribution():
    html, _ = render("::: why Why split\nBecause.\n:::\n\n::: epigraph\n“Whole.”\n— Aristotle\n:::\n")
    assert '<aside class="callout callout-why"><p class="block-label">Why: Why split</p>' in html
    assert '<blockquote class="epigraph">' in html and '<br><cite class="attribution">— Aristotle</cite>' in html


def test_figure_block_needs_alt_and_gets_size():
    html, ctx = render("::: figure exp.plot A curve going up.\nCaption *here*.\n:::\n")
    assert ctx.figures == [("exp.plot", 5)]
    assert '<a href="../figures/exp.plot.en.svg"><img src="../figures/exp.plot.en.svg" alt="A curve going up." width="600" height="300"' in html
    assert '<figcaption>\n<p><span class="caption-label">Figure 1</span>: Caption <em>here</em>.</p>' in html
    assert "needs alt text" in error_of("::: figure exp.plot\ncap\n:::\n")


def test_verification_summary_slot():
    html, _ = render("::: verification-summary\nAll pass.\n:::\n")
    assert '<div class="verification-intro">\n<p>All pass.</p>\n</div>\n<!--lessonkit:verification-summary-->' in html


# spans -------------------------------------------------------------------------

GLOSSARY = [{"id": "mha", "zh": "多头注意力", "en": "multi-head attention"}]
REFS = {"michel2019": {"authors": "Michel, Levy, Neubig", "year": 2019, "title": "Are Sixteen Heads Really Better than One?"}}


def test_glossary_term_shows_its_counterpart():
    html, ctx = render("Use [多头注意力]{.term} here.", lang="zh", glossary=GLOSSARY)
    assert 'class="term" tabindex="0" data-term="mha" aria-describedby="term-tip-1" lang="zh-CN"' in html
    assert ('<span class="term-tip" role="tooltip" id="term-tip-1" data-pagefind-ignore><span lang="en">multi-head attention</span>'
            '</span></span>') in html
    html, _ = render("Use [attention]{.term key=mha}.", glossary=GLOSSARY)
    assert 'lang="zh-CN">多头注意力</span>' in html
    assert "not in content/glossary.yaml" in error_of("[nope]{.term}", glossary=GLOSSARY)


def test_audited_claims_all_three_statuses():
    src = ('[A]{.claim audit=verified key="exp.vanish"} [B]{.claim audit=cited ref=michel2019 at="Table 1"} '
           '[C]{.claim audit=unverified why="no source"}')
    html, ctx = render(src, references=REFS)
    assert [a["status"] for a in ctx.audits] == ["verified", "cited", "unverified"]
    assert 'data-audit="verified"' in html and 'data-audit="cited"' in html and 'data-audit="unverified"' in html
    assert ctx.audits[2]["why"] == "no source" and ctx.audits[1]["ref"]["year"] == 2019
    assert "audit must be one of" in error_of("[x]{.claim audit=maybe}")
    assert "unknown reference" in error_of('[x]{.claim audit=cited ref=nobody at="p. 1"}')
    assert "unknown claim" in error_of('[x]{.claim audit=verified key="exp.nothing"}')
    assert "malformed span attributes" in error_of("[x]{.claim audit=verified key=exp.vanish}")


def test_an_audit_entry_names_its_statement_with_math_and_values_but_nothing_interactive():
    src = ('[$x^2$ falls to {val}`exp.ratio` in `f` with **care**, [see](#top) '
           '[here]{.term key=mha}]{.claim audit=unverified why="w"}')
    _, ctx = render(src, glossary=GLOSSARY)
    label = ctx.audits[0]["label"]
    assert label.startswith('<math alttext="x^2">') and "</math> falls to 1.1 × 10⁻⁷ in <code>f</code>" in label
    assert "<strong>care</strong>" in label and "see" in label and "here" in label
    assert not re.search(r"<(a|button|span)\b|\bid=", label), label  # it sits inside a link; ids would repeat
    assert ctx.audits[0]["name"] == ""  # its words name the link
    _, ctx = render('[$x^2 \\le 1$]{.claim audit=unverified}')
    assert ctx.audits[0]["name"] == "x^2 \\le 1"  # a link's name leaves MathML out: the formula's LaTeX names it


# links -------------------------------------------------------------------------

def test_md_links_become_html_and_are_checked():
    html, _ = render("[b](dir/b.md#sec) [out](https://example.org) [here](#top)")
    assert 'href="dir/b.html#sec"' in html
    assert 'href="https://example.org" class="external" rel="noopener external"' in html
    assert "does not exist" in error_of("x\n[c](c.md)")
    assert "leaves content/" in error_of("[c](../../etc/passwd.md)")


def test_tables_scroll_in_their_own_box():
    html, _ = render("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert html.startswith('<div class="table-wrap" tabindex="0"><table>') and "</table>\n</div>" in html


def test_code_is_highlighted_at_build_time():
    html, _ = render("```python\nself.num_layers = 8\n```\n")
    assert '<pre class="code" tabindex="0"><code class="language-python">' in html and '<span class="mi">8</span>' in html


def test_chinese_closing_punctuation_stays_with_the_math_or_number_before_it():
    html, _ = render("秩为 $d_k$。数值是 {val}`exp.rank`，对吗", lang="zh")
    assert re.search(r'<span class="nobr"><math [^>]*>.*?</math>。</span>', html)
    assert re.search(r'<span class="nobr"><span class="value" data-key="exp.rank".*?</span>，</span>对吗', html)
    plain, _ = render("rank $d_k$ here")
    assert "nobr" not in plain


# numbered figures, tables and equations, and {ref} ----------------------------------------------

NUMBERED = """See {ref}`fig:exp.b` and {ref}`eq:sm` and {ref}`table:costs`.

::: figure exp.a First.
One.
:::

::: figure exp.b Second.
Two.
:::

$$ \\mathrm{softmax}(z)_i = e^{z_i} $$ (sm)

::: table costs What grows with width
| h | cost |
|---|---|
| 1 | low |
:::
"""


def test_figures_tables_and_equations_are_numbered_and_named_in_each_language():
    from lessonkit.markdown.plugins import fill_refs

    for lang, fig, eq, table in (("en", "Figure 2", "Equation (1)", "Table 1"), ("zh", "图 2", "式 (1)", "表 1")):
        html, collected = render(NUMBERED, lang=lang)
        assert collected.labels == {"fig:exp.a": [1, "fig-exp-a"], "fig:exp.b": [2, "fig-exp-b"],
                                    "eq:sm": [1, "eq-sm"], "table:costs": [1, "table-costs"]}
        assert collected.refs == [(f"{lang}/a.html", "fig:exp.b", 5), (f"{lang}/a.html", "eq:sm", 5),
                                  (f"{lang}/a.html", "table:costs", 5)]
        filled = fill_refs(html, f"{lang}/a.html", {f"{lang}/a.html": collected.labels}, STRINGS[lang], PARTS)
        assert f'<a class="xref" href="#fig-exp-b">{fig}</a>' in filled
        assert f'<a class="xref" href="#eq-sm">{eq}</a>' in filled and f'<a class="xref" href="#table-costs">{table}</a>' in filled
        assert '<div class="math-display numbered" id="eq-sm" tabindex="0"><math' in html
        assert '<span class="eq-number">(1)</span></div>' in html
        assert f'<figure class="table-figure" id="table-costs"><figcaption><span class="caption-label">{table}' in html


def test_a_reference_to_another_page_links_there():
    from lessonkit.markdown.plugins import fill_refs

    html, collected = render("As {ref}`dir/b.md#fig:exp.a` shows.")
    assert collected.refs == [("en/dir/b.html", "fig:exp.a", 5)]
    filled = fill_refs(html, "en/a.html", {"en/dir/b.html": {"fig:exp.a": [3, "fig-exp-a"]}}, STRINGS["en"], PARTS)
    assert '<a class="xref" href="dir/b.html#fig-exp-a">Figure 3</a>' in filled
    assert "name a figure, table or equation" in error_of("{ref}`lemma:x`")
    assert "is not a page of the course" in error_of("{ref}`nowhere.md#fig:x`")
    assert "used twice on this page" in error_of("$$ x $$ (a)\n\n$$ y $$ (a)\n")


def test_a_value_can_be_an_element_of_a_list():
    html, collected = render("first {val}`exp.ranks[0]`, last {val}`exp.ranks[-1]`")
    assert 'data-key="exp.ranks[0]" data-value="4"' in html and 'data-key="exp.ranks[-1]"' in html
    assert "has 2 elements: [5] is out of range" in error_of("{val}`exp.ranks[5]`")
    assert "is a single number" in error_of("{val}`exp.rank[0]`")


def test_marks_are_quiet_a_value_is_marked_once_per_paragraph():
    html, _ = render("{val}`exp.ratio` and again {val}`exp.ratio`; {val}`exp.d`.\n\nAgain {val}`exp.ratio`.")
    assert html.count('class="mark"') == 2 and html.count('data-key="exp.ratio"') == 3
    # A parameter is itself the control that opens its provenance, without a badge.
    assert ('<a class="num param" tabindex="-1" href="#prov-experiment-exp" '
            'aria-label="48, Measured by exp.d">48</a>') in html


@pytest.mark.parametrize("src, label", [
    ("x\n\nAs @fig-exp.a shows.", "fig:exp.a"),
    ("x\n\nAs [@tbl-costs] shows.", "table:costs"),
    ("x\n\nSee @eq-softmax.", "eq:softmax"),
    ("x\n\nSee @sec-intro.", "sec:intro"),
])
def test_quartos_cross_references_are_cross_references(src, label):
    """An author from Quarto writes @fig-x: a cross-reference to the page (this one, else the one page of the
    course) that has it, filled in with its number once every page is parsed; never printed as text (nor taken
    for an unknown citation key)."""
    html, ctx = render(src)
    assert f"\x00ref:*#{label}\x00" in html and "@" not in html, html
    assert ctx.refs == [("*", label, 7)]


def test_a_cross_reference_in_a_links_text_stays_as_written():
    """A link in a link is no HTML: in a link's text, and in an address shown as its link, @fig-x is text."""
    html, ctx = render("x\n\n[see @fig-exp.a](https://example.org) and <https://x.org/@fig-exp.a>.")
    assert "see @fig-exp.a</a>" in html and "x.org/@fig-exp.a</a>" in html and "\x00ref" not in html, html
    assert ctx.refs == []


def test_an_address_or_a_handle_is_not_a_cross_reference():
    html, _ = render("Write to me@fig-lab.org or @figaro.")
    assert "me@fig-lab.org" in html and "@figaro" in html
