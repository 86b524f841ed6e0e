"""The command line: `lessonkit build|serve|check|freeze|new|init` (the console script) and a course's own
`python build.py`, which calls main() here. Its options become a lessonkit.pipeline.Options; the stages
(load, measure, parse, draw, render, write, then check) live in lessonkit/pipeline.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SITE_YAML = Path("content") / "site.yaml"
# `lessonkit SUBCOMMAND …`: each is the build with one option set (new and init have parsers of their own).
SUBCOMMANDS = {"build": [], "serve": ["--serve"], "check": ["--check"], "freeze": ["--freeze"]}


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return port


def _executor(text: str) -> str:
    """--executor's type: a malformed address is a usage line before anything runs, not an internal error."""
    from lessonkit.errors import BuildError
    from lessonkit.measure.executors import dask_address

    try:
        dask_address(text)
    except BuildError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--executor {text!r}: ")) from None
    return text


def _whole(low: int, high: int | None = None):
    """A whole number from low (to high): argparse's type, so that --jobs -1 is a usage line, not a crash."""
    def whole(text: str) -> int:
        try:
            count = int(text)
        except ValueError:
            count = low - 1
        if count < low or (high is not None and count > high):
            raise argparse.ArgumentTypeError(f"a whole number from {low} to {high:,}" if high is not None
                                             else f"a whole number ≥ {low}")
        return count
    return whole


_count = _whole(0)


def arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Build a course site: content + experiments -> site/.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [build|serve|check|freeze] [options]\n       %(prog)s new PAGE [--experiment NAME] "
              "[--after PAGE] [--root DIR]\n       %(prog)s init DIR [--languages zh,en]",
        epilog="subcommands:\n  build       build the site (the same as no subcommand)\n"
               "  serve       --serve: the live preview\n  check       --check: build, then check the site\n"
               "  freeze      --freeze: build, and freeze every experiment's reports into results/\n"
               "  new PAGE    start a page in every language (and with --experiment NAME an experiment and "
               "its figure recipe),\n              listed in site.yaml after --after PAGE or at the end; "
               "%(prog)s new --help\n"
               "  init DIR    make a new course that builds and passes --check --strict at once, with the engine's "
               "templates\n              as its theme; %(prog)s init --help\n\n"
               "The course is --root, else the current folder when it holds content/site.yaml.\n"
               "docs/reference.md lists every option, site.yaml key and Markdown extension.")
    p.add_argument("--seed", type=_count, help="the course seed, whose numbers the pages show (default: content/site.yaml's seed)")
    p.add_argument("--seeds", type=_whole(1), metavar="N", help="run every experiment on N seeds, the course seed first "
                   "(default: content/site.yaml's seeds, 20)")
    p.add_argument("--executor", default="local", type=_executor, metavar="local|dask:local|dask:ADDRESS",
                   help="where experiment runs execute (default: local processes)")
    p.add_argument("--jobs", type=_whole(1), metavar="N", help="experiment runs, and pages parsed and rendered, at once "
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
    p.add_argument("--root", type=Path, help="the course folder (content/, experiments/ …; default: the current "
                   "folder when it holds content/site.yaml)")
    p.add_argument("--check", action="store_true", help="build, then check the site")
    p.add_argument("--check-only", action="store_true", help="check the site in --out without building")
    p.add_argument("--strict", action="store_true", help="a translation behind its source is an error")
    p.add_argument("--no-validator", action="store_true", help="with --check: skip the W3C Nu validator (a Java "
                   "run of several seconds); links, numbers, parity and the HTML5 parse check still run")
    p.add_argument("--base-url", metavar="URL", help="where the site is published, e.g. https://you.github.io/course/ "
                   "(default: content/site.yaml's base_url)")
    p.add_argument("--no-search", action="store_true", help="skip the search index (Pagefind)")
    p.add_argument("--pdf", nargs="?", const="reading", default=False, choices=("reading", "evidence"),
                   help="also print every page, and each language's whole course, into site/pdf/ (Chromium), linked "
                   "from each page: the reading layer, or with 'evidence' the audit layer, its panels as numbered notes")
    p.add_argument("--serve", action="store_true", help="serve the site on localhost, rebuild on change, reload")
    p.add_argument("--port", type=_port, default=8000, help="port for --serve (default 8000; 0 picks a free one)")
    p.add_argument("--mark-translated", metavar="LANG/PAGE.md", help="record that a translation is up to date")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors, warnings, changed values and the "
                   "summary only")
    p.add_argument("--timings", action="store_true", help="say how long each stage of the build took")
    return p


def course_folder(given: Path | None, default: Path | None = None) -> Path:
    """--root; else `default`, the course a course's own build.py belongs to (its folder); else, for the
    `lessonkit` command, the current folder when it holds content/site.yaml."""
    from lessonkit.errors import BuildError

    if given is not None:
        return given
    if default is not None:
        return default
    if SITE_YAML.is_file():
        return Path.cwd()
    raise BuildError(f"no {SITE_YAML} in {Path.cwd()}: run this in a course folder, or name one with --root DIR "
                     "(lessonkit init DIR makes one)")


