"""The L5 experiment: gradients are right, ranks are exact, the refuted criterion stays refuted."""

import subprocess
import sys

import harness
import multires
import numpy as np
import pytest
from conftest import ROOT


@pytest.mark.parametrize("residual", [False, True])
def test_hand_written_gradients_match_finite_differences(residual):
    rng = np.random.default_rng(5)
    width, layers = 6, 4
    # A larger scale than P2 uses, so the plain stack's gradients are far above rounding error.
    weights = [rng.standard_normal((width, width)) * 0.7 for _ in range(layers)]
    x = rng.standard_normal((3, width))
    r = rng.standard_normal((3, width))
    grads = multires.stack_grads(x, weights, r, residual)
    eps = 1e-6
    for layer in (0, layers - 1):
        numeric = np.zeros_like(weights[layer])
        for i in range(width):
            for j in range(width):
                w_plus = [w.copy() for w in weights]
                w_minus = [w.copy() for w in weights]
                w_plus[layer][i, j] += eps
                w_minus[layer][i, j] -= eps
                numeric[i, j] = (multires.stack_loss(x, w_plus, r, residual)
                                 - multires.stack_loss(x, w_minus, r, residual)) / (2 * eps)
        np.testing.assert_allclose(grads[layer], numeric, rtol=1e-6, atol=1e-8)


def test_numerical_rank_sees_exact_low_rank():
    rng = np.random.default_rng(1)
    assert multires.numerical_rank(multires.score_matrix(rng, 48, 4)) == 4
    assert multires.numerical_rank(rng.standard_normal((10, 10))) == 10


def test_refuted_claim_is_kept_and_still_refuted():
    report = harness.measure(multires, 0)
    refuted = [c for c in report["claims"] if c["refuted"]]
    assert refuted, "the lesson's first criterion must stay on record"
    assert all(c["passed"] for c in refuted)
    # The data really contradicts it: some increment exceeds the stream.
    assert max(report["values"]["p3.ratios"]) > 1


def test_criterion_semantics():
    claim = harness.Claim("x", "increasing(a.b)", {"zh": "", "en": ""})
    assert harness.evaluate(claim, {"a.b": [1, 2, 3]})
    assert not harness.evaluate(claim, {"a.b": [1, 3, 2]})
    refuted = harness.Claim("y", "all(v < 2 for v in a.b)", {"zh": "", "en": ""}, refuted=True)
    assert harness.evaluate(refuted, {"a.b": [1, 3]})
    assert not harness.evaluate(refuted, {"a.b": [1, 1]})


def test_nan_values_are_rejected():
    with pytest.raises(ValueError, match="not finite"):
        harness.check_values({"p.x": float("nan")})


def test_script_exits_non_zero_on_a_failing_claim(tmp_path):
    """The script, with one more claim that fails on every seed (whatever the experiment's own claims say)."""
    broken = tmp_path / "multires.py"
    source = (ROOT / "experiments" / "multires.py").read_text()
    main = '\nif __name__ == "__main__":'
    assert source.count(main) == 1
    never = ('\nCLAIMS = [*CLAIMS, harness.Claim(id="never", criterion="False", '
             'text={"zh": "假", "en": "false"})]\n')
    broken.write_text(source.replace(main, never + main))
    (tmp_path / "harness.py").write_text((ROOT / "experiments" / "harness.py").read_text())
    (tmp_path / "criteria.py").write_text((ROOT / "lessonkit" / "criteria.py").read_text())
    out = subprocess.run([sys.executable, str(broken)], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL  multires.never" in out.stdout
    assert out.stdout.count("PASS") + out.stdout.count("MISS") == len(multires.CLAIMS)
