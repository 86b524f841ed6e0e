"""--pdf: the course on paper. Chromium (through Playwright, Debian's /usr/bin/chromium when there) prints each
finished page of each language with the print stylesheet into pdf/<lang>/<page>.pdf; the pages of a language,
in reading order, are joined into pdf/<lang>.pdf with a bookmark per page (pypdf). It runs on the staging
folder, before the new site is swapped in, and loads nothing from outside it."""

from __future__ import annotations

from pathlib import Path

from lessonkit.errors import BuildError

CHROMIUM = Path("/usr/bin/chromium")
FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def pdf_name(url: str) -> str:
    """A page's PDF, relative to the site root: en/chapter-3/3-1.html -> pdf/en/chapter-3/3-1.pdf."""
    return "pdf/" + url.removesuffix(".html") + ".pdf"


def print_course(site: Path, by_language: dict[str, list[tuple[str, str]]], titles: dict[str, str]) -> list[str]:
    """by_language: lang -> [(page url, title)] in reading order; titles: lang -> the course's title. Writes the
    PDFs; returns their paths below the site."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
        from pypdf import PdfWriter
    except ImportError as exc:
        raise BuildError(f"--pdf needs {exc.name} (make site installs it into .venv)") from None
    written = []
    root = site.resolve().as_uri() + "/"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM) if CHROMIUM.is_file() else None,
                                        args=["--no-sandbox", "--disable-gpu"])
            context = browser.new_context()
            # Only the site's own files: a page that asked for anything else would print without it.
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(root)
                          else route.abort())
            page = context.new_page()
            page.emulate_media(media="print")
            for lang, pages in by_language.items():
                book = PdfWriter()
                for url, title in pages:
                    page.goto(root + url, wait_until="load")
                    page.evaluate("document.fonts.ready.then(() => true)")
                    out = site / pdf_name(url)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    page.pdf(path=str(out), format="A4", print_background=False, display_header_footer=True,
                             header_template="<span></span>", footer_template=FOOTER,
                             margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"})
                    written.append(pdf_name(url))
                    book.append(str(out), outline_item=title)
                book.add_metadata({"/Title": titles.get(lang, "")})
                with open(site / "pdf" / f"{lang}.pdf", "wb") as fh:
                    book.write(fh)
                written.append(f"pdf/{lang}.pdf")
            browser.close()
    except PlaywrightError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BuildError(f"--pdf: Chromium could not print the pages ({first}); it needs Debian's chromium "
                         "(make test installs it)") from None
    return written
