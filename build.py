#!/usr/bin/env python3
"""Build the course site: content + experiments -> site/.

The command line only: its options become a lessonkit.pipeline.Options, and the stages
(load, measure, parse, draw, render, write, then check) live in lessonkit/pipeline.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return port


def _count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError("a whole number ≥ 0")
    return count


def arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options]\n       %(prog)s new PAGE [--experiment NAME] [--after PAGE] [--root DIR]"
              "\n       %(prog)s init DIR [--languages zh,en]",
        epilog="subcommands:\n  new PAGE    start a page in every language (and with --experiment NAME an experiment and "
               "its figure recipe),\n              listed in site.yaml after --after PAGE or at the end; "
               "python build.py new --help\n"
               "  init DIR    make a new course that builds and passes --check --strict at once, with the engine's "
               "templates\n              as its theme; python build.py init --help\n\n"
               "docs/reference.md lists every option, site.yaml key and Markdown extension.")
    p.add_argument("--seed", type=int, help="the course seed, whose numbers the pages show (default: content/site.yaml's seed)")
    p.add_argument("--seeds", type=int, metavar="N", help="run every experiment on N seeds, the course seed first "
                   "(default: content/site.yaml's seeds, 20)")
    p.add_argument("--executor", default="local", metavar="local|dask:local|dask:ADDRESS",
                   help="where experiment runs execute (default: local processes)")
    p.add_argument("--jobs", type=int, metavar="N", help="experiment runs, and pages parsed and rendered, at once "
                   "(default: one per core)")
    p.add_argument("--force", action="store_true", help="re-run every experiment on every seed, ignoring the cache and results/")
    p.add_argument("--freeze", action="store_true", help="also write every experiment's reports into results/, "
                   "to commit: later builds use them and run only --verify seeds again")
    p.add_argument("--refresh", action="append", default=[], metavar="NAME", help="run experiment NAME again "
                   "(ignoring cache and results/) and freeze it; may be repeated")
    p.add_argument("--verify", type=_count, default=1, metavar="N", help="run the first N seeds of each frozen "
                   "experiment again and compare them with results/ (default 1: the course seed; 0: none)")
    p.add_argument("--frozen-only", action="store_true", help="a missing or out-of-date results/ file is an error "
                   "instead of a run (CI: never re-run hours of training unawares)")
    p.add_argument("--out", type=Path, help="output folder (default: site/ in the course folder)")
    p.add_argument("--root", type=Path, default=ROOT, help="the course folder (content/, experiments/ …)")
    p.add_argument("--check", action="store_true", help="build, then check the site")
    p.add_argument("--check-only", action="store_true", help="check the site in --out without building")
    p.add_argument("--strict", action="store_true", help="a translation behind its source is an error")
    p.add_argument("--no-validator", action="store_true", help="with --check: skip the W3C Nu validator (a Java "
                   "run of several seconds); links, numbers, parity and the HTML5 parse check still run")
    p.add_argument("--base-url", metavar="URL", help="where the site is published, e.g. https://you.github.io/course/ "
                   "(default: content/site.yaml's base_url)")
    p.add_argument("--no-search", action="store_true", help="skip the search index (Pagefind)")
    p.add_argument("--pdf", action="store_true", help="also print every page, and each language's whole course, "
                   "into site/pdf/ (Chromium), linked from each page")
    p.add_argument("--serve", action="store_true", help="serve the site on localhost, rebuild on change, reload")
    p.add_argument("--port", type=_port, default=8000, help="port for --serve (default 8000; 0 picks a free one)")
    p.add_argument("--mark-translated", metavar="LANG/PAGE.md", help="record that a translation is up to date")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors, warnings, changed values and the "
                   "summary only")
    p.add_argument("--timings", action="store_true", help="say how long each stage of the build took")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    args = arg_parser().parse_args(argv)
    args.out = args.out or args.root / "site"
    return args


def options_of(args: argparse.Namespace):
    """The stages' view of the command line."""
    from lessonkit.pipeline import Options

    return Options(root=args.root, out=args.out, seed=args.seed, seeds=args.seeds, executor=args.executor,
                   jobs=args.jobs, force=args.force, strict=args.strict, base_url=args.base_url,
                   search=not args.no_search, timings=args.timings, verify=args.verify,
                   frozen_only=args.frozen_only, freeze=args.freeze, refresh=tuple(args.refresh), pdf=args.pdf,
                   validator=not args.no_validator)


