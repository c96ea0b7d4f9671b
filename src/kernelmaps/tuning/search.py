r"""``tune``: the kernel's scale, ridge's α and the output dimension D, chosen from the data.

What is searched and how (docs/tuning.md has the costs and when to prefer ``GridSearchCV``):

α — closed form, never searched
    For one feature matrix :math:`Z`, every α of the grid is scored by exact leave-one-out
    (or k folds) from one eigendecomposition: :func:`~kernelmaps.tuning.ridge_alpha_path`.
γ (or the kernel's scale parameter) — a 1-D search in :math:`\log_2` scale
    Centred on the median heuristic (:func:`~kernelmaps.evaluate.median_heuristic`): first a
    bracket (the heuristic and one step either side, then steps downhill until the score
    drops or the bounds stop it), then Brent's bounded method
    (:func:`scipy.optimize.minimize_scalar`) inside the bracket. Each point is one feature
    matrix of a subsample of rows (``search_rows``) and one α path. Every point uses the
    same random seed for the map (common random numbers: the same landmarks or frequencies
    for every γ), so differences in score are differences of γ, not of the draw.
D — doubling (``n_components="auto"``)
    From :data:`START_COMPONENTS` at the best γ, D doubles while a doubling improves the
    validation score by more than ``target`` (relative). The improvement per doubling is
    extrapolated on a log-log line, the trend :func:`~kernelmaps.evaluate.advise` fits to
    score gaps: when the line says the next doubling would gain less than ``target``, the
    growth stops one doubling early. γ is then refined around its value at the final D.
    With more rows than the search sample, D grows on the sample only while it has
    8 rows per component, then on all rows (``docs/tuning.md``, *Large data*).
Final model
    Where the search ran on all rows: the map at (γ, D) and the α path on its features.
    Beyond the search sample: D judged on all rows — features streamed in row blocks into
    ridge's sums, α chosen on held-out rows, a doubling kept while it gains at least
    ``target`` or more than twice its paired standard error, within the time and memory
    budgets — and the last D kept is the model.

Every configuration tried is a :class:`Trial` of the result's ``table``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from kernelmaps import _cost
from kernelmaps._config import available_memory
from kernelmaps._ridge import (
    DEFAULT_ALPHAS,
    AlphaPath,
    check_target,
    honest_rows,
    ranking_score,
    ridge_alpha_path,
)
from kernelmaps.evaluate import (
    METHODS,
    choose_scale,
    main_kernel,
    make_scaler,
    task_of,
)
from kernelmaps.kernels import DegenerateKernelWarning, Kernel
from kernelmaps.tuning._checks import (
    check_alphas,
    check_bounds,
    check_cv,
    check_int,
    check_kernel,
    check_method,
    check_real,
)
from kernelmaps.tuning._curves import next_gain, plateau_middle
from kernelmaps.tuning._large import fit_on_all_rows, sample_components
from kernelmaps.tuning.result import Trial, TuneResult

__all__ = ["START_COMPONENTS", "min_rows", "tune"]

#: First D of the doubling (``n_components="auto"``).
START_COMPONENTS = 128
#: Default half-width of the γ search, in factors of 2 either side of the median heuristic;
#: a best γ on the edge widens it, up to :data:`_MAX_OCTAVES`.
_OCTAVES = 3.0
_MAX_OCTAVES = 8.0
#: Step of the bracketing phase and resolution of Brent's refinement, in octaves (log₂ γ).
_STEP = 1.0
_RESOLUTION = 0.2
#: The step either side of the best γ at the final D, in octaves.
_REFINE_STEP = 0.5
#: Brent evaluations at most per refinement.
_MAX_REFINE = 6
#: Measured times are multiplied by this margin before a budget decision.
_BUDGET_MARGIN = 1.25


# =========================================================================== the search
class _Search:
    """The state of one :func:`tune` call: data, budget, evaluations so far."""

    def __init__(self, X: Any, y: np.ndarray, *, kernel: Kernel, scale: str, method: str,
                 task: str, cv: str | int, alphas: np.ndarray, seed: int, rows: np.ndarray,
                 budget: float | None, progress: Callable[[Trial, float], None] | None,
                 expected_steps: int, memory_budget: float | None = None) -> None:
        self.X, self.y, self.kernel, self.scale = X, y, kernel, scale
        self.method, self.task, self.cv, self.alphas, self.seed = method, task, cv, alphas, seed
        self.rows = rows
        self.X_search, self.y_search = X[rows], y[rows]  # the subsample, copied once
        self.budget = budget
        #: Bytes one evaluation may hold beyond the data (None: no limit).
        self.memory_budget = memory_budget
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
        """One evaluation by the cost model (:func:`kernelmaps._cost.map_ridge_flops`): the
        map's fit and transform of ``n_rows`` rows to D = ``n_components`` features and
        ridge's α path on them, at the measured rate, and the fixed costs of a map and ridge
        (:data:`kernelmaps._cost.RUN_OVERHEAD_S`) and of the path
        (:func:`kernelmaps._cost.alpha_path_fixed_seconds`)."""
        flops = _cost.map_ridge_flops(n_rows, self.X.shape[1], n_components, self.n_targets,
                                      landmarks=METHODS[self.method].landmarks,
                                      n_alphas=self.alphas.size)
        return (_cost.seconds(flops, threads=None) + _cost.RUN_OVERHEAD_S
                + _cost.alpha_path_fixed_seconds(n_rows, self.n_targets, self.alphas.size))

    def predicted_seconds(self, n_rows: int, n_components: int) -> float:
        """The cost model's seconds, scaled by the largest ratio of a measured evaluation
        to its model seconds seen so far (:meth:`learn_cost`), and by a safety margin."""
        return _BUDGET_MARGIN * self.slowdown * self.model_seconds(n_rows, n_components)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def affordable(self, n_components: int, final_components: int | None = None) -> bool:
        """Whether one more search evaluation at ``n_components`` and then the final fit
        (at ``final_components``, default the same) fit in the budget."""
        if not self.fits_memory(n_components):
            return False
        if self.budget is None:
            return True
        final = n_components if final_components is None else final_components
        needed = (self.predicted_seconds(self.rows.size, n_components)
                  + self.predicted_seconds(self.y.size, final))
        return self.elapsed() + needed <= self.budget

    def fits_memory(self, n_components: int) -> bool:
        """Whether one evaluation on the search rows at D = ``n_components`` fits the memory
        budget (:func:`kernelmaps._cost.feature_path_memory`)."""
        return self.memory_budget is None or _cost.feature_path_memory(
            self.rows.size, n_components, self.n_targets) <= self.memory_budget

    def objective(self, path: AlphaPath) -> float:
        """The score at the path's α, ranked by the ridge core's one tie rule
        (:func:`~kernelmaps._ridge.scoring.ranking_score`: equal accuracies ordered by the
        squared error of the class codes), as the path chose its α."""
        best = path.best_index
        return ranking_score(path.scores[best], path.errors[best], self.task, self.rows.size)

    def evaluate(self, log2_value: float, n_components: int, stage: str) -> float:
        key = _key(log2_value, n_components)
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
                      score=path.score, time_s=seconds,
                      estimated_s=self.model_seconds(X.shape[0], Z.shape[1]))
        self.record(trial)
        self.cache[key] = self.objective(path)
        if self.best is None or self.cache[key] > self.cache[self.best[0]]:
            self.best = (key, feature_map, path)
        return self.cache[key]

    def best_alpha(self, log2_value: float, n_components: int) -> float:
        """The α chosen at the trial of (``log2_value``, ``n_components``), else at the last
        trial (where an all-rows fit starts its α walk)."""
        value = float(2.0 ** _key(log2_value, n_components)[0])
        for trial in reversed(self.trials):
            if trial.n_components == n_components and trial.gamma == value:
                return trial.alpha
        return self.trials[-1].alpha

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
                if widen and abs(u - centre) <= _MAX_OCTAVES:
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


def _key(log2_value: float, n_components: int) -> tuple[float, int]:
    return round(float(log2_value), 9), int(n_components)


class _OutOfTime(Exception):
    """Raised inside Brent's objective to stop it when the budget would be exceeded."""


