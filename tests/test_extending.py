"""Plugins (lessonkit/plugins.py): a package outside the engine adds syntax, a page hook and an output,
chosen by name in site.yaml; search and PDF are outputs through the same hook."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import append_to_page, build_here, edit, make_course, run_build, snapshot

from lessonkit import plugins

PLUGIN = Path(__file__).resolve().parent / "plugin_kbd"
KEYS = {"zh": "\n按 ++Ctrl++ 再按 ++C++ 复制。\n", "en": "\nPress ++Ctrl++ then ++C++ to copy.\n"}


@pytest.fixture
def installed(monkeypatch):
    """The example plugin, installed as a package is: its folder on the path, its entry point declared."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    yield
    import sys

    sys.modules.pop("lessonkit_kbd", None)


def kbd_course(root: Path) -> Path:
    course = append_to_page(make_course(root), "page", KEYS)
    (course / "content" / "site.yaml").write_text((course / "content" / "site.yaml").read_text("utf-8")
                                                  + "plugins: [kbd]\n", "utf-8")
    return course


def test_a_plugin_outside_the_engine_adds_syntax_a_page_hook_and_an_output(tmp_path, installed):
    assert "kbd" in plugins.installed()
    course = kbd_course(tmp_path / "c")
    result = run_build("--out", course / "site", root=course)
    assert result.returncode == 0, result.stderr
    assert "kbd: listed 2 pages" in result.stdout
    site = course / "site"
    for rel, lang in (("zh/page.html", "zh"), ("en/page.html", "en"), ("parallel/en/page.html", "en")):
        html = (site / rel).read_text("utf-8")
        assert html.count('<meta name="kbd-page"') == 1 and f'content="{lang}"' in html, rel
    en = (site / "en" / "page.html").read_text("utf-8")
    assert "<kbd>Ctrl</kbd> then <kbd>C</kbd>" in en and "++" not in en
    assert (site / "kbd-pages.json").read_text("utf-8") == '["zh/page.html", "en/page.html"]'
    assert (site / "pagefind").is_dir()  # the built-in search output ran beside it
    check = run_build("--out", course / "site", "--check", root=course)
    assert check.returncode == 0, check.stdout + check.stderr


def test_without_the_plugin_named_its_syntax_is_text_and_nothing_else_changes(tmp_path, installed):
    course = append_to_page(make_course(tmp_path / "c"), "page", KEYS)
    build_here(course)
    en = (course / "site" / "en" / "page.html").read_text("utf-8")
    assert "++Ctrl++" in en and "kbd-page" not in en and not (course / "site" / "kbd-pages.json").exists()


def test_an_edit_of_the_plugin_builds_the_pages_again(tmp_path, monkeypatch):
    """The plugin's files are part of the build's inputs: a changed page hook is not a no-op."""
    copy = tmp_path / "plugin"
    import shutil

    shutil.copytree(PLUGIN, copy)
    monkeypatch.syspath_prepend(str(copy))
    course = kbd_course(tmp_path / "c")
    build_here(course)
    before = snapshot(course / "site")
    edit(copy, "lessonkit_kbd.py", 'name="kbd-page"', 'name="kbd-lang"')
    import sys

    sys.modules.pop("lessonkit_kbd", None)
    result, _ = build_here(course)
    assert result is not None, "the build was skipped as a no-op"
    after = snapshot(course / "site")
    assert b'name="kbd-lang"' in after["en/page.html"] and after["en/page.html"] != before["en/page.html"]
    sys.modules.pop("lessonkit_kbd", None)


def test_a_plugin_not_installed_is_one_line_at_its_site_yaml_line(tmp_path):
    course = make_course(tmp_path / "c")
    build_here(course)
    before = snapshot(course / "site")
    (course / "content" / "site.yaml").write_text((course / "content" / "site.yaml").read_text("utf-8")
                                                  + "plugins: [nosuch]\n", "utf-8")
    result = run_build("--out", course / "site", root=course)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    line = (course / "content" / "site.yaml").read_text("utf-8").splitlines().index("plugins: [nosuch]") + 1
    assert lines[0].startswith(f"error: content/site.yaml:{line}: plugin 'nosuch' is not installed"), lines[0]
    assert snapshot(course / "site") == before


@pytest.mark.parametrize("hook, broken", [
    ("page", "return html.replace("),
    ("output", "(folder / \"kbd-pages.json\")"),
    ("markdown", "md.inline.ruler.before("),
])
def test_a_plugin_that_fails_is_one_line_naming_it_and_the_site_is_kept(tmp_path, monkeypatch, hook, broken):
    copy = tmp_path / "plugin"
    import shutil
    import sys

    shutil.copytree(PLUGIN, copy)
    monkeypatch.syspath_prepend(str(copy))
    sys.modules.pop("lessonkit_kbd", None)
    course = kbd_course(tmp_path / "c")
    build_here(course)
    before = snapshot(course / "site")
    edit(copy, "lessonkit_kbd.py", broken, "1 / 0\n        " + broken)
    sys.modules.pop("lessonkit_kbd", None)
    result = run_build("--out", course / "site", root=course)
    sys.modules.pop("lessonkit_kbd", None)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"plugin 'kbd', {hook}(): ZeroDivisionError" in lines[0], lines[0]
    assert snapshot(course / "site") == before
