"""Live preview: serve the built site, rebuild when the course changes, reload open pages.

Standard library only. The pages on disk are never touched: when the server sends an HTML
page it adds, just before </body>, a small inline script that listens to
/__lessonkit/events (server-sent events) and reloads the page after each rebuild, or shows
the build error in an overlay at the top of the page while the build is broken.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

from lessonkit.load.inputs import INPUTS, skipped

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}
EVENTS = "/__lessonkit/events"
PING_SECONDS = 15.0

# %s is the token of the build the page was served from: if the server's token differs when
# the event stream (re)connects, a rebuild happened in between and the page reloads.
# An "error" event from the server carries data; EventSource's own connection errors do not.
SCRIPT = """<script>/* lessonkit serve */(()=>{const t=%s,s=new EventSource("%s");\
s.addEventListener("hello",e=>{if(e.data!==t)location.reload()});\
s.addEventListener("reload",e=>{const r=JSON.parse(e.data),p=location.pathname.replace(/^\\/+/,"");\
if(r.pages!=="*"&&!r.pages.includes(p.endsWith("/")||!p?p+"index.html":p))return;\
if(r.notes)sessionStorage.setItem("lessonkit-notes",r.notes);location.reload()});\
const n=sessionStorage.getItem("lessonkit-notes");if(n){sessionStorage.removeItem("lessonkit-notes");\
const d=document.createElement("pre");d.id="lessonkit-notes";d.title="click to close";d.onclick=()=>d.remove();\
d.style.cssText="position:fixed;bottom:0;right:0;z-index:2147483647;margin:.5em;padding:.6em .9em;max-width:min(48em,\
95vw);max-height:40vh;overflow:auto;background:#1f2328;color:#fff;font:13px/1.45 monospace;white-space:pre-wrap;\
border-radius:6px;box-shadow:0 2px 8px #0006;cursor:pointer";d.textContent=n;document.body.appendChild(d)}\
s.addEventListener("error",e=>{if(typeof e.data!=="string")return;\
let b=document.getElementById("lessonkit-error");if(!b){b=document.createElement("pre");\
b.id="lessonkit-error";b.style.cssText="position:fixed;top:0;left:0;right:0;z-index:2147483647;margin:0;\
padding:.75em 1em;max-height:50vh;overflow:auto;background:#b3261e;color:#fff;font:14px/1.45 monospace;\
white-space:pre-wrap;box-shadow:0 2px 8px #0006";document.body.appendChild(b)}\
b.textContent="build error: "+e.data})})();</script>"""


def live_script(token: str) -> bytes:
    return (SCRIPT % (json.dumps(token), EVENTS)).encode("ascii")


def inject(html: bytes, script: bytes) -> bytes:
    """The page with script just before its last </body> (at the end if it has none)."""
    at = html.lower().rfind(b"</body>")
    return html + script if at < 0 else html[:at] + script + html[at:]


def watched(root: Path) -> list[Path]:
    """The folders whose files are the build's inputs (load/inputs.py's one list, and the default theme when the
    course uses it), those that exist now."""
    from lessonkit.load import theme

    folders = [root / name for name in INPUTS]
    folders += [folder for folder in theme.folders(root) if folder != root / "templates"]
    return [folder for folder in folders if folder.is_dir()]


def _inputs_only(folders: list[Path]):
    """The watcher's filter: a file below a watched folder, unless the one rule of inputs.py skips a part of its
    path there (hidden files, Python's caches, editors' backups). inotify follows linked folders, the build
    does not: a path that leads out of its folder (content/loop -> ..) is not an input, so the build's own
    writes to site/ seen through such a link never start another build."""
    real = [(f, f.resolve()) for f in folders]

    def keep(change, path: str) -> bool:
        p = Path(path)
        for folder, resolved in real:
            if p.is_relative_to(folder):
                return not any(skipped(x) for x in p.relative_to(folder).parts) and \
                    p.resolve().is_relative_to(resolved)
        return False
    return keep


def changes(root: Path, stop: threading.Event):
    """Yield once for each change to the course's inputs, a save settled (no event for 50 ms, as an editor
    truncates and then writes), until stop is set. inotify through watchfiles, not a polling walk. A folder
    that appears (figures/ made by `build.py new`), vanishes or is replaced is a change: it is watched anew
    first, so that what is saved during the rebuild it starts is seen."""
    try:
        import watchfiles
    except ImportError:
        from lessonkit.errors import BuildError

        raise BuildError("the preview needs watchfiles: make site installs the pinned dependencies into .venv") \
            from None
    pending = False
    while not stop.is_set():
        folders = watched(root)
        # The first batch comes once the new watches are in place (at the latest after rust_timeout).
        for batch in watchfiles.watch(*folders, watch_filter=_inputs_only(folders), stop_event=stop, step=50,
                                      rust_timeout=500, yield_on_timeout=True, raise_interrupt=True):
            if batch or pending:
                pending = False
                yield
            # A watched folder removed (its watch is dead, even if a new one has its name by now), or one that
            # appeared or vanished: watch anew, then build once more.
            gone = {Path(path) for change, path in batch if change == watchfiles.Change.deleted}
            if gone & set(folders) or watched(root) != folders:
                pending = True
                break


class _State:
    """The last build's outcome, numbered, for the event streams to wait on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.instance = secrets.token_hex(4)
        self.generation = 0
        self.error: str | None = None
        self.notes = ""  # warnings and changed values of the last build: shown in the page after the reload
        self.pages: list | str = "*"  # the pages the last build changed ("*": all, a shared file changed)
        self.closed = False

    def token(self, generation: int) -> str:
        return f"{self.instance}.{generation}"

    def publish(self, error: str | None, notes: str = "", pages: list | str = "*") -> None:
        with self.cond:
            self.generation += 1
            # After an error every open page shows it: the build that mends it reloads them all.
            self.notes, self.pages = notes, "*" if self.error is not None else pages
            self.error = error
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait(self, seen: int, timeout: float) -> tuple[int, str | None, str, bool]:
        """The latest build's number, error, and what a page does on it (a reload event's data), once it is
        not `seen`. A page that missed builds in between reloads whatever they changed."""
        with self.cond:
            self.cond.wait_for(lambda: self.generation != seen or self.closed, timeout)
            pages = "*" if self.generation - seen > 1 else self.pages
            return self.generation, self.error, json.dumps({"notes": self.notes, "pages": pages}), self.closed