def _max_components(method: str, n_rows: int, max_components: int) -> int:
    # Landmark maps: at most half the rows, so that half of them validate (honest_rows).
    return min(max_components, n_rows // 2) if METHODS[method].landmarks else max_components


# =========================================================================== tune
def min_rows(cv: int | str) -> int:
    """The fewest rows :func:`tune` searches on with validation ``cv``: 3 for leave-one-out
    (two rows fit, one is left out), two per fold for K folds.

    Parameters
    ----------
    cv : int or "loo"
        The validation: K folds or leave-one-out.

    Returns
    -------
    int
        The smallest number of rows.

    Examples
    --------
    >>> min_rows("loo"), min_rows(5)
    (3, 10)
    """
    return 2 * cv if isinstance(cv, int) else 3


def tune(X: Any, y: Any, *, kernel: str | Kernel = "rbf", method: str = "nystroem",
         target: float = 0.005, cv: str | int = "loo", time_budget: float | None = None,
         random_state: Any = None, n_components: int | str = "auto", alphas: Any = None,
         gamma_bounds: tuple[float, float] | None = None, task: str = "auto",
         search_rows: int = 5000, max_components: int = 4096,
         progress: Callable[[Trial, float], None] | None = None,
         scale: str = "auto", memory_budget: float | None = None) -> TuneResult:
    r"""Choose the kernel's scale γ, ridge's α and the output dimension D for a feature map.

    The model is ``Pipeline([map, Ridge])`` (``RidgeClassifier`` for class labels), the one
    :func:`~kernelmaps.evaluate.compare` fits. α is closed-form for every feature matrix
    (exact leave-one-out or k folds for a whole grid from one eigendecomposition,
    :func:`~kernelmaps.tuning.ridge_alpha_path`); γ is a 1-D search in log scale around the
    median heuristic (a bracket, then Brent's method) on a subsample of rows; D doubles
    from 128 until a doubling gains less than ``target``. See ``docs/tuning.md``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The input samples. A DataFrame's column names are kept: the returned pipeline has
        ``feature_names_in_``, and scikit-learn checks the columns on predict (a different
        order raises).
    y : array-like of shape (n_samples,)
        Class labels or real targets.
    kernel : str or Kernel, default="rbf"
        A kernel with a median heuristic for ``gamma`` (rbf, laplacian, chi2, poly, sigmoid)
        or ``length_scale`` (matern); a Kernel object's other parameters are kept.
    method : str, default="nystroem"
        A method of :data:`~kernelmaps.evaluate.METHODS` that approximates ``kernel``.
    target : float, default=0.005
        D stops growing when a doubling improves the validation score by less than this
        (relative to the score's magnitude), or when the log-log trend of the gains says the
        next doubling would. On all rows (more rows than ``search_rows``), a doubling that
        gains less than this but more than twice its paired standard error on the held-out
        rows is kept: the growth does not stop while the score still rises beyond its
        noise.
    cv : "loo" or int, default="loo"
        Validation: exact leave-one-out, or k shuffled folds (stratified for classes).
    time_budget : float or None, default=None
        Seconds for the whole call. Measured costs predict each next step and the final fit
        on all rows; the search stops when they would not fit. When even the final fit
        would not, the model fitted on the search rows is returned (``notes`` say so).
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample, the median heuristic's rows, the map (the same seed for every
        configuration) and the folds. An int makes the result reproducible.
    n_components : int or "auto", default="auto"
        A fixed D, or ``"auto"`` to grow it by doubling.
    alphas : array-like of positive floats, default=None
        The α grid (default :data:`~kernelmaps.tuning.DEFAULT_ALPHAS`, 10⁻⁶…10³).
    gamma_bounds : (float, float) or None, default=None
        Search interval of the scale parameter. ``None``: the median heuristic × 2^[−3, 3],
        widened (up to 2^±8) when the best value is on an edge — or, for a ``kernel`` with
        ``gamma="scale"`` or ``"auto"``, that value on X (after ``scale``), fixed.
    task : {"auto", "classification", "regression"}, default="auto"
        As in :func:`~kernelmaps.evaluate.compare`.
    search_rows : int, default=5000
        Rows (a random subsample) the γ search runs on, and D while the sample has 8 rows per
        component; beyond, D is judged and the model fitted on all rows, in row blocks
        (memory ``D²``, not ``n × D``), with α chosen on up to 10,000 held-out rows (the
        result's ``cv`` is then ``"holdout"``).
    max_components : int, default=4096
        Largest D of the doubling (and at most the search rows for landmark methods).
    progress : callable or None, default=None
        ``progress(trial, fraction_done)`` after each configuration (an estimate; with a
        budget, the fraction of it used).
    scale : {"auto", "none", "standard", "minmax"}, default="auto"
        Feature scaling in front of the map. ``"auto"``: standardise when the scale rule
        of :func:`~kernelmaps.evaluate.compare` advises it
        (:func:`~kernelmaps.evaluate.check_scales`: at least half of the features carry
        less than a tenth of an equal share of the variance), else none. The scaler is
        fitted on all rows of ``X`` and is the first step of the returned pipeline;
        ``TuneResult.scale`` and ``scale_reason`` say what was chosen and why.
    memory_budget : float or None, default=None
        Bytes one evaluation may hold beyond the data (the cost model's count of its
        arrays); D stops growing where the next one would not fit (``stopped`` says
        "memory budget"). ``None``: half the memory available when ``tune`` starts.

    Returns
    -------
    TuneResult
        ``estimator`` (the fitted pipeline), ``params``, ``score``, ``table`` and more.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import tune
    >>> X, y = load_digits(return_X_y=True)
    >>> result = tune(X[:600], y[:600], n_components=200, random_state=0)
    >>> sorted(result.params)
    ['alpha', 'gamma', 'kernel', 'method', 'n_components']
    >>> result.score > 0.95
    True
    >>> result.estimator.predict(X[600:605]).shape
    (5,)
    """
    started = time.perf_counter()
    scaling = scale  # `scale` names the kernel's scale parameter below
    resolved, scale = check_kernel(kernel)
    method = check_method(method, resolved)
    target = check_real("target", target, 0.0, 1.0)
    cv = check_cv(cv)
    budget = None if time_budget is None else check_real("time_budget", time_budget, 0.0)
    alphas = check_alphas(alphas, DEFAULT_ALPHAS)
    bounds = check_bounds(gamma_bounds)
    search_rows = check_int("search_rows", search_rows, 10)
    max_components = check_int("max_components", max_components, 1)
    auto = isinstance(n_components, str)
    if auto and n_components != "auto":
        raise ValueError(f"n_components must be an int >= 1 or 'auto'; got {n_components!r}.")
    fixed = None if auto else check_int("n_components", n_components, 1)
    memory_budget = (_cost.EXACT_FIT_MEMORY_FRACTION * available_memory()
                     if memory_budget is None else check_real("memory_budget", memory_budget, 0.0))
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None; got {type(progress).__name__}.")

    names = _column_names(X)
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32), input_name="X")
    X, scaler, scaling, scale_reason = _scaled(X, scaling)
    n = X.shape[0]
    y, task = _checked_target(y, n, task, cv)

    rng = check_random_state(random_state)
    # An int seeds the map itself, so the map is the one Nystroem(random_state=that int)
    # would build (the same landmarks); the other draws come from the same RandomState.
    seed = int(random_state) if isinstance(random_state, Integral) else int(
        rng.randint(np.iinfo(np.int32).max))
    rows = np.arange(n) if n <= search_rows else np.sort(
        rng.choice(n, size=search_rows, replace=False))
    # The main job's γ rule (the centre of the search), on X as the map sees it.
    heuristic = main_kernel(resolved.name, X, random_state=seed)[1].value
    if bounds is None and not resolved.is_resolved():
        # gamma="scale" or "auto" asked for: its value on X as the map sees it, taken as
        # given (as a number is through gamma_bounds), not searched.
        value = float(getattr(resolved.resolve(X), scale))
        bounds = (value, value)
    centre, low, high, widen = _scale_range(heuristic, bounds)

    # Beyond the search sample, D is judged on all rows (_large); on the sample only while
    # it has ROWS_PER_COMPONENT rows per component.
    top_all = _max_components(method, n, max_components)
    top = _max_components(method, rows.size, max_components)
    if rows.size < n:
        top = sample_components(rows.size, top, min(START_COMPONENTS, top))
    start_d = min(fixed if fixed is not None else START_COMPONENTS, top)
    if fixed is not None and METHODS[method].landmarks and fixed > rows.size:
        raise ValueError(f"n_components={fixed} exceeds the {rows.size} rows the {method} "
                         "landmarks are drawn from; use fewer components or more search_rows.")
    if fixed is not None:
        start_d = fixed
    doublings = 0 if fixed is not None else max(0, int(math.log2(max(top / start_d, 1))))
    search = _Search(X, y, kernel=resolved, scale=scale, method=method, task=task, cv=cv,
                     alphas=alphas, seed=seed, rows=rows, budget=budget, progress=progress,
                     expected_steps=10 + 2 * doublings + (rows.size < n) * max(
                         1, int(math.log2(max(top_all / start_d, 1)))),
                     memory_budget=memory_budget)
    notes: list[str] = []

    # -- γ at the starting D, then D by doubling ------------------------------------------
    u_best, stopped = search.search_scale(centre, low, high, start_d, "gamma", widen)
    d_best = start_d
    if fixed is None and stopped != "time budget":
        d_best, stopped = _grow_components(search, u_best, start_d, top, target, (low, high))
    u_best = search.best_scale(d_best, u_best)

    # -- the final model on all rows ---------------------------------------------------
    final_map, path, value, d_best, why = _final_fit(
        search, u_best, d_best, notes, top_all, None if fixed is not None else target)
    stopped = why or stopped
    if path.alpha in (alphas[0], alphas[-1]) and alphas.size > 1:
        edge = "smallest" if path.alpha == alphas[0] else "largest"
        notes.append(f"the chosen alpha={path.alpha:g} is the {edge} of the grid; a wider "
                     "alphas grid may score better.")
    estimator = Pipeline([*([("scale", scaler)] if scaler is not None else []),
                          ("map", final_map), ("model", path.estimator())])
    if names is not None:
        # What fitting the first step on the DataFrame records (the search ran on its
        # values): scikit-learn then checks the columns' names and order on predict.
        estimator.steps[0][1].feature_names_in_ = names
    params = {"method": method, "kernel": resolved.name, scale: value, "alpha": path.alpha,
              "n_components": int(d_best)}
    return TuneResult(estimator=estimator, params=params, score=path.score,
                      trials=search.trials, task=task,
                      scoring="accuracy" if task == "classification" else "r2", cv=path.cv,
                      scale_name=scale, heuristic=heuristic,
                      time_s=time.perf_counter() - started, stopped=stopped, notes=notes,
                      scale=scaling, scale_reason=scale_reason)


