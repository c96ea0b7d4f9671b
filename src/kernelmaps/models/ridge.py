r"""Kernel ridge regression: exact (Cholesky) or Nyström + preconditioned conjugate gradient."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from kernelmaps.models._common import (
    KERNEL_PARAMETER_CONSTRAINTS,
    KernelModelMixin,
    float_dtypes,
)

__all__ = ["KernelRidge"]

#: solver="auto" uses the exact solver up to this many samples (n×n float64 = 200 MB).
AUTO_EXACT_MAX_SAMPLES = 5_000


class KernelRidge(MultiOutputMixin, RegressorMixin, KernelModelMixin, BaseEstimator):
    r"""Kernel ridge regression, exact or at scale with Nyström + preconditioned CG.

    Minimises :math:`\|y - Kc\|^2 + \alpha\,c^\top K c` and predicts
    :math:`f(x) = k(x, X)\,c`.

    ``solver="exact"`` solves :math:`(K + \alpha I)c = y` by Cholesky, with the same
    parameters and predictions as :class:`sklearn.kernel_ridge.KernelRidge` (a drop-in).

    ``solver="nystrom"`` restricts :math:`f` to the span of :math:`M` centres
    :math:`\tilde x_1..\tilde x_M` (uniform rows by default, see ``landmarks``), :math:`f(x) = k(x,
    \tilde X)\beta`, and solves the normal equations

    .. math::

        (K_{nM}^\top K_{nM} + \alpha K_{MM})\,\beta = K_{nM}^\top y

    by conjugate gradient with the FALKON preconditioner (Rudi, Carratino & Rosasco, NeurIPS
    2017): with :math:`K_{MM} = T^\top T` and :math:`A^\top A = TT^\top + \tfrac{\alpha M}{n}I`
    (Cholesky factors), :math:`B = T^{-1}A^{-1}` makes :math:`B^\top(K_{nM}^\top K_{nM} +
    \alpha K_{MM})B \approx \tfrac nM I`, so CG converges in a few tens of iterations. Each
    iteration is one pass over the data in cache-sized row blocks on threads:
    :math:`K_{nM}` is never held in memory, only one block of it per thread. Cost per
    iteration :math:`O(nMd)`; memory :math:`O(M^2 + \text{block})`. Kernel blocks are computed
    in the dtype of ``X`` (pass float32 data for speed); the small systems are solved in
    float64.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_targets,), default=1.0
        Regularisation strength (> 0). An array gives one per target (exact solver only).
    kernel : str, Kernel or callable, default="linear"
        A name of :mod:`kernelmaps.kernels`, a Kernel, ``"precomputed"``, or a callable on
        pairs of rows.
    gamma, degree, coef0 : float
        Parameters of the named kernel, used where it has them (as in scikit-learn).
    kernel_params : dict, default=None
        Further kernel parameters (e.g. ``alpha`` of the Student kernel).
    solver : {"auto", "exact", "nystrom"}, default="auto"
        ``"auto"``: exact up to 5,000 samples, Nyström beyond.
    n_components : int, default=1000
        Number of Nyström centres M (clamped to n_samples).
    landmarks : {"uniform", "kmeans", "leverage", "renyi"}, default="uniform"
        How the centres are chosen (see :mod:`kernelmaps.landmarks`): uniformly drawn rows,
        k-means centres (better spread, costs k-means), ridge-leverage-score sampling, or the
        quadratic-Rényi-entropy subset.
    landmark_params : dict, default=None
        Options of the landmark strategy.
    max_iter : int, default=100
        Maximum conjugate-gradient iterations (data passes).
    tol : float, default=1e-4
        CG stops when every target's preconditioned residual norm is below ``tol`` times
        its initial norm.
    random_state : int, RandomState instance or None, default=None
        Controls the choice of centres.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples or M,) or (n_samples or M, n_targets)
        The coefficients c (exact) or β (Nyström).
    X_fit_ : {ndarray, sparse matrix}
        Training data (exact) or the centres (Nyström), used by predict.
    center_indices_ : ndarray of shape (M,)
        Rows of the training data used as centres (Nyström, when the centres are rows:
        not for k-means).
    solver_ : str
        The solver used.
    n_iter_ : int
        CG iterations run (1 for the exact solver: one direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    A. Rudi, L. Carratino and L. Rosasco, "FALKON: An optimal large scale kernel method",
    NeurIPS 2017. C. Saunders, A. Gammerman and V. Vovk, "Ridge regression learning algorithm
    in dual variables", ICML 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import KernelRidge
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(2000, 1)); y = np.sin(X[:, 0])
    >>> model = KernelRidge(alpha=1e-3, kernel="rbf", gamma=0.5, solver="nystrom",
    ...                     n_components=100, random_state=0).fit(X, y)
    >>> bool(np.abs(model.predict(X) - y).max() < 0.01)
    True
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither"), "array-like"],
        **KERNEL_PARAMETER_CONSTRAINTS,
        "solver": [StrOptions({"auto", "exact", "nystrom"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"uniform", "kmeans", "leverage", "renyi"})],
        "landmark_params": [dict, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, alpha: float | np.ndarray = 1.0, *, kernel: Any = "linear",
                 gamma: float | None = None, degree: float = 3, coef0: float = 1,
                 kernel_params: dict | None = None, solver: str = "auto",
                 n_components: int = 1000, landmarks: str = "uniform",
                 landmark_params: dict | None = None, max_iter: int = 100, tol: float = 1e-4,
                 random_state: Any = None) -> None:
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.solver = solver
        self.n_components = n_components
        self.landmarks = landmarks
        self.landmark_params = landmark_params
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelRidge:
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (``kernel="precomputed"``: the (n_samples, n_samples) kernel).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets (finite).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", multi_output=True,
                             y_numeric=True, dtype=float_dtypes())
        self._resolved()  # kernel parameter errors before any work
        if self._precomputed and X.shape[0] != X.shape[1]:
            raise ValueError("With kernel='precomputed', X must be the square (n_samples, "
                             f"n_samples) training kernel matrix; got shape {X.shape}.")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        alpha = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64))
        targets = 1 if y.ndim == 1 else y.shape[1]
        if alpha.ndim != 1 or alpha.size not in (1, targets) or np.any(alpha <= 0):
            raise ValueError(f"alpha must be a positive float or an array of {targets} positive "
                             f"values (one per target); got {self.alpha!r}.")
        self.solver_ = self._choose_solver(X.shape[0])
        y64 = np.asarray(y, dtype=np.float64)
        if self.solver_ == "exact":
            self.dual_coef_ = self._fit_exact(X, y64, alpha, sample_weight)
            self.X_fit_ = X
            self.n_iter_ = 1  # one direct solve
        else:
            if alpha.size > 1 and np.ptp(alpha) > 0:
                raise ValueError("solver='nystrom' takes a single alpha for all targets; fit "
                                 "one model per alpha or use solver='exact'.")
            self.dual_coef_ = self._fit_nystrom(X, y64, float(alpha[0]), sample_weight)
        return self

    def _choose_solver(self, n_samples: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "exact" if n_samples <= AUTO_EXACT_MAX_SAMPLES else "nystrom"

    def _fit_exact(self, X, y, alpha, sample_weight) -> np.ndarray:
        K = np.array(self._kernel_matrix(X), dtype=np.float64)
        ravel = y.ndim == 1
        Y = y.reshape(-1, 1) if ravel else y
        if sample_weight is not None:
            # Weighted ridge through √w scaling, as scikit-learn does (out of place: y is
            # the caller's array).
            root = np.sqrt(sample_weight)
            K *= np.outer(root, root)
            Y = Y * root[:, None]
        n = K.shape[0]
        coefficients = np.empty_like(Y)
        for column, a in _alpha_groups(alpha, Y.shape[1]):
            system = K.copy()
            system.flat[:: n + 1] += a
            try:
                factor = scipy.linalg.cho_factor(system, overwrite_a=True, check_finite=False)
                coefficients[:, column] = scipy.linalg.cho_solve(factor, Y[:, column],
                                                                 check_finite=False)
            except np.linalg.LinAlgError:
                warnings.warn("Singular matrix in solving dual problem (is the kernel PSD?). "
                              "Using least-squares solution instead.", stacklevel=3)
                system = K.copy()
                system.flat[:: n + 1] += a
                coefficients[:, column] = scipy.linalg.lstsq(system, Y[:, column])[0]
        if sample_weight is not None:
            coefficients *= np.sqrt(sample_weight)[:, None]
        return coefficients.ravel() if ravel else coefficients

    def _fit_nystrom(self, X, y, alpha, sample_weight) -> np.ndarray:
        n = X.shape[0]
        M = min(self.n_components, n)
        centers, indices = self._choose_centers(X, M)
        if self._precomputed:
            # predict takes the kernel between new points and the training rows: keep the
            # centres' row indices and read those columns.
            self.center_indices_ = indices
            self.X_fit_ = indices
            K_MM = X[indices][:, indices]
            K_MM = np.asarray(K_MM.toarray() if hasattr(K_MM, "toarray") else K_MM,
                              dtype=np.float64)
        else:
            if indices is not None:
                self.center_indices_ = indices
            self.X_fit_ = centers
            K_MM = np.asarray(self._kernel_matrix(centers.astype(np.float64)),
                              dtype=np.float64)
        ravel = y.ndim == 1
        Y = y.reshape(-1, 1) if ravel else y
        weights = np.ones(n) if sample_weight is None else sample_weight
        beta, self.n_iter_ = falkon_solve(
            lambda v: self._normal_matvec(X, v, weights), K_MM, alpha,
            rhs=self._normal_rhs(X, Y, weights), total_weight=float(weights.sum()),
            max_iter=self.max_iter, tol=self.tol,
        )
        return beta.ravel() if ravel else beta

    # Data passes of the normal equations, in row blocks ---------------------------------
    def _choose_centers(self, X, M: int):
        """Centres by the landmark strategy (:mod:`kernelmaps.landmarks`): (points, rows)."""
        from kernelmaps.landmarks import select_landmarks

        kernel = self._resolved()
        rng = check_random_state(self.random_state)
        return select_landmarks(self.landmarks, X, kernel, M, random_state=rng,
                                options=self.landmark_params)

    def _block_against_centers(self, X_block):
        if self._precomputed:
            block = X_block[:, self.center_indices_]
            return block.toarray() if hasattr(block, "toarray") else block
        return self._kernel_block(X_block, self.X_fit_)

    def _normal_matvec(self, X, V, weights) -> np.ndarray:
        """K_nMᵀ diag(w) K_nM V, one pass over X."""
        def block(index_block):
            start, stop = index_block[0], index_block[-1] + 1
            Kb = self._block_against_centers(X[start:stop])
            KbV = Kb @ V.astype(Kb.dtype, copy=False)
            KbV *= weights[start:stop, None].astype(Kb.dtype, copy=False)
            return Kb.T @ KbV
        return self._reduce(X, block)

    def _normal_rhs(self, X, Y, weights) -> np.ndarray:
        """K_nMᵀ diag(w) Y, one pass over X."""
        def block(index_block):
            start, stop = index_block[0], index_block[-1] + 1
            Kb = self._block_against_centers(X[start:stop])
            WY = (Y[start:stop] * weights[start:stop, None]).astype(Kb.dtype, copy=False)
            return Kb.T @ WY
        return self._reduce(X, block)

    def _reduce(self, X, block) -> np.ndarray:
        from kernelmaps._config import resolve_n_threads
        from kernelmaps._engine import reduce_blocks

        M = self.X_fit_.shape[0]
        return reduce_blocks(np.arange(X.shape[0]), block, bytes_per_row=3 * 8 * M,
                             n_threads=resolve_n_threads(None))

    # ------------------------------------------------------------------ predict
    def predict(self, X: Any) -> np.ndarray:
        """Predict with the fitted model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            (``kernel="precomputed"``: the kernel between X and the training data, shape
            (n_samples, n_train_samples).)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False, dtype=float_dtypes())
        if self._precomputed:
            if self.solver_ == "nystrom":
                return np.asarray(X[:, self.center_indices_] @ self.dual_coef_)
            return np.asarray(X @ self.dual_coef_)
        return self._kernel_times(X, self.X_fit_, self.dual_coef_).astype(np.float64,
                                                                          copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._precomputed
        tags.input_tags.pairwise = self._precomputed
        return tags


def _alpha_groups(alpha: np.ndarray, n_targets: int):
    """Yield (target columns, alpha) pairs: one system per distinct alpha."""
    if alpha.size == 1:
        yield slice(None), float(alpha[0])
        return
    for value in np.unique(alpha):
        yield np.flatnonzero(alpha == value), float(value)


def falkon_solve(matvec, K_MM: np.ndarray, alpha: float, *, rhs: np.ndarray,
                 total_weight: float, max_iter: int, tol: float) -> tuple[np.ndarray, int]:
    r"""Solve :math:`(K_{nM}^\top K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top y` by
    preconditioned conjugate gradient (FALKON).

    ``matvec(V)`` returns :math:`K_{nM}^\top K_{nM} V` (one data pass); ``rhs`` is
    :math:`K_{nM}^\top y` with one column per target. CG runs on all targets at once (one
    data pass per iteration for all of them), each with its own step sizes.
    """
    M = K_MM.shape[0]
    # Jitter against duplicate centres / low-rank kernels (Cholesky needs K_MM ≻ 0).
    jitter = M * np.finfo(np.float64).eps * max(float(np.trace(K_MM)) / M, 1e-300)
    T = _cholesky_with_jitter(K_MM, jitter)
    # H ≈ (n/M)·K_MM² + α·K_MM = (n/M)·Tᵀ(TTᵀ + αM/n·I)T, so with AᵀA = TTᵀ + αM/n·I the
    # preconditioned operator BᵀHB (B = T⁻¹A⁻¹) is close to (n/M)·I.
    A = _cholesky_with_jitter(T @ T.T, alpha * M / total_weight)
    solve = scipy.linalg.solve_triangular

    def apply_B(V):  # B = T⁻¹ A⁻¹
        return solve(T, solve(A, V, check_finite=False), check_finite=False)

    def apply_Bt(V):  # Bᵀ = A⁻ᵀ T⁻ᵀ
        return solve(A, solve(T, V, trans="T", check_finite=False), trans="T",
                     check_finite=False)

    def operator(V):
        BV = apply_B(V)
        return apply_Bt(matvec(BV) + alpha * (K_MM @ BV))

    b = apply_Bt(rhs)
    gamma = np.zeros_like(b)
    residual = b.copy()
    direction = residual.copy()
    rs_old = np.einsum("ij,ij->j", residual, residual)
    threshold = (tol ** 2) * np.maximum(rs_old, np.finfo(np.float64).tiny)
    iterations = 0
    for iterations in range(1, max_iter + 1):
        active = rs_old > threshold
        if not active.any():
            iterations -= 1
            break
        W_dir = operator(direction)
        curvature = np.einsum("ij,ij->j", direction, W_dir)
        step = np.where(active, rs_old / np.where(curvature > 0, curvature, 1.0), 0.0)
        gamma += direction * step
        residual -= W_dir * step
        rs_new = np.einsum("ij,ij->j", residual, residual)
        direction = residual + direction * np.where(active, rs_new / np.where(rs_old > 0,
                                                                              rs_old, 1.0), 0.0)
        rs_old = rs_new
    else:
        if np.any(rs_old > threshold):
            warnings.warn(f"Conjugate gradient did not converge in max_iter={max_iter} "
                          "iterations; increase max_iter or alpha, or loosen tol.",
                          stacklevel=3)
    return apply_B(gamma), iterations


def _cholesky_with_jitter(matrix: np.ndarray, jitter: float) -> np.ndarray:
    """Upper Cholesky factor of ``matrix + jitter·I``, growing the jitter if needed."""
    identity = np.eye(matrix.shape[0])
    for _ in range(12):
        try:
            return scipy.linalg.cholesky(matrix + jitter * identity, lower=False,
                                         check_finite=False)
        except np.linalg.LinAlgError:
            jitter = max(jitter * 100, 1e-12)
    raise ValueError("The centre kernel matrix is not positive definite even with jitter: the "
                     "kernel is probably not PSD (see kernelmaps.check_mercer).")
