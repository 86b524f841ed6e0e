"""Load the course: content/site.yaml and every page's front matter and body."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.io import write_atomic
from lessonkit.load import theme
from lessonkit.load.inputs import skipped
from lessonkit.load.texts import digest, line_of_key, parse_yaml, read_text, split_front_matter
from lessonkit.model import Page, Site


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


# Seeds are passed to a run on its command line: 100,000 of them passed bwrap's argument limit.
MAX_SEEDS = 1_000


def _whole(key, low, high=None):
    def check(value, config, ctx):
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high and value > high):
            span = f"from {low} to {high:,}" if high else f"≥ {low}"
            raise BuildError(f"{key}: expected a whole number {span}, got {value!r}", *ctx.at(key))
        return value
    return check


def _check_timeout(value, config, ctx):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 86400:
        raise BuildError(f"experiment_timeout: expected seconds (a number > 0), got {value!r}",
                         *ctx.at("experiment_timeout"))
    return value


LIMITS = {"memory_mb": 4096, "processes": 256, "disk_mb": 1024}


def _check_limits(value, config, ctx):
    """What one run of author code may use: a mapping of some of LIMITS' keys to whole numbers ≥ 1."""
    if not isinstance(value, dict) or set(value) - set(LIMITS):
        unknown = sorted(map(str, set(value) - set(LIMITS))) if isinstance(value, dict) else None
        raise BuildError(f"limits: unknown key {unknown[0]!r}: expected {', '.join(LIMITS)}" if unknown else
                         f"limits: expected a mapping of {', '.join(LIMITS)}, got {value!r}", *ctx.at("limits"))
    for key, number in value.items():
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 2**20:
            raise BuildError(f"limits: {key}: expected a whole number from 1 to {2**20:,}, got {number!r}",
                             *ctx.at("limits"))
    return {**LIMITS, **value}


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
        if slug.endswith(".evidence"):
            raise BuildError(f"page {slug!r}: a name ending in '.evidence' is that of a page's evidence page "
                             f"({slug}.html is {slug.removesuffix('.evidence')}.html's); rename the page",
                             *ctx.at("pages"))
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
        if path.exists() and not path.is_file() and not path.is_dir():
            raise BuildError(f"citation_style: content/{style} is not a regular file (a FIFO, a socket or a "
                             f"device?)", *ctx.at("citation_style"))
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
        _whole("seeds", 1, MAX_SEEDS)),
    Key("experiment_timeout", 120, "the time limit per experiment run and per figure, in seconds (default 120)",
        _check_timeout),
    Key("limits", dict(LIMITS), "what one experiment run or figure worker may use: `memory_mb` of memory "
        "(default 4096), `processes` at once (256), `disk_mb` in its scratch folder (its /tmp and /dev/shm "
        "included) and in any one file (1024)", _check_limits),
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
            try:
                meta, body, body_line = split_front_matter(text, shown)
            except BuildError as exc:  # this page's error: the others are still read, and parsed
                site.errors.append(exc)
                site.add(Page(slug, lang, shown, {"title": slug, "description": None}, "", 1, digest(text), exc))
                continue
            site.add(Page(slug, lang, shown, meta, body, body_line, digest(text)))
    _check_translations(site)
    return site


def _check_translations(site: Site) -> None:
    source = site.config["source_language"]
    for page in site.pages:
        if page.lang == source or page.error:  # (a page whose front matter is wrong: that is its error)
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


def load_data(root: Path, name: str, default, read: set | None = None):
    """content/glossary.yaml, content/references.yaml: optional YAML data files; one that is read is added to
    `read`."""
    path = root / "content" / name
    shown = f"content/{name}"
    if path.exists() and not path.is_file():
        raise BuildError(f"is a {_kind(path)}, not a YAML file", shown)
    if not path.is_file():
        return default
    data = parse_yaml(read_text(path, shown), shown, 1)
    if read is not None:
        read.add(path)
    if not isinstance(data, type(default)):
        raise BuildError(f"expected a YAML {type(default).__name__}", shown, 1)
    return data


def safe_url(url) -> bool:
    """Only web addresses and relative links leave a data file: never javascript:, data: …"""
    from urllib.parse import urlsplit

    if not isinstance(url, str) or any(ord(c) < 32 for c in url):
        return False
    scheme = urlsplit(url.strip()).scheme.lower()
    return scheme in ("http", "https", "")


def load_glossary(root: Path, languages: list[str], read: set | None = None) -> list[dict]:
    """content/glossary.yaml: a list of {id, <lang>: term, <lang>_def: definition} with distinct ids."""
    entries = load_data(root, "glossary.yaml", [], read)
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
