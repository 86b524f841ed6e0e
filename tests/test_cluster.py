"""A real Dask cluster on 127.0.0.1: a `dask scheduler` and two `dask worker` processes, started in `/`, away from
the course and from lessonkit, bounded in time and torn down. The build sends them jobs that carry their code
(--executor dask:tcp://…); it must get the local values, survive a worker killed mid-sweep, and fail in one
line on an unreachable scheduler or workers with another numpy."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import make_course, run_build, snapshot, stderr_lines

from lessonkit.load.content import LIMITS

DASK = Path(sys.executable).with_name("dask")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and workers as separate processes, each in its own process group, torn down on close."""

    def __init__(self, tmp: Path, workers: int = 2, env: dict | None = None):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.logs = tmp / "cluster-logs"
        self.logs.mkdir(exist_ok=True)
        # --no-dashboard still serves HTTP on :8787, which test_sweep checks the build's own cluster leaves free.
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard",
                                  "--dashboard-address", "127.0.0.1:0"])
        self.workers = [self._start(f"worker-{i}", ["worker", self.address, "--nthreads", "1", "--no-nanny",
                                                    "--host", "127.0.0.1", "--no-dashboard",
                                                    "--dashboard-address", "127.0.0.1:0", "--death-timeout", "60",
                                                    "--local-directory", str(tmp / f"worker-{i}")], env)
                        for i in range(workers)]
        self._wait_for(workers)

    def _start(self, name: str, args: list[str], env: dict | None = None) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "w")  # noqa: SIM115 (kept for the process's life)
        proc = subprocess.Popen([str(DASK), *args], cwd="/", stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, start_new_session=True)
        self.procs.append(proc)
        return proc

    def _wait_for(self, workers: int) -> None:
        from distributed import Client

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with Client(self.address, timeout="5s") as client:
                    client.wait_for_workers(workers, timeout=30)
                    return
            except (OSError, TimeoutError):
                time.sleep(0.5)
        self.close()
        pytest.fail(f"the cluster did not start: {sorted(p.name for p in self.logs.iterdir())}")

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path)
    yield made
    made.close()


def values(root: Path) -> dict:

    from lessonkit.io import read_cache

    return {p.relative_to(root).as_posix(): read_cache(p)["report"]["values"]
            for p in sorted((root / ".cache" / "experiments").rglob("seed-*.json"))}


def test_a_real_cluster_gives_the_local_values_without_the_course_folder(cluster, tmp_path):
    local, remote = make_course(tmp_path / "local"), make_course(tmp_path / "remote")
    assert run_build("--seeds", "4", "--no-search", root=local, fresh=True).returncode == 0
    done = run_build("--seeds", "4", "--no-search", "--executor", f"dask:{cluster.address}", root=remote, fresh=True)
    assert done.returncode == 0, done.stderr
    assert values(remote) == values(local) and len(values(local)) == 4
    # The workers run in /, where there is no lessonkit and no course: what they ran came with the jobs.
    for worker in cluster.workers:
        assert psutil.Process(worker.pid).cwd() == "/"
    logs = "".join(p.read_text() for p in cluster.logs.glob("worker-*.log"))
    assert "Run out-of-band function 'worker_versions'" in logs  # the build asked them, then sent them the runs


