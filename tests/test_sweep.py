"""Seed sweeps: every claim is judged on every seed, by the build, from values it does not take on trust."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time

import pytest
from conftest import (
    ROOT,
    TINY_EXPERIMENT,
    TINY_PAGES,
    append_to_page,
    make_course,
    run_build,
    stderr_lines,
    with_evidence,
)

from lessonkit import markup


def build(root, *args):
    return run_build("--no-search", "--out", root / "site", *args, root=root)


def one_line_error(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = stderr_lines(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def standalone(root, seed: int) -> dict:
    """The experiment's values for a seed, from the script itself."""
    out = subprocess.run([sys.executable, str(root / "experiments" / "tiny.py"), "--seed", str(seed), "--json"],
                         capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout)


def rows(html: str) -> dict:
    return {key: (int(seeds), int(held)) for key, seeds, held in
            re.findall(r'data-claim="([^"]+)" data-passed="true" data-seeds="(\d+)" data-held="(\d+)"', html)}


def root_pages(root):
    return {lang: (root / "content" / lang / "page.md").read_text("utf-8") for lang in ("zh", "en")}


def showing_even(root_name, tmp_path, source):
    pages = {lang: text + "\n{claim}`tiny.even`\n" for lang, text in TINY_PAGES.items()}
    return make_course(tmp_path / root_name, experiment=source, pages=pages)


def with_claim(criterion: str, extra: str = "") -> str:
    claim = (f'    Claim(id="even", criterion="{criterion}", text={{"zh": "偶数", "en": "even"}}, '
             f'shows=("odd",){extra}),\n]')
    return TINY_EXPERIMENT.replace("\n]\n", "\n" + claim + "\n", 1)


def test_a_claim_must_hold_on_every_seed(tmp_path):
    root = make_course(tmp_path / "c", experiment=with_claim("odd == 0"))
    error = one_line_error(build(root, "--seeds", "4"))
    line = with_claim("odd == 0").splitlines().index(next(ln for ln in with_claim("odd == 0").splitlines()
                                                         if 'id="even"' in ln)) + 1
    assert error.startswith(f"error: experiments/tiny.py:{line}: claim tiny.even holds on 2 of 4 seeds "
                            "(fails on seed(s) 1, 3)"), error
    assert "holds_on" in error


@pytest.mark.slow
def test_run_alone_a_claim_with_a_share_may_miss_on_one_seed(tmp_path):
    """The experiment as a script, on a seed where its holds_on=0.5 claim fails: MISS, exit 0; without
    the share the same miss is a FAIL and exit 1."""
    for extra, mark, code in ((", holds_on=0.5", "MISS", 0), ("", "FAIL", 1)):
        root = make_course(tmp_path / f"c{code}", experiment=with_claim("odd == 0", extra))
        run = subprocess.run([sys.executable, str(root / "experiments" / "tiny.py"), "--seed", "1"],
                             capture_output=True, text=True)
        assert run.returncode == code, run.stdout + run.stderr
        assert f"  {mark}  tiny.even: even" in run.stdout, run.stdout
        assert ("1 allowed miss(es)" in run.stdout) == (mark == "MISS"), run.stdout
        even = subprocess.run([sys.executable, str(root / "experiments" / "tiny.py"), "--seed", "2"],
                              capture_output=True, text=True)
        assert even.returncode == 0 and "  PASS  tiny.even" in even.stdout, even.stdout


@pytest.mark.slow
def test_a_claim_may_state_a_lower_share_and_the_summary_says_how_many_held(tmp_path):
    source = with_claim("odd == 0", ', holds_on=0.5, note={"zh": "奇数种子不成立", "en": "odd seeds fail"}')
    root = showing_even("c", tmp_path, source)
    result = build(root, "--seeds", "4")
    assert result.returncode == 0, result.stderr
    html = with_evidence(root / "site/en/page.html")
    assert rows(html) == {"tiny.spread": (4, 4), "tiny.mean": (4, 4), "tiny.even": (4, 2)}
    assert "held on 2 of 4 seeds (required: 2)" in html
    # Failing on the course seed is allowed within the share, and said: the page's numbers are a counterexample.
    result = build(root, "--seeds", "4", "--seed", "1")
    assert result.returncode == 0, result.stderr
    html = with_evidence(root / "site/en/page.html")
    assert 'data-claim="tiny.even" data-passed="true" data-seeds="4" data-held="2" data-course-seed="fails"' in html
    assert "not on seed 1, whose numbers this page shows" in html
    check = run_build("--check-only", "--out", root / "site", root=root)
    assert check.returncode == 0, check.stderr
    # Without a share, failing on the course seed stops the build.
    root = make_course(tmp_path / "all", experiment=with_claim("odd == 0"), pages=root_pages(root))
    error = one_line_error(build(root, "--seeds", "4", "--seed", "1"))
    assert "claim tiny.even failed on seed 1, the seed the pages show" in error