def serve(options, port: int) -> None:
    """The preview: build, serve, rebuild on every change. No search index (Pagefind re-indexes every page,
    ~0.4 s; the preview's job is the page being edited), and no forking beside the server's threads."""
    from lessonkit import pipeline
    from lessonkit.errors import BuildError
    from lessonkit.serve import serve as serve_site
    from lessonkit.write.lock import lock

    options = options.replace(search=False, fork=False, freeze=False, refresh=(), pdf=False)

    def rebuild() -> tuple[str, list[str]]:
        notes: list[str] = []
        try:
            with lock(options.root.resolve() / ".cache", say=print):
                r = pipeline.build(options, say=lambda m: notes.append(m) if m.startswith(("warning:", "changed:"))
                                   else None)
        except BuildError:
            raise
        except Exception as exc:  # keep serving; name the kind of failure
            raise BuildError(f"{type(exc).__name__}: {exc}") from exc
        return pipeline.preview_line(r), notes

    serve_site(options.root.resolve(), options.out, rebuild, port=port)


def _dependencies_or_venv(argv) -> None:
    """Run with the project's .venv when this Python lacks the dependencies (authors type `python build.py`)."""
    import importlib.util

    if all(importlib.util.find_spec(name) for name in ("jinja2", "markdown_it", "mdit_py_plugins", "yaml")):
        return
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.is_file() and Path(sys.prefix).resolve() != venv.parent.parent.resolve():
        os.execv(venv, [str(venv), str(Path(__file__).resolve()), *(sys.argv[1:] if argv is None else argv)])
    print("error: this Python lacks the build's dependencies: run `make site` (it makes .venv), or "
          "`pip install -r requirements.txt`", file=sys.stderr)
    sys.exit(1)


def new_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="build.py new", description="start a page (and an experiment)")
    p.add_argument("page", help="the page's path below content/<lang>/, e.g. lesson-l6 or chapter-4/intro")
    p.add_argument("--experiment", metavar="NAME", help="also start experiments/NAME.py and figures/NAME.py")
    p.add_argument("--after", metavar="PAGE", help="list the page right after PAGE in site.yaml's pages "
                   "(default: at the end), e.g. --after lesson-l5")
    p.add_argument("--root", type=Path, default=ROOT, help="the course folder")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def init_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="build.py init", description="make a new course that builds at once")
    p.add_argument("dir", type=Path, help="the new course's folder (absent or empty)")
    p.add_argument("--languages", default="zh,en", help="its languages, the source first (default: zh,en)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def new(argv: list[str]) -> int:
    """python build.py new PAGE [--experiment NAME] [--root DIR]: start a page (and an experiment);
    python build.py init DIR [--languages zh,en]: start a course."""
    init = argv[:1] == ["init"]
    args = (init_parser() if init else new_parser()).parse_args(argv[1:])
    sys.path.insert(0, str(ROOT))
    from lessonkit.errors import BuildError, error_lines
    from lessonkit.scaffold import init_course, new_page

    try:
        steps = init_course(args.dir.resolve(), [x.strip() for x in args.languages.split(",")]) \
            if init else new_page(args.root.resolve(), args.page, args.experiment, args.after)
        for line in steps:
            print(line)
    except BuildError as exc:
        if args.debug:
            raise
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return 1
    return 0


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so that every stage cleans up as it does for Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    if argv[:1] in (["new"], ["init"]):
        _dependencies_or_venv(argv)
        return new(argv)
    args = parse_args(argv)
    _dependencies_or_venv(argv)
    sys.path.insert(0, str(ROOT))
    from lessonkit.errors import BuildError, error_lines

    def say(msg: str) -> None:
        # -q keeps what the author must act on or know: warnings, and shown values that changed.
        if not args.quiet or msg.startswith(("warning:", "changed:", "timing:", "froze:")):
            print(msg, flush=True)

    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    try:
        if args.mark_translated:
            from lessonkit.load.content import mark_translated

            digest = mark_translated(args.root.resolve(), args.mark_translated)
            print(f"{args.mark_translated}: translated_from = {digest}")
            return 0
        from lessonkit import pipeline

        options = options_of(args)
        if args.serve:
            serve(options, args.port)
            return 0
        if not args.check_only:
            result = pipeline.build_if_changed(options, say)
            print(pipeline.summary(result, args.out) if result else f"nothing changed: {args.out} is up to date")
        if args.check or args.check_only:
            problems = pipeline.check(options)
            for problem in problems:
                print(problem, file=sys.stderr)
            print(f"check: {len(problems)} problem(s)" if problems else "check: no problems",
                  file=sys.stderr if problems else sys.stdout)
            return 1 if problems else 0
        return 0
    except BuildError as exc:
        if args.debug:
            raise
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the previous site is as it was", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated: the previous site is as it was", file=sys.stderr)
        return 143
    except Exception as exc:  # a bug of the build's own: one line, the traceback with --debug
        if args.debug:
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc} (python build.py --debug shows where)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
