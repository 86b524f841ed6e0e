"""Diagrams of chapter 3 (multi-head attention), redrawn from the essay's box-drawing sketches.

Every recipe ignores ``values``: these are explanatory diagrams, not measurements.
Text and lines use the default text colour; fills and accents use C0..C3 so the
saved SVG follows the light and the dark theme.
"""

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

FS = 11  # body text
FS_SMALL = 10  # secondary notes
FS_TITLE = 12  # panel and box titles

LABELS = {
    "zh": {
        # multihead_flow
        "input": "输入 $X$（seq_len, d_model）",
        "head": "Head {i}",
        "attn": r"$\mathrm{{Attention}}_{{{i}}}$（64 维）",
        "concat": r"拼接：Concat($\mathrm{Attention}_1$, $\mathrm{Attention}_2$, …, $\mathrm{Attention}_8$)",
        "dim512": "512 维",
        "proj": r"输出投影：× $W_O$",
        "output": "最终输出（512 维）",
        # apple_subspaces
        "low": "低维空间（2 维）",
        "high": "高维空间（子空间分解）",
        "fruit": "水果",
        "tech": "科技公司",
        "apple": '"苹果"',
        "where": '"苹果"应该放哪里？',
        "sub1": "子空间 1（水果语义）",
        "sub2": "子空间 2（公司语义）",
        "orth": "两个子空间正交，互不干扰",
        # residual_flow
        "res_title": "残差连接的信息流",
        "x_in": "输入 $x$",
        "sublayer": "SubLayer($x$)",
        "skip": "残差连接\n（信息直通）",
        "layernorm": "LayerNorm",
        "out": "输出",
        "key": "关键：",
        "notes": [
            "即使 SubLayer 输出为 0，\n信息仍能通过残差连接传递",
            "梯度可以直接流过残差连接",
            "深层网络变得可训练",
        ],
        # head_specialisation
        "evo_title": "多头功能分化的演化过程",
        "stages": [
            ("训练初期（随机初始化）", ["所有 Head 都是随机参数", "每个 Head 关注的内容相似", "没有功能分化"]),
            ("训练中期（梯度压力）", ["某些 Head 偶然对\n某些模式更敏感", "这些 Head 获得更大的梯度", '"富者愈富"效应']),
            ("训练后期（功能稳定）", ["Head 之间形成稳定分工", "某些 Head 专门处理语法", "某些 Head 专门处理指代",
                                   "某些 Head 专门处理情感"]),
        ],
        "drive": "驱动力：",
        "drivers": ["Loss 最小化压力", "参数更新竞争", "信息处理效率最大化"],
    },
    "en": {
        # multihead_flow
        "input": "Input $X$ (seq_len, d_model)",
        "head": "Head {i}",
        "attn": r"$\mathrm{{Attention}}_{{{i}}}$ (64-dim)",
        "concat": r"Concat($\mathrm{Attention}_1$, $\mathrm{Attention}_2$, …, $\mathrm{Attention}_8$)",
        "dim512": "512-dim",
        "proj": r"Output projection: × $W_O$",
        "output": "Final output (512-dim)",
        # apple_subspaces
        "low": "Low-dimensional space (2-D)",
        "high": "High-dimensional space\n(subspace decomposition)",
        "fruit": "fruit",
        "tech": "tech company",
        "apple": '"apple"',
        "where": 'Where should\n"apple" go?',
        "sub1": "subspace 1 (fruit semantics)",
        "sub2": "subspace 2\n(company semantics)",
        "orth": "The two subspaces are orthogonal\nand do not interfere",
        # residual_flow
        "res_title": "Information flow through a residual connection",
        "x_in": "Input $x$",
        "sublayer": "SubLayer($x$)",
        "skip": "residual connection\n(information passes\nstraight through)",
        "layernorm": "LayerNorm",
        "out": "Output",
        "key": "Key points:",
        "notes": [
            "Even if SubLayer outputs 0,\ninformation still passes\nthrough the residual connection",
            "Gradients can flow straight\nthrough the residual connection",
            "Deep networks become trainable",
        ],
        # head_specialisation
        "evo_title": "How the heads specialise during training",
        "stages": [
            ("Early training\n(random initialisation)",
             ["All heads have random\nparameters", "Every head attends to\nsimilar content", "No division of labour"]),
            ("Mid training\n(gradient pressure)",
             ["Some heads happen to be\nmore sensitive to some\npatterns", "These heads receive\nlarger gradients",
              '"Rich get richer" effect']),
            ("Late training\n(stable functions)",
             ["Heads settle into a stable\ndivision of labour", "Some heads specialise\nin syntax",
              "Some heads specialise\nin coreference", "Some heads specialise\nin sentiment"]),
        ],
        "drive": "Driving forces:",
        "drivers": ["pressure to\nminimise the loss", "competition in\nparameter updates",
                    "maximising information-\nprocessing efficiency"],
    },
}


