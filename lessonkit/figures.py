"""Draw figures: call recipes in figures/, save byte-stable, theme-aware SVGs.

A recipe is a function in ``figures/<module>.py``::

    def p2_gradients(values: dict, lang: str) -> matplotlib.figure.Figure

``values`` holds every measured value by full key ("multires.p2.ratio"), and
``values.over_seeds(key)`` a value on every seed the build ran (the course seed first), for a spread;
``lang`` is the page's language for the labels. The build records which keys a recipe read: a
figure's caption may quote only values its figure drew. Recipes draw with the default text colour and
the colour cycle C0..C3; the saved SVG turns those into CSS variables so the same
file reads in the light and the dark theme.

Recipes are author code: they run in a process of their own (see sandbox.py), with the
course's time limit per figure, so that one that exits, hangs, prints or parses the
command line cannot end or answer for the build. A figure whose recipe and values are
unchanged comes from the cache and imports no matplotlib.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import sys
import traceback
from pathlib import Path

from lessonkit.errors import BuildError, raise_all
from lessonkit.io import read_cache, read_input, remove_tree, write_cache

# Sentinel colours the recipes draw with; swapped for CSS variables on save.
INK = "#010203"
MUTED = "#040506"
PALETTE = ["#0a0b0c", "#0d0e0f", "#101112", "#131415"]
_CSS_VARS = {INK: "var(--ink)", MUTED: "var(--muted)"} | {
    c: f"var(--c{i})" for i, c in enumerate(PALETTE)
}
_THEME = """<style>
svg { color-scheme: light dark; --ink: #1f2328; --muted: #6e7781; --c0: #0969da; --c1: #cf222e; --c2: #1a7f37; --c3: #8250df; }
@media (prefers-color-scheme: dark) {
  svg { --ink: #e6edf3; --muted: #9198a1; --c0: #58a6ff; --c1: #ff7b72; --c2: #3fb950; --c3: #d2a8ff; }
}
</style>"""

FONTS = ["Noto Sans CJK SC", "DejaVu Sans"]
_SIZE = (re.compile(rb'width="([\d.]+)pt"'), re.compile(rb'height="([\d.]+)pt"'))


def svg_size(svg: bytes) -> tuple[int, int] | None:
    """The SVG's size in CSS pixels (matplotlib writes points), for <img width height>; None if unreadable."""
    head = svg[:2000]
    w, h = (pattern.search(head) for pattern in _SIZE)
    if not (w and h and head.lstrip().startswith((b"<?xml", b"<svg"))):
        return None
    return round(float(w.group(1)) * 4 / 3), round(float(h.group(1)) * 4 / 3)


# -- in the build: the cache, and a worker process for what is not in it -----------------------

def _key(figures_dir: Path, figure_id: str, lang: str, data: str) -> str:
    from lessonkit.versions import package_version

    module = figures_dir / f"{figure_id.partition('.')[0]}.py"
    h = hashlib.sha256()
    h.update(module.read_bytes() if module.is_file() else b"")
    h.update(Path(__file__).read_bytes())  # the save settings and theme live here
    h.update(data.encode())
    h.update(f"{figure_id} {lang} {package_version('matplotlib')}".encode())
    return h.hexdigest()[:16]


def draw_all(root: Path, cache_dir: Path, wanted: dict[tuple[str, str], tuple], values: dict, sweeps: dict, *,
             timeout: float, limits: dict, force: bool = False, warn=print, require_isolation: bool) -> tuple[dict, dict]:
    """Every wanted (figure id, language) as SVG bytes, and the value keys its recipe read: from the cache, or
    drawn by one worker process. sweeps: each value's list over the seeds.

    wanted maps each to where a page asks for it (path, line): an unknown figure is that line's error;
    a recipe that fails is the recipe's, at its own line."""
    figures_dir = root / "figures"
    data = hashlib.sha256(json.dumps([values, sweeps], sort_keys=True).encode()).hexdigest()
    out, read, missing = {}, {}, []
    for fid, lang in wanted:
        path = cache_dir / f"{fid}.{lang}.{_key(figures_dir, fid, lang, data)}.svg"
        try:
            svg, kept = (None, None) if force else (read_input(path), read_cache(path.with_suffix(".json")))
            keys = kept["read"] if kept["svg"] == hashlib.sha256(svg).hexdigest() else None
        except (OSError, TypeError, KeyError):
            svg, keys = None, None
        if svg is not None and svg_size(svg) and _keys(keys):
            out[fid, lang], read[fid, lang] = svg, keys
        else:
            missing.append((fid, lang, path))
    if not missing:
        return out, read
    from lessonkit.measure import sandbox

    sandbox.check(warn, required=require_isolation)
    work = sandbox.scratch("figures")
    try:
        items = [{"id": fid, "lang": lang, "out": str(work / f"{i}.svg")} for i, (fid, lang, _) in enumerate(missing)]
        (work / "job.json").write_text(json.dumps({"figures_dir": str(figures_dir), "values": values,
                                                   "sweeps": sweeps, "items": items}), "utf-8")
        progress = work / "progress.jsonl"
        progress.touch()
        _font_cache_into(work)
        package = Path(__file__).resolve().parent
        # The recipe sees the engine's package and the course's figures/, read-only, and nothing else of the course.
        outcome = sandbox.supervise(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(package.parent)!r}); "
                                   "from lessonkit.figures import worker; worker()",
             str(work / "job.json"), str(progress)],
            work, progress, work / "log.txt", timeout, len(items), limits, {"MPLBACKEND": "svg", "MPLCONFIGDIR": str(work / "mpl")},
            readable=(package, figures_dir))
        done, failure = {}, None
        recipes = sorted({f"figures/{fid.partition('.')[0]}.py" for fid, _, _ in missing})
        # What the worker wrote is read without following a link a recipe may have put in its place.
        try:
            items = [json.loads(line) for line in sandbox.read_back(progress).decode("utf-8", "replace").split("\n")
                     if line]
            for item in items:
                if "failure" in item and sandbox.written_failure(item["failure"]):
                    failure = item["failure"]
                elif item.get("done") in range(len(missing)) and _keys(item.get("read")):
                    done[item["done"]] = item["read"]
                else:
                    raise ValueError(item)
        except (OSError, ValueError, TypeError, AttributeError):
            raise BuildError("a figure recipe removed, replaced or wrote into its worker's progress file",
                             recipes[0] if len(recipes) == 1 else "figures") from None
        for i, (fid, lang, path) in enumerate(missing):
            if i in done:
                where = f"figures/{fid.partition('.')[0]}.py"
                try:
                    drawn = sandbox.read_back(work / f"{i}.svg")
                except OSError:
                    raise BuildError(f"figure {fid!r} ({lang}): a recipe removed or replaced the SVG its worker "
                                     f"wrote", where) from None
                svg = sanitize_svg(drawn, where)
                out[fid, lang], read[fid, lang] = svg, done[i]
                _store(cache_dir, fid, lang, path, svg, done[i], warn)
        if failure:
            error = BuildError(failure["message"], failure.get("path"), failure.get("line"))
            item = failure.get("item")
            raise error.located(*wanted[missing[item][:2]]) if item is not None and 0 <= item < len(missing) else error
        pending = next(((fid, lang) for i, (fid, lang, _) in enumerate(missing) if i not in done), None)
        if pending:
            what = f"figure {pending[0]!r} ({pending[1]})"
            if outcome["limit"]:
                raise BuildError(f"{what}: the recipe's process {sandbox.over_limit(outcome['limit'], limits)}",
                                 f"figures/{pending[0].partition('.')[0]}.py")
            if outcome["timed_out"]:
                raise BuildError(f"{what} timed out: no SVG after {timeout:g} s (content/site.yaml: "
                                 f"experiment_timeout)", f"figures/{pending[0].partition('.')[0]}.py")
            raise BuildError(f"{what}: the recipe's process {sandbox.ended_early(outcome, 'saving it')}",
                             f"figures/{pending[0].partition('.')[0]}.py")
        return out, read
    finally:
        remove_tree(work)


