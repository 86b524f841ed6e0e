"""Figures of lesson L5, drawn from the multires experiment's values."""

import matplotlib.pyplot as plt
import numpy as np

LABELS = {
    "zh": {
        "index": r"序号 $i$", "sv": r"奇异值 $\sigma_i$（对数）", "cliff": r"$d_k$ 之后的断崖",
        "layer": "层", "grad": "权重梯度范数（对数）", "res": "有残差 y = x + xW", "plain": "无残差 y = xW",
        "depth": "深度（0 = 输入）", "norm": "残差流范数", "ratio": "增量 / 流", "block": "块",
    },
    "en": {
        "index": r"index $i$", "sv": r"singular value $\sigma_i$ (log)", "cliff": r"cliff after $d_k$",
        "layer": "layer", "grad": "weight-gradient norm (log)", "res": "residual y = x + xW", "plain": "plain y = xW",
        "depth": "depth (0 = input)", "norm": "residual-stream norm", "ratio": "increment / stream", "block": "block",
    },
}


def p1_spectrum(values, lang):
    t = LABELS[lang]
    s = np.asarray(values["multires.p1.singular_values"])
    d_k = values["multires.p1.d_k_alt"]
    fig, ax = plt.subplots(figsize=(6, 3))
    idx = np.arange(1, len(s) + 1)
    ax.semilogy(idx[:d_k], s[:d_k], "o", color="C0", markersize=4)
    ax.semilogy(idx[d_k:], s[d_k:], "o", color="C1", markersize=3)
    ax.axvline(d_k + 0.5, color="C3", linestyle="--", linewidth=1)
    ax.annotate(t["cliff"], xy=(d_k + 0.5, np.sqrt(s[d_k - 1] * s[d_k])), xytext=(d_k + 3, np.sqrt(s[d_k - 1] * s[d_k])))
    ax.set_xlabel(t["index"])
    ax.set_ylabel(t["sv"])
    ax.grid(True, which="major", axis="y")
    return fig


def p2_gradients(values, lang):
    t = LABELS[lang]
    res = values["multires.p2.grad_norms_residual"]
    plain = values["multires.p2.grad_norms_plain"]
    layers = np.arange(1, len(res) + 1)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.semilogy(layers, res, "o-", color="C0", label=t["res"])
    ax.semilogy(layers, plain, "s-", color="C1", label=t["plain"])
    ax.set_xlabel(t["layer"])
    ax.set_ylabel(t["grad"])
    ax.set_xticks(layers)
    ax.grid(True, axis="y")
    ax.legend(loc="center right")
    return fig


def p3_stream(values, lang):
    t = LABELS[lang]
    norms = values["multires.p3.norms"]
    ratios = values["multires.p3.ratios"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7, 3))
    a1.plot(range(len(norms)), norms, "o-", color="C0")
    a1.set_xlabel(t["depth"])
    a1.set_ylabel(t["norm"])
    a1.set_xticks(range(len(norms)))
    a1.grid(True, axis="y")
    blocks = np.arange(1, len(ratios) + 1)
    a2.bar(blocks, ratios, color=["C1" if q > 1 else "C0" for q in ratios])
    a2.axhline(1.0, color="C3", linestyle="--", linewidth=1)
    a2.set_xlabel(t["block"])
    a2.set_ylabel(t["ratio"])
    a2.set_xticks(blocks)
    fig.tight_layout()
    return fig
