"""Criteria are the course's code, judged in the build's process: parsed and interpreted against a short list
of what a criterion may be, never handed to eval, with a bound on size and steps."""

from __future__ import annotations

import pytest
from conftest import TINY_EXPERIMENT, make_course, run_build, stderr_lines

from lessonkit.criteria import MAX_STEPS, CriterionError, evaluate, holds

VALUES = {"p3.norms": [2.4, 10.8, 21.1], "p1.ranks": [4, 4, 4], "p1.d_k": 4, "p2.ratio": 8.8e-8,
          "gpt.h": [1, 2, 4], "gpt.map_bytes": [2, 4, 8], "gpt.map_bytes_h1": 2, "p3.ratios": [4.4, 1.0, 0.5]}


@pytest.mark.parametrize("criterion, expected", [
    ("increasing(p3.norms)", True),
    ("all(k == p1.d_k for k in p1.ranks)", True),
    ("1e-8 < p2.ratio < 1e-6", True),
    ("p3.ratios[0] > 3 and 0.85 < p3.ratios[1] < 1.15 and all(q < 1 for q in p3.ratios[2:])", True),
    ("np.array_equal(np.array(gpt.map_bytes), np.array(gpt.h) * gpt.map_bytes_h1)", True),
    ("all(b < a for a, b in zip(p3.ratios, p3.ratios[1:]))", True),
    ("max(x for x in p3.norms) - min(p3.norms) > 18 if len(p3.norms) == 3 else False", True),
    ("all(all(a <= b for b in p3.norms) for a in [0, 1])", True),  # nested generators see their own names
    ("not (min(p3.norms) <= 18.34 <= max(p3.norms))", False),
    ("abs(math.log10(p2.ratio) + 7) < 1", True),
])
def test_what_a_criterion_may_say(criterion, expected):
    assert bool(evaluate(criterion, VALUES)) is expected


@pytest.mark.parametrize("criterion, message", [
    ("().__class__.__base__.__subclasses__()", "attribute '__base__' is not allowed"),
    ("p3.norms.__class__", "attribute '__class__' is not allowed"),
    ("__import__('posix')._exit(0)", "only the criterion functions may be called"),
    ("print('into the terminal')", "only the criterion functions may be called"),
    ("(lambda: 1)()", "only the criterion functions may be called"),
    ("[f for f in [lambda: 1]]", "Lambda is not allowed"),
    ("any(True for _ in iter(int, 1))", "only the criterion functions may be called"),
    ("[0] * 10**9", "not on lists"),
    ("10 ** 10 ** 10", "exponents above"),
    ("np.ones(10**9)", "np.ones is not available"),
    ("np.array(p3.norms).tofile('x')", "only functions may be called"),
    ("len([1 for a in p1.ranks for b in p1.ranks for c in p1.ranks for d in p1.ranks])"
     .replace("p1.ranks", "[0] * 1") + " and p2.ratio", "not on lists"),
    ("p2.ratio if (x := 1) else 0", "NamedExpr is not allowed"),
    ("f'{p2.ratio}'", "JoinedStr is not allowed"),
    ("undefined_name > 1", "name 'undefined_name' is not defined"),
    ("p2.missing > 1", "no value 'missing'"),
    (" or ".join(["p2.ratio > 1"] * 5000), "characters (at most"),
])
def test_what_a_criterion_may_not_say(criterion, message):
    with pytest.raises(CriterionError, match=message.replace("(", r"\(").replace("*", r"\*")):
        evaluate(criterion, VALUES)


def test_a_criterion_that_would_run_forever_is_stopped():
    big = {"xs": list(range(1000))}
    with pytest.raises(CriterionError, match=f"more than {MAX_STEPS:,} steps"):
        evaluate("all(a + b + c >= 0 for a in xs for b in xs for c in xs)", big)


def test_a_refuted_criterion_holds_while_it_stays_false():
    assert holds("p2.ratio > 1", True, VALUES) and not holds("p2.ratio > 1", False, VALUES)


@pytest.mark.parametrize("criterion", [
    "().__class__.__base__.__subclasses__()",
    "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'BuiltinImporter'][0]"
    ".load_module('posix')._exit(0)",
    "all(True for _ in iter(int, 1))",
])
def test_a_hostile_criterion_is_one_line_at_its_claim_and_publishes_nothing(tmp_path, criterion):
    source = TINY_EXPERIMENT.replace('criterion="abs(mean) < 0.6"', f"criterion={criterion!r}")
    root = make_course(tmp_path / "c", experiment=source)
    result = run_build("--no-search", "--seeds", "2", "--out", root / "site", root=root)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = stderr_lines(result.stderr)
    line = next(n for n, text in enumerate(source.splitlines(), 1) if 'Claim(id="mean"' in text)
    assert len(lines) == 1 and lines[0].startswith(f"error: experiments/tiny.py:{line}: "), result.stderr
    assert "cannot be evaluated" in lines[0] and len(lines[0]) < 600
    assert not (root / "site").exists()


@pytest.mark.parametrize("criterion, values, moved, flips", [
    ("x < 0.1", {"x": 0.001}, ["x"], "x set to 0.1"),  # far below its threshold, and still able to fail
    ("x < 1e-12", {"x": 3e-17}, ["x"], "x set to 1e-12"),
    ("0.8 < xs[0] / xs[-1] < 1.25", {"xs": [1.0, 1.1, 1.05]}, ["xs"], "xs's first element halved"),
    ("not (min(sweep.a) <= b <= max(sweep.a))", {"a": 5.0, "b": 1e9, "sweep.a": [5.0, 6.0]}, ["a"], "a set to b"),
    ("a < b", {"a": 1.0, "b": 1.5}, ["a", "b"], "a doubled"),
    ("increasing(xs)", {"xs": [1, 2, 3]}, ["xs"], "xs negated"),
    ("abs(x) >= 0", {"x": 0.3}, ["x"], ""),  # true of every number
    ("x == x", {"x": 0.3}, ["x"], ""),
    ("len(xs) == 3", {"xs": [0.1, 0.2, 0.3]}, ["xs"], ""),  # its length is no measurement
    ("x < 1 or x >= 1", {"x": 0.5}, ["x"], ""),
])
def test_a_criterion_that_no_move_of_its_measured_values_changes_cannot_fail(criterion, values, moved, flips):
    from lessonkit.measure.falsifiable import fails_when

    read = {k.removeprefix("sweep.") for k in values}
    found = fails_when(criterion, False, values, moved, read)
    assert found == flips, (criterion, found)
    if flips:
        assert fails_when(criterion, True, values, moved, read), "a refuted criterion can fail exactly when its own can"
