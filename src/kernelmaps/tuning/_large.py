r"""``tune`` beyond its search sample: D judged, and the model fitted, on all rows.

On a search sample of a few thousand rows a larger D gains less than it will on all rows: the
sample's rows, not D, limit the fit (Fashion-MNIST, 60,000 rows: on 5,000 rows Nyström's
1,024 → 2,048 gained 0.47 %, and the search stopped at 1,024, test accuracy 0.861; D = 4,096
on all rows reaches 0.885). So when the data have more rows than the search sample:

* on the sample, D grows only while the sample has :data:`ROWS_PER_COMPONENT` rows per
  component (5,000 rows: up to D = 512), where a doubling's gain there says something about
  its gain on all rows;
* then D keeps doubling **on all rows**: each D's features are computed block by block and
  reduced to ridge's sums (:class:`~kernelmaps._ridge.FeatureSums`, memory ``D²`` floats, not
  ``n × D``), and α is chosen on :data:`HOLDOUT_ROWS` held-out rows
  (:func:`~kernelmaps._ridge.holdout_alpha_path`: one Cholesky factorisation per α tried);
* a doubling is kept while its gain on the held-out rows is at least ``target`` (relative) **or**
  more than :data:`NOISE_SE` paired standard errors of the difference (the same held-out rows
  scored by both D: the noise of the gain itself). So the growth cannot stop while the curve
  still rises by more than its noise; it stops there, at ``max_components``, or where the
  next D would not fit the time or memory budget (the cost model, :mod:`kernelmaps._cost`);
* the last D kept is the final model (already fitted on all rows: no refit).

Held-out rows that are landmarks of a map are not scored for it (their features are exact,
unlike a new point's, :func:`~kernelmaps._ridge.honest_rows`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from kernelmaps import _cost
from kernelmaps._ridge import (
    FeatureSums,
    HoldoutPath,
    difference_se,
    encode_targets,
    holdout_alpha_path,
)
from kernelmaps.evaluate import METHODS
from kernelmaps.tuning.result import Trial

__all__ = ["HOLDOUT_ROWS", "NOISE_SE", "ROWS_PER_COMPONENT", "all_rows_memory",
           "all_rows_seconds",
           "fit_on_all_rows", "sample_components"]

#: Rows held out (at most a quarter of the rows) to choose α and judge a doubling on all rows:
#: the paired standard error of an accuracy gain is then about √(discordant share / 10,000),
#: ≈ 0.002 when 5 % of the rows change class.
HOLDOUT_ROWS = 10_000
#: A doubling counts as a rise while its gain exceeds this many paired standard errors.
NOISE_SE = 2.0
#: On the search sample, D grows only while the sample has this many rows per component.
ROWS_PER_COMPONENT = 8
#: Rows per block when all rows' features are streamed.
BLOCK_ROWS = 2048


def sample_components(search_rows: int, top: int, start: int) -> int:
    """The largest D the search sample judges: ``search_rows / ROWS_PER_COMPONENT``, at least
    the starting D, at most ``top``."""
    return min(top, max(start, search_rows // ROWS_PER_COMPONENT))


def all_rows_memory(n_held: int, n_components: int, n_features: int) -> float:
    """Bytes of one all-rows fit beyond the data (the cost model's
    :func:`~kernelmaps._cost.streamed_ridge_memory` with :data:`BLOCK_ROWS`)."""
    return _cost.streamed_ridge_memory(n_held, n_components, n_features, BLOCK_ROWS)


def _held_rows(n: int, seed: int) -> np.ndarray:
    size = min(HOLDOUT_ROWS, n // 4)
    # Not RandomState(seed): its first draws are the permutation Nyström's landmarks come
    # from with the same seed, so the held-out rows would all be landmarks.
    return np.sort(np.random.default_rng([seed, 1]).choice(n, size=size, replace=False))


class _Fit:
    """One D fitted on all rows: the map, the held-out path and the rows it scored."""

    def __init__(self, feature_map: Any, holdout: HoldoutPath, scored: np.ndarray,
                 n_out: int) -> None:
        self.map, self.holdout, self.scored, self.n_out = feature_map, holdout, scored, n_out

    @property
    def score(self) -> float:
        return self.holdout.path.score


def _fit(search: Any, value: float, n_components: int, held: np.ndarray,
         start_alpha: float) -> _Fit:
    """The map at (``value``, ``n_components``) fitted on all rows, ridge's sums over all
    rows' features, α chosen on the held-out rows that are not landmarks."""
    started = time.perf_counter()
    X, y, n = search.X, search.y, search.X.shape[0]
    feature_map = search.build(value, n_components).fit(X)
    Y, classes = encode_targets(y, n, search.task)
    landmarks = getattr(feature_map, "component_indices_", None)
    scored = held if landmarks is None else held[~np.isin(held, landmarks)]
    columns = _kernel_columns(feature_map)
    sums: FeatureSums | None = None
    Z_held = None
    for begin in range(0, n, BLOCK_ROWS):
        end = min(begin + BLOCK_ROWS, n)
        Z = np.asarray(feature_map.transform(X[begin:end]) if columns is None
                       else columns[0].evaluate(X[begin:end], columns[1]), dtype=np.float64)
        if sums is None:
            sums = FeatureSums(Z.shape[1], Y.shape[1])
            Z_held = np.empty((scored.size, Z.shape[1]))
        sums.add(Z, Y[begin:end])
        inside = (scored >= begin) & (scored < end)
        Z_held[inside] = Z[scored[inside] - begin]
    assert sums is not None and Z_held is not None
    if columns is not None:  # kernel columns summed: Nyström's features are C Nᵀ
        N = np.asarray(columns[2], dtype=np.float64)
        sums, Z_held = sums.projected(N), Z_held @ N.T
    labels = y[scored] if search.task == "classification" else None
    holdout = holdout_alpha_path(sums, Z_held, Y[scored], labels, alphas=search.alphas,
                                 start=start_alpha, task=search.task, classes=classes,
                                 y_ndim=np.ndim(y))
    seconds = time.perf_counter() - started
    path = holdout.path
    search.record(Trial(stage="final", gamma=value, n_components=n_components,
                        n_features_out=sums.n_features, n_rows=n, alpha=path.alpha,
                        score=path.score, time_s=seconds,
                        estimated_s=all_rows_seconds(n, X.shape[1], n_components,
                                                     search.n_targets,
                                                     METHODS[search.method].landmarks)))
    return _Fit(feature_map, holdout, scored, sums.n_features)


