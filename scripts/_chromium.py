"""Headless Chromium for the page checks (``check_report.py``, ``check_docs.py``): run the
browser, read back what it laid out, take screenshots.

Needs Debian's ``chromium`` (``apt-get install chromium``). A probe script appended to a
temporary copy of the page writes what the browser laid out into the DOM as JSON, read back
with ``--dump-dom``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

WIDTH = 1400

#: Facts every probe reports: images (decoded, shown width, alt text), the page's width and
#: height, and the elements that stick out of the window (outside scrolling containers).
PROBE_FACTS = """
  const clipped = e => {
    for (let p = e.parentElement; p; p = p.parentElement) {
      const overflow = getComputedStyle(p).overflowX;
      if (overflow === "auto" || overflow === "scroll" || overflow === "hidden") return true;
    }
    return false;
  };
  const images = [...document.images].map(img => ({
    src: img.getAttribute("src"), alt: img.alt, hasAlt: img.hasAttribute("alt"),
    natural: img.naturalWidth,
    shown: img.getBoundingClientRect().width}));
  const wide = [...document.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(e))
    .map(e => e.tagName + (typeof e.className === "string" && e.className ?
                           "." + e.className.split(" ")[0] : ""));
  const facts = {images, wide: wide.slice(0, 10),
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    height: document.documentElement.scrollHeight};
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    sys.exit("chromium not found: apt-get install chromium")


def browser(*args: str, width: int = WIDTH) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--window-size={width},1000",
                           "--virtual-time-budget=8000", *args],
                          capture_output=True, text=True, timeout=180)


def probe(page: Path, script: str, *, width: int = WIDTH) -> dict:
    """Load ``page`` with ``script`` (which must set ``facts``) appended; return ``facts``.

    The probed copy is written next to the page, so its relative links (images, CSS, the
    MathJax of a Sphinx site) load as they would for a reader.
    """
    probed = page.with_name(f".probe-{page.name}")
    tag = ("<script>window.addEventListener('load', () => setTimeout(() => {"
           + PROBE_FACTS + script
           + "const out = document.createElement('pre'); out.id = 'kernelmaps-probe';"
           "out.textContent = JSON.stringify(facts); document.body.appendChild(out);"
           "}, 1500));</script>")
    try:
        probed.write_text(page.read_text().replace("</body>", tag + "</body>"))
        dom = browser("--dump-dom", probed.as_uri(), width=width).stdout
    finally:
        probed.unlink(missing_ok=True)
    found = re.search(r'<pre id="kernelmaps-probe">(.*?)</pre>', dom, re.S)
    if found is None:
        raise RuntimeError(f"the browser did not run the probe on {page} (is it valid HTML?)")
    text = found.group(1)
    for entity, char in (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")):
        text = text.replace(entity, char)
    return json.loads(text)


def screenshot(page: Path, out: Path, height: int, *, width: int = WIDTH) -> None:
    browser(f"--window-size={width},{min(height + 20, 16000)}", f"--screenshot={out.resolve()}",
            page.resolve().as_uri(), width=width)


def screenshot_is_blank(path: Path) -> bool:
    from matplotlib.image import imread  # the cli extra's matplotlib reads PNG

    pixels = imread(path)[..., :3]
    return float((pixels < 0.95).any(axis=-1).mean()) < 0.01


def layout_problems(facts: dict, *, min_plot_width: int = 0) -> list[str]:
    """Images that did not decode, have no alt attribute or are drawn too small; horizontal
    overflow. (``alt=""`` is allowed: it marks a decorative image, such as a gallery
    thumbnail whose caption follows it.)"""
    found = []
    for image in facts["images"]:
        name = image["alt"] or image["src"]
        if image["natural"] == 0:
            found.append(f"image {name} did not decode")
        elif min_plot_width and image["shown"] < min_plot_width:
            found.append(f"image {name} drawn only {image['shown']:.0f} px wide")
        if not image["hasAlt"]:
            found.append(f"image {image['src']} has no alt attribute")
    if facts["scrollWidth"] > facts["innerWidth"] + 1:
        found.append(f"page is {facts['scrollWidth']} px wide at a {facts['innerWidth']} px "
                     f"window (too wide: {', '.join(facts['wide'])})")
    elif facts["wide"]:
        found.append(f"elements stick out of the window: {', '.join(facts['wide'])}")
    return found
