r"""Every ridge :math:`\alpha` from one pass over the features: closed-form validation scores.

For features :math:`Z` (``n × D``, centred: :math:`Z_c = Z - \mathbf 1\mu^\top`) and targets
:math:`Y`, ridge with an unpenalised intercept minimises
:math:`\|Y - b - Z w\|^2 + \alpha \|w\|^2`. One eigendecomposition
:math:`Z_c^\top Z_c = V \Lambda V^\top` (or of :math:`Z_c Z_c^\top` when :math:`n < D`)
serves every :math:`\alpha`:

.. math::

    w(\alpha) = V (\Lambda + \alpha)^{-1} V^\top Z_c^\top Y_c, \qquad
    H(\alpha) = \tfrac1n \mathbf 1 \mathbf 1^\top + P (\Lambda + \alpha)^{-1} P^\top,
    \quad P = Z_c V,

so the fitted values :math:`\hat Y(\alpha) = H(\alpha) Y` and the leverages
:math:`h_i(\alpha) = \tfrac1n + \sum_k P_{ik}^2 / (\lambda_k + \alpha)` of all
:math:`\alpha` cost one ``n × r`` product each. The leave-one-out prediction of row
:math:`i` is exact (the Sherman–Morrison identity; Allen 1974, Golub, Heath & Wahba 1979):

.. math::

    \hat y_{-i}(\alpha) = \frac{\hat y_i(\alpha) - h_i(\alpha) y_i}{1 - h_i(\alpha)} .

This is the identity scikit-learn's :class:`~sklearn.linear_model.RidgeCV` and
:class:`~sklearn.linear_model.RidgeClassifierCV` use. They are not reused here because
(i) their SVD of the ``n × D`` design costs several times the Gram product plus a ``D × D``
eigendecomposition used here (the Gram is one symmetric rank-k update, BLAS ``syrk``, half a
matrix product); (ii) ``RidgeClassifierCV`` picks :math:`\alpha` by the squared error of the
±1 class codes, while the score that matters is accuracy, which the LOO predictions give
directly; and (iii) k-fold scores come from the same full Gram matrix minus each fold's
(one pass over the data for all folds and all :math:`\alpha`), which they do not offer.

:func:`ridge_alpha_path` returns an :class:`AlphaPath`: the score of every :math:`\alpha`,
the best one, and the fitted linear model at it (:meth:`AlphaPath.estimator`), without a
second pass over the data.

References
----------
D. M. Allen, "The relationship between variable selection and data augmentation and a method
for prediction", Technometrics 16, 1974. G. H. Golub, M. Heath, G. Wahba, "Generalized
cross-validation as a method for choosing a good ridge parameter", Technometrics 21, 1979.
R. Rifkin, R. Lippert, "Notes on regularized least squares", MIT-CSAIL-TR-2007-025.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.validation import check_array

from kernelmaps._linalg import psd_spectrum
from kernelmaps._ridge.checks import check_alphas, check_cv
from kernelmaps._ridge.labels import check_task, encode_targets, label_binarizer
from kernelmaps._ridge.scoring import best_index, path_scores, path_sums, scores_from_sums

__all__ = ["DEFAULT_ALPHAS", "AlphaPath", "honest_rows", "ridge_alpha_path"]

#: The α grid used when none is given: 10⁻⁶ … 10³, four per decade. Feature maps scale
#: features so that z(x)·z(y) ≈ k(x, y) = O(1), so the eigenvalues of ZᵀZ are O(n) at most.
DEFAULT_ALPHAS = np.logspace(-6, 3, 37)

#: Leave-one-out predictions are formed a block of rows at a time, every α at once: a block
#: holds about this many numbers (rows × outputs × α), so the few temporaries of a block
#: stay in cache and out of the peak memory ``compare`` reports, while the product that
#: forms them is one matrix product per block (the projections of the block's rows, read
#: once for all α) — not one thin product per α, which read all ``n × r`` projections
#: again for each of the grid's 37 α.
_CHUNK_ELEMENTS = 2**17

class _Chosen:
    """The chosen α and its score, from a path's ``alphas``, ``scores`` and ``best_index``."""

    alphas: np.ndarray
    scores: np.ndarray
    best_index: int

    @property
    def alpha(self) -> float:
        """The chosen α."""
        return float(self.alphas[self.best_index])

    @property
    def score(self) -> float:
        """The validation score at the chosen α."""
        return float(self.scores[self.best_index])


