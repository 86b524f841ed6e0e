"""Chapter 3: KV-cache memory of MHA, GQA and MQA, and why GQA computes the same thing as MHA with shared K/V.

Setup. During decoding every layer keeps the keys and values of all past
tokens: K and V, each kv_heads x d_head numbers per token per layer. So

    bytes per token = 2 (K and V) x layers x kv_heads x d_head x bytes_per_elem.

L  A LLaMA-3.1-70B-like configuration: 80 layers, 64 query heads of d_head =
   128, 2 bytes per element (bf16/fp16), and kv_heads = 64 (MHA), 8 (GQA: 8
   query heads share each K/V head) or 1 (MQA). By formula: bytes per token
   and GiB for an 8192-token context. Measured: a real one-token cache of that
   shape (float16 arrays of 80 x kv_heads x 1 x 128 for K and for V) and its
   .nbytes; the savings MHA/GQA and MHA/MQA are taken from these measured bytes.
T  A tiny decoder, actually run: `tiny_layers` attention-only layers with a
   residual, d_model = q_heads x d_head = 8 x 16, weights Gaussian with standard
   deviation 1 / sqrt(d_model), `tiny_tokens` Gaussian input tokens decoded one
   at a time, each step appending its K and V to a preallocated cache and
   attending over the cache. With float16 caches we compare .nbytes with the
   formula for kv_heads = 8, 2, 1. With float64 caches we check the grouping:
   GQA with kv_heads = 2 (query head i reads K/V head i // group) must give the
   same outputs as MHA whose K/V weights are the GQA ones repeated per group
   (np.repeat); likewise MQA (kv_heads = 1).

Run it: python experiments/kvcache.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "kvcache"

PARAMS = {
    # L: LLaMA-3.1-70B-like
    "layers": 80,
    "q_heads": 64,
    "gqa_kv_heads": 8,
    "d_head": 128,
    "bytes_per_elem": 2,
    "context": 8192,
    # T: tiny decoder
    "tiny_layers": 2,
    "tiny_q_heads": 8,
    "tiny_gqa_kv_heads": 2,
    "tiny_d_head": 16,
    "tiny_tokens": 12,
}


def kv_bytes_per_token(layers, kv_heads, d_head, bytes_per_elem):
    """The formula: K and V, per layer, per K/V head."""
    return 2 * layers * kv_heads * d_head * bytes_per_elem


class KVCache:
    """Preallocated K and V: (layers, kv_heads, max_tokens, d_head) each."""

    def __init__(self, layers, kv_heads, d_head, max_tokens, dtype):
        self.k = np.zeros((layers, kv_heads, max_tokens, d_head), dtype=dtype)
        self.v = np.zeros_like(self.k)
        self.length = 0

    @property
    def nbytes(self):
        return self.k.nbytes + self.v.nbytes


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def grouped_attention(q, k, v):
    """One query token. q: (q_heads, d), k, v: (kv_heads, t, d). Query head i reads K/V head i // group."""
    kv_heads, _, d = k.shape
    q = q.reshape(kv_heads, -1, d)  # (kv_heads, group, d)
    weights = softmax(np.einsum("gqd,gtd->gqt", q, k) / np.sqrt(d))
    return np.einsum("gqt,gtd->gqd", weights, v).reshape(-1)


def init_decoder(rng, layers, q_heads, kv_heads, d_head):
    d_model = q_heads * d_head

    def w(cols):
        return rng.standard_normal((d_model, cols)) / np.sqrt(d_model)

    return [{"q": w(q_heads * d_head), "k": w(kv_heads * d_head), "v": w(kv_heads * d_head), "o": w(d_model)}
            for _ in range(layers)]


