"""`python build.py new PAGE [--experiment NAME]`: start a page in every language, and an experiment with a
figure recipe, registered in content/site.yaml, that builds and passes --check at once. Nothing existing is
ever overwritten."""

from __future__ import annotations

import re
from pathlib import Path

from .content import _slug_ok, digest, load_config, read_text
from .errors import BuildError

EXPERIMENT = '''"""{name}: the spread of {{n}} standard-normal draws (replace with what this experiment measures).

Setup. Draw n numbers from a standard normal distribution with the seed's generator; report
their mean and standard deviation. Replace run() with the experiment, PARAMS with its inputs,
and CLAIMS with what the page says about it.

Run it: python experiments/{name}.py [--seed N] [--json]
"""

from __future__ import annotations

import sys

import harness
import numpy as np
from harness import Claim

NAME = "{name}"

PARAMS = {{
    "n": 1000,
}}


def run(seed, *, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    return {{
        "n": n,
        "mean": float(x.mean()),
        "std": float(x.std()),
    }}


CLAIMS = [
    Claim(
        id="std",
        criterion="0.9 < std < 1.1",
        text={texts},
        shows=("std", "n"),
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''

FIGURES = '''"""Figures of {page}, drawn from the {name} experiment's values."""

import matplotlib.pyplot as plt

LABELS = {labels}


def summary(values, lang):
    t = LABELS.get(lang, LABELS["en"])
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.bar([0, 1], [values["{name}.mean"], values["{name}.std"]], color=["C0", "C1"])
    ax.set_xticks([0, 1], [t["mean"], t["std"]])
    ax.set_ylabel(t["value"])
    return fig
