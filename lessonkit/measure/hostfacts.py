"""What of the building machine a report may not carry: a control character anywhere, and, in the texts a
page shows, the builder's home, course, Python and scratch folders or its host name."""

from __future__ import annotations

import sys
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.measure import sandbox
from lessonkit.names import control_in


def of_builder(paths) -> dict[str, str]:
    """What of the building machine no published text may hold: its home folder, the course's and Python's
    folders, the scratch folders' place and its host name (what each is, by the text). The sandbox hides most
    of them (no /proc, its own host name, its own HOME); a run without it, or a worker, could read them."""
    import os
    import socket
    import tempfile

    try:
        home = str(Path.home())
    except RuntimeError:  # no HOME, and no entry for this user
        home = ""
    found = {home: "the home folder", sys.prefix: "the build's Python environment",
             sys.base_prefix: "the build's Python", os.path.join(tempfile.gettempdir(), sandbox.SCRATCH_PREFIX):
             "the scratch folders' place", **{str(Path(p).resolve().parent.parent): "the course's folder"
                                             for p in paths if p is not None}}
    facts = {path: what for path, what in found.items() if len(path) >= 5 and path != "/usr"
             and not path.startswith("/usr/")}  # (Debian's own Python says nothing of the builder)
    host = socket.gethostname()
    if len(host) >= 4 and host != "localhost":
        facts[host] = "the host name"
    return facts


def refuse_in(name: str, path, data, facts: dict) -> None:
    """A report's strings must not hold a control character (names.CONTROLS), and the texts a page shows (a
    claim's text) not the building machine's paths or host name, each as a whole path or word: "err/root" in
    a criterion is no home folder."""
    import re

    todo = [(data, False)]
    while todo:
        item, shown = todo.pop()
        if isinstance(item, dict):
            todo += [(k, False) for k in item] + [(v, shown or k == "text") for k, v in item.items()]
        elif isinstance(item, list):
            todo += [(x, shown) for x in item]
        elif isinstance(item, str):
            odd = control_in(item)
            if odd:
                raise BuildError(f"experiment {name} reports a text that holds {odd} ({item[:60]!r}): "
                                 f"a control character, or one that reorders the text as shown", path)
            for fact, what in facts.items() if shown else ():
                end = "" if fact.endswith("-") else r"(?![\w.-])"  # (the scratch folders' prefix runs on)
                if re.search(rf"(?<![\w./-]){re.escape(fact)}{end}", item):
                    raise BuildError(f"experiment {name} reports a text that holds {what} of the building "
                                     f"machine ({item[:60]!r}): what the build publishes may not carry the "
                                     f"builder's paths or host name", path)
