"""Load the course: content/site.yaml and every page's front matter and body."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from .errors import BuildError

LANG_TAGS = {"zh": "zh-CN", "en": "en"}  # the lang attribute of each language's pages
PAGE_KEYS = {"title", "description", "translated_from"}
SITE_KEYS = {"title", "description", "author", "languages", "source_language", "seed", "seeds", "experiments",
             "experiment_timeout", "pages", "base_url"}


@dataclass
class Page:
    slug: str  # "chapter-3/intro": the path below content/<lang>/, without .md
    lang: str
    path: Path  # relative to the project root, for error messages
    meta: dict
    body: str
    body_line: int  # the file line on which the body starts (1-based)
    digest: str  # sha256 of the file, first 12 hex digits

    @property
    def url(self) -> str:
        return f"{self.lang}/{self.slug}.html"


@dataclass
class Site:
    config: dict
    pages: list = field(default_factory=list)  # every Page, in site order, zh first
    stale: list = field(default_factory=list)  # (translation Page, message)

    def page(self, lang: str, slug: str) -> Page | None:
        return next((p for p in self.pages if p.lang == lang and p.slug == slug), None)

    @property
    def languages(self) -> list[str]:
        return self.config["languages"]


def read_text(path: Path, shown: Path | str) -> str:
    """UTF-8 (a BOM is allowed), with CRLF and CR turned into LF."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BuildError(f"not UTF-8 (byte 0x{data[exc.start]:02x})", shown, line) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


# libyaml's loader when PyYAML was built with it: ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str):
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)


def _yaml(text: str, shown, first_line: int):
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark else first_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BuildError(f"malformed YAML: {problem}", shown, line) from None


