"""Load the course: content/site.yaml and every page's front matter and body."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from lessonkit import io, names
from lessonkit.errors import BuildError
from lessonkit.io import write_atomic
from lessonkit.load import theme
from lessonkit.load.inputs import skipped
from lessonkit.model import Page, Site

PAGE_KEYS = {"title", "description", "translated_from"}


def read_text(path: Path, shown: Path | str) -> str:
    """UTF-8 (a BOM is allowed), with CRLF and CR turned into LF."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BuildError(f"not UTF-8 (byte 0x{data[exc.start]:02x})", shown, line) from None
    if "\x00" in text:  # the engine marks its own slots with NUL: no course text may carry one
        raise BuildError("contains a NUL character", shown, text[: text.index("\x00")].count("\n") + 1)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _no_nul(data, shown, line: int):
    """YAML's "\\0" escape makes a NUL too: refused like one in the text."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and "\x00" in item:
            raise BuildError("a value holds a NUL character (\\0)", shown, line)
        if isinstance(item, dict):
            stack += list(item.keys()) + list(item.values())
        elif isinstance(item, list):
            stack += item
    return data


# libyaml's loader when PyYAML was built with it: ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Aliases may repeat a value, not multiply it: a 400-byte "billion laughs" expands to gigabytes.
MAX_YAML_NODES = 100_000


def _expanded_size(node, memo: dict) -> int:
    if id(node) in memo:
        return memo[id(node)]
    memo[id(node)] = 1  # a node that contains itself counts once
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[id(node)] = size
    return size


def load_yaml(text: str):
    """Safe YAML; refuses documents whose aliases expand beyond MAX_YAML_NODES nodes."""
    if "*" in text:  # aliases are rare: only then is the document composed twice
        node = yaml.compose(text, Loader=_LOADER)
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise yaml.YAMLError(f"aliases expand to more than {MAX_YAML_NODES} values (a YAML alias bomb?)")
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)


def parse_yaml(text: str, shown, first_line: int):
    try:
        return _no_nul(load_yaml(text), shown, first_line)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark else first_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BuildError(f"malformed YAML: {problem}", shown, line) from None


_PLAIN_LINE = re.compile(r"([a-z_]+):[ \t]+([^\s'\"\[\]{}&*!|>%@`#,?:-][^#]*?)[ \t]*")
# A quoted value with nothing YAML would read inside: no escapes, no quote of its own kind.
_QUOTED_LINE = re.compile(r"""([a-z_]+):[ \t]+(?:"([^"\\\x00-\x08\n-\x1f\x7f]*)"|'([^'\x00-\x08\n-\x1f\x7f]*)')[ \t]*""")


def _simple_front_matter(lines: list[str]) -> dict | None:
    """`key: text` and `key: "text"` lines read without a YAML parser (a thousand pages read 60 ms faster);
    None when any line needs YAML (escapes, lists, comments, a value YAML would read as a number or a keyword)."""
    meta = {}
    for line in lines:
        quoted = _QUOTED_LINE.fullmatch(line)
        if quoted:
            key, double, single = quoted.groups()
            meta[key] = double if double is not None else single
            continue
        m = _PLAIN_LINE.fullmatch(line)
        if m is None or ": " in m.group(2):
            return None
        value = m.group(2)
        if re.fullmatch(r"[-+.\d_eE]+|true|false|yes|no|on|off|null|~", value, re.IGNORECASE):
            return None  # YAML's reading of it is what an author expects elsewhere: let YAML decide
        meta[m.group(1)] = value
    return meta


