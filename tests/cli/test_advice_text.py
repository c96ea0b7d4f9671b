"""The advice rule is stated once, in kernelmaps.evaluate.advice; the report shows that text."""

import html
import io

import pandas as pd
from rich.console import Console

from kernelmaps.cli import report
from kernelmaps.cli.report import html_page
from kernelmaps.evaluate import advice as advice_module
from kernelmaps.evaluate.advice import advice_heading, advice_rule_text, advise


def _advice(tolerance=0.01):
    table = pd.DataFrame({"method": ["exact", "a", "a"], "n_components": [100, 10, 20],
                          "n_features_out": [100, 10, 20], "runs": 1,
                          "score": [0.9, 0.85, 0.895], "total_time_s": [5.0, 0.1, 0.2],
                          "peak_memory_mb": [80.0, 1.0, 2.0]})
    return advise(table, tolerance=tolerance)


def test_html_report_shows_the_rule_text_of_advice_py():
    advice = _advice(0.02)
    page = html_page._advice_html(advice)
    assert html.escape(advice_rule_text(0.02)) in page


def test_rule_text_follows_the_constants(monkeypatch):
    # Every step of the tie rule, the best-score step included, and NOISE_SES as it is.
    text = advice_rule_text(0.01)
    assert "then the smallest D, then the best score, then the first listed" in text
    assert f"{advice_module.NOISE_SES:g} standard errors" in text
    monkeypatch.setattr(advice_module, "NOISE_SES", 3.0)
    monkeypatch.setattr(advice_module, "TIME_NOISE", 0.4)
    text = advice_rule_text(0.01)
    assert "3 standard errors" in text and "at least 40 %" in text
    page = html_page._advice_html(_advice())
    assert "3 standard errors" in page and "2 standard errors" not in page


def test_terminal_heading_is_advice_py_s():
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    advice = _advice(0.05)
    report.print_advice(console, advice)
    assert advice_heading(0.05) in out.getvalue()