@pytest.mark.slow
def test_seeds_come_from_site_yaml_and_the_command_line(tmp_path):
    root = make_course(tmp_path / "c", config="seeds: 3\n")
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert "held on 3 seed(s), 3 experiment run(s)" in result.stdout
    assert json.loads((root / "site/lessonkit.json").read_text())["seeds"] == [0, 1, 2]
    result = build(root, "--seeds", "5", "--seed", "2")
    assert "5 seed(s), 4 experiment run(s)" in result.stdout, result.stdout  # seeds 2..6: seed 2 is cached
    assert json.loads((root / "site/lessonkit.json").read_text())["seeds"] == [2, 3, 4, 5, 6]
    result = build(root, "--seeds", "3")
    assert "0 experiment run(s)" in result.stdout  # seeds 0..2 again: all cached


@pytest.mark.slow
def test_the_summary_shows_each_values_spread_over_the_seeds(tiny):
    result = build(tiny, "--seeds", "5")
    assert result.returncode == 0, result.stderr
    html = with_evidence(tiny / "site/en/page.html")
    means = [standalone(tiny, seed)["tiny.mean"] for seed in range(5)]
    row = next((v for v in markup.scan(html).values if v.key == "tiny.mean" and v.low is not None), None)
    assert row, "the summary's value carries its range"
    assert row.number() == means[0]
    assert (json.loads(row.low), json.loads(row.high)) == (min(means), max(means))
    # Each end as a value is shown by default (two decimals, or two significant digits below 0.1).
    from lessonkit.numbers import format_number

    shown = f"{format_number(min(means))} – {format_number(max(means))} over 5 seeds".replace("-", "−")
    assert shown in html
    assert "the same on all 5 seeds" in html  # tiny.n does not vary


@pytest.mark.slow
def test_noise_is_shown_as_a_bound_and_the_bound_is_checked(tiny):
    result = build(tiny, "--seeds", "2")
    assert result.returncode == 0, result.stderr
    zh, en = (with_evidence(tiny / f"site/{lang}/page.html") for lang in ("zh", "en"))
    assert re.search(r'data-key="tiny.noise" data-value="[^"]+" data-bound="&lt;1e-09"[^>]*><span class="num">below '
                     r'10⁻⁹</span>', en), en
    assert '<span class="num">低于 10⁻⁹</span>' in zh
    assert "machine-dependent" in en
    broken = make_course(tiny.parent / "broken", experiment=TINY_EXPERIMENT.replace("1e-9)", "-1.0)"))
    error = one_line_error(build(broken, "--seeds", "2"))
    stored = next(n for n, line in enumerate(TINY_EXPERIMENT.splitlines(), 1) if '"noise":' in line)
    assert f"experiments/tiny.py:{stored}: " in error, error  # the line that stores the value
    assert "'noise'" in error and "which it is not" in error


def _runs_below(pid: int) -> list:
    """The experiment runs among a process's descendants (the runner, not the bwrap around it)."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    runs = []
    for child in children:
        try:
            args = child.cmdline()
        except psutil.Error:  # ended meanwhile
            continue
        if any(a.endswith("runner.py") for a in args) and not any(a.endswith("bwrap") for a in args):
            runs.append(child)
    return runs


@pytest.mark.slow
def test_runs_go_to_several_processes_at_once(tmp_path):
    """Counted from outside, as the runs go: --jobs 2 keeps two experiment processes running at once."""
    source = TINY_EXPERIMENT.replace("def run(seed, *, n):", "def run(seed, *, n):\n    import time\n    time.sleep(1.5)")
    root = make_course(tmp_path / "c", experiment=source)
    proc = subprocess.Popen([sys.executable, str(ROOT / "build.py"), "--root", str(root), "--no-search", "--seeds", "4",
                             "--jobs", "2", "--out", str(root / "site")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    most = 0
    while proc.poll() is None:
        most = max(most, len(_runs_below(proc.pid)))  # this build's own: tests in other workers run theirs
        time.sleep(0.1)
    assert proc.returncode == 0, proc.stderr.read()
    assert most == 2


# -- the cache proves itself, and the check trusts no verdict ----------------------------------------

def cached_entry(root, seed=0):
    return root / ".cache/experiments/tiny" / f"seed-{seed}.json"


def edit_cached_mean(root, value, rehash: bool):
    """The entry changed as this machine's own build might have damaged it: sealed again with its key."""
    from lessonkit.io import read_cache, write_cache

    path = cached_entry(root)
    entry = read_cache(path)
    entry["report"]["values"]["mean"] = value
    if rehash:
        entry["sha256"] = hashlib.sha256(json.dumps(entry["report"], sort_keys=True, ensure_ascii=False)
                                         .encode()).hexdigest()
    write_cache(path, entry)


