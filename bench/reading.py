#!/usr/bin/env python3
"""What a reader gets from a page, in Debian's Chromium: bytes fetched with an empty cache (as sent, and as a
server that compresses text would send them; the page's HTML; the math font's share), the essay's share of the
page's height, marks per 1,000 characters of the reading layer, tab stops before §2 (the section numbered 2, or the second), printed A4 pages.

    .venv/bin/python bench/reading.py                          # site/, L5 and 3-5 in both languages
    .venv/bin/python bench/reading.py --before 9aea5be         # also that commit, built now, beside it
    .venv/bin/python bench/reading.py --site DIR --pages zh/lesson-l5.html

--before REV checks REV out into a temporary folder and builds it there with this checkout's .venv
(running what its frozen files do not cover here): before and after come from one run on one machine.
These are counts and sizes, not timings; they do not depend on how busy the machine is.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGES = ["zh/lesson-l5.html", "en/lesson-l5.html", "zh/chapter-3/3-5.html", "en/chapter-3/3-5.html"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]

# The signs beside the words: whatever opens a panel (an audit mark, a value's check, a pill), a parameter's
# underline (where it has one), a glossary term's; outside the panels themselves and what a closed <details> holds.
MARKS = """() => {
  const main = document.querySelector('main') || document.body;
  const shown = e => e.getClientRects().length > 0 && !e.closest('[popover], details:not([open]) > :not(summary)');
  const drawn = e => !e.classList.contains('param') || getComputedStyle(e).textDecorationLine !== 'none';
  const marks = [...main.querySelectorAll('[popovertarget], .audit-mark[data-label], .value > a.mark, .param, .term')].filter(shown).filter(drawn);
  const text = main.innerText.replace(/\\s+/g, '').length;
  return [marks.length, text];
}"""

# Tab from the top until focus reaches §2 (the section headed "2. …", as L5 numbers them; on a page whose
# sections are not so numbered, its second section), or the end: how many stops that took.
TABS_TO_SECOND = """() => {
  const all = [...document.querySelectorAll('main article h2')];
  const h2 = all.find(h => /^\\s*(?:\\d+\\.)?2[.\\s]/.test(h.textContent)) || all[1];
  const a = document.activeElement;
  if (!h2) return 'none';
  if (!a || a === document.body) return 'start';
  return (h2.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING) ? 'past' : 'before';
}"""


# The essay's share of the page's height in the reading layer: from the title to where the page's apparatus (its
# references, or before the evidence pages, the collapsed audit and references) begins, over the whole document.
ESSAY = """() => {
  const y = e => e.getBoundingClientRect().top + scrollY;
  const article = document.querySelector('main article');
  const evidence = article.querySelector('#evidence, #references');
  const end = evidence ? y(evidence) : article.getBoundingClientRect().bottom + scrollY;
  return (end - y(article.querySelector('h1'))) / document.documentElement.scrollHeight;
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}", httpd


def _gzipped(site: Path, base: str, url: str, size: int) -> int:
    """What a server that compresses text (GitHub Pages, most hosts) would send for it; fonts and images as
    they are."""
    import gzip

    path = site / url.removeprefix(base + "/").split("#")[0].split("?")[0]
    if path.suffix in (".html", ".css", ".js", ".svg", ".json") and path.is_file():
        return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))
    return size


def measure(browser, site: Path, base: str, rel: str) -> dict:
    import io

    from pypdf import PdfReader

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{base}/{rel}", wait_until="load")
        page.evaluate("document.fonts.ready.then(() => true)")
        fetched = page.evaluate("""() => [...performance.getEntriesByType('navigation'),
                                          ...performance.getEntriesByType('resource')]
                                         .map(e => [e.name, e.encodedBodySize])""")
        marks, chars = page.evaluate(MARKS)
        essay = page.evaluate(ESSAY)
        stops, where = 0, page.evaluate(TABS_TO_SECOND)
        while where in ("start", "before") and stops < 400:
            page.keyboard.press("Tab")
            stops += 1
            where = page.evaluate(TABS_TO_SECOND)
        page.emulate_media(media="print")
        pdf = page.pdf(format="A4", margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"})
    finally:
        context.close()
    html = _gzipped(site, base, f"{base}/{rel}", 0)
    return {"bytes": sum(size for _, size in fetched), "gzip": sum(_gzipped(site, base, name, size) for name, size in fetched),
            "html": html, "essay": essay,
            "font": sum(size for name, size in fetched if name.split("?")[0].endswith((".woff2", ".otf", ".ttf"))),
            "marks_per_1000": 1000 * marks / max(chars, 1), "marks": marks, "chars": chars,
            "tabs": stops - 1 if where == "past" else None, "printed": len(PdfReader(io.BytesIO(pdf)).pages)}


def build_revision(rev: str, tmp: Path) -> Path:
    """REV of this repository, built now with this checkout's .venv: its site folder."""
    tree = tmp / "before"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), rev], check=True,
                   capture_output=True)
    python = REPO / ".venv" / "bin" / "python"
    # Not --frozen-only: an older commit's frozen files may be stale on this machine; it runs them then.
    done = subprocess.run([str(python), "build.py", "--no-search", "-q"], cwd=tree,
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{rev} did not build:\n{done.stdout}{done.stderr}")
    return tree / "site"


def row(name: str, m: dict) -> str:
    tabs = "—" if m["tabs"] is None else str(m["tabs"])
    return (f"  {name:8} {m['bytes']:>9,} B ({m['gzip']:>7,} B gzipped; its HTML {m['html']:>6,})  font {m['font']:>8,} B  "
            f"essay {100 * m['essay']:3.0f} % of the height  marks {m['marks_per_1000']:5.1f}/1,000 "
            f"({m['marks']} in {m['chars']:,} chars)  tab stops before §2 {tabs:>4}  printed {m['printed']:>3} pages")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", type=Path, default=REPO / "site")
    p.add_argument("--pages", nargs="+", default=PAGES)
    p.add_argument("--before", metavar="REV", help="also build this commit and show it beside the site")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    sites = {"now": args.site.resolve()}
    tmp = Path(tempfile.mkdtemp(prefix="reading-"))
    try:
        if args.before:
            sites = {"before": build_revision(args.before, tmp), **sites}
        servers = {name: serve(site) for name, site in sites.items()}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for rel in args.pages:
                print(rel)
                for name, (base, _) in servers.items():
                    if (sites[name] / rel).is_file():
                        print(row(name, measure(browser, sites[name], base, rel)))
                    else:
                        print(f"  {name:8} (no such page)")
            browser.close()
        for _, httpd in servers.values():
            httpd.shutdown()
    finally:
        if args.before:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tmp / "before")],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
