r"""Fixed-size kernel models: landmarks → eigen-feature map → linear model, as one pipeline.

A fixed-size kernel model (Suykens et al., 2002; De Brabanter et al., 2010) solves a kernel
machine in the primal on m ≪ n prototype vectors:

1. choose m landmarks :math:`c_1, \dots, c_m` that maximise the quadratic Rényi entropy
   (or by any other strategy of :mod:`kernelmaps.landmarks`, through
   :func:`~kernelmaps.landmarks.select_landmarks` as every kernel machine does);
2. map every point to the Nyström eigen-features
   :math:`\hat\Phi_i(x) = \lambda_i^{-1/2}\sum_t u_{ti}\,k(c_t, x)`, where
   :math:`K_{mm} = U\Lambda U^\top`, dropping numerically null eigenvalues;
3. fit a linear model on :math:`\hat\Phi(x)`: ridge regression (the fixed-size LS-SVM),
   logistic regression or a linear SVM.

Training costs O(n·m·d) for the features plus the linear model on an n × m matrix instead
of the O(n²) kernel matrix. :func:`make_fixed_size_model` returns the three steps as a
scikit-learn :class:`~sklearn.pipeline.Pipeline` (steps ``"features"`` and ``"model"``), so
everything scikit-learn does with pipelines — ``GridSearchCV`` over ``features__gamma`` and
``model__alpha``, cloning, pickling — works unchanged. The fitted ``features`` step holds
the kernel, resolved once in its ``fit``, as ``kernel_`` and the landmarks as
``components_``.
"""

from __future__ import annotations

import inspect
from typing import Any

from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC, LinearSVR

from kernelmaps._suggest import did_you_mean
from kernelmaps.maps.nystroem import Nystroem

__all__ = ["FIXED_SIZE_MODELS", "make_fixed_size_model"]

#: Linear models by name: regression (``ridge``, ``linear_svr``) and classification.
FIXED_SIZE_MODELS: dict[str, type[BaseEstimator]] = {
    "ridge": Ridge,
    "ridge_classifier": RidgeClassifier,
    "logistic": LogisticRegression,
    "linear_svc": LinearSVC,
    "linear_svr": LinearSVR,
}


