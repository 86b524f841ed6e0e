"""Jinja templates: pages and their evidence pages (the verification summary, the audit list, the panels), the
side-by-side pages, the course home, glossaries and the experiments' source pages."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from lessonkit import markup, names
from lessonkit.markdown.plugins import SUMMARY_SLOT, fill_figure_slots, fill_refs
from lessonkit.markdown.plugins.outline import strip_markers
from lessonkit.measure import shown
from lessonkit.model import Built
from lessonkit.numbers import raw
from lessonkit.render.environment import render_template


def claim_rows(parts, m, strings: dict, claims: list) -> list[dict]:
    """The claims a page shows, each with its measured values rendered like the prose's, and their spread."""
    return [{"claim": m.claims[key], "anchor": names.claim_anchor(key),
             "measured": [(k, shown.value_html(parts, m, strings, k, None, mark=False, spread=True))
                          for k in m.claims[key].shows]} for key in claims]


def panels(root: Path, m, collected, strings: dict) -> list[dict]:
    """One provenance panel per claim and per experiment the page shows."""
    from lessonkit.measure import provenance

    highlight = root / ".cache" / "highlight"

    def values(keys):
        return [{"key": k, "raw": raw(m.value(k)), "noise": m.bound_of(k) is not None,
                 "tiny": m.entry(k).tiny, "set": shown.parameter_label(m, strings, k, short=True) or ""}
                for k in keys]

    out = []
    for key in collected.claims:
        claim = m.claims[key]
        report = next(r for r in m.reports if r.name == key.split(".", 1)[0])
        lines = [provenance.value_line(report, k) for k in claim.shows]
        out.append({"id": names.panel_id(names.claim_anchor(key)), "anchor": names.claim_anchor(key), "claim": claim,
                    "shown": values(claim.shows),
                    "source": provenance.snippet(root, claim.experiment, lines, cache=highlight),
                    "experiment": claim.experiment, "seed": claim.seed, "frozen": frozen_of(report),
                    "name": report.name})
    for report in m.reports:
        if report.name in collected.experiments:
            keys = [k for k in collected.values if k.startswith(report.name + ".") and not m.entry(k).claim]
            lines = [provenance.value_line(report, k) for k in keys]
            anchor = names.experiment_anchor(report.name)
            out.append({"id": names.panel_id(anchor), "anchor": anchor, "claim": None, "shown": values(keys),
                        "source": provenance.snippet(root, str(report.path), lines, cache=highlight),
                        "experiment": str(report.path), "seed": report.data["seed"], "frozen": frozen_of(report),
                        "name": report.name})
    return out


def frozen_of(report) -> dict | None:
    """Where a frozen experiment's values come from, for its panels: the file, its hash, the seeds run again."""
    if not report.frozen:
        return None
    return {"path": f"results/{report.name}.json", "hash": report.frozen, "seeds": report.frozen_seeds,
            "total": len(report.seeds), "checked": ", ".join(map(str, sorted(report.checked))),
            "ran": ", ".join(str(s) for s in report.seeds if s not in report.frozen_at)}


def experiment_rows(m, collected) -> list[dict]:
    rows = []
    for report in m.reports:
        if report.name in collected.experiments:
            data = report.data
            rows.append({"name": report.name, "path": str(report.path),
                         "anchor": names.experiment_anchor(report.name), "seed": data["seed"],
                         "params": data["params"], "versions": data["versions"], "lines": data["source_lines"],
                         "code_hash": report.code_hash, "frozen": frozen_of(report),
                         "held": m.value(f"{report.name}.claims.held"),
                         "refuted": m.value(f"{report.name}.claims.refuted")})
    return rows


def has_evidence(built: Built) -> bool:
    """Whether a page has an evidence page: it shows a claim, an experiment's value or an audited statement."""
    c = built.collected
    return bool(c.claims or c.experiments or c.audits)


def _with_summary(env, course, built: Built, strings: dict) -> str:
    """The body with the way to its evidence page's verification summary where the author placed it."""
    body, collected = built.body, built.collected
    if SUMMARY_SLOT not in body:
        return body
    if not collected.claims and not collected.experiments:
        return body.replace(SUMMARY_SLOT, "")
    at = render_template(env, course.root, "_evidence_at.html", s=strings, claims=len(collected.claims),
                         experiments=len(collected.experiments))
    return body.replace(SUMMARY_SLOT, at)


def summary_html(env, course, m, collected, strings: dict, lang: str, site_root: str) -> str:
    """A page's verification summary: its claims, experiments and their provenance panels. site_root: the way
    from the evidence page to the site's root, for the links to the experiments' source pages."""
    return render_template(env, course.root, "_summary.html", s=strings, lang=lang,
                           rows=claim_rows(course.parts, m, strings, collected.claims),
                           experiments=experiment_rows(m, collected),
                           panels=panels(course.root, m, collected, strings), site_root=site_root)


