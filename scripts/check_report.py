"""Render a ``kernelmaps compare`` report in headless Chromium and check it as a reader sees it.

    python scripts/check_report.py kernelmaps-report/report.html [--screenshot shot.png]

Needs Debian's ``chromium`` (``apt-get install chromium``); CI has no browser, so this is a
script run by hand before a release, not a test. It loads the report in a real browser with a
probe script appended to a temporary copy, which writes what the browser laid out into the
DOM (read back with ``--dump-dom``):

* every plot decoded (``naturalWidth > 0``) and drawn at least 480 px wide;
* nothing wider than the window (no horizontal scroll bar at 1400 px), no element overlapping
  the next section;
* the sections a reader looks for (Results, What to use, Settings) present and non-empty.

Then it takes a full-page screenshot and checks it is not blank. Exit status 0 when every
check passes, 1 with one line per failure otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH = 1400
PROBE = """
<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(img => ({
    alt: img.alt, natural: img.naturalWidth, shown: img.getBoundingClientRect().width}));
  const sections = [...document.querySelectorAll("h2")].map(h => {
    let text = "", node = h.nextElementSibling;
    while (node && node.tagName !== "H2") {
      text += node.innerText;
      node = node.nextElementSibling;
    }
    return {title: h.innerText.trim(), chars: text.trim().length};
  });
  const wide = [...document.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName + (e.className ? "." + e.className : ""));
  const probe = document.createElement("pre");
  probe.id = "kernelmaps-probe";
  probe.textContent = JSON.stringify({
    images, sections, wide: wide.slice(0, 10),
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    height: document.documentElement.scrollHeight});
  document.body.appendChild(probe);
});
</script>
"""
REQUIRED_SECTIONS = ("Results", "What to use", "Settings")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    sys.exit("chromium not found: apt-get install chromium")


def browser(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--window-size={WIDTH},1000",
                           "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=120)


def layout(report: Path) -> dict:
    """What the browser laid out, from the probe written into the DOM."""
    with tempfile.TemporaryDirectory() as folder:
        probed = Path(folder) / "report.html"
        probed.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
        dom = browser("--dump-dom", probed.as_uri()).stdout
    found = re.search(r'<pre id="kernelmaps-probe">(.*?)</pre>', dom, re.S)
    if found is None:
        sys.exit("the browser did not run the probe (is the report valid HTML?)")
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def problems(facts: dict) -> list[str]:
    found = []
    if not facts["images"]:
        found.append("no plots in the report")
    for image in facts["images"]:
        if image["natural"] == 0:
            found.append(f"plot {image['alt']} did not decode")
        elif image["shown"] < 480:
            found.append(f"plot {image['alt']} drawn only {image['shown']:.0f} px wide")
    if facts["scrollWidth"] > facts["innerWidth"] + 1:
        found.append(f"page is {facts['scrollWidth']} px wide at a {facts['innerWidth']} px "
                     f"window (too wide: {', '.join(facts['wide'])})")
    sections = {s["title"]: s["chars"] for s in facts["sections"]}
    for title in REQUIRED_SECTIONS:
        if not sections.get(title):
            found.append(f"section '{title}' missing or empty")
    return found


def screenshot_is_blank(path: Path) -> bool:
    from matplotlib.image import imread  # the cli extra's matplotlib reads PNG

    pixels = imread(path)[..., :3]
    return float((pixels < 0.95).any(axis=-1).mean()) < 0.01


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--screenshot", type=Path, default=Path("report-screenshot.png"))
    args = parser.parse_args(argv)
    facts = layout(args.report.resolve())
    found = problems(facts)
    height = min(int(facts["height"]) + 20, 16000)
    browser(f"--window-size={WIDTH},{height}", f"--screenshot={args.screenshot.resolve()}",
            args.report.resolve().as_uri())
    if not args.screenshot.exists() or screenshot_is_blank(args.screenshot):
        found.append("the screenshot is blank")
    print(f"{len(facts['images'])} plots, sections {[s['title'] for s in facts['sections']]}, "
          f"page {facts['scrollWidth']}×{facts['height']} px; screenshot {args.screenshot}")
    for line in found:
        print(f"FAIL: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
