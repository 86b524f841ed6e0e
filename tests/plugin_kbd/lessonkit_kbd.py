"""A lessonkit plugin that lives outside the engine: keys written ++Ctrl++ shown as <kbd>, a meta tag on every
page, and a list of the pages beside the site. tests/test_extending.py installs it by putting this folder on
the path (its .dist-info declares the entry point, as an installed package's does)."""

import json
from html import escape


def _keys(state, silent):
    src, pos = state.src, state.pos
    if not src.startswith("++", pos):
        return False
    end = src.find("++", pos + 2)
    if end < 0 or end == pos + 2:
        return False
    if not silent:
        state.push("kbd", "", 0).content = src[pos + 2:end]
    state.pos = end + 2
    return True


def _render(self, tokens, idx, options, env):
    return f"<kbd>{escape(tokens[idx].content)}</kbd>"


class Plugin:
    def markdown(self, md):
        md.inline.ruler.before("emphasis", "kbd", _keys)
        md.add_render_rule("kbd", _render)

    def page(self, html, page):
        return html.replace("</head>", f'<meta name="kbd-page" content="{escape(page["lang"])}"></head>', 1)

    def output(self, folder, site, say):
        (folder / "kbd-pages.json").write_text(json.dumps([url for url, _, _ in site["pages"]]), "utf-8")
        say(f"kbd: listed {len(site['pages'])} pages")
