"""Run author code (an experiment, figure recipes) in a sandbox, with a time limit.

On Linux with bubblewrap (Debian's `bubblewrap`, the sandbox Flatpak uses) the code runs in new
namespaces: no network, its own process ids (it cannot signal the build), no /proc (its command line and
mounts would name the builder's folders), a host name of its own, the system's programs and
libraries and the Python it runs on read-only, its scratch folder the only place it may write, and
nothing else of the machine in view: not the course (the folders it must read come back read-only),
not the build's staging folder, not /etc or anyone's home. It dies with the build. Without bubblewrap
it runs in a process group of its own, which the build kills with it, and the build says the code
is not isolated.

Either way its environment is cleared down to what a measurement may depend on (ALLOWED_ENV): no
secret of the builder's reaches it. The process writes one line to its progress file per finished
step; a step that takes longer than the limit ends the run, and the whole process tree is killed
afterwards. Output goes to a log file, never to the build's terminal. What the code leaves in its
scratch folder is read back with read_back, which follows no link. Standard library only: it
runs on Dask workers too.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# Runs go in parallel, one process per core: a BLAS that also spreads over every core would
# oversubscribe them (OpenBLAS threads spin; a 20-seed sweep took 9 minutes instead of 15 s).
ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
# What of the builder's environment author code sees: the variables that choose numpy's and the BLAS's
# kernels (they are in the cache key) and thread counts. Nothing else: no tokens, no keys, no HOME.
ALLOWED_ENV = re.compile(r"^(NPY_|OPENBLAS_|MKL_|GOTO|BLIS_|VECLIB_|OMP_NUM_THREADS$)")
# System folders author code may read (libraries, fonts for the figures); each only where it exists.
_SYSTEM = ("/usr", "/etc/fonts", "/etc/ld.so.cache", "/etc/alternatives")


_BWRAP: dict = {}  # the probe's answer, once per process (a dict, not functools.cache: this module travels to
# Dask workers by value, and a cache wrapper would be pickled by reference to a lessonkit they do not have)


def bwrap() -> str | None:
    """bubblewrap's path when it works here (it needs user namespaces or root), else None."""
    if "path" in _BWRAP:
        return _BWRAP["path"]
    path = shutil.which("bwrap")
    if path is not None and sys.platform.startswith("linux"):
        try:
            probe = subprocess.run([path, *_UNPRIVILEGED, "--die-with-parent", "--ro-bind", "/", "/", "true"],
                                   capture_output=True, timeout=10)
            path = path if probe.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            path = None
    else:
        path = None
    _BWRAP["path"] = path
    return path


def isolated() -> bool:
    return bwrap() is not None


_said = []  # the warning is printed once per process (the preview builds many times)


def check(warn, *, required: bool) -> None:
    """Before author code runs: say once that it is not isolated, or, when isolation is `required` (--strict,
    on every path that runs author code: build, check, preview, freeze), refuse to run it at all."""
    if isolated():
        return
    why = ("bubblewrap (bwrap) is not available here" if not shutil.which("bwrap") or not sys.platform.startswith("linux")
           else "bubblewrap (bwrap) cannot make namespaces here")
    if required:
        from lessonkit.errors import BuildError

        raise BuildError(f"{why}: experiments and figure recipes would run without isolation, which --strict "
                         f"refuses (Debian: apt-get install bubblewrap)")
    if _said:
        return
    _said.append(why)
    warn(f"warning: {why}: experiments and figure recipes run without isolation (Debian: apt-get install bubblewrap)")


# New namespaces of every kind, as nobody (65534) with no capability, and no namespace made inside: as root,
# author code kept every capability and could remount a read-only bind writable (/usr, the venv, the engine).
_UNPRIVILEGED = ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
                 "--disable-userns"]


def _jail(scratch: Path, readable: list[Path]) -> list[str]:
    """bwrap's arguments: the system read-only, `readable` read-only, `scratch` writable, nothing else; /tmp and
    /dev/shm are folders of scratch, so that what is written there counts against its disk limit (a sized
    tmpfs needs bubblewrap 0.8, which Ubuntu 22.04 has not)."""
    for name in ("tmp", "shm"):
        (scratch / f".{name}").mkdir(exist_ok=True)
    # /tmp before anything below it is bound (the course, the venv or the scratch folder may be in /tmp)
    args = [*_UNPRIVILEGED, "--die-with-parent", "--new-session", "--clearenv", "--hostname", "lessonkit",
            "--dev", "/dev", "--bind", str(scratch / ".tmp"), "/tmp", "--bind", str(scratch / ".shm"), "/dev/shm"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged /usr: /bin -> usr/bin
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    mounted = []
    # Python itself (a venv and the interpreter it points to), then what the caller names.
    python = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent]
    for path in [*map(Path, _SYSTEM), *python, *readable]:
        path = path.resolve()
        if path.exists() and not any(path == m or m in path.parents for m in mounted):
            mounted.append(path)
            args += ["--ro-bind", str(path), str(path)]
    return args + ["--bind", str(scratch), str(scratch), "--chdir", str(scratch)]


