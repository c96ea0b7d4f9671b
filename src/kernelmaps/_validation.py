"""Input validation at the boundary of every estimator (maps and models alike).

One function, :func:`validate_input`, wraps scikit-learn's ``validate_data`` (so the error
messages are those ``check_estimator`` expects) with the dtype policy — float32 kept,
everything else float64 — and turns scikit-learn's "could not convert string to float" into
an error that says what to do about text columns, and its text for NaN (which recommends
other models) into what to do about missing values: impute or drop them. An array of
another library (array API dispatch) keeps its namespace and device, with the same dtype
policy in its own dtypes; without dispatch, one NumPy cannot read gets an error naming
``array_api_dispatch``.
"""

from __future__ import annotations

from typing import Any

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
                   accept_sparse: str | bool = "csr", **check_params: Any) -> Any:
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
    **check_params
        Passed to ``validate_data`` (e.g. ``multi_output=True``).
    """
    check_convertible(X, type(estimator).__name__)
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
