"""Links: `page.md#anchor` becomes `page.html#anchor` (checked to exist); outside links are marked."""

import posixpath

from markdown_it import MarkdownIt

from ..errors import BuildError
from .lines import line_of


def links_plugin(md: MarkdownIt) -> None:
    def rule(state):
        ctx = state.env["ctx"]
        for block in state.tokens:
            for token in block.children or []:
                if token.type != "link_open":
                    continue
                href = token.attrGet("href") or ""
                if "://" in href or href.startswith("mailto:"):
                    token.attrSet("class", "external")
                    token.attrSet("rel", "noopener external")
                    continue
                if href.startswith("#") or not href:
                    ctx.local_links.append((href[1:], line_of(token, ctx)))
                    continue
                path, _, anchor = href.partition("#")
                if not path.endswith(".md"):
                    continue
                here = posixpath.dirname(ctx.page.slug)
                target = posixpath.normpath(posixpath.join(here, path[:-3]))
                if target.startswith(".."):
                    raise BuildError(f"link {href!r} leaves content/", ctx.path, line_of(token, ctx))
                if target not in ctx.inputs.slugs:
                    raise BuildError(f"link to a page that does not exist: {href!r}", ctx.path, line_of(token, ctx))
                token.attrSet("href", path[:-3] + ".html" + (f"#{anchor}" if anchor else ""))

    md.core.ruler.push("lessonkit_links", rule)
