"""The trained experiment: the task's two rules, the hand-written backward pass against central differences,
one Adam step against its formula, and a short training whose outcome could go the other way.
The contract, standalone runs and the seed sweep are checked for every experiment in test_course.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import trained  # noqa: E402

TASK = {k: trained.PARAMS[k] for k in ("n_keys", "n_values", "seq_len")}
D_IN = TASK["n_keys"] + TASK["n_values"] + TASK["seq_len"]


def _batch(seed, n):
    return trained.make_batch(np.random.default_rng(seed), n, **TASK)


# -- the task ----------------------------------------------------------------------

def test_every_key_of_the_second_half_occurred_exactly_once_before_at_its_match():
    keys, values, match = _batch(0, 64)
    half = trained.HALF
    assert (np.sort(keys[:, :half], axis=1) == np.arange(TASK["n_keys"])).all()  # each key once
    for row in range(len(keys)):
        for t in range(half, TASK["seq_len"]):
            earlier = np.flatnonzero(keys[row, :t] == keys[row, t])
            assert earlier.tolist() == [match[row, t]]
    assert (match[:, :half] == -1).all()
    assert len(set(map(tuple, keys[:, half:]))) > 1  # the revisits are not always in the same order


def test_the_two_targets_follow_their_rules():
    keys, values, match = _batch(1, 16)
    y_a, y_b = trained.targets(values, match)
    assert (y_a[:, 0] == -1).all() and (y_a[:, 1:] == values[:, :-1]).all()
    half = trained.HALF
    assert (y_b[:, :half] == -1).all()
    for row in range(len(keys)):
        for t in range(half, TASK["seq_len"]):
            j = int(np.flatnonzero(keys[row, :t] == keys[row, t])[0])
            assert y_b[row, t] == values[row, j]
    # the rules disagree often: field B is not field A under another name
    assert (y_a[:, half:] != y_b[:, half:]).mean() > 0.5


def test_inputs_are_one_hot_and_the_mask_is_strictly_causal():
    keys, values, match = _batch(2, 8)
    x = trained.encode(keys, values, n_keys=TASK["n_keys"], n_values=TASK["n_values"])
    assert x.shape == (8, TASK["seq_len"], D_IN) and (x.sum(axis=-1) == 3).all()
    mask = trained.causal_mask(TASK["seq_len"])
    assert mask[0, 0] and not mask[1, 1] and mask[1, 0] and not np.triu(mask, k=1).any()


# -- the backward pass and Adam ------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("h", [1, 2, 4])
def test_backward_matches_central_differences_on_every_parameter(h):
    rng = np.random.default_rng(10 + h)
    x, t_a, t_b = trained.arrays(*_batch(3, 3), TASK["n_values"])
    params = trained.init_params(rng, 1, D_IN, 16, TASK["n_values"])
    for name in params:  # larger weights than at init: sharper attention, a harder check
        params[name] *= 3
    _, grads = trained.loss_and_grads(params, x, t_a, t_b, h)
    eps = 1e-5
    for name, w in params.items():
        numeric = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            old = w[index]
            w[index] = old + eps
            up = trained.loss_and_grads(params, x, t_a, t_b, h)[0].sum()
            w[index] = old - eps
            down = trained.loss_and_grads(params, x, t_a, t_b, h)[0].sum()
            w[index] = old
            numeric[index] = (up - down) / (2 * eps)
        error = np.linalg.norm(grads[name] - numeric) / np.linalg.norm(numeric)
        assert error <= 1e-6, (h, name, error)


def test_adam_step_against_its_formula():
    params = {"w": np.array([1.0, -2.0, 0.5])}
    state = {}
    g1, g2 = np.array([0.1, -0.4, 0.0]), np.array([0.3, 0.2, -1.0])
    trained.adam_step(params, {"w": g1}, state, lr=0.01)
    # after one step the bias-corrected update is lr * g / (|g| + eps): a step of lr against each sign
    assert np.allclose(params["w"], [1.0 - 0.01, -2.0 + 0.01, 0.5])
    trained.adam_step(params, {"w": g2}, state, lr=0.01)
    m = 0.9 * 0.1 * g1 + 0.1 * g2
    v = 0.999 * 0.001 * g1**2 + 0.001 * g2**2
    step = 0.01 * (m / (1 - 0.9**2)) / (np.sqrt(v / (1 - 0.999**2)) + 1e-8)
    assert np.allclose(params["w"], np.array([1.0 - 0.01, -2.0 + 0.01, 0.5]) - step, rtol=1e-12)
    assert state["t"] == 2


def test_removing_a_head_removes_exactly_its_share_of_the_logits():
    rng = np.random.default_rng(5)
    keys, values, match = _batch(5, 6)
    x, t_a, t_b = trained.arrays(keys, values, match, TASK["n_values"])
    params = trained.init_params(rng, 1, D_IN, 16, TASK["n_values"])
    h = 4
    (full, *_), removed, att = trained.evaluate(params, x, t_a, t_b, h)
    # the same by zeroing head 2's columns of the read-outs
    cut = {k: v.copy() for k, v in params.items()}
    d_k = 16 // h
    for u in ("ua", "ub"):
        cut[u][:, 2 * d_k:3 * d_k] = 0
    logits_a, logits_b, _ = trained.forward(cut, x, h)
    assert np.allclose(trained.scores_of(logits_a, logits_b, t_a, t_b)[0], removed[2][0], rtol=1e-12)
    assert np.allclose(att.sum(axis=-1), 1)
    assert trained.attention_mass(att, match).shape == (1, h, 2)


# -- a short training ------------------------------------------------------------------

def test_a_short_training_divides_the_rules_between_two_heads_but_not_one():
    """Few steps, one seed: two heads learn both rules and each takes one; one head cannot do both at t >= 8."""
    keys, values, match = trained.make_batch(np.random.default_rng([7, 1]), 96, **TASK)
    x, t_a, t_b = trained.arrays(keys, values, match, TASK["n_values"])
    result = {}
    for h in (1, 2):
        params, curve = trained.train([7, 0], [7, 2, h], h, task=TASK, d_model=16, restarts=1, steps=120,
                                      batch=16, lr=0.05, log_every=10)
        (loss, acc_a, acc_b, acc_a_late), removed, att = trained.evaluate(params, x, t_a, t_b, h)
        result[h] = (loss[0], acc_a[0], acc_b[0], acc_a_late[0], trained.attention_mass(att, match)[0], curve)
    loss2, acc_a2, acc_b2, _, mass2, curve2 = result[2]
    assert curve2[-1] < curve2[0] / 10
    assert min(acc_a2, acc_b2) > 0.9
    assert trained.divides([mass2]) == [1]
    loss1, _, acc_b1, acc_a_late1, _, _ = result[1]
    assert acc_a_late1 + acc_b1 < 1.4 and loss1 > loss2
