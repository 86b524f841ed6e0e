"""Chapter 3: what grows with the head count at fixed d_model: attention-map memory, not FLOPs.

Setup. One self-attention layer, one sequence of n tokens, model width d_model
split into h heads of d_k = d_model / h. FLOPs count 2 per multiply-add.

G  GPT-like scale, by formula: d_model = 4096, n = seq_len = 4096, h in
   1, 2, 4, ..., 128 (d_k from 4096 down to 32). Each quantity is summed head
   by head, so h enters every formula:
     projections  Q, K, V: h heads x 2 n d_model d_k each; O: 2 n (h d_k) d_model
     scores QK^T  h heads x 2 n^2 d_k
     A V          h heads x 2 n^2 d_k
     maps         h heads x n^2 attention weights (the softmax output), stored in
                  `bytes_per_elem` = 2 bytes (fp16/bf16); the softmax itself also
                  touches h n^2 elements.
S  Small scale, measured: d_model = 128, n = 128, h in 1, 2, 4, 8, 16, 32.
   A vectorised numpy multi-head attention (heads as a batch axis) runs every
   matrix product through a counter that adds (output elements x inner
   dimension) multiply-adds, read off the actual array shapes; the score array
   it materialises is counted by its .size. The same weights go through a
   reference implementation (a Python loop over heads, column slices of W_Q,
   W_K, W_V, np.concatenate, then W_O) and we take the largest absolute
   difference of the outputs. Inputs and weights are Gaussian (weights with
   standard deviation 1 / sqrt(d_model)), float64. Wall-clock time is not
   measured: it is noise at this size and says nothing the counts do not.

Run it: python experiments/headcost.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "headcost"

PARAMS = {
    # G: GPT-like, by formula
    "gpt_d_model": 4096,
    "gpt_seq_len": 4096,
    "gpt_heads": [1, 2, 4, 8, 16, 32, 64, 128],
    "bytes_per_elem": 2,
    # S: small, measured in numpy
    "d_model": 128,
    "seq_len": 128,
    "heads": [1, 2, 4, 8, 16, 32],
}


# -- G: cost by formula --------------------------------------------------------

def layer_cost(n: int, d_model: int, h: int, bytes_per_elem: int) -> dict:
    """FLOPs and attention-map bytes of one attention layer, summed head by head."""
    d_k = d_model // h
    return {
        "proj_flops": 3 * h * 2 * n * d_model * d_k + 2 * n * (h * d_k) * d_model,
        "score_flops": h * 2 * n * n * d_k,
        "av_flops": h * 2 * n * n * d_k,
        "map_elements": h * n * n,
        "map_bytes": h * n * n * bytes_per_elem,
    }


# -- S: a real multi-head attention with a multiply-add counter --------------

class MacCounter:
    """Matrix products that count their multiply-adds from the array shapes."""

    def __init__(self):
        self.macs = 0

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = a @ b
        self.macs += out.size * a.shape[-1]
        return out


def softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def multi_head(x, w_q, w_k, w_v, w_o, h):
    """Vectorised multi-head attention; returns the output, the score array and the MAC counts."""
    n, d_model = x.shape
    d_k = d_model // h
    proj, qk, av = MacCounter(), MacCounter(), MacCounter()

    def split(t):  # (n, d_model) -> (h, n, d_k)
        return t.reshape(n, h, d_k).transpose(1, 0, 2)

    q, k, v = (split(proj.matmul(x, w)) for w in (w_q, w_k, w_v))
    scores = qk.matmul(q, k.transpose(0, 2, 1)) / np.sqrt(d_k)  # (h, n, n)
    heads = av.matmul(softmax(scores), v)  # (h, n, d_k)
    out = proj.matmul(heads.transpose(1, 0, 2).reshape(n, d_model), w_o)
    return out, scores, {"proj": proj.macs, "qk": qk.macs, "av": av.macs}


def multi_head_reference(x, w_q, w_k, w_v, w_o, h):
    """The textbook form: a loop over heads, each with its own column slice, then Concat and W_O."""
    d_k = x.shape[1] // h
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        q, k, v = x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        heads.append(softmax(q @ k.T / np.sqrt(d_k)) @ v)
    return np.concatenate(heads, axis=1) @ w_o


def run(seed, *, gpt_d_model, gpt_seq_len, gpt_heads, bytes_per_elem, d_model, seq_len, heads):
    rng = np.random.default_rng(seed)
    out = {"gpt.d_model": gpt_d_model, "gpt.seq_len": gpt_seq_len, "gpt.h": gpt_heads,
           "gpt.bytes_per_elem": bytes_per_elem}

    # G
    costs = [layer_cost(gpt_seq_len, gpt_d_model, h, bytes_per_elem) for h in gpt_heads]
    for key in ("proj_flops", "score_flops", "av_flops", "map_bytes"):
        out[f"gpt.{key}"] = [c[key] for c in costs]
    by_h = dict(zip(gpt_heads, costs, strict=True))
    out.update({
        "gpt.d_k": [gpt_d_model // h for h in gpt_heads],
        "gpt.map_bytes_h1": by_h[1]["map_bytes"],
        "gpt.map_bytes_h8": by_h[8]["map_bytes"],
        "gpt.map_bytes_h128": by_h[128]["map_bytes"],
        "gpt.map_mib_h8": by_h[8]["map_bytes"] / 2**20,
        "gpt.map_gib_h128": by_h[128]["map_bytes"] / 2**30,
        "gpt.map_ratio": by_h[128]["map_bytes"] / by_h[1]["map_bytes"],
        # the share of the layer's FLOPs spent on QK^T and AV (the same for every h)
        "gpt.score_share": (by_h[8]["score_flops"] + by_h[8]["av_flops"])
        / (by_h[8]["proj_flops"] + by_h[8]["score_flops"] + by_h[8]["av_flops"]),
    })

    # S
    x = rng.standard_normal((seq_len, d_model))
    w_q, w_k, w_v, w_o = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4))
    proj_macs, qk_macs, av_macs, elements, diffs = [], [], [], [], []
    for h in heads:
        y, scores, macs = multi_head(x, w_q, w_k, w_v, w_o, h)
        reference = multi_head_reference(x, w_q, w_k, w_v, w_o, h)
        proj_macs.append(macs["proj"])
        qk_macs.append(macs["qk"])
        av_macs.append(macs["av"])
        elements.append(scores.size)
        diffs.append(float(np.abs(y - reference).max()))
    out.update({
        "small.d_model": d_model,
        "small.n": seq_len,
        "small.h": heads,
        "small.proj_macs": proj_macs,
        "small.qk_macs": qk_macs,
        "small.av_macs": av_macs,
        "small.score_elements": elements,
        # rounding error: 0.0 with one BLAS kernel, 1.6e-15 with another; only the bound is a measurement
        "small.max_abs_diffs": harness.below(diffs, 1e-12),
        "small.max_abs_diff": harness.below(max(diffs), 1e-12),
    })
    return out


CLAIMS = [
    Claim(
        id="gpt.proj_constant",
        criterion="len(gpt.h) == 8 and all(f == gpt.proj_flops[0] for f in gpt.proj_flops)",
        text={"zh": "d_model 固定为 4096 时，Q/K/V/O 投影的 FLOPs 与头数无关：从 1 头到 128 头完全相同",
              "en": "at a fixed d_model of 4096, the Q/K/V/O projection FLOPs do not depend on the head count: "
                    "identical from 1 head to 128"},
        shows=("gpt.proj_flops", "gpt.d_model", "gpt.seq_len", "gpt.h", "gpt.d_k"),
        note={"zh": "由公式在所述配置下算出，与随机种子无关：这是推导，不是抽样；small.counts 在真实的 numpy 实现上核对这些公式。",
              "en": "Computed from the formulas at the stated configuration, independent of the seed: a derivation, not a sample; small.counts checks the formulas against a real numpy implementation."},
    ),
    Claim(
        id="gpt.score_constant",
        criterion=("all(f == gpt.score_flops[0] for f in gpt.score_flops)"
                   " and all(f == gpt.av_flops[0] for f in gpt.av_flops)"),
        text={"zh": "QK^T 打分与 AV 加权的 FLOPs 同样与头数无关（h · n² · d_k = n² · d_model）",
              "en": "the FLOPs of the QK^T scores and of AV are likewise independent of the head count "
                    "(h · n² · d_k = n² · d_model)"},
        shows=("gpt.score_flops", "gpt.av_flops", "gpt.score_share"),
        note={"zh": "由公式在所述配置下算出，与随机种子无关：这是推导，不是抽样；small.counts 在真实的 numpy 实现上核对这些公式。",
              "en": "Computed from the formulas at the stated configuration, independent of the seed: a derivation, not a sample; small.counts checks the formulas against a real numpy implementation."},
    ),
    Claim(
        id="gpt.map_linear",
        criterion=("gpt.map_ratio == 128"
                   " and np.array_equal(np.array(gpt.map_bytes), np.array(gpt.h) * gpt.map_bytes_h1)"),
        text={"zh": "真正随头数增长的是注意力图的显存：与 h 成正比，128 头是 1 头的 128 倍",
              "en": "what does grow with the head count is attention-map memory: proportional to h, "
                    "128 heads take 128 times the memory of one"},
        shows=("gpt.map_bytes", "gpt.map_ratio", "gpt.map_bytes_h1", "gpt.map_bytes_h8", "gpt.map_bytes_h128",
               "gpt.map_mib_h8", "gpt.map_gib_h128", "gpt.bytes_per_elem"),
        note={"zh": "由公式在所述配置下算出，与随机种子无关：这是推导，不是抽样；small.counts 在真实的 numpy 实现上核对这些公式。",
              "en": "Computed from the formulas at the stated configuration, independent of the seed: a derivation, not a sample; small.counts checks the formulas against a real numpy implementation."},
    ),
    Claim(
        id="small.counts",
        criterion=("all(m == 4 * small.n * small.d_model**2 for m in small.proj_macs)"
                   " and all(m == small.n**2 * small.d_model for m in small.qk_macs)"
                   " and all(m == small.n**2 * small.d_model for m in small.av_macs)"
                   " and np.array_equal(np.array(small.score_elements), np.array(small.h) * small.n**2)"),
        text={"zh": "在 numpy 实现里按数组形状数出的乘加次数与公式逐一相符：投影与打分都不随 h 变，"
                    "而实际生成的打分元素个数恰为 h · n²",
              "en": "in a numpy implementation the multiply-adds counted from the array shapes match the formula "
                    "for every h: projections and scores do not change with h, while the score elements "
                    "actually materialised number exactly h · n²"},
        shows=("small.proj_macs", "small.qk_macs", "small.av_macs", "small.score_elements", "small.h",
               "small.n", "small.d_model"),
    ),
    Claim(
        id="small.reference",
        criterion="small.max_abs_diff < 1e-12",
        text={"zh": "向量化多头实现与逐头循环的参考实现输出一致（最大绝对误差低于 1e-12）",
              "en": "the vectorised multi-head implementation agrees with a head-by-head reference loop "
                    "(largest absolute difference below 1e-12)"},
        shows=("small.max_abs_diff", "small.max_abs_diffs"),
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
