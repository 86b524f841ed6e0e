"""`python build.py new PAGE [--experiment NAME]`: start a page in every language, and an experiment with a
figure recipe, registered in content/site.yaml, that builds and passes --check at once. Nothing existing is
ever overwritten."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from lessonkit.errors import BuildError
from lessonkit.io import write_atomic
from lessonkit.load.content import load_config, slug_ok
from lessonkit.load.texts import digest, read_text

SITE = "content/site.yaml"

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
    t = LABELS[lang] if lang in LABELS else next(iter(LABELS.values()))
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
# What `init` adds to its page, with the glossary and the bibliography it starts: a term, and a statement resting
# on a source that quotes the source's own words (numpy's docstring of the function the experiment calls).
SOURCED = {
    "zh": "这些数来自[标准正态分布，均值 0、标准差 1]{{.claim audit=cited ref=numpy_standard_normal "
          "at=\"numpy.random.Generator.standard_normal 的说明第一句\" quote=\"{quote}\"}}；"
          "[标准差]{{.term key=standard-deviation}}衡量它们离均值有多远。",
    "en": "The draws come from [a standard normal distribution, of mean 0 and standard deviation 1]{{.claim "
          "audit=cited ref=numpy_standard_normal at=\"numpy.random.Generator.standard_normal, the first line of its "
          "description\" quote=\"{quote}\"}}; the [standard deviation]{{.term key=standard-deviation}} measures how "
          "far they lie from their mean.",
}
QUOTE = "Draw samples from a standard Normal distribution (mean=0, stdev=1)."
GLOSSARY_TERM = {"zh": ("标准差", "一组数与其均值之差的平方的平均值的平方根：它们离均值有多远。"),
                 "en": ("standard deviation", "The square root of the mean squared difference between numbers and "
                                              "their mean: how far they lie from it.")}
REFERENCES = """@manual{numpy_standard_normal,
  author       = {{NumPy Developers}},
  title        = {numpy.random.Generator.standard\\_normal},
  organization = {NumPy reference},
  url          = {https://numpy.org/doc/stable/reference/random/generated/numpy.random.Generator.standard_normal.html},
}
"""


def _page_text(lang: str, name: str | None, sourced: bool = False) -> tuple[str, str]:
    """(front matter and body) of a new page in a language; languages without a template get English.
    `sourced`: with a glossary term and a cited statement (the glossary and bibliography init makes)."""
    title, description, heading, anchor, measured, alt, caption = PAGE.get(lang, PAGE["en"])
    body = f"## {heading} {{#{anchor}}}\n\n"
    if name:
        body += measured.format(name=name) + f"\n\n::: figure {name}.summary {alt}\n{caption}\n:::\n"
        if sourced:
            body += "\n" + SOURCED.get(lang, SOURCED["en"]).format(quote=QUOTE) + "\n"
    else:
        body += PLAIN.get(lang, PLAIN["en"]) + "\n"
    return f"title: {title}\ndescription: {description}\n", body


def _files(root: Path, languages: list[str], source: str, slug: str, experiment: str | None,
           sourced: bool = False) -> dict:
    """path -> text of a new page in every language (the translations marked up to date), and of its experiment
    and figure recipe."""
    files = {}
    meta, body = _page_text(source, experiment, sourced)
    source_text = f"---\n{meta}---\n\n{body}"
    for lang in languages:
        path = root / "content" / lang / f"{slug}.md"
        if lang == source:
            files[path] = source_text
        else:
            meta, body = _page_text(lang, experiment, sourced)
            files[path] = f"---\n{meta}translated_from: {digest(source_text)}\n---\n\n{body}"
    if experiment:
        texts = "{" + ", ".join(f'"{lang}": {CLAIM_TEXT.get(lang, CLAIM_TEXT["en"])!r}' for lang in languages) + "}"
        labels = "{" + ", ".join(f'"{lang}": {FIGURE_LABELS.get(lang, FIGURE_LABELS["en"])!r}'
                                 for lang in languages) + "}"
        files[root / "experiments" / f"{experiment}.py"] = EXPERIMENT.format(name=experiment, texts=texts)
        files[root / "figures" / f"{experiment}.py"] = FIGURES.format(name=experiment, page=slug, labels=labels)
    return files


def _list_node(text: str, key: str):
    """The (key, value) nodes of a top-level key of site.yaml, with their positions in the text, or None.

    load_config has read the same text already: it is a mapping, and YAML."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    return next(((k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _insert_after(text: str, key: str, item: str, after: str) -> str:
    """Put an item into a top-level list of site.yaml right after the entry `after`, in the list's own style."""
    import difflib

    found = _list_node(text, key)
    node = found[1] if found else None
    entries = node.value if isinstance(node, yaml.SequenceNode) else []
    at_entry = next((e for e in entries if isinstance(e, yaml.ScalarNode) and e.value == after), None)
    if at_entry is None:
        listed = [e.value for e in entries if isinstance(e, yaml.ScalarNode)]
        close = difflib.get_close_matches(after, listed, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise BuildError(f"--after {after!r}: '{key}' does not list it{hint}", SITE,
                         found[0].start_mark.line + 1 if found else None)
    if any(isinstance(e, yaml.ScalarNode) and e.value == item for e in entries):
        return _append_to_list(text, key, item)  # (says that it is listed already)
    if node.flow_style:
        at = at_entry.end_mark.index
        return text[:at] + f", {item}" + text[at:]
    line_start = text.rfind("\n", 0, at_entry.start_mark.index) + 1
    indent = text[line_start:text.index("-", line_start)]
    newline = text.find("\n", at_entry.end_mark.index)
    end = len(text) if newline < 0 else newline + 1
    return text[:end] + ("" if text[:end].endswith("\n") else "\n") + f"{indent}- {item}\n" + text[end:]


def _append_to_list(text: str, key: str, item: str) -> str:
    """Add an item to a top-level list of site.yaml, keeping its style (flow or block), layout and comments."""
    found = _list_node(text, key)
    if found is None:
        return text.rstrip("\n") + f"\n{key}: [{item}]\n"
    name, node = found
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):  # `pages:` with nothing yet
        at = name.end_mark.index + 1  # after the colon
        return text[:at] + f" [{item}]" + text[at:]
    if not isinstance(node, yaml.SequenceNode):
        raise BuildError(f"cannot add {item!r} to '{key}': write it as a list", SITE, name.start_mark.line + 1)
    for entry in node.value:
        if isinstance(entry, yaml.ScalarNode) and entry.value == item:
            raise BuildError(f"'{key}' already lists {item!r}", SITE, entry.start_mark.line + 1)
    if node.flow_style:
        if node.value:
            at = node.value[-1].end_mark.index
            return text[:at] + f", {item}" + text[at:]
        at = text.rindex("]", 0, node.end_mark.index)
        return text[:at] + item + text[at:]
    # A block list: a new line after the last item's, with its dash where the last item's is.
    last = node.value[-1]
    line_start = text.rfind("\n", 0, last.start_mark.index) + 1
    indent = text[line_start:text.index("-", line_start)]
    end = last.end_mark.index
    if last.end_mark.column:  # not already at the start of the next line
        newline = text.find("\n", end)
        end = len(text) if newline < 0 else newline + 1
    return text[:end] + ("" if text[:end].endswith("\n") else "\n") + f"{indent}- {item}\n" + text[end:]


def new_page(root: Path, slug: str, experiment: str | None = None, after: str | None = None) -> list[str]:
    """Write the page (and experiment), listed at the end of `pages:` or right after the page `after`; return
    what to edit next, one line each."""
    config = load_config(root)
    slug = slug.removesuffix(".md")
    if not slug_ok(slug) or not re.fullmatch(r"[\w/-]+", slug):
        raise BuildError(f"new {slug!r}: expected a page path such as lesson-l6 or chapter-4/intro")
    languages, source = config["languages"], config["source_language"]
    paths = {lang: root / "content" / lang / f"{slug}.md" for lang in languages}
    if experiment is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", experiment):
        raise BuildError(f"--experiment {experiment!r}: a Python name (letters, digits, _)")
    # site.yaml's new text first: if it cannot be edited, nothing is written.
    config_path = root / "content" / "site.yaml"
    current = read_text(config_path, SITE)
    after = after.removesuffix(".md") if after else None
    text = _insert_after(current, "pages", slug, after) if after else _append_to_list(current, "pages", slug)
    made = [p for p in paths.values() if p.exists()]
    if experiment is not None:
        text = _append_to_list(text, "experiments", experiment)
        made += [p for p in (root / "experiments" / f"{experiment}.py", root / "figures" / f"{experiment}.py")
                 if p.exists()]
        if not (root / "experiments" / "harness.py").is_file():
            raise BuildError("experiments/harness.py is missing: an experiment needs it", "experiments")
    if made:
        raise BuildError(f"new {slug!r}: it exists; nothing was written", made[0].relative_to(root))
    added = yaml.safe_load(text)
    placed = added["pages"].index(after) + 1 if after else len(added["pages"]) - 1
    if added["pages"][placed:placed + 1] != [slug] or (experiment and added["experiments"][-1] != experiment):
        raise BuildError(f"cannot add {slug!r} to its lists without changing their meaning; add it by hand", SITE)

    files = _files(root, languages, source, slug, experiment)
    top = root.resolve()
    for path in files:
        if not path.resolve().is_relative_to(top):  # content/en, say, a link out of the course
            outside = next((p for p in (path, *path.parents) if p.is_symlink()), path)
            raise BuildError("a link to a folder outside the course; new would write through it: nothing was "
                             "written", outside.relative_to(root))
    written = []
    try:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, content.encode("utf-8"), new=True)  # whole or not at all, and never overwriting
            written.append(path)
        # site.yaml keeps its own line endings (read_text gave LF): a CRLF file stays CRLF.
        crlf = b"\r\n" in config_path.read_bytes()
        write_atomic(config_path, (text.replace("\n", "\r\n") if crlf else text).encode("utf-8"))
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise BuildError(f"new {slug!r}: cannot write {exc.filename}: {exc.strerror}; nothing was kept") from None
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


