#!/usr/bin/env python3
"""Screenshots of every page of a built site, to look at: desktop and phone, light and dark.

    python tests/screenshots.py [--site site] [--out artifacts/screenshots] [PAGE ...]

Looking is a person's job, so this is a tool and not a test: the browser tests assert what can be
asserted (overflow, margins, contrast, axe). It serves the site on 127.0.0.1 and drives Debian's Chromium.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CHROMIUM_ARGS, http_server  # noqa: E402

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 375, "height": 800}}


def shot_name(rel: str, width: str, scheme: str) -> str:
    return f"{rel.removesuffix('.html').replace('/', '_')}.{width}.{scheme}.png"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", type=Path, default=ROOT / "site")
    p.add_argument("--out", type=Path, default=ROOT / "artifacts" / "screenshots")
    p.add_argument("pages", nargs="*", help="pages relative to the site (default: every page but 404)")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    pages = args.pages or sorted(q.relative_to(args.site).as_posix() for q in args.site.rglob("*.html")
                                 if not q.name.startswith("404"))
    args.out.mkdir(parents=True, exist_ok=True)
    server = http_server(args.site)
    base = next(server)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for width, size in SIZES.items():
                for scheme in ("light", "dark"):
                    page = browser.new_context(viewport=size, color_scheme=scheme).new_page()
                    for rel in pages:
                        page.goto(f"{base}/{rel}", wait_until="load")
                        page.evaluate("document.fonts.ready.then(() => true)")
                        page.screenshot(path=str(args.out / shot_name(rel, width, scheme)), full_page=True,
                                        animations="disabled", caret="hide")
                    page.context.close()
            browser.close()
    finally:
        server.close()
    print(f"{4 * len(pages)} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
