#!/usr/bin/env python3
"""Benchmark lessonkit's build: a synthetic bilingual course of N pages, and the real site.

    .venv/bin/python bench/bench.py                      # N = 20 and 200, 5 runs each
    .venv/bin/python bench/bench.py --pages 20 200 --runs 5
    .venv/bin/python bench/bench.py --quick              # N = 5 and 20, 3 runs: a smoke test

Standard library only. Every build is a fresh `build.py -q` subprocess timed with
time.perf_counter() around it; numbers are medians in milliseconds. The builds run
with the repository's .venv/bin/python when there is one (else this interpreter).
See bench/README.md for what each scenario means.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build.py"
VENV_PY = REPO / ".venv" / "bin" / "python"
PY = str(VENV_PY) if VENV_PY.is_file() else sys.executable

SCENARIOS = [
    ("cold", "cold build (no .cache, no output)"),
    ("noop", "no-op rebuild"),
    ("page", "one-page text edit"),
    ("exp", "experiment edit (comment: cache key only)"),
    ("expval", "experiment edit (values change: figures redrawn)"),
]


class BenchError(Exception):
    pass


# -- the synthetic course -------------------------------------------------------

EXPERIMENT = '''"""Synthetic benchmark experiment: a damped curve, a noisy copy and a few scalars.

Run it: python experiments/synth.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "synth"

# bench-edit: 0

PARAMS = {
    "n": 16,
    "decay": 0.8,
    "scale": 2.0,
    "noise": 0.01,
}


def run(seed, *, n, decay, scale, noise):
    rng = np.random.default_rng(seed)
    xs = np.arange(n)
    curve = scale * decay ** xs
    noisy = curve * (1 + noise * rng.standard_normal(n))
    return {
        "n": n,
        "curve": curve,
        "noisy": noisy,
        "first": curve[0],
        "last": curve[-1],
        "ratio": curve[-1] / curve[0],
        "mean": float(np.mean(noisy)),
    }


