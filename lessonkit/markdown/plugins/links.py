"""Links: `page.md#anchor` becomes `page.html#anchor`; outside links are marked external.

A link to another page of the course (`x.md`, `../en/x.md` for the other language, or `x.html`)
must name a page that exists; its #anchor is checked once every page is parsed (markdown/crosscheck.py),
both with the source line and a did-you-mean.
"""

import posixpath

from markdown_it import MarkdownIt

from lessonkit.errors import BuildError
from lessonkit.markdown.plugins.lines import line_of


def _target(ctx, path: str) -> str | None:
    """The site URL of the course page a relative link names ("en/x.html"), or None if it is not one."""
    for suffix in (".md", ".html"):
        if path.endswith(suffix):
            here = posixpath.dirname(ctx.page.url)
            url = posixpath.normpath(posixpath.join(here, path[: -len(suffix)])) + ".html"
            lang, _, slug = url.partition("/")
            if url.startswith("..") or lang not in ctx.inputs.strings:
                return "outside"
            return url if slug[:-5] in ctx.inputs.slugs else "missing"
    return None


def links_plugin(md: MarkdownIt) -> None:
    def rule(state):
        ctx = state.env["ctx"]
        for block in state.tokens:
            for token in block.children or []:
                if token.type == "image":
                    src = token.attrGet("src") or ""
                    if "://" in src or src.startswith("//"):  # a reader's browser would ask another site for it
                        ctx.out.warnings.append((line_of(token, ctx), f"image {src!r} loads from outside the site "
                                                 f"(offline readers miss it, and the site asks another host): copy "
                                                 f"it into templates/static/"))
                    elif src.startswith("/") or posixpath.normpath(
                            posixpath.join(posixpath.dirname(ctx.page.url), src.partition("?")[0])).startswith(".."):
                        # a path of the author's machine (/tmp/…), or above the site: no reader has it
                        ctx.out.warnings.append((line_of(token, ctx), f"image {src!r} is not a file of the site (an "
                                                 f"absolute path, or one above the site's folder): copy it into "
                                                 f"templates/static/ and write its path from the page"))
                    continue
                if token.type != "link_open":
                    continue
                href = token.attrGet("href") or ""
                if "://" in href or href.startswith(("mailto:", "//")):
                    token.attrSet("class", "external")
                    token.attrSet("rel", "noopener external")
                    continue
                line = line_of(token, ctx)
                path, _, anchor = href.partition("#")
                if not path:
                    ctx.out.links.append((ctx.page.url, anchor, line, href))
                    continue
                url = _target(ctx, path)
                if url is None:
                    continue  # a file of the site (a figure, a download): --check looks at it
                if url in ("outside", "missing"):
                    ctx.report(BuildError(f"link {href!r} leaves content/" if url == "outside" else
                                          f"link to a page that does not exist: {href!r}", ctx.path, line))
                    continue
                ctx.out.links.append((url, anchor, line, href))
                suffix = ".md" if path.endswith(".md") else ".html"
                token.attrSet("href", path[: -len(suffix)] + ".html" + (f"#{anchor}" if anchor else ""))

    md.core.ruler.push("lessonkit_links", rule)
