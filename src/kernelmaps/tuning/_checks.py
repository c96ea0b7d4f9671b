"""Argument checks shared by :mod:`~kernelmaps.tuning.ridge_path` and
:mod:`~kernelmaps.tuning.search`: a clear ``TypeError``/``ValueError`` naming the parameter."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["check_alphas", "check_bounds", "check_cv", "check_int", "check_real"]


def check_alphas(alphas: Any, default: np.ndarray) -> np.ndarray:
    """``alphas`` (``None``: ``default``) as a sorted array of distinct positive floats."""
    values = np.asarray(default if alphas is None else alphas, dtype=np.float64)
    if values.ndim == 0:
        values = values.reshape(1)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)) \
            or np.any(values <= 0):
        raise ValueError(f"alphas must be a non-empty 1-D sequence of positive finite numbers; "
                         f"got {alphas!r}.")
    return np.unique(values)


def check_int(name: str, value: Any, low: int) -> int:
    """An int (not a bool) ``>= low``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}; got {value!r}.")
    return int(value)


def check_real(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """A real number (not a bool) in the open interval (``low``, ``high``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number; got {type(value).__name__} {value!r}.")
    if not (low < value < high):
        bounds = f"in ({low:g}, {high:g})" if math.isfinite(high) else f"> {low:g}"
        raise ValueError(f"{name} must be {bounds}; got {value!r}.")
    return float(value)


def check_cv(cv: Any) -> str | int:
    """``"loo"`` or a number of folds ``>= 2``."""
    if cv == "loo" and isinstance(cv, str):
        return cv
    if isinstance(cv, bool) or not isinstance(cv, Integral) or cv < 2:
        raise ValueError(f"cv must be 'loo' (closed-form leave-one-out) or an int >= 2 "
                         f"(folds); got {cv!r}.")
    return int(cv)


def check_bounds(bounds: Any) -> tuple[float, float] | None:
    """``None`` or a pair ``0 < low <= high < inf`` (the γ search interval)."""
    if bounds is None:
        return None
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"gamma_bounds must be a pair (low, high) of numbers; got "
                        f"{bounds!r}.") from None
    if not (0 < low <= high < math.inf):
        raise ValueError(f"gamma_bounds must satisfy 0 < low <= high < inf; got {bounds!r}.")
    return low, high
