"""Fitting feature maps on Dask collections without collecting the data.

Random maps draw their parameters from the number of features alone, so fitting one reads no
data (RandomFourierFeatures' principal axes excepted: they read the same uniform sample of
rows as the in-memory fit). The Nyström map needs landmarks, which are rows of the data: they
are drawn as an exact uniform sample of row indices on the client (O(sample) memory, no pass
over the data) and only those rows are gathered from the workers. The data-driven strategies
(k-means, ridge leverage, Rényi entropy) then run in memory on a uniform sample of
``sample_size`` rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dask.array as da
import numpy as np
from sklearn.utils import check_random_state

from kernelmaps.distributed._collections import as_dask_rows
from kernelmaps.kernels import GAMMA_HEURISTICS, Kernel, gamma_value
from kernelmaps.kernels.degenerate import SAMPLE_ROWS, warn_if_degenerate_on_sample
from kernelmaps.landmarks import select_landmarks, uniform_subset
from kernelmaps.maps import FeatureMap, Nystroem
from kernelmaps.maps.interface import (
    checks_degenerate_sample,
    fit_on_sample,
    fit_sample_indices,
    is_precomputed,
    validate_params,
)

__all__ = ["LANDMARK_SAMPLE_MIN", "LANDMARK_SAMPLE_PER_LANDMARK", "fit", "landmark_sample_size",
           "sample_landmarks", "uniform_rows"]

#: The data-driven landmark strategies run on a uniform sample of
#: ``max(LANDMARK_SAMPLE_MIN, LANDMARK_SAMPLE_PER_LANDMARK · m)`` rows (at most n).
LANDMARK_SAMPLE_MIN = 10_000
LANDMARK_SAMPLE_PER_LANDMARK = 20


def landmark_sample_size(n_landmarks: int, n_samples: int, sample_size: int | None = None) -> int:
    """Count the rows of the uniform sample a data-driven landmark strategy runs on.

    Default: ``min(n, max(10_000, 20·m))`` — twenty candidate rows per landmark (k-means has
    twenty points per centre, leverage and Rényi sampling choose m of 20·m rows), and at
    least 10,000 so that small m still sees the data's spread. The sample is a handful of MB
    (``8·s·d`` bytes) for any n: m = 2,000 and d = 100 give 40,000 rows, 32 MB.

    Parameters
    ----------
    n_landmarks : int
        The number of landmarks m.
    n_samples : int
        The number of rows n of the data.
    sample_size : int or None, default=None
        A size chosen by the user (at least ``n_landmarks``); None: the default above.

    Returns
    -------
    int
        The sample size, at most ``n_samples``.

    Examples
    --------
    >>> from kernelmaps.distributed import landmark_sample_size
    >>> landmark_sample_size(100, 10**6), landmark_sample_size(2000, 10**6)
    (10000, 40000)
    >>> landmark_sample_size(100, 5000)  # never more than the data
    5000
    """
    if sample_size is None:
        sample_size = max(LANDMARK_SAMPLE_MIN, LANDMARK_SAMPLE_PER_LANDMARK * n_landmarks)
    elif (not isinstance(sample_size, (int, np.integer)) or isinstance(sample_size, bool)
          or sample_size < n_landmarks):
        raise ValueError(f"sample_size must be an int >= the number of landmarks "
                         f"({n_landmarks}); got {sample_size!r}.")
    return int(min(n_samples, sample_size))


#: Up to this many rows the indices are the in-memory draw (one permutation of range(n), 8·n
#: bytes on the client for a moment), so a fit on Dask equals the in-memory fit; above it,
#: Floyd's algorithm (O(size) memory whatever n is).
SAME_DRAW_MAX_ROWS = 2**24


def uniform_rows(X: da.Array, size: int,
                 random_state: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """An exact uniform sample of ``size`` rows of ``X`` without replacement.

    The row indices are drawn on the client, then only those rows are gathered from the
    chunks holding them. Up to :data:`SAME_DRAW_MAX_ROWS` rows the draw is the in-memory one
    (:func:`kernelmaps.landmarks.uniform_subset`: the first ``size`` entries of a permutation
    from ``random_state``, scikit-learn's draw), so Nystroem and ``KernelRidge`` fitted on a
    dask array take the same landmarks as on the same rows in memory. Above it, NumPy's
    ``Generator.choice`` seeded from ``random_state`` (Floyd's algorithm: O(size) memory).
    Either way every ``size``-subset is equally likely, whatever the chunking.

    Returns
    -------
    rows : ndarray of shape (size, n_features)
        In the order of the draw (a uniformly random order).
    indices : ndarray of shape (size,)
        Their positions in ``X``.
    """
    if X.shape[0] <= SAME_DRAW_MAX_ROWS:
        indices = uniform_subset(X, size, random_state=random_state)
    else:
        generator = np.random.default_rng(random_state.randint(0, 2**32, size=4,
                                                               dtype=np.uint64))
        indices = generator.choice(X.shape[0], size, replace=False)
    return gather_rows(X, indices), indices


def gather_rows(X: da.Array, indices: np.ndarray) -> np.ndarray:
    """Rows ``indices`` of a dask array, in that order, as a NumPy array."""
    order = np.argsort(indices)
    gathered = X[indices[order]].compute()  # sorted: each chunk gives its own rows
    rows = np.empty_like(gathered)
    rows[order] = gathered
    return rows


def sample_landmarks(X: da.Array, strategy: str, kernel: Kernel, n_landmarks: int,
                     random_state: np.random.RandomState, *, options: dict | None = None,
                     sample_size: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Landmarks of a dask array by a named strategy: ``(points, row indices or None)``.

    ``'uniform'``: an exact uniform sample of ``n_landmarks`` rows (:func:`uniform_rows`);
    the other strategies of :func:`kernelmaps.landmarks.select_landmarks` run on a uniform
    sample of :func:`landmark_sample_size` rows. Indices are positions in ``X``.
    """
    size = n_landmarks if strategy == "uniform" else \
        landmark_sample_size(n_landmarks, X.shape[0], sample_size)
    rows, positions = uniform_rows(X, size, random_state)
    if strategy == "uniform" and not options:
        return rows, positions
    points, chosen = select_landmarks(strategy, rows, kernel, n_landmarks,
                                      random_state=random_state, options=options)
    return points, None if chosen is None else positions[chosen]


def fit(feature_map: FeatureMap, X: Any, *, sample_size: int | None = None) -> FeatureMap:
    """Fit a kernelmaps feature map on a Dask collection, without collecting it.

    * **Random maps** (RBFSampler, RandomFourierFeatures, SkewedChi2Sampler,
      PolynomialCountSketch, TensorSRHT, …) need only the number of features: nothing is
      read, and the fitted map equals the in-memory fit for the same ``random_state``. The
      data-dependent parameters: ``gamma='scale'`` (also in a Kernel object, and for
      Nystroem) takes the variance of all of X from Dask's reductions, one pass;
      RandomFourierFeatures' principal axes (its default ``structure="auto"`` with QMC)
      read a uniform sample of 256 rows, the same rows its in-memory fit draws.
    * **Nystroem** with ``landmarks='uniform'`` draws an exact uniform sample of
      ``n_components`` rows (the indices drawn on the client, then only those rows
      gathered from the chunks holding them); only those rows travel to the client.
      ``'kmeans'``, ``'leverage'`` and ``'renyi'`` run on a uniform sample of
      :func:`landmark_sample_size` rows (``max(10_000, 20·m)`` by default).
      ``component_indices_`` are positions in the full ``X``. Landmark points given as an
      array need no data. ``kernel='precomputed'`` is not supported on Dask collections.

    The map's input checks that look at values (finiteness, the χ² maps' non-negativity) run
    on the sample (Nyström) or, for random maps, chunk by chunk when features are computed.

    Parameters
    ----------
    feature_map : FeatureMap
        The map to fit (fitted in place, as ``feature_map.fit`` does).
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        The training data.
    sample_size : int, default=None
        Rows of the uniform sample for Nyström's data-driven strategies (at least
        ``n_components``); ``None``: :func:`landmark_sample_size`'s default.

    Returns
    -------
    feature_map : FeatureMap
        The fitted map. ``feature_map.fit(X)`` with a dask ``X`` does the same.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.distributed import fit
    >>> X = da.from_array(np.random.RandomState(0).normal(size=(1000, 4)), chunks=250)
    >>> nystroem = fit(Nystroem(n_components=20, random_state=0), X)
    >>> nystroem.component_indices_.shape  # positions in the full X
    (20,)
    >>> nystroem.transform(X).compute().shape  # a lazy dask array until computed
    (1000, 20)
    """
    if not isinstance(feature_map, FeatureMap):
        raise TypeError("kernelmaps.distributed.fit fits kernelmaps feature maps (e.g. "
                        f"RBFSampler, Nystroem); got {type(feature_map).__name__}.")
    validate_params(feature_map)
    X, columns = as_dask_rows(X, owner=f"{type(feature_map).__name__}.fit")
    if X.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of "
                         "1 is required.")
    random_state = check_random_state(getattr(feature_map, "random_state", None))
    indices = None
    if isinstance(feature_map, Nystroem) and isinstance(feature_map.landmarks, str):
        if is_precomputed(feature_map):
            raise ValueError("kernel='precomputed' is not supported on Dask collections: pass "
                             "a kernel (its values are computed chunk by chunk) or collect "
                             "the kernel matrix first.")
        n_landmarks = min(feature_map.n_components, X.shape[0])
        size = n_landmarks if feature_map.landmarks == "uniform" else \
            landmark_sample_size(n_landmarks, X.shape[0], sample_size)
        data, indices = uniform_rows(X, size, random_state)
    elif (rows := fit_sample_indices(feature_map, *X.shape, random_state)) is not None:
        # A map whose fit reads a sample of rows (RandomFourierFeatures' principal axes):
        # the rows its in-memory fit draws, gathered; its fit on them draws nothing more.
        data = gather_rows(X, rows)
    else:
        data = _stand_in(feature_map, X)
    if columns is not None:
        import pandas as pd

        data = pd.DataFrame(data, columns=columns)
    with _gamma_resolved_on(feature_map, X):
        data = fit_on_sample(feature_map, data, random_state)
    if checks_degenerate_sample(feature_map):
        # The in-memory fit's check, on the rows the fit read, or — fitted on a stand-in
        # row — on the first rows of X (computed here: one chunk's worth at most).
        rows = data if data.shape[0] >= SAMPLE_ROWS else np.asarray(
            X[: min(SAMPLE_ROWS, X.shape[0])].compute())
        warn_if_degenerate_on_sample(rows, feature_map.kernel_,
                                     owner=type(feature_map).__name__, stacklevel=4)
    if indices is not None and hasattr(feature_map, "component_indices_"):
        feature_map.component_indices_ = indices[feature_map.component_indices_]
    return feature_map


def _stand_in(feature_map: FeatureMap, X: da.Array) -> np.ndarray:
    """A one-row array with X's width and dtype: random maps read only ``X.shape[1]`` and
    ``X.dtype`` in ``_fit`` (``gamma='scale'`` is resolved beforehand on all of X)."""
    return np.zeros((1, X.shape[1]), dtype=X.dtype)


@contextmanager
def _gamma_resolved_on(feature_map: FeatureMap, X: da.Array) -> Iterator[None]:
    """While the map's ``_fit`` runs on a sample or a stand-in, its ``gamma="scale"`` /
    ``"auto"`` (the parameter, or inside a Kernel object) holds the value on all of ``X``
    — the variance from Dask's reductions — so the fitted ``kernel_`` is the in-memory
    fit's. The parameters are restored afterwards (``get_params`` is unchanged)."""
    saved: dict[str, Any] = {}
    gamma = getattr(feature_map, "gamma", None)
    if isinstance(gamma, str) and gamma in GAMMA_HEURISTICS:
        saved["gamma"] = gamma
    kernel = getattr(feature_map, "kernel", None)
    if isinstance(kernel, Kernel) and not kernel.is_resolved():
        saved["kernel"] = kernel
    try:
        if "gamma" in saved:
            feature_map.gamma = gamma_value(gamma, X)
        if "kernel" in saved:
            feature_map.kernel = kernel.resolve(X)
        yield
    finally:
        for name, value in saved.items():
            setattr(feature_map, name, value)