def page_html(env, course, built: Built, m, build_info: dict) -> str:
    """The page through its template. Figure sizes and cross-reference numbers stay slots (`finish`): they
    are known once every page is parsed and every figure drawn, so a page can be put together anywhere."""
    page, strings = built.page, course.strings[built.lang]
    return render_template(env, course.root, "page.html",
                   site=course.site.config, page=page, lang=page.lang, s=strings,
                   body=_with_summary(env, course, built, strings),
                   toc=[h for h in built.collected.toc if h["level"] in (2, 3)], root="../" * page.url.count("/"),
                   nav=built.nav, alternates=[(p.lang, p.url) for p in course.site.twins(page)],
                   audits=built.collected.audits, stale=course.site.is_stale(page), build=build_info,
                   bibliography=bibliography(built.collected.audits, page.lang, built.collected.citations),
                   evidence={"numbers": len(built.collected.values), "experiments": len(built.collected.experiments),
                             "claims": len(built.collected.claims)}, counts=evidence_counts(m, [built.collected]),
                   title_html=built.collected.title_html, has_math="<math" in built.body + built.collected.title_html,
                   side_by_side=side_by_side_links(course, page))


def evidence_html(env, course, built: Built, m, build_info: dict) -> str:
    """The page's evidence page (evidence.html): its verification summary, its claims audit, its references.
    Joined to the page by `linked`, which leads each page's links to the other's ids."""
    page, strings, collected = built.page, course.strings[built.lang], built.collected
    root = "../" * page.url.count("/")
    summary = ""
    if collected.claims or collected.experiments:
        summary = summary_html(env, course, m, collected, strings, built.lang, site_root=root)
    return render_template(env, course.root, "evidence.html",
                   site=course.site.config, page=page, lang=page.lang, s=strings, summary=summary, root=root,
                   page_file=posixpath.basename(page.url), build=build_info,
                   alternates=[(p.lang, names.evidence_url(p.url)) for p in course.site.twins(page)],
                   audits=collected.audits, audit_counts=audit_counts(collected.audits), claims=m.claims, layer=False,
                   bibliography=bibliography(collected.audits, page.lang, collected.citations),
                   counts=evidence_counts(m, [collected]), title_html=collected.title_html)


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


def finish(html: str, built: Built, strings: dict, sizes: dict, labels: dict, parts) -> str:
    """A page (or its evidence page) with its figures' sizes and its cross-references' numbers filled in, and no
    block markers."""
    return strip_markers(fill_refs(fill_figure_slots(html, sizes, built.lang), built.page.url, labels, strings,
                                   parts))


_FRAGMENT = re.compile(r'(\shref)="#([^"]+)"')
_PANEL = re.compile(r'<section class="prov[^"]*" id="([^"]+)"')
_TO_PANEL = re.compile(r'href="[^"#]*#([^"]+)"')


def linked(page: str, evidence: str, url: str) -> tuple[str, str]:
    """A page and its evidence page, each link of either to an id the other holds (a mark to its panel, an
    audit entry to its statement) leading to that page; each panel numbered as a note (data-note, on paper) in
    the order the page's text first leads to it, and each mark that leads to one numbered as it is."""
    def across(html: str, own: set, theirs: set, there: str) -> str:
        return markup.in_tags(_FRAGMENT, lambda m: f'{m.group(1)}="{there}#{m.group(2)}"'
                        if m.group(2) in theirs and m.group(2) not in own else m.group(0), html)

    page_ids, evidence_ids = markup.ids(page), markup.ids(evidence)
    page = across(page, page_ids, evidence_ids, names.attr(posixpath.basename(names.evidence_url(url))))
    evidence = across(evidence, evidence_ids, page_ids, names.attr(posixpath.basename(url)))
    panels = _PANEL.findall("".join(markup.TAG.findall(evidence)))
    read = [m.group(1) for tag in markup.TAG.findall(page) for m in _TO_PANEL.finditer(tag) if m.group(1) in panels]
    notes = {pid: n for n, pid in enumerate(dict.fromkeys(read + panels), 1)}

    def numbered(html: str) -> str:
        html = markup.in_tags(_PANEL, lambda m: f'{m.group(0)} data-note="{notes[m.group(1)]}"', html)
        return markup.in_tags(_TO_PANEL, lambda m: f'{m.group(0)} data-note="{notes[m.group(1)]}"' if m.group(1) in notes
                              else m.group(0), html)

    return numbered(page), numbered(evidence)


