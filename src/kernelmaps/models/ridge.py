r"""Kernel ridge regression: exact (Cholesky) or Nyström + FALKON-preconditioned CG."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from kernelmaps._array_api import is_device_array, matmul, namespace_and_device
from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import collection_handler, is_dask_collection, run_blocks
from kernelmaps._validation import validate_input
from kernelmaps.kernels.degenerate import warn_if_degenerate
from kernelmaps.models._common import (
    KERNEL_PARAMETER_CONSTRAINTS,
    LANDMARK_PARAMETER_CONSTRAINTS,
    as_float64,
    centre_gram,
    check_fitted_placement,
    fit_kernel,
    float64_like,
    kernel_columns,
    select_centres,
)
from kernelmaps.models._solvers import falkon_solve

__all__ = ["KernelRidge"]

#: solver="auto" uses the exact solver up to this many samples (n×n float64 = 200 MB).
AUTO_EXACT_MAX_SAMPLES = 5_000


class KernelRidge(MultiOutputMixin, RegressorMixin, BaseEstimator):
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
    2017; see :mod:`kernelmaps.models._solvers`): with :math:`K_{MM} = T^\top T` and
    :math:`A^\top A = TT^\top + \tfrac{\alpha M}{n}I` (Cholesky factors), :math:`B =
    T^{-1}A^{-1}` makes :math:`B^\top(K_{nM}^\top K_{nM} + \alpha K_{MM})B \approx \tfrac nM
    I`, so CG converges in a few tens of iterations. Each iteration is one pass over the data
    (``kernel_.reduce``) in cache-sized row blocks on threads: :math:`K_{nM}` is never held in
    memory, only one block of it per thread. Cost per iteration :math:`O(nMd)`; memory
    :math:`O(M^2 + \text{block})`. Sample weights :math:`w` enter as
    :math:`K_{nM}^\top W K_{nM}` and :math:`K_{nM}^\top W y`.

    Precision: kernel blocks are computed in the dtype of ``X`` (pass float32 data for
    speed), while every product over them — the CG passes, the right-hand side and
    ``predict`` — is accumulated in float64, and the small systems are solved in float64.
    A float32 fit therefore solves the normal equations of the float32-rounded kernel values
    :math:`\tilde K = K + E` (:math:`|E_{ij}| \lesssim \varepsilon_{32}|K_{ij}|`, more for a
    kernel whose evaluation cancels): converged, its predictions differ from the float64
    solution by the first-order effect of :math:`E`,

    .. math::

        |\delta f(x)| \le |E_x||\beta| + |r|^\top W|E||g_x| + |WKg_x|^\top|E||\beta|
          + \alpha|g_x|^\top|E_{MM}||\beta|, \qquad g_x = H^{-1}k_x,\ r = y - K\beta,

    typically 1e-5 of the predictions' scale on a well-conditioned problem (about 0.1 of
    the bound, measured under three OpenBLAS kernel families). CG's stopping error comes on
    top: at the default ``tol=1e-4`` it dominates, in float32 as in float64 (about 1e-4 to
    1e-3 of the scale); lower ``tol`` towards 1e-8 to reach the float32 floor. Where
    :math:`K_{MM}` is numerically singular (a tiny ``gamma``, more centres than the kernel's
    rank) the bound exceeds the predictions and float32 and float64 fits may differ in the
    directions the rounding erases.

    Any array library: with ``sklearn.config_context(array_api_dispatch=True)`` and X, y of
    PyTorch (CPU or CUDA), CuPy or ``array_api_strict``, both solvers run on X's device —
    kernel blocks, the data passes, the FALKON factorisations and CG — and the fitted arrays
    live there (float64 where the device has it). The centres are drawn as for NumPy input
    (the same ``random_state`` gives the same centres).

    Parameters
    ----------
    alpha : float or ndarray of shape (n_targets,), default=1.0
        Regularisation strength (> 0). An array gives one per target (exact solver only).
    kernel : str, Kernel or callable, default="linear"
        A name of :mod:`kernelmaps.kernels`, a Kernel, ``"precomputed"``, or a callable on
        pairs of rows.
    gamma, degree, coef0 : float
        Parameters of the named kernel, used where it has them and ignored for a Kernel,
        a callable or ``"precomputed"`` (as in scikit-learn).
    kernel_params : dict, default=None
        Further kernel parameters (e.g. ``alpha`` of the Student kernel), or the keyword
        arguments of a callable.
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
    kernel_ : Kernel
        The kernel, resolved once in ``fit`` (:func:`kernelmaps.kernels.resolve_kernel`); a
        :class:`~kernelmaps.kernels.PrecomputedKernel` for ``kernel="precomputed"``.
    dual_coef_ : ndarray of shape (n_samples or M,) or (n_samples or M, n_targets)
        The coefficients c (exact) or β (Nyström).
    X_fit_ : {ndarray, sparse matrix}
        Training data (exact) or the centres (Nyström), used by predict; for
        ``kernel="precomputed"`` the training kernel matrix (exact) or the centres' row
        indices (Nyström).
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
    >>> model.kernel_
    RBFKernel(gamma=0.5, sigma=None)
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither"), "array-like"],
        **KERNEL_PARAMETER_CONSTRAINTS,
        "solver": [StrOptions({"auto", "exact", "nystrom"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        **LANDMARK_PARAMETER_CONSTRAINTS,
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
            Training data (``kernel="precomputed"``: the (n_samples, n_samples) kernel). A
            dask array or DataFrame is fitted on its workers (Nyström solver; see
            :mod:`kernelmaps.distributed`).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets (finite).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
        """
        if is_dask_collection(X):  # Dask (optional): FALKON, K_nM passes on the workers
            return collection_handler("fit_kernel_ridge")(self, X, y, sample_weight)
        X, y = validate_input(self, X, y, reset=True, multi_output=True, y_numeric=True)
        self.kernel_ = fit_kernel(self)  # kernel parameter errors before any work
        if self._pairwise and X.shape[0] != X.shape[1]:
            raise ValueError("With kernel='precomputed', X must be the square (n_samples, "
                             f"n_samples) training kernel matrix; got shape {X.shape}.")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=float64_like(X))
        alpha = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64))
        targets = 1 if y.ndim == 1 else y.shape[1]
        if alpha.ndim != 1 or alpha.size not in (1, targets) or np.any(alpha <= 0):
            raise ValueError(f"alpha must be a positive float or an array of {targets} positive "
                             f"values (one per target); got {self.alpha!r}.")
        self.solver_ = self._choose_solver(X.shape[0])
        y64 = as_float64(y, X)
        # A refit must not keep the centres of an earlier Nyström fit.
        self.__dict__.pop("center_indices_", None)
        if self.solver_ == "exact":
            self.X_fit_ = X
            self._columns = kernel_columns(self.kernel_, X, _row_indices(X))
            fit_exact = self._fit_exact_device if is_device_array(X) else self._fit_exact
            self.dual_coef_ = fit_exact(X, y64, alpha, sample_weight)
            self.n_iter_ = 1  # one direct solve
        else:
            if alpha.size > 1 and np.ptp(alpha) > 0:
                raise ValueError("solver='nystrom' takes a single alpha for all targets; fit "
                                 "one model per alpha or use solver='exact'.")
            self.dual_coef_ = self._fit_nystrom(X, y64, float(alpha[0]), sample_weight)
        return self

    @property
    def _pairwise(self) -> bool:
        """Whether X holds kernel values (``kernel="precomputed"``), for the tags."""
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _choose_solver(self, n_samples: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "exact" if n_samples <= AUTO_EXACT_MAX_SAMPLES else "nystrom"

    def _fit_exact(self, X, y, alpha, sample_weight) -> np.ndarray:
        # A fresh array from the kernel (never the caller's X), so it is scaled in place.
        K = np.asarray(self.kernel_(X), dtype=np.float64)
        warn_if_degenerate(K, X, self.kernel_, owner="KernelRidge", what="training points",
                           stacklevel=5)
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

    def _fit_exact_device(self, X, y, alpha, sample_weight):
        """:meth:`_fit_exact` on X's device: the same weighted system, solved there."""
        xp, device = namespace_and_device(X)
        K = as_float64(self.kernel_(X), X)
        Y = y[:, None] if y.ndim == 1 else y
        if sample_weight is not None:
            root = xp.sqrt(sample_weight)
            K = K * (root[:, None] * root[None, :])
            Y = Y * root[:, None]
        identity = xp.eye(K.shape[0], dtype=K.dtype, device=device)
        if alpha.size == 1:
            coefficients = _solve_psd_device(xp, K + float(alpha[0]) * identity, Y)
        else:  # one system per target
            coefficients = xp.concat([_solve_psd_device(xp, K + a * identity, Y[:, j:j + 1])
                                      for j, a in enumerate(alpha.tolist())], axis=1)
        if sample_weight is not None:
            coefficients *= xp.sqrt(sample_weight)[:, None]
        return coefficients[:, 0] if y.ndim == 1 else coefficients

    def _fit_nystrom(self, X, y, alpha, sample_weight) -> np.ndarray:
        n = X.shape[0]
        centres, indices = select_centres(self, X, self.kernel_, min(self.n_components, n))
        if indices is not None:
            self.center_indices_ = indices
        # A precomputed kernel reaches the centres by their row indices (its columns).
        self._columns = self.X_fit_ = kernel_columns(self.kernel_, centres, indices)
        K_MM = centre_gram(self.kernel_, centres, self._columns)
        warn_if_degenerate(K_MM, centres, self.kernel_, owner="KernelRidge", what="centres",
                           stacklevel=5)
        xp = array_api_compat.array_namespace(y)  # NumPy, or X's namespace on its device
        ravel = y.ndim == 1
        Y = xp.reshape(y, (-1, 1)) if ravel else y
        weights = as_float64(np.ones(n), X) if sample_weight is None else sample_weight
        beta, self.n_iter_ = falkon_solve(
            lambda V: self._weighted_gram_times(X, V, weights), K_MM, alpha,
            rhs=self._weighted_cross(X, Y, weights), total_weight=float(xp.sum(weights)),
            max_iter=self.max_iter, tol=self.tol,
        )
        return xp.reshape(beta, (-1,)) if ravel else beta

    # The two data passes of the normal equations, one block of K_nM per thread ----------
    # The blocks are computed in X's dtype; the products over them are accumulated in
    # float64 (V, w and Y are float64). Rounding V to float32 and summing M and block-rows
    # terms in float32 makes the operator inconsistent at ~√M·eps32 of |K||V|, which the
    # preconditioner's T⁻¹ amplifies: float32 FALKON then landed ~1 % from the solution of
    # its own normal equations, or diverged when K_MM is nearly singular (issue 17).
    def _weighted_gram_times(self, X, V, weights) -> np.ndarray:
        """K_nMᵀ diag(w) K_nM V, accumulated in V's dtype (float64)."""
        def block(K_b, w_b):
            xp = array_api_compat.array_namespace(K_b)
            K_b = xp.astype(K_b, V.dtype, copy=False)
            KV = K_b @ V
            KV *= w_b[:, None]
            return K_b.T @ KV
        return self.kernel_.reduce(X, self._columns, block, weights)

    def _weighted_cross(self, X, Y, weights) -> np.ndarray:
        """K_nMᵀ diag(w) Y, accumulated in Y's dtype (float64)."""
        def block(K_b, w_b, Y_b):
            xp = array_api_compat.array_namespace(K_b)
            return xp.astype(K_b, Y_b.dtype, copy=False).T @ (Y_b * w_b[:, None])
        return self.kernel_.reduce(X, self._columns, block, weights, Y)

    # ------------------------------------------------------------------ predict
    def predict(self, X: Any) -> np.ndarray:
        """Predict with the fitted model, :math:`k(X, \\text{centres})\\,c` in row blocks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            (``kernel="precomputed"``: the kernel between X and the training data, shape
            (n_samples, n_train_samples).)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        if is_dask_collection(X):  # Dask (optional): lazy, chunk by chunk
            return collection_handler("map_rows")(self, X, "predict")
        check_is_fitted(self)
        X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.dual_coef_, "predict")
        return kernel_times(self.kernel_, X, self._columns, self.dual_coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._pairwise
        tags.input_tags.pairwise = self._pairwise
        tags.array_api_support = True
        return tags


def kernel_times(kernel: Any, X: Any, columns: Any, coef: Any) -> Any:
    """``K(X, columns) @ coef`` in row blocks, the kernel block in X's dtype and the product
    accumulated in float64 (where X's device has it): a float32 sum of M terms
    ``k(x, c_j) β_j`` loses up to M·eps32·Σ|k(x, c_j)||β_j|, far more than the float32
    rounding of the kernel values themselves when β has cancelling entries."""
    if is_device_array(X):
        xp, _ = namespace_and_device(X)
        coef = as_float64(coef, X)

        def device_block(xb, out):
            return matmul(xp, xp.astype(kernel.evaluate(xb, columns), coef.dtype, copy=False),
                          coef if coef.ndim == 2 else coef[:, None], out=out)
        result = run_blocks(X, n_out=1 if coef.ndim == 1 else coef.shape[1],
                            dtype=coef.dtype, block_fn=device_block,
                            temp_bytes_per_row=16 * coef.shape[0], name="KernelRidge.predict")
        return result[:, 0] if coef.ndim == 1 else result
    coef = np.asarray(coef, dtype=np.float64)
    V = coef.reshape(coef.shape[0], -1)

    def block(xb, out):
        np.matmul(kernel.evaluate(xb, columns).astype(np.float64, copy=False), V, out=out)

    result = run_blocks(X, n_out=V.shape[1], dtype=np.dtype(np.float64), block_fn=block,
                        temp_bytes_per_row=12 * V.shape[0], n_threads=resolve_n_threads(),
                        name="KernelRidge.predict")
    return result[:, 0] if coef.ndim == 1 else result


def _row_indices(X: Any) -> Any:
    """0 … n−1, on X's device for a device array (a precomputed kernel's columns)."""
    if is_device_array(X):
        xp, device = namespace_and_device(X)
        return xp.arange(X.shape[0], device=device)
    return np.arange(X.shape[0])


def _solve_psd_device(xp: Any, system: Any, Y: Any) -> Any:
    """``system⁻¹ Y`` on the device for a symmetric system; least squares (pseudo-inverse)
    with scikit-learn's warning when it is not positive definite, as :meth:`_fit_exact`."""
    try:
        factor = xp.linalg.cholesky(system)
        positive_definite = bool(xp.all(xp.isfinite(xp.linalg.diagonal(factor))))
    except (RuntimeError, ValueError, np.linalg.LinAlgError):
        positive_definite = False
    if positive_definite:
        if array_api_compat.is_torch_array(factor):
            import torch  # only reached with torch tensors

            return torch.cholesky_solve(Y, factor)
        return xp.linalg.solve(system, Y)
    warnings.warn("Singular matrix in solving dual problem (is the kernel PSD?). "
                  "Using least-squares solution instead.", stacklevel=4)
    return xp.linalg.pinv(system) @ Y


def _alpha_groups(alpha: np.ndarray, n_targets: int):
    """Yield (target columns, alpha) pairs: one system per distinct alpha."""
    if alpha.size == 1:
        yield slice(None), float(alpha[0])
        return
    for value in np.unique(alpha):
        yield np.flatnonzero(alpha == value), float(value)
