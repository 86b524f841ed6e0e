"""Faulty and hostile input: every case ends in one line naming the file (and line), a non-zero exit and the
previous site untouched; nothing outside the course is published; author code cannot end or hang the build."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, TINY_EXPERIMENT, append_to_page, make_course, run_build, stderr_lines, with_figure

BUILD = [sys.executable, str(ROOT / "build.py")]


def build(root, *args, **kw):
    return run_build("--no-search", "--seeds", "2", "--out", root / "site", *args, root=root, **kw)


def snapshot(site: Path) -> dict:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def fails_in_one_line(result, starts: str, contains: str = "") -> str:
    assert result.returncode != 0, result.stdout
    lines = stderr_lines(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"error: {starts}"), lines[0]
    assert contains in lines[0], lines[0]
    return lines[0]


def _with_code(root):
    code = "\n```python\nvalue = 2 * 3\n```\n"
    return append_to_page(with_figure(make_course(root)), "page", {"zh": code, "en": code})


@pytest.fixture
def built(tmp_path, prebuilt):
    """A tiny course with a figure and code, built (once per process, copied here); the test breaks it and
    expects the site to stay."""
    root = prebuilt("hardening", _with_code, "--no-search", "--seeds", "2")(tmp_path / "c")
    return root, snapshot(root / "site")


def fails_in_each_page(result, starts: str, contains: str) -> list[str]:
    """A mistake written into both languages' pages: an error line for each page, then their count."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    *errors, count = stderr_lines(result.stderr)
    assert count == f"{len(errors)} errors" and len(errors) == 2, result.stderr
    assert any(line.startswith(f"error: {starts}") for line in errors), result.stderr
    assert all(line.startswith("error: content/") and contains in line for line in errors), result.stderr
    return errors


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1) if text in line)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), "utf-8")


# -- author code cannot end, hang or answer for the build ------------------------------------------

RECIPE_FIRST_LINE = '    fig, ax = plt.subplots(figsize=(3, 2))\n'


