"""$…$ and $$…$$ to MathML at build time, with Temml (vendored in lessonkit/markdown/vendor/, run in QuickJS).

Temml writes MathML Core: operator names with function application and their spacing (ln n, not
lnn), \\operatorname and \\arg\\max with limits, aligned equations, matrices and cases. It was
chosen over latex2mathml with a gallery of 77 formulas (tests/formulas.py): latex2mathml ran
operator names into their arguments, passed \\arg through as text and garbled aligned environments.
An unknown command or a missing brace is an error with the page's line. Converted formulas are kept
between builds (markdown/conversions.py): a page edit starts no JavaScript engine.
"""

import html
import re
import unicodedata
from functools import lru_cache
from html import escape
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.dollarmath import dollarmath_plugin

from lessonkit.errors import BuildError
from lessonkit.markdown.conversions import Memo
from lessonkit.markdown.plugins import number_label
from lessonkit.markdown.plugins.lines import line_of
from lessonkit.markdown.plugins.punct import glued

TEMML = Path(__file__).resolve().parent.parent / "vendor" / "temml.min.js"


def _balanced(tex: str) -> bool:
    depth = 0
    for m in re.finditer(r"\\.|[{}]", tex):
        if m.group() == "{":
            depth += 1
        elif m.group() == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _made_by() -> str:
    from lessonkit.io import files_digest

    return f"temml {files_digest(TEMML, Path(__file__), length=12)}"


CACHE = Memo(_made_by)


def tex_to_mathml(tex: str, display: bool) -> str:
    return CACHE.get(f"{'block' if display else 'inline'}:{tex}", lambda: _convert(tex, display))


@lru_cache(maxsize=1)
def _temml():
    """Temml in a QuickJS context (about 30 ms to start; made once per process, when a formula needs it)."""
    import quickjs

    js = quickjs.Context()
    js.eval(TEMML.read_text("utf-8"))
    return js.eval("(function (tex, display) { try { return temml.renderToString(tex, "
                   "{displayMode: display, throwOnError: true}); } catch (e) { return '!' + e.message; } })")


_UNDEFINED = re.compile(r"(?:Undefined control sequence|Unsupported function name): (\\[A-Za-z]+)")


def _convert(tex: str, display: bool) -> str:
    if not _balanced(tex):
        raise BuildError(f"LaTeX has unbalanced braces: ${tex}$")
    try:
        mathml = _temml()(tex, display)
    except UnicodeDecodeError:  # its message underlines each UTF-16 unit: a character outside the BMP, cut in two
        astral = ", ".join(sorted({f"U+{ord(c):04X}" for c in tex if ord(c) > 0xFFFF})) or "a character"
        raise BuildError(f"LaTeX the converter cannot write back ({astral}, outside the Basic Multilingual "
                         f"Plane): ${tex}$") from None
    if mathml.startswith("!"):  # Temml's error (MathML never starts so)
        unknown = _UNDEFINED.search(mathml)
        if unknown:
            raise BuildError(f"unknown LaTeX command {unknown.group(1)} in ${tex}$")
        reason = mathml[1:].replace("Temml parse error:", "").split("\n")[0].strip()
        raise BuildError(f"LaTeX the converter rejects ({reason}): ${tex}$")
    # Keep the source for copy-paste and for readers of the raw HTML.
    return mathml.replace("<math", f'<math alttext="{escape(tex.strip())}"', 1)


_MATH = re.compile(r"<math\b[^>]*>(.*?)</math>", re.S)
_TAG = re.compile(r"<[^>]*>")


def characters(mathml: str) -> set[str]:
    """The characters a browser may draw for these formulas: their text, the math-italic form of each letter
    (a one-letter <mi> is drawn in italic from Unicode's Mathematical Alphanumeric Symbols), and the radical
    sign a square or n-th root is drawn with."""
    text = set()
    for m in _MATH.finditer(mathml):
        text |= set(html.unescape(_TAG.sub("", m.group(1))))
        if "<msqrt" in m.group(1) or "<mroot" in m.group(1):
            text.add("\u221a")
    return text | {c for c in map(_italic, text) if c}


# What the browser's italic (CSS text-transform: math-auto) draws that Unicode's names do not pair.
_ITALIC = {"h": "\u210e", "\u0131": "\U0001d6a4", "\u0237": "\U0001d6a5", "\u2207": "\U0001d6fb",
           "\u2202": "\U0001d715", "\u03f5": "\U0001d716", "\u03d1": "\U0001d717", "\u03f0": "\U0001d718",
           "\u03d5": "\U0001d719", "\u03f1": "\U0001d71a", "\u03d6": "\U0001d71b"}


def _italic(c: str) -> str | None:
    if c in _ITALIC:
        return _ITALIC[c]
    name = unicodedata.name(c, "")
    for script in ("LATIN ", "GREEK "):  # LATIN SMALL LETTER A -> MATHEMATICAL ITALIC SMALL A
        if name.startswith(script) and (c.isascii() or "\u0391" <= c <= "\u03c9"):
            try:
                return unicodedata.lookup("MATHEMATICAL ITALIC " + name.removeprefix(script).replace(" LETTER", ""))
            except KeyError:
                return None
    return None


_INLINE = re.compile(r"\$([^$]+)\$")


def inline_math(ctx, text: str) -> Markup:
    """A short text an attribute holds (a correction), escaped, with its $…$ formulas as MathML."""
    out, at = [], 0
    for m in _INLINE.finditer(text):
        mathml = tex_to_mathml(m.group(1), False)
        ctx.out.math = "".join(sorted(set(ctx.out.math) | characters(mathml)))
        out += [escape(text[at:m.start()], quote=False), mathml]
        at = m.end()
    return Markup("".join(out) + escape(text[at:], quote=False))


def math_plugin(md: MarkdownIt) -> None:
    # double_inline: $$…$$ inside a paragraph is display math too.
    md.use(dollarmath_plugin, double_inline=True, allow_digits=False)

    def render(display: bool):
        def rule(self, tokens, idx, options, env):
            token = tokens[idx]
            ctx = env["ctx"]
            try:
                mathml = tex_to_mathml(token.content, display)
            except BuildError as exc:
                return ctx.report(exc, token)
            ctx.out.math = "".join(sorted(set(ctx.out.math) | characters(mathml)))
            if not display:
                return glued(tokens[idx], mathml)
            number, anchor = None, None
            if token.type == "math_block_label":  # $$ … $$ (label): numbered, named by {ref}`eq:label`
                number, anchor = ctx.out.labels[f"eq:{token.info}"]
            html = ctx.inputs.parts("equation", mathml=Markup(mathml), number=number, anchor=anchor,
                                    block=bool(token.block), strings=ctx.strings)
            return html + "\n" if token.block else html
        return rule

    md.add_render_rule("math_inline", render(False))
    md.add_render_rule("math_inline_double", render(True))
    md.add_render_rule("math_block", render(True))
    md.add_render_rule("math_block_label", render(True))

    def number(state):
        ctx = state.env["ctx"]
        for token in state.tokens:
            if token.type == "math_block_label":
                if not re.fullmatch(r"[A-Za-z][\w-]*", token.info):
                    raise BuildError(f"equation label {token.info!r}: letters, digits, - and _ (e.g. (softmax))",
                                     ctx.path, line_of(token, ctx))
                number_label(ctx, f"eq:{token.info}", f"eq-{token.info}", token)

    md.core.ruler.push("lessonkit_equations", number)
