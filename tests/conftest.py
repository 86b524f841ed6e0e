"""Shared fixtures: a built site, a scratch copy of the course, a local http server, Chromium."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))
from lessonkit.load.inputs import INPUTS  # noqa: E402

COURSE = INPUTS  # the course folders
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def with_evidence(page: Path) -> str:
    """A page's HTML followed by its evidence page's (its summary, audit list and panels), where it has one."""
    evidence = page.with_name(page.name.removesuffix(".html") + ".evidence.html")
    return page.read_text("utf-8") + (evidence.read_text("utf-8") if evidence.is_file() else "")


def stderr_lines(stderr: str) -> list[str]:
    """A build's error lines, without the notes that count the checks an error kept from being made."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("note: ")]


def run_build(*args, root: Path = ROOT, validator: bool = False, fresh: bool = False) -> subprocess.CompletedProcess:
    """python build.py … as an author runs it: its exit code, output and errors. It runs in this process
    (build.main, as the command line calls it: a process start and the engine's imports saved) unless `fresh`
    asks for a new Python, or the arguments need one: --serve blocks, --debug lets a traceback out, --pdf drives
    Playwright's sync API (refused inside the asyncio loop a browser test's worker runs), and --jobs must be
    free to fork (a build does not fork from a process with threads, and a test worker may have some). A check
    leaves out the W3C Nu validator (a Java run of ~6 s that judges the templates, which every fixture course
    shares) unless asked: the real course's check runs it, and test_build.py tests that it runs."""
    args = tuple(map(str, args))
    if not validator and {"--check", "--check-only"} & set(args):
        args += ("--no-validator",)
    command = [sys.executable, str(ROOT / "build.py"), "--root", str(root), *args]
    if fresh or {"--serve", "--debug", "--pdf", "--jobs"} & set(args):
        return subprocess.run(command, capture_output=True, text=True, cwd=root)
    return _in_process(command, root)


def _in_process(command: list[str], root: Path) -> subprocess.CompletedProcess:
    import contextlib
    import io
    import os
    import signal

    import build

    out, err = io.StringIO(), io.StringIO()
    handler, cwd, path = signal.getsignal(signal.SIGTERM), os.getcwd(), list(sys.path)
    try:
        os.chdir(root)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = build.main(command[2:])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(cwd)
        signal.signal(signal.SIGTERM, handler)
        sys.path[:] = path
    return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())


