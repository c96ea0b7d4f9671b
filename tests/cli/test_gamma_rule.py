"""One γ rule for the main job: Python's compare and tune and both subcommands."""

import json

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import kernelmaps
from kernelmaps.evaluate import main_kernel, median_heuristic
from kernelmaps.kernels import RBFKernel
from tests.cli.conftest import run_main


def test_python_compare_scores_what_the_cli_scores_on_unscaled_breast_cancer(capsys, tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    table = kernelmaps.compare(X, y, methods=["nystroem"], n_components=[50], n_seeds=1,
                               n_jobs=1)
    code, out, err = run_main(capsys, "compare", "--data", "breast_cancer", "--methods",
                              "nystroem", "--n-components", "50", "--seeds", "1",
                              "--threads", "1", "--out", str(tmp_path / "r"), "--json")
    assert code == 0, err
    cli = {row["method"]: row["score"] for row in json.loads(out)["results"]}
    python = dict(zip(table["method"], table["score"], strict=True))
    assert python == pytest.approx(cli, abs=1e-9)  # JSON keeps 10 digits
    # γ = 1/d, the old Python default, scored the majority class (0.629) here.
    majority = np.bincount(y).max() / y.size
    assert python["exact"] > majority + 0.2
    assert "median heuristic" in table.attrs["settings"]["heuristic"]


def test_the_rule_sets_only_an_unset_scale():
    X, _ = load_breast_cancer(return_X_y=True)
    expected = median_heuristic(X, "rbf").value
    for kernel in ("rbf", "gaussian", RBFKernel()):
        resolved, choice = main_kernel(kernel, X)
        assert resolved.gamma == pytest.approx(expected) and choice.name == "gamma"
    user = RBFKernel()
    main_kernel(user, X)
    assert user.gamma is None  # the user's object is not changed
    for kernel, params in ((RBFKernel(gamma=0.5), None), (RBFKernel(sigma=2.0), None),
                           ("rbf", {"gamma": 0.5}), ("rbf", {"sigma": 2.0})):
        assert main_kernel(kernel, X, kernel_params=params)[1] is None
    assert main_kernel("linear", X)[1] is None


def test_the_rule_reads_the_data_as_scaled():
    X, _ = load_breast_cancer(return_X_y=True)
    from sklearn.preprocessing import StandardScaler
    scaled = median_heuristic(StandardScaler().fit_transform(X), "rbf").value
    assert main_kernel("rbf", X, scale="standard")[0].gamma == pytest.approx(scaled)


def test_python_tune_centres_its_search_on_the_same_rule():
    X, y = load_breast_cancer(return_X_y=True)
    result = kernelmaps.tune(X[:300], y[:300], n_components=32, random_state=0,
                             scale="none")
    assert result.heuristic == pytest.approx(
        main_kernel("rbf", X[:300], random_state=0)[1].value)
