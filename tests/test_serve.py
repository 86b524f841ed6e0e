"""Live preview: a real build of a scratch course served on 127.0.0.1, pages reload in Chromium."""

from __future__ import annotations

import queue
import re
import shutil
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import Error as PlaywrightError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lessonkit import command as build_module  # noqa: E402
from lessonkit import pipeline, serve  # noqa: E402
from lessonkit.pipeline import Options  # noqa: E402

LESSON = "content/zh/page.md"
SENTENCE = "这个问题没有明显的答案。"
VALUE = "{val}`tiny.mean`"
OVERLAY = "#lessonkit-error"
NOTES = "#lessonkit-notes"
# A page long enough to scroll: the reload must keep the reader's place.
FILLER = {"zh": "\n这一段只是让页面足够长，好在重新载入之后检查滚动位置。\n",
          "en": "\nThis paragraph only makes the page long enough to check the scroll position after a reload.\n"}
ANSWER = {"zh": f"\n{SENTENCE}\n", "en": "\nThe answer to this question is not obvious.\n"}


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def _start(root: Path, out: Path, rebuild) -> SimpleNamespace:
    urls: queue.Queue = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=serve.serve, args=(root, out, rebuild),
                              kwargs={"port": 0, "ready": urls.put, "stop": stop}, daemon=True)
    thread.start()
    return SimpleNamespace(url=urls.get(timeout=60), out=out, root=root, stop=stop, thread=thread)


@pytest.fixture
def preview(tmp_path, monkeypatch):
    """A fixture course built and served as `build.py --serve` does, on a free port; stopped after the test."""
    from conftest import TINY_PAGES, make_course, with_figure

    pages = {lang: TINY_PAGES[lang] + ANSWER[lang] + FILLER[lang] * 60 for lang in TINY_PAGES}
    root = with_figure(make_course(tmp_path / "c", pages=pages, config="seeds: 2\n"))
    out = root / "site"
    # build.py's own rebuild (its lock, and the warnings and changed values it hands the page), taken from
    # build.serve() in place of the server that would never return.
    real, captured = serve.serve, {}
    monkeypatch.setattr(serve, "serve", lambda root, out, rebuild, **kw: captured.update(rebuild=rebuild))
    build_module.serve(build_module.options_of(build_module.parse_args(["--root", str(root), "--out", str(out), "-q"])),
                       port=0)
    monkeypatch.setattr(serve, "serve", real)
    server = _start(root, out, captured["rebuild"])
    yield server
    server.stop.set()
    server.thread.join(timeout=10)
    assert not server.thread.is_alive()


def _open(page, url: str):
    page.goto(url)
    page.wait_for_load_state("load")
    time.sleep(0.2)  # let the event stream connect (a late one still reloads: the page carries its build token)
    return page


