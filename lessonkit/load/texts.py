"""How the course's text files are read: UTF-8 without NULs, YAML within limits, and a page's front matter."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from lessonkit import io
from lessonkit.errors import BuildError
from lessonkit.names import CONTROLS, control_in

PAGE_KEYS = {"title", "description", "translated_from", "number"}


def read_text(path: Path, shown: Path | str) -> str:
    """UTF-8 (a BOM is allowed), with CRLF and CR turned into LF; read within io.read_input's bounds."""
    data = read_bytes(path, shown)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BuildError(f"not UTF-8 (byte 0x{data[exc.start]:02x})", shown, line) from None
    if "\x00" in text:  # the engine marks its own slots with NUL: no course text may carry one
        raise BuildError("contains a NUL character", shown, text[: text.index("\x00")].count("\n") + 1)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    odd = control_in(text)
    if odd:
        at = CONTROLS.search(text).start()
        raise BuildError(f"contains {odd}: a control character, or one that reorders the text as shown (write "
                         f"the text itself)", shown, text[:at].count("\n") + 1)
    return text


def read_bytes(path: Path, shown: Path | str, limit: int = io.INPUT_LIMIT) -> bytes:
    """A course file's bytes, or a one-line error when it is not a regular file or is too large to read."""
    try:
        return io.read_input(path, limit)
    except io.Refused as exc:
        raise BuildError(exc.strerror, shown) from None


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


# libyaml composes nested collections by recursion: 30,000 levels (60 KB of "[" or "- ") overflow the C
# stack and kill the process without a word, so the depth is bounded on the text first.
MAX_YAML_DEPTH = 1_000
_BRACKET = re.compile(r"[\[\]{}]")
_LEADING = re.compile(r"^[ \t?:-]*", re.MULTILINE)  # indentation and compact "- - -" or "? " nesting


def _too_deep(text: str) -> bool:
    depth = 0
    for match in _BRACKET.finditer(text):  # a bracket inside a string counts too: an overestimate
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_YAML_DEPTH:
            return True
    return any(len(m.group()) > MAX_YAML_DEPTH for m in _LEADING.finditer(text))


def load_yaml(text: str):
    """Safe YAML; refuses documents nested deeper than MAX_YAML_DEPTH, or whose aliases expand beyond
    MAX_YAML_NODES nodes."""
    if _too_deep(text):
        raise yaml.YAMLError(f"nested more than {MAX_YAML_DEPTH} levels deep")
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
    for i, line in enumerate(lines[1:end], start=2):
        # A hash is text even when YAML would read its digits as a number (0123456789ab is fine, 012345678901 is not).
        if line.startswith("translated_from:"):
            meta["translated_from"] = line.partition(":")[2].strip().strip("'\"") or None
        # So is a chapter's number: YAML reads 3.10 as 3.1.
        if line.startswith("number:"):
            meta["number"] = line.partition(":")[2].strip().strip("'\"")
            if not re.fullmatch(r"[0-9A-Za-z]{1,8}(\.[0-9A-Za-z]{1,8}){0,3}", meta["number"]):
                raise BuildError(f"number {meta['number']!r}: a chapter's number, such as 3 or 3.2 or A (letters and "
                                 f"digits, parts joined by dots)", shown, i)
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


def line_of_key(text: str, key: str) -> int | None:
    """The line where a top-level `key:` (or list item `- id: key`) is written, for error messages."""
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip().removeprefix("- ")
        if stripped.startswith((f"{key}:", f"id: {key}", f'id: "{key}"')):
            return number
    return None
