"""Run one experiment file over some seeds, in a process of its own; standard library only.

    python runner.py EXPERIMENT.py REPORTS.jsonl SEED [SEED ...]

The build starts this (locally or on a Dask worker) with a copy of the experiment's
code. The experiment is imported under its own name, not as __main__, so its
command line never runs; anything it prints goes to the log, never into the
reports. Each seed's report is one JSON line in REPORTS.jsonl, written as soon as
it is measured, so the build can tell a slow seed from a hung one. A failure is
one last line, {"failure": {...}}, with the experiment file's line where it broke.
"""

import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path


def _line_in(exc: BaseException, path: Path) -> int | None:
    """The deepest line of the experiment file in the traceback (or the claim's line)."""
    if hasattr(exc, "source_line"):  # the harness's own error about a claim or a value
        return exc.source_line
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == path:
        return exc.lineno
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path:
            found = frame.lineno
    return found


def main(argv: list[str]) -> int:
    path, reports, seeds = Path(argv[0]).resolve(), Path(argv[1]), [int(s) for s in argv[2:]]
    out = open(reports, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path)]  # a module-level argparse sees no options of ours
    seed = None
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        import harness

        for seed in seeds:
            report = harness.measure(module, seed)
            out.write(json.dumps({"seed": seed, "report": report}, ensure_ascii=False, sort_keys=True) + "\n")
            out.flush()
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the experiment cannot end its own run
        traceback.print_exc()
        name = type(exc).__name__
        message = f"{name}: {exc}" if str(exc) else name
        if hasattr(exc, "source_line"):  # the harness's own message about a claim or a value
            message = str(exc)
        if isinstance(exc, SystemExit):
            message = f"the experiment called exit({exc.code!r})"
        out.write(json.dumps({"failure": {"message": message, "line": _line_in(exc, path), "seed": seed}}) + "\n")
        out.flush()
        os._exit(3)  # no atexit handlers or threads of the experiment's can keep the process alive
    out.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
