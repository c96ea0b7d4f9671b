"""Argument checks of :func:`~kernelmaps.tune`: a clear ``TypeError``/``ValueError`` naming
the parameter (α and ``cv`` are checked by the ridge core's ``check_alphas``/``check_cv``,
re-exported here)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

from kernelmaps._ridge.checks import check_alphas, check_cv
from kernelmaps._suggest import did_you_mean
from kernelmaps.evaluate import METHODS, median_heuristic_parameter, methods_for
from kernelmaps.kernels import Kernel, resolve_kernel

__all__ = ["check_alphas", "check_bounds", "check_cv", "check_int", "check_kernel",
           "check_method", "check_real"]


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


#: Kernel scale parameters the search can set (``alpha`` of the student kernel would collide
#: with ridge's α in ``params``).
_SCALES = ("gamma", "length_scale")


def check_kernel(kernel: Any) -> tuple[Kernel, str]:
    """``(the kernel resolved, the name of the scale parameter tune searches)``."""
    resolved = resolve_kernel(kernel, owner="tune")
    scale = median_heuristic_parameter(resolved)
    if scale not in _SCALES:
        raise ValueError(
            f"tune searches a kernel's scale ({' or '.join(_SCALES)}) around the median "
            f"heuristic; the {resolved.name!r} kernel has none it can search. Use one of "
            "'rbf', 'laplacian', 'chi2', 'poly', 'sigmoid', 'matern', or GridSearchCV "
            "(kernel objects take set_params).")
    return resolved, scale


def check_method(method: Any, kernel: Kernel) -> str:
    """A method of the registry that approximates ``kernel``."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a method name (str); got {type(method).__name__}.")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}{did_you_mean(method, METHODS)}; valid "
                         f"methods are {sorted(METHODS)}.")
    if not METHODS[method].supports(kernel):
        raise ValueError(f"method {method!r} does not approximate the {kernel.name!r} kernel; "
                         f"methods for it: {methods_for(kernel)}.")
    return method