def side_by_side_html(env, course, src: Built, other: Built, m, sizes: dict, labels: dict, build_info: dict) -> str:
    """The side-by-side page of a source page and its translation (see side_by_side.py)."""
    from lessonkit.render import side_by_side

    here = side_by_side.url(other.lang, src.page.slug)
    strings = course.strings[src.lang]
    rows, terms = side_by_side.body(src, other, here, sizes, labels, course.strings, course.parts)
    collected = src.collected
    depth = "../" * here.count("/")
    evidence = depth + names.evidence_url(src.page.url) if has_evidence(src) else None
    html = strip_markers(render_template(
        env, course.root, "side_by_side.html", site=course.site.config, lang=src.lang, s=strings, src=src, other=other,
        rows=rows, terms=terms, root=depth, build=build_info,
        also=course.strings[other.lang], also_lang=other.lang,
        singles=[(src.lang, src.page.url), (other.lang, other.page.url)], alternates=[],
        audits=collected.audits, counts=evidence_counts(m, [collected]),
        pager=_side_by_side_pager(course, src, other.lang),
        evidence=evidence, bibliography=bibliography(collected.audits, src.lang, collected.citations),
        has_math="<math" in src.body + other.body))
    if evidence is None:
        return html
    # Both columns' marks lead to the source page's evidence page (a claim is one claim in every language).
    ids, there = markup.ids(html), names.attr(evidence)
    return markup.in_tags(_FRAGMENT, lambda m: m.group(0) if m.group(2) in ids else f'{m.group(1)}="{there}#{m.group(2)}"',
                    html)


def _side_by_side_pager(course, src: Built, lang: str) -> dict:
    """The side-by-side pages of the source page's previous and next pages (those with a translation)."""
    from lessonkit.render import side_by_side

    out: dict = {"prev": None, "next": None}
    for rel, page in (("prev", src.nav.prev), ("next", src.nav.next)):
        if page is not None and any(t.lang == lang for t in course.site.twins(page)):
            out[rel] = {"url": side_by_side.url(lang, page.slug), "title": page.title}
    return out


def bibliography(audits: list, lang: str, citations: list = ()) -> list[dict]:
    """The sources the page's audits and its prose ([@key]) cite, each once, in the citation style's order."""
    cited = {a["ref"]["key"]: a["ref"] for a in audits if a["ref"]} | {r["key"]: r for r in citations}
    return sorted(cited.values(), key=lambda ref: ref["order"][lang])


def evidence_counts(m, collected_list: list) -> dict:
    """What the footer states, counted from what the pages show: the numbers measured and by how many experiments,
    on how many seeds and how many of those were run when the site was built; the parameters; the statements
    resting on a source, and how many quote it."""
    from lessonkit.markdown.plugins.spans import unchecked

    measured, parameters, experiments = set(), set(), set()
    for collected in collected_list:
        for key in collected.values:
            entry = m.entry(key)
            if entry.counted:
                continue
            (parameters if entry.parameter else measured).add(entry.key)
            if not entry.parameter:
                experiments.add(entry.key.split(".", 1)[0])
    reports = [r for r in m.reports if r.name in experiments]
    sourced = [a for collected in collected_list for a in collected.audits
               if a.get("ref_key") and a["status"] in ("cited", "refuted")]
    return {"measured": len(measured), "parameters": len(parameters), "experiments": len(reports),
            "seeds": min((len(r.seeds) for r in reports), default=0),
            # seeds measured on the building machine: all but the frozen ones, and the frozen ones run again
            "rerun": min((len(r.seeds) - len(r.frozen_at) + len(r.checked) for r in reports), default=0),
            "sourced": len(sourced), "quoted": sum(not unchecked(a) for a in sourced)}


def audit_counts(audits: list) -> dict:
    """Statements by status, and `unchecked`: those resting on a source whose words they do not quote."""
    from lessonkit.markdown.plugins.spans import AUDITS, unchecked

    counts = dict.fromkeys(AUDITS, 0)
    for a in audits:
        counts[a["status"]] += 1
    counts["unchecked"] = sum(map(unchecked, audits))
    return counts


