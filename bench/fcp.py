#!/usr/bin/env python3
"""First contentful paint of every page of a built site, in Debian's Chromium: medians over several cold loads,
and each as a ratio to a blank page loaded the same way (so a busy machine shows as a slow blank page, not as a
slow site).

    .venv/bin/python bench/fcp.py                 # site/, 7 loads per page
    .venv/bin/python bench/fcp.py --site DIR --runs 11

A cold load is a fresh browser context (empty cache, as a first-time reader's), over http on 127.0.0.1.
This is a timing, so it lives here and not in the tests: the tests assert budgets that a loaded
machine cannot break (bytes, requests, layout shift).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLANK = b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body><p>x</p></body></html>'
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/__blank.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(BLANK)))
            self.end_headers()
            self.wfile.write(BLANK)
        else:
            super().do_GET()


def fcp(browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0", timeout=10000)
        return page.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime")
    finally:
        context.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", type=Path, default=REPO / "site")
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    site = args.site.resolve()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "pagefind" not in p.parts)
    if not pages:
        sys.exit(f"{site}: no pages (build the site first)")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        fcp(browser, f"{base}/__blank.html")  # warm the browser itself
        times = {rel: [] for rel in ["__blank.html", *pages]}
        for _ in range(args.runs):  # round-robin: a change in machine load spreads over every page
            for rel in times:
                times[rel].append(fcp(browser, f"{base}/{rel}"))
        browser.close()
    httpd.shutdown()
    blank = statistics.median(times.pop("__blank.html"))
    print(f"first contentful paint, median of {args.runs} cold loads (blank page: {blank:.0f} ms)")
    print(f"{'page':32} {'median':>8} {'min':>6} {'max':>6}  × blank")
    for rel, ms in times.items():
        print(f"{rel:32} {statistics.median(ms):6.0f} ms {min(ms):6.0f} {max(ms):6.0f}  {statistics.median(ms) / blank:5.2f}")
    worst = max(times, key=lambda r: statistics.median(times[r]))
    print(f"slowest: {worst} at {statistics.median(times[worst]) / blank:.2f}× the blank page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
