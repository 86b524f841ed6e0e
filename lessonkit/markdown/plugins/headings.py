"""Heading ids shared by both languages: `## Title {#id}`, else a positional id.

Collects the table of contents and refuses duplicate ids.
"""

import re

from markdown_it import MarkdownIt

from lessonkit.errors import BuildError
from lessonkit.markdown.plugins.lines import line_of
from lessonkit.markdown.plugins.spans import check_id
from lessonkit.model import tex_text

_EXPLICIT = re.compile(r"\s*\{#([A-Za-z][\w-]*)\}\s*$")
_LIKE_EXPLICIT = re.compile(r"\{#([^{}]*)\}\s*$")  # meant as an id, but not one


def headings_plugin(md: MarkdownIt) -> None:
    def rule(state):
        ctx = state.env["ctx"]
        counters = [0] * 7
        tokens = state.tokens
        # A body with its own "# Title" numbers sections under it (s-1-2), so that "# A ## x # B ## y"
        # does not give x and y the same id.
        start = 1 if any(t.type == "heading_open" and t.tag == "h1" for t in tokens) else 2
        for i, token in enumerate(tokens):
            if token.type != "heading_open":
                continue
            level = int(token.tag[1])
            inline = tokens[i + 1]
            counters[level] += 1
            counters[level + 1:] = [0] * (6 - level)
            last = inline.children[-1] if inline.children else None
            match = _EXPLICIT.search(last.content) if last is not None and last.type == "text" else None
            if match:
                hid = match.group(1)
                last.content = last.content[: match.start()]
                inline.content = _EXPLICIT.sub("", inline.content)
            elif last is not None and last.type == "text" and (meant := _LIKE_EXPLICIT.search(last.content)):
                import unicodedata

                odd = [f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}" for c in meant.group(1)
                       if not (c.isalnum() or c in "_-")]
                raise BuildError(f"heading id {{#{meant.group(1)}}} is not an id (a letter, then letters, digits, "
                                 f"_ and -){': it holds ' + ', '.join(odd) if odd else ''}", ctx.path,
                                 line_of(token, ctx))
            else:
                hid = "s-" + "-".join(str(c) for c in counters[start:level + 1] or [counters[level]])
            if hid in ctx.ids:
                raise BuildError(f"duplicate heading id {hid!r}", ctx.path, line_of(token, ctx))
            if match:  # an author's id must not take one the page writes itself
                try:
                    check_id(ctx, hid)
                except BuildError as exc:
                    raise exc.located(ctx.path, line_of(token, ctx)) from None
            ctx.ids.add(hid)
            token.attrSet("id", hid)
            text = "".join(c.content if c.type in ("text", "code_inline") else tex_text(f"${c.content}$")
                           for c in inline.children if c.type in ("text", "code_inline", "math_inline"))
            ctx.out.toc.append({"level": level, "id": hid, "text": text.strip(), "line": line_of(token, ctx)})

    md.core.ruler.push("lessonkit_headings", rule)

    def heading_close(self, tokens, idx, options, env):
        hid = tokens[idx - 2].attrGet("id")
        return env["ctx"].inputs.parts("heading_anchor", id=hid) + f"</{tokens[idx].tag}>\n"

    md.add_render_rule("heading_close", heading_close)