def _keys(keys) -> bool:
    """Whether what a worker or the cache says a recipe read is a list of value keys."""
    return isinstance(keys, list) and all(isinstance(k, str) for k in keys)


# What a published figure may hold: the elements and attributes matplotlib writes, nothing that runs or loads.
_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_NAMESPACES = {"": _SVG, "xlink": _XLINK, "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
               "cc": "http://creativecommons.org/ns#", "dc": "http://purl.org/dc/elements/1.1/"}
_ELEMENTS = {"svg", "g", "path", "defs", "use", "clipPath", "rect", "circle", "ellipse", "line", "polyline",
             "polygon", "text", "tspan", "style", "title", "desc", "metadata", "linearGradient", "radialGradient",
             "stop", "pattern", "mask", "image", "symbol", "marker", "a"}
_METADATA = {"RDF", "Work", "type", "format", "creator", "Agent", "title", "date", "description", "rights"}
_EXTERNAL_CSS = re.compile(r"@import|url\(\s*['\"]?(?!#)", re.IGNORECASE)


def sanitize_svg(data: bytes, where: str) -> bytes:
    """The figure as it may be published: no script, event handler, foreignObject or link that leaves the file
    (a recipe runs as author code: it can write any bytes), only matplotlib's elements, references inside the
    file or to embedded images. A file that is not SVG is the recipe's error."""
    import xml.etree.ElementTree as ET

    if b"<!ENTITY" in data:
        raise BuildError("the figure defines XML entities: not a plain SVG", where)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise BuildError(f"the figure is not well-formed SVG ({exc})", where) from None
    if root.tag != f"{{{_SVG}}}svg":
        raise BuildError("the figure is not an SVG", where)

    def local(tag: str) -> tuple[str, str]:
        ns, _, name = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
        return ns, name

    def clean(node, in_metadata: bool) -> None:
        for child in list(node):
            if not isinstance(child.tag, str):  # a comment or a processing instruction
                node.remove(child)
                continue
            ns, name = local(child.tag)
            allowed = (ns == _SVG and name in _ELEMENTS) or (in_metadata and name in _METADATA)
            if not allowed:
                node.remove(child)
                continue
            if name == "a":  # a link (set_url) becomes a plain group: a figure links nowhere
                child.tag = f"{{{_SVG}}}g"
            for attr in list(child.attrib):
                value = child.attrib[attr]
                _, attr_name = local(attr)
                if attr_name.lower().startswith("on") or (attr_name == "href" and not (
                        value.startswith("#") or (name == "image" and value.startswith("data:image/")))) \
                        or (attr_name == "style" and _EXTERNAL_CSS.search(value)):
                    del child.attrib[attr]
            if name == "style" and child.text and _EXTERNAL_CSS.search(child.text):
                child.text = ""
            # matplotlib's indentation and its paths' double spaces: a tenth of a figure, which a reader downloads
            child.tail = child.tail if child.tail and child.tail.strip() else None
            if name not in ("text", "tspan") and not (child.text or "").strip():
                child.text = None
            if "d" in child.attrib:
                child.attrib["d"] = " ".join(child.attrib["d"].split())
            clean(child, in_metadata or name == "metadata")

    for attr in [a for a in root.attrib if local(a)[1].lower().startswith("on")]:
        del root.attrib[attr]
    clean(root, False)
    for prefix, uri in _NAMESPACES.items():
        ET.register_namespace(prefix, uri)
    return b'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8")


