r"""Ridge regression and classification on explicit kernel features, without materialising them.

Both estimators fit :math:`\min_{w, b} \sum_i s_i (y_i - z(x_i)^\top w - b)^2 + \alpha\|w\|^2`
from one pass over the data: each row block's features :math:`z(X_b)` are made, folded into
the Gram matrix of the augmented block :math:`A_b = \sqrt{s_b}\,[z(X_b),\ 1,\ Y_b]` and
dropped. :math:`G = \sum_b A_b^\top A_b` holds :math:`Z^\top S Z`, :math:`Z^\top S\,1`,
:math:`\sum s`, :math:`Z^\top S\,Y` and :math:`1^\top S\,Y`; centring and one
:math:`D\times D` Cholesky solve give :math:`w` and :math:`b` exactly as scikit-learn's
``Ridge(solver='cholesky')`` does on the materialised :math:`Z`. On Dask collections each row
chunk gives its :math:`G_c` where it lives and Dask's tree reduction sums them: the
:math:`(D+1+t)^2` partial sums are all that travel (the handlers that
:mod:`kernelmaps.distributed` registers: ``fit_feature_ridge``, ``score_on_dask``,
``map_rows``).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from kernelmaps._array_api import (
    Placement,
    array_placement,
    is_device_array,
    namespace_and_device,
    on_device,
    placement_of,
    to_numpy,
)
from kernelmaps._engine import (
    collection_handler,
    is_dask_collection,
    run_blocks,
)
from kernelmaps._ridge import encode_labels, labels_from_scores
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.kernels import GAMMA_HEURISTICS, gamma_value
from kernelmaps.maps import FeatureMap
from kernelmaps.maps.fourier import RBFSampler
from kernelmaps.maps.interface import (
    accepts_sparse,
    expect_rows,
    fit_reads_rows,
    output_width,
)
from kernelmaps.models._accumulator import RidgeStatistics, Workspaces
from kernelmaps.models._common import as_float64, check_fitted_placement

__all__ = ["FeatureRidge", "FeatureRidgeClassifier"]

#: The placement of host input (NumPy arrays, sparse matrices): the fitted arrays stay there.
_HOST = placement_of(np.empty((0, 0)))


def _default_map() -> FeatureMap:
    """The map of ``feature_map=None``: random Fourier features of the Gaussian kernel with
    scikit-learn's ``gamma="scale"`` (γ = 1 fails on unscaled features)."""
    return RBFSampler(gamma="scale")


