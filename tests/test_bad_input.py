"""Bad input: one line naming the file and line, a non-zero exit, and the previous site untouched."""

import re
from pathlib import Path

import pytest
from conftest import run_build

ZH = "content/zh/lesson-l5.md"
EN = "content/en/lesson-l5.md"


def edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> int:
    """Replace text in a course file; return the 1-based line where the first replacement starts."""
    path = root / rel
    text = path.read_text("utf-8")
    assert old in text, (rel, old)
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, count), "utf-8")
    return line


def snapshot(site: Path) -> dict:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture
def built(course):
    out = course / "site"
    result = run_build("--out", out, root=course)
    assert result.returncode == 0, result.stderr
    return course, out, snapshot(out)


def _malformed_front_matter(root):
    return ZH, edit(root, ZH, "title: L5", "title: - L5")


def _unknown_front_matter_key(root):
    return ZH, edit(root, ZH, "description:", "descripton:")


def _unknown_value_key(root):
    return ZH, edit(root, ZH, "{val}`multires.p2.ratio`", "{val}`multires.p2.ratoi`")


def _bad_value_format(root):
    return ZH, edit(root, ZH, "{val}`multires.p2.ratio`", "{val}`multires.p2.ratio:e.x`")


def _failing_claim(root):
    edit(root, "experiments/multires.py", 'criterion="1e-8 < p2.ratio < 1e-6"', 'criterion="p2.ratio > 1"')
    return "experiments/multires.py", None


def _experiment_raises(root):
    line = edit(root, "experiments/multires.py", "    rng = np.random.default_rng(seed)\n",
                "    raise RuntimeError('boom')\n")
    return "experiments/multires.py", line


def _experiment_returns_nan(root):
    edit(root, "experiments/multires.py", '"p2.ratio": plain_norms[0] / res_norms[0],', '"p2.ratio": float("nan"),')
    return "experiments/multires.py", None


def _experiment_syntax_error(root):
    line = edit(root, "experiments/multires.py", "def layer_norm(x, eps=1e-5):", "def layer_norm(x, eps=1e-5:")
    return "experiments/multires.py", line


def _latex_unbalanced(root):
    return ZH, edit(root, ZH, r"$M = W^Q W^{K\top}$", r"$M = W^Q W^{K\top$")


def _latex_unknown_command(root):
    return ZH, edit(root, ZH, r"$M = W^Q W^{K\top}$", r"$M = W^Q \foo{W}$")


def _not_utf8(root):
    path = root / ZH
    lines = path.read_bytes().split(b"\n")
    lines[9] = b"caf\xe9 " + lines[9]
    path.write_bytes(b"\n".join(lines))
    return ZH, 10


def _no_translation(root):
    (root / "content/zh/extra.md").write_text("---\ntitle: 附录\n---\n正文。\n", "utf-8")
    edit(root, "content/site.yaml", "  - lesson-l5", "  - lesson-l5\n  - extra")
    return "content/en/extra.md", None


def _translation_anchor_differs(root):
    return EN, edit(root, EN, "{#stream-growth}", "{#stream}")


def _missing_figure(root):
    return ZH, edit(root, ZH, "::: figure multires.p3_stream", "::: figure multires.p4_nothing")


def _figure_without_alt(root):
    text = (root / ZH).read_text("utf-8")
    alt = re.search(r"::: figure multires.p3_stream (.*)\n", text).group(1)
    return ZH, edit(root, ZH, f"::: figure multires.p3_stream {alt}", "::: figure multires.p3_stream")


def _jinja_syntax_error(root):
    return "templates/page.html", edit(root, "templates/page.html", "{% if toc %}", "{% if toc %}{% endfor %}")


def _jinja_undefined(root):
    return "templates/page.html", edit(root, "templates/page.html", "{{ page.meta.title }}</h1>", "{{ nope.title }}</h1>")


def _duplicate_heading_ids(root):
    return ZH, edit(root, ZH, "{#by-design}", "{#waste}")


def _link_to_missing_page(root):
    return ZH, edit(root, ZH, "前置：L2（矩阵的两种读法）", "前置：[L2](lesson-l2.md)（矩阵的两种读法）")


def _path_escapes_content(root):
    (root / "content/site.yaml").write_text(
        (root / "content/site.yaml").read_text().replace("  - lesson-l5", "  - lesson-l5\n  - ../../etc/passwd"))
    return "content/site.yaml", None


def _link_escapes_content(root):
    return ZH, edit(root, ZH, "前置：L2（矩阵的两种读法）", "前置：[L2](../../secret.md)")


def _empty_content_folder(root):
    for md in (root / "content/en").rglob("*.md"):
        md.unlink()
    return "content/en", None


def _unlisted_page(root):
    (root / "content/zh/extra.md").write_text("---\ntitle: x\n---\n")
    return "content/zh/extra.md", None


def _unknown_glossary_term(root):
    return ZH, edit(root, ZH, "每个头用自己的低秩子空间提问", "每个头用自己的[低秩子空间]{.term}提问")


def _figure_recipe_raises(root):
    line = edit(root, "figures/multires.py", '    res = values["multires.p2.grad_norms_residual"]\n',
                '    res = values["multires.p2.grad_norms_residual"]\n    1 / 0\n') + 1
    return "figures/multires.py", line


