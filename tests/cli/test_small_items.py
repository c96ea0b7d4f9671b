"""The command line's smaller frictions of issue 34 (item 6), each as a user met it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from sklearn.datasets import load_iris

import kernelmaps.evaluate._exact as exact_module
from kernelmaps.cli.report.cells import SUMMARY_COLUMNS, error_ci
from kernelmaps.cli.report.html_page import CSS, html_table
from tests.cli.conftest import run_main


@pytest.mark.parametrize("rule", ["scale", "auto"])
def test_gamma_scale_and_auto_are_accepted_as_python_accepts_them(capsys, tmp_path, rule):
    # was: "argument --gamma: expected a number; got 'scale'" (exit 2)
    code, stdout, err = run_main(capsys, "compare", "--data", "iris", "--gamma", rule,
                                 "--methods", "nystroem", "--n-components", "20", "--seeds",
                                 "1", "--threads", "1", "--out", str(tmp_path / "c"), "--json")
    assert code == 0, err
    assert f"gamma='{rule}'" in json.loads(stdout)["settings"]["kernel"]


def test_tune_takes_gamma_scale_as_given(capsys, tmp_path):
    code, stdout, err = run_main(capsys, "tune", "--data", "iris", "--gamma", "scale",
                                 "--scale", "none", "--n-components", "20", "--threads", "1",
                                 "--out", str(tmp_path / "t"), "--json")
    assert code == 0, err
    X = load_iris().data
    # scikit-learn's gamma="scale", 1/(d·Var X), on iris as the map sees it (not scaled)
    assert json.loads(stdout)["params"]["gamma"] == pytest.approx(1 / (X.shape[1] * X.var()))


def test_gamma_still_refuses_other_words(capsys):
    code, _, err = run_main(capsys, "compare", "--data", "iris", "--gamma", "median")
    assert code == 2 and "or scale or auto" in err and err.count("\n") == 1


def test_without_target_a_long_header_shows_its_last_columns_and_the_likely_target(
        capsys, tmp_path):
    # 40 measurements and the class last: the list stopped at 20 and hid 'species'.
    header = [f"m{i}" for i in range(40)] + ["species"]
    rows = [",".join(map(str, range(41)))] * 4
    path = tmp_path / "wide.csv"
    path.write_text(",".join(header) + "\n" + "\n".join(rows) + "\n")
    code, _, err = run_main(capsys, "compare", "--data", str(path))
    assert code == 2
    assert "'m15', … 21 more …, 'm37', 'm38', 'm39', 'species']" in err
    assert "name it with --target COLUMN (the likely one: 'species', the last column)." in err


def test_an_informational_note_is_not_put_under_warning(capsys, tmp_path, digits_csv,
                                                        monkeypatch):
    # The exact baseline's α from a subsample (beyond 2,000 training rows; here made to
    # happen on 300): a note on how it ran, which the report showed under "Warning".
    monkeypatch.setattr(exact_module, "alpha_subsample_rows", lambda n: n - 50)
    out = tmp_path / "report"
    code, _, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods", "rff",
                            "--n-components", "10", "--seeds", "1", "--threads", "1",
                            "--out", str(out))
    assert code == 0, err
    page = (out / "report.html").read_text()
    assert "exact baseline: α = " in page and "note: exact baseline: α" in err
    assert 'class="warnings"' not in page


@pytest.mark.parametrize(("low", "high", "shown"), [
    (5.1e-12, 17.0, "5.1e-12–1.7e+01"),  # was 5.1e-12–17
    (0.0123, 0.0345, "0.0123–0.0345"),
    (2e-5, 3e-4, "2.0e-05–3.0e-04"),
])
def test_an_error_interval_has_both_ends_in_one_notation(low, high, shown):
    assert error_ci({"error_ci_low": low, "error_ci_high": high}) == shown


#: The widest summary row the report draws: every cell at its longest.
WIDEST_ROW = ("tensor_srht", "1024 (n=25–800)", "10", "0.000123", "5.1e-12–1.7e+01", "0.9889",
              "0.0123", "1e-04", "+0.0437 (2.1 SE)", "123.456", "1234.567", "12345.678",
              "12345.678", "1234.567–12345.678", "12345.6")


def test_a_number_cell_breaks_only_between_its_parts():
    table = html_table(list(SUMMARY_COLUMNS), [WIDEST_ROW])
    assert ('<span class="nw">5.1e-12–</span><wbr><span class="nw">1.7e+01</span>' in table)
    assert '<span class="nw">1024</span><wbr><span class="nw">(n=25–800)</span>' in table
    assert "<td class=\"num\">1e-04</td>" in table  # a plain number never breaks


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs headless chromium")
def test_the_summary_table_fits_1300_px_to_its_peak_mb_column(tmp_path):
    # was: 1,520 px of table in a 1,268 px box, "peak MB" behind a scroll bar
    page = tmp_path / "table.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        f"{html_table(list(SUMMARY_COLUMNS), [WIDEST_ROW] * 3)}<script>"
        "addEventListener('load',()=>{const d=document.querySelector('.scroll');"
        "document.body.dataset.w=d.scrollWidth+'/'+d.clientWidth;});</script></body></html>")
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1300,800", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    needed, shown = map(int, re.search(r'data-w="(\d+)/(\d+)"', dom).groups())
    assert needed <= shown, (needed, shown)
