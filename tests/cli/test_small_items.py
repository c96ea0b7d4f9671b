"""The command line's smaller frictions of issue 34 (item 6), each as a user met it."""

from __future__ import annotations

import json

import pytest
from sklearn.datasets import load_iris

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
