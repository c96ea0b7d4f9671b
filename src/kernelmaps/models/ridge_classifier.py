r"""Kernel ridge classification: one-vs-rest ±1 targets, exact or Nyström + FALKON."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight

from kernelmaps._array_api import (
    array_placement,
    to_numpy,
)
from kernelmaps._engine import collection_handler, is_dask_collection
from kernelmaps._ridge import encode_labels, labels_from_scores
from kernelmaps._validation import validate_input
from kernelmaps.models._cg import STALL_FACTOR
from kernelmaps.models._common import as_float64, float64_like
from kernelmaps.models._kernel_blocks import attainable_residual
from kernelmaps.models._ridge_base import _KernelRidgeBase

__all__ = ["KernelRidgeClassifier"]


class KernelRidgeClassifier(ClassifierMixin, _KernelRidgeBase):
    r"""Kernel ridge classification: least squares on ±1 class targets, exact or at scale.

    scikit-learn's :class:`~sklearn.linear_model.RidgeClassifier` with a kernel: the labels
    (of any type) become one ±1 target per class — +1 for the sample's class, −1 for the
    others; a single column for two classes, +1 for ``classes_[1]`` — fitted by
    :class:`~kernelmaps.models.KernelRidge` regression, all classes in one solve, and a
    sample gets the class of the largest score :math:`f_c(x) = k(x, \cdot)\,c_c` (two
    classes: the sign of the score). Least squares on these targets is what Falkon's
    authors recommend for kernel classification at scale (Meanti et al., 2020): it needs no
    other solver than ridge regression's and is consistent for the class decision.

    ``solver="exact"`` solves :math:`(K + \alpha I)C = Y` by Cholesky;
    ``solver="nystrom"`` solves :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta =
    K_{nM}^\top W Y` by FALKON-preconditioned conjugate gradient, caching the kernel blocks
    within the ``kernel_cache_bytes`` budget, as :class:`~kernelmaps.models.KernelRidge`
    does (see there for the cost, the precision and ``fit_info_``). All classes share one
    pass over the data per iteration. On Dask collections the passes run on the workers;
    with ``array_api_dispatch`` the solve runs on X's device (labels are handled on the
    host, as scikit-learn's classifiers do).

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (> 0), shared by the classes.
    kernel : str, Kernel or callable, default="rbf"
        A name of :mod:`kernelmaps.kernels`, a Kernel, ``"precomputed"``, or a callable on
        pairs of rows.
    gamma : 'scale', 'auto', float or None, default='scale'
        Parameter of the rbf, laplacian, polynomial, sigmoid and chi2 kernels (ignored
        for a Kernel, a callable and other kernels, as in scikit-learn). ``'scale'``
        (default, as :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)`,
        the variance over all entries of the training X (sparse X:
        :math:`\overline{X^2}-\bar X^2`; 1 if it is 0), so :math:`\gamma\|x-y\|^2` is
        of order one whatever the units of the features; ``'auto'`` and ``None``:
        :math:`1/d`. Resolved once in ``fit`` into ``kernel_``.
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
        How the Nyström centres are chosen, as in :class:`~kernelmaps.models.KernelRidge`.
    landmark_params : dict, default=None
        Options of the landmark strategy (see :class:`~kernelmaps.Nystroem`).
    max_iter : int, default=100
        Maximum CG iterations.
    tol : float, default=1e-2
        CG stops when every class's preconditioned residual is below ``tol`` times its
        initial norm (a class whose residual is there leaves the iteration). A hundred times
        :class:`KernelRidge`'s default: the decision compares scores at the scale of the ±1
        targets and settles long before the scores do. Measured (Nyström, M up to 1,000):
        test accuracy at ``tol=1e-2`` within 0.05 % of the converged one (``tol=1e-6``) on
        breast_cancer, wine, digits and 20,000 Fashion-MNIST images, in about half the
        iterations of ``1e-3`` and a quarter of ``1e-6``; ``3e-2`` lost 0.13 % on
        Fashion-MNIST and ``1e-1`` 0.65 % (docs/models.md).

        Where ``tol`` is at least 30 times the relative residual float32 products can reach
        (``1e-2`` against 2e-3 at M = 3,000; docs/models.md, "Precision: float32 data"), a
        Nyström fit of float64 NumPy data (dense or sparse) caches its kernel blocks in
        float32 and multiplies them in float32 with float64 sums (the float32 data path):
        half the memory traffic and twice the SIMD width per pass, decisions unchanged (the
        rounding is ~1e-6 of the scores, the tolerance 1e-2). The centres, the M × M solves
        and ``predict`` stay in float64.
    random_state : int, RandomState instance or None, default=None
        Controls the choice of centres.
    verbose : int, default=0
        ``1``: report every CG iteration (see :class:`~kernelmaps.models.KernelRidge`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    kernel_ : Kernel
        The kernel, resolved once in ``fit``.
    dual_coef_ : ndarray of shape (n_samples or M,) or (n_samples or M, n_classes)
        1-D for two classes (the coefficients of ``classes_[1]``'s score).
    X_fit_ : {ndarray, sparse matrix}
        Training data (exact) or the centres (Nyström), used by predict.
    center_indices_ : ndarray of shape (M,)
        Rows of the training data used as centres (Nyström, when the centres are rows).
    solver_ : str
        The solver used: ``"exact"`` or ``"nystrom"`` (also for ``solver="falkon"``).
    n_iter_ : int
        CG iterations run (1 for the exact solver).
    fit_info_ : dict
        How the fit ran, as :class:`~kernelmaps.models.KernelRidge`'s ``fit_info_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit. Defined only when X has feature names that are
        all strings.

    See Also
    --------
    kernelmaps.models.FeatureRidgeClassifier : With ``Nystroem(n_components=M)`` as its map, the
        same Nyström problem from one pass of O(M²) statistics, with an exact ``partial_fit``:
        the streaming form of ``solver="nystrom"`` (docs/models.md).

    References
    ----------
    G. Meanti, L. Carratino, L. Rosasco and A. Rudi, "Kernel methods through the roof:
    handling billions of points efficiently", NeurIPS 2020. R. Rifkin and A. Klautau, "In
    defense of one-vs-all classification", JMLR 5, 2004.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps.models import KernelRidgeClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> model = KernelRidgeClassifier(alpha=1e-3, gamma=1e-3, solver="nystrom",
    ...                               n_components=800, random_state=0)
    >>> bool(model.fit(X[:1500], y[:1500]).score(X[1500:], y[1500:]) > 0.95)
    True
    """

    def __init__(self, alpha: float = 1.0, *, kernel: Any = "rbf",
                 gamma: float | str | None = "scale",
                 degree: float = 3, coef0: float = 1, kernel_params: dict | None = None,
                 solver: str = "auto", n_components: int = 1000, landmarks: str = "uniform",
                 landmark_params: dict | None = None, max_iter: int = 100, tol: float = 1e-2,
                 random_state: Any = None, verbose: int = 0) -> None:
        super().__init__(alpha, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         kernel_params=kernel_params, solver=solver,
                         n_components=n_components, landmarks=landmarks,
                         landmark_params=landmark_params, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelRidgeClassifier:
        """Fit the classifier.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (``kernel="precomputed"``: the (n_samples, n_samples) kernel). A
            dask array or DataFrame is fitted on its workers (Nyström solver).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        if is_dask_collection(X):
            return collection_handler("fit_kernel_ridge")(self, X, y, sample_weight)
        X, y = validate_input(self, X, y, reset=True)
        labels = to_numpy(y) if array_placement(y) else np.asarray(y)
        check_classification_targets(labels)
        self._set_classes(np.unique(labels))
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=float64_like(X))
        Y = as_float64(self._encode(labels), X)
        self._fit_targets(X, Y, sample_weight, ravel=self._n_targets == 1)
        return self

    def _nystrom_block_dtype(self, X: Any, n_centres: int) -> Any:
        """float32 blocks for float64 NumPy data when ``tol`` is far above float32's floor
        (see ``tol``); else X's dtype."""
        if ((isinstance(X, np.ndarray) or sp.issparse(X)) and X.dtype == np.float64
                and self.tol >= STALL_FACTOR * attainable_residual(np.float32, n_centres)):
            return np.float32
        return None

    def _set_classes(self, classes: np.ndarray) -> None:
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; got 1 "
                             f"class ({classes[0].item()!r}).")
        self.classes_ = classes
        self._n_targets = 1 if classes.size == 2 else classes.size

    def _encode(self, y: Any) -> np.ndarray:
        """±1 one-vs-rest targets (one column for two classes)."""
        return encode_labels(y, self.classes_)

    def decision_function(self, X: Any) -> Any:
        """Class scores :math:`k(X, \\text{centres})\\,C`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the score of ``classes_[1]`` (positive: that class).
        """
        if is_dask_collection(X):
            return collection_handler("map_rows")(self, X, "decision_function")
        return self._decision(X, "decision_function")

    def predict(self, X: Any) -> Any:
        """The class of the largest score (two classes: the sign of the score).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            In X's namespace when the classes are numbers (array API dispatch).
        """
        if is_dask_collection(X):
            return collection_handler("map_rows")(self, X, "predict")
        scores = self._decision(X, "predict")  # checks that the model is fitted
        return labels_from_scores(self.classes_, scores)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        return tags
