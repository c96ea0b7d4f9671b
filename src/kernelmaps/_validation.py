"""Input validation at the boundary of every estimator (maps and models alike).

One function, :func:`validate_input`, wraps scikit-learn's ``validate_data`` (so the error
messages are those ``check_estimator`` expects) with the dtype policy — float32 kept,
everything else float64 — and turns scikit-learn's "could not convert string to float" into
an error that says what to do about text columns, and its text for NaN (which recommends
other models) into what to do about missing values: impute or drop them. An array of
another library (array API dispatch) keeps its namespace and device, with the same dtype
policy in its own dtypes; without dispatch, one NumPy cannot read gets an error naming
``array_api_dispatch``. Targets get the same care: a regressor's text labels are refused
naming the classifier to use, and non-finite targets with their count, rows and the fix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from kernelmaps._array_api import (
    check_convertible,
    float_dtypes,
    is_device_array,
    namespace_and_device,
)
from kernelmaps._engine import FLOAT_DTYPES

__all__ = ["validate_input"]


def validate_input(estimator: Any, X: Any, y: Any = "no_validation", *, reset: bool,
                   accept_sparse: str | bool = "csr", classifier: str | None = None,
                   **check_params: Any) -> Any:
    """``validate_data`` with the dtype policy and a clear message for text input.

    Parameters
    ----------
    estimator : estimator
        The estimator at whose boundary ``X`` arrives (sets/checks ``n_features_in_``).
    X : array-like or sparse matrix
    y : array-like, default="no_validation"
        Targets to validate with ``X`` (then ``(X, y)`` is returned).
    reset : bool
        ``True`` in ``fit``; ``False`` afterwards (checks the number of features).
    accept_sparse : str or bool, default="csr"
    classifier : str, default=None
        A regressor's classifier twin (``"KernelRidgeClassifier"``), named when ``y`` holds
        text labels.
    **check_params
        Passed to ``validate_data`` (e.g. ``multi_output=True``).
    """
    check_convertible(X, type(estimator).__name__)
    if check_params.get("y_numeric") and not _is_array_like_other(y):
        _check_numeric_targets(type(estimator).__name__, y, classifier)
    dtypes = float_dtypes(*namespace_and_device(X)) if is_device_array(X) \
        else list(FLOAT_DTYPES)
    try:
        return validate_data(estimator, X, y, reset=reset, accept_sparse=accept_sparse,
                             dtype=dtypes, **check_params)
    except ValueError as error:
        if "could not convert" in str(error) or "strings" in str(error):
            raise ValueError(
                f"X passed to {type(estimator).__name__} must be numeric, but it holds strings "
                f"({error}). Encode text or categorical columns first, e.g. with "
                "sklearn.preprocessing.OneHotEncoder."
            ) from error
        if str(error).startswith("Input y contains") and not _is_array_like_other(y):
            raise ValueError(_non_finite_targets(type(estimator).__name__, y, error)) \
                from error
        if "does not accept missing values" in str(error):
            # scikit-learn's text recommends its HistGradientBoosting models: not what a
            # user of a kernel map does. Its first line ("Input X contains NaN.") is kept.
            name = type(estimator).__name__
            raise ValueError(
                f"{str(error).splitlines()[0]} {name} does not accept missing values: impute "
                f"them (make_pipeline(SimpleImputer(), {name}(), ...), with "
                "sklearn.impute.SimpleImputer) or drop the rows that hold them."
            ) from error
        raise


def _is_array_like_other(y: Any) -> bool:
    """No targets, sparse targets or a device array: left to ``validate_data`` as they are."""
    return (isinstance(y, str) and y == "no_validation") or y is None or sp.issparse(y) \
        or is_device_array(y)


def _check_numeric_targets(name: str, y: Any, classifier: str | None) -> None:
    """Refuse text targets of a regressor before scikit-learn's bare "could not convert"."""
    values = np.asarray(y)
    if values.dtype.kind not in "USO":
        return
    try:
        values.astype(np.float64)
    except (TypeError, ValueError):
        labels = np.unique(values.astype(str).ravel())
        shown = ", ".join(repr(str(label)) for label in labels[:5])
        more = f" and {labels.size - 5} more" if labels.size > 5 else ""
        use = (f"use {classifier} (the same parameters)" if classifier
               else "encode them as numbers")
        raise ValueError(
            f"y passed to {name} must hold numbers (it is a regressor), but it holds text "
            f"labels ({shown}{more}). For class labels, {use}; for numeric targets "
            "stored as text, convert them first (e.g. y.astype(float)).") from None


def _non_finite_targets(name: str, y: Any, error: ValueError) -> str:
    """scikit-learn's "Input y contains NaN." with how many, in which rows, and the fix."""
    first = str(error).splitlines()[0]
    try:
        values = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return f"{first} Targets passed to {name} must be finite."
    bad = ~np.isfinite(values)
    rows = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1)) if bad.ndim else []
    shown = ", ".join(str(row) for row in rows[:5]) + (", ..." if len(rows) > 5 else "")
    return (f"{first} y passed to {name} holds {int(bad.sum())} non-finite value(s) (NaN or "
            f"infinity) in {len(rows)} of its {values.shape[0]} rows "
            f"(row{'s' if len(rows) > 1 else ''} {shown}); the targets must be finite. Drop "
            "those rows (keep = np.isfinite(y), .all(axis=1) for a 2-D y; then X[keep], "
            "y[keep]) or impute the targets first.")