def _column_names(X: Any) -> np.ndarray | None:
    """The column names of a DataFrame ``X`` when they are all strings (scikit-learn's rule
    for ``feature_names_in_``), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not len(columns):
        return None
    names = np.asarray(columns, dtype=object)
    return names if all(isinstance(name, str) for name in names) else None


def _scaled(X: Any, scaling: str) -> tuple[Any, Any, str, str]:
    """``(X scaled, the scaler or None, the scaling chosen, why)``: compare's scale rule (one
    place: choose_scale), applied before the γ rule reads X."""
    scaling, scale_check = choose_scale(scaling, X)
    scaler = make_scaler(scaling, sp.issparse(X))
    if scaler is not None:
        X = scaler.fit_transform(X)
    scale_reason = ("set by the caller" if scale_check is None else
                    f"auto: {scale_check.n_drowned} of the {scale_check.n_features} features "
                    "carry less than a tenth of an equal share of the variance ("
                    + ("at least half: standardised" if scale_check.advised
                       else "fewer than half: left as they are") + ")")
    return X, scaler, scaling, scale_reason


def _checked_target(y: Any, n: int, task: str, cv: str | int) -> tuple[np.ndarray, str]:
    """``(y, task)`` checked against the ``n`` rows and the rows ``cv`` needs."""
    y = check_target(y, n, "y")
    task = task_of(y, task)
    minimum = min_rows(cv)
    if n < minimum:
        raise ValueError(f"X has {n} row{'s' * (n != 1)}; tune needs at least {minimum} with "
                         f"cv={cv!r}.")
    if task == "classification" and np.unique(y).size < 2:
        raise ValueError("y holds a single class; classification needs at least two.")
    return y, task


def _scale_range(heuristic: float, bounds: tuple[float, float] | None
                 ) -> tuple[float, float, float, bool]:
    """``(centre, low, high, widen)`` of the γ search in octaves: the heuristic ± a few
    octaves that the walk may widen, or the caller's bounds with the centre inside them."""
    centre = math.log2(heuristic)
    if bounds is None:
        return centre, centre - _OCTAVES, centre + _OCTAVES, True
    low, high = math.log2(bounds[0]), math.log2(bounds[1])
    return min(max(centre, low), high), low, high, False