def _wait(page, script: str, timeout: float = 5.0) -> float:
    """Poll the page (across reloads) until script is true; the seconds it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if page.evaluate(script):
                return time.perf_counter() - start
        except PlaywrightError:  # the page is reloading
            pass
        time.sleep(0.01)
    raise AssertionError(f"not true after {timeout} s: {script}")


def test_html_is_served_with_the_live_script_and_the_disk_copy_has_none(preview):
    status, html = _get(preview.url + "zh/page.html")
    assert status == 200
    assert serve.EVENTS in html
    script_at = html.index("/* lessonkit serve */")
    assert script_at < html.rindex("</body>")
    assert html.count("/* lessonkit serve */") == 1

    on_disk = (preview.out / "zh" / "page.html").read_text(encoding="utf-8")
    assert serve.EVENTS not in on_disk and "lessonkit serve" not in on_disk

    status, index = _get(preview.url)
    assert status == 200 and serve.EVENTS in index
    status, css = _get(preview.url + "static/" + next(p.name for p in (preview.out / "static").glob("*.css")))
    assert status == 200 and serve.EVENTS not in css
    assert _get(preview.url + "zh/no-such-page.html")[0] == 404


def test_an_edit_reloads_the_open_page(preview, page, capsys):
    _open(page, preview.url + "zh/page.html")
    page.evaluate("window.scrollTo(0, 1500)")
    lesson = preview.root / LESSON
    text = lesson.read_text(encoding="utf-8")
    assert SENTENCE in text
    new = "这个问题的答案并不明显：实时预览。"

    start = time.perf_counter()
    lesson.write_text(text.replace(SENTENCE, new), encoding="utf-8")
    _wait(page, f"document.body.innerText.includes({new!r})")
    ms = (time.perf_counter() - start) * 1000  # reported, not asserted: bench/bench.py times the preview
    assert _wait(page, "window.scrollY > 0", timeout=2) is not None  # the browser kept the scroll position

    output = capsys.readouterr().out
    assert re.search(r"^rebuilt in \d+ ms: \d+ pages \(\d+ rendered\), \d+ claims held on \d+ seed\(s\)$", output, re.M), output
    with capsys.disabled():
        print(f"\nedit to visible: {ms:.0f} ms")


def test_an_edit_reloads_only_the_pages_it_changed_and_says_a_warning_once(preview, page, capsys):
    """A sentence edit in the zh page reloads that page, not the home page beside it, whose file is the same;
    the warning it causes (the en page is behind its source) is printed after the edit, not again after the
    next one."""
    home = page.context.new_page()
    _open(home, preview.url)
    home.evaluate("window.notReloaded = true")
    _open(page, preview.url + "zh/page.html")
    page.evaluate("window.notReloaded = true")
    capsys.readouterr()
    lesson = preview.root / LESSON
    text = lesson.read_text(encoding="utf-8")
    for n, new in enumerate(["第一次改动。", "第二次改动。"]):
        lesson.write_text(text.replace(SENTENCE, new), encoding="utf-8")
        _wait(page, f"document.body.innerText.includes({new!r})")
        output = capsys.readouterr().out
        behind = [line for line in output.splitlines() if "translation is behind" in line]
        assert len(behind) == (1 if n == 0 else 0), output
    time.sleep(0.3)  # (a reload the home page was sent would have begun)
    assert home.evaluate("window.notReloaded") is True, "the home page did not change, yet it reloaded"
    home.close()


def test_a_broken_edit_shows_the_error_and_a_fix_clears_it(preview, page, capsys):
    _open(page, preview.url + "zh/page.html")
    lesson = preview.root / LESSON
    text = lesson.read_text(encoding="utf-8")
    assert VALUE in text

    lesson.write_text(text.replace(VALUE, "{val}`tiny.nope`", 1), encoding="utf-8")
    overlay = page.locator(OVERLAY)
    overlay.wait_for(state="visible", timeout=5000)
    message = overlay.text_content()
    assert "content/zh/page.md:" in message and "tiny.nope" in message, message
    assert overlay.evaluate("e => getComputedStyle(e).position") == "fixed"
    assert re.search(r"^error: .*tiny\.nope", capsys.readouterr().out, re.M)

    # Still serving, the last good site; a page opened now shows the error at once.
    assert _get(preview.url + "zh/page.html")[0] == 200
    other = page.context.new_page()
    other.goto(preview.url + "en/page.html")
    other.locator(OVERLAY).wait_for(state="visible", timeout=5000)
    other.close()

    page.evaluate("window.notReloaded = true")
    lesson.write_text(text, encoding="utf-8")
    _wait(page, "window.notReloaded === undefined && document.readyState === 'complete'")
    assert page.locator(OVERLAY).count() == 0
    assert re.search(r"^rebuilt in \d+ ms", capsys.readouterr().out, re.M)


def test_a_changed_value_is_reported_in_the_page_after_the_reload(preview, page, capsys):
    _open(page, preview.url + "zh/page.html")
    assert page.locator(NOTES).count() == 0
    experiment = preview.root / "experiments" / "tiny.py"
    text = experiment.read_text(encoding="utf-8")
    assert 'PARAMS = {"n": 64}' in text
    experiment.write_text(text.replace('PARAMS = {"n": 64}', 'PARAMS = {"n": 65}'), encoding="utf-8")
    _wait(page, f"document.querySelector({NOTES!r}) !== null", timeout=30)
    notes = page.locator(NOTES).text_content()
    assert re.search(r"^changed: tiny\.n: 64 → 65 \((.*, )?zh/page\.html", notes, re.M), notes
    assert page.locator('[data-key="tiny.n"] .num').first.text_content() == "65"
    assert re.search(r"^changed: tiny\.n: 64 → 65 ", capsys.readouterr().out, re.M)
    page.locator(NOTES).click()  # the note closes on a click
    assert page.locator(NOTES).count() == 0


def test_no_site_yet_is_a_404_page_that_listens(tmp_path, capsys):
    """A failing first build: every request is a 404 page with the script, the stream sends the error."""
    (tmp_path / "content").mkdir()

    def rebuild() -> str:
        raise RuntimeError("content/site.yaml:3: <b>broken</b>")

    server = _start(tmp_path, tmp_path / "site", rebuild)
    try:
        assert capsys.readouterr().out.splitlines() == ["error: content/site.yaml:3: <b>broken</b>"]
        status, body = _get(server.url + "zh/page.html")
        assert status == 404 and serve.EVENTS in body
        with urllib.request.urlopen(server.url + serve.EVENTS.lstrip("/"), timeout=10) as stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            lines = [stream.readline().decode("utf-8").rstrip("\n") for _ in range(7)]
        assert lines[2] == "event: hello"
        assert lines[5:] == ["event: error", "data: content/site.yaml:3: <b>broken</b>"]
    finally:
        server.stop.set()
        server.thread.join(timeout=10)
    assert not server.thread.is_alive()


# -- the preview against hostile requests and folders ------------------------------------------------

@pytest.fixture
def tiny_preview(tmp_path, capsys):
    from conftest import make_course

    root = make_course(tmp_path / "c")
    out = root / "site"

    def rebuild() -> str:
        options = Options(root=root, out=out, search=False, seeds=1, fork=False)
        return pipeline.preview_line(pipeline.build(options, say=lambda m: None))

    server = _start(root, out, rebuild)
    yield server
    server.stop.set()
    server.thread.join(timeout=10)


def _raw(url: str, request: bytes) -> bytes:
    """Send a request as written; the answer's bytes (the server's status line first)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return data