# ---------------------------------------------------------------- helpers

def _ink():
    return plt.rcParams["text.color"]


def _muted():
    return plt.rcParams["axes.edgecolor"]


def _canvas(width, height):
    """A figure of width x height inches whose data units are tenths of an inch."""
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width * 10)
    ax.set_ylim(0, height * 10)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _box(ax, cx, cy, w, h, color, text=None, fill=0.12, lw=1.2, pad=0.6, fontsize=FS, **text_kw):
    """A rounded box centred on (cx, cy); its outline in ``color``, its face a light tint of it."""
    patch = FancyBboxPatch(
        (cx - w / 2 + pad, cy - h / 2 + pad), w - 2 * pad, h - 2 * pad,
        boxstyle=f"round,pad={pad}", facecolor=to_rgba(color, fill), edgecolor=color, linewidth=lw,
    )
    ax.add_patch(patch)
    if text is not None:
        ax.text(cx, cy, text, ha="center", va="center", fontsize=fontsize, **text_kw)
    return patch


def _arrow(ax, start, end, color=None, lw=1.3, style="-|>", shrink=0.0, **kw):
    ax.add_patch(FancyArrowPatch(
        start, end, arrowstyle=style, mutation_scale=12, color=color or _ink(), linewidth=lw,
        shrinkA=shrink, shrinkB=shrink, **kw,
    ))


# ---------------------------------------------------------------- 1. multi-head flow

def multihead_flow(values, lang):
    """Input X -> 8 heads (Q_i, K_i, V_i -> Attention_i) -> Concat -> x W_O -> output."""
    t = LABELS[lang]
    fig, ax = _canvas(7.2, 5.8)

    # input
    _box(ax, 36, 54, 30, 4.6, "C3", t["input"])
    _arrow(ax, (36, 51.7), (36, 47.6))

    # the heads, inside one container
    top, bottom = 47.5, 19.5
    _box(ax, 36, (top + bottom) / 2, 70, top - bottom, _muted(), fill=0.04, lw=1.0, pad=0.8)
    rows = [(1, 43.6), (2, 38.6), (3, 33.6), (None, 29.4), (8, 25.0)]
    q_x, k_x, v_x, qkv_w = 18.3, 30.3, 42.3, 11.4
    att_x, att_w = 60.2, 16.4
    for i, y in rows:
        if i is None:
            for x in (7.5, q_x, k_x, v_x, att_x):
                ax.text(x, y, r"$\vdots$", ha="center", va="center", fontsize=FS)
            continue
        ax.text(7.5, y, t["head"].format(i=i), ha="center", va="center", fontsize=FS, fontweight="bold")
        for x, (m, c) in zip((q_x, k_x, v_x), (("Q", "C0"), ("K", "C1"), ("V", "C2")), strict=False):
            _box(ax, x, y, qkv_w, 4.0, c, rf"${m}_{{{i}}} = XW_{{{m}}}^{{{i}}}$", pad=0.5)
        _arrow(ax, (v_x + qkv_w / 2 + 0.3, y), (att_x - att_w / 2 - 0.3, y))
        _box(ax, att_x, y, att_w, 4.0, "C3", t["attn"].format(i=i), pad=0.5)

    # concat, projection, output
    _arrow(ax, (36, bottom - 0.1), (36, 15.6))
    _box(ax, 36, 13.2, 62, 4.6, "C3", t["concat"])
    _arrow(ax, (36, 10.8), (36, 6.9))
    ax.text(37.2, 8.85, t["dim512"], ha="left", va="center", fontsize=FS_SMALL)
    _box(ax, 22, 4.4, 28, 4.6, "C3", t["proj"])
    _arrow(ax, (36.2, 4.4), (41.3, 4.4))
    _box(ax, 55.5, 4.4, 28, 4.6, "C3", t["output"], fontweight="bold")
    return fig


