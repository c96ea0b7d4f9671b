"""Recursive ridge-leverage-score sampling of landmarks (Musco & Musco, NeurIPS 2017)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state

from kernelmaps._engine import block_rows_for
from kernelmaps._linalg import psd_factor, psd_factor_solve
from kernelmaps.kernels import Kernel
from kernelmaps.landmarks._gram import _as_gram, _check_n_components, _Gram

#: Smallest ridge of the leverage recursion, relative to the mean (weighted) kernel diagonal.
#: Musco & Musco use 1e-5 when a level has too few samples to set λ; a low-rank kernel can
#: also drive their λ formula to 0, where the scores would divide by rounding noise.
_MIN_RIDGE = 1e-5



# ------------------------------------------------------------------------ leverage
def ridge_leverage_subset(X: Any, kernel: Kernel | str, n_components: int, *,
                          random_state: int | np.random.RandomState | None = None,
                          accelerated: bool = False) -> np.ndarray:
    r"""Sample rows of ``X`` by ridge leverage score (recursive RLS-Nyström).

    The λ-ridge leverage score of row i is

    .. math::

        \tau_i(\lambda) = \big(K (K + \lambda I)^{-1}\big)_{ii}
                        = \tfrac{1}{\lambda}\big(K - K S (S^\top K S + \lambda I)^{-1}
                          S^\top K\big)_{ii},

    the second form exact for :math:`S = I` and an accurate estimate when :math:`S` is a
    (weighted) sample that is itself drawn by leverage score. Sampling m rows with
    probabilities proportional to :math:`\tau_i` gives a Nyström approximation with
    :math:`K - \tilde K \preceq \lambda I` for :math:`m = O(d_\text{eff}(\lambda)\log
    d_\text{eff})`, the best known guarantee. Algorithm 3 of Musco & Musco computes the
    scores without ever forming K: it halves the data recursively (uniformly), and on the
    way back up estimates the scores of a set from a weighted leverage sample of its half,
    with λ chosen so that about :math:`m / (4 \log m)` directions are above it. Each level
    costs O(n_level · m · (d + m)); the levels shrink geometrically, so the total is about
    twice the top level. The final m rows are drawn without replacement with probability
    proportional to :math:`\min(1, \tau_i)`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data, or with ``kernel='precomputed'`` the square training kernel matrix.
    kernel : str or Kernel
        A kernel name (default parameters), a :class:`~kernelmaps.kernels.Kernel`, or
        ``'precomputed'``. Must be positive semi-definite.
    n_components : int
        Number of landmarks m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Source of the recursive uniform halving and of the leverage sampling.
    accelerated : bool, default=False
        Use fewer samples on the recursive levels (Section 5.2.1 of the paper): total cost
        O(n·m) kernel values instead of O(n·m) per level, slightly worse landmarks.

    Returns
    -------
    indices : ndarray of shape (n_components,)
        Distinct row indices.

    Raises
    ------
    ValueError
        If the kernel is not positive semi-definite on the sample (the ridge system is
        then not positive definite).

    References
    ----------
    C. Musco and C. Musco, "Recursive sampling for the Nyström method", NeurIPS 2017
    (arXiv:1605.07583), Algorithm 3.

    Examples
    --------
    A small cluster far from the rest has high leverage: it gets landmarks, where a uniform
    draw of the same size misses it:

    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> from kernelmaps.landmarks import ridge_leverage_subset, uniform_subset
    >>> rng = np.random.RandomState(0)
    >>> X = np.concatenate([0.3 * rng.normal(size=(190, 2)), 6 + 0.3 * rng.normal(size=(10, 2))])
    >>> rows = ridge_leverage_subset(X, get_kernel("rbf", gamma=1.0), 10, random_state=0)
    >>> len(set(rows.tolist()))
    10
    >>> bool((rows >= 190).any()), bool((uniform_subset(X, 10, random_state=0) >= 190).any())
    (True, False)
    """
    gram = _as_gram(X, kernel)
    m = _check_n_components(n_components, gram.n)
    return _recursive_rls(gram, m, check_random_state(random_state), bool(accelerated))


def _recursive_rls(gram: _Gram, s: int, random_state: np.random.RandomState,
                   accelerated: bool) -> np.ndarray:
    n = gram.n
    if s >= n:
        return random_state.permutation(n)
    # The accelerated variant keeps every level's sample smaller than s so that the whole
    # recursion costs O(n·s) kernel values (paper, Section 5.2.1).
    level_size = math.ceil(math.sqrt((n * s + s**3) / (4 * n))) if accelerated else s
    oversample = max(math.log(level_size), 1.0)  # log 1 = 0 would zero every probability
    rank = math.ceil(level_size / (4 * oversample))
    n_levels = math.ceil(math.log2(n / level_size))
    perm = random_state.permutation(n)
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(-(-sizes[-1] // 2))
    diag = gram.diag()[perm]
    # Positions in `perm` of the current weighted sample; the deepest level is uniform.
    sample = np.arange(sizes[-1])
    weights = np.ones(sample.size)
    for level in range(n_levels - 1, -1, -1):
        size = sizes[level]
        selected = perm[sample]
        K_ss = gram.cross(gram.rows(selected), gram.columns(selected))
        K_ss = 0.5 * (K_ss + K_ss.T)
        ridge = _rls_ridge(K_ss, weights, rank)
        scores = _ridge_leverage_scores(gram, perm[:size], gram.columns(selected), K_ss,
                                        weights, ridge, diag[:size])
        if level > 0:
            # Intermediate level: keep each point independently with probability
            # min(1, oversample·τ_i); about level_size points in expectation.
            probabilities = np.minimum(1.0, oversample * scores)
            sample = np.flatnonzero(random_state.random_sample(size) < probabilities)
            if sample.size == 0:  # vanishingly rare; fall back to a uniform sample
                probabilities = np.full(size, min(1.0, level_size / size))
                sample = random_state.choice(size, min(level_size, size), replace=False)
            weights = 1.0 / np.sqrt(probabilities[sample])
        else:
            sample = _weighted_subset(np.minimum(1.0, scores), s, random_state)
    return perm[sample]


def _rls_ridge(K_ss: np.ndarray, weights: np.ndarray, rank: int) -> float:
    r"""λ = (tr(SᵀKS) − Σ_{i≤k} λ_i(SᵀKS)) / k: the tail mass per retained direction.

    With this λ the effective dimension is O(k), so the next level samples O(k log k)
    points (Musco & Musco, Theorem 3 and Algorithm 3).
    """
    weighted = K_ss * np.outer(weights, weights)
    size = weighted.shape[0]
    floor = _MIN_RIDGE * max(float(np.trace(weighted)) / size, np.finfo(np.float64).tiny)
    if rank >= size:
        return floor
    try:
        top = scipy.linalg.eigvalsh(weighted, subset_by_index=[size - rank, size - 1],
                                    check_finite=False)
    except np.linalg.LinAlgError:
        # LAPACK's subset driver (syevr) fails on tightly clustered eigenvalues, e.g. the
        # numerically-identity kernel matrix of a very large gamma; the full one does not.
        top = scipy.linalg.eigvalsh(weighted, driver="evd", check_finite=False)[size - rank:]
    ridge = (float(np.trace(weighted)) - float(np.abs(top).sum())) / rank
    return max(ridge, floor)


def _ridge_leverage_scores(gram: _Gram, rows: np.ndarray, columns: Any, K_ss: np.ndarray,
                           weights: np.ndarray, ridge: float,
                           diag: np.ndarray) -> np.ndarray:
    r"""τ̃_i = (k_ii − k_iSᵀ (K_SS + λ W⁻²)⁻¹ k_iS) / λ for every row i, in row blocks.

    :math:`K S (S^\top K S + \lambda I)^{-1} S^\top K` with the weighted sampling matrix
    :math:`S` equals :math:`K_{:S}(K_{SS} + \lambda W^{-2})^{-1}K_{S:}`, so the weights
    enter only the diagonal of one small Cholesky factorisation.
    """
    system = K_ss + np.diag(ridge / weights**2)
    factor = psd_factor(system, overwrite=True)  # system is this function's own sum
    if factor is None:
        raise ValueError(
            "Ridge leverage scores need a positive semi-definite kernel, but the kernel "
            "matrix of the sample is indefinite. Use a PSD kernel, or "
            "landmarks='uniform' or 'renyi'."
        )
    scores = np.empty(rows.size)
    step = block_rows_for(rows.size, 3 * 8 * K_ss.shape[0])
    for start in range(0, rows.size, step):
        stop = min(start + step, rows.size)
        block = gram.cross(gram.rows(rows[start:stop]), columns)
        solved = psd_factor_solve(factor, block.T)
        scores[start:stop] = diag[start:stop] - np.einsum("ij,ji->i", block, solved)
    # A residual can come out slightly negative by rounding; in theory it is >= 0.
    np.maximum(scores, 0.0, out=scores)
    scores /= ridge
    return scores


def _weighted_subset(weights: np.ndarray, size: int,
                     random_state: np.random.RandomState) -> np.ndarray:
    """``size`` distinct indices drawn with probability proportional to ``weights``."""
    positive = np.flatnonzero(weights > 0)
    if positive.size <= size:
        # Every other point has a zero residual, i.e. it is (numerically) in the span of
        # the sample already; take all the informative ones and fill up uniformly.
        rest = np.setdiff1d(np.arange(weights.size), positive)
        fill = random_state.choice(rest, size - positive.size, replace=False)
        return np.concatenate([positive, fill])
    p = weights[positive] / weights[positive].sum()
    return positive[random_state.choice(positive.size, size, replace=False, p=p)]
