"""Theme partials (lessonkit/load/parts.py): the HTML each Markdown feature writes comes from templates/parts/,
which a course overrides file by file; what the checks read stays the engine's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import build_here, make_course, run_build

from lessonkit import markup
from lessonkit.errors import BuildError
from lessonkit.load import theme

VALUE = """{#- the default's, with a class of the course's own -#}
<span class="value mine" {{ attrs }}><span class="num">{{ shown }}</span></span>
"""


def own_partial(root: Path, name: str, text: str) -> Path:
    """The tiny course with a templates/ that holds only parts/<name>.html: the rest is the default theme's."""
    course = make_course(root)
    shutil.rmtree(course / "templates")
    (course / "templates" / "parts").mkdir(parents=True)
    (course / "templates" / "parts" / f"{name}.html").write_text(text, "utf-8")
    return course


@pytest.mark.slow
def test_a_course_overrides_one_partial_and_keeps_the_rest_of_the_theme(tmp_path):
    course = own_partial(tmp_path / "c", "value", VALUE)
    build_here(course)
    html = (course / "site" / "en" / "page.html").read_text("utf-8")
    scan = markup.scan(html)
    assert {v.key for v in scan.values} == {"tiny.n", "tiny.mean", "tiny.spread", "tiny.noise"}
    assert html.count('class="value mine"') == len(scan.values) > 0
    assert 'class="anchor"' in html  # the default theme's heading partial, and its page template
    check = run_build("--check", root=course)
    assert check.returncode == 0, check.stdout + check.stderr


def test_an_edit_of_a_partial_renders_the_pages_again(tmp_path):
    course = own_partial(tmp_path / "c", "value", VALUE)
    build_here(course)
    (course / "templates" / "parts" / "value.html").write_text(VALUE.replace("mine", "yours"), "utf-8")
    result, _ = build_here(course)
    assert result["rendered"] == 2
    assert 'class="value yours"' in (course / "site" / "zh" / "page.html").read_text("utf-8")


@pytest.mark.slow
def test_a_partial_that_drops_what_the_checks_read_fails_the_check(tmp_path):
    """The data-* attributes come made: a partial that leaves them out shows numbers no check can trace."""
    course = own_partial(tmp_path / "c", "value", '<span class="value">{{ shown }}</span>\n')
    build_here(course)
    check = run_build("--check", root=course)
    assert check.returncode != 0
    said = check.stdout + check.stderr
    for lang in ("zh", "en"):
        assert f"{lang}/page.html: value tiny.mean is written 1 time(s) in content/{lang}/page.md but marked 0" in said


@pytest.mark.parametrize("text, line", [("{% if %}\n", 1), ("<b>\n{{ nothing_given }}</b>\n", 2)])
def test_a_broken_partial_is_one_error_at_its_line_and_the_site_stays(tmp_path, text, line):
    course = own_partial(tmp_path / "c", "heading_anchor", '<a class="anchor" href="#{{ id }}">#</a>\n')
    build_here(course)
    before = (course / "site" / "en" / "page.html").read_bytes()
    (course / "templates" / "parts" / "heading_anchor.html").write_text(text, "utf-8")
    result = run_build(root=course)
    assert result.returncode != 0
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: templates/parts/heading_anchor.html:{line}:"), \
        result.stderr
    assert (course / "site" / "en" / "page.html").read_bytes() == before


def test_every_partial_of_the_theme_says_what_it_is_given():
    """A theme author reads at the top of each partial what it receives."""
    found = theme.listing(Path("/nonexistent"), "parts")
    assert {"value.html", "claim_status.html", "block.html", "figure.html", "table.html", "caption_label.html",
            "audit_mark.html", "term_tip.html", "equation.html", "xref.html", "heading_anchor.html",
            "code.html"} <= set(found)
    for name, path in found.items():
        text = path.read_text("utf-8")
        assert text.startswith("{#") and "Given:" in text.split("#}", 1)[0], name


def test_a_link_out_of_the_course_is_refused_for_a_partial_too(tmp_path):
    from lessonkit.load.parts import Parts

    course = own_partial(tmp_path / "c", "xref", "x\n")
    outside = tmp_path / "secret.html"
    outside.write_text("secret\n", "utf-8")
    (course / "templates" / "parts" / "xref.html").unlink()
    (course / "templates" / "parts" / "xref.html").symlink_to(outside)
    with pytest.raises(BuildError, match="outside the course"):
        Parts(course)("xref", href="#a", text="A", strings={})


@pytest.mark.parametrize("text", [
    "{{ cycler.__init__.__globals__.os.system('touch ../pwned') }}\n",
    "{{ lipsum.__globals__['os'].popen('id').read() }}\n",
    "{% for i in range(10**12) %}x{% endfor %}\n",
])
def test_a_partial_is_sandboxed_it_reaches_no_python_and_no_endless_range(tmp_path, text):
    course = own_partial(tmp_path / "c", "heading_anchor", '<a class="anchor" href="#{{ id }}">#</a>\n')
    build_here(course)
    before = (course / "site" / "en" / "page.html").read_bytes()
    (course / "templates" / "parts" / "heading_anchor.html").write_text(text, "utf-8")
    result = run_build(root=course)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: templates/parts/heading_anchor.html:1:"), result.stderr
    assert not (tmp_path / "pwned").exists() and "uid=" not in result.stdout + result.stderr
    assert (course / "site" / "en" / "page.html").read_bytes() == before
