"""Bad input: one line naming the file and line, a non-zero exit, and the previous site untouched.

Every case breaks a small fixture course (one page in zh and en, the `tiny` experiment, a figure, a
glossary and a list of sources), never the real one."""


import pytest
from conftest import edit, make_course, run_build, snapshot, with_data_files, with_figure

ZH = "content/zh/page.md"
EN = "content/en/page.md"
EXPERIMENT = "experiments/tiny.py"
RECIPE = "figures/tiny.py"
FIGURE = "::: figure tiny.bars"
ALT = " Two bars: the mean and the spread."


@pytest.fixture
def built(tmp_path, prebuilt):
    course = prebuilt("bad-input", lambda root: with_data_files(with_figure(make_course(root))))(tmp_path / "course")
    out = course / "site"
    return course, out, snapshot(out)


def _malformed_front_matter(root):
    return ZH, edit(root, ZH, "title: 小实验", "title: - 小实验")


def _unknown_front_matter_key(root):
    return ZH, edit(root, ZH, "description:", "descripton:")


def _bad_chapter_number(root):
    return ZH, edit(root, ZH, "description: 一页。", "number: 3 b\ndescription: 一页。")


def _unknown_value_key(root):
    return ZH, edit(root, ZH, "{val}`tiny.mean`", "{val}`tiny.maen`")


def _bad_value_format(root):
    return ZH, edit(root, ZH, "{val}`tiny.mean`", "{val}`tiny.mean:e.x`")


def _failing_claim(root):
    return EXPERIMENT, edit(root, EXPERIMENT, 'criterion="abs(mean) < 0.6"', 'criterion="mean > 1"')


def _experiment_raises(root):
    line = edit(root, EXPERIMENT, "    rng = np.random.default_rng(seed)\n", "    raise RuntimeError('boom')\n")
    return EXPERIMENT, line


def _experiment_returns_nan(root):
    return EXPERIMENT, edit(root, EXPERIMENT, '"mean": float(x.mean()),', '"mean": float("nan"),')


def _experiment_syntax_error(root):
    return EXPERIMENT, edit(root, EXPERIMENT, "def run(seed, *, n):", "def run(seed, *, n:")


def _latex_unbalanced(root):
    return ZH, edit(root, ZH, r"$\bar{x}$", r"$\bar{x$")


def _latex_unknown_command(root):
    return ZH, edit(root, ZH, r"$\bar{x}$", r"$\foo{x}$")


def _not_utf8(root):
    path = root / ZH
    lines = path.read_bytes().split(b"\n")
    line = next(i for i, text in enumerate(lines) if b"{val}" in text)
    lines[line] = b"caf\xe9 " + lines[line]
    path.write_bytes(b"\n".join(lines))
    return ZH, line + 1


def _no_translation(root):
    (root / "content/zh/extra.md").write_text("---\ntitle: 附录\n---\n正文。\n", "utf-8")
    edit(root, "content/site.yaml", "pages: [page]", "pages: [page, extra]")
    return "content/en/extra.md", None


def _translation_anchor_differs(root):
    return EN, edit(root, EN, "{#mean}", "{#average}")


def _missing_figure(root):
    return ZH, edit(root, ZH, FIGURE, "::: figure tiny.nothing")


def _figure_without_alt(root):
    return ZH, edit(root, ZH, FIGURE + ALT, FIGURE)


def _jinja_syntax_error(root):
    return "templates/page.html", edit(root, "templates/page.html", "{% if toc %}", "{% if toc %}{% endfor %}")


def _jinja_undefined(root):
    return "templates/page.html", edit(root, "templates/page.html", "{{ page.meta.title }}{% endif %}</h1>",
                                       "{{ nope.title }}{% endif %}</h1>")


def _duplicate_heading_ids(root):
    return ZH, edit(root, ZH, FIGURE, "## 又一节 {#mean}\n\n" + FIGURE)


def _link_to_missing_page(root):
    return ZH, edit(root, ZH, "个数的均值", "个数的[均值](lesson-l2.md)")


def _path_escapes_content(root):
    return "content/site.yaml", edit(root, "content/site.yaml", "pages: [page]", "pages: [page, ../../etc/passwd]")


