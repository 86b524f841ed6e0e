"""Whole builds: the real site, and the promise that numbers are the experiments'."""

import json
import re

from conftest import measured, run_build

VALUE = re.compile(r'<span class="value" data-key="([^"]+)" data-value="([^"]+)"')


def shown_values(html: str) -> dict:
    return {k: v for k, v in VALUE.findall(html)}


def test_real_site_has_both_lesson_pages_and_the_home(site):
    for rel in ("index.html", "zh/lesson-l5.html", "en/lesson-l5.html", "lessonkit.json"):
        assert (site / rel).is_file(), rel
    zh = (site / "zh/lesson-l5.html").read_text()
    en = (site / "en/lesson-l5.html").read_text()
    assert '<html lang="zh-CN">' in zh and '<html lang="en">' in en
    assert 'hreflang="en" href="../en/lesson-l5.html"' in zh and 'hreflang="zh-CN" href="../zh/lesson-l5.html"' in en
    assert "lesson-l6.html" not in zh + en  # the preview of L6 is not a dead link
    assert "http://" not in re.sub(r'xmlns="http://www.w3.org/1998/Math/MathML"', "", zh)


def test_every_shown_number_is_what_the_experiment_prints(site):
    seed = json.loads((site / "lessonkit.json").read_text())["seed"]
    truth = measured("multires", seed)
    pages = [(site / f"{lang}/lesson-l5.html").read_text() for lang in ("zh", "en")]
    shown = [shown_values(html) for html in pages]
    assert shown[0].keys() == shown[1].keys() and len(shown[0]) >= 15
    for key, value in shown[0].items():
        if key in truth:
            assert json.loads(value) == truth[key], key
    # No scientific notation leaks into prose, and none of the author's own run's numbers is typed in.
    for html in pages:
        assert not re.search(r'class="num">[^<]*e-\d', html)
        # Prose only: the provenance panels rightly print the full-precision values.
        prose = re.sub(r'<div class="panels".*?</section>', "", html, flags=re.S)
        prose = re.sub(r'<span class="value".*?</span>', "", prose)
        prose = re.sub(r'<small class="range">.*?</small>', "", prose)  # measured spreads over the seeds
        prose = re.sub(r"<[^>]+>", "", prose)
        for published in ("1.1e-7", "1.1 × 10", "2.38", "18.34", "4.42", "0.68"):
            assert published not in prose, published


def test_seed_changes_the_numbers(tmp_path, site):
    out = tmp_path / "s7"
    result = run_build("--seed", "7", "--out", out)
    assert result.returncode == 0, result.stderr
    before = shown_values((site / "en/lesson-l5.html").read_text())
    after = shown_values((out / "en/lesson-l5.html").read_text())
    assert before["multires.p2.ratio"] != after["multires.p2.ratio"]
    assert json.loads(after["multires.p2.ratio"]) == measured("multires", 7)["multires.p2.ratio"]


def test_summary_lists_every_claim_with_criterion_and_rerun_command(site):
    html = (site / "en/lesson-l5.html").read_text()
    rows = re.findall(r'<tr id="claim-[^"]+" data-claim="([^"]+)" data-passed="true"', html)
    from multires import CLAIMS
    assert sorted(rows) == sorted(f"multires.{c.id}" for c in CLAIMS)
    assert 'data-refuted="true"' in html
    assert "python experiments/multires.py --seed 0" in html
    assert "<details class=\"hint\"><summary>Hint</summary>" in html


def test_figures_are_svg_in_both_languages_and_byte_identical(tmp_path, site):
    out = tmp_path / "again"
    assert run_build("--out", out).returncode == 0
    svgs = sorted(p.relative_to(site).as_posix() for p in (site / "figures").glob("*.svg"))
    assert len(svgs) >= 6 and any(s.endswith(".zh.svg") for s in svgs)
    for rel in svgs:
        assert (site / rel).read_bytes() == (out / rel).read_bytes(), rel
        assert b"var(--ink)" in (site / rel).read_bytes()


def test_check_passes_on_the_real_site(site):
    result = run_build("--out", site, "--check-only")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_only_catches_an_edited_number_and_a_dead_link(tmp_path, site):
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(site, copy)
    page = copy / "zh/lesson-l5.html"
    html = page.read_text()
    edited = re.sub(r'(data-key="multires.p1.rank" data-value="4"[^>]*><span class="num">)4', r"\g<1>5", html, count=1)
    assert edited != html
    page.write_text(edited.replace('href="#exercises"', 'href="#no-such-section"', 1))
    result = run_build("--out", copy, "--check-only")
    assert result.returncode == 1
    assert "value multires.p1.rank: shows '5'" in result.stderr
    assert "'#no-such-section'> points to a missing anchor" in result.stderr


def test_publishing_details_sitemap_404_and_link_previews(site):
    sitemap = (site / "sitemap.xml").read_text()
    import xml.dom.minidom

    doc = xml.dom.minidom.parseString(sitemap)
    locs = [n.firstChild.data for n in doc.getElementsByTagName("loc")]
    pages = sorted(p.relative_to(site).as_posix() for p in site.glob("[a-z][a-z]/**/*.html")
                   if p.name not in ("search.html", "glossary.html"))
    assert sorted(loc.split(".org/", 1)[1] for loc in locs) == pages
    assert len(doc.getElementsByTagName("xhtml:link")) == 2 * len(locs)
    not_found = (site / "404.html").read_text()
    assert 'lang="zh-CN"' in not_found and 'lang="en"' in not_found and 'href="/index.html"' in not_found
    zh = (site / "zh/lesson-l5.html").read_text()
    assert '<meta property="og:locale" content="zh_CN">' in zh and '<meta property="og:title" content="L5' in zh
    assert 'rel="canonical" href="https://' in zh
