"""Numbers in prose that nothing accounts for: not measured, not audited, not literal.

A number a reader sees is accounted for when it is a measured value ({val}), lies inside an audited
statement ([…]{.claim audit=…}) or a literal span ([…]{.literal}: exercises, definitions, labels),
is in math or code, in a heading or a link's text, or is part of an identifier (L5, P2, GPT-2/3,
LLaMA 3.1, 3.4.1, fp16, 70B) or a cited year (Vaswani et al. 2017, Shazeer (2019)). Any other number, in
any script's digits or as a Chinese numeral, is collected with its line; `build.py --check` reports it.
"""

import re

from markdown_it import MarkdownIt

from lessonkit.markdown.plugins.lines import line_of

# A run of digits with decimal points or thousands separators, in any script's digits (ASCII, full width,
# Arabic-Indic, mathematical bold: Unicode's decimal digits) or superscript and subscript ones; or a Chinese
# numeral of two characters or more that holds a unit or a zero (九十三, 一千, 三点五, 二〇二三), which is how
# a Chinese text writes a number. A lone 一 or 三 is left alone: it is in too many words (一个, 统一, 三个头).
_DIGITS = r"[\d⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉]"
_HAN = "零〇一二两三四五六七八九"
_NUMBER = re.compile(rf"{_DIGITS}+(?:[.,]{_DIGITS}+)*"
                     rf"|(?=[{_HAN}十百千万亿]*[十百千万亿〇零])[{_HAN}十百千万亿]{{2,}}(?:点[{_HAN}]+)?"
                     rf"|[{_HAN}十]+点[{_HAN}]+")
# Words that are written with numerals but are not numbers: 万一 (in case), 千万 and 万万 (by all means),
# 一一 (one by one).
_HAN_WORDS = {"万一", "千万", "一一", "万万"}
_WORD = re.compile(r"[A-Za-zＡ-Ｚａ-ｚ_]")  # Latin letters, full width too (Ｌ５)
# Vaswani et al. 2017, (Vaswani, 2017), Shazeer (2019): a year after an author's name.
# ("In 2017 …" is a statement about a year, not a citation.)
_CITED_YEAR = re.compile(r"(?:et al\.|\b(?!(?:In|By|Since|From|Until|Before|After|Of|To|At)\b)[A-Z][a-z]+),?\s*\(?$")
_YEAR = re.compile(r"(?:19|20)\d\d")
# LLaMA 3.1, GPT 4: a version after a name with two capitals.
_VERSIONED = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z]* $")
# GPT-2/3: the second of two identifiers.
_SECOND_ID = re.compile(r"[A-Za-z][A-Za-z_-]*\d+(?:\.\d+)*/$")
EXEMPT_SPANS = ("claim", "literal")


def _is_identifier(text: str, start: int, end: int) -> bool:
    before, after = text[:start], text[end:]
    if before[-1:] == "第" or text[start:end] in _HAN_WORDS:
        return True  # 第三章: an ordinal, a label
    if before[-1:] and (_WORD.match(before[-1]) or before[-1].isdigit()):
        return True  # L5, x1, d_2
    if after[:1] and _WORD.match(after[:1]):
        return True  # 70B, 3D, fp16's digits are caught above
    if before[-1:] == "-" and len(before) > 1 and _WORD.match(before[-2]):
        return True  # GPT-2, LLaMA-3
    if text[start:end].count(".") >= 2:
        return True  # 3.4.1: a section number
    if _VERSIONED.search(before) or _SECOND_ID.search(before):
        return True
    return bool(_CITED_YEAR.search(before)) and bool(_YEAR.fullmatch(text[start:end]))


def bare_numbers(text: str) -> list[str]:
    return [m.group() for m in _NUMBER.finditer(text) if not _is_identifier(text, m.start(), m.end())]


def unaccounted_plugin(md: MarkdownIt) -> None:
    def rule(state):
        ctx = state.env["ctx"]
        if state.env.get("title"):  # a page title is a heading
            return
        in_heading = False
        for block in state.tokens:
            if block.type == "heading_open":
                in_heading = True
            elif block.type == "heading_close":
                in_heading = False
            if block.type != "inline" or in_heading or not block.children:
                continue
            spans, links = [], 0
            for token in block.children:
                if token.type == "span_open":
                    classes = (token.attrGet("class") or "").split()
                    spans.append(any(c in classes for c in EXEMPT_SPANS) or "audit" in classes)
                elif token.type == "span_close" and spans:
                    spans.pop()
                elif token.type == "link_open":
                    links += 1
                elif token.type == "link_close":
                    links -= 1
                elif token.type == "text" and not links and not any(spans):
                    for number in bare_numbers(token.content):
                        excerpt = token.content.strip()
                        ctx.out.unaccounted.append((line_of(token, ctx), number,
                                                excerpt if len(excerpt) <= 60 else excerpt[:57] + "…"))

    # After the spans plugin has turned audited spans into `audit` spans.
    md.core.ruler.push("lessonkit_bare_numbers", rule)
