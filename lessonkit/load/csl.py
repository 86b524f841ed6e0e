"""Sources as CSL items, formatted in a style with citeproc-py: each entry as HTML, and its in-text citation."""

from __future__ import annotations

import html
import json
import re
from io import BytesIO
from pathlib import Path
from urllib.parse import quote

from lessonkit.errors import BuildError
from lessonkit.load.texts import read_bytes

# citeproc-py writes its variables into the HTML as they are: text is escaped through these stand-ins, which
# no text transform of a style can touch, and turned into entities after formatting; the entry's own address
# (its URL, its DOI) is a stand-in too, and becomes the one link of the entry.
_STAND_IN = {"&": "\ue000", "<": "\ue001", ">": "\ue002", '"': "\ue003"}
_ENTITY = {v: html.escape(k) for k, v in _STAND_IN.items()}
_URL, _DOI, OTHERS = "\ue011", "\ue012", "\ue010"
PRIVATE = re.compile("[\ue000-\ue0ff]")


def locale(tag: str) -> str:
    """A language's CSL locale: its own (zh-CN), its primary dialect (en -> en-US), or en-US."""
    from citeproc import LOCALES_PATH

    tag = tag.replace("_", "-")
    if (Path(LOCALES_PATH) / f"locales-{tag}.xml").is_file():
        return tag
    dialects = json.loads((Path(LOCALES_PATH) / "locales.json").read_text("utf-8"))["primary-dialects"]
    return dialects.get(tag.split("-")[0].lower(), "en-US")


def format_items(items: dict, style: Path | str, shown: str, locale: str, where: dict) -> list[tuple[str, str, str]]:
    """(key, HTML, its in-text citation as HTML) of every item, in the style's bibliography order."""
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
    from citeproc.source.json import CiteProcJSON

    try:
        # A course's style is read as its other files are (bounded, a regular file); the default is citeproc-py's.
        csl = CitationStylesStyle(BytesIO(read_bytes(style, shown)) if isinstance(style, Path) else style,
                                  locale=locale, validate=False)
        _escape_style(csl)
        if not csl.has_bibliography():
            raise BuildError("this citation style has no bibliography layout", shown)
        # "and others" stands for as many names as the style's largest et-al-min: wherever it cuts a list
        cuts = [int(e.get("et-al-min")) for e in csl.root.iter() if str(e.get("et-al-min") or "").isdigit()]
        et_al = max(cuts, default=1)
        ids = {f"k{n}": key for n, key in enumerate(items)}  # citeproc-py lowercases ids: ours are its own
        source = CiteProcJSON([_stand_in(items[key], n, et_al) for n, key in ids.items()])
        bibliography = CitationStylesBibliography(csl, source, _formatter())
        citations = {n: Citation([CitationItem(n)]) for n in ids}
        for citation in citations.values():
            bibliography.register(citation)
        bibliography.sort()
        entries = [str(entry).strip() for entry in bibliography.bibliography()]
        cites = {n: str(bibliography.cite(c, lambda item: None)).strip() for n, c in citations.items()}
    except BuildError:
        raise
    except Exception as exc:  # a style citeproc-py cannot read, or cannot format a source with
        raise BuildError(f"this citation style cannot format the sources ({type(exc).__name__}: {exc})",
                         shown) from None
    if len(entries) != len(ids):
        raise BuildError("this citation style shows some sources as nothing", shown)
    out = []
    for n, text in zip(bibliography.keys, entries, strict=True):
        key = ids[n]
        if not text:
            raise BuildError(f"reference {key!r}: the citation style shows it as nothing", *where[key])
        for stand_in, entity in _ENTITY.items():
            text = text.replace(stand_in, entity)
        if OTHERS in text:
            raise BuildError(f"reference {key!r}: its names end in 'and others', but the citation style would "
                             f"show names that are not written: write them all", *where[key])
        cite = cites[n]
        for stand_in, entity in _ENTITY.items():
            cite = cite.replace(stand_in, entity)
        out.append((key, _linked(text, items[key]), cite or html.escape(key)))
    return out


# The text a style writes itself: affixes, delimiters, literal text and its own terms (a course's style is an
# input like its sources: what it says is text, never markup).
_STYLE_TEXT = ("prefix", "suffix", "delimiter", "value", "after-collapse-delimiter", "cite-group-delimiter",
               "year-suffix-delimiter", "initialize-with", "range-delimiter")


def _escape_style(csl) -> None:
    def escaped(text: str) -> str:
        return "".join(_STAND_IN.get(c, c) for c in text)

    for element in csl.root.iter():  # (the style's own <locale> too; the installed locales are the engine's)
        for name in _STYLE_TEXT:
            if element.get(name) is not None:
                element.set(name, escaped(element.get(name)))
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag.rpartition("}")[2] in ("term", "single", "multiple") and element.text:
            element.text = escaped(element.text)


def _stand_in(item: dict, n: str, et_al: int) -> dict:
    def escaped(value):
        if isinstance(value, str):
            return "".join(_STAND_IN.get(c, c) for c in value)
        if isinstance(value, list):
            return [escaped(v) for v in value]
        if isinstance(value, dict):
            return {k: escaped(v) for k, v in value.items()}
        return value

    out = escaped({k: v for k, v in item.items() if k not in ("id", "URL", "DOI")})
    for role in ("author", "editor"):
        names = out.get(role, [])
        if names and names[-1] == {"literal": OTHERS}:  # as many names as the style cuts to "et al."
            out[role] = names[:-1] + [{"literal": OTHERS}] * max(et_al - len(names) + 1, 1)
    out["id"] = n
    if item.get("URL"):
        out["URL"] = _URL
    if item.get("DOI"):
        out["DOI"] = _DOI
    return out


def _linked(text: str, item: dict) -> str:
    """The entry's own address (URL; doi.org for a DOI, with the style's prefix when it writes one) as its link."""
    def link(href: str, shown: str) -> str:
        return f'<a class="external" rel="noopener external" href="{html.escape(href)}">{html.escape(shown)}</a>'

    if item.get("DOI"):
        doi = item["DOI"]
        text = re.sub(f"(https?://(?:dx\\.)?doi\\.org/)?{_DOI}",
                      lambda m: link(f"https://doi.org/{quote(doi, safe='/:;()._-')}", (m.group(1) or "") + doi),
                      text)
    if item.get("URL"):
        text = text.replace(_URL, link(item["URL"], item["URL"]))
    return text


def _formatter():
    """citeproc-py's HTML formatter with classes for what it would style inline (the pages allow no inline
    style) and no made-up elements."""
    import types

    from citeproc.formatter import html as base

    class SmallCaps(base.TagWrapper):
        tag, attributes = "span", {"class": "small-caps"}

    class Light(base.TagWrapper):
        tag, attributes = "span", {"class": "light"}

    names = ("preformat", "Italic", "Oblique", "Bold", "Underline", "Superscript", "Subscript")
    module = types.SimpleNamespace(**{n: getattr(base, n) for n in names})
    module.SmallCaps, module.Light = SmallCaps, Light
    return module
