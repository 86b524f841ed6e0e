"""`build.py new PAGE [--experiment NAME]` on fixture courses: it starts a page in every language (and an
experiment with a figure recipe), registers them in site.yaml whatever the style of its lists, the result
builds and passes --check at once, and it never overwrites anything."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, make_course, run_build, snapshot, with_evidence

BLOCK = "experiments:\n  - tiny  # the only experiment\npages:\n  - page  # in reading order\n"


def new(root, *args):
    return subprocess.run([sys.executable, str(ROOT / "build.py"), "new", *map(str, args), "--root", str(root)],
                          capture_output=True, text=True, cwd=root)


def check(root):
    return run_build("--no-search", "--seeds", "2", "--check", "--strict", "--out", root / "site", root=root)


def course(tmp_path, style: str):
    root = make_course(tmp_path / style)
    if style == "block":
        config = root / "content" / "site.yaml"
        text = config.read_text("utf-8")
        assert "experiments: [tiny]\npages: [page]\n" in text
        config.write_text(text.replace("experiments: [tiny]\npages: [page]\n", BLOCK), "utf-8")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("style", ["flow", "block"])
def test_new_page_with_an_experiment_builds_and_checks_at_once(tmp_path, style):
    root = course(tmp_path, style)
    done = new(root, "chapter-2/intro", "--experiment", "saturation")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    config = yaml.safe_load((root / "content" / "site.yaml").read_text("utf-8"))
    assert config["pages"] == ["page", "chapter-2/intro"]
    assert config["experiments"] == ["tiny", "saturation"]
    text = (root / "content" / "site.yaml").read_text("utf-8")
    if style == "block":
        assert "# the only experiment" in text and "# in reading order" in text  # comments are kept
    else:
        assert "experiments: [tiny, saturation]" in text and "pages: [page, chapter-2/intro]" in text
    for rel in ("content/zh/chapter-2/intro.md", "content/en/chapter-2/intro.md", "experiments/saturation.py",
                "figures/saturation.py"):
        assert (root / rel).is_file(), rel
        assert rel in done.stdout, f"{rel} is not named in what new printed"
    # The translation records the source it was made from: no "translation is behind" even with --strict.
    zh = (root / "content/zh/chapter-2/intro.md").read_bytes()
    assert f"translated_from: {hashlib.sha256(zh).hexdigest()[:12]}" in (root / "content/en/chapter-2/intro.md").read_text()
    result = check(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check: no problems" in result.stdout
    html = with_evidence(root / "site/en/chapter-2/intro.html")
    assert 'data-key="saturation.std"' in html and 'data-claim="saturation.std" data-passed="true"' in html
    assert (root / "site/figures/saturation.summary.en.svg").is_file()
    # The new experiment runs on its own, as test_course.py runs every listed experiment.
    alone = subprocess.run([sys.executable, str(root / "experiments/saturation.py"), "--seed", "1"],
                           capture_output=True, text=True)
    assert alone.returncode == 0 and "PASS" in alone.stdout and "FAIL" not in alone.stdout, alone.stdout


@pytest.mark.slow
@pytest.mark.parametrize("style", ["flow", "block"])
def test_new_page_without_an_experiment(tmp_path, style):
    root = course(tmp_path, style)
    done = new(root, "appendix")
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((root / "content" / "site.yaml").read_text("utf-8"))
    assert config["pages"] == ["page", "appendix"] and config["experiments"] == ["tiny"]
    assert not (root / "experiments" / "appendix.py").exists()
    result = check(root)
    assert result.returncode == 0, result.stdout + result.stderr


def _listed_page(root):
    return ("page",)


def _page_file_exists(root):
    (root / "content/en/extra.md").write_text("---\ntitle: mine\n---\n\nMy own text.\n", "utf-8")
    return ("extra",)


def _listed_experiment(root):
    return ("extra", "--experiment", "tiny")


def _experiment_file_exists(root):
    (root / "experiments/mine.py").write_text("# my own experiment\n", "utf-8")
    return ("extra", "--experiment", "mine")


def _figure_recipe_exists(root):
    (root / "figures/mine.py").write_text("# my own figures\n", "utf-8")
    return ("extra", "--experiment", "mine")


def _not_a_page_path(root):
    return ("../outside",)


def _not_a_python_name(root):
    return ("extra", "--experiment", "my-experiment")


def _pages_not_a_list(root):
    config = root / "content" / "site.yaml"
    text = config.read_text("utf-8")
    config.write_text(text.replace("pages: [page]", "pages: page").replace("pages:\n  - page  # in reading order",
                                                                          "pages: page"), "utf-8")
    return ("extra", "--experiment", "mine")


REFUSALS = [
    (_listed_page, "content/site.yaml:", "'pages' already lists 'page'"),
    (_page_file_exists, "content/en/extra.md: ", "new 'extra': it exists; nothing was written"),
    (_listed_experiment, "content/site.yaml:", "'experiments' already lists 'tiny'"),
    (_experiment_file_exists, "experiments/mine.py: ", "it exists; nothing was written"),
    (_figure_recipe_exists, "figures/mine.py: ", "it exists; nothing was written"),
    (_pages_not_a_list, "content/site.yaml:", "pages: expected a list of names"),
    (_not_a_page_path, "", "expected a page path"),
    (_not_a_python_name, "", "a Python name"),
]


@pytest.mark.parametrize("style", ["flow", "block"])
@pytest.mark.parametrize("setup, where, message", REFUSALS, ids=[r[0].__name__.strip("_") for r in REFUSALS])
def test_new_refuses_to_overwrite_anything(tmp_path, style, setup, where, message):
    root = course(tmp_path, style)
    args = setup(root)
    before = snapshot(root)
    done = new(root, *args)
    assert done.returncode == 1, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"error: {where}"), lines[0]
    assert message in lines[0], lines[0]
    assert lines[0].count("content/site.yaml") <= 1, lines[0]  # the file is named once
    if where == "content/site.yaml:":  # the line named is the one that says it
        number = int(lines[0].removeprefix("error: content/site.yaml:").partition(":")[0])
        said = (root / "content" / "site.yaml").read_text("utf-8").splitlines()[number - 1]
        assert said.startswith(("pages", "experiments", "  - ")), said
    assert snapshot(root) == before, "nothing is written when new refuses"


# Layouts of site.yaml's lists an author may have written; each gains its item and keeps the rest.
LAYOUTS = {
    "comment first": "pages:\n  # the lesson first\n  - a\n  - b  # then b\ntitle: T\n",
    "comment after the key": "pages:  # in reading order\n  - a\n  - b\ntitle: T\n",
    "unindented": "pages:\n- a\n- b\ntitle: T\n",
    "blank line inside": "pages:\n  - a\n\n  - b\n\n# a comment after the list\ntitle: T\n",
    "last line, no newline": "title: T\npages:\n  - a\n  - b",
    "flow over lines": "pages: [a,\n        b]  # two\ntitle: T\n",
    "flow, empty": "pages: [ ]\ntitle: T\n",
    "nothing yet": "pages:\ntitle: T\n",
    "missing": "title: T\n",
}


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
def test_site_yaml_lists_gain_an_item_in_any_layout(layout):
    from lessonkit.scaffold import _append_to_list

    text = LAYOUTS[layout]
    before = yaml.safe_load(text)
    after_text = _append_to_list(text, "pages", "c")
    after = yaml.safe_load(after_text)
    assert after["pages"] == (before.get("pages") or []) + ["c"], after_text
    assert after["title"] == "T"
    for comment in (line.partition("#")[2] for line in text.splitlines() if "#" in line):
        assert comment in after_text  # comments stay
    if layout in ("comment first", "unindented", "blank line inside"):
        indent = "" if layout == "unindented" else "  "
        assert re.search(rf"(?m)^{indent}- b.*\n{indent}- c\n", after_text)  # after the last item, in its column


@pytest.mark.slow
@pytest.mark.parametrize("style", ["flow", "block"])
def test_new_after_places_the_page_and_its_neighbours_follow(tmp_path, style):
    root = course(tmp_path, style)
    assert new(root, "second").returncode == 0
    done = new(root, "between", "--after", "page")
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((root / "content" / "site.yaml").read_text("utf-8"))
    assert config["pages"] == ["page", "between", "second"]
    if style == "block":  # its line, with the list's own dash and indent; the comments stay
        assert "  - page  # in reading order\n  - between\n  - second\n" in (root / "content" / "site.yaml").read_text()
    assert check(root).returncode == 0
    page = (root / "site" / "en" / "between.html").read_text("utf-8")
    assert 'rel="prev" href="../en/page.html"' in page and 'rel="next" href="../en/second.html"' in page
    before = snapshot(root / "content")
    wrong = new(root, "third", "--after", "betwen")
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"error: content/site.yaml:{pages_line(root)}: --after 'betwen': 'pages' does not list it "
        "(did you mean 'between'?)"]
    assert snapshot(root / "content") == before


def pages_line(root) -> int:
    lines = (root / "content" / "site.yaml").read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith("pages:"))


# --- init: a second course, with the engine's templates as its theme -----------------------------------

def init(target, *args):
    return subprocess.run([sys.executable, str(ROOT / "build.py"), "init", str(target), *args],
                          capture_output=True, text=True)


@pytest.mark.slow  # five fresh Pythons and two Nu validator runs, as the page has them: `make test` runs it
def test_the_first_course_walkthrough_runs_as_written(tmp_path):
    """docs/first-course.md's commands, in order, on a fresh folder: each succeeds and does what the page
    says it does."""
    doc = (ROOT / "docs" / "first-course.md").read_text("utf-8")
    commands = re.search(r"```sh\n(.*?)```", doc, re.S).group(1).strip().splitlines()
    assert len(commands) == 5 and commands[0].startswith(".venv/bin/python build.py init ../my-course")
    course = tmp_path / "my-course"
    for command in commands:
        words = [sys.executable if w == ".venv/bin/python" else w for w in command.split()]
        words = [str(ROOT / "build.py") if w == "build.py" else w.replace("../my-course", str(course))
                 for w in words]
        result = subprocess.run(words, capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        if "experiments/first.py" in command:
            assert "PASS" in result.stdout and "first.std" in result.stdout, result.stdout
        if "--check" in command:
            assert "check: no problems" in result.stdout, result.stdout
    assert not (course / "templates").exists(), "a new course copies no template"
    config = yaml.safe_load((course / "content" / "site.yaml").read_text("utf-8"))
    assert config["pages"] == ["welcome", "second"] and config["experiments"] == ["first"]
    site = course / "site"
    welcome = (site / "en" / "welcome.html").read_text("utf-8")
    assert 'data-key="first.std"' in welcome and "figures/first.summary.en.svg" in welcome
    assert 'href="../en/second.html"' in welcome  # the next page, placed after it
    assert (site / "static" / "style.css").stat().st_size > 1000  # the default theme's stylesheet


def test_init_refuses_a_folder_in_use_and_a_language_the_theme_lacks(tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    result = init(used)
    assert result.returncode == 1 and result.stderr.strip() == f"error: init {used}: not an empty folder; nothing " \
                                                               "was written"
    assert sorted(p.name for p in used.iterdir()) == ["notes.txt"]
    result = init(tmp_path / "ja", "--languages", "ja,en")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "the default theme has no interface strings for ja (it has en, zh)" in lines[0]
    assert not (tmp_path / "ja").exists()
    for odd in ("zh,zh", "zh,", ""):
        result = init(tmp_path / "twice", "--languages", odd)
        assert result.returncode == 1 and "name each language once" in result.stderr, (odd, result.stderr)
        assert not (tmp_path / "twice").exists()


@pytest.mark.slow
@pytest.mark.parametrize("languages", ["zh", "en,zh"])
def test_init_with_other_languages_builds_and_checks_at_once(tmp_path, languages):
    course = tmp_path / "c"
    assert init(course, "--languages", languages).returncode == 0
    result = check(course)
    assert result.returncode == 0, result.stdout + result.stderr
    first = languages.split(",")[0]
    assert (course / "site" / first / "welcome.html").is_file()
    page = (course / "site" / first / "welcome.html").read_text("utf-8")
    assert "figures/first.summary" in page
    # Its glossary and bibliography build too: a term, its glossary page, and a cited statement that quotes its
    # source and lists it under the page's references.
    assert 'data-term="standard-deviation"' in page and (course / "site" / first / "glossary.html").is_file()
    assert 'data-audit="cited"' in page and 'id="ref-numpy_standard_normal"' in page
    assert "Draw samples from a standard Normal distribution (mean=0, stdev=1)." in with_evidence(
        course / "site" / first / "welcome.html")  # quoted in its panel
    assert "1 cited" in result.stdout and "quote none" not in result.stdout


@pytest.mark.slow
def test_a_theme_file_may_not_lead_outside_the_course_and_the_default_theme(tmp_path):
    """A course's template linked to a file of the engine's repository that is not its theme is refused, as a
    link outside the course is."""
    course = tmp_path / "c"
    assert init(course).returncode == 0
    (course / "templates").mkdir()
    (course / "templates" / "page.html").symlink_to(ROOT / "Makefile")
    result = check(course)
    assert result.returncode == 1 and result.stderr.strip() == "error: templates/page.html: template 'page.html' " \
        "links to a file outside the course: refused", result.stderr
    (course / "templates" / "page.html").unlink()
    (course / "templates").rmdir()
    (course / "templates").write_text("not a folder")
    result = check(course)
    assert result.returncode == 1 and result.stderr.startswith("error: templates: a file, not a folder"), \
        result.stderr


@pytest.mark.slow
def test_a_course_overrides_the_default_theme_one_file_at_a_time(tmp_path):
    """A course with its own page template and stylesheet, and nothing else under templates/: those two are its
    own, every other template, string and static file is the default theme's; an edit to its own template
    rebuilds; a template error names the course's file and line."""
    course = tmp_path / "c"
    assert init(course).returncode == 0
    page = (ROOT / "templates" / "page.html").read_text("utf-8")
    assert "</main>" in page
    (course / "templates" / "static").mkdir(parents=True)
    (course / "templates" / "page.html").write_text(page.replace("</main>", "<p>own-theme-marker</p></main>", 1),
                                                    "utf-8")
    (course / "templates" / "static" / "style.css").write_text("body { color: #123456; }\n", "utf-8")
    assert check(course).returncode == 0
    site = course / "site"
    assert "own-theme-marker" in (site / "zh" / "welcome.html").read_text("utf-8")
    assert "own-theme-marker" not in (site / "parallel" / "en" / "welcome.html").read_text("utf-8")
    assert (site / "static" / "style.css").read_text("utf-8") == "body{color:#123456;}\n"
    assert sorted(p.name for p in (site / "static").iterdir()) == \
        sorted(p.name for p in (ROOT / "templates" / "static").iterdir() if not p.name.startswith("."))
    (course / "templates" / "page.html").write_text(page.replace("</main>", "{{ nope( }}</main>", 1), "utf-8")
    result = check(course)
    line = page[: page.index("</main>")].count("\n") + 1
    assert result.returncode == 1 and result.stderr.startswith(f"error: templates/page.html:{line}: template "
                                                               "syntax error"), result.stderr


