"""The audit's sources: content/references.bib (BibTeX, read with pybtex) and content/references.yaml, each entry
formatted once per language with a CSL style (citeproc-py), so that a source reads the same wherever it is cited."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.load import csl
from lessonkit.load.content import MISSING, load_data, safe_url
from lessonkit.load.texts import line_of_key, read_bytes, read_text
from lessonkit.names import did_you_mean

BIB = "content/references.bib"
YAML = "content/references.yaml"
YAML_FIELDS = {"authors", "year", "title", "venue", "url", "note"}
DEFAULT_STYLE = "harvard-cite-them-right"  # the style citeproc-py ships, in each language's CSL locale
KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:./+-]*")  # also a fragment of the page's address: #ref-KEY

# BibTeX entry types as CSL types; any other type is a generic "article".
TYPES = {"article": "article-journal", "inproceedings": "paper-conference", "conference": "paper-conference",
         "book": "book", "inbook": "chapter", "incollection": "chapter", "phdthesis": "thesis",
         "mastersthesis": "thesis", "techreport": "report", "manual": "report", "unpublished": "manuscript",
         "online": "webpage", "electronic": "webpage", "www": "webpage"}
# BibTeX fields as CSL variables (author, editor, year, pages, url and doi are read apart).
FIELDS = {"title": "title", "journal": "container-title", "booktitle": "container-title", "volume": "volume",
          "number": "issue", "publisher": "publisher", "institution": "publisher", "school": "publisher",
          "organization": "publisher", "howpublished": "publisher", "address": "publisher-place",
          "edition": "edition", "series": "collection-title", "note": "note", "type": "genre"}
# TeX that says how text looks, not what it says: the text is kept. Any other command left is an error.
_TEX_WRAPPERS = re.compile(r"\\(?:emph|textit|textbf|texttt|textsc|textrm|textsf|textup|textmd|textnormal|mbox|"
                           r"url|ensuremath)\s*(?=\{)")
_TEX_HREF = re.compile(r"\\href\s*\{[^{}]*\}\s*(?=\{)")
_TEX_SWITCHES = re.compile(r"\\(?:em|it|bf|tt|sc|rm|sf|relax|normalfont)\b\s*")
_TEX_NAMES = {r"\LaTeX": "LaTeX", r"\TeX": "TeX", r"\BibTeX": "BibTeX"}


def load(root: Path, languages: list[str], tags: dict, style: object = MISSING, read: set | None = None) -> dict:
    """key -> {key, html: {lang: formatted entry}, order: {lang: place in the bibliography}}: every source of
    references.yaml and references.bib (a key in both, even in another case, is refused). Each file it reads
    (the data files, the course's own styles) is added to `read`. Kept in .cache/references.json by the
    digest of what it reads: pybtex and citeproc-py take a fifth of a second, on every page edit."""
    from lessonkit.io import read_cache, write_cache

    read = set() if read is None else read
    key = _digest(root, languages, tags, style)
    cache = root / ".cache" / "references.json"
    kept = read_cache(cache) if key else None
    if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("sources"), dict):
        read.update(root / rel for rel in kept["read"])
        return kept["sources"]
    mine: set = set()
    out = _load(root, languages, tags, style, mine)
    read |= mine
    if key:
        write_cache(cache, {"key": key, "read": sorted(p.relative_to(root).as_posix() for p in mine), "sources": out})
    return out


def _digest(root: Path, languages: list[str], tags: dict, style: object) -> str | None:
    """What the formatted sources depend on: the data files, the styles, the languages and their tags, and the
    code that formats them. None where one of the files is there but not a regular file (a folder, a FIFO):
    no cache, so that reading them says what is wrong."""
    from lessonkit.io import digest
    from lessonkit.versions import package_version

    files = [root / BIB, root / YAML] + [chosen for lang in languages
                                         if isinstance(chosen := style_for(root, style, lang)[0], Path)]
    if any(f.exists() and not f.is_file() for f in files) or any(f.is_symlink() for f in files):
        return None
    return digest([str(f.relative_to(root)) for f in files if f.is_file()],
                  *[read_bytes(f, f.relative_to(root)) for f in files if f.is_file()],
                  languages, tags, None if style is MISSING else style, Path(__file__).read_bytes(),
                  Path(csl.__file__).read_bytes(),
                  package_version("pybtex"), package_version("citeproc-py"))


def _load(root: Path, languages: list[str], tags: dict, style: object, read: set) -> dict:
    items, where = {}, {}
    for load_file in (_from_yaml, _from_bib):
        for key, item, at in load_file(root, read):
            if not KEY.fullmatch(key):
                raise BuildError(f"reference {key!r}: a key begins with a letter or digit, then letters, digits and "
                                 f"_ : . / + - (it names the entry's anchor, #ref-KEY)", *at)
            same = next((k for k in items if k.lower() == key.lower()), None)
            if same is not None:
                raise BuildError(f"reference {key!r} is also defined at {where[same][0]}:{where[same][1]}"
                                 + (f" (as {same!r}: BibTeX keys ignore case)" if same != key else ""), *at)
            items[key], where[key] = item, at
    if not items:
        return {}
    out = {key: {"key": key, "html": {}, "order": {}} for key in items}
    for lang in languages:
        chosen = style_for(root, style, lang)
        if isinstance(chosen[0], Path) and chosen[0].is_relative_to(root):
            read.add(chosen[0])
        for n, (key, text, cite) in enumerate(csl.format_items(items, *chosen, csl.locale(tags[lang]), where)):
            out[key]["html"][lang] = _CJK_COLON.sub("：", text)
            out[key].setdefault("cite", {})[lang] = cite
            out[key]["order"][lang] = n
    return out


# A style's ": " after a Chinese or Japanese word (the zh-CN locale's "载于: ") is the full-width colon there.
_CJK_COLON = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff]): ")


def stand_ins(root: Path, languages: list[str]) -> dict | None:
    """When the sources have an error (the build reports it): every key they name, found by a plain reading
    of each file, as an entry that shows its key, so that the pages' citations are still checked against the
    keys. None when even that reading fails: the citations are then not checked."""
    import yaml

    keys = []
    try:
        if (root / YAML).is_file():
            keys += [str(k) for k in yaml.safe_load(read_text(root / YAML, YAML)) or {}]
        if (root / BIB).is_file():
            keys += [key for key, _, _ in _entries(read_text(root / BIB, BIB)) if key]
    except (BuildError, yaml.YAMLError, TypeError, AttributeError):
        return None
    return {key: {"key": key, "html": dict.fromkeys(languages, html.escape(key)),
                  "cite": dict.fromkeys(languages, html.escape(key)), "order": dict.fromkeys(languages, n)}
            for n, key in enumerate(keys)}


def unknown(key: str, references: dict) -> BuildError:
    """A ref= that names no source, with the closest keys."""
    hint = did_you_mean(key, references)
    return BuildError(f"unknown reference {key!r}{hint}: add it to {BIB} (or {YAML})")


def style_for(root: Path, style: object, lang: str) -> tuple[Path | str, str]:
    """site.yaml's citation_style for this language, and how errors name it: a .csl file in content/, or the
    default."""
    if isinstance(style, dict):
        style = style.get(lang, MISSING)
    return (DEFAULT_STYLE, DEFAULT_STYLE) if style is MISSING else (root / "content" / style, f"content/{style}")


# -- reading -------------------------------------------------------------------------------------

def _from_yaml(root: Path, read: set):
    refs = load_data(root, "references.yaml", {}, read)
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
        # The authors are free text here: shown as written. A venue reads as a conference's (a generic
        # article without volume or pages would read as a preprint).
        item = {"id": str(key), "type": "paper-conference" if entry.get("venue") else "manuscript",
                "title": str(entry["title"]), "author": [{"literal": str(entry["authors"])}]}
        year = str(entry.get("year", "")).strip()
        if year.isdigit():
            item["issued"] = {"date-parts": [[int(year)]]}
        for name, variable in (("venue", "container-title"), ("url", "URL"), ("note", "note")):
            if entry.get(name):
                item[variable] = entry[name]
        _check_private(key, item, at)
        yield str(key), item, at


def _from_bib(root: Path, read: set):
    path = root / BIB
    if not path.exists():
        return
    if path.is_dir():
        raise BuildError("is a folder, not a BibTeX file", BIB)
    text = read_text(path, BIB)
    read.add(path)
    import pybtex.errors
    from pybtex.exceptions import PybtexError
    from pybtex.scanner import PybtexSyntaxError

    pybtex.errors.set_strict_mode(True)  # a mistake is an error, never a warning and a guess
    entries = _entries(text)
    try:
        data = _bounded_parser()().parse_string(text)
    except _TooLong as exc:
        name = exc.args[0]
        at = re.search(r"@\s*string\s*[{(]\s*" + re.escape(name) + r"\s*=", text, re.I) if exc.args[1] else None
        found = [n for key, n, _ in entries if key.lower() == name.lower()]
        line = text[:at.start()].count("\n") + 1 if at else (found[0] if found else None)
        raise BuildError(f"{'@string ' if exc.args[1] else 'entry '}{name!r} expands to more than "
                         f"{MAX_BIB_VALUE:,} characters, the most a field or @string may hold (strings joined "
                         f"with # again and again?)", BIB, line) from None
    except PybtexSyntaxError as exc:
        raise BuildError(f"{_bare(exc)}{_inside(text, exc)}", BIB, exc.lineno) from None
    except PybtexError as exc:  # a repeated entry or field, a name it cannot read: the parser knows no line
        message = _bare(exc)
        key = re.search(r"(?:entry: |key )(\S+)", message)
        found = [e for e in entries if key and e[0].lower() == key.group(1).lower()]
        line = (found[-1] if "repeated" in message else found[0])[1] if found else None
        quoted = re.search(r"'(.+?)'", message)  # a name pybtex cannot read: the entry that writes it
        if line is None and quoted:
            words = r"\s+".join(map(re.escape, quoted.group(1).split()))
            line = next((n + body[:m.start()].count("\n") for _, n, body in entries
                         if (m := re.search(words, body))), None)
        raise BuildError(message, BIB, line) from None
    lines = {key.lower(): n for key, n, _ in reversed(entries)}  # the first of a key (pybtex kept it)
    latex = _Latex()
    for key, entry in data.entries.items():
        at = (BIB, lines.get(key.lower()))
        yield key, _csl(key, entry, at, latex), at


MAX_BIB_VALUE = 100_000  # characters a field or @string may expand to: 1.5 KB of @strings that double made 10 GB


class _TooLong(Exception):
    """(name, whether it is an @string): a value that would expand beyond MAX_BIB_VALUE."""


def _bounded_parser():
    """pybtex's BibTeX parser, refusing a value longer than MAX_BIB_VALUE before it is joined."""
    from pybtex.database.input.bibtex import LowLevelParser, Parser

    class Strings(LowLevelParser):
        def parse_string_body(self, body_end):  # pybtex's, with the length summed before the parts are joined
            name = self.required([self.NAME]).value
            self.current_field_name = name
            self.required([self.EQUALS])
            self.parse_value()
            if sum(map(len, self.current_value)) > MAX_BIB_VALUE:
                raise _TooLong(name, True)
            self.macros[name] = "".join(self.current_value)

    class Bounded(Parser):
        def parse_string(self, text):  # pybtex's, with Strings for its LowLevelParser
            self.unnamed_entry_counter = 1
            self.command_start = 0
            for entry in Strings(text, keyless_entries=self.keyless_entries, handle_error=self.handle_error,
                                 want_entry=self.data.want_entry, filename=self.filename, macros=self.macros):
                kind = entry[0].lower()
                if kind == "preamble":
                    self.process_preamble(*entry[1])
                elif kind != "string":
                    self.process_entry(entry[0], *entry[1])
            return self.data

        def process_entry(self, entry_type, key, fields):
            for _, parts in fields:
                if sum(map(len, parts)) > MAX_BIB_VALUE:
                    raise _TooLong(key or "", False)
            super().process_entry(entry_type, key, fields)

        def process_preamble(self, value_list):
            if sum(map(len, value_list)) > MAX_BIB_VALUE:
                raise _TooLong("@preamble", False)
            super().process_preamble(value_list)

    return Bounded


def _entries(text: str) -> list[tuple[str, int, str]]:
    """(key, line, text) of every entry, found as BibTeX does: an @ outside an entry starts one, which runs to
    its closing brace (an @ inside a field is text)."""
    head = re.compile(r"@\s*(\w+)\s*([{(])\s*([^,\s{}()]*)")
    found, i = [], 0
    while (at := text.find("@", i)) >= 0:
        m = head.match(text, at)
        if not m:
            i = at + 1
            continue
        close, depth, j = "}" if m.group(2) == "{" else ")", 0, m.end(2)
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}" and depth > 0:
                depth -= 1
            elif text[j] == close and depth == 0:
                break
            j += 1
        if m.group(1).lower() not in ("comment", "string", "preamble"):
            found.append((m.group(3), text.count("\n", 0, at) + 1, text[at:j + 1]))
        i = j + 1
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


