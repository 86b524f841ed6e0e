"""A page's Markdown through the engine's plugins and the default theme's partials, in this process, with
a few made-up measurements: what the plugin tests and the fixture files (tests/fixtures/) render with."""

from pathlib import Path

import pytest

from lessonkit.errors import BuildError
from lessonkit.load.parts import Parts
from lessonkit.load.strings import load_strings
from lessonkit.markdown import parser
from lessonkit.markdown.plugins import fill_figure_slots
from lessonkit.markdown.plugins.outline import strip_markers
from lessonkit.measure.claims import Claim, Measurements, Value
from lessonkit.measure.falsifiable import fails_when
from lessonkit.model import Page

ROOT = Path(__file__).resolve().parent.parent
STRINGS = load_strings(ROOT, ["zh", "en"])
PARTS = Parts(ROOT)


def measurements() -> Measurements:
    m = Measurements()
    m.values = {k: Value(k, v, "experiments/exp.py")
                for k, v in {"exp.ratio": 1.08e-7, "exp.rank": 4, "exp.d": 48, "exp.ranks": [4, 4]}.items()}
    claim = Claim(key="exp.vanish", criterion="exp.ratio < 1e-6", text={"zh": "消失", "en": "vanishes"},
                  shows=["exp.ratio"], refuted=False, note={}, experiment="experiments/exp.py",
                  seed=0, params={}, source_lines=[1, 2], versions={})
    claim.fails_when = fails_when(claim.criterion, claim.refuted, {"exp.ratio": 1.08e-7}, ["exp.ratio"], {"exp.ratio"})
    m.claims = {claim.key: claim}
    m.values["exp.ratio"].claim = m.values["exp.ratio"].listing = "exp.vanish"
    return m


def render(md: str, lang: str = "en", body_line: int = 5, slugs=("a", "dir/b"), slug: str = "a",
           glossary=None, references=None, sizes=None):
    """A page's Markdown through the plugins: (HTML with figure sizes filled in, what the page collected)."""
    page = Page(slug, lang, Path(f"content/{lang}/{slug}.md"), {"title": "T"}, md, body_line, "0" * 12)
    inputs = parser.Inputs(measurements(), STRINGS, set(slugs), glossary or [], references or {}, parts=PARTS)
    body, collected = parser.to_html(page, inputs)
    # As render.py puts a page together: figure sizes filled in, the block markers (for side-by-side pages) gone.
    body = strip_markers(body)
    return fill_figure_slots(body, sizes or {(f, lang): (600, 300) for f, _ in collected.figures}, lang), collected


def error_of(md: str, **kw) -> str:
    with pytest.raises(BuildError) as info:
        render(md, **kw)
    return str(info.value)
