"""--pdf: the course on paper. Chromium (through Playwright, Debian's /usr/bin/chromium when there) prints each
finished page of each language with the print stylesheet into pdf/<lang>/<page>.pdf; the pages of a language,
in reading order, are joined into pdf/<lang>.pdf with a bookmark per page (pypdf). It runs on the staging
folder, before the new site is swapped in, and loads nothing from outside it."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.names import evidence_url

CHROMIUM = Path("/usr/bin/chromium")
FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def _dated_by_source(data: bytes) -> bytes:
    """Chromium stamps a PDF with the time it printed it: the only bytes that differ between two prints of a
    page. They become SOURCE_DATE_EPOCH's date (the build's), written over in place at the same length, so
    that the file's offsets stay true and two builds of one commit give the same PDFs."""
    stamp = time.strftime("D:%Y%m%d%H%M%S+00'00'", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "0"))))
    return re.sub(rb"(/(?:CreationDate|ModDate) \()(D:\d{14}\+00'00')(\))",
                  lambda m: m.group(1) + stamp.encode() + m.group(3), data)


def _relinked(data: bytes, root: str, where: str, base_url: str | None, radicals: dict) -> bytes:
    """The PDF with its links to the site's pages (Chromium writes them as file: addresses of the folder it
    printed from, which is renamed once the build is done) leading to the published address, or, without
    base_url, relative to the PDF's own place in the site (`where`, a folder below it); and its text mapped
    to the characters the page has, not to CJK radicals (`_unradical`)."""
    import io
    import posixpath

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    _unradical(writer, radicals)
    for page in writer.pages:
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            if isinstance(uri, str) and uri.startswith(root):
                target = uri[len(root):]
                path, hash_, fragment = target.partition("#")
                new = base_url + target if base_url else posixpath.relpath(path, where) + hash_ + fragment
                action.get_object()[NameObject("/URI")] = TextStringObject(new)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def cjk_radicals() -> dict[int, int]:
    """Radical -> ideograph, for the glyphs Noto Sans CJK SC shares between them (⼤ and 大 are one glyph).
    Chromium writes each glyph's text as the lowest code point that maps to it, so copying or searching a
    Chinese PDF found ⼤ for 大; the font's own cmap says which ideograph a radical's glyph also is. Empty when
    fontconfig or the font is missing: the text is then as Chromium wrote it."""
    import subprocess

    try:
        from fontTools.ttLib import TTFont

        found = subprocess.run(["fc-match", "-f", "%{file}:%{index}", "Noto Sans CJK SC"], capture_output=True,
                               text=True, timeout=10).stdout
        path, _, index = found.rpartition(":")
        cmap = TTFont(path, fontNumber=int(index or 0), lazy=True).getBestCmap()
    except Exception:  # no fontconfig, no font, or one fontTools cannot read
        return {}

    def radical(c: int) -> bool:
        return 0x2E80 <= c <= 0x2FDF or 0x31C0 <= c <= 0x31EF

    by_glyph: dict = {}
    for c, glyph in cmap.items():
        by_glyph.setdefault(glyph, []).append(c)
    out = {}
    for c, glyph in cmap.items():
        others = [o for o in by_glyph[glyph] if not radical(o)]
        if radical(c) and others:
            out[c] = min(others, key=lambda o: (not 0x4E00 <= o <= 0x9FFF, o))  # a common ideograph first
    return out


def _unradical(writer, radicals: dict) -> None:
    """Each font's ToUnicode map with radicals written as the ideographs they stand for (bfchar targets)."""
    if not radicals:
        return
    from pypdf.errors import PdfReadError

    def target(m) -> str:
        try:
            text = bytes.fromhex(m.group(2)).decode("utf-16-be")
        except (ValueError, UnicodeDecodeError):
            return m.group(0)
        fixed = "".join(chr(radicals.get(ord(c), ord(c))) for c in text)
        return m.group(0) if fixed == text else f"{m.group(1)}<{fixed.encode('utf-16-be').hex().upper()}>"

    done = set()
    for page in writer.pages:
        fonts = page.get("/Resources", {}).get("/Font", {})
        for font in fonts.values():
            cmap = font.get_object().get("/ToUnicode")
            if cmap is None or id(cmap.get_object()) in done:
                continue
            stream = cmap.get_object()
            done.add(id(stream))
            text = stream.get_data().decode("latin-1")
            blocks = re.sub(r"beginbfchar(.*?)endbfchar", lambda b: "beginbfchar" + re.sub(
                r"(<[0-9A-Fa-f]+>\s*)<([0-9A-Fa-f]+)>", target, b.group(1)) + "endbfchar", text, flags=re.S)
            if blocks != text:
                try:
                    stream.set_data(blocks.encode("latin-1"))  # compressed again as it was
                except PdfReadError:  # a filter pypdf cannot write: that font's text stays as written
                    pass


