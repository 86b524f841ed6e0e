"""Figures of lesson L5, drawn from the multires experiment's values."""

import matplotlib.pyplot as plt
import numpy as np

LABELS = {
    "zh": {
        "index": r"序号 $i$", "sv": r"奇异值 $\sigma_i$（对数刻度）",
        "cliff": "断崖：第 {a} 个是第 {b} 个的{r}", "more": " {x} 倍以上", "times": " {x} 倍",
        "layer": "层", "grad": "权重梯度范数（对数刻度）", "res": "有残差 y = x + xW", "plain": "无残差 y = xW",
        "sigma": r"各层 $\sigma_{{\max}}(W) \leq$ {s:.2f}", "ratio_at": "第 1 层：无残差 / 有残差 = {r}",
        "depth": "深度（0 = 输入）", "norm": "残差流范数", "ratio": "增量 / 流", "block": "块",
    },
    "en": {
        "index": r"index $i$", "sv": r"singular value $\sigma_i$ (log scale)",
        "cliff": "cliff: value {a} is{r}value {b}", "more": " more than {x} times ", "times": " {x} times ",
        "layer": "layer", "grad": "weight-gradient norm (log scale)", "res": "residual y = x + xW",
        "plain": "plain y = xW", "sigma": r"$\sigma_{{\max}}(W) \leq$ {s:.2f} in every layer",
        "ratio_at": "layer 1: plain / residual = {r}",
        "depth": "depth (0 = input)", "norm": "residual-stream norm", "ratio": "increment / stream", "block": "block",
    },
}


def _sci(x):
    """A number as the pages write it: 1.2 × 10⁻⁷ (mathtext)."""
    exponent = int(np.floor(np.log10(abs(x))))
    return rf"${x / 10 ** exponent:.1f} \times 10^{{{exponent}}}$"


def p1_spectrum(values, lang):
    t = LABELS[lang]
    s = np.asarray(values["multires.p1.singular_values"])
    d_k = values["multires.p1.d_k_alt"]
    first = values["multires.p1.first_dropped"]  # the first value past the cliff, counted from 1
    cliff = values["multires.p1.cliff"]
    fig, ax = plt.subplots(figsize=(6, 3))
    idx = np.arange(1, len(s) + 1)
    ax.semilogy(idx[:first - 1], s[:first - 1], "o", color="C0", markersize=4)
    ax.semilogy(idx[first - 1:], s[first - 1:], "o", color="C1", markersize=3)
    ax.axvline(d_k + 0.5, color="C3", linestyle="--", linewidth=1)
    # The harness shows a ratio past 10¹² as a bound: the figure says what the page says.
    ratio = t["more"].format(x=r"$10^{12}$") if cliff > 1e12 else t["times"].format(x=_sci(cliff))
    ax.annotate(t["cliff"].format(a=d_k, b=first, r=ratio), xy=(d_k + 0.5, np.sqrt(s[d_k - 1] * s[d_k])),
                xytext=(d_k + 3, np.sqrt(s[d_k - 1] * s[d_k])))
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
    ratio = values["multires.p2.ratio"]
    ax.annotate("", xy=(1, plain[0]), xytext=(1, res[0]), arrowprops={"arrowstyle": "<->", "color": "C3"})
    ax.text(1.15, np.sqrt(plain[0] * res[0]), t["ratio_at"].format(r=_sci(ratio)), va="center")
    ax.set_xlabel(t["layer"])
    ax.set_ylabel(t["grad"])
    ax.set_xticks(layers)
    ax.grid(True, axis="y")
    ax.legend(loc="center right", title=t["sigma"].format(s=values["multires.p2.sigma_max"]))
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
    second = values["multires.p3.ratio_second"]  # the caption quotes it: written over its bar
    a2.text(2, second, f"{second:.2f}", ha="center", va="bottom", fontsize=9)
    a2.axhline(1.0, color="C3", linestyle="--", linewidth=1)
    a2.set_xlabel(t["block"])
    a2.set_ylabel(t["ratio"])
    a2.set_xticks(blocks)
    fig.tight_layout()
    return fig