TITLES = {"zh": "我的课程", "en": "My course"}


def init_course(root: Path, languages: list[str]) -> list[str]:
    """`python build.py init DIR`: a course of one page per language with an experiment (one claim) and its
    figure, that builds and passes --check --strict at once. It has no templates/: the engine's are its theme,
    and a file the course puts under templates/ overrides the theme's of the same name. Returns what to do
    next, one line each."""
    import shutil

    from lessonkit.load import theme

    if root.exists() and not root.is_dir():
        raise BuildError(f"init {root}: a file, not a folder; nothing was written")
    if root.exists() and any(root.iterdir()):
        raise BuildError(f"init {root}: not an empty folder; nothing was written")
    if not languages or len(set(languages)) != len(languages) or not all(languages):
        raise BuildError(f"--languages {','.join(languages)!r}: name each language once, separated by commas, the "
                         "source first (e.g. zh,en)")
    have = sorted(Path(rel).stem for rel in theme.listing(root, "i18n") if rel.endswith(".yaml"))
    missing = [lang for lang in languages if lang not in have]
    if missing:
        raise BuildError(f"--languages: the default theme has no interface strings for {', '.join(missing)} "
                         f"(it has {', '.join(have)}); init with those, then add templates/i18n/{missing[0]}.yaml "
                         f"(a copy of one of the theme's, translated) and the language to site.yaml")
    title = "\n".join(f"  {lang}: {TITLES.get(lang, TITLES['en'])}" for lang in languages)
    files = {
        root / "content" / "site.yaml": f"title:\n{title}\nlanguages: [{', '.join(languages)}]\n"
                                        "experiments: [first]\npages: [welcome]\n",
        root / ".gitignore": "site/\n.cache/\n__pycache__/\n",
        root / "content" / "glossary.yaml": yaml.safe_dump([{
            "id": "standard-deviation", **{lang: GLOSSARY_TERM.get(lang, GLOSSARY_TERM["en"])[0] for lang in languages},
            **{f"{lang}_def": GLOSSARY_TERM.get(lang, GLOSSARY_TERM["en"])[1] for lang in languages}}],
            allow_unicode=True, sort_keys=False, width=120),
        root / "content" / "references.bib": REFERENCES,
        **_files(root, languages, languages[0], "welcome", "first", sourced=True),
    }
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text.encode("utf-8"), new=True)
        # An experiment runs on its own too (python experiments/first.py): it imports the harness beside it.
        engine = Path(__file__).resolve().parent
        shutil.copy(engine / "harness.py", root / "experiments" / "harness.py")
        shutil.copy(engine / "criteria.py", root / "experiments" / "criteria.py")
    except OSError as exc:
        raise BuildError(f"init {root}: cannot write {exc.filename}: {exc.strerror}") from None
    load_config(root)  # what was written reads back
    return [f"made a course in {root}: {', '.join(sorted(str(p.relative_to(root)) for p in files))}, "
            "experiments/harness.py, experiments/criteria.py",
            f"next: python build.py --root {root} --check --strict",
            f"      python build.py --root {root} --serve, and edit content/{languages[0]}/welcome.md",
            f"      python build.py --root {root} new PAGE --after welcome [--experiment NAME]",
            "      to restyle, put files under templates/ (e.g. templates/static/style.css): each overrides the "
            "default theme's of the same name"]