@dataclass(frozen=True)
class AlphaPath(_Chosen):
    """Validation scores of ridge for every α, and the linear model at the best one.

    Attributes
    ----------
    alphas : ndarray of shape (n_alphas,)
        The α grid: the distinct values given, ascending.
    scores : ndarray of shape (n_alphas,)
        Validation score per α: accuracy (classification) or R² (regression), the score
        scikit-learn's ``score`` method gives; leave-one-out or mean over folds.
    errors : ndarray of shape (n_alphas,)
        Mean squared validation error per α (of the ±1 class codes for classification):
        the tie-break between α of equal accuracy.
    best_index : int
        Index of the chosen α: the best score, then the smallest error, then the largest α.
    task : {"regression", "classification"}
        What was fitted.
    cv : "loo" or int
        The validation: leave-one-out or the number of folds.
    coef : ndarray
        Coefficients at the chosen α, fitted on all rows, shaped as scikit-learn's
        ``coef_``: ``(n_features,)`` for one target (a 1-D regression target, two classes),
        else ``(n_outputs or n_classes, n_features)``.
    intercept : float or ndarray
        Intercept at the chosen α, shaped as scikit-learn's ``intercept_``.
    classes : ndarray or None
        Class labels (classification), sorted.
    n_features : int
        Number of features the path was computed on.
    """

    alphas: np.ndarray
    scores: np.ndarray
    errors: np.ndarray
    best_index: int
    task: str
    cv: str | int
    coef: np.ndarray
    intercept: Any
    classes: np.ndarray | None
    n_features: int


    def estimator(self) -> Ridge | RidgeClassifier:
        """Build the fitted linear model at the chosen α.

        Its coefficients are those of the decomposition that scored the path (no second
        pass over the data); they equal ``Ridge(alpha).fit(Z, y)``'s to rounding.

        Returns
        -------
        sklearn.linear_model.Ridge or sklearn.linear_model.RidgeClassifier
            A fitted :class:`~sklearn.linear_model.Ridge` (regression) or
            :class:`~sklearn.linear_model.RidgeClassifier` with ``alpha`` the chosen α.
        """
        model: Ridge | RidgeClassifier
        if self.task == "classification":
            model = RidgeClassifier(alpha=self.alpha)
            model._label_binarizer = label_binarizer(self.classes)
            # scikit-learn >= 1.8 stores classes_ (earlier: a property of the binarizer).
            if not isinstance(getattr(type(model), "classes_", None), property):
                model.classes_ = self.classes.copy()
        else:
            model = Ridge(alpha=self.alpha)
        model.coef_ = self.coef.copy()
        model.intercept_ = (self.intercept.copy() if isinstance(self.intercept, np.ndarray)
                            else self.intercept)
        model.n_features_in_ = self.n_features
        model.n_iter_ = None
        model.solver_ = "eigen"  # how the coefficients were found (not a Ridge solver name)
        return model


def _gram(Zc: np.ndarray) -> np.ndarray:
    """``Zcᵀ Zc`` (full symmetric) with one BLAS ``syrk``: half the flops of a product."""
    # Zc.T of a C-ordered array is Fortran-ordered: syrk reads it without a copy.
    upper = scipy.linalg.blas.dsyrk(1.0, Zc.T, trans=0, lower=0)
    return np.triu(upper) + np.triu(upper, 1).T


