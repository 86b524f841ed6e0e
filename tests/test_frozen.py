"""Frozen results (results/NAME.json): used when the code that made them is unchanged, checked, never trusted."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest
from conftest import build_here, edit, make_course, run_build, snapshot, stderr_lines, with_evidence

from lessonkit import markup
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


@pytest.mark.slow
def test_freeze_writes_every_seed_with_what_produced_it_and_twice_the_same_bytes(tmp_path):
    root = course(tmp_path)
    _, said = build_here(root, freeze=True)
    data = json.loads(frozen_file(root).read_text("utf-8"))
    assert sorted(data["seeds"], key=int) == ["0", "1", "2", "3"]
    assert set(data["produced_by"]) == {"code", "runner", "python", "numpy"}  # not the machine
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


@pytest.mark.slow
def test_a_frozen_course_on_a_clean_clone_runs_only_the_course_seed_and_shows_the_same_numbers(tmp_path):
    root = course(tmp_path)
    result, _ = build_here(root)
    unfrozen = snapshot(root / "site")
    build_here(root, freeze=True, force=True)
    fresh(root)
    result, said = build_here(root)
    assert result["runs"] == 1  # the course seed, measured again to compare
    assert f"tiny: frozen at {json.loads(frozen_file(root).read_text())['hash']}, 4 of 4 seeds; seed 0 as run on " \
           f"this machine agrees" in said
    now = snapshot(root / "site")
    page = now["en/page.html"].decode() + now["en/page.evidence.html"].decode()
    assert 'data-frozen="' in page and "frozen in results/tiny.json at" in page
    assert "结果冻结于 results/tiny.json" in now["zh/page.evidence.html"].decode()
    def values(html):
        return [(shown.key, shown.value) for shown in markup.scan(html).values]

    assert values(page) == values(unfrozen["en/page.html"].decode() + unfrozen["en/page.evidence.html"].decode())
    assert values(page)
    fresh(root)
    assert build_here(root, verify=0)[0]["runs"] == 0
    fresh(root)
    assert build_here(root, verify=3)[0]["runs"] == 3


@pytest.mark.slow
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
    def fail(report):  # seed 2 is not run again: only the claims, judged on its values, can catch it
        report["values"]["spread"] = 9.0
        next(c for c in report["claims"] if c["id"] == "spread")["passed"] = False
    rewrite(root, 2, fail)
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert "claim tiny.spread holds on 3 of 4 seeds (fails on seed(s) 2)" in str(caught.value)
    assert "on seed 2: spread = 9" in str(caught.value)


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


@pytest.mark.slow
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
    fresh(root)
    assert build_here(root, frozen_only=True)[0]["runs"] == 1
    with pytest.raises(BuildError, match="--force runs every experiment again, ignoring results/, which "
                                         "--frozen-only forbids"):
        build_here(root, frozen_only=True, force=True)
    assert build_here(root, force=True)[0]["runs"] == 4  # --force ignores results/: every seed runs
    with pytest.raises(BuildError, match="--refresh nope: not an experiment of this course"):
        build_here(root, refresh=("nope",))


@pytest.mark.slow
def test_a_file_frozen_on_another_machine_is_current_here_and_checked_by_the_run_again(tmp_path, monkeypatch):
    """The kernel variables choose the kernels an experiment runs on (they key this machine's experiment
    cache); a frozen file is not stale by them, as it is not by another processor: the run again compares."""
    root = course(tmp_path)
    build_here(root, freeze=True)
    before = frozen_file(root).read_bytes()
    fresh(root)
    monkeypatch.setenv("NPY_LESSONKIT_OTHER_MACHINE", "1")  # a kernel variable (versions.numeric_env) this one lacks
    result, said = build_here(root, frozen_only=True)
    assert result["runs"] == 1 and any("seed 0 as run on this machine agrees" in line for line in said), said
    assert frozen_file(root).read_bytes() == before


@pytest.mark.slow
def test_frozen_only_refuses_an_unfrozen_experiment_and_seeds_beyond_the_frozen_ones(tmp_path):
    root = course(tmp_path, seeds=2)
    with pytest.raises(BuildError, match=r"--frozen-only: experiment tiny has no frozen results \(results/tiny.json\)"):
        build_here(root, frozen_only=True)
    build_here(root, freeze=True)
    with pytest.raises(BuildError, match=r"would run on seed\(s\) 2, which results/tiny.json does not hold"):
        build_here(root, frozen_only=True, seeds=3)
    result, said = build_here(root, seeds=3)  # without it: the third seed runs, the others are frozen
    assert result["runs"] == 1  # seed 2 (seed 0, run again at the freeze, is in the cache)
    assert any(line.startswith("tiny: frozen at ") and line.endswith(
        ", 2 of 3 seeds; seed 0 as run on this machine agrees; seed(s) 2 not frozen, run here") for line in said), said
    page = with_evidence(root / "site" / "en" / "page.html")
    assert "frozen in results/tiny.json at" in page and ": 2 of 3 seeds;" in page \
        and "seed(s) 2 not frozen: run by the build" in page


def test_the_command_line_says_one_line_and_exits_1(tmp_path):
    root = course(tmp_path, seeds=2)
    done = run_build("--frozen-only", "--no-search", root=root)
    assert done.returncode == 1
    assert stderr_lines(done.stderr) == [
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
        "k: frozen 3, now 4 (whole numbers: exactly)", "x: frozen 1.0, now 1.000000002 (relative tolerance 1e-09)"]
    assert frozen.differences(a, far, {"x": 1e-6, "k": 0.5}) == ["k: frozen 3, now 4 (whole numbers: exactly)"]
    assert frozen.tolerance_of("h4.loss", {"h*.loss": 1e-6}) == 1e-6
    gone = {**near, "values": {k: v for k, v in near["values"].items() if k != "xs"}}
    assert frozen.differences(a, gone, {}) == ["xs: no longer measured"]


@pytest.mark.slow
def test_what_the_code_writes_is_checked_too_claims_as_stated_and_their_seed(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    saved = frozen_file(root).read_text("utf-8")
    shutil.rmtree(root / ".cache")

    def restate(report):  # another statement, a criterion that always holds
        claim = next(c for c in report["claims"] if c["id"] == "mean")
        claim.update(criterion="True", text={"zh": "篡改", "en": "TAMPERED"})
    for seed in range(4):  # on every seed, so that the seeds agree with each other: the run again does not
        rewrite(root, seed, restate)
    with pytest.raises(BuildError, match=r"seed 0 run again disagrees with results/tiny.json: claims: frozen"):
        build_here(root)
    frozen_file(root).write_text(saved, "utf-8")
    rewrite(root, 2, restate)  # a seed that is not run again: it must say what the course seed's report says
    with pytest.raises(BuildError) as caught:
        build_here(root)
    assert "seed 2's report differs from seed 0's in claims, which the code alone decides" in str(caught.value)
    assert caught.value.path.as_posix() == "results/tiny.json" and caught.value.line
    # A report filed under another seed, or a seed that is not a plain number, is refused where it is.
    data = json.loads(saved)
    data["seeds"]["3"] = data["seeds"]["1"]
    frozen_file(root).write_text(json.dumps(data, indent=1), "utf-8")
    with pytest.raises(BuildError, match=r"seed 3 holds the report of 'tiny', seed 1"):
        build_here(root)
    data = json.loads(saved)
    data["seeds"]["0_1"] = data["seeds"].pop("1")
    frozen_file(root).write_text(json.dumps(data, indent=1), "utf-8")
    with pytest.raises(BuildError, match=r"seed '0_1' is not a seed number"):
        build_here(root)
    data = json.loads(saved)
    data["hash"] = "0" * 12
    frozen_file(root).write_text(json.dumps(data, indent=1), "utf-8")
    with pytest.raises(BuildError, match=r"its hash is not that of its produced_by"):
        build_here(root)


@pytest.mark.slow
def test_freezing_keeps_frozen_seeds_and_happens_only_once_the_site_is_built(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    _, said = build_here(root, freeze=True, seeds=1)
    assert sorted(json.loads(frozen_file(root).read_text())["seeds"], key=int) == ["0", "1", "2", "3"]
    assert any(line.startswith("unchanged: results/tiny.json (4 seeds") for line in said), said
    before = frozen_file(root).read_bytes()
    edit(root, "experiments/tiny.py", '"n": 64', '"n": 48')
    edit(root, "content/en/page.md", "{val}`tiny.mean`", "{val}`tiny.maen`")
    with pytest.raises(BuildError, match="unknown value key 'tiny.maen'"):
        build_here(root, freeze=True)
    assert frozen_file(root).read_bytes() == before  # the build failed: nothing was frozen


@pytest.mark.slow
def test_a_file_without_the_course_seed_is_not_used_and_check_runs_the_course_seed(tmp_path):
    root = course(tmp_path)
    build_here(root, freeze=True)
    result, said = build_here(root, seed=9)
    assert result["runs"] == 4 and any("does not hold seed 9, the course seed: running tiny instead" in line
                                       for line in said)
    assert "frozen in results/" not in with_evidence(root / "site" / "en" / "page.html")
    assert (root / "site" / "en" / "page.evidence.html").is_file()  # (where it would say so)
    rewrite(root, 0, lambda r: r["values"].update(mean=r["values"]["mean"] + 0.01))
    fresh(root)
    build_here(root, verify=0)  # trusted without a run, and the panels say so
    assert "no seed run again (--verify 0)" in with_evidence(root / "site" / "en" / "page.html")
    done = run_build("--check-only", "--verify", "0", root=root)  # --check runs the course seed whatever --verify
    assert done.returncode == 1 and "disagrees with results/tiny.json: mean" in done.stderr, done.stderr


@pytest.mark.slow
def test_damaged_files_are_one_line_errors_on_the_command_line(tmp_path):
    root = course(tmp_path, seeds=2)
    assert run_build("--freeze", "--no-search", root=root).returncode == 0
    site = snapshot(root / "site")
    saved = frozen_file(root).read_bytes()
    for damage, message in [(b"\xff\xfe{", "results/tiny.json: not UTF-8 text"),
                            (saved.replace(b'"report": {', b'"report": [{', 1), "not valid JSON"),
                            (saved.replace(b'"n": 64', b'"n": 65', 1), "does not match its sha256")]:
        frozen_file(root).write_bytes(damage)
        done = run_build("--no-search", root=root)
        lines = stderr_lines(done.stderr)
        assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: results/tiny.json"), lines
        assert message in lines[0] and "Traceback" not in done.stderr
        assert snapshot(root / "site") == site
