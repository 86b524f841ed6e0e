"""Author code is untrusted: an experiment or a figure recipe that reads secrets, writes into the course or
the staging folder, signals the build or outlives it is refused or harmless. On Linux it runs under
bubblewrap (make test installs it); these tests hold the sandbox to the hostile cases that once got through."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, TINY_EXPERIMENT, TINY_FIGURE, make_course, stderr_lines, with_figure

from lessonkit.load.content import LIMITS
from lessonkit.measure import sandbox


def build(root, *args, env=None):
    return subprocess.run([sys.executable, str(ROOT / "build.py"), "--root", str(root), "--no-search", "--seeds", "2",
                           "--out", str(root / "site"), *args], capture_output=True, text=True, cwd=root,
                          env={**os.environ, **(env or {})})


def course_files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith((".cache", "site/", ".site"))}


def published(root: Path, sources: bool = True) -> str:
    """Every file of the site as text; without the experiments' published source (sources=False), which
    shows the author's code as written, prying included."""
    site = root / "site"
    published_sources = set(site.glob("experiments/*.py")) | set(site.glob("*/experiments/*.html"))
    return "\n".join(p.read_text("utf-8", "replace") for p in sorted(site.rglob("*")) if p.is_file()
                     and (sources or p not in published_sources))


def test_bubblewrap_isolates_author_code_here():
    """make test installs bubblewrap: on Linux the sandbox must be real, not assumed."""
    assert sys.platform.startswith("linux") and sandbox.isolated(), "bwrap is missing or cannot make namespaces"


PRYING = '''
def pry(root):
    """What this code could reach: each a 1 (reached) or a 0."""
    import glob
    found = {}
    def attempt(name, action):
        try:
            found[name] = 1 if action() else 0
        except Exception:
            found[name] = 0
    attempt("secret", lambda: os.environ.get("LESSONKIT_TEST_SECRET"))
    attempt("home", lambda: os.environ.get("HOME", "").startswith("/root"))
    attempt("passwd", lambda: open("/etc/passwd").readline())
    attempt("course", lambda: open(os.path.join(root, "content", "site.yaml")).read())
    attempt("parent_cwd", lambda: os.listdir(f"/proc/{os.getppid()}/cwd/content"))
    def append():
        with open(os.path.join(root, "content", "zh", "page.md"), "a") as f:
            f.write("\\n泄露\\n")
        return True
    attempt("append", append)
    attempt("staging", lambda: glob.glob(os.path.join(root, ".site.new-*")))
    attempt("network", lambda: __import__("socket").create_connection(("127.0.0.1", 9), timeout=1))
    return found
'''


@pytest.mark.slow
def test_an_experiment_sees_no_secret_no_course_and_no_other_file(tmp_path):
    root = tmp_path / "c"
    source = TINY_EXPERIMENT.replace("def run(seed, *, n):", PRYING + f"\n\ndef run(seed, *, n):\n    got = pry({str(root)!r})")
    source = source.replace('"odd": seed % 2,', '"odd": seed % 2,\n        **{f"pry.{k}": v for k, v in got.items()},')
    source = source.replace('shows=("mean",)),', 'shows=("mean",)),\n    Claim(id="sealed", criterion="max(['
                            'pry.secret, pry.home, pry.passwd, pry.course, pry.parent_cwd, pry.append, pry.staging, '
                            'pry.network]) == 0", text={"zh": "封闭", "en": "sealed"}),')
    make_course(root, experiment=source)
    before = course_files(root)
    result = build(root, env={"LESSONKIT_TEST_SECRET": "hunter2-secret"})
    assert result.returncode == 0, result.stdout + result.stderr  # the claim fails if anything was reached
    assert course_files(root) == before
    assert "hunter2" not in published(root)
    assert "泄露" not in published(root, sources=False)  # (the code that tried to write it is on its source page)