def _claim_shows_unknown_value(root):
    edit(root, "experiments/multires.py", 'shows=("p2.ratio",),', 'shows=("p2.ratoi",),')
    return "experiments/multires.py", None


def _unknown_language(root):
    edit(root, "content/site.yaml", "languages: [zh, en]", "languages: [zh, fr]")
    return "content/site.yaml", None


def _unknown_role(root):
    return ZH, edit(root, ZH, "{val}`multires.p2.ratio`", "{value}`multires.p2.ratio`")


CASES = [
    (_malformed_front_matter, "malformed YAML"),
    (_unknown_front_matter_key, "unknown front-matter key 'descripton'"),
    (_unknown_value_key, "unknown value key 'multires.p2.ratoi' (did you mean 'multires.p2.ratio'?)"),
    (_bad_value_format, "bad format 'e.x'"),
    (_failing_claim, "claim multires.p2.vanishing failed on seed 0, the seed the pages show: criterion failed: "
                     "p2.ratio > 1; measured multires.p2.ratio ="),
    (_experiment_raises, "experiment multires failed (seed 0): RuntimeError: boom"),
    (_experiment_returns_nan, "experiment multires failed (seed 0): ValueError: value 'p2.ratio' is not finite (nan)"),
    (_experiment_syntax_error, "experiment multires failed: SyntaxError"),
    (_latex_unbalanced, "LaTeX has unbalanced braces"),
    (_latex_unknown_command, "unknown LaTeX command \\foo"),
    (_not_utf8, "not UTF-8 (byte 0xe9)"),
    (_no_translation, "missing translation"),
    (_translation_anchor_differs, "heading id 'stream' where the zh page has 'stream-growth'"),
    (_missing_figure, "unknown figure 'multires.p4_nothing'"),
    (_figure_without_alt, "needs alt text"),
    (_jinja_syntax_error, "template syntax error"),
    (_jinja_undefined, "template error: 'nope' is undefined"),
    (_duplicate_heading_ids, "duplicate heading id 'waste'"),
    (_link_to_missing_page, "link to a page that does not exist: 'lesson-l2.md'"),
    (_path_escapes_content, "is not a path inside content/"),
    (_link_escapes_content, "leaves content/"),
    (_empty_content_folder, "content/en has no pages"),
    (_unlisted_page, "page is not listed in content/site.yaml"),
    (_unknown_glossary_term, "glossary term '低秩子空间' is not in content/glossary.yaml"),
    (_unknown_role, "unknown role {value}"),
    (_figure_recipe_raises, "figure 'multires.p2_gradients' (zh) failed: ZeroDivisionError"),
    (_claim_shows_unknown_value, "experiment multires failed (seed 0): claim 'p2.vanishing': shows 'p2.ratoi', "
                                "which run() does not return"),
    (_unknown_language, "languages must be two of zh, en"),
]


@pytest.mark.parametrize("breakage, message", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_bad_input_fails_in_one_line_and_keeps_the_site(built, breakage, message):
    course, out, before = built
    where, line = breakage(course)
    result = run_build("--out", out, root=course)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    location = where if line is None else f"{where}:{line}"
    assert lines[0].startswith(f"error: {location}"), (lines[0], location)
    assert message in lines[0]
    assert snapshot(out) == before
    assert not list(out.parent.glob(".site.new-*")), "no half-written staging folder is left behind"


def test_debug_shows_the_traceback(built):
    course, out, _ = built
    _unknown_value_key(course)
    result = run_build("--out", out, "--debug", root=course)
    assert result.returncode == 1 and "Traceback" in result.stderr


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
        path.write_text(text.replace("一切正常。", "一切正常！（全角：，；）「引号」"), "utf-8")
    result = run_build("--out", out, "--strict", root=course)
    # The Chinese source changed (except for line endings and BOM, which are not content), so the
    # translation is behind: --strict reports exactly that, and a plain build warns and succeeds.
    if variant == "fullwidth":
        assert result.returncode == 1 and "translation is behind" in result.stderr
        result = run_build("--out", out, root=course)
    assert result.returncode == 0, result.stderr
    html = (out / "zh/lesson-l5.html").read_text("utf-8")
    assert "\r" not in html and "\ufeff" not in html
    # The same files (the search index names its files by content, so it is left out).
    def pages(files):
        return {name for name in files if not name.startswith("pagefind/")}

    assert pages(snapshot(out)) == pages(before)
    if variant == "fullwidth":
        assert "「引号」" in html


@pytest.mark.parametrize("target", ["course", "content", "stranger"])
def test_out_never_replaces_the_course_or_a_folder_that_is_not_a_site(built, target):
    course, _, _ = built
    before = snapshot(course / "content")
    out = {"course": course, "content": course / "content", "stranger": course / "notes"}[target]
    if target == "stranger":
        out.mkdir()
        (out / "todo.txt").write_text("mine")
    result = run_build("--out", out, root=course)
    assert result.returncode == 1 and result.stderr.startswith(f"error: --out {out}:")
    assert snapshot(course / "content") == before
    assert target != "stranger" or (out / "todo.txt").read_text() == "mine"


def test_a_print_in_an_experiment_does_not_break_the_build(built):
    course, out, _ = built
    edit(course, "experiments/multires.py", "    rng = np.random.default_rng(seed)\n",
         "    rng = np.random.default_rng(seed)\n    print('debugging', seed)\n")
    result = run_build("--out", out, root=course)
    assert result.returncode == 0, result.stderr
