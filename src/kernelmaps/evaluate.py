r"""How good is an approximation? Kernel error and learning results, next to the exact kernel.

Three layers, each usable on its own:

:func:`approximation_error`
    the relative error of the Gram matrix :math:`ZZ^\top` of a feature map against the exact
    kernel matrix :math:`K` on a random subsample, over several random seeds, with a
    confidence interval;
:func:`compare`
    maps × output dimensions × seeds, each fitted on a training split and followed by the same
    linear model, next to the exact-kernel model: a tidy :class:`pandas.DataFrame` (error,
    test score, fit and transform time, peak memory), summarised by :func:`summarize`;
:func:`plot_error`, :func:`plot_score`, :func:`plot_pareto`
    the three views of that table (matplotlib).

Which maps :func:`compare` can run is the method registry :data:`METHODS`: a name, how to
build the map for a kernel and an output dimension, and which kernels it approximates. A new
map plugs in with one :func:`register_method` call. Which kernel a fitted map approximates is
:func:`kernel_of` (extended with :func:`register_kernel_of`).

This module sits above ``kernels`` and ``maps`` and imports only from them (and
scikit-learn's linear models); pandas and matplotlib (the ``cli`` extra) are imported only by
the functions that need them.
"""

from __future__ import annotations

import functools
import math
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp
from scipy import stats
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.metrics.pairwise import additive_chi2_kernel
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.svm import LinearSVC, LinearSVR
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted

from kernelmaps.kernels import Kernel, get_kernel, resolve_kernel
from kernelmaps.maps import (
    AdditiveChi2Sampler,
    ArcCosineSampler,
    Nystroem,
    PolynomialCountSketch,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    SkewedChi2Sampler,
    TensorSRHT,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "EXACT_AUTO_MAX_TRAIN",
    "EXACT_MAX_TRAIN",
    "MAX_AUTO_CLASSES",
    "METHODS",
    "MODELS",
    "ApproximationError",
    "Method",
    "ParameterChoice",
    "approximation_error",
    "compare",
    "kernel_of",
    "median_heuristic",
    "median_heuristic_parameter",
    "methods_for",
    "pareto_front",
    "plot_error",
    "plot_pareto",
    "plot_score",
    "register_kernel_of",
    "register_method",
    "relative_error",
    "summarize",
]

Metric = Literal["fro", "spectral", "max"]
_METRICS = ("fro", "spectral", "max")
#: A kernel as the error tools accept it: a name, a Kernel, or a vectorised k(X, Y) -> matrix.
KernelLike = str | Kernel | Callable[[Any, Any], Any]

#: ``exact="auto"`` runs the exact-kernel baseline up to this many training rows. The
#: baseline eigen-decomposes the n × n training kernel matrix (O(n³) time, a few n × n
#: float64 arrays): at 3,000 rows that is ~0.3 GB and a few seconds on 2 cores.
EXACT_AUTO_MAX_TRAIN = 3000
#: Even with ``exact=True`` the baseline is refused above this many training rows: its
#: n × n matrices would need > 12 GB and the eigen-decomposition hours on a laptop.
EXACT_MAX_TRAIN = 20000


# =========================================================================== kernel of a map
_KERNEL_OF: dict[type, Callable[[Any], Any]] = {}


def register_kernel_of(map_class: type, kernel_from_map: Callable[[Any], Any]) -> None:
    """Teach :func:`kernel_of` which kernel instances of ``map_class`` approximate.

    Parameters
    ----------
    map_class : type
        A feature-map class (subclasses are covered too).
    kernel_from_map : callable
        ``kernel_from_map(feature_map) -> Kernel`` (or a vectorised callable ``k(X, Y)``).
    """
    _KERNEL_OF[map_class] = kernel_from_map


def kernel_of(feature_map: Any) -> Kernel | Callable[[Any, Any], Any]:
    """The exact kernel that ``feature_map`` approximates, built from its parameters.

    Parameters
    ----------
    feature_map : estimator
        A kernelmaps feature map, fitted or not (``RBFSampler(gamma='scale')`` must be
        fitted: its gamma depends on the training data).

    Returns
    -------
    Kernel or callable
        A :class:`~kernelmaps.kernels.Kernel`; for a ``Nystroem`` with a user callable
        kernel, a vectorised ``k(X, Y)`` evaluating that callable.

    Raises
    ------
    TypeError
        For a map kernelmaps does not know; pass the kernel explicitly instead.
    ValueError
        When the kernel cannot be known from the map alone (``kernel='precomputed'``, an
        unfitted ``gamma='scale'``).

    Examples
    --------
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.evaluate import kernel_of
    >>> kernel_of(RBFSampler(gamma=0.5))
    RBFKernel(gamma=0.5, sigma=None)
    """
    for cls in type(feature_map).__mro__:
        if cls in _KERNEL_OF:
            return _KERNEL_OF[cls](feature_map)
    raise TypeError(
        f"kernelmaps does not know which kernel {type(feature_map).__name__} approximates; "
        "pass it as kernel= (a kernel name, a kernelmaps.kernels.Kernel or a vectorised "
        "callable k(X, Y) -> matrix)."
    )


def _nystroem_kernel(feature_map: Nystroem) -> Any:
    if isinstance(feature_map.kernel, str) and feature_map.kernel == "precomputed":
        raise ValueError(
            "Nystroem(kernel='precomputed') is given kernel values, not points, so there is no "
            "kernel to evaluate: pass the kernel as kernel=."
        )
    return feature_map._resolve_kernel()


def _rbf_sampler_kernel(feature_map: RBFSampler) -> Kernel:
    if isinstance(feature_map.gamma, str):
        if not hasattr(feature_map, "random_weights_"):
            raise ValueError(
                "RBFSampler(gamma='scale') sets gamma from the training data: fit the map "
                "first, or pass kernel=."
            )
        return get_kernel("rbf", gamma=float(feature_map._gamma))
    return get_kernel("rbf", gamma=feature_map.gamma)