def test_the_preview_answers_only_local_host_names(tiny_preview):
    port = tiny_preview.url.rsplit(":", 1)[1].strip("/")
    for host, status in (("127.0.0.1", b"200"), ("localhost", b"200"), (f"localhost:{port}", b"200"),
                         ("evil.example", b"421"), ("127.0.0.1.evil.example", b"421")):
        answer = _raw(tiny_preview.url, f"GET /index.html HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        assert answer.split(b" ")[1] == status, (host, answer[:80])


def test_odd_requests_and_vanishing_clients_print_no_traceback(tiny_preview, capsys):
    assert _raw(tiny_preview.url, b"GET /%00 HTTP/1.0\r\nHost: localhost\r\n\r\n").split(b" ")[1] == b"400"
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(tiny_preview.url)
    for _ in range(50):  # ask for a page and leave before the answer
        with socket.create_connection((parts.hostname, parts.port)) as conn:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.sendall(b"GET /en/page.html HTTP/1.0\r\nHost: localhost\r\n\r\n")
    time.sleep(0.5)
    said = capsys.readouterr()
    assert "Traceback" not in said.out + said.err


def test_many_requests_at_once_are_all_answered(tiny_preview):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(lambda _: _get(tiny_preview.url + "en/page.html")[0], range(300)))
    assert statuses == [200] * 300


def _watch(root: Path):
    """serve.changes() in a thread: (a queue that gets an item per change, the stop event)."""
    seen, stop = queue.Queue(), threading.Event()
    threading.Thread(target=lambda: [seen.put(1) for _ in serve.changes(root, stop)], daemon=True).start()
    time.sleep(0.5)  # the watches are in place
    return seen, stop