def _spectrum(Zc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues ``λ`` (r,) and orthonormal ``V`` (D × r) with ``Zcᵀ Zc = V diag(λ) Vᵀ``,
    numerically zero directions dropped; from the smaller of ``Zcᵀ Zc`` and ``Zc Zcᵀ``."""
    n, D = Zc.shape
    if n >= D:
        return psd_spectrum(_gram(Zc), overwrite=True)
    # Dual: Zc Zcᵀ = U Λ Uᵀ, and V = Zcᵀ U Λ^{-1/2} are the right singular vectors.
    lam, U = psd_spectrum(_gram(np.ascontiguousarray(Zc.T)), overwrite=True)
    return lam, (Zc.T @ U) / np.sqrt(lam)


def _predictions(P: np.ndarray, coeffs: np.ndarray, lam: np.ndarray,
                 alphas: np.ndarray) -> np.ndarray:
    """``P diag(1/(λ+α)) coeffs`` for each α: shape ``(n, n_outputs, n_alphas)``."""
    inverse = 1.0 / (lam[:, None] + alphas[None, :])            # r × A
    scaled = coeffs[:, :, None] * inverse[:, None, :]           # r × C × A
    return (P @ scaled.reshape(lam.size, -1)).reshape(P.shape[0], coeffs.shape[1], -1)


def _row_blocks(n: int, per_row: int) -> list[slice]:
    step = max(16, _CHUNK_ELEMENTS // max(1, per_row))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _loo_scores(lam: np.ndarray, P: np.ndarray, coeffs: np.ndarray, n: int,
                y_mean: np.ndarray, Y: np.ndarray, alphas: np.ndarray, task: str,
                classes: Any, labels: Any,
                column_scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out score and error per α of the rows whose projections are ``P``
    (``P diag(λ+α)⁻¹ coeffs`` their centred fitted values, ``Y``/``labels`` their targets),
    for ridge fitted on ``n`` rows. ``column_scale``: the projections are
    ``P * column_scale``, formed block by block (the kernel path's ``U Λ^{1/2}``: the same
    products, without an array of ``P``'s size beside ``U``).

    Rows are taken in blocks, every α at once: a block's leverages are one product with
    ``(λ+α)⁻¹`` (``r × A``) and its fitted values one product with
    ``coeffs ⊙ (λ+α)⁻¹`` (``r × C·A``); the blocks' sums (:func:`path_sums`) add up to
    the scores of all rows. Same arithmetic per number as α by α: ``2 r (C + 1)`` flops
    per row and α, with each row's projections read once instead of once per α.
    """
    inverse = 1.0 / (lam[:, None] + alphas[None, :])                     # r × A
    scaled = (coeffs[:, :, None] * inverse[:, None, :]).reshape(lam.size, -1)  # r × C·A
    rows, n_outputs = Y.shape
    losses: Any = 0.0
    errors: Any = 0.0
    for block in _row_blocks(rows, n_outputs * alphas.size):
        Pb, Yb = P[block], Y[block]
        if column_scale is not None:
            Pb = Pb * column_scale
        leverage = 1.0 / n + (Pb * Pb) @ inverse                          # rows × A
        # In place, the same operations in the same order: fitted = ȳ + Pb·scaled, then
        # (fitted − h·y) / max(1 − h, 10⁻¹²).
        loo = (Pb @ scaled).reshape(Pb.shape[0], n_outputs, -1)
        loo += y_mean[None, :, None]
        loo -= leverage[:, None, :] * Yb[:, :, None]
        # Leverage → 1 only when α → 0 with n ≤ rank: the LOO residual then explodes, and
        # the floor keeps it finite (and that α loses) instead of dividing by zero.
        loo /= np.maximum(1.0 - leverage, 1e-12)[:, None, :]
        block_losses, block_errors = path_sums(Yb, loo, task, classes,
                                               None if labels is None else labels[block])
        losses = losses + block_losses
        errors = errors + block_errors
    return scores_from_sums(losses, errors, Y, task)


def _loo(Zc: np.ndarray, Yc: np.ndarray, y_mean: np.ndarray, Y: np.ndarray, alphas: np.ndarray,
         task: str, classes: Any, labels: Any,
         scored: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    lam, V = _spectrum(Zc)
    projections = Zc @ V                         # n × r: one product serves both below
    coeffs = projections.T @ Yc                  # r × C  (= Vᵀ Zcᵀ Yc)
    if scored.all():  # every row: the projections themselves, not an n × r copy
        P, Y_scored, labels_scored = projections, Y, labels
    else:                                        # the scored rows' projections
        P, Y_scored = projections[scored], Y[scored]
        labels_scored = None if labels is None else labels[scored]
    scores, errors = _loo_scores(lam, P, coeffs, Zc.shape[0], y_mean, Y_scored, alphas,
                                 task, classes, labels_scored)
    return scores, errors, (lam, V, coeffs)


def _scored_rows(score_rows: Any, n: int) -> np.ndarray:
    """``score_rows`` as a boolean mask of ``n`` rows (``None``: all)."""
    if score_rows is None:
        return np.ones(n, dtype=bool)
    rows = np.asarray(score_rows)
    if rows.dtype == bool:
        if rows.shape != (n,):
            raise ValueError(f"score_rows as a mask must have one value per row ({n}); got "
                             f"shape {rows.shape}.")
        mask = rows.copy()
    elif rows.ndim == 1 and (rows.size == 0 or np.issubdtype(rows.dtype, np.integer)):
        if rows.size and (rows.min() < -n or rows.max() >= n):
            raise ValueError(f"score_rows holds row indices outside [0, {n}).")
        mask = np.zeros(n, dtype=bool)
        mask[rows] = True
    else:
        raise TypeError("score_rows must be row indices (ints) or a boolean mask; got "
                        f"dtype {rows.dtype}, shape {rows.shape}.")
    if mask.sum() < 2:
        raise ValueError(f"score_rows selects {int(mask.sum())} row(s); scoring needs at "
                         "least 2.")
    return mask


def _folds(n: int, cv: int, task: str, labels: Any, random_state: Any) -> list[np.ndarray]:
    if n < 2 * cv:
        raise ValueError(f"cv={cv} folds need at least {2 * cv} rows; got {n}. Use fewer folds "
                         "or cv='loo'.")
    stratified = task == "classification" and np.unique(labels, return_counts=True)[1].min() >= cv
    splitter = (StratifiedKFold if stratified else KFold)(n_splits=cv, shuffle=True,
                                                           random_state=random_state)
    return [test for _, test in splitter.split(np.zeros((n, 1)), labels)]


def _kfold(Z: np.ndarray, Y: np.ndarray, alphas: np.ndarray, cv: int, task: str, classes: Any,
           labels: Any, random_state: Any,
           scored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean fold score per α. Each training part's centred Gram matrix is the full Gram
    matrix minus the fold's (a rank-``n_fold`` downdate), so the data are multiplied once."""
    n, D = Z.shape
    primal = n - n // cv >= D
    if primal:
        G, s, ZtY = _gram(Z), Z.sum(axis=0), Z.T @ Y
    fold_scores: list[np.ndarray] = []
    fold_errors: list[np.ndarray] = []
    for test in _folds(n, cv, task, labels, random_state):
        train = np.ones(n, dtype=bool)
        train[test] = False
        n_train = n - test.size
        Y_train = Y[train]
        y_mean = Y_train.mean(axis=0)
        if primal:
            Z_test = Z[test]
            mu = (s - Z_test.sum(axis=0)) / n_train
            # Centring by subtraction: exact in exact arithmetic; rounding ~eps·‖G‖, far
            # below any α worth choosing.
            Gc = G - _gram(Z_test) - n_train * np.outer(mu, mu)
            lam, V = psd_spectrum(Gc, overwrite=True)
            ZcY = ZtY - Z_test.T @ Y[test] - n_train * np.outer(mu, y_mean)
            coeffs = V.T @ ZcY
        else:
            mu = Z[train].mean(axis=0)
            Zc = Z[train] - mu
            lam, V = _spectrum(Zc)
            coeffs = (Zc @ V).T @ (Y_train - y_mean)
        test = test[scored[test]]  # held out, but scored only where asked
        if test.size == 0:
            continue
        Q = (Z[test] - mu) @ V
        predicted = y_mean[None, :, None] + _predictions(Q, coeffs, lam, alphas)
        scores, errors = path_scores(Y[test], predicted, task, classes,
                                None if labels is None else labels[test])
        fold_scores.append(scores)
        fold_errors.append(errors)
    return np.mean(fold_scores, axis=0), np.mean(fold_errors, axis=0)


def honest_rows(feature_map: Any, n_rows: int) -> np.ndarray | None:
    """The rows a map fitted on ``n_rows`` rows did not take as landmarks: ``score_rows``.

    A landmark's own features are exact (z(x)·z(x′) = k(x, x′) for landmarks), a new point's
    are a projection onto the landmarks; validating on landmark rows favours more
    regularisation than new points want (measured on Fashion-MNIST, 6,000 rows, D = 1,000:
    α = 0.1 by leave-one-out over all rows, α ≤ 0.01 on the test rows and on the rows that
    are not landmarks). A map without landmark rows (random features) depends on no row.

    Parameters
    ----------
    feature_map : fitted feature map
        Landmarks are read from ``component_indices_`` (Nyström's uniform landmarks).
    n_rows : int
        Rows the map was fitted on.

    Returns
    -------
    ndarray of bool of shape (n_rows,) or None
        ``True`` for the rows that are not landmarks; ``None`` (score every row) for maps
        without landmark rows, or when fewer than two rows are left.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import Nystroem, RBFSampler
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> int(honest_rows(Nystroem(n_components=10, random_state=0).fit(X), 50).sum())
    40
    >>> honest_rows(RBFSampler(n_components=10).fit(X), 50) is None
    True
    """
    landmarks = getattr(feature_map, "component_indices_", None)
    if landmarks is None:
        return None
    mask = np.ones(n_rows, dtype=bool)
    mask[np.asarray(landmarks)] = False
    return mask if mask.sum() >= 2 else None


def linear_model_arrays(W: np.ndarray, y_mean: np.ndarray, mu: np.ndarray, task: str,
                        y_ndim: int, out_dtype: Any) -> tuple[np.ndarray, Any]:
    """``(coef, intercept)`` in scikit-learn's shapes from the weights ``W`` (D × C) of
    centred features: one target (a 1-D y, two classes) gives 1-D coefficients; the
    intercept ``ȳ − μᵀW`` is a float for a 1-D regression target, else an array."""
    intercept = y_mean - mu @ W
    coef = (W[:, 0] if W.shape[1] == 1 else W.T).astype(out_dtype)
    intercept = (float(intercept[0]) if task == "regression" and y_ndim == 1
                 else intercept.astype(out_dtype))
    return coef, intercept


def ridge_alpha_path(Z: Any, y: Any, *, alphas: Any = None, task: str = "regression",
                     cv: str | int = "loo", random_state: Any = None,
                     score_rows: Any = None) -> AlphaPath:
    r"""Score ridge at every α from one decomposition of the features; fit the best.

    Parameters
    ----------
    Z : {array-like, sparse matrix} of shape (n_samples, n_features)
        Features (e.g. a feature map's output). Computed in float64; sparse input is
        densified.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Real targets (regression) or class labels (classification, 1-D).
    alphas : array-like of positive floats, default=None
        The α to score (sorted, repeats dropped); ``None``: :data:`DEFAULT_ALPHAS`.
    task : {"regression", "classification"}, default="regression"
        Regression is scored by R² and fitted as :class:`~sklearn.linear_model.Ridge`;
        classification by accuracy, as :class:`~sklearn.linear_model.RidgeClassifier`
        (ridge on ±1 class codes).
    cv : "loo" or int, default="loo"
        ``"loo"``: exact leave-one-out (closed form, one pass). An int ``k >= 2``: k shuffled
        folds (stratified for classification when every class has ``k`` rows), the mean
        fold score, from the full Gram matrix minus each fold's.
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds (``cv`` an int only).
    score_rows : array-like of int or bool, or None, default=None
        The rows whose held-out predictions are scored (indices or a mask); every row is
        still fitted on. ``None``: all. For features that depend on some rows — Nyström's
        landmarks — scoring only the other rows makes the validation honest: their
        features do not depend on themselves, as a new point's do not.

    Returns
    -------
    AlphaPath
        Scores and errors per α, the chosen α and the linear model at it (fitted on all
        rows): :meth:`AlphaPath.estimator`.

    Notes
    -----
    Cost: one ``D × D`` Gram matrix (:math:`nD^2` flops, one ``syrk``), its
    eigendecomposition (about :math:`9D^3`), the projections :math:`Z_c V`
    (:math:`2nD^2`), and :math:`2D(C + 1)` flops per scored row and α for :math:`C`
    outputs — one matrix product per block of rows serving every α (when :math:`n < D`,
    the same with ``n`` and ``D`` swapped). With the default 37 α the last term is
    :math:`74(C+1)nD`: for 26 classes at D = 1,000 it equals the projections (measured on
    one thread, 15,000 × 1,000: 3.1 s for the path, 1.0 s per :math:`2nD^2` product). A
    single ``Ridge.fit`` costs about :math:`2nD^2 + D^3/3`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.tuning import ridge_alpha_path
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(100, 30))             # 30 features, 2 of them useful
    >>> y = Z[:, 0] - 2 * Z[:, 1] + rng.normal(size=100)
    >>> path = ridge_alpha_path(Z, y, alphas=[1e-2, 10.0, 1e4])
    >>> path.scores.round(3)                       # leave-one-out R² of each alpha
    array([ 0.677,  0.689, -0.006])
    >>> path.alpha
    10.0
    >>> path.estimator().predict(Z[:2]).round(2)   # Ridge(alpha=10.0) fitted on all rows
    array([ 1.17, -0.47])
    """
    check_task(task)
    cv = check_cv(cv)
    alphas = check_alphas(alphas, DEFAULT_ALPHAS)
    Z = check_array(Z, accept_sparse="csr", dtype=(np.float64, np.float32), input_name="Z")
    out_dtype = Z.dtype
    Z = np.asarray(Z.toarray() if sp.issparse(Z) else Z, dtype=np.float64)
    n, D = Z.shape
    if n < 2:
        raise ValueError(f"Z has {n} row; scoring α needs at least 2.")
    Y, classes = encode_targets(y, n, task)
    labels = np.asarray(y) if task == "classification" else None
    scored = _scored_rows(score_rows, n)

    mu = Z.mean(axis=0)
    Zc = Z - mu
    y_mean = Y.mean(axis=0)
    Yc = Y - y_mean
    if cv == "loo":
        scores, errors, (lam, V, coeffs) = _loo(Zc, Yc, y_mean, Y, alphas, task, classes,
                                                labels, scored)
    else:
        scores, errors = _kfold(Z, Y, alphas, int(cv), task, classes, labels, random_state,
                                scored)
        lam, V = _spectrum(Zc)
        coeffs = (Zc @ V).T @ Yc
    best = best_index(alphas, scores, errors, task, int(scored.sum()))
    W = V @ (coeffs / (lam + alphas[best])[:, None])          # D × C
    coef, intercept = linear_model_arrays(W, y_mean, mu, task, np.ndim(y), out_dtype)
    return AlphaPath(alphas=alphas, scores=scores, errors=errors, best_index=best, task=task,
                     cv=cv, coef=coef, intercept=intercept,
                     classes=classes, n_features=D)
