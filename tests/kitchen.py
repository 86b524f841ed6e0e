"""The kitchen-sink course: every feature and template of the engine once, in both languages.

The browser checks (tests/test_site_browser.py) run on it, in both themes, on a desktop and a phone, so
that what they check is the engine's and does not grow with the real course's lessons. It is written as one
string in conftest.course_from's style (`-- path --` starts a file); anything it leaves out (the harness,
the templates) comes from the tiny course.

What it holds: a parameter, plain, formatted, grouped, list, bound and tiny values; claims, one keyed to a
derivation; the {claim} role and a placed verification summary; every audit status, a term and a literal;
a figure and a reference to it; inline, display and wide math; a wide table and a long code
line; every block kind (exercise with hint and answer, note, warning, insight, what/why/how/philosophy,
epigraph); pages in a folder; a glossary, BibTeX sources and an experiment's source page.
"""

from __future__ import annotations

import re

from conftest import GLOSSARY, course_from

SINK_EXPERIMENT = '''"""Sink: a few Gaussian numbers, with a value of every kind the build shows.

Run it: python experiments/sink.py [--seed N]
"""

import sys

import harness
import numpy as np
from harness import Claim

NAME = "sink"
PARAMS = {"n": 64, "width": 8}


def run(seed, *, n, width):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    return {
        "n": n,
        "width": width,
        "cells": width * width,
        "big": 549755813888 + seed,
        "mean": float(x.mean()),
        "spread": float(x.std()),
        "first": [float(v) for v in x[:3]],
        "noise": harness.below(abs(float(x.sum() - x[::-1].sum())), 1e-9),
        "huge": harness.above(1e15 + abs(float(x[0])), 1e12),
        "small": harness.tiny(abs(float(x[0])) * 1e-14, why="a product of known scale, not rounding"),
    }


CLAIMS = [
    Claim(id="spread", criterion="0.5 < spread < 1.5", text={"zh": "标准差接近 1", "en": "the spread is near 1"},
          shows=("spread", "noise", "n", "first")),
    Claim(id="mean", criterion="abs(mean) < 0.6", text={"zh": "均值接近 0", "en": "the mean is near 0"},
          shows=("mean", "huge", "small", "big")),
    Claim(id="cells", criterion="cells == width * width", text={"zh": "格数是宽度的平方", "en": "the cells are the width squared"},
          shows=("cells",)),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''

SINK_FIGURE = '''"""Figures of the kitchen-sink course."""

import matplotlib.pyplot as plt

LABELS = {"zh": ("种子", "值"), "en": ("seed", "value")}


def bars(values, lang):
    fig, ax = plt.subplots(figsize=(5, 2.5))
    ax.bar([0, 1], [values["sink.mean"], values["sink.spread"]], color="C0")
    ax.set_xlabel(LABELS[lang][0])
    ax.set_ylabel(LABELS[lang][1])
    return fig