@pytest.mark.slow
def test_a_course_template_may_extend_the_default_themes_template_of_the_same_name(tmp_path):
    """{% extends "theme/page.html" %}: the theme's page with one block changed. Extending "page.html" itself
    is one line that says how."""
    course = tmp_path / "c"
    assert init(course).returncode == 0
    (course / "templates").mkdir()
    own = course / "templates" / "page.html"
    own.write_text('{% extends "theme/page.html" %}\n{% block meta %}{{ super() }}<meta name="own" content="x">'
                   '{% endblock %}\n', "utf-8")
    assert check(course).returncode == 0
    welcome = (course / "site" / "en" / "welcome.html").read_text("utf-8")
    assert '<meta name="own" content="x">' in welcome and 'data-key="first.std"' in welcome
    own.write_text('{% extends "page.html" %}\n', "utf-8")
    result = check(course)
    assert result.returncode == 1 and result.stderr.strip() == (
        'error: templates/page.html:1: template error: it extends or includes itself; to build on the default '
        'theme\'s page.html, write {% extends "theme/page.html" %}'), result.stderr


def test_a_child_theme_changes_the_footer_by_one_block_and_a_string_by_one_key(tmp_path):
    """Themes by blocks: a course's base.html that extends the theme's and fills `footer` changes the footer
    of every page; a one-key i18n file changes that key and keeps the theme's others. A misspelt block or key
    would change nothing: each is one line at its place."""
    course = tmp_path / "c"
    assert init(course).returncode == 0
    (course / "templates" / "i18n").mkdir(parents=True)
    own = course / "templates" / "base.html"
    own.write_text('{% extends "theme/base.html" %}\n{% block footer %}<p>Made by the course</p>{% endblock %}\n',
                   "utf-8")
    (course / "templates" / "i18n" / "en.yaml").write_text("search: Find\n", "utf-8")
    assert check(course).returncode == 0
    welcome = (course / "site" / "en" / "welcome.html").read_text("utf-8")
    footer = welcome[welcome.index('<footer class="site-footer" id="page-end">'):welcome.index("</footer>")]
    assert "<p>Made by the course</p>" in footer and "Numbers on this page" not in footer
    theme = yaml.safe_load((ROOT / "templates" / "i18n" / "en.yaml").read_text("utf-8"))
    assert ">Find</a>" in welcome and f'<a class="skip" href="#main">{theme["skip"]}</a>' in welcome  # the others kept
    for blocks in ("head", "header", "footer", "page_end", "main", "title", "meta"):
        assert f"{{% block {blocks} %}}" in (ROOT / "templates" / "base.html").read_text("utf-8")
    own.write_text('{% extends "theme/base.html" %}\n\n{% block fotter %}<p>x</p>{% endblock %}\n', "utf-8")
    result = check(course)
    assert result.returncode == 1 and result.stderr.startswith(
        "error: templates/base.html:3: block 'fotter' is not a block of theme/base.html (did you mean 'footer'?): "
        "it would change nothing"), result.stderr
    own.unlink()
    (course / "templates" / "i18n" / "en.yaml").write_text("search: Find\nserch: Look\n", "utf-8")
    result = check(course)
    assert result.returncode == 1 and result.stderr.startswith(
        "error: templates/i18n/en.yaml:2: 'serch' is not an interface string of the theme (did you mean "
        "'search'?): it would change nothing"), result.stderr


