"""The course's own checks, read from content/site.yaml: every experiment it lists follows the contract,
runs on its own, holds its claims on every seed of the build's sweep, and shows on the pages exactly what
it prints; every page it lists exists in every language with the same sections, values and audit marks;
the audit, the glossary and the prose keep their promises. A new page or experiment is checked here as
soon as site.yaml lists it; nothing in this file names one, or any wording of the course."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
import yaml
from conftest import ROOT, measured, moved_texts, run_build, with_evidence

from lessonkit import markup
from lessonkit.load.content import LIMITS

CONFIG = yaml.safe_load((ROOT / "content" / "site.yaml").read_text("utf-8"))
EXPERIMENTS = CONFIG.get("experiments", [])
LANGUAGES = CONFIG.get("languages", ["zh", "en"])
SOURCE = CONFIG.get("source_language", LANGUAGES[0])
PAGES = [str(page) for page in CONFIG.get("pages", [])]
TAGS = {lang: yaml.safe_load((ROOT / "templates" / "i18n" / f"{lang}.yaml").read_text("utf-8"))["tag"]
        for lang in LANGUAGES}
BOX_DRAWING = re.compile("[\u2500-\u257f]")
BUILT_KEYS = ("claims.held", "claims.refuted", "claims.passed", "claims.total")  # counted by the build


def load(name: str, root=ROOT):
    sys.path.insert(0, str(root / "experiments"))
    spec = importlib.util.spec_from_file_location(f"course_{name}", root / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Each check is a function of the course folder (and its built site), so that the same checks run on
# a copy of the course with a lesson added (test_a_new_lesson_passes_the_course_checks).

def check_contract(name: str, root=ROOT) -> None:
    module = load(name, root)
    assert module.NAME == name
    assert (module.__doc__ or "").strip().splitlines()[0], "a docstring whose first line says what it measures"
    assert isinstance(module.PARAMS, dict) and module.CLAIMS
    ids = [c.id for c in module.CLAIMS]
    assert len(ids) == len(set(ids)), "claim ids are unique"
    for claim in module.CLAIMS:
        assert set(claim.text) >= set(LANGUAGES) and all(claim.text[lang] for lang in LANGUAGES), claim.id
        assert claim.shows, f"{claim.id} shows no value"
        if claim.holds_on < 1:
            assert all(claim.note.get(lang) for lang in LANGUAGES), f"{claim.id}: say in its note why it may fail"


def check_runs_on_its_own(name: str, root=ROOT) -> None:
    script = root / "experiments" / f"{name}.py"
    done = subprocess.run([sys.executable, str(script), "--seed", "1"], capture_output=True, text=True, cwd=root,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # (a claim about the sweep, sweep.x, may miss on one seed alone: it is judged by the build over all of them)
    sweeps = [c.id for c in load(name, root).CLAIMS if "sweep." in c.criterion]
    missed = [line.split()[1] for line in done.stdout.splitlines() if line.strip().startswith("MISS")]
    assert "FAIL" not in done.stdout and done.stdout.count("PASS") + len(missed) == len(load(name, root).CLAIMS)
    assert all(m.removeprefix(name + ".").rstrip(":") in sweeps for m in missed), missed
    done = subprocess.run([sys.executable, str(script), "--seed", "1", "--json"], capture_output=True, text=True,
                          cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout)
    assert values and all(key.startswith(name + ".") for key in values)


def check_sweep(name: str, site, root=ROOT) -> None:
    """The build swept the seeds; each summary row says on how many its claim held."""
    config = yaml.safe_load((root / "content" / "site.yaml").read_text("utf-8"))
    manifest = json.loads((site / "lessonkit.json").read_text("utf-8"))
    assert len(manifest["seeds"]) == config.get("seeds", 20)
    rows = {}
    for page in site.rglob("*.html"):
        for row in markup.scan(page.read_text("utf-8")).rows:
            if row.passed:
                rows[row.claim] = (row.seeds, row.held)
    for claim in load(name, root).CLAIMS:
        key = f"{name}.{claim.id}"
        assert key in rows, f"{key} is shown in no verification summary"
        seeds, held = rows[key]
        assert seeds == len(manifest["seeds"])
        assert held >= claim.holds_on * seeds and (claim.holds_on < 1 or held == seeds), (key, held, seeds)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_contract(name):
    check_contract(name)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_runs_on_its_own(name):
    check_runs_on_its_own(name)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_the_standalone_run_and_the_build_judge_every_claim_alike(name, site):
    """One evaluator: on a seed where the build found each claim holding or failing, the experiment run on its
    own says PASS or not for it. (A sweep criterion is judged over all seeds by the build, on one alone here.)"""
    from lessonkit.measure import claims, experiments

    seeds = json.loads((site / "lessonkit.json").read_text("utf-8"))["seeds"]
    reports = experiments.run_all(ROOT, [name], seeds, ROOT / ".cache" / "experiments", limits=LIMITS,
                                  require_isolation=True)  # the site's runs
    judged = {k: c for k, c in claims.collect(reports).claims.items() if not claims.uses_sweep(c.criterion)}
    tried = sorted({seeds[1], *(c.failed_seeds[0] for c in judged.values() if c.failed_seeds)})
    for seed in tried:
        out = subprocess.run([sys.executable, str(ROOT / "experiments" / f"{name}.py"), "--seed", str(seed)],
                             capture_output=True, text=True, cwd=ROOT, timeout=120).stdout
        alone = {key: mark == "PASS" for mark, key in re.findall(r"^  (PASS|FAIL|MISS)  (\S+):", out, re.M)}
        assert set(judged) <= set(alone), out
        built = {key: seed not in c.failed_seeds for key, c in judged.items()}
        assert {key: alone[key] for key in judged} == built, (seed, out)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_claim_holds_on_every_seed_of_the_sweep(name, site):
    check_sweep(name, site)


# --- the pages ---------------------------------------------------------------------------------------

class _Tags(HTMLParser):
    """Every start tag of a page, in order: (tag, attributes)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


def tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def html_of(site, lang: str, page: str) -> str:
    return with_evidence(site / lang / f"{page}.html")


def audit_marks(html: str) -> list:
    return markup.scan(html).audits


def passed_rows(html: str) -> set[str]:
    return {row.claim for row in markup.scan(html).rows if row.passed}


def audit_list(html: str) -> list[tuple[str, str, str]]:
    """The page's audit list: (status, the mark it leads to, the entry's HTML with the panel it opens)."""
    panels = dict(re.findall(r'<section class="prov audit-panel" id="([^"]+)"[^>]*>(.*?)</section>', html, re.S))
    entries = []
    for status, item in re.findall(r'<li id="audit-list-\d+" data-audit="(\w+)"[^>]*>(.*?)</li>', html, re.S):
        target = re.search(r'href="[^"#]*#(audit-\d+)"', item)
        panel = re.search(r'href="#(audit-panel-\d+)"', item)
        entries.append((status, target.group(1) if target else "", item + panels.get(panel.group(1) if panel else "", "")))
    return entries


def check_page_languages(site, page: str) -> None:
    up = "../" * (page.count("/") + 1)
    for lang in LANGUAGES:
        path = site / lang / f"{page}.html"
        assert path.is_file(), f"{lang}/{page}.html"
        found = tags(path.read_text("utf-8"))
        assert ("html", {"lang": TAGS[lang]}) in found, f"{lang}/{page}: <html lang={TAGS[lang]!r}>"
        alternates = {attrs.get("hreflang"): attrs.get("href") for tag, attrs in found
                      if tag == "link" and attrs.get("rel") == "alternate"}
        assert alternates == {TAGS[other]: f"{up}{other}/{page}.html" for other in LANGUAGES}, f"{lang}/{page}"


def check_page_parity(site, page: str) -> None:
    def sections(html):
        return markup.scan(html).headings

    def keys(html):
        return sorted({shown.key for shown in markup.scan(html).values})

    def statuses(html):
        return [(mark.status, mark.claims) for mark in audit_marks(html)]

    source = html_of(site, SOURCE, page)
    for lang in LANGUAGES:
        html = html_of(site, lang, page)
        assert sections(html) == sections(source), f"{lang}/{page}: section ids differ from {SOURCE}"
        assert keys(html) == keys(source), f"{lang}/{page}: shown values differ from {SOURCE}"
        assert statuses(html) == statuses(source), f"{lang}/{page}: audit statuses differ from {SOURCE}"