'''

CLAIM_TEXT = {"zh": "标准差在 0.9 与 1.1 之间", "en": "the standard deviation lies between 0.9 and 1.1"}
FIGURE_LABELS = {"zh": {"mean": "均值", "std": "标准差", "value": "数值"},
                 "en": {"mean": "mean", "std": "standard deviation", "value": "value"}}
PAGE = {
    "zh": ("新的一页", "这一页讲什么（一句话，给搜索引擎与链接预览）。", "开始", "start",
           "从 {{val}}`{name}.n` 个标准正态样本测得的标准差是 {{val}}`{name}.std`。{{claim}}`{name}.std`",
           "两根柱子：样本的均值与标准差。", "样本的均值与标准差。"),
    "en": ("A new page", "What this page is about, in one sentence (for search engines and link previews).",
           "Start", "start",
           "The standard deviation of {{val}}`{name}.n` standard-normal draws is {{val}}`{name}.std`. "
           "{{claim}}`{name}.std`",
           "Two bars: the sample's mean and standard deviation.", "The sample's mean and standard deviation."),
}
PLAIN = {"zh": "在这里写正文。", "en": "Write the page here."}


def _page_text(lang: str, name: str | None) -> tuple[str, str]:
    """(front matter and body) of a new page in a language; languages without a template get English."""
    title, description, heading, anchor, measured, alt, caption = PAGE.get(lang, PAGE["en"])
    body = f"## {heading} {{#{anchor}}}\n\n"
    if name:
        body += measured.format(name=name) + f"\n\n::: figure {name}.summary {alt}\n{caption}\n:::\n"
    else:
        body += PLAIN.get(lang, PLAIN["en"]) + "\n"
    return f"title: {title}\ndescription: {description}\n", body


def _append_to_list(text: str, key: str, item: str) -> str:
    """Add an item to a top-level YAML list in site.yaml, keeping its style (flow or block) and comments."""
    flow = re.search(rf"(?m)^{key}:[ \t]*\[(.*)\][ \t]*$", text)
    if flow:
        inner = flow.group(1).strip()
        return text[:flow.start(1)] + (f"{inner}, {item}" if inner else item) + text[flow.end(1):]
    block = re.search(rf"(?m)^{key}:[ \t]*\n((?:[ \t]+-.*\n?|[ \t]*#.*\n?)*)", text)
    if block:
        items = block.group(1)
        indent = re.match(r"([ \t]*)-", items).group(1) if items.strip() else "  "
        end = block.start(1) + len(items.rstrip("\n")) + (1 if items.strip() else 0)
        insert = ("" if items.endswith("\n") or not items else "\n") + f"{indent}- {item}\n"
        return text[:end] + insert + text[end:]
    if re.search(rf"(?m)^{key}:", text):
        raise BuildError(f"cannot add {item!r} to '{key}': write it as a list", "content/site.yaml")
    return text.rstrip("\n") + f"\n{key}: [{item}]\n"


def new_page(root: Path, slug: str, experiment: str | None = None) -> list[str]:
    """Write the page (and experiment); return what to edit next, one line each."""
    config = load_config(root)
    slug = slug.removesuffix(".md")
    if not _slug_ok(slug) or not re.fullmatch(r"[\w/-]+", slug):
        raise BuildError(f"new {slug!r}: expected a page path such as lesson-l6 or chapter-4/intro")
    if slug in config["pages"]:
        raise BuildError(f"new {slug!r}: content/site.yaml already lists this page", "content/site.yaml")
    languages, source = config["languages"], config["source_language"]
    paths = {lang: root / "content" / lang / f"{slug}.md" for lang in languages}
    made = [p for p in paths.values() if p.exists()]
    if experiment is not None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", experiment):
            raise BuildError(f"--experiment {experiment!r}: a Python name (letters, digits, _)")
        if experiment in config["experiments"]:
            raise BuildError(f"--experiment {experiment!r}: content/site.yaml already lists it", "content/site.yaml")
        made += [p for p in (root / "experiments" / f"{experiment}.py", root / "figures" / f"{experiment}.py")
                 if p.exists()]
        if not (root / "experiments" / "harness.py").is_file():
            raise BuildError("experiments/harness.py is missing: an experiment needs it", "experiments")
    if made:
        raise BuildError(f"new {slug!r}: {made[0].relative_to(root)} exists; nothing was written", made[0].relative_to(root))

    written = []
    meta, body = _page_text(source, experiment)
    source_text = f"---\n{meta}---\n\n{body}"
    for lang in [source, *[lang for lang in languages if lang != source]]:
        if lang == source:
            text = source_text
        else:
            meta, body = _page_text(lang, experiment)
            text = f"---\n{meta}translated_from: {digest(source_text)}\n---\n\n{body}"
        paths[lang].parent.mkdir(parents=True, exist_ok=True)
        with open(paths[lang], "x", encoding="utf-8", newline="") as f:
            f.write(text)
        written.append(paths[lang])
    config_path = root / "content" / "site.yaml"
    text = _append_to_list(read_text(config_path, "content/site.yaml"), "pages", slug)
    if experiment:
        texts = "{" + ", ".join(f'"{lang}": {CLAIM_TEXT.get(lang, CLAIM_TEXT["en"])!r}' for lang in languages) + "}"
        labels = "{" + ", ".join(f'"{lang}": {FIGURE_LABELS.get(lang, FIGURE_LABELS["en"])!r}'
                                 for lang in languages) + "}"
        for path, source_code in ((root / "experiments" / f"{experiment}.py",
                                   EXPERIMENT.format(name=experiment, texts=texts)),
                                  (root / "figures" / f"{experiment}.py",
                                   FIGURES.format(name=experiment, page=slug, labels=labels))):
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as f:
                f.write(source_code)
            written.append(path)
        text = _append_to_list(text, "experiments", experiment)
    config_path.write_text(text, "utf-8")
    load_config(root)  # what was added reads back

    rel = [str(p.relative_to(root)) for p in written]
    steps = [f"wrote {', '.join(rel)}; added {slug!r}" + (f" and {experiment!r}" if experiment else "")
             + " to content/site.yaml", f"next: write content/{source}/{slug}.md (title, description, body)"]
    if experiment:
        steps += [f"      replace run(), PARAMS and CLAIMS in experiments/{experiment}.py "
                  f"(python experiments/{experiment}.py --json lists its values)",
                  f"      draw with figures/{experiment}.py (the page shows {experiment}.summary)"]
    steps += [f"      translate it into {', '.join(f'content/{lang}/{slug}.md' for lang in languages if lang != source)}"
              f", then python build.py --mark-translated <lang>/{slug}.md",
              "      python build.py --check (or --serve to watch it as you write)"]
    return steps