register_kernel_of(Nystroem, _nystroem_kernel)
register_kernel_of(RBFSampler, _rbf_sampler_kernel)
register_kernel_of(PolynomialCountSketch, lambda fm: get_kernel(
    "poly", gamma=fm.gamma, degree=fm.degree, coef0=fm.coef0))
register_kernel_of(AdditiveChi2Sampler, lambda fm: get_kernel("additive_chi2_psd"))
register_kernel_of(SkewedChi2Sampler, lambda fm: get_kernel(
    "skewed_chi2", skewedness=fm.skewedness))
register_kernel_of(RandomFourierFeatures, lambda fm: resolve_kernel(
    fm.kernel, gamma=fm.gamma, kernel_params=fm.kernel_params))
register_kernel_of(ArcCosineSampler, lambda fm: get_kernel("arccos", degree=fm.degree))
register_kernel_of(TensorSRHT, lambda fm: get_kernel(
    "poly", gamma=fm.gamma, degree=fm.degree, coef0=fm.coef0))
register_kernel_of(RandomMaclaurin, lambda fm: get_kernel("exponential", gamma=fm.gamma)
                   if fm.kernel == "exponential" else
                   get_kernel("poly", gamma=fm.gamma, degree=fm.degree, coef0=fm.coef0))


def _as_kernel(kernel: KernelLike) -> Kernel | Callable[[Any, Any], Any]:
    if isinstance(kernel, str):
        return get_kernel(kernel)
    if isinstance(kernel, Kernel) or callable(kernel):
        return kernel
    raise TypeError(
        f"kernel must be a kernel name, a kernelmaps.kernels.Kernel or a callable k(X, Y); "
        f"got {kernel!r}."
    )


def _gram(kernel: Kernel | Callable[[Any, Any], Any], X: Any) -> np.ndarray:
    """The exact kernel matrix k(X, X) in float64."""
    K = kernel(X) if isinstance(kernel, Kernel) else kernel(X, X)
    K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    if K.shape != (X.shape[0], X.shape[0]):
        raise ValueError(f"kernel(X, X) must return an (n, n) matrix; got shape {K.shape}.")
    return K


# =========================================================================== error measures
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

    Returns
    -------
    float
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
        raise ValueError(f"metric must be one of {list(_METRICS)}; got {metric!r}.")


def _t_interval(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of the mean (collapses for < 2 values)."""
    data = np.asarray(values, dtype=np.float64)
    mean = float(data.mean())
    if data.size < 2 or np.ptp(data) == 0:
        return mean, mean, mean
    half = stats.t.ppf(0.5 + confidence / 2, df=data.size - 1) * data.std(ddof=1)
    half /= math.sqrt(data.size)
    return mean, float(mean - half), float(mean + half)


@dataclass(frozen=True)
class ApproximationError:
    """Result of :func:`approximation_error`.

    Attributes
    ----------
    metric : str
        ``'fro'``, ``'spectral'`` or ``'max'``.
    mean : float
        Mean relative error over the seeds.
    ci_low, ci_high : float
        Student-t confidence interval of the mean at level ``confidence``; equal to ``mean``
        for a deterministic map (or a single seed).
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
        The exact kernel. ``None``: the kernel the map approximates (:func:`kernel_of`).
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
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], input_name="X")
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
    exact = _as_kernel(kernel) if kernel is not None else kernel_of(fitted[0])
    K = _gram(exact, X_sample)
    values = [relative_error(K, fm.transform(X_sample), metric) for fm in fitted]
    mean, low, high = _t_interval(values, confidence)
    return ApproximationError(metric=metric, mean=mean, ci_low=low, ci_high=high,
                              values=tuple(values), seeds=tuple(seeds),
                              confidence=confidence, n_samples=len(rows))


# =========================================================================== median heuristic
@dataclass(frozen=True)
class ParameterChoice:
    """A kernel parameter chosen from the data (see :func:`median_heuristic`).

    Attributes
    ----------
    name : str
        The kernel parameter (``gamma``, ``alpha`` or ``length_scale``).
    value : float
    rule : str
        The formula, for reports, e.g. ``"gamma = 1/(2·median ‖x−y‖²)"``.
    n_samples : int
        Rows the median was taken over.
    """

    name: str
    value: float
    rule: str
    n_samples: int


def _sq_euclidean(X: np.ndarray) -> np.ndarray:
    return pdist(X, "sqeuclidean")


def _chi2_distances(X: np.ndarray) -> np.ndarray:
    # scikit-learn's additive chi² kernel is minus the chi² distance Σ(x−y)²/(x+y).
    return -additive_chi2_kernel(X)[np.triu_indices(X.shape[0], k=1)]


def _abs_inner(X: np.ndarray) -> np.ndarray:
    return np.abs(X @ X.T)[np.triu_indices(X.shape[0], k=1)]


# kernel name -> (parameter, statistic over pairs i < j, value from the median, rule).
# Each rule makes the kernel's argument of order one for a typical pair: the point of the
# median heuristic (Gretton et al., "A kernel two-sample test", JMLR 2012, sets σ to the median
# distance).
_HEURISTICS: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray],
                             Callable[[float], float], str]] = {
    "rbf": ("gamma", _sq_euclidean, lambda m: 1.0 / (2.0 * m),
            "gamma = 1/(2·median ‖x−y‖²), i.e. σ = median ‖x−y‖"),
    "laplacian": ("gamma", lambda X: pdist(X, "cityblock"), lambda m: 1.0 / m,
                  "gamma = 1/median ‖x−y‖₁"),
    "chi2": ("gamma", _chi2_distances, lambda m: 1.0 / m,
             "gamma = 1/median Σ(x−y)²/(x+y)"),
    "poly": ("gamma", _abs_inner, lambda m: 1.0 / m, "gamma = 1/median |⟨x,y⟩|"),
    "sigmoid": ("gamma", _abs_inner, lambda m: 1.0 / m, "gamma = 1/median |⟨x,y⟩|"),
    "student": ("alpha", _sq_euclidean, lambda m: m, "alpha = median ‖x−y‖²"),
    "matern": ("length_scale", lambda X: pdist(X, "euclidean"), lambda m: m,
               "length_scale = median ‖x−y‖"),
}


