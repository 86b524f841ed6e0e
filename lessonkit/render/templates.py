"""Jinja templates: pages, the course home, the verification summary and the audit list."""

from __future__ import annotations

from pathlib import Path

import jinja2

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.load.content import parse_yaml, read_text
from lessonkit.markdown.plugins import SUMMARY_SLOT, fill_figure_slots, fill_refs
from lessonkit.markdown.plugins.outline import strip_markers
from lessonkit.measure import shown
from lessonkit.model import Built
from lessonkit.numbers import raw

# What each language's strings must say about the language itself (see templates/i18n/).
LANGUAGE_KEYS = ("tag", "lang_name", "list_sep", "label_sep", "closing")


def load_strings(root: Path, languages: list[str]) -> dict:
    strings = {}
    for lang in languages:
        path = root / "templates" / "i18n" / f"{lang}.yaml"
        shown = path.relative_to(root)
        if not path.is_file():
            raise BuildError(f"no interface strings for {lang!r}", shown)
        strings[lang] = parse_yaml(read_text(path, shown), shown, 1)
        if not isinstance(strings[lang], dict):
            raise BuildError("expected 'key: text' lines", shown, 1)
        lacking = [k for k in LANGUAGE_KEYS if not isinstance(strings[lang].get(k), str)]
        if lacking:
            raise BuildError(f"the language's own entries are missing: {', '.join(lacking)}", shown)
        _plain_fields(strings[lang], read_text(path, shown), shown)
        try:
            names.check("tag", strings[lang]["tag"], names.LANG_TAG)
        except BuildError as exc:
            raise exc.located(shown, _line_of_key(read_text(path, shown), "tag")) from None
    first, *rest = languages
    for lang in rest:
        missing = set(strings[first]) ^ set(strings[lang])
        if missing:
            raise BuildError(f"interface strings differ between {first} and {lang}: {', '.join(sorted(missing))}",
                             f"templates/i18n/{lang}.yaml")
    return strings


def _plain_fields(strings: dict, text: str, shown) -> None:
    """Interface strings fill in plain {name} fields: a format spec ({seed:>300000000}) could make a
    page of any size, and a field like {0.__class__} reads what it should not."""
    import string

    for key, value in strings.items():
        if not isinstance(value, str):
            continue
        try:
            fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(value) if name is not None]
        except ValueError as exc:
            raise BuildError(f"{key}: {exc}", shown, _line_of_key(text, key)) from None
        for name, spec, conv in fields:
            if spec or conv or (name and not name.isidentifier()):
                raise BuildError(f"{key}: {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}: interface "
                                 f"strings take plain fields such as {{n}}", shown, _line_of_key(text, key))


def _line_of_key(text: str, key: str) -> int | None:
    return next((n for n, line in enumerate(text.splitlines(), 1) if line.startswith(f"{key}:")), None)


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between builds; an unreadable or unwritable entry only costs a compile."""

    def load_bytecode(self, bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged entry: compile again
            bucket.reset()

    def dump_bytecode(self, bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


class _CourseLoader(jinja2.FileSystemLoader):
    """Templates from the course's templates/ only: a link that leads outside the course is refused."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        top = Path(self.searchpath[0]).resolve().parent
        if not Path(filename).resolve().is_relative_to(top):
            raise BuildError(f"template {template!r} links to a file outside the course: refused",
                             f"templates/{template}")
        return source, filename, uptodate


