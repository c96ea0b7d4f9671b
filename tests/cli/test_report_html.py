"""The HTML report reads at a glance (issue 27, item 4), checked without a browser.

What a reader needs first opens the page: the "What to use" section, with the run's
warnings (the scale warning: "scaling raised the score here") in a block above the advice,
before the plots and the 46-row results table. Number cells never wrap (``3e-`` / ``05``, a
range broken at its dash): every cell but the wordy ones is ``class="num"``, which the page's
style keeps on one line, and tables scroll sideways instead of squeezing. The same checks as
a reader sees them, in headless Chromium, are in ``scripts/check_report.py``.
"""

from __future__ import annotations

import re

import pytest
from sklearn.datasets import load_digits

from kernelmaps import evaluate

report = pytest.importorskip("kernelmaps.cli.report")  # the cli extra (matplotlib, rich)
html_page = report.html_page

SCALE = ("warning: 12 of the 13 features each carry less than a tenth of an equal share of "
         "the variance ('proline' alone 99.8%), so the kernel's distances hardly see them; "
         "consider --scale standard.")
RUN_WARNING = "skipped (landmark methods need n_components <= training rows): nystroem 400"


@pytest.fixture(scope="module")
def comparison():
    X, y = load_digits(return_X_y=True)
    results = evaluate.compare(X[:200], y[:200], methods=["nystroem", "rbf_sampler"],
                               n_components=[10, 20], n_seeds=2, random_state=0)
    summary = evaluate.summarize(results)
    return results, summary, evaluate.advise(summary)


def _page(comparison, tmp_path, warnings=(), advice=True) -> str:
    results, summary, advised = comparison
    path = report.write_report(tmp_path, results, summary, "test", {"data": "digits"},
                               [*warnings, "a note"], advised if advice else None,
                               warnings=warnings)
    return path.read_text()


def _section(page: str) -> str:
    found = re.search(r'<section class="advice">(.*?)</section>', page, re.S)
    assert found, "no 'What to use' section"
    return found.group(1)


def test_warnings_open_the_report_beside_the_advice(comparison, tmp_path):
    page = _page(comparison, tmp_path, warnings=[SCALE, RUN_WARNING])
    section = _section(page)
    # In the advice's section, above the advice's sentence and table, ...
    block = re.search(r'<div class="warnings" role="alert">(.*?)</div>', section, re.S)
    assert block, section[:300]
    assert section.index("<h2>What to use</h2>") < block.start() < section.index("<p>Use ")
    assert block.start() < section.index("<table")
    items = re.findall(r"<li>(.*?)</li>", block.group(1))
    assert len(items) == 2 and "consider <code class=\"flag\">--scale</code> standard" in items[0]
    assert not items[0].startswith("warning:")  # said once, by the block's heading
    assert "nystroem 400" in items[1]
    # ... and the section before the plots and the results table: at the top of the page.
    start = page.index('<section class="advice">')
    assert start < page.index('<div class="plots">') < page.index("<h2>Results</h2>")
    assert page.index("<h1>") < start
    # Every note, warnings included, is still listed under Notes.
    notes = page[page.index("<h2>Notes</h2>"):page.index("<h2>Settings</h2>")]
    assert "proline" in notes and "a note" in notes


def test_no_warning_block_without_warnings(comparison, tmp_path):
    page = _page(comparison, tmp_path)
    assert 'class="warnings"' not in page
    assert "<h2>What to use</h2>" in _section(page)


def test_warnings_shown_even_without_advice(comparison, tmp_path):
    page = _page(comparison, tmp_path, warnings=[SCALE], advice=False)
    assert "proline" in _section(page) and "<table" not in _section(page)


def _table_after(page: str, heading: str) -> str:
    rest = page[page.index(f"<h2>{heading}</h2>"):]
    return rest[:rest.index("</table>")]


def test_number_cells_never_wrap(comparison, tmp_path):
    page = _page(comparison, tmp_path)
    style = page[page.index("<style>"):page.index("</style>")]
    assert re.search(r"td\.num,td:first-child,\.nw\{white-space:nowrap\}", style)
    assert re.search(r"\.scroll\{overflow-x:auto", style)  # wide tables scroll, not wrap
    results = _table_after(page, "Results")
    assert results.startswith("<h2>Results</h2>\n<div class=\"scroll\"><table>")
    cells = re.findall(r"<td( class=\"num(?: breaks)?\")?>(.*?)</td>", results)
    assert len(cells) == 15 * (1 + 2 * 2)  # the exact row and 2 methods × 2 D, 15 columns
    # The method's name first (nowrap as a first column), then 14 numbers.
    assert [bool(css) for css, _ in cells] == ([False] + [True] * 14) * 5, cells[:15]
    # A number cell is one unbroken text, or unbroken pieces with a break between them
    # (an interval after its dash, a note before its parenthesis): never inside a number.
    for css, text in cells:
        if "breaks" in css:
            assert re.fullmatch(r'<span class="nw">[^<]+</span>(<wbr><span class="nw">[^<]+'
                                r"</span>)+", text), text
        else:
            assert "<" not in text, text
    texts = [re.sub(r"<[^>]+>", "", text) for _, text in cells]
    # The cells that wrapped before: α in scientific notation, ranges at their dash.
    assert any(re.fullmatch(r"\de-\d\d", t) for t in texts), texts
    assert any(re.fullmatch(r"[\d.e-]+–[\d.e-]+", t) for t in texts), texts
    # The advice's numbers too; its estimate column (sentences) may wrap.
    advice = _section(page)
    header = re.findall(r"<th>(.*?)</th>", advice)
    rows = re.findall(r"<tr>(.*?)</tr>", advice[advice.index("<tbody>"):])
    for row in rows:
        classes = re.findall(r"<td( class=\"num\")?>", row)
        assert [bool(c) for c in classes] == [i > 0 and h != "estimate"
                                              for i, h in enumerate(header)], row


def test_flags_in_warnings_do_not_break():
    block = html_page._warnings_html(["warning: consider --scale standard, or --no-exact."])
    assert '<code class="flag">--scale</code>' in block
    assert '<code class="flag">--no-exact</code>' in block
    assert "<strong>Warning</strong>" in block  # one warning: singular
    assert html_page._warnings_html([]) == ""


def test_the_terminal_and_html_tables_show_alpha_through_one_formatter():
    # Two formatters, one per table, once printed α differently (an infinite α: "inf" in
    # the terminal, "–" in the page); the α column of both tables is now the one cell.
    from kernelmaps.cli.report import cells, terminal

    column = next(c for c in terminal._TERMINAL_COLUMNS if c.header == "α")
    assert column.cell is cells.alpha and cells.SUMMARY_COLUMNS["α"] is cells.alpha
    rows = ({"alpha": 1e-3}, {"alpha": 250.0}, {"alpha": float("nan")},
            {"alpha": float("inf")}, {"alpha": None}, {})
    assert [cells.alpha(row) for row in rows] == ["1e-03", "2e+02", "–", "–", "–", "–"]