def _page_named_as_an_evidence_page(root):
    return "content/site.yaml", edit(root, "content/site.yaml", "pages: [page]", "pages: [page, page.evidence]")


def _link_escapes_content(root):
    return ZH, edit(root, ZH, "个数的均值", "个数的[均值](../../secret.md)")


def _empty_content_folder(root):
    for md in (root / "content/en").rglob("*.md"):
        md.unlink()
    return "content/en", None


def _unlisted_page(root):
    (root / "content/zh/extra.md").write_text("---\ntitle: x\n---\n")
    return "content/zh/extra.md", None


def _unknown_glossary_term(root):
    return ZH, edit(root, ZH, "，标准差", "，[低秩子空间]{.term}标准差")


def _figure_recipe_raises(root):
    first = "    fig, ax = plt.subplots(figsize=(3, 2))\n"
    return RECIPE, edit(root, RECIPE, first, first + "    1 / 0\n") + 1


def _claim_shows_unknown_value(root):
    # The claim's first line: the Claim(...) call that names the value.
    edit(root, EXPERIMENT, 'shows=("mean",)', 'shows=("maen",)')
    return EXPERIMENT, edit(root, EXPERIMENT, 'Claim(id="mean"', 'Claim(id="mean"')


def _unknown_language(root):
    return "content/site.yaml", edit(root, "content/site.yaml", "languages: [zh, en]", "languages: [zh, fr]")


def _unknown_role(root):
    return ZH, edit(root, ZH, "{val}`tiny.mean`", "{value}`tiny.mean`")


CASES = [
    (_malformed_front_matter, "malformed YAML"),
    (_unknown_front_matter_key, "unknown front-matter key 'descripton'"),
    (_unknown_value_key, "unknown value key 'tiny.maen' (did you mean 'tiny.mean'?)"),
    (_bad_value_format, "bad format 'e.x'"),
    (_failing_claim, "claim tiny.mean failed on seed 0, the seed the pages show: criterion failed: "
                     "mean > 1; measured tiny.mean ="),
    (_experiment_raises, "experiment tiny failed (seed 0): RuntimeError: boom"),
    (_experiment_returns_nan, "experiment tiny failed (seed 0): value 'mean' is not finite (nan)"),
    (_experiment_syntax_error, "experiment tiny failed: SyntaxError"),
    (_latex_unbalanced, "LaTeX has unbalanced braces"),
    (_latex_unknown_command, "unknown LaTeX command \\foo"),
    (_not_utf8, "not UTF-8 (byte 0xe9)"),
    (_no_translation, "missing translation"),
    (_translation_anchor_differs, "heading id 'average' where the zh page has 'mean'"),
    (_missing_figure, "unknown figure 'tiny.nothing'"),
    (_figure_without_alt, "needs alt text"),
    (_jinja_syntax_error, "template syntax error"),
    (_jinja_undefined, "template error: 'nope' is undefined"),
    (_duplicate_heading_ids, "duplicate heading id 'mean'"),
    (_link_to_missing_page, "link to a page that does not exist: 'lesson-l2.md'"),
    (_path_escapes_content, "is not a path inside content/"),
    (_page_named_as_an_evidence_page, "page 'page.evidence': a name ending in '.evidence' is that of a page's "
                                      "evidence page"),
    (_link_escapes_content, "leaves content/"),
    (_empty_content_folder, "content/en: no pages: write each page"),
    (_unlisted_page, "page is not listed in content/site.yaml"),
    (_unknown_glossary_term, "glossary term '低秩子空间' is not in content/glossary.yaml"),
    (_unknown_role, "unknown role {value}"),
    (_figure_recipe_raises, "figure 'tiny.bars' (zh) failed: ZeroDivisionError"),
    (_claim_shows_unknown_value, "experiment tiny failed (seed 0): claim 'mean': shows 'maen', "
                                 "which run() does not return"),
    (_bad_chapter_number, "number '3 b': a chapter's number, such as 3 or 3.2 or A"),
    (_unknown_language, "language 'fr' has no interface strings (templates/i18n/fr.yaml); interface strings "
                       "exist for en, zh: copy one to templates/i18n/fr.yaml and translate it"),
]


