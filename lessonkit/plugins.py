"""Plugins: Markdown syntax, a hook on every finished page, and outputs, from installed packages.

A plugin is an installed package that declares an entry point in the group `lessonkit.plugins`:

    [project.entry-points."lessonkit.plugins"]
    kbd = "lessonkit_kbd:Plugin"

and a course uses it by name, in site.yaml: `plugins: [kbd]`. The entry point names a class (made with no
arguments) or an object, with any of the hooks of `Plugin`. Search and PDF are the engine's own outputs
through the same hook.

A plugin is code the author installed, as trusted as the engine (a course folder can name one, never ship
one); its files are part of every page's cache key, so an edit of it builds the pages again. What it raises
is one line naming the plugin.
"""

from __future__ import annotations

from pathlib import Path

from lessonkit.errors import BuildError

GROUP = "lessonkit.plugins"


class Plugin:
    """The hooks, each optional: a plugin defines the ones it needs."""

    name = ""

    def markdown(self, md) -> None:
        """Add syntax to the parser: `md.use(a_markdown_it_py_plugin)`. A page's context, with its language,
        is `env["ctx"]` in a rule (markdown/parser.PageContext)."""

    def page(self, html: str, page: dict) -> str:
        """A finished page's HTML (`page`: url, lang, title), returned as it should be written."""
        return html

    def output(self, folder: Path, site: dict, say) -> None:
        """Add files to the finished site in `folder` (before it replaces the last one); `site`: the course's
        root, languages, config (site.yaml), pages ([(url, lang, title)]) and html_files (how many)."""


def installed() -> dict:
    """The plugins this Python can load: name -> entry point."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load(names: list[str], where: tuple = ()) -> tuple:
    """The plugins a course names, made: each an object with the hooks it defines."""
    if not names:
        return ()  # (reading the installed packages' entry points costs a few milliseconds)
    found, made = installed(), []
    for name in names:
        if name not in found:
            have = ", ".join(sorted(found)) or "none"
            raise BuildError(f"plugin {name!r} is not installed (installed {GROUP} entry points: {have})", *where)
        try:
            obj = found[name].load()
            obj = obj() if isinstance(obj, type) else obj
        except Exception as exc:  # a broken plugin package: one line, not a traceback
            raise BuildError(f"plugin {name!r} cannot be loaded: {type(exc).__name__}: {exc}", *where) from exc
        if not getattr(obj, "name", ""):
            try:
                obj.name = name
            except AttributeError:
                pass
        made.append(obj)
    return tuple(made)


def files(names: list[str]) -> list[Path]:
    """The files of the named plugins' packages (found without importing them): what a build depends on."""
    from importlib.util import find_spec

    out, found = [], installed()
    for name in names:
        ep = found.get(name)
        spec = find_spec(ep.module.split(".")[0]) if ep is not None else None
        if spec is None or not spec.origin:
            continue
        origin = Path(spec.origin)
        out.append(origin.parent if origin.name == "__init__.py" else origin)
    return out


def digest(names: list[str]) -> str:
    """What the named plugins are made of, for cache keys: their names and their files' digest."""
    from lessonkit.io import files_digest

    return f" plugins {' '.join(names)} {files_digest(*files(names))}" if names else ""


def pages(plugins: tuple, html: str, page: dict) -> str:
    """A finished page through every plugin's page hook, in the order site.yaml names them."""
    for plugin in plugins:
        if getattr(plugin, "page", None) is None:
            continue
        changed = call(plugin, "page", html, page)
        if not isinstance(changed, str):
            raise BuildError(f"plugin {plugin.name!r}, page(): returned {type(changed).__name__}, not the page's HTML")
        html = changed
    return html


def call(plugin, hook: str, *args):
    """A plugin's hook, or None when it has none; what it raises is one line naming it."""
    method = getattr(plugin, hook, None)
    if method is None:
        return None
    try:
        return method(*args)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError(f"plugin {plugin.name!r}, {hook}(): {type(exc).__name__}: {exc}") from exc
