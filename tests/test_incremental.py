"""Incremental and repeated builds of a fixture course produce exactly what a clean build produces."""

import filecmp
import os
import subprocess
import sys

import pytest
from conftest import ROOT, append_to_page, build_here, edit, make_book, make_course, run_build, snapshot


def build(root, out, *args):
    return run_build("--out", out, "--seeds", "3", *args, root=root)


@pytest.fixture
def book(tmp_path):
    return make_book(tmp_path / "book", pages=4)


@pytest.mark.slow
def test_a_series_of_edits_builds_incrementally_what_a_clean_build_makes(book, tmp_path):
    out = tmp_path / "incremental"
    assert build(book, out).returncode == 0
    again = build(book, out)
    assert again.returncode == 0 and "nothing changed" in again.stdout

    steps = [
        ("content/zh/p001.md", "Text p001.", "Text p001, really."),  # one page's text
        ("content/en/p002.md", "title: Page 2", "title: Page 2 —"),  # a title: neighbours' links change
        ("templates/i18n/en.yaml", "exercise: Exercise", "exercise: Task"),  # interface strings: every English page
        ("experiments/tiny.py", '"n": 64', '"n": 65'),  # values and figures change
        ("templates/static/style.css", "--measure: 46rem;", "--measure: 47rem;"),  # an asset only
    ]
    for path, old, new in steps:
        edit(book, path, old, new)
        result = build(book, out)
        assert result.returncode == 0, (path, result.stderr)
        assert "rendered" in result.stdout
        clean = tmp_path / f"clean-{len(os.listdir(tmp_path))}"
        # --force ignores every cache: experiments, figures and pages are all made afresh.
        assert build(book, clean, "--force").returncode == 0
        assert snapshot(out) == snapshot(clean), f"after editing {path}"


@pytest.mark.slow
def test_the_edits_change_what_they_should(book, tmp_path):
    """The series above would pass on edits that changed nothing: each shows in the site."""
    out = tmp_path / "site"
    assert build(book, out).returncode == 0
    before = snapshot(out)
    edit(book, "templates/i18n/en.yaml", "exercise: Exercise", "exercise: Task")
    edit(book, "experiments/tiny.py", '"n": 64', '"n": 65')
    edit(book, "content/en/p002.md", "title: Page 2", "title: Page 2 —")
    assert build(book, out).returncode == 0
    after = snapshot(out)
    assert b"Task" in after["en/p000.html"] and b"Task" not in before["en/p000.html"]
    assert b'data-key="tiny.n" data-value="65"' in after["zh/p000.html"]
    assert after["figures/tiny.bars.en.svg"] != before["figures/tiny.bars.en.svg"]
    assert "Page 2 —".encode() in after["en/p001.html"] and "Page 2 —".encode() in after["en/p003.html"]
    assert "Page 2 —".encode() in after["en/p000.html"]  # no neighbour: the course's list of pages


@pytest.mark.slow
def test_an_edit_renders_only_the_pages_that_depend_on_it(book, tmp_path):
    out = tmp_path / "site"
    assert build(book, out).returncode == 0
    edit(book, "content/zh/p003.md", "Text p003.", "Text p003, again.")
    result = build(book, out)
    # The page itself, and its English twin, which is now a translation behind its source.
    assert "(2 rendered," in result.stdout, result.stdout


@pytest.mark.slow
def test_two_builds_of_the_same_commit_are_byte_identical(book, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert build(book, a, "--force").returncode == 0
    assert build(book, b, "--force").returncode == 0
    comparison = filecmp.dircmp(a, b)
    assert snapshot(a) == snapshot(b), comparison.report_full_closure()


@pytest.mark.slow
def test_a_cached_build_imports_neither_numpy_nor_matplotlib(book, tmp_path):
    out = tmp_path / "site"
    assert build(book, out).returncode == 0
    edit(book, "content/zh/p001.md", "Text p001.", "Text p001!")  # a real rebuild, all caches warm
    proc = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "build.py"), "--root", str(book),
                           "--out", str(out), "--seeds", "3", "--no-search"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "(1 rendered" in proc.stdout or "(2 rendered" in proc.stdout, proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "lessonkit.markdown.parser" in imported  # the edited page was rendered …
    assert not {"numpy", "matplotlib"} & imported  # … without loading the heavy libraries


@pytest.mark.slow
def test_an_edit_of_site_yaml_renders_every_page_again(tiny):
    """site.yaml is read by every page (the course's title in its header), also where no neighbour's link
    changes: a one-page course."""
    build_here(tiny, seeds=2)
    edit(tiny, "content/site.yaml", "zh: 小课", "zh: 新课")
    result, _ = build_here(tiny, seeds=2)
    assert result["rendered"] and "新课" in (tiny / "site" / "zh" / "page.html").read_text("utf-8")


def test_an_evidence_page_is_kept_with_its_page_and_made_again_when_its_file_changed(tiny):
    """A page's evidence page is written with it and kept with it; one removed or edited in the site is made
    again (with its page) on the next build."""
    build_here(tiny, seeds=2)
    evidence = tiny / "site" / "en" / "page.evidence.html"
    written = evidence.read_bytes()
    assert b'id="verification-summary"' in written
    result, _ = build_here(tiny, seeds=2)
    assert result is None and evidence.read_bytes() == written  # nothing changed: nothing done
    evidence.unlink()
    result, _ = build_here(tiny, seeds=2)
    assert result["rendered"] == 1 and evidence.read_bytes() == written
    evidence.write_bytes(written.replace(b"verification-summary", b"tampered"))
    (tiny / "site" / "zh" / "search.html").unlink()  # (a file fewer: the build runs; an edit alone is not looked for)
    result, _ = build_here(tiny, seeds=2)
    assert result["rendered"] == 1 and evidence.read_bytes() == written


def test_an_experiments_source_page_is_kept_until_what_it_shows_changes(tmp_path):
    """Source pages are kept by what makes them: a title of a page that shows the experiment, the experiment's
    code and the templates each make it again; a prose edit does not."""
    root = make_course(tmp_path / "c")
    source = root / "site/en/experiments/tiny.html"

    def built() -> str:
        result = run_build("--no-search", "--seeds", "2", "--out", root / "site", root=root)
        assert result.returncode == 0, result.stderr
        return source.read_text("utf-8")

    first = built()
    kept = (root / ".cache/source-pages/tiny.en.json").stat().st_mtime_ns
    append_to_page(root, "page", {"zh": "\n再一句。\n", "en": "\nOne more.\n"})
    assert built() == first and (root / ".cache/source-pages/tiny.en.json").stat().st_mtime_ns == kept
    page = root / "content/en/page.md"
    page.write_text(page.read_text("utf-8").replace("title: A tiny experiment", "title: A small experiment"), "utf-8")
    assert ">A small experiment</a>" in built()
    code = root / "experiments/tiny.py"
    code.write_text(code.read_text("utf-8").replace('NAME = "tiny"', '# a new line\nNAME = "tiny"'), "utf-8")
    assert "a new line" in built()
    template = root / "templates/experiment.html"
    template.write_text(template.read_text("utf-8").replace("<p>{{ s.run_it_yourself }}</p>",
                                                            "<p>{{ s.run_it_yourself }} (kept?)</p>"), "utf-8")
    assert "(kept?)" in built()
