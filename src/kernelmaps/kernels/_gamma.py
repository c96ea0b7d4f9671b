r"""Data-dependent ``gamma``: scikit-learn's ``"scale"`` and ``"auto"``, resolved once on the
training data.

``gamma="scale"``
    :math:`\gamma = 1 / (d\,\operatorname{Var} X)`, the variance taken over every entry of
    the ``(n, d)`` training array — for sparse X :math:`\overline{X^2} - \bar X^2` — and
    :math:`\gamma = 1` when that variance is 0: exactly :class:`sklearn.svm.SVC`'s
    definition (scikit-learn ≥ 0.22). It makes :math:`\gamma\|x-y\|^2` of order one for
    typical pairs whatever the units of the features.
``gamma="auto"``
    :math:`\gamma = 1 / d`, scikit-learn's older default.

A kernel or estimator resolves these once, in ``fit``, on the whole training array
(:meth:`kernelmaps.kernels.Kernel.resolve`; a Dask array through Dask's own reductions):
kernel values computed block by block must all use one γ.

With sample weights (the kernel machines' ``fit(X, y, sample_weight)``) the variance is the
weighted one, each row's entries counting with its weight, so that a weight of 2 is a repeated
row (scikit-learn's sample-weight contract); without weights it is exactly ``X.var()``.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._array_api import is_device_array, namespace_and_device, to_numpy
from kernelmaps._engine import collection_handler, is_dask_collection
from kernelmaps._suggest import did_you_mean

__all__ = ["GAMMA_HEURISTICS", "check_gamma_heuristic", "data_variance", "gamma_constraints",
           "gamma_value", "is_gamma_heuristic"]

#: The strings accepted for ``gamma`` (besides numbers), as in :class:`sklearn.svm.SVC`.
GAMMA_HEURISTICS: frozenset[str] = frozenset({"scale", "auto"})


def gamma_constraints(*, allow_zero: bool = False, allow_none: bool = True) -> list[Any]:
    """Return the scikit-learn parameter constraints of an estimator's ``gamma``.

    One definition, so every estimator accepts the same strings.

    Parameters
    ----------
    allow_zero : bool, default=False
        Whether 0 is accepted besides positive numbers.
    allow_none : bool, default=True
        Whether None is accepted.

    Returns
    -------
    list
        The constraints: ``"scale"``, ``"auto"``, a positive number (or 0) and, with
        ``allow_none``, None.

    Examples
    --------
    >>> from kernelmaps.kernels import gamma_constraints
    >>> class Smoother:  # a scikit-learn estimator would put this in _parameter_constraints
    ...     _parameter_constraints = {"gamma": gamma_constraints()}
    >>> sorted(gamma_constraints()[0].options)
    ['auto', 'scale']
    """
    interval = Interval(Real, 0.0, None, closed="left" if allow_zero else "neither")
    return [StrOptions(set(GAMMA_HEURISTICS)), interval, *([None] if allow_none else [])]


def is_gamma_heuristic(gamma: Any) -> bool:
    """Whether ``gamma`` is one of the strings resolved on the data (``"scale"``, ``"auto"``)."""
    return isinstance(gamma, str) and gamma in GAMMA_HEURISTICS


def check_gamma_heuristic(gamma: Any, owner: str) -> None:
    """Refuse a string ``gamma`` other than ``"scale"``/``"auto"``, suggesting the close one."""
    if isinstance(gamma, str) and gamma not in GAMMA_HEURISTICS:
        raise ValueError(
            f"{owner}: gamma={gamma!r} is not a number, 'scale' or 'auto'"
            f"{did_you_mean(gamma, sorted(GAMMA_HEURISTICS))}. 'scale' is "
            "1 / (n_features * X.var()), 'auto' is 1 / n_features."
        )


def data_variance(X: Any, sample_weight: Any = None) -> float:
    r"""The variance of all entries of ``X``, as :class:`sklearn.svm.SVC` computes it.

    Dense NumPy: ``X.var()`` (in X's dtype, as scikit-learn); sparse:
    ``X.multiply(X).mean() - X.mean() ** 2``; an array-API array: ``xp.var`` on its device;
    a Dask array: Dask's own tree reductions (in float64), through the handler
    :mod:`kernelmaps.distributed` registers.

    With ``sample_weight`` (one per row): :math:`\sum_i w_i \sum_j (x_{ij}-\mu)^2 /
    (d\sum_i w_i)` about the weighted mean :math:`\mu`, so integer weights equal repeated
    rows (sparse: :math:`\overline{X^2}_w - \mu^2`).
    """
    if is_dask_collection(X):
        return float(collection_handler("variance")(X, sample_weight))
    if sample_weight is not None:
        return _weighted_variance(X, sample_weight)
    if sp.issparse(X):
        return float(X.multiply(X).mean() - X.mean() ** 2)
    if is_device_array(X):
        xp, _ = namespace_and_device(X)
        return float(xp.var(X))
    return float(np.asarray(X).var())


def _weighted_variance(X: Any, sample_weight: Any) -> float:
    """The variance of all entries with row weights (host float64; a device array is read
    once, as two row reductions)."""
    if is_device_array(X):
        xp, _ = namespace_and_device(X)
        rows, squares = xp.mean(X, axis=1), xp.mean(X * X, axis=1)
        rows, squares = to_numpy(rows), to_numpy(squares)
        weights = np.asarray(to_numpy(sample_weight), dtype=np.float64)
        mean = np.average(rows, weights=weights)
        return float(max(np.average(squares, weights=weights) - mean ** 2, 0.0))
    weights = np.asarray(sample_weight, dtype=np.float64).ravel()
    if sp.issparse(X):
        rows = np.asarray(X.mean(axis=1), dtype=np.float64).ravel()
        squares = np.asarray(X.multiply(X).mean(axis=1), dtype=np.float64).ravel()
        mean = np.average(rows, weights=weights)
        return float(np.average(squares, weights=weights) - mean ** 2)
    X = np.asarray(X)
    mean = np.average(X.mean(axis=1, dtype=np.float64), weights=weights)
    # Two passes about the mean (no cancellation), as X.var() does.
    return float(np.average(((X - mean) ** 2).mean(axis=1), weights=weights))


def gamma_value(gamma: Any, X: Any, sample_weight: Any = None) -> Any:
    r"""Replace ``gamma="scale"`` or ``"auto"`` by its value on the training data.

    ``"scale"`` is :math:`1/(d\,\operatorname{Var} X)` (1 if the variance is 0) and
    ``"auto"`` :math:`1/d`, scikit-learn's definitions (:class:`sklearn.svm.SVC`).

    Parameters
    ----------
    gamma : float, {'scale', 'auto'} or None
        The parameter as the user gave it.
    X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        The training data.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Row weights: the variance counts each row with its weight (see
        ``data_variance``).

    Returns
    -------
    float or None
        The value of ``"scale"``/``"auto"`` on ``X``; anything else (a number, None) comes
        back as it was.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import gamma_value

    >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])  # Var X = 1, 2 features
    >>> gamma_value("scale", X), gamma_value("auto", X), gamma_value(0.3, X)
    (0.5, 0.5, 0.3)
    >>> gamma_value("scale", np.ones((3, 2)))  # no variance: 1, as SVC
    1.0
    """
    if not is_gamma_heuristic(gamma):
        return gamma
    n_features = X.shape[1]
    if gamma == "auto":
        return 1.0 / n_features
    variance = data_variance(X, sample_weight)
    if not math.isfinite(variance):
        raise ValueError(f"gamma={gamma!r} is 1 / (n_features · Var X), but X contains NaN or "
                         "infinity (or its variance overflows): clean or rescale X, or give "
                         "gamma as a number.")
    return 1.0 / (n_features * variance) if variance != 0 else 1.0