@pytest.mark.parametrize("code, message", [
    ("raise SystemExit(0)", "figure 'tiny.bars' (zh) failed: the recipe called exit(0)"),
    ("import sys; sys.exit(3)", "figure 'tiny.bars' (zh) failed: the recipe called exit(3)"),
    ("import os; os._exit(0)", "figure 'tiny.bars' (zh): the recipe's process ended (exit status 0) before saving it"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL (out of memory?)"),
    ("values['tiny.maen']", "figure 'tiny.bars' reads unknown value 'tiny.maen' (did you mean 'tiny.mean'?)"),
])
@pytest.mark.slow
def test_a_figure_recipe_cannot_end_the_build(built, code, message):
    root, before = built
    recipe = root / "figures/tiny.py"
    edit(recipe, RECIPE_FIRST_LINE, f"    {code}\n" + RECIPE_FIRST_LINE)
    line = line_of(recipe, code)
    result = build(root)
    where = "figures/tiny.py" if "process" in message or "SIGKILL" in message else f"figures/tiny.py:{line}"
    fails_in_one_line(result, where, message)
    assert snapshot(root / "site") == before


@pytest.mark.slow
def test_a_figure_module_may_parse_its_own_command_line_and_print(built):
    root, _ = built
    edit(root / "figures/tiny.py", "LABELS =", "import argparse\nargparse.ArgumentParser().parse_args()\n"
                                             "print('drawing')\nLABELS =")
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert "drawing" not in result.stdout + result.stderr


@pytest.mark.slow
def test_a_hanging_figure_recipe_is_stopped(built):
    root, before = built
    edit(root / "figures/tiny.py", RECIPE_FIRST_LINE, "    import time; time.sleep(600)\n" + RECIPE_FIRST_LINE)
    edit(root / "content/site.yaml", "pages:", "experiment_timeout: 3\npages:")
    fails_in_one_line(build(root), "figures/tiny.py", "figure 'tiny.bars' (zh) timed out: no SVG after 3 s")
    assert snapshot(root / "site") == before


@pytest.mark.slow
@pytest.mark.parametrize("progress", ["reports.jsonl", "progress.jsonl"])
def test_writing_to_the_progress_file_does_not_beat_the_time_limit(built, progress):
    """Each line of a run's progress file gave the run the whole time limit again: code that kept appending
    to it was never stopped. The run as a whole ends after steps × experiment_timeout."""
    root, before = built
    forever = ("    import time\n    while True:\n        with open(" + repr(progress) + ", 'a') as f:\n"
               "            f.write('\\n')\n        time.sleep(0.2)\n")
    if progress == "reports.jsonl":
        edit(root / "experiments/tiny.py", "    rng = np.random.default_rng(seed)\n",
             forever + "    rng = np.random.default_rng(seed)\n")
        expected = ("experiments/tiny.py", "experiment tiny failed")
    else:
        edit(root / "figures/tiny.py", RECIPE_FIRST_LINE, forever + RECIPE_FIRST_LINE)
        expected = ("figures/tiny.py", "")
    edit(root / "content/site.yaml", "pages:", "experiment_timeout: 2\npages:")
    started = time.monotonic()
    result = build(root, "--force")
    assert time.monotonic() - started < 40, result.stderr
    line = fails_in_one_line(result, expected[0])
    assert "timed out" in line or "wrote into" in line, line
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("rel, old, new, starts, message", [
    ("content/zh/page.md", "个数的均值", "个数的\u202e均值", "content/zh/page.md:8:", "contains U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("content/en/page.md", "title: A tiny", "title: A \x1b[2Jtiny", "content/en/page.md:2:", "contains U+001B"),
    ("content/site.yaml", "pages:", "description: a\u2028b\npages:", "content/site.yaml:", "U+2028 LINE SEPARATOR"),
    ("content/zh/page.md", "## 均值 {#mean}", "## 均值 {#mean\u200f}", "content/zh/page.md:6:",
     "heading id {#mean\u200f} is not an id (a letter, then letters, digits, _ and -): it holds U+200F RIGHT-TO-LEFT MARK"),
    ("content/zh/page.md", "{val}`tiny.mean`", "{val}`t\u0456ny.mean`", "content/zh/page.md:8:",
     "did you mean 'tiny.mean'?; what you wrote holds U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I, which "
     "it does not"),
    ("experiments/tiny.py", '"the spread is near 1"', '"the spread\u2028is near 1"', "experiments/tiny.py:",
     "experiment tiny reports a text that holds U+2028 LINE SEPARATOR"),
    ("experiments/tiny.py", '"the spread is near 1"', '"the spread\x85is near 1"', "experiments/tiny.py:",
     "experiment tiny reports a text that holds U+0085"),
], ids=["bidi override", "escape in a title", "line separator", "bidi mark in an id", "homoglyph", "U+2028 in a "
        "claim", "NEL in a claim"])
def test_controls_bidi_and_homoglyphs_are_named_where_they_are(built, rel, old, new, starts, message):
    """Controls, U+2028/U+0085 and bidi controls in texts, titles and ids were published raw, or split the
    runner's JSON line ("wrote into its report file"); a homoglyph key got a suggestion that looked identical;
    a bidi mark in a heading id blamed the other language."""
    root, before = built
    edit(root / rel, old, new)
    line = fails_in_one_line(build(root), starts)
    assert message in line, line
    assert snapshot(root / "site") == before


def test_a_helper_outside_experiments_is_named_with_where_it_is(built):
    root, before = built
    (root / "lib").mkdir()
    (root / "lib" / "smoothing.py").write_text("K = 3\n", "utf-8")
    edit(root / "experiments/tiny.py", "import harness\n", "import harness\nimport smoothing  # noqa\n")
    line = fails_in_one_line(build(root), "experiments/tiny.py:")
    assert "No module named 'smoothing'" in line and "lib/smoothing.py is outside experiments/" in line, line
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("include", ["../../../../etc/passwd", "/etc/passwd"])
def test_a_template_include_outside_the_course_says_so(built, include):
    root, before = built
    edit(root / "templates" / "page.html", "{% block main %}", "{% block main %}{% include '" + include + "' %}")
    line = fails_in_one_line(build(root), "templates/page.html:")
    assert f"{include!r}" in line and "outside" in line, line
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("src", ["/tmp/secret.png", "../../../../tmp/secret.png"])
def test_an_image_outside_the_site_is_a_warning_and_an_error_under_strict(built, src):
    root, _ = built
    append = f"\n![a picture]({src})\n"
    from conftest import append_to_page

    append_to_page(root, "page", {"zh": append, "en": append})
    result = build(root)
    assert result.returncode == 0 and f"image {src!r}" in result.stdout + result.stderr, result.stdout
    assert "is not a file of the site" in result.stdout + result.stderr, result.stdout
    strict = build(root, "--strict")
    assert strict.returncode != 0 and f"image {src!r}" in strict.stderr, strict.stderr


def test_an_experiment_that_stops_its_sandboxs_init_costs_no_time_limit(built):
    """Code that stopped its sandbox's init with ptrace, then ended, left a run that waited out its whole time
    limit. (Only inside the sandbox, where init is its parent, pid 1: never the machine's own init.)"""
    root, before = built
    code = ("    import ctypes, os\n    if os.getppid() == 1 and os.getpid() != 1:\n"
            "        ctypes.CDLL(None).ptrace(16, 1, 0, 0)  # PTRACE_ATTACH\n    os._exit(3)\n")
    edit(root / "experiments/tiny.py", "    rng = np.random.default_rng(seed)\n", code + "    rng = np.random.default_rng(seed)\n")
    edit(root / "content/site.yaml", "pages:", "experiment_timeout: 60\npages:")
    started = time.monotonic()
    line = fails_in_one_line(build(root), "experiments/tiny.py", "experiment tiny failed (seed 0): ended")
    assert time.monotonic() - started < 20, line
    from lessonkit.measure import sandbox

    assert ("having stopped its sandbox's init (ptrace)" in line) == sandbox.isolated(), line
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("code, message", [
    ("raise SystemExit(0)", "experiment tiny failed (seed 0): the experiment called exit(0)"),
    ("import os; os._exit(0)", "experiment tiny failed (seed 0): ended (exit status 0) before reporting seed 0"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
     "experiment tiny failed (seed 0): killed by SIGKILL (out of memory?)"),
])
def test_an_experiment_cannot_end_the_build(built, code, message):
    root, before = built
    path = root / "experiments/tiny.py"
    edit(path, "    rng = np.random.default_rng(seed)\n", f"    {code}\n    rng = np.random.default_rng(seed)\n")
    result = build(root)
    where = f"experiments/tiny.py:{line_of(path, code)}" if "exit(0)" in message else "experiments/tiny.py"
    fails_in_one_line(result, where, message)
    assert snapshot(root / "site") == before


def test_an_experiment_writing_to_the_real_stdout_does_not_reach_the_build(built):
    root, _ = built
    edit(root / "experiments/tiny.py", "    rng = np.random.default_rng(seed)\n",
         "    os.write(1, b'{' * 5000)\n    rng = np.random.default_rng(seed)\n")
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert "{{{" not in result.stdout + result.stderr


def test_a_criterion_with_a_typo_names_the_claim_and_its_line(tmp_path):
    source = TINY_EXPERIMENT.replace('criterion="abs(mean) < 0.6"', 'criterion="abs(maen) < 0.6"')
    root = make_course(tmp_path / "c", experiment=source)
    line = line_of(root / "experiments/tiny.py", 'Claim(id="mean"')
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}",
                      "claim 'mean': criterion 'abs(maen) < 0.6' cannot be evaluated: name 'maen' is not defined (did you mean 'mean'?)")


# -- the site is swapped whole, by one build at a time ---------------------------------------------

@pytest.mark.slow
def test_the_site_is_never_missing_while_builds_replace_it(built):
    root, _ = built
    index = root / "site" / "index.html"
    gaps, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            if not index.is_file():
                gaps.append(time.monotonic())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(4):
            assert build(root, "--force").returncode == 0
    finally:
        stop.set()
        watcher.join()
    assert gaps == []


@pytest.mark.slow
def test_leftovers_of_a_killed_build_are_removed(built):
    root, _ = built
    for name in (".site.new-dead1", ".site.old-dead2"):
        (root / name).mkdir()
        (root / name / "x.html").write_text("half")
    assert build(root, "--force").returncode == 0
    assert not list(root.glob(".site.*"))


@pytest.mark.slow
def test_overlapping_builds_take_turns(built):
    root, _ = built
    cmd = [*BUILD, "--root", str(root), "--out", str(root / "site"), "--no-search", "--seeds", "2", "--force"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert any("another build of this course is running" in out for out, _ in outs)


@pytest.mark.slow
@pytest.mark.parametrize("umask, mode", [(0o022, 0o755), (0o027, 0o750)])
def test_the_site_follows_the_umask(tmp_path, umask, mode):
    root = make_course(tmp_path / "c")
    result = subprocess.run([*BUILD, "--root", str(root), "--out", str(root / "site"), "--no-search", "--seeds", "1"],
                            capture_output=True, text=True, preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((root / "site").stat().st_mode) == mode
    assert stat.S_IMODE((root / "site/en/page.html").stat().st_mode) == mode & 0o666


def test_a_site_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    from lessonkit.errors import BuildError
    from lessonkit.write import staging

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(BuildError, match="cannot write the site next to .*: Permission denied"):
        staging.Staging(tmp_path / "site")


# -- nothing that should not be published ----------------------------------------------------------

def test_a_javascript_url_in_references_is_refused(tmp_path):
    root = make_course(tmp_path / "c")
    (root / "content/references.yaml").write_text('evil:\n  authors: "X"\n  year: 2020\n  title: "T"\n'
                                                   '  url: "javascript:alert(9)"\n', "utf-8")
    fails_in_one_line(build(root), "content/references.yaml:1", "url 'javascript:alert(9)' is not an http(s)")


def test_a_link_to_a_file_outside_the_course_is_never_published(built):
    root, before = built
    secret = root.parent / "secret.txt"
    secret.write_text("root:x:0:0")
    (root / "templates/static/passwd.txt").symlink_to(secret)
    fails_in_one_line(build(root), "templates/static/passwd.txt", "outside the course")
    assert snapshot(root / "site") == before
    (root / "templates/static/passwd.txt").unlink()
    (root / "templates/_evil.html").symlink_to(secret)
    edit(root / "templates/page.html", "{% block main %}", "{% block main %}{% include '_evil.html' %}")
    fails_in_one_line(build(root), "templates/_evil.html", "outside the course")


def test_an_experiment_source_that_links_outside_the_course_is_never_read_or_published(built):
    """The experiment and the modules it imports are published with its source page: a link to a file outside
    the course, for the experiment or for a helper it imports, is refused in one line, at the import."""
    root, before = built
    tiny, harness = root / "experiments/tiny.py", root / "experiments/harness.py"
    for path in (tiny, harness):
        outside = root.parent / f"outside-{path.name}"
        outside.write_bytes(path.read_bytes() + b"# the builder's secret\n")
        path.unlink()
        path.symlink_to(outside)
    fails_in_one_line(build(root), "experiments/tiny.py: a link to a file outside the course", "refused")
    tiny.unlink()
    tiny.write_bytes((root.parent / "outside-tiny.py").read_bytes())
    line = tiny.read_text("utf-8").splitlines().index("import harness") + 1
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}: imports harness, and experiments/harness.py is a "
                                   "link to a file outside the course", "refused")
    assert snapshot(root / "site") == before


def test_an_import_written_in_a_string_publishes_nothing(built):
    root, _ = built
    (root / "experiments/unused.py").write_text("SECRET = 'not for the site'\n", "utf-8")
    edit(root / "experiments/tiny.py", 'NAME = "tiny"', 'NOTE = """\nimport unused\nfrom unused import x\n"""\nNAME = "tiny"')
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert (root / "site/experiments/tiny.py").is_file()
    assert not (root / "site/experiments/unused.py").exists()


@pytest.mark.parametrize("folder", [".cache", "results"])
def test_a_course_folder_that_links_outside_is_not_written_through(tmp_path, folder):
    root = make_course(tmp_path / "c")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (root / folder).symlink_to(target, target_is_directory=True)
    fails_in_one_line(build(root, "--freeze"), f"{folder}: a link to a folder outside the course", "refused")
    fails_in_one_line(build(root, "--check-only"), f"{folder}: a link to a folder outside the course")
    assert not list(target.iterdir()) and not (root / "site").exists()


def test_new_does_not_write_through_a_language_folder_that_links_outside(tmp_path):
    from lessonkit.errors import BuildError
    from lessonkit.scaffold import new_page

    root = make_course(tmp_path / "c")
    target = tmp_path / "elsewhere"
    target.mkdir()
    shutil.rmtree(root / "content/en")
    (root / "content/en").symlink_to(target, target_is_directory=True)
    config = (root / "content/site.yaml").read_bytes()
    with pytest.raises(BuildError, match="a link to a folder outside the course; new would write through it") as err:
        new_page(root, "second")
    assert err.value.path == Path("content/en")
    assert not list(target.iterdir()) and (root / "content/site.yaml").read_bytes() == config
    assert not (root / "content/zh/second.md").exists()


def test_a_stylesheet_that_is_not_utf8_fails_in_one_line(built):
    root, before = built
    (root / "templates/static/extra.css").write_bytes(b"a {\n  content: '\xe9';\n}\n")
    fails_in_one_line(build(root), "templates/static/extra.css:2: ", "not UTF-8 (byte 0xe9)")
    assert snapshot(root / "site") == before


def test_a_published_stylesheet_loses_comments_and_indentation_but_not_meaning():
    from lessonkit.write.static import compact_css

    css = ('/* c */\na  >  b , c:hover {\n  content: "x ,  { y ; /* z */";\n  margin:  0  auto;\n}\n'
           'p :first-child { width: calc(1px + 2px) }\n@media (max-width: 40rem) { .x { top: 0 } }\n')
    assert compact_css(css) == ('a>b,c:hover{content:"x ,  { y ; /* z */";margin:0 auto;}'
                                'p :first-child{width:calc(1px + 2px)}@media (max-width:40rem){.x{top:0}}\n')


@pytest.mark.parametrize("markup, message", [
    ('[x]{style="position:fixed;inset:0"}', "attribute 'style' is not allowed here"),
    ('`x`{style="color:red"}', "attribute 'style' is not allowed here"),
    ("[x]{#top}", "id 'top' is reserved"),
    ("[x]{#mine} and [y]{#mine}", "duplicate id 'mine'"),
    ("[x]{#mean}", "duplicate id 'mean'"),  # the heading's
])
@pytest.mark.slow
def test_span_attributes_are_a_short_list_and_ids_are_unique(tmp_path, markup, message):
    root = make_course(tmp_path / "c")
    page = root / "content/zh/page.md"
    page.write_text(page.read_text("utf-8") + f"\n{markup}\n", "utf-8")
    fails_in_one_line(build(root), f"content/zh/page.md:{len(page.read_text('utf-8').splitlines())}", message)


@pytest.mark.slow
def test_the_sitemap_is_escaped_and_checked(tmp_path):
    import xml.etree.ElementTree as ET

    root = make_course(tmp_path / "c", config="base_url: https://example.org/a/\n")
    for lang in ("zh", "en"):
        (root / f"content/{lang}/page.md").rename(root / f"content/{lang}/r&d.md")
    edit(root / "content/site.yaml", "pages: [page]", "pages: [r&d]")
    result = build(root, "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    urls = [e.text for e in ET.parse(root / "site/sitemap.xml").iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert "https://example.org/a/zh/r%26d.html" in urls
    (root / "site/sitemap.xml").write_text("<urlset><url></urlset>")
    check = run_build("--check-only", "--out", root / "site", root=root)
    assert check.returncode == 1 and "sitemap.xml: malformed XML" in check.stderr


BOMB = ('a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
        'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n'
        'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n')


@pytest.mark.parametrize("front, message", [
    ("description: {a: 1}", "front matter 'description': expected one line of text, got a dict"),
    ("description: &x [1, 2]\ntitle2: *x", "unknown front-matter key 'title2'"),
    ("\n".join("x" + line for line in BOMB.splitlines()), "aliases expand to more than"),
])
def test_front_matter_is_typed_and_yaml_bombs_are_refused(tmp_path, front, message):
    root = make_course(tmp_path / "c")
    page = root / "content/zh/page.md"
    edit(page, "description: 一页。", front.replace("xa:", "description:", 1) if "xa:" in front else front)
    result = build(root)
    fails_in_one_line(result, "content/zh/page.md", message)


@pytest.mark.parametrize("where", ["content/site.yaml", "content/zh/page.md", "content/glossary.yaml"])
@pytest.mark.parametrize("nesting", ["[" * 30_000, "\n  " + "- " * 30_000 + "x"])
def test_yaml_nested_past_the_stack_is_one_line_not_a_crash(tmp_path, where, nesting):
    """libyaml composes by recursion: 30,000 levels (60 KB) killed the build with SIGSEGV and no word."""
    root = make_course(tmp_path / "c")
    path = root / where
    if where.endswith(".md"):
        edit(path, "description: 一页。", f"description: 一页。\nx: {nesting}")
    else:
        path.write_text((path.read_text("utf-8") if path.exists() else "") + f"deep: {nesting}\n", "utf-8")
    result = run_build("--no-search", "--seeds", "2", "--out", root / "site", root=root, fresh=True)
    assert result.returncode > 0, (result.returncode, result.stderr)  # not a signal
    fails_in_one_line(result, where, "nested more than 1000 levels deep")


def test_a_format_cannot_write_a_huge_page(tmp_path):
    root = make_course(tmp_path / "c")
    edit(root / "content/zh/page.md", "{val}`tiny.mean`", "{val}`tiny.mean:>50000000`")
    fails_in_one_line(build(root), "content/zh/page.md:", "widths and precisions above 40 are refused")


# -- caches: an unreadable entry is a miss, an unwritable cache a warning --------------------------

@pytest.mark.parametrize("where", ["figures", "pages", "highlight", "highlight-code.json", "math.json", "shown.json",
                                   "verdicts.json"])
@pytest.mark.slow
def test_damaged_cache_entries_are_misses(built, where):
    root, before = built
    cache = root / ".cache" / where
    files = [cache] if cache.is_file() else [p for p in cache.rglob("*") if p.is_file()]
    assert files, f"nothing cached in {where}"
    for path in files:
        path.write_bytes(b"\x00garbage{")
    (root / ".cache/build-stamp.json").unlink()
    result = build(root)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    pages = {k: v for k, v in snapshot(root / "site").items() if k.endswith(".html") or k.endswith(".svg")}
    assert pages == {k: v for k, v in before.items() if k in pages}


@pytest.mark.slow
def test_an_unwritable_cache_still_builds(tmp_path):
    root = with_figure(make_course(tmp_path / "c"))
    (root / ".cache").write_text("not a folder")  # every cache write fails, as on a read-only disk
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert "warning: cannot write the experiment cache" in result.stdout
    assert (root / "site/en/page.html").is_file()


# -- configuration and command line ------------------------------------------------------------------

@pytest.mark.parametrize("config, starts, message", [
    ("base_url: 123\n", "content/site.yaml:", "base_url: expected an http(s) address"),
    ("base_url: 'https://x.org/<a>&b'\n", "content/site.yaml:", "base_url: expected an http(s) address"),
    ("source_language: fr\n", "content/site.yaml:", "source_language 'fr' is not one of the languages"),
    ("seed: abc\n", "content/site.yaml:", "seed: expected a whole number"),
    ("experiment_timeout: -1\n", "content/site.yaml:", "experiment_timeout: expected seconds"),
    ("limits: {memory: 10}\n", "content/site.yaml:", "limits: unknown key 'memory': expected memory_mb, processes, "
                                                     "disk_mb"),
    ("limits: {processes: 0}\n", "content/site.yaml:", "limits: processes: expected a whole number from 1 to "
                                                       "1,048,576, got 0"),
    ("limits: 5\n", "content/site.yaml:", "limits: expected a mapping of memory_mb, processes, disk_mb, got 5"),
    ("limits: {1: 2}\n", "content/site.yaml:", "limits: unknown key '1': expected memory_mb, processes, disk_mb"),
])
def test_bad_configuration_is_one_line(tmp_path, config, starts, message):
    root = make_course(tmp_path / "c", config=config)
    fails_in_one_line(build(root), starts, message)


@pytest.mark.parametrize("old, new, message", [
    ("languages: [zh, en]", "languages: [zh, zh]", "languages: 'zh' is listed twice"),
    ("pages: [page]", "pages: page", "pages: expected a list of names"),
    ("pages: [page]", "pages: [page, page]", "pages: 'page' is listed twice"),
    ("experiments: [tiny]", "experiments: tiny", "experiments: expected a list of names"),
    ("experiments: [tiny]", "experiments: [../experiments/tiny]", "experiment '../experiments/tiny': expected"),
    ("title:\n  zh: 小课\n  en: A tiny course", "title: {zh: 小课}", "title: expected text, or one text per language"),
])
def test_bad_lists_in_site_yaml_are_one_line(tmp_path, old, new, message):
    root = make_course(tmp_path / "c")
    edit(root / "content/site.yaml", old, new)
    fails_in_one_line(build(root), "content/site.yaml:", message)


def test_a_plain_title_and_a_page_without_description_build(tmp_path):
    root = make_course(tmp_path / "c")
    edit(root / "content/site.yaml", "title:\n  zh: 小课\n  en: A tiny course", "title: Tiny")
    for lang in ("zh", "en"):
        page = root / f"content/{lang}/page.md"
        page.write_text("\n".join(ln for ln in page.read_text("utf-8").splitlines()
                                  if not ln.startswith("description:")) + "\n", "utf-8")
    import hashlib

    zh = (root / "content/zh/page.md").read_text("utf-8")
    en = root / "content/en/page.md"
    text = en.read_text("utf-8")
    en.write_text(text.replace(text.split("translated_from: ")[1][:12],
                               hashlib.sha256(zh.encode()).hexdigest()[:12]), "utf-8")
    result = build(root, "--strict")
    assert result.returncode == 0, result.stderr
    assert "<title>A tiny experiment · Tiny</title>" in (root / "site/en/page.html").read_text("utf-8")


@pytest.mark.parametrize("glossary, message", [
    ("- id: t\n  zh: 词\n", "glossary entry 't' has no en term"),
    ("- id: t\n  zh: 词\n  en: word\n- id: t\n  zh: 字\n  en: char\n", "glossary id 't' is used twice"),
    ("- zh: 词\n  en: word\n", "glossary entry 1: needs an id"),
    ("- id: page-end\n  zh: 词\n  en: word\n", "glossary id 'page-end' is an id the page writes itself"),
])
def test_a_bad_glossary_is_one_line(tmp_path, glossary, message):
    root = make_course(tmp_path / "c")
    (root / "content/glossary.yaml").write_text(glossary, "utf-8")
    fails_in_one_line(build(root), "content/glossary.yaml", message)


def test_a_reference_without_a_title_is_one_line(tmp_path):
    root = make_course(tmp_path / "c")
    (root / "content/references.yaml").write_text('x:\n  authors: "A"\n  year: 2020\n', "utf-8")
    fails_in_one_line(build(root), "content/references.yaml:1", "reference 'x' needs a title")


@pytest.mark.parametrize("out, message", [("README.md", "not a folder"), ("/dev/null", "not a folder")])
def test_out_must_be_a_folder(tmp_path, out, message):
    root = make_course(tmp_path / "c")
    (root / "README.md").write_text("mine")
    target = root / out if not out.startswith("/") else Path(out)
    result = run_build("--no-search", "--seeds", "1", "--out", target, root=root)
    fails_in_one_line(result, f"--out {target}", message)
    assert (root / "README.md").read_text() == "mine"


def test_a_port_out_of_range_is_refused(tmp_path):
    result = run_build("--serve", "--port", "99999", root=make_course(tmp_path / "c"))
    assert result.returncode == 2 and "a port is a number from 0 to 65535" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_busy_port_is_said_before_building(tmp_path):
    import socket

    root = make_course(tmp_path / "c")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_build("--serve", "--port", str(port), "--out", root / "site", root=root)
    fails_in_one_line(result, f"--port {port}", "--port 0 picks a free port")
    assert not (root / "site").exists(), "nothing was built"


# -- --mark-translated touches one translation's stamp, nothing else ----------------------------------

def test_mark_translated_refuses_the_source_and_paths_outside(tmp_path):
    root = make_course(tmp_path / "c")
    before = snapshot(root / "content")
    result = run_build("--mark-translated", "zh/page.md", root=root)
    fails_in_one_line(result, "zh/page.md: this is the zh source, not a translation")
    outside = tmp_path / "somewhere" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("---\ntitle: mine\n---\n")
    result = run_build("--mark-translated", "en/../../../somewhere/notes.md", root=root)
    fails_in_one_line(result, "en/../../../somewhere/notes.md: not a translation page of this course")
    assert outside.read_text() == "---\ntitle: mine\n---\n"
    assert snapshot(root / "content") == before


@pytest.mark.slow
def test_mark_translated_keeps_the_files_line_endings(tmp_path):
    root = make_course(tmp_path / "c")
    en = root / "content/en/page.md"
    en.write_bytes(en.read_bytes().replace(b"\n", b"\r\n").replace(b"translated_from: ", b"translated_from: 0"))
    result = run_build("--mark-translated", "en/page.md", root=root)
    assert result.returncode == 0, result.stderr
    data = en.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert build(root, "--strict").returncode == 0


# -- the dependencies, as authors type the command ---------------------------------------------------

@pytest.mark.slow
def test_python_without_the_dependencies_uses_the_projects_venv(tmp_path):
    venv = ROOT / ".venv" / "bin" / "python"
    if not venv.is_file():
        pytest.skip("no .venv here: make site creates it")
    bare = subprocess.run([sys.executable, "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                          text=True, check=True).stdout.strip()
    python = Path(bare) / "bin" / "python3"
    root = make_course(tmp_path / "c")
    result = subprocess.run([str(python), "-I", str(ROOT / "build.py"), "--root", str(root), "--out",
                             str(root / "site"), "--no-search", "--seeds", "1"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (root / "site/index.html").is_file()


@pytest.mark.slow
def test_a_build_killed_at_any_moment_leaves_the_old_site_or_the_new_one(built, tmp_path):
    import random
    import signal

    root, old = built
    edit(root / "content/zh/page.md", "## 均值 {#mean}", "## 均值（新） {#mean}")
    assert run_build("--no-search", "--seeds", "2", "--out", tmp_path / "new", root=root).returncode == 0
    new = snapshot(tmp_path / "new")
    assert new != old
    rng = random.Random(7)
    cmd = [*BUILD, "--root", str(root), "--out", str(root / "site"), "--no-search", "--seeds", "2", "--force"]
    for _ in range(6):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.2, 3.0))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert snapshot(root / "site") in (old, new)
    assert build(root).returncode == 0
    assert snapshot(root / "site") == new and not list(root.glob(".site.*"))


@pytest.mark.parametrize("line", [
    'title: "Lesson 1: a page"', "title: 'It''s'", "title: 'a: b'", 'title: "a \\" b"', 'title: "tab\\tx"',
    'title: "x" # note', "title: 第 1 课：页面", "title: 12", "title: yes", 'title: ""', "title: '#hash'",
    'title: "a" "b"', 'title: "\x07bell"', "title: 'Lesson 2: «quoted» text'  ",
])
def test_front_matter_read_without_yaml_is_what_yaml_reads(line):
    import yaml

    from lessonkit.load.texts import _simple_front_matter

    fast = _simple_front_matter([line])
    try:
        slow = yaml.safe_load(line)
    except yaml.YAMLError:
        slow = "an error"
    assert fast is None or fast == slow, f"{line!r}: read as {fast!r}, YAML reads {slow!r}"


def test_common_front_matter_is_read_without_yaml():
    from lessonkit.load.texts import _simple_front_matter

    assert _simple_front_matter(['title: "Lesson 1: a page"', "description: 第 1 课：页面", "title: 'a: b'"]) == \
        {"title": "a: b", "description": "第 1 课：页面"}


# -- what an experiment reports is checked by the engine, not taken on trust -----------------------------

def test_nan_is_refused_even_when_the_experiment_switches_off_the_harness_check(tmp_path):
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', '"odd": seed % 2,\n        "broken": float("nan"),')
    source = source.replace("NAME = \"tiny\"", "NAME = \"tiny\"\nharness.check_values = lambda values: None")
    root = make_course(tmp_path / "c", experiment=source)
    line = line_of(root / "experiments/tiny.py", '"broken":')
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}: value tiny.broken on seed 0 is not finite (nan)")
    assert not (root / "site").exists()


@pytest.mark.slow
def test_a_list_value_too_long_to_read_is_refused(tmp_path):
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', '"odd": seed % 2,\n        "dump": [0.5] * 1_000_000,')
    root = make_course(tmp_path / "c", experiment=source)
    fails_in_one_line(build(root), "experiments/tiny.py:", "has 1,000,000 elements (at most 10,000")


@pytest.mark.slow
@pytest.mark.parametrize("value", ["time.time() % 1", "float(np.random.random())"])
def test_an_experiment_that_gives_a_seed_two_answers_is_caught(tmp_path, value):
    """An experiment's first run repeats its course seed in another process; --check repeats it on a cached site."""
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', f'"odd": seed % 2,\n        "drift": {value},')
    source = source.replace("import os\n", "import os\nimport time\n")
    root = make_course(tmp_path / "c", experiment=source)
    line = line_of(root / "experiments/tiny.py", '"drift":')
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}: experiment tiny gave seed 0 two different values "
                                   "of drift")
    # Cached from a run that happened to agree with itself: --check runs the seed again.
    steady = make_course(tmp_path / "d")
    assert build(steady).returncode == 0
    edit(steady / "experiments/tiny.py", '"odd": seed % 2,', '"odd": seed % 2,\n        "drift": 0.25,')
    assert build(steady).returncode == 0
    cached = steady / ".cache/experiments/tiny/seed-0.json"
    from lessonkit.io import read_cache, write_cache

    entry = read_cache(cached)
    edit(steady / "experiments/tiny.py", '"drift": 0.25,', f'"drift": {value},')
    source_now = (steady / "experiments/tiny.py").read_text("utf-8").replace("import os\n", "import os\nimport time\n")
    (steady / "experiments/tiny.py").write_text(source_now, "utf-8")
    # The cache is for the old code; put the steady run back under the new code's key, as if it had run once.
    from lessonkit.measure.runcache import cache_key, code_hash, report_digest

    entry["key"] = cache_key(code_hash(steady / "experiments/tiny.py"), 0)
    entry["sha256"] = report_digest(entry["report"])
    write_cache(cached, entry)
    checked = run_build("--no-search", "--seeds", "1", "--out", steady / "site", "--check", root=steady)
    assert checked.returncode == 1 and "two different values of drift" in checked.stderr, checked.stderr
    assert not cached.exists()  # the cached answer is no answer: the next build measures, and says so again
    again = run_build("--no-search", "--seeds", "1", "--out", steady / "site", root=steady)
    assert again.returncode == 1 and "two different values of drift" in again.stderr, again.stdout + again.stderr


@pytest.mark.slow
@pytest.mark.parametrize("made", ["_DRAWS = np.random.default_rng(0)", "_SEEN = []"])
def test_an_experiment_whose_answer_depends_on_the_seeds_run_before_is_caught(tmp_path, made):
    """State made at import (a generator, a list a run appends to) gives a seed the same answer in every fresh
    process, but another after other seeds: the course seed's second run comes after another seed. The build
    that catches it keeps no result of the course seed, so the next build, and one that finds the other seeds
    cached, catch it again."""
    value = "float(_DRAWS.random())" if "rng" in made else "(_SEEN.append(seed), len(_SEEN))[1]"
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', f'"odd": seed % 2,\n        "drift": {value},')
    source = source.replace('PARAMS = {"n": 64}\n', f'PARAMS = {{"n": 64}}\n{made}\n')
    root = make_course(tmp_path / "c", experiment=source)
    line = line_of(root / "experiments/tiny.py", '"drift":')
    caught = f"experiments/tiny.py:{line}: experiment tiny gave seed 0 two different values of drift"
    fails_in_one_line(build(root), caught, "(run again after seed 1)")
    assert not (root / ".cache/experiments/tiny/seed-0.json").exists()
    assert (root / ".cache/experiments/tiny/seed-1.json").exists()
    fails_in_one_line(build(root), caught, "(run again after seed 1)")  # seed 1 cached: it runs again first


@pytest.mark.slow
def test_where_only_the_course_seed_runs_seed_1_runs_again_first_and_must_agree_with_its_cache(tmp_path):
    """Seed 0's entry lost, seed 1's cached with a value its code does not give: the repeat of seed 1, run so that
    seed 0's second run comes after another seed, is compared too; a disagreement leaves neither entry."""
    from lessonkit.io import read_cache, write_cache
    from lessonkit.measure.runcache import report_digest

    root = make_course(tmp_path / "c")
    assert build(root).returncode == 0
    cache = root / ".cache/experiments/tiny"
    (cache / "seed-0.json").unlink()
    entry = read_cache(cache / "seed-1.json")  # (as this machine's own build might have left it: sealed)
    entry["report"]["values"]["mean"] += 1.0
    entry["sha256"] = report_digest(entry["report"])
    write_cache(cache / "seed-1.json", entry)
    (root / ".cache/build-stamp.json").unlink()  # (the no-op check does not read the cache)
    line = line_of(root / "experiments/tiny.py", '"mean":')
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}: experiment tiny gave seed 1 two different values "
                                   "of mean", "(run again)")
    assert not (cache / "seed-0.json").exists() and not (cache / "seed-1.json").exists()
    assert build(root).returncode == 0  # both measured afresh


