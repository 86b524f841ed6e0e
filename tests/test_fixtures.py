"""The plugins and the default theme's partials on fixture files, in the style of mdit-py-plugins: each case of
tests/fixtures/*.md is a title (`zh: …` renders in Chinese), the Markdown and the HTML it must become."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file
from rendering import PARTS, STRINGS, render

from lessonkit.markdown.plugins import fill_refs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GLOSSARY = [{"id": "rank", "zh": "秩", "en": "rank", "zh_def": "线性无关的列数。", "en_def": "independent columns."}]
REFERENCES = {"gauss1809": {"key": "gauss1809", "html": {"zh": "Gauss, C. F. (1809).", "en": "Gauss, C. F. (1809)."},
                            "order": {"zh": 0, "en": 0}}}
CASES = [pytest.param(title, md, html, id=f"{path.stem}:{line + 1}")
         for path in sorted(FIXTURES.glob("*.md")) for line, title, md, html in read_fixture_file(path)]


def rendered(title: str, md: str) -> str:
    """As the render stage finishes a page: figure sizes and the numbers of its own cross-references filled in."""
    lang = "zh" if title.startswith("zh:") else "en"
    html, collected = render(md, lang=lang, glossary=GLOSSARY, references=REFERENCES)
    return fill_refs(html, f"{lang}/a.html", {f"{lang}/a.html": collected.labels}, STRINGS[lang], PARTS)


@pytest.mark.parametrize("title, md, expected", CASES)
def test_fixture(title, md, expected):
    assert rendered(title, md) == expected


def test_every_fixture_file_holds_cases():
    assert {p.stem for p in FIXTURES.glob("*.md")} == {"values", "blocks", "refs", "spans", "text"}
    assert len(CASES) >= 25
