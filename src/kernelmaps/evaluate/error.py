r"""How close is a feature map's Gram matrix to the exact kernel matrix?

:func:`relative_error` compares one Gram matrix :math:`ZZ^\top` with :math:`K`;
:func:`approximation_error` measures a feature map on a random subsample over several seeds,
with a Student-t confidence interval (:class:`ApproximationError`). The exact kernel is the
one the fitted map approximates (its ``kernel_`` attribute) unless the caller names another;
a name, a :class:`~kernelmaps.kernels.Kernel` or a vectorised callable ``k(X, Y)`` is turned
into a Kernel by :func:`kernelmaps.kernels.resolve_kernel`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from scipy import stats
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from kernelmaps._suggest import did_you_mean
from kernelmaps.kernels import Kernel, PrecomputedKernel, resolve_kernel

__all__ = ["ApproximationError", "KernelLike", "Metric", "approximation_error", "relative_error"]

Metric = Literal["fro", "spectral", "max"]
_METRICS = ("fro", "spectral", "max")
#: A kernel as the error tools accept it: a name, a Kernel, or a vectorised k(X, Y) -> matrix.
KernelLike = str | Kernel | Callable[[Any, Any], Any]


def _user_kernel(kernel: KernelLike) -> Kernel:
    """The exact kernel the caller named, as a Kernel (a callable is vectorised)."""
    exact = resolve_kernel(kernel, vectorized=True, owner="approximation_error")
    if isinstance(exact, PrecomputedKernel):
        raise ValueError(
            "kernel='precomputed' gives no kernel to evaluate on the rows of X; pass a kernel "
            "name, a kernelmaps.kernels.Kernel or a vectorised callable k(X, Y) -> matrix."
        )
    return exact


def _map_kernel(fitted_map: Any) -> Kernel:
    """The kernel a fitted map approximates: its public ``kernel_`` attribute."""
    exact = getattr(fitted_map, "kernel_", None)
    if not isinstance(exact, Kernel):
        raise TypeError(
            f"{type(fitted_map).__name__} has no kernel_ attribute (the kernel a fitted "
            "kernelmaps map approximates); pass the exact kernel as kernel= (a kernel name, "
            "a kernelmaps.kernels.Kernel or a vectorised callable k(X, Y) -> matrix)."
        )
    if isinstance(exact, PrecomputedKernel):
        raise ValueError(
            f"{type(fitted_map).__name__}(kernel='precomputed') is given kernel values, not "
            "points, so there is no kernel to evaluate: pass the kernel as kernel=."
        )
    return exact


def kernel_matrix(kernel: Kernel, X: Any) -> np.ndarray:
    """The exact kernel matrix :math:`k(X, X)` in float64."""
    return np.asarray(kernel(X), dtype=np.float64)


def relative_error(K: Any, Z: Any, metric: Metric = "fro") -> float:
    r"""Relative error of the Gram matrix of features ``Z`` against the kernel matrix ``K``.

    .. math::

        \frac{\|K - ZZ^\top\|}{\|K\|}, \qquad \|\cdot\| \in
        \{\text{Frobenius } (\texttt{fro}),\ \text{spectral},\ \max_{ij}|\cdot|\ (\texttt{max})\}.

    The spectral norm is the largest singular value (so a non-symmetric user kernel is
    measured correctly too).

    Parameters
    ----------
    K : array-like of shape (n, n)
        Exact kernel matrix.
    Z : {array-like, sparse matrix} of shape (n, D)
        Features of the same n points.
    metric : {'fro', 'spectral', 'max'}, default='fro'
        The matrix norm.

    Returns
    -------
    float
        The relative error.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import relative_error
    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> relative_error(Z @ Z.T, Z), relative_error(np.eye(2), 0.5 * Z)
    (0.0, 0.75)
    """
    _check_metric(metric)
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    K = np.asarray(K, dtype=np.float64)
    Z = Z.astype(np.float64, copy=False)
    difference = K - Z @ Z.T
    if metric == "fro":
        numerator, denominator = np.linalg.norm(difference), np.linalg.norm(K)
    elif metric == "spectral":
        numerator, denominator = np.linalg.norm(difference, 2), np.linalg.norm(K, 2)
    else:
        numerator, denominator = np.abs(difference).max(), np.abs(K).max()
    if not denominator > 0:
        raise ValueError(
            "The exact kernel matrix on the sample is zero, so a relative error is undefined; "
            "check the kernel parameters or the data (e.g. all-zero rows)."
        )
    if not np.isfinite(numerator):
        raise ValueError("The feature map's Gram matrix is not finite; check the map's input.")
    return float(numerator / denominator)


def _check_metric(metric: str) -> None:
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {list(_METRICS)}; got {metric!r}"
                         f"{did_you_mean(metric, _METRICS)}.")


def _t_interval(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    r"""Mean and a log-scale Student-t confidence interval of a positive quantity.

    The interval is computed on the log scale and exponentiated,
    :math:`\exp(\overline{\log e} \pm t_{n-1} s_{\log e}/\sqrt{n})` (an interval for the
    geometric mean), so it is never below zero and is symmetric on a log axis; the point
    estimate returned is the arithmetic mean. If some values are zero (a map exact on some
    seeds) the log is undefined: the interval is then ``[0, mean + t s/sqrt(n)]``. Collapses
    to the mean for < 2 values or no spread.
    """
    data = np.asarray(values, dtype=np.float64)
    mean = float(data.mean())
    if data.size < 2 or np.ptp(data) == 0:
        return mean, mean, mean
    t = stats.t.ppf(0.5 + confidence / 2, df=data.size - 1) / math.sqrt(data.size)
    if data.min() <= 0:
        return mean, 0.0, float(mean + t * data.std(ddof=1))
    logs = np.log(data)
    center, half = float(logs.mean()), float(t * logs.std(ddof=1))
    with np.errstate(over="ignore", under="ignore"):
        return mean, float(np.exp(center - half)), float(np.exp(center + half))


@dataclass(frozen=True)
class ApproximationError:
    """Result of :func:`approximation_error`.

    Attributes
    ----------
    metric : str
        ``'fro'``, ``'spectral'`` or ``'max'``.
    mean : float
        Mean relative error over the seeds.
    ci_low : float
        Lower end of the log-scale Student-t confidence interval (of the geometric mean,
        never below zero) at level ``confidence``; equal to ``mean`` for a deterministic
        map (or a single seed).
    ci_high : float
        Upper end of that interval.
    values : tuple of float
        The error of each seed.
    seeds : tuple of int or None
        The ``random_state`` given to each fitted copy (``(None,)``: deterministic map or the
        map as fitted).
    confidence : float
        Level of the interval.
    n_samples : int
        Rows of the subsample the matrices were compared on.
    """

    metric: str
    mean: float
    ci_low: float
    ci_high: float
    values: tuple[float, ...]
    seeds: tuple[int | None, ...]
    confidence: float
    n_samples: int

    def __str__(self) -> str:
        if self.ci_low == self.ci_high:
            spread = "deterministic" if len(self.values) == 1 else "no spread"
        else:
            spread = (f"{self.confidence:.0%} CI {self.ci_low:.4g}–{self.ci_high:.4g}, "
                      f"{len(self.values)} seeds")
        return f"{self.mean:.4g} ({spread}; {self.metric} norm on {self.n_samples} rows)"


def _is_randomized(feature_map: Any) -> bool:
    return "random_state" in feature_map.get_params(deep=False)


def _seed_values(rng: np.random.RandomState, n: int) -> list[int]:
    return [int(s) for s in rng.randint(0, np.iinfo(np.int32).max, size=n)]


def approximation_error(
    feature_map: Any,
    X: Any,
    kernel: KernelLike | None = None,
    *,
    metric: Metric = "fro",
    sample: int | None = 1000,
    n_seeds: int | None = None,
    refit: bool = True,
    confidence: float = 0.95,
    random_state: Any = None,
) -> ApproximationError:
    r"""Relative error of a feature map's Gram matrix against the exact kernel.

    ``sample`` rows :math:`S` of ``X`` are drawn at random once; for each seed a copy of
    the map (with that ``random_state``) is fitted on all of ``X`` and the error

    .. math::

        e = \frac{\|K_{SS} - Z_S Z_S^\top\|}{\|K_{SS}\|}

    is measured (see :func:`relative_error`). The seeds vary only the map's randomness, so the
    interval is the map's own variability. Deterministic maps (no ``random_state``
    parameter) are fitted once and the interval collapses to the value.

    Parameters
    ----------
    feature_map : estimator
        A feature map (kernelmaps or any transformer with ``fit``/``transform``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Data the map is fitted on and evaluated on.
    kernel : str, Kernel or callable, default=None
        The exact kernel (resolved by :func:`~kernelmaps.kernels.resolve_kernel`;
        a callable is vectorised, ``k(X, Y) -> matrix``). ``None``: the kernel the
        fitted map approximates, its ``kernel_``.
    metric : {'fro', 'spectral', 'max'}, default='fro'
        The matrix norm.
    sample : int or None, default=1000
        Rows compared (the exact matrix costs O(sample²) memory); ``None``: all rows.
    n_seeds : int or None, default=None
        Fitted copies; ``None`` means 5 for a randomised map and 1 otherwise.
    refit : bool, default=True
        ``False`` measures ``feature_map`` as already fitted (one value; ``n_seeds`` must
        then be ``None`` or 1).
    confidence : float, default=0.95
        Level of the Student-t interval of the mean over seeds.
    random_state : int, RandomState instance or None, default=None
        Controls the subsample and the seeds.

    Returns
    -------
    ApproximationError
        The error over the seeds, with its confidence interval.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.evaluate import approximation_error
    >>> X = np.random.RandomState(0).normal(size=(200, 5))
    >>> result = approximation_error(RBFSampler(gamma=0.2, n_components=300), X,
    ...                              n_seeds=3, random_state=0)
    >>> 0 < result.ci_low <= result.mean <= result.ci_high < 0.2
    True
    """
    _check_metric(metric)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}.")
    if sample is not None and (not isinstance(sample, (int, np.integer)) or sample < 2):
        raise ValueError(f"sample must be an int >= 2 or None; got {sample!r}.")
    if n_seeds is not None and (not isinstance(n_seeds, (int, np.integer)) or n_seeds < 1):
        raise ValueError(f"n_seeds must be a positive int or None; got {n_seeds!r}.")
    if not refit and n_seeds not in (None, 1):
        raise ValueError(
            f"refit=False measures the map as fitted, which is one draw; n_seeds={n_seeds} "
            "needs refit=True (a fitted copy per seed)."
        )
    exact = None if kernel is None else _user_kernel(kernel)
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], input_name="X")
    if exact is not None:
        exact = exact.resolve(X)  # gamma="scale": on all of X, before the sample is drawn
    rng = check_random_state(random_state)
    n = X.shape[0]
    rows = np.arange(n) if sample is None or sample >= n else np.sort(
        rng.choice(n, size=sample, replace=False))
    X_sample = X[rows]

    if not refit:
        check_is_fitted(feature_map)
        fitted, seeds = [feature_map], [None]
    else:
        randomized = _is_randomized(feature_map)
        count = (5 if randomized else 1) if n_seeds is None else (n_seeds if randomized else 1)
        seeds = _seed_values(rng, count) if randomized else [None]
        fitted = []
        for seed in seeds:
            copy = clone(feature_map)
            if seed is not None:
                copy.set_params(random_state=seed)
            fitted.append(copy.fit(X))
    K = kernel_matrix(_map_kernel(fitted[0]) if exact is None else exact, X_sample)
    values = [relative_error(K, fm.transform(X_sample), metric) for fm in fitted]
    mean, low, high = _t_interval(values, confidence)
    return ApproximationError(metric=metric, mean=mean, ci_low=low, ci_high=high,
                              values=tuple(values), seeds=tuple(seeds),
                              confidence=confidence, n_samples=len(rows))
