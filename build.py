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
RENDERERS = ("markdown_it_py", "mdit_py_plugins", "latex2mathml", "Jinja2", "Pygments", "MarkupSafe")


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return port


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, help="the course seed, whose numbers the pages show (default: content/site.yaml's seed)")
    p.add_argument("--seeds", type=int, metavar="N", help="run every experiment on N seeds, the course seed first "
                   "(default: content/site.yaml's seeds, 20)")
    p.add_argument("--executor", default="local", metavar="local|dask:local|dask:ADDRESS",
                   help="where experiment runs execute (default: local processes)")
    p.add_argument("--jobs", type=int, metavar="N", help="experiment runs at once (default: one per core)")
    p.add_argument("--force", action="store_true", help="re-run every experiment, ignoring the cache")
    p.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (default: site/)")
    p.add_argument("--root", type=Path, default=ROOT, help="the course folder (content/, experiments/ …)")
    p.add_argument("--check", action="store_true", help="build, then check the site")
    p.add_argument("--check-only", action="store_true", help="check the site in --out without building")
    p.add_argument("--strict", action="store_true", help="a translation behind its source is an error")
    p.add_argument("--no-search", action="store_true", help="skip the search index (Pagefind)")
    p.add_argument("--serve", action="store_true", help="serve the site on localhost, rebuild on change, reload")
    p.add_argument("--port", type=_port, default=8000, help="port for --serve (default 8000; 0 picks a free one)")
    p.add_argument("--mark-translated", metavar="LANG/PAGE.md", help="record that a translation is up to date")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors and the summary only")
    return p.parse_args(argv)