def test_an_experiment_that_writes_a_report_of_its_own_is_refused(tmp_path):
    """The runner's report file lies in the run's scratch folder, where the experiment may write: a line it
    adds there is not taken for a seed's report."""
    forged = '{"seed": 99, "report": {"name": "tiny", "seed": 99, "values": {}}}'
    source = TINY_EXPERIMENT.replace('PARAMS = {"n": 64}\n',
                                     f'PARAMS = {{"n": 64}}\nopen("reports.jsonl", "a").write({forged!r} + "\\n")\n')
    root = make_course(tmp_path / "c", experiment=source)
    fails_in_one_line(build(root), "experiments/tiny.py: experiment tiny wrote a report of its own")


@pytest.mark.parametrize("seeds", [1, 2, 3, 7])
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_the_course_seed_runs_again_in_another_job_after_another_seed(seeds, workers):
    from lessonkit.measure.experiments import _jobs

    all_seeds = list(range(seeds))
    for missing in (all_seeds, [0], []):  # a first run; only the course seed lost; --check, all cached
        jobs = _jobs(missing, all_seeds, True, workers)
        twins = [chunk for chunk, twin in jobs if twin]
        assert len(twins) == 1 and twins[0][-1] == 0 and twins[0].count(0) == 1, (missing, jobs)
        ran = [s for chunk, twin in jobs for s in (chunk[:-1] if twin else chunk)]
        lead = [1] if seeds > 1 and set(missing) <= {0} else []  # cached, run again before the course seed
        assert sorted(ran) == sorted(missing + lead), (missing, jobs)
        if seeds > 1:
            assert len(twins[0]) > 1, (missing, jobs)  # after another seed
        if missing == all_seeds:
            assert len(jobs) == max(2, min(workers, seeds)), jobs  # no process more than the runs need


