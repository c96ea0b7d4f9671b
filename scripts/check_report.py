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
  (``docs/report.sections.txt``), so a screenshot that no longer shows the report is caught;
* the warnings beside the advice: every warning listed under Notes (the scale warning
  first) is also in the warning block of the "What to use" section, which is above the
  plots and the results table (issue 27);
* no number cell wraps: every ``td.num`` is laid out on one line (its text's line boxes,
  counted by the browser: ``3e-`` / ``05`` or a range broken at its dash is two);
* the plots legible: each plot is drawn again from the report's ``results.csv`` with
  kernelmaps' plot functions, and every log axis has at least 3 tick labels in view, no
  two point labels overlap and no label sits on another point's marker.

Then it takes a full-page screenshot and checks it is not blank. Exit status 0 when every
check passes, 1 with one line per failure otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _chromium import layout_problems, probe, screenshot, screenshot_is_blank

REQUIRED_SECTIONS = ("Results", "What to use", "Settings")
#: Sections only a run with something to say has (as in tests/test_report_screenshot.py).
CONDITIONAL = {"Notes"}
#: The headings and plots of the report shown in the README's screenshot (docs/report.png),
#: written when the screenshot is regenerated (scripts/regenerate_report_screenshot.py).
RECORDED = Path(__file__).resolve().parents[1] / "docs" / "report.sections.txt"
SECTIONS = r"""
  facts.sections = [...document.querySelectorAll("h2")].map(h => {
    let text = "", node = h.nextElementSibling;
    while (node && node.tagName !== "H2") {
      text += node.innerText;
      node = node.nextElementSibling;
    }
    return {title: h.innerText.trim(), chars: text.trim().length,
            top: h.getBoundingClientRect().top + window.scrollY};
  });
  const top = e => e.getBoundingClientRect().top + window.scrollY;
  const advice = [...document.querySelectorAll("h2")].find(h => h.innerText.trim() ===
                                                                   "What to use");
  const block = advice ? advice.parentElement.querySelector(".warnings") : null;
  const results = [...document.querySelectorAll("h2")].find(h => h.innerText.trim() ===
                                                                    "Results");
  const notes = [...document.querySelectorAll("h2")].find(h => h.innerText.trim() === "Notes");
  const noted = notes && notes.nextElementSibling ?
    [...notes.nextElementSibling.querySelectorAll("li")].map(li => li.innerText.trim()) : [];
  facts.warnings = {
    block: block ? [...block.querySelectorAll("li")].map(li => li.innerText.trim()) : null,
    blockTop: block ? top(block) : null,
    inAdvice: Boolean(block && advice && advice.parentElement.contains(block)),
    plotsTop: document.images.length ? top(document.images[0]) : null,
    resultsTop: results ? top(results) : null,
    noted: noted.filter(text => text.startsWith("warning:"))};
  // Number cells: marked td.num, or (a report without the mark) cells that read as numbers.
  const numeric = /^[-+]?[0-9.]+(e[-+]?[0-9]+)?([–-][0-9.]+(e[-+]?[0-9]+)?)?( \(.*\))?$/;
  const cells = [...document.querySelectorAll("td")].filter(td =>
    td.classList.contains("num") || numeric.test(td.innerText.trim()));
  facts.wrapped = cells.filter(td => {
    const range = document.createRange();
    range.selectNodeContents(td);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    return lines.size > 1;
  }).map(td => td.innerText).slice(0, 10);
  facts.numberCells = cells.length;
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
    found += _warning_problems(facts.get("warnings"))
    if not facts.get("numberCells"):
        found.append("no number cells in the report")
    if facts.get("wrapped"):
        found.append(f"number cells wrap over two lines: {facts['wrapped']}")
    if against_record and RECORDED.exists():
        recorded = [line for line in RECORDED.read_text().splitlines()
                    if line.startswith("h2 ") and line[3:] not in CONDITIONAL]
        shown = [f"h2 {s['title']}" for s in facts["sections"]
                 if s["title"] not in CONDITIONAL]
        if recorded != shown:
            found.append(f"sections {shown} differ from the screenshot's {recorded} "
                         f"({RECORDED.name}): run scripts/regenerate_report_screenshot.py")
    return found


def _warning_problems(warnings: dict | None) -> list[str]:
    """The warnings beside the advice, above the plots and the results table."""
    if warnings is None:
        return ["the probe found no warning facts"]
    found = []
    block = warnings["block"]
    if warnings["noted"] and block is None:
        found.append(f"{len(warnings['noted'])} warning(s) under Notes, none beside the advice")
    if block is None:
        return found
    if not warnings["inAdvice"]:
        found.append("the warning block is not in the 'What to use' section")
    for note in warnings["noted"]:
        text = note.removeprefix("warning:").strip()
        if text not in block:
            found.append(f"warning not beside the advice: {text[:60]}…")
    for other in ("plotsTop", "resultsTop"):
        if warnings[other] is not None and warnings["blockTop"] > warnings[other]:
            found.append(f"the warning block is below the {other[:-3]} "
                         f"({warnings['blockTop']:.0f} px > {warnings[other]:.0f} px)")
    return found


#: The fewest tick labels on a log axis of a plot.
MIN_LOG_LABELS = 3


def plot_problems(results_csv: Path) -> list[str]:
    """Draw each plot of the report again from its ``results.csv`` and check what a reader
    needs to read it: >= 3 tick labels on every log axis, point labels clear of each other
    and of other points' markers."""
    import matplotlib
    import numpy as np
    import pandas as pd

    matplotlib.use("Agg")
    from kernelmaps.cli.report import PLOTS

    results = pd.read_csv(results_csv)
    found = []
    for name, plot in PLOTS.items():
        ax = plot(results)
        ax.figure.canvas.draw()
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            low, high = sorted(axis.get_view_interval())
            shown = [label.get_text() for tick, label in zip(
                axis.get_majorticklocs(), axis.get_majorticklabels(), strict=True)
                if low <= tick <= high and label.get_text()]
            if len(shown) < MIN_LOG_LABELS:
                found.append(f"{name}: log {axis.axis_name} axis has {len(shown)} tick "
                             f"labels {shown} (fewer than {MIN_LOG_LABELS})")
        texts = [t for t in ax.texts if t.get_text()]
        boxes = [t.get_window_extent() for t in texts]
        points = [ax.transData.transform(t.xy) for t in texts]
        for i, (text, box) in enumerate(zip(texts, boxes, strict=True)):
            if any(box.overlaps(other) for other in boxes[:i]):
                found.append(f"{name}: point label {text.get_text()} overlaps another")
            own = points[i]
            if any(np.hypot(x - own[0], y - own[1]) > 10 and box.contains(x, y)
                   for x, y in points):
                found.append(f"{name}: point label {text.get_text()} sits on another point")
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
    if (report.parent / "results.csv").exists():
        found += plot_problems(report.parent / "results.csv")
    screenshot(report, args.screenshot, int(facts["height"]))
    if not args.screenshot.exists() or screenshot_is_blank(args.screenshot):
        found.append("the screenshot is blank")
    warned = facts["warnings"]["block"] or []
    print(f"{len(facts['images'])} plots, sections {[s['title'] for s in facts['sections']]}, "
          f"page {facts['scrollWidth']}×{facts['height']} px; {len(warned)} warning(s) beside "
          f"the advice; {facts['numberCells']} number cells, {len(facts['wrapped'])} wrapped; "
          f"screenshot {args.screenshot}")
    for line in found:
        print(f"FAIL: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
