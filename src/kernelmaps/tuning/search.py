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
Final model
    The map at (γ, D) fitted on all rows, and the α path on its features: the chosen α, the
    validation score reported, and the fitted linear model, from one more decomposition.

Every configuration tried is a :class:`Trial` of the result's ``table``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from kernelmaps._ridge import (
    DEFAULT_ALPHAS,
    AlphaPath,
    check_target,
    honest_rows,
    ridge_alpha_path,
)
from kernelmaps.evaluate import (
    METHODS,
    choose_scale,
    main_kernel,
    make_scaler,
    median_heuristic_parameter,
    methods_for,
    task_of,
)
from kernelmaps.kernels import Kernel, resolve_kernel
from kernelmaps.tuning._checks import (
    check_alphas,
    check_bounds,
    check_cv,
    check_int,
    check_real,
)
from kernelmaps.tuning._search_state import OCTAVES, Search, config_key
from kernelmaps.tuning.result import Trial, TuneResult

__all__ = ["START_COMPONENTS", "min_rows", "tune"]

#: First D of the doubling (``n_components="auto"``).
START_COMPONENTS = 128
#: The step either side of the best γ at the final D, in octaves.
_REFINE_STEP = 0.5
#: Kernel scale parameters the search can set (``alpha`` of the student kernel would collide
#: with ridge's α in ``params``).
_SCALES = ("gamma", "length_scale")


# =========================================================================== validation
def _check_kernel(kernel: Any) -> tuple[Kernel, str]:
    resolved = resolve_kernel(kernel, owner="tune")
    scale = median_heuristic_parameter(resolved)
    if scale not in _SCALES:
        raise ValueError(
            f"tune searches a kernel's scale ({' or '.join(_SCALES)}) around the median "
            f"heuristic; the {resolved.name!r} kernel has none it can search. Use one of "
            "'rbf', 'laplacian', 'chi2', 'poly', 'sigmoid', 'matern', or GridSearchCV "
            "(kernel objects take set_params).")
    return resolved, scale


def _check_method(method: Any, kernel: Kernel) -> str:
    if not isinstance(method, str):
        raise TypeError(f"method must be a method name (str); got {type(method).__name__}.")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods are {sorted(METHODS)}.")
    if not METHODS[method].supports(kernel):
        raise ValueError(f"method {method!r} does not approximate the {kernel.name!r} kernel; "
                         f"methods for it: {methods_for(kernel)}.")
    return method



def _next_gain(dimensions: list[int], scores: list[float]) -> float:
    """The gain the next doubling is likely to bring: a least-squares line through
    (log D, log gain) of the doublings so far, extrapolated (nan: no trend to fit)."""
    gains = np.diff(scores)
    at = np.asarray(dimensions[1:], dtype=float)
    positive = gains > 0
    if positive.sum() < 2:
        return math.nan
    slope, intercept = np.polyfit(np.log(at[positive]), np.log(gains[positive]), 1)
    if slope >= 0:
        return math.nan
    return float(math.exp(intercept + slope * math.log(2.0 * dimensions[-1])))


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
         scale: str = "auto") -> TuneResult:
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
        The input samples.
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
        next doubling would.
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
        widened (up to 2^±8) when the best value is on an edge.
    task : {"auto", "classification", "regression"}, default="auto"
        As in :func:`~kernelmaps.evaluate.compare`.
    search_rows : int, default=5000
        Rows (a random subsample) the γ and D search runs on; the final fit uses all rows.
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
    resolved, scale = _check_kernel(kernel)
    method = _check_method(method, resolved)
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
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None; got {type(progress).__name__}.")

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
    centre, low, high, widen = _scale_range(heuristic, bounds)

    top = _max_components(method, rows.size, max_components)
    start_d = min(fixed if fixed is not None else START_COMPONENTS, top)
    if fixed is not None and METHODS[method].landmarks and fixed > rows.size:
        raise ValueError(f"n_components={fixed} exceeds the {rows.size} rows the {method} "
                         "landmarks are drawn from; use fewer components or more search_rows.")
    doublings = 0 if fixed is not None else max(0, int(math.log2(max(top / start_d, 1))))
    search = Search(X, y, kernel=resolved, scale=scale, method=method, task=task, cv=cv,
                     alphas=alphas, seed=seed, rows=rows, budget=budget, progress=progress,
                     expected_steps=10 + 2 * doublings)
    notes: list[str] = []

    # -- γ at the starting D, then D by doubling ------------------------------------------
    u_best, stopped = search.search_scale(centre, low, high, start_d, "gamma", widen)
    d_best = start_d
    if fixed is None and stopped != "time budget":
        d_best, stopped = _grow_components(search, u_best, start_d, top, target, (low, high))
    u_best = search.best_scale(d_best, u_best)

    # -- the final model on all rows ---------------------------------------------------
    final_map, path, value, d_best, why = _final_fit(search, u_best, d_best, notes)
    stopped = why or stopped
    if path.alpha in (alphas[0], alphas[-1]) and alphas.size > 1:
        edge = "smallest" if path.alpha == alphas[0] else "largest"
        notes.append(f"the chosen alpha={path.alpha:g} is the {edge} of the grid; a wider "
                     "alphas grid may score better.")
    estimator = Pipeline([*([("scale", scaler)] if scaler is not None else []),
                          ("map", final_map), ("model", path.estimator())])
    params = {"method": method, "kernel": resolved.name, scale: value, "alpha": path.alpha,
              "n_components": int(d_best)}
    return TuneResult(estimator=estimator, params=params, score=path.score,
                      trials=search.trials, task=task,
                      scoring="accuracy" if task == "classification" else "r2", cv=cv,
                      scale_name=scale, heuristic=heuristic,
                      time_s=time.perf_counter() - started, stopped=stopped, notes=notes,
                      scale=scaling, scale_reason=scale_reason)


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
        return centre, centre - OCTAVES, centre + OCTAVES, True
    low, high = math.log2(bounds[0]), math.log2(bounds[1])
    return min(max(centre, low), high), low, high, False


