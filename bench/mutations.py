#!/usr/bin/env python3
"""Plant defects of the kinds earlier reviews found, one at a time, and see the tests fail on each.

    .venv/bin/python bench/mutations.py [--rev REV] [--pick COMMIT ...] [--only NAME ...] [--list]

Each defect is one textual change to one file of a clean copy of the repository at REV (default HEAD;
never this checkout), with the --pick commits applied on top (a fix that REV needs on this machine).
The tests that run are the files named with the defect, which `make test` runs too, so a defect they
catch is one `make test` catches. Each set of files first runs on the clean copy, which must pass, so
that a failure with the defect is the defect's; then the defect is caught when pytest exits non-zero.
"n/a" means the code it changes is not there at REV. The table is printed as it goes, then again whole.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (name, where: one or more (file, text there, what replaces it), the first that applies at REV, test files
# that should fail). A defect whose code moved has a place for each revision it is measured at.
MUTATIONS = [
    ("an unescaped glossary counterpart",
     [("templates/parts/term_tip.html", '<span lang="{{ tag }}">{{ term }}</span>',
       '<span lang="{{ tag }}">{{ term | safe }}</span>'),
      ("lessonkit/markdown/plugins/spans.py", "f'<span lang=\"{escape(ctx.lang_tag(lang))}\">{escape(entry[lang])}</span>'",
       "f'<span lang=\"{escape(ctx.lang_tag(lang))}\">{entry[lang]}</span>'")], ["tests/test_escaping.py"]),
    ("a value with no mark",
     [("templates/parts/value.html", '<span class="value" {{ attrs }}>', '<span class="value">'),
      ("lessonkit/measure/shown.py", "return f'<span class=\"value\" {attrs}>{number}</span>{extra}'",
       "return f'{number}{extra}'")], ["tests/test_build.py", "tests/test_panels.py"]),
    ("a dark-theme contrast bug",
     [("templates/static/style.css", "--bg: #0d1117; --fg: #e6edf3; --muted: #9198a1;",
       "--bg: #0d1117; --fg: #e6edf3; --muted: #3d444d;")], ["tests/test_site_browser.py"]),
    ("a figure clipped at 375 px",
     [("templates/static/style.css", ".figure img { display: block; max-width: 100%;",
       ".figure img { display: block; min-width: 560px;")], ["tests/test_site_browser.py"]),
    ("a layout shift (figure without its size)",
     [("templates/parts/figure.html", 'width="{{ width }}" height="{{ height }}" ', ""),
      ("lessonkit/markdown/plugins/blocks.py", 'width="{width}" height="{height}" ', "")],
     ["tests/test_site_browser.py"]),
    ("a stale page after a site.yaml edit",
     [("lessonkit/markdown/stage.py", 'course.root / "content" / "site.yaml", engine / "lessonkit",',
       'engine / "lessonkit",'),
      ("lessonkit/markdown/stage.py", "content / \"site.yaml\", engine / \"lessonkit\",", "engine / \"lessonkit\",")],
     ["tests/test_incremental.py", "tests/test_pipeline.py"]),
    ("a stale page after a references edit",
     [("lessonkit/markdown/stage.py", "*course.data_files, ", ""),
      ("lessonkit/markdown/stage.py", '("glossary.yaml", "references.yaml", "references.bib")', '("glossary.yaml",)')],
     ["tests/test_references.py"]),
    ("a dropped translation paragraph passes",
     [("lessonkit/markdown/crosscheck.py", "if [k for k, _ in other] == [k for k, _ in blocks]:", "if True:")],
     ["tests/test_side_by_side.py"]),
    ("a broken anchor (heading link)",
     [("templates/parts/heading_anchor.html", 'href="#{{ id }}"', 'href="#{{ id }}x"'),
      ("lessonkit/markdown/plugins/headings.py", "f'<a class=\"anchor\" href=\"#{hid}\"",
       "f'<a class=\"anchor\" href=\"#{hid}x\"")], ["tests/test_build.py", "tests/test_course.py"]),
    ("a noise-level value shown", [("lessonkit/numbers.py", "NOISE_FLOOR = 1e-9", "NOISE_FLOOR = 0.0")],
     ["tests/test_noise.py"]),
    ("an unsandboxed run",
     [("lessonkit/measure/sandbox.py", "path = path if probe.returncode == 0 else None", "path = None")],
     ["tests/test_sandbox.py"]),
    # (Where the option becomes the experiments' policy: past it, the build's check and each job's guard both
    # hold it, and one of them alone refusing is no defect.)
    ("--strict runs unisolated code on --check-only",
     [("lessonkit/pipeline.py", "require_isolation=options.strict, failures=failures,",
       "require_isolation=False, failures=failures,"),
      ("lessonkit/pipeline.py", "require_isolation=options.strict, failures=failures)",
       "require_isolation=False, failures=failures)"),
      ("lessonkit/pipeline.py", "policy=policy,\n                               require_isolation=options.strict)",
       "policy=policy,\n                               require_isolation=False)")], ["tests/test_sandbox.py"]),
    ("a criterion that cannot fail",
     [("lessonkit/measure/claims.py", "        if not held:\n            failed.append(seed)", "        pass")],
     ["tests/test_build.py", "tests/test_criteria.py", "tests/test_sweep.py"]),
    ("a tampered frozen file accepted",
     [("lessonkit/measure/frozen.py", "if _digest(report) != entry.get(\"sha256\"):", "if False:")],
     ["tests/test_frozen.py"]),
    ("a shown number rounded wrongly", [("lessonkit/numbers.py", "MACHINE_NOISE = 1e-10", "MACHINE_NOISE = 1e-2")],
     ["tests/test_numbers.py", "tests/test_noise.py"]),
    ("a page without its language",
     [("templates/base.html", '<html lang="{{ lang_tag(lang) }}">', "<html>")],
     ["tests/test_build.py", "tests/test_site_browser.py"]),
    ("a mark that leads to no panel (the page not linked to its evidence page)",
     [("lessonkit/render/templates.py",
       "    page = across(page, page_ids, evidence_ids, names.attr(posixpath.basename(names.evidence_url(url))))",
       "    page = page")], ["tests/test_panels.py", "tests/test_build.py"]),
    ("a stale evidence page kept",
     [("lessonkit/stages/render.py",
       "                evidence is None or pages_cache.unchanged_extra(evidence, built.key, out)):", "                True):")],
     ["tests/test_incremental.py"]),
    ("the installed tool without its theme",
     [("pyproject.toml", 'lessonkit = ["theme/*", "theme/**/*", "markdown/vendor/*"]',
       'lessonkit = ["markdown/vendor/*"]')], ["tests/test_new.py"]),
]


def _pytest(copy: Path, tests: list[str]) -> tuple[int, float]:
    start = time.perf_counter()
    result = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-x", "-n", "auto",
                             "-p", "no:cacheprovider", *tests], cwd=copy, capture_output=True, text=True)
    return result.returncode, time.perf_counter() - start


def run(rev: str, picks: list[str], only: list[str]) -> list[tuple[str, str, float]]:
    rows, clean = [], {}
    with tempfile.TemporaryDirectory(prefix="lessonkit-mutations-") as tmp:
        copy = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(copy)], check=True)
        subprocess.run(["git", "-C", str(copy), "checkout", "-q", rev], check=True)
        for commit in picks:
            subprocess.run(["git", "-C", str(copy), "-c", "user.name=m", "-c", "user.email=m@localhost",
                            "cherry-pick", commit], check=True, capture_output=True)
        os.symlink(ROOT / ".venv", copy / ".venv")  # the same interpreter and packages
        for name, places, tests in MUTATIONS:
            if only and not any(o in name for o in only):
                continue
            subprocess.run(["git", "-C", str(copy), "checkout", "-q", "--", "."], check=True)
            found = [(copy / rel, old, new) for rel, old, new in places if (copy / rel).is_file()
                     and (copy / rel).read_text("utf-8").count(old) == 1]
            tests = [t for t in tests if (copy / t).is_file()]
            if not found or not tests:
                rows.append((name, "n/a", 0.0))
                print(f"{name:48} n/a", flush=True)
                continue
            if tuple(tests) not in clean:  # the same tests without the defect: they must pass
                clean[tuple(tests)] = _pytest(copy, tests)[0]
            if clean[tuple(tests)] != 0:
                rows.append((name, "fails clean", 0.0))
                print(f"{name:48} fails clean (exit {clean[tuple(tests)]})", flush=True)
                continue
            path, old, new = found[0]
            path.write_text(path.read_text("utf-8").replace(old, new), "utf-8")
            code, seconds = _pytest(copy, tests)
            verdict = "MISSED" if code in (0, 5) else "caught"  # (-x under xdist stops with exit status 2)
            rows.append((name, verdict, seconds))
            print(f"{name:48} {verdict:7} {seconds:6.0f} s  ({' '.join(tests)})", flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rev", default="HEAD", help="the commit to plant the defects in (default HEAD)")
    p.add_argument("--pick", nargs="+", default=[], metavar="COMMIT", help="commits to apply on top of REV")
    p.add_argument("--only", nargs="+", default=[], metavar="WORD", help="only the defects whose name has WORD")
    p.add_argument("--list", action="store_true", help="list the defects and stop")
    args = p.parse_args(argv)
    if args.list:
        for name, places, tests in MUTATIONS:
            print(f"{name:48} {' or '.join(rel for rel, *_ in places)}  ->  {' '.join(tests)}")
        return 0
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    print(f"defects planted one at a time in {rev}" + (f" + {' '.join(args.pick)}" if args.pick else "") + ":")
    rows = run(rev, args.pick, args.only)
    caught = sum(v == "caught" for _, v, _ in rows)
    print(f"\n{caught} of {sum(v not in ('n/a', 'fails clean') for _, v, _ in rows)} caught at {rev} "
          f"({sum(v == 'n/a' for _, v, _ in rows)} not applicable there, "
          f"{sum(v == 'fails clean' for _, v, _ in rows)} whose tests fail without the defect)")
    for name, verdict, seconds in rows:
        print(f"| {name} | {verdict} | {seconds:.0f} s |")
    return 0 if all(v in ("caught", "n/a") for _, v, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
