"""Theme partials: the HTML of each Markdown feature (a value, a claim's status, a block, a figure, an audit
mark, a term's tip, an equation, a cross-reference, a code block) as a template of templates/parts/, which a
course overrides file by file as it overrides a page template. What each partial is given is written at its
top; the data-* attributes the checks read come made (lessonkit/markup.py) and must be kept.

Also where templates are found for the pages (Loader) and how a template's error is reported.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import jinja2
from markupsafe import Markup

from lessonkit.errors import BuildError
from lessonkit.io import INPUT_LIMIT
from lessonkit.load import theme

THEME = "theme/"


class Loader(jinja2.FileSystemLoader):
    """Templates from the course's templates/, then the default theme's (theme.py): a link that leads outside
    the course and the default theme is refused (the static files' rule)."""

    def __init__(self, root: Path):
        super().__init__([str(folder) for folder in theme.folders(root)])
        self.tops = [root.resolve(), theme.DEFAULT]
        self.default = jinja2.FileSystemLoader(str(theme.DEFAULT))

    def get_source(self, environment, template):
        if template.startswith("/") or ".." in template.replace("\\", "/").split("/"):
            # (as Jinja's own not-found, so that the error is at the line that names it)
            raise jinja2.TemplateNotFound(template, f"{template!r} is outside the course's templates/: an include, "
                                          f"import or extends names a file below templates/ (or theme/NAME, the "
                                          f"default theme's)")
        # "theme/NAME" is the default theme's NAME even where the course has its own: a course's page.html
        # may extend the theme's ({% extends "theme/page.html" %}) and override a block or two.
        for folder in [] if template.startswith(THEME) else self.searchpath:
            candidate = Path(folder, template)
            if candidate.exists():  # Jinja would open a FIFO and wait, or read 2 GB whole
                if not candidate.is_file() or candidate.stat().st_size > INPUT_LIMIT:
                    raise BuildError("not a regular file (a FIFO, a socket or a device?)" if not candidate.is_file()
                                     else f"larger than {INPUT_LIMIT // 2**20} MiB, the most the build reads of one "
                                     f"file", theme.shown(self.tops[0], candidate))
                break
        if template.startswith(THEME):
            source, filename, uptodate = self.default.get_source(environment, template.removeprefix(THEME))
        else:
            source, filename, uptodate = super().get_source(environment, template)
        tops = self.tops
        if not any(Path(filename).resolve().is_relative_to(top) for top in tops):
            raise BuildError(f"template {template!r} links to a file outside the course: refused",
                             f"templates/{template}")
        return source, filename, uptodate


class SealedTemplates(jinja2.BytecodeCache):
    """Compiled templates, kept in the course's .cache/templates/ as sealed JSON (io.write_cache): an entry this
    user's builds did not write is never read. (Jinja's own file cache unpickles what it finds there before it
    compares: a pickle in a course's .cache/ ran at load time.) The code is marshalled, for this Python and
    this Jinja only."""

    def __init__(self, folder: Path):
        import sys

        self.folder, self.made_by = folder, f"{sys.version} jinja2 {jinja2.__version__}"
        self._compiled: dict = {}  # bucket key -> its key in COMPILED, until the loader hands its code back

    def get_bucket(self, environment, name, filename, source):
        """The course's entry; failing that, the code this process compiled from the same source (another
        course, a fresh .cache/), told its own file, and written into this course's cache as if compiled."""
        bucket = super().get_bucket(environment, name, filename, source)
        key = (self.made_by, _settings(environment), name, bucket.checksum)
        if bucket.code is None and key in COMPILED:
            bucket.code = _retarget(COMPILED[key], filename)
            self.dump_bytecode(bucket)
        elif bucket.code is None:
            self._compiled[bucket.key] = key
        return bucket

    def set_bucket(self, bucket) -> None:
        key = self._compiled.pop(bucket.key, None)
        if key is not None:
            COMPILED[key] = bucket.code
        super().set_bucket(bucket)

    def load_bytecode(self, bucket) -> None:
        import base64
        import marshal

        from lessonkit.io import read_cache

        kept = read_cache(self.folder / f"{bucket.key}.json")
        if isinstance(kept, dict) and kept.get("checksum") == bucket.checksum and kept.get("made_by") == self.made_by:
            try:
                bucket.code = marshal.loads(base64.b64decode(kept["code"]))
            except (ValueError, TypeError, EOFError):
                bucket.reset()

    def dump_bytecode(self, bucket) -> None:
        import base64
        import marshal

        from lessonkit.io import write_cache

        write_cache(self.folder / f"{bucket.key}.json", {"checksum": bucket.checksum, "made_by": self.made_by,
                                                         "code": base64.b64encode(marshal.dumps(bucket.code)).decode()})


# Code compiled in this process, by what it was compiled from (Jinja's code for a template does not depend on
# its file, only on its name, its source and the environment's syntax): a build of a second course, or of a
# course whose .cache/ is new, does not compile the same template again.
COMPILED: dict = {}


def _settings(environment) -> tuple:
    """What of an environment shapes the code Jinja generates."""
    e = environment
    return (type(e).__name__, e.code_generator_class.__name__, e.block_start_string, e.block_end_string,
            e.variable_start_string, e.variable_end_string, e.comment_start_string, e.comment_end_string,
            e.line_statement_prefix, e.line_comment_prefix, e.trim_blocks, e.lstrip_blocks, e.newline_sequence,
            e.keep_trailing_newline, tuple(sorted(e.extensions)), e.optimized, e.is_async,
            e.autoescape if isinstance(e.autoescape, bool) else "by name")


def _retarget(code, filename: str):
    """The code, as compiled for `filename`: tracebacks and errors name the course's own template."""
    from types import CodeType

    return code.replace(co_filename=filename, co_consts=tuple(
        _retarget(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts))


def template_error(exc: Exception, root: Path) -> BuildError:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        name = exc.filename or exc.name or "templates"
        path = Path(name)
        shown = theme.shown(root, path) if path.is_absolute() else f"templates/{name}"
        return BuildError(f"template syntax error: {exc.message}", shown, exc.lineno)
    # Jinja rewrites tracebacks so that template frames carry the template's file and line.
    where, line = "templates", None
    tb = exc.__traceback__
    folders = tuple(str(folder) + "/" for folder in theme.folders(root))
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(folders):
            where, line = theme.shown(root, Path(filename)), tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, RecursionError):  # most often a template that extends (or includes) its own name
        name = Path(where).name
        return BuildError(f"template error: it extends or includes itself; to build on the default theme's "
                          f"{name}, write {{% extends \"{THEME}{name}\" %}}", where, line)
    kind = "" if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: "
    return BuildError(f"template error: {kind}{exc}", where, line)

def _escaped(value) -> Markup:
    # The engine's own escaping (html.escape: &quot; &#x27;), for partials and the plugins' HTML alike.
    return value if isinstance(value, Markup) else Markup(escape(str(value)))


class Parts:
    """parts("value", shown=…, …): the partial templates/parts/value.html rendered with what it is given."""

    def __init__(self, root: Path):
        self.root, self._env, self._made = root, None, {}

    def __call__(self, name: str, **context) -> str:
        template = self._made.get(name)
        try:
            if template is None:
                if self._env is None:  # a course's partial is its code: sandboxed (no Python reached, ranges capped)
                    from jinja2.sandbox import ImmutableSandboxedEnvironment

                    self._env = ImmutableSandboxedEnvironment(
                        loader=Loader(self.root), autoescape=True, finalize=_escaped, undefined=jinja2.StrictUndefined,
                        trim_blocks=True, lstrip_blocks=True,
                        bytecode_cache=SealedTemplates(self.root / ".cache" / "templates" / "parts"))
                template = self._made[name] = self._env.get_template(f"parts/{name}.html")
            return template.render(context)
        except BuildError:
            raise
        except Exception as exc:  # a course's partial can fail in many ways; all are the partial's error
            raise template_error(exc, self.root) from None

    def __getstate__(self) -> dict:  # a worker process makes its own templates
        return {"root": self.root, "_env": None, "_made": {}}