def parse_args(argv=None, default_root: Path | None = None, prog: str | None = None) -> argparse.Namespace:
    parser = arg_parser()
    parser.prog = prog or parser.prog
    args = parser.parse_args(argv)
    # Flags that cannot both hold: say so, rather than quietly drop one.
    for flag, others in (("serve", ("freeze", "refresh", "check", "check_only", "pdf")),
                         ("check_only", ("freeze", "refresh", "force", "pdf"))):
        clash = [o for o in others if getattr(args, o)] if getattr(args, flag) else []
        if clash:
            parser.error(f"--{flag.replace('_', '-')} cannot be used with --{clash[0].replace('_', '-')}")
    args.root = course_folder(args.root, default_root)
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


def serve(options, port: int, prog: str | None = None) -> None:
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
                r = pipeline.build(options, say=lambda m: notes.append(hinted(m, options.root, prog))
                                   if m.startswith(("warning:", "changed:"))
                                   else None)
        except BuildError:
            raise
        except Exception as exc:  # keep serving; name the kind of failure
            raise BuildError(f"{type(exc).__name__}: {exc}") from exc
        return pipeline.preview_line(r), notes

    serve_site(options.root.resolve(), options.out, rebuild, port=port)


def new_parser(prog: str = "build.py") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{prog} new", description="start a page (and an experiment)")
    p.add_argument("page", help="the page's path below content/<lang>/, e.g. lesson-l6 or chapter-4/intro")
    p.add_argument("--experiment", metavar="NAME", help="also start experiments/NAME.py and figures/NAME.py")
    p.add_argument("--after", metavar="PAGE", help="list the page right after PAGE in site.yaml's pages "
                   "(default: at the end), e.g. --after lesson-l5")
    p.add_argument("--root", type=Path, help="the course folder (default: the current folder when it holds "
                   "content/site.yaml)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def init_parser(prog: str = "build.py") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{prog} init", description="make a new course that builds at once")
    p.add_argument("dir", type=Path, help="the new course's folder (absent or empty)")
    p.add_argument("--languages", default="zh,en", help="its languages, the source first (default: zh,en)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def new(argv: list[str], default_root: Path | None = None, prog: str | None = None) -> int:
    """python build.py new PAGE [--experiment NAME] [--root DIR]: start a page (and an experiment);
    python build.py init DIR [--languages zh,en]: start a course."""
    init = argv[:1] == ["init"]
    args = (init_parser if init else new_parser)(prog or "build.py").parse_args(argv[1:])
    from lessonkit.errors import BuildError, error_lines
    from lessonkit.scaffold import init_course, new_page

    try:
        root = None if init else course_folder(args.root, default_root).resolve()
        steps = init_course(args.dir.resolve(), [x.strip() for x in args.languages.split(",")]) \
            if init else new_page(root, args.page, args.experiment, args.after)
        for line in steps:  # (init's name the new course already)
            print(line if init else hinted(line, root, prog))
    except BuildError as exc:
        if args.debug:
            raise
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return 1
    return 0


def hinted(text: str, root: Path, prog: str | None) -> str:
    """A message whose hints (python build.py --refresh x, --mark-translated …) are written for the command
    the author typed and the course it acts on: `lessonkit` for the console script, and --root when the course
    is not the current folder, so that the hint, run as printed, acts on this course."""
    import shlex

    command = "lessonkit" if prog == "lessonkit" else "python build.py"
    try:
        here = root.resolve() == Path.cwd().resolve()
    except OSError:  # the current folder was removed
        here = False
    if not here:
        command += f" --root {shlex.quote(str(root))}"
    return text.replace("python build.py", command) if command != "python build.py" else text


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so that every stage cleans up as it does for Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated


def main(argv=None, default_root: Path | None = None, prog: str | None = None) -> int:
    """The command line. default_root: the course when --root is not given and the current folder holds none
    (build.py passes its own folder; the console script, none)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    import signal

    from lessonkit.errors import BuildError, error_lines

    signal.signal(signal.SIGTERM, _on_sigterm)
    if argv[:1] in (["new"], ["init"]):
        return new(argv, default_root, prog)
    if argv[:1] and argv[0] in SUBCOMMANDS:
        argv = SUBCOMMANDS[argv[0]] + argv[1:]
    try:
        args = parse_args(argv, default_root, prog)
    except BuildError as exc:  # no course here
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return 1

    def say(msg: str) -> None:
        # -q keeps what the author must act on or know: warnings, and shown values that changed.
        if not args.quiet or msg.startswith(("warning:", "changed:", "timing:", "froze:")):
            print(hinted(msg, args.root, prog), flush=True)

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
            serve(options, args.port, prog)
            return 0
        if not args.check_only:
            result = pipeline.build_if_changed(options, say)
            print(pipeline.summary(result, args.out) if result else f"nothing changed: {args.out} is up to date")
        if args.check or args.check_only:
            problems = pipeline.check(options)
            for problem in problems:
                print(problem, file=sys.stderr)
            if options.strict:
                from lessonkit import checks

                for line in checks.unquoted(options.out):
                    print(f"note: {line}")
            print(f"check: {len(problems)} problem(s)" if problems else "check: no problems",
                  file=sys.stderr if problems else sys.stdout)
            return 1 if problems else 0
        return 0
    except BuildError as exc:
        if args.debug:
            raise
        print(hinted("\n".join(error_lines(exc)), args.root, prog), file=sys.stderr)
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
        print(f"error: internal error: {type(exc).__name__}: {exc} (--debug shows where)",
              file=sys.stderr)
        return 1


def console() -> None:
    """The `lessonkit` console script."""
    sys.exit(main(prog="lessonkit"))
