"""Figures of the trained experiment (one attention layer trained on two rules), drawn from its values."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_rgba

LABELS = {
    "zh": {
        "step": "训练步数", "loss": "训练损失（对数）", "heads": "{h} 个头", "one_head": "1 个头",
        "rule_a": "规则 A：前一个位置", "rule_b": "规则 B：键匹配的位置",
        "head": "头 {i}", "mass_title": "{h} 个头", "mass": "注意力质量",
        "removed": "去掉的头", "increase": "去掉后测试损失的增加",
    },
    "en": {
        "step": "training step", "loss": "training loss (log)", "heads": "{h} heads", "one_head": "1 head",
        "rule_a": "rule A: previous position", "rule_b": "rule B: matching key",
        "head": "head {i}", "mass_title": "{h} heads", "mass": "attention mass",
        "removed": "head removed", "increase": "increase of the test loss",
    },
}
MARKERS = {1: "o", 2: "s", 4: "^"}


def _steps(values, n):
    every, steps = values["trained.config.log_every"], values["trained.config.steps"]
    xs = list(range(0, steps, every))[: n - 1]
    return xs + [steps - 1] if len(xs) == n - 1 else list(range(0, steps, every))[:n]


def loss_curves(values, lang):
    t = LABELS[lang]
    fig, ax = plt.subplots(figsize=(6, 3))
    for i, h in enumerate(values["trained.config.heads"]):
        curve = values[f"trained.h{h}.curve"]
        ax.semilogy(_steps(values, len(curve)), curve, marker=MARKERS.get(h, "o"), markersize=3,
                    color=f"C{i}", label=t["one_head"] if h == 1 else t["heads"].format(h=h))
    ax.set_xlabel(t["step"])
    ax.set_ylabel(t["loss"])
    ax.grid(True, which="major", axis="y")
    ax.legend(loc="lower left")
    return fig


def attention_mass(values, lang):
    t = LABELS[lang]
    counts = [h for h in values["trained.config.heads"] if h > 1]
    fig, axes = plt.subplots(1, len(counts), figsize=(3.2 * len(counts), 2.9),
                             gridspec_kw={"width_ratios": counts})
    for ax, h in zip(np.atleast_1d(axes), counts, strict=True):
        mass = np.asarray(values[f"trained.h{h}.mass"]).reshape(h, 2)
        for i in range(h):
            for r in range(2):
                ax.add_patch(plt.Rectangle((i, 1 - r), 1, 1, facecolor=to_rgba("C0", float(mass[i, r])),
                                           edgecolor="C7", linewidth=0.5))
                ax.text(i + 0.5, 1.5 - r, f"{mass[i, r]:.2f}", ha="center", va="center",
                        fontweight="bold" if mass[i, r] > 0.5 else "normal")
        ax.set_xlim(0, h)
        ax.set_ylim(0, 2)
        ax.set_xticks(np.arange(h) + 0.5, [t["head"].format(i=i + 1) for i in range(h)])
        ax.set_yticks([1.5, 0.5], [t["rule_a"], t["rule_b"]] if ax is np.atleast_1d(axes)[0] else ["", ""])
        ax.set_title(t["mass_title"].format(h=h), fontsize=10)
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def ablation(values, lang):
    t = LABELS[lang]
    counts = [h for h in values["trained.config.heads"] if h > 1]
    fig, axes = plt.subplots(1, len(counts), figsize=(3.2 * len(counts), 2.8), sharey=True,
                             gridspec_kw={"width_ratios": counts})
    for k, (ax, h) in enumerate(zip(np.atleast_1d(axes), counts, strict=True)):
        rise = values[f"trained.h{h}.ablation"]
        xs = np.arange(1, h + 1)
        ax.bar(xs, rise, color=f"C{k + 1}", width=0.6)
        for x, y in zip(xs, rise, strict=True):
            ax.text(x, y, f"{y:.2f}", ha="center", va="bottom", fontsize=9)
        ax.set_xticks(xs, [t["head"].format(i=i) for i in xs])
        ax.set_title(t["mass_title"].format(h=h), fontsize=10)
        ax.set_xlabel(t["removed"])
        ax.grid(True, axis="y")
    np.atleast_1d(axes)[0].set_ylabel(t["increase"])
    fig.tight_layout()
    return fig