# ---------------------------------------------------------------- 2. apple in low vs high dimensions

def _dot(ax, x, y, color, hollow=False, r=0.9):
    ax.add_patch(Circle((x, y), r, facecolor="none" if hollow else color, edgecolor=color, linewidth=1.5, zorder=3))


def apple_subspaces(values, lang):
    """Left: a 2-D space where "apple" cannot sit near both meanings. Right: two orthogonal subspaces."""
    t = LABELS[lang]
    fig, ax = _canvas(7.2, 3.9)
    ax.set_ylim(-0.5, 38.5)
    ink = _ink()

    # panel frames and titles
    for cx, w, title in ((17.5, 33, t["low"]), (53.5, 37, t["high"])):
        _box(ax, cx, 19, w, 38, _muted(), fill=0.03, lw=1.0, pad=0.8)
        ax.text(cx, 36.3, title, ha="center", va="top", fontsize=FS_TITLE, fontweight="bold", linespacing=1.2)

    # left: fruit above, tech company below, apple stuck between
    fx, fy, tx, ty, ax_, ay = 12, 29, 12, 7, 12, 18
    ax.plot([fx, tx], [fy, ty], color=_muted(), linewidth=1.0, linestyle=(0, (3, 3)))
    _dot(ax, fx, fy, "C2")
    _dot(ax, tx, ty, "C0")
    _dot(ax, ax_, ay, "C1")
    ax.text(fx + 2, fy, t["fruit"], ha="left", va="center", fontsize=FS)
    ax.text(tx + 2, ty, t["tech"], ha="left", va="center", fontsize=FS)
    ax.text(ax_ - 2, ay, "?", ha="right", va="center", fontsize=FS_TITLE + 4, fontweight="bold", color="C1")
    for end in ((fx, fy - 2.2), (tx, ty + 2.2)):
        _arrow(ax, (ax_ + 0.1, ay + (1.4 if end[1] > ay else -1.4)), (end[0] + 0.1, end[1]),
               color="C1", lw=1.2, style="-|>")
    ax.text(ax_ + 2.2, ay, t["where"], ha="left", va="center", fontsize=FS, linespacing=1.3)

    # right: two orthogonal axes; apple projects onto fruit in one and tech company in the other
    ox, oy, lx, ly = 42, 10, 24, 19.5
    _arrow(ax, (ox, oy), (ox + lx, oy), color=ink, lw=1.3)
    _arrow(ax, (ox, oy), (ox, oy + ly), color=ink, lw=1.3)
    ax.plot([ox + 1.6, ox + 1.6, ox], [oy, oy + 1.6, oy + 1.6], color=ink, linewidth=0.9)  # right angle
    ax.text(ox + lx, oy - 1.2, t["sub1"], ha="right", va="top", fontsize=FS_SMALL, color="C2")
    ax.text(ox - 1.0, oy + ly / 2, t["sub2"], ha="center", va="bottom", fontsize=FS_SMALL, color="C0",
            rotation=90, rotation_mode="anchor", linespacing=1.2)
    px, py = ox + 15, oy + 13
    ax.plot([px, px], [oy, py], color="C2", linewidth=1.0, linestyle=(0, (3, 2)))
    ax.plot([ox, px], [py, py], color="C0", linewidth=1.0, linestyle=(0, (3, 2)))
    _dot(ax, px, py, "C1")
    ax.text(px + 1.6, py + 0.8, t["apple"], ha="left", va="bottom", fontsize=FS)
    # the projections of apple sit right next to the two meanings
    _dot(ax, px, oy, "C1", hollow=True, r=0.8)
    _dot(ax, px + 4, oy, "C2")
    ax.text(px + 4, oy + 1.5, t["fruit"], ha="center", va="bottom", fontsize=FS)
    _dot(ax, ox, py, "C1", hollow=True, r=0.8)
    _dot(ax, ox, py - 4, "C0")
    ax.text(ox + 1.6, py - 4, t["tech"], ha="left", va="center", fontsize=FS)
    ax.text(53.5, 3.2, t["orth"], ha="center", va="center", fontsize=FS, fontweight="bold", linespacing=1.25)
    return fig


