r"""Landmark selection for the Nyström method.

The Nyström map :math:`z(x) = K_{mm}^{-1/2} k_m(x)` is exact on the span of its landmarks
:math:`c_1, \dots, c_m` and only as good as that span elsewhere. This module picks them.

==============  =====================================  =====================================
strategy        landmarks                               cost (n rows, m landmarks, d features)
==============  =====================================  =====================================
``uniform``     m rows drawn uniformly without          O(n) — scikit-learn's draw
                replacement
``kmeans``      k-means centres (k-means++ seeding,     O(n·m·d·(log m + iterations)); the
                Lloyd iterations); *not* rows of X      centres are not data points
``leverage``    rows sampled by ridge leverage score,   O(n·m·(d + m)) kernel values and
                estimated recursively                   triangular solves, ≈ 2 passes over X
``renyi``       rows maximising the quadratic Rényi     O(n·m·d) kernel values per pass
                entropy of the subset                   (``n_passes`` passes, default 3)
==============  =====================================  =====================================

Every function works from kernel values between rows of the training set only, so
``leverage`` and ``renyi`` also accept ``kernel="precomputed"`` (``X`` is then the square
training kernel matrix); ``kmeans`` needs coordinates.

Arrays on a device (PyTorch, CuPy, … with scikit-learn's ``array_api_dispatch=True``):
:func:`select_landmarks` picks ``uniform`` landmarks on the device; ``kmeans``,
``leverage`` and ``renyi`` — sequential, data-dependent algorithms — run on the host on
the data (on a uniform subsample of :data:`HOST_SAMPLE_ROWS` rows when there are more, so
the host never holds a device-sized copy), and the chosen rows or centres are taken on /
moved to the device once. Up to :data:`HOST_SAMPLE_ROWS` rows the landmarks are exactly
those of the NumPy path for the same ``random_state``. The strategy functions themselves
compute on the host when given a device array.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from kernelmaps._array_api import is_device_array, namespace_and_device, on_device, to_numpy
from kernelmaps._suggest import did_you_mean
from kernelmaps.kernels import Kernel, PrecomputedKernel
from kernelmaps.landmarks.leverage import ridge_leverage_subset
from kernelmaps.landmarks.renyi import quadratic_renyi_entropy, renyi_entropy_subset
from kernelmaps.landmarks.sampling import kmeans_landmarks, uniform_subset

__all__ = [
    "HOST_SAMPLE_ROWS",
    "LANDMARK_STRATEGIES",
    "kmeans_landmarks",
    "quadratic_renyi_entropy",
    "renyi_entropy_subset",
    "ridge_leverage_subset",
    "select_landmarks",
    "strategy_options",
    "uniform_subset",
]


#: The names accepted by ``Nystroem(landmarks=...)``.
LANDMARK_STRATEGIES = ("uniform", "kmeans", "leverage", "renyi")
#: Rows of a device array the host strategies (kmeans, leverage, renyi) see at most.
HOST_SAMPLE_ROWS = 50_000


# ------------------------------------------------------------------------ dispatch
_StrategyFunction = Callable[..., np.ndarray]
_STRATEGY_FUNCTIONS: dict[str, _StrategyFunction] = {
    "uniform": uniform_subset,
    "kmeans": kmeans_landmarks,
    "leverage": ridge_leverage_subset,
    "renyi": renyi_entropy_subset,
}
#: Strategies whose landmarks are rows of X (they return indices); kmeans returns points.
_ROW_STRATEGIES = frozenset({"uniform", "leverage", "renyi"})
_KERNEL_STRATEGIES = frozenset({"leverage", "renyi"})


def strategy_options(strategy: str) -> tuple[str, ...]:
    """List the keyword options of a strategy (accepted in ``Nystroem(landmark_params=...)``).

    Parameters
    ----------
    strategy : str
        A strategy name (``"uniform"``, ``"kmeans"``, ``"leverage"``, ``"renyi"``).

    Returns
    -------
    tuple of str
        The names of its keyword options.

    Examples
    --------
    >>> from kernelmaps.landmarks import strategy_options
    >>> strategy_options("kmeans")
    ('minibatch', 'max_iter')
    >>> strategy_options("uniform")
    ()
    """
    signature = inspect.signature(_STRATEGY_FUNCTIONS[strategy])
    return tuple(name for name, p in signature.parameters.items()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "random_state")


def select_landmarks(strategy: str, X: Any, kernel: Kernel | str, n_components: int, *,
                     random_state: int | np.random.RandomState | None = None,
                     options: dict[str, Any] | None = None
                     ) -> tuple[Any, np.ndarray | None]:
    """Select the landmarks of ``X`` by a named strategy.

    Parameters
    ----------
    strategy : {'uniform', 'kmeans', 'leverage', 'renyi'}
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data, or with ``kernel='precomputed'`` its square kernel matrix (then the
        points are rows of that matrix).
    kernel : str or Kernel
        Used by ``leverage`` and ``renyi``.
    n_components : int
        Number of landmarks, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Controls the randomised strategies (pass an int for reproducible landmarks).
    options : dict, default=None
        Keyword options of the strategy's function (see :func:`strategy_options`).

    Returns
    -------
    points : ndarray or sparse matrix of shape (n_components, n_features)
        The landmarks.
    indices : ndarray of shape (n_components,) or None
        Row indices of the points in ``X``; ``None`` for k-means centres.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.landmarks import select_landmarks
    >>> X = np.random.RandomState(0).uniform(size=(50, 3))
    >>> points, rows = select_landmarks("renyi", X, "rbf", 5, random_state=0)
    >>> bool(np.array_equal(points, X[rows]))
    True
    >>> centres, rows = select_landmarks("kmeans", X, "rbf", 5, random_state=0)
    >>> centres.shape, rows
    ((5, 3), None)
    """
    if strategy not in _STRATEGY_FUNCTIONS:
        raise ValueError(f"Unknown landmark strategy {strategy!r}"
                         f"{did_you_mean(strategy, LANDMARK_STRATEGIES)}; valid names are "
                         f"{list(LANDMARK_STRATEGIES)}, or pass an array of points.")
    options = dict(options or {})
    unknown = sorted(set(options) - set(strategy_options(strategy)))
    if unknown:
        accepted = list(strategy_options(strategy)) or "none"
        raise TypeError(
            f"landmark_params {unknown} not accepted by the {strategy!r} strategy; it "
            f"accepts {accepted}."
        )
    if strategy == "kmeans" and (isinstance(kernel, PrecomputedKernel) or (
            isinstance(kernel, str) and kernel == "precomputed")):
        raise ValueError(
            "landmarks='kmeans' needs the data's coordinates, but kernel='precomputed' gives "
            "only kernel values. Use landmarks='uniform', 'leverage' or 'renyi', which work "
            "from kernel values alone."
        )
    if is_device_array(X):
        return _select_on_device(strategy, X, kernel, n_components, random_state, options)
    function = _STRATEGY_FUNCTIONS[strategy]
    if strategy in _KERNEL_STRATEGIES:
        result = function(X, kernel, n_components, random_state=random_state, **options)
    else:
        result = function(X, n_components, random_state=random_state, **options)
    if strategy in _ROW_STRATEGIES:
        return X[result], result
    return result, None


def _select_on_device(strategy: str, X: Any, kernel: Kernel | str, n_components: int,
                      random_state: Any, options: dict[str, Any]) -> tuple[Any, Any]:
    """:func:`select_landmarks` for a device array: points and indices on its device."""
    xp, device = namespace_and_device(X)
    random_state = check_random_state(random_state)
    precomputed = isinstance(kernel, PrecomputedKernel) or (
        isinstance(kernel, str) and kernel == "precomputed")
    if strategy == "uniform":
        indices = uniform_subset(X, n_components, random_state=random_state)
    else:
        rows = None
        if X.shape[0] > HOST_SAMPLE_ROWS:
            rows = np.sort(random_state.choice(X.shape[0], HOST_SAMPLE_ROWS, replace=False))
        sample = X if rows is None else xp.take(X, on_device(rows, xp, device), axis=0)
        if rows is not None and precomputed:  # the sample's own block of the kernel matrix
            sample = xp.take(sample, on_device(rows, xp, device), axis=1)
        points, indices = select_landmarks(strategy, to_numpy(sample), kernel, n_components,
                                           random_state=random_state, options=options)
        if indices is None:
            return on_device(points, xp, device, X.dtype), None
        if rows is not None:
            indices = rows[indices]
    indices = on_device(np.asarray(indices, dtype=np.int64), xp, device)
    return xp.take(X, indices, axis=0), indices