def split_front_matter(text: str, shown) -> tuple[dict, str, int]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise BuildError("missing front matter: the file must start with a '---' line", shown, 1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise BuildError("malformed front matter: no closing '---' line", shown, 1) from None
    meta = _simple_front_matter(lines[1:end])
    if meta is None:
        meta = parse_yaml("\n".join(lines[1:end]), shown, 2) or {}
    if not isinstance(meta, dict):
        raise BuildError("malformed front matter: expected 'key: value' lines", shown, 2)
    for i, line in enumerate(lines[1:end], start=2):
        key = line.split(":", 1)[0].strip()
        if line[:1].isalpha() and key not in PAGE_KEYS:
            raise BuildError(f"unknown front-matter key {key!r} (known: {', '.join(sorted(PAGE_KEYS))})", shown, i)
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        raise BuildError("front matter needs a 'title' (one line of text)", shown, 2)
    for line in lines[1:end]:
        # A hash is text even when YAML would read its digits as a number (0123456789ab is fine, 012345678901 is not).
        if line.startswith("translated_from:"):
            meta["translated_from"] = line.partition(":")[2].strip().strip("'\"") or None
    for key in ("description", "translated_from"):
        if key in meta and not isinstance(meta[key], (str, type(None))):
            raise BuildError(f"front matter {key!r}: expected one line of text, got a {type(meta[key]).__name__}",
                             shown, line_of_key("\n".join(lines[:end]), key))
        if isinstance(meta.get(key), str) and len(meta[key]) > 1000:
            raise BuildError(f"front matter {key!r}: {len(meta[key])} characters, more than 1000", shown,
                             line_of_key("\n".join(lines[:end]), key))
    meta.setdefault("description", None)
    return meta, "\n".join(lines[end + 1:]), end + 2


def digest(text: str) -> str:
    """A page's translated_from digest, of the decoded text: line endings and a BOM are not content."""
    return io.digest(text, length=12)


def _kind(path: Path) -> str:
    return "folder" if path.is_dir() else "special file"


def slug_ok(slug: str) -> bool:
    p = PurePosixPath(slug)
    return not p.is_absolute() and ".." not in p.parts and all(part not in ("", ".") for part in p.parts)


def _names(value, what: str, where) -> list[str]:
    """A list of distinct names (pages, experiments, languages)."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BuildError(f"{what}: expected a list of names ('- name' lines or [a, b]), got {value!r}", *where)
    seen = set()
    for v in value:
        if v in seen:
            raise BuildError(f"{what}: {v!r} is listed twice", *where)
        seen.add(v)
    return value


@dataclass(frozen=True)
class Key:
    """One key of site.yaml: its default (MISSING: required or computed), what it means (the reference table in
    docs/reference.md says exactly this; a test holds them together), and its check, which returns the value
    to use or raises. Checks run in the order of SITE: a later one may read what an earlier one settled."""

    name: str
    default: object
    help: str
    check: object  # (value, config, context) -> value


MISSING = object()


def _check_title(key):
    def check(value, config, ctx):
        if value in (None, MISSING) and key == "description":
            return value
        languages = config["languages"]
        if isinstance(value, str):  # the same in every language
            return dict.fromkeys(languages, value)
        if not isinstance(value, dict) or any(not isinstance(value.get(lang), str) for lang in languages):
            raise BuildError(f"{key}: expected text, or one text per language ({', '.join(languages)})", *ctx.at(key))
        return value
    return check


def _check_author(value, config, ctx):
    if value is not MISSING and not isinstance(value, str):
        raise BuildError("author: expected one line of text", *ctx.at("author"))
    return value


def _check_languages(value, config, ctx):
    # A language is a content folder, an interface-strings file, and an entry here.
    languages = _names(value, "languages", ctx.at("languages"))
    for lang in languages:
        if not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*", lang):
            raise BuildError(f"language {lang!r}: expected a code such as zh, en, ja, pt-BR", *ctx.at("languages"))
        strings_file = ctx.root / "templates" / "i18n" / f"{lang}.yaml"  # the course's own, or the theme's
        strings_file = strings_file if strings_file.exists() else theme.find(ctx.root, f"i18n/{lang}.yaml")
        if strings_file.exists() and not strings_file.is_file():
            raise BuildError(f"templates/i18n/{lang}.yaml is a {_kind(strings_file)}, not a file of interface strings",
                             f"templates/i18n/{lang}.yaml")
        if not strings_file.is_file():
            known = sorted(Path(rel).stem for rel in theme.listing(ctx.root, "i18n") if rel.endswith(".yaml"))
            raise BuildError(f"language {lang!r} has no interface strings (templates/i18n/{lang}.yaml); "
                             f"interface strings exist for {', '.join(known) or 'no language'}: copy one to "
                             f"templates/i18n/{lang}.yaml and translate it", *ctx.at("languages"))
    return value


def _check_source(value, config, ctx):
    value = config["languages"][0] if value is MISSING else value
    if value not in config["languages"]:
        raise BuildError(f"source_language {value!r} is not one of the languages {config['languages']}",
                         *ctx.at("source_language"))
    return value


def _whole(key, low):
    def check(value, config, ctx):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise BuildError(f"{key}: expected a whole number ≥ {low}, got {value!r}", *ctx.at(key))
        return value
    return check


def _check_timeout(value, config, ctx):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 86400:
        raise BuildError(f"experiment_timeout: expected seconds (a number > 0), got {value!r}",
                         *ctx.at("experiment_timeout"))
    return value


def _check_experiments(value, config, ctx):
    for name in _names(value, "experiments", ctx.at("experiments")):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BuildError(f"experiment {name!r}: expected the name of a file in experiments/ (letters, digits, _)",
                             *ctx.at("experiments"))
    return value


def _check_base_url(value, config, ctx):
    value = ctx.base_url if ctx.base_url is not None else value
    if value is MISSING:
        return value
    # Where the site is published: sitemap.xml and link previews need absolute addresses.
    if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s/?#<>\"'&]+(/[^\s?#<>\"']*)?", value):
        what = f"expected an http(s) address such as https://example.org/course/, got {value!r}"
        if ctx.base_url is not None:
            raise BuildError(f"--base-url: {what}")
        raise BuildError(f"base_url: {what}", *ctx.at("base_url"))
    value = value.rstrip("/") + "/"
    config["base_path"] = "/" + value.split("://", 1)[-1].partition("/")[2]
    return value


def _check_pages(value, config, ctx):
    if not value:
        raise BuildError("no pages listed: add 'pages:' with at least one page", *ctx.at("pages"))
    for slug in _names(value, "pages", ctx.at("pages")):
        if not slug_ok(slug):
            raise BuildError(f"page {slug!r} is not a path inside content/", *ctx.at("pages"))
        if any(skipped(part) for part in PurePosixPath(slug).parts):
            raise BuildError(f"page {slug!r}: a name beginning with '.' (or ending with '~') is hidden, and hidden "
                             f"files are not course files (edits to it would never rebuild); rename it",
                             *ctx.at("pages"))
    return value


def _check_citation_style(value, config, ctx):
    if value is MISSING:
        return value
    styles = value if isinstance(value, dict) else {lang: value for lang in config["languages"]}
    what = "citation_style: expected a .csl file in content/, or one per language"
    if not styles or any(lang not in config["languages"] for lang in styles):
        raise BuildError(f"{what} ({', '.join(config['languages'])})", *ctx.at("citation_style"))
    for style in styles.values():
        if not isinstance(style, str) or not style.endswith(".csl") or not slug_ok(style.removesuffix(".csl")):
            raise BuildError(f"{what}, got {style!r}", *ctx.at("citation_style"))
        path = ctx.root / "content" / style  # in content/: an input, watched and fingerprinted like the pages
        if not path.is_file() or not path.resolve().is_relative_to(ctx.root.resolve()):
            raise BuildError(f"citation_style: no file content/{style}", *ctx.at("citation_style"))
    return value


def _check_plugins(value, config, ctx):
    from lessonkit.load import plugins

    names = _names(value, "plugins", ctx.at("plugins"))
    have = plugins.installed(ctx.root) if names else {}
    for name in names:
        if name not in have:
            raise BuildError(f"plugin {name!r} is not installed (installed {plugins.GROUP} entry points: "
                             f"{', '.join(sorted(have)) or 'none'})", *ctx.at("plugins"))
    return value


# site.yaml, declared once: the loader walks it, the reference table in docs/reference.md is checked against it.
SITE = (
    Key("languages", ["zh", "en"], "the course's languages, in the order the home page lists them", _check_languages),
    Key("source_language", MISSING, "the language the others are translated from (default: the first)",
        _check_source),
    Key("title", MISSING, "the course's name: text, or one text per language", _check_title("title")),
    Key("description", MISSING, "the home page's description, per language (optional)", _check_title("description")),
    Key("author", MISSING, "the author, in every page's metadata (optional)", _check_author),
    Key("base_url", MISSING, "the published address, http(s); a path after the host serves the site from a "
        "sub-path. Without it there is no `sitemap.xml` and no canonical link ([publishing](publishing.md))",
        _check_base_url),
    Key("seed", 0, "the seed whose numbers the pages show (default 0)", _whole("seed", 0)),
    Key("seeds", 20, "how many seeds every experiment runs on, the course seed first (default 20)",
        _whole("seeds", 1)),
    Key("experiment_timeout", 120, "the time limit per experiment run and per figure, in seconds (default 120)",
        _check_timeout),
    Key("experiments", [], "the experiments the pages use: files in `experiments/`, without `.py`",
        _check_experiments),
    Key("citation_style", MISSING, "the CSL style of the sources in the audit and the bibliography: a `.csl` "
        "file in `content/`, or one per language (default: Harvard, Cite Them Right, in each language's locale)",
        _check_citation_style),
    Key("plugins", [], "installed plugins the course uses, by entry-point name: Markdown syntax, a page hook, "
        "an output ([plugins](plugins.md))", _check_plugins),
    Key("pages", MISSING, "every page, in order: paths below `content/<lang>/`, without `.md`; a `folder/index` "
        "page is the section index above the folder's pages", _check_pages),
)
SITE_KEYS = {key.name for key in SITE}


@dataclass(frozen=True)
class _Context:
    root: Path
    text: str
    base_url: str | None

    def at(self, key):
        return "content/site.yaml", line_of_key(self.text, key)


def config_place(root: Path, key: str) -> tuple[str, int | None]:
    """Where site.yaml writes a key, for an error found after it was read: (file, line)."""
    try:
        return "content/site.yaml", line_of_key((root / "content" / "site.yaml").read_text("utf-8"), key)
    except (OSError, UnicodeDecodeError):
        return "content/site.yaml", None


def load_config(root: Path, base_url: str | None = None) -> dict:
    """site.yaml, checked key by key (SITE); base_url (the --base-url option) replaces its base_url."""
    path = root / "content" / "site.yaml"
    if not path.is_file():
        raise BuildError("no content/site.yaml: the course needs one (title, languages, pages)", "content")
    shown = "content/site.yaml"
    text = read_text(path, shown)
    config = parse_yaml(text, shown, 1)
    if not isinstance(config, dict):
        raise BuildError("expected a mapping", shown, 1)
    ctx = _Context(root, text, base_url)
    unknown = set(config) - SITE_KEYS
    if unknown:
        first = sorted(unknown, key=str)[0]
        raise BuildError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))} (known: "
                         f"{', '.join(sorted(SITE_KEYS))})", *ctx.at(first))
    for key in SITE:
        given = config.get(key.name, key.default)
        fresh = given is key.default and isinstance(given, list)  # a default list is each course's own
        value = key.check(copy.deepcopy(given) if fresh else given, config, ctx)
        if value is MISSING:
            config.pop(key.name, None)
        else:
            config[key.name] = value
    return config


def inside(top: Path, path: Path, seen: dict) -> bool:
    """Is path inside top once links are followed? Only linked files and folders need resolving (seen
    remembers folders), which spares a thousand pages a thousand resolves."""
    folder = path.parent
    while folder != top and folder != folder.parent:
        if folder not in seen:
            seen[folder] = not folder.is_symlink()
        if not seen[folder]:
            break
        folder = folder.parent
    else:
        if not path.is_symlink():
            return True
    return path.resolve().is_relative_to(top.resolve())


def load_site(root: Path, base_url: str | None = None) -> Site:
    config = load_config(root, base_url)
    site = Site(config)
    content = root / "content"
    listed = set(config["pages"])
    links: dict = {}
    for lang in config["languages"]:
        folder = content / lang
        found = {p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.md")} if folder.is_dir() else set()
        if not found:
            raise BuildError("no pages: write each page of site.yaml's pages here as <page>.md", f"content/{lang}")
        for slug in sorted(found - listed):
            raise BuildError("page is not listed in content/site.yaml 'pages'", f"content/{lang}/{slug}.md")
        for slug in config["pages"]:
            path = folder / f"{slug}.md"
            shown = path.relative_to(root)
            if path.exists() and not path.is_file():
                raise BuildError(f"is a {_kind(path)}, not a page (a page is a Markdown file)", shown)
            if not path.is_file():
                have = next((f"content/{other}/{slug}.md" for other in config["languages"]
                             if (content / other / f"{slug}.md").is_file()), None)
                start = (f"; start it from {have} (then python build.py --mark-translated {lang}/{slug}.md)"
                         if have else "")
                raise BuildError(f"missing translation: {have or slug} has no {lang} twin{start}", shown)
            if not inside(content, path, links):  # a link pointing outside
                raise BuildError("page path escapes content/", shown)
            text = read_text(path, shown)
            meta, body, body_line = split_front_matter(text, shown)
            site.add(Page(slug, lang, shown, meta, body, body_line, digest(text)))
    _check_translations(site)
    return site


def _check_translations(site: Site) -> None:
    source = site.config["source_language"]
    for page in site.pages:
        if page.lang == source:
            continue
        original = site.page(source, page.slug)
        recorded = page.meta.get("translated_from")
        if recorded != original.digest:
            records = f"records {recorded}" if recorded else "records no translated_from"
            site.stale[str(page.path)] = (f"translation is behind {original.path} ({records}, source is "
                                          f"{original.digest}); update it, then run python build.py "
                                          f"--mark-translated {page.lang}/{page.slug}.md")


def mark_translated(root: Path, rel: str) -> str:
    """Stamp a translation with its source's current digest; return the digest.

    Only a translation page of the course (content/<lang>/<page>.md, lang not the source language)
    is touched, and only its translated_from line: its other bytes, line endings included, stay."""
    config = load_config(root)
    source_lang = config["source_language"]
    lang, _, slug = rel.removeprefix("content/").removesuffix(".md").partition("/")
    if lang == source_lang:
        raise BuildError(f"{rel}: this is the {source_lang} source, not a translation; mark its translations "
                         f"({', '.join(f'{l}/{slug}.md' for l in config['languages'] if l != source_lang)})")
    if lang not in config["languages"] or slug not in config["pages"]:
        raise BuildError(f"{rel}: not a translation page of this course (expected LANG/PAGE.md, with LANG one of "
                         f"{', '.join(l for l in config['languages'] if l != source_lang)} and PAGE listed in "
                         f"content/site.yaml)")
    content = (root / "content").resolve()
    path = root / "content" / lang / f"{slug}.md"
    source = root / "content" / source_lang / f"{slug}.md"
    if not path.is_file() or not source.is_file() or not path.resolve().is_relative_to(content):
        raise BuildError(f"no such translation pair for {rel!r}", path.relative_to(root))
    shown = path.relative_to(root)
    split_front_matter(read_text(path, shown), shown)  # a malformed page is reported, not rewritten
    new = digest(read_text(source, source.relative_to(root)))
    data = path.read_bytes()
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.split(newline)
    first = 1 if lines[0].lstrip(b"\xef\xbb\xbf").strip() == b"---" else None
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == b"---")
    stamp = f"translated_from: {new}".encode()
    at = next((i for i in range(first, end) if lines[i].startswith(b"translated_from:")), None)
    if at is None:
        lines.insert(end, stamp)
    else:
        lines[at] = stamp
    try:
        write_atomic(path, newline.join(lines))
    except OSError as exc:
        raise BuildError(f"cannot write it ({exc.strerror}): it is as it was", shown) from None
    return new


def load_data(root: Path, name: str, default):
    """content/glossary.yaml, content/references.yaml: optional YAML data files."""
    path = root / "content" / name
    shown = f"content/{name}"
    if path.exists() and not path.is_file():
        raise BuildError(f"is a {_kind(path)}, not a YAML file", shown)
    if not path.is_file():
        return default
    data = parse_yaml(read_text(path, shown), shown, 1)
    if not isinstance(data, type(default)):
        raise BuildError(f"expected a YAML {type(default).__name__}", shown, 1)
    return data


def line_of_key(text: str, key: str) -> int | None:
    """The line where a top-level `key:` (or list item `- id: key`) is written, for error messages."""
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip().removeprefix("- ")
        if stripped.startswith((f"{key}:", f"id: {key}", f'id: "{key}"')):
            return number
    return None


def safe_url(url) -> bool:
    """Only web addresses and relative links leave a data file: never javascript:, data: …"""
    from urllib.parse import urlsplit

    if not isinstance(url, str) or any(ord(c) < 32 for c in url):
        return False
    scheme = urlsplit(url.strip()).scheme.lower()
    return scheme in ("http", "https", "")


def load_glossary(root: Path, languages: list[str]) -> list[dict]:
    """content/glossary.yaml: a list of {id, <lang>: term, <lang>_def: definition} with distinct ids."""
    entries = load_data(root, "glossary.yaml", [])
    path = root / "content" / "glossary.yaml"
    text = read_text(path, "content/glossary.yaml") if path.is_file() else ""
    seen = set()
    for i, entry in enumerate(entries, start=1):
        key = entry.get("id") if isinstance(entry, dict) else None
        where = ("content/glossary.yaml", line_of_key(text, str(key)) if key else None)
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z][\w-]*", key):
            raise BuildError(f"glossary entry {i}: needs an id (letters, digits, - and _)", *where)
        if key in seen:
            raise BuildError(f"glossary id {key!r} is used twice", *where)
        if key in names.TEMPLATE_IDS:  # the glossary page gives each entry its id
            raise BuildError(f"glossary id {key!r} is an id the page writes itself; choose another", *where)
        seen.add(key)
        for lang in languages:
            if not isinstance(entry.get(lang), str) or not entry[lang].strip():
                raise BuildError(f"glossary entry {key!r} has no {lang} term", *where)
            if not isinstance(entry.get(f"{lang}_def", ""), str):
                raise BuildError(f"glossary entry {key!r}: {lang}_def must be text", *where)
    return entries
