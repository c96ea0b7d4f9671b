r"""Kernel Fisher discriminant analysis."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
import scipy.special
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from kernelmaps._array_api import (
    array_placement,
    is_device_array,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps._ridge import labels_from_scores
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.kernels.degenerate import warn_if_degenerate
from kernelmaps.models._common import (
    KERNEL_PARAMETER_CONSTRAINTS,
    LANDMARK_PARAMETER_CONSTRAINTS,
    as_float64,
    centre_gram,
    check_fitted_placement,
    expansion_points,
    fit_kernel,
)
from kernelmaps.models._kernel_blocks import cache_budget, cross_block

__all__ = ["KernelFisherDiscriminant"]


class KernelFisherDiscriminant(SuggestOptionsMixin, ClassifierMixin,
                               ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                               BaseEstimator):
    r"""Regularised kernel Fisher discriminant (Mika et al., 1999).

    Discriminant directions :math:`w = \sum_i a_i\,\phi(x_i)` maximise the ratio of between-
    to within-class scatter in feature space. With the kernel matrix :math:`K` (columns
    :math:`k(\cdot, x_i)`), class means :math:`m_c = \tfrac1{n_c}K\mathbf 1_c`, overall mean
    :math:`m`, :math:`S_B = \sum_c n_c (m_c - m)(m_c - m)^\top` and
    :math:`S_W = \sum_c K_c(I - \tfrac1{n_c}\mathbf 1\mathbf 1^\top)K_c^\top`,

    .. math::

        \max_a \frac{a^\top S_B\,a}{a^\top (S_W + \mu I)\,a}
        \quad\Longleftrightarrow\quad S_B\,a = \lambda\,(S_W + \mu I)\,a .

    For two classes this is the classical :math:`a \propto (S_W + \mu I)^{-1}(m_1 - m_2)`;
    for :math:`C` classes we solve the generalised symmetric eigenproblem above and keep the
    :math:`C-1` leading directions (the standard multi-class generalisation, as in LDA), so
    one model serves every number of classes. Samples are projected,
    :math:`f(x) = \sum_i a_i k(x_i, x)`, and classified by linear discriminant analysis in
    that (at most :math:`C-1`-dimensional) space: Gaussian classes with a shared covariance,
    which gives ``decision_function`` and calibrated-by-model ``predict_proba``. The
    probabilities come from the training projections and are therefore optimistic; wrap in
    :class:`sklearn.calibration.CalibratedClassifierCV` for held-out calibration.

    With ``n_components`` set, the expansion uses :math:`m` landmarks chosen by
    ``landmarks`` (:mod:`kernelmaps.landmarks`; uniform rows by default) instead of all
    :math:`n` training points (:math:`K` becomes :math:`n\times m`, the regulariser acts on
    :math:`a\in\mathbb R^m`): :math:`O(nm^2)` instead of :math:`O(n^3)` time. Kernel values
    come from the fitted ``kernel_``: :math:`K` in row blocks, projections
    :math:`K(X, \text{expansion})\,a` by ``kernel_.matmul`` without holding the kernel matrix.
    With landmarks, an :math:`n\times m` matrix beyond the ``kernel_cache_bytes`` budget
    (:func:`kernelmaps.set_config`) is not held either: the scatter matrices come from
    passes over its blocks (``fit_info_``).

    Parameters
    ----------
    reg : float, default=1e-3
        The regulariser μ > 0, relative to the mean diagonal of :math:`S_W` (so it does not
        depend on the kernel's scale).
    kernel : str, Kernel or callable, default="rbf"
        A name of :mod:`kernelmaps.kernels` or an alias, a Kernel, or a callable on pairs
        of rows.
    gamma : 'scale', 'auto', float or None, default='scale'
        Parameter of the rbf, laplacian, polynomial, sigmoid and chi2 kernels (ignored
        for a Kernel, a callable and other kernels, as in scikit-learn). ``'scale'``
        (default, as :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)`,
        the variance over all entries of the training X (sparse X:
        :math:`\overline{X^2}-\bar X^2`; 1 if it is 0), so :math:`\gamma\|x-y\|^2` is
        of order one whatever the units of the features; ``'auto'`` and ``None``:
        :math:`1/d`. Resolved once in ``fit`` into ``kernel_``.
    degree : float or None, default=None
        Degree of the polynomial kernel; None: the kernel's default (3). Ignored by other
        kernels, a Kernel or a callable.
    coef0 : float or None, default=None
        Offset of the polynomial and sigmoid kernels; None: the kernel's default (1).
        Ignored by other kernels, a Kernel or a callable.
    kernel_params : dict, default=None
        Further kernel parameters (e.g. ``alpha`` of the Student kernel), or the keyword
        arguments of a callable.
    n_components : int or None, default=None
        Number of landmarks; ``None`` (or at least n_samples) uses every training point
        (exact).
    landmarks : {"uniform", "kmeans", "leverage", "renyi"}, default="uniform"
        How the landmarks are chosen when ``n_components`` is set, as in
        :class:`~kernelmaps.models.KernelRidge` (see :mod:`kernelmaps.landmarks`).
    landmark_params : dict, default=None
        Options of the landmark strategy.
    random_state : int, RandomState instance or None, default=None
        Controls the landmarks.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel, resolved once in ``fit`` (:func:`kernelmaps.kernels.resolve_kernel`).
    classes_ : ndarray of shape (n_classes,)
        The class labels seen during fit.
    coef_ : ndarray of shape (n_expansion, n_discriminants)
        Expansion coefficients a of each discriminant direction.
    X_fit_ : ndarray
        The expansion points (training data or landmarks).
    eigenvalues_ : ndarray of shape (n_discriminants,)
        Generalised eigenvalues (Fisher ratios) of the kept directions.
    discriminant_coef_ : ndarray of shape (n_classes, n_discriminants) or (1, n_discriminants)
        Weights of the linear discriminant analysis in the discriminant space (the ``coef_``
        of :class:`sklearn.discriminant_analysis.LinearDiscriminantAnalysis` fitted on the
        training projections; one row for two classes).
    discriminant_intercept_ : ndarray of shape (n_classes,) or (1,)
        Its intercepts. Kept as arrays, not as a fitted LDA object, so the model's state is
        arrays only (safe to load with :mod:`kernelmaps.io`).
    fit_info_ : dict
        ``path``: ``"cached"`` when the n × p kernel matrix was held in memory (it fits
        the ``kernel_cache_bytes`` budget, or the expansion is on every training point),
        ``"recompute"`` when its blocks were evaluated in three passes (class sums,
        centred scatter, projections) to stay within the budget; ``cache_bytes``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    Notes
    -----
    The landmarks come from :func:`kernelmaps.landmarks.select_landmarks`, whose uniform
    draw is scikit-learn's (the first m entries of one permutation, in that order). Earlier
    versions drew them by hand (sorted ``rng.choice``), so a model with ``n_components``
    set differs from theirs for the same ``random_state``.

    References
    ----------
    S. Mika, G. Rätsch, J. Weston, B. Schölkopf and K.-R. Müller, "Fisher discriminant
    analysis with kernels", IEEE Neural Networks for Signal Processing IX, 1999.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.models import KernelFisherDiscriminant
    >>> X, y = load_iris(return_X_y=True)
    >>> model = KernelFisherDiscriminant().fit(X, y)
    >>> model.transform(X).shape  # three classes: two discriminant directions
    (150, 2)
    >>> round(model.score(X, y), 2)
    0.99
    """

    _parameter_constraints: dict = {
        "reg": [Interval(Real, 0, None, closed="neither")],
        **KERNEL_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        **LANDMARK_PARAMETER_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(self, reg: float = 1e-3, *, kernel: Any = "rbf",
                 gamma: float | str | None = "scale",
                 degree: float | None = None, coef0: float | None = None,
                 kernel_params: dict | None = None, n_components: int | None = None,
                 landmarks: str = "uniform", landmark_params: dict | None = None,
                 random_state: Any = None) -> None:
        self.reg = reg
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.landmark_params = landmark_params
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> KernelFisherDiscriminant:
        """Fit the discriminant.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data.
        y : array-like of shape (n_samples,)
            Class labels; at least two classes.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_input(self, X, y, reset=True)
        y = to_numpy(y) if array_placement(y) else y  # labels are handled on the host
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                "KernelFisherDiscriminant needs at least 2 classes in y; got 1 class "
                f"({self.classes_.tolist()}). A discriminant separates classes.")
        self.kernel_ = fit_kernel(self, X, precomputed=False)
        self.X_fit_ = expansion_points(self, X)
        # n × p; symmetric when the expansion is on X, so k(x, x) is exact on the diagonal.
        expansion_on_X = self.X_fit_ is X
        p = self.X_fit_.shape[0]
        if expansion_on_X or is_device_array(X) or 8 * X.shape[0] * p <= cache_budget():
            K = as_float64(self.kernel_(X) if expansion_on_X
                           else self.kernel_(X, self.X_fit_), X)
            self._check_expansion(K if expansion_on_X else None)
            self.coef_, self.eigenvalues_ = self._directions(*self._scatter(K, y_index))
            projections = K @ self.coef_
            self.fit_info_ = {"path": "cached", "cache_bytes": int(8 * X.shape[0] * p)}
        else:
            # K (n × p) beyond the kernel_cache_bytes budget: three passes over its blocks
            # (class sums, centred scatter, projections) in O(p²) memory instead of O(np).
            self._check_expansion(None)
            self.coef_, self.eigenvalues_ = self._directions(
                *self._scatter_by_passes(X, y_index))
            projections = self.kernel_.evaluate_matmul(X, self.X_fit_, self.coef_,
                                                       accumulate=np.float64,
                                                       name="KernelFisherDiscriminant.fit")
            self.fit_info_ = {"path": "recompute", "cache_bytes": 0}
        # The (C−1)-dimensional LDA runs on the host; its coefficients go where X lives.
        lda = LinearDiscriminantAnalysis().fit(to_numpy(projections), y_index)
        self.discriminant_coef_ = as_float64(lda.coef_, X)
        self.discriminant_intercept_ = as_float64(lda.intercept_, X)
        self._n_features_out = self.coef_.shape[1]
        return self

    def _check_expansion(self, K: Any) -> None:
        """Warn when the kernel is degenerate on the expansion points (``K`` when it is
        their own kernel matrix, else their Gram matrix is evaluated)."""
        if K is None:
            K = centre_gram(self.kernel_, self.X_fit_, self.X_fit_)
        warn_if_degenerate(K, self.X_fit_, self.kernel_, owner="KernelFisherDiscriminant",
                           what="expansion points", stacklevel=5)

    def _scatter_by_passes(self, X: Any, y_index: np.ndarray) -> tuple[Any, Any, Any, bool]:
        """:meth:`_scatter` from passes over the blocks of K (NumPy): the class sums first,
        then the within-class scatter about the exact class means (no cancellation)."""
        n_classes, n = self.classes_.size, X.shape[0]
        one_hot = (y_index[:, None] == np.arange(n_classes)[None, :]).astype(np.float64)
        sums = self.kernel_.reduce(X, self.X_fit_, cross_block, np.ones(n), one_hot)
        counts = one_hot.sum(axis=0)
        means = (sums / counts).T  # (n_classes, p)
        overall = sums.sum(axis=1) / n

        def centred_scatter(K_b, index_b):
            centred = K_b.astype(np.float64) - means[index_b]
            return centred.T @ centred

        within = self.kernel_.reduce(X, self.X_fit_, centred_scatter, y_index)
        differences = means - overall
        between = (differences.T * counts) @ differences
        rounding = 16 * np.finfo(np.float64).eps * float(np.abs(means).max(initial=0.0))
        return between, within, overall, bool(np.abs(differences).max() > rounding)

    def _scatter(self, K: Any, y_index: np.ndarray) -> tuple[Any, Any, Any, bool]:
        """Between- and within-class scatter of the rows of K (in its namespace, on its
        device), the overall mean, and whether any class mean differs from it beyond
        rounding."""
        xp = array_api_compat.array_namespace(K)
        n_classes = self.classes_.size
        overall = xp.mean(K, axis=0)
        between = xp.zeros((K.shape[1], K.shape[1]), dtype=K.dtype,
                           device=array_api_compat.device(K))
        within = xp.zeros_like(between)
        # Class means that differ from the overall mean by rounding only: nothing to separate.
        rounding = 16 * np.finfo(np.float64).eps * float(xp.max(xp.abs(K))) if K.shape[0] else 0.0
        separated = False
        for c in range(n_classes):
            rows = xp.take(K, _like(np.flatnonzero(y_index == c), K), axis=0)
            mean = xp.mean(rows, axis=0)
            difference = (mean - overall)[:, None]
            separated = separated or float(xp.max(xp.abs(difference))) > rounding
            between += rows.shape[0] * (difference @ difference.T)
            centred = rows - mean
            within += centred.T @ centred
        return between, within, overall, separated

    def _directions(self, between: Any, within: Any, overall: Any,
                    separated: bool) -> tuple[Any, Any]:
        """Discriminant directions and ratios from the scatter matrices: the p × p
        generalised eigenproblem — not in the array API standard — is solved on the host
        and its vectors sent back to the scatter matrices' device."""
        if not separated:
            raise ValueError(
                "KernelFisherDiscriminant: the classes have the same mean in the feature space "
                f"of {self.kernel_!r} (e.g. every row of X is the same, or the kernel is "
                "numerically constant on X at these parameters), so no direction separates "
                "them. Check that X varies between the classes, and the kernel's parameters "
                "(e.g. raise a tiny gamma).")
        between, within = to_numpy(between), to_numpy(within)
        mu = self.reg * max(float(np.trace(within)) / within.shape[0], np.finfo(float).tiny)
        within.flat[:: within.shape[0] + 1] += mu
        # At most C−1 directions carry between-class scatter; fewer if the expansion is
        # smaller (e.g. very few landmarks).
        n_directions = min(self.classes_.size - 1, between.shape[0])
        # Generalised symmetric-definite eigenproblem; keep the largest ratios.
        ratios, vectors = scipy.linalg.eigh(
            between, within, subset_by_index=[between.shape[0] - n_directions,
                                              between.shape[0] - 1])
        order = np.argsort(ratios)[::-1]
        return _like(vectors[:, order], overall), _like(ratios[order], overall)

    def transform(self, X: Any) -> np.ndarray:
        """Project onto the discriminant directions, shape (n_samples, n_classes − 1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_classes - 1)
            The coordinates along the discriminant directions.
        """
        return self._project(X, "transform")

    def _project(self, X: Any, method: str) -> Any:
        check_is_fitted(self)
        X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.coef_, method)
        # Summed in float64, as fit projects the training rows (float32 data too).
        return as_float64(self.kernel_.matmul(X, self.X_fit_, self.coef_,
                                              accumulate=np.float64), X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Linear discriminant scores in the projected space (scikit-learn's LDA convention).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            The scores; for two classes, positive favours ``classes_[1]``.
        """
        return self._scores(X, "decision_function")

    def _scores(self, X: Any, method: str) -> Any:
        scores = self._project(X, method) @ self.discriminant_coef_.T \
            + self.discriminant_intercept_
        if scores.shape[1] != 1:
            return scores
        return scores.ravel() if isinstance(scores, np.ndarray) else scores[:, 0]

    def predict(self, X: Any) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The predicted classes (in X's namespace when the classes are numbers).
        """
        scores = self._scores(X, "predict")  # checks that the model is fitted
        return labels_from_scores(self.classes_, scores)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Estimate class probabilities from the Gaussian model in the discriminant space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The probability of each class, in the order of ``classes_``.
        """
        return self._probabilities(X, "predict_proba")

    def _probabilities(self, X: Any, method: str) -> Any:
        scores = self._scores(X, method)
        if not isinstance(scores, np.ndarray):
            xp = array_api_compat.array_namespace(scores)
            if scores.ndim == 1:
                positive = 1.0 / (1.0 + xp.exp(-scores))
                return xp.stack([1.0 - positive, positive], axis=1)
            shifted = xp.exp(scores - xp.max(scores, axis=1, keepdims=True))
            return shifted / xp.sum(shifted, axis=1, keepdims=True)
        if scores.ndim == 1:  # two classes: the logistic of the LDA score
            positive = scipy.special.expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return scipy.special.softmax(scores, axis=1)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Estimate the log of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The log-probabilities (zeros lifted to the smallest normal float first).
        """
        probabilities = self._probabilities(X, "predict_log_proba")
        xp = array_api_compat.array_namespace(probabilities)
        tiny = float(xp.finfo(probabilities.dtype).smallest_normal)
        return xp.log(xp.where(probabilities == 0.0, tiny, probabilities))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.array_api_support = True
        return tags


def _like(values: np.ndarray, reference: Any) -> Any:
    """Host ``values`` in ``reference``'s namespace and on its device (NumPy: unchanged)."""
    if not is_device_array(reference):
        return values
    xp, device = namespace_and_device(reference)
    return on_device(values, xp, device)
