"""The render stage: every file of the site from the parsed pages, the drawn figures and the measurements.

Changed pages (and their side-by-side pages) are put through their templates and the course's plugins'
page hook, in worker processes when many, straight into the staging folder; unchanged ones are kept as the
site has them. The pages made from the whole course (home, glossaries, experiments, search, sitemap, the
manifest) come back as bytes for the write stage.
"""

from __future__ import annotations

import json


def render(course, pages: list, measured, drawn: dict, pages_cache, site, options, say, *, info: dict,
           fork: bool) -> tuple[dict, int]:
    """Every file of the site. The pages that changed (and their side-by-side pages) are put through their
    templates and written into the staging folder, in worker processes when many; unchanged pages are KEEP.
    The rest come back as bytes for the write stage: figures, static files, the home, glossary, search,
    sitemap, the manifest. Also says the pages' warnings. Returns (files, pages rendered). `info`: what templates say about the build;
    `fork`: whether workers may be forked."""
    from lessonkit import figures, names, processes
    from lessonkit.errors import BuildError
    from lessonkit.load import plugins
    from lessonkit.markdown.plugins import ANYWHERE, target_page
    from lessonkit.render import environment, side_by_side, templates
    from lessonkit.write import staging, static

    math = {c for b in pages for c in b.collected.math}
    files: dict = static.static_files(course.root, math, course.cache)
    sizes = {}
    for (fid, lang), svg in drawn.items():
        files[f"figures/{fid}.{lang}.svg"] = svg
        sizes[fid, lang] = figures.svg_size(svg)
    # What {ref}s name, on every page, with the page a reference from elsewhere names beside its number ("" where
    # the number names the chapter already).
    # A section's, for @sec-x: its title.
    labels = {b.page.url: {**{label: [*entry[:2], "" if b.page.meta.get("number") else b.page.title]
                              for label, entry in b.collected.labels.items()},
                           **{f"sec:{h['id']}": [h["text"], h["id"], b.page.title] for h in b.collected.toc}}
              for b in pages}
    out = options.out.resolve()
    todo = []
    for built in pages:
        resolved = {}
        for url, label, _ in built.collected.refs:
            there = target_page(label, built.page.url, labels) if url == ANYWHERE else url
            resolved[f"{url}#{label}"] = [*labels[there][label], there]
        evidence = names.evidence_url(built.page.url) if templates.has_evidence(built) else None
        if pages_cache.unchanged_file(built, sizes, resolved, out) and (
                evidence is None or pages_cache.unchanged_extra(evidence, built.key, out)):
            files[built.page.url] = staging.KEEP  # the site's file is the one written for this page
            if evidence:
                files[evidence] = staging.KEEP  # and its evidence page's
        else:
            todo.append(built)
        built.resolved = resolved
    say(f"rendering {len(todo)} of {len(pages)} pages" if todo else "no page changed")
    pairs, kept = side_by_side.to_make(course, pages, todo, sizes, pages_cache, out)
    files.update(dict.fromkeys(kept, staging.KEEP))
    if pairs:
        say(f"rendering {len(pairs)} of {len(pairs) + len(kept)} side-by-side pages")
    for built in todo + [b for _, _, src, other in pairs for b in (src, other)]:
        if built.body is None:  # from the cache, but must be put together again: its body from the cache
            built.body = pages_cache.body(built)
            if built.body is None:  # the cache could not give it back
                from lessonkit.markdown.stage import parse_again

                parse_again(course, measured, built)
    env = course.templates
    for name in ("page.html", "evidence.html", "side_by_side.html", "_summary.html", "experiment.html"):  # compiled before forking
        environment.get_template(env, name, course.root)

    def make(i: int) -> None:
        if i < len(todo):
            b = todo[i]
            url = b.page.url
            strings = course.strings[b.lang]
            html = templates.finish(templates.page_html(env, course, b, measured, info), b, strings, sizes, labels,
                                    course.parts)
            if templates.has_evidence(b):
                evidence = templates.finish(templates.evidence_html(env, course, b, measured, info), b, strings,
                                            sizes, labels, course.parts)
                html, evidence = templates.linked(html, evidence, url)
                site.put(names.evidence_url(url), plugins.pages(
                    course.plugins, evidence, {"url": names.evidence_url(url), "lang": b.lang,
                                               "title": b.page.meta["title"]}).encode("utf-8"))
        else:
            url, _, src, b = pairs[i - len(todo)]
            html = templates.side_by_side_html(env, course, src, b, measured, sizes, labels, info)
        html = plugins.pages(course.plugins, html, {"url": url, "lang": b.lang, "title": b.page.meta["title"]})
        site.put(url, html.encode("utf-8"))

    count = len(todo) + len(pairs)
    with processes.Pool(make, count, processes.workers_for(options.jobs, count, fork)):
        # Meanwhile, here: the pages made from all pages, and the page cache's entries.
        files.update(site_pages(course, pages, measured, env, info))
        for built in todo:
            files[built.page.url] = staging.WRITTEN
            pages_cache.store(built, sizes)
            if templates.has_evidence(built):
                files[names.evidence_url(built.page.url)] = staging.WRITTEN
                pages_cache.store_extra(names.evidence_url(built.page.url), built.key)
        for url, key, _, _ in pairs:
            files[url] = staging.WRITTEN
            pages_cache.store_extra(url, key)
        pages_cache.pack(pages)
    for built in pages:
        for line, message in built.collected.warnings:
            if options.strict:  # what a warning asks the author to mend, --strict requires
                raise BuildError(message, built.page.path, line)
            say(f"warning: {built.page.path}:{line}: {message}")
    bare = sum(len(b.collected.unaccounted) for b in pages)
    if bare:
        say(f"note: {bare} number(s) in prose are neither measured, audited nor marked literal "
            f"(python build.py --check lists them)")
    return files, len(todo)


def site_pages(course, pages: list, measured, env, info: dict) -> dict:
    """The files made from the whole course: glossaries, the home page, 404, search, sitemap, the experiments
    a reader can run (and their source pages), the manifest."""
    from lessonkit.markdown.plugins.spans import unchecked
    from lessonkit.render import templates
    from lessonkit.write import staging

    files = templates.experiment_files(env, course, measured, info, pages)
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
        # Statements resting on a source that quote none of its words: --check --strict lists them.
        "unquoted": [[str(b.page.path), a.get("line"), a["ref_key"]]
                     for b in pages for a in b.collected.audits if unchecked(a)],
    }, ensure_ascii=False, separators=(",", ":")).encode("utf-8")  # no indent: the C encoder, 10× faster
    return files
