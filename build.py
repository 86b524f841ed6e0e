#!/usr/bin/env python3
"""Build the course site: content + experiments -> site/.

load content -> run experiments (cached) -> evaluate claims -> parse Markdown
-> draw figures -> render pages -> write site atomically -> check
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# The libraries whose output ends up in a page: their versions are part of each page's cache key.
RENDERERS = ("markdown_it_py", "mdit_py_plugins", "quickjs", "Jinja2", "Pygments", "MarkupSafe")


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return port


def arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="python build.py new PAGE [--experiment NAME] starts a page (and an experiment); "
                                       "docs/reference.md lists every option, site.yaml key and Markdown extension.")
    p.add_argument("--seed", type=int, help="the course seed, whose numbers the pages show (default: content/site.yaml's seed)")
    p.add_argument("--seeds", type=int, metavar="N", help="run every experiment on N seeds, the course seed first "
                   "(default: content/site.yaml's seeds, 20)")
    p.add_argument("--executor", default="local", metavar="local|dask:local|dask:ADDRESS",
                   help="where experiment runs execute (default: local processes)")
    p.add_argument("--jobs", type=int, metavar="N", help="experiment runs, and pages parsed and rendered, at once "
                   "(default: one per core)")
    p.add_argument("--force", action="store_true", help="re-run every experiment, ignoring the cache")
    p.add_argument("--out", type=Path, help="output folder (default: site/ in the course folder)")
    p.add_argument("--root", type=Path, default=ROOT, help="the course folder (content/, experiments/ …)")
    p.add_argument("--check", action="store_true", help="build, then check the site")
    p.add_argument("--check-only", action="store_true", help="check the site in --out without building")
    p.add_argument("--strict", action="store_true", help="a translation behind its source is an error")
    p.add_argument("--base-url", metavar="URL", help="where the site is published, e.g. https://you.github.io/course/ "
                   "(default: content/site.yaml's base_url)")
    p.add_argument("--no-search", action="store_true", help="skip the search index (Pagefind)")
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


def build(args: argparse.Namespace, say=print) -> dict:
    """load → measure → parse → draw → render → write (with the search index). Returns what was done."""
    from lessonkit.cache.pagecache import PageCache
    from lessonkit.write import staging

    start = time.perf_counter()
    clock = _stopwatch(say if args.timings else None)
    course = clock("load", load(args, say))
    measured = clock("measure", measure(course, args, say))
    pages_cache = PageCache(course.cache / "pages", measured.reports)
    with staging.Staging(args.out) as site:  # the new site, beside the current one until write swaps it in
        pages = clock("parse", parse(course, measured, pages_cache, site, args, say))
        drawn = clock("draw", draw(course, pages, measured, args, say))
        files, rendered = clock("render", render(course, pages, measured, drawn, pages_cache, site, args, say))
        clock("write", write(files, site, args, say))
    pages_cache.save(pages, args.out.resolve())
    from lessonkit.cache.changes import changed_values

    changed = changed_values(pages, course.cache / "shown.json")
    for line in changed[:12]:
        say(f"changed: {line}")
    if len(changed) > 12:
        say(f"changed: … and {len(changed) - 12} more shown values")
    return {"pages": sum(name.endswith(".html") for name in files), "rendered": rendered, "built": pages,
            "changed": changed,
            "claims": len(measured.claims), "runs": sum(r.ran for r in measured.reports), "seeds": len(course.seeds),
            "seconds": time.perf_counter() - start, "audits": _audits(course, pages)}


def _stopwatch(say):
    """clock(stage, result) says how long the stage that produced result took (--timings)."""
    last = [time.perf_counter(), time.process_time()]

    def clock(stage: str, result=None):
        now = [time.perf_counter(), time.process_time()]
        if say:
            say(f"timing: {stage:8} {now[0] - last[0]:7.3f} s wall, {now[1] - last[1]:7.3f} s CPU in this process")
        last[:] = now
        return result

    return clock


def _audits(course, pages: list) -> dict:
    from lessonkit.render.templates import audit_counts

    source = course.site.source_language
    return audit_counts([a for b in pages if b.lang == source for a in b.collected.audits])


def load(args: argparse.Namespace, say):
    """The course: site.yaml, every page, interface strings, glossary and references. Nothing is run yet."""
    from lessonkit.errors import BuildError
    from lessonkit.load import content, inputs
    from lessonkit.model import Course
    from lessonkit.render import templates

    root = args.root.resolve()
    # Whatever this build writes, the no-op fingerprint of the last one no longer describes it.
    inputs.forget(root / ".cache" / "build-stamp.json")
    check_out(root, args.out.resolve())
    if args.force:
        for name in ("math.json", "highlight-code.json"):  # conversions are made again
            try:
                (root / ".cache" / name).unlink(missing_ok=True)
            except OSError as exc:  # a read-only course: the conversions stay cached, which only saves time
                say(f"warning: cannot remove .cache/{name} ({exc.strerror}): its conversions are kept")
    site = content.load_site(root, args.base_url)
    for page in site.pages:
        if site.is_stale(page):
            if args.strict:
                raise BuildError(site.stale[str(page.path)], page.path)
            say(f"warning: {page.path}: {site.stale[str(page.path)]}")
    return Course(root, site, templates.load_strings(root, site.languages), content.load_glossary(root, site.languages),
                  content.load_references(root), seed_set(site.config, args))


def measure(course, args: argparse.Namespace, say):
    """Every experiment over the seeds (what is not cached runs on the chosen executor), every claim judged."""
    from lessonkit.measure import claims

    reports = run_experiments(course.root, course.site.config, course.seeds, args, say)
    verdicts = claims.Verdicts(course.cache / "verdicts.json")
    measured = claims.collect(reports, verdicts)
    verdicts.save()
    return measured


def parse(course, measured, pages_cache, site, args: argparse.Namespace, say) -> list:
    """Every page's Markdown as body HTML: the unchanged from the page cache, the rest in parallel when many."""
    from lessonkit.markdown import stage
    from lessonkit.render import templates
    from lessonkit.versions import package_version

    # A renderer upgrade re-renders every page.
    renderers = " ".join(package_version(name) for name in RENDERERS)

    def meanwhile(files: list[str]) -> None:
        """While the workers parse: create the files those pages go to, compile the other templates."""
        site.prepare(files)
        templates.warm(course.templates)

    built = stage.parse_all(course, measured, pages_cache, stage.shared_inputs_key(course, ROOT, renderers),
                            force=args.force, jobs=args.jobs, info=build_info(course, args), meanwhile=meanwhile,
                            say=say)
    stage.check_twins(built, course.site.source_language)
    stage.check_links(built)
    for problem in stage.check_alignment(built, course.site.source_language):
        if args.strict:
            raise problem
        say(f"warning: {problem}")
    return built


