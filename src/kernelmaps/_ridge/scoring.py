r"""Scoring ridge predictions, and the one rule that orders candidates, written once.

* :func:`row_losses`: per held-out row, 1 for a wrong class (accuracy = 1 − mean) or the
  squared residual (R² = 1 − sum / total sum of squares) — what the α paths score and what
  ``compare``'s paired standard errors read;
* :func:`path_scores`: the score (accuracy or R², as scikit-learn's ``score``) and the mean
  squared error of the codes, per α, of predictions ``(n, n_outputs, n_alphas)`` — from
  :func:`path_sums` (sums over rows, which blocks of rows add up) and
  :func:`scores_from_sums`;
* :func:`difference_se`: the standard error of a score difference of two models on the same
  rows, from their paired losses (compare's "beyond the test split's noise", tune's
  "rising beyond its noise");
* :func:`ranking_score` and :func:`best_index`: **the tie rule**. Candidates are ordered by
  score; among equal scores the smaller squared error of the predictions (of the ±1 class
  codes for classification) wins; among those, the larger α (stabler). Accuracy moves in
  steps of ``1/n_rows``, so the squared error enters as a penalty below half a step,
  :math:`s - \tfrac{1}{2 n}\,e/(1 + e)`: one number that orders exactly as (score, then
  error). :func:`best_index` picks α on a path by it, and ``tune`` compares configurations
  by it (:func:`ranking_score` of each configuration's chosen α).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelmaps._ridge.labels import labels_from_scores

__all__ = ["best_index", "difference_se", "path_scores", "path_sums", "ranking_score",
           "row_losses", "scores_from_sums"]


def row_losses(y_true: Any, predicted: Any, task: str) -> np.ndarray:
    """Per row: 1 for a wrong class, else 0 (accuracy = 1 − mean), or the squared residual
    (R² = 1 − sum / total sum of squares). ``predicted`` may carry trailing axes (one per
    α): the losses then have them too."""
    y_true = np.asarray(y_true)
    predicted = np.asarray(predicted)
    extra = (slice(None),) + (None,) * (predicted.ndim - y_true.ndim)
    if task == "classification":
        return (predicted != y_true[extra]).astype(np.float64)
    if predicted.ndim == 1 and predicted.shape != y_true.shape:
        predicted = predicted.reshape(y_true.shape)
    return (predicted.astype(np.float64) - y_true.astype(np.float64)[extra]) ** 2


def path_sums(Y: np.ndarray, predicted: np.ndarray, task: str, classes: np.ndarray | None,
              y_labels: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sums over the rows of predictions ``(n, C, A)`` of targets ``Y`` (``(n, C)``: real
    targets or ±1 codes; ``y_labels`` the labels for classification): the losses — wrong
    decisions per α (classification), squared residuals per output and α (``C × A``,
    regression) — and the squared residual per α over rows and outputs. Sums of row blocks
    add up to the sums of all rows (:func:`scores_from_sums` finishes them): a path can
    score its rows a block at a time."""
    squared = predicted - Y[:, :, None]
    np.square(squared, out=squared)
    errors = squared.sum(axis=(0, 1))
    if task == "classification":
        decided = labels_from_scores(classes, predicted, axis=1)         # n × A
        return row_losses(y_labels, decided, task).sum(axis=0), errors
    return squared.sum(axis=0), errors


def scores_from_sums(losses: np.ndarray, errors: np.ndarray, Y: np.ndarray,
                     task: str) -> tuple[np.ndarray, np.ndarray]:
    """Score (accuracy or R², as scikit-learn's ``score``) and mean squared error per α from
    :func:`path_sums`' sums over all the rows of ``Y``. A wrong decision counts 1, so the
    accuracy from sums of blocks is the same number as from all rows at once."""
    n, n_outputs = Y.shape
    errors = errors / (n * n_outputs)
    if task == "classification":
        return 1.0 - losses / n, errors
    total = np.sum((Y - Y.mean(axis=0)) ** 2, axis=0)                      # C
    # R² per output (an output without variance scores 1 when fitted exactly, as sklearn's
    # r2_score does with force_finite), averaged uniformly like sklearn's score.
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(total[:, None] > 0, 1.0 - losses / total[:, None],
                      np.where(losses == 0, 1.0, 0.0))
    return r2.mean(axis=0), errors


def path_scores(Y: np.ndarray, predicted: np.ndarray, task: str, classes: np.ndarray | None,
                y_labels: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Score and mean squared error per α of predictions ``(n, C, A)`` of targets ``Y``
    (``(n, C)``: real targets or ±1 codes; ``y_labels`` the labels for classification)."""
    return scores_from_sums(*path_sums(Y, predicted, task, classes, y_labels), Y, task)


def ranking_score(scores: Any, errors: Any, task: str, n_rows: int) -> np.ndarray | float:
    """The score candidates are ranked by (higher is better): the score, less — for
    classification, whose accuracy moves in steps of ``1/n_rows`` — the squared error as a
    penalty below half a step, so equal accuracies are ordered by the error. Regression:
    the score (R² and the squared error order rows scored on the same rows alike)."""
    scores = np.asarray(scores, dtype=np.float64)
    if task != "classification":
        ranked = scores
    else:
        errors = np.asarray(errors, dtype=np.float64)
        ranked = scores - 0.5 / max(int(n_rows), 1) * errors / (1.0 + errors)
    return float(ranked) if ranked.ndim == 0 else ranked


def best_index(alphas: np.ndarray, scores: np.ndarray, errors: np.ndarray, task: str,
               n_rows: int) -> int:
    """The chosen α's index by :func:`ranking_score`; among equals the largest α."""
    ranked = np.round(ranking_score(scores, errors, task, n_rows), 12)
    return int(np.lexsort((-alphas, -ranked))[0])


def difference_se(losses: np.ndarray, reference: np.ndarray, y_true: Any,
                  task: str) -> float:
    r"""Standard error of (score − reference score) on the same test rows.

    Accuracy: the difference is :math:`\bar d` with :math:`d_i = \ell^\text{ref}_i -
    \ell_i`; R²: it is :math:`\sum_i d_i / \sum_i (y_i - \bar y)^2`. Either way the standard
    error is that of a mean of the paired :math:`d_i`, scaled. NaN with fewer than 2 rows.
    """
    d = np.asarray(reference, dtype=np.float64) - np.asarray(losses, dtype=np.float64)
    n = d.size
    if n < 2:
        return float("nan")
    se = float(np.std(d, ddof=1) / np.sqrt(n))
    if task == "classification":
        return se
    y = np.asarray(y_true, dtype=np.float64)
    total = float(np.sum((y - y.mean()) ** 2))
    return se * n / total if total > 0 else float("nan")