def split_front_matter(text: str, shown) -> tuple[dict, str, int]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise BuildError("missing front matter: the file must start with a '---' line", shown, 1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise BuildError("malformed front matter: no closing '---' line", shown, 1) from None
    meta = _yaml("\n".join(lines[1:end]), shown, 2) or {}
    if not isinstance(meta, dict):
        raise BuildError("malformed front matter: expected 'key: value' lines", shown, 2)
    for i, line in enumerate(lines[1:end], start=2):
        key = line.split(":", 1)[0].strip()
        if line[:1].isalpha() and key not in PAGE_KEYS:
            raise BuildError(f"unknown front-matter key {key!r} (known: {', '.join(sorted(PAGE_KEYS))})", shown, i)
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        raise BuildError("front matter needs a 'title'", shown, 2)
    return meta, "\n".join(lines[end + 1:]), end + 2


def digest(text: str) -> str:
    """Of the decoded text: line endings and a BOM are not content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _slug_ok(slug: str) -> bool:
    p = PurePosixPath(slug)
    return not p.is_absolute() and ".." not in p.parts and all(part not in ("", ".") for part in p.parts)


def load_config(root: Path) -> dict:
    path = root / "content" / "site.yaml"
    if not path.is_file():
        raise BuildError("no content/site.yaml: the course needs one (title, languages, pages)", "content")
    shown = "content/site.yaml"
    config = _yaml(read_text(path, shown), shown, 1)
    if not isinstance(config, dict):
        raise BuildError("expected a mapping", shown, 1)
    unknown = set(config) - SITE_KEYS
    if unknown:
        raise BuildError(f"unknown key(s) {', '.join(sorted(unknown))}", shown)
    config.setdefault("languages", ["zh", "en"])
    unknown_lang = [lang for lang in config["languages"] if lang not in LANG_TAGS]
    if unknown_lang or len(config["languages"]) != 2:
        raise BuildError(f"languages must be two of {', '.join(LANG_TAGS)}; got {config['languages']}", shown)
    config.setdefault("source_language", config["languages"][0])
    config.setdefault("seed", 0)
    config.setdefault("seeds", 20)
    config.setdefault("experiment_timeout", 120)
    config.setdefault("experiments", [])
    for key, low in (("seed", 0), ("seeds", 1)):
        if not isinstance(config[key], int) or isinstance(config[key], bool) or config[key] < low:
            raise BuildError(f"{key}: expected a whole number ≥ {low}, got {config[key]!r}", shown)
    timeout = config["experiment_timeout"]
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise BuildError(f"experiment_timeout: expected seconds (a number > 0), got {timeout!r}", shown)
    if "base_url" in config:
        # Where the site is published: sitemap.xml and link previews need absolute addresses.
        config["base_url"] = config["base_url"].rstrip("/") + "/"
        config["base_path"] = "/" + config["base_url"].split("://", 1)[-1].partition("/")[2]
    if not config.get("pages"):
        raise BuildError("no pages listed: add 'pages:' with at least one page", shown)
    for slug in config["pages"]:
        if not isinstance(slug, str) or not _slug_ok(slug):
            raise BuildError(f"page {slug!r} is not a path inside content/", shown)
    return config


def load_site(root: Path) -> Site:
    config = load_config(root)
    site = Site(config)
    content = root / "content"
    listed = set(config["pages"])
    for lang in config["languages"]:
        folder = content / lang
        found = {p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.md")} if folder.is_dir() else set()
        if not found:
            raise BuildError(f"content/{lang} has no pages", f"content/{lang}")
        for slug in sorted(found - listed):
            raise BuildError("page is not listed in content/site.yaml 'pages'", f"content/{lang}/{slug}.md")
        for slug in config["pages"]:
            path = folder / f"{slug}.md"
            shown = path.relative_to(root)
            if not path.is_file():
                other = next(l for l in config["languages"] if l != lang)
                raise BuildError(f"missing translation: content/{other}/{slug}.md has no {lang} twin", shown)
            if not path.resolve().is_relative_to(content.resolve()):  # a link pointing outside
                raise BuildError("page path escapes content/", shown)
            text = read_text(path, shown)
            meta, body, body_line = split_front_matter(text, shown)
            site.pages.append(Page(slug, lang, shown, meta, body, body_line, digest(text)))
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
            site.stale.append((page, f"translation is behind {original.path} (records {recorded!r}, "
                                     f"source is {original.digest}); update it, then run "
                                     f"python build.py --mark-translated {page.lang}/{page.slug}.md"))


def mark_translated(root: Path, rel: str) -> str:
    """Stamp a translation with its source's current digest; return the digest."""
    config = load_config(root)
    lang, _, slug = rel.removesuffix(".md").partition("/")
    path = root / "content" / lang / f"{slug}.md"
    source = root / "content" / config["source_language"] / f"{slug}.md"
    if not path.is_file() or not source.is_file():
        raise BuildError(f"no such translation pair for {rel!r}", path.relative_to(root))
    text = read_text(path, rel)
    split_front_matter(text, rel)
    new = digest(read_text(source, source.relative_to(root)))
    lines = text.split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    head = [ln for ln in lines[1:end] if not ln.startswith("translated_from:")]
    head.append(f"translated_from: {new}")
    path.write_text("\n".join(["---", *head, *lines[end:]]), "utf-8")
    return new


def load_data(root: Path, name: str, default):
    """content/glossary.yaml, content/references.yaml: optional YAML data files."""
    path = root / "content" / name
    if not path.is_file():
        return default
    shown = f"content/{name}"
    data = _yaml(read_text(path, shown), shown, 1)
    if not isinstance(data, type(default)):
        raise BuildError(f"expected a YAML {type(default).__name__}", shown, 1)
    return data


def _line_of_key(text: str, key: str) -> int | None:
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


def load_references(root: Path) -> dict:
    """content/references.yaml: key -> {authors, year, title, venue, url}, checked field by field."""
    refs = load_data(root, "references.yaml", {})
    path = root / "content" / "references.yaml"
    text = read_text(path, "content/references.yaml") if path.is_file() else ""
    out = {}
    for key, entry in refs.items():
        where = ("content/references.yaml", _line_of_key(text, str(key)))
        if not isinstance(entry, dict):
            raise BuildError(f"reference {key!r}: expected authors, year, title (venue, url optional)", *where)
        unknown = set(entry) - {"authors", "year", "title", "venue", "url", "note"}
        if unknown:
            raise BuildError(f"reference {key!r}: unknown field(s) {', '.join(sorted(map(str, unknown)))}", *where)
        for field_ in ("authors", "year", "title"):
            if not isinstance(entry.get(field_), (str, int)) or not str(entry[field_]).strip():
                raise BuildError(f"reference {key!r} needs a {field_}", *where)
        for field_ in ("venue", "url", "note"):
            if field_ in entry and not isinstance(entry[field_], str):
                raise BuildError(f"reference {key!r}: {field_} must be text", *where)
        if not safe_url(entry.get("url", "")):
            raise BuildError(f"reference {key!r}: url {entry['url']!r} is not an http(s) or relative address", *where)
        out[str(key)] = {"venue": "", "url": "", "note": "", **{k: str(v) for k, v in entry.items()}}
    return out