class _Latex:
    """BibTeX's TeX (accents, {braces} that keep case, \\emph and the like) as plain text, through one pybtex
    backend (finding it anew per call costs ~0.1 s: pybtex looks it up among every installed package)."""

    ESCAPES = {"\\{": "{", "\\}": "}", "\\$": "$", "\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#"}

    def __init__(self):
        from pybtex.backends.plaintext import Backend

        self.backend = Backend()

    def __call__(self, value: str, key: str, name: str, at) -> str:
        from pybtex.richtext import Text

        def refuse(why: str):
            return BuildError(f"reference {key!r}: {name} {why}", *at)

        # Kept as written: an escaped character, and an address (\url's text is not TeX).
        kept: list[str] = []

        def keep(text: str) -> str:
            kept.append(text)
            return f"\ue0e0{len(kept) - 1}\ue0e1"

        value = re.sub(r"\\url\s*\{([^{}]*)\}", lambda m: keep(m.group(1)), value)
        value = re.sub(r"\\[{}$%&_#]", lambda m: keep(self.ESCAPES[m.group()]), value)
        value = re.sub(r"\\[,;! ]", " ", value)
        if "%" in value:
            raise refuse("has a % (a comment in TeX, which would drop the rest of the field): write \\% for a "
                         "percent sign")
        for command, plain in _TEX_NAMES.items():
            value = re.sub(re.escape(command) + r"(?![A-Za-z])(\{\})?", plain, value)
        value = _TEX_SWITCHES.sub("", _TEX_HREF.sub("", _TEX_WRAPPERS.sub("", value)))
        try:
            text = " ".join(Text.from_latex(value).render(self.backend).split())
        except Exception as exc:  # pybtex's TeX reader: unbalanced braces, a trailing backslash
            raise refuse(f"cannot be read as TeX ({exc})") from None
        left = re.search(r"\\[A-Za-z]*", text)
        if left:
            command = left.group() if len(left.group()) > 1 else "a lone backslash"
            raise refuse(f"has TeX this build cannot read as text ({command}): write the text itself")
        return re.sub("\ue0e0(\\d+)\ue0e1", lambda m: kept[int(m.group(1))], text)


