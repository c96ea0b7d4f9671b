r"""Ridge on features too many to hold: sums over row blocks, α chosen on held-out rows.

For ``n × D`` features :math:`Z` that are computed block by block and never held whole, ridge
with an unpenalised intercept needs only the sums

.. math::

    G = Z^\top Z,\quad s = Z^\top \mathbf 1,\quad B = Z^\top Y,\quad t = Y^\top \mathbf 1,

accumulated over the blocks (:class:`FeatureSums`: one BLAS ``syrk`` per block, :math:`D^2`
floats of memory). With :math:`\mu = s/n` and :math:`\bar y = t/n`, the centred Gram matrix
and right-hand side are :math:`G - n\mu\mu^\top` and :math:`B - n\mu\bar y^\top`, and

.. math::

    w(\alpha) = (G - n\mu\mu^\top + \alpha I)^{-1} (B - n\mu\bar y^\top), \qquad
    b = \bar y - \mu^\top w,

one Cholesky factorisation per α (:math:`D^3/3` flops, against the :math:`\approx 8D^3` of
the eigendecomposition :func:`~kernelmaps._ridge.path.ridge_alpha_path` spends on every α at
once: at D = 4,096 that is ~1 s against ~100 s on two cores).

α is chosen on ``m`` held-out rows whose features are kept (:func:`holdout_alpha_path`): the
model of each α candidate is fitted on the other rows — their sums are the full sums minus
the held-out rows' (a downdate, as the k-fold path does) — and scored on the held-out ones.
The candidates are the grid's values walked from a starting α towards the better score until
it drops (a bracket on the grid; the score against log α is unimodal in practice), so a few
factorisations suffice. The model returned is then fitted on all rows at the chosen α, and
the held-out rows' losses at that α are returned for paired comparisons
(:func:`~kernelmaps.evaluate.compare`'s paired standard error).

Centring by subtraction is exact in exact arithmetic; its rounding, about
:math:`\varepsilon\,\|G\|`, is far below any α of the grid (:math:`\|G\| \le n` for features
with :math:`z(x)\cdot z(x) \approx k(x, x) \le 1`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from kernelmaps._ridge.labels import labels_from_scores
from kernelmaps._ridge.path import AlphaPath, linear_model_arrays
from kernelmaps._ridge.scoring import best_index, path_scores, ranking_score, row_losses

__all__ = ["FeatureSums", "HoldoutPath", "holdout_alpha_path"]


@dataclass
class FeatureSums:
    """The sums ridge needs, :math:`Z^\\top Z`, :math:`Z^\\top 1`, :math:`Z^\\top Y`,
    :math:`Y^\\top 1` and the row count, accumulated block by block (:meth:`add`)."""

    n_features: int
    n_outputs: int
    gram: np.ndarray = field(init=False)
    total: np.ndarray = field(init=False)
    cross: np.ndarray = field(init=False)
    y_total: np.ndarray = field(init=False)
    n: int = 0
    #: Whether only the upper triangle of ``gram`` is current (as ``syrk`` leaves it).
    upper: bool = True

    def __post_init__(self) -> None:
        self.gram = np.zeros((self.n_features, self.n_features))
        self.total = np.zeros(self.n_features)
        self.cross = np.zeros((self.n_features, self.n_outputs))
        self.y_total = np.zeros(self.n_outputs)

    def add(self, Z: np.ndarray, Y: np.ndarray) -> None:
        """Add the rows ``Z`` (``rows × D``) with targets ``Y`` (``rows × n_outputs``)."""
        Z = np.asarray(Z, dtype=np.float64)
        # Upper triangle only (syrk); symmetrised once, in solve().
        self.gram = scipy.linalg.blas.dsyrk(1.0, Z.T, beta=1.0, c=self.gram, trans=0,
                                            lower=0, overwrite_c=True)
        self.total += Z.sum(axis=0)
        self.cross += Z.T @ Y
        self.y_total += Y.sum(axis=0)
        self.n += Z.shape[0]

    def projected(self, N: np.ndarray) -> FeatureSums:
        r"""The sums of the features :math:`Z N^\top` (``N``: ``D' × D``) from these sums of
        ``Z``: :math:`N G N^\top`, :math:`N s`, :math:`N B` — e.g. Nyström's features from
        sums of its kernel columns, without the ``n × D × D'`` product per row block."""
        G = np.triu(self.gram) if self.upper else self.gram.copy()
        if self.upper:
            G += np.triu(self.gram, 1).T
        out = FeatureSums(N.shape[0], self.n_outputs)
        out.gram = N @ G @ N.T
        out.total, out.cross = N @ self.total, N @ self.cross
        out.y_total, out.n, out.upper = self.y_total.copy(), self.n, False
        return out

    def centred(self, less: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """``(Gc, Bc, μ, ȳ, rows)``: the centred Gram matrix (full, symmetric) and
        right-hand side of the rows summed, less the rows ``less = (Z, Y)`` if given."""
        G = np.triu(self.gram) if self.upper else self.gram.copy()
        if self.upper:
            G += np.triu(self.gram, 1).T
        total, cross, y_total, n = self.total, self.cross, self.y_total, self.n
        if less is not None:
            Z, Y = less
            G -= Z.T @ Z
            total, cross = total - Z.sum(axis=0), cross - Z.T @ Y
            y_total, n = y_total - Y.sum(axis=0), n - Z.shape[0]
        mu, y_mean = total / n, y_total / n
        G -= n * np.outer(mu, mu)
        return G, cross - n * np.outer(mu, y_mean), mu, y_mean, n


def _solve(G: np.ndarray, rhs: np.ndarray, alpha: float) -> np.ndarray | None:
    """``(G + αI)⁻¹ rhs`` by Cholesky on a copy of ``G``; None if not positive definite."""
    A = G.copy()
    A[np.diag_indices_from(A)] += alpha
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)


@dataclass(frozen=True)
class HoldoutPath:
    """What :func:`holdout_alpha_path` found.

    Attributes
    ----------
    path : AlphaPath
        The α candidates scored (ascending), their held-out scores, the chosen one and the
        linear model at it fitted on all rows.
    losses : ndarray of shape (m,)
        Per held-out row, the loss at the chosen α (:func:`row_losses`; the mean over
        outputs for several regression targets).
    """

    path: AlphaPath
    losses: np.ndarray


def holdout_alpha_path(sums: FeatureSums, Z_held: np.ndarray, Y_held: np.ndarray,
                       labels_held: np.ndarray | None, *, alphas: np.ndarray, start: float,
                       task: str, classes: np.ndarray | None, y_ndim: int,
                       out_dtype: Any = np.float64) -> HoldoutPath:
    """α chosen on held-out rows, and ridge at it fitted on all rows, from block sums.

    Parameters
    ----------
    sums : FeatureSums
        Sums over all rows, the held-out ones included.
    Z_held, Y_held : ndarray
        The held-out rows' features (``m × D``) and encoded targets (``m × n_outputs``).
    labels_held : ndarray or None
        Their class labels (classification), else None.
    alphas : ndarray
        The α grid, ascending.
    start : float
        The α the walk starts from (the grid's nearest value).
    task : {"classification", "regression"}
    classes : ndarray or None
        The sorted classes (classification).
    y_ndim : int
        Dimensions of the original targets (1-D targets give 1-D coefficients).
    out_dtype : dtype, default=float64
        The coefficients' dtype.

    Returns
    -------
    HoldoutPath
    """
    Gc, Bc, mu, y_mean, _ = sums.centred(less=(Z_held, Y_held))
    Zc_held = Z_held - mu
    m = Z_held.shape[0]
    tried: dict[int, tuple[float, float, np.ndarray]] = {}

    def score(i: int) -> float:
        if i not in tried:
            W = _solve(Gc, Bc, float(alphas[i]))
            if W is None:
                tried[i] = (-np.inf, np.inf, np.zeros((m, Y_held.shape[1])))
            else:
                fitted = y_mean + Zc_held @ W
                s, e = path_scores(Y_held, fitted[:, :, None], task, classes, labels_held)
                tried[i] = (float(s[0]), float(e[0]), fitted)
        s, e, _ = tried[i]
        return float(ranking_score(s, e, task, m)) if np.isfinite(s) else -np.inf

    best = int(np.argmin(np.abs(np.log(alphas) - np.log(start))))
    for step in (-1, 1):  # walk each way from the start while the score improves
        i = best
        while 0 <= i + step < alphas.size and score(i + step) > score(i):
            i += step
        if score(i) > score(best):
            best = i
    order = sorted(tried)
    scores = np.array([tried[i][0] for i in order])
    errors = np.array([tried[i][1] for i in order])
    chosen = best_index(alphas[order], scores, errors, task, m)
    fitted = tried[order[chosen]][2]
    if task == "classification":
        losses = row_losses(labels_held, labels_from_scores(classes, fitted, axis=1), task)
    else:
        losses = row_losses(Y_held, fitted, task).mean(axis=1)
    # The model on all rows at the chosen α.
    G_all, B_all, mu_all, y_mean_all, _ = sums.centred()
    W = _solve(G_all, B_all, float(alphas[order[chosen]]))
    if W is None:
        raise np.linalg.LinAlgError("ridge's matrix is not positive definite at the chosen "
                                    f"alpha={alphas[order[chosen]]:g}; use a larger alpha.")
    coef, intercept = linear_model_arrays(W, y_mean_all, mu_all, task, y_ndim, out_dtype)
    path = AlphaPath(alphas=alphas[order], scores=scores, errors=errors, best_index=chosen,
                     task=task, cv="holdout", coef=coef, intercept=intercept,
                     classes=classes, n_features=sums.n_features)
    return HoldoutPath(path=path, losses=losses)
