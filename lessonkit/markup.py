"""The page's machine-readable markup, declared once: what the engine writes into its HTML for the checks to
read back, and the one reader of it.

A shown value is `<span class="value" data-key=… data-value=…>` with its number in `.num`; a summary row is a
`<tr data-claim=… data-passed=…>`; a figure carries `data-figure`, an audited statement `data-audit`. The
engine's HTML writes a value's attributes through `Shown.attrs`, a row's through `Row.attrs` (the template
global `summary_row`) and an audited statement's through `Mark.attrs`; `--check`, `visible_numbers` and the tests read pages through `scan`, so that a change of
the markup is a change here, not in every reader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser

KEY, VALUE, FORMAT, BOUND, TINY, LOW, HIGH, CLAIM = ("data-key", "data-value", "data-format", "data-bound",
                                                     "data-tiny", "data-min", "data-max", "data-claim")
PASSED, SEEDS, HELD, COURSE_SEED, REFUTED = "data-passed", "data-seeds", "data-held", "data-course-seed", "data-refuted"
FIGURE, AUDIT = "data-figure", "data-audit"
NUMBER_CLASS = "num"


@dataclass(frozen=True)
class Shown:
    """One shown value as its element carries it: the key, the full-precision value (numbers.raw's text), its
    format, its bound ("<1e-12", or a JSON list of those per element), whether it is a declared tiny value, its
    range over the seeds (raw texts), and the claim that verifies it. Read back, also the number's text and the
    language it is shown in (the nearest lang attribute)."""

    key: str
    value: str
    format: str | None = None
    bound: str | None = None
    tiny: bool = False
    low: str | None = None
    high: str | None = None
    claim: str | None = None
    text: str = ""
    lang: str = ""

    def attrs(self) -> str:
        """The element's attributes, in the order pages have always had them."""
        out = f'{KEY}="{escape(self.key)}" {VALUE}="{escape(self.value)}"'
        if self.format:
            out += f' {FORMAT}="{escape(self.format)}"'
        if self.bound is not None:
            out += f' {BOUND}="{escape(self.bound)}"'
        if self.tiny:
            out += f' {TINY}=""'
        if self.low is not None or self.high is not None:
            out += f' {LOW}="{escape(self.low or "")}" {HIGH}="{escape(self.high or "")}"'
        if self.claim:
            out += f' {CLAIM}="{escape(self.claim)}"'
        return out

    @classmethod
    def from_attrs(cls, a: dict, text: str = "", lang: str = "") -> Shown:
        return cls(key=a[KEY], value=a.get(VALUE) or "", format=a.get(FORMAT), bound=a.get(BOUND), tiny=TINY in a,
                   low=a.get(LOW), high=a.get(HIGH), claim=a.get(CLAIM), text=text, lang=lang)

    def number(self):
        """The value read as JSON (a number, or a list of them); ValueError when it is not."""
        return json.loads(self.value)

    def parsed_bound(self):
        """The bound as numbers.show takes it: [op, limit], a list of those (None: shown as digits), or None."""
        if not self.bound:
            return None
        bound = json.loads(self.bound) if self.bound.startswith("[") else self.bound
        if isinstance(bound, list):
            return [b and [b[0], float(b[1:])] for b in bound]
        return [bound[0], float(bound[1:])]


@dataclass(frozen=True)
class Row:
    """A claim's row of the verification summary: whether it passed, on how many seeds it held of how many,
    whether it fails on the course seed (a claim that may), whether it is a refuted one; read back, its text."""

    claim: str
    passed: bool
    seeds: int
    held: int
    fails_on_course_seed: bool = False
    refuted: bool = False
    text: str = ""

    def attrs(self) -> str:
        out = (f'{CLAIM}="{escape(self.claim)}" {PASSED}="{"true" if self.passed else "false"}" '
               f'{SEEDS}="{self.seeds}" {HELD}="{self.held}"')
        if self.fails_on_course_seed:
            out += f' {COURSE_SEED}="fails"'
        if self.refuted:
            out += f' {REFUTED}="true"'
        return out

    @classmethod
    def from_attrs(cls, a: dict, text: str = "") -> Row:
        def whole(name):
            try:
                return int(a.get(name) or "")
            except ValueError:
                return -1  # (not a number: --check says the row misstates its seeds)

        return cls(claim=a[CLAIM], passed=a.get(PASSED) == "true", seeds=whole(SEEDS), held=whole(HELD),
                   fails_on_course_seed=a.get(COURSE_SEED) == "fails", refuted=a.get(REFUTED) == "true", text=text)


@dataclass(frozen=True)
class Mark:
    """An audited statement's span: its status, its id (its panel and list entry follow from it), and the claims
    it is keyed to (verified, partly, or refuted by a measurement)."""

    status: str
    id: str
    claims: tuple[str, ...] = ()

    def attrs(self, classes: str) -> dict:
        """The span's attributes, for the Markdown token that becomes it."""
        out = {"class": classes, AUDIT: self.status, "id": self.id}
        if self.claims:
            out[CLAIM] = " ".join(self.claims)
        return out

    @classmethod
    def from_attrs(cls, a: dict) -> Mark:
        return cls(a[AUDIT], a.get("id") or "", tuple((a.get(CLAIM) or "").split()))


# A tag, and not the text: a listing's text may read id="…" or href="#…" (Pygments leaves its quotes), and is
# shown as written. The engine's attribute values hold no < or > (escaped).
TAG = re.compile(r"<[A-Za-z][^<>]*>")
_ID = re.compile(r'\sid="([^"]+)"')


def ids(html: str) -> set:
    """The ids html's elements have."""
    return {i for tag in TAG.findall(html) for i in _ID.findall(tag)}


def in_tags(pattern: re.Pattern, fill, html: str) -> str:
    """pattern.sub(fill) inside html's tags, its text as it is."""
    return TAG.sub(lambda tag: pattern.sub(fill, tag.group(0)), html)


@dataclass
class PageScan:
    lang: str = ""
    ids: list = field(default_factory=list)
    headings: list = field(default_factory=list)  # ids of h2/h3 in order
    refs: list = field(default_factory=list)  # (tag, attr, url, rel, classes)
    values: list[Shown] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    figures: list = field(default_factory=list)
    images_without_alt: int = 0
    claims: set = field(default_factory=set)
    audits: list[Mark] = field(default_factory=list)
    scripts: list = field(default_factory=list)  # (src or "", its inline text) of each <script>
    handlers: list = field(default_factory=list)  # (tag, attribute) of each on…= event handler and srcdoc=
    frames: list = field(default_factory=list)  # tags that load or redirect to other documents (iframe, base…)


# Attributes that hold an address: --check sees each, whatever element carries it.
_URL_ATTRS = {"href", "src", "action", "formaction", "data", "poster", "background", "xlink:href", "ping",
              "manifest", "icon"}
# SVG animation that sets an attribute: one that sets an address can make it javascript:
_ANIMATION = {"set", "animate", "animatemotion", "animatetransform", "animatecolor"}
# Elements that embed or redirect to another document: the engine's templates write none of them.
_FRAMES = {"iframe", "frame", "frameset", "object", "embed", "applet", "base", "portal", "fencedframe"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Scanner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scan = PageScan()
        self._value = None  # [attributes, text, lang] while inside a value's number
        self._depth = 0
        self._row = None  # [attributes, text] while inside a summary row
        self._langs: list = []  # (tag, lang or None) of the open elements: a value's language is its nearest
        self._script = False  # inside a <script>: its text is the script's

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in _VOID:
            self._langs.append((tag, a.get("lang")))
        if tag == "html":
            self.scan.lang = a.get("lang", "")
        if "id" in a:
            self.scan.ids.append(a["id"])
            if tag in ("h2", "h3"):
                self.scan.headings.append(a["id"])
        for attr, value in attrs:  # every one, repeats too: a browser takes the first, this reader's dict the last
            if attr in _URL_ATTRS and value is not None:
                self.scan.refs.append((tag, attr, value, a.get("rel") or "", a.get("class") or ""))
        self.scan.handlers += [(tag, name) for name, _ in attrs if name.startswith("on") or name == "srcdoc"]
        if tag in _ANIMATION and (a.get("attributename") or "").lower().rpartition(":")[2] == "href":
            self.scan.handlers.append((tag, "attributeName=href"))
        if tag in _FRAMES or (tag == "meta" and "http-equiv" in a and (a["http-equiv"] or "").lower() == "refresh"):
            self.scan.frames.append(tag)
        if tag == "script":
            srcs = [value for name, value in attrs if name == "src"]
            self.scan.scripts.append([(srcs[0] or "") if srcs else "", "" if len(srcs) < 2 else "(two src)"])
            self._script = True
        if tag == "img" and not (a.get("alt") or "").strip():
            self.scan.images_without_alt += 1
        if FIGURE in a:
            self.scan.figures.append(a[FIGURE])
        if CLAIM in a:
            self.scan.claims.update(a[CLAIM].split())
            if tag == "tr":
                self._row = [a, ""]
        if AUDIT in a and tag == "span":
            self.scan.audits.append(Mark.from_attrs(a))
        if KEY in a:
            lang = next((lang for _, lang in reversed(self._langs) if lang), self.scan.lang)
            self._value = [a, None, lang]
        elif self._value is not None and NUMBER_CLASS in (a.get("class") or "").split():
            self._value[1] = ""
            self._depth = 1
        elif self._depth:
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False
        for i in range(len(self._langs) - 1, -1, -1):
            if self._langs[i][0] == tag:
                del self._langs[i:]
                break
        if tag == "tr" and self._row is not None:  # rows hold no tables: the next </tr> is theirs
            self.scan.rows.append(Row.from_attrs(*self._row))
            self._row = None
        if self._depth:
            self._depth -= 1
            if self._depth == 0 and self._value is not None:
                a, text, lang = self._value
                self.scan.values.append(Shown.from_attrs(a, text, lang))
                self._value = None

    def handle_data(self, data):
        if self._script:
            self.scan.scripts[-1][1] += data
        if self._depth and self._value is not None:
            self._value[1] += data
        if self._row is not None:
            self._row[1] += data


def scan(html: str) -> PageScan:
    """What a page's markup declares: its language, ids, headings, links, shown values, summary rows, figures,
    claims and audits."""
    s = _Scanner()
    s.feed(html)
    s.close()
    return s.scan