def test_jobs_when_the_course_seed_came_from_the_cache_or_nothing_runs_again():
    from lessonkit.measure.experiments import _jobs

    assert _jobs([1, 2], [0, 1, 2], True, 2) == [([1], False), ([2, 0], True)]
    assert _jobs([1, 2], [0, 1, 2], False, 2) == [([1], False), ([2], False)]
    assert _jobs([], [0, 1], False, 2) == []


def test_a_full_disk_never_leaves_a_course_file_half_written(tmp_path, monkeypatch):
    """--mark-translated, `new` and site.yaml edits write whole files or nothing."""
    import errno

    from lessonkit import scaffold
    from lessonkit.errors import BuildError
    from lessonkit.load import content

    root = make_course(tmp_path / "c")
    page, config = root / "content/en/page.md", root / "content/site.yaml"
    edit(root / "content/zh/page.md", "## 均值 {#mean}", "## 均值（改） {#mean}")
    before = {p: p.read_bytes() for p in (page, config)}
    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(BuildError, match="No space left on device"):
        content.mark_translated(root, "en/page.md")
    with pytest.raises(BuildError, match="nothing was kept"):
        scaffold.new_page(root, "second")
    monkeypatch.setattr(os, "fsync", real)
    assert {p: p.read_bytes() for p in (page, config)} == before
    assert not (root / "content/zh/second.md").exists() and not (root / "content/en/second.md").exists()
    assert not [p for p in root.rglob("*.tmp")]