def draw(course, pages: list, measured, args: argparse.Namespace, say) -> dict:
    """Every figure a page shows, in each page's language: from the cache, or drawn by the recipes."""
    from lessonkit import figures

    wanted = {}
    for built in pages:
        for fid, line in built.collected.figures:
            wanted.setdefault((fid, built.lang), (built.page.path, line))
    return figures.draw_all(course.root, course.cache / "figures", wanted, measured.values,
                            timeout=course.site.config["experiment_timeout"], force=args.force, warn=say)


def render(course, pages: list, measured, drawn: dict, pages_cache, site, args: argparse.Namespace,
           say) -> tuple[dict, int]:
    """Every file of the site: the pages that changed (and their side-by-side pages) finished and written into
    the staging folder, in worker processes when many; the rest as bytes for the write stage: figures, the
    home, glossary, search, sitemap. Unchanged pages are KEEP, written pages WRITTEN."""
    from lessonkit import figures
    from lessonkit.errors import BuildError
    from lessonkit.markdown import stage as pages_mod
    from lessonkit.render import templates
    from lessonkit.write import staging

    files: dict[str, bytes] = staging.static_files(course.root / "templates" / "static", course.root)
    sizes = {}
    for (fid, lang), svg in drawn.items():
        files[f"figures/{fid}.{lang}.svg"] = svg
        sizes[fid, lang] = figures.svg_size(svg)
    labels = {b.page.url: b.collected.labels for b in pages}  # what {ref}s name, on every page

    def resolved(b):
        return {f"{url}#{label}": labels[url][label] for url, label, _ in b.collected.refs}

    out = args.out.resolve()
    todo = [b for b in pages if not pages_cache.unchanged_file(b, sizes, resolved(b), out)]
    say(f"rendering {len(todo)} of {len(pages)} pages" if todo else "no page changed")
    env = course.templates
    info = build_info(course, args)
    for built in pages:
        files[built.page.url] = staging.KEEP  # the site's file is the one written for this page
    for built in todo:
        if built.html is None:  # from the cache, but a figure or a cross-reference changed: put together again
            _body(course, measured, pages_cache, built)
            built.html = templates.page_html(env, course, built, measured, info)
        built.resolved = resolved(built)
    pairs = side_by_side(course, pages, measured, todo, sizes, pages_cache, out, files, say)
    if pairs:
        for name in ("side_by_side.html", "_summary.html"):  # compiled once, before any worker is forked
            templates.get_template(env, name, course.root)

    def make(i: int) -> None:
        if i < len(todo):
            b = todo[i]
            url, html = b.page.url, templates.finish(b.html, b, course.strings[b.lang], sizes, labels)
        else:
            url, _, src, other = pairs[i - len(todo)]
            html = templates.side_by_side_html(env, course, src, other, measured, sizes, labels, info)
        site.put(url, html.encode("utf-8"))

    def meanwhile() -> None:
        """While the workers finish and write the pages: the pages made from all pages, and the page cache."""
        files.update(site_pages(course, pages, env, info))
        for built in todo:
            files[built.page.url] = staging.WRITTEN
            pages_cache.store(built, sizes)
        for url, key, _, _ in pairs:
            files[url] = staging.WRITTEN
            pages_cache.store_extra(url, key)
        pages_cache.pack(pages)

    count = len(todo) + len(pairs)
    pages_mod.in_processes(make, count, pages_mod.workers_for(args.jobs, count), meanwhile)
    for built in pages:
        for line, message in built.collected.warnings:
            if args.strict:  # what a warning asks the author to mend, --strict requires
                raise BuildError(message, built.page.path, line)
            say(f"warning: {built.page.path}:{line}: {message}")
    bare = sum(len(b.collected.unaccounted) for b in pages)
    if bare:
        say(f"note: {bare} number(s) in prose are neither measured, audited nor marked literal "
            f"(python build.py --check lists them)")
    return files, len(todo)


