r"""Novelty detection by the distance to the mean in feature space."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from kernelmaps._array_api import to_numpy
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.kernels.degenerate import warn_if_degenerate, warn_if_degenerate_on_sample
from kernelmaps.models._common import (
    KERNEL_PARAMETER_CONSTRAINTS,
    LANDMARK_PARAMETER_CONSTRAINTS,
    as_float64,
    centre_gram,
    check_fitted_placement,
    expansion_points,
    fit_kernel,
)

__all__ = ["KernelMeanDistance"]


class KernelMeanDistance(SuggestOptionsMixin, OutlierMixin, BaseEstimator):
    r"""Novelty detection by the distance to the mean of the training data in feature space.

    .. math::

        \|\phi(x) - \mu\|^2 = k(x, x) - \frac2N\sum_i k(x, x_i)
        + \frac1{N^2}\sum_{i,j} k(x_i, x_j),

    computed with the kernel only (Shawe-Taylor & Cristianini, *Kernel Methods for Pattern
    Analysis*, 2004, §5.1). Points far from the mean are novel. With ``n_components`` set,
    the mean is expanded on :math:`m` landmarks chosen by ``landmarks``
    (:mod:`kernelmaps.landmarks`; uniform rows by default): the Nyström projection gives
    :math:`\mu \approx \sum_j \beta_j\phi(c_j)` with
    :math:`\beta = K_{mm}^{+}\tfrac1N K_{mN}\mathbf 1`, so scoring costs :math:`O(m)` kernel
    evaluations per point instead of :math:`O(N)`, while :math:`k(x, x)` stays exact (a
    point far from all landmarks still scores as far). :math:`K_{mN}\mathbf 1` is one
    blocked pass over the data (``kernel_.reduce``) and scores are ``kernel_.matmul`` and
    ``kernel_.diag``, so no :math:`N\times m` matrix is held.

    Follows scikit-learn's outlier-detector API: ``score_samples`` (higher = more normal,
    i.e. minus the squared distance), ``decision_function`` (shifted so that 0 is the
    threshold), ``predict`` (+1 inlier, −1 outlier) with the threshold set so that a fraction
    ``contamination`` of the training data is flagged.

    Parameters
    ----------
    contamination : float, default=0.1
        Expected fraction of outliers in the training data, in (0, 0.5].
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
        Number of landmarks; ``None`` (or at least n_samples): exact, with every training
        point.
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
    X_fit_ : ndarray
        Expansion points of the mean (training data or landmarks).
    mean_coef_ : ndarray of shape (n_expansion,)
        :math:`\mu = \sum_j` ``mean_coef_[j]`` :math:`\phi(` ``X_fit_[j]`` :math:`)`.
    mean_sq_norm_ : float
        :math:`\|\mu\|^2`.
    offset_ : float
        Threshold subtracted from ``score_samples`` in ``decision_function``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    See Also
    --------
    sklearn.linear_model.SGDOneClassSVM : On a kernelmaps feature map, the one-class SVM
        recipe (a learned boundary around the data's support instead of the distance to
        its mean); ``docs/kernel_methods.md`` says when to use which.

    Notes
    -----
    With ``n_components`` set, the scores for a given ``random_state`` differ from those of
    earlier versions, which drew the landmarks by hand (sorted ``rng.choice``) instead of
    scikit-learn's permutation draw of ``landmarks="uniform"``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import KernelMeanDistance
    >>> X = np.random.RandomState(0).normal(size=(200, 2))
    >>> detector = KernelMeanDistance(contamination=0.05).fit(X)
    >>> detector.predict(np.array([[0.0, 0.0], [6.0, 6.0]]))
    array([ 1, -1])
    >>> float((detector.predict(X) == -1).mean())  # the expected fraction of outliers
    0.05
    """

    _parameter_constraints: dict = {
        "contamination": [Interval(Real, 0, 0.5, closed="right")],
        **KERNEL_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        **LANDMARK_PARAMETER_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(self, *, contamination: float = 0.1, kernel: Any = "rbf",
                 gamma: float | str | None = "scale", degree: float | None = None,
                 coef0: float | None = None, kernel_params: dict | None = None,
                 n_components: int | None = None, landmarks: str = "uniform",
                 landmark_params: dict | None = None, random_state: Any = None) -> None:
        self.contamination = contamination
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
    def fit(self, X: Any, y: Any = None) -> KernelMeanDistance:
        """Estimate the mean in feature space and the decision threshold.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = validate_input(self, X, reset=True)
        # Scores need k(x, x) of new points, which a precomputed k(X_new, X_train) lacks.
        self.kernel_ = fit_kernel(self, X, precomputed=False)
        n = X.shape[0]
        self.X_fit_ = expansion_points(self, X)
        if self.X_fit_ is X:
            # Every row a centre: no kernel matrix is formed, so the check reads a sample.
            warn_if_degenerate_on_sample(X, self.kernel_, owner="KernelMeanDistance",
                                         stacklevel=4)
            self.mean_coef_ = as_float64(np.full(n, 1.0 / n), X)
        else:
            K_mm = centre_gram(self.kernel_, self.X_fit_, self.X_fit_)
            warn_if_degenerate(K_mm, self.X_fit_, self.kernel_, owner="KernelMeanDistance",
                               what="centres", stacklevel=4)
            # Projection of μ onto span φ(c_j): β = K_mm⁺ (1/N) K_mN 1 (pinv: duplicates ok).
            K_mN_mean = self.kernel_.reduce(X, self.X_fit_, _column_sums) / n
            # Eigenvalues below 1e-12·λ_max are rounding noise of a smooth kernel's K_mm;
            # inverting them (numpy's default cut-off is 1e-15) amplifies that noise.
            if isinstance(K_mm, np.ndarray):
                self.mean_coef_ = np.linalg.pinv(K_mm, rcond=1e-12, hermitian=True) @ K_mN_mean
            else:
                xp = array_api_compat.array_namespace(K_mm)
                self.mean_coef_ = xp.linalg.pinv(K_mm, rtol=1e-12) @ K_mN_mean
        cross = self.kernel_.matmul(self.X_fit_, self.X_fit_, self.mean_coef_)
        self.mean_sq_norm_ = float(self.mean_coef_ @ as_float64(cross, X))
        # The threshold is one number: the scores' percentile, taken on the host.
        # X is validated: scored as is (validating it again would warn, for a DataFrame, that
        # the array has no feature names).
        self.offset_ = float(np.percentile(to_numpy(self._scores(X, "score_samples", True)),
                                           100.0 * self.contamination))
        return self

    def score_samples(self, X: Any) -> np.ndarray:
        """Score each sample by minus its squared feature-space distance to the training mean.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            :math:`-\\|\\phi(x) - \\mu\\|^2`: higher means more normal.
        """
        return self._scores(X, "score_samples")

    def _scores(self, X: Any, method: str, validated: bool = False) -> Any:
        check_is_fitted(self, "mean_coef_")
        if not validated:
            X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.mean_coef_, method)
        cross = self.kernel_.matmul(X, self.X_fit_, self.mean_coef_)
        distance = self.kernel_.diag(X) - 2.0 * cross + self.mean_sq_norm_
        if isinstance(distance, np.ndarray):
            return -np.maximum(distance, 0.0).astype(np.float64)
        xp = array_api_compat.array_namespace(distance)
        return -as_float64(xp.clip(distance, min=0.0), X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Compute ``score_samples(X) - offset_``, negative for outliers.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            The shifted scores; negative for outliers.
        """
        return self._scores(X, "decision_function") - self.offset_

    def predict(self, X: Any) -> np.ndarray:
        """Predict +1 for inliers and −1 for outliers.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            +1 or −1 per sample (in X's namespace for array-API inputs).
        """
        scores = self._scores(X, "predict") - self.offset_
        if isinstance(scores, np.ndarray):
            return np.where(scores >= 0, 1, -1)
        xp = array_api_compat.array_namespace(scores)
        return xp.astype(scores >= 0, xp.int64) * 2 - 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.array_api_support = True
        return tags


def _column_sums(K_b: Any) -> Any:
    """Σ_rows of a kernel block, in float64 (or the device's widest float)."""
    if isinstance(K_b, np.ndarray):
        return K_b.sum(axis=0, dtype=np.float64)
    return array_api_compat.array_namespace(K_b).sum(K_b, axis=0)