class _FeatureRidgeBase(SuggestOptionsMixin, BaseEstimator):
    #: Regression: numeric targets, several columns allowed; classification: 1-D labels.
    _y_numeric: bool
    _classifier: str | None = None  # named when a regressor gets text labels
    _parameter_constraints: dict = {
        "feature_map": [FeatureMap, FrozenEstimator, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, feature_map: FeatureMap | None = None, *, alpha: float = 1.0,
                 fit_intercept: bool = True, random_state: Any = None) -> None:
        self.feature_map = feature_map
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _new_map(self) -> FeatureMap:
        """The map to fit: a clone of ``feature_map`` (or the default), or — for a map
        wrapped in :class:`sklearn.frozen.FrozenEstimator` — the fitted map itself."""
        if isinstance(self.feature_map, FrozenEstimator):
            check_is_fitted(self.feature_map.estimator)
            return self.feature_map.estimator
        feature_map = _default_map() if self.feature_map is None else clone(self.feature_map)
        if self.random_state is not None and "random_state" in feature_map.get_params():
            feature_map.set_params(random_state=self.random_state)
        return feature_map

    def _fit_map(self, X: Any, weights: np.ndarray, sample_weight: Any) -> FeatureMap:
        feature_map = self._new_map()
        if isinstance(self.feature_map, FrozenEstimator):
            if feature_map.n_features_in_ != X.shape[1]:
                raise ValueError(f"X has {X.shape[1]} features, but the frozen feature_map "
                                 f"is expecting {feature_map.n_features_in_} features as "
                                 "input.")
            return feature_map  # prefitted: used as it is, never refitted
        gamma = feature_map.get_params().get("gamma")
        if sample_weight is not None and isinstance(gamma, str) and gamma in GAMMA_HEURISTICS:
            # The map's fit takes no weights: resolve its gamma="scale" here, with the rows
            # weighted, so that a weight of 2 still equals a repeated row.
            feature_map.set_params(gamma=gamma_value(gamma, X, weights))
        return feature_map.fit(X)

    def _host_targets(self, X: Any, y: Any, sample_weight: Any,
                      where: Placement) -> tuple[Any, np.ndarray]:
        """``y`` and the weights on the host (they may be arrays of X's namespace, under
        scikit-learn's array_api_dispatch): the normal equations and labels live there."""
        if array_placement(y) is not None:
            y = to_numpy(y)
        if array_placement(sample_weight) is not None:
            sample_weight = to_numpy(sample_weight)
        rows = np.empty((X.shape[0], 0)) if where.on_device else X  # (only its length)
        return y, _check_sample_weight(sample_weight, rows, dtype=np.float64,
                                       ensure_non_negative=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> _FeatureRidgeBase:
        """Fit the map, then ridge on its features, in one pass over ``X``.

        The pass runs on the engine's threads (:func:`kernelmaps.set_config`): each thread
        folds its own row blocks into its own sufficient statistics and the sums are added
        (an exact merge: any split gives the same model to rounding). The statistics are kept,
        so :meth:`partial_fit` can go on adding rows to them.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape \
                (n_samples, n_features)
            Training data. On a Dask collection the pass runs chunk by chunk on the
            workers (see :mod:`kernelmaps.distributed`).
        y : array-like or dask array of shape (n_samples,) or (n_samples, n_targets)
            Targets (regression) or class labels (classification).
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if is_dask_collection(X):  # Dask (optional): one tree-reduced pass on the workers
            collection_handler("fit_feature_ridge")(self, X, y, sample_weight)
            return self
        X, y = validate_input(self, X, y, reset=True, multi_output=self._y_numeric,
                              y_numeric=self._y_numeric, classifier=self._classifier)
        where = placement_of(X)  # once, here at the boundary: carried inward from here
        y, weights = self._host_targets(X, y, sample_weight, where)
        self.__dict__.pop("_workspaces", None)  # a previous partial_fit's buffers
        self._set_targets(y)
        self.feature_map_ = self._fit_map(X, weights, sample_weight)
        statistics = RidgeStatistics(output_width(self.feature_map_, X), self._n_targets)
        self._set_solution(statistics.add(self.feature_map_, X, self._encode(y), weights,
                                          on_device=where.on_device), where=where)
        return self

    def __getstate__(self) -> dict:
        # partial_fit's reused buffers are scratch, not state: never pickled or persisted.
        state = super().__getstate__()
        state.pop("_workspaces", None)
        return state

    def _partial_fit(self, X: Any, y: Any, sample_weight: Any, classes: Any) -> None:
        """Add the rows of one batch to the statistics (fitting the map on the first)."""
        first = "_gram" not in self.__dict__
        X, y = validate_input(self, X, y, reset=first, multi_output=self._y_numeric,
                              y_numeric=self._y_numeric, classifier=self._classifier)
        where = placement_of(X)  # once, here at the boundary: carried inward from here
        y, weights = self._host_targets(X, y, sample_weight, where)
        if first:
            self._start_targets(y, classes)
            self._warn_if_small_first_batch(X)
            self.feature_map_ = self._fit_map(X, weights, sample_weight)
            self.kernel_ = self.feature_map_.kernel_
            self._keep(RidgeStatistics(output_width(self.feature_map_, X), self._n_targets))
        else:
            self._check_more_targets(y, classes)
            check_fitted_placement(self, X, self._placement, "partial_fit")
        # The batches' buffers are kept between calls (never pickled, see __getstate__).
        workspaces = self.__dict__.setdefault("_workspaces", Workspaces())
        self._keep(self._statistics.add(self.feature_map_, X, self._encode(y), weights,
                                        workspaces=workspaces, on_device=where.on_device))
        # X[:0]: where the coefficients will live (X's namespace and device), without rows.
        self._placement = where.empty
        # Stale: the coef_ and intercept_ properties solve the new statistics when read.
        self.__dict__.pop("coef_", None)
        self.__dict__.pop("intercept_", None)

    def _warn_if_small_first_batch(self, X: Any) -> None:
        if isinstance(self.feature_map, FrozenEstimator):
            return
        feature_map = self._new_map()
        n_components = feature_map.get_params().get("n_components")
        if fit_reads_rows(feature_map) and isinstance(n_components, Integral) \
                and X.shape[0] < n_components:
            warnings.warn(
                f"{type(self).__name__}.partial_fit fits its map {type(feature_map).__name__} "
                f"on the first batch only, and that batch has {X.shape[0]} rows, fewer than "
                f"its n_components={n_components}: the map (landmarks, gamma='scale', "
                "principal axes) is fitted on too few rows. Pass a first batch of at least "
                "n_components rows, or a map fitted on a sample, wrapped in "
                "sklearn.frozen.FrozenEstimator.", UserWarning, stacklevel=4)

    # ------------------------------------------------------------------ the solution
    # fit solves at its end; partial_fit leaves the solution to the first read of coef_ or
    # intercept_ (these properties), once per change of the statistics however many batches
    # came in between. Solving at the end of every partial_fit was measured: the D × D solve
    # took 0.33-1.04 s against 1.24-1.28 s for the batch itself (10,000 × 20 rows,
    # RBFSampler with D = 1,000, one thread, one process, load 4-6 on 2 cores) — a quarter
    # or more of the stream's time, more for smaller batches — for weights usually read
    # once, at the end. The values
    # live in the instance's __dict__ under their own names (pickles and kernelmaps.io
    # files as before), so scikit-learn's check_is_fitted, which reads vars(), never solves.
    @property
    def coef_(self) -> Any:
        r"""The weights w of the features (shape in the class's Attributes).

        After :meth:`partial_fit`, solved at their first read (one :math:`D\times D`
        Cholesky; ``intercept_`` with them) and kept until the next batch.
        """
        return self._solution("coef_")

    @coef_.setter
    def coef_(self, value: Any) -> None:
        self.__dict__["coef_"] = value

    @property
    def intercept_(self) -> Any:
        """The intercept ``b``, solved with :attr:`coef_` (see there)."""
        return self._solution("intercept_")

    @intercept_.setter
    def intercept_(self, value: Any) -> None:
        self.__dict__["intercept_"] = value

    def _solution(self, name: str) -> Any:
        if name not in self.__dict__ and "_gram" in self.__dict__:  # partial_fit's, stale
            self._set_solution(self._statistics, self._placement)  # (X[:0] or None)
        try:
            return self.__dict__[name]
        except KeyError:  # not fitted
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}") from None

    @property
    def _statistics(self) -> RidgeStatistics:
        """The accumulator of the rows seen so far (its state: ``_gram``, ``_n_rows``)."""
        D = self._gram.shape[0] - 1 - self._n_targets
        return RidgeStatistics.wrap(self._gram, D, self._n_rows)

    def _keep(self, statistics: RidgeStatistics) -> None:
        # Kept as plain arrays and numbers, so a fitted model persists with kernelmaps.io
        # (which trusts estimators, not helpers) and pickles as before.
        self._gram, self._n_rows = statistics.gram, statistics.n_samples

    def _set_solution(self, statistics: RidgeStatistics, X: Any = None, *,
                      where: Placement | None = None) -> None:
        """Keep ``statistics`` and solve them; the fitted arrays go where ``X`` (or the
        ``where`` settled by the caller) lives — the host when both are None."""
        self._keep(statistics)
        if where is None:
            where = placement_of(X) if X is not None else _HOST
        self._placement = where.empty
        self.kernel_ = self.feature_map_.kernel_  # the kernel z(x)·z(y) approximates
        coef, intercept = statistics.solve(float(self.alpha), self.fit_intercept)
        # As scikit-learn's Ridge/RidgeClassifier: one target column gives a 1-D coef_; the
        # intercept is a float only for a 1-D y.
        coef = coef[:, 0] if coef.shape[1] == 1 else coef.T
        if where.on_device:  # fitted arrays live where X does (scikit-learn's rule)
            coef, intercept = as_float64(coef, where.empty), as_float64(intercept, where.empty)
        self.coef_ = coef
        self.intercept_ = float(intercept[0]) if self._ravel else intercept

    # ------------------------------------------------------------------ predict
    def _decision(self, X: Any) -> Any:
        """``z(X) w + b``: lazily for Dask collections, else in row blocks."""
        check_is_fitted(self)
        if is_dask_collection(X):
            return collection_handler("map_rows")(self, X, "_decision")
        X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.coef_, "predict")
        if is_device_array(X):  # features and scores on X's device, in float64 there
            xp, device = namespace_and_device(X)
            Z = as_float64(self.feature_map_.transform(X), X)
            coef = on_device(self.coef_, xp, device, Z.dtype)
            scores = Z @ (coef[:, None] if coef.ndim == 1 else xp.permute_dims(coef, (1, 0)))
            intercept = self.intercept_
            if not isinstance(intercept, float):
                intercept = on_device(intercept, xp, device, Z.dtype)
            scores = scores + intercept
            return scores[:, 0] if self.coef_.ndim == 1 else scores
        coef = np.atleast_2d(self.coef_)
        width = output_width(self.feature_map_, X)

        def block(xb, out):
            Z = self.feature_map_.transform(xb)
            np.matmul(Z.toarray() if sp.issparse(Z) else Z, coef.T, out=out)
            out += self.intercept_

        expect_rows(self.feature_map_, X)  # the whole call's cosines, for jit="auto"
        scores = run_blocks(X, n_out=coef.shape[0], dtype=np.dtype(np.float64), block_fn=block,
                            temp_bytes_per_row=8 * width, name=f"{type(self).__name__}.predict")
        return scores[:, 0] if self.coef_.ndim == 1 else scores

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """R² (regression) or accuracy (classification); on Dask collections, computed there.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape \
                (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        if is_dask_collection(X):
            return collection_handler("score")(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        feature_map = self.feature_map if self.feature_map is not None else _default_map()
        tags.input_tags.sparse = accepts_sparse(feature_map)
        tags.target_tags.multi_output = self._y_numeric  # several regression targets
        return tags


class FeatureRidge(RegressorMixin, _FeatureRidgeBase):
    r"""Ridge regression on explicit kernel features z(x), in one pass, any number of rows.

    Fits :math:`\hat y(x) = z(x)^\top w + b` by

    .. math::

        \min_{w, b}\ \sum_i s_i\,\bigl(y_i - z(x_i)^\top w - b\bigr)^2 + \alpha\,\|w\|^2,

    the ridge regression of scikit-learn's ``Ridge`` on the features of ``feature_map`` —
    random Fourier features (Rahimi & Recht, 2007) or Nyström features (Williams & Seeger,
    2001) turn it into an approximate kernel ridge regression. The features are never
    materialised: row blocks of :math:`z(X)` are folded into the
    :math:`(D+1+t)\times(D+1+t)` Gram matrix of :math:`[z(X), 1, Y]` and dropped, then one
    :math:`D\times D` Cholesky solve gives :math:`w`. Memory is
    :math:`O(D^2 + \text{block})` whatever n is.

    On a Dask collection every row chunk computes its partial Gram matrix on the worker
    holding it and Dask's tree reduction sums them: only :math:`8(D+1+t)^2` bytes per chunk
    travel, and a worker needs about ``chunk rows × d × 8 + 2·8·(D+1+t)² + block`` bytes
    (see ``docs/dask.md``). The map is fitted by :func:`kernelmaps.distributed.fit` (random
    maps read no data; Nyström samples its landmarks).

    Parameters
    ----------
    feature_map : FeatureMap, default=None
        The unfitted kernelmaps map z (cloned, then fitted on ``X``). ``None``:
        ``RBFSampler(gamma="scale")`` (100 random Fourier features of the RBF kernel with
        :math:`\gamma = 1/(d\,\operatorname{Var}X)`, :class:`sklearn.svm.SVC`'s default).
    alpha : float, default=1.0
        Ridge penalty α ≥ 0 on ``w`` (not on the intercept).
    fit_intercept : bool, default=True
        Fit ``b`` (features and targets are centred with their weighted means).
    random_state : int, RandomState instance or None, default=None
        When not ``None``, replaces the map's own ``random_state``; ``None`` keeps it.

    Attributes
    ----------
    feature_map_ : FeatureMap
        The fitted map.
    kernel_ : Kernel
        The kernel the model approximates (the map's ``kernel_``).
    coef_ : ndarray of shape (D,) or (n_targets, D)
        The weights w of the features (1-D for a single target, as scikit-learn's Ridge).
    intercept_ : float or ndarray of shape (n_targets,)
        The intercept ``b`` (0 when ``fit_intercept=False``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    See Also
    --------
    FeatureRidgeClassifier : The one-vs-rest classifier on the same normal equations.
    kernelmaps.models.KernelRidge : Exact or Nyström/FALKON kernel ridge (no D×D system).

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NeurIPS 2007.
    C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
    NeurIPS 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.models import FeatureRidge
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(5000, 1)); y = np.sin(X[:, 0])
    >>> model = FeatureRidge(RBFSampler(gamma=0.5, n_components=200, random_state=0),
    ...                      alpha=1e-3).fit(X, y)
    >>> bool(np.abs(model.predict(X) - y).max() < 0.01)
    True
    """

    _y_numeric = True
    _classifier = "FeatureRidgeClassifier"

    def _set_targets(self, y: Any) -> None:
        self._ravel = y.ndim == 1
        self._n_targets = 1 if y.ndim == 1 else y.shape[1]

    def _encode(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)

    def _start_targets(self, y: Any, classes: Any) -> None:
        self._set_targets(y)

    def _check_more_targets(self, y: Any, classes: Any) -> None:
        n_targets = 1 if y.ndim == 1 else y.shape[1]
        if (y.ndim == 1) != self._ravel or n_targets != self._n_targets:
            raise ValueError(
                f"y has shape {y.shape}, but the first call to partial_fit had "
                f"{'a 1-D y' if self._ravel else f'{self._n_targets} target columns'}: "
                "every batch needs the same targets.")

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidge:
        r"""Add one batch of rows to the fit: online, exact ridge in O(D²) memory.

        The statistics :math:`G \mathrel{+}= A_b^\top A_b`,
        :math:`A_b = \sqrt{s_b}\,[z(X_b), 1, Y_b]`, are summed over the batches, so after
        any number of calls the model is :meth:`fit` on all the rows so far, to rounding —
        whatever the batches' sizes and order. ``coef_`` and ``intercept_`` are solved
        (one :math:`D\times D` Cholesky) when next read, once per change of the statistics:
        a quarter or more of a 10,000-row batch's time at D = 1,000, not spent per batch.
        A call after :meth:`fit` goes on from the statistics ``fit`` kept.

        The map is fitted on the **first batch** (it is fixed afterwards, so every batch
        gets the same features). Random maps with a numeric γ read only its width. Maps
        that read rows — Nyström's landmarks, ``gamma="scale"``, the principal axes of
        ``RandomFourierFeatures(structure="auto"/"principal")`` — see only that batch:
        a :class:`UserWarning` says so when it has fewer rows than ``n_components``. To fit
        the map on a sample of your choice, fit it yourself and pass it wrapped in
        :class:`sklearn.frozen.FrozenEstimator` (scikit-learn's convention for a prefitted
        estimator): it is then used as it is, by ``fit`` too.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One batch of rows (NumPy, sparse, or an array-API array under
            ``array_api_dispatch``).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Their targets (the same number of columns in every batch).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
            The estimator, updated.

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps import RBFSampler
        >>> from kernelmaps.models import FeatureRidge
        >>> rng = np.random.RandomState(0)
        >>> X = rng.uniform(-3, 3, size=(3000, 1)); y = np.sin(X[:, 0])
        >>> rbf = RBFSampler(gamma=0.5, n_components=100, random_state=0)
        >>> online = FeatureRidge(rbf, alpha=1e-3)
        >>> for start in range(0, 3000, 1000):
        ...     online = online.partial_fit(X[start:start + 1000], y[start:start + 1000])
        >>> batch = FeatureRidge(rbf, alpha=1e-3).fit(X, y)
        >>> bool(np.allclose(online.coef_, batch.coef_, rtol=0, atol=1e-9))
        True
        """
        if is_dask_collection(X):
            raise TypeError(f"{type(self).__name__}.partial_fit takes in-memory batches; for "
                            "a Dask collection call fit (one tree-reduced pass).")
        self._partial_fit(X, y, sample_weight, None)
        return self

    def predict(self, X: Any) -> Any:
        """Predict ``z(X) w + b``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape \
                (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray or dask array of shape (n_samples,) or (n_samples, n_targets)
            A lazy dask array (chunked like ``X``'s rows) for Dask input.
        """
        return self._decision(X)


class FeatureRidgeClassifier(ClassifierMixin, _FeatureRidgeBase):
    r"""One-vs-rest ridge classification on explicit kernel features z(x), in one pass.

    As scikit-learn's ``RidgeClassifier`` on the features of ``feature_map``: the labels
    become ±1 targets, one column per class (a single column for two classes), fitted by
    :class:`FeatureRidge`'s normal equations — one pass over the data, one
    :math:`D\times D` solve for all classes — and a sample gets the class of the largest
    score :math:`z(x)^\top w_c + b_c` (two classes: the sign of the score).

    Parameters
    ----------
    feature_map : FeatureMap, default=None
        The unfitted kernelmaps map z (cloned, then fitted on ``X``). ``None``:
        ``RBFSampler(gamma="scale")`` (:math:`\gamma = 1/(d\,\operatorname{Var}X)`).
    alpha : float, default=1.0
        Ridge penalty α ≥ 0.
    fit_intercept : bool, default=True
        Fit an intercept per class (features and targets centred with their weighted
        means).
    random_state : int, RandomState instance or None, default=None
        When not ``None``, replaces the map's own ``random_state``.

    Attributes
    ----------
    feature_map_ : FeatureMap
        The fitted map.
    kernel_ : Kernel
        The kernel the model approximates (the map's ``kernel_``).
    classes_ : ndarray of shape (n_classes,)
        The class labels seen during fit.
    coef_ : ndarray of shape (D,) or (n_classes, D)
        1-D for two classes (the weights of ``classes_[1]``), as scikit-learn's
        RidgeClassifier.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts of the one-vs-rest problems.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.models import FeatureRidgeClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> model = FeatureRidgeClassifier(Nystroem(gamma=1e-3, n_components=300, random_state=0),
    ...                                alpha=1e-2).fit(X[:1500], y[:1500])
    >>> bool(model.score(X[1500:], y[1500:]) > 0.9)
    True
    """

    _y_numeric = False

    def _set_targets(self, y: Any) -> None:
        if y.ndim != 1:
            raise ValueError("FeatureRidgeClassifier takes one label per sample (1-D y); got "
                             f"y of shape {y.shape}. For several regression targets use "
                             "FeatureRidge.")
        check_classification_targets(y)
        self._set_classes(np.unique(y))

    def _set_classes(self, classes: np.ndarray) -> None:
        if classes.size < 2:
            raise ValueError("FeatureRidgeClassifier needs at least 2 classes in y; got 1 "
                             f"class ({classes[0].item()!r}).")
        self.classes_ = classes
        self._ravel = False
        self._n_targets = 1 if classes.size == 2 else classes.size

    def _encode(self, y: np.ndarray) -> np.ndarray:
        return encode_labels(y, self.classes_)

    def _start_targets(self, y: Any, classes: Any) -> None:
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit (all "
                             "the labels any batch may hold, as SGDClassifier takes them).")
        if y.ndim != 1:
            raise ValueError("FeatureRidgeClassifier takes one label per sample (1-D y); got "
                             f"y of shape {y.shape}.")
        check_classification_targets(y)
        self._set_classes(np.unique(np.asarray(classes)))
        self._check_labels(y)

    def _check_more_targets(self, y: Any, classes: Any) -> None:
        if classes is not None and not np.array_equal(np.unique(np.asarray(classes)),
                                                      self.classes_):
            raise ValueError(f"classes={np.asarray(classes).tolist()!r} is not the same as on "
                             f"the first call to partial_fit: {self.classes_.tolist()!r}.")
        if y.ndim != 1:
            raise ValueError("FeatureRidgeClassifier takes one label per sample (1-D y); got "
                             f"y of shape {y.shape}.")
        self._check_labels(y)

    def _check_labels(self, y: np.ndarray) -> None:
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(
                f"y has the label(s) {unknown.tolist()!r}, not among the classes "
                f"{self.classes_.tolist()!r} fixed by the first call (fit, or partial_fit's "
                "classes=): the one-vs-rest targets of a new class would change every row "
                "already added. Pass every class in classes= on the first call.")

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: Any, y: Any, classes: Any = None,
                    sample_weight: Any = None) -> FeatureRidgeClassifier:
        r"""Add one batch of labelled rows to the fit: online, exact, O(D²) memory.

        As :meth:`FeatureRidge.partial_fit` on the ±1 one-vs-rest targets: after any number
        of calls the model is :meth:`fit` on all the rows so far, to rounding; ``coef_``
        and ``intercept_`` are solved when next read, once per change of the statistics. The map is
        fitted on the first batch (a :class:`UserWarning` when a map that reads rows gets
        fewer than ``n_components`` of them; pass a prefitted map in
        :class:`sklearn.frozen.FrozenEstimator` to choose its sample yourself).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One batch of rows.
        y : array-like of shape (n_samples,)
            Their labels, all among ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every label any batch may hold: required on the first call (as
            :meth:`sklearn.linear_model.SGDClassifier.partial_fit`), optional afterwards
            (then it must be the same). A label outside it raises a ``ValueError`` naming
            the label.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors.

        Returns
        -------
        self : object
            The estimator, updated.
        """
        if is_dask_collection(X):
            raise TypeError(f"{type(self).__name__}.partial_fit takes in-memory batches; for "
                            "a Dask collection call fit (one tree-reduced pass).")
        self._partial_fit(X, y, sample_weight, classes)
        return self

    def decision_function(self, X: Any) -> Any:
        """Class scores ``z(X) W + b``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape \
                (n_samples, n_features)

        Returns
        -------
        scores : ndarray or dask array of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the score of ``classes_[1]`` (positive: that class).
        """
        return self._decision(X)

    def predict(self, X: Any) -> Any:
        """The class of the largest score (two classes: the sign of the score).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape \
                (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray or dask array of shape (n_samples,)
            The predicted classes; a lazy dask array for Dask input.
        """
        if is_dask_collection(X):
            return collection_handler("map_rows")(self, X, "predict")
        scores = self.decision_function(X)  # (checks that the model is fitted)
        return labels_from_scores(self.classes_, scores)