def _kernel_columns(feature_map: Any) -> tuple[Any, Any, np.ndarray] | None:
    r"""``(kernel, landmarks, N)`` when the map's features are ``k(X, landmarks) Nᵀ`` (a
    Nyström map on points: ``kernel_``, ``components_``, ``normalization_``), else None.

    Summing the kernel columns ``C`` and projecting the sums once
    (:meth:`~kernelmaps._ridge.FeatureSums.projected`: :math:`N (C^\top C) N^\top`) saves
    the ``2 n D²`` flops of the product ``C Nᵀ`` per row: at n = 60,000, D = 4,096, 2 of the
    3.5 Tflop an all-rows fit would cost."""
    kernel = getattr(feature_map, "kernel_", None)
    points = getattr(feature_map, "components_", None)
    N = getattr(feature_map, "normalization_", None)
    if kernel is None or N is None or not isinstance(points, np.ndarray) or getattr(
            feature_map, "kernel", None) == "precomputed" or not hasattr(kernel, "evaluate"):
        return None
    return kernel, points, N


def _gain(before: _Fit, after: _Fit, y: np.ndarray, task: str) -> tuple[float, float]:
    """``(gain, its paired standard error)`` on the held-out rows scored for both."""
    common, i, j = np.intersect1d(before.scored, after.scored, return_indices=True)
    se = difference_se(after.holdout.losses[j], before.holdout.losses[i], y[common], task)
    return after.score - before.score, se