def site_pages(course, pages: list, env, info: dict) -> dict:
    """The files made from the whole course: glossaries, the home page, 404, search, sitemap, the manifest."""
    from lessonkit.render import templates
    from lessonkit.write import staging

    files = {}
    if course.glossary:
        for lang in course.site.languages:
            files[f"{lang}/glossary.html"] = templates.glossary_html(env, course, lang, pages, info).encode("utf-8")
    files["index.html"] = templates.index_html(env, course, info, bool(course.glossary)).encode("utf-8")
    files.update({name: text.encode("utf-8") for name, text in templates.extra_pages(env, course, info).items()})
    config = course.site.config
    files[staging.MANIFEST] = json.dumps({
        "seed": course.seed, "seeds": course.seeds, "languages": course.site.languages,
        "base_path": config.get("base_path", "/"), "stale": [[path, why] for path, why in course.site.stale.items()],
        # Numbers in prose that nothing accounts for: --check reports them with their lines.
        "unaccounted": [[str(b.page.path), line, number, excerpt]
                        for b in pages for line, number, excerpt in b.collected.unaccounted],
    }, ensure_ascii=False, separators=(",", ":")).encode("utf-8")  # no indent: the C encoder, 10× faster
    return files


def side_by_side(course, pages: list, measured, rendered: list, sizes: dict, pages_cache, out: Path, files: dict,
                 say) -> list:
    """The side-by-side pages to make again, (url, key, source, translation) each: those one of whose two
    pages was rendered (or whose file is not the one written for them). The others are KEEP in files."""
    from lessonkit.render import side_by_side
    from lessonkit.write import staging

    by_key = {(b.lang, b.page.slug): b for b in pages}
    again = {id(b) for b in rendered}
    todo, kept = [], 0
    for src in (b for b in pages if b.lang == course.site.source_language):
        for other in (by_key[lang, src.page.slug] for lang in course.site.languages if lang != src.lang):
            url = side_by_side.url(other.lang, src.page.slug)
            key = f"{src.key} {other.key} {sorted(sizes.items())} {sorted(src.resolved.items())} " \
                  f"{sorted(other.resolved.items())}"
            if id(src) not in again and id(other) not in again and pages_cache.unchanged_extra(url, key, out):
                files[url] = staging.KEEP
                kept += 1
            else:
                todo.append((url, key, src, other))
    if todo:
        say(f"rendering {len(todo)} of {kept + len(todo)} side-by-side pages")
    for _, _, src, other in todo:
        for b in (src, other):
            _body(course, measured, pages_cache, b)
    return todo


