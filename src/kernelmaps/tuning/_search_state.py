r"""The state of one :func:`~kernelmaps.tune` call — data, budget, the configurations scored
so far — and its 1-D search of the kernel's scale in :math:`\log_2` (a bracket, then Brent's
bounded method)."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.base import clone

from kernelmaps import _cost
from kernelmaps._ridge import AlphaPath, honest_rows, ranking_score, ridge_alpha_path
from kernelmaps.evaluate import METHODS
from kernelmaps.kernels import DegenerateKernelWarning, Kernel
from kernelmaps.tuning.result import Trial

__all__ = ["MAX_OCTAVES", "OCTAVES", "Search", "config_key", "plateau_middle"]

#: Default half-width of the γ search, in factors of 2 either side of the median heuristic;
#: a best γ on the edge widens it, up to :data:`MAX_OCTAVES`.
OCTAVES = 3.0
MAX_OCTAVES = 8.0
#: Step of the bracketing phase and resolution of Brent's refinement, in octaves (log₂ γ).
_STEP = 1.0
_RESOLUTION = 0.2
#: Brent evaluations at most per refinement.
_MAX_REFINE = 6
#: Measured times are multiplied by this margin before a budget decision.
_BUDGET_MARGIN = 1.25


class Search:
    """The state of one :func:`tune` call: data, budget, evaluations so far."""

    def __init__(self, X: Any, y: np.ndarray, *, kernel: Kernel, scale: str, method: str,
                 task: str, cv: str | int, alphas: np.ndarray, seed: int, rows: np.ndarray,
                 budget: float | None, progress: Callable[[Trial, float], None] | None,
                 expected_steps: int) -> None:
        self.X, self.y, self.kernel, self.scale = X, y, kernel, scale
        self.method, self.task, self.cv, self.alphas, self.seed = method, task, cv, alphas, seed
        self.rows = rows
        self.X_search, self.y_search = X[rows], y[rows]  # the subsample, copied once
        self.budget = budget
        self.progress = progress
        self.expected_steps = expected_steps
        self.start = time.perf_counter()
        self.trials: list[Trial] = []
        #: (log₂ scale, D) → objective of every configuration scored on the search rows.
        self.cache: dict[tuple[float, int], float] = {}
        #: The best configuration so far: its key, fitted map and α path (reused as the
        #: final model when the search ran on all rows).
        self.best: tuple[tuple[float, int], Any, AlphaPath] | None = None
        #: Measured seconds / the cost model's seconds (the largest seen; 1 before any).
        self.slowdown = 1.0
        self.measured = 0
        self.n_targets = np.unique(y).size if task == "classification" else 1
        #: D → the number of rows scored (the rows that are not landmarks).
        self.scored_rows: dict[int, int] = {}

    # -- one configuration -------------------------------------------------------------
    def kernel_at(self, value: float) -> Kernel:
        params = {self.scale: value}
        if "sigma" in self.kernel.get_params():
            params["sigma"] = None  # rbf's other parametrisation of the same scale
        return clone(self.kernel).set_params(**params)

    def build(self, value: float, n_components: int) -> Any:
        return METHODS[self.method].build(self.kernel_at(value), n_components, self.seed,
                                          self.X.shape[1])

    def model_seconds(self, n_rows: int, n_components: int) -> float:
        """One evaluation by the cost model (:mod:`kernelmaps._cost`): the map's transform
        of ``n_rows`` rows to D = ``n_components`` features and ridge's α path on them (the
        Gram matrix and one eigendecomposition), at the measured rate."""
        d = self.X.shape[1]
        flops = (_cost.feature_map_flops(n_rows, d, n_components)
                 + _cost.feature_ridge_flops(n_rows, n_components, self.n_targets, True))
        return _cost.seconds(flops, threads=None)

    def predicted_seconds(self, n_rows: int, n_components: int) -> float:
        """The cost model's seconds, scaled by the largest ratio of a measured evaluation
        to its model seconds seen so far (:meth:`learn_cost`), and by a safety margin."""
        return _BUDGET_MARGIN * self.slowdown * self.model_seconds(n_rows, n_components)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def affordable(self, n_components: int, final_components: int | None = None) -> bool:
        """Whether one more search evaluation at ``n_components`` and then the final fit
        (at ``final_components``, default the same) fit in the budget."""
        if self.budget is None:
            return True
        final = n_components if final_components is None else final_components
        needed = (self.predicted_seconds(self.rows.size, n_components)
                  + self.predicted_seconds(self.y.size, final))
        return self.elapsed() + needed <= self.budget

    def objective(self, path: AlphaPath) -> float:
        """The score at the path's α, ranked by the ridge core's one tie rule
        (:func:`~kernelmaps._ridge.scoring.ranking_score`: equal accuracies ordered by the
        squared error of the class codes), as the path chose its α."""
        best = path.best_index
        return ranking_score(path.scores[best], path.errors[best], self.task, self.rows.size)

    def evaluate(self, log2_value: float, n_components: int, stage: str) -> float:
        key = config_key(log2_value, n_components)
        if key in self.cache:
            return self.cache[key]
        value = float(2.0**key[0])  # the value the cache and the final model use
        started = time.perf_counter()
        X, y = self.X_search, self.y_search
        feature_map = self.build(value, n_components)
        with warnings.catch_warnings():
            # Exploring γ visits widths that are too narrow or too wide on purpose: they
            # score badly and lose; a warning for each would only be noise.
            warnings.simplefilter("ignore", DegenerateKernelWarning)
            Z = feature_map.fit_transform(X)
        scored = honest_rows(feature_map, y.size)
        self.scored_rows[n_components] = y.size if scored is None else int(scored.sum())
        path = ridge_alpha_path(Z, y, alphas=self.alphas, task=self.task, cv=self.cv,
                                random_state=self.seed, score_rows=scored)
        seconds = time.perf_counter() - started
        self.learn_cost(seconds, X.shape[0], Z.shape[1])
        trial = Trial(stage=stage, gamma=value, n_components=n_components,
                      n_features_out=Z.shape[1], n_rows=X.shape[0], alpha=path.alpha,
                      score=path.score, time_s=seconds)
        self.record(trial)
        self.cache[key] = self.objective(path)
        if self.best is None or self.cache[key] > self.cache[self.best[0]]:
            self.best = (key, feature_map, path)
        return self.cache[key]

    def best_scored(self) -> tuple[tuple[float, int], Any, AlphaPath]:
        """``((log₂ scale, D), map, α path)`` of the best configuration scored so far."""
        if self.best is None:
            raise RuntimeError("tune scored no configuration: search_scale scores its centre "
                               "before anything else, so a search has one from its start.")
        return self.best

    def learn_cost(self, seconds: float, n_rows: int, n_components: int) -> None:
        """Learn how far this data and this machine now are from the cost model."""
        ratio = seconds / max(self.model_seconds(n_rows, n_components), 1e-12)
        # The slowest ratio seen: a busy machine must not make the budget optimistic.
        self.slowdown = ratio if self.measured == 0 else max(ratio, self.slowdown)
        self.measured += 1

    def record(self, trial: Trial) -> None:
        self.trials.append(trial)
        if self.progress is not None:
            if self.budget is not None:
                done = self.elapsed() / self.budget
            else:
                done = len(self.trials) / max(self.expected_steps, len(self.trials) + 1)
            self.progress(trial, min(done, 0.99))

    # -- γ ------------------------------------------------------------------------------
    def search_scale(self, centre: float, low: float, high: float, n_components: int,
                     stage: str, widen: bool) -> tuple[float, str]:
        """The best log₂ scale in [low, high] (octaves), and why the search stopped."""
        def score(u: float) -> float:
            return self.evaluate(u, n_components, stage)

        def budget_left() -> bool:
            return self.affordable(n_components)

        best = centre
        points = {centre: score(centre)}
        for u in (centre - _STEP, centre + _STEP):
            if low <= u <= high:
                if not budget_left():
                    return best, "time budget"
                points[u] = score(u)
        best = max(points, key=points.get)
        # Walk downhill until the score drops (a bracket) or the bounds stop the walk.
        direction = 0.0 if best == centre else math.copysign(1.0, best - centre)
        while direction:
            u = best + direction * _STEP
            if u > high or u < low:
                if widen and abs(u - centre) <= MAX_OCTAVES:
                    low, high = min(low, u), max(high, u)
                else:
                    break
            if not budget_left():
                return best, "time budget"
            points[u] = score(u)
            if points[u] <= points[best]:
                break
            best = u
        left, right = max(low, best - _STEP), min(high, best + _STEP)
        if right - left <= _RESOLUTION:
            return best, "bounds"
        def objective(u: float) -> float:
            if not budget_left():
                raise _OutOfTime
            return -score(float(u))

        try:
            minimize_scalar(objective, bounds=(left, right), method="bounded",
                            options={"xatol": _RESOLUTION, "maxiter": _MAX_REFINE})
        except _OutOfTime:
            return self.best_scale(n_components, best), "time budget"
        return self.best_scale(n_components, best), "converged"

    def best_scale(self, n_components: int, default: float) -> float:
        """The log₂ scale to keep at ``n_components``: the best one scored, or, when several
        neighbours tie with it, the one nearest the middle of that plateau.

        Accuracy on n rows moves in steps of 1/n, so a broad optimum shows up as a run of
        near-equal scores, and the best of them is as likely to sit at the run's edge — next
        to where the score falls off — as in its middle. Ties are scores within half a
        standard error of the best, ½·√(p(1−p)/n) (regression: exact
        ties only). On digits (D = 300) the edge of such a run cost 0.7 % test accuracy.
        """
        scored = sorted((u, s) for (u, d), s in self.cache.items() if d == n_components)
        if not scored:
            return default
        tie = 0.0
        if self.task == "classification":
            p = min(max(max(s for _, s in scored), 0.0), 1.0)
            tie = 0.5 * math.sqrt(p * (1.0 - p) / self.scored_rows.get(n_components, 1))
        return plateau_middle([u for u, _ in scored], [s for _, s in scored], tie)


def plateau_middle(scales: list[float], values: list[float], tie: float) -> float:
    """Of the run of neighbouring ``scales`` (sorted) whose values are within ``tie`` of the
    best, the one nearest the run's middle."""
    best = int(np.argmax(values))
    top = values[best]
    low = high = best
    while low > 0 and values[low - 1] >= top - tie:
        low -= 1
    while high < len(values) - 1 and values[high + 1] >= top - tie:
        high += 1
    middle = 0.5 * (scales[low] + scales[high])
    return min(scales[low:high + 1], key=lambda u: abs(u - middle))


def config_key(log2_value: float, n_components: int) -> tuple[float, int]:
    return round(float(log2_value), 9), int(n_components)


class _OutOfTime(Exception):
    """Raised inside Brent's objective to stop it when the budget would be exceeded."""