ESCAPING = '''
def escape(root, engine):
    """What this code could change, run by a build as root or not: each a 1 (changed) or a 0."""
    import subprocess
    import sys
    found = {}
    def attempt(name, action):
        try:
            found[name] = 1 if action() else 0
        except Exception:
            found[name] = 0
    import ctypes
    found["root"] = int(os.getuid() == 0)
    # (no /proc in the sandbox: the capability bounding set, one capability at a time, PR_CAPBSET_READ)
    found["capable"] = int(any(ctypes.CDLL(None).prctl(23, cap, 0, 0, 0) == 1 for cap in range(64)))
    for name, folder in (("usr", "/usr/lib"), ("venv", sys.prefix), ("engine", engine),
                         ("experiments", os.path.join(root, "experiments"))):
        subprocess.run(["mount", "-o", "remount,bind,rw", folder], capture_output=True)
        def write(folder=folder):
            with open(os.path.join(folder, "escaped.pth"), "w") as f:
                f.write("import os")
            return True
        attempt(name, write)
    attempt("userns", lambda: subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode == 0)
    return found
'''


@pytest.mark.slow
def test_an_experiment_cannot_remount_or_write_the_system_the_venv_or_the_engine(tmp_path):
    """As root (CI's container runs builds so), bubblewrap's namespaces alone left every capability: a remount
    made the read-only binds writable, and a .pth file in the venv ran at the next start of Python. The code
    runs as nobody, with no capability, and can make no namespace of its own."""
    root = tmp_path / "c"
    engine = str(ROOT / "lessonkit")
    source = TINY_EXPERIMENT.replace("def run(seed, *, n):", ESCAPING + f"\n\ndef run(seed, *, n):\n"
                                     f"    got = escape({str(root)!r}, {engine!r})")
    source = source.replace('"odd": seed % 2,', '"odd": seed % 2,\n        **{f"esc.{k}": v for k, v in got.items()},')
    source = source.replace('shows=("mean",)),', 'shows=("mean",)),\n    Claim(id="sealed", criterion="max(['
                            'esc.root, esc.capable, esc.usr, esc.venv, esc.engine, esc.experiments, esc.userns]) == 0",'
                            ' text={"zh": "封闭", "en": "sealed"}),')
    make_course(root, experiment=source)
    result = build(root)
    assert result.returncode == 0, result.stdout + result.stderr  # the claim fails if anything was changed
    for folder in ("/usr/lib", sys.prefix, engine, root / "experiments"):
        assert not (Path(folder) / "escaped.pth").exists(), folder


@pytest.mark.slow
def test_a_figure_recipe_cannot_put_a_file_into_the_site(tmp_path):
    recipe = TINY_FIGURE.replace("def bars(values, lang):", '''def bars(values, lang):
    import glob, os, shutil
    for staging in glob.glob(os.path.join(os.path.dirname(__file__), "..", ".site.new-*")):
        shutil.copy("/etc/passwd", os.path.join(staging, "passwd.txt"))
    for where in ("content/zh/page.md", "experiments/tiny.py"):
        try:
            open(os.path.join(os.path.dirname(__file__), "..", where), "a").write("x")
        except OSError:
            pass''')
    root = with_figure(make_course(tmp_path / "c"), recipe)
    before = course_files(root)
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert not (root / "site" / "passwd.txt").exists() and "root:" not in published(root)
    assert course_files(root) == before  # figures/ is read-only to its own recipes


def test_a_file_that_appears_in_the_staging_folder_is_never_published(tmp_path):
    from lessonkit.errors import BuildError
    from lessonkit.write.staging import Staging

    out = tmp_path / "site"
    with Staging(out) as staging:
        (staging.path / "passwd.txt").write_text("root:x:0:0", "utf-8")
        with pytest.raises(BuildError, match="passwd.txt appeared in the new site, but the build did not write it"):
            staging.write({"index.html": b"<p>hi</p>"})
    assert not out.exists()


@pytest.mark.parametrize("code", ["os.kill(os.getppid(), signal.SIGKILL)", "os.kill(os.getppid(), signal.SIGTERM)",
                                  "os.kill(1, signal.SIGKILL)"])
