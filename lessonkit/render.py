"""Jinja templates: pages, the course home, the verification summary and the audit list."""

from __future__ import annotations

from pathlib import Path

import jinja2
import yaml

from .content import LANG_TAGS, Page, Site, load_yaml, read_text
from .errors import BuildError
from .mdplugins import SUMMARY_SLOT
from .mdplugins.values import claim_anchor, experiment_anchor, panel_id, render_value
from .numbers import raw


def load_strings(root: Path, languages: list[str]) -> dict:
    strings = {}
    for lang in languages:
        path = root / "templates" / "i18n" / f"{lang}.yaml"
        shown = path.relative_to(root)
        if not path.is_file():
            raise BuildError(f"no interface strings for {lang!r}", shown)
        try:
            strings[lang] = load_yaml(read_text(path, shown))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise BuildError(f"malformed YAML: {getattr(exc, 'problem', exc)}", shown,
                             mark.line + 1 if mark else None) from None
    first, *rest = languages
    for lang in rest:
        missing = set(strings[first]) ^ set(strings[lang])
        if missing:
            raise BuildError(f"interface strings differ between {first} and {lang}: {', '.join(sorted(missing))}",
                             f"templates/i18n/{lang}.yaml")
    return strings


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


def environment(root: Path, cache: Path | None = None) -> jinja2.Environment:
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
    env.globals.update(lang_tag=LANG_TAGS.__getitem__, claim_anchor=claim_anchor,
                       experiment_anchor=experiment_anchor)
    return env


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


def claim_rows(ctx) -> list[dict]:
    """The claims a page shows, each with its measured values rendered like the prose's, and their spread."""
    m = ctx.measurements
    rows = []
    for key in ctx.claims:
        claim = m.claims[key]
        rows.append({
            "claim": claim,
            "anchor": claim_anchor(key),
            "measured": [(k, render_value(ctx, k, None, mark=False, spread=True)) for k in claim.shows],
        })
    return rows


def panels(root: Path, ctx) -> list[dict]:
    """One provenance panel per claim and per experiment the page shows."""
    from . import provenance

    m = ctx.measurements

    def shown(keys):
        return [{"key": k, "raw": raw(m.values[k]), "noise": k in m.bounds} for k in keys]

    out = []
    for key in ctx.claims:
        claim = m.claims[key]
        name = key.split(".", 1)[0]
        lines = [provenance.value_line(root, claim.experiment, k[len(name) + 1:]) for k in claim.shows]
        out.append({"id": panel_id(claim_anchor(key)), "anchor": claim_anchor(key), "claim": claim,
                    "shown": shown(claim.shows),
                    "source": provenance.snippet(root, claim.experiment, lines, cache=root / ".cache" / "highlight"),
                    "experiment": claim.experiment, "seed": claim.seed})
    for report in m.reports:
        if report.name in ctx.experiments:
            keys = [k for k in ctx.values if k.startswith(report.name + ".") and k not in m.claim_of_value]
            lines = [provenance.value_line(root, str(report.path), k[len(report.name) + 1:]) for k in keys]
            out.append({"id": panel_id(experiment_anchor(report.name)), "anchor": experiment_anchor(report.name),
                        "claim": None, "shown": shown(keys),
                        "source": provenance.snippet(root, str(report.path), lines,
                                                     cache=root / ".cache" / "highlight"),
                        "experiment": str(report.path), "seed": report.data["seed"]})
    return out


def experiment_rows(ctx) -> list[dict]:
    rows = []
    for report in ctx.measurements.reports:
        if report.name in ctx.experiments:
            data = report.data
            rows.append({"name": report.name, "path": str(report.path), "anchor": experiment_anchor(report.name),
                         "seed": data["seed"], "params": data["params"], "versions": data["versions"],
                         "lines": data["source_lines"], "code_hash": data.get("code_hash", ""),
                         "passed": ctx.measurements.values.get(f"{report.name}.claims.passed"),
                         "total": ctx.measurements.values.get(f"{report.name}.claims.total")})
    return rows


