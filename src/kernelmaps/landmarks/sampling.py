"""Landmarks without a kernel: a uniform subset of rows (scikit-learn's draw), k-means centres."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from kernelmaps._array_api import is_device_array, namespace_and_device, on_device
from kernelmaps._engine import FLOAT_DTYPES
from kernelmaps.landmarks._gram import _check_n_components, _check_positive_int, _on_host


# ------------------------------------------------------------------------ uniform
def uniform_subset(X: Any, n_components: int, *,
                   random_state: int | np.random.RandomState | None = None) -> np.ndarray:
    """Draw the indices of ``n_components`` rows of ``X`` uniformly without replacement.

    Exactly scikit-learn's draw: the first ``n_components`` entries of one permutation of
    ``range(n_samples)`` from ``random_state``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (only its number of rows is used).
    n_components : int
        Number of landmarks m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Source of the permutation.

    Returns
    -------
    indices : ndarray of shape (n_components,)
        Distinct row indices, in the order drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.landmarks import uniform_subset
    >>> rows = uniform_subset(np.zeros((10, 2)), 4, random_state=0)
    >>> rows.tolist() == np.random.RandomState(0).permutation(10)[:4].tolist()  # sklearn's draw
    True
    """
    n_samples = _num_rows(X)
    m = _check_n_components(n_components, n_samples)
    return check_random_state(random_state).permutation(n_samples)[:m]


def _num_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is None:
        X = check_array(X, accept_sparse="csr", dtype=None, input_name="X")
        shape = X.shape
    return int(shape[0])


# ------------------------------------------------------------------------ k-means
def kmeans_landmarks(X: Any, n_components: int, *,
                     random_state: int | np.random.RandomState | None = None,
                     minibatch: bool = False, max_iter: int = 100) -> np.ndarray:
    r"""Compute k-means centres of ``X`` as Nyström landmarks (Zhang, Tsang & Kwok, 2008).

    The Nyström error of a shift-invariant kernel is bounded by the k-means quantisation
    error :math:`\sum_i \min_j \|x_i - c_j\|^2` of the landmarks, so the centres of a
    k-means clustering (scikit-learn's :class:`~sklearn.cluster.KMeans`, k-means++
    seeding, one initialisation) are good landmarks. The centres are *not* rows of ``X``.

    Cost: k-means++ seeding evaluates O(log m) candidate centres per step, i.e.
    O(n·m·d·log m); each Lloyd iteration is O(n·m·d) (at most ``max_iter``; the iterations
    stop at scikit-learn's convergence tolerance). With ``minibatch=True``,
    :class:`~sklearn.cluster.MiniBatchKMeans` replaces the full Lloyd iterations by
    mini-batch steps (batch of 1024 rows), much cheaper for large n.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    n_components : int
        Number of centres m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisation (and the mini-batches).
    minibatch : bool, default=False
        Use :class:`~sklearn.cluster.MiniBatchKMeans` instead of :class:`~sklearn.cluster.KMeans`.
    max_iter : int, default=100
        Maximum number of Lloyd iterations (mini-batch: passes over the data).

    Returns
    -------
    centres : ndarray of shape (n_components, n_features)
        In the dtype of ``X`` (float32 kept).

    References
    ----------
    K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nyström low-rank approximation and
    error analysis", ICML 2008.

    Examples
    --------
    Three tight clusters get one centre each (centres, not rows of ``X``):

    >>> import numpy as np
    >>> from kernelmaps.landmarks import kmeans_landmarks
    >>> rng = np.random.RandomState(0)
    >>> X = np.concatenate([c + 0.1 * rng.normal(size=(30, 2)) for c in ([0, 0], [5, 5], [0, 5])])
    >>> sorted(np.round(kmeans_landmarks(X, 3, random_state=0)).astype(int).tolist())
    [[0, 0], [0, 5], [5, 5]]
    """
    device_input = X if is_device_array(X) else None
    X = check_array(_on_host(X), accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name="X")
    m = _check_n_components(n_components, X.shape[0])
    max_iter = _check_positive_int("max_iter", max_iter)
    cls = MiniBatchKMeans if minibatch else KMeans
    clustering = cls(n_clusters=m, init="k-means++", n_init=1, max_iter=max_iter,
                     random_state=check_random_state(random_state))
    centres = np.asarray(clustering.fit(X).cluster_centers_, dtype=X.dtype)
    if device_input is None:
        return centres
    xp, device = namespace_and_device(device_input)
    return on_device(centres, xp, device, device_input.dtype)