def _body(course, measured, pages_cache, built) -> None:
    """A cached page's body, when a page must be put together again: from the cache, or parsed again."""
    from lessonkit.markdown import stage as pages_mod

    if built.body is None:
        built.body = pages_cache.body(built)
        if built.body is None:  # the cache could not give it back
            pages_mod.parse_again(course, measured, built)


def build_info(course, args: argparse.Namespace) -> dict:
    """What templates say about the build itself."""
    return {"seed": course.seed, "seeds": len(course.seeds), "search": not args.no_search}


def write(files: dict, site, args: argparse.Namespace, say) -> None:
    """The site swapped in whole, with its search index made over the finished pages first."""
    from lessonkit.write import search

    if not args.no_search:
        say(f"indexing {sum(name.endswith('.html') for name in files)} pages for search")
    site.write(files, finish=None if args.no_search else search.index)


def seed_set(config: dict, args: argparse.Namespace) -> list[int]:
    """The seeds every experiment runs on: the course seed first, then the next ones."""
    from lessonkit.errors import BuildError

    seed = config["seed"] if args.seed is None else args.seed
    count = config["seeds"] if args.seeds is None else args.seeds
    if count < 1:
        raise BuildError(f"--seeds {count}: at least 1")
    return list(range(seed, seed + count))


def run_experiments(root: Path, config: dict, seeds: list[int], args: argparse.Namespace, say,
                    twice: bool = False) -> list:
    """Every experiment's reports over the seeds; what is not cached runs on the chosen executor.
    twice: run each course seed once more even when cached (--check), to catch a nondeterministic experiment."""
    from lessonkit.measure import executors, experiments

    return experiments.run_all(root, config["experiments"], seeds, root / ".cache" / "experiments",
                               force=args.force and not twice, executor=lambda: executors.executor(args.executor, args.jobs),
                               timeout=config["experiment_timeout"], progress=say, twice=twice)


def check_out(root: Path, out: Path) -> None:
    """The output folder is replaced whole: never let it be the course, or a folder that is not a site."""
    from lessonkit.errors import BuildError
    from lessonkit.write.staging import MANIFEST

    inputs = [root / name for name in ("content", "experiments", "figures", "templates", "lessonkit", ".git")]
    if out in (root, ROOT) or root.is_relative_to(out) or ROOT.is_relative_to(out) \
            or any(out.is_relative_to(folder) for folder in inputs):
        raise BuildError(f"--out {out}: would replace the course itself; choose another folder")
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: not a folder; choose a folder for the site")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise BuildError(f"--out {out}: not empty and not a site this tool built ({MANIFEST} missing)")