@pytest.mark.parametrize("path, message", [
    ("content/en/page.md", "error: content/en/page.md: is a folder, not a page"),
    ("templates/i18n/en.yaml", "error: templates/i18n/en.yaml: templates/i18n/en.yaml is a folder, not a file"),
    ("content/glossary.yaml", "error: content/glossary.yaml: is a folder, not a YAML file"),
])
def test_a_folder_where_a_file_belongs_is_named_as_such(tmp_path, path, message):
    root = make_course(tmp_path / "c")
    (root / path).unlink(missing_ok=True)
    (root / path).mkdir()
    result = build(root)
    assert result.returncode == 1 and result.stderr.strip() == stderr_lines(result.stderr)[0]
    assert result.stderr.startswith(message), result.stderr


def test_hidden_files_are_never_inputs(tmp_path):
    """One rule (load/inputs.skipped) for the loader, the fingerprint, the watcher and the static copier."""
    root = make_course(tmp_path / "c")
    edit(root / "content/site.yaml", "pages: [page]", "pages: [page, .drafts/a]")
    fails_in_one_line(build(root), "content/site.yaml", "page '.drafts/a': a name beginning with '.'")
    edit(root / "content/site.yaml", "pages: [page, .drafts/a]", "pages: [page]")
    (root / "templates/static/.secret.txt").write_text("not for readers", "utf-8")
    (root / "templates/static/notes.css~").write_text("backup", "utf-8")
    assert build(root).returncode == 0
    assert not list((root / "site").rglob(".secret.txt")) and not list((root / "site").rglob("*~"))