CLAIMS = [
    Claim(
        id="decay",
        criterion="decreasing(curve) and ratio < 0.1",
        text={"zh": "曲线单调下降，末值不到首值的十分之一",
              "en": "the curve falls monotonically, to under a tenth of its first value"},
        shows=("first", "last", "ratio"),
    ),
    Claim(
        id="positive",
        criterion="min(noisy) > 0",
        text={"zh": "加噪后的曲线仍然全为正", "en": "the noisy curve stays positive"},
        shows=("mean",),
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''

FIGURES = '''"""Figures of the synthetic benchmark course."""

import matplotlib.pyplot as plt
import numpy as np

LABELS = {
    "zh": {"x": "步数", "y": "数值", "clean": "原始曲线", "noisy": "加噪曲线"},
    "en": {"x": "step", "y": "value", "clean": "clean curve", "noisy": "noisy curve"},
}


def curve(values, lang):
    t = LABELS[lang]
    ys = values["synth.curve"]
    fig, ax = plt.subplots(figsize=(5, 2.5))
    ax.plot(np.arange(len(ys)), ys, "o-", color="C0", markersize=3)
    # (the caption quotes the first and last values: the figure marks them)
    ax.plot([0, len(ys) - 1], [values["synth.first"], values["synth.last"]], "s", color="C3", markersize=5)
    ax.set_xlabel(t["x"])
    ax.set_ylabel(t["y"])
    ax.grid(True, axis="y")
    return fig


def noisy(values, lang):
    t = LABELS[lang]
    clean, noisy = values["synth.curve"], values["synth.noisy"]
    xs = np.arange(len(clean))
    fig, ax = plt.subplots(figsize=(5, 2.5))
    ax.semilogy(xs, clean, "-", color="C0", label=t["clean"])
    ax.semilogy(xs, noisy, "s", color="C1", markersize=3, label=t["noisy"])
    ax.axhline(values["synth.mean"], color="C2", linewidth=0.8)  # the mean its caption quotes
    ax.set_xlabel(t["x"])
    ax.set_ylabel(t["y"])
    ax.legend(loc="upper right")
    return fig
'''

ZH_PAGE = """---
title: 第 {i} 课：合成基准页面
description: 第 {i} 个合成页面，用来测量构建的耗时：标题、表格、代码、公式、数值与图。
---

## 1. 引言 {{#intro}}

这是第 [{i}]{{.literal}} 个合成页面。它的正文模仿一节真实的课：几段中文说明、一张表格、一段代码、行内公式 $q \\cdot k = x W^Q W^{{K\\top}} x^\\top$ 与独立公式，以及若干由实验测得的数值。实验给出的首值是 {{val}}`synth.first`，末值是 {{val}}`synth.last`，两者之比为 {{val}}`synth.ratio`。

我们关心的不是这些数字本身，而是构建一个有很多页面的课程需要多长时间：每一页都要解析 Markdown、把 LaTeX 转成 MathML、填入数值并渲染模板。第 [{i}]{{.literal}} 页与其他页面结构相同，但文字略有不同，这样每一页的内容都不完全一样。

$$ \\mathrm{{softmax}}(z)_i = \\frac{{e^{{z_i}}}}{{\\sum_{{j=1}}^{{n}} e^{{z_j}}}} $$

## 2. 数据与代码 {{#data}}

下表列出实验的几个数值（共 {{val}}`synth.n` 个点，加噪曲线的均值为 {{val}}`synth.mean`）：

| 名称 | 数值 | 说明 |
|---|---|---|
| 首值 | {{val}}`synth.first` | 曲线的第一个点 |
| 末值 | {{val}}`synth.last` | 曲线的最后一个点 |
| 比值 | {{val}}`synth.ratio:.3f` | 末值除以首值 |
| 均值 | {{val}}`synth.mean` | 加噪曲线的平均 |

```python
import numpy as np

def curve(n, decay=0.8, scale=2.0):
    xs = np.arange(n)
    return scale * decay ** xs  # 第 {i} 页的代码块
```

::: figure synth.curve 一条从左上向右下单调下降的曲线，共 16 个点。
曲线从 {{val}}`synth.first` 下降到 {{val}}`synth.last`：每一步乘以同一个衰减因子 $\\gamma < 1$。
:::
{extra_zh}
## 3. 小结 {{#summary}}

第 [{i}]{{.literal}} 页到此结束。设 $\\|W\\| \\le \\sigma_{{\\max}}$，则 $n$ 层之后的范数不超过 $\\sigma_{{\\max}}^n$；本实验的 {{val}}`synth.claims.passed` 条断言全部通过。

$$ \\|W_n \\cdots W_1 x\\| \\le \\prod_{{l=1}}^{{n}} \\|W_l\\| \\, \\|x\\| $$
"""

ZH_EXTRA = """
加噪之后的曲线仍然贴着原始曲线（对数纵轴）：

::: figure synth.noisy 对数纵轴上的一条直线与散布在它两侧的方点。
原始曲线与加噪曲线；加噪曲线的均值为 {val}`synth.mean`。
:::
"""

EN_PAGE = """---
title: "Lesson {i}: a synthetic benchmark page"
description: Synthetic page number {i}, for timing the build — headings, a table, code, math, values and a figure.
translated_from: {digest}
---

## 1. Introduction {{#intro}}

This is synthetic page number [{i}]{{.literal}}. Its body imitates a real lesson: a few paragraphs of prose, a table, a code block, inline math $q \\cdot k = x W^Q W^{{K\\top}} x^\\top$ and display math, and several values measured by the experiment. The first value is {{val}}`synth.first`, the last is {{val}}`synth.last`, and their ratio is {{val}}`synth.ratio`.

What we care about is not the numbers themselves but how long a course with many pages takes to build: every page has its Markdown parsed, its LaTeX turned into MathML, its values filled in and its template rendered. Page [{i}]{{.literal}} has the same structure as the others with slightly different words, so that no two pages are identical.

$$ \\mathrm{{softmax}}(z)_i = \\frac{{e^{{z_i}}}}{{\\sum_{{j=1}}^{{n}} e^{{z_j}}}} $$

## 2. Data and code {{#data}}

The table lists a few of the experiment's values ({{val}}`synth.n` points; the noisy curve's mean is {{val}}`synth.mean`):

| name | value | meaning |
|---|---|---|
| first | {{val}}`synth.first` | the curve's first point |
| last | {{val}}`synth.last` | the curve's last point |
| ratio | {{val}}`synth.ratio:.3f` | last over first |
| mean | {{val}}`synth.mean` | the noisy curve's average |

```python
import numpy as np

def curve(n, decay=0.8, scale=2.0):
    xs = np.arange(n)
    return scale * decay ** xs  # the code block of page {i}
```

::: figure synth.curve A curve falling monotonically from the top left to the bottom right, 16 points.
The curve falls from {{val}}`synth.first` to {{val}}`synth.last`: every step multiplies by the same decay factor $\\gamma < 1$.
:::
{extra_en}
## 3. Summary {{#summary}}

That is the end of page [{i}]{{.literal}}. If $\\|W\\| \\le \\sigma_{{\\max}}$, the norm after $n$ layers is at most $\\sigma_{{\\max}}^n$; all {{val}}`synth.claims.passed` of this experiment's claims pass.

$$ \\|W_n \\cdots W_1 x\\| \\le \\prod_{{l=1}}^{{n}} \\|W_l\\| \\, \\|x\\| $$
"""

EN_EXTRA = """
The noisy curve stays close to the clean one (logarithmic axis):

::: figure synth.noisy A straight line on a logarithmic axis with square dots scattered on both sides of it.
The clean and the noisy curve; the noisy curve's mean is {val}`synth.mean`.
:::
"""


def digest(text: str) -> str:
    """As lessonkit.load.texts.digest: the first 12 hex digits of the SHA-256 of the decoded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def slug(i: int) -> str:
    return f"page-{i:03d}"


def make_course(root: Path, n: int) -> None:
    """A synthetic course of n pages per language in root (content/, experiments/, figures/, templates/)."""
    for sub in ("content/zh", "content/en", "experiments", "figures"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "templates", root / "templates", dirs_exist_ok=True)
    shutil.copy2(REPO / "experiments" / "harness.py", root / "experiments" / "harness.py")
    shutil.copy2(REPO / "lessonkit" / "criteria.py", root / "experiments" / "criteria.py")
    (root / "experiments" / "synth.py").write_text(EXPERIMENT, "utf-8")
    (root / "figures" / "synth.py").write_text(FIGURES, "utf-8")
    pages = "\n".join(f"  - {slug(i)}" for i in range(1, n + 1))
    (root / "content" / "site.yaml").write_text(
        "title:\n  zh: 合成基准课程\n  en: Synthetic benchmark course\n"
        "description:\n  zh: 用来测量构建耗时的合成课程。\n  en: A synthetic course for timing the build.\n"
        f"languages: [zh, en]\nsource_language: zh\nseed: 0\nexperiments: [synth]\npages:\n{pages}\n", "utf-8")
    for i in range(1, n + 1):
        second = i % 3 == 0  # every third page also shows the second figure
        zh = ZH_PAGE.format(i=i, extra_zh=ZH_EXTRA if second else "")
        en = EN_PAGE.format(i=i, digest=digest(zh), extra_en=EN_EXTRA if second else "")
        # newline="" keeps LF on every platform, so the digest matches what the build reads.
        with open(root / "content" / "zh" / f"{slug(i)}.md", "w", encoding="utf-8", newline="") as f:
            f.write(zh)
        with open(root / "content" / "en" / f"{slug(i)}.md", "w", encoding="utf-8", newline="") as f:
            f.write(en)


# -- running and timing ---------------------------------------------------------

def run_build(root: Path, out: Path, quiet: bool = True, extra=()) -> tuple[float, str]:
    """One build.py subprocess: (wall seconds, stdout). Raises BenchError when it fails."""
    cmd = [PY, str(BUILD), "--root", str(root), "--out", str(out), *extra]
    if quiet:
        cmd.append("-q")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise BenchError(f"build of {root} failed (rc {proc.returncode}): " + " | ".join(tail))
    return wall, proc.stdout


_SECONDS = re.compile(r"^built .*, ([\d.]+) s$", re.M)


def inner_seconds(stdout: str) -> float | None:
    """The time build() itself reports (without interpreter start-up and imports of build.py)."""
    m = _SECONDS.search(stdout)
    return float(m.group(1)) if m else None


def time_cmd(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def wipe(root: Path, out: Path) -> None:
    shutil.rmtree(root / ".cache", ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)


def append_line(path: Path, line: str) -> str:
    """Append a sentence to a page; return the original text for reverting."""
    original = path.read_bytes().decode("utf-8")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(original.rstrip("\n") + "\n\n" + line + "\n")
    return original


def restore(path: Path, original: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(original)


def bench_course(n: int, runs: int, tmp: Path, log) -> dict:
    """Time every scenario on a synthetic course of n pages per language: {scenario: [seconds]}."""
    root, out = tmp / f"course-{n}", tmp / f"site-{n}"
    make_course(root, n)
    t = {k: [] for k, _ in SCENARIOS}
    inner = {k: [] for k, _ in SCENARIOS}

    def timed(key):
        wall, stdout = run_build(root, out)
        t[key].append(wall)
        s = inner_seconds(stdout)
        if s is not None:
            inner[key].append(s)

    # A first, verbose build: it must succeed, and it must not warn (stale translations …).
    _, stdout = run_build(root, out, quiet=False)
    warnings = [ln for ln in stdout.splitlines() if ln.startswith("warning:")]
    html = sorted(out.rglob("*.html"))
    pages = [p for p in html if p.relative_to(out).parts[0] in ("zh", "en") and p.name != "search.html"
             and p.relative_to(out).parts[1] != "experiments"  # (the experiment's source pages)
             and not p.name.endswith(".evidence.html")]  # (and each page's evidence page)
    side_by_side = list((out / "parallel").rglob("*.html")) if (out / "parallel").is_dir() else []
    if len(pages) != 2 * n or len(side_by_side) != n:
        raise BenchError(f"N={n}: expected {2 * n} page files and {n} side-by-side pages, the build wrote "
                         f"{len(pages)} and {len(side_by_side)}")
    svgs = sorted(p.name for p in (out / "figures").glob("*.svg")) if (out / "figures").is_dir() else []
    log(f"  N={n}: course ready ({len(html)} HTML files, {len(svgs)} figures, "
        f"{len(warnings)} warning(s)), timing {runs} run(s) per scenario")
    for w in warnings[:3]:
        log(f"    {w}")

    # Round-robin: every run does each scenario once, so a drift in machine load spreads over all of them.
    exp = root / "experiments" / "synth.py"
    source = exp.read_text("utf-8")
    try:
        for r in range(runs):
            wipe(root, out)
            timed("cold")
            timed("noop")
            page = root / "content" / "zh" / f"{slug(r % n + 1)}.md"
            original = append_line(page, f"这是第 {r + 1} 次编辑时追加的一句话，用来测量只改一页时的重建耗时。")
            try:
                timed("page")
            finally:
                restore(page, original)
            exp.write_text(source.replace("# bench-edit: 0", f"# bench-edit: {r + 1}"), "utf-8")
            timed("exp")
            exp.write_text(source.replace('"scale": 2.0,', f'"scale": {2.0 + (r + 1) / 1000},'), "utf-8")
            timed("expval")
            exp.write_text(source, "utf-8")
    finally:
        exp.write_text(source, "utf-8")

    result = {"times": t, "inner": inner, "warnings": len(warnings)}
    if CHECK:
        run_build(root, out)  # back to the unedited course
        t0 = time.perf_counter()
        proc = subprocess.run([PY, str(BUILD), "--root", str(root), "--out", str(out), "--check-only"],
                              capture_output=True, text=True, cwd=root)
        result["check"] = (time.perf_counter() - t0, proc.returncode,
                           [ln for ln in proc.stderr.splitlines() if ln.strip()])
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return result


def copy_real_course(dest: Path) -> str:
    """The repository's course as it is in the working tree, copied into dest."""
    for name in ("content", "experiments", "figures", "templates", ".cache"):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return "working tree"


def copy_head_course(dest: Path) -> str:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD", "content", "experiments", "figures",
                              "templates"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    if (REPO / ".cache").is_dir():
        shutil.copytree(REPO / ".cache", dest / ".cache")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    return f"git HEAD {head} (the working tree did not build)"


def first_source_page(root: Path) -> Path | None:
    """The first page listed in site.yaml, in the source language (no YAML parser needed: a best guess)."""
    text = (root / "content" / "site.yaml").read_text("utf-8")
    m = re.search(r"^source_language:\s*(\w+)", text, re.M)
    lang = m.group(1) if m else "zh"
    after = text.split("pages:", 1)[-1]
    for ln in after.splitlines():
        m = re.match(r"\s*-\s*['\"]?([^'\"#\s]+)", ln)
        if m and (root / "content" / lang / f"{m.group(1)}.md").is_file():
            return root / "content" / lang / f"{m.group(1)}.md"
    pages = sorted((root / "content" / lang).rglob("*.md"))
    return pages[0] if pages else None


def bench_real(runs: int, tmp: Path, log) -> dict:
    root, out = tmp / "real", tmp / "real-site"
    root.mkdir()
    origin = copy_real_course(root)
    try:
        run_build(root, out)  # warm-up: fills the copied .cache where it lacks entries
    except BenchError as exc:
        log(f"  real site: the working tree does not build: {exc}")
        origin = copy_head_course(root)
        run_build(root, out)
    html = len(list(out.rglob("*.html")))
    log(f"  real site ({origin}): {html} HTML files")
    # Cold builds: every experiment over the course's seeds (20), on all cores and one at a time.
    cold = {"all": [], "serial": []}
    for _ in range(max(1, runs // 2)):
        for mode, extra in (("all", ()), ("serial", ("--jobs", "1"))):
            wipe(root, out)
            cold[mode].append(run_build(root, out, extra=extra)[0])
    noop = [run_build(root, out)[0] for _ in range(runs)]
    page = first_source_page(root)
    edit = []
    for r in range(runs):
        original = append_line(page, f"这是第 {r + 1} 次编辑时追加的一句话。")
        try:
            edit.append(run_build(root, out)[0])
        finally:
            restore(page, original)
    # The same edit without the search index: Pagefind re-indexes the whole site on every build.
    quick = tmp / "real-site-nosearch"
    run_build(root, quick, extra=("--no-search",))
    edit_nosearch = []
    for r in range(runs):
        original = append_line(page, f"这是第 {r + 1} 次编辑时追加的一句话。")
        try:
            edit_nosearch.append(run_build(root, quick, extra=("--no-search",))[0])
        finally:
            restore(page, original)
    for folder in (root, out, quick):
        shutil.rmtree(folder, ignore_errors=True)
    return {"origin": origin, "html": html, "page": str(page.relative_to(root)), "noop": noop, "page_edit": edit,
            "page_edit_nosearch": edit_nosearch, "cold": cold}


# -- report -----------------------------------------------------------------------

def ms(seconds) -> str:
    return f"{seconds * 1000:.0f}"


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def report(ns, results, baseline, real, total):
    print()
    print(f"machine: {platform.platform()}; {platform.machine()}; os.cpu_count()={os.cpu_count()}; bytecode cached; "
          f"python {platform.python_version()} ({PY})")
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
          + f"; at the start: {LOAD_START}")
    print(f"baseline `python -c \"import jinja2, markdown_it\"`: {ms(med(baseline))} ms (median of {len(baseline)})")
    print()
    width = max(len(label) for _, label in SCENARIOS)
    head = f"{'median wall ms':<{width}}" + "".join(f"{'N=' + str(n):>16}" for n in ns)
    if len(ns) >= 2:
        head += f"{'ms/page':>10}{'fixed ms':>10}"
    print(head)
    for key, label in SCENARIOS:
        row = f"{label:<{width}}"
        meds = [med(results[n]["times"][key]) for n in ns]
        for n, m in zip(ns, meds, strict=True):
            inner = med(results[n]["inner"][key])
            row += f"{ms(m) + ' (' + ms(inner) + ')':>16}"
        if len(ns) >= 2:
            slope = (meds[-1] - meds[0]) / (ns[-1] - ns[0])
            row += f"{slope * 1000:>10.1f}{ms(meds[0] - slope * ns[0]):>10}"
        print(row)
    print("(in parentheses: the time build() itself reports, without interpreter start-up and imports;"
          " ms/page: slope between the smallest and largest N, per page per language = one zh + one en"
          " page; fixed: the intercept)")
    if len(ns) >= 2:
        meds = [med(results[n]["times"]["cold"]) for n in ns]
        slope = (meds[-1] - meds[0]) / (ns[-1] - ns[0])
        print(f"cold build: {slope * 1000:.1f} ms per page pair ({slope * 500:.1f} ms per rendered page), "
              f"fixed cost {ms(meds[0] - slope * ns[0])} ms = {(meds[0] - slope * ns[0]) / med(baseline):.1f}x baseline")
    for n in ns:
        c = results[n].get("check")
        if c:
            status = "no problems" if c[1] == 0 else f"rc {c[1]}: " + " | ".join(c[2][:3])
            print(f"check-only N={n}: {ms(c[0])} ms, {status}")
    if real:
        b = med(baseline)
        print()
        print(f"real site ({real['origin']}, {real['html']} HTML files; edited {real['page']}):")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(f"  cold build, 20-seed sweep, all {cores} cores   {med(real['cold']['all']):6.2f} s "
              f"(median of {len(real['cold']['all'])})")
        print(f"  cold build, 20-seed sweep, --jobs 1  {med(real['cold']['serial']):6.2f} s "
              f"({med(real['cold']['serial']) / med(real['cold']['all']):.2f}x the parallel build)")
        print(f"  no-op rebuild     {ms(med(real['noop'])):>6} ms = {med(real['noop']) / b:.2f}x baseline")
        print(f"  one-page edit     {ms(med(real['page_edit'])):>6} ms = {med(real['page_edit']) / b:.1f}x baseline")
        print(f"  one-page edit, --no-search {ms(med(real['page_edit_nosearch'])):>6} ms = "
              f"{med(real['page_edit_nosearch']) / b:.1f}x baseline")
    print(f"\ntotal bench time: {total:.0f} s")


CHECK = True
LOAD_START = ""


def main(argv=None) -> int:
    global CHECK, LOAD_START
    LOAD_START = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pages", type=int, nargs="+", metavar="N", help="pages per language (default: 20 200)")
    p.add_argument("--runs", type=int, help="runs per scenario, medians reported (default: 5)")
    p.add_argument("--quick", action="store_true", help="smoke test: N = 5 and 20, 3 runs")
    p.add_argument("--no-real", action="store_true", help="skip the real site (the repository's own course)")
    p.add_argument("--no-check", action="store_true", help="skip the one `--check-only` run per N")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--peers", action="store_true", help="also build a plain corpus with Hugo and MkDocs "
                   "(installed by `make peers`) and print the ratios")
    p.add_argument("--scale", action="store_true", help="lessonkit alone on the plain corpus at 200, 1000 and "
                   "2000 pages per language: ms per page and peak memory")
    args = p.parse_args(argv)
    # Builds run as on an author's machine, which caches the engine's bytecode; a machine that turns the
    # cache off would time Python compiling lessonkit on every run, not lessonkit.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    ns = sorted(set(args.pages or ([5, 20] if args.quick else [20, 200])))
    runs = args.runs or (3 if args.quick else 5)
    CHECK = not args.no_check
    if any(n < 1 for n in ns) or runs < 1:
        p.error("N and --runs must be at least 1")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="lessonkit-bench-"))
    code = 0
    try:
        log(f"bench in {tmp} with {PY}: N = {ns}, {runs} run(s)")
        baseline = [time_cmd([PY, "-c", "import jinja2, markdown_it"]) for _ in range(runs + 1)][1:]
        results = {}
        for n in ns:
            results[n] = bench_course(n, runs, tmp, log)
        real = None
        if not args.no_real:
            try:
                real = bench_real(runs, tmp, log)
            except (BenchError, subprocess.CalledProcessError) as exc:
                log(f"  real site: skipped: {exc}")
                code = 1
        report(ns, results, baseline, real, time.perf_counter() - start)
        if args.peers:
            import peers

            n = max(ns)
            found = peers.bench(tmp / "peers", n, runs, PY, BUILD, (ZH_PAGE, EN_PAGE, digest, slug), log)
            peers.report(found, n, med(baseline))
        if args.scale:
            import peers

            peers.report_scale(peers.scale(tmp / "scale", PY, BUILD, (ZH_PAGE, EN_PAGE, digest, slug), log))
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        code = 1
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
