"""Check the built documentation site as a reader sees it, in headless Chromium.

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python scripts/check_docs.py docs/_build/html [--out screenshots/] [--all]

Needs Debian's ``chromium`` (``apt-get install chromium``); CI has no browser, so like
``check_report.py`` this is run by hand (CI builds the site with warnings as errors). Checks:

* every page of the site: each local link and image points at a file that exists (no
  browser needed);
* in the browser, the landing page, an API page and a gallery page (every page with
  ``--all``): every image decoded, with an alt attribute; nothing sticking out of a 1400 px window,
  nor of a 700 px one (a narrow laptop window or a tablet); the math typeset by MathJax
  (no raw ``\\(`` … ``\\)`` left) where the page has math; the gallery page shows its figure;
* a full-page screenshot of each of the three pages, not blank, written to ``--out``.

Exit status 0 when every check passes, 1 with one line per failure otherwise.
"""

from __future__ import annotations

import argparse
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from _chromium import layout_problems, probe, screenshot, screenshot_is_blank

#: What a reader opens first: the landing page, an API page, a gallery example.
PAGES = {
    "index": "index.html",
    "api": "api/generated/kernelmaps.maps.Nystroem.html",
    "gallery": "auto_examples/plot_compare_and_advice.html",
}
NARROW = 700
MATH = """
  facts.math = document.querySelectorAll(".math, span.math, div.math").length;
  facts.typeset = document.querySelectorAll("mjx-container").length;
  const text = document.querySelector("main") ? document.querySelector("main").innerText : "";
  facts.rawMath = (text.match(/\\\\\\(|\\\\\\[/g) || []).length;
  facts.title = document.title;
"""


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {"a": "href", "img": "src", "script": "src", "link": "href"}
        for name, value in attrs:
            if name == names.get(tag) and value:
                self.targets.append(value)


def broken_links(site: Path) -> list[str]:
    """Local links and images of every page that point at no file."""
    found = []
    for page in sorted(p for p in site.rglob("*.html")
                       if not any(part.startswith("_") for part in p.relative_to(site).parts)):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        for target in parser.targets:
            parts = urlsplit(target)
            if parts.scheme or target.startswith(("#", "//", "mailto:")):
                continue
            path = unquote(parts.path)
            if path and not (page.parent / path).exists():
                found.append(f"{page.relative_to(site)}: broken link {target}")
    return found


def page_problems(name: str, facts: dict, narrow: dict) -> list[str]:
    found = [f"{name}: {p}" for p in layout_problems(facts)]
    found += [f"{name} at {NARROW} px: {p}" for p in layout_problems(narrow)
              if "decode" not in p and "alt attribute" not in p]
    if facts["math"] and not facts["typeset"]:
        found.append(f"{name}: {facts['math']} math elements, none typeset by MathJax")
    if facts["rawMath"]:
        found.append(f"{name}: {facts['rawMath']} raw math delimiters left in the text")
    if name == "gallery" and not any("sphx_glr" in (i["src"] or "") for i in facts["images"]):
        found.append(f"{name}: the example shows no figure")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built HTML (docs/_build/html)")
    parser.add_argument("--out", type=Path, default=Path("docs-screenshots"),
                        help="folder for the screenshots (default: docs-screenshots)")
    parser.add_argument("--all", action="store_true",
                        help="check every page in the browser, not only the three")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    found = broken_links(site)
    pages = dict(PAGES)
    if args.all:
        pages.update({str(p.relative_to(site)): str(p.relative_to(site))
                      for p in sorted(site.rglob("*.html"))
                      if not any(part.startswith(("_", ".")) for part in
                                 p.relative_to(site).parts)
                      and p.name not in ("genindex.html", "search.html", "py-modindex.html")})
    for name, relative in pages.items():
        page = site / relative
        if not page.exists():
            found.append(f"{name}: {relative} missing from the site")
            continue
        try:
            facts = probe(page, MATH)
            narrow = probe(page, MATH, width=NARROW)
        except RuntimeError as error:
            found.append(f"{name}: {error}")
            continue
        found += page_problems(name, facts, narrow)
        if name in PAGES:
            shot = args.out / f"docs-{name}.png"
            screenshot(page, shot, int(facts["height"]))
            if not shot.exists() or screenshot_is_blank(shot):
                found.append(f"{name}: the screenshot is blank")
            print(f"{name}: {relative} '{facts['title']}', {len(facts['images'])} images, "
                  f"{facts['typeset']} formulas typeset, page {facts['scrollWidth']}×"
                  f"{facts['height']} px; screenshot {shot}")
    pattern = re.compile(r"sphx_glr_.*\.png$")
    figures = sorted(p.name for p in (site / "_images").glob("*.png") if pattern.match(p.name))
    print(f"{len(list(site.rglob('*.html')))} pages, {len(figures)} gallery figures")
    for line in found:
        print(f"FAIL: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
