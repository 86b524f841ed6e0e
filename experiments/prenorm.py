"""Chapter 3: Pre-LN vs Post-LN: gradient norms by depth in a deep stack at initialisation.

Setup. A stack of `layers` = 24 blocks of width `width` = 64 acting on a batch
of `batch` = 128 standard-normal tokens, float64. Each block's sublayer is an
MLP F(x) = relu(x W1) W2 with W1 (width x d_ff, d_ff = 256) Gaussian of
standard deviation sqrt(2 / width) (He) and W2 (d_ff x width) of standard
deviation branch_gain / sqrt(d_ff), so F adds about branch_gain^2 to the
variance of a unit-variance input. LayerNorm has no gain or bias (gain 1 and
bias 0, as at init), eps = 1e-5.

    Post-LN  x <- LN(x + F(x))                        (the original Transformer)
    Pre-LN   x <- x + F(LN(x)), and LN at the very end  (GPT-2, LLaMA)

Loss L = sum(y * r) / batch for a fixed standard-normal r (a linear readout).
Gradients come from hand-written backpropagation (`loss_and_grads`), checked
against central finite differences (`finite_difference`) in the tests. The
gradient norm of a block is the Frobenius norm of (dL/dW1, dL/dW2) together.

D  Both stacks with the same weights: per-block gradient norms, first/last ratio,
   spread (largest / smallest over depth), and for Pre-LN the growth of the
   residual stream (mean token norm at the top over that after block 1).
S  The same at `shallow_layers` = 6 blocks (the first 6 weight pairs), to see how
   the last block's gradient depends on depth.
G  Pre-LN with every W2 scaled by 1 / sqrt(layers) (GPT-2's residual-branch
   scaling, 1 / sqrt(2 n_layer) there with two sublayers per block).

What Xiong et al. (2020, "On Layer Normalization in the Transformer
Architecture") prove is about scale: at init the last layer's gradient is
O(1) in depth for Post-LN but shrinks like 1 / sqrt(L) for Pre-LN. That is what
this stack shows. Their Post-LN depth profile (large near the output, small
near the input) does not appear with MLP sublayers alone: here Post-LN is the
flatter one and Pre-LN's gradients grow toward the input, by about the growth
of the residual stream (also reported by Shleifer et al. 2021, NormFormer).

Run it: python experiments/prenorm.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "prenorm"

PARAMS = {
    "layers": 24,
    "shallow_layers": 6,
    "width": 64,
    "d_ff": 256,
    "batch": 128,
    "branch_gain": 1.0,
    "eps": 1e-5,
}


# -- the pieces, forward and backward ------------------------------------------

def layer_norm(x, eps):
    mu = x.mean(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    y = (x - mu) * inv
    return y, (y, inv)


def layer_norm_backward(g, cache):
    y, inv = cache
    return inv * (g - g.mean(axis=-1, keepdims=True) - y * (g * y).mean(axis=-1, keepdims=True))


def mlp(x, w1, w2):
    h = x @ w1
    a = np.maximum(h, 0)
    return a @ w2, (x, h, a)


def mlp_backward(g, cache, w1, w2):
    """Returns dL/dx, dL/dW1, dL/dW2 given g = dL/d(output)."""
    x, h, a = cache
    dw2 = a.T @ g
    dh = (g @ w2.T) * (h > 0)
    return dh @ w1.T, x.T @ dh, dw2


# -- the two stacks ----------------------------------------------------------------

def loss_and_grads(x, r, weights, norm, eps):
    """L = sum(y * r) / batch and [(dL/dW1, dL/dW2) per block], by backpropagation.

    weights: a list of (W1, W2); norm: "pre" or "post". Also returns the mean token
    norm of the stream after each block (for Pre-LN, the residual stream).
    """
    caches, stream_norms = [], []
    for w1, w2 in weights:
        if norm == "pre":
            u, ln_cache = layer_norm(x, eps)
            f, mlp_cache = mlp(u, w1, w2)
            x = x + f
        else:
            f, mlp_cache = mlp(x, w1, w2)
            x, ln_cache = layer_norm(x + f, eps)
        caches.append((ln_cache, mlp_cache))
        stream_norms.append(float(np.linalg.norm(x, axis=-1).mean()))
    if norm == "pre":
        x, final_cache = layer_norm(x, eps)
    loss = float(np.sum(x * r)) / len(x)

    g = r / len(x)  # dL/dy
    if norm == "pre":
        g = layer_norm_backward(g, final_cache)
    grads = [None] * len(weights)
    for i in reversed(range(len(weights))):
        (w1, w2), (ln_cache, mlp_cache) = weights[i], caches[i]
        if norm == "pre":  # x_out = x + F(LN(x))
            du, dw1, dw2 = mlp_backward(g, mlp_cache, w1, w2)
            g = g + layer_norm_backward(du, ln_cache)
        else:  # x_out = LN(x + F(x))
            dz = layer_norm_backward(g, ln_cache)
            dx, dw1, dw2 = mlp_backward(dz, mlp_cache, w1, w2)
            g = dz + dx
        grads[i] = (dw1, dw2)
    return loss, grads, stream_norms


def finite_difference(f, w, index, step=1e-6):
    """Central difference of the scalar f() in the entry w[index]; w is changed in place, then restored."""
    old = w[index]
    w[index] = old + step
    up = f()
    w[index] = old - step
    down = f()
    w[index] = old
    return (up - down) / (2 * step)


def block_norms(grads):
    return [float(np.sqrt(np.sum(dw1**2) + np.sum(dw2**2))) for dw1, dw2 in grads]


def profile(norms):
    return norms[0] / norms[-1], max(norms) / min(norms)


def run(seed, *, layers, shallow_layers, width, d_ff, batch, branch_gain, eps):
    rng = np.random.default_rng(seed)
    weights = [(rng.standard_normal((width, d_ff)) * np.sqrt(2 / width),
                rng.standard_normal((d_ff, width)) * branch_gain / np.sqrt(d_ff)) for _ in range(layers)]
    x = rng.standard_normal((batch, width))
    r = rng.standard_normal((batch, width))
    out = {"config.layers": layers, "config.shallow_layers": shallow_layers, "config.width": width,
           "config.d_ff": d_ff, "config.branch_gain": branch_gain}

    # D: full depth
    for norm in ("post", "pre"):
        _, grads, streams = loss_and_grads(x, r, weights, norm, eps)
        norms = block_norms(grads)
        first_last, spread = profile(norms)
        out.update({f"{norm}.grad_norms": norms, f"{norm}.first_last": first_last, f"{norm}.spread": spread,
                    f"{norm}.last": norms[-1]})
        if norm == "pre":
            out["pre.stream_growth"] = streams[-1] / streams[0]
    out["last.post_over_pre"] = out["post.last"] / out["pre.last"]

    # S: shallow
    for norm in ("post", "pre"):
        _, grads, _ = loss_and_grads(x, r, weights[:shallow_layers], norm, eps)
        last_shallow = block_norms(grads)[-1]
        out[f"{norm}.last_shallow"] = last_shallow
        out[f"{norm}.depth_scaling"] = out[f"{norm}.last"] / last_shallow

    # G: Pre-LN with GPT-2-style residual-branch scaling
    scaled = [(w1, w2 / np.sqrt(layers)) for w1, w2 in weights]
    _, grads, _ = loss_and_grads(x, r, scaled, "pre", eps)
    norms = block_norms(grads)
    first_last, spread = profile(norms)
    out.update({"scaled.grad_norms": norms, "scaled.first_last": first_last, "scaled.spread": spread})
    return out


CLAIMS = [
    Claim(
        id="last.post_larger",
        criterion="last.post_over_pre > 2",
        text={"zh": "24 层时，Post-LN 最后一层的梯度是 Pre-LN 的两倍以上：Post-LN 在输出端梯度大"
                    "（Xiong 等人据此解释它为何需要 warm-up）",
              "en": "at 24 layers the last layer's gradient under Post-LN is more than twice Pre-LN's: Post-LN "
                    "has large gradients at the output (Xiong et al.'s explanation of why it needs warm-up)"},
        shows=("last.post_over_pre", "post.last", "pre.last", "config.layers", "config.width"),
    ),
    Claim(
        id="depth",
        criterion="0.75 < post.depth_scaling < 1.33 and pre.depth_scaling < 0.75",
        text={"zh": "从 6 层加深到 24 层：Post-LN 最后一层的梯度几乎不变，Pre-LN 的则缩小（理论上约为 1/√L 倍）",
              "en": "going from 6 to 24 layers, the last layer's gradient barely changes under Post-LN but "
                    "shrinks under Pre-LN (by about 1/√L in theory)"},
        shows=("post.depth_scaling", "pre.depth_scaling", "post.last_shallow", "pre.last_shallow",
               "config.shallow_layers"),
    ),
    Claim(
        id="pre.toward_input",
        criterion="pre.first_last > 2 and 1 / 1.5 < pre.first_last / pre.stream_growth < 1.5",
        text={"zh": "在这个 MLP 堆叠里，Pre-LN 的梯度朝输入端变大：第一层是最后一层的两倍以上，"
                    "这个倍数与残差流从第一块到顶端的增长之比在 1/1.5 到 1.5 之间",
              "en": "in this MLP stack Pre-LN's gradients grow toward the input: the first layer's is more than "
                    "twice the last's, within a factor of 1.5 of how much the residual stream grows from block 1 "
                    "to the top"},
        shows=("pre.first_last", "pre.stream_growth", "pre.grad_norms", "pre.spread"),
    ),
    Claim(
        id="post.flat",
        criterion="post.spread < 3",
        text={"zh": "只有 MLP 子层时，Post-LN 各层梯度大致均匀：最大与最小之比低于 3",
              "en": "with MLP sublayers only, Post-LN's gradients are roughly even across depth: largest over "
                    "smallest below 3"},
        shows=("post.spread", "post.first_last", "post.grad_norms"),
    ),
    Claim(
        id="scaled.uniform",
        criterion="0.5 <= scaled.first_last <= 2 and scaled.spread < 2",
        text={"zh": "按 GPT-2 的做法把残差分支缩小 1/√L 后，Pre-LN 各层梯度均匀：首末比在 [0.5, 2] 内",
              "en": "with the residual branches scaled by 1/√L as in GPT-2, Pre-LN's gradients are even across "
                    "depth: first/last within [0.5, 2]"},
        shows=("scaled.first_last", "scaled.spread", "scaled.grad_norms"),
    ),
    Claim(
        id="pre.uniform",
        criterion="0.5 <= pre.first_last <= 2",
        text={"zh": "Pre-LN 各层梯度均匀（首末比在 [0.5, 2] 内）",
              "en": "Pre-LN's gradients are even across depth (first/last within [0.5, 2])"},
        shows=("pre.first_last",),
        refuted=True,
        note={"zh": "被数据否决：未缩放的残差分支让残差流逐层变大，Pre-LN 靠近输入的梯度随之变大；"
                    "只有像 GPT-2 那样把残差分支缩小 1/√L 之后才均匀。",
              "en": "Rejected by the data: with unscaled residual branches the stream grows block by block and "
                    "Pre-LN's gradients near the input grow with it; they are even only once the branches are "
                    "scaled by 1/√L, as in GPT-2."},
    ),
    Claim(
        id="post.uneven",
        criterion="post.spread > 2 * pre.spread",
        text={"zh": "Post-LN 各层梯度的离散程度远大于 Pre-LN",
              "en": "Post-LN's gradients are far more uneven across depth than Pre-LN's"},
        shows=("post.spread",),
        refuted=True,
        note={"zh": "被数据否决：只有 MLP 子层时，更不均匀的是 Pre-LN。Xiong 等人图中 Post-LN 的深度分布"
                    "来自完整 Transformer（含注意力子层），这个堆叠没有复现它。",
              "en": "Rejected by the data: with MLP sublayers only, Pre-LN is the uneven one. The Post-LN depth "
                    "profile in Xiong et al.'s figure comes from full Transformers (with attention sublayers), "
                    "which this stack does not reproduce."},
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
