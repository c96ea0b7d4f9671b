"""The command line's smaller frictions of issue 34 (item 6), each as a user met it."""

from __future__ import annotations

import json

import pytest
from sklearn.datasets import load_iris

import kernelmaps.evaluate._exact as exact_module
from kernelmaps.cli.report.cells import error_ci
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