@pytest.mark.parametrize("breakage, message", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_bad_input_fails_in_one_line_and_keeps_the_site(built, breakage, message):
    course, out, before = built
    where, line = breakage(course)
    result = run_build("--out", out, root=course)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    notes = [line for line in lines if line.startswith("note: ")]  # the checks this error kept from being made
    lines = [line for line in lines if line not in notes]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert notes == (["note: 8 uses of experiment tiny's values and claims on the pages, not checked: it failed"]
                     if where == EXPERIMENT and "claim tiny" not in lines[0] else []), result.stderr
    location = where if line is None else f"{where}:{line}"
    assert lines[0].startswith(f"error: {location}"), (lines[0], location)
    assert message in lines[0], lines[0]
    assert snapshot(out) == before
    assert not list(out.parent.glob(".site.new-*")), "no half-written staging folder is left behind"


@pytest.mark.slow
@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_independent_mistakes_are_all_reported_in_one_pass_sorted_by_file_and_line(built, strict):
    """Six mistakes in three files: a value key, a link and a figure id in the zh page, LaTeX and a glossary
    term in the en page, a claim that fails. One build names each at its line, in file and line order, with a
    count; with --strict the en page's translation is also behind (its source was edited), and that comes
    last, after the mistakes it would otherwise hide."""
    course, out, before = built
    value = edit(course, ZH, "{val}`tiny.mean`", "{val}`tiny.maen`")
    figure = edit(course, ZH, FIGURE, "::: figure tiny.bras")
    link = edit(course, ZH, "The mean and the spread.", "The mean and [the spread](nope.md).")
    latex = edit(course, EN, r"$\bar{x}$", r"$\foo{x}$")
    term = edit(course, EN, "their spread", "their [spred]{.term}")
    edit(course, EXPERIMENT, 'criterion="abs(mean) < 0.6"', 'criterion="mean > 1"')
    result = run_build("--out", out, *(["--strict"] if strict else []), root=course)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    expected = [
        (f"{EN}:{latex}: ", r"unknown LaTeX command \foo"),
        (f"{EN}:{term}: ", "glossary term 'spred' is not in content/glossary.yaml (did you mean 'spread'?"),
        (f"{ZH}:{value}: ", "unknown value key 'tiny.maen' (did you mean 'tiny.mean'?)"),
        (f"{ZH}:{figure}: ", "unknown figure 'tiny.bras': figures/tiny.py has no function 'bras' (did you mean"),
        (f"{ZH}:{link}: ", "link to a page that does not exist: 'nope.md'"),
        (f"{EXPERIMENT}:", "claim tiny.mean failed on seed 0"),
    ] + ([(f"{EN}: ", "translation is behind")] if strict else [])
    assert len(lines) == len(expected) + 1, result.stderr
    for where, what in expected:  # each at its place, in file and line order (two on one line: either first)
        at = [i for i, line in enumerate(lines) if what in line]
        assert len(at) == 1 and lines[at[0]].startswith(f"error: {where}"), (where, what, result.stderr)
        assert at[0] in [i for i, (w, _) in enumerate(expected) if w == where], (where, what, result.stderr)
    assert lines[-1] == f"{len(expected)} errors"
    assert snapshot(out) == before


def test_mistakes_in_a_title_are_errors_of_its_page(built):
    """A value, a formula or a claim in a title is rendered into the page's <h1>: its mistakes fail the build,
    said of the title."""
    course, out, before = built
    edit(course, ZH, "title: 小实验", "title: 小实验 {val}`tiny.maen`")
    edit(course, EN, "title: A tiny experiment", "title: A tiny $\\foo{x}$ {claim}`tiny.nope`")
    result = run_build("--out", out, root=course)
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "3 errors", result.stderr
    assert sorted(lines[:-1]) == sorted([
        f"error: {EN}: title: unknown LaTeX command \\foo in $\\foo{{x}}$",
        f"error: {EN}: title: unknown claim 'tiny.nope' (did you mean 'tiny.spread'?)",
        f"error: {ZH}: title: unknown value key 'tiny.maen' (did you mean 'tiny.mean'?)"]), result.stderr
    assert snapshot(out) == before


def test_debug_shows_the_traceback(built):
    course, out, _ = built
    _unknown_value_key(course)
    result = run_build("--out", out, "--debug", root=course)
    assert result.returncode == 1 and "Traceback" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["crlf", "bom", "fullwidth"])