def pdf_name(url: str) -> str:
    """A page's PDF, relative to the site root: en/chapter-3/3-1.html -> pdf/en/chapter-3/3-1.pdf."""
    return "pdf/" + url.removesuffix(".html") + ".pdf"


def _site_only(route, site: Path, root: str) -> None:
    """Only the site's own files: a page that asked for anything else would print without it. Its stylesheets
    wait for their fonts (font-display: optional lets a reader's page go on without a late font, and a
    printed page would come out in another one, by the luck of the machine's load)."""
    url = route.request.url
    if not url.startswith(root):
        route.abort()
    elif url.endswith(".css"):
        from urllib.parse import unquote

        css = (site / unquote(url.removeprefix(root).split("?")[0])).read_text("utf-8")
        route.fulfill(body=re.sub(r"font-display\s*:\s*optional", "font-display:block", css), content_type="text/css")
    else:
        route.continue_()


def print_course(site: Path, by_language: dict[str, list[tuple[str, str]]], titles: dict[str, str],
                 base_url: str | None = None, evidence: bool = False, timeout: float = 120) -> list[str]:
    """by_language: lang -> [(page url, title)] in reading order; titles: lang -> the course's title; evidence:
    print the audit layer, each page followed by its evidence page (the panels as numbered notes, the claims
    table, the audit list), not the reading layer; timeout: the seconds a page may take to load and print (the course's templates made it). Writes the
    PDFs; returns their paths below the site."""
    import io
    import posixpath

    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
        from pypdf import PdfReader, PdfWriter
    except ImportError as exc:
        raise BuildError(f"--pdf needs {exc.name} (make site installs it into .venv)") from None
    written, printing = [], None  # printing: the page under way, once Chromium runs
    root = site.resolve().as_uri() + "/"
    radicals = cjk_radicals()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM) if CHROMIUM.is_file() else None,
                                        args=["--no-sandbox", "--disable-gpu"])
            context = browser.new_context()
            context.route("**/*", lambda route: _site_only(route, site, root))
            page = context.new_page()
            page.set_default_timeout(timeout * 1000)
            page.emulate_media(media="print")
            def printed(url: str) -> bytes:
                page.goto(root + url, wait_until="load")
                if evidence:  # the marks' note numbers (style.css's print rules)
                    page.evaluate("document.documentElement.dataset.print = 'evidence'")
                page.evaluate("document.fonts.ready.then(() => true)")
                return _dated_by_source(page.pdf(
                    format="A4", print_background=False, display_header_footer=True,
                    header_template="<span></span>", footer_template=FOOTER,
                    margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"}))

            for lang, pages in by_language.items():
                book = PdfWriter()
                for url, title in pages:
                    printing = url
                    data = printed(url)
                    appendix = evidence_url(url)
                    if evidence and (site / appendix).is_file():  # its evidence page after it: the notes
                        printing = appendix
                        joined = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
                        joined.append(io.BytesIO(printed(appendix)))
                        buffer = io.BytesIO()
                        joined.write(buffer)
                        data = buffer.getvalue()
                    out = site / pdf_name(url)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(_relinked(data, root, posixpath.dirname(pdf_name(url)), base_url, radicals))
                    written.append(pdf_name(url))
                    book.append(io.BytesIO(_relinked(data, root, "pdf", base_url, radicals)), outline_item=title)
                book.add_metadata({"/Title": titles.get(lang, "")})
                with open(site / "pdf" / f"{lang}.pdf", "wb") as fh:
                    book.write(fh)
                written.append(f"pdf/{lang}.pdf")
            browser.close()
    except PlaywrightError as exc:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, PlaywrightTimeout) and printing:
            raise BuildError(f"--pdf: {printing} did not load and print within {timeout:g} s (content/site.yaml: "
                             f"experiment_timeout): a page that never finishes loading (a script that spins?)") \
                from None
        if printing:
            raise BuildError(f"--pdf: Chromium could not print {printing} ({first})") from None
        raise BuildError(f"--pdf: Chromium could not print the pages ({first}); it needs Debian's chromium "
                         "(make test installs it)") from None
    return written


class Print:
    """The course printed, one PDF per language, as an output (lessonkit/load/plugins.py)."""

    name = "pdf"

    def __init__(self, evidence: bool = False):
        self.evidence = evidence  # the audit layer, its evidence as notes; else the reading layer

    def output(self, folder: Path, site: dict, say) -> None:
        by_language = {lang: [(url, title) for url, page_lang, title in site["pages"] if page_lang == lang]
                       for lang in site["languages"]}
        say(f"printing {sum(map(len, by_language.values()))} pages into PDF")
        print_course(folder, by_language, site["config"]["title"], site["config"].get("base_url"), self.evidence,
                     site["config"].get("experiment_timeout", 120))
