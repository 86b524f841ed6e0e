"""Give every inline token the source line it comes from (token.meta["line"]).

Block tokens know their lines (token.map); inline children do not. Errors name
the file line, so a core rule counts line breaks inside each inline block.
"""

from markdown_it import MarkdownIt


def _number(tokens, first_line: int) -> None:
    for token in tokens:
        if token.map:
            token.meta["line"] = first_line + token.map[0]
        if token.type == "inline" and token.children:
            line = token.meta.get("line", first_line)
            for child in token.children:
                child.meta["line"] = line
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.content:
                    line += child.content.count("\n")


def lines_plugin(md: MarkdownIt) -> None:
    def rule(state):
        _number(state.tokens, state.env["ctx"].body_line)

    # "inline" fills the children; everything after this runs with lines known.
    md.core.ruler.after("inline", "lessonkit_lines", rule)


def line_of(token, ctx) -> int:
    return token.meta.get("line", ctx.body_line)