def test_an_image_from_outside_the_site_warns_and_strict_refuses(tmp_path):
    image = "\n![a chart](https://example.org/chart.png)\n"
    root = append_to_page(make_course(tmp_path / "c"), "page", {"zh": image, "en": image})
    result = build(root)
    assert result.returncode == 0, result.stderr
    line = len((root / "content/zh/page.md").read_text("utf-8").rstrip("\n").splitlines())
    assert (f"warning: content/zh/page.md:{line}: image 'https://example.org/chart.png' loads from outside the "
            "site") in result.stdout
    fails_in_one_line(build(root, "--strict"), f"content/zh/page.md:{line}: image 'https://example.org/chart.png'")


@pytest.mark.parametrize("where, old, new, message", [
    ("templates/i18n/en.yaml", 'range: "{range} over {n} seeds"', 'range: "{range} over {n:>300000000} seeds"',
     "range: {n:>300000000}: interface strings take plain fields"),
    ("templates/i18n/en.yaml", 'range: "{range} over {n} seeds"', 'range: "{range.__class__} over {n} seeds"',
     "range: {range.__class__}: interface strings take plain fields"),
    ("templates/i18n/en.yaml", "tag: en", "tag: 'en\"><script>alert(1)</script>'", "tag 'en\"><script>"),
    ("content/zh/page.md", "title: 小实验", 'title: "a \\0w:x.y\\0 b"', "a value holds a NUL character"),
])
def test_interface_strings_and_titles_cannot_reach_into_the_engine(tmp_path, where, old, new, message):
    root = make_course(tmp_path / "c")
    edit(root / where, old, new)
    result = build(root)
    assert result.returncode == 1 and len(stderr_lines(result.stderr)) == 1, result.stderr
    assert result.stderr.startswith(f"error: {where}:") and message in result.stderr, result.stderr


@pytest.mark.slow
def test_names_that_would_make_the_same_anchor_are_refused(tmp_path):
    source = TINY_EXPERIMENT.replace('shows=("mean",)),', 'shows=("mean",)),\n    Claim(id="sp.read", criterion="n > 0", '
                                     'text={"zh": "甲", "en": "a"}),\n    Claim(id="sp_read", criterion="n > 0", '
                                     'text={"zh": "乙", "en": "b"}),')
    root = make_course(tmp_path / "c", experiment=source)
    line = line_of(root / "experiments/tiny.py", 'Claim(id="sp_read"')
    fails_in_one_line(build(root), f"experiments/tiny.py:{line}: claim tiny.sp_read makes the same anchor "
                                   "'claim-tiny-sp-read' as claim tiny.sp.read")
    blocks = "\n::: figure a_b.c One.\nOne.\n:::\n\n::: figure a.b_c Two.\nTwo.\n:::\n"
    figures = append_to_page(make_course(tmp_path / "d"), "page", {"zh": blocks, "en": blocks})
    fails_in_each_page(build(figures), "content/zh/page.md:", "fig id 'a.b_c' makes the same anchor 'fig-a-b-c'")


def test_an_author_id_cannot_take_the_side_by_side_pages_prefix(tmp_path):
    root = make_course(tmp_path / "c")
    edit(root / "content/zh/page.md", "{#mean}", "{#en-mean}")
    fails_in_one_line(build(root), "content/zh/page.md:", "id 'en-mean' begins like the side-by-side page's ids")


def test_force_on_a_course_whose_cache_cannot_be_cleared_still_builds(tmp_path):
    root = make_course(tmp_path / "c")
    (root / ".cache" / "math.json").mkdir(parents=True)  # unlink fails as on a read-only course
    result = build(root, "--force")
    assert result.returncode == 0, result.stderr
    assert "warning: cannot remove .cache/math.json" in result.stdout


@pytest.mark.parametrize("fid", ["/tmp/ev.f", "../figures/tiny.bars", "sub/tiny.bars", "tiny.bars/x"])
def test_a_figure_name_resolves_only_inside_figures(tmp_path, fid):
    """::: figure /abs/path/ev.f once imported and ran /abs/path/ev.py: names are refused before anything runs."""
    evil = Path("/tmp/ev.py") if fid.startswith("/tmp/") else tmp_path / "ev.py"
    evil.write_text("import pathlib; pathlib.Path(__file__).with_name('ran').write_text('x')\ndef f(v, l): pass\n")
    block = f"\n::: figure {fid} alt\nCaption.\n:::\n"
    root = append_to_page(make_course(tmp_path / "c"), "page", {"zh": block, "en": block})
    try:
        fails_in_each_page(build(root), "content/zh/page.md:", f"figure id {fid!r} is not a valid name")
        assert not evil.with_name("ran").exists()
    finally:
        evil.unlink()


@pytest.mark.parametrize("folder", ["experiments", "content/en", "templates/static", "figures"])
def test_a_link_to_nothing_among_the_inputs_is_not_an_internal_error(tmp_path, folder):
    """A copied course whose link leads nowhere (experiments/criteria.py -> ../lessonkit/criteria.py, copied
    without its target): the no-op fingerprint no longer fails on it; the build uses or refuses it in one line."""
    root = make_course(tmp_path / "c")
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "gone.py").symlink_to("../nowhere/gone.py")
    result = build(root)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    if result.returncode:
        assert len(stderr_lines(result.stderr)) == 1, result.stderr
    else:
        assert not [p for p in (root / "site").rglob("*") if p.is_symlink()], "a link reached the site"
    again = build(root)  # and the next build, with the fingerprint written, is a no-op or the same error
    assert again.returncode == result.returncode and "internal error" not in again.stderr, again.stderr


# -- templates are the course's code too ------------------------------------------------------------