def _font_cache_into(work: Path) -> None:
    """Matplotlib's list of the machine's fonts, copied into the recipe's scratch folder: the recipe sees
    no home folder, and making the list anew costs seconds."""
    import os

    home = os.environ.get("MPLCONFIGDIR") or os.path.join(os.environ.get("XDG_CACHE_HOME")
                                                         or os.path.expanduser("~/.cache"), "matplotlib")
    (work / "mpl").mkdir()
    for found in Path(home).glob("fontlist-*.json") if os.path.isdir(home) else ():
        shutil.copyfile(found, work / "mpl" / found.name)


def _store(cache_dir: Path, fid: str, lang: str, path: Path, svg: bytes, read: list, warn) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        for old in [*cache_dir.glob(f"{fid}.{lang}.*.svg"), *cache_dir.glob(f"{fid}.{lang}.*.json")]:
            old.unlink()
        path.write_bytes(svg)
        kept = write_cache(path.with_suffix(".json"), {"read": read, "svg": hashlib.sha256(svg).hexdigest()})
    except OSError:
        kept = False
    if not kept:
        warn(f"warning: cannot write the figure cache ({path}); figures are drawn again next time")


# -- in the worker process -------------------------------------------------------------------------

def _ensure_fonts() -> None:
    """Chinese labels need Noto Sans CJK SC; a font installed after matplotlib
    cached its font list is only seen once the cache is rebuilt."""
    from matplotlib import font_manager

    def have() -> bool:
        return any(f.name == FONTS[0] for f in font_manager.fontManager.ttflist)

    if not have():
        font_manager.fontManager = font_manager._load_fontmanager(try_read_cache=False)
        if not have():
            raise _Failure(f"font {FONTS[0]!r} is not installed (Debian: apt-get install fonts-noto-cjk)")


