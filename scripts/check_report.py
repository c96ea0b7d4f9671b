"""Render a ``kernelmaps compare`` report in headless Chromium and check it as a reader sees it.

    python scripts/check_report.py kernelmaps-report/report.html [--screenshot shot.png]

Needs Debian's ``chromium`` (``apt-get install chromium``); CI has no browser, so this is a
script run by hand before a release, not a test. It loads the report in a real browser with a
probe script appended to a temporary copy, which writes what the browser laid out into the
DOM (read back with ``--dump-dom``):

* every plot decoded (``naturalWidth > 0``), drawn at least 480 px wide, with alt text that
  says what it shows (not a file name);
* nothing wider than the window (no horizontal scroll bar at 1400 px), no element overlapping
  the next section;
* the sections a reader looks for (Results, What to use, Settings) present and non-empty,
  and the same headings as recorded next to the README's screenshot
  (``docs/report.sections.txt``), so a screenshot that no longer shows the report is caught.

Then it takes a full-page screenshot and checks it is not blank. Exit status 0 when every
check passes, 1 with one line per failure otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _chromium import layout_problems, probe, screenshot, screenshot_is_blank

REQUIRED_SECTIONS = ("Results", "What to use", "Settings")
#: The headings and plots of the report shown in the README's screenshot (docs/report.png),
#: written when the screenshot is regenerated (scripts/regenerate_report_screenshot.py).
RECORDED = Path(__file__).resolve().parents[1] / "docs" / "report.sections.txt"
SECTIONS = """
  facts.sections = [...document.querySelectorAll("h2")].map(h => {
    let text = "", node = h.nextElementSibling;
    while (node && node.tagName !== "H2") {
      text += node.innerText;
      node = node.nextElementSibling;
    }
    return {title: h.innerText.trim(), chars: text.trim().length,
            top: h.getBoundingClientRect().top + window.scrollY};
  });
"""


def problems(facts: dict, *, against_record: bool = True) -> list[str]:
    """Every failed check, one line each; ``against_record=False`` while the record itself is
    being rewritten (scripts/regenerate_report_screenshot.py)."""
    found = [] if facts["images"] else ["no plots in the report"]
    found += layout_problems(facts, min_plot_width=480)
    for image in facts["images"]:
        if not image["alt"].strip() or image["alt"].endswith(".png"):
            found.append(f"plot alt text is empty or a file name ({image['alt']!r})")
    sections = {s["title"]: s["chars"] for s in facts["sections"]}
    for title in REQUIRED_SECTIONS:
        if not sections.get(title):
            found.append(f"section '{title}' missing or empty")
    if against_record and RECORDED.exists():
        recorded = [line for line in RECORDED.read_text().splitlines() if line.startswith("h2 ")]
        shown = [f"h2 {s['title']}" for s in facts["sections"]]
        if recorded != shown:
            found.append(f"sections {shown} differ from the screenshot's {recorded} "
                         f"({RECORDED.name}): run scripts/regenerate_report_screenshot.py")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--screenshot", type=Path, default=Path("report-screenshot.png"))
    args = parser.parse_args(argv)
    report = args.report.resolve()
    try:
        facts = probe(report, SECTIONS)
    except RuntimeError as error:
        print(f"FAIL: {error}")
        return 1
    found = problems(facts)
    screenshot(report, args.screenshot, int(facts["height"]))
    if not args.screenshot.exists() or screenshot_is_blank(args.screenshot):
        found.append("the screenshot is blank")
    print(f"{len(facts['images'])} plots, sections {[s['title'] for s in facts['sections']]}, "
          f"page {facts['scrollWidth']}×{facts['height']} px; screenshot {args.screenshot}")
    for line in found:
        print(f"FAIL: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