def finish_body(env, root: Path, body: str, ctx) -> str:
    """Put the verification summary where the author asked for it, else at the end."""
    if not ctx.claims and not ctx.experiments:
        return body.replace(SUMMARY_SLOT, "")
    summary = get_template(env, "_summary.html", root).render(
        s=ctx.strings, lang=ctx.lang, rows=claim_rows(ctx), experiments=experiment_rows(ctx),
        standalone=SUMMARY_SLOT not in body, panels=panels(root, ctx))
    if SUMMARY_SLOT in body:
        return body.replace(SUMMARY_SLOT, summary)
    return body + summary


def page_html(env, root: Path, site: Site, page: Page, ctx, body: str, nav: dict,
              build_info: dict) -> str:
    stale = any(p is page for p, _ in site.stale)
    try:
        return get_template(env, "page.html", root).render(
            site=site.config, page=page, lang=page.lang, s=ctx.strings, body=finish_body(env, root, body, ctx),
            toc=[h for h in ctx.toc if h["level"] in (2, 3)], root=ctx.root, nav=nav,
            alternates=[(p.lang, p.url) for p in site.pages if p.slug == page.slug],
            audits=ctx.audits, stale=stale, build=build_info, audit_counts=audit_counts(ctx.audits),
            claims=ctx.measurements.claims,
        )
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, root) from None


def audit_counts(audits: list) -> dict:
    from .mdplugins.spans import AUDITS

    counts = dict.fromkeys(AUDITS, 0)
    for a in audits:
        counts[a["status"]] += 1
    return counts


def index_html(env, root: Path, site: Site, strings: dict, build_info: dict, has_glossary: bool) -> str:
    try:
        return get_template(env, "index.html", root).render(
            site=site.config, pages=site.pages, strings=strings, root="", build=build_info, has_glossary=has_glossary,
            lang=site.config["source_language"], s=strings[site.config["source_language"]], alternates=[])
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, root) from None


def glossary_html(env, root: Path, site: Site, lang: str, strings: dict, glossary: list, contexts: list,
                  build_info: dict) -> str:
    """One page per language: every term, its counterpart, its definition, and where it is used."""
    other = next(lang_ for lang_ in site.languages if lang_ != lang)
    entries = []
    for entry in sorted(glossary, key=lambda e: e[lang].lower()):
        pages = [ctx.page for ctx in contexts if ctx.lang == lang and entry["id"] in ctx.terms]
        entries.append({**entry, "pages": pages})
    try:
        return get_template(env, "glossary.html", root).render(
            site=site.config, lang=lang, other=other, s=strings[lang], entries=entries, root="../",
            build=build_info, alternates=[(lang_, f"{lang_}/glossary.html") for lang_ in site.languages])
    except BuildError:
        raise
    except Exception as exc:  # a template can fail in many ways; all are the template's error
        raise template_error(exc, root) from None


def extra_pages(env, root: Path, site: Site, strings: dict, build_info: dict) -> dict[str, str]:
    """The search page in each language, the bilingual 404 page, and sitemap.xml."""
    out = {}
    try:
        for lang in site.languages:
            out[f"{lang}/search.html"] = get_template(env, "search.html", root).render(
                site=site.config, lang=lang, s=strings[lang], root="../", build=build_info,
                alternates=[(lang_, f"{lang_}/search.html") for lang_ in site.languages])
        source = site.config["source_language"]
        out["404.html"] = get_template(env, "404.html", root).render(
            site=site.config, lang=source, s=strings[source], strings=strings, build=build_info, alternates=[],
            root=site.config.get("base_path", "/"))
        twins: dict = {}
        for p in site.pages:
            twins.setdefault(p.slug, []).append(p)
        out["sitemap.xml"] = get_template(env, "sitemap.xml", root).render(
            site=site.config, pages=site.pages, twins=twins, base=site.config.get("base_url", ""))
    except BuildError:
        raise
    except Exception as exc:
        raise template_error(exc, root) from None
    return out
