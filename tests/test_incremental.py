"""Incremental and repeated builds produce exactly what a clean build produces."""

import filecmp
import os

from conftest import run_build
from test_bad_input import edit, snapshot


def test_a_series_of_edits_builds_incrementally_what_a_clean_build_makes(course, tmp_path):
    out = tmp_path / "incremental"
    assert run_build("--out", out, root=course).returncode == 0
    again = run_build("--out", out, root=course)
    assert again.returncode == 0 and "nothing changed" in again.stdout

    steps = [
        ("content/zh/lesson-l5.md", "一切正常。", "一切正常，真的。"),  # one page's text
        ("content/en/chapter-3/3-6.md", "title:", "title: Summary —"),  # a title: neighbours' links change
        ("templates/i18n/en.yaml", "Exercise", "Task"),  # interface strings: every English page
        ("experiments/multires.py", '"x_scale": 0.3', '"x_scale": 0.31'),  # values and figures change
        ("templates/static/style.css", "--measure: 46rem;", "--measure: 47rem;"),  # an asset only
    ]
    for path, old, new in steps:
        edit(course, path, old, new)
        result = run_build("--out", out, root=course)
        assert result.returncode == 0, (path, result.stderr)
        assert "rendered" in result.stdout
        clean = tmp_path / f"clean-{len(os.listdir(tmp_path))}"
        # --force ignores every cache: experiments, figures and pages are all made afresh.
        assert run_build("--out", clean, "--force", root=course).returncode == 0
        assert snapshot(out) == snapshot(clean), f"after editing {path}"


def test_an_edit_renders_only_the_pages_that_depend_on_it(course, tmp_path):
    out = tmp_path / "site"
    assert run_build("--out", out, root=course).returncode == 0
    edit(course, "content/zh/chapter-3/3-7.md", "让我们继续这场旅程。", "让我们继续这场旅程吧。")
    result = run_build("--out", out, root=course)
    # The page itself, and its English twin, which is now a translation behind its source.
    assert "(2 rendered," in result.stdout, result.stdout


def test_two_builds_of_the_same_commit_are_byte_identical(course, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert run_build("--out", a, "--force", root=course).returncode == 0
    assert run_build("--out", b, "--force", root=course).returncode == 0
    comparison = filecmp.dircmp(a, b)
    assert snapshot(a) == snapshot(b), comparison.report_full_closure()


def test_a_cached_build_imports_neither_numpy_nor_matplotlib(course, tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    out = tmp_path / "site"
    assert run_build("--out", out, root=course).returncode == 0
    edit(course, "content/zh/lesson-l5.md", "一切正常。", "一切正常！")  # a real rebuild, all caches warm
    proc = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "build.py"), "--root", str(course),
                           "--out", str(out), "--no-search"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "(1 rendered" in proc.stdout or "(2 rendered" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "lessonkit.markdown" in imported  # the edited page was rendered …
    assert not {"numpy", "matplotlib"} & imported  # … without loading the heavy libraries
