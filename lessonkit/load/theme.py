"""The theme: where a course's page templates, interface strings (i18n/) and static files come from.

The engine's own templates/ is the default theme. A course's templates/ overrides it file by file, as
MkDocs' custom_dir and Hugo's lookup order do: a course with only templates/static/style.css uses the
default theme's templates and strings and its own stylesheet. A course without templates/ uses the default
theme whole. The default theme is lessonkit/theme/, package data of an installed engine; in this
repository that is a link to the course's templates/, which is the default theme.
"""

from __future__ import annotations

from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.load.inputs import skipped

DEFAULT = (Path(__file__).parent.parent / "theme").resolve()


def folders(root: Path) -> list[Path]:
    """The theme folders of a course, the first that has a file giving it."""
    own = root / "templates"
    if not own.is_dir():
        if own.exists():
            raise BuildError("a file, not a folder: templates/ holds the course's own templates (or leave it out "
                             "to use the default theme)", "templates")
        return [DEFAULT]
    return [own] if own.resolve() == DEFAULT else [own, DEFAULT]


def find(root: Path, rel: str) -> Path:
    """The file the course uses for templates/<rel>: its own, else the default theme's. When neither has it,
    the course's own path (for the error that names what is missing)."""
    for folder in folders(root):
        if (folder / rel).is_file():
            return folder / rel
    return root / "templates" / rel


def listing(root: Path, sub: str) -> dict[str, Path]:
    """Every file under templates/<sub>/ that the course uses, by its path below <sub>/: its own over the
    default theme's."""
    out: dict[str, Path] = {}
    for folder in reversed(folders(root)):
        base = folder / sub
        for p in sorted(base.rglob("*")):
            # (a FIFO or a device is listed, for its reader to refuse, not skipped without a word)
            if p.exists() and not p.is_dir() and not any(skipped(x) for x in p.relative_to(base).parts):
                out[p.relative_to(base).as_posix()] = p
    return dict(sorted(out.items()))


def shown(root: Path, path: Path) -> Path:
    """A theme file as an error names it: relative to the course when it is the course's, else in full."""
    path = Path(path)
    try:
        return path.relative_to(root)
    except ValueError:
        return path
