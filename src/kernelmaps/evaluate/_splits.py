"""What each comparison run learns from and is scored on: task, target checks, splits.

:func:`task_of` decides classification or regression, :func:`check_target` validates a
target, :func:`make_splits` makes one hold-out split, ``cv`` (stratified) folds, or uses a
fixed test set. Private to :mod:`kernelmaps.evaluate`; ``compare``'s parameters document it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.utils import check_array
from sklearn.utils.multiclass import type_of_target

from kernelmaps._ridge.labels import check_target
from kernelmaps._suggest import did_you_mean

__all__ = [
    "MAX_AUTO_CLASSES",
    "ScaleCheck",
    "Split",
    "check_scales",
    "check_split",
    "check_target",
    "choose_scale",
    "make_splits",
    "task_of",
]


#: A float target with integral values is taken as class labels up to this many classes.
MAX_AUTO_CLASSES = 20
_TASKS = ("auto", "classification", "regression")


def task_of(y: np.ndarray, task: str = "auto") -> str:
    """Tell whether ``y`` is a classification or a regression target.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The targets.
    task : {"auto", "classification", "regression"}, default="auto"
        The task as the user gave it (see ``compare(task=...)``); ``"auto"`` infers it
        from ``y``.

    Returns
    -------
    str
        ``'classification'`` or ``'regression'``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import task_of
    >>> task_of(np.array([0, 1, 1, 0])), task_of(np.array([0.5, 1.2, 3.3]))
    ('classification', 'regression')
    """
    if task not in _TASKS:
        raise ValueError(f"task must be one of {list(_TASKS)}; got {task!r}"
                         f"{did_you_mean(task, _TASKS)}.")
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"y must hold class labels or real numbers (one target per row); its type is "
            f"{kind!r}."
        )
    if task != "auto":
        if task == "regression" and y.dtype.kind not in "biuf":
            raise ValueError("task='regression' needs a numeric y; it holds labels.")
        return task
    # scikit-learn calls integral floats 'multiclass'; a float target with many distinct
    # values (e.g. diabetes progression) is a regression target all the same.
    if kind == "continuous" or (y.dtype.kind == "f"
                                and len(np.unique(y)) > MAX_AUTO_CLASSES):
        return "regression"
    return "classification"


@dataclass
class Split:
    """One train/test split, with the rows and kernel matrix the error is measured on."""

    index: int
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    error_rows: np.ndarray = field(default_factory=lambda: np.arange(0))
    K_error: np.ndarray | None = None


def min_class_count(y: np.ndarray) -> int:
    return int(np.unique(y, return_counts=True)[1].min())


def make_splits(X: Any, y: np.ndarray, task: str, *, test_size: float, cv: int | None,
                test_data: tuple[Any, Any] | None, seed: int) -> list[Split]:
    """The train/test splits of a comparison: ``test_data``, ``cv`` folds or one hold-out."""
    n = X.shape[0]
    classify = task == "classification"
    if test_data is not None:
        X_test, y_test = test_data
        return [Split(0, X, y, X_test, y_test)]
    if cv is not None:
        if not isinstance(cv, (int, np.integer)) or cv < 2:
            raise ValueError(f"cv must be an int >= 2 (folds) or None; got {cv!r}.")
        if n < 2 * cv:
            raise ValueError(
                f"too little data for {cv}-fold cross-validation: {n} rows; need at least "
                f"{2 * cv} (use fewer folds or more data)."
            )
        stratified = classify and min_class_count(y) >= cv
        splitter = (StratifiedKFold if stratified else KFold)(
            n_splits=cv, shuffle=True, random_state=seed)
        return [Split(i, X[train], y[train], X[test], y[test])
                for i, (train, test) in enumerate(splitter.split(X, y))]
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1); got {test_size!r}.")
    n_test = math.ceil(test_size * n)
    n_train = n - n_test
    if n_test < 1 or n_train < 2:
        raise ValueError(
            f"too little data for the split: {n} rows with test_size={test_size} leave "
            f"{n_train} training and {n_test} test rows; need at least 2 and 1 (use more "
            "data or another test_size)."
        )
    n_classes = len(np.unique(y)) if classify else 0
    stratify = y if classify and min_class_count(y) >= 2 and min(n_test, n_train) >= \
        n_classes else None
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=n_test, random_state=seed, stratify=stratify)
    return [Split(0, X_train, y_train, X_test, y_test)]


def check_split(split: Split, task: str) -> None:
    """Refuse a classification split whose training part holds a single class."""
    if task == "classification" and len(np.unique(split.y_train)) < 2:
        raise ValueError(
            "too little data for the split: the training part holds a single class; use more "
            "data (or fewer folds) so every split sees at least two classes."
        )


#: Feature scalings ``compare(scale=...)`` accepts.
SCALES = ("none", "standard", "minmax")


def make_scaler(scale: str, sparse: bool) -> Any:
    """Build the unfitted scaler for ``scale``.

    Parameters
    ----------
    scale : {"none", "standard", "minmax"}
        The scaling asked for.
    sparse : bool
        Whether the data is sparse.

    Returns
    -------
    scaler : transformer or None
        ``'standard'``: :class:`~sklearn.preprocessing.StandardScaler` (without centring
        for sparse input, which would densify it); ``'minmax'``:
        :class:`~sklearn.preprocessing.MinMaxScaler` (dense input only); ``'none'``: None.

    Examples
    --------
    >>> from kernelmaps.evaluate import make_scaler
    >>> make_scaler("standard", sparse=True)
    StandardScaler(with_mean=False)
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {list(SCALES)}; got {scale!r}"
                         f"{did_you_mean(scale, SCALES)}.")
    if scale == "none":
        return None
    if scale == "minmax":
        if sparse:
            raise ValueError("scale='minmax' would densify sparse input; use scale='standard' "
                             "(scaled without centring) or scale='none'.")
        return MinMaxScaler()
    return StandardScaler(with_mean=not sparse)