def build(args: argparse.Namespace, say=print) -> dict:
    from lessonkit import claims, content, figures, output, pagecache, render, search, stamp
    from lessonkit.errors import BuildError
    from lessonkit.versions import package_version

    def parse(page):
        from lessonkit import markdown  # the Markdown stack loads only when a page needs rendering

        markdown.math_cache().open(cache / "math.json")
        ctx = markdown.PageContext(page, measurements, strings[page.lang], slugs, glossary, references)
        return ctx, markdown.parse(ctx)

    def render_body(tokens, ctx) -> str:
        from lessonkit import markdown

        return markdown.render(tokens, ctx)

    start = time.perf_counter()
    root = args.root.resolve()
    cache = root / ".cache"
    # Whatever this build writes, the no-op fingerprint of the last one no longer describes it.
    stamp.forget(cache / "build-stamp.json")
    check_out(root, args.out.resolve())
    if args.force:
        (cache / "math.json").unlink(missing_ok=True)

    # 1. load content
    site = content.load_site(root)
    for page, message in site.stale:
        if args.strict:
            raise BuildError(message, page.path)
        say(f"warning: {page.path}: {message}")
    seed = site.config["seed"] if args.seed is None else args.seed
    seeds = seed_set(site.config, args)

    # 2. run experiments over the seeds (cached) and 3. evaluate claims on every seed
    reports = measure(root, site.config, seeds, args, say)
    verdicts = claims.Verdicts(cache / "verdicts.json")
    measurements = claims.collect(reports, verdicts)
    verdicts.save()

    # 4. parse Markdown, for the pages whose inputs changed; the others come from the page cache
    strings = render.load_strings(root, site.languages)
    glossary = content.load_glossary(root, site.languages)
    references = content.load_references(root)
    slugs = set(site.config["pages"])
    pages_cache = pagecache.PageCache(cache / "pages", reports)
    shared = pagecache.tree_digest(root / "templates", root / "content" / "site.yaml", ROOT / "lessonkit",
                                   ROOT / "build.py",
                                   *[root / "content" / n for n in ("glossary.yaml", "references.yaml")
                                     if (root / "content" / n).is_file()])
    shared += " ".join(package_version(name) for name in RENDERERS)  # a renderer upgrade re-renders
    pages = []  # (page, nav, key, ctx or cached page, tokens or None)
    for page in site.pages:
        nav = navigation(page, site)
        key = pagecache.digest(shared, seed, str(page.path), page.digest, nav_key(nav),
                               any(p is page for p, _ in site.stale))
        hit = None if args.force else pages_cache.load(page, key)
        pages.append((page, nav, key, hit, None) if hit else (page, nav, key, *parse(page)))
    check_twins(pages, site.config["source_language"])

    # 5. draw figures (only when their recipe or values changed)
    files: dict[str, bytes] = output.static_files(root / "templates" / "static", root)
    wanted = {}
    for page, _, _, ctx, _ in pages:
        for fid, line in ctx.figures:
            wanted.setdefault((fid, page.lang), (page.path, line))
    drawn = figures.draw_all(root, cache / "figures", wanted, measurements.values,
                             timeout=site.config["experiment_timeout"], force=args.force, warn=say)
    sizes = {}
    for (fid, lang), svg in drawn.items():
        files[f"figures/{fid}.{lang}.svg"] = svg
        sizes[(fid, lang)] = figures.svg_size(svg)

    # 6. render pages
    changed = sum(tokens is not None or not pages_cache.still_valid(ctx, sizes) for _, _, _, ctx, tokens in pages)
    say(f"rendering {changed} of {len(pages)} pages" if changed else "no page changed")
    env = render.environment(root, cache / "templates")
    info = {"seed": seed, "seeds": len(seeds), "search": not args.no_search}
    rendered = 0
    for i, (page, nav, key, ctx, tokens) in enumerate(pages):
        if tokens is None:
            if pages_cache.still_valid(ctx, sizes):
                files[page.url] = ctx.html.encode("utf-8")
                continue
            ctx, tokens = parse(page)
        ctx.figure_sizes.update(sizes)
        html = render.page_html(env, root, site, page, ctx, render_body(tokens, ctx), nav, info)
        pages_cache.store(page, key, ctx, html, sizes)
        pages[i] = (page, nav, key, ctx, tokens)
        files[page.url] = html.encode("utf-8")
        rendered += 1
    if "lessonkit.markdown" in sys.modules:
        sys.modules["lessonkit.markdown"].math_cache().save()
    contexts = [ctx for _, _, _, ctx, _ in pages]
    for ctx in contexts:
        for line, message in ctx.warnings:
            say(f"warning: {ctx.page.path}:{line}: {message}")
    bare = sum(len(ctx.unaccounted) for ctx in contexts)
    if bare:
        say(f"note: {bare} number(s) in prose are neither measured, audited nor marked literal "
            f"(python build.py --check lists them)")
    if glossary:
        for lang in site.languages:
            files[f"{lang}/glossary.html"] = render.glossary_html(
                env, root, site, lang, strings, glossary, contexts, info).encode("utf-8")
    files["index.html"] = render.index_html(env, root, site, strings, info, bool(glossary)).encode("utf-8")
    files.update({name: text.encode("utf-8") for name, text in render.extra_pages(env, root, site, strings, info).items()})
    files["lessonkit.json"] = json.dumps({
        "seed": seed, "seeds": seeds, "languages": site.languages, "base_path": site.config.get("base_path", "/"),
        "stale": [[str(p.path), message] for p, message in site.stale],
        # Numbers in prose that nothing accounts for: --check reports them with their lines.
        "unaccounted": [[str(ctx.page.path), line, number, excerpt]
                        for ctx in contexts for line, number, excerpt in ctx.unaccounted],
    }, ensure_ascii=False, indent=1).encode("utf-8")

    # 7. write the site atomically, with its search index
    if not args.no_search:
        say(f"indexing {sum(name.endswith('.html') for name in files)} pages for search")
    output.write_site(files, args.out, finish=None if args.no_search else search.index)
    source = site.config["source_language"]
    audits = render.audit_counts([a for ctx in contexts if ctx.lang == source for a in ctx.audits])
    return {"pages": sum(name.endswith(".html") for name in files), "rendered": rendered, "content_pages": len(pages),
            "claims": len(measurements.claims), "runs": sum(r.ran for r in reports), "seeds": len(seeds),
            "seconds": time.perf_counter() - start, "audits": audits, "contexts": contexts}


def seed_set(config: dict, args: argparse.Namespace) -> list[int]:
    """The seeds every experiment runs on: the course seed first, then the next ones."""
    from lessonkit.errors import BuildError

    seed = config["seed"] if args.seed is None else args.seed
    count = config["seeds"] if args.seeds is None else args.seeds
    if count < 1:
        raise BuildError(f"--seeds {count}: at least 1")
    return list(range(seed, seed + count))


def measure(root: Path, config: dict, seeds: list[int], args: argparse.Namespace, say) -> list:
    """Every experiment's reports over the seeds; what is not cached runs on the chosen executor."""
    from lessonkit import executors, experiments

    return experiments.run_all(root, config["experiments"], seeds, root / ".cache" / "experiments",
                               force=args.force, executor=lambda: executors.executor(args.executor, args.jobs),
                               timeout=config["experiment_timeout"], progress=say)


def check_out(root: Path, out: Path) -> None:
    """The output folder is replaced whole: never let it be the course, or a folder that is not a site."""
    from lessonkit.checks import MANIFEST
    from lessonkit.errors import BuildError

    inputs = [root / name for name in ("content", "experiments", "figures", "templates", "lessonkit", ".git")]
    if out in (root, ROOT) or root.is_relative_to(out) or ROOT.is_relative_to(out) \
            or any(out.is_relative_to(folder) for folder in inputs):
        raise BuildError(f"--out {out}: would replace the course itself; choose another folder")
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: not a folder; choose a folder for the site")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise BuildError(f"--out {out}: not empty and not a site this tool built ({MANIFEST} missing)")


