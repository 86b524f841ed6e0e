"""The build's own error: one line that names the file and line to fix."""

from __future__ import annotations

from pathlib import Path

MAX_MESSAGE = 600


class BuildError(Exception):
    def __init__(self, message: str, path: Path | str | None = None, line: int | None = None):
        # One line, always: a quoted source fragment may span several; and a readable one (a 100,000-term
        # criterion quoted whole would make a 200 KB line).
        message = " ".join(message.split("\n"))
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE] + f"… ({len(message):,} characters)"
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __reduce__(self):  # errors raised in worker processes travel back whole
        return type(self), (self.message, self.path, self.line)

    def located(self, path: Path | str, line: int | None = None) -> BuildError:
        """Fill in where the error is, unless something deeper already did."""
        if self.path is None:
            self.path = path
        if self.line is None:
            self.line = line
        return self

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        return f"{where}{self.message}"


class NotChecked(BuildError):
    """A check that an earlier error made meaningless (a value of an experiment that failed, a term when the
    glossary has an error): not an error of its own. Its message says what was not checked and why, in the
    plural ("uses of … on the pages, not checked: it failed"); raise_all drops it and prints the count."""


class BuildErrors(BuildError):
    """Independent errors found in one pass, so that the author mends them all before building again: one
    line each (raise_all orders them), then a note for each kind of check an error kept from being made."""

    def __init__(self, errors: list[BuildError], notes: list[str] = ()):  # in the order raise_all gives them
        self.errors = list(errors)
        self.notes = list(notes)
        super().__init__(f"{len(self.errors)} errors")

    def __reduce__(self):
        return type(self), (self.errors, self.notes)

    def located(self, path: Path | str, line: int | None = None) -> BuildErrors:
        for one in self.errors:
            one.located(path, line)
        return self

    def __str__(self) -> str:
        return "\n".join(map(str, self.errors))


def each(exc: BaseException) -> list:
    """The errors an exception stands for: those gathered in a BuildErrors, or itself."""
    return exc.errors if isinstance(exc, BuildErrors) else [exc]


def _in_order(errors) -> list[BuildError]:
    flat, seen = [], set()
    for exc in errors:
        for one in each(exc):
            # (the same mistake reached by two routes is one error)
            if not isinstance(one, NotChecked) and str(one) not in seen:
                seen.add(str(one))
                flat.append(one)
    return sorted(flat, key=lambda e: (e.path is None, str(e.path or ""), e.line or 0))


def raise_all(errors: list[BuildError], late: list[BuildError] = ()) -> None:
    """Raise what was found, if anything: one error as itself, several as BuildErrors, sorted by file and line;
    the `late` ones (a translation behind its source, under --strict) after the rest: an edit of the source
    causes them, and they must not hide the errors that need mending first."""
    found = _in_order(errors) + _in_order(late)
    skipped: dict[str, int] = {}
    for exc in [*errors, *late]:
        for one in each(exc):
            if isinstance(one, NotChecked):
                skipped[one.message] = skipped.get(one.message, 0) + 1
        skipped.update({note: 0 for note in getattr(exc, "notes", ()) if note not in skipped})
    notes = [f"{n} {why}" if n else why for why, n in skipped.items()]
    if len(found) == 1:
        found[0].notes = notes  # (said after it: error_lines)
        raise found[0]
    if found:
        raise BuildErrors(found, notes)


def error_lines(exc: BaseException) -> list[str]:
    """What the command line prints for a build's error: `error: file:line: …` for each, and a count when
    there are several."""
    errors = each(exc)
    out = [f"error: {one}" for one in errors] + [f"note: {note}" for note in getattr(exc, "notes", ())]
    if len(errors) > 1:
        out.append(f"{len(errors)} errors")
    return out