def build_if_changed(args: argparse.Namespace, say) -> dict | None:
    """Build, unless no input, engine file or option changed since the last build of this output."""
    from lessonkit.load import inputs

    root, out = args.root.resolve(), args.out.resolve()
    stamp_file = root / ".cache" / "build-stamp.json"
    from lessonkit.versions import numeric_env

    options = {"seed": args.seed, "seeds": args.seeds, "out": str(out), "strict": args.strict,
               "search": not args.no_search, "base_url": args.base_url, "kernels": numeric_env()}
    now = inputs.fingerprint(root, ROOT, options)
    if not args.force and inputs.up_to_date(stamp_file, now, out):
        return None
    from lessonkit.write.staging import lock

    with lock(root / ".cache", say):
        if not args.force and inputs.up_to_date(stamp_file, now, out):  # the build we waited for made it
            return None
        from lessonkit.measure import sandbox

        sandbox.REQUIRE = args.strict
        sandbox.sweep_scratch()  # scratch folders that killed builds left behind
        inputs.forget(stamp_file)
        result = build(args, say)
        inputs.record(stamp_file, now, out)
    return result


def summary(result: dict, out: Path) -> str:
    audits = result["audits"]
    audited = ("; audited statements: " + ", ".join(f"{n} {status}" for status, n in audits.items())
               if any(audits.values()) else "")
    return (f"built {result['pages']} pages into {out} ({result['rendered']} rendered, "
            f"{len(result['built']) - result['rendered']} unchanged): {result['claims']} claims held on "
            f"{result['seeds']} seed(s), {result['runs']} experiment run(s){audited}, {result['seconds']:.2f} s")


def preview_line(result: dict) -> str:
    """What the preview says after each rebuild."""
    return (f"{result['pages']} pages ({result['rendered']} rendered), {result['claims']} claims held on "
            f"{result['seeds']} seed(s)")


def serve(args: argparse.Namespace) -> None:
    from lessonkit.errors import BuildError
    from lessonkit.serve import serve as serve_site

    # The preview skips the search index: Pagefind re-indexes every page (~0.4 s), the
    # preview's job is the page being edited.
    args.no_search = True

    from lessonkit.write.staging import lock

    def rebuild() -> tuple[str, list[str]]:
        notes: list[str] = []
        try:
            with lock(args.root.resolve() / ".cache", say=print):
                r = build(args, say=lambda m: notes.append(m) if m.startswith(("warning:", "changed:")) else None)
        except BuildError:
            raise
        except Exception as exc:  # keep serving; name the kind of failure
            raise BuildError(f"{type(exc).__name__}: {exc}") from exc
        return preview_line(r), notes

    serve_site(args.root.resolve(), args.out, rebuild, port=args.port)


def check(args: argparse.Namespace) -> int:
    from lessonkit import checks

    problems = checks.run(args.root.resolve(), args.out.resolve(), strict=args.strict,
                          runner=lambda root, config, seeds: run_experiments(root, config, seeds, args, lambda m: None,
                                                                             twice=True))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check: no problems")
    return 0


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
    p.add_argument("--root", type=Path, default=ROOT, help="the course folder")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def new(argv: list[str]) -> int:
    """python build.py new PAGE [--experiment NAME] [--root DIR]: start a page (and an experiment)."""
    args = new_parser().parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from lessonkit.errors import BuildError
    from lessonkit.scaffold import new_page

    try:
        for line in new_page(args.root.resolve(), args.page, args.experiment):
            print(line)
    except BuildError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
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
    if argv[:1] == ["new"]:
        _dependencies_or_venv(argv)
        return new(argv[1:])
    args = parse_args(argv)
    _dependencies_or_venv(argv)
    sys.path.insert(0, str(ROOT))
    from lessonkit.errors import BuildError

    def say(msg: str) -> None:
        # -q keeps what the author must act on or know: warnings, and shown values that changed.
        if not args.quiet or msg.startswith(("warning:", "changed:", "timing:")):
            print(msg, flush=True)

    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    try:
        if args.mark_translated:
            from lessonkit.load.content import mark_translated

            digest = mark_translated(args.root.resolve(), args.mark_translated)
            print(f"{args.mark_translated}: translated_from = {digest}")
            return 0
        if args.serve:
            serve(args)
            return 0
        if not args.check_only:
            result = build_if_changed(args, say)
            print(summary(result, args.out) if result else f"nothing changed: {args.out} is up to date")
        return check(args) if args.check or args.check_only else 0
    except BuildError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
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
