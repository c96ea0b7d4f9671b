"""docs/kernel_methods.md runs as written, prints what it shows, and its agreements hold.

Every ```python block of the guide is executed in order in one namespace (as a reader
pasting them into one session would). A ```text block right after a code block is the
output the guide shows for it: the printed text must match, numbers within two units of
their last printed digit (other BLAS builds round differently), and numbers printed in
scientific notation — rounding-level errors such as 2e-11, whose value depends on the BLAS —
within a factor of 100. The tests below then assert the agreements the guide claims, on the
values the examples computed.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "kernel_methods.md"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def guide_blocks() -> list[tuple[str, str | None]]:
    """(code, shown output or None) for every python block, in order."""
    text = GUIDE.read_text()
    fences = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.DOTALL)
    blocks: list[tuple[str, str | None]] = []
    for language, body in fences:
        if language == "python":
            blocks.append((body, None))
        elif language == "text" and blocks and blocks[-1][1] is None:
            blocks[-1] = (blocks[-1][0], body)
    return blocks


def assert_same_output(printed: str, shown: str, code: str) -> None:
    printed_lines = [line.rstrip() for line in printed.strip().splitlines()]
    shown_lines = [line.rstrip() for line in shown.strip().splitlines()]
    assert len(printed_lines) == len(shown_lines), (code, printed)
    for got, want in zip(printed_lines, shown_lines, strict=True):
        assert NUMBER.sub("#", got) == NUMBER.sub("#", want), (got, want)
        for a, b in zip(NUMBER.findall(got), NUMBER.findall(want), strict=True):
            if "e" in b.lower():
                assert float(b) / 100 <= float(a) <= float(b) * 100, (got, want)
            else:
                decimals = len(b.split(".")[1]) if "." in b else 0
                assert abs(float(a) - float(b)) <= 2 * 10.0 ** -decimals + 1e-12, (got, want)


@pytest.fixture(scope="module")
def guide() -> dict:
    """Run the guide once; return its namespace."""
    namespace: dict = {"__name__": "kernel_methods_guide"}
    blocks = guide_blocks()
    assert len(blocks) >= 6
    for code, shown in blocks:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("error")  # the guide's examples run clean
            exec(compile(code, str(GUIDE), "exec"), namespace)
        if shown is not None:
            assert_same_output(buffer.getvalue(), shown, code)
    return namespace


def test_every_code_block_shows_its_output():
    # every example that prints has its output in the guide, so the numbers are checked
    blocks = guide_blocks()
    assert all(shown is not None for code, shown in blocks if "print(" in code)


def test_kernel_distance_examples(guide):
    assert guide["D"].shape == (500, 500) and guide["D"].max() <= np.sqrt(2)
    assert guide["exact_error"] <= guide["bound"] < 1e-3  # Nyström on every point: exact
    assert 1e-3 < guide["approx_error"] < 0.1    # 100 landmarks: an approximation
    assert guide["knn_accuracy"] > 0.9


def test_one_class_svm_agrees_with_the_exact_model(guide):
    assert guide["agreement"] >= 0.95
    assert guide["auc_exact"] > 0.9
    assert abs(guide["auc_approx"] - guide["auc_exact"]) < 0.02
    assert guide["auc_mean_distance"] > guide["auc_exact"]


def test_kernel_pca_agrees_with_sklearn(guide):
    # every point a landmark: equal to rounding, within the guide's Weyl / Davis-Kahan bounds
    assert guide["eigenvalue_error_all"] <= guide["eigenvalue_bound"] < 1e-4
    assert guide["projection_error_all"] <= guide["projection_bound"] < 1e-2
    assert guide["eigenvalue_error_100"] < 0.05
    assert guide["projection_correlation_100"].min() > 0.98


def test_nystroem_pre_images_denoise_as_kernel_pca(guide):
    noise = np.mean((guide["noisy_test"] - guide["clean_test"]) ** 2)
    kpca, errors = guide["kpca_error"], guide["nystroem_errors"]
    assert kpca < 0.4 * noise
    assert errors[(100, "all")] < 1.05 * kpca and errors[(300, "all")] < 1.02 * kpca
    assert errors[(100, "landmarks")] > 1.5 * kpca  # the same alpha fits it worse


def test_kernel_svm_and_svr_agree_with_libsvm(guide):
    assert guide["svc_accuracy"] > 0.85
    assert guide["approx_svc_accuracy"] > guide["svc_accuracy"] - 0.02
    assert guide["svc_agreement"] > 0.9
    assert guide["svr_r2"] > 0.85 and abs(guide["approx_svr_r2"] - guide["svr_r2"]) < 0.03


def test_kernel_cca_example(guide):
    assert guide["kcca"].canonical_correlations_[0] > 0.9
    assert guide["held_out"] > 0.95 > 0.2 > guide["linear_held_out"]
    scores = dict(zip(guide["search"].cv_results_["param_reg"],
                      guide["search"].cv_results_["mean_test_score"], strict=True))
    assert scores[1e-7] < 0.5 < 0.95 < scores[1e-5]  # overfitting without regularisation
    assert scores[10.0] < scores[1e-1] < scores[1e-3]  # and over-smoothing with too much