# ---------------------------------------------------------------- 3. residual connection

def residual_flow(values, lang):
    """x splits into SubLayer(x) and the identity path; they add, then LayerNorm, then output."""
    t = LABELS[lang]
    fig, ax = _canvas(7.2, 4.4)
    ink = _ink()
    ax.text(1, 42.5, t["res_title"], ha="left", va="top", fontsize=FS_TITLE, fontweight="bold")

    cx, skip_x = 12, 27
    _box(ax, cx, 35, 14, 4.4, "C3", t["x_in"])
    split_y = 29.5
    ax.plot([cx, cx], [32.8, split_y], color=ink, linewidth=1.3)
    ax.add_patch(Circle((cx, split_y), 0.45, color=ink))
    _arrow(ax, (cx, split_y), (cx, 24.3))
    _box(ax, cx, 22, 18, 4.6, "C0", t["sublayer"])
    plus_y, r = 13, 1.6
    _arrow(ax, (cx, 19.7), (cx, plus_y + r))
    # identity path
    ax.plot([cx, skip_x, skip_x], [split_y, split_y, plus_y], color="C2", linewidth=2.2)
    _arrow(ax, (skip_x, plus_y), (cx + r, plus_y), color="C2", lw=2.2)
    ax.text(skip_x - 1.0, 22, "$x$", ha="right", va="center", fontsize=FS_TITLE, color="C2")
    ax.text(skip_x + 1.3, 22, t["skip"], ha="left", va="center", fontsize=FS_SMALL, color="C2", linespacing=1.3)
    # (+), LayerNorm, output
    ax.add_patch(Circle((cx, plus_y), r, facecolor="none", edgecolor=ink, linewidth=1.3))
    ax.plot([cx - r * 0.6, cx + r * 0.6], [plus_y, plus_y], color=ink, linewidth=1.3)
    ax.plot([cx, cx], [plus_y - r * 0.6, plus_y + r * 0.6], color=ink, linewidth=1.3)
    _arrow(ax, (cx, plus_y - r), (cx, 9.3))
    _box(ax, cx, 7, 18, 4.6, "C3", t["layernorm"])
    _arrow(ax, (cx, 4.7), (cx, 2.5))
    ax.text(cx, 1.2, t["out"], ha="center", va="center", fontsize=FS, fontweight="bold")

    # side notes: a box that hugs its lines, centred on the diagram
    nx, line_h, gap, pad = 45.5, 1.8, 2.2, 1.8
    n_lines = sum(n.count("\n") + 1 for n in t["notes"])
    height = 2 * pad + 3.2 + n_lines * line_h + (len(t["notes"]) - 1) * gap
    top = 20 + height / 2
    _box(ax, nx + 12.5, 20, 27, height, _muted(), fill=0.04, lw=1.0, pad=0.8)
    ax.text(nx, top - pad, t["key"], ha="left", va="top", fontsize=FS, fontweight="bold")
    y = top - pad - 3.2
    for note in t["notes"]:
        ax.plot([nx + 0.6], [y - 1.05], marker="o", markersize=3.5, color="C2")
        ax.text(nx + 2.0, y, note, ha="left", va="top", fontsize=FS_SMALL, linespacing=1.3)
        y -= line_h * (note.count("\n") + 1) + gap
    ax.set_ylim(-0.5, 44)
    return fig