def test_odd_but_valid_input_builds(built, variant):
    course, out, before = built
    path = course / ZH
    text = path.read_text("utf-8")
    if variant == "crlf":
        path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    elif variant == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    else:
        path.write_text(text.replace("个数的均值", "个数（全角：，；）「引号」的均值"), "utf-8")
    result = run_build("--out", out, "--strict", root=course)
    # The Chinese source changed (except for line endings and BOM, which are not content), so the
    # translation is behind: --strict reports exactly that, and a plain build warns and succeeds.
    if variant == "fullwidth":
        assert result.returncode == 1 and "translation is behind" in result.stderr
        result = run_build("--out", out, root=course)
    assert result.returncode == 0, result.stderr
    html = (out / "zh/page.html").read_text("utf-8")
    assert "\r" not in html and "\ufeff" not in html

    # The same files (the search index names its files by content, so it is left out).
    def pages(files):
        return {name for name in files if not name.startswith("pagefind/")}

    assert pages(snapshot(out)) == pages(before)
    if variant == "fullwidth":
        assert "「引号」" in html


@pytest.mark.parametrize("target", ["course", "content", "stranger", "theme"])
def test_out_never_replaces_the_course_or_a_folder_that_is_not_a_site(built, target):
    from conftest import ROOT

    course, _, _ = built
    before = snapshot(course / "content")
    out = {"course": course, "content": course / "content", "stranger": course / "notes",
           "theme": ROOT / "templates" / "out"}[target]  # (the default theme is every course's input)
    if target == "stranger":
        out.mkdir()
        (out / "todo.txt").write_text("mine")
    result = run_build("--out", out, root=course)
    assert result.returncode == 1 and result.stderr.startswith(f"error: --out {out}:")
    assert snapshot(course / "content") == before
    assert target != "stranger" or (out / "todo.txt").read_text() == "mine"


@pytest.mark.slow
def test_a_print_in_an_experiment_does_not_break_the_build(built):
    course, out, _ = built
    edit(course, EXPERIMENT, "    rng = np.random.default_rng(seed)\n",
         "    rng = np.random.default_rng(seed)\n    print('debugging', seed)\n")
    result = run_build("--out", out, root=course)
    assert result.returncode == 0, result.stderr


def test_the_fixture_course_is_what_the_cases_break(built):
    """Each case above edits text of the fixture: it is there, once (edit() asserts it is there)."""
    course, _, _ = built
    zh = (course / ZH).read_text("utf-8")
    for text in ("{val}`tiny.mean`", r"$\bar{x}$", FIGURE + ALT, "个数的均值", "，标准差"):
        assert zh.count(text) == 1, text


@pytest.mark.parametrize("written, hint", [
    ("[标准]{.term}", "(did you mean '标准差'? or keep the text and name the entry: [标准]{.term key=spread})"),
    ("[均 值]{.term}", "(did you mean '均值'? or keep the text and name the entry: [均 值]{.term key=mean})"),
    ("[均值]{.term key=meen}", "(did you mean key='mean'?)"),
])
def test_a_glossary_miss_suggests_the_close_entry_and_key(tmp_path, written, hint):
    from conftest import build_here

    from lessonkit.errors import BuildError

    root = with_data_files(make_course(tmp_path / "c"))
    line = edit(root, ZH, "，标准差", f"，{written}标准差")
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert str(caught.value).endswith(f"is not in content/glossary.yaml {hint}")
    assert (caught.value.path.as_posix(), caught.value.line) == (ZH, line)


