"""The audit's sources: content/references.bib (BibTeX, read with pybtex) and content/references.yaml, each entry
formatted once per language with a CSL style (citeproc-py), so that a source reads the same wherever it is cited."""

from __future__ import annotations

import difflib
import html
import json
import re
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.load.content import MISSING, line_of_key, load_data, read_text, safe_url

BIB = "content/references.bib"
YAML = "content/references.yaml"
YAML_FIELDS = {"authors", "year", "title", "venue", "url", "note"}
DEFAULT_STYLE = "harvard-cite-them-right"  # the style citeproc-py ships, in each language's CSL locale

# BibTeX entry types as CSL types; any other type is a generic "article".
TYPES = {"article": "article-journal", "inproceedings": "paper-conference", "conference": "paper-conference",
         "book": "book", "inbook": "chapter", "incollection": "chapter", "phdthesis": "thesis",
         "mastersthesis": "thesis", "techreport": "report", "manual": "report", "unpublished": "manuscript",
         "online": "webpage", "electronic": "webpage", "www": "webpage"}
# BibTeX fields as CSL variables (author, editor, year, month, pages, url and doi are read apart).
FIELDS = {"title": "title", "journal": "container-title", "booktitle": "container-title", "volume": "volume",
          "number": "issue", "publisher": "publisher", "institution": "publisher", "school": "publisher",
          "organization": "publisher", "howpublished": "publisher", "address": "publisher-place",
          "edition": "edition", "series": "collection-title", "note": "note", "type": "genre"}
# citeproc-py writes its variables into the HTML as they are: text is escaped through these stand-ins, which
# no text transform of a style can touch, and turned into entities after formatting.
_STAND_IN = {"&": "\ue000", "<": "\ue001", ">": "\ue002", '"': "\ue003"}
_ENTITY = {v: html.escape(k) for k, v in _STAND_IN.items()}


def load(root: Path, languages: list[str], tags: dict, style: object = MISSING) -> dict:
    """key -> {key, html: {lang: formatted entry}, order: {lang: place in the bibliography}}: every
    source of references.yaml and references.bib (a key in both is refused)."""
    items, where = {}, {}
    for load_file in (_from_yaml, _from_bib):
        for key, item, at in load_file(root):
            if key in items:
                raise BuildError(f"reference {key!r} is also defined at {where[key][0]}:{where[key][1]}", *at)
            items[key], where[key] = item, at
    if not items:
        return {}
    out = {key: {"key": key, "html": {}, "order": {}} for key in items}
    for lang in languages:
        path = style_for(root, style, lang)
        for n, (key, text) in enumerate(_format(list(items.values()), path, _locale(tags[lang]), where)):
            out[key]["html"][lang] = text
            out[key]["order"][lang] = n
    return out