@pytest.mark.parametrize("line, message", [
    ("{{ lipsum.__globals__['os'].popen('id').read() }}", "template error: "),
    ("{{ cycler.__init__.__globals__.os.environ['LESSONKIT_TEST_SECRET'] }}", "template error: "),
    ("{{ joiner.__init__.__globals__.__builtins__.open('/etc/passwd').read() }}", "template error: "),
    ("{% for i in range(10**12) %}{% endfor %}", "template error: "),
])
def test_a_course_template_reaches_no_python_and_publishes_nothing(built, line, message, monkeypatch):
    """A line in a course's page.html ran in the build process: it published `id`, a secret from the
    environment and a file from outside the course. Templates render in Jinja's sandbox."""
    root, before = built
    edit(root / "templates" / "page.html", "{% block main %}", "{% block main %}" + line)
    monkeypatch.setenv("LESSONKIT_TEST_SECRET", "hunter2-secret")
    result = build(root)
    fails_in_one_line(result, "templates/page.html:", message)
    assert snapshot(root / "site") == before


@pytest.mark.slow
def test_a_template_that_runs_on_is_stopped_at_the_time_limit(built):
    root, before = built
    edit(root / "templates" / "page.html", "{% block main %}",
         "{% block main %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    with (root / "content" / "site.yaml").open("a", encoding="utf-8") as f:
        f.write("experiment_timeout: 2\n")
    started = time.monotonic()
    result = build(root)
    fails_in_one_line(result, "templates/page.html:", "ran past the course's time limit")
    assert time.monotonic() - started < 60
    assert snapshot(root / "site") == before


def test_nothing_in_the_course_folder_is_unpickled_or_run_as_a_compiled_template(built):
    """Jinja's bytecode cache loads its entries with pickle: a file in .cache/templates/ ran at load time,
    even for a course with no templates of its own. No compiled template is read from the course's folder."""
    root, _ = built
    marker = root / "unpickled"
    import pickle

    class Bomb:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    cache = root / ".cache" / "templates"
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("__jinja2_0.cache", *[f"__jinja2_{i:040x}.cache" for i in range(3)]):
        (cache / name).write_bytes(b"j2" + pickle.dumps(Bomb()))
    result = build(root, "--force")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


FORK_BOMB = """    import os, time
    for _ in range(64):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
"""
FILL_SCRATCH = """    for i in range(200):
        with open(f"fill-{i}.bin", "wb") as f:
            f.write(b"x" * 2**20)
"""
FILL_TMP = """    for i in range(200):
        with open(f"/tmp/fill-{i}.bin", "wb") as f:
            f.write(b"x" * 2**20)
"""
BIG_ARRAY = """    np.ones(2**31)  # 16 GiB
"""


@pytest.mark.slow
@pytest.mark.parametrize("code, message", [
    (FORK_BOMB, "started more than 16 processes at once, the run's limit (content/site.yaml: limits: processes)"),
    (FILL_SCRATCH, "wrote more than 64 MiB (or 100,000 files) into its scratch folder, the run's limit (content/site.yaml: limits: "
                   "disk_mb)"),
    (FILL_TMP, "wrote more than 64 MiB (or 100,000 files) into its scratch folder"),
    (BIG_ARRAY, "(ran out of its 1024 MiB of memory, the run's limit (content/site.yaml: limits: memory_mb))"),
], ids=["processes", "scratch", "tmp", "memory"])
def test_a_run_is_held_to_the_courses_limits(built, code, message):
    """There was no memory, process or disk limit on a run: 3 GB, 300 processes and 512 MiB each into scratch,
    /tmp and /dev/shm were all allowed. The sandbox holds a run to site.yaml's limits, and the error names it."""
    root, before = built
    edit(root / "experiments/tiny.py", "    rng = np.random.default_rng(seed)\n", code + "    rng = np.random.default_rng(seed)\n")
    edit(root / "content/site.yaml", "pages:", "limits: {memory_mb: 1024, processes: 16, disk_mb: 64}\npages:")
    started = time.monotonic()
    line = fails_in_one_line(build(root), "experiments/tiny.py", "experiment tiny failed")  # (seed 0, unless both were done)
    assert message in line, line
    assert time.monotonic() - started < 60
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("expression, message", [
    ("sys.executable", "holds the build's Python environment of the building machine"),
    ("os.environ['HOME']", "holds the scratch folders' place of the building machine"),
    ("os.getcwd()", "holds the scratch folders' place of the building machine"),
    ("str(os.path.exists('/proc/1/cmdline')) + socket.gethostname()", None),
    ("'err' + os.path.expanduser('~')", None),  # "err/root": a word, not the home folder
])
def test_no_text_the_build_publishes_carries_the_builders_paths_or_host_name(built, expression, message):
    """Inside the sandbox, /proc/1/cmdline and /proc/self/mountinfo showed the venv, the home folder and the
    scratch path, and a claim text published them; so did the host name. The sandbox has no /proc and a host
    name of its own, and a report's texts that still hold a path of the builder's are refused."""
    root, before = built
    edit(root / "experiments/tiny.py", '"en": "the spread is near 1"', f'"en": "the spread is near 1 " + ({expression})')
    edit(root / "experiments/tiny.py", "import os\n", "import os\nimport socket\n")
    result = build(root)
    if message is None:
        from lessonkit.measure import sandbox

        assert result.returncode == 0, result.stderr
        entry = (root / ".cache/experiments/tiny/seed-0.json").read_text("utf-8")
        if "gethostname" in expression:
            assert ("the spread is near 1 Falselessonkit" in entry) == sandbox.isolated(), entry
        return
    fails_in_one_line(result, "experiments/tiny.py: experiment tiny reports a text that", message)
    assert snapshot(root / "site") == before


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "huge"])
@pytest.mark.parametrize("rel, starts", [
    ("results/tiny.json", "results/tiny.json: cannot read the frozen results ("),
    ("templates/static/big.bin", "templates/static/big.bin: "),
    ("content/references.bib", "content/references.bib: "),
    ("content/zh/page.md", "content/zh/page.md: "),
    ("templates/page.html", "templates/page.html: "),
    ("experiments/helper.py", "experiments/helper.py: "),
])
def test_every_input_is_read_within_bounds(built, rel, starts, kind):
    """A 2 GB results/*.json, static file or .bib ended in a MemoryError, and a FIFO would block the build for
    ever. Every course file is read through one bounded read: a regular file of at most 64 MiB."""
    root, before = built
    path = root / rel
    if rel == "results/tiny.json":
        assert build(root, "--freeze").returncode == 0
        before = snapshot(root / "site")
    if rel == "experiments/helper.py":
        edit(root / "experiments/tiny.py", "import harness\n", "import harness\nimport helper  # noqa\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        with path.open("wb") as f:
            f.truncate(2 * 2**30)  # sparse: 2 GB that take no disk
    message = ("is a special file, not a page" if rel.endswith(".md") else "not a regular file (a FIFO") \
        if kind == "fifo" else f"larger than {512 if 'static' in rel else 64} MiB, the most the build reads"
    result = build(root)
    fails_in_one_line(result, starts, message)
    assert snapshot(root / "site") == before


@pytest.mark.parametrize("sealed_here", [False, True])
def test_a_compiled_template_runs_only_when_this_users_build_sealed_it(built, sealed_here):
    """Compiled templates are kept in .cache/templates/, sealed: one forged there (by a course that arrives
    with its .cache/) is compiled anew, never run. Sealed with this user's key, it would run: the seal is
    what stands between them."""
    import base64
    import json
    import marshal

    from lessonkit.io import write_cache

    root, _ = built
    shutil.rmtree(root / ".cache" / "templates")
    assert build(root, "--force").returncode == 0  # (entries for this folder: a key holds the template's path)
    marker = root / "ran"
    evil = base64.b64encode(marshal.dumps(compile(f"open({str(marker)!r}, 'w').write('x')", "t", "exec"))).decode()
    entries = sorted((root / ".cache" / "templates").rglob("*.json"))
    assert entries
    for entry in entries:
        kept = json.loads(entry.read_bytes().partition(b"\n")[2])
        forged = {**kept, "code": evil}
        if sealed_here:
            write_cache(entry, forged)
        else:
            entry.write_text("0" * 64 + "\n" + json.dumps(forged), "utf-8")
    result = build(root, "--force")
    assert marker.exists() == sealed_here, result.stderr


def test_a_template_compiled_for_one_course_serves_another_in_the_same_process_under_its_own_name(tmp_path,
                                                                                                  monkeypatch):
    """A second course (or a fresh .cache/) with the same template source compiles nothing again in the same
    process, yet gets its own .cache/templates/ entries; and what the code says of its file is the second
    course's: an error in it is named at templates/page.html, not at the first course's copy."""
    import jinja2

    from lessonkit.load import parts

    monkeypatch.setattr(parts, "COMPILED", {})
    trap = '{% if page.title == "Boom" %}{{ page.nothing.at_all() }}{% endif %}\n'
    first, second = make_course(tmp_path / "a"), make_course(tmp_path / "b")
    for root in (first, second):
        page = root / "templates" / "page.html"
        page.write_text(trap + page.read_text("utf-8"), "utf-8")
    edit(second / "content/en/page.md", "title: A tiny experiment", "title: Boom")
    assert build(first).returncode == 0
    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile",
                        lambda self, *a, **kw: compiled.append(a[1] if len(a) > 1 else None) or real(self, *a, **kw))
    result = build(second)
    assert result.returncode == 1 and not compiled, (compiled, result.stderr)
    assert stderr_lines(result.stderr)[0].startswith("error: templates/page.html:1: "), result.stderr
    mine, theirs = ({p.name for p in (root / ".cache" / "templates").rglob("*.json")} for root in (second, first))
    assert len(mine) == len(theirs) > 0 and not mine & theirs  # (an entry's name holds its template's path)


