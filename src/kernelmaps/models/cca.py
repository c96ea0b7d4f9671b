r"""Regularised kernel canonical correlation analysis on explicit feature maps."""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
    clone,
)
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
)

from kernelmaps._array_api import (
    array_placement,
    float_dtypes,
    is_device_array,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps._engine import FLOAT_DTYPES
from kernelmaps._linalg import inverse_sqrt_psd
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.models._common import as_float64, check_fitted_placement

__all__ = ["KernelCCA"]

#: Landmarks of the default Nyström map of each view (scikit-learn's Nystroem default).
DEFAULT_LANDMARKS = 100


class KernelCCA(SuggestOptionsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                BaseEstimator):
    r"""Regularised kernel canonical correlation analysis, on explicit features of two views.

    Kernel CCA (Bach & Jordan, 2002; Hardoon, Szedmak & Shawe-Taylor, 2004) finds functions
    :math:`f(x) = \langle w, \phi_x(x)\rangle` and :math:`g(y) = \langle v, \phi_y(y)\rangle`
    of two views of the same samples that are maximally correlated. Here each view goes
    through an explicit feature map :math:`z_x(x) \approx \phi_x(x)`,
    :math:`z_y(y) \approx \phi_y(y)` (:class:`~kernelmaps.Nystroem` by default, any map
    otherwise) and linear CCA is solved in those feature spaces. With the centred features'
    covariances :math:`\Sigma_{xx}, \Sigma_{yy}, \Sigma_{xy}` (divided by :math:`n`), the
    :math:`k`-th pair of directions maximises

    .. math::

        \rho_k = w_k^\top \Sigma_{xy} v_k \quad\text{s.t.}\quad
        w_k^\top(\Sigma_{xx} + r_x I)\,w_k = v_k^\top(\Sigma_{yy} + r_y I)\,v_k = 1,

    uncorrelated with the previous pairs, where :math:`r_x = \text{reg}\cdot\operatorname{tr}
    \Sigma_{xx}` (the view's total variance in feature space, so ``reg`` does not depend on
    the kernel's scale or on the number of features) and likewise :math:`r_y`. The solution
    is the singular value decomposition

    .. math::

        (\Sigma_{xx} + r_x I)^{-1/2}\,\Sigma_{xy}\,(\Sigma_{yy} + r_y I)^{-1/2}
        = U\,\operatorname{diag}(\rho)\,T^\top,\qquad
        w = (\Sigma_{xx} + r_x I)^{-1/2} U,\; v = (\Sigma_{yy} + r_y I)^{-1/2} T.

    With exact features (:math:`z(x)^\top z(x') = k(x, x')` on the training data, e.g. a
    Nyström map with every training point as a landmark) this is exactly the regularised
    kernel CCA of Hardoon et al. in its dual form: with the centred Gram matrices
    :math:`\tilde K = HKH`,

    .. math::

        \rho = \max_{\alpha, \beta}
        \frac{\alpha^\top \tilde K_x \tilde K_y\,\beta}
        {\sqrt{\alpha^\top(\tilde K_x^2 + n r_x \tilde K_x)\,\alpha\;\cdot\;
               \beta^\top(\tilde K_y^2 + n r_y \tilde K_y)\,\beta}},

    i.e. :math:`\rho_k^2` are the eigenvalues of :math:`P_x P_y` with the ridge smoothers
    :math:`P = \tilde K(\tilde K + n r I)^{-1}`. With :math:`m` features per view the cost is
    :math:`O(n m^2 + m^3)` instead of the :math:`O(n^3)` of the dual problem. Without
    regularisation kernel CCA is degenerate (any two views of :math:`n` distinct points
    reach correlation 1 in an infinite-dimensional feature space): ``reg`` controls the
    flexibility of :math:`f` and :math:`g`; choose it on held-out correlations.

    Follows :class:`sklearn.cross_decomposition.CCA`'s conventions: ``fit(X, y)`` with the
    second view as ``y``, ``transform(X, y=None)`` returning the canonical variates of
    ``X`` or of both views.

    Parameters
    ----------
    n_components : int, default=2
        Number of pairs of canonical variates; at most the smaller number of features of
        the two maps.
    reg : float, default=1e-3
        Regularisation (> 0) relative to each view's total variance in feature space:
        :math:`r = \text{reg}\cdot\operatorname{tr}\Sigma`. Larger values give smoother,
        more robust canonical functions and lower (training) correlations.
    x_map, y_map : transformer or None, default=None
        The feature map of each view: any transformer with ``fit``/``transform``. An
        unfitted map is cloned and fitted on its view (its ``random_state``, when it has one
        and it is ``None``, is drawn from ``random_state``); a fitted map is used as it is
        (a copy). ``clone`` (and so ``GridSearchCV``) returns unfitted copies of given
        maps; wrap a fitted map in :class:`sklearn.frozen.FrozenEstimator` to keep it
        fitted. ``None``: ``Nystroem(kernel="rbf", gamma="scale",
        n_components=min(100, n_samples))``: :math:`\gamma = 1/(d\,\operatorname{Var}X)`
        of the view (:class:`sklearn.svm.SVC`'s ``gamma="scale"``).
    random_state : int, RandomState instance or None, default=None
        Seeds the default Nyström maps and the given unfitted maps whose ``random_state``
        is ``None``.

    Attributes
    ----------
    x_map_, y_map_ : transformer
        The fitted feature maps.
    kernel_ : Kernel or None
        The kernel of the first view, the one ``x_map_`` approximates (its ``kernel_``;
        ``None`` for a map that does not expose one, e.g. scikit-learn's samplers).
    y_kernel_ : Kernel or None
        The same for the second view.
    x_mean_ : ndarray of shape (n_x_features,)
        Mean of the training features :math:`z_x(x)` (subtracted before projecting).
    y_mean_ : ndarray of shape (n_y_features,)
        The mean of the second view's features, subtracted before projecting.
    x_weights_ : ndarray of shape (n_x_features, n_components)
        Canonical directions :math:`w_k` in the feature space of the first view, scaled so
        that :math:`w_k^\top(\Sigma_{xx} + r_x I)w_k = 1`; the sign of each pair makes the
        largest-magnitude entry of :math:`w_k` positive.
    y_weights_ : ndarray of shape (n_y_features, n_components)
        Canonical directions in the feature space of the second view, scaled as
        ``x_weights_``.
    canonical_correlations_ : ndarray of shape (n_components,)
        The regularised canonical correlations :math:`\rho_k`, decreasing. The plain
        correlation of the training variates is slightly larger (their variance is below
        1 by the regularisation); held-out correlations tell how well the relation
        generalises.
    x_reg_, y_reg_ : float
        The absolute regularisation :math:`r_x, r_y` added to each covariance.
    n_features_in_ : int
        Number of features of the first view ``X``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features of ``X``, when it has string column names.

    See Also
    --------
    sklearn.cross_decomposition.CCA : Linear CCA on the inputs themselves.
    kernelmaps.Nystroem : The default feature map.

    Notes
    -----
    The exact kernel CCA is recovered with ``x_map=Nystroem(n_components=n_samples)`` (and
    the same for ``y_map``): every training point is a landmark, so the features reproduce
    the Gram matrices exactly (up to numerically null eigenvalues, which the
    regularisation makes irrelevant). ``tests/models/test_cca.py`` checks the correlations
    against the dual formula above to 1e-6.

    References
    ----------
    F. R. Bach and M. I. Jordan, "Kernel independent component analysis", Journal of
    Machine Learning Research 3, 2002.

    D. R. Hardoon, S. Szedmak and J. Shawe-Taylor, "Canonical correlation analysis: an
    overview with application to learning methods", Neural Computation 16(12), 2004.

    Examples
    --------
    Two views of one hidden variable :math:`t`: the first sees :math:`t` itself, the
    second only :math:`t^2` — a relation no linear CCA can find.

    >>> import numpy as np
    >>> from sklearn.cross_decomposition import CCA
    >>> from kernelmaps.models import KernelCCA
    >>> rng = np.random.RandomState(0)
    >>> t = rng.uniform(-1, 1, size=600)
    >>> X = np.c_[t, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
    >>> Y = np.c_[t ** 2, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
    >>> kcca = KernelCCA(n_components=1, random_state=0).fit(X[:400], Y[:400])
    >>> print(f"{kcca.canonical_correlations_[0]:.2f}")  # regularised, on the training data
    0.95
    >>> print(f"{kcca.score(X[400:], Y[400:]):.2f}")  # correlation of held-out variates
    0.97
    >>> linear = CCA(n_components=1).fit(X[:400], Y[:400])
    >>> x_lin, y_lin = linear.transform(X[400:], Y[400:])
    >>> print(f"{abs(np.corrcoef(x_lin[:, 0], y_lin[:, 0])[0, 1]):.2f}")
    0.05
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "reg": [Interval(Real, 0, None, closed="neither")],
        "x_map": [HasMethods(["fit", "transform"]), None],
        "y_map": [HasMethods(["fit", "transform"]), None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components: int = 2, *, reg: float = 1e-3, x_map: Any = None,
                 y_map: Any = None, random_state: Any = None) -> None:
        self.n_components = n_components
        self.reg = reg
        self.x_map = x_map
        self.y_map = y_map
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any) -> KernelCCA:
        """Fit the feature maps and the canonical directions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The first view.
        y : {array-like, sparse matrix} of shape (n_samples,) or (n_samples, n_y_features)
            The second view, one row per row of ``X`` (scikit-learn's name for it).

        Returns
        -------
        self : object
            The fitted model.
        """
        if y is None:
            raise ValueError("KernelCCA requires y to be passed, but the target y is None: y is "
                             "the second view, of shape (n_samples, n_y_features) with one row "
                             "per row of X; call fit(X, y).")
        check_consistent_length(X, y)
        X = validate_input(self, X, reset=True, ensure_min_samples=2)
        y = _check_view(y, X)
        seeds = check_random_state(self.random_state).randint(np.iinfo(np.int32).max, size=2)
        # On an array of another library (array API dispatch) the maps, the features and the
        # O(n·D²) covariances stay in its namespace and on its device; only the D × D
        # eigen- and singular value decompositions run on the host, in float64.
        self.x_map_, Z_x = _fit_map(self.x_map, X, int(seeds[0]), "x_map")
        self.y_map_, Z_y = _fit_map(self.y_map, y, int(seeds[1]), "y_map")
        self.kernel_ = getattr(self.x_map_, "kernel_", None)
        self.y_kernel_ = getattr(self.y_map_, "kernel_", None)
        n_max = min(Z_x.shape[1], Z_y.shape[1])
        if self.n_components > n_max:
            raise ValueError(
                f"n_components={self.n_components} is more than the {n_max} canonical pairs "
                f"the feature maps allow (x_map gives {Z_x.shape[1]} features, y_map "
                f"{Z_y.shape[1]}): lower n_components or use maps with more features."
            )
        Zc_x, self.x_mean_ = _centred(Z_x)
        Zc_y, self.y_mean_ = _centred(Z_y)
        n = Zc_x.shape[0]
        whiten_x, self.x_reg_ = _regularised_whitening(Zc_x, self.reg)
        whiten_y, self.y_reg_ = _regularised_whitening(Zc_y, self.reg)
        # M = (Σxx + rx)^{-1/2} Σxy (Σyy + ry)^{-1/2}, formed from the whitened features.
        M = to_numpy((Zc_x @ whiten_x).T @ (Zc_y @ whiten_y) / n)
        U, rho, Tt = scipy.linalg.svd(M, full_matrices=False, check_finite=False)
        k = self.n_components
        x_weights = to_numpy(whiten_x) @ U[:, :k]
        y_weights = to_numpy(whiten_y) @ Tt[:k].T
        # Deterministic signs: the largest |entry| of each x direction is positive.
        signs = np.sign(x_weights[np.abs(x_weights).argmax(axis=0), np.arange(k)])
        signs[signs == 0] = 1.0
        self.x_weights_ = as_float64(x_weights * signs, X)
        self.y_weights_ = as_float64(y_weights * signs, X)
        self.canonical_correlations_ = as_float64(np.clip(rho[:k], 0.0, 1.0), X)
        self._n_features_out = k
        return self

    # ------------------------------------------------------------------ transform
    def transform(self, X: Any, y: Any = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        r"""The canonical variates :math:`f_k(x) = w_k^\top(z_x(x) - \bar z_x)` (and of ``y``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples of the first view.
        y : {array-like, sparse matrix}, default=None
            Samples of the second view, of shape (n_samples,) or (n_samples, n_y_features),
            if its variates are wanted too.

        Returns
        -------
        x_scores : ndarray of shape (n_samples, n_components)
            Returned alone when ``y`` is None; float32 for float32 features.
        (x_scores, y_scores) : tuple of ndarrays
            When ``y`` is given.
        """
        check_is_fitted(self)
        X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.x_weights_, "transform")
        x_scores = _scores(self.x_map_.transform(X), self.x_mean_, self.x_weights_)
        if y is None:
            return x_scores
        check_consistent_length(X, y)
        y_scores = _scores(self.y_map_.transform(_check_view(y, X)), self.y_mean_,
                           self.y_weights_)
        return x_scores, y_scores

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any
                      ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """``fit(X, y).transform(X, y)``: the training variates of both views.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data.
        y : {array-like, sparse matrix} of shape (n_samples,) or (n_samples, n_y_features), \
default=None
            The second view of the training data; required (the default only keeps
            scikit-learn's ``fit_transform`` signature).
        **fit_params : dict
            Ignored.

        Returns
        -------
        (x_scores, y_scores) : tuple of ndarrays of shape (n_samples, n_components)
            The canonical variates of the two views.
        """
        return self.fit(X, y).transform(X, y)

    def score(self, X: Any, y: Any, sample_weight: None = None) -> float:
        r"""Mean correlation of the paired canonical variates on ``(X, y)``.

        The Pearson correlation :math:`\operatorname{corr}(f_k(x), g_k(y))` of each of the
        ``n_components`` pairs, averaged: on held-out data, how well the relation found
        generalises (this is what ``GridSearchCV`` maximises to choose ``reg``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.
        y : {array-like, sparse matrix} of shape (n_samples,) or (n_samples, n_y_features)
        sample_weight : None
            Not supported; present for scikit-learn's scoring API.

        Returns
        -------
        score : float
            In [-1, 1]; a pair whose variates are constant on these samples counts as 0.
        """
        if sample_weight is not None:
            raise ValueError("KernelCCA.score does not support sample_weight.")
        # A few columns of variates: the correlations are computed on the host, in float64.
        x_scores, y_scores = (to_numpy(scores).astype(np.float64)
                              for scores in self.transform(X, y))
        x_scores = x_scores - x_scores.mean(axis=0)
        y_scores = y_scores - y_scores.mean(axis=0)
        norms = np.linalg.norm(x_scores, axis=0) * np.linalg.norm(y_scores, axis=0)
        products = np.einsum("ij,ij->j", x_scores, y_scores)
        correlations = np.divide(products, norms, out=np.zeros_like(products),
                                 where=norms > 0)
        return float(correlations.mean())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.array_api_support = True
        return tags


# ---------------------------------------------------------------------- helpers
def _check_view(y: Any, X: Any) -> Any:
    """The second view as a 2-D float array (a 1-D ``y`` is one feature), in ``X``'s
    namespace and on its device: everything follows ``X``, as in scikit-learn (a view of
    another library or device is moved; a sparse view beside a device ``X`` is densified)."""
    if is_device_array(X):
        xp, device = namespace_and_device(X)
        y = on_device(y.toarray() if sp.issparse(y) else y, xp, device)
        dtypes = float_dtypes(xp, device)
    else:
        y = to_numpy(y) if array_placement(y) is not None else y
        dtypes = list(FLOAT_DTYPES)
    y = check_array(y, input_name="y", accept_sparse="csr", dtype=dtypes, ensure_2d=False)
    return y[:, None] if y.ndim == 1 else y


def _is_fitted(estimator: Any) -> bool:
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def _fit_map(feature_map: Any, data: Any, seed: int, name: str) -> tuple[Any, Any]:
    """The fitted map of one view and the view's features (dense, float64 — or float64 as
    the device has it — in ``data``'s namespace and on its device)."""
    if feature_map is None:
        fitted = Nystroem(gamma="scale", n_components=min(DEFAULT_LANDMARKS, data.shape[0]),
                          random_state=seed)
        Z = fitted.fit_transform(data)
    elif _is_fitted(feature_map):
        fitted = copy.deepcopy(feature_map)
        Z = fitted.transform(data)
    else:
        fitted = clone(feature_map)
        if fitted.get_params().get("random_state", 0) is None:
            fitted.set_params(random_state=seed)
        Z = fitted.fit_transform(data)
    Z = Z.toarray() if sp.issparse(Z) else Z
    if not is_device_array(data):
        Z = np.asarray(Z)
    if Z.ndim != 2 or Z.shape[0] != data.shape[0]:
        raise ValueError(f"{name} must return one row of features per sample; it returned "
                         f"shape {tuple(Z.shape)} for {data.shape[0]} samples.")
    return fitted, as_float64(Z, data)


def _centred(Z: Any) -> tuple[Any, Any]:
    mean = array_api_compat.array_namespace(Z).mean(Z, axis=0)
    return Z - mean, mean


def _regularised_whitening(Zc: Any, reg: float) -> tuple[Any, float]:
    r""":math:`(\Sigma + rI)^{-1/2}` with :math:`\Sigma = Z_c^\top Z_c / n`, :math:`r =
    \text{reg}\cdot\operatorname{tr}\Sigma`, and :math:`r`. The covariance is formed where
    ``Zc`` lives; its eigendecomposition (D × D) runs on the host and the result goes back."""
    covariance = to_numpy(Zc.T @ Zc / Zc.shape[0])
    total = float(np.trace(covariance))
    r = reg * total if total > 0 else reg  # a constant view: nothing to correlate
    return as_float64(inverse_sqrt_psd(covariance, r), Zc), r


def _scores(Z: Any, mean: Any, weights: Any) -> Any:
    """``(Z − mean) @ weights`` without centring a copy of Z (sparse Z stays sparse), in
    Z's dtype (float32 features give float32 variates) and namespace."""
    if is_device_array(Z):
        xp = array_api_compat.array_namespace(Z)
        weights = xp.astype(weights, Z.dtype)
        return Z @ weights - xp.astype(mean, Z.dtype) @ weights
    dtype = np.float32 if Z.dtype == np.float32 else np.float64
    weights = weights.astype(dtype, copy=False)
    scores = np.asarray(Z @ weights, dtype=dtype)
    scores -= (mean @ weights).astype(dtype)
    return scores