def _die_with_parent() -> None:  # without bubblewrap: the kernel ends the run when the build dies
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def supervise(cmd: list[str], cwd: Path, progress: Path, log: Path, timeout: float, steps: int, limits: dict,
              env: dict | None = None, readable: tuple = ()) -> dict:
    """Run cmd in `cwd`, its scratch folder; {"returncode", "timed_out", "signal", "isolated", "limit"}.
    progress must exist; each line in it is a step done, and each of the `steps` gets `timeout` seconds.
    The code can write to progress itself: the run as a whole ends after steps × timeout whatever it wrote.
    `limits` (site.yaml's limits:): memory_mb of address space and disk_mb for any one file (rlimits, which
    the kernel holds for root too), disk_mb for the scratch folder with the run's /tmp and /dev/shm in it,
    and processes at once; "limit" names the one the run went over, when it is the build that stopped
    it (a run out of memory gets a MemoryError of its own). `readable`: folders it may read besides."""
    environ = {**ONE_THREAD, **{k: v for k, v in os.environ.items() if ALLOWED_ENV.match(k)}, **(env or {}),
               "PATH": "/usr/bin:/bin", "HOME": str(cwd), "TMPDIR": str(cwd), "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONIOENCODING": "utf-8", "PYTHONNOUSERSITE": "1"}
    jail = bwrap()
    disk = limits["disk_mb"] * 2**20
    if jail:
        sets = [a for k, v in sorted(environ.items()) for a in ("--setenv", k, v)]
        cmd = [jail, *_jail(cwd, list(readable)), *sets, "--", *cmd]
    if shutil.which("prlimit"):  # util-linux's: the limits are set before the sandbox starts, and inherited
        cmd = [shutil.which("prlimit"), f"--as={limits['memory_mb'] * 2**20}", f"--fsize={disk}", "--", *cmd]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=environ, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, preexec_fn=None if jail else _die_with_parent)
        _RUNNING.add(proc)
        timed_out, over, size, deadline = False, None, 0, time.monotonic() + timeout
        unreaped, stopped = None, False  # since when the code has ended and its sandbox's init not reaped it
        final = time.monotonic() + timeout * max(steps, 1)  # no file the code can write moves this one
        try:
            while True:
                try:
                    proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                count, alive, halted = _processes(proc.pid, limits["processes"] + _OWN)
                if count > limits["processes"] + _OWN:
                    over = "processes"
                    break
                if jail:  # the code has ended, and its sandbox's init, which it stopped (ptrace), lives on
                    gone = alive <= _OWN and (count > alive or halted)  # (a zombie left, or init stopped)
                    unreaped = (unreaped or time.monotonic()) if gone else None
                    if unreaped and time.monotonic() - unreaped > 0.5:
                        stopped = True
                        break
                if _disk_used(cwd, disk) > disk:
                    over = "disk_mb"
                    break
                try:
                    grown = os.lstat(progress).st_size
                except OSError:  # the code removed it: no more steps count, the time limit runs on
                    grown = size
                if grown != size:  # a step finished: the next one gets the whole time limit
                    size, deadline = grown, min(time.monotonic() + timeout, final)
                if time.monotonic() > min(deadline, final):  # (checked on every turn, growing or not)
                    timed_out = True
                    break
        finally:  # also when the build itself is interrupted: nothing the code started outlives it
            _kill(proc)
            proc.wait()
            _RUNNING.discard(proc)
    if over is None and _disk_used(cwd, disk) > disk:  # (what it wrote in its last moments counts too)
        over = "disk_mb"
    code = proc.returncode
    if jail and 128 < code < 128 + 65:  # bubblewrap reports a child ended by a signal as 128 + its number
        code = -(code - 128)
    return {"returncode": code, "timed_out": timed_out, "isolated": bool(jail), "limit": over, "stopped": stopped,
            "signal": signal.Signals(-code).name if code < 0 and not (timed_out or over or stopped) else None}


_OWN = 2  # processes of the sandbox's own: bubblewrap and the init of its process namespace