def test_check_refuses_every_script_handler_and_address_the_engine_did_not_write(built):
    """A course's templates, static files and styles are its code: --check allows the engine's own scripts,
    by place and by bytes, and nothing else that a browser would run (an allowlist, so a spelling of
    `javascript:` or an element no pattern names is refused too)."""
    root, _ = built
    planted = {
        "<script>alert(1)</script>": "<script> that the engine did not write",
        '<script src="../static/evil.js"></script>': "<script src='../static/evil.js'> that the engine did not",
        '<script src="https://cdn.example/x.js"></script>': "<script src='https://cdn.example/x.js'> that",
        '<a href="#top" onclick="alert(2)">x</a>': "<a onclick=…> that the engine did not write",
        '<a href=" JaVa&#x09;script:alert(3)">x</a>': "has a scheme a page may not use (javascript:)",
        '<form action="javascript:alert(4)"><button formaction="vbscript:x">x</button></form>':
            "<form action='javascript:alert(4)'> has a scheme",
        '<iframe srcdoc="&lt;script&gt;alert(5)&lt;/script&gt;"></iframe>': "<iframe> that the engine did not",
        '<object data="data:text/html,&lt;script&gt;alert(6)&lt;/script&gt;"></object>': "<object data='data:t",
        '<meta http-equiv="Refresh" content="0;url=https://example.org/">': "<meta> that the engine did not",
        '<svg><script>alert(7)</script></svg>': "<script> that the engine did not write",
        '<img src="data:text/html,x" alt="x">': "<img src='data:text/html,x'> has a scheme",
        '<svg><a><animate attributeName="href" values="javascript:alert(12)"/><text>go</text></a></svg>':
            "<animate attributeName=href=…> that the engine did not write",
    }
    allowed = '<a href="data:text/csv,1%2C2" download="t.csv">csv</a><blockquote cite="urn:isbn:0451450523">q</blockquote>'
    edit(root / "templates" / "page.html", "{% block main %}", "{% block main %}" + "".join(planted) + allowed)
    static = root / "templates" / "static"
    (static / "a.htm").write_text("<p onclick='alert(13)'>x</p>", "utf-8")
    (static / "b.xhtml").write_text('<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(14)</script></html>', "utf-8")
    (static / "c.SVG").write_text('<svg xmlns="http://www.w3.org/2000/svg"><set attributeName="href" '
                                  'to="javascript:alert(15)"/></svg>', "utf-8")
    (static / "d.svg").write_bytes('<?xml version="1.0" encoding="GBK"?><svg xmlns="http://www.w3.org/2000/svg">'
                                   '<text>图</text></svg>'.encode("gbk"))
    (root / "templates" / "static" / "evil.js").write_text("alert(8)", "utf-8")
    with (root / "templates" / "static" / "site.js").open("a", encoding="utf-8") as f:
        f.write("\nalert(9);\n")
    (root / "templates" / "static" / "logo.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink" onload="alert(10)">'
        '<a x:href="javascript:alert(11)"><text>x</text></a></svg>', "utf-8")
    result = build(root, "--check")
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    for payload, message in planted.items():
        assert sum(message in line for line in result.stderr.splitlines()) >= 2, (payload, result.stderr)  # zh, en
    assert "<button formaction='vbscript:x'> has a scheme a page may not use (vbscript:)" in result.stderr
    assert "static/site.js: not the engine's own script" in result.stderr
    assert "static/logo.svg: <svg onload='alert(10)'>" in result.stderr
    assert "static/logo.svg: <a href='javascript:alert(11)'>" in result.stderr
    assert "static/a.htm: <p onclick=…>" in result.stderr and "static/b.xhtml: <script>" in result.stderr
    assert "static/c.SVG: <set attributeName='href'>" in result.stderr
    assert "static/d.svg: not XML this check can read" in result.stderr and "internal error" not in result.stderr
    assert "data:text/csv" not in result.stderr and "urn:isbn" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--jobs", "-1"], "argument --jobs: a whole number ≥ 1"),
    (["--jobs", "0"], "argument --jobs: a whole number ≥ 1"),
    (["--seed", "-5"], "argument --seed: a whole number ≥ 0"),
    (["--seeds", "0"], "argument --seeds: a whole number ≥ 1"),
    (["--serve", "--freeze"], "--serve cannot be used with --freeze"),
    (["--serve", "--check"], "--serve cannot be used with --check"),
    (["--serve", "--pdf"], "--serve cannot be used with --pdf"),
    (["--check-only", "--freeze"], "--check-only cannot be used with --freeze"),
    (["--check-only", "--refresh", "tiny"], "--check-only cannot be used with --refresh"),
    *[(["--executor", spec], "argument --executor: expected local, dask:local, dask:tcp://HOST:PORT or "
                             "dask:tls://HOST:PORT")
      for spec in ("spark", "dask:", "dask:tcp://", "dask:tls://…", "dask:local:extra", "dask:ws://h:1", "dask:inproc://x",
                   "dask:tcp://h:99999", "dask:tcp://h:1/path", "tcp://h:1", "dask:ucx://h:1")],
])
def test_options_that_cannot_hold_are_a_usage_line_before_anything_runs(tmp_path, capsys, args, message):
    from lessonkit.command import main

    root = make_course(tmp_path / "c")
    with pytest.raises(SystemExit) as exited:
        main([*args, "--root", str(root)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(f"error: {message}"), err
    assert "Traceback" not in err and not (root / ".cache").exists()


@pytest.mark.parametrize("where, value, message", [
    ("--seeds", "100000", "error: --seeds 100000: from 1 to 1,000"),
    ("site.yaml", "100000", "error: content/site.yaml:"),
])
def test_a_sweep_too_large_to_pass_is_refused_not_blamed_on_the_experiment(tmp_path, where, value, message):
    root = make_course(tmp_path / "c", config="seeds: 100000\n" if where == "site.yaml" else "")
    args = ("--seeds", value) if where == "--seeds" else ()
    result = run_build("--no-search", "--out", root / "site", *args, root=root)
    fails_in_one_line(result, message.removeprefix("error: "), "from 1 to 1,000")
    assert not (root / ".cache/experiments").exists()


def test_new_keeps_a_crlf_site_yaml_crlf(tmp_path):
    from lessonkit.scaffold import new_page

    root = make_course(tmp_path / "c")
    config = root / "content/site.yaml"
    config.write_bytes(config.read_bytes().replace(b"\n", b"\r\n"))
    new_page(root, "second")
    data = config.read_bytes()
    assert b"second" in data and data.count(b"\n") == data.count(b"\r\n"), data
