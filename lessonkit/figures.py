"""Draw figures: call a recipe in figures/, save a byte-stable, theme-aware SVG.

A recipe is a function in ``figures/<module>.py``::

    def p2_gradients(values: dict, lang: str) -> matplotlib.figure.Figure

``values`` holds every measured value by full key ("multires.p2.ratio"); ``lang``
is "zh" or "en" for the labels. Recipes draw with the default text colour and
the colour cycle C0..C3; this module turns those into CSS variables so the same
SVG reads in the light and the dark theme.
"""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

from .errors import BuildError

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


def _ensure_fonts() -> None:
    """Chinese labels need Noto Sans CJK SC; a font installed after matplotlib
    cached its font list is only seen once the cache is rebuilt."""
    from matplotlib import font_manager

    def have() -> bool:
        return any(f.name == FONTS[0] for f in font_manager.fontManager.ttflist)

    if not have():
        font_manager.fontManager = font_manager._load_fontmanager(try_read_cache=False)
        if not have():
            raise BuildError(f"font {FONTS[0]!r} is not installed (Debian: apt-get install fonts-noto-cjk)")


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
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": MUTED,
        "xtick.color": MUTED,
        "ytick.color": MUTED,
        "xtick.labelcolor": INK,
        "ytick.labelcolor": INK,
        "grid.color": MUTED,
        "grid.alpha": 0.3,
        "axes.prop_cycle": cycler(color=PALETTE),
        "figure.facecolor": "none",
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })


def load_recipe(figures_dir: Path, figure_id: str):
    """"multires.p2_gradients" -> the function p2_gradients in figures/multires.py."""
    module_name, _, func_name = figure_id.partition(".")
    path = figures_dir / f"{module_name}.py"
    if not func_name or not path.is_file():
        raise BuildError(f"unknown figure {figure_id!r}: expected a function in {path}")
    spec = importlib.util.spec_from_file_location(f"lessonkit_figures.{module_name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise _recipe_error(exc, path, f"figure module {path.name} failed") from None
    recipe = getattr(module, func_name, None)
    if recipe is None:
        raise BuildError(f"unknown figure {figure_id!r}: {path} has no function {func_name!r}")
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


def draw(figures_dir: Path, figure_id: str, values: dict, lang: str) -> bytes:
    import matplotlib

    _configure(matplotlib)
    import warnings

    recipe = load_recipe(figures_dir, figure_id)
    with warnings.catch_warnings():
        # A missing glyph is a broken figure, not a warning to scroll past.
        warnings.filterwarnings("error", message="Glyph .* missing")
        try:
            return to_svg(recipe(values, lang))
        except KeyError as exc:
            raise BuildError(f"figure {figure_id!r} reads unknown value {exc}") from None
        except UserWarning as exc:
            raise BuildError(f"figure {figure_id!r} ({lang}): {exc}") from None
        except Exception as exc:
            path = figures_dir / f"{figure_id.partition('.')[0]}.py"
            raise _recipe_error(exc, path, f"figure {figure_id!r} ({lang}) failed") from None


def _recipe_error(exc: Exception, path: Path, what: str) -> BuildError:
    """One line, at the recipe file's line where it broke (the deepest frame in that file)."""
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return BuildError(f"{what}: {type(exc).__name__}: {exc}", path.relative_to(path.parent.parent), line)


def svg_size(svg: bytes) -> tuple[int, int]:
    """The SVG's size in CSS pixels (matplotlib writes points), for <img width height>."""
    head = svg[:2000].decode("utf-8", "replace")
    w = re.search(r'width="([\d.]+)pt"', head)
    h = re.search(r'height="([\d.]+)pt"', head)
    return round(float(w.group(1)) * 4 / 3), round(float(h.group(1)) * 4 / 3)


def cached_draw(figures_dir: Path, cache_dir: Path, figure_id: str, values: dict, lang: str) -> bytes:
    """Draw only when the recipe module or the values changed; a hit imports no matplotlib."""
    import hashlib
    import json

    from .versions import package_version

    module = figures_dir / f"{figure_id.partition('.')[0]}.py"
    h = hashlib.sha256()
    h.update(module.read_bytes() if module.is_file() else b"")
    h.update(Path(__file__).read_bytes())  # the save settings and theme live here
    h.update(json.dumps(values, sort_keys=True).encode())
    h.update(f"{figure_id} {lang} {package_version('matplotlib')}".encode())
    path = cache_dir / f"{figure_id}.{lang}.{h.hexdigest()[:16]}.svg"
    if path.is_file():
        return path.read_bytes()
    svg = draw(figures_dir, figure_id, values, lang)
    cache_dir.mkdir(parents=True, exist_ok=True)
    for old in cache_dir.glob(f"{figure_id}.{lang}.*.svg"):
        old.unlink()
    path.write_bytes(svg)
    return svg
