"""The course's Jinja environment: its templates/, sandboxed and with a time limit, and template errors as
file:line."""

from __future__ import annotations

import time
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.load.parts import Loader, SealedTemplates, template_error


class _Sandboxed(ImmutableSandboxedEnvironment):
    """A course's templates are its code: Jinja's sandbox (no Python objects reached, ranges capped, nothing
    mutated), with a time limit per render, checked at every call and attribute a template makes."""

    deadline: float | None = None

    def _in_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.deadline = None
            raise TimeoutError("the template ran past the course's time limit (content/site.yaml: "
                               "experiment_timeout)")

    def call(self, __context, __obj, *args, **kwargs):  # noqa: N807 (Jinja's own signature)
        self._in_time()
        return super().call(__context, __obj, *args, **kwargs)

    def getattr(self, obj, attribute):
        self._in_time()
        return super().getattr(obj, attribute)

    def getitem(self, obj, argument):
        self._in_time()
        return super().getitem(obj, argument)


def environment(root: Path, strings: dict, time_limit: float = 120) -> jinja2.Environment:
    # Compiled templates are kept sealed (SealedTemplates): never Jinja's own file cache, which unpickles.
    env = _Sandboxed(
        loader=Loader(root),
        bytecode_cache=SealedTemplates(root / ".cache" / "templates" / "pages"),
        autoescape=jinja2.select_autoescape(["html", "xml"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.time_limit = time_limit
    from lessonkit.notation import notation

    env.filters["notation"] = notation
    env.filters["counted"] = counted
    env.globals.update(lang_tag=lambda lang: strings[lang]["tag"], lang_name=lambda lang: strings[lang]["lang_name"],
                       claim_anchor=names.claim_anchor, experiment_anchor=names.experiment_anchor,
                       summary_row=_summary_row)
    return env


def counted(text: str, **counts) -> str:
    """An interface string with its counts filled in; `{name_s}` is "s" unless the count `name` is 1 (the
    English plural: "{n} experiment{n_s}")."""
    plural = {f"{k}_s": "" if v == 1 else "s" for k, v in counts.items() if isinstance(v, int)}
    return text.format(**counts, **plural)


def _summary_row(claim) -> Markup:
    """A claim's summary row attributes, as the markup contract declares them (lessonkit/markup.py)."""
    from lessonkit.markup import Row

    return Markup(Row(claim.key, claim.passed, claim.seeds, claim.held, not claim.on_course_seed,
                      bool(claim.refuted)).attrs())


def warm(env: jinja2.Environment) -> None:
    """Compile every template ahead of its first use (a build does it while worker processes parse). A
    template that fails here is left alone: it fails again, with its line, where it is used."""
    for name in env.list_templates(extensions=["html", "xml"]):
        try:
            env.get_template(name)
        except Exception:  # reported where the template is used
            continue


def get_template(env: jinja2.Environment, name: str, root: Path) -> jinja2.Template:
    try:
        template = env.get_template(name)
        _blocks_known(env, root)
        return template
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, root) from None


def _blocks_known(env: jinja2.Environment, root: Path) -> None:
    """Each of the course's own templates that extends another overrides only blocks a template above it has:
    Jinja drops any other block without a word, so that `{% block fotter %}` would change nothing. The default
    theme's templates are the engine's, and tested; a course that has none of its own costs nothing here."""
    from jinja2 import nodes

    from lessonkit.load import theme
    from lessonkit.names import did_you_mean

    if env.__dict__.setdefault("blocks_checked", False):
        return
    own = [f for f in theme.folders(root) if f.resolve() != theme.DEFAULT]
    for folder in own:
        for path in sorted(folder.rglob("*.html")):
            name = path.relative_to(folder).as_posix()
            if name.startswith(("static/", "i18n/")) or _same_file(path, theme.DEFAULT / name):
                continue  # (a copy of the theme's own template is the theme's: tested with it)
            tree = env.parse(env.loader.get_source(env, name)[0])
            extends = next(tree.find_all(nodes.Extends), None)
            if extends is None or not isinstance(extends.template, nodes.Const):
                continue
            known, above = set(), extends.template.value
            for _ in range(32):  # its parent's blocks, and those of every template above that
                known |= set(env.get_template(above).blocks)
                up = next(env.parse(env.loader.get_source(env, above)[0]).find_all(nodes.Extends), None)
                if up is None or not isinstance(up.template, nodes.Const):
                    break
                above = up.template.value
            inner = {id(b) for outer in tree.find_all(nodes.Block) for b in outer.find_all(nodes.Block)}
            for block in tree.find_all(nodes.Block):
                if id(block) not in inner and block.name not in known:
                    raise BuildError(f"block {block.name!r} is not a block of {extends.template.value}"
                                     f"{did_you_mean(block.name, known)}: it would change nothing (its blocks: "
                                     f"{', '.join(sorted(known))})", theme.shown(root, path), block.lineno)
    env.blocks_checked = True


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def render_template(env, course_root: Path, name: str, **context) -> str:
    try:
        template = get_template(env, name, course_root)
        env.deadline = time.monotonic() + getattr(env, "time_limit", 120)
        try:
            return template.render(**context)
        finally:
            env.deadline = None
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, course_root) from None


def build_facts_read(env: jinja2.Environment, names: tuple[str, ...]) -> set[str] | None:
    """Which facts of `build` (what templates say about the build: seed, search, pdf …) the named templates and
    every template they extend, include or import read, found in their source: what a page's cache key must
    hold of them. None: a template uses `build` otherwise than by a name (whole, or by a computed key), so
    every fact counts. A template that cannot be read is left to fail where it is rendered."""
    from jinja2 import meta, nodes

    seen, todo, read = set(), list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            source = env.loader.get_source(env, name)[0]
            ast = env.parse(source)
        except Exception:
            continue
        used = {id(n.node) for n in ast.find_all((nodes.Getattr, nodes.Getitem))
                if isinstance(n.node, nodes.Name) and n.node.name == "build"}
        for n in ast.find_all(nodes.Getattr):
            if isinstance(n.node, nodes.Name) and n.node.name == "build":
                read.add(n.attr)
        for n in ast.find_all(nodes.Getitem):
            if isinstance(n.node, nodes.Name) and n.node.name == "build":
                if not isinstance(n.arg, nodes.Const):
                    return None
                read.add(str(n.arg.value))
        if any(n.name == "build" and id(n) not in used for n in ast.find_all(nodes.Name) if n.ctx == "load"):
            return None
        todo += [t for t in meta.find_referenced_templates(ast) if t is not None]
    return read


def build_facts_key(env: jinja2.Environment, cache: Path, shared: str, info: dict) -> str:
    """The facts of the build that the page templates read, as part of every page's key (a page that shows
    its PDF links is rendered again when --pdf comes or goes, whoever wrote the template). Which facts they
    read is kept in `cache` by the key of the templates (`shared`): finding them costs a parse of each."""
    import json

    from lessonkit.io import read_cache, write_cache

    kept = read_cache(cache, {})
    if isinstance(kept, dict) and kept.get("key") == shared and (kept.get("read") is None
                                                               or isinstance(kept.get("read"), list)):
        read = kept["read"]
    else:
        found = build_facts_read(env, ("page.html", "side_by_side.html"))
        read = None if found is None else sorted(found)
        write_cache(cache, {"key": shared, "read": read})
    facts = info if read is None else {k: info.get(k) for k in read}
    return " build " + json.dumps(facts, sort_keys=True, default=str)
