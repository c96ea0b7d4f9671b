r"""The comparison runner: feature maps side by side with the exact kernel.

:func:`compare` fits every method of the registry (:mod:`~kernelmaps.evaluate.registry`)
at several output dimensions and seeds, a linear model (:data:`MODELS`) on the features, and
the exact-kernel model as the baseline, and returns a tidy table (error, score, times, peak
memory); :func:`summarize` reduces it to one row per method and dimension. pandas (the
``cli`` extra) is imported by these functions only.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from numbers import Integral
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.svm import LinearSVC, LinearSVR
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array
from threadpoolctl import threadpool_limits

from kernelmaps import _cost
from kernelmaps._config import config_context, resolve_n_threads
from kernelmaps._optional import import_optional
from kernelmaps._ridge import DEFAULT_ALPHAS, check_fixed_alpha
from kernelmaps._suggest import did_you_mean
from kernelmaps.evaluate import _exact
from kernelmaps.evaluate._alpha import SelectAlpha, difference_se
from kernelmaps.evaluate._runs import (
    WORKER_START_S,
    estimated_seconds,
    plan_runs,
    run_all,
    workers_worth,
)
from kernelmaps.evaluate._splits import (
    Split,
    check_split,
    check_target,
    make_splits,
    scale_split,
    task_of,
)
from kernelmaps.evaluate.error import (
    KernelLike,
    Metric,
    _check_metric,
    _seed_values,
    _t_interval,
    kernel_matrix,
)
from kernelmaps.evaluate.heuristics import main_kernel
from kernelmaps.evaluate.registry import EXACT, method_order, resolve_methods
from kernelmaps.kernels import Kernel, PrecomputedKernel, resolve_kernel

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

__all__ = ["DEFAULT_N_COMPONENTS", "EXACT_AUTO_MAX_SECONDS", "EXACT_AUTO_MAX_TRAIN",
           "EXACT_AUTO_MEMORY_FRACTION", "EXACT_MAX_TRAIN", "MODELS", "compare", "summarize"]

#: The output dimensions compare sweeps by default (the command line's too): doublings
#: from a map too small to be useful to one near the exact kernel on a few thousand rows
#: (chosen with compare, not measured).
DEFAULT_N_COMPONENTS = (25, 50, 100, 200, 400, 800)

#: ``exact="auto"`` runs the exact-kernel baseline up to this many training rows, and only
#: while its estimated time and memory fit (:data:`EXACT_AUTO_MAX_SECONDS`,
#: :data:`EXACT_AUTO_MEMORY_FRACTION`). The baseline factorises the n × n training kernel
#: matrix in place (n³/3 flops, 8 n² bytes): at 15,000 rows ~1.8 GB and ~20 s on 2 cores.
EXACT_AUTO_MAX_TRAIN = 30000
#: ``exact="auto"`` skips the baseline when its estimated time exceeds this many seconds.
EXACT_AUTO_MAX_SECONDS = 60.0
#: ``exact="auto"`` skips the baseline when its estimated memory exceeds this fraction of
#: the memory available; ``exact=True`` refuses it above all of it.
EXACT_AUTO_MEMORY_FRACTION = 0.5
#: Up to this many training rows the baseline always fits (seconds, < 0.5 GB): no estimate.
#: Chosen with the baseline (e5c6d55), not measured. Not KernelRidge's solver="auto" rule
#: (_cost.exact_fit_fits), which picks a model's solver, not a reference run.
_EXACT_ALWAYS_TRAIN = 3000
#: Even with ``exact=True`` the baseline is refused above this many training rows: the
#: n × n kernel matrix alone would need 80 GB.
EXACT_MAX_TRAIN = 100000

#: Linear models run on the features: name → (classifier, regressor or None) factories.
#: Ridge's alpha (used with ``compare(alpha=...)``; by default α is chosen per row) suits
#: features scaled so that z(x)·z(y) ≈ k(x, y) = O(1).
MODELS: dict[str, tuple[Callable[[], BaseEstimator], Callable[[], BaseEstimator] | None]] = {
    "ridge": (lambda: RidgeClassifier(alpha=1e-2), lambda: Ridge(alpha=1e-2)),
    "logistic": (lambda: LogisticRegression(C=1.0, max_iter=1000), None),
    "svm": (lambda: LinearSVC(C=1.0), lambda: LinearSVR(C=1.0, max_iter=5000)),
}


def _model_factory(model: str | BaseEstimator, task: str,
                   alpha: float | None = None) -> tuple[str, Callable[[], Any]]:
    if isinstance(model, BaseEstimator):
        if alpha is not None:
            raise ValueError("alpha applies to model='ridge'; set the estimator's own "
                             "parameters instead.")
        return type(model).__name__, functools.partial(clone, model)
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}{did_you_mean(model, MODELS)}; valid models "
                         f"are {sorted(MODELS)}.")
    if alpha is not None and model != "ridge":
        raise ValueError(f"alpha applies to model='ridge' only; got model={model!r}.")
    classifier, regressor = MODELS[model]
    if model == "ridge":
        if alpha is None:  # the default: α chosen per row, the same way for every row
            return model, SelectAlpha(DEFAULT_ALPHAS, task)
        cls = RidgeClassifier if task == "classification" else Ridge
        return model, functools.partial(cls, alpha=alpha)
    if task == "classification":
        return model, classifier
    if regressor is None:
        raise ValueError(
            f"model {model!r} needs class labels but y is continuous; use 'ridge' or 'svm' "
            "for regression."
        )
    return model, regressor


def _price_exact(split: Split, closed_form: bool, n_outputs: int,
                 select_alpha: bool, threads: int) -> _cost.ExactCost:
    """The baseline's cost on ``split`` (:func:`_exact.baseline_cost`): what
    ``exact="auto"`` decides on and what ``on_estimate`` reports, the same numbers.

    ``threads``: the BLAS threads the baseline runs on (alone, before the maps' runs:
    ``_runs.run_all``).
    """
    return _exact.baseline_cost(
        split.X_train.shape[0], split.X_test.shape[0], split.X_train.shape[1], n_outputs,
        closed_form=closed_form, select_alpha=select_alpha, threads=threads)


def _resolve_exact(exact: bool | str, split: Split, price: Callable[[], _cost.ExactCost],
                   ) -> tuple[bool, str]:
    """Whether to run the baseline, and why (see :data:`EXACT_AUTO_MAX_TRAIN`); ``price``
    gives its cost (:func:`_price_exact`), asked only when the decision needs it."""
    if exact not in (True, False, "auto"):
        raise ValueError(f"exact must be True, False or 'auto'; got {exact!r}.")
    if exact is False:
        return False, "not requested"
    n_train = split.X_train.shape[0]
    limit = EXACT_AUTO_MAX_TRAIN if exact == "auto" else EXACT_MAX_TRAIN
    if n_train > limit:
        if exact == "auto":
            return False, f"auto: skipped, {n_train} training rows > {limit}"
        raise ValueError(
            f"exact=True with {n_train} training rows needs a {n_train}×{n_train} kernel "
            f"matrix ({8 * n_train**2 / 1e9:.0f} GB) and an O(n³) factorisation; the limit "
            f"is {limit} rows. Use exact='auto'/False or subsample the data.")
    if n_train <= _EXACT_ALWAYS_TRAIN:
        return True, ("requested" if exact is True
                      else f"auto: {n_train} training rows <= {_EXACT_ALWAYS_TRAIN}")
    cost = price()
    memory = cost.memory_bytes
    available = _exact.available_memory()
    estimate = (f"estimated {memory / 1e9:.1f} GB of {available / 1e9:.1f} GB available")
    if exact is True:
        if memory > available:
            raise ValueError(f"exact=True with {n_train} training rows: {estimate}. Use "
                             "exact='auto'/False or subsample the data (--max-rows).")
        return True, f"requested ({estimate})"
    seconds = cost.seconds
    estimate += f", ~{seconds:.0f} s"
    if memory > EXACT_AUTO_MEMORY_FRACTION * available:
        return False, (f"auto: skipped, {n_train} training rows: {estimate} (more than "
                       f"{EXACT_AUTO_MEMORY_FRACTION:.0%} of the memory)")
    if seconds > EXACT_AUTO_MAX_SECONDS:
        return False, (f"auto: skipped, {n_train} training rows: {estimate} (more than "
                       f"{EXACT_AUTO_MAX_SECONDS:.0f} s)")
    return True, f"auto: {n_train} training rows, {estimate}"


def compare(
    X: Any,
    y: Any,
    *,
    kernel: KernelLike = "rbf",
    methods: Iterable[str] | None = None,
    n_components: Iterable[int] = DEFAULT_N_COMPONENTS,
    model: str | BaseEstimator = "ridge",
    alpha: float | None = None,
    exact: bool | Literal["auto"] = "auto",
    task: Literal["auto", "classification", "regression"] = "auto",
    test_size: float = 0.25,
    cv: int | None = None,
    test_data: tuple[Any, Any] | None = None,
    n_seeds: int = 3,
    error_sample: int = 500,
    metric: Metric = "fro",
    random_state: Any = 0,
    scale: Literal["none", "standard", "minmax"] = "none",
    n_jobs: int | None = None,
    progress: Callable[[dict[str, Any], int, int], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    on_estimate: Callable[[dict[str, Any]], None] | None = None,
) -> pd.DataFrame:
    r"""Run feature maps side by side with the exact kernel: error, score, time, memory.

    For every split (one train/test split, ``cv`` folds, or the given ``test_data``), every
    method, every ``n_components`` and every seed: fit the map on the training rows,
    transform training and test rows, fit the linear ``model`` on the features and score it
    on the test rows; measure the kernel approximation error (:func:`relative_error`) on a
    fixed random subsample of ``error_sample`` training rows — the Gram matrix the model is
    trained on — and the wall time, CPU time and peak memory of the pipeline.

    The exact-kernel baseline (``method == "exact"``) is the same linear model on the exact
    finite feature map of the training set, the Cholesky factor of :math:`K = LL^\top`:
    :math:`z(x) = L^{-1}[k(x_1, x), \dots, k(x_n, x)]^\top`, so :math:`ZZ^\top = K` on the
    training rows and, by the representer theorem, the model *is* its kernel version
    (Schölkopf, Herbrich & Smola, "A generalized representer theorem", COLT 2001).

    The user guide (``docs/cli.md``) explains the design: each distinct map runs once
    ("Each distinct map runs once"; ``n_components_same_map``), ridge's α is chosen per
    row by exact leave-one-out ("α on fair terms"; the column ``alpha``), rows above the
    baseline carry ``score_diff_se`` ("α on fair terms"), the baseline's closed form,
    cost and ``exact="auto"`` rule ("The exact-kernel baseline"), and the worker processes
    ("Threads"). The table, its row order and the advice do not depend on the number of
    workers; its numbers agree to rounding.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Features (finite numbers).
    y : array-like of shape (n_samples,)
        Class labels (classification: the score is accuracy) or real values (regression:
        R²); see ``task``.
    kernel : str, Kernel or callable, default='rbf'
        The exact kernel, resolved by :func:`~kernelmaps.kernels.resolve_kernel`. Its
        scale, when unset (a name, or a Kernel whose ``gamma``/``length_scale``/``alpha``
        is None), is chosen by the median heuristic on ``X`` as scaled by ``scale``
        (:func:`~kernelmaps.evaluate.main_kernel`, the rule of the command line and of
        :func:`~kernelmaps.tune`; ``attrs["settings"]["heuristic"]`` states it); a name's
        other parameters are its defaults. A callable is vectorised, ``k(X, Y) -> matrix``
        (only methods for any kernel, such as ``nystroem``, approximate it).
    methods : iterable of str or None, default=None
        Names from :data:`~kernelmaps.evaluate.METHODS`; ``None``: every method that
        approximates ``kernel``.
    n_components : iterable of int, default=(25, 50, 100, 200, 400, 800)
        Output dimensions to try (for landmark methods, values above the number of
        training rows are skipped with a warning).
    model : {'ridge', 'logistic', 'svm'} or estimator, default='ridge'
        The linear model on the features (:data:`MODELS`; an estimator is cloned).
    alpha : float or None, default=None
        Ridge's α for every row (``model='ridge'`` only). ``None``: chosen per row by
        leave-one-out (see *Every row on fair terms* above).
    exact : bool or 'auto', default='auto'
        Add the exact-kernel baseline rows (see above).
    task : {'auto', 'classification', 'regression'}, default='auto'
        ``'auto'``: classification for strings, booleans, integers and integral floats with
        at most :data:`~kernelmaps.evaluate.MAX_AUTO_CLASSES` distinct values; regression otherwise.
    test_size : float, default=0.25
        Fraction of rows held out (stratified for classification) when neither ``cv`` nor
        ``test_data`` is given.
    cv : int or None, default=None
        Number of (stratified) folds instead of one split; rows get a ``split`` index.
    test_data : (X_test, y_test) or None, default=None
        A fixed held-out set (e.g. a data set's official test split); ``X, y`` are then all
        training rows.
    n_seeds : int, default=3
        Seeds per randomised configuration (deterministic maps and the baseline run once).
    error_sample : int, default=500
        Training rows on which the approximation error is measured.
    metric : {'fro', 'spectral', 'max'}, default='fro'
        Norm of the approximation error.
    random_state : int, RandomState instance or None, default=0
        Controls the split, the error subsample and the maps' seeds.
    scale : {'none', 'standard', 'minmax'}, default='none'
        Feature scaling, fitted on each split's training rows only and applied to its
        test rows (a pipeline: no test statistics leak into the scaler). ``'standard'``
        does not centre sparse input; ``'minmax'`` refuses sparse input.
    n_jobs : int or None, default=None
        Worker processes the runs are spread over (see *Parallel* above). ``None``: as
        many as the work is worth, at most kernelmaps' ``n_threads`` setting
        (:func:`~kernelmaps.set_config`; every core available by default); an int: that
        many (``-1``: every core; at most one per run); ``1``: everything in this
        process, on one thread.
    progress : callable or None, default=None
        ``progress(row, done, total)`` in the calling thread as each row is done (in the
        order the runs finish; e.g. to drive a progress bar).
    on_phase : callable or None, default=None
        ``on_phase(name)`` at the start of each phase of the exact baseline, its longest
        step: ``'exact: kernel matrix'``, ``'exact: Cholesky'``, ``'exact: test rows'`` and,
        when features are formed, ``'exact: linear model'`` (called from the thread that
        runs it: the baseline runs in this process, on as many BLAS threads as ``n_jobs``
        allows — every core by default — beside the maps' runs when they have worker
        processes, else before them). With α chosen, ``'exact: α by
        leave-one-out on m rows'`` (``m`` the number) comes before ``'exact: Cholesky'``;
        with ``m`` every training row (up to 2,000), it replaces it.
    on_estimate : callable or None, default=None
        ``on_estimate(estimate)`` once, before any run, with what the runs are estimated to
        cost (also ``attrs["settings"]["cost_estimate"]``): ``work_s`` (single-core CPU
        seconds of every run and the workers' start-up; the maps' share sets the number of
        workers), ``wall_s`` (the elapsed time expected at the machine's load when the
        probe ran: the baseline, then the maps' runs shared by the workers), ``n_jobs``, and
        ``exact``: ``None`` (no baseline) or its ``seconds``, ``kernel_matrix_s``,
        ``factorisation`` (``'Cholesky'``, ``'eigendecomposition'`` or
        ``'eigendecomposition + Cholesky'``), ``factorisation_s``, ``test_rows_s`` and
        ``memory_bytes``: the numbers ``exact="auto"`` decided on. Every estimate comes
        from kernelmaps' one cost model: flop counts per operation at this machine's
        measured matrix-product rate (a probe of about 0.2 s, once per process), the model
        behind :func:`kernelmaps.models.estimate_fit_cost` too.

    Returns
    -------
    pandas.DataFrame
        One row per split × distinct map × seed, in that order (the baseline first, then
        methods in the order given, ``n_components`` ascending), with columns ``method,
        n_components, n_features_out, seed, random_state, split, error, score,
        fit_time_s`` (map fit), ``transform_time_s`` (training + test rows),
        ``model_time_s`` (fit + score), ``total_time_s`` (their sum: wall time),
        ``cpu_time_s`` (CPU time of the same steps, in the process that ran them: what
        other work on the machine does not inflate), ``alpha`` (ridge's α, chosen or
        fixed; NaN for other models), ``score_diff_se`` (standard error of the score's
        difference from the baseline's on the same test rows; NaN without a baseline),
        ``peak_memory_mb`` (tracemalloc peak
        above the start of the row: NumPy and Python allocations, not BLAS-internal
        buffers), ``n_train, n_test, n_components_same_map`` (every requested n_components
        this map stands for, space-separated), ``notes`` (warnings raised, deduplicated),
        ``kernel, model, scoring, metric``. ``DataFrame.attrs["settings"]`` records the
        resolved settings.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps.evaluate import compare, summarize
    >>> X, y = load_digits(return_X_y=True)
    >>> table = compare(X[:400], y[:400], kernel="rbf", methods=["nystroem"],
    ...                 n_components=[50, 200], n_seeds=2)
    >>> sorted(table["method"].unique())
    ['exact', 'nystroem']
    >>> float(table.loc[table.method == "exact", "error"].iloc[0]) < 1e-8
    True
    """
    pd = import_optional("pandas")
    _check_metric(metric)
    kernel_arg = kernel
    kernel = _check_kernel(kernel)
    method_list = resolve_methods(methods, kernel)
    sizes = _check_counts(n_components, n_seeds, error_sample)
    cap = _check_n_jobs(n_jobs)
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], input_name="X")
    kernel, heuristic = _scaled_kernel(kernel_arg, kernel, X, scale, random_state)
    y = check_target(y, X.shape[0], "y")
    test_data = _checked_test_data(test_data, X)
    task = task_of(y, task)
    alpha = check_fixed_alpha(alpha)
    model_name, model_factory = _model_factory(model, task, alpha)
    select_alpha = isinstance(model_factory, SelectAlpha)
    rng = check_random_state(random_state)
    split_seed, *seeds = _seed_values(rng, n_seeds + 1)
    # Everything here runs on one thread, whatever n_jobs is (the workers too, see
    # _runs.execute): the same arithmetic, so the same numbers, for any number of workers.
    with threadpool_limits(limits=1), config_context(n_threads=1):
        splits = _checked_splits(X, y, task, test_size, cv, test_data, split_seed, scale)
        largest = max(splits, key=lambda s: s.X_train.shape[0])
        n_outputs = len(np.unique(y)) if task == "classification" else 1
        closed_form = _exact.closed_form_alpha(model_factory()) is not None
        price = functools.cache(functools.partial(_price_exact, largest, closed_form,
                                                  n_outputs, select_alpha, cap))
        run_exact, exact_reason = _resolve_exact(exact, largest, price)
        plan = plan_runs(method_list, sizes, seeds, splits, kernel, X.shape[1], run_exact)
        if plan.skipped:
            warnings.warn("skipped (landmark methods need n_components <= training rows): "
                          + "; ".join(plan.skipped), UserWarning, stacklevel=2)
        _draw_error_rows(splits, kernel, error_sample, rng)
        cost = _estimate(plan.runs, n_outputs, closed_form, model_factory, cap, n_jobs,
                         price() if run_exact else None)
        estimate, workers = cost["work_s"], cost["n_jobs"]
        if on_estimate is not None:
            on_estimate(cost)
        rows = run_all(plan.runs, kernel, model_factory, metric, workers, progress, on_phase,
                       exact_threads=cap)
    _difference_errors(rows, splits, task)
    table = _table(pd.DataFrame(rows, columns=list(_ROW_COLUMNS)), kernel, model_name, task,
                   metric)
    table.attrs["settings"] = {
        "kernel": repr(kernel), "methods": [m.name for m in method_list],
        "n_components": sizes, "model": model_name, "task": task,
        "exact": run_exact, "exact_reason": exact_reason, "n_seeds": n_seeds,
        "splits": len(splits), "test_size": None if cv or test_data else test_size,
        "cv": cv, "fixed_test_set": test_data is not None, "error_sample": error_sample,
        "metric": metric, "skipped": plan.skipped, "merged": plan.merged, "scale": scale,
        "heuristic": _describe_heuristic(heuristic),
        "n_jobs": workers, "work_estimate_s": estimate, "cost_estimate": cost,
        "alpha_selected": select_alpha,
        "alpha": _describe_alpha(select_alpha, alpha),
        # The notes that inform (the exact baseline's α rule), apart from warnings raised.
        "info_notes": sorted({n for row in rows for n in row.get("info_notes", ())}),
    }
    return table


def _check_kernel(kernel: Any) -> Kernel:
    """The resolved kernel, refusing ``"precomputed"`` (compare evaluates k on rows)."""
    kernel = resolve_kernel(kernel, vectorized=True, owner="compare")
    if isinstance(kernel, PrecomputedKernel):
        raise ValueError("compare needs a kernel on the rows of X, not kernel='precomputed'; "
                         "pass a kernel name, a Kernel or a vectorised callable k(X, Y).")
    return kernel


def _scaled_kernel(kernel_arg: Any, kernel: Kernel, X: Any, scale: Any,
                  random_state: Any) -> tuple[Kernel, Any]:
    """``(kernel resolved on X, the median heuristic's choice or None)``.

    The main job's γ rule (one place: main_kernel): a scale left unset is set by the median
    heuristic on X as the maps see it, as the command line does.
    """
    heuristic = None
    if isinstance(kernel_arg, (str, Kernel)):
        kernel, heuristic = main_kernel(kernel_arg, X, scale=scale, random_state=(
            random_state if isinstance(random_state, Integral) else 0))
    return kernel.resolve(X), heuristic  # gamma="scale": once, on the training rows


def _estimate(runs: list[Any], n_outputs: int, closed_form: bool, model_factory: Any,
              cap: int, n_jobs: int | None, exact: _cost.ExactCost | None) -> dict[str, Any]:
    """``on_estimate``'s dict: the runs' single-core CPU work (``work_s``, worker start-ups
    included), the workers the maps' runs share (``n_jobs``: as many as their work pays for,
    up to ``cap``, or the ``n_jobs`` asked for), the elapsed time expected at the machine's
    load now (``wall_s``: the baseline on its threads, then the maps' work shared by the
    workers, each slowed as the probe was — its CPU rate over its wall rate — and by the
    other workers (:func:`~kernelmaps._cost.load_slowdown`); an upper bound where the maps'
    workers run beside the baseline, ``_runs.run_all``) and ``exact``."""
    select_alpha = isinstance(model_factory, SelectAlpha)
    n_alphas = model_factory.alphas.size if select_alpha else _cost.PATH_ALPHAS
    map_runs = [run for run in runs if run.method != EXACT]
    maps = estimated_seconds(map_runs, n_outputs, closed_form, select_alpha, n_alphas)
    baseline = estimated_seconds([run for run in runs if run.method == EXACT], n_outputs,
                                 closed_form, select_alpha, n_alphas)
    # The baseline runs in this process: with one worker the maps' runs wait for it and then
    # keep one core busy, the others idle; with more they run beside it from the start. So
    # the work that pays for the workers is the baseline's and the maps' together (the main
    # job, 20,000 letters rows: one worker for its maps' runs alone, two with the baseline's
    # work; docs/cli.md "Threads").
    worth = maps + (baseline if exact is not None else 0.0)
    workers = (workers_worth(worth, cap, len(map_runs)) if n_jobs is None
               else min(cap, max(1, len(map_runs))))
    maps += WORKER_START_S * workers if workers > 1 else 0.0
    wall = ((0.0 if exact is None else exact.seconds)
            + maps / workers * _cost.load_slowdown(1, workers))
    return {"work_s": baseline + maps, "wall_s": wall, "n_jobs": workers,
            "exact": None if exact is None else exact.as_dict()}


def _check_counts(n_components: Any, n_seeds: Any, error_sample: Any) -> list[int]:
    """The sorted distinct sizes of ``n_components``, after checking the three counts."""
    sizes = sorted({int(m) for m in n_components})
    if not sizes or sizes[0] < 1:
        raise ValueError(f"n_components must be positive ints; got {list(n_components)!r}.")
    if not isinstance(n_seeds, (int, np.integer)) or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive int; got {n_seeds!r}.")
    if not isinstance(error_sample, (int, np.integer)) or error_sample < 2:
        raise ValueError(f"error_sample must be an int >= 2; got {error_sample!r}.")
    return sizes


def _checked_test_data(test_data: Any, X: Any) -> tuple[Any, np.ndarray] | None:
    """``(X_test, y_test)`` checked (as many features as ``X``), or None."""
    if test_data is None:
        return None
    X_test = check_array(test_data[0], accept_sparse="csr", dtype=[np.float64, np.float32],
                         input_name="X_test")
    if X_test.shape[1] != X.shape[1]:
        raise ValueError(f"X_test has {X_test.shape[1]} features but X has {X.shape[1]}.")
    return X_test, check_target(test_data[1], X_test.shape[0], "y_test")


def _checked_splits(X: Any, y: np.ndarray, task: str, test_size: float, cv: Any,
                    test_data: Any, seed: Any, scale: Any) -> list[Split]:
    """The train/test splits, each checked for the task and scaled by ``scale``."""
    splits = make_splits(X, y, task, test_size=test_size, cv=cv, test_data=test_data,
                         seed=seed)
    for split in splits:
        check_split(split, task)
        scale_split(split, scale)
    return splits


def _draw_error_rows(splits: list[Split], kernel: Kernel, error_sample: int,
                     rng: np.random.RandomState) -> None:
    """Each split's sample of training rows for the approximation error, and their exact
    kernel matrix (drawn in split order from ``rng``)."""
    for split in splits:
        n_train = split.X_train.shape[0]
        split.error_rows = np.sort(rng.choice(n_train, size=min(error_sample, n_train),
                                              replace=False))
        split.K_error = kernel_matrix(kernel, split.X_train[split.error_rows])


def _table(table: pd.DataFrame, kernel: Kernel, model_name: str, task: str,
           metric: str) -> pd.DataFrame:
    """The rows' table with the columns every row shares."""
    table["random_state"] = table["random_state"].astype("Int64")
    table["kernel"] = repr(kernel)
    table["model"] = model_name
    table["scoring"] = "accuracy" if task == "classification" else "r2"
    table["metric"] = metric
    return table


def _describe_heuristic(heuristic: Any) -> str | None:
    """The settings' line on the kernel scale the median heuristic set (None: none set)."""
    if heuristic is None:
        return None
    return (f"{heuristic.name} = {heuristic.value:.6g} by the median heuristic "
            f"({heuristic.rule}, over {heuristic.n_samples} rows, labels unused)")


def _describe_alpha(select_alpha: bool, alpha: float | None) -> str:
    """The settings' line on ridge's α: chosen per row, fixed, or the model's own."""
    if select_alpha:
        return (f"chosen per row by leave-one-out over {DEFAULT_ALPHAS.size} values "
                f"{DEFAULT_ALPHAS[0]:.0e}…{DEFAULT_ALPHAS[-1]:.0e}")
    if alpha is not None:
        return f"{alpha:.6g} (fixed)"
    return "none (the model's own regularisation)"


def _difference_errors(rows: list[dict[str, Any]], splits: list[Split], task: str) -> None:
    """Each row's ``score_diff_se`` against the baseline of its split (NaN without one),
    from the per-test-row losses the runs returned (dropped here: not a table column)."""
    reference = {row["split"]: row["test_losses"] for row in rows if row["method"] == EXACT}
    y_test = {split.index: split.y_test for split in splits}
    for row in rows:
        losses = row.pop("test_losses")
        baseline = reference.get(row["split"])
        row["score_diff_se"] = (
            float("nan") if baseline is None or row["method"] == EXACT
            else difference_se(losses, baseline, y_test[row["split"]], task))


def _check_n_jobs(n_jobs: Any) -> int:
    """The number of workers ``n_jobs`` asks for (see :func:`compare`)."""
    if n_jobs is not None and (not isinstance(n_jobs, (int, np.integer))
                               or isinstance(n_jobs, bool) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None, a positive int, or -1 for every core (-2 "
                         f"for all but one, ...); got {n_jobs!r}.")
    return resolve_n_threads(None if n_jobs is None else int(n_jobs))


#: Columns measured per row by _runs.execute (compare adds kernel, model, scoring, metric).
_ROW_COLUMNS = ("method", "n_components", "n_features_out", "seed", "random_state", "split",
                "error", "score", "fit_time_s", "transform_time_s", "model_time_s",
                "total_time_s", "cpu_time_s", "alpha", "score_diff_se", "peak_memory_mb",
                "n_train", "n_test", "n_components_same_map", "notes")


def _combined_se(group: pd.DataFrame) -> float:
    """Standard error of a configuration's mean score difference from the baseline: the
    seeds of one split share its test rows (their errors are not independent, so their
    standard errors are averaged), the splits' test rows are disjoint (combined as
    independent means)."""
    per_split = group.groupby("split")["score_diff_se"].mean().dropna().to_numpy()
    if per_split.size == 0:
        return float("nan")
    return float(np.sqrt(np.sum(per_split**2)) / per_split.size)


def summarize(results: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Summarise a comparison: one row per method × n_components.

    Errors and scores are aggregated over seeds and splits, times as medians with their
    spread.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    confidence : float, default=0.95
        Level of the log-scale Student-t interval of the error (never below zero).

    Returns
    -------
    DataFrame
        Columns ``method, n_components, n_features_out, n_components_same_map, runs,
        error, error_ci_low, error_ci_high`` (mean and interval), ``score, score_std``
        (mean and standard deviation), ``fit_time_s, transform_time_s, total_time_s,
        cpu_time_s`` (medians over the runs: the seeds repeat the same work, so their
        median is the time of one run, robust to one disturbed run), ``cpu_time_min_s,
        cpu_time_max_s`` (the spread of the CPU times: smallest and largest run; equal for
        a single run, whose noise is unknown), ``cpu_time_mad_s`` (their median absolute
        deviation from the median: the noise, robust to one disturbed run),
        ``peak_memory_mb`` (the largest), ``alpha`` (ridge's α: the median over the runs),
        ``score_diff`` (the mean score minus the baseline's; NaN without one) and
        ``score_diff_se`` (the standard error of that difference: per split the mean over
        seeds — they share the test rows — combined over splits as independent); the exact
        baseline first, then methods in registry order, ``n_components`` ascending. Tables
        from before ``cpu_time_s`` existed are summarised without it.
        ``attrs`` are the table's (``attrs["settings"]``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.evaluate import compare, summarize
    >>> X, y = load_iris(return_X_y=True)
    >>> table = compare(X, y, methods=["nystroem"], n_components=[10, 40], n_seeds=2)
    >>> summary = summarize(table)  # the exact baseline first, one row per configuration
    >>> summary[["method", "n_components", "runs"]].values.tolist()
    [['exact', 112, 1], ['nystroem', 10, 2], ['nystroem', 40, 2]]
    """
    pd = import_optional("pandas")
    # The baseline's n_components is the training size, which differs by a row between
    # cross-validation folds: it is one configuration all the same.
    group_size = results["n_components"].where(
        results["method"] != EXACT, results.loc[results["method"] == EXACT,
                                                 "n_components"].max())
    records = []
    for (method, m), group in results.groupby([results["method"], group_size], sort=False):
        mean, low, high = _t_interval(group["error"].to_numpy(), confidence)
        record = {
            "method": method, "n_components": int(m),
            "n_features_out": int(group["n_features_out"].iloc[0]),
            "n_components_same_map": (str(group["n_components_same_map"].iloc[0])
                                      if "n_components_same_map" in group else str(int(m))),
            "runs": len(group), "error": mean, "error_ci_low": low, "error_ci_high": high,
            "score": float(group["score"].mean()),
            "score_std": float(group["score"].std(ddof=1)) if len(group) > 1 else 0.0,
            "fit_time_s": float(group["fit_time_s"].median()),
            "transform_time_s": float(group["transform_time_s"].median()),
            "total_time_s": float(group["total_time_s"].median()),
        }
        if "cpu_time_s" in group:
            cpu = group["cpu_time_s"]
            median = float(cpu.median())
            record.update(cpu_time_s=median, cpu_time_min_s=float(cpu.min()),
                          cpu_time_max_s=float(cpu.max()),
                          cpu_time_mad_s=float((cpu - median).abs().median()))
        record["peak_memory_mb"] = float(group["peak_memory_mb"].max())
        if "alpha" in group:
            record["alpha"] = float(group["alpha"].median())
            record["score_diff_se"] = _combined_se(group)
        records.append(record)
    summary = pd.DataFrame.from_records(records)
    exact_score = summary.loc[summary["method"] == EXACT, "score"]
    summary["score_diff"] = (summary["score"] - float(exact_score.iloc[0]) if len(exact_score)
                             else np.nan)
    summary.loc[summary["method"] == EXACT, "score_diff"] = np.nan
    order = {name: i for i, name in enumerate(method_order(results["method"]))}
    summary["_order"] = summary["method"].map(order)
    summary = (summary.sort_values(["_order", "n_components"]).drop(columns="_order")
               .reset_index(drop=True))
    summary.attrs = dict(results.attrs)  # the settings (e.g. how α was chosen) go along
    return summary