def index_html(env, course, build_info: dict, has_glossary: bool) -> str:
    """The home page: each language's pages as the course nests them (a folder's pages under its index), its
    glossary, the side-by-side pages and the experiments a reader can run."""
    from lessonkit.render import side_by_side

    site, source = course.site, course.site.source_language
    tree: dict = {}
    for lang in site.languages:
        tree[lang] = []
        for p in (p for p in site.pages if p.lang == lang):
            if "/" in p.slug and not p.slug.endswith("/index") and tree[lang] \
                    and tree[lang][-1]["page"].slug == p.slug.rsplit("/", 1)[0] + "/index":
                tree[lang][-1]["children"].append(p)
            else:
                tree[lang].append({"page": p, "children": []})
    first = next((p for p in site.pages if p.lang == source), None)
    pairs = [(lang, side_by_side.url(lang, first.slug)) for lang in site.languages
             if lang != source and first is not None and any(t.lang == lang for t in site.twins(first))]
    return render_template(env, course.root, "index.html", site=site.config, pages=site.pages, strings=course.strings,
                   root="", build=build_info, has_glossary=has_glossary, lang=source, s=course.strings[source],
                   alternates=[], tree=tree, side_by_side=pairs,
                   experiments=[(name, {lang: source_page(name, lang) for lang in site.languages})
                                for name in site.config.get("experiments", [])])


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
    return render_template(env, course.root, "glossary.html", site=site.config, lang=lang,
                   others=[other for other in site.languages if other != lang], s=course.strings[lang],
                   entries=entries, root="../", build=build_info,
                   alternates=[(other, f"{other}/glossary.html") for other in site.languages])


def extra_pages(env, course, build_info: dict) -> dict[str, str]:
    """The search page in each language, the multilingual 404 page, and sitemap.xml (given a base_url)."""
    site, strings, out = course.site, course.strings, {}
    for lang in site.languages:
        out[f"{lang}/search.html"] = render_template(env, course.root, "search.html", site=site.config, lang=lang,
                                             s=strings[lang], root="../", build=build_info,
                                             alternates=[(other, f"{other}/search.html") for other in site.languages])
    source = site.source_language
    out["404.html"] = render_template(env, course.root, "404.html", site=site.config, lang=source, s=strings[source],
                              strings=strings, build=build_info, alternates=[], root=site.config.get("base_path", "/"))
    if "base_url" in site.config:  # a sitemap lists absolute addresses: without one there is none to write
        twins = {p.slug: site.twins(p) for p in site.pages}
        out["sitemap.xml"] = render_template(env, course.root, "sitemap.xml", site=site.config, pages=site.pages,
                                     twins=twins, base=site.config["base_url"])
    return out


def source_page(name: str, lang: str) -> str:
    """Where an experiment's source page is, from the site's root."""
    return f"{lang}/experiments/{name}.html"


def experiment_files(env, course, m, build_info: dict, pages: list[Built]) -> dict[str, bytes]:
    """What a reader needs to run each experiment: its files as the build ran them (the experiment, the modules
    it imports, the harness, the criteria evaluator) under experiments/, and its source as a page in each
    language, with line anchors that the provenance panels link to, and links to the pages that show it."""
    from lessonkit.io import digest, files_digest, read_cache, write_cache
    from lessonkit.load import theme
    from lessonkit.load.inputs import skipped
    from lessonkit.measure import provenance, runcache
    from lessonkit.versions import package_version

    files: dict[str, bytes] = {}
    site = course.site
    # A source page is kept by what makes it: the templates and the engine, and everything it is given (the
    # pages that show it by address and title). Rendering a few hundred lines through the sandbox costs.
    made_by = files_digest(*theme.folders(course.root), Path(__file__).resolve().parent.parent, skip=skipped)
    kept_in = course.root / ".cache" / "source-pages"
    for report in m.reports:
        path = course.root / report.path
        sources = runcache.local_sources(path)
        for src in sources:
            files[f"experiments/{src.name}"] = src.read_bytes()
        files["experiments/criteria.py"] = runcache.CRITERIA.read_bytes()  # what the harness judges with
        names_ = [path.name] + sorted({s.name for s in sources if s != path} | {"criteria.py"})
        lines = provenance.highlighted_lines(path, course.root / ".cache" / "highlight")
        for lang in site.languages:
            url = source_page(report.name, lang)
            clash = next((p for p in site.pages if p.url == url), None)
            if clash is not None:
                from lessonkit.errors import BuildError

                raise BuildError(f"this page's address {url} is that of experiment {report.name}'s source page; "
                                 f"move the page (or rename the experiment)", clash.path)
            shown_on = [b.page for b in pages if b.lang == lang and report.name in b.collected.experiments]
            context = dict(site=site.config, lang=lang, s=course.strings[lang], root="../../", build=build_info,
                           alternates=[(other, source_page(report.name, other)) for other in site.languages],
                           e={"path": str(report.path), "file": path.name, "files": names_, "seed": course.seed,
                              "numpy": package_version("numpy"), "lines": lines, "shown_on": shown_on})
            key = digest(made_by, {**context, "e": {**context["e"], "shown_on": [(p.url, p.title) for p in shown_on]}})
            stored = kept_in / f"{report.name}.{lang}.json"
            kept = read_cache(stored)
            if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("html"), str):
                files[url] = kept["html"].encode("utf-8")
                continue
            html = render_template(env, course.root, "experiment.html", **context)
            write_cache(stored, {"key": key, "html": html})
            files[url] = html.encode("utf-8")
    return files
