"""Frozen results (results/NAME.json): used when the code that made them is unchanged, checked, never trusted."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest
from conftest import build_here, edit, make_course, run_build, snapshot

from lessonkit.errors import BuildError
from lessonkit.measure import frozen


def course(tmp_path, seeds: int = 4):
    return make_course(tmp_path / "c", config=f"seeds: {seeds}\n")


def frozen_file(root):
    return root / "results" / "tiny.json"


def rewrite(root, seed: int, change) -> None:
    """Change seed's frozen report and give it a matching sha256, as a careful hand would."""
    path = frozen_file(root)
    data = json.loads(path.read_text("utf-8"))
    entry = data["seeds"][str(seed)]
    change(entry["report"])
    entry["sha256"] = hashlib.sha256(json.dumps(entry["report"], sort_keys=True, ensure_ascii=False)
                                     .encode()).hexdigest()
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), "utf-8")


def fresh(root):
    """The course as a clean clone has it: no cache, no site."""
    shutil.rmtree(root / ".cache", ignore_errors=True)
    shutil.rmtree(root / "site", ignore_errors=True)


def test_freeze_writes_every_seed_with_what_produced_it_and_twice_the_same_bytes(tmp_path):
    root = course(tmp_path)
    _, said = build_here(root, freeze=True)
    data = json.loads(frozen_file(root).read_text("utf-8"))
    assert sorted(data["seeds"], key=int) == ["0", "1", "2", "3"]
    assert set(data["produced_by"]) == {"code", "runner", "python", "numpy", "kernels"}
    assert data["hash"] == frozen.identity(data["produced_by"])
    assert "seconds" not in data["seeds"]["0"]["report"]  # a run time would make every freeze a diff
    assert any(line.startswith("froze: results/tiny.json (4 seeds") for line in said)
    first = frozen_file(root).read_bytes()
    fresh(root)
    _, said = build_here(root, freeze=True, force=True)  # measured anew: the same file, untouched
    assert frozen_file(root).read_bytes() == first
    assert any(line.startswith("unchanged: results/tiny.json") for line in said)
    # One value per line: a changed value is a one-line diff.
    assert re.search(r'^     "mean": -?[0-9.e-]+,$', first.decode(), re.M)


def test_a_frozen_course_on_a_clean_clone_runs_only_the_course_seed_and_shows_the_same_numbers(tmp_path):
    root = course(tmp_path)
    result, _ = build_here(root)
    unfrozen = snapshot(root / "site")
    build_here(root, freeze=True, force=True)
    fresh(root)
    result, said = build_here(root)
    assert result["runs"] == 1  # the course seed, measured again to compare
    assert f"tiny: frozen at {json.loads(frozen_file(root).read_text())['hash']}, 4 seeds; seed 0 measured again: " \
           f"agrees" in said
    now = snapshot(root / "site")
    page = now["en/page.html"].decode()
    assert 'data-frozen="' in page and "frozen in results/tiny.json at" in page
    assert "结果冻结于 results/tiny.json" in now["zh/page.html"].decode()
    values = re.compile(r'data-key="[^"]+"[^>]*data-value="[^"]+"')
    assert values.findall(page) == values.findall(unfrozen["en/page.html"].decode())
    assert values.findall(page)
    fresh(root)
    assert build_here(root, verify=0)[0]["runs"] == 0
    fresh(root)
    assert build_here(root, verify=3)[0]["runs"] == 3