def all_rows_seconds(n_rows: int, n_features: int, n_components: int, n_targets: int,
                     landmarks: bool, clock: str = "wall") -> float:
    """The cost model's seconds for one all-rows fit (:func:`_fit`): its arithmetic,
    :func:`~kernelmaps._cost.streamed_ridge_flops` with this module's held-out rows, at the
    probe's ``clock`` rate, and the fixed cost of a map and ridge
    (:data:`~kernelmaps._cost.RUN_OVERHEAD_S`)."""
    held = min(HOLDOUT_ROWS, n_rows // 4)
    flops = _cost.streamed_ridge_flops(n_rows, n_features, n_components, n_targets, held,
                                       landmarks=landmarks)
    return _cost.seconds(flops, threads=None, clock=clock) + _cost.RUN_OVERHEAD_S


def _seconds(search: Any, n_components: int) -> float:
    """:func:`all_rows_seconds` for ``search``'s data, at the rate measured so far."""
    n, d = search.X.shape
    return search.slowdown * all_rows_seconds(n, d, n_components, search.n_targets,
                                              METHODS[search.method].landmarks)


def _fits_budgets(search: Any, n_components: int, held: int) -> str | None:
    """None, or the budget (``"time budget"``, ``"memory budget"``) the fit would exceed."""
    memory = all_rows_memory(held, n_components, search.X.shape[1])
    if search.memory_budget is not None and memory > search.memory_budget:
        return "memory budget"
    if search.budget is not None and (
            search.elapsed() + 1.25 * _seconds(search, n_components) > search.budget):
        return "time budget"
    return None


def fit_on_all_rows(search: Any, value: float, d_start: int, top: int, target: float | None,
                    start_alpha: float, notes: list[str]) -> tuple[Any, Any, int, str | None]:
    """``(map, α path, D, why the growth stopped or None)`` on all rows, from ``d_start``;
    D doubles while a doubling gains at least ``target`` (relative) or more than
    :data:`NOISE_SE` paired standard errors (``target=None``: D fixed)."""
    held = _held_rows(search.X.shape[0], search.seed)
    if (why := _fits_budgets(search, d_start, held.size)) is not None:
        return None, None, d_start, why
    best = _fit(search, value, d_start, held, start_alpha)
    stopped: str | None = None if target is None else "max_components"
    rising = ""
    while target is not None and 2 * d_start <= top:
        d = 2 * d_start
        if (why := _fits_budgets(search, d, held.size)) is not None:
            stopped = why
            break
        candidate = _fit(search, value, d, held, best.holdout.path.alpha)
        gain, se = _gain(best, candidate, search.y, search.task)
        tolerance = min(target * max(abs(candidate.score), 1e-12),
                        NOISE_SE * se if math.isfinite(se) else math.inf)
        if gain < tolerance:
            stopped = "converged"
            break
        best, d_start = candidate, d
        rising = (f"the score on {held.size} held-out rows still rose by {gain:+.4f} "
                  f"(± {se:.4f}, paired standard error) at the last doubling")
    if stopped in ("max_components", "time budget", "memory budget") and rising:
        notes.append(f"D stopped at {d_start} ({stopped}) while {rising}; a larger D may "
                     "score higher. For many rows, kernel ridge on Nyström centres (FALKON) "
                     "takes more centres in less memory than a feature map: "
                     f"KernelRidge{'Classifier' if search.task == 'classification' else ''}"
                     f"(alpha={best.holdout.path.alpha:g}, kernel={search.kernel.name!r}, "
                     f"{search.scale}={value:.6g}, solver='nystrom', "
                     f"n_components={2 * d_start}) — the same α: ridge on Nyström features "
                     "is kernel ridge on their centres.")
    return best.map, best.holdout.path, d_start, stopped
