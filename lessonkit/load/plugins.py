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
HOOKS = ("markdown", "page", "output")
# The digest of each plugin's files when this process first imported it: a preview that keeps running must not
# build with code older than the files it keys the pages by. (A memo of this process, not a setting.)
_IMPORTED: dict[str, str] = {}


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


def installed(course: Path | None = None) -> dict:
    """The plugins this Python can load: name -> entry point. Not one inside the course folder, nor one found in
    the current folder itself (`python -m` puts it on the path): a course names plugins, it cannot ship one."""
    from importlib.metadata import entry_points

    course, here = course and course.resolve(), Path.cwd().resolve()
    out = {}
    for ep in entry_points(group=GROUP):
        where = [Path(w).resolve() for w in (getattr(ep.dist, "_path", None), _origin(ep)) if w is not None]
        if not any((course and w.is_relative_to(course)) or w.parent == here for w in where):
            out[ep.name] = ep
    return out


class Loaded:
    """A plugin as site.yaml names it, the object its entry point gave, and the digest of its files. Equal, and
    hashed, by name and files: the object itself may be unhashable."""

    __slots__ = ("name", "obj", "files")

    def __init__(self, name: str, obj, files: str = ""):
        self.name, self.obj, self.files = name, obj, files

    def __eq__(self, other) -> bool:
        return isinstance(other, Loaded) and (self.name, self.files) == (other.name, other.files)

    def __hash__(self) -> int:
        return hash((self.name, self.files))

    def __repr__(self) -> str:
        return f"Loaded({self.name!r})"


def load(names: list[str], where: tuple = (), course: Path | None = None) -> tuple[Loaded, ...]:
    """The plugins a course names, made: each an object with at least one of the hooks."""
    if not names:
        return ()  # (reading the installed packages' entry points costs a few milliseconds)
    found, made = installed(course), []
    for name in names:
        if name not in found:
            have = ", ".join(sorted(found)) or "none"
            raise BuildError(f"plugin {name!r} is not installed (installed {GROUP} entry points: {have})", *where)
        files = _digest(found[name])
        if _IMPORTED.setdefault(name, files) != files:
            raise BuildError(f"plugin {name!r} changed since this process loaded it: start the build again "
                             f"(a preview keeps the code it started with)", *where)
        try:
            obj = found[name].load()
            obj = obj() if isinstance(obj, type) else obj
        except Exception as exc:  # a broken plugin package: one line, not a traceback
            raise BuildError(f"plugin {name!r} cannot be loaded: {type(exc).__name__}: {exc}", *where) from exc
        if not any(callable(getattr(obj, hook, None)) for hook in HOOKS):
            raise BuildError(f"plugin {name!r}: {found[name].value} has none of the hooks {', '.join(HOOKS)}", *where)
        made.append(Loaded(name, obj, files))
    return tuple(made)


def _origin(ep) -> Path | None:
    """Where an entry point's top-level module lives (found without importing it)."""
    from importlib.util import find_spec

    try:
        spec = find_spec(ep.module.split(".")[0])
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin and spec.origin not in ("built-in", "frozen"):
        origin = Path(spec.origin)
        return origin.parent if origin.name == "__init__.py" else origin
    locations = list(spec.submodule_search_locations or ())  # a namespace package
    return Path(locations[0]) if locations else None


def _digest(ep) -> str:
    """What a plugin is made of: the files its distribution lists (an installed package's RECORD), else its
    top-level module or package folder, Python's caches apart."""
    from lessonkit.io import files_digest
    from lessonkit.load.inputs import skipped

    listed = [ep.dist.locate_file(f) for f in (getattr(ep.dist, "files", None) or ())
              if not any(skipped(part) for part in Path(str(f)).parts) and not str(f).endswith(".pyc")]
    origin = _origin(ep)
    paths = [Path(p) for p in listed if Path(p).is_file()] or ([origin] if origin else [])
    return files_digest(*sorted(paths), skip=skipped)


def digest(plugins: tuple[Loaded, ...]) -> str:
    """The plugins a build uses, for cache keys: their names and their files' digests."""
    return "".join(f" plugin {p.name} {p.files}" for p in plugins)


def named_digest(names: list[str], course: Path) -> str:
    """The same for names, without importing anything: the no-op check's."""
    found = installed(course)
    return "".join(f" plugin {n} {_digest(found[n]) if n in found else '-'}" for n in names)


def named_in(root: Path) -> str:
    """The plugins site.yaml names, with their files' digest: an edit of one builds again, wherever it is
    installed (an editable install lies outside site-packages, whose change the fingerprint sees)."""
    try:
        text = (root / "content" / "site.yaml").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    if "plugins" not in text:
        return ""
    from lessonkit.load.texts import load_yaml

    try:
        names = load_yaml(text).get("plugins")
    except Exception:  # the load stage reports what is wrong with it, at its line
        return ""
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        return ""
    return named_digest(names, root)


def pages(plugins: tuple[Loaded, ...], html: str, page: dict) -> str:
    """A finished page through every plugin's page hook, in the order site.yaml names them."""
    for plugin in plugins:
        if getattr(plugin.obj, "page", None) is None:
            continue
        changed = call(plugin, "page", html, page, where=page["url"])
        if not isinstance(changed, str):
            raise BuildError(f"plugin {plugin.name!r}, page() on {page['url']}: returned {type(changed).__name__}, "
                             f"not the page's HTML")
        html = changed
    return html


def call(plugin: Loaded, hook: str, *args, where: str = ""):
    """A plugin's hook, or None when it has none; what it raises is one line naming it (and the page)."""
    method = getattr(plugin.obj, hook, None)
    if method is None:
        return None
    try:
        return method(*args)
    except BuildError:
        raise
    except Exception as exc:
        on = f" on {where}" if where else ""
        raise BuildError(f"plugin {plugin.name!r}, {hook}(){on}: {type(exc).__name__}: {exc}") from exc
