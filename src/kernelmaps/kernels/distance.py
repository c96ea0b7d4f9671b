r"""Distances in feature space: from the kernel alone, or between explicit features.

The kernel trick turns the distance between the images of two points into kernel values,

.. math::

    d(x, y) = \|\phi(x) - \phi(y)\| = \sqrt{k(x, x) + k(y, y) - 2\,k(x, y)},

so the geometry of the (possibly infinite-dimensional) feature space is available without
:math:`\phi` (Schölkopf, "The kernel trick for distances", NIPS 2000; Shawe-Taylor &
Cristianini, *Kernel Methods for Pattern Analysis*, 2004, §5.1). :func:`kernel_distance`
computes it from a kernel; :func:`feature_distance` computes the Euclidean distances
:math:`\|z(x) - z(y)\|` between the features of a fitted map :math:`z` with
:math:`z(x)^\top z(y) \approx k(x, y)`, which approximate :math:`d(x, y)`.

Both produce the ``(n_X, n_Y)`` matrix in row blocks of ``X`` on the engine: one block of
kernel values (or of features) at a time is turned into distances in place, so memory beyond
the result is one block per thread.

Rounding
--------
The expansion :math:`a + b - 2c` cancels when :math:`x` and :math:`y` are close: its absolute
error is a few units of :math:`\epsilon\,(k(x, x) + k(y, y))` (:math:`\epsilon` the machine
epsilon of the dtype, plus the error of the kernel values themselves), so a computed squared
distance can come out slightly negative. It is clipped at 0 before the square root. Hence
distances are accurate in absolute terms to about :math:`\sqrt{\epsilon\,(k(x,x)+k(y,y))}`
— about :math:`2\cdot10^{-8}` for a normalised kernel (:math:`k(x, x) = 1`) in float64,
:math:`5\cdot10^{-4}` in float32 — and distances below that are not resolved (they may be
returned as 0). With ``Y=None`` the diagonal is exactly 0. For a kernel that is not positive
semi-definite (``sigmoid``) a squared "distance" can be genuinely negative; it is clipped
as well, with an :class:`~kernelmaps.kernels.IndefiniteKernelWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples, check_is_fitted

from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import clamp, run_blocks
from kernelmaps.kernels._base import IndefiniteKernelWarning, Kernel
from kernelmaps.kernels._ops import dot_into, row_sq_norms
from kernelmaps.kernels._resolve import get_kernel, resolve_kernel
from kernelmaps.kernels._user import PrecomputedKernel

__all__ = ["feature_distance", "kernel_distance"]

#: A squared distance below −_INDEFINITE_ULPS · ε · (k(x,x) + k(y,y)) is not rounding.
_INDEFINITE_ULPS = 64


def kernel_distance(X: Any, Y: Any = None, kernel: str | Kernel | Callable[..., Any] = "rbf",
                    *, squared: bool = False, vectorized: bool = False,
                    n_jobs: int | None = None, **kernel_params: Any) -> np.ndarray:
    r"""Feature-space distances :math:`\|\phi(x) - \phi(y)\|` computed from the kernel alone.

    .. math::

        D_{ij} = \sqrt{\max\bigl(k(x_i, x_i) + k(y_j, y_j) - 2\,k(x_i, y_j),\; 0\bigr)}

    where :math:`\phi` is the feature map of the kernel :math:`k` (Schölkopf, 2000). For the
    ``linear`` kernel this is the Euclidean distance; for ``rbf``,
    :math:`\sqrt{2 - 2e^{-\gamma\|x-y\|^2}}`. The kernel is evaluated in row blocks of
    ``X`` and each block becomes distances in place.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_X, n_features)
        With ``kernel="precomputed"``: the square kernel matrix of the points.
    Y : {array-like, sparse matrix} of shape (n_Y, n_features), default=None
        ``None``: distances between the rows of ``X`` (the diagonal is exactly 0).
    kernel : str, Kernel or callable, default="rbf"
        A kernel name from :data:`kernelmaps.kernels.KERNELS`, a
        :class:`~kernelmaps.kernels.Kernel`, a callable (scikit-learn's convention
        ``k(x, y, **kernel_params) -> float`` on two rows, or ``k(X, Y) -> matrix`` with
        ``vectorized=True``) or ``"precomputed"``.
    squared : bool, default=False
        Return the squared distances (clipped at 0, no square root).
    vectorized : bool, default=False
        Whether a callable kernel computes whole blocks.
    n_jobs : int or None, default=None
        Threads for the row blocks; ``None``: :func:`kernelmaps.set_config`'s setting.
    **kernel_params
        The kernel's parameters, e.g. ``gamma=0.5`` (see each kernel class); for a callable,
        its keyword arguments. Unknown names raise ``TypeError``.

    Returns
    -------
    D : ndarray of shape (n_X, n_Y)
        The distances, float32 for float32 inputs, else float64.

    See Also
    --------
    feature_distance : The same distances between explicit features z(x) of a fitted map.
    sklearn.metrics.pairwise.euclidean_distances : The linear kernel's case.

    Notes
    -----
    Rounding: the squared distance is accurate to a few :math:`\epsilon\,(k(x,x)+k(y,y))`
    in absolute terms, so it can be slightly negative for nearby points and is clipped at 0;
    see :mod:`kernelmaps.kernels.distance`.

    References
    ----------
    B. Schölkopf, "The kernel trick for distances", Advances in Neural Information
    Processing Systems 13, 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import kernel_distance
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> kernel_distance(X, kernel="linear")
    array([[0., 5.],
           [5., 0.]])
    >>> bool(np.allclose(kernel_distance(X, gamma=0.1)[0, 1], np.sqrt(2 - 2 * np.exp(-2.5))))
    True
    """
    kernel = _resolve(kernel, kernel_params, vectorized=vectorized, n_jobs=n_jobs)
    symmetric = Y is None
    if isinstance(kernel, PrecomputedKernel):
        X, Y = _check_precomputed(kernel, X, Y)
        diag_Y = diag_X = kernel._diag(X)
    else:
        X, Y = kernel._check_pair(X, Y)
        diag_Y = kernel._diag(Y)
        diag_X = diag_Y if symmetric else kernel._diag(X)

    def fill(start: int, stop: int, out: np.ndarray) -> np.ndarray:
        kernel.evaluate_into(X[start:stop], Y, out)
        return diag_X[start:stop]

    return _blocked_distances(
        X.shape[0], n_out=len(diag_Y), dtype=kernel._result_dtype(X, Y), fill=fill,
        diag_cols=diag_Y, squared=squared, zero_diagonal=symmetric,
        check_indefinite=not kernel.is_psd, temp_bytes_per_row=kernel._temp_bytes_per_row(Y),
        n_threads=resolve_n_threads(n_jobs), name=f"kernel_distance({kernel!r})",
    )


def feature_distance(feature_map: Any, X: Any, Y: Any = None, *, squared: bool = False,
                     n_jobs: int | None = None) -> np.ndarray:
    r"""Euclidean distances :math:`\|z(x) - z(y)\|` between the features of a fitted map.

    With :math:`z(x)^\top z(y) \approx k(x, y)` these approximate the kernel's feature-space
    distances :func:`kernel_distance`; for an exact map (e.g.
    :class:`~kernelmaps.PolynomialKernelMap`, or :class:`~kernelmaps.Nystroem` on its own
    landmarks) they are equal. Features are computed block by block of rows of ``X``
    (``z(Y)`` is held once), so memory beyond the result is one block of features per
    thread:

    .. math::

        D_{ij} = \sqrt{\max\bigl(\|z(x_i)\|^2 + \|z(y_j)\|^2 - 2\,z(x_i)^\top z(y_j),\;
        0\bigr)}.

    Parameters
    ----------
    feature_map : fitted transformer
        Any fitted object with ``transform(X) -> features`` (dense or sparse): a kernelmaps
        map, a :mod:`sklearn.kernel_approximation` map, a
        :class:`~sklearn.pipeline.Pipeline`...
    X : {array-like, sparse matrix} of shape (n_X, n_features)
    Y : {array-like, sparse matrix} of shape (n_Y, n_features), default=None
        ``None``: distances between the rows of ``X`` (the diagonal is exactly 0).
    squared : bool, default=False
        Return the squared distances (clipped at 0, no square root).
    n_jobs : int or None, default=None
        Threads for the row blocks; ``None``: :func:`kernelmaps.set_config`'s setting.

    Returns
    -------
    D : ndarray of shape (n_X, n_Y)
        In the dtype of the features (float32 for float32 features).

    See Also
    --------
    kernel_distance : The exact distances from the kernel.

    Notes
    -----
    Rounding as in :func:`kernel_distance`, with :math:`\|z(x)\|^2 + \|z(y)\|^2` as the
    scale.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.kernels import feature_distance, kernel_distance
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> z = Nystroem(gamma=0.5, n_components=50, random_state=0).fit(X)  # every point
    >>> bool(np.allclose(feature_distance(z, X), kernel_distance(X, gamma=0.5), atol=1e-6))
    True
    """
    if not hasattr(feature_map, "transform"):
        raise TypeError("feature_map must be a fitted transformer with a transform method "
                        f"(e.g. a fitted kernelmaps.Nystroem); got {type(feature_map).__name__}.")
    check_is_fitted(feature_map)
    symmetric = Y is None
    Z_Y = _features(feature_map, X if symmetric else Y)
    norms_Y = row_sq_norms(Z_Y)

    def fill(start: int, stop: int, out: np.ndarray) -> np.ndarray:
        if symmetric:  # z(X) is already held as z(Y)
            dot_into(Z_Y[start:stop], Z_Y, out)
            return norms_Y[start:stop]
        Z_b = _features(feature_map, _safe_indexing(X, slice(start, stop)))
        dot_into(Z_b.astype(out.dtype, copy=False), Z_Y, out)
        return row_sq_norms(Z_b)

    return _blocked_distances(
        _num_samples(X), n_out=Z_Y.shape[0], dtype=np.dtype(Z_Y.dtype), fill=fill,
        diag_cols=norms_Y, squared=squared, zero_diagonal=symmetric, check_indefinite=False,
        temp_bytes_per_row=8 * Z_Y.shape[1], n_threads=resolve_n_threads(n_jobs),
        name=f"feature_distance({type(feature_map).__name__})",
    )


# ------------------------------------------------------------------------------ helpers
def _resolve(kernel: Any, params: dict[str, Any], *, vectorized: bool,
             n_jobs: int | None) -> Kernel:
    """The Kernel for ``kernel`` and its keyword parameters, refusing unknown ones."""
    if isinstance(kernel, Kernel) or (isinstance(kernel, str) and kernel != "precomputed"):
        # get_kernel names the parameters a named kernel accepts when one is unknown.
        return get_kernel(kernel, **params)
    if isinstance(kernel, str) and params:
        raise TypeError(f"kernel='precomputed' takes no parameters; got {sorted(params)}.")
    return resolve_kernel(kernel, kernel_params=params, vectorized=vectorized, n_jobs=n_jobs,
                          owner="kernel_distance")


def _check_precomputed(kernel: PrecomputedKernel, X: Any, Y: Any) -> tuple[Any, np.ndarray]:
    """The square kernel matrix and all its columns (``Y`` must be None)."""
    if Y is not None:
        raise ValueError(
            "With kernel='precomputed', pass the square kernel matrix of the points as X and "
            "leave Y=None; take rows and columns of the result for subsets."
        )
    K, columns = kernel._check_pair(X, None)
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            "With kernel='precomputed', X must be the square kernel matrix k(X, X) (its "
            f"diagonal holds k(x, x)); got shape {K.shape}."
        )
    return K, columns


def _features(feature_map: Any, X: Any) -> Any:
    """``feature_map.transform(X)`` as a float ndarray or CSR matrix."""
    Z = feature_map.transform(X)
    Z = Z.tocsr() if sp.issparse(Z) else np.asarray(Z)
    if not np.issubdtype(Z.dtype, np.floating):
        Z = Z.astype(np.float64)
    return Z


def _blocked_distances(n_rows: int, *, n_out: int, dtype: np.dtype,
                       fill: Callable[[int, int, np.ndarray], np.ndarray],
                       diag_cols: np.ndarray, squared: bool, zero_diagonal: bool,
                       check_indefinite: bool, temp_bytes_per_row: int, n_threads: int,
                       name: str) -> np.ndarray:
    r"""Distances from inner products, one block of rows at a time.

    ``fill(start, stop, out_block)`` writes the inner products :math:`G_{ij}` of rows
    ``start:stop`` into ``out_block`` and returns their squared norms :math:`a_i`; with the
    columns' squared norms :math:`b_j` the block becomes
    :math:`\sqrt{\max(a_i + b_j - 2G_{ij}, 0)}` in place. The engine cuts row indices into
    blocks, so ``fill`` can take matching slices of anything row-aligned.
    """
    diag_cols = np.asarray(diag_cols, dtype=dtype)
    eps = np.finfo(dtype).eps
    negatives: list[float] = []  # squared distances below rounding, over their scale

    def block(index_block: np.ndarray, out: np.ndarray) -> None:
        start, stop = int(index_block[0]), int(index_block[-1]) + 1
        diag_rows = np.asarray(fill(start, stop, out), dtype=dtype)
        out *= -2.0
        out += diag_rows[:, None]
        out += diag_cols[None, :]
        if check_indefinite and out.size:
            scale = np.abs(diag_rows).max() + np.abs(diag_cols).max()
            lowest = float(out.min())
            if lowest < -_INDEFINITE_ULPS * eps * scale:
                negatives.append(lowest / max(scale, np.finfo(dtype).tiny))
        clamp(out, low=0.0)
        if not squared:
            np.sqrt(out, out=out)

    D = run_blocks(np.arange(n_rows), n_out=n_out, dtype=dtype, block_fn=block,
                   temp_bytes_per_row=temp_bytes_per_row, n_threads=n_threads, name=name)
    if zero_diagonal:
        np.fill_diagonal(D, 0.0)
    if negatives:
        warnings.warn(
            f"{name}: k(x, x) + k(y, y) - 2 k(x, y) is negative beyond rounding (down to "
            f"{min(negatives):.3g} of its scale k(x, x) + k(y, y)): the kernel is not positive "
            "semi-definite, so it has no feature space with these distances. Those values "
            "were clipped to 0; prefer a PSD kernel.",
            IndefiniteKernelWarning,
            stacklevel=3,
        )
    return D
