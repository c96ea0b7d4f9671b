"""Comparisons "equal to rounding": what the suite asserts between two computations that are
the same mathematics but not the same machine arithmetic.

kernelmaps promises identical numbers only for the same call on the same arrays. Across row
blocks, thread counts, chunkings, memory addresses (a pickled and restored copy) and CPUs, BLAS
may sum a dot product in another order — OpenBLAS picks its kernels by CPU and by operand
alignment, and neither OpenBLAS nor MKL promises a row the same result whatever block it is in —
so the two results agree to rounding, not bit for bit. These helpers state how much rounding:

``assert_equal_to_rounding``
    floating-point outputs, to a stated number of units in the last place (ulps) of the
    output's scale; integer, boolean and string outputs (labels, indices) exactly;
``assert_labels_agree_where_decided``
    class labels or ±1 outlier flags, which may differ only where the decision behind them is a
    tie within rounding.

Every call site says in one line why its number of ulps bounds the rounding it compares.
"""

from __future__ import annotations

import numpy as np

from tests._helpers import dense

__all__ = ["assert_equal_to_rounding", "assert_labels_agree_where_decided", "decision_margin",
           "eps_of"]


def eps_of(a) -> float:
    """Machine epsilon of ``a``'s floating dtype (float64's for anything else)."""
    dtype = np.asarray(a).dtype
    return float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else 2.0 ** -52


def assert_equal_to_rounding(actual, expected, *, ulps: float, scale: float | None = None,
                             err_msg: str = "") -> None:
    """Assert ``|actual − expected| ≤ ulps · eps · scale`` element-wise.

    ``eps`` is the machine epsilon of ``expected``'s dtype (float32's for float32 outputs) and
    ``scale`` defaults to ``max |expected|`` (at least the smallest normal number), so ``ulps``
    counts units in the last place of the output's size, not of each entry: entries near zero
    carry the absolute rounding of the sums that produced them. Non-floating outputs (labels,
    indices) must be equal exactly. Dtypes and shapes must agree exactly.
    """
    actual, expected = dense(actual), dense(expected)
    assert actual.shape == expected.shape, f"{err_msg}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{err_msg}: dtype {actual.dtype} != {expected.dtype}"
    if not np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_equal(actual, expected, err_msg=err_msg)
        return
    if scale is None:
        scale = float(np.abs(expected).max(initial=0.0))
    eps = eps_of(expected)
    bound = ulps * eps * max(scale, float(np.finfo(expected.dtype).tiny))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=bound,
                               err_msg=f"{err_msg} (bound: {ulps} ulps of {scale:.3g})")


def decision_margin(decision) -> np.ndarray:
    """How far each row's decision is from a tie: |d| for one score per row (binary
    classifiers, outlier detectors' ``decision_function``), the gap between the two highest
    scores for one score per class."""
    decision = np.asarray(decision, dtype=np.float64)
    if decision.ndim == 1 or decision.shape[1] == 1:
        return np.abs(decision.reshape(-1))
    top_two = np.sort(decision, axis=1)[:, -2:]
    return top_two[:, 1] - top_two[:, 0]


def assert_labels_agree_where_decided(actual, expected, decision, *, ulps: float | None = None,
                                      tie: float | None = None, err_msg: str = "") -> int:
    """Labels agree on every row whose decision is not a tie within rounding.

    ``decision`` is the reference's decision values for the rows; a row may change label only
    where its :func:`decision_margin` is at most ``tie`` (given directly, or as ``ulps · eps ·
    max |decision|``): there the two computations may round the tie either way. Returns the
    number of such undecided rows.
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, err_msg
    decision = np.asarray(decision)
    if tie is None:
        assert ulps is not None, "give ulps or tie"
        tie = ulps * eps_of(decision) * float(np.abs(decision).max(initial=0.0))
    decided = decision_margin(decision) > tie
    np.testing.assert_array_equal(actual[decided], expected[decided], err_msg=err_msg)
    return int((~decided).sum())