def _bound_of(shown, index: str):
    """The bound a value (or this element of a list value) is shown as; None: digits."""
    bound = shown.parsed_bound()
    if index and isinstance(bound, list) and not isinstance(bound[0], str):
        return bound[int(index.rstrip("]"))]
    return bound


def check_shown_values(name: str, site, root=ROOT) -> None:
    """Every value a page shows is what experiments/NAME.py prints when run here on the course seed: its text
    exactly, and its data-value within the tolerance that --frozen-only's verification allows (the page holds
    the frozen run, made on another machine's kernels); a value shown as a bound holds that bound here."""
    from lessonkit.load.strings import load_strings
    from lessonkit.measure import frozen
    from lessonkit.numbers import show

    manifest = json.loads((site / "lessonkit.json").read_text("utf-8"))
    seed = manifest["seed"]
    truth = measured(name, seed, root)
    frozen_file = root / "results" / f"{name}.json"  # (a new lesson's experiment is not frozen yet)
    report = json.loads(frozen_file.read_text("utf-8"))["seeds"].get(str(seed), {}).get("report", {}) \
        if frozen_file.is_file() else {}
    strings = load_strings(root, manifest["languages"])
    by_tag = {strings[lang]["tag"]: lang for lang in strings}
    compared = 0
    for path in sorted(site.rglob("*.html")):
        html = path.read_text("utf-8")
        for shown in markup.scan(html).values:
            key = shown.key
            if not key.startswith(name + ".") or key.removeprefix(name + ".") in BUILT_KEYS:
                continue
            base, _, index = key.partition("[")
            where = f"{path.relative_to(site)}: {key}"
            assert base in truth, f"{where} is not printed by experiments/{name}.py"
            expected = truth[base][int(index.rstrip("]"))] if index else truth[base]
            shown_value, bound = shown.number(), _bound_of(shown, index)
            # The reader's text, from the value printed here.
            words = strings[by_tag.get(shown.lang, next(iter(strings)))]
            assert show(expected, shown.format, words, bound, shown.tiny) == shown.text.strip(), \
                f"{where}: shows {shown.text!r}"
            tolerance = frozen.tolerance_of(base.removeprefix(name + "."), report.get("tolerance") or {})
            if bound is not None and isinstance(bound[0], str):  # shown as its bound: the digits are noise
                xs = expected if isinstance(expected, list) else [expected]
                assert all(x < bound[1] if bound[0] == "<" else x > bound[1] for x in xs), f"{where}: {expected}"
            elif isinstance(bound, list):
                assert frozen._close([x for x, b in zip(shown_value, bound, strict=True) if b is None],
                                     [x for x, b in zip(expected, bound, strict=True) if b is None], tolerance), where
            else:
                assert frozen._close(shown_value, expected, tolerance), f"{where}: {shown_value} != {expected}"
            compared += 1
    assert compared, f"no page shows a value of {name}"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_exists_in_every_language_with_lang_and_alternates(site, page):
    check_page_languages(site, page)


@pytest.mark.parametrize("page", PAGES)
def test_every_language_has_the_same_sections_values_and_audit_marks(site, page):
    check_page_parity(site, page)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_shown_value_is_what_the_experiment_prints(site, name):
    check_shown_values(name, site)


def test_every_shown_value_reads_the_same_when_its_floats_move_as_on_another_machine(site):
    """The perturbation rule on every shown value of the course, from the pages' own attributes: another
    machine's kernels (a relative 1e-10, an absolute 1e-13, either way) change no text a reader sees."""
    moved = moved_texts(site, ROOT)
    assert moved == [], "\n".join(moved[:10])


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_no_parameter_is_labelled_measured(site, name):
    """A value the experiment passes through from PARAMS is labelled as set there, on every page and language."""
    from lessonkit.measure.provenance import parameters

    source = (ROOT / "experiments" / f"{name}.py").read_text("utf-8")
    passed = {f"{name}.{k}" for k, (kind, _) in parameters(source).items() if kind == "set"}
    measured_by = [yaml.safe_load((ROOT / "templates" / "i18n" / f"{lang}.yaml").read_text("utf-8"))["measured_by"]
                   for lang in LANGUAGES]
    seen = 0
    for path in sorted(site.rglob("*.html")):
        for tag, attrs in tags(path.read_text("utf-8")):
            label = attrs.get("aria-label") or ""
            key = next((k for k in passed if label.endswith(f" {k}") or f" {k} " in label), None)
            if tag == "a" and key:
                seen += 1
                assert not any(word in label for word in measured_by), f"{path.relative_to(site)}: {label}"
                assert "PARAMS" in label, f"{path.relative_to(site)}: {label}"
    if passed:
        assert seen, f"no page shows a parameter of {name}"