def measured(name: str, seed: int, root: Path = ROOT) -> dict:
    out = subprocess.run([sys.executable, str(root / "experiments" / f"{name}.py"), "--seed", str(seed), "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The real course, built once for the session, as its CI builds it (--frozen-only --strict): from its frozen
    results (results/), the course seed of each experiment run again to compare, and a result not frozen for
    today's code is an error; no translation behind its source, every translation keeping its source's blocks,
    and no warning."""
    out = tmp_path_factory.mktemp("site") / "site"
    result = run_build("--out", out, "--frozen-only", "--strict", fresh=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stdout, result.stdout
    return out


@pytest.fixture(scope="session")
def kitchen_site(tmp_path_factory) -> Path:
    """The kitchen-sink course (tests/kitchen.py), built once for the session with its search index."""
    import kitchen

    root = kitchen.make(tmp_path_factory.mktemp("kitchen") / "course")
    result = run_build("--out", root / "site", root=root)
    assert result.returncode == 0, result.stderr
    return root / "site"


@pytest.fixture
def course(tmp_path, site) -> Path:
    """A scratch copy of the course to break on purpose. It depends on `site` so that the
    project's .cache is warm: each copy then reuses experiments and figures instead of re-running them."""
    root = tmp_path / "course"
    for name in COURSE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    if (ROOT / ".cache").is_dir():
        shutil.copytree(ROOT / ".cache", root / ".cache")
    return root


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def http_server(folder: Path):
    """Serve a folder over http on 127.0.0.1 until the generator is closed; yields the address."""
    handler = functools.partial(_Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


@pytest.fixture(scope="session")
def server(site) -> str:
    """The built site over http on 127.0.0.1 (search and modules need http, not file://)."""
    yield from http_server(site)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright drives Debian's Chromium; Playwright's own download is not available."""
    return {**browser_type_launch_args, "executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS}


# --- counters for the browser checks of every page (tests/test_site_browser.py, test_course_browser.py) ----

SITE_CHECKS: dict = {"pages": set(), "values": 0, "claims": set(), "budgets": {}}


@pytest.fixture(scope="session")
def site_checks() -> dict:
    """What the browser checks saw: pages visited, shown values compared, claims, budgets per page."""
    return SITE_CHECKS


# Markers, from what a test uses: `make quick` runs the rest (the engine on fixture courses) after every edit.
BROWSER_FIXTURES = {"page", "browser", "context", "server_page", "kitchen_site"}
COURSE_FIXTURES = {"site", "course", "server", "site_checks"}
COURSE_FILES = {"test_course.py", "test_audit.py", "test_experiments.py", "test_experiments_ch3.py",
                "test_course_browser.py"}
SLOW_FILES = {"test_escaping.py", "test_fuzz.py", "test_machines.py", "test_cluster.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if used & COURSE_FIXTURES or item.path.name in COURSE_FILES:
            item.add_marker(pytest.mark.course)
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    checks = SITE_CHECKS
    if not checks["pages"] and not checks["budgets"]:
        return
    terminalreporter.write_line(f"site checks: {len(checks['pages'])} pages, {checks['values']} shown values, "
                                f"{len(checks['claims'])} claims checked in the browser")
    budgets = checks["budgets"]
    if budgets:
        def worst(field):
            rel = max(budgets, key=lambda r: budgets[r][field])
            return budgets[rel][field], rel
        (size, size_at), (cls, cls_at) = worst("bytes"), worst("cls")
        (panel, panel_at), (gz, gz_at) = worst("largest_panel"), worst("gzip")
        terminalreporter.write_line(f"site budgets ({len(budgets)} pages, largest): HTML outside panels + CSS "
                                    f"{size / 1000:.1f} KB ({size_at}), a panel {panel / 1000:.1f} KB ({panel_at}), "
                                    f"gzipped HTML + CSS {gz / 1000:.1f} KB ({gz_at}), CLS {cls:.4f} ({cls_at})")
        out = ROOT / "artifacts" / "budgets.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(dict(sorted(budgets.items())), indent=1) + "\n")


# --- small fixture courses for the engine's tests ---------------------------------------------------

TINY_EXPERIMENT = '''"""Tiny: the mean of a few Gaussian numbers, and what varies by seed.

Run it: python experiments/tiny.py [--seed N]
"""

import os
import sys

import harness
import numpy as np
from harness import Claim

NAME = "tiny"
PARAMS = {"n": 64}


def run(seed, *, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    return {
        "n": n,
        "mean": float(x.mean()),
        "spread": float(x.std()),
        "odd": seed % 2,
        "noise": harness.below(abs(float(x.sum() - x[::-1].sum())), 1e-9),
    }


CLAIMS = [
    Claim(id="spread", criterion="0.5 < spread < 1.5", text={"zh": "标准差接近 1", "en": "the spread is near 1"},
          shows=("spread", "noise", "n")),
    Claim(id="mean", criterion="abs(mean) < 0.6", text={"zh": "均值接近 0", "en": "the mean is near 0"},
          shows=("mean",)),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''

TINY_PAGES = {
    "zh": "---\ntitle: 小实验\ndescription: 一页。\n---\n\n## 均值 {#mean}\n\n"
          "{val}`tiny.n` 个数的均值 $\\bar{x}$ 是 {val}`tiny.mean`，标准差 {val}`tiny.spread`，两种求和之差{val}`tiny.noise`。\n",
    "en": "---\ntitle: A tiny experiment\ndescription: One page.\ntranslated_from: {digest}\n---\n\n"
          "## The mean {#mean}\n\n"
          "The mean $\\bar{x}$ of {val}`tiny.n` numbers is {val}`tiny.mean`, their spread {val}`tiny.spread`, and the two "
          "sums differ by {val}`tiny.noise`.\n",
}


def make_course(root: Path, experiment: str = TINY_EXPERIMENT, pages: dict | None = None,
                config: str = "") -> Path:
    """A one-page zh/en course with one experiment (`tiny`) on 2 seeds, the engine's templates and harness."""
    import hashlib

    pages = pages or TINY_PAGES
    (root / "content").mkdir(parents=True)
    seeds = "" if "seeds:" in config else "seeds: 2\n"  # a sweep all the same, and quick; a test may ask for more
    (root / "content" / "site.yaml").write_text(
        "title:\n  zh: 小课\n  en: A tiny course\nlanguages: [zh, en]\nexperiments: [tiny]\npages: [page]\n" + seeds
        + config, "utf-8")
    for lang in ("zh", "en"):
        (root / "content" / lang).mkdir()
    zh = pages["zh"]
    (root / "content" / "zh" / "page.md").write_text(zh, "utf-8")
    digest = hashlib.sha256(zh.encode("utf-8")).hexdigest()[:12]
    (root / "content" / "en" / "page.md").write_text(pages["en"].replace("{digest}", digest), "utf-8")
    (root / "experiments").mkdir()
    shutil.copy(ROOT / "experiments" / "harness.py", root / "experiments" / "harness.py")
    shutil.copy(ROOT / "lessonkit" / "criteria.py", root / "experiments" / "criteria.py")  # a run alone needs it
    (root / "experiments" / "tiny.py").write_text(experiment, "utf-8")
    (root / "figures").mkdir()
    shutil.copytree(ROOT / "templates", root / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    return root


# The tiny course's site.yaml with a second page, `more`, for course_from: the test writes its two languages.
TWO_PAGES = """-- content/site.yaml --
title:
  zh: 小课
  en: A tiny course
languages: [zh, en]
experiments: [tiny]
pages: [page, more]
seeds: 2
"""


def course_from(root: Path, files: str) -> Path:
    """A course written as one string, in the style of Hugo's integration tests: a line `-- path --` starts a
    file. Anything the string does not hold comes from the tiny course (make_course): its site.yaml, pages,
    experiment, harness and templates. `{digest:zh/page.md}` in a file is that page's translated_from digest."""
    import hashlib
    import re

    course = make_course(root)
    parts = re.split(r"^-- (\S+) --\n", files.lstrip("\n"), flags=re.M)
    written = dict(zip(parts[1::2], parts[2::2], strict=True))
    for rel, text in written.items():
        (course / rel).parent.mkdir(parents=True, exist_ok=True)
        (course / rel).write_text(text, "utf-8")
    for rel, text in written.items():
        def digest(m):
            return hashlib.sha256((course / "content" / m.group(1)).read_text("utf-8").encode()).hexdigest()[:12]
        (course / rel).write_text(re.sub(r"\{digest:([^}]+)\}", digest, text), "utf-8")
    return course


def build_here(root: Path, **options) -> tuple[dict, list[str]]:
    """Build a course in this process, as build.py would (without the search index unless asked): what the
    build returns and what it said. A failure raises its BuildError. Much quicker than a subprocess."""
    from lessonkit import pipeline

    said: list[str] = []
    options.setdefault("out", root / "site")
    options.setdefault("search", False)
    result = pipeline.build_if_changed(pipeline.Options(root=root, **options), say=said.append)
    return result, said


@pytest.fixture(scope="session")
def prebuilt(tmp_path_factory):
    """`prebuilt(name, make, *build_args)(dst)`: a fixture course made by `make(root)` and built once per test
    process, then copied to `dst` for each test with its site and cache, so that a test which breaks it builds
    only what the break touches instead of running the experiments again."""
    made: dict = {}

    def get(name: str, make, *build_args):
        if name not in made:
            root = make(tmp_path_factory.mktemp(name) / "course")
            result = run_build("--out", root / "site", *build_args, root=root)
            assert result.returncode == 0, result.stderr
            made[name] = root

        def copy(dst: Path) -> Path:
            shutil.copytree(made[name], dst, symlinks=True)
            return dst
        return copy

    return get


@pytest.fixture
def tiny(tmp_path) -> Path:
    return make_course(tmp_path / "tiny")


TINY_FIGURE = '''"""Figures of the tiny course."""

import matplotlib.pyplot as plt

LABELS = {"zh": "种子", "en": "seed"}


def bars(values, lang):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar([0, 1], [values["tiny.mean"], values["tiny.spread"]], color="C0")
    ax.set_xlabel(LABELS[lang])
    return fig
'''

FIGURE_BLOCK = "\n::: figure tiny.bars Two bars: the mean and the spread.\nThe mean and the spread.\n:::\n"


def with_figure(root: Path, recipe: str = TINY_FIGURE, page: str = "page") -> Path:
    """Give a tiny course a figure on a page (and keep the translation current)."""
    (root / "figures" / "tiny.py").write_text(recipe, "utf-8")
    return append_to_page(root, page, {"zh": FIGURE_BLOCK, "en": FIGURE_BLOCK})


def append_to_page(root: Path, page: str, texts: dict) -> Path:
    """Add Markdown to the end of a page in each language, keeping the translation current."""
    import hashlib

    zh = root / "content" / "zh" / f"{page}.md"
    zh.write_text(zh.read_text("utf-8") + texts["zh"], "utf-8")
    digest = hashlib.sha256(zh.read_text("utf-8").encode("utf-8")).hexdigest()[:12]
    en = root / "content" / "en" / f"{page}.md"
    text = en.read_text("utf-8")
    en.write_text(text.replace(text.split("translated_from: ")[1][:12], digest) + texts["en"], "utf-8")
    return root


def make_big_course(root: Path, pages: int, languages=("zh", "en")) -> Path:
    """A course of `pages` pages per language, each with headings, math, values, a table and code."""
    import hashlib

    course = make_course(root)
    config = course / "content" / "site.yaml"
    names = [f"p{i:03d}" for i in range(pages)]
    config.write_text(config.read_text("utf-8").replace("pages: [page]", "pages: [" + ", ".join(names) + "]"),
                      "utf-8")
    for lang in languages:
        (course / "content" / lang / "page.md").unlink(missing_ok=True)
    for i, name in enumerate(names):
        body = (f"## Part {i} {{#part}}\n\nThe mean {{val}}`tiny.mean` of {{val}}`tiny.n` draws, $x_{i}^2 + \\frac{{a}}{{b}}$.\n\n"
                f"| k | v |\n|---|---|\n| a | b |\n\n```python\nvalue = {i} * 2\n```\n\n### More {{#more}}\n\nText {name}.\n")
        zh = f"---\ntitle: 第 {i} 页\n---\n\n{body}"
        (course / "content" / "zh" / f"{name}.md").write_text(zh, "utf-8")
        digest = hashlib.sha256(zh.encode("utf-8")).hexdigest()[:12]
        for lang in languages[1:]:
            (course / "content" / lang / f"{name}.md").write_text(
                f"---\ntitle: Page {i}\ntranslated_from: {digest}\n---\n\n{body}", "utf-8")
    return course


GLOSSARY = """- id: mean
  zh: 均值
  en: mean
  zh_def: 一组数之和除以个数。
  en_def: The sum of a set of numbers divided by how many there are.
- id: spread
  zh: 标准差
  en: spread
  zh_def: 数离均值有多远的典型距离。
  en_def: How far the numbers typically lie from their mean.
"""

REFERENCES = """gauss1809:
  authors: "C. F. Gauss"
  year: 1809
  title: "Theoria motus corporum coelestium"
  url: "https://example.org/gauss"
"""


def with_data_files(root: Path, glossary: str = GLOSSARY, references: str = REFERENCES) -> Path:
    """Give a tiny course a glossary (content/glossary.yaml) and sources (content/references.yaml)."""
    (root / "content" / "glossary.yaml").write_text(glossary, "utf-8")
    (root / "content" / "references.yaml").write_text(references, "utf-8")
    return root


def edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> int:
    """Replace text in a course file; return the 1-based line where the first replacement starts."""
    path = root / rel
    text = path.read_text("utf-8")
    assert old in text, (rel, old)
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, count), "utf-8")
    return line


def snapshot(site: Path) -> dict:
    """Every file of a folder, relative path → bytes."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


EXERCISE = {
    "zh": "\n:::: exercise\n求这些数的均值 $\\bar{x}$。\n\n::: hint\n先把它们加起来。\n:::\n::::\n",
    "en": "\n:::: exercise\nFind the mean $\\bar{x}$ of the numbers.\n\n::: hint\nAdd them up first.\n:::\n::::\n",
}


def make_book(root: Path, pages: int = 4) -> Path:
    """A few pages per language (make_big_course), the first with a figure and an exercise with a hint."""
    course = make_big_course(root, pages)
    with_figure(course, page="p000")
    return append_to_page(course, "p000", EXERCISE)


def moved_texts(site: Path, root: Path) -> list[str]:
    """Every shown value of a site whose text changes when its floats move as another machine's would."""
    from lessonkit import markup
    from lessonkit.load.strings import load_strings
    from lessonkit.numbers import show, variants

    manifest = json.loads((site / "lessonkit.json").read_text("utf-8"))
    strings = load_strings(root, manifest["languages"])
    by_tag = {strings[lang]["tag"]: lang for lang in strings}
    out, seen = [], 0
    for path in sorted(site.rglob("*.html")):
        for shown in markup.scan(path.read_text("utf-8")).values:
            words = strings[by_tag.get(shown.lang, next(iter(strings)))]
            value, spec, bound, tiny = shown.number(), shown.format, shown.parsed_bound(), shown.tiny
            seen += 1
            if show(value, spec, words, bound, tiny) != shown.text.strip():
                out.append(f"{path.name} {shown.key}: the page's attributes do not give {shown.text!r}")
            for moved in variants(value, tiny):
                if show(moved, spec, words, bound, tiny) != shown.text.strip():
                    out.append(f"{path.relative_to(site)} {shown.key}: {shown.text!r} becomes "
                               f"{show(moved, spec, words, bound, tiny)!r} at {moved!r}")
    assert seen, "no shown value was found"
    return out