def repeat_kv(weights, q_heads, d_head):
    """The same decoder as MHA: each K/V head's weight columns repeated for every query head of its group."""
    def rep(m):
        kv_heads = m.shape[1] // d_head
        heads = m.reshape(m.shape[0], kv_heads, d_head)  # column block j is K/V head j
        return np.repeat(heads, q_heads // kv_heads, axis=1).reshape(m.shape[0], -1)

    return [{**w, "k": rep(w["k"]), "v": rep(w["v"])} for w in weights]


def decode(tokens, weights, q_heads, d_head, dtype):
    """Run the tokens one at a time through the layers, filling a KV cache. Returns (outputs, cache)."""
    kv_heads = weights[0]["k"].shape[1] // d_head
    cache = KVCache(len(weights), kv_heads, d_head, len(tokens), dtype)
    outputs = []
    for t, x in enumerate(tokens):
        for layer, w in enumerate(weights):
            cache.k[layer, :, t] = (x @ w["k"]).reshape(kv_heads, d_head)
            cache.v[layer, :, t] = (x @ w["v"]).reshape(kv_heads, d_head)
            q = (x @ w["q"]).reshape(q_heads, d_head)
            att = grouped_attention(q, cache.k[layer, :, : t + 1], cache.v[layer, :, : t + 1])
            x = x + att @ w["o"]
        cache.length = t + 1
        outputs.append(x)
    return np.array(outputs), cache


def run(seed, *, layers, q_heads, gqa_kv_heads, d_head, bytes_per_elem, context,
        tiny_layers, tiny_q_heads, tiny_gqa_kv_heads, tiny_d_head, tiny_tokens):
    rng = np.random.default_rng(seed)
    dtype = {2: np.float16, 4: np.float32, 8: np.float64}[bytes_per_elem]
    out = {"config.layers": layers, "config.q_heads": q_heads, "config.d_head": d_head,
           "config.bytes_per_elem": bytes_per_elem, "config.context": context}

    # L: formula, and a real one-token cache of the full shape
    measured = {}
    for name, kv_heads in (("mha", q_heads), ("gqa", gqa_kv_heads), ("mqa", 1)):
        per_token = kv_bytes_per_token(layers, kv_heads, d_head, bytes_per_elem)
        measured[name] = KVCache(layers, kv_heads, d_head, 1, dtype).nbytes
        out.update({
            f"{name}.kv_heads": kv_heads,
            f"{name}.bytes_per_token": per_token,
            f"{name}.kib_per_token": per_token / 2**10,
            f"{name}.gib_8k": per_token * context / 2**30,
            f"{name}.nbytes_per_token": measured[name],
        })
    out["gqa.saving"] = measured["mha"] / measured["gqa"]
    out["mqa.saving"] = measured["mha"] / measured["mqa"]

    # T: a tiny decoder, actually run
    tokens = rng.standard_normal((tiny_tokens, tiny_q_heads * tiny_d_head))
    variants = [tiny_q_heads, tiny_gqa_kv_heads, 1]
    weights = {g: init_decoder(rng, tiny_layers, tiny_q_heads, g, tiny_d_head) for g in variants}
    nbytes = [decode(tokens, weights[g], tiny_q_heads, tiny_d_head, dtype)[1].nbytes for g in variants]
    formula = [tiny_tokens * kv_bytes_per_token(tiny_layers, g, tiny_d_head, bytes_per_elem) for g in variants]
    diffs = []
    for g in variants[1:]:
        grouped, _ = decode(tokens, weights[g], tiny_q_heads, tiny_d_head, np.float64)
        repeated, _ = decode(tokens, repeat_kv(weights[g], tiny_q_heads, tiny_d_head),
                             tiny_q_heads, tiny_d_head, np.float64)
        diffs.append(float(np.abs(grouped - repeated).max()))
    out.update({
        "tiny.layers": tiny_layers,
        "tiny.q_heads": tiny_q_heads,
        "tiny.kv_heads": variants,
        "tiny.d_head": tiny_d_head,
        "tiny.tokens": tiny_tokens,
        "tiny.nbytes": nbytes,
        "tiny.formula_bytes": formula,
        # rounding error at most (0.0 here, not necessarily with another kernel): shown as bounds
        "tiny.gqa_max_diff": harness.below(diffs[0], 1e-10),
        "tiny.mqa_max_diff": harness.below(diffs[1], 1e-10),
    })
    return out


CLAIMS = [
    Claim(
        id="formula",
        criterion=("mha.nbytes_per_token == mha.bytes_per_token and gqa.nbytes_per_token == gqa.bytes_per_token"
                   " and mqa.nbytes_per_token == mqa.bytes_per_token and tiny.nbytes == tiny.formula_bytes"),
        text={"zh": "公式 2 × 层数 × KV 头数 × d_head × 字节数 与真实分配的缓存 .nbytes 完全一致"
                    "（70B 规模的单 token 缓存，以及实际解码填满的小缓存）",
              "en": "the formula 2 × layers × KV heads × d_head × bytes equals the .nbytes of real caches "
                    "(a one-token cache at 70B shape, and small caches filled by actual decoding)"},
        shows=("mha.bytes_per_token", "gqa.bytes_per_token", "mqa.bytes_per_token",
               "mha.kib_per_token", "gqa.kib_per_token", "mqa.kib_per_token",
               "mha.gib_8k", "gqa.gib_8k", "mqa.gib_8k",
               "mha.nbytes_per_token", "gqa.nbytes_per_token", "mqa.nbytes_per_token",
               "tiny.nbytes", "tiny.formula_bytes", "tiny.kv_heads", "tiny.tokens",
               "config.layers", "config.q_heads", "config.d_head", "config.bytes_per_elem", "config.context"),
        note={"zh": "由配置算出，并与按该形状分配的 float16 缓存数组的 .nbytes 核对；与随机种子无关。",
              "en": "Computed from the configuration and checked against the .nbytes of float16 cache arrays allocated with those shapes; independent of the seed."},
    ),
    Claim(
        id="gqa_saving",
        criterion="gqa.saving == config.q_heads / gqa.kv_heads == 8",
        text={"zh": "GQA（8 个 KV 组）的 KV 缓存是 MHA 的 1/8：节省倍数 = 查询头数 / KV 头数 = 64/8",
              "en": "GQA with 8 KV groups needs 1/8 of MHA's KV cache: the saving is query heads / KV heads = 64/8"},
        shows=("gqa.saving", "gqa.kv_heads", "mha.kv_heads"),
        note={"zh": "由配置算出，并与按该形状分配的 float16 缓存数组的 .nbytes 核对；与随机种子无关。",
              "en": "Computed from the configuration and checked against the .nbytes of float16 cache arrays allocated with those shapes; independent of the seed."},
    ),
    Claim(
        id="mqa_saving",
        criterion="mqa.saving == config.q_heads / mqa.kv_heads == 64",
        text={"zh": "MQA（1 个 KV 头）把 KV 缓存压到 MHA 的 1/64",
              "en": "MQA with a single KV head cuts the KV cache to 1/64 of MHA's"},
        shows=("mqa.saving", "mqa.kv_heads"),
        note={"zh": "由配置算出，并与按该形状分配的 float16 缓存数组的 .nbytes 核对；与随机种子无关。",
              "en": "Computed from the configuration and checked against the .nbytes of float16 cache arrays allocated with those shapes; independent of the seed."},
    ),
    Claim(
        id="equivalence",
        criterion="tiny.gqa_max_diff < 1e-10 and tiny.mqa_max_diff < 1e-10",
        text={"zh": "GQA 就是 K/V 在组内共享的 MHA：把 K/V 头按组复制后用 MHA 解码，"
                    "输出与 GQA 的差小于 1e-10（MQA 同样）",
              "en": "GQA is MHA with K/V shared within each group: decoding with MHA on K/V heads repeated per "
                    "group gives GQA's outputs to within 1e-10 (MQA likewise)"},
        shows=("tiny.gqa_max_diff", "tiny.mqa_max_diff", "tiny.layers", "tiny.q_heads", "tiny.d_head"),
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
