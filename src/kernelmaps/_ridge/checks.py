"""α validation for every ridge in kernelmaps, written once: a clear ``ValueError`` naming the
parameter.

* :func:`check_alphas`: a grid of α to score (the α paths, ``tune``, ``compare``'s per-row
  choice);
* :func:`check_alpha`: one α, or one per target (``KernelRidge``, ``KernelRidgeClassifier``);
* :func:`check_fixed_alpha`: ``compare``'s ``alpha`` (``None``: choose per row);
* :func:`check_cv`: ``"loo"`` or a number of folds.

All three α checks share one definition of a valid α: finite and > 0.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

__all__ = ["check_alpha", "check_alphas", "check_cv", "check_fixed_alpha", "valid_alphas"]


def valid_alphas(values: np.ndarray) -> bool:
    """Whether every value of a float array is a valid ridge α: finite and positive."""
    return bool(np.all(np.isfinite(values)) and np.all(values > 0))


def check_alphas(alphas: Any, default: np.ndarray) -> np.ndarray:
    """``alphas`` (``None``: ``default``) as a sorted array of distinct positive floats."""
    values = np.asarray(default if alphas is None else alphas, dtype=np.float64)
    if values.ndim == 0:
        values = values.reshape(1)
    if values.ndim != 1 or values.size == 0 or not valid_alphas(values):
        raise ValueError(f"alphas must be a non-empty 1-D sequence of positive finite numbers; "
                         f"got {alphas!r}.")
    return np.unique(values)


def check_alpha(alpha: Any, n_targets: int, solver: str) -> np.ndarray:
    """``alpha`` as a 1-D float64 array of 1 or ``n_targets`` positive values; Nyström takes
    a single value (the preconditioner is built for one)."""
    values = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if values.ndim != 1 or values.size not in (1, n_targets) or not valid_alphas(values):
        raise ValueError(f"alpha must be a positive float or an array of {n_targets} positive "
                         f"values (one per target); got {alpha!r}.")
    if solver == "nystrom" and values.size > 1 and np.ptp(values) > 0:
        raise ValueError("solver='nystrom' takes a single alpha for all targets; fit one "
                         "model per alpha or use solver='exact'.")
    return values


def check_fixed_alpha(alpha: Any) -> float | None:
    """``None`` (choose α per row) or a positive finite number (``compare``'s ``alpha``)."""
    if alpha is None:
        return None
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.number)) \
            or not valid_alphas(np.asarray(alpha, dtype=np.float64)):
        raise ValueError(f"alpha must be None (choose ridge's alpha per row by leave-one-out) "
                         f"or a positive finite number such as 0.01; got {alpha!r}.")
    return float(alpha)


def check_cv(cv: Any) -> str | int:
    """``"loo"`` or a number of folds ``>= 2``."""
    if cv == "loo" and isinstance(cv, str):
        return cv
    if isinstance(cv, bool) or not isinstance(cv, Integral) or cv < 2:
        raise ValueError(f"cv must be 'loo' (closed-form leave-one-out) or an int >= 2 "
                         f"(folds); got {cv!r}.")
    return int(cv)