@pytest.mark.slow  # a wheel built and installed, and four fresh Pythons
def test_the_installed_tool_makes_a_course_that_builds_and_checks_without_this_checkout(tmp_path):
    """`pip install` gives the `lessonkit` command; in an empty folder, `lessonkit init` makes a course that
    builds and passes --check --strict with only the installed package: its default theme, harness and math
    converter are package data, and the course folder is the current one. The checkout is not on the path."""
    import os
    import shutil

    source, wheels, target = tmp_path / "source", tmp_path / "wheels", tmp_path / "installed"
    # (A copy: setuptools writes build/ and *.egg-info beside the project it builds.)
    shutil.copytree(ROOT / "lessonkit", source / "lessonkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)], check=True,
                   cwd=tmp_path, capture_output=True)
    (wheel,) = wheels.glob("lessonkit-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("PYTHONSAFEPATH", None)

    def lessonkit(*args, cwd):
        return subprocess.run([str(target / "bin" / "lessonkit"), *args], capture_output=True, text=True, cwd=cwd,
                              env=env)

    where = subprocess.run([sys.executable, "-c", "import lessonkit; print(lessonkit.__path__[0])"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).resolve() == (target / "lessonkit").resolve()
    assert (target / "lessonkit" / "theme" / "base.html").is_file() and not (target / "lessonkit" / "theme").is_symlink()
    away = lessonkit("build", cwd=tmp_path)  # no course here, and none named
    assert away.returncode == 1 and away.stderr.startswith("error: no content/site.yaml in "), away.stderr
    made = lessonkit("init", "course", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    course = tmp_path / "course"
    checked = lessonkit("check", "--strict", "--no-search", "--no-validator", "--seeds", "2", cwd=course)
    assert checked.returncode == 0 and "check: no problems" in checked.stdout, checked.stderr
    assert (course / "site" / "en" / "welcome.html").is_file() and not (ROOT / "course").exists()
    again = lessonkit("build", "--strict", "--no-search", "--seeds", "2", cwd=course)
    assert again.returncode == 0 and "nothing changed" in again.stdout, again.stdout + again.stderr


def test_the_course_folder_is_root_else_build_pys_own_else_the_current_one(tmp_path, monkeypatch):
    from lessonkit.command import course_folder
    from lessonkit.errors import BuildError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(BuildError, match=r"no content/site.yaml in .*: run this in a course folder"):
        course_folder(None)
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "site.yaml").write_text("", "utf-8")
    assert course_folder(None) == tmp_path  # the lessonkit command, in a course folder
    assert course_folder(None, ROOT) == ROOT  # a course's own build.py builds its own course, wherever it is run
    assert course_folder(tmp_path / "x", ROOT) == tmp_path / "x"


def test_a_hint_is_written_for_the_command_typed_and_the_course_it_acts_on(tmp_path, monkeypatch, capsys):
    """"then run python build.py --mark-translated en/page.md", printed for a course that is not the current
    folder, would act on another course: the hint carries --root; from the course folder it does not, and the
    console script's hints say `lessonkit`."""
    from lessonkit import command

    root = make_course(tmp_path / "c")
    page = root / "content" / "zh" / "page.md"
    page.write_text(page.read_text("utf-8").replace("一页。", "一页，改过。"), "utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, prog, hint in ((elsewhere, None, f"python build.py --root {root} --mark-translated en/page.md"),
                            (root, None, "python build.py --mark-translated en/page.md"),
                            (root, "lessonkit", "lessonkit --mark-translated en/page.md")):
        monkeypatch.chdir(cwd)
        assert command.main(["--root", str(root), "--no-search", "--force", "-q"], prog=prog) == 0
        warning = next(line for line in capsys.readouterr().out.splitlines() if "translation is behind" in line)
        assert warning.endswith(f"update it, then run {hint}"), warning