SLOW_EXPERIMENT = '''"""Slow: a second per seed, so that a worker can be killed while it measures."""

import sys
import time

import harness
import numpy as np
from harness import Claim

NAME = "tiny"
PARAMS = {"n": 64}


def run(seed, *, n):
    time.sleep(1.0)
    x = np.random.default_rng(seed).standard_normal(n)
    return {"n": n, "mean": float(x.mean()), "spread": float(x.std())}


CLAIMS = [Claim(id="spread", criterion="0.5 < spread < 1.5", text={"zh": "标准差接近 1", "en": "the spread is near 1"},
                shows=("spread", "n")),
          Claim(id="mean", criterion="abs(mean) < 0.6", text={"zh": "均值接近 0", "en": "the mean is near 0"},
                shows=("mean",))]

if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''


def test_a_worker_killed_mid_sweep_is_survived_or_fails_in_one_line_never_half_written(cluster, tmp_path):
    root = make_course(tmp_path / "c", experiment=SLOW_EXPERIMENT, config="seeds: 6\n")
    page = "{val}`tiny.n` 个数的均值是 {val}`tiny.mean`，标准差 {val}`tiny.spread`。\n"
    (root / "content" / "zh" / "page.md").write_text("---\ntitle: 慢\n---\n\n" + page, "utf-8")
    (root / "content" / "en" / "page.md").write_text("---\ntitle: Slow\n---\n\n" + page, "utf-8")
    first = run_build("--no-search", "--seeds", "1", root=root, fresh=True)
    assert first.returncode == 0, first.stderr
    before = snapshot(root / "site")
    build = subprocess.Popen([sys.executable, str(Path(__file__).parent.parent / "build.py"), "--root", str(root),
                              "--no-search", "--executor", f"dask:{cluster.address}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = psutil.Process(cluster.workers[0].pid)
    deadline = time.monotonic() + 60
    def cmdline(child) -> str:  # (a child may end, or be a zombie, between the listing and the read)
        try:
            return " ".join(child.cmdline())
        except psutil.Error:
            return ""

    while not any("runner.py" in cmdline(c) for c in victim.children(recursive=True)):
        assert time.monotonic() < deadline, "the worker never started a run"
        time.sleep(0.05)
    victim.kill()  # kill by PID, mid-run
    out, err = build.communicate(timeout=180)
    # The scheduler gives the dead worker's seeds to the other one: the build completes, each seed run once.
    assert build.returncode == 0, err
    assert not victim.is_running() or victim.status() == psutil.STATUS_ZOMBIE
    assert "5 experiment run(s)" in out, out  # seeds 1-5 (seed 0 was cached)
    assert snapshot(root / "site") != before and (root / "site" / "en" / "page.html").is_file()
    # Nothing the dead worker started lives on: its runs' scratch folders carry its pid.
    time.sleep(0.5)
    marker = f"lessonkit-{victim.pid}-"
    assert not [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]


def test_an_unreachable_scheduler_is_one_line_within_a_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")  # Dask's own setting, taken (else 10 s)
    root = make_course(tmp_path / "c")
    start = time.monotonic()
    done = run_build("--no-search", "--executor", f"dask:tcp://127.0.0.1:{free_port()}", root=root, fresh=True)
    assert time.monotonic() - start < 40
    assert done.returncode == 1
    lines = stderr_lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: --executor dask:tcp://127.0.0.1:") \
        and "cannot reach the Dask scheduler" in lines[0], done.stderr


def test_workers_with_another_numpy_are_refused_in_one_line(tmp_path):
    # A worker whose numpy says it is another version (sitecustomize runs at its start-up).
    other = tmp_path / "other-numpy"
    other.mkdir()
    (other / "sitecustomize.py").write_text('import numpy\nnumpy.__version__ = "1.0.0"\n', "utf-8")
    made = Cluster(tmp_path, workers=1, env={"PYTHONPATH": str(other)})
    try:
        root = make_course(tmp_path / "c")
        done = run_build("--no-search", "--executor", f"dask:{made.address}", root=root, fresh=True)
    finally:
        made.close()
    assert done.returncode == 1
    lines = stderr_lines(done.stderr)
    assert len(lines) == 1 and "has numpy 1.0.0, this build " in lines[0] and "give the workers the same" in lines[0], \
        done.stderr
    assert not (root / "site").exists()


def test_a_silent_service_at_the_scheduler_address_is_one_line_within_a_timeout(tmp_path, monkeypatch):
    """A service that accepts the connection and says nothing hung the build for ever (Dask's own timeout
    does not cover its handshake). The build waits Dask's connect timeout where the configuration sets one
    (here 2 s), and 5 s more."""
    import threading

    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    threading.Thread(target=lambda: held.extend(listener.accept() for _ in range(8)), daemon=True).start()
    root = make_course(tmp_path / "c")
    start = time.monotonic()
    try:
        done = run_build("--no-search", "--executor", f"dask:tcp://127.0.0.1:{listener.getsockname()[1]}",
                         root=root, fresh=True)
    finally:
        listener.close()
    assert time.monotonic() - start < 60
    lines = stderr_lines(done.stderr)
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "the scheduler did not answer within 7 s" in lines[0], done.stderr
    assert not (root / "site").exists()


def test_an_executor_that_never_answers_ends_the_build_in_one_line(tmp_path):
    """A worker that never returns (or whose answer cannot be sent back) held the build for ever: the build
    waits at most every run's time limit one after another, then says so."""
    from concurrent.futures import Future
    from contextlib import nullcontext

    from lessonkit.errors import BuildError
    from lessonkit.measure import experiments

    class Silent:
        def submit(self, fn, job):
            return Future()  # never done

    root = make_course(tmp_path / "c")
    start = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiments, "EXECUTOR_GRACE", 0.5)
        with pytest.raises(BuildError) as raised:
            experiments.run_all(root, ["tiny"], [0, 1], root / ".cache" / "experiments", timeout=0.5, limits=LIMITS,
                                executor=lambda: nullcontext((Silent(), 2)), require_isolation=False)
    assert time.monotonic() - start < 10
    assert "experiment tiny: no answer from the executor after" in str(raised.value)
    assert str(raised.value.path).endswith("experiments/tiny.py")


def test_check_runs_the_course_seed_here_never_on_the_cluster(cluster, tmp_path):
    """The cluster's workers are trusted with the build's runs; --check is what does not trust them, so it runs
    the course seed on this machine: with the scheduler gone, --check-only still checks."""
    root = make_course(tmp_path / "c")
    built = run_build("--no-search", "--seeds", "2", "--executor", f"dask:{cluster.address}", root=root, fresh=True)
    assert built.returncode == 0, built.stderr
    cluster.close()
    checked = run_build("--no-search", "--seeds", "2", "--executor", f"dask:{cluster.address}", "--check-only",
                        root=root, fresh=True)
    assert checked.returncode == 0 and "check: no problems" in checked.stdout + checked.stderr, checked.stderr


def test_the_connect_timeout_is_dasks_where_its_configuration_sets_one_else_ten_seconds(monkeypatch):
    import dask

    from lessonkit.measure import executors

    monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", raising=False)
    dask.config.refresh()
    assert executors.connect_timeout() == executors.CONNECT == 10.0  # not Dask's own default, 30 s
    with dask.config.set({"distributed.comm.timeouts.connect": "45s"}):
        assert executors.connect_timeout() == 45.0
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "3")
    dask.config.refresh()
    try:
        assert executors.connect_timeout() == 3.0
    finally:
        monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT")
        dask.config.refresh()
