r"""Kernel ridge regression: exact (Cholesky) or Nyström + FALKON-preconditioned CG."""

from __future__ import annotations

from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.utils.validation import _check_sample_weight

from kernelmaps._engine import collection_handler, is_dask_collection
from kernelmaps._validation import validate_input
from kernelmaps.models._common import as_float64, float64_like
from kernelmaps.models._ridge_base import _KernelRidgeBase

__all__ = ["KernelRidge"]


class KernelRidge(MultiOutputMixin, RegressorMixin, _KernelRidgeBase):
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
    2017): with :math:`K_{MM} = T^\top T` and
    :math:`A^\top A = TT^\top + \tfrac{\alpha M}{n}I` (Cholesky factors), :math:`B =
    T^{-1}A^{-1}` makes :math:`B^\top(K_{nM}^\top K_{nM} + \alpha K_{MM})B \approx \tfrac nM
    I`, so CG converges in a few tens of iterations. Sample weights :math:`w` enter as
    :math:`K_{nM}^\top W K_{nM}` and :math:`K_{nM}^\top W y`. Cost: :math:`O(nMd)` for the
    first pass over the data, then :math:`O(nMt)` per iteration from the kernel blocks it
    keeps (the ``kernel_cache_bytes`` setting of :func:`kernelmaps.set_config`; rows beyond
    it are recomputed, :math:`O(nMd)`); memory :math:`O(M^2)` plus that cache.
    ``fit_info_`` says which path was taken, ``verbose=1`` reports each CG iteration, and
    :func:`kernelmaps.models.estimate_fit_cost` predicts time and memory before a fit.

    Kernel blocks are computed in the dtype of ``X`` (pass float32 data for speed). float64
    data is computed in float64 throughout; float32 data is multiplied in float32 over
    64-row sub-blocks whose results are summed in float64, which lets CG reach a relative
    residual of about :math:`10(\sqrt M + 8)\,\varepsilon_{32}` (5e-5 to 8e-5 for M =
    1,000-3,000): a ``tol`` below it warns (``ToleranceBelowPrecisionWarning``) and stops
    there. With
    ``sklearn.config_context(array_api_dispatch=True)`` both solvers run on the device of
    X's array library (PyTorch, CuPy, ``array_api_strict``). The user guide's pages
    ``docs/models.md`` ("The kernel-block cache", "Precision: float32 data (the rule)", with
    the bound on a float32 fit's predictions) and ``docs/gpu.md`` have the details.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_targets,), default=1.0
        Regularisation strength (> 0). An array gives one per target (exact solver only).
    kernel : str, Kernel or callable, default="linear"
        A name of :mod:`kernelmaps.kernels`, a Kernel, ``"precomputed"``, or a callable on
        pairs of rows.
    gamma : 'scale', 'auto', float or None, default=None
        Parameter of the rbf, laplacian, polynomial, sigmoid and chi2 kernels, ignored for
        a Kernel, a callable or ``"precomputed"`` (as in scikit-learn); ``None`` is the
        kernel's default (:math:`1/d`; chi2: 1), as in
        :class:`sklearn.kernel_ridge.KernelRidge`. ``'scale'``:
        :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the variance over all entries of the
        training X (sparse X: :math:`\overline{X^2}-\bar X^2`; 1 if it is 0),
        :class:`sklearn.svm.SVC`'s definition, resolved once in ``fit`` into ``kernel_``
        (on a Dask array with Dask's reductions); ``'auto'``: :math:`1/d`.
    degree : float, default=3
        Degree of the polynomial kernel, as in scikit-learn; ignored by other kernels, a
        Kernel, a callable or ``"precomputed"``.
    coef0 : float, default=1
        Offset of the polynomial and sigmoid kernels, as in scikit-learn; ignored by other
        kernels, a Kernel, a callable or ``"precomputed"``.
    kernel_params : dict, default=None
        Further kernel parameters (e.g. ``alpha`` of the Student kernel), or the keyword
        arguments of a callable.
    solver : {"auto", "exact", "nystrom", "falkon"}, default="auto"
        ``"auto"``: exact, as scikit-learn's, while the exact fit fits the machine
        (its n × n float64 matrix within half the available memory, its time estimated by
        the cost model at most 300 s; docs/models.md); beyond, Nyström with an
        ``ApproximateSolverWarning`` saying so (``solver_`` says what ran). ``"falkon"`` and
        ``"nystrom"`` are the same solver (FALKON over M Nyström centres) under two names:
        the same model, ``solver_`` ``"nystrom"`` for both.
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
        its initial norm. For float32 data the attainable relative residual is
        :math:`10(\sqrt M + \sqrt{64})\,\varepsilon_{32}` (4.7e-5 at M = 1,000, 7.5e-5 at
        M = 3,000; docs/models.md, "Precision: float32 data"): a smaller
        ``tol`` warns with ``ToleranceBelowPrecisionWarning`` and CG stops there; near it,
        CG checks its true residual every 10 iterations and stops where that stalls.
    random_state : int, RandomState instance or None, default=None
        Controls the choice of centres.
    verbose : int, default=0
        ``1``: report the phases and every CG iteration (relative residual, elapsed time,
        ETA) with rich or tqdm when installed, else on the ``"kernelmaps"`` logger.

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
        The solver used: ``"exact"`` or ``"nystrom"`` (also for ``solver="falkon"``).
    n_iter_ : int
        CG iterations run (1 for the exact solver: one direct solve).
    fit_info_ : dict
        How the fit ran: ``solver``; for Nyström also ``path`` (``"cached"``,
        ``"partly cached"`` or ``"recompute"``: whether CG read the kernel blocks from
        memory), ``cached_rows``, ``cache_bytes``, ``cache_budget_bytes``, ``iterations``,
        ``converged``, ``jitter`` (added to K_MM's diagonal), ``first_pass_s`` (of which
        ``first_touch_s`` faulted the cache's pages in),
        ``preconditioner_s``, ``solve_s`` (preconditioner and CG) and ``sweep``: how CG
        multiplied the cached blocks — ``"compiled"`` (Numba; ``set_config(jit=...)``),
        ``"blas"``, ``"float64"`` (widened products) or ``None`` (nothing cached).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit. Defined only when X has feature names that are
        all strings.

    See Also
    --------
    kernelmaps.models.FeatureRidge : With ``Nystroem(n_components=M)`` as its map, the same
        Nyström problem from one pass of O(M²) statistics, with an exact ``partial_fit``:
        the streaming form of ``solver="nystrom"`` (docs/models.md).

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

    # The parameters and their defaults are _KernelRidgeBase's (scikit-learn's KernelRidge
    # plus the Nyström ones).

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
            The fitted estimator.
        """
        if is_dask_collection(X):  # Dask (optional): FALKON, K_nM passes on the workers
            return collection_handler("fit_kernel_ridge")(self, X, y, sample_weight)
        X, y = validate_input(self, X, y, reset=True, multi_output=True, y_numeric=True,
                              classifier="KernelRidgeClassifier")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=float64_like(X))
        Y = as_float64(y, X)
        ravel = Y.ndim == 1
        if ravel:
            Y = array_api_compat.array_namespace(Y).reshape(Y, (-1, 1))
        self._fit_targets(X, Y, sample_weight, ravel)
        return self

    def predict(self, X: Any) -> np.ndarray:
        r"""Predict with the fitted model, :math:`k(X, \text{centres})\,c` in row blocks.

        The kernel blocks are computed in X's dtype and multiplied by the coefficients in
        float64.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            (``kernel="precomputed"``: the kernel between X and the training data, shape
            (n_samples, n_train_samples).)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            The predictions :math:`f(x)`, one column per target of the fit.
        """
        if is_dask_collection(X):  # Dask (optional): lazy, chunk by chunk
            return collection_handler("map_rows")(self, X, "predict")
        return self._decision(X, "predict")