def test_check_passes_on_the_real_site(site):
    """With the build (the `site` fixture: --frozen-only --strict), the course's CI: --check --strict."""
    result = run_build("--out", site, "--check-only", "--strict", "--frozen-only", validator=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_typed_number_in_prose_is_unaccounted_for(site):
    """Every number in prose is a measured value, inside an audited statement, literal, math or code."""
    manifest = json.loads((site / "lessonkit.json").read_text("utf-8"))
    assert manifest["unaccounted"] == [], "\n".join(
        f"{path}:{line}: {number!r} in {text!r}" for path, line, number, text in manifest["unaccounted"])


def test_no_box_drawing_characters_in_any_page(site):
    for page in sorted(site.rglob("*.html")):
        found = BOX_DRAWING.search(page.read_text("utf-8"))
        assert not found, f"{page.relative_to(site)}: {found.group()!r}"
    for md in sorted((ROOT / "content").rglob("*.md")):
        assert not BOX_DRAWING.search(md.read_text("utf-8")), md.relative_to(ROOT)


def test_every_formula_of_the_course_converts_without_run_together_names():
    """Every formula of the pages, as the build converts it (inline and display); tests/formulas.py says what
    run together means. The browser checks lay every one out on its page."""
    from formulas import course_formulas, typesetting_problems

    from lessonkit.markdown.plugins.math import tex_to_mathml

    bad = []
    for tex in course_formulas(ROOT):
        for display in (False, True):
            mathml = tex_to_mathml(tex, display)
            if not mathml.startswith("<math") or typesetting_problems(mathml):
                bad.append(f"{tex!r} ({'display' if display else 'inline'}): {typesetting_problems(mathml)}")
    assert not bad, "\n".join(bad)


# --- the claims audit ----------------------------------------------------------------------------------

def course_sources() -> dict:
    """content/references.bib read apart from the engine: key -> (first author's family name, year, title)."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    path = ROOT / "content" / "references.bib"
    plain = (lambda tex: Text.from_latex(tex).render_as("text")) if path.is_file() else None
    out = {}
    for key, entry in (parse_file(str(path)).entries.items() if path.is_file() else []):
        first = entry.persons["author"][0]
        out[key] = (plain(" ".join(first.last_names)), entry.fields.get("year", ""),
                    " ".join(plain(entry.fields["title"]).split()))
    return out


SOURCES = course_sources()


def names_a_source(entry: str) -> bool:
    """An audit-list entry names a source: its first author, year (when it has one) and title."""
    from html import unescape

    text = " ".join(unescape(re.sub(r"<[^>]+>", "", entry)).split())
    return any(all(part in text for part in source if part) for source in SOURCES.values())


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_the_bibliography_lists_the_sources_the_page_cites(site, page, lang):
    """Each source a panel cites is listed once in the evidence page's bibliography, which lists nothing else,
    and the page's own lists the same."""
    evidence = site / lang / f"{page}.evidence.html"
    html = evidence.read_text("utf-8") if evidence.is_file() else ""
    cited = set(re.findall(r'<a href="#ref-([^"]+)">', html))
    listed = re.findall(r'<li id="ref-([^"]+)">', html)
    assert sorted(set(listed)) == sorted(listed) and set(listed) == cited
    assert cited <= set(SOURCES)
    assert re.findall(r'<li id="ref-([^"]+)">', (site / lang / f"{page}.html").read_text("utf-8")) == listed


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_every_audit_mark_is_in_the_pages_audit_list(site, page, lang):
    html = html_of(site, lang, page)
    marked = sorted((mark.status, mark.id) for mark in audit_marks(html))
    listed = sorted((status, target) for status, target, _ in audit_list(html))
    assert marked == listed


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_verified_partly_and_refuted_marks_name_claims_that_passed_on_the_page(site, page, lang):
    """Each names its claim(s) in data-claim, and each of those has a passed row in this page's summary.
    A statement refuted by a source rather than by our measurement names the source instead."""
    html = html_of(site, lang, page)
    rows = passed_rows(html)
    entries = {target: entry for _, target, entry in audit_list(html)}
    for mark in audit_marks(html):
        status, claims = mark.status, mark.claims
        if status not in ("verified", "partly", "refuted"):
            continue
        if status == "refuted" and not claims:
            assert names_a_source(entries.get(mark.id, "")), f"{mark.id}: refuted by neither a claim nor a source"
            continue
        assert claims, f"{mark.id} ({status}) has no data-claim"
        missing = [claim for claim in claims if claim not in rows]
        assert not missing, f"{mark.id} ({status}) names claims without a passed summary row here: {missing}"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_cited_statements_name_authors_year_and_title(site, page, lang):
    for status, target, entry in audit_list(html_of(site, lang, page)):
        if status == "cited":
            assert names_a_source(entry), f"{target}: the audit list names no source (authors, year, title)"


# --- the glossary ----------------------------------------------------------------------------------------

GLOSSARY_FILE = ROOT / "content" / "glossary.yaml"
GLOSSARY = yaml.safe_load(GLOSSARY_FILE.read_text("utf-8")) if GLOSSARY_FILE.is_file() else []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_glossary_pages_pair_every_term_with_its_counterparts(site, lang):
    from html import unescape

    if not GLOSSARY:
        assert not (site / lang / "glossary.html").exists()
        return
    html = (site / lang / "glossary.html").read_text("utf-8")
    for entry in GLOSSARY:
        found = re.search(rf'<dt id="{re.escape(entry["id"])}">(.*?)</dt>', html, re.S)
        assert found, f"{lang}/glossary.html has no entry {entry['id']}"
        term = unescape(found.group(1))
        assert f'<dfn lang="{TAGS[lang]}">{entry[lang]}</dfn>' in term, (entry["id"], term)
        for other in LANGUAGES:
            if other != lang:
                assert f'lang="{TAGS[other]}">{entry[other]}</span>' in term, (entry["id"], other, term)


# --- a new lesson --------------------------------------------------------------------------------------

def test_a_new_lesson_passes_the_course_checks(course):
    """The issue's acceptance: `build.py new lesson-l6 --experiment saturation` in a copy of the course,
    then `build.py --check` passes, and the checks above, which read site.yaml, take the new lesson in."""
    page = next(p for p in ("lesson-l6", *(f"lesson-new-{i}" for i in range(100))) if p not in PAGES)
    name = next(n for n in ("saturation", *(f"saturation_{i}" for i in range(100))) if n not in EXPERIMENTS)
    done = subprocess.run([sys.executable, str(ROOT / "build.py"), "new", page, "--experiment", name,
                           "--root", str(course)], capture_output=True, text=True, cwd=course)
    assert done.returncode == 0, done.stdout + done.stderr
    config = yaml.safe_load((course / "content" / "site.yaml").read_text("utf-8"))
    assert config["experiments"] == [*EXPERIMENTS, name]
    assert [str(p) for p in config["pages"]] == [*PAGES, page]

    out = course / "site"
    result = run_build("--check", "--out", out, root=course)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check: no problems" in result.stdout

    check_contract(name, course)
    check_runs_on_its_own(name, course)
    check_sweep(name, out, course)
    check_shown_values(name, out, course)
    for each in (*PAGES, page):
        check_page_languages(out, each)
        check_page_parity(out, each)
    for lang in LANGUAGES:
        test_every_audit_mark_is_in_the_pages_audit_list(out, page, lang)
        test_verified_partly_and_refuted_marks_name_claims_that_passed_on_the_page(out, page, lang)
        test_cited_statements_name_authors_year_and_title(out, page, lang)
    assert json.loads((out / "lessonkit.json").read_text("utf-8"))["unaccounted"] == []