def _event(name: str, data: str) -> bytes:
    lines = data.splitlines() or [""]
    return (f"event: {name}\n" + "".join(f"data: {line}\n" for line in lines) + "\n").encode("utf-8")


class _Handler(http.server.SimpleHTTPRequestHandler):
    state: _State  # set on the subclass that serve() makes
    out: Path

    def log_message(self, format, *args):  # one terminal line per rebuild, not per request
        pass

    def _local_host(self) -> bool:
        """Answer only requests addressed to this machine by name: a page elsewhere cannot read the
        preview through a DNS name it points at 127.0.0.1 (DNS rebinding)."""
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        return name in LOCAL_HOSTS

    def do_HEAD(self):
        if not self._local_host():
            self.send_error(421, "Misdirected Request", "The preview answers only 127.0.0.1 and localhost.")
            return
        super().do_HEAD()

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self):
        if not self._local_host():
            self.send_error(421, "Misdirected Request", "The preview answers only 127.0.0.1 and localhost.")
            return
        if urlsplit(self.path).path == EVENTS:
            self._events()
        else:
            super().do_GET()

    def send_head(self):
        # The token is read before the file: a page never claims a newer build than it shows.
        token = self.state.token(self.state.generation)
        if not self.out.is_dir():
            self.send_error(404, "No site yet", "The build has not written the site yet: see the terminal.")
            return None
        path = self.translate_path(self.path)
        if "\0" in path:  # /%00: no file has that name
            self.send_error(400, "Bad request")
            return None
        if os.path.isdir(path) and urlsplit(self.path).path.endswith("/"):
            index = os.path.join(path, "index.html")
            path = index if os.path.isfile(index) else path
        # Only regular files of the site, links resolved: a link in site/ to /etc/passwd is not served.
        real = Path(path).resolve()
        if not real.is_relative_to(self.out) or not (real.is_file() or real.is_dir()):
            self.send_error(404, "File not found")
            return None
        if not path.endswith((".html", ".htm")):
            return super().send_head()
        try:
            with open(path, "rb") as f:
                body = inject(f.read(), live_script(token))
        except OSError:
            self.send_error(404, "File not found")
            return None
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return BytesIO(body)

    def send_error(self, code, message=None, explain=None):
        # Error pages listen too, so a page that appears with the next build shows up by itself.
        script = live_script(self.state.token(self.state.generation)).decode("ascii").replace("%", "%%")
        self.error_message_format = inject(self.error_message_format.encode(), script.encode()).decode()
        super().send_error(code, message, explain)

    def _events(self):
        state = self.state
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.end_headers()
        with state.cond:
            seen, error = state.generation, state.error
        try:
            self.wfile.write(b"retry: 500\n\n" + _event("hello", state.token(seen)))
            if error is not None:
                self.wfile.write(_event("error", error))
            while True:
                generation, error, notes, closed = state.wait(seen, PING_SECONDS)
                if closed:
                    return
                if generation == seen:
                    self.wfile.write(b": ping\n\n")  # finds clients that went away
                    continue
                seen = generation  # several builds since the last event: the latest one counts
                self.wfile.write(_event("reload", notes) if error is None else _event("error", error))
        except OSError:  # the browser closed the page
            return


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a page load asks for a dozen files at once; the default of 5 drops some

    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # the browser went away mid-answer: nothing to report
        print(f"preview: error answering {client_address[0]}: {sys.exc_info()[1]!r}", flush=True)