def scale_split(split: Split, scale: str) -> None:
    """Fit the scaler on ``split``'s training rows only and apply it to both parts."""
    scaler = make_scaler(scale, sp.issparse(split.X_train))
    if scaler is None:
        return
    split.X_train = scaler.fit_transform(split.X_train)
    split.X_test = scaler.transform(split.X_test)


def _feature_variances(X: Any) -> np.ndarray:
    """Per-feature (population) variances of dense or sparse ``X``, in float64."""
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        square = np.asarray(X.multiply(X).mean(axis=0), dtype=np.float64).ravel()
        return np.maximum(square - mean**2, 0.0)
    return np.asarray(X, dtype=np.float64).var(axis=0)


def scale_ratio(X: Any) -> float:
    """Compute the largest over the smallest positive per-feature standard deviation.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The data.

    Returns
    -------
    float
        The ratio; 1.0 when fewer than two features vary.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import scale_ratio
    >>> round(scale_ratio(np.array([[0.0, 100.0], [1.0, 300.0], [2.0, 200.0]])), 6)
    100.0
    """
    spread = np.sqrt(_feature_variances(X))
    spread = spread[spread > 0]
    return float(spread.max() / spread.min()) if spread.size >= 2 else 1.0


#: A feature whose share of the total variance is below this fraction of an equal share
#: (1/d of it) hardly moves the distances between rows: :func:`check_scales` calls it drowned.
DROWNED_SHARE = 0.1
#: :func:`check_scales` advises standardising when at least this fraction of the
#: (non-constant) features is drowned.
DROWNED_FRACTION = 0.5


@dataclass(frozen=True)
class ScaleCheck:
    """What :func:`check_scales` found: whether standardising would plausibly help, and why.

    Attributes
    ----------
    advised : bool
        True when at least half of the non-constant features are drowned.
    n_features : int
        Features with a positive variance (constant ones play no part in distances).
    n_drowned : int
        Features whose share of the total variance is below a tenth of an equal share,
        ``0.1 / n_features``.
    largest_share : float
        The share of the total variance held by the feature with the largest variance.
    largest_feature : int
        Column index of that feature (-1 when there is no non-constant feature).
    message : str
        The warning to show when ``advised`` (else ``''``).
    """

    advised: bool
    n_features: int
    n_drowned: int
    largest_share: float
    largest_feature: int
    message: str