def environment(root: Path, strings: dict, cache: Path | None = None) -> jinja2.Environment:
    try:
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        cache = None
    env = jinja2.Environment(
        loader=_CourseLoader(root / "templates"),
        # Compiled templates are kept between builds (Jinja checks each template's mtime).
        bytecode_cache=_BytecodeCache(str(cache)) if cache is not None else None,
        autoescape=jinja2.select_autoescape(["html", "xml"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals.update(lang_tag=lambda lang: strings[lang]["tag"], lang_name=lambda lang: strings[lang]["lang_name"],
                       claim_anchor=names.claim_anchor, experiment_anchor=names.experiment_anchor)
    return env


def warm(env: jinja2.Environment) -> None:
    """Compile every template ahead of its first use (a build does it while worker processes parse). A
    template that fails here is left alone: it fails again, with its line, where it is used."""
    for name in env.list_templates(extensions=["html", "xml"]):
        try:
            env.get_template(name)
        except Exception:  # reported where the template is used
            continue


def template_error(exc: Exception, root: Path) -> BuildError:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        name = exc.filename or exc.name or "templates"
        path = Path(name)
        shown = path.relative_to(root) if path.is_absolute() and path.is_relative_to(root) else f"templates/{name}"
        return BuildError(f"template syntax error: {exc.message}", shown, exc.lineno)
    # Jinja rewrites tracebacks so that template frames carry the template's file and line.
    where, line = "templates", None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(str(root / "templates")):
            where, line = Path(filename).relative_to(root), tb.tb_lineno
        tb = tb.tb_next
    kind = "" if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: "
    return BuildError(f"template error: {kind}{exc}", where, line)


def get_template(env: jinja2.Environment, name: str, root: Path) -> jinja2.Template:
    try:
        return env.get_template(name)
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, root) from None


def _render(env, course_root: Path, name: str, **context) -> str:
    try:
        return get_template(env, name, course_root).render(**context)
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, course_root) from None


def claim_rows(m, strings: dict, claims: list) -> list[dict]:
    """The claims a page shows, each with its measured values rendered like the prose's, and their spread."""
    return [{"claim": m.claims[key], "anchor": names.claim_anchor(key),
             "measured": [(k, shown.value_html(m, strings, k, None, mark=False, spread=True))
                          for k in m.claims[key].shows]} for key in claims]


def panels(root: Path, m, collected, strings: dict) -> list[dict]:
    """One provenance panel per claim and per experiment the page shows."""
    from lessonkit.measure import provenance

    highlight = root / ".cache" / "highlight"

    def values(keys):
        return [{"key": k, "raw": raw(m.value(k)), "noise": m.bound_of(k) is not None,
                 "tiny": m.tiny.get(k.partition("[")[0], ""), "set": shown.parameter_label(m, strings, k, short=True) or ""}
                for k in keys]

    out = []
    for key in collected.claims:
        claim = m.claims[key]
        report = next(r for r in m.reports if r.name == key.split(".", 1)[0])
        lines = [provenance.value_line(report, k) for k in claim.shows]
        out.append({"id": names.panel_id(names.claim_anchor(key)), "anchor": names.claim_anchor(key), "claim": claim,
                    "shown": values(claim.shows),
                    "source": provenance.snippet(root, claim.experiment, lines, cache=highlight),
                    "experiment": claim.experiment, "seed": claim.seed})
    for report in m.reports:
        if report.name in collected.experiments:
            keys = [k for k in collected.values if k.startswith(report.name + ".") and k.partition("[")[0] not in m.claim_of_value]
            lines = [provenance.value_line(report, k) for k in keys]
            anchor = names.experiment_anchor(report.name)
            out.append({"id": names.panel_id(anchor), "anchor": anchor, "claim": None, "shown": values(keys),
                        "source": provenance.snippet(root, str(report.path), lines, cache=highlight),
                        "experiment": str(report.path), "seed": report.data["seed"]})
    return out


def experiment_rows(m, collected) -> list[dict]:
    rows = []
    for report in m.reports:
        if report.name in collected.experiments:
            data = report.data
            rows.append({"name": report.name, "path": str(report.path),
                         "anchor": names.experiment_anchor(report.name), "seed": data["seed"],
                         "params": data["params"], "versions": data["versions"], "lines": data["source_lines"],
                         "code_hash": report.code_hash, "held": m.values.get(f"{report.name}.claims.held"),
                         "refuted": m.values.get(f"{report.name}.claims.refuted")})
    return rows


def _with_summary(env, root: Path, built: Built, m, strings: dict) -> str:
    """The body with the verification summary where the author asked for it (else last)."""
    body, collected = built.body, built.collected
    if not collected.claims and not collected.experiments:
        return body.replace(SUMMARY_SLOT, "")
    summary = _render(env, root, "_summary.html", s=strings, lang=built.lang,
                      rows=claim_rows(m, strings, collected.claims), experiments=experiment_rows(m, collected),
                      standalone=SUMMARY_SLOT not in body, panels=panels(root, m, collected, strings))
    return body.replace(SUMMARY_SLOT, summary) if SUMMARY_SLOT in body else body + summary


def page_html(env, course, built: Built, m, build_info: dict) -> str:
    """The page through its template. Figure sizes and cross-reference numbers stay slots (`finish`): they
    are known once every page is parsed and every figure drawn, so a page can be put together anywhere."""
    page, strings = built.page, course.strings[built.lang]
    return _render(env, course.root, "page.html",
                   site=course.site.config, page=page, lang=page.lang, s=strings,
                   body=_with_summary(env, course.root, built, m, strings),
                   toc=[h for h in built.collected.toc if h["level"] in (2, 3)], root="../" * page.url.count("/"),
                   nav=built.nav, alternates=[(p.lang, p.url) for p in course.site.twins(page)],
                   audits=built.collected.audits, stale=course.site.is_stale(page), build=build_info,
                   audit_counts=audit_counts(built.collected.audits), claims=m.claims,
                   title_html=built.collected.title_html, has_math="<math" in built.body + built.collected.title_html,
                   side_by_side=side_by_side_links(course, page))


def side_by_side_links(course, page) -> list[tuple[str, str]]:
    """The side-by-side pages a page links to: (label, url) — one per translation from the source page."""
    from lessonkit.render import side_by_side

    source, strings = course.site.source_language, course.strings[page.lang]
    others = [p.lang for p in course.site.twins(page) if p.lang != source]
    if page.lang != source:
        others = [page.lang]
    label = strings["side_by_side"]
    return [(label if len(others) == 1 else f"{label} · {course.strings[lang]['lang_name']}",
             side_by_side.url(lang, page.slug)) for lang in others]


def finish(html: str, built: Built, strings: dict, sizes: dict, labels: dict) -> str:
    """A page with its figures' sizes and its cross-references' numbers filled in (and no block markers)."""
    return strip_markers(fill_refs(fill_figure_slots(html, sizes, built.lang), built.page.url, labels, strings))


def side_by_side_html(env, course, src: Built, other: Built, m, sizes: dict, labels: dict, build_info: dict) -> str:
    """The side-by-side page of a source page and its translation (see side_by_side.py)."""
    from lessonkit.render import side_by_side

    here = side_by_side.url(other.lang, src.page.slug)
    strings = course.strings[src.lang]
    rows, terms = side_by_side.body(src, other, here, sizes, labels, course.strings)
    collected = src.collected
    summary = ""
    if collected.claims or collected.experiments:
        summary = _render(env, course.root, "_summary.html", s=strings, lang=src.lang,
                          rows=claim_rows(m, strings, collected.claims), experiments=experiment_rows(m, collected),
                          standalone=True, panels=panels(course.root, m, collected, strings))
    depth = "../" * here.count("/")
    return strip_markers(_render(
        env, course.root, "side_by_side.html", site=course.site.config, lang=src.lang, s=strings, src=src, other=other,
        rows=rows, terms=terms, summary=summary, root=depth, build=build_info,
        singles=[(src.lang, src.page.url), (other.lang, other.page.url)], alternates=[],
        audits=collected.audits, audit_counts=audit_counts(collected.audits), claims=m.claims,
        has_math="<math" in src.body + other.body))


def audit_counts(audits: list) -> dict:
    from lessonkit.markdown.plugins.spans import AUDITS

    counts = dict.fromkeys(AUDITS, 0)
    for a in audits:
        counts[a["status"]] += 1
    return counts


def index_html(env, course, build_info: dict, has_glossary: bool) -> str:
    site, source = course.site, course.site.source_language
    return _render(env, course.root, "index.html", site=site.config, pages=site.pages, strings=course.strings,
                   root="", build=build_info, has_glossary=has_glossary, lang=source, s=course.strings[source],
                   alternates=[])


def glossary_html(env, course, lang: str, built: list[Built], build_info: dict) -> str:
    """One page per language: every term, its counterparts, its definition, and where it is used."""
    site = course.site
    used: dict = {}
    for b in built:
        if b.lang == lang:
            for term in dict.fromkeys(b.collected.terms):
                used.setdefault(term, []).append(b.page)
    entries = [{**entry, "pages": used.get(entry["id"], [])}
               for entry in sorted(course.glossary, key=lambda e: e[lang].lower())]
    return _render(env, course.root, "glossary.html", site=site.config, lang=lang,
                   others=[other for other in site.languages if other != lang], s=course.strings[lang],
                   entries=entries, root="../", build=build_info,
                   alternates=[(other, f"{other}/glossary.html") for other in site.languages])


def extra_pages(env, course, build_info: dict) -> dict[str, str]:
    """The search page in each language, the multilingual 404 page, and sitemap.xml (given a base_url)."""
    site, strings, out = course.site, course.strings, {}
    for lang in site.languages:
        out[f"{lang}/search.html"] = _render(env, course.root, "search.html", site=site.config, lang=lang,
                                             s=strings[lang], root="../", build=build_info,
                                             alternates=[(other, f"{other}/search.html") for other in site.languages])
    source = site.source_language
    out["404.html"] = _render(env, course.root, "404.html", site=site.config, lang=source, s=strings[source],
                              strings=strings, build=build_info, alternates=[], root=site.config.get("base_path", "/"))
    if "base_url" in site.config:  # a sitemap lists absolute addresses: without one there is none to write
        twins = {p.slug: site.twins(p) for p in site.pages}
        out["sitemap.xml"] = _render(env, course.root, "sitemap.xml", site=site.config, pages=site.pages,
                                     twins=twins, base=site.config["base_url"])
    return out