def listen(port: int, out: Path, handler) -> _Server:
    """Bind the preview's port before any build, so that a busy port is said at once."""
    from lessonkit.errors import BuildError

    try:
        return _Server(("127.0.0.1", port), functools.partial(handler, directory=str(out)))
    except OverflowError:
        raise BuildError(f"--port {port}: a port is a number from 0 to 65535") from None
    except OSError as exc:
        raise BuildError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
                         f"is another preview running? --port 0 picks a free port") from None


def _served(out: Path) -> dict[str, bytes]:
    """Each file of the site by its digest (about 11 ms for the real course's 89 files)."""
    import hashlib

    return {p.relative_to(out).as_posix(): hashlib.blake2b(p.read_bytes(), digest_size=16).digest()
            for p in out.rglob("*") if p.is_file()} if out.is_dir() else {}


def _changed(before: dict, after: dict) -> list | str:
    """The pages a rebuild changed, or "*" when a file they share changed (a style, a figure, a script)."""
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    if any(not name.endswith(".html") for name in changed - {"lessonkit.json"}):
        return "*"
    return sorted(name for name in changed if name.endswith(".html"))


def _gist(warning: str) -> str:
    """A warning without the digests in it: "translation is behind" names the source's, new at every save."""
    import re

    return re.sub(r"\b[0-9a-f]{12}\b", "…", warning)


def _rebuild(rebuild: Callable[[], str | tuple[str, list[str]]], state: _State, out: Path, said: set) -> None:
    """rebuild() gives a summary line, or (summary, notes): warnings and changed values to show. Only the open
    pages whose file changed reload; a warning already printed after the last build is not printed again."""
    start = time.perf_counter()
    before = _served(out)
    try:
        summary = rebuild()
    except Exception as exc:  # the build's errors, a line each; keep serving
        from lessonkit.errors import error_lines

        message = str(exc) or type(exc).__name__
        print("\n".join(error_lines(exc)) if str(exc) else f"error: {message}", flush=True)
        state.publish(message)
        return
    summary, notes = summary if isinstance(summary, tuple) else (summary, [])
    print(f"rebuilt in {(time.perf_counter() - start) * 1000:.0f} ms: {summary}", flush=True)
    for note in notes:
        if _gist(note) not in said:  # (a translation behind its source: once, not on every save)
            print(note, flush=True)
    said.clear()
    said.update(_gist(note) for note in notes if note.startswith("warning:"))
    state.publish(None, "\n".join(notes), _changed(before, _served(out)))


def serve(root: Path, out: Path, rebuild: Callable[[], str], port: int = 8000,
          ready: Callable[[str], None] | None = None, stop: threading.Event | None = None) -> None:
    """Build once, serve out/ on http://127.0.0.1:port/ (0: any free port), rebuild on every change.

    rebuild() returns a one-line summary or raises an exception whose str() is the error.
    ready(url) is called once the server listens (default: print the url). Returns when stop
    is set, or on Ctrl+C.
    """
    root, out = Path(root).resolve(), Path(out).resolve()
    stop = stop or threading.Event()
    state = _State()
    handler = type("Handler", (_Handler,), {"state": state, "out": out})

    httpd = listen(port, out, handler)
    said: set = set()  # the warnings the last build printed
    _rebuild(rebuild, state, out, said)
    server = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2},
                              name="lessonkit-serve", daemon=True)
    server.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    if ready is None:
        print(f"serving {url} (Ctrl+C to stop); the preview makes no search index: the next python build.py "
              f"does", flush=True)
    else:
        ready(url)
    try:
        for _ in changes(root, stop):
            _rebuild(rebuild, state, out, said)
    except KeyboardInterrupt:
        pass
    finally:
        state.close()
        httpd.shutdown()
        httpd.server_close()
        server.join(timeout=5)