def check_scales(X: Any, feature_names: Any = None) -> ScaleCheck:
    r"""Tell whether standardising the features would plausibly help a kernel on ``X``.

    A Gaussian, Laplacian or dot-product kernel sees the data through distances or inner
    products, to which feature :math:`j` contributes in proportion to its variance
    :math:`\sigma_j^2`. Standardising gives every feature the same share, :math:`1/d`. It
    helps when features the distances cannot see carry information, and hurts when it
    inflates near-constant features measured in the same unit as the rest (digits' border
    pixels). The rule: with :math:`s_j = \sigma_j^2 / \sum_k \sigma_k^2` over the
    :math:`d` non-constant features, a feature is *drowned* when :math:`s_j < 0.1 / d` (a
    tenth of an equal share), and standardising is advised when at least half of the
    features are drowned: the distances then hardly see most of them. The ratio of the
    largest to the smallest standard deviation alone is not a good rule: one near-constant
    pixel makes it large without the others being unseen.

    Measured (``python scripts/measure_scale_warning.py``: the exact-kernel ridge score of
    ``kernelmaps compare``, Gaussian kernel with the median heuristic, 5-fold
    cross-validation, without and with ``StandardScaler``): standardising raised the score on
    wine (12 of 13 features drowned; +0.13 accuracy), breast_cancer (27 of 30; +0.026) and
    two synthetic sets with mixed units (8 of 10, +0.064 accuracy; 7 of 8, +0.16 R²); it
    lowered it on digits (14 of 61; −0.006) and changed it by less than two standard errors
    on Fashion-MNIST (84 of 784; −0.006), diabetes (0 of 10) and iris (0 of 4). The rule
    fires on exactly the four where it helps; the rule it replaces (largest over smallest
    standard deviation above 100) also fired on digits and Fashion-MNIST. The table is in
    the command-line guide (``docs/cli.md``, *Feature scales*).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The features, as the kernel would see them.
    feature_names : sequence of str, optional
        Names of the columns, for the message (else the column index is given).

    Returns
    -------
    ScaleCheck
        The decision, the counts behind it and, when advised, a one-line warning.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import check_scales
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 4)) * [1000.0, 1.0, 1.0, 0.5]
    >>> check = check_scales(X)
    >>> check.advised, check.n_drowned, check.n_features
    (True, 3, 4)
    >>> check_scales(rng.normal(size=(200, 4))).advised
    False
    """
    # Rows of numbers, finite: scikit-learn's checks and messages, naming X.
    X = check_array(X, accept_sparse=("csr", "csc"), dtype="numeric", input_name="X")
    variances = _feature_variances(X)
    columns = np.flatnonzero(variances > 0)
    if columns.size < 2:
        return ScaleCheck(False, int(columns.size), 0, 1.0 if columns.size else 0.0,
                          int(columns[0]) if columns.size else -1, "")
    share = variances[columns] / variances[columns].sum()
    d = columns.size
    drowned = int(np.count_nonzero(share < DROWNED_SHARE / d))
    largest = int(np.argmax(share))
    advised = drowned >= DROWNED_FRACTION * d
    column = int(columns[largest])
    name = (repr(str(feature_names[column])) if feature_names is not None
            else f"column {column}")
    message = (f"{drowned} of the {d} features each carry less than a tenth of an equal "
               f"share of the variance ({name} alone {100 * share[largest]:.3g}%), so the "
               "kernel's distances hardly see them; consider --scale standard."
               if advised else "")
    return ScaleCheck(advised, d, drowned, float(share[largest]), int(columns[largest]),
                      message)


def choose_scale(scale: str, X: Any, feature_names: Any = None) -> tuple[str, ScaleCheck | None]:
    """Resolve ``scale="auto"`` by the one scale rule, :func:`check_scales`.

    Parameters
    ----------
    scale : {"auto", "none", "standard", "minmax"}
        ``"auto"``: ``"standard"`` when :func:`check_scales` advises it, else ``"none"``;
        any other value is returned as it is.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The features (read only for ``"auto"``).
    feature_names : sequence of str, optional
        Column names for the check's message.

    Returns
    -------
    scale : str
        One of :data:`SCALES`.
    check : ScaleCheck or None
        The check behind an ``"auto"`` choice (None for an explicit ``scale``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import choose_scale
    >>> X = np.random.RandomState(0).normal(size=(200, 4)) * [1000.0, 1.0, 1.0, 0.5]
    >>> choose_scale("auto", X)[0], choose_scale("none", X)
    ('standard', ('none', None))
    """
    if scale != "auto":
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {['auto', *SCALES]}; got {scale!r}"
                             f"{did_you_mean(scale, ['auto', *SCALES])}.")
        return scale, None
    check = check_scales(X, feature_names)
    return ("standard" if check.advised else "none"), check
