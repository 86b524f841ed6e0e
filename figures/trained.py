"""Figures of the trained experiment (one attention layer trained on two rules), drawn from its values."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_rgba

LABELS = {
    "zh": {
        "step": "训练步数", "loss": "训练损失（交叉熵，nats，对数刻度）", "heads": "{h} 个头", "one_head": "1 个头",
        "rule_a": "规则 A：前一个位置", "rule_b": "规则 B：键匹配的位置",
        "head": "头 {i}", "mass_title": "{h} 个头", "mass": "注意力质量",
        "least": "影响最小的头", "most": "影响最大的头", "increase": "去掉后测试损失的增加（nats）",
        "seeds": "每个种子", "median": "本页种子",
        "accuracy": "测试准确率", "acc_a": "规则 A（两条规则都要回答的位置）", "acc_b": "规则 B",
    },
    "en": {
        "step": "training step", "loss": "training loss (cross-entropy, nats, log scale)", "heads": "{h} heads",
        "one_head": "1 head", "rule_a": "rule A: previous position", "rule_b": "rule B: matching key",
        "head": "head {i}", "mass_title": "{h} heads", "mass": "attention mass",
        "least": "least important head", "most": "most important head",
        "increase": "increase of the test loss (nats)", "seeds": "each seed", "median": "this page's seed",
        "accuracy": "test accuracy", "acc_a": "rule A (positions where both rules answer)", "acc_b": "rule B",
    },
}
MARKERS = {1: "o", 2: "s", 4: "^"}


def _steps(values, n):
    every, steps = values["trained.config.log_every"], values["trained.config.steps"]
    xs = list(range(0, steps, every))[: n - 1]
    return xs + [steps - 1] if len(xs) == n - 1 else list(range(0, steps, every))[:n]


def _number(x):
    """A loss as the pages write it: two decimals from 1 up, two significant digits below it (0.013, as the text
    quotes it, not 0.01), or 1.2 × 10⁻⁴ below 0.01 (mathtext)."""
    if abs(x) >= 1:
        return f"{x:.2f}"
    if abs(x) >= 0.01:
        return f"{x:.2g}"
    exponent = int(np.floor(np.log10(abs(x))))
    return rf"${x / 10 ** exponent:.1f} \times 10^{{{exponent}}}$"


def loss_curves(values, lang):
    t = LABELS[lang]
    fig, ax = plt.subplots(figsize=(6, 3))
    for i, h in enumerate(values["trained.config.heads"]):
        curve = values[f"trained.h{h}.curve"]
        steps = _steps(values, len(curve))
        ax.semilogy(steps, curve, marker=MARKERS.get(h, "o"), markersize=3,
                    color=f"C{i}", label=t["one_head"] if h == 1 else t["heads"].format(h=h))
        # The caption quotes where each curve ends (and where the one-head curve starts): written there.
        last = values[f"trained.h{h}.train_last"]
        ax.annotate(_number(last), xy=(steps[-1], last), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8, color=f"C{i}")
        if h == 1:
            first = values["trained.h1.train_first"]
            ax.annotate(_number(first), xy=(steps[0], first), xytext=(6, 2), textcoords="offset points",
                        va="bottom", fontsize=8, color=f"C{i}")
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


def _bars_over_seeds(values, t, groups, series, label):
    """Bars for this page's seed (the median over its restarts, what the text quotes) with a dot for every seed
    beside each: groups are (x label, value prefix), series (value suffix, legend label)."""
    fig, ax = plt.subplots(figsize=(6, 3))
    width = 0.36
    rng = np.random.default_rng(0)  # the dots' sideways jitter only: the same on every build
    for k, (_, prefix) in enumerate(groups):
        for j, (suffix, name) in enumerate(series):
            x = k + (j - 0.5) * width
            here = values[f"{prefix}.{suffix}"]
            spread = values.over_seeds(f"{prefix}.{suffix}")
            ax.bar(x, here, width=width * 0.9, color=f"C{j}", alpha=0.55, label=name if k == 0 else None)
            # The seeds' dots on the bar's right half, its number over the left half.
            ax.plot(x + rng.uniform(0.02, 0.14, len(spread)), spread, "o", markersize=3, color=f"C{j}",
                    markeredgecolor="none", zorder=3)
            ax.text(x - 0.08, here, label(here), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)), [g for g, _ in groups])
    ax.grid(True, axis="y")
    ax.plot([], [], "o", markersize=3, color=plt.rcParams["text.color"], label=t["seeds"])
    return fig, ax


def ablation(values, lang):
    """The loss increase when the least and when the most important head is removed."""
    t = LABELS[lang]
    groups = [(t["heads"].format(h=h), f"trained.h{h}") for h in values["trained.config.heads"] if h > 1]
    fig, ax = _bars_over_seeds(values, t, groups, [("ablation_min", t["least"]), ("ablation_max", t["most"])],
                               _number)
    ax.set_ylabel(t["increase"])
    ax.legend(fontsize=8, loc="upper right")
    return fig


def accuracy(values, lang):
    """Test accuracy of each rule for each head count; rule A counted where both rules need an answer."""
    t = LABELS[lang]
    groups = [(t["one_head"] if h == 1 else t["heads"].format(h=h), f"trained.h{h}")
              for h in values["trained.config.heads"]]
    fig, ax = _bars_over_seeds(values, t, groups, [("acc_a_late", t["acc_a"]), ("acc_b", t["acc_b"])],
                               lambda x: f"{x:.2f}")
    ax.set_ylim(0, 1.15)
    ax.set_ylabel(t["accuracy"])
    # Above the axes, in one row: inside, every corner holds a bar.
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    return fig
