"""Experiments a reader can run: the site publishes each one's files and its source as a page, and the files,
downloaded into a folder of their own and run with nothing but numpy, print what the site shows."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from conftest import build_here, make_course

from lessonkit import markup


def only_numpy(tmp_path: Path) -> dict:
    """An environment whose Python sees numpy and the standard library, nothing else (python -S: no site-packages)."""
    folder = tmp_path / "only-numpy"
    folder.mkdir()
    installed = Path(numpy.__file__).parent
    for name in ("numpy", "numpy.libs"):  # numpy.libs: the BLAS a numpy wheel brings
        if (installed.parent / name).exists():
            (folder / name).symlink_to(installed.parent / name)
    return {"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}


def download(site: Path, page: str, into: Path) -> list[str]:
    """Every file the experiment's source page offers, fetched as a reader's browser would, into one folder."""
    text = (site / page).read_text("utf-8")
    names = re.findall(r'<a href="\.\./\.\./experiments/([\w.]+\.py)" download>', text)
    into.mkdir()
    for name in names:
        (into / name).write_bytes((site / "experiments" / name).read_bytes())
    return names


def shown(site: Path, page: str) -> dict:
    """key -> value of every shown value on a page that is not a bound (a bound's digits are noise)."""
    out = {}
    for value in markup.scan((site / page).read_text("utf-8")).values:
        if value.bound is None and "[" not in value.key:
            out[value.key] = value.number()
    return out


def agree(a, b) -> bool:
    """As a frozen value and a run on another machine must: floats to a relative 1e-9, the rest exactly."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)
    return a == b


@pytest.mark.slow
def test_a_downloaded_experiment_run_alone_prints_what_the_site_shows_for_its_seed(tmp_path):
    root = make_course(tmp_path / "c")
    build_here(root, seed=7, seeds=1)
    site = root / "site"
    names = download(site, "en/experiments/tiny.html", tmp_path / "reader")
    assert names == ["tiny.py", "criteria.py", "harness.py"]
    env = only_numpy(tmp_path)
    done = subprocess.run([sys.executable, "-S", "tiny.py", "--seed", "7", "--json"], cwd=tmp_path / "reader",
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    values, page = json.loads(done.stdout), shown(site, "en/page.html")
    assert page and all(agree(values[key], value) for key, value in page.items()), (page, values)
    verdicts = subprocess.run([sys.executable, "-S", "tiny.py", "--seed", "7"], cwd=tmp_path / "reader",
                              capture_output=True, text=True, env=env, timeout=60).stdout
    rows = markup.scan((site / "en/page.evidence.html").read_text("utf-8")).rows
    assert rows
    for row in rows:
        assert f"  {'PASS' if row.passed else 'FAIL'}  {row.claim}:" in verdicts
    # Nothing but numpy was there: jinja2 (a dependency of the build) is not importable in that environment.
    probe = subprocess.run([sys.executable, "-S", "-c", "import jinja2"], capture_output=True, env=env)
    assert probe.returncode != 0


def test_panels_link_to_the_source_lines_on_the_experiment_page(tmp_path):
    root = make_course(tmp_path / "c")
    build_here(root)
    site = root / "site"
    for lang in ("zh", "en"):
        page = (site / lang / "page.evidence.html").read_text("utf-8")
        links = re.findall(r'href="\.\./(\w+/experiments/tiny\.html)#L(\d+)"', page)
        assert links and all(url == f"{lang}/experiments/tiny.html" for url, _ in links)
        source = (site / lang / "experiments" / "tiny.html").read_text("utf-8")
        lines = (root / "experiments" / "tiny.py").read_text("utf-8").splitlines()
        for _, number in links:
            assert f'id="L{number}"' in source
        assert f'id="L{len(lines)}"' in source and f'id="L{len(lines) + 1}"' not in source
        assert f'lang="{"zh-CN" if lang == "zh" else "en"}"' in source
    # A panel points at the first line that stores a value it shows (the spread claim shows spread, noise, n).
    stored = min(i for i, line in enumerate(lines, 1) if line.strip().startswith(('"spread":', '"noise":', '"n":')))
    assert str(stored) in {n for _, n in links}


def test_the_course_publishes_every_experiment_it_shows_and_each_runs_alone(site, tmp_path):
    env = only_numpy(tmp_path)
    config = (Path(__file__).parent.parent / "content" / "site.yaml").read_text("utf-8")
    experiments = re.search(r"^experiments: \[(.*)\]", config, re.M).group(1).split(", ")
    for name in experiments:
        for lang in ("zh", "en"):
            assert (site / lang / "experiments" / f"{name}.html").is_file()
    # The quickest one is run as a reader would; its values are the ones the lesson shows.
    names = download(site, "en/experiments/multires.html", tmp_path / "reader")
    assert "harness.py" in names and "criteria.py" in names
    done = subprocess.run([sys.executable, "-S", "multires.py", "--seed", "0", "--json"], cwd=tmp_path / "reader",
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout)
    page = {k: v for k, v in shown(site, "en/lesson-l5.html").items() if k.startswith("multires.")}
    # What the build adds (claims held over the seeds) is not the experiment's: every other value is.
    derived = {k for k in page if k.startswith("multires.claims.")}
    assert set(page) - derived <= set(values) and len(set(page) - derived) >= 5
    assert all(agree(values[key], page[key]) for key in set(page) - derived), (page, values)
