"""The README's screenshot of the report (docs/report.png) shows the report as it is now.

``scripts/regenerate_report_screenshot.py`` writes the screenshot and, next to it,
``docs/report.sections.txt``: the report's section headings and plots at that moment. Here
the renderer writes a report of a small real comparison, and its headings and plots must be
the recorded ones; a change to the report's sections or plots fails until the screenshot is
regenerated. The plots' alt text must say what each plot shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sklearn.datasets import load_digits

from kernelmaps import evaluate

report = pytest.importorskip("kernelmaps.cli.report")  # the cli extra (matplotlib, rich)

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "docs" / "report.sections.txt"
PNG = ROOT / "docs" / "report.png"
#: Sections that appear only when a run has something to say (warnings become notes).
CONDITIONAL = {"Notes"}


def recorded(kind: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in RECORD.read_text().splitlines()
            if line.startswith(f"{kind} ")]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> str:
    X, y = load_digits(return_X_y=True)
    results = evaluate.compare(X[:300], y[:300], methods=["nystroem", "rbf_sampler"],
                               n_components=[20, 40], n_seeds=1, random_state=0)
    summary = evaluate.summarize(results)
    advice = evaluate.advise(summary)
    out = tmp_path_factory.mktemp("report")
    path = report.write_report(out, results, summary, "test", {"data": "digits"}, [], advice)
    return path.read_text()


def test_sections_are_the_ones_in_the_screenshot(rendered):
    headings = [h for h in re.findall(r"<h2>(.*?)</h2>", rendered) if h not in CONDITIONAL]
    assert headings == [h for h in recorded("h2") if h not in CONDITIONAL], (
        "the report's sections changed: regenerate docs/report.png with "
        "python scripts/regenerate_report_screenshot.py")


def test_plots_are_the_ones_in_the_screenshot(rendered):
    assert list(report.PLOTS) == recorded("plot"), (
        "the report's plots changed: regenerate docs/report.png with "
        "python scripts/regenerate_report_screenshot.py")
    assert rendered.count("<img ") == len(report.PLOTS)


def test_plots_have_alt_text_saying_what_they_show(rendered):
    alts = re.findall(r'<img alt="([^"]*)"', rendered)
    assert len(alts) == len(report.PLOTS)
    for alt in alts:
        assert not alt.endswith(".png") and len(alt) > 60, alt
        assert " against " in alt and "nystroem, rbf_sampler" in alt, alt
    assert len(set(alts)) == len(alts)  # one description per plot


def test_screenshot_is_a_reasonable_image():
    from PIL import Image

    with Image.open(PNG) as image:
        width, height = image.size
    assert width == 1000 and 800 < height < 4000
    assert PNG.stat().st_size < 600 * 1024
