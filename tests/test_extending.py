"""Plugins (lessonkit/load/plugins.py): a package outside the engine adds syntax, a page hook and an output,
chosen by name in site.yaml; search and PDF are outputs through the same hook."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import append_to_page, build_here, edit, make_course, run_build, snapshot

from lessonkit.load import plugins

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


def _fresh_build(course: Path, plugin: Path):
    """build.py in a new Python, the plugin on its path (as an install would put it)."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = {**os.environ, "PYTHONPATH": str(plugin)}
    return subprocess.run([sys.executable, str(ROOT / "build.py"), "--root", str(course), "--no-search"],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("named", ["by its entry point", "by a name of its own"])
def test_an_edit_of_the_plugin_builds_the_pages_again(tmp_path, named):
    """The plugin's files are part of the build's inputs: a changed page hook is not a no-op, whatever name the
    plugin gives itself."""
    import shutil

    copy = tmp_path / "plugin"
    shutil.copytree(PLUGIN, copy)
    if named != "by its entry point":
        edit(copy, "lessonkit_kbd.py", "class Plugin:\n", 'class Plugin:\n    name = "keyboard keys"\n\n')
    course = kbd_course(tmp_path / "c")
    assert _fresh_build(course, copy).returncode == 0
    before = snapshot(course / "site")
    edit(copy, "lessonkit_kbd.py", 'name="kbd-page"', 'name="kbd-lang"')
    result = _fresh_build(course, copy)
    assert result.returncode == 0 and "up to date" not in result.stdout, result.stdout + result.stderr
    after = snapshot(course / "site")
    assert b'name="kbd-lang"' in after["en/page.html"] and after["en/page.html"] != before["en/page.html"]
    assert b'name="kbd-lang"' in after["parallel/en/page.html"]


def _built_with_a_copy(tmp_path: Path, monkeypatch):
    """A copy of the example plugin installed in this process (nothing of it loaded yet), and a course built
    with it: (the plugin's folder, the course, its site's files)."""
    import shutil
    import sys

    copy = tmp_path / "plugin"
    shutil.copytree(PLUGIN, copy)
    monkeypatch.syspath_prepend(str(copy))
    monkeypatch.setattr(plugins, "_IMPORTED", {})
    sys.modules.pop("lessonkit_kbd", None)
    course = kbd_course(tmp_path / "c")
    build_here(course)
    return copy, course, snapshot(course / "site")


def test_a_process_that_loaded_a_plugin_refuses_to_build_with_it_once_it_changed(tmp_path, monkeypatch):
    """A preview keeps the plugin's code it started with: once the files change, its pages would be keyed by code
    that did not make them. It says so instead, in one line."""
    import sys

    copy, course, before = _built_with_a_copy(tmp_path, monkeypatch)
    edit(copy, "lessonkit_kbd.py", 'name="kbd-page"', 'name="kbd-lang"')
    result = run_build("--out", course / "site", root=course)
    sys.modules.pop("lessonkit_kbd", None)
    assert result.returncode == 1 and "plugin 'kbd' changed since this process loaded it" in result.stderr, \
        result.stdout + result.stderr
    assert snapshot(course / "site") == before


def test_a_course_cannot_ship_a_plugin_of_its_own(tmp_path, monkeypatch):
    """A package inside the course folder (or the current one, which `python -m` puts on the path) is not an
    installed plugin, though Python could import it."""
    import shutil

    course = kbd_course(tmp_path / "c")
    for item in PLUGIN.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy)(item, course / item.name)
    monkeypatch.syspath_prepend(str(course))
    assert "kbd" not in plugins.installed(course)
    result = run_build("--out", course / "site", root=course)
    assert result.returncode == 1 and "plugin 'kbd' is not installed" in result.stderr, result.stderr
    assert not (course / "site" / "kbd-pages.json").exists()


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


@pytest.mark.parametrize("broken, old, new", [
    ("page", "return html.replace(", "1 / 0\n        return html.replace("),
    ("output", "(folder / \"kbd-pages.json\")", "1 / 0\n        (folder / \"kbd-pages.json\")"),
    ("markdown", "md.inline.ruler.before(", "1 / 0\n        md.inline.ruler.before("),
    ("no hooks", "class Plugin:\n", "class Plugin:\n    pass\n\n\nclass Unused:\n"),
    ("import", "import json\n", "import json\nimport no_such_module\n"),
])
def test_a_plugin_that_fails_is_one_line_naming_it_and_the_site_is_kept(tmp_path, monkeypatch, broken, old, new):
    import sys

    copy, course, before = _built_with_a_copy(tmp_path, monkeypatch)
    edit(copy, "lessonkit_kbd.py", old, new)
    plugins._IMPORTED.clear()  # (a new process, as the command line is)
    sys.modules.pop("lessonkit_kbd", None)
    result = run_build("--out", course / "site", root=course)
    sys.modules.pop("lessonkit_kbd", None)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    said = {"page": "plugin 'kbd', page() on ",
            "output": "plugin 'kbd', output(): ZeroDivisionError", "markdown": "plugin 'kbd', markdown(): ZeroDivisionError",
            "no hooks": "plugin 'kbd': lessonkit_kbd:Plugin has none of the hooks markdown, page, output",
            "import": "plugin 'kbd' cannot be loaded: ModuleNotFoundError"}[broken]
    assert said in lines[0] and ("ZeroDivisionError" in lines[0]) == (broken in ("page", "output", "markdown")), lines[0]
    if broken in ("no hooks", "import"):
        assert lines[0].startswith("error: content/site.yaml:"), lines[0]
    assert snapshot(course / "site") == before


DATACLASS_PLUGIN = '''from dataclasses import dataclass, field


@dataclass
class Plugin:
    seen: list = field(default_factory=list)

    def page(self, html, page):
        return html.replace("</head>", '<meta name="kbd-page" content="dc"></head>', 1)
'''


@pytest.mark.parametrize("layout", ["a namespace package", "a dataclass"])
def test_a_plugin_of_another_shape_is_keyed_by_its_files(tmp_path, layout):
    """A namespace package (no __init__.py) and an unhashable object are plugins too: each builds, an edit of its
    file builds the pages again, and Python's bytecode beside it is not an edit."""
    folder = tmp_path / "plugin"
    (folder / "lk_shapes-1.0.dist-info").mkdir(parents=True)
    module = "kbdns.kbd" if layout == "a namespace package" else "lk_dc"
    (folder / "lk_shapes-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: lk-shapes\nVersion: 1.0\n")
    (folder / "lk_shapes-1.0.dist-info" / "entry_points.txt").write_text(f"[lessonkit.plugins]\nkbd = {module}:Plugin\n")
    source = folder / (module.replace(".", "/") + ".py")
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(DATACLASS_PLUGIN, "utf-8")
    course = kbd_course(tmp_path / "c")
    first = _fresh_build(course, folder)
    assert first.returncode == 0, first.stderr
    assert b'content="dc"' in snapshot(course / "site")["en/page.html"]
    (source.parent / "__pycache__").mkdir(exist_ok=True)
    (source.parent / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"bytecode")
    again = _fresh_build(course, folder)
    assert again.returncode == 0 and "up to date" in again.stdout + again.stderr, again.stdout + again.stderr
    edit(source.parent, source.name, 'content="dc"', 'content="dc2"')
    third = _fresh_build(course, folder)
    assert third.returncode == 0, third.stderr
    assert b'content="dc2"' in snapshot(course / "site")["en/page.html"]