def _csl(key: str, entry, at, latex) -> dict:
    item = {"id": key, "type": TYPES.get(entry.type.lower(), "article")}
    fields = {name.lower(): value for name, value in entry.fields.items()}
    _check_private(key, {**fields, "names": [str(p) for people in entry.persons.values() for p in people]}, at)
    if "crossref" in fields:
        raise BuildError(f"reference {key!r}: crossref is not read: copy the fields it needs into the entry", *at)
    for name, variable in FIELDS.items():
        if name in fields and variable not in item:
            item[variable] = latex(fields[name], key, name, at)
    if not item.get("title"):
        raise BuildError(f"reference {key!r} needs a title", *at)
    for role in ("author", "editor"):
        people = [_name(p, key, role, at, latex) for p in entry.persons.get(role, [])]
        if None in people[:-1] or people == [None]:
            raise BuildError(f"reference {key!r}: 'and others' may only end a list of names", *at)
        if people and people[-1] is None:  # "and others": more names than written
            people[-1] = {"literal": csl.OTHERS}  # csl.format_items makes it enough names for the style's et-al rule
        if people:
            item[role] = people
    if "author" not in item:
        if "editor" not in item:
            raise BuildError(f"reference {key!r} needs an author or an editor (an organisation: "
                             f"author = {{{{Name}}}})", *at)
        item["author"] = item.pop("editor")  # citeproc-py would print an editor who stands in for one twice
    year = fields.get("year", "").strip()
    if year:
        if not year.isdigit():
            raise BuildError(f"reference {key!r}: year must be a number, got {year!r}", *at)
        item["issued"] = {"date-parts": [[int(year)]]}
    if "pages" in fields:
        item["page"] = re.sub(r"-+", "–", latex(fields["pages"], key, "pages", at))
    if "doi" in fields:
        doi = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:)", "", fields["doi"].strip(), flags=re.I)
        if not re.fullmatch(r"10\.\d{4,9}/\S+", doi) or '"' in doi:
            raise BuildError(f"reference {key!r}: doi {fields['doi']!r} is not a DOI (10.NNNN/…)", *at)
        item["DOI"] = doi
    if "url" in fields:
        item["URL"] = fields["url"].strip()
        _check_url(key, item["URL"], at)
    return item


def _name(person, key, role, at, latex) -> dict | None:
    if str(person) == "others":
        return None
    family = " ".join(latex(n, key, role, at) for n in person.prelast_names + person.last_names)
    given = " ".join(latex(n, key, role, at) for n in person.first_names + person.middle_names)
    if not family.strip():
        raise BuildError(f"reference {key!r}: an empty name in its {role}s", *at)
    if not given:  # one name: an organisation, a team
        return {"literal": family}
    name = {"family": family, "given": given}
    if person.lineage_names:
        name["suffix"] = " ".join(latex(n, key, role, at) for n in person.lineage_names)
    return name


def _check_url(key: str, url: str, at) -> None:
    if not safe_url(url):
        raise BuildError(f"reference {key!r}: url {url!r} is not an http(s) or relative address", *at)


def _check_private(key: str, item: dict, at) -> None:
    if csl.PRIVATE.search(json.dumps(item, ensure_ascii=False)):
        raise BuildError(f"reference {key!r} has a private-use character (U+E000–U+E0FF): the build marks "
                         f"text with them", *at)