def median_heuristic_parameter(kernel: str) -> str | None:
    """The parameter :func:`median_heuristic` sets for ``kernel`` (None: no rule for it)."""
    name = get_kernel(kernel).name  # resolves aliases such as 'polynomial'
    return _HEURISTICS[name][0] if name in _HEURISTICS else None


def median_heuristic(X: Any, kernel: str, *, max_samples: int = 1000,
                     random_state: Any = 0) -> ParameterChoice:
    """Choose a kernel's scale parameter by the median heuristic.

    The median of a pairwise statistic over (a subsample of) the rows sets the scale, so
    that the kernel's argument is of order one for a typical pair:

    ============  =============  ===================================
    kernel        parameter      rule
    ============  =============  ===================================
    rbf           gamma          1/(2·median ‖x−y‖²)  (σ = median ‖x−y‖)
    laplacian     gamma          1/median ‖x−y‖₁
    chi2          gamma          1/median Σ(x−y)²/(x+y)
    poly, sigmoid gamma          1/median |⟨x,y⟩|
    student       alpha          median ‖x−y‖²
    matern        length_scale   median ‖x−y‖
    ============  =============  ===================================

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    kernel : str
        A kernel name from the table.
    max_samples : int, default=1000
        Rows used (pairs grow quadratically).
    random_state : int, RandomState instance or None, default=0
        Controls the subsample.

    Returns
    -------
    ParameterChoice

    References
    ----------
    A. Gretton, K. Borgwardt, M. Rasch, B. Schölkopf, A. Smola, "A kernel two-sample test",
    JMLR 13, 2012.
    """
    name = get_kernel(kernel).name  # resolves aliases such as 'polynomial'
    if name not in _HEURISTICS:
        raise ValueError(
            f"no median heuristic for the {kernel!r} kernel; it is defined for "
            f"{sorted(_HEURISTICS)}. Set the kernel's parameters explicitly."
        )
    X = check_array(X, accept_sparse="csr", dtype=np.float64, input_name="X")
    if X.shape[0] < 2:
        raise ValueError("the median heuristic needs at least 2 rows in X.")
    rng = check_random_state(random_state)
    if X.shape[0] > max_samples:
        X = X[np.sort(rng.choice(X.shape[0], size=max_samples, replace=False))]
    X = X.toarray() if sp.issparse(X) else X
    param, statistic, from_median, rule = _HEURISTICS[name]
    median = float(np.median(statistic(X)))
    if not median > 0:
        raise ValueError(
            f"the median heuristic for the {name} kernel found a median pairwise statistic of "
            f"{median} (more than half of the sampled pairs are identical or orthogonal); set "
            f"{param} explicitly."
        )
    return ParameterChoice(name=param, value=float(from_median(median)), rule=rule,
                           n_samples=X.shape[0])


# =========================================================================== method registry
@dataclass(frozen=True)
class Method:
    """An entry of the method registry :data:`METHODS`.

    Attributes
    ----------
    name : str
        The name used in ``compare(methods=...)`` and ``kernelmaps compare --methods``.
    build : callable
        ``build(kernel, n_components, random_state, n_features) -> feature map`` (unfitted).
    kernels : frozenset of str or None
        Names (``Kernel.name``) of the kernels the map approximates; ``None``: any kernel.
    randomized : bool
        Whether the map has a ``random_state`` (seeds are repeated only for those).
    landmarks : bool
        Whether ``n_components`` counts training rows (at most ``n_train``).
    description : str
        One line for listings.
    """

    name: str
    build: Callable[[Kernel, int, int | None, int], Any]
    kernels: frozenset[str] | None = None
    randomized: bool = True
    landmarks: bool = False
    description: str = ""

    def supports(self, kernel: Kernel) -> bool:
        """Whether this method approximates ``kernel``."""
        return self.kernels is None or kernel.name in self.kernels


#: The method registry: name → :class:`Method`, in the order listings show them.
METHODS: dict[str, Method] = {}
_EXACT = "exact"  # the name of the baseline row; not a registrable method


def register_method(name: str, build: Callable[[Kernel, int, int | None, int], Any], *,
                    kernels: Iterable[str] | None = None, randomized: bool = True,
                    landmarks: bool = False, description: str = "",
                    replace: bool = False) -> Method:
    """Add a feature map to :data:`METHODS` so :func:`compare` and the CLI can run it.

    Parameters
    ----------
    name : str
        Registry name (``"exact"`` is reserved for the baseline).
    build : callable
        ``build(kernel, n_components, random_state, n_features)`` → an unfitted map;
        ``kernel`` is a :class:`~kernelmaps.kernels.Kernel` this method supports.
    kernels : iterable of str or None, default=None
        ``Kernel.name`` of each supported kernel; ``None``: any kernel.
    randomized : bool, default=True
        ``False`` for deterministic maps (fitted once per configuration).
    landmarks : bool, default=False
        ``True`` if ``n_components`` cannot exceed the number of training rows.
    description : str, default=""
    replace : bool, default=False
        Allow overwriting an existing entry.

    Returns
    -------
    Method

    Examples
    --------
    A map added later plugs in with one call (here a hypothetical orthogonal-features map)::

        register_method(
            "orthogonal",
            lambda kernel, n, seed, n_features: RandomFourierFeatures(
                kernel=kernel, structure="orthogonal", n_components=n, random_state=seed),
            kernels={"rbf", "laplacian", "matern", "student"},
            description="orthogonal random features (Yu et al., 2016)")
    """
    if name == _EXACT:
        raise ValueError(f"{_EXACT!r} is the name of the exact-kernel baseline; pick another.")
    if name in METHODS and not replace:
        raise ValueError(f"method {name!r} is already registered; pass replace=True.")
    method = Method(name=name, build=build,
                    kernels=None if kernels is None else frozenset(kernels),
                    randomized=randomized, landmarks=landmarks, description=description)
    METHODS[name] = method
    return method


def _build_nystroem(kernel: Kernel, n_components: int, random_state: int | None,
                    n_features: int) -> Nystroem:
    return Nystroem(kernel=kernel, n_components=n_components, random_state=random_state)


