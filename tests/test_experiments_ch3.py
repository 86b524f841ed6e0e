"""Chapter 3 experiments: heads, headcost, kvcache, prenorm: the numerical building blocks are right
(multi-head vs reference, GQA vs repeated MHA, hand-written gradients vs finite differences).
The contract, standalone runs and the seed sweep are checked for every experiment in test_course.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import harness  # noqa: E402
import headcost  # noqa: E402
import heads  # noqa: E402
import kvcache  # noqa: E402
import prenorm  # noqa: E402


def test_script_exits_nonzero_on_a_failed_claim(monkeypatch):
    failing = harness.Claim(id="never", criterion="config.h < 0", text={"zh": "假", "en": "false"}, shows=())
    monkeypatch.setattr(heads, "CLAIMS", [*heads.CLAIMS, failing])
    assert harness.main(heads, ["--seed", "0"]) == 1


# -- heads -------------------------------------------------------------------------

def test_principal_cosines_extremes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 4))
    assert np.allclose(heads.principal_cosines(a, a @ rng.standard_normal((4, 4))), 1)
    eye = np.eye(32)
    assert np.allclose(heads.principal_cosines(eye[:, :4], eye[:, 4:8]), 0)


@pytest.mark.parametrize(("n", "k"), [(256, 32), (240, 60)])
def test_wachter_law_against_monte_carlo(n, k):
    """The asymptotic mean cosine agrees with sampled random subspaces (a check independent of the experiment)."""
    rng = np.random.default_rng(1)
    sampled = np.mean([heads.principal_cosines(rng.standard_normal((n, k)), rng.standard_normal((n, k))).mean()
                       for _ in range(40)])
    mean_cos, edge = heads.wachter_mean_cos(k / n, 4000)
    assert abs(sampled - mean_cos) < 0.01
    assert 0 < mean_cos < edge < 1


def test_heads_rank_is_not_trivially_full():
    # a head with d_k = d_model would score with a full-rank matrix: the rank claim reads the real rank
    rng = np.random.default_rng(0)
    assert heads.numerical_rank(rng.standard_normal((16, 16)) @ rng.standard_normal((16, 16)).T) == 16
    assert heads.numerical_rank(rng.standard_normal((16, 4)) @ rng.standard_normal((16, 4)).T) == 4


# -- headcost ----------------------------------------------------------------------

def _mha_inputs(seed, n=16, d_model=32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d_model))
    ws = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return x, ws


@pytest.mark.parametrize("h", [1, 2, 4, 8, 32])
def test_multi_head_matches_reference_and_counts(h):
    x, ws = _mha_inputs(h)
    n, d_model = x.shape
    y, scores, macs = headcost.multi_head(x, *ws, h)
    assert np.abs(y - headcost.multi_head_reference(x, *ws, h)).max() < 1e-12
    assert scores.shape == (h, n, n)
    assert macs == {"proj": 4 * n * d_model**2, "qk": n * n * d_model, "av": n * n * d_model}


def test_single_head_is_plain_attention():
    x, (w_q, w_k, w_v, w_o) = _mha_inputs(3)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    s = q @ k.T / np.sqrt(x.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    plain = (p / p.sum(axis=1, keepdims=True)) @ v @ w_o
    assert np.allclose(headcost.multi_head(x, w_q, w_k, w_v, w_o, 1)[0], plain, atol=1e-12)


def test_reference_comparison_catches_a_wrong_head_split():
    """Splitting heads the wrong way (rows instead of columns) must not pass the reference check."""
    x, (w_q, w_k, w_v, w_o) = _mha_inputs(4)
    n, d_model = x.shape
    h, d_k = 4, d_model // 4
    q, k, v = (t.reshape(h, n, d_k) for t in (x @ w_q, x @ w_k, x @ w_v))  # wrong: mixes tokens and heads
    wrong = (headcost.softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_k)) @ v).transpose(1, 0, 2).reshape(n, d_model)
    assert np.abs(wrong @ w_o - headcost.multi_head_reference(x, w_q, w_k, w_v, w_o, h)).max() > 1e-3


def test_layer_cost_formula():
    one, many = headcost.layer_cost(64, 32, 1, 2), headcost.layer_cost(64, 32, 8, 2)
    assert one["proj_flops"] == many["proj_flops"] == 2 * 4 * 64 * 32**2
    assert one["score_flops"] == many["score_flops"] == 2 * 64**2 * 32
    assert many["map_bytes"] == 8 * one["map_bytes"] == 8 * 64**2 * 2


# -- kvcache -----------------------------------------------------------------------

def test_cache_nbytes_match_formula():
    for layers, kv_heads, d_head, tokens, dtype in [(3, 4, 8, 5, np.float16), (2, 1, 16, 7, np.float32)]:
        cache_ = kvcache.KVCache(layers, kv_heads, d_head, tokens, dtype)
        per_token = kvcache.kv_bytes_per_token(layers, kv_heads, d_head, np.dtype(dtype).itemsize)
        assert cache_.nbytes == tokens * per_token


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_gqa_equals_mha_with_repeated_kv(kv_heads):
    rng = np.random.default_rng(kv_heads)
    q_heads, d_head = 8, 4
    tokens = rng.standard_normal((6, q_heads * d_head))
    weights = kvcache.init_decoder(rng, 2, q_heads, kv_heads, d_head)
    grouped, cache_ = kvcache.decode(tokens, weights, q_heads, d_head, np.float64)
    repeated, full = kvcache.decode(tokens, kvcache.repeat_kv(weights, q_heads, d_head), q_heads, d_head,
                                    np.float64)
    assert np.abs(grouped - repeated).max() < 1e-10
    assert full.nbytes == cache_.nbytes * q_heads // kv_heads


def test_gqa_check_catches_a_wrong_grouping():
    """Tiling instead of repeating pairs query heads with the wrong K/V heads: the outputs must differ."""
    rng = np.random.default_rng(7)
    q_heads, kv_heads, d_head = 8, 2, 4
    tokens = rng.standard_normal((6, q_heads * d_head))
    weights = kvcache.init_decoder(rng, 1, q_heads, kv_heads, d_head)

    def tile(m):
        return np.tile(m.reshape(m.shape[0], kv_heads, d_head), (1, q_heads // kv_heads, 1)).reshape(m.shape[0], -1)

    tiled = [{**w, "k": tile(w["k"]), "v": tile(w["v"])} for w in weights]
    grouped, _ = kvcache.decode(tokens, weights, q_heads, d_head, np.float64)
    wrong, _ = kvcache.decode(tokens, tiled, q_heads, d_head, np.float64)
    assert np.abs(grouped - wrong).max() > 1e-3


def test_decode_attends_causally():
    """A later token must not change earlier outputs: the cache only holds the past."""
    rng = np.random.default_rng(3)
    tokens = rng.standard_normal((5, 16))
    weights = kvcache.init_decoder(rng, 2, 4, 2, 4)
    full, _ = kvcache.decode(tokens, weights, 4, 4, np.float64)
    prefix, _ = kvcache.decode(tokens[:3], weights, 4, 4, np.float64)
    assert np.allclose(full[:3], prefix, atol=1e-14)


# -- prenorm -----------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["pre", "post"])
def test_prenorm_gradients_match_finite_differences(norm):
    rng = np.random.default_rng(5)
    width, d_ff, batch, layers = 8, 16, 4, 4
    weights = [(rng.standard_normal((width, d_ff)) * np.sqrt(2 / width),
                rng.standard_normal((d_ff, width)) / np.sqrt(d_ff)) for _ in range(layers)]
    x, r = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    _, grads, _ = prenorm.loss_and_grads(x, r, weights, norm, 1e-5)

    def loss():
        return prenorm.loss_and_grads(x, r, weights, norm, 1e-5)[0]

    for layer in range(layers):
        for which in (0, 1):
            w = weights[layer][which]
            for _ in range(3):
                index = tuple(int(rng.integers(s)) for s in w.shape)
                numeric = prenorm.finite_difference(loss, w, index)
                assert np.isclose(grads[layer][which][index], numeric, rtol=1e-5, atol=1e-8), (layer, which, index)


def test_finite_difference_restores_the_weight():
    w = np.arange(6.0).reshape(2, 3)
    assert np.isclose(prenorm.finite_difference(lambda: float(np.sum(w**2)), w, (1, 2)), 2 * 5.0)
    assert np.array_equal(w, np.arange(6.0).reshape(2, 3))