def navigation(page, site) -> dict:
    """Previous and next pages in the same language, and the section index above the page."""
    same_lang = [p for p in site.pages if p.lang == page.lang]
    k = same_lang.index(page)
    return {"prev": same_lang[k - 1] if k else None,
            "next": same_lang[k + 1] if k + 1 < len(same_lang) else None,
            "crumbs": _crumbs(page, same_lang)}


def nav_key(nav: dict) -> list:
    """What of the navigation ends up in a page: neighbours' addresses and titles."""
    return [[p.url, p.meta["title"]] if p else None for p in (nav["prev"], nav["next"])] + [nav["crumbs"]]


def check_twins(pages, source: str) -> None:
    """A translation keeps its source's section ids, in order: the language switch lands on them."""
    from lessonkit.errors import BuildError

    by_key = {(page.lang, page.slug): ctx.toc for page, _, _, ctx, _ in pages}
    for page, _, _, ctx, _ in pages:
        mine = ctx.toc
        if page.lang == source:
            continue
        theirs = [h["id"] for h in by_key[(source, page.slug)]]
        for i, heading in enumerate(mine):
            if i >= len(theirs) or heading["id"] != theirs[i]:
                expected = repr(theirs[i]) if i < len(theirs) else "no heading"
                raise BuildError(f"heading id {heading['id']!r} where the {source} page has {expected}",
                                 page.path, heading["line"])
        if len(mine) < len(theirs):
            raise BuildError(f"missing heading {theirs[len(mine)]!r} that the {source} page has", page.path)


def _crumbs(page, same_lang):
    """The section index above a page, if the page sits in a folder with one."""
    if "/" not in page.slug:
        return []
    folder = page.slug.rsplit("/", 1)[0]
    index = next((p for p in same_lang if p.slug == f"{folder}/index"), None)
    return [{"url": index.url, "title": index.meta["title"]}] if index and index is not page else []


def build_if_changed(args: argparse.Namespace, say) -> dict | None:
    """Build, unless no input, engine file or option changed since the last build of this output."""
    from lessonkit import stamp

    root, out = args.root.resolve(), args.out.resolve()
    stamp_file = root / ".cache" / "build-stamp.json"
    from lessonkit.versions import numeric_env

    options = {"seed": args.seed, "seeds": args.seeds, "out": str(out), "strict": args.strict,
               "search": not args.no_search, "kernels": numeric_env()}
    now = stamp.fingerprint(root, ROOT, options)
    if not args.force and stamp.up_to_date(stamp_file, now, out):
        return None
    from lessonkit.output import lock

    with lock(root / ".cache", say):
        if not args.force and stamp.up_to_date(stamp_file, now, out):  # the build we waited for made it
            return None
        stamp.forget(stamp_file)
        result = build(args, say)
        stamp.record(stamp_file, now, out)
    return result


def summary(result: dict, out: Path) -> str:
    audits = result["audits"]
    audited = ("; audited statements: " + ", ".join(f"{n} {status}" for status, n in audits.items())
               if any(audits.values()) else "")
    return (f"built {result['pages']} pages into {out} ({result['rendered']} rendered, "
            f"{result['content_pages'] - result['rendered']} unchanged): {result['claims']} claims held on "
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

    from lessonkit.output import lock

    def rebuild() -> str:
        try:
            with lock(args.root.resolve() / ".cache", say=print):
                r = build(args, say=lambda m: None)
        except BuildError:
            raise
        except Exception as exc:  # keep serving; name the kind of failure
            raise BuildError(f"{type(exc).__name__}: {exc}") from exc
        return preview_line(r)

    serve_site(args.root.resolve(), args.out, rebuild, port=args.port)


def check(args: argparse.Namespace) -> int:
    from lessonkit import checks

    problems = checks.run(args.root.resolve(), args.out.resolve(), strict=args.strict,
                          runner=lambda root, config, seeds: measure(root, config, seeds, args, lambda m: None))
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


def main(argv=None) -> int:
    args = parse_args(argv)
    _dependencies_or_venv(argv)
    sys.path.insert(0, str(ROOT))
    from lessonkit.errors import BuildError

    say = (lambda *a, **k: None) if args.quiet else (lambda msg: print(msg, flush=True))
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    try:
        if args.mark_translated:
            from lessonkit.content import mark_translated

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
    except Exception as exc:  # a bug of the build's own: one line, the traceback with --debug
        if args.debug:
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc} (python build.py --debug shows where)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