@pytest.mark.slow
def test_an_experiment_cannot_signal_the_build(tmp_path, code):
    source = TINY_EXPERIMENT.replace("def run(seed, *, n):", f"def run(seed, *, n):\n    import signal\n    {code}")
    root = make_course(tmp_path / "c", experiment=source)
    result = build(root)
    # Outside the build's reach, the signal either does nothing or ends the experiment alone: the build says so.
    assert result.returncode in (0, 1), (result.returncode, result.stderr)
    if result.returncode:
        lines = stderr_lines(result.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: experiments/tiny.py"), result.stderr


def running(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout  # ww: whole lines
    return [line for line in out.splitlines() if marker in line and "ps -eww" not in line]


@pytest.mark.parametrize("how, executor", [("SIGTERM", "local"), ("SIGKILL", "local"),
                                           pytest.param("SIGTERM", "dask:local", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_nothing_outlives_a_build_that_is_ended(tmp_path, how, executor):
    marker = f"lessonkit-orphan-{how}-{executor.replace(':', '-')}-{os.getpid()}"
    source = TINY_EXPERIMENT.replace("def run(seed, *, n):", f'''def run(seed, *, n):
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)  # {marker}"], start_new_session=True)
    time.sleep(300)''')
    root = make_course(tmp_path / "c", experiment=source, config="experiment_timeout: 600\n")
    proc = subprocess.Popen([sys.executable, str(ROOT / "build.py"), "--root", str(root), "--no-search", "--seeds", "2",
                             "--executor", executor, "--out", str(root / "site")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not running(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running(marker), "the experiment never started"
        scratch = [p for p in Path("/tmp").glob("lessonkit-*") if any(x.name == "tiny.py" for x in p.iterdir())
                   and marker in (p / "tiny.py").read_text("utf-8")]
        assert scratch
        proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if how == "SIGTERM":
        assert proc.returncode == 143 and err.strip() == "terminated: the previous site is as it was", err
    deadline = time.monotonic() + 20
    while running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running(marker) == []
    if how == "SIGKILL" or executor != "local":  # nothing (or a killed Dask worker) could clean up: the next build does
        assert build(make_course(tmp_path / "d")).returncode == 0
    assert not any(p.exists() for p in scratch)
    assert not (root / "site").exists() and not list(root.glob(".site.*"))


@pytest.mark.slow
def test_a_build_without_bubblewrap_warns_and_strict_refuses(tmp_path, monkeypatch):
    """Where bubblewrap is missing (not Linux, or not installed), author code runs with a warning; --strict
    will not run it at all."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    root = make_course(tmp_path / "c")
    env = {"PATH": f"{bin_dir}:{os.path.dirname(sys.executable)}:/usr/local/bin"}  # no /usr/bin: no bwrap
    for tool in ("ps",):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    result = build(root, env=env)
    assert result.returncode == 0, result.stderr
    assert "warning: bubblewrap (bwrap) is not available here: experiments and figure recipes run without " \
           "isolation" in result.stdout
    strict = build(make_course(tmp_path / "d"), "--strict", env=env)
    assert strict.returncode == 1 and "which --strict refuses" in strict.stderr, strict.stderr




def _without_bubblewrap(monkeypatch) -> None:
    """This process's probe answers that bubblewrap cannot isolate anything here."""
    monkeypatch.setattr(sandbox, "_BWRAP", {"path": None})


@pytest.mark.parametrize("path", ["check-only", "preview", "figure"])
def test_strict_refuses_unisolated_author_code_on_every_path(tmp_path, monkeypatch, path):
    """--strict's promise holds on every path that runs author code, not only a build: --check-only running the
    experiments again with the cache gone, the preview's rebuilds, and a figure redrawn from cached values."""
    import shutil

    from conftest import run_build

    from lessonkit import command

    root = with_figure(make_course(tmp_path / "c"))
    assert run_build("--no-search", "--seeds", "2", root=root).returncode == 0
    _without_bubblewrap(monkeypatch)
    if path == "check-only":
        shutil.rmtree(root / ".cache" / "experiments")
        result = run_build("--check-only", "--strict", "--seeds", "2", root=root)
        assert result.returncode == 1 and "which --strict refuses" in result.stderr, result.stderr
        assert not list((root / ".cache" / "experiments").glob("*/*")), "an experiment ran unisolated"
        return
    if path == "figure":
        shutil.rmtree(root / ".cache" / "figures")
        result = run_build("--no-search", "--seeds", "2", "--strict", root=root)
        assert result.returncode == 1 and "which --strict refuses" in result.stderr, result.stderr
        assert not list((root / ".cache").glob("figures/*.svg")), "a recipe ran unisolated"
        return
    rebuilds = []
    monkeypatch.setattr("lessonkit.serve.serve", lambda root, out, rebuild, port: rebuilds.append(rebuild))
    shutil.rmtree(root / ".cache" / "experiments")
    options = command.options_of(command.parse_args(["--root", str(root), "--strict", "--seeds", "2"]))
    command.serve(options, 0)
    from lessonkit.errors import BuildError

    with pytest.raises(BuildError, match="which --strict refuses"):
        rebuilds[0]()
    assert not list((root / ".cache" / "experiments").glob("*/*")), "the preview ran an experiment unisolated"



def test_a_warning_already_printed_does_not_let_a_strict_run_through(monkeypatch):
    """The preview builds many times in one process: once it warned, --strict must still refuse."""
    from lessonkit.errors import BuildError

    _without_bubblewrap(monkeypatch)
    monkeypatch.setattr(sandbox, "_said", [])
    said = []
    sandbox.check(said.append, required=False)
    sandbox.check(said.append, required=False)
    assert len(said) == 1 and "without isolation" in said[0]
    with pytest.raises(BuildError, match="which --strict refuses"):
        sandbox.check(said.append, required=True)


def test_a_strict_job_refuses_to_run_where_its_worker_cannot_isolate_it(tmp_path, monkeypatch):
    """--strict is checked where a job runs (a Dask worker may lack bubblewrap), before any of its code runs."""
    from lessonkit.measure import experiments, runcache

    marker = tmp_path / "ran"
    sources = {"x.py": f"open({str(marker)!r}, 'w').close()\n", "runner.py": runcache.RUNNER.read_text("utf-8"),
               "criteria.py": runcache.CRITERIA.read_text("utf-8"),
               "harness.py": (ROOT / "lessonkit" / "harness.py").read_text("utf-8")}
    _without_bubblewrap(monkeypatch)
    result = experiments.run_job(experiments.Job("x", "x.py", sources, [0], 10.0, LIMITS, {}, False, True))
    assert result["failure"] and "which --strict refuses" in result["failure"]["message"] and not marker.exists()
    assert result["failure"]["seed"] == 0 and not result["reports"]


EVIL_SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100pt" '
            b'height="50pt" onload="alert(1)"><script>alert(2)</script><style>@import url(https://x.test/a.css);'
            b'</style><image href="https://x.test/p.png" width="5" height="5"/><a xlink:href="javascript:alert(3)">'
            b'<text onclick="alert(4)" style="fill: url(https://x.test/f)">hi</text></a><foreignObject><p>x</p>'
            b'</foreignObject><use xlink:href="#ok"/><image href="data:image/png;base64,AAAA" width="1" height="1"/>'
            b'</svg>')


@pytest.mark.slow
def test_a_figure_whose_svg_carries_scripts_or_outside_links_is_published_clean(tmp_path):
    """The recipe is author code: it can make the worker write any bytes. The build publishes only what an SVG
    of matplotlib's may hold."""
    import xml.etree.ElementTree as ET

    recipe = TINY_FIGURE + f'''

import lessonkit.figures as _engine
_engine.to_svg = lambda fig: {EVIL_SVG!r}
'''
    root = with_figure(make_course(tmp_path / "c"), recipe)
    result = build(root)
    assert result.returncode == 0, result.stderr
    svg = (root / "site" / "figures" / "tiny.bars.en.svg").read_bytes()
    tree = ET.fromstring(svg)
    tags = {el.tag.rpartition("}")[2] for el in tree.iter()}
    attrs = {(el.tag.rpartition("}")[2], a.rpartition("}")[2], v) for el in tree.iter() for a, v in el.attrib.items()}
    assert not tags & {"script", "foreignObject", "a", "p"}
    assert not [a for a in attrs if a[1].lower().startswith("on")]
    assert not [a for a in attrs if a[1] == "href" and not a[2].startswith(("#", "data:image/"))]
    assert b"x.test" not in svg and b"javascript" not in svg
    assert ("use", "href", "#ok") in attrs and ("text") in tags  # what a figure may hold stays


# What the run leaves in its scratch folder is read back by the build, outside the sandbox: a link put there
# must not lead the build to a file of the builder's.
SECRET_TEXT = "the builder's private words"


@pytest.mark.slow
@pytest.mark.parametrize("replaced", ["log.txt", "reports.jsonl"])
def test_a_link_in_place_of_a_runs_own_file_is_not_followed(tmp_path, replaced):
    secret = tmp_path / "private.txt"
    secret.write_text(f"{{\"failure\": {{\"message\": \"{SECRET_TEXT}\"}}}}\n{SECRET_TEXT}\n", "utf-8")
    source = TINY_EXPERIMENT.replace("import harness\n", f"import harness\n\nos.remove({replaced!r})\n"
                                     f"os.symlink({str(secret)!r}, {replaced!r})\nos._exit(0)\n")
    root = make_course(tmp_path / "c", experiment=source)
    result = build(root)
    assert result.returncode == 1 and len(stderr_lines(result.stderr)) == 1, result.stderr
    assert SECRET_TEXT not in result.stderr + result.stdout
    assert ("replaced the runner's report file" if replaced == "reports.jsonl" else "ended (exit status 0)") \
        in result.stderr, result.stderr


@pytest.mark.slow
def test_a_recipe_that_puts_a_link_in_place_of_a_drawn_figure_publishes_nothing(tmp_path):
    """The recipe's second call (en) replaces the first one's SVG (zh) with a link to an SVG of the builder's."""
    private = tmp_path / "private.svg"
    private.write_text(f'<svg xmlns="http://www.w3.org/2000/svg"><text>{SECRET_TEXT}</text></svg>', "utf-8")
    recipe = TINY_FIGURE.replace("def bars(values, lang):\n", f"def bars(values, lang):\n    import os\n"
                                 f"    if lang == 'en':\n        os.remove('0.svg')\n"
                                 f"        os.symlink({str(private)!r}, '0.svg')\n")
    root = with_figure(make_course(tmp_path / "c"), recipe)
    result = build(root)
    assert result.returncode == 1, result.stdout
    assert "figures/tiny.py: figure 'tiny.bars' (zh): a recipe removed or replaced the SVG its worker wrote" \
        in result.stderr and len(stderr_lines(result.stderr)) == 1, result.stderr
    assert not (root / "site").exists() and not list((root / ".cache" / "figures").glob("*.svg"))


def test_read_back_reads_a_regular_file_and_refuses_a_link_or_a_fifo(tmp_path):
    (tmp_path / "file").write_bytes(b"0123456789")
    assert sandbox.read_back(tmp_path / "file") == b"0123456789"
    assert sandbox.read_back(tmp_path / "file", tail=3) == b"789"
    (tmp_path / "link").symlink_to(tmp_path / "file")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name in ("link", "fifo", "gone", "folder"):
        with pytest.raises(OSError):
            sandbox.read_back(tmp_path / name)
    with open(tmp_path / "sparse", "wb") as f:  # a terabyte that costs no disk
        f.truncate(1 << 40)
    with pytest.raises(OSError, match="larger than"):
        sandbox.read_back(tmp_path / "sparse")
    with pytest.raises(OSError, match="larger than"):
        sandbox.read_back(tmp_path / "file", limit=9)


# One line written at import into what the build reads back; each is the run's one-line error.
CRAFTED = {
    "failure not a mapping": 'open("reports.jsonl", "a").write(\'{"failure": "boom"}\\n\')',
    "failure without a message": 'open("reports.jsonl", "a").write(\'{"failure": {}}\\n\')',
    "the file rewritten whole": 'open("new", "w").write(\'{"seed": 0, "report": {"name": "tiny", "seed": 0}}\\n\'); '
                                'os.replace("new", "reports.jsonl")',
    "a terabyte of nothing": 'os.truncate("reports.jsonl", 1 << 40)',
}


@pytest.mark.slow
@pytest.mark.parametrize("code", list(CRAFTED.values()), ids=list(CRAFTED))
def test_what_an_experiment_writes_into_the_runners_files_is_one_line(tmp_path, code):
    source = TINY_EXPERIMENT.replace("import harness\n", f"import harness\n\n{code}\n")
    root = make_course(tmp_path / "c", experiment=source)
    result = build(root, "--seeds", "1")  # (one seed: no other job's report is refused first)
    assert result.returncode == 1 and len(stderr_lines(result.stderr)) == 1, result.stderr
    assert "internal error" not in result.stderr and result.stderr.startswith("error: experiments/tiny.py") \
        and ": experiment tiny" in result.stderr, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("failure", ['{"message": 5}', '{"message": "m", "line": [1]}', '"boom"'])
def test_what_a_recipe_writes_into_its_progress_file_is_one_line(tmp_path, failure):
    line = '{"failure": ' + failure + '}'
    recipe = TINY_FIGURE.replace("def bars(values, lang):\n", "def bars(values, lang):\n"
                                 f"    open('progress.jsonl', 'a').write({line!r} + '\\n')\n")
    root = with_figure(make_course(tmp_path / "c"), recipe)
    result = build(root)
    assert result.returncode == 1 and len(stderr_lines(result.stderr)) == 1, result.stderr
    assert "figures/tiny.py: a figure recipe removed, replaced or wrote into its worker's progress file" \
        in result.stderr, result.stderr


@pytest.mark.slow
def test_an_experiments_output_reaches_the_terminal_without_control_characters(tmp_path):
    """The last line of its output, quoted in the error, could otherwise retitle or rewrite the terminal."""
    source = TINY_EXPERIMENT.replace("import harness\n", 'import harness\n\nprint("\\x1b]0;owned\\x07\\x1b[2Kall '
                                     'good", flush=True)\nos._exit(0)\n')
    root = make_course(tmp_path / "c", experiment=source)
    result = build(root)
    assert result.returncode == 1 and "last output: ?]0;owned??[2Kall good" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_a_scratch_folder_too_deep_to_delete_is_swept_and_fails_no_build(tmp_path, monkeypatch):
    """5,000 levels (paths past PATH_MAX) ended every later build, of any course sharing the temporary
    folder, in RecursionError."""
    import tempfile

    from lessonkit.measure import sandbox

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no build holds any more
    scratch = tmp_path / f"{sandbox.SCRATCH_PREFIX}{gone.pid}-x"
    scratch.mkdir()
    fd = os.open(scratch, os.O_RDONLY)
    for _ in range(5_000):
        os.mkdir("a", dir_fd=fd)
        (fd, old) = (os.open("a", os.O_RDONLY, dir_fd=fd), fd)
        os.close(old)
    with open(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)
    keep = tmp_path / "not-scratch"
    keep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        sandbox.sweep_scratch()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["not-scratch"]
    finally:  # what a failing sweep left would break pytest's own clean-up of tmp_path (shutil.rmtree)
        subprocess.run(["rm", "-rf", *(str(p) for p in tmp_path.glob(f"{sandbox.SCRATCH_PREFIX}*"))], check=False)