def _grow_components(search: _Search, u_best: float, start_d: int, top: int, target: float,
                     bounds: tuple[float, float]) -> tuple[int, str]:
    """``(D, why the growth stopped)``: D doubled from ``start_d`` at the best γ while a
    doubling gains at least ``target`` (relative), then γ refined at the D kept."""
    dims, scores = [start_d], [search.cache[_key(u_best, start_d)]]
    stopped = "max_components"
    while 2 * dims[-1] <= top:
        d = 2 * dims[-1]
        if not search.affordable(d):
            stopped = "time budget" if search.fits_memory(d) else "memory budget"
            break
        scores.append(search.evaluate(u_best, d, "n_components"))
        dims.append(d)
        tolerance = target * max(abs(scores[-1]), 1e-12)
        # The last doubling gained too little, or the trend says the next one will
        # (a nan trend compares False: keep growing).
        if scores[-1] - scores[-2] < tolerance or next_gain(dims, scores) < tolerance:
            stopped = "converged"
            break
    # The smallest D scoring within the tolerance of the best: a larger D whose gain is
    # below the tolerance buys cost, not accuracy.
    good = max(scores) - target * max(abs(max(scores)), 1e-12)
    d_best = dims[next(i for i, s in enumerate(scores) if s >= good)]
    if d_best != start_d:
        # The best γ drifts with D (more landmarks afford a narrower kernel): one
        # half-octave step either side at the final D.
        low, high = bounds
        for u in (u_best - _REFINE_STEP, u_best + _REFINE_STEP):
            if low <= u <= high:
                if not search.affordable(d_best):
                    stopped = "time budget"
                    break
                search.evaluate(u, d_best, "refine")
    return d_best, stopped


