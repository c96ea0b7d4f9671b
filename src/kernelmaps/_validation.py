"""Input validation at the boundary of every estimator (maps and models alike).

One function, :func:`validate_input`, wraps scikit-learn's ``validate_data`` (so the error
messages are those ``check_estimator`` expects) with the dtype policy — float32 kept,
everything else float64 — and turns scikit-learn's "could not convert string to float" into
an error that says what to do about text columns.
"""

from __future__ import annotations

from typing import Any

from sklearn.utils.validation import validate_data

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
    try:
        return validate_data(estimator, X, y, reset=reset, accept_sparse=accept_sparse,
                             dtype=list(FLOAT_DTYPES), **check_params)
    except ValueError as error:
        if "could not convert" in str(error) or "strings" in str(error):
            raise ValueError(
                f"X passed to {type(estimator).__name__} must be numeric, but it holds strings "
                f"({error}). Encode text or categorical columns first, e.g. with "
                "sklearn.preprocessing.OneHotEncoder."
            ) from error
        raise