def test_a_figure_typo_is_reported_at_the_figure_before_any_ref_to_it(tmp_path):
    """The {ref} comes first on the page and names the id the author meant: the error is about the figure."""
    from conftest import build_here

    from lessonkit.errors import BuildError

    root = with_figure(make_course(tmp_path / "c"))
    edit(root, ZH, "## 均值 {#mean}\n", "## 均值 {#mean}\n\n见{ref}`fig:tiny.bars`。\n")
    line = edit(root, ZH, "::: figure tiny.bars", "::: figure tiny.barz")
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert str(caught.value) == (f"{ZH}:{line}: unknown figure 'tiny.barz': figures/tiny.py has no function "
                                 "'barz' (did you mean tiny.bars?)")
    edit(root, ZH, "::: figure tiny.barz", "::: figure tinny.bars")
    with pytest.raises(BuildError, match=r"there is no figures/tinny.py \(did you mean tiny.bars\?\)"):
        build_here(root)


def test_a_page_at_an_experiments_source_address_is_refused(tmp_path):
    from conftest import build_here

    from lessonkit.errors import BuildError

    root = make_course(tmp_path / "c")
    for lang in ("zh", "en"):
        (root / "content" / lang / "experiments").mkdir()
        (root / "content" / lang / "page.md").rename(root / "content" / lang / "experiments" / "tiny.md")
    edit(root, "content/site.yaml", "pages: [page]", "pages: [experiments/tiny]")
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert "this page's address zh/experiments/tiny.html is that of experiment tiny's source page" in str(caught.value)
    assert caught.value.path.as_posix() == "content/zh/experiments/tiny.md"


@pytest.mark.slow
def test_a_figure_recipe_bound_by_assignment_or_import_is_found(tmp_path):
    from conftest import TINY_FIGURE, build_here

    recipe = TINY_FIGURE.replace("def bars(values, lang):", "def _bars(values, lang):") + "\n\nbars = _bars\n"
    root = with_figure(make_course(tmp_path / "c"), recipe)
    build_here(root)
    assert (root / "site" / "figures" / "tiny.bars.en.svg").is_file()


CAPTIONED = "\n::: figure tiny.bars Two bars: the mean and the spread.\nThe mean is {val}`tiny.mean`; n is {val}`tiny.n`.\n:::\n"


def test_a_caption_may_quote_only_values_its_figure_drew(tmp_path):
    """The recipe reads its values through an accessor that records them: a caption quoting a value the figure
    did not read is the caption's line, in each language; drawing it makes the page build, from the cache too.
    A recipe reads a value over the seeds for a spread."""
    from conftest import TINY_FIGURE, append_to_page, build_here

    from lessonkit.errors import BuildError

    root = make_course(tmp_path / "c")
    (root / "figures" / "tiny.py").write_text(TINY_FIGURE, "utf-8")
    append_to_page(root, "page", {"zh": CAPTIONED, "en": CAPTIONED})
    line = (root / ZH).read_text("utf-8").splitlines().index(CAPTIONED.splitlines()[2]) + 1
    with pytest.raises(BuildError) as caught:
        build_here(root)
    lines = str(caught.value).splitlines()
    assert f"{ZH}:{line}: the caption of figure 'tiny.bars' quotes tiny.n, which its recipe (figures/tiny.py) " \
           "does not read" in lines[1], lines
    assert lines[0].startswith(f"{EN}:") and "quotes tiny.n" in lines[0] and "tiny.mean" not in str(caught.value)
    drawn = TINY_FIGURE.replace('    ax.set_xlabel(LABELS[lang])',
                                '    seeds = values.over_seeds("tiny.mean")\n'
                                '    assert len(seeds) == 2 and seeds[0] == values["tiny.mean"], seeds\n'
                                '    ax.set_title(f"n = {values[\'tiny.n\']}")\n    ax.set_xlabel(LABELS[lang])')
    (root / "figures" / "tiny.py").write_text(drawn, "utf-8")
    build_here(root)
    (read,) = (root / ".cache" / "figures").glob("tiny.bars.en.*.json")
    from lessonkit.io import read_cache

    assert read_cache(read)["read"] == ["tiny.mean", "tiny.n", "tiny.spread"]
    build_here(root, force=False)  # (the figure from the cache, with what it read)
    (root / "figures" / "tiny.py").write_text(drawn.replace('values.over_seeds("tiny.mean")',
                                                            'values.over_seeds("tiny.claims.held")'), "utf-8")
    with pytest.raises(BuildError, match="'tiny.claims.held': counted by the build, not measured on each seed"):
        build_here(root)