def _configure(matplotlib) -> None:
    from cycler import cycler

    matplotlib.use("svg")
    _ensure_fonts()
    matplotlib.rcParams.update({
        "svg.hashsalt": "lessonkit",
        "svg.fonttype": "path",  # glyphs as paths: the reader needs no CJK font
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "font.size": 10,
        "axes.unicode_minus": False,
        "text.color": INK, "axes.labelcolor": INK, "xtick.labelcolor": INK, "ytick.labelcolor": INK,
        "axes.edgecolor": MUTED, "xtick.color": MUTED, "ytick.color": MUTED, "grid.color": MUTED, "grid.alpha": 0.3,
        "axes.prop_cycle": cycler(color=PALETTE),
        "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
        "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    })


class _Failure(Exception):
    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message, self.path, self.line = message, path, line


def _recipe_error(exc: BaseException, path: Path, what: str) -> _Failure:
    """One line, at the recipe file's line where it broke (the deepest frame in that file)."""
    line = exc.lineno if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    kind = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, SystemExit):
        kind = f"the recipe called exit({exc.code!r})"
    return _Failure(f"{what}: {kind}", f"figures/{path.name}", line)


def check_named(root: Path, pages: list) -> None:
    """Every figure a page names has a recipe: figures/MODULE.py defining FUNCTION, read as text (the recipe is
    author code and runs only in the draw stage's sandbox). Checked before the cross-references, so that a typo
    in a figure's id is reported where the figure is, with a did-you-mean, not as a {ref} to a missing figure."""
    import difflib

    defined: dict = {}
    errors = []
    for built in pages:
        for figure_id, line in built.collected.figures:
            module_name, _, func_name = figure_id.partition(".")
            path = root / "figures" / f"{module_name}.py"
            if module_name not in defined:
                try:
                    text = path.read_text("utf-8")
                except (OSError, UnicodeDecodeError):
                    text = None
                defined[module_name] = None if text is None else _top_level_names(text)
            names = defined[module_name]
            if names is None:
                modules = sorted(p.stem for p in (root / "figures").glob("*.py"))
                close = difflib.get_close_matches(module_name, modules, n=1)
                hint = f" (did you mean {close[0]}.{func_name}?)" if close else ""
                errors.append(BuildError(f"unknown figure {figure_id!r}: there is no figures/{module_name}.py{hint}",
                                         built.page.path, line))
                continue
            if func_name not in names:
                close = difflib.get_close_matches(func_name, names, n=1)
                hint = f" (did you mean {module_name}.{close[0]}?)" if close else ""
                errors.append(BuildError(f"unknown figure {figure_id!r}: figures/{module_name}.py has no function "
                                         f"{func_name!r}{hint}", built.page.path, line))
    raise_all(errors)


def _top_level_names(text: str) -> list[str]:
    """The names a recipe module binds at its top level: functions, assignments, imports (not run: read)."""
    import re

    names = re.findall(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)", text, re.M)
    names += re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)", text, re.M)
    for imported in re.findall(r"^(?:from\s+\S+\s+)?import\s+([^\n#]+)", text, re.M):
        for part in imported.strip("() ").split(","):
            words = part.split()
            if words:
                names.append(words[-1].split(".")[0])
    return names