# ---------------------------------------------------------------- 4. head specialisation

def _lines(text):
    return text.count("\n") + 1


def head_specialisation(values, lang):
    """Three stages of training left to right, with the driving forces as a bar beneath."""
    t = LABELS[lang]
    stages, drivers = t["stages"], t["drivers"]
    w, gap, x_left = 21.0, 3.2, 1.4
    title_h, bullet_h, bullet_gap = 2.1, 1.8, 1.4  # tenths of an inch per line

    # vertical layout, as distances from the top of the figure
    box_top = 4.6
    title_lines = max(_lines(title) for title, _ in stages)
    rule = box_top + 1.8 + title_h * title_lines + 0.6
    bullets_end = max(sum(bullet_h * _lines(b) + bullet_gap for b in bullets) for _, bullets in stages)
    box_bottom = rule + 1.6 + bullets_end - bullet_gap + 1.6
    bar_top = box_bottom + 3.0
    bar_bottom = bar_top + 1.6 + title_h + 0.8 + bullet_h * max(_lines(d) for d in drivers) + 1.4
    height = bar_bottom + 0.4
    fig, ax = _canvas(7.2, height / 10)

    def y(d):
        return height - d

    ax.text(36, y(0.6), t["evo_title"], ha="center", va="top", fontsize=FS_TITLE, fontweight="bold")
    colors = ("C0", "C3", "C2")
    centres = [x_left + k * (w + gap) + w / 2 for k in range(3)]
    for k, ((title, bullets), color) in enumerate(zip(stages, colors, strict=False)):
        cx, x0 = centres[k], centres[k] - w / 2
        _box(ax, cx, y((box_top + box_bottom) / 2), w, box_bottom - box_top, color, fill=0.08, lw=1.3, pad=0.8)
        ax.text(cx, y(box_top + 1.8), title, ha="center", va="top", fontsize=FS, fontweight="bold",
                linespacing=1.2)
        ax.plot([x0 + 1.5, x0 + w - 1.5], [y(rule), y(rule)], color=color, linewidth=1.0)
        d = rule + 1.6
        for b in bullets:
            ax.plot([x0 + 2.0], [y(d + 0.95)], marker="o", markersize=3.5, color=color)
            ax.text(x0 + 3.3, y(d), b, ha="left", va="top", fontsize=FS_SMALL, linespacing=1.25)
            d += bullet_h * _lines(b) + bullet_gap
        if k < 2:
            mid = y((box_top + box_bottom) / 2)
            _arrow(ax, (x0 + w + 0.3, mid), (x0 + w + gap - 0.3, mid), lw=1.6)

    # driving forces, beneath all three stages, each pushing on the stage above it
    _box(ax, 36, y((bar_top + bar_bottom) / 2), 3 * w + 2 * gap, bar_bottom - bar_top, "C1",
         fill=0.10, lw=1.3, pad=0.8)
    ax.text(36, y(bar_top + 1.4), t["drive"], ha="center", va="top", fontsize=FS, fontweight="bold")
    for cx, driver in zip(centres, drivers, strict=False):
        _arrow(ax, (cx, y(bar_top - 0.1)), (cx, y(box_bottom + 0.2)), color="C1", lw=1.3)
        ax.text(cx, y(bar_top + 1.4 + title_h + 0.8), driver, ha="center", va="top", fontsize=FS_SMALL,
                linespacing=1.25)
    return fig
