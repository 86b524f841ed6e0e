"""Lesson L5: low-rank scoring, the residual gradient highway, and residual-stream growth.

P1  M = W^Q W^K^T is d x d, yet rank(M) = d_k (five random realisations each).
P2  An 8-layer linear stack, with residuals (y = x + xW) and without (y = xW).
    Width `width`, batch `batch`, every W Gaussian with standard deviation
    `w_scale / sqrt(width)` (so sigma_max(W) is about 2 * w_scale < 1), input x
    standard normal, loss L = sum(y * r) for a fixed standard-normal r (a linear
    loss, so the upstream gradient does not shrink with y). We compare the
    Frobenius norm of dL/dW_1 without and with residuals.
    Also, with the same weights: the first layer's gradient of the stacks made of
    the first 1, 2, ..., 8 layers (how it changes with depth, with and without
    residuals), and for every layer the singular values of I + W against the
    bounds 1 - sigma_max(W) and 1 + sigma_max(W) (exercise 3).
P3  A pre-LN stack of 4 blocks, x <- x + W2 gelu(W1 LN(x)), tokens whose entries
    have standard deviation `x_scale`. We record the mean per-token norm of
    the stream at each depth (input included) and each block's increment / stream.

Drawn after P3, so that the values above keep their random numbers:
P1b The section-2 thought experiment: `joint_heads` = 25 heads, each a d x d_k_alt
    query projection, side by side in d = 48 dimensions: the rank of the
    concatenation (how many dimensions the heads span together).
P2b The P2 plain stack again with weights of standard deviation
    `w_scale_big / sqrt(width)` (sigma_max(W) about 3 > 1): the first layer's
    gradient for depths 1 to 8.

Run it: python experiments/multires.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "multires"

PARAMS = {
    # P1
    "d": 48,
    "d_k": 4,
    "d_k_alt": 6,
    "trials": 5,
    # P2
    "layers": 8,
    "width": 64,
    "batch": 16,
    "w_scale": 0.1,
    "w_scale_big": 1.5,
    # P3
    "blocks": 4,
    "d_model": 64,
    "d_ff": 256,
    "tokens": 32,
    "x_scale": 0.3,
    "ff_gain": 1.4,
    # P1b
    "joint_heads": 25,
    # The author's own run of P3 (L5 original, §4), to compare with our range over the seeds
    "author_norm_last": 18.34,
    "author_ratio_last": 0.68,
}


# -- P1: the rank of the score matrix ---------------------------------------

def numerical_rank(m: np.ndarray) -> int:
    """Singular values above the usual tolerance: max(shape) * eps * s_max."""
    s = np.linalg.svd(m, compute_uv=False)
    return int(np.sum(s > max(m.shape) * np.finfo(m.dtype).eps * s[0]))


def score_matrix(rng: np.random.Generator, d: int, d_k: int) -> np.ndarray:
    w_q = rng.standard_normal((d, d_k)) / np.sqrt(d)
    w_k = rng.standard_normal((d, d_k)) / np.sqrt(d)
    return w_q @ w_k.T


# -- P2: gradients through a linear stack -----------------------------------

def stack_forward(x, weights, residual):
    """All activations, input first."""
    acts = [x]
    for w in weights:
        h = acts[-1] @ w
        acts.append(acts[-1] + h if residual else h)
    return acts


def stack_grads(x, weights, r, residual):
    """dL/dW_l for L = sum(y * r), by hand-written backpropagation."""
    acts = stack_forward(x, weights, residual)
    g = r  # dL/dy
    grads = [None] * len(weights)
    for i in reversed(range(len(weights))):
        grads[i] = acts[i].T @ g
        g = g @ weights[i].T + (g if residual else 0)
    return grads


def stack_loss(x, weights, r, residual):
    return float(np.sum(stack_forward(x, weights, residual)[-1] * r))


# -- P3: a pre-LN stack -------------------------------------------------------

def layer_norm(x, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def mean_norm(x):
    return float(np.linalg.norm(x, axis=-1).mean())


def first_grad_by_depth(x, weights, r, residual):
    """Norm of dL/dW_1 for the stacks made of the first 1, 2, ..., len(weights) layers."""
    return [float(np.linalg.norm(stack_grads(x, weights[:k], r, residual)[0])) for k in range(1, len(weights) + 1)]


def run(seed, *, d, d_k, d_k_alt, trials, layers, width, batch, w_scale, w_scale_big,
        blocks, d_model, d_ff, tokens, x_scale, ff_gain, joint_heads, author_norm_last, author_ratio_last):
    rng = np.random.default_rng(seed)
    out = {"p1.d": d, "p1.d_k": d_k, "p1.d_k_alt": d_k_alt, "p1.trials": trials,
           "author.norm_last": author_norm_last, "author.ratio_last": author_ratio_last}

    # P1
    ranks = [numerical_rank(score_matrix(rng, d, d_k)) for _ in range(trials)]
    ranks_alt = [numerical_rank(score_matrix(rng, d, d_k_alt)) for _ in range(trials)]
    example = score_matrix(rng, d, d_k_alt)
    s = np.linalg.svd(example, compute_uv=False)
    out.update({
        "p1.ranks": ranks,
        "p1.rank": min(ranks),
        "p1.ranks_alt": ranks_alt,
        "p1.rank_alt": min(ranks_alt),
        "p1.null_dims_alt": d - min(ranks_alt),
        "p1.first_dropped": d_k_alt + 1,
        # past d_k_alt the singular values are rounding error, whose digits depend on the BLAS kernel: bounds
        "p1.singular_values": [*s[:d_k_alt].tolist(), *(harness.below(x, 1e-12) for x in s[d_k_alt:])],
        # the cliff: the last kept singular value over the first dropped one. The dropped one is
        # rounding error (its size depends on the BLAS kernel), so the ratio is only a bound.
        "p1.cliff": harness.above(s[d_k_alt - 1] / s[d_k_alt], 1e12),
    })

    # P2
    weights = [rng.standard_normal((width, width)) * w_scale / np.sqrt(width) for _ in range(layers)]
    x = rng.standard_normal((batch, width))
    r = rng.standard_normal((batch, width))
    plain_grads = stack_grads(x, weights, r, residual=False)
    res_grads = stack_grads(x, weights, r, residual=True)
    plain_norms = [float(np.linalg.norm(g)) for g in plain_grads]
    res_norms = [float(np.linalg.norm(g)) for g in res_grads]
    out.update({
        "p2.layers": layers,
        "p2.width": width,
        "p2.grad_norms_plain": plain_norms,
        "p2.grad_norms_residual": res_norms,
        "p2.ratio": plain_norms[0] / res_norms[0],
        "p2.sigma_max": max(float(np.linalg.norm(w, 2)) for w in weights),
        # how the first layer's gradient changes with depth (same weights, first k layers)
        "p2.depth_plain": first_grad_by_depth(x, weights, r, residual=False),
        "p2.depth_residual": first_grad_by_depth(x, weights, r, residual=True),
    })
    # one layer more: the first layer's gradient is multiplied by at most this (the weakest shrink)
    out["p2.depth_step_max"] = max(b / a for a, b in zip(out["p2.depth_plain"], out["p2.depth_plain"][1:],
                                                           strict=False))
    # exercise 3: the singular values of I + W lie in [1 - sigma_max(W), 1 + sigma_max(W)]
    eye = np.eye(width)
    sig_w = [float(np.linalg.norm(w, 2)) for w in weights]
    sig_res = [np.linalg.svd(eye + w, compute_uv=False) for w in weights]
    out.update({
        "p2.res_sigma_min": min(float(s_[-1]) for s_ in sig_res),
        "p2.res_sigma_max": max(float(s_[0]) for s_ in sig_res),
        "p2.res_floor": min(1 - s_w for s_w in sig_w),
        # how far each layer stays inside the bounds (>= 0 when they hold)
        "p2.res_floor_margin": min(float(s_[-1]) - (1 - s_w) for s_, s_w in zip(sig_res, sig_w, strict=True)),
        "p2.res_ceiling_margin": min((1 + s_w) - float(s_[0]) for s_, s_w in zip(sig_res, sig_w, strict=True)),
    })

    # P3
    stream = rng.standard_normal((tokens, d_model)) * x_scale
    norms, ratios = [mean_norm(stream)], []
    for _ in range(blocks):
        w1 = rng.standard_normal((d_model, d_ff)) * ff_gain / np.sqrt(d_model)
        w2 = rng.standard_normal((d_ff, d_model)) * ff_gain / np.sqrt(d_ff)
        increment = gelu(layer_norm(stream) @ w1) @ w2
        ratios.append(mean_norm(increment) / mean_norm(stream))
        stream = stream + increment
        norms.append(mean_norm(stream))
    out.update({
        "p3.blocks": blocks,
        "p3.norms": norms,
        "p3.ratios": ratios,
        "p3.norm_first": norms[0],
        "p3.norm_last": norms[-1],
        "p3.ratio_first": ratios[0],
        "p3.ratio_second": ratios[1],
        "p3.ratio_last": ratios[-1],
    })

    # P1b: the section-2 thought experiment, 25 heads of rank d_k_alt side by side in d dimensions
    joint = np.concatenate([rng.standard_normal((d, d_k_alt)) for _ in range(joint_heads)], axis=1)
    out.update({
        "p1.joint_heads": joint_heads,
        "p1.joint_rank_sum": joint_heads * d_k_alt,
        "p1.joint_rank": numerical_rank(joint),
    })

    # P2b: the plain stack with sigma_max(W) > 1
    big = [rng.standard_normal((width, width)) * w_scale_big / np.sqrt(width) for _ in range(layers)]
    depth_big = first_grad_by_depth(x, big, r, residual=False)
    out.update({
        "p2.big_sigma_min": min(float(np.linalg.norm(w, 2)) for w in big),
        "p2.big_depth_plain": depth_big,
        "p2.big_growth": depth_big[-1] / depth_big[0],
    })
    return out


CLAIMS = [
    Claim(
        id="p1.rank",
        criterion="all(k == p1.d_k for k in p1.ranks)",
        text={"zh": "d_k = 4 时，5 次随机实现的数值秩全部恰为 d_k",
              "en": "with d_k = 4, the numerical rank is exactly d_k in all 5 random realisations"},
        shows=("p1.rank", "p1.ranks"),
    ),
    Claim(
        id="p1.rank_alt",
        criterion="all(k == p1.d_k_alt for k in p1.ranks_alt) and p1.cliff > 1e12",
        text={"zh": "d_k = 6 时，数值秩同样恰为 d_k；第 d_k 个奇异值是下一个的 10¹² 倍以上（其后只剩浮点噪声）",
              "en": "with d_k = 6, the numerical rank is likewise exactly d_k; singular value d_k is more than "
                    "10¹² times the next (after it only floating-point noise remains)"},
        shows=("p1.rank_alt", "p1.null_dims_alt", "p1.cliff"),
    ),
    Claim(
        id="p1.joint_span",
        criterion="p1.joint_rank == p1.d < p1.joint_rank_sum",
        text={"zh": "25 个秩为 6 的头并排放进 d = 48 维空间，拼在一起的秩只有 48 = d：各头合起来张成的子空间不超过 d 维，"
                    "秩之和 150 只是一个到不了的上界",
              "en": "25 heads of rank 6 side by side in d = 48 dimensions have a joint rank of only 48 = d: together "
                    "the heads span at most d dimensions, and the sum of their ranks, 150, is a bound they cannot reach"},
        shows=("p1.joint_rank", "p1.joint_rank_sum", "p1.joint_heads"),
    ),
    Claim(
        id="p2.condition",
        criterion="p2.sigma_max < 1",
        text={"zh": "条件域成立：每层 σ_max(W) < 1",
              "en": "the stated condition holds: σ_max(W) < 1 in every layer"},
        shows=("p2.sigma_max",),
    ),
    Claim(
        id="p2.vanishing",
        criterion="1e-8 < p2.ratio < 1e-6",
        text={"zh": "无残差时首层梯度乘性消失，约为有残差时的 1e-7 量级",
              "en": "without residuals the first layer's gradient vanishes multiplicatively, to the order of 1e-7 of the residual one"},
        shows=("p2.ratio",),
    ),
    Claim(
        id="p2.highway",
        criterion=("0.8 < p2.grad_norms_residual[0] / p2.grad_norms_residual[-1] < 1.25"
                   " and 0.8 < min(p2.depth_residual) / p2.depth_residual[0]"
                   " and max(p2.depth_residual) / p2.depth_residual[0] < 1.25"),
        text={"zh": "有残差时梯度沿恒等路径直达首层：首层与末层的权重梯度相差不到 25%，从 1 层加深到 8 层，首层梯度也变化不到 25%",
              "en": "with residuals the gradient reaches the first layer along the identity path: the first and last "
                    "layers' weight gradients differ by less than 25%, and going from 1 to 8 layers changes the first "
                    "layer's gradient by less than 25%"},
        shows=("p2.grad_norms_residual", "p2.depth_residual"),
    ),
    Claim(
        id="p2.depth_decay",
        criterion="p2.depth_step_max < 0.2",
        text={"zh": "没有残差、σ_max(W) < 1 时，每多叠一层，首层梯度都缩小到原来的 1/5 以下：随层数指数衰减",
              "en": "without residuals and with σ_max(W) < 1, every added layer shrinks the first layer's gradient to "
                    "less than 1/5 of what it was: it decays exponentially with depth"},
        shows=("p2.depth_step_max",),
    ),
    Claim(
        id="p2.explode",
        criterion=("p2.big_sigma_min > 1 and increasing(p2.big_depth_plain)"
                   " and p2.big_growth > 10"),
        text={"zh": "同一个无残差线性堆叠换成每层 σ_max(W) > 1 的大权重后，首层梯度随层数逐层增大，8 层时超过 1 层时的 10 倍：不是消失而是爆炸",
              "en": "the same plain linear stack with larger weights, σ_max(W) > 1 in every layer, has a first-layer "
                    "gradient that grows with every added layer, more than 10 times larger at 8 layers than at 1: "
                    "it explodes instead of vanishing"},
        shows=("p2.big_growth", "p2.big_sigma_min", "p2.big_depth_plain"),
    ),
    Claim(
        id="p2.identity_floor",
        criterion="p2.res_floor_margin >= 0 and p2.res_ceiling_margin >= 0 and p2.res_floor > 0",
        text={"zh": "每层 I + W 的奇异值都落在 1 − σ_max(W) 与 1 + σ_max(W) 之间；σ_max(W) < 1 时下界大于 0，"
                    "W 抵消不掉恒等直通项",
              "en": "in every layer the singular values of I + W lie between 1 − σ_max(W) and 1 + σ_max(W); with "
                    "σ_max(W) < 1 the lower bound is above 0, so W cannot cancel the identity path"},
        shows=("p2.res_sigma_min", "p2.res_sigma_max", "p2.res_floor", "p2.res_floor_margin",
               "p2.res_ceiling_margin"),
    ),
    Claim(
        id="p3.growth",
        criterion="increasing(p3.norms)",
        text={"zh": "残差流范数逐块增长", "en": "the residual-stream norm grows block by block"},
        shows=("p3.norm_first", "p3.norm_last"),
    ),
    Claim(
        id="p3.crossover",
        criterion="p3.ratio_first > 1 > p3.ratio_last and decreasing(p3.ratios)",
        text={"zh": "增量/流比值递减：首块增量大于流，末块小于流",
              "en": "the increment/stream ratio falls: the first increment exceeds the stream, the last is smaller"},
        shows=("p3.ratio_first", "p3.ratio_last"),
    ),
    Claim(
        id="p3.first_block_only",
        criterion="p3.ratios[0] > 3 and 0.85 < p3.ratios[1] < 1.15 and all(q < 1 for q in p3.ratios[2:])",
        text={"zh": "只有第一块的增量明显大于流（是流的 3 倍以上）；第二块的增量已与流相当（比值在 0.85 到 1.15 之间，"
                    "可能略大也可能略小），第三、四块的增量都小于流",
              "en": "only the first block's increment is clearly larger than the stream (more than 3 times it); the "
                    "second block's is about as large as the stream (ratio between 0.85 and 1.15, slightly above or "
                    "slightly below), and the third and fourth blocks' increments are smaller than the stream"},
        shows=("p3.ratio_second",),
    ),
    Claim(
        id="p3.second_both_sides",
        criterion="min(sweep.p3.ratio_second) < 1 < max(sweep.p3.ratio_second)",
        text={"zh": "第二块的增量/流比值随种子不同落在 1 的两侧：有的种子上略大于 1，有的略小于 1",
              "en": "the second block's increment/stream ratio falls on both sides of 1 across the seeds: slightly "
                    "above 1 on some seeds, slightly below on others"},
        shows=("p3.ratio_second",),
        note={"zh": "判据读取全部种子（sweep.）：只在构建里整体判定；单独运行时只在该种子上判定。",
              "en": "The criterion reads every seed (sweep.): the build judges it on the whole sweep; a run alone "
                    "judges it on its own seed."},
    ),
    Claim(
        id="p3.author_outside",
        criterion=("not (min(sweep.p3.norm_last) <= author.norm_last <= max(sweep.p3.norm_last))"
                   " and not (min(sweep.p3.ratio_last) <= author.ratio_last <= max(sweep.p3.ratio_last))"),
        text={"zh": "作者原稿 P3 末块的流范数 18.34 与增量/流比值 0.68，都不在本构建各种子的范围之内",
              "en": "the author's P3 figures for the last block, a stream norm of 18.34 and an increment/stream "
                    "ratio of 0.68, both lie outside this build's range over its seeds"},
        shows=("p3.norm_last", "p3.ratio_last", "author.norm_last", "author.ratio_last"),
        note={"zh": "判据读取全部种子（sweep.）：只在构建里整体判定；单独运行时只在该种子上判定。",
              "en": "The criterion reads every seed (sweep.): the build judges it on the whole sweep; a run alone "
                    "judges it on its own seed."},
    ),
    Claim(
        id="p3.increment_bounded",
        criterion="all(q <= 1 for q in p3.ratios)",
        text={"zh": "增量不超过流", "en": "the increment never exceeds the stream"},
        shows=("p3.ratio_first",),
        refuted=True,
        note={"zh": "被数据否决，按实测修正为“增量/流比值递减：首块增量大于流，末块小于流”一条；构建每次重新确认它仍被否决。",
              "en": "Rejected by the data and revised into the claim “the increment/stream ratio falls: the first increment exceeds the stream, the last is smaller”; every build re-checks that the data still rejects it."},
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
