"""``kernelmaps check-kernel``: the Mercer check of the Gaussian kernel passes on every bundled
data set, unscaled, and its JSON report states the bound and the thresholds it used (the check
itself: tests/kernels/test_mercer.py)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_main

DATASETS = ("iris", "wine", "breast_cancer", "digits", "diabetes")


@pytest.mark.parametrize("dataset", DATASETS)
def test_check_kernel_passes_the_gaussian_on_every_bundled_data_set(dataset, capsys):
    code, out, err = run_main(capsys, "check-kernel", "--kernel", "rbf", "--data", dataset,
                              "--json")
    report = json.loads(out)
    assert code == 0 and report["passed"], (report, err)
    assert report["error_bound"].startswith("RBFKernel.rounding_error")
    # The ratio is the largest asymmetry over its tolerance: at most 1 when the check passes.
    assert 0 <= report["asymmetry_ratio"] <= 1 and report["tolerance"] > 0
    assert report["tolerance"] == pytest.approx(report["rounding_tolerance"]
                                                + report["eigensolver_tolerance"])