SIX_MORE_ZH = "---\ntitle: 更多\n---\n\n## 更多 {#more}\n\n第一段，见[上文](#nowhere)。\n\n第二段，均值是 {val}`tiny.mean`。\n"
SIX_MORE_EN = ("---\ntitle: More\ntranslated_from: {digest:zh/more.md}\n---\n\n## More {#more}\n\n"
               "The first paragraph [@vaswani2017], and [@nokey].\n")
SIX_BIB = ("@article{vaswani2017,\n  title = {Attention Is All You Need},\n  author = {Vaswani, Ashish},\n"
           "  year = {2017},\n  journal = {NeurIPS}\n}\n\n@article{broken,\n  title = {No closing brace,\n"
           "  year = 2020\n}\n")


@pytest.mark.slow
def test_six_mistakes_of_six_kinds_are_all_reported_by_one_build(tmp_path):
    """A front-matter typo, a BibTeX syntax error, an experiment that raises, a link to a missing anchor, a
    dropped translation paragraph and an unknown citation key: one --strict build names all six, in file and
    line order (the translation's alignment last), with "6 errors". The bibliography's error does not make its
    good keys unknown, and the failed experiment's values are not called unknown: a note counts them."""
    from conftest import TWO_PAGES, course_from

    course = course_from(tmp_path / "c", f"""{TWO_PAGES}-- content/zh/more.md --
{SIX_MORE_ZH}-- content/en/more.md --
{SIX_MORE_EN}-- content/references.bib --
{SIX_BIB}""")
    typo = edit(course, EN, "description: One page.", "descripton: One page.")
    raises = edit(course, EXPERIMENT, "    rng = np.random.default_rng(seed)\n", "    raise RuntimeError('boom')\n")
    result = run_build("--strict", root=course)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: content/en/more.md:8: unknown reference 'nokey': add it to content/references.bib (or "
        "content/references.yaml)",
        f"error: {EN}:{typo}: unknown front-matter key 'descripton' (known: description, number, title, translated_from)",
        "error: content/references.bib:12: syntax error: premature end of file (in the entry 'broken' that begins "
        "on line 8)",
        "error: content/zh/more.md:7: link '#nowhere': this page has no anchor #nowhere",
        f"error: {EXPERIMENT}:{raises}: experiment tiny failed (seed 0): RuntimeError: boom",
        "error: content/en/more.md:8: section 'more' has 1 paragraph where content/zh/more.md:9 has 2",
        "note: 5 uses of experiment tiny's values and claims on the pages, not checked: it failed",
        "6 errors"], result.stderr
    assert not (course / "site").exists()


@pytest.mark.parametrize("broken, note", [
    ("content/glossary.yaml", "glossary terms on the pages, not checked: the glossary has an error"),
    ("content/references.yaml", "citations on the pages, not checked: the sources have an error")])
def test_a_data_file_that_cannot_be_read_hides_no_page_error_and_makes_none_up(built, broken, note):
    """A glossary or a list of sources that is not YAML is its own error; the pages are still parsed (a value
    key's typo is still found), and their terms or citations, which cannot be checked, are counted in a note,
    not reported as unknown."""
    course, out, before = built
    edit(course, ZH, "标准差 {val}", "[标准差]{.term} [@gauss1809] {val}")
    typo = edit(course, ZH, "{val}`tiny.mean`", "{val}`tiny.maen`")
    (course / broken).write_text("- [unclosed\n", "utf-8")
    result = run_build("--out", out, root=course)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: {broken}:"), result.stderr
    assert lines[1].startswith(f"error: {ZH}:{typo}: unknown value key 'tiny.maen'"), result.stderr
    assert lines[2:] == [f"note: 1 {note}", "2 errors"], result.stderr
    assert snapshot(out) == before