def test_values_edited_with_their_hash_kept_are_caught_by_the_run_again(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    before = snapshot(root / "site")
    rewrite(root, 0, lambda r: r["values"].update(mean=r["values"]["mean"] + 0.01))
    fresh_cache = root / ".cache"
    shutil.rmtree(fresh_cache)
    with pytest.raises(BuildError) as caught:
        build_here(root)
    message = str(caught.value)
    assert "experiment tiny, seed 0 run again disagrees with results/tiny.json: mean: frozen" in message
    assert "relative tolerance 1e-09" in message and "--refresh tiny" in message
    assert caught.value.path.as_posix() == "experiments/tiny.py"
    assert snapshot(root / "site") == before  # nothing of it was published


def test_a_claim_that_fails_on_frozen_values_stops_the_build(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    rewrite(root, 2, lambda r: r["values"].update(spread=9.0))  # seed 2 is not run again: only its claims judge it
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert "claim tiny.spread" in str(caught.value) and "2" in str(caught.value)


def test_a_frozen_file_edited_by_hand_is_an_error_at_its_line(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    line = edit(root, "results/tiny.json", '"n": 64', '"n": 65')
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert "does not match its sha256: edited by hand? python build.py --refresh tiny" in str(caught.value)
    assert caught.value.path.as_posix() == "results/tiny.json" and 0 < caught.value.line < line
    frozen_file(root).write_text("{", "utf-8")
    with pytest.raises(BuildError, match="not valid JSON"):
        build_here(root)


def test_changed_code_is_run_instead_and_is_an_error_with_frozen_only(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    edit(root, "experiments/tiny.py", '"n": 64', '"n": 48')
    with pytest.raises(BuildError) as caught:
        build_here(root, frozen_only=True)
    assert "--frozen-only: results/tiny.json was frozen before its code changed; python build.py --refresh tiny" \
           in str(caught.value)
    result, said = build_here(root)
    assert result["runs"] == 4  # every seed
    assert any("warning: results/tiny.json was frozen before its code changed: running tiny instead" in line
               for line in said)
    _, said = build_here(root, refresh=("tiny",))
    assert any(line.startswith("froze: results/tiny.json") for line in said)
    assert build_here(root, frozen_only=True, force=True)[0]["runs"] == 1
    with pytest.raises(BuildError, match="--refresh nope: not an experiment of this course"):
        build_here(root, refresh=("nope",))


def test_frozen_only_refuses_an_unfrozen_experiment_and_seeds_beyond_the_frozen_ones(tmp_path):
    root = course(tmp_path, seeds=2)
    with pytest.raises(BuildError, match=r"--frozen-only: experiment tiny has no frozen results \(results/tiny.json\)"):
        build_here(root, frozen_only=True)
    build_here(root, freeze=True)
    with pytest.raises(BuildError, match=r"would run on seed\(s\) 2, which results/tiny.json does not hold"):
        build_here(root, frozen_only=True, seeds=3)
    result, said = build_here(root, seeds=3)  # without it: the third seed runs, the others are frozen
    assert result["runs"] == 1  # seed 2 (seed 0, run again at the freeze, is in the cache)
    assert any(line.startswith("tiny: frozen at ") and ", 2 seeds; seed 0 measured again" in line for line in said)


def test_the_command_line_says_one_line_and_exits_1(tmp_path):
    root = course(tmp_path, seeds=2)
    done = run_build("--frozen-only", "--no-search", root=root)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: experiments/tiny.py: --frozen-only: experiment tiny has no frozen results (results/tiny.json): "
        "python build.py --freeze"]
    done = run_build("--verify", "-1", root=root)
    assert done.returncode == 2 and "a whole number ≥ 0" in done.stderr


def test_tolerance_is_relative_and_an_experiment_may_declare_more():
    a = {"values": {"x": 1.0, "xs": [1.0, 2.0], "k": 3, "b": 1e-20}, "bounds": {"b": ["<", 1e-12]}}
    near = {"values": {"x": 1.0 + 5e-10, "xs": [1.0, 2.0 * (1 + 5e-10)], "k": 3, "b": 3e-17},
            "bounds": {"b": ["<", 1e-12]}}
    assert frozen.differences(a, near, {}) == []
    far = {**near, "values": {**near["values"], "x": 1.0 + 2e-9, "k": 4}}
    assert frozen.differences(a, far, {}) == [
        "k: frozen 3, now 4 (relative tolerance 1e-09)", "x: frozen 1.0, now 1.000000002 (relative tolerance 1e-09)"]
    assert frozen.differences(a, far, {"x": 1e-6, "k": 0.5}) == ["k: frozen 3, now 4 (relative tolerance 0.5)"]
    assert frozen.tolerance_of("h4.loss", {"h*.loss": 1e-6}) == 1e-6
    gone = {**near, "values": {k: v for k, v in near["values"].items() if k != "xs"}}
    assert frozen.differences(a, gone, {}) == ["xs: no longer measured"]