def force_rebuild(root):
    (root / ".cache/build-stamp.json").unlink(missing_ok=True)


@pytest.mark.slow
def test_an_edited_cache_entry_is_run_again(tiny):
    assert build(tiny, "--seeds", "2").returncode == 0
    good = standalone(tiny, 0)["tiny.mean"]
    edit_cached_mean(tiny, 5.0, rehash=False)
    force_rebuild(tiny)
    result = build(tiny, "--seeds", "2")
    assert result.returncode == 0, result.stderr
    assert "does not match its recorded hash" in result.stdout and "1 experiment run(s)" in result.stdout
    html = (tiny / "site/en/page.html").read_text("utf-8")
    assert f'data-key="tiny.mean" data-value="{good!r}"' in html


@pytest.mark.slow
def test_an_edited_and_rehashed_entry_never_publishes_a_tick(tiny):
    assert build(tiny, "--seeds", "2").returncode == 0
    before = {p: p.read_bytes() for p in (tiny / "site").rglob("*") if p.is_file()}
    edit_cached_mean(tiny, 5.0, rehash=True)  # breaks "abs(mean) < 0.6" while the report still says passed
    force_rebuild(tiny)
    error = one_line_error(build(tiny, "--seeds", "2"))
    assert "claim tiny.mean" in error and "--force" in error
    assert {p: p.read_bytes() for p in (tiny / "site").rglob("*") if p.is_file()} == before


@pytest.mark.slow
@pytest.mark.parametrize("garbage", [b"", b"{", b"{}", b"[1, 2]", b"\xff\xfe", b'{"key": 1}'])
def test_an_unreadable_cache_entry_is_a_miss(tiny, garbage):
    assert build(tiny, "--seeds", "2").returncode == 0
    cached_entry(tiny).write_bytes(garbage)
    force_rebuild(tiny)
    result = build(tiny, "--seeds", "2")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "1 experiment run(s)" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("sealed", ["another key", "none"])