def unknown(key: str, references: dict) -> BuildError:
    """A ref= that names no source, with the closest keys."""
    close = difflib.get_close_matches(key, list(references), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return BuildError(f"unknown reference {key!r}{hint}: add it to {BIB} (or {YAML})")


def style_for(root: Path, style: object, lang: str) -> Path | str:
    """site.yaml's citation_style for this language: a .csl file in content/, or the default."""
    if isinstance(style, dict):
        style = style.get(lang, MISSING)
    return DEFAULT_STYLE if style is MISSING else root / "content" / style


def style_files(root: Path, config: dict) -> list[Path]:
    """The course's own CSL files (inputs of every page that cites)."""
    style = config.get("citation_style", MISSING)
    styles = style.values() if isinstance(style, dict) else [style]
    return sorted({root / "content" / s for s in styles if isinstance(s, str)})


# -- reading -------------------------------------------------------------------------------------

def _from_yaml(root: Path):
    refs = load_data(root, "references.yaml", {})
    path = root / YAML
    text = read_text(path, YAML) if path.is_file() else ""
    for key, entry in refs.items():
        at = (YAML, line_of_key(text, str(key)))
        if not isinstance(entry, dict):
            raise BuildError(f"reference {key!r}: expected authors and title (year, venue, url, note optional)", *at)
        unknown_ = set(entry) - YAML_FIELDS
        if unknown_:
            raise BuildError(f"reference {key!r}: unknown field(s) {', '.join(sorted(map(str, unknown_)))}", *at)
        for name in ("authors", "title"):
            if not isinstance(entry.get(name), (str, int)) or not str(entry[name]).strip():
                raise BuildError(f"reference {key!r} needs a {name}", *at)
        if "year" in entry and not isinstance(entry["year"], (str, int)):  # a web page may have none
            raise BuildError(f"reference {key!r}: year must be a year or text", *at)
        for name in ("venue", "url", "note"):
            if name in entry and not isinstance(entry[name], str):
                raise BuildError(f"reference {key!r}: {name} must be text", *at)
        _check_url(key, entry.get("url", ""), at)
        # The authors are free text here: shown as written.
        item = {"id": str(key), "type": "article", "title": str(entry["title"]),
                "author": [{"literal": str(entry["authors"])}]}
        year = str(entry.get("year", "")).strip()
        if year.isdigit():
            item["issued"] = {"date-parts": [[int(year)]]}
        for name, variable in (("venue", "container-title"), ("url", "URL"), ("note", "note")):
            if entry.get(name):
                item[variable] = entry[name]
        yield str(key), item, at


def _from_bib(root: Path):
    path = root / BIB
    if not path.exists():
        return
    if not path.is_file():
        raise BuildError("is a folder, not a BibTeX file", BIB)
    text = read_text(path, BIB)
    import pybtex.errors
    from pybtex.database import parse_string
    from pybtex.exceptions import PybtexError
    from pybtex.scanner import PybtexSyntaxError

    pybtex.errors.set_strict_mode(True)  # a mistake is an error, never a warning and a guess
    try:
        data = parse_string(text, "bibtex")
    except PybtexSyntaxError as exc:
        raise BuildError(f"{_bare(exc)}{_inside(text, exc)}", BIB, exc.lineno) from None
    except PybtexError as exc:  # a repeated entry or field: the parser knows the key, not the line
        message = _bare(exc)
        key = re.search(r"(?:entry: |key )(\S+)", message)
        line = _entry_lines(text, last="repeated" in message).get(key.group(1).lower()) if key else None
        quoted = re.search(r"'(.+?)'", message)  # a name pybtex cannot read: where it is written
        if line is None and quoted and quoted.group(1) in text:
            line = text.count("\n", 0, text.index(quoted.group(1))) + 1
        raise BuildError(message, BIB, line) from None
    lines = _entry_lines(text)
    for key, entry in data.entries.items():
        at = (BIB, lines.get(key.lower()))
        yield key, _csl(key, entry, at), at


def _entry_lines(text: str, last: bool = False) -> dict:
    """Lowercase key -> the line of its @type{key, (the first, or with last the last, of that key)."""
    found = {}
    for m in re.finditer(r"@\s*\w+\s*[{(]\s*([^,\s]+)\s*,", text):
        key = m.group(1).lower()
        if last or key not in found:
            found[key] = text.count("\n", 0, m.start()) + 1
    return found


def _inside(text: str, exc) -> str:
    """Which entry the parser was reading: a brace left open is found only where the text stops making sense."""
    start = (getattr(exc, "error_context_info", None) or (None,))[0]
    key = re.match(r"@\s*\w+\s*[{(]\s*([^,\s]+)", text[start:]) if isinstance(start, int) else None
    line = text.count("\n", 0, start) + 1 if key else exc.lineno
    return f" (in the entry {key.group(1)!r} that begins on line {line})" if key and line != exc.lineno else ""


def _bare(exc) -> str:
    """pybtex's message without its own "in line N" (the error line says where)."""
    return re.sub(r" in line \d+:", ":", str(exc)).replace("bibliograhpy", "bibliography")


def _latex(value: str) -> str:
    """BibTeX's TeX (accents, {braces} that keep case) as plain text."""
    from pybtex.richtext import Text

    return Text.from_latex(value).render_as("text").strip()


def _csl(key: str, entry, at) -> dict:
    item = {"id": key, "type": TYPES.get(entry.type.lower(), "article")}
    fields = {name.lower(): value for name, value in entry.fields.items()}
    for name, variable in FIELDS.items():
        if name in fields and variable not in item:
            item[variable] = _latex(fields[name])
    if not item.get("title"):
        raise BuildError(f"reference {key!r} needs a title", *at)
    for role in ("author", "editor"):
        people = [_name(p) for p in entry.persons.get(role, [])]
        if people and people[-1] is None:  # "and others": more names than written
            people = people[:-1] + [{"literal": "\ue010"}] * 4  # the style's et-al rule cuts them
        if any(p is None for p in people):
            raise BuildError(f"reference {key!r}: 'and others' may only end a list of names", *at)
        if people:
            item[role] = people
    year = fields.get("year", "").strip()
    if year:
        if not year.isdigit():
            raise BuildError(f"reference {key!r}: year must be a number, got {year!r}", *at)
        item["issued"] = {"date-parts": [[int(year)]]}
    if "pages" in fields:
        item["page"] = re.sub(r"-+", "–", _latex(fields["pages"]))
    if "doi" in fields:
        item["DOI"] = fields["doi"].strip()
    if "url" in fields:
        item["URL"] = fields["url"].strip()
        _check_url(key, item["URL"], at)
    return item


def _name(person) -> dict | None:
    if str(person) == "others":
        return None
    family = " ".join(_latex(n) for n in person.prelast_names + person.last_names)
    given = " ".join(_latex(n) for n in person.first_names + person.middle_names)
    if not given:  # one name: an organisation, a team
        return {"literal": family}
    name = {"family": family, "given": given}
    if person.lineage_names:
        name["suffix"] = " ".join(_latex(n) for n in person.lineage_names)
    return name


def _check_url(key: str, url: str, at) -> None:
    if not safe_url(url):
        raise BuildError(f"reference {key!r}: url {url!r} is not an http(s) or relative address", *at)


# -- formatting ----------------------------------------------------------------------------------

def _locale(tag: str) -> str:
    """A language's CSL locale: its own (zh-CN), its primary dialect (en -> en-US), or en-US."""
    from citeproc import LOCALES_PATH

    tag = tag.replace("_", "-")
    if (Path(LOCALES_PATH) / f"locales-{tag}.xml").is_file():
        return tag
    dialects = json.loads((Path(LOCALES_PATH) / "locales.json").read_text("utf-8"))["primary-dialects"]
    return dialects.get(tag.split("-")[0].lower(), "en-US")


def _format(items: list[dict], style: Path | str, locale: str, where: dict) -> list[tuple[str, str]]:
    """(key, HTML) of every item, in the style's bibliography order."""
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
    from citeproc.source.json import CiteProcJSON

    try:
        csl = CitationStylesStyle(str(style), locale=locale, validate=False)
    except Exception as exc:  # a missing file, or one that is not a CSL style
        raise BuildError(f"citation_style {Path(str(style)).name!r} cannot be read as a CSL style "
                         f"({type(exc).__name__}: {exc})", "content/site.yaml") from None
    if not csl.has_bibliography():
        raise BuildError(f"citation_style {Path(str(style)).name!r} has no bibliography layout",
                         "content/site.yaml")
    source = CiteProcJSON([_stand_in(item) for item in items])
    bibliography = CitationStylesBibliography(csl, source, _formatter())
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    bibliography.sort()
    out = []
    for key, entry in zip(bibliography.keys, bibliography.bibliography(), strict=True):
        text = str(entry).strip()
        for stand_in, entity in _ENTITY.items():
            text = text.replace(stand_in, entity)
        if "\ue010" in text:
            raise BuildError(f"reference {key!r}: its names end in 'and others', but the citation style lists "
                             f"every name: write them all", *where[key])
        out.append((key, _linked(text)))
    return out


def _stand_in(value):
    if isinstance(value, str):
        return "".join(_STAND_IN.get(c, c) for c in value)
    if isinstance(value, list):
        return [_stand_in(v) for v in value]
    if isinstance(value, dict):
        return {k: v if k == "id" else _stand_in(v) for k, v in value.items()}
    return value


def _linked(text: str) -> str:
    """The entry with its address (URL, or doi.org for a DOI) a link."""
    for address in re.findall(r"https?://[^\s<]+?(?=\.?(?:\s|$|<))", text):
        target = html.unescape(address)
        if safe_url(target):
            link = (f'<a class="external" rel="noopener external" href="{html.escape(target)}">'
                    f'{address}</a>')
            text = text.replace(address, link, 1)
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
