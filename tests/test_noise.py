"""Truth by construction: what a page shows cannot depend on the machine, and a parameter is never called a
measurement. Engine tests on fixture courses; the real course's pages are held to the same rule in
test_course.py."""

from __future__ import annotations

import re

import pytest
from conftest import TINY_EXPERIMENT, make_course, moved_texts, run_build, stderr_lines, with_evidence

from lessonkit import checks, markup
from lessonkit.measure.claims import Measurements, Value
from lessonkit.measure.provenance import parameters


def build(root, *args):
    return run_build("--no-search", "--seeds", "2", "--out", root / "site", *args, root=root)


def one_line_error(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = stderr_lines(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def pages(zh: str, en: str) -> dict:
    head = {"zh": "---\ntitle: 噪声\ndescription: 一页。\n---\n\n## 值 {#v}\n\n",
            "en": "---\ntitle: Noise\ndescription: One page.\ntranslated_from: {digest}\n---\n\n## Values {#v}\n\n"}
    return {"zh": head["zh"] + zh + "\n", "en": head["en"] + en + "\n"}


def with_values(extra: str) -> str:
    """The tiny experiment with more values in run()'s dict."""
    return TINY_EXPERIMENT.replace('"odd": seed % 2,', '"odd": seed % 2,\n' + extra)


def line_of(source: str, needle: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if needle in line)


def test_a_noise_level_element_of_a_shown_list_is_refused_at_its_line(tmp_path):
    # Finite-difference errors: the small steps' values are rounding noise, yet they sit in a plain list.
    source = with_values('        "fd_errors": [1e-3 * (1 + seed), 2.5e-7, 1.6e-15],')
    root = make_course(tmp_path / "c", experiment=source,
                       pages=pages("误差 {val}`tiny.fd_errors`。", "Errors {val}`tiny.fd_errors`."))
    error = one_line_error(build(root))
    assert error.startswith(f"error: experiments/tiny.py:{line_of(source, 'fd_errors')}: value tiny.fd_errors[2] = "
                            "1.6e-15 is below 1e-09"), error
    assert not (root / "site").exists()


@pytest.mark.slow
def test_a_float_zero_from_cancellation_is_noise_too_but_an_integer_zero_is_exact(tmp_path):
    source = with_values('        "cancel": float(np.float64(0.1) * 3 - np.float64(0.3) - 5.551115123125783e-17),\n'
                         '        "count": 0,')
    root = make_course(tmp_path / "c", experiment=source,
                       pages=pages("{val}`tiny.count` 与 {val}`tiny.cancel`。", "{val}`tiny.count` and {val}`tiny.cancel`."))
    error = one_line_error(build(root))
    assert f"experiments/tiny.py:{line_of(source, 'cancel')}: value tiny.cancel = 0.0 is below 1e-09" in error, error
    fine = make_course(tmp_path / "d", experiment=source, pages=pages("{val}`tiny.count`。", "{val}`tiny.count`."))
    assert build(fine).returncode == 0


def test_declared_noise_shows_as_bounds_whole_list_or_element_and_a_tiny_measurement_keeps_its_digits(tmp_path):
    source = with_values(
        '        "fd_errors": [2.5e-4, harness.below(1.6e-15, 1e-12)],\n'
        '        "diffs": harness.below([0.0, 1.6e-15, 0.0], 1e-12),\n'
        '        "vanished": harness.tiny(3.2e-20 * (1 + seed), why="the gradient after 40 layers: it is this small"),')
    zh = "{val}`tiny.fd_errors`；{val}`tiny.diffs`；{val}`tiny.diffs[1]`；{val}`tiny.vanished`。"
    en = "{val}`tiny.fd_errors`; {val}`tiny.diffs`; {val}`tiny.diffs[1]`; {val}`tiny.vanished`."
    root = make_course(tmp_path / "c", experiment=source, pages=pages(zh, en))
    result = build(root)
    assert result.returncode == 0, result.stdout + result.stderr
    html = with_evidence(root / "site" / "en" / "page.html")
    shown = {value.key: value.text for value in markup.scan(html).values}
    assert shown["tiny.fd_errors"] == "2.5 × 10⁻⁴, below 10⁻¹²"
    assert shown["tiny.diffs"] == "all below 10⁻¹²" and shown["tiny.diffs[1]"] == "below 10⁻¹²"
    assert shown["tiny.vanished"] == "3.2 × 10⁻²⁰"  # the course seed's value, digits kept
    assert "the gradient after 40 layers" in html  # the reason is in its provenance
    assert "全部低于 10⁻¹²" in (root / "site" / "zh" / "page.html").read_text("utf-8")
    assert 'data-bound="[null, &quot;&lt;1e-12&quot;]"' in html and "data-tiny" in html


def test_a_list_element_that_breaks_its_bound_on_any_seed_is_refused(tmp_path):
    source = with_values('        "diffs": harness.below([0.0, 1e-15 if seed == 0 else 1e-3], 1e-12),')
    root = make_course(tmp_path / "c", experiment=source,
                       pages=pages("{val}`tiny.diffs`。", "{val}`tiny.diffs`."))
    error = one_line_error(run_build("--no-search", "--seeds", "2", root=root))
    assert f"experiments/tiny.py:{line_of(source, 'diffs')}:" in error and "0.001" in error, error


def test_the_check_plays_another_machine_on_every_shown_value():
    """--check re-formats every shown value moved by the noise of other kernels; a text that moves is a problem."""
    m = Measurements(values={k: Value(k, v, "experiments/e.py") for k, v in {"e.ratio": 0.125, "e.safe": 0.1251}.items()})
    strings = {"en": {"tag": "en", "list_sep": ", ", "bound_below": "below {}", "bound_above": "more than {}",
                      "bound_all_below": "all below {}", "bound_all_above": "all more than {}"}}
    scan = markup.PageScan(lang="en", values=[markup.Shown("e.ratio", "0.125", ".2f", text="0.12", lang="en"),
                                              markup.Shown("e.safe", "0.1251", ".2f", text="0.13", lang="en")])
    problems = checks._check_values("en/page.html", scan, m, strings)
    assert len(problems) == 1 and "value e.ratio: shows '0.12', but" in problems[0] and "'0.13'" in problems[0]


PARAMETRIC = '''
import numpy as np

PARAMS = {"d_model": 512, "h": 8, "trials": 5}
STEP = 2


def widths(d_model, h):
    return [d_model // k for k in range(1, h + 1)]


def sample(rng, n):
    return rng.standard_normal(n)


class Buffer:
    def __init__(self, n):
        self.data = np.zeros(n)


def run(seed, *, d_model, h, trials):
    rng = np.random.default_rng(seed)
    d_k = d_model // h
    out = {"d_model": d_model, "d_k": d_k, "widths": widths(d_model, h)}
    ranks = []
    for _ in range(trials):
        ranks.append(int(np.linalg.matrix_rank(rng.standard_normal((d_model, d_k)))))
    out["ranks"] = ranks
    out["rank_share"] = ranks[0] / d_k
    out["drawn"] = float(sample(rng, 3).sum())
    for key in ("a", "b"):
        out[f"step.{key}"] = STEP * h
    out["trials"] = trials
    out["doubled"] = out["d_model"] * 2
    sizes, drawn = {}, []
    for k in range(1, h + 1):
        sizes[k] = Buffer(d_model // k).data.nbytes
        drawn.append(float(rng.random()))
    out["sizes"] = [sizes[k] for k in sorted(sizes)]
    out["drawn_list"] = drawn
    return out
'''


def test_parameters_are_found_by_reading_the_code():
    found = parameters(PARAMETRIC)
    lines = PARAMETRIC.splitlines()
    params_line = next(n for n, line in enumerate(lines, 1) if line.startswith("PARAMS"))
    assert found["d_model"] == ("set", params_line) and found["trials"] == ("set", params_line)
    assert found["d_k"][0] == "computed" and found["widths"][0] == "computed"  # d_model // h; a pure function
    assert found["re:step\\..+?"][0] == "computed"  # an f-string key over constants, from a parameter
    assert found["sizes"][0] == "computed"  # the .nbytes of arrays shaped by parameters, put into a dict
    for measured in ("ranks", "rank_share", "drawn", "doubled", "drawn_list"):  # random, or read from `out`
        assert measured not in found, measured


def test_the_reading_of_the_code_is_kept_by_its_digest_in_its_order(tmp_path, monkeypatch):
    """What parameters() finds is kept by the source's digest (about 90 ms a build for six experiments): the
    same, patterns in the order found, and read again when the code changes."""
    from lessonkit.measure import provenance

    calls = []
    monkeypatch.setattr(provenance, "parameters", lambda source: calls.append(1) or parameters(source))
    first = provenance.kept_parameters(PARAMETRIC, tmp_path)
    again = provenance.kept_parameters(PARAMETRIC, tmp_path)
    assert again == first == parameters(PARAMETRIC) and list(again) == list(first) and len(calls) == 1
    changed = provenance.kept_parameters(PARAMETRIC.replace("d_model // h", "d_model // (h + 1)"), tmp_path)
    assert len(calls) == 2 and changed["d_k"][0] == "computed"


@pytest.mark.slow
def test_a_parameter_is_labelled_set_never_measured_and_cannot_carry_a_verified_audit(tmp_path):
    source = TINY_EXPERIMENT.replace(
        'shows=("mean",)),',
        'shows=("mean",)),\n    Claim(id="size", criterion="n == 64", text={"zh": "六十四个", "en": "sixty-four"}, '
        'shows=("n",)),')
    root = make_course(tmp_path / "c", experiment=source)
    assert build(root).returncode == 0
    html = (root / "site" / "en" / "page.html").read_text("utf-8")
    params = line_of(source, "PARAMS = ")
    label = re.search(r'data-key="tiny.n"[^>]*>(<[^>]*>)', html).group(1)
    assert f'aria-label="64, tiny.n set by experiments/tiny.py (PARAMS, line {params})"' in label
    assert 'class="num param"' in label  # a parameter is no verified value: no tick
    assert not re.search(r'aria-label="[^"]*Measured by tiny\.n"', html)
    assert "由 experiments/tiny.py 设定（PARAMS，第" in (root / "site" / "zh" / "page.html").read_text("utf-8")

    audited = {"zh": "[共 {val}`tiny.n` 个数]{.claim audit=verified key=\"tiny.size\"}。",
               "en": "[There are {val}`tiny.n` numbers]{.claim audit=verified key=\"tiny.size\"}."}
    shown = make_course(tmp_path / "e", experiment=source, pages=pages("{claim}`tiny.size`", "{claim}`tiny.size`"))
    assert build(shown).returncode == 0
    html = with_evidence(shown / "site" / "en" / "page.html")
    assert '<a class="claim-status derived" data-claim="tiny.size" href="page.evidence.html#claim-tiny-size">ⓘ derived from the ' \
           'parameters, not measured</a>' in html
    row = re.search(r'<tr id="claim-tiny-size".*?</tr>', html, re.S).group(0)
    assert "ⓘ derived from the parameters" in row and "✓" not in row

    bad = make_course(tmp_path / "d", experiment=source, pages=pages(audited["zh"], audited["en"]))
    result = build(bad)  # both pages audit it so: an error in each, in one pass
    assert result.returncode == 1
    lines = stderr_lines(result.stderr)
    assert [line.split(": ", 2)[1] for line in lines[:-1]] == ["content/en/page.md:9", "content/zh/page.md:8"], lines
    assert all(line.split(": ", 2)[2].startswith("audit=verified rests on claim tiny.size, whose criterion reads "
                                                 "only parameters") for line in lines[:-1]), lines
    assert lines[-1] == "2 errors"


def test_an_audit_entry_keeps_the_punctuation_after_a_value(tmp_path):
    zh = "[均值不超过 {val}`tiny.n`，样本]{.claim audit=unverified why=\"示例\"}。"
    en = "[The mean is at most {val}`tiny.n`, the sample]{.claim audit=unverified why=\"an example\"}."
    root = make_course(tmp_path / "c", pages=pages(zh, en))
    assert build(root).returncode == 0
    html = (root / "site" / "zh" / "page.evidence.html").read_text("utf-8")
    entry = re.search(r'<li id="audit-list-1".*?<a href="page.html#audit-1"[^>]*>(.*?)</a>', html, re.S).group(1)
    assert "不超过 64，样本" in entry, entry


@pytest.mark.slow
def test_perturbed_pages_of_a_fixture_course_stay_identical(tmp_path):
    """The perturbation rule, applied from the page's own attributes (what --check-only has)."""
    root = make_course(tmp_path / "c")
    assert build(root).returncode == 0
    assert moved_texts(root / "site", root) == []