def load_recipe(figures_dir: Path, figure_id: str):
    """"multires.p2_gradients" -> the function p2_gradients in figures/multires.py."""
    import importlib.util

    module_name, _, func_name = figure_id.partition(".")
    path = figures_dir / f"{module_name}.py"
    if not func_name or not path.is_file():
        raise _Failure(f"unknown figure {figure_id!r}: expected a function {func_name or '…'!r} in "
                       f"figures/{module_name}.py")
    module = sys.modules.get(f"lessonkit_figures.{module_name}")
    if module is None:
        spec = importlib.util.spec_from_file_location(f"lessonkit_figures.{module_name}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: B036 (SystemExit too: a recipe module cannot end the build)
            raise _recipe_error(exc, path, f"figure module {path.name} failed") from None
        sys.modules[f"lessonkit_figures.{module_name}"] = module
    recipe = getattr(module, func_name, None)
    if recipe is None:
        raise _Failure(f"unknown figure {figure_id!r}: figures/{path.name} has no function {func_name!r}")
    return recipe


def to_svg(fig) -> bytes:
    """A matplotlib figure as SVG bytes, identical from run to run, with theme colours."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    for sentinel, var in _CSS_VARS.items():
        svg = re.sub(re.escape(sentinel), var, svg, flags=re.IGNORECASE)
    # The theme goes right after the opening <svg …> tag.
    head_end = svg.index(">", svg.index("<svg")) + 1
    return (svg[:head_end] + _THEME + svg[head_end:]).encode("utf-8")


class _Values(dict):
    """The measured values as a recipe reads them, recording each key it reads; reading an unknown key says
    which key was meant."""

    def __init__(self, values: dict, sweeps: dict):
        super().__init__(values)
        self.read: set[str] = set()
        self._sweeps = sweeps

    def __missing__(self, key):
        import difflib

        close = difflib.get_close_matches(str(key), list(self), n=1)
        raise KeyError(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.read.add(key)
        return value

    def get(self, key, default=None):
        return self[key] if key in self else default

    def over_seeds(self, key: str) -> list:
        """The value on every seed the build ran, the course seed first."""
        self[key]  # an unknown key is the same error as above
        if key not in self._sweeps:
            raise KeyError(f"{key!r}: counted by the build, not measured on each seed")
        return list(self._sweeps[key])


def draw(figures_dir: Path, figure_id: str, values: dict, lang: str, sweeps: dict | None = None) -> tuple[bytes, list]:
    """A figure's SVG, and the value keys its recipe read."""
    import warnings

    import matplotlib

    _configure(matplotlib)
    recipe = load_recipe(figures_dir, figure_id)
    path = figures_dir / f"{figure_id.partition('.')[0]}.py"
    with warnings.catch_warnings():
        # A missing glyph is a broken figure, not a warning to scroll past.
        warnings.filterwarnings("error", message="Glyph .* missing")
        try:
            given = _Values(values, sweeps or {})
            fig = recipe(given, lang)
            import matplotlib.figure

            if not isinstance(fig, matplotlib.figure.Figure):
                raise _Failure(f"figure {figure_id!r} ({lang}): the recipe returned {type(fig).__name__}, "
                               f"not a matplotlib Figure", f"figures/{path.name}")
            return to_svg(fig), sorted(given.read)
        except _Failure:
            raise
        except KeyError as exc:
            error = _recipe_error(exc, path, f"figure {figure_id!r} reads unknown value")
            error.message = f"figure {figure_id!r} reads unknown value {exc.args[0] if exc.args else exc}"
            raise error from None
        except UserWarning as exc:
            raise _recipe_error(exc, path, f"figure {figure_id!r} ({lang})") from None
        except BaseException as exc:  # noqa: B036 (SystemExit too: author code cannot end the build)
            raise _recipe_error(exc, path, f"figure {figure_id!r} ({lang}) failed") from None


def worker() -> None:
    """Draw every item of a job file: python -c "... worker()" JOB.json PROGRESS.jsonl."""
    import os

    job_file, progress_file = sys.argv[1], sys.argv[2]
    sys.argv = ["figures"]  # a recipe module's argparse sees no options of the build's
    job = json.loads(Path(job_file).read_text("utf-8"))
    progress = open(progress_file, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
    i = None
    try:
        for i, item in enumerate(job["items"]):
            svg, read = draw(Path(job["figures_dir"]), item["id"], job["values"], item["lang"], job["sweeps"])
            Path(item["out"]).write_bytes(svg)
            progress.write(json.dumps({"done": i, "read": read}) + "\n")
            progress.flush()
    except _Failure as exc:
        failure = {"message": exc.message, "path": exc.path, "line": exc.line, "item": i}
        progress.write(json.dumps({"failure": failure}) + "\n")
        progress.flush()
        os._exit(3)
    except BaseException as exc:  # noqa: B036 (the engine's own fault: say it in one line)
        traceback.print_exc()
        failure = {"message": f"drawing figures failed: {type(exc).__name__}: {exc}"}
        progress.write(json.dumps({"failure": failure}) + "\n")
        progress.flush()
        os._exit(3)
    progress.close()
    os._exit(0)