def _processes(pid: int, most: int) -> tuple[int, int, int]:
    """The run's processes (pid and its descendants, from /proc), counted no further than most + 1; how many
    of them are alive (not zombies), and how many stopped (a signal, or a tracer)."""
    seen, alive, stopped, todo = 0, 0, 0, [pid]
    while todo and seen <= most:
        here = todo.pop()
        seen += 1
        try:
            with open(f"/proc/{here}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
            alive += state != b"Z"
            stopped += state in (b"T", b"t")
            for task in os.listdir(f"/proc/{here}/task"):
                with open(f"/proc/{here}/task/{task}/children", "rb") as f:
                    todo += map(int, f.read().split())
        except (OSError, ValueError, IndexError):  # it ended meanwhile, or the kernel does not list children
            pass
    return seen, alive, stopped


def _disk_used(folder: Path, most: int) -> int:
    """Bytes the files below folder take on disk, counted no further than past most (or 100,000 entries)."""
    total, todo, entries = 0, [folder], 0
    while todo:
        try:
            with os.scandir(todo.pop()) as listing:
                for entry in listing:
                    entries += 1
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
                    if total > most or entries > 100_000:
                        return most + 1
        except OSError:
            pass
    return total


def over_limit(limit: str, limits: dict) -> str:
    """The message of a run the build stopped at one of its limits."""
    what = {"processes": f"started more than {limits['processes']} processes at once",
            "disk_mb": f"wrote more than {limits['disk_mb']} MiB (or 100,000 files) into its scratch folder",
            "memory_mb": f"ran out of its {limits['memory_mb']} MiB of memory"}[limit]
    return f"{what}, the run's limit (content/site.yaml: limits: {limit})"


_RUNNING: set = set()  # runs under way in this process, from any thread


READ_LIMIT = 256 * 2**20  # bytes: a report file, a progress file or an SVG is far smaller


def read_back(path: Path, tail: int | None = None, limit: int = READ_LIMIT) -> bytes:
    """A file the run wrote into its scratch folder, read here without following a link: the code may have
    put a link there that leads to a file of the builder's, outside its sandbox. Only a regular file is read
    (a FIFO would block), and none larger than `limit` (a sparse file costs no disk); `tail`: its last bytes
    only. OSError if it is gone, is not such a file, or is too large."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if tail is not None and info.st_size > tail:
            f.seek(info.st_size - tail)
        elif info.st_size > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        data = f.read(limit + 1)  # (it may still be growing)
        if len(data) > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        return data


def written_failure(failure) -> bool:
    """Whether a failure read back from a run's file has the shape its runner writes: a message, and a
    line, seed, item (ints) and path (text) where given. The code may have written the file itself."""
    return (isinstance(failure, dict) and isinstance(failure.get("message"), str)
            and all(failure.get(k) is None or type(failure[k]) is int for k in ("line", "seed", "item"))
            and isinstance(failure.get("path"), (str, type(None))))


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the process and everything it started
    except (ProcessLookupError, PermissionError):
        pass


def stop_all() -> None:
    """Kill every run under way (the build is being interrupted: threads waiting on runs would wait on)."""
    for proc in list(_RUNNING):
        _kill(proc)


def ended_early(outcome: dict, what: str) -> str:
    """Why a run stopped before its last step, in words."""
    if outcome.get("stopped"):
        return f"ended before {what}, having stopped its sandbox's init (ptrace)"
    if outcome["signal"]:
        why = " (out of memory?)" if outcome["signal"] == "SIGKILL" else ""
        return f"killed by {outcome['signal']}{why}"
    return f"ended (exit status {outcome['returncode']}) before {what}"


# -- scratch folders -------------------------------------------------------------------------------

SCRATCH_PREFIX = "lessonkit-"


def scratch(name: str) -> Path:
    """A new scratch folder for one run, named after the build's process so that a later build can
    remove what a killed one left (see sweep_scratch)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-{name}-"))


def sweep_scratch() -> None:
    """Remove scratch folders of builds that are no longer running."""
    import tempfile

    pattern = re.compile(rf"^{re.escape(SCRATCH_PREFIX)}(\d+)-")
    try:
        entries = list(Path(tempfile.gettempdir()).iterdir())
    except OSError:
        return
    for path in entries:
        match = pattern.match(path.name)
        if not match or not path.is_dir():
            continue
        pid = int(match.group(1))
        try:
            os.kill(pid, 0)
            continue  # that build still runs
        except ProcessLookupError:
            from lessonkit.io import remove_tree

            remove_tree(path)
        except PermissionError:  # another user's build
            continue