def _build_rbf_sampler(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> RBFSampler:
    # _gamma resolves gamma=None (1/n_features) and the sigma parametrisation in one place.
    return RBFSampler(gamma=kernel._gamma(n_features), n_components=n_components,
                      random_state=random_state)


def _build_poly_sketch(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> PolynomialCountSketch:
    params = kernel.get_params()
    degree = 3 if params["degree"] is None else params["degree"]
    if float(degree) != int(degree):
        raise ValueError(
            f"poly_sketch needs an integer polynomial degree; got degree={degree}. Use the "
            "nystroem method for non-integer degrees."
        )
    return PolynomialCountSketch(gamma=kernel._gamma(n_features), degree=int(degree),
                                 coef0=1.0 if params["coef0"] is None else params["coef0"],
                                 n_components=n_components, random_state=random_state)


#: AdditiveChi2Sampler's output has n_features·(2·steps − 1) columns; Vedaldi & Zisserman
#: tabulate sampling intervals for 1–3 steps, and more steps buy little at those intervals.
_MAX_CHI2_STEPS = 3


def _build_additive_chi2(kernel: Kernel, n_components: int, random_state: int | None,
                         n_features: int) -> AdditiveChi2Sampler:
    # The largest number of steps whose output fits in n_components (at least one step).
    steps = max(1, min(_MAX_CHI2_STEPS, (n_components // n_features + 1) // 2))
    return AdditiveChi2Sampler(sample_steps=steps)


def _build_skewed_chi2(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> SkewedChi2Sampler:
    return SkewedChi2Sampler(skewedness=kernel.get_params()["skewedness"],
                             n_components=n_components, random_state=random_state)


register_method("nystroem", _build_nystroem, landmarks=True,
                description="Nyström: m training rows as landmarks, any kernel")
register_method("rbf_sampler", _build_rbf_sampler, kernels={"rbf"},
                description="random Fourier features (Rahimi & Recht), Gaussian kernel")
register_method("poly_sketch", _build_poly_sketch, kernels={"poly"},
                description="TensorSketch (Pham & Pagh), polynomial kernel")
register_method("additive_chi2", _build_additive_chi2, kernels={"additive_chi2_psd"},
                randomized=False,
                description="deterministic sampled Fourier map (Vedaldi & Zisserman), "
                            "additive chi²; output n_features·(2·steps−1), steps ≤ 3")
register_method("skewed_chi2", _build_skewed_chi2, kernels={"skewed_chi2"},
                description="random Fourier features in log space (Li et al.), skewed chi²")


#: Shift-invariant kernels with an isotropic spectral density (structured projections need it).
_ISOTROPIC = {"rbf", "matern", "student"}


def _random_fourier(structure: str, output: str):
    def build(kernel: Kernel, n_components: int, random_state: int | None,
              n_features: int) -> RandomFourierFeatures:
        return RandomFourierFeatures(kernel=kernel, structure=structure, output=output,
                                     n_components=n_components, random_state=random_state)
    return build


def _poly_parts(kernel: Kernel, n_features: int) -> dict:
    params = kernel.get_params()
    degree = 3 if params["degree"] is None else params["degree"]
    if float(degree) != int(degree):
        raise ValueError(f"this method needs an integer polynomial degree; got {degree}. Use "
                         "the nystroem method for non-integer degrees.")
    return {"gamma": kernel._gamma(n_features), "degree": int(degree),
            "coef0": 1.0 if params["coef0"] is None else params["coef0"]}


register_method("rff", _random_fourier("iid", "cos_sin"),
                kernels=_ISOTROPIC | {"laplacian"},
                description="random Fourier features, iid frequencies, cos/sin pairs "
                            "(Sutherland & Schneider), any shift-invariant kernel")
register_method("orthogonal", _random_fourier("orthogonal", "cos_sin"), kernels=_ISOTROPIC,
                description="orthogonal random features (Yu et al., 2016), cos/sin pairs")
register_method("structured", _random_fourier("structured", "cos_offset"),
                kernels=_ISOTROPIC,
                description="structured HD₁HD₂HD₃ features (SORF), O(D log d); D rounds up "
                            "to whole blocks of the padded dimension")
register_method("fastfood", _random_fourier("fastfood", "cos_offset"), kernels=_ISOTROPIC,
                description="Fastfood (Le, Sarlós & Smola, 2013); D rounds up like structured")
register_method("arccos", lambda kernel, n, seed, d: ArcCosineSampler(
                    degree=kernel.get_params()["degree"], n_components=n, random_state=seed),
                kernels={"arccos"},
                description="random sign / ReLU features (Cho & Saul), arc-cosine kernel")
register_method("tensor_srht", lambda kernel, n, seed, d: TensorSRHT(
                    **_poly_parts(kernel, d), n_components=n, random_state=seed),
                kernels={"poly"}, description="TensorSRHT (Ahle et al., 2020), polynomial")
register_method("maclaurin", lambda kernel, n, seed, d: RandomMaclaurin(
                    "exponential", gamma=kernel._gamma(d), n_components=n, random_state=seed)
                if kernel.name == "exponential" else RandomMaclaurin(
                    "poly", **_poly_parts(kernel, d), n_components=n, random_state=seed),
                kernels={"poly", "exponential"},
                description="Random Maclaurin (Kar & Karnick, 2012), dot-product kernels")


def methods_for(kernel: Kernel) -> list[str]:
    """Names of the registered methods that approximate ``kernel``, in registry order."""
    return [name for name, method in METHODS.items() if method.supports(kernel)]


def _resolve_methods(methods: Iterable[str] | None, kernel: Kernel) -> list[Method]:
    if methods is None:
        return [METHODS[name] for name in methods_for(kernel)]
    names = [methods] if isinstance(methods, str) else list(methods)
    if not names:
        raise ValueError(f"methods is empty; valid names are {sorted(METHODS)}.")
    resolved = []
    for name in names:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; valid methods are {sorted(METHODS)}.")
        method = METHODS[name]
        if not method.supports(kernel):
            raise ValueError(
                f"method {name!r} approximates the {sorted(method.kernels)} kernel(s), not "
                f"{kernel.name!r}; methods for {kernel.name!r}: {methods_for(kernel)}."
            )
        if method not in resolved:
            resolved.append(method)
    return resolved


# =========================================================================== models
#: Linear models run on the features: name → (classifier, regressor or None) factories.
#: Ridge's alpha suits features scaled so that z(x)·z(y) ≈ k(x, y) = O(1).
MODELS: dict[str, tuple[Callable[[], BaseEstimator], Callable[[], BaseEstimator] | None]] = {
    "ridge": (lambda: RidgeClassifier(alpha=1e-2), lambda: Ridge(alpha=1e-2)),
    "logistic": (lambda: LogisticRegression(C=1.0, max_iter=1000), None),
    "svm": (lambda: LinearSVC(C=1.0), lambda: LinearSVR(C=1.0, max_iter=5000)),
}


#: A float target with integral values is taken as class labels up to this many classes.
MAX_AUTO_CLASSES = 20
_TASKS = ("auto", "classification", "regression")


def _task_of(y: np.ndarray, task: str = "auto") -> str:
    """``'classification'`` or ``'regression'`` (see ``compare(task=...)``)."""
    if task not in _TASKS:
        raise ValueError(f"task must be one of {list(_TASKS)}; got {task!r}.")
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"y must hold class labels or real numbers (one target per row); its type is "
            f"{kind!r}."
        )
    if task != "auto":
        if task == "regression" and y.dtype.kind not in "biuf":
            raise ValueError("task='regression' needs a numeric y; it holds labels.")
        return task
    # scikit-learn calls integral floats 'multiclass'; a float target with many distinct
    # values (e.g. diabetes progression) is a regression target all the same.
    if kind == "continuous" or (y.dtype.kind == "f"
                                and len(np.unique(y)) > MAX_AUTO_CLASSES):
        return "regression"
    return "classification"


def _model_factory(model: str | BaseEstimator, task: str) -> tuple[str, Callable[[], Any]]:
    if isinstance(model, BaseEstimator):
        return type(model).__name__, functools.partial(clone, model)
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; valid models are {sorted(MODELS)}.")
    classifier, regressor = MODELS[model]
    if task == "classification":
        return model, classifier
    if regressor is None:
        raise ValueError(
            f"model {model!r} needs class labels but y is continuous; use 'ridge' or 'svm' "
            "for regression."
        )
    return model, regressor


# =========================================================================== compare
@dataclass
class _Split:
    index: int
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    error_rows: np.ndarray = field(default_factory=lambda: np.arange(0))
    K_error: np.ndarray | None = None


def _min_class_count(y: np.ndarray) -> int:
    return int(np.unique(y, return_counts=True)[1].min())


def _make_splits(X: Any, y: np.ndarray, task: str, *, test_size: float, cv: int | None,
                 test_data: tuple[Any, Any] | None, seed: int) -> list[_Split]:
    n = X.shape[0]
    classify = task == "classification"
    if test_data is not None:
        X_test, y_test = test_data
        return [_Split(0, X, y, X_test, y_test)]
    if cv is not None:
        if not isinstance(cv, (int, np.integer)) or cv < 2:
            raise ValueError(f"cv must be an int >= 2 (folds) or None; got {cv!r}.")
        if n < 2 * cv:
            raise ValueError(
                f"too little data for {cv}-fold cross-validation: {n} rows; need at least "
                f"{2 * cv} (use fewer folds or more data)."
            )
        stratified = classify and _min_class_count(y) >= cv
        splitter = (StratifiedKFold if stratified else KFold)(
            n_splits=cv, shuffle=True, random_state=seed)
        return [_Split(i, X[train], y[train], X[test], y[test])
                for i, (train, test) in enumerate(splitter.split(X, y))]
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1); got {test_size!r}.")
    n_test = math.ceil(test_size * n)
    n_train = n - n_test
    if n_test < 1 or n_train < 2:
        raise ValueError(
            f"too little data for the split: {n} rows with test_size={test_size} leave "
            f"{n_train} training and {n_test} test rows; need at least 2 and 1 (use more "
            "data or another test_size)."
        )
    n_classes = len(np.unique(y)) if classify else 0
    stratify = y if classify and _min_class_count(y) >= 2 and min(n_test, n_train) >= \
        n_classes else None
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=n_test, random_state=seed, stratify=stratify)
    return [_Split(0, X_train, y_train, X_test, y_test)]


def _check_split(split: _Split, task: str) -> None:
    if task == "classification" and len(np.unique(split.y_train)) < 2:
        raise ValueError(
            "too little data for the split: the training part holds a single class; use more "
            "data (or fewer folds) so every split sees at least two classes."
        )


def _resolve_exact(exact: bool | str, n_train: int) -> tuple[bool, str]:
    if exact == "auto":
        if n_train <= EXACT_AUTO_MAX_TRAIN:
            return True, f"auto: {n_train} training rows <= {EXACT_AUTO_MAX_TRAIN}"
        return False, f"auto: skipped, {n_train} training rows > {EXACT_AUTO_MAX_TRAIN}"
    if exact is True:
        if n_train > EXACT_MAX_TRAIN:
            gigabytes = 4 * 8 * n_train**2 / 1e9
            raise ValueError(
                f"exact=True with {n_train} training rows needs several {n_train}×{n_train} "
                f"matrices (~{gigabytes:.0f} GB) and an O(n³) eigen-decomposition; the limit "
                f"is {EXACT_MAX_TRAIN} rows. Use exact='auto'/False or subsample the data."
            )
        return True, "requested"
    if exact is False:
        return False, "not requested"
    raise ValueError(f"exact must be True, False or 'auto'; got {exact!r}.")


@dataclass
class _Run:
    """One planned row of the comparison table."""

    method: str
    n_components: int
    seed: int
    random_state: int | None
    split: _Split
    feature_map: Any


def _plan(method_list: list[Method], n_components: list[int], seeds: list[int],
          splits: list[_Split], kernel: Kernel, n_features: int,
          exact: bool) -> tuple[list[_Run], list[str]]:
    runs: list[_Run] = []
    skipped: list[str] = []
    for split in splits:
        n_train = split.X_train.shape[0]
        if exact:
            # The exact baseline: Nyström with every training row as a landmark (see compare).
            runs.append(_Run(_EXACT, n_train, 0, None, split,
                             Nystroem(kernel=kernel, n_components=n_train, random_state=0)))
        for method in method_list:
            seen: set[str] = set()
            for m in n_components:
                if method.landmarks and m > n_train:
                    skipped.append(f"{method.name} n_components={m} > {n_train} training rows")
                    continue
                for seed_index, seed in enumerate(seeds if method.randomized else [None]):
                    feature_map = method.build(kernel, m, seed, n_features)
                    key = repr(feature_map)
                    if key in seen:  # a deterministic map that n_components does not change
                        continue
                    seen.add(key)
                    runs.append(_Run(method.name, m, seed_index, seed, split, feature_map))
    return runs, skipped


def _execute(run: _Run, model_factory: Callable[[], Any], metric: str) -> dict[str, Any]:
    """Fit the map and the model on the training part, score on the test part, measure."""
    split = run.split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        feature_map = run.feature_map.fit(split.X_train)
        fitted = time.perf_counter()
        Z_train = feature_map.transform(split.X_train)
        Z_test = feature_map.transform(split.X_test)
        transformed = time.perf_counter()
        model = model_factory().fit(Z_train, split.y_train)
        score = float(model.score(Z_test, split.y_test))
        done = time.perf_counter()
        peak = tracemalloc.get_traced_memory()[1] - baseline
        del Z_train, Z_test
        Z_error = feature_map.transform(split.X_train[split.error_rows])
        error = relative_error(split.K_error, Z_error, metric)
    notes = sorted({str(w.message).splitlines()[0][:160] for w in caught})
    return {
        "method": run.method,
        "n_components": run.n_components,
        "n_features_out": int(Z_error.shape[1]),
        "seed": run.seed,
        "random_state": run.random_state,
        "split": split.index,
        "error": error,
        "score": score,
        "fit_time_s": fitted - start,
        "transform_time_s": transformed - fitted,
        "model_time_s": done - transformed,
        "total_time_s": done - start,
        "peak_memory_mb": peak / 2**20,
        "n_train": split.X_train.shape[0],
        "n_test": split.X_test.shape[0],
        "notes": " | ".join(notes),
    }


def _check_y(y: Any, n: int, name: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.reshape(-1) if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one value per row ({n}); got shape "
                         f"{np.shape(y)}.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        bad = np.flatnonzero(~np.isfinite(y))
        raise ValueError(f"{name} has {bad.size} NaN/inf value(s), first at row(s) "
                         f"{bad[:5].tolist()}; drop or impute them.")
    return y


def compare(
    X: Any,
    y: Any,
    *,
    kernel: str | Kernel = "rbf",
    methods: Iterable[str] | None = None,
    n_components: Iterable[int] = (25, 50, 100, 200, 400, 800),
    model: str | BaseEstimator = "ridge",
    exact: bool | Literal["auto"] = "auto",
    task: Literal["auto", "classification", "regression"] = "auto",
    test_size: float = 0.25,
    cv: int | None = None,
    test_data: tuple[Any, Any] | None = None,
    n_seeds: int = 3,
    error_sample: int = 500,
    metric: Metric = "fro",
    random_state: Any = 0,
    progress: Callable[[dict[str, Any], int, int], None] | None = None,
) -> pd.DataFrame:
    r"""Run feature maps side by side with the exact kernel: error, score, time, memory.

    For every split (one train/test split, ``cv`` folds, or the given ``test_data``), every
    method, every ``n_components`` and every seed: fit the map on the training rows,
    transform training and test rows, fit the linear ``model`` on the features and score it
    on the test rows; measure the kernel approximation error (:func:`relative_error`) on a
    fixed random subsample of ``error_sample`` training rows — the Gram matrix the model is
    trained on — and the wall time and peak memory of the pipeline.

    **The exact-kernel baseline** (``method == "exact"``) is the same linear model on the
    exact finite feature map of the training set: Nyström with *every* training row as a
    landmark, :math:`z(x) = K^{-1/2}[k(x_1, x), \dots, k(x_n, x)]^\top`, so that
    :math:`ZZ^\top = K` on the training rows. By the representer theorem the minimiser of a
    regularised loss over the RKHS lies in the span of the training points, so ridge,
    logistic regression or a linear SVM on these features *is* kernel ridge, kernel logistic
    regression or the kernel SVM with the same loss, regulariser and solver — the rows then
    differ only in the feature map. (A precomputed-kernel ``SVC`` or ``KernelRidge`` would
    change the loss, the intercept handling or the multi-class scheme as well.) Its error
    column is measured like the others and is zero up to rounding. It costs O(n³) time and
    O(n²) memory, hence ``exact="auto"``: run it up to :data:`EXACT_AUTO_MAX_TRAIN` training
    rows.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Features (finite numbers).
    y : array-like of shape (n_samples,)
        Class labels (classification: the score is accuracy) or real values (regression:
        R²); see ``task``.
    kernel : str or Kernel, default='rbf'
        The exact kernel; a name means its default parameters (see
        :func:`median_heuristic` for a data-driven scale).
    methods : iterable of str or None, default=None
        Names from :data:`METHODS`; ``None``: every method that approximates ``kernel``.
    n_components : iterable of int, default=(25, 50, 100, 200, 400, 800)
        Output dimensions to try (for landmark methods, values above the number of
        training rows are skipped with a warning).
    model : {'ridge', 'logistic', 'svm'} or estimator, default='ridge'
        The linear model on the features (:data:`MODELS`; an estimator is cloned).
    exact : bool or 'auto', default='auto'
        Add the exact-kernel baseline rows (see above).
    task : {'auto', 'classification', 'regression'}, default='auto'
        ``'auto'``: classification for strings, booleans, integers and integral floats with
        at most :data:`MAX_AUTO_CLASSES` distinct values; regression otherwise.
    test_size : float, default=0.25
        Fraction of rows held out (stratified for classification) when neither ``cv`` nor
        ``test_data`` is given.
    cv : int or None, default=None
        Number of (stratified) folds instead of one split; rows get a ``split`` index.
    test_data : (X_test, y_test) or None, default=None
        A fixed held-out set (e.g. a data set's official test split); ``X, y`` are then all
        training rows.
    n_seeds : int, default=3
        Seeds per randomised configuration (deterministic maps and the baseline run once).
    error_sample : int, default=500
        Training rows on which the approximation error is measured.
    metric : {'fro', 'spectral', 'max'}, default='fro'
        Norm of the approximation error.
    random_state : int, RandomState instance or None, default=0
        Controls the split, the error subsample and the maps' seeds.
    progress : callable or None, default=None
        ``progress(row, done, total)`` after each row (e.g. to drive a progress bar).

    Returns
    -------
    pandas.DataFrame
        One row per split × method × n_components × seed with columns ``method,
        n_components, n_features_out, seed, random_state, split, error, score, fit_time_s``
        (map fit), ``transform_time_s`` (training + test rows), ``model_time_s`` (fit +
        score), ``total_time_s, peak_memory_mb`` (tracemalloc peak above the start of the
        row: NumPy and Python allocations, not BLAS-internal buffers), ``n_train, n_test,
        notes`` (warnings raised, deduplicated), ``kernel, model, scoring, metric``.
        ``DataFrame.attrs["settings"]`` records the resolved settings.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps.evaluate import compare, summarize
    >>> X, y = load_digits(return_X_y=True)
    >>> table = compare(X[:400], y[:400], kernel="rbf", methods=["nystroem"],
    ...                 n_components=[50, 200], n_seeds=2)
    >>> sorted(table["method"].unique())
    ['exact', 'nystroem']
    >>> float(table.loc[table.method == "exact", "error"].iloc[0]) < 1e-8
    True
    """
    pd = _import("pandas")
    _check_metric(metric)
    kernel = get_kernel(kernel)
    method_list = _resolve_methods(methods, kernel)
    sizes = sorted({int(m) for m in n_components})
    if not sizes or sizes[0] < 1:
        raise ValueError(f"n_components must be positive ints; got {list(n_components)!r}.")
    if not isinstance(n_seeds, (int, np.integer)) or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive int; got {n_seeds!r}.")
    if not isinstance(error_sample, (int, np.integer)) or error_sample < 2:
        raise ValueError(f"error_sample must be an int >= 2; got {error_sample!r}.")
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], input_name="X")
    y = _check_y(y, X.shape[0], "y")
    if test_data is not None:
        X_test = check_array(test_data[0], accept_sparse="csr", dtype=[np.float64, np.float32],
                             input_name="X_test")
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"X_test has {X_test.shape[1]} features but X has {X.shape[1]}.")
        test_data = (X_test, _check_y(test_data[1], X_test.shape[0], "y_test"))
    task = _task_of(y, task)
    model_name, model_factory = _model_factory(model, task)
    rng = check_random_state(random_state)
    split_seed, *seeds = _seed_values(rng, n_seeds + 1)
    splits = _make_splits(X, y, task, test_size=test_size, cv=cv, test_data=test_data,
                          seed=split_seed)
    for split in splits:
        _check_split(split, task)
    run_exact, exact_reason = _resolve_exact(exact, max(s.X_train.shape[0] for s in splits))
    runs, skipped = _plan(method_list, sizes, seeds, splits, kernel, X.shape[1], run_exact)
    if skipped:
        warnings.warn("skipped (landmark methods need n_components <= training rows): "
                      + "; ".join(skipped), UserWarning, stacklevel=2)
    for split in splits:
        n_train = split.X_train.shape[0]
        split.error_rows = np.sort(rng.choice(n_train, size=min(error_sample, n_train),
                                              replace=False))
        split.K_error = _gram(kernel, split.X_train[split.error_rows])

    rows = []
    started_tracing = not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    try:
        for done, run in enumerate(runs, start=1):
            row = _execute(run, model_factory, metric)
            rows.append(row)
            if progress is not None:
                progress(row, done, len(runs))
    finally:
        if started_tracing:
            tracemalloc.stop()
    table = pd.DataFrame(rows, columns=list(_ROW_COLUMNS))
    table["random_state"] = table["random_state"].astype("Int64")
    table["kernel"] = repr(kernel)
    table["model"] = model_name
    table["scoring"] = "accuracy" if task == "classification" else "r2"
    table["metric"] = metric
    table.attrs["settings"] = {
        "kernel": repr(kernel), "methods": [m.name for m in method_list],
        "n_components": sizes, "model": model_name, "task": task,
        "exact": run_exact, "exact_reason": exact_reason, "n_seeds": n_seeds,
        "splits": len(splits), "test_size": None if cv or test_data else test_size,
        "cv": cv, "fixed_test_set": test_data is not None, "error_sample": error_sample,
        "metric": metric, "skipped": skipped,
    }
    return table


#: Columns measured per row by _execute (compare adds kernel, model, scoring, metric).
_ROW_COLUMNS = ("method", "n_components", "n_features_out", "seed", "random_state", "split",
                "error", "score", "fit_time_s", "transform_time_s", "model_time_s",
                "total_time_s", "peak_memory_mb", "n_train", "n_test", "notes")


def _import(module: str) -> Any:
    """Import an optional dependency of the ``cli`` extra, saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:  # pragma: no cover - the test extra installs them
        raise ImportError(
            f"this needs {module.split('.')[0]}: pip install 'kernelmaps[cli]'"
        ) from error


def _method_order(results: pd.DataFrame) -> list[str]:
    registered = [_EXACT, *METHODS]
    present = list(dict.fromkeys(results["method"]))
    return sorted(present, key=lambda m: registered.index(m) if m in registered else 1e9)


def summarize(results: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per method × n_components: means over seeds and splits, with intervals.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    confidence : float, default=0.95
        Level of the Student-t interval of the mean error.

    Returns
    -------
    DataFrame
        Columns ``method, n_components, n_features_out, runs, error, error_ci_low,
        error_ci_high, score, score_std, fit_time_s, transform_time_s, total_time_s,
        peak_memory_mb`` (times are means, memory the maximum), the exact baseline first,
        then methods in registry order, ``n_components`` ascending.
    """
    pd = _import("pandas")
    # The baseline's n_components is the training size, which differs by a row between
    # cross-validation folds: it is one configuration all the same.
    group_size = results["n_components"].where(
        results["method"] != _EXACT, results.loc[results["method"] == _EXACT,
                                                 "n_components"].max())
    records = []
    for (method, m), group in results.groupby([results["method"], group_size], sort=False):
        mean, low, high = _t_interval(group["error"].to_numpy(), confidence)
        records.append({
            "method": method, "n_components": int(m),
            "n_features_out": int(group["n_features_out"].iloc[0]), "runs": len(group),
            "error": mean, "error_ci_low": low, "error_ci_high": high,
            "score": float(group["score"].mean()),
            "score_std": float(group["score"].std(ddof=1)) if len(group) > 1 else 0.0,
            "fit_time_s": float(group["fit_time_s"].mean()),
            "transform_time_s": float(group["transform_time_s"].mean()),
            "total_time_s": float(group["total_time_s"].mean()),
            "peak_memory_mb": float(group["peak_memory_mb"].max()),
        })
    summary = pd.DataFrame.from_records(records)
    order = {name: i for i, name in enumerate(_method_order(results))}
    summary["_order"] = summary["method"].map(order)
    return (summary.sort_values(["_order", "n_components"]).drop(columns="_order")
            .reset_index(drop=True))


# =========================================================================== plots
def _axes(ax: Axes | None, title: str) -> Axes:
    if ax is None:
        # A bare Figure needs no pyplot and no GUI backend: it renders with Agg on savefig.
        figure = _import("matplotlib.figure").Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = figure.add_subplot()
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    return ax


def _dimension_axis(ax: Axes, dimensions: Iterable[int]) -> None:
    """Log x axis labelled with the output dimensions tried, as plain numbers."""
    ticker = _import("matplotlib.ticker")
    ax.set_xscale("log")
    ax.set_xticks(sorted({int(d) for d in dimensions}))
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("output dimension D (n_features_out)")


def _score_label(results: pd.DataFrame) -> str:
    scoring = results["scoring"].iloc[0] if "scoring" in results else "score"
    return {"accuracy": "test accuracy", "r2": "test R²"}.get(scoring, "test score")


def plot_error(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Approximation error against the output dimension, log–log, with confidence bands.

    The exact baseline is left out (its error is zero up to rounding).

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None
        Where to draw; ``None`` creates a new figure (``ax.figure``).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, "Kernel approximation error")
    summary = summarize(results)
    for method in _method_order(results):
        if method == _EXACT:
            continue
        rows = summary[summary["method"] == method].sort_values("n_features_out")
        line, = ax.plot(rows["n_features_out"], rows["error"], "o-", label=method)
        ax.fill_between(rows["n_features_out"], rows["error_ci_low"], rows["error_ci_high"],
                        color=line.get_color(), alpha=0.2, linewidth=0)
    _dimension_axis(ax, summary.loc[summary["method"] != _EXACT, "n_features_out"])
    ax.set_yscale("log")
    metric = results["metric"].iloc[0] if "metric" in results else "fro"
    ax.set_ylabel(f"relative error ‖K − ZZᵀ‖/‖K‖ ({metric})")
    ax.legend()
    return ax


def plot_score(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Test score against the output dimension (log x), with the exact baseline as a line.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None
        Where to draw; ``None`` creates a new figure.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, "Test score")
    summary = summarize(results)
    for method in _method_order(results):
        rows = summary[summary["method"] == method].sort_values("n_features_out")
        if method == _EXACT:
            score = float(rows["score"].mean())
            ax.axhline(score, color="black", linestyle="--",
                       label=f"exact kernel ({score:.4f})")
            continue
        ax.errorbar(rows["n_features_out"], rows["score"], yerr=rows["score_std"],
                    fmt="o-", capsize=3, label=method)
    _dimension_axis(ax, summary.loc[summary["method"] != _EXACT, "n_features_out"])
    ax.set_ylabel(_score_label(results))
    ax.legend()
    return ax


def pareto_front(times: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats in both time (lower) and score (higher)."""
    order = np.lexsort((-scores, times))  # by time, ties: best score first
    front, best = [], -np.inf
    for i in order:
        if scores[i] > best:
            front.append(i)
            best = scores[i]
    return np.asarray(front, dtype=int)


def plot_pareto(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Score against total time (fit + transform + model), the Pareto view.

    Each point is a method × n_components (mean over seeds), labelled with its output
    dimension; the grey staircase is the Pareto front (nothing is both faster and better).

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None
        Where to draw; ``None`` creates a new figure.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, "Score against time (Pareto view)")
    summary = summarize(results)
    for method in _method_order(results):
        rows = summary[summary["method"] == method].sort_values("n_features_out")
        if method == _EXACT:
            ax.plot(rows["total_time_s"], rows["score"], "k*", markersize=14,
                    label="exact kernel")
            continue
        ax.plot(rows["total_time_s"], rows["score"], "o-", label=method)
        for _, row in rows.iterrows():
            ax.annotate(str(row["n_features_out"]), (row["total_time_s"], row["score"]),
                        textcoords="offset points", xytext=(4, -10), fontsize=7)
    front = pareto_front(summary["total_time_s"].to_numpy(), summary["score"].to_numpy())
    ax.step(summary["total_time_s"].to_numpy()[front], summary["score"].to_numpy()[front],
            where="post", color="grey", linestyle=":", label="Pareto front")
    ax.set_xscale("log")
    # Labels at 1, 2, 5 × 10^k in plain numbers: the times often span less than a decade.
    ticker = _import("matplotlib.ticker")
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("time: map fit + transform + model fit (s)")
    ax.set_ylabel(_score_label(results))
    ax.legend()
    return ax