def test_a_cache_made_elsewhere_is_not_trusted(tiny, sealed):
    """A course that arrives with a .cache/ holding forged entries (their hashes recomputed) was published by a
    plain build, and --check then blamed the experiment. Entries are sealed with a key of this user's, kept
    outside every course: one made on another machine, or by hand, is run again."""
    import hmac
    import os

    from lessonkit.io import read_cache

    assert build(tiny, "--seeds", "2").returncode == 0
    good = standalone(tiny, 0)["tiny.mean"]
    entry = read_cache(cached_entry(tiny))
    entry["report"]["values"]["mean"] = 0.5
    entry["sha256"] = hashlib.sha256(json.dumps(entry["report"], sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    body = json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    seal = hmac.new(os.urandom(32), body, hashlib.sha256).hexdigest().encode() if sealed == "another key" else b""
    cached_entry(tiny).write_bytes(seal + b"\n" + body if seal else body)
    force_rebuild(tiny)
    result = build(tiny, "--seeds", "2")
    assert result.returncode == 0, result.stderr
    assert "not written by this machine's builds, or changed since; running tiny (seed 0) again" in result.stdout
    assert "1 experiment run(s)" in result.stdout
    shown = {v.key: v.number() for v in markup.scan((tiny / "site/en/page.html").read_text("utf-8")).values}
    assert shown["tiny.mean"] == good != 0.5


@pytest.mark.slow
def test_check_re_evaluates_claims_on_the_values_the_page_shows(tiny):
    assert build(tiny, "--seeds", "2").returncode == 0
    check = run_build("--check-only", "--out", tiny / "site", root=tiny)
    assert check.returncode == 0, check.stdout + check.stderr
    page = tiny / "site/en/page.html"
    html = page.read_text("utf-8")
    page.write_text(re.sub(r'(data-key="tiny.mean" data-value=")[^"]+"', r'\g<1>5.0"', html, count=1), "utf-8")
    check = run_build("--check-only", "--out", tiny / "site", root=tiny)
    assert check.returncode == 1
    assert "en/page.html: claim tiny.mean does not hold for tiny.mean = 5.0 as shown on this page" in check.stderr


# -- where runs execute ------------------------------------------------------------------------------

@pytest.mark.slow  # a local Dask cluster starts: `make test` runs it
def test_a_dask_cluster_gives_the_same_values(tmp_path):
    pytest.importorskip("distributed", reason="the dask extra is part of the test requirements")
    local, dask = (make_course(tmp_path / name) for name in ("local", "dask"))
    assert build(local, "--seeds", "3").returncode == 0
    result = build(dask, "--seeds", "3", "--executor", "dask:local", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert "3 experiment run(s)" in result.stdout
    assert "running experiments/tiny.py (3 seeds on dask:local, 2 workers)" in result.stdout  # where they went

    def values(root):
        return [(v.key, v.value) for v in markup.scan((root / "site/en/page.html").read_text()).values]

    assert values(dask) == values(local) and values(local)


@pytest.mark.slow  # a local Dask cluster starts: `make test` runs it
def test_the_builds_own_dask_cluster_takes_no_tasks_from_others_and_serves_no_dashboard():
    """dask:local listens on loopback only, over TLS with credentials made for this build, and opens no
    dashboard (Dask's default 8787)."""
    pytest.importorskip("distributed", reason="the dask extra is part of the test requirements")
    from distributed import Client

    from lessonkit.measure.executors import executor

    with executor("dask:local", 1) as (pool, workers):
        address = pool._client.scheduler.address
        assert address.startswith("tls://127.0.0.1:") and workers == 1
        assert pool.submit(sum, [1, 2]).result() == 3
        listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
        assert ":8787 " not in listening
        assert all(line.split()[3].startswith("127.0.0.1:") for line in listening.splitlines()
                   if line.split()[3].rsplit(":", 1)[1] == address.rsplit(":", 1)[1])
        with pytest.raises((TypeError, OSError)):  # no credentials, no tasks
            Client(address, timeout="3s")


@pytest.mark.slow
def test_a_hung_experiment_is_stopped_at_its_time_limit(tmp_path):
    hang = TINY_EXPERIMENT.replace("    rng = np.random.default_rng(seed)\n",
                                   "    rng = np.random.default_rng(seed)\n    import time; time.sleep(600)\n")
    root = make_course(tmp_path / "c", experiment=hang, config="experiment_timeout: 2\n")
    error = one_line_error(build(root, "--seeds", "1"))  # (were the limit not kept, this would hang)
    assert error.startswith("error: experiments/tiny.py: experiment tiny timed out (seed 0): no result after 2 s")


@pytest.mark.slow
def test_a_child_left_running_neither_blocks_the_build_nor_outlives_it(tmp_path):
    marker = tmp_path / "child-alive"
    spawn = TINY_EXPERIMENT.replace(
        "    rng = np.random.default_rng(seed)\n",
        "    import subprocess\n"
        f"    subprocess.Popen(['sh', '-c', 'sleep 3; touch {marker}'])\n"
        "    rng = np.random.default_rng(seed)\n")
    root = make_course(tmp_path / "c", experiment=spawn)
    result = build(root, "--seeds", "1")
    assert result.returncode == 0, result.stderr
    assert not marker.exists(), "the build did not wait for the child"
    time.sleep(4)
    assert not marker.exists(), "the experiment's child process was killed with it"


def test_a_value_at_rounding_level_shown_plainly_is_refused_at_the_line_that_stores_it(tmp_path):
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', '"odd": seed % 2,\n        "gap": float(abs(1 - (0.1 + 0.2) / 0.3)),')
    pages = {lang: text + "\n{val}`tiny.gap`\n" for lang, text in TINY_PAGES.items()}
    root = make_course(tmp_path / "c", experiment=source, pages=pages)
    error = one_line_error(build(root, "--seeds", "1"))
    stored = next(n for n, line in enumerate(source.splitlines(), 1) if '"gap":' in line)
    gap = abs(1 - (0.1 + 0.2) / 0.3)
    assert error.startswith(f"error: experiments/tiny.py:{stored}: value tiny.gap = {gap!r} is below 1e-09"), error
    assert "harness.below" in error and "harness.tiny" in error
    assert not (root / "site").exists()


@pytest.mark.slow
def test_a_criterion_reads_a_value_over_the_whole_sweep(tmp_path):
    """sweep.x is x on every seed the build ran, the course seed first; the verdict follows the sweep."""
    source = TINY_EXPERIMENT.replace(
        'shows=("mean",)),',
        'shows=("mean",)),\n    Claim(id="seen", criterion="len(sweep.mean) == 3 and mean in sweep.mean", '
        'text={"zh": "三个种子", "en": "three seeds"}, shows=("odd",)),')
    root = append_to_page(make_course(tmp_path / "c", experiment=source), "page",
                          {"zh": "\n{claim}`tiny.seen`\n", "en": "\n{claim}`tiny.seen`\n"})
    built = build(root, "--seeds", "3")
    assert built.returncode == 0, built.stderr
    assert rows(with_evidence(root / "site" / "en" / "page.html"))["tiny.seen"] == (3, 3)
    error = one_line_error(build(root, "--seeds", "4"))  # the same cached runs, a wider sweep: judged again
    assert "claim tiny.seen" in error and "criterion failed" in error, error
    alone = subprocess.run([sys.executable, str(root / "experiments" / "tiny.py")], capture_output=True, text=True,
                           cwd=root)
    assert "judged here on this seed alone" in alone.stdout
    # A list of one seed says nothing of the sweep: a miss there is no failure of the run.
    assert "MISS  tiny.seen" in alone.stdout and alone.returncode == 0, alone.stdout


def test_sweep_is_a_reserved_value_name(tmp_path):
    source = TINY_EXPERIMENT.replace('"odd": seed % 2,', '"odd": seed % 2,\n        "sweep.x": 1,')
    error = one_line_error(build(make_course(tmp_path / "c", experiment=source), "--seeds", "1"))
    stored = next(n for n, line in enumerate(source.splitlines(), 1) if '"sweep.x"' in line)
    assert error.startswith(f"error: experiments/tiny.py:{stored}: value id 'sweep.x'"), error


@pytest.mark.slow
def test_a_failing_claim_shows_its_criterion_line_the_values_it_read_and_the_command(tmp_path):
    """Claim( on one line and its criterion two lines below: the error points at the criterion, gives what it
    read on the failing seeds, and how to run one of them."""
    claim = ('    Claim(\n        id="even",\n        criterion="odd == 0",\n'
             '        text={"zh": "偶数", "en": "even"}, shows=("odd",)),\n]')
    source = TINY_EXPERIMENT.replace("\n]\n", "\n" + claim + "\n", 1)
    root = make_course(tmp_path / "c", experiment=source)
    error = one_line_error(build(root, "--seeds", "6"))
    line = source.splitlines().index('        criterion="odd == 0",') + 1
    assert error.startswith(f"error: experiments/tiny.py:{line}: claim tiny.even holds on 3 of 6 seeds "
                            "(fails on seed(s) 1, 3, 5)"), error
    assert error.endswith("; on seed 1: odd = 1; on seed 3: odd = 1; on seed 5: odd = 1; "
                          "re-run one: python experiments/tiny.py --seed 1"), error
    rerun = subprocess.run([sys.executable, str(root / "experiments" / "tiny.py"), "--seed", "1"],
                           capture_output=True, text=True)
    assert rerun.returncode == 1 and "FAIL  tiny.even" in rerun.stdout  # the command shows the failure


@pytest.mark.parametrize("kept", [None, b"", b"short", b"x" * 33])
def test_a_missing_or_damaged_seal_key_is_made_anew_once_and_kept(tmp_path, monkeypatch, kept):
    """An empty seal.key (a crash between create and write) left every build with a key of its own, for ever:
    every cache a miss. A bad key is replaced whole, and the next process reads the same one."""
    import os

    from lessonkit import io

    home = tmp_path / "xdg"
    if kept is not None:
        (home / "lessonkit").mkdir(parents=True)
        (home / "lessonkit" / "seal.key").write_bytes(kept)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setattr(io, "_KEY", {})
    key = io._seal_key()
    assert len(key) == 32 and (home / "lessonkit" / "seal.key").read_bytes() == key
    again = subprocess.run([sys.executable, "-c", "from lessonkit import io; print(io._seal_key().hex())"],
                           capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": str(home)},
                           cwd=ROOT)
    assert again.stdout.strip() == key.hex(), again.stderr