@pytest.mark.slow
def test_the_watcher_sees_inputs_only_and_is_not_trapped_by_a_link_loop(tmp_path):
    """A saved page is one change; files the one input rule skips (an editor's backup, a hidden file, Python's
    cache) and the build's own output are none; a folder that appears is a change and is watched; a link loop
    in content/ neither hangs the watcher nor hides an edit."""
    content = tmp_path / "content"
    (content / "zh").mkdir(parents=True)
    (content / "zh" / "page.md").write_text("x")
    (content / "zh" / "loop1").symlink_to(".")
    (content / "zh" / "loop2").symlink_to(".")
    (content / "up").symlink_to("..")  # the course itself, site/ and .cache/ included, through a link
    seen, stop = _watch(tmp_path)
    try:
        (content / "zh" / "page.md.swp~").write_text("backup")
        (content / "zh" / ".page.md.swp").write_text("hidden")
        # What editors write beside a page while saving it (Vim's test file, Emacs, Kate, Chrome, merges)
        for leftover in ("4913", "#page.md#", "page.md.kate-swp", "page.md.crswap", "page.md.orig", "page.md.bak"):
            (content / "zh" / leftover).write_text("editor")
            (content / "zh" / leftover).unlink()
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "index.html").write_text("built")
        (tmp_path / ".cache").mkdir()
        (tmp_path / ".cache" / "x.json").write_text("{}")
        with pytest.raises(queue.Empty):
            seen.get(timeout=1.5)
        start = time.perf_counter()
        (content / "zh" / "page.md").write_text("y")
        seen.get(timeout=5)
        assert time.perf_counter() - start < 1.0
        with pytest.raises(queue.Empty):  # one save, one change
            seen.get(timeout=0.5)
        (tmp_path / "figures").mkdir()
        (tmp_path / "figures" / "f.py").write_text("def f(v, l): pass\n")
        seen.get(timeout=5)  # the new folder
        time.sleep(1.0)
        while not seen.empty():
            seen.get()
        (tmp_path / "figures" / "f.py").write_text("def g(v, l): pass\n")
        seen.get(timeout=5)  # and a file in it, once it is watched
        # A folder removed and made again at once is another folder: watched anew.
        shutil.rmtree(tmp_path / "figures")
        (tmp_path / "figures").mkdir()
        (tmp_path / "figures" / "f.py").write_text("def h(v, l): pass\n")
        seen.get(timeout=5)
        time.sleep(1.0)
        while not seen.empty():
            seen.get()
        (tmp_path / "figures" / "f.py").write_text("def k(v, l): pass\n")
        seen.get(timeout=5)
    finally:
        stop.set()


def test_a_link_in_the_site_to_a_file_outside_is_not_served(tiny_preview, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0", "utf-8")
    site = tmp_path / "c" / "site"
    (site / "passwd.txt").symlink_to(secret)
    (site / "outside").symlink_to(tmp_path, target_is_directory=True)
    for path in ("/passwd.txt", "/outside/secret.txt"):
        answer = _raw(tiny_preview.url, f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
        assert answer.split(b" ")[1] == b"404" and b"root:x" not in answer, answer[:200]
    assert _raw(tiny_preview.url, b"GET /en/page.html HTTP/1.0\r\nHost: localhost\r\n\r\n").split(b" ")[1] == b"200"


@pytest.mark.slow
def test_the_preview_says_it_makes_no_search_index(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT, make_course

    root = make_course(tmp_path / "c")
    proc = subprocess.Popen([sys.executable, str(ROOT / "build.py"), "--root", str(root), "--serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not lines or not lines[-1].startswith("serving "):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line.rstrip("\n"))
        assert lines[-1].endswith("(Ctrl+C to stop); the preview makes no search index: the next python build.py does")
        assert not (root / "site" / "pagefind").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("name, skipped", [("4913", True), ("5036", True), ("#page.md#", True), ("a.kate-swp", True),
                                           ("2024", False), ("1", False), ("4914", False), ("page.md", False),
                                           ("#tag", False)])
def test_the_input_rule_skips_what_editors_leave_and_keeps_a_courses_own_names(name, skipped):
    """Vim's test file is 4913 (then 4913 + 123 k); a page or folder named 2024 is the course's."""
    from lessonkit.load.inputs import skipped as rule

    assert rule(name) is skipped