def _grow_components(search: Search, u_best: float, start_d: int, top: int, target: float,
                     bounds: tuple[float, float]) -> tuple[int, str]:
    """``(D, why the growth stopped)``: D doubled from ``start_d`` at the best γ while a
    doubling gains at least ``target`` (relative), then γ refined at the D kept."""
    dims, scores = [start_d], [search.cache[config_key(u_best, start_d)]]
    stopped = "max_components"
    while 2 * dims[-1] <= top:
        d = 2 * dims[-1]
        if not search.affordable(d):
            stopped = "time budget"
            break
        scores.append(search.evaluate(u_best, d, "n_components"))
        dims.append(d)
        tolerance = target * max(abs(scores[-1]), 1e-12)
        # The last doubling gained too little, or the trend says the next one will
        # (a nan trend compares False: keep growing).
        if scores[-1] - scores[-2] < tolerance or _next_gain(dims, scores) < tolerance:
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


def _final_fit(search: Search, u_best: float, d_best: int, notes: list[str]
               ) -> tuple[Any, AlphaPath, float, int, str | None]:
    """``(map, α path, γ, D, "time budget" or None)`` of the final model on all rows: the
    search's best model where it ran on all rows or no time is left for a refit (a note
    says so), else a refit at (2^``u_best``, ``d_best``)."""
    value = float(2.0**u_best)
    (best_u, best_d), best_map, best_path = search.best_scored()
    X, y = search.X, search.y
    n = X.shape[0]
    if search.rows.size == n and (best_u, best_d) == config_key(u_best, d_best):
        return best_map, best_path, value, d_best, None  # the search ran on all rows
    if search.budget is not None and not search.affordable(0, d_best):
        notes.append(f"the time budget left no time to refit on all {n} rows: the model is "
                     f"the best one fitted on the {search.rows.size} search rows.")
        return best_map, best_path, float(2.0**best_u), best_d, "time budget"
    t0 = time.perf_counter()
    final_map = search.build(value, d_best)
    Z = final_map.fit_transform(X)
    path = ridge_alpha_path(Z, y, alphas=search.alphas, task=search.task, cv=search.cv,
                            random_state=search.seed, score_rows=honest_rows(final_map, n))
    search.record(Trial(stage="final", gamma=value, n_components=d_best,
                        n_features_out=Z.shape[1], n_rows=n, alpha=path.alpha,
                        score=path.score, time_s=time.perf_counter() - t0))
    return final_map, path, value, d_best, None
