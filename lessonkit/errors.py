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
