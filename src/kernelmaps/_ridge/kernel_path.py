r"""Kernel ridge's α by exact leave-one-out: on the whole centred kernel matrix, or on a
subsample of its rows when the whole one is too large to decompose.

:func:`kernel_alpha_path` scores every α from one eigendecomposition of the centred kernel
matrix (the identity of :func:`~kernelmaps._ridge.path.ridge_alpha_path` with
:math:`K_c = U\Lambda U^\top` in place of the features' decomposition).
:func:`subsample_kernel_alpha` runs it on ``m = alpha_subsample_rows(n)`` rows — one
``m × m`` eigendecomposition instead of ``n × n`` — for the exact baseline, which then
factorises the whole matrix once at that α (see :func:`alpha_subsample_rows` for the rule
and the measurement behind carrying α from ``m`` rows to ``n``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelmaps._linalg import psd_spectrum
from kernelmaps._ridge.checks import check_alphas
from kernelmaps._ridge.labels import check_task, encode_targets
from kernelmaps._ridge.path import DEFAULT_ALPHAS, _Chosen, _loo_scores
from kernelmaps._ridge.scoring import best_index

__all__ = ["ALPHA_SUBSAMPLE_DIVISOR", "ALPHA_SUBSAMPLE_MAX_ROWS", "ALPHA_SUBSAMPLE_MIN_ROWS",
           "KernelAlphaPath", "alpha_subsample_rows", "centre_kernel_in_place",
           "kernel_alpha_path", "subsample_kernel_alpha"]

@dataclass(frozen=True)
class KernelAlphaPath(_Chosen):
    r"""Leave-one-out scores of kernel ridge for every α, and its dual solution at the best.

    Attributes
    ----------
    alphas : ndarray of shape (n_alphas,)
        The α grid: the distinct values given, ascending.
    scores : ndarray of shape (n_alphas,)
        Leave-one-out score per α: accuracy (classification) or R² (regression).
    errors : ndarray of shape (n_alphas,)
        Mean squared leave-one-out error per α (of the ±1 class codes for classification):
        the tie-break between α of equal accuracy.
    best_index : int
        Index of the chosen α: the best score, then the smallest error, then the largest α.
    task : {"regression", "classification"}
        What was fitted.
    classes : ndarray or None
        Class labels (classification), sorted.
    dual_coef : ndarray of shape (n_samples, n_outputs)
        :math:`\beta = (K_c + \alpha I)^{-1}(Y - \bar Y)` at the chosen α (±1 class codes for
        classification, one column per class, or one for two classes).
    y_mean : ndarray of shape (n_outputs,)
        The targets' mean :math:`\bar Y`: predictions are
        :math:`k_c(x)\,\beta + \bar Y` with :math:`k_c` the centred kernel row.
    """

    alphas: np.ndarray
    scores: np.ndarray
    errors: np.ndarray
    best_index: int
    task: str
    dual_coef: np.ndarray
    y_mean: np.ndarray
    classes: np.ndarray | None



def kernel_alpha_path(K_centred: np.ndarray, y: Any, *, alphas: Any = None,
                      task: str = "regression", overwrite: bool = False) -> KernelAlphaPath:
    r"""Leave-one-out scores of kernel ridge (with an intercept) at every α, from one eigh.

    One eigendecomposition of the centred kernel matrix gives every α's scores and the dual
    solution at the best. Kernel ridge with an unpenalised intercept is ridge on any features
    :math:`Z` with
    :math:`Z_cZ_c^\top = K_c = HKH` (:math:`H = I - \tfrac1n\mathbf 1\mathbf 1^\top`), so
    :func:`ridge_alpha_path`'s identity applies with :math:`K_c = U\Lambda U^\top` in place
    of the features' decomposition: the projections are :math:`P = U\Lambda^{1/2}`, the
    leverages :math:`h_i(\alpha) = \tfrac1n + \sum_k U_{ik}^2\lambda_k/(\lambda_k+\alpha)`
    and the fitted values :math:`U\,\mathrm{diag}(\lambda/(\lambda+\alpha))\,U^\top Y_c`;
    the leave-one-out prediction of row :math:`i` is
    :math:`(\hat y_i - h_i y_i)/(1 - h_i)`, exactly. The scores (accuracy or R²) and the
    choice among equal scores are :func:`ridge_alpha_path`'s.

    Parameters
    ----------
    K_centred : ndarray of shape (n_samples, n_samples)
        The doubly centred training kernel matrix :math:`HKH` (float64, symmetric PSD).
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Real targets (regression) or class labels (classification, 1-D).
    alphas : array-like of positive floats, default=None
        ``None``: :data:`DEFAULT_ALPHAS`.
    task : {"regression", "classification"}, default="regression"
    overwrite : bool, default=False
        Let the eigendecomposition use ``K_centred``'s memory (``n²`` doubles saved).

    Returns
    -------
    KernelAlphaPath
        The scores and errors of every α, the chosen one, and the dual solution there.

    Notes
    -----
    Cost: one symmetric eigendecomposition of ``n × n`` (LAPACK ``syevr``, about
    :math:`9n^3` flops, half of them memory-bound, against :math:`n^3/3` for the Cholesky
    factorisation of one α; 15-40× its time) and :math:`O(n^2)` per α and output.
    Directions with numerically zero eigenvalues are dropped (the constant vector, which
    centring removes, among them): the dual solution is the one in the span of the others.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.tuning import kernel_alpha_path
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    >>> H = np.eye(60) - 1 / 60
    >>> path = kernel_alpha_path(H @ K @ H, y, alphas=[1e-3, 1e-1, 10.0])
    >>> path.alpha, bool(path.score > 0.9)
    (0.1, True)
    """
    check_task(task)
    alphas = check_alphas(alphas, DEFAULT_ALPHAS)
    n = K_centred.shape[0]
    if K_centred.ndim != 2 or K_centred.shape[1] != n or n < 2:
        raise ValueError(f"K_centred must be a square matrix of at least 2 rows; got shape "
                         f"{K_centred.shape}.")
    if not np.isfinite(K_centred).all():
        raise ValueError("K_centred contains NaN or infinity: the kernel matrix must be "
                         "finite (check the data, and the kernel's parameters for overflow).")
    Y, classes = encode_targets(y, n, task, rows_of="K_centred")
    labels = np.asarray(y) if task == "classification" else None
    y_mean = Y.mean(axis=0)
    Yc = Y - y_mean
    # evr: syevd's faster divide and conquer needs 2n² more doubles of workspace.
    lam, U = psd_spectrum(K_centred, overwrite=overwrite, driver="evr")
    UtY = U.T @ Yc                                          # r × C
    root = np.sqrt(lam)
    # The projections P = U Λ^{1/2} (Zc V for features with Zc Zcᵀ = Kc), formed per block of
    # rows: an m × r array fewer while U, and the caller's kernel matrix, are held.
    scores, errors = _loo_scores(lam, U, root[:, None] * UtY, n, y_mean, Y, alphas, task,
                                 classes, labels, column_scale=root)
    best = best_index(alphas, scores, errors, task, n)
    dual = U @ (UtY / (lam + alphas[best])[:, None])
    return KernelAlphaPath(alphas=alphas, scores=scores, errors=errors, best_index=best,
                           task=task, dual_coef=dual, y_mean=y_mean, classes=classes)


#: Up to this many training rows the α path is the exact one on every row (an eigh of
#: 2,000² takes about a second on 2 cores).
ALPHA_SUBSAMPLE_MIN_ROWS = 2_000
#: Above it, α is chosen on ``n / ALPHA_SUBSAMPLE_DIVISOR`` rows: LAPACK's ``syevr`` costs
#: 15-40× a Cholesky factorisation of the same size on this project's 2-core machines
#: (9n³ flops, half of them in memory-bound BLAS-2 tridiagonalisation), so an eigh of n/4
#: rows costs 0.25-0.6× the Cholesky factorisation of n rows that follows it.
ALPHA_SUBSAMPLE_DIVISOR = 4
#: ... and on at most this many rows: beyond it the leave-one-out accuracy's standard error
#: (≤ 0.009 at 3,000 rows) is below the differences between neighbouring α of the grid.
ALPHA_SUBSAMPLE_MAX_ROWS = 3_000


def alpha_subsample_rows(n: int) -> int:
    r"""The rows ``m`` on which the exact baseline chooses α, out of ``n`` training rows.

    :math:`m = n` up to :data:`ALPHA_SUBSAMPLE_MIN_ROWS` (the exact path on every row), else
    :math:`m = \min(\max(\lceil n/4 \rceil, 2000), 3000)`. Then the baseline's work is one
    eigendecomposition of ``m × m`` (``syevr``: about :math:`9m^3` flops, :math:`2m^2`
    doubles: the submatrix and its eigenvectors) and one Cholesky factorisation of the
    ``n × n`` kernel matrix in place (:math:`n^3/3` flops, :math:`n^2` doubles), instead of
    an eigendecomposition of ``n × n`` (:math:`9n^3` flops, :math:`2n^2` doubles).

    **α carries over unchanged** (scikit-learn's sum-of-squares convention: ridge minimises
    :math:`\|Y - f\|^2 + \alpha\|f\|_K^2`, so the same α on more rows is a smaller
    mean-loss :math:`\lambda = \alpha/n`). Measured against the α path on all rows
    (``docs/cli.md``, "How α is chosen for the exact baseline"): on wine, breast_cancer,
    digits, a 26-class 6,000 × 16 integer-valued set and a 6,000-row Fashion-MNIST
    subsample, with ``m = n/3`` and ``n/4`` over three subsamples each, the α chosen on the
    subsample kept constant scored the full path's leave-one-out accuracy within its noise
    at least as often as ``α·√(n/m)`` or ``α·n/m`` (a constant mean loss), and never worse:
    the α that the subsample picks is, if anything, already larger than the whole set's.

    Parameters
    ----------
    n : int
        Training rows.

    Returns
    -------
    int
        ``m``, with ``m <= n``.

    Examples
    --------
    >>> [alpha_subsample_rows(n) for n in (1_000, 2_000, 6_000, 10_000, 15_000)]
    [1000, 2000, 2000, 2500, 3000]
    """
    n = int(n)
    if n <= ALPHA_SUBSAMPLE_MIN_ROWS:
        return n
    return min(n, max(ALPHA_SUBSAMPLE_MIN_ROWS,
                      min(ALPHA_SUBSAMPLE_MAX_ROWS, math.ceil(n / ALPHA_SUBSAMPLE_DIVISOR))))


def centre_kernel_in_place(K: np.ndarray) -> np.ndarray:
    """Double-centre a kernel matrix in place, :math:`K_{ij} - r_i - r_j + g` (``r`` its row
    means, ``g`` their mean); returns ``r`` (test rows are centred with it)."""
    row_means = K.mean(axis=1)
    grand = float(row_means.mean())
    K -= row_means[:, None]
    K -= row_means[None, :]
    K += grand
    return row_means


def subsample_kernel_alpha(K: np.ndarray | Callable[[np.ndarray], np.ndarray], y: Any, *,
                           alphas: Any = None, task: str = "regression",
                           n_rows: int | None = None,
                           random_state: int = 0) -> tuple[KernelAlphaPath, np.ndarray]:
    """:func:`kernel_alpha_path` on ``n_rows`` rows of the (uncentred) kernel matrix ``K``.

    The rows are drawn uniformly without replacement with ``random_state`` (sorted); their
    submatrix is copied and centred (``K`` is not modified). ``n_rows`` ``None``:
    :func:`alpha_subsample_rows`; ``n_rows >= n``: every row.

    ``K`` may instead be a callable ``submatrix(rows)`` returning the uncentred kernel
    matrix of those rows (an ``m × m`` float64 array it hands over, overwritten): the exact
    baseline computes it from the rows' data, so the path need not wait for the ``n × n``
    matrix (``n`` is then ``y``'s length).

    Returns
    -------
    path : KernelAlphaPath
        The path on the subsample (its ``dual_coef`` belongs to the subsample's rows).
    rows : ndarray of int
        The rows it was computed on.
    """
    y = np.asarray(y)
    n = y.shape[0] if callable(K) else K.shape[0]
    m = alpha_subsample_rows(n) if n_rows is None else min(int(n_rows), n)
    if m >= n:
        rows = np.arange(n)
    else:
        rows = np.sort(np.random.RandomState(random_state).choice(n, m, replace=False))
    if callable(K):
        sub = np.ascontiguousarray(K(rows), dtype=np.float64)
        if sub.shape != (rows.size, rows.size):
            raise ValueError(f"K(rows) must return the {rows.size} × {rows.size} kernel "
                             f"matrix of the rows; got shape {sub.shape}.")
    elif m >= n:
        sub = np.array(K, dtype=np.float64, order="C")
    else:
        sub = np.ascontiguousarray(K[np.ix_(rows, rows)], dtype=np.float64)
    centre_kernel_in_place(sub)
    path = kernel_alpha_path(sub, y[rows], alphas=alphas, task=task, overwrite=True)
    return path, rows