'''

_LESSON = {
    "zh": r"""---
title: 厨房水槽
description: 引擎的每一种写法各一次。
---

::: epigraph
每个数字都有来处。
— 一位作者
:::

## 数值 {#values}

{val}`sink.n` 个数（参数）的[均值]{.term} $\bar{x}$ 是 {val}`sink.mean`，[标准差]{.term}是 {val}`sink.spread:.3f`。
格数 {val}`sink.cells`，大数 {val}`sink.big`，前三个数 {val}`sink.first`。两种求和之差{val}`sink.noise`，
一个大数{val}`sink.huge`，一个很小但真实的数 {val}`sink.small`。判据：{claim}`sink.spread`。

[标准差接近 1]{.claim audit=verified key="sink.spread"}；[均值接近 0，对任何种子都如此]{.claim audit=partly key="sink.mean" scope="只检验了本构建的种子。"}；
[高斯在 1809 年给出了最小二乘]{.claim audit=cited ref=gauss1809 at="第 2 卷 §179"}；[均值总是恰为 0]{.claim audit=refuted key="sink.mean" why="均值接近 0，但不恰为 0。" fix="均值接近 0，但并不恰为 0。"}；
[人人都知道这件事]{.claim audit=unverified why="没有出处。"}。表里的 [8 行]{.literal}是输入。最小二乘的出处见 [@gauss1809, §179]。

### 公式 {#math}

行内 $x^\top W$，以及一个显示公式：

$$
M = W^Q W^{K\top}, \qquad \operatorname{rank}(M) \le \min(\operatorname{rank} W^Q, \operatorname{rank} W^K)
$$

一个很宽的公式：

$$
a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9 + a_{10} + a_{11} + a_{12} + a_{13} + a_{14} + a_{15} + a_{16} + a_{17} + a_{18} + a_{19} + a_{20} + a_{21} + a_{22}
$$

## 图与表 {#figure}

::: figure sink.bars 两根柱子：均值与标准差。
均值与标准差，见 {val}`sink.mean` 与 {val}`sink.spread`。
:::

{ref}`fig:sink.bars` 里左边那根是均值。

| 列一 | 列二 | 列三 | 列四 | 列五 | 列六 | 列七 | 列八 |
|---|---|---|---|---|---|---|---|
| 很长的单元格内容甲 | 很长的单元格内容乙 | 很长的单元格内容丙 | 很长的单元格内容丁 | 很长的单元格内容戊 | 很长的单元格内容己 | 很长的单元格内容庚 | 很长的单元格内容辛 |

```python
values = [value_with_a_long_name * another_long_name for value_with_a_long_name in range(1000) if value_with_a_long_name]
```

## 块 {#blocks}

::: note
一条注。
:::

::: warning
一条警告。
:::

::: insight
一个要点。
:::

::: what 是什么
它是什么。
:::

::: why 为什么
为什么如此。
:::

::: how 怎么做
怎么做。
:::

::: philosophy
一点想法。
:::

:::: exercise
求这些数的均值 $\bar{x}$。

::: hint
先把它们加起来。
:::

::: answer
加起来再除以个数。
:::
::::

另见[第一节](part/one.md#more)。

::::: verification-summary
本页的判据：
:::::
""",
    "en": r"""---
title: Kitchen sink
description: Each way of writing in the engine, once.
translated_from: {digest:zh/lesson.md}
---

::: epigraph
Every number has a source.
— An author
:::

## Values {#values}

The [mean]{.term} $\bar{x}$ of {val}`sink.n` numbers (a parameter) is {val}`sink.mean`, their [spread]{.term} {val}`sink.spread:.3f`.
Cells {val}`sink.cells`, a big number {val}`sink.big`, the first three {val}`sink.first`. The two sums differ by
{val}`sink.noise`, a huge number is {val}`sink.huge`, and a small but real one is {val}`sink.small`. The criterion: {claim}`sink.spread`.

[The spread is near 1]{.claim audit=verified key="sink.spread"}; [the mean is near 0 for any seed]{.claim audit=partly key="sink.mean" scope="Tested on this build's seeds only."};
[Gauss gave least squares in 1809]{.claim audit=cited ref=gauss1809 at="vol. 2, §179"}; [the mean is always exactly 0]{.claim audit=refuted key="sink.mean" why="The mean is near 0, not exactly 0." fix="The mean is near 0, but not exactly 0."};
[everyone knows this]{.claim audit=unverified why="No source."}. The table's [8 rows]{.literal} are inputs. For least squares, see [@gauss1809, §179].

### Formulas {#math}

Inline $x^\top W$, and a display:

$$
M = W^Q W^{K\top}, \qquad \operatorname{rank}(M) \le \min(\operatorname{rank} W^Q, \operatorname{rank} W^K)
$$

A wide one:

$$
a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9 + a_{10} + a_{11} + a_{12} + a_{13} + a_{14} + a_{15} + a_{16} + a_{17} + a_{18} + a_{19} + a_{20} + a_{21} + a_{22}
$$

## Figure and table {#figure}

::: figure sink.bars Two bars: the mean and the spread.
The mean and the spread: {val}`sink.mean` and {val}`sink.spread`.
:::

In {ref}`fig:sink.bars` the left bar is the mean.

| one | two | three | four | five | six | seven | eight |
|---|---|---|---|---|---|---|---|
| a long cell's content A | a long cell's content B | a long cell's content C | a long cell's content D | a long cell's content E | a long cell's content F | a long cell's content G | a long cell's content H |

```python
values = [value_with_a_long_name * another_long_name for value_with_a_long_name in range(1000) if value_with_a_long_name]
```

## Blocks {#blocks}

::: note
A note.
:::

::: warning
A warning.
:::

::: insight
An insight.
:::

::: what What it is
What it is.
:::

::: why Why
Why it is so.
:::

::: how How
How to do it.
:::

::: philosophy
A thought.
:::

:::: exercise
Find the mean $\bar{x}$ of the numbers.

::: hint
Add them up first.
:::

::: answer
Add them up, then divide by how many there are.
:::
::::

See also [the first part](part/one.md#more).

::::: verification-summary
This page's criteria:
:::::
""",
}

_PART_INDEX = {
    "zh": "---\ntitle: 第一部分\n---\n\n这一部分只有[一节](one.md)。\n",
    "en": "---\ntitle: Part one\ntranslated_from: {digest:zh/part/index.md}\n---\n\nThis part has [one section](one.md).\n",
}

_PART_ONE = {
    "zh": "---\ntitle: 第一节\n---\n\n## 更多 {#more}\n\n回到[厨房水槽](../lesson.md#values)看图。"
          "[均值]{.term}是 {val}`sink.mean`。\n\n## 再多 {#again}\n\n格数 {val}`sink.cells`。\n",
    "en": "---\ntitle: The first section\ntranslated_from: {digest:zh/part/one.md}\n---\n\n## More {#more}\n\n"
          "Back to [the kitchen sink](../lesson.md#values) for its figure. "
          "The [mean]{.term} is {val}`sink.mean`.\n\n## Again {#again}\n\nCells {val}`sink.cells`.\n",
}


_BIB = """@book{gauss1809,
  author    = {Carl Friedrich Gauss},
  title     = {Theoria motus corporum coelestium},
  publisher = {Perthes et Besser},
  year      = {1809},
  url       = {https://example.org/gauss},
}
"""

_CONFIG = """title:
  zh: 厨房水槽课
  en: A kitchen-sink course
description:
  zh: 引擎的每一种写法。
  en: Every way of writing in the engine.
languages: [zh, en]
source_language: zh
base_url: https://kitchen.example.org/
experiments: [sink]
pages: [lesson, part/index, part/one]
seeds: 3
"""


def _files() -> dict[str, str]:
    files = {"content/site.yaml": _CONFIG, "content/glossary.yaml": GLOSSARY, "content/references.bib": _BIB,
             "experiments/sink.py": SINK_EXPERIMENT, "figures/sink.py": SINK_FIGURE}
    for name, texts in (("lesson", _LESSON), ("part/index", _PART_INDEX), ("part/one", _PART_ONE)):
        for lang, text in texts.items():
            files[f"content/{lang}/{name}.md"] = text
    return files


FILES = _files()
# The tiny course's page and experiment, which course_from starts from, are not this course's.
DROPPED = ("content/zh/page.md", "content/en/page.md", "experiments/tiny.py")


def txtar() -> str:
    return "".join(f"-- {rel} --\n{text}" for rel, text in FILES.items())


def markdown(lang: str, page: str) -> str:
    """A page's Markdown without its digest placeholders, as collection reads it (nothing is built)."""
    return re.sub(r"\{digest:[^}]+\}", "0" * 12, FILES[f"content/{lang}/{page}.md"])


def make(root):
    """The course, written into `root` (a new folder)."""
    course = course_from(root, txtar())
    for rel in DROPPED:
        (course / rel).unlink()
    return course