def _final_fit(search: _Search, u_best: float, d_best: int, notes: list[str], top: int,
               target: float | None) -> tuple[Any, AlphaPath, float, int, str | None]:
    """``(map, α path, γ, D, why D stopped or None)`` of the final model on all rows: the
    search's best model where it ran on all rows, else D judged and the model fitted on all
    rows (:func:`~kernelmaps.tuning._large.fit_on_all_rows`: from ``d_best``, doubling up to
    ``top`` while it pays; ``target=None``: D fixed), or — when no time or memory is left for
    that — the best model fitted on the search rows (a note says so)."""
    value = float(2.0**u_best)
    (best_u, best_d), best_map, best_path = search.best_scored()
    X, y = search.X, search.y
    n = X.shape[0]
    if search.rows.size == n:
        if (best_u, best_d) == _key(u_best, d_best):
            return best_map, best_path, value, d_best, None  # the search ran on all rows
        if search.budget is not None and not search.affordable(0, d_best):
            return _search_model(search, notes, "time budget")
        t0 = time.perf_counter()
        final_map = search.build(value, d_best)
        Z = final_map.fit_transform(X)
        path = ridge_alpha_path(Z, y, alphas=search.alphas, task=search.task, cv=search.cv,
                                random_state=search.seed, score_rows=honest_rows(final_map, n))
        search.record(Trial(stage="final", gamma=value, n_components=d_best,
                            n_features_out=Z.shape[1], n_rows=n, alpha=path.alpha,
                            score=path.score, time_s=time.perf_counter() - t0,
                            estimated_s=search.model_seconds(n, Z.shape[1])))
        return final_map, path, value, d_best, None
    start_alpha = search.best_alpha(u_best, d_best)
    final_map, path, d_final, why = fit_on_all_rows(search, value, d_best, top, target,
                                                   start_alpha, notes)
    if final_map is None:
        return _search_model(search, notes, why or "time budget")
    return final_map, path, value, d_final, why


def _search_model(search: _Search, notes: list[str], why: str
                  ) -> tuple[Any, AlphaPath, float, int, str]:
    """The best model fitted on the search rows, with a note saying why it was not refitted."""
    (best_u, best_d), best_map, best_path = search.best_scored()
    room = "time" if why == "time budget" else "memory"
    notes.append(f"the {why} left no {room} to refit on all {search.X.shape[0]} rows: the "
                 f"model is the best one fitted on the {search.rows.size} search rows.")
    return best_map, best_path, float(2.0**best_u), best_d, why