def make_fixed_size_model(
    model: str | BaseEstimator = "ridge",
    *,
    n_components: int = 100,
    kernel: Any = "rbf",
    gamma: float | str | None = "scale",
    kernel_params: dict | None = None,
    landmarks: Any = "renyi",
    landmark_params: dict | None = None,
    basis: str = "eigen",
    eigen_tol: float | None = None,
    model_params: dict | None = None,
    random_state: Any = None,
) -> Pipeline:
    r"""Build a fixed-size kernel model: landmarks, eigen-feature map and linear model.

    The pipeline is ``Pipeline([("features", Nystroem(...)), ("model", linear_model)])``:
    :class:`~kernelmaps.Nystroem` with ``landmarks='renyi'`` and ``basis='eigen'`` by
    default (the fixed-size LS-SVM of De Brabanter et al., 2010), then a linear model
    fitted in the primal on the :math:`n \times r` features
    :math:`\hat\Phi_i(x) = \lambda_i^{-1/2}\sum_{t=1}^m u_{ti}\,k(c_t, x)`
    (r ≤ m: the numerical rank of the landmark kernel matrix).

    Parameters
    ----------
    model : str or estimator, default='ridge'
        The linear model: a name from :data:`FIXED_SIZE_MODELS` (``'ridge'``,
        ``'ridge_classifier'``, ``'logistic'``, ``'linear_svc'``, ``'linear_svr'``;
        ``'ridge'`` with the eigen features is the fixed-size LS-SVM regressor) or an
        unfitted scikit-learn estimator, which is cloned.
    n_components : int, default=100
        Number of landmarks m (prototype vectors).
    kernel : str, Kernel or callable, default='rbf'
        The kernel, as in :class:`~kernelmaps.Nystroem`.
    gamma : 'scale', 'auto', float or None, default='scale'
        Kernel parameter, as in :class:`~kernelmaps.Nystroem`. ``'scale'`` (default, as
        :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)` over all
        entries of the training X (1 if the variance is 0), resolved when the pipeline is
        fitted; ``None``: the kernel's default (:math:`1/d`). A string is not passed on
        with a Kernel object or a callable (their parameters are their own).
    kernel_params : dict, default=None
        Further kernel parameters, as in :class:`~kernelmaps.Nystroem`.
    landmarks : str or array-like, default='renyi'
        Landmark strategy or points, as in :class:`~kernelmaps.Nystroem`.
    landmark_params : dict, default=None
        Options of the landmark strategy, as in :class:`~kernelmaps.Nystroem`.
    basis : {'eigen', 'symmetric'}, default='eigen'
        Feature basis, as in :class:`~kernelmaps.Nystroem`.
    eigen_tol : float, default=None
        Relative eigenvalue truncation, as in :class:`~kernelmaps.Nystroem`.
    model_params : dict, default=None
        Parameters of the linear model given by name, e.g. ``{"alpha": 1e-3}`` for ridge
        or ``{"C": 10.0}`` for logistic regression. Not with an estimator instance (set them
        on the instance).
    random_state : int, RandomState instance or None, default=None
        Seeds the landmark selection, and the linear model when it takes a
        ``random_state`` that ``model_params`` does not set.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Unfitted; steps ``"features"`` (the :class:`~kernelmaps.Nystroem`) and ``"model"``.

    References
    ----------
    K. De Brabanter, J. De Brabanter, J. A. K. Suykens and B. De Moor, "Optimized
    fixed-size kernel models for large data sets", Computational Statistics & Data
    Analysis 54(6), 2010. J. A. K. Suykens, T. Van Gestel, J. De Brabanter, B. De Moor and
    J. Vandewalle, *Least Squares Support Vector Machines*, World Scientific, 2002.

    Examples
    --------
    A fixed-size LS-SVM classifier on two interleaved half-moons (not linearly separable),
    with 60 Rényi-entropy prototype vectors out of 1,000 points:

    >>> from sklearn.datasets import make_moons
    >>> from sklearn.model_selection import train_test_split
    >>> from kernelmaps.models.fixed_size import make_fixed_size_model
    >>> X, y = make_moons(n_samples=1000, noise=0.1, random_state=0)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> model = make_fixed_size_model("ridge_classifier", n_components=60, gamma=2.0,
    ...                               model_params={"alpha": 1e-3}, random_state=0)
    >>> model = model.fit(X_train, y_train)
    >>> model.named_steps["features"].n_features_out_ <= 60
    True
    >>> print(f"accuracy {model.score(X_test, y_test):.2f}")
    accuracy 1.00

    (A linear ``RidgeClassifier`` on the raw inputs scores 0.86 here.) Tune it like any
    pipeline:

    >>> from sklearn.model_selection import GridSearchCV
    >>> search = GridSearchCV(model, {"features__gamma": [0.5, 2.0],
    ...                               "model__alpha": [1e-3, 1.0]}, cv=3)
    >>> print(f"cross-validated accuracy {search.fit(X_train, y_train).best_score_:.2f}")
    cross-validated accuracy 1.00
    """
    if isinstance(gamma, str) and not isinstance(kernel, str):
        gamma = None  # Nystroem refuses gamma beside a Kernel object or a callable
    features = Nystroem(kernel, gamma=gamma, kernel_params=kernel_params,
                        n_components=n_components, random_state=random_state,
                        landmarks=landmarks, landmark_params=landmark_params, basis=basis,
                        eigen_tol=eigen_tol)
    return Pipeline([("features", features),
                     ("model", _linear_model(model, model_params, random_state))])


def _linear_model(model: str | BaseEstimator, model_params: dict | None,
                  random_state: Any) -> BaseEstimator:
    if isinstance(model, BaseEstimator):
        if model_params:
            raise TypeError(
                "model_params configures a model given by name; set the parameters on the "
                f"estimator instance instead, e.g. {type(model).__name__}(...)."
            )
        return clone(model)
    if not isinstance(model, str) or model not in FIXED_SIZE_MODELS:
        raise ValueError(
            f"model must be one of {sorted(FIXED_SIZE_MODELS)} or a scikit-learn estimator "
            f"instance; got {model!r}{did_you_mean(model, FIXED_SIZE_MODELS)}."
        )
    cls = FIXED_SIZE_MODELS[model]
    params = dict(model_params or {})
    accepted = inspect.signature(cls).parameters
    if "random_state" in accepted and "random_state" not in params:
        params["random_state"] = random_state
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise TypeError(
            f"model_params {unknown} are not parameters of {cls.__name__}; it accepts "
            f"{sorted(accepted)}."
        )
    return cls(**params)
