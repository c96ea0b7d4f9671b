"""The rows of a comparison: which runs to make, one measured run, and the grid on joblib.

:func:`plan_runs` turns methods × ``n_components`` × seeds × splits into :class:`Run`\\ s,
once per distinct map: requests that resolve to the same fitted map (``structured`` at
``n_components`` 25 … 800 on 784 input features: D = 1,024 every time) are found by fitting
each request on a few training rows and comparing the maps' outputs, and are run once.
:func:`execute` measures one run on a thread of its own, with BLAS and the transform engine
at one thread — except the exact baseline, one big dense factorisation, which gets the
machine's BLAS threads; :func:`run_all` runs the baseline in this process and the rest of the
grid — independent fits — in worker processes (joblib's loky backend) beside it or, for one
worker, in this process after it. Private to
:mod:`kernelmaps.evaluate`; ``compare``'s parameters document it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import itertools
import os
import tempfile
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np
import scipy.sparse as sp
import sklearn
from joblib import parallel_config
from sklearn.utils.parallel import Parallel, delayed

from kernelmaps import _cost
from kernelmaps._config import config_context, get_config
from kernelmaps._cost import RUN_OVERHEAD_S
from kernelmaps._engine import blas_threads as blas_threads_scope
from kernelmaps._ridge import honest_rows, ridge_alpha_path
from kernelmaps.evaluate import _exact
from kernelmaps.evaluate._alpha import SelectAlpha, test_losses
from kernelmaps.evaluate._splits import Split
from kernelmaps.evaluate.error import relative_error
from kernelmaps.evaluate.registry import EXACT, METHODS, Method
from kernelmaps.kernels import Kernel

__all__ = ["PARALLEL_EXACT_PHASE", "PROBE_ROWS", "RUN_OVERHEAD_S", "SECONDS_PER_WORKER",
           "WORKER_START_S", "Run", "estimated_seconds", "execute", "plan_runs", "run_all",
           "run_flops", "workers_worth"]

#: What ``on_phase`` heard when the baseline ran in a worker process. It no longer does (it
#: runs in this process on the machine's BLAS threads, its phases reported as they start);
#: kept for code that imported the name.
PARALLEL_EXACT_PHASE = "exact: in a worker"
#: Training rows each non-landmark request is fitted on to learn its real output dimension
#: and whether it is the same map as another request. Random-feature maps draw their
#: parameters from the input dimension alone, so a few rows suffice.
PROBE_ROWS = 16


@dataclass
class Run:
    """One planned row of the comparison table (``index``: its place in the table)."""

    index: int
    method: str
    n_components: int
    seed: int
    random_state: int | None
    split: Split
    feature_map: Any  # None for the exact baseline
    #: Every requested n_components that gives this same map (one value when only this).
    same_map: tuple[int, ...] = ()
    #: The map's output dimension D where the probe saw it (None: not probed).
    dimension: int | None = None

    @property
    def size(self) -> int:
        """D, or the largest request the map stands for when it was not probed."""
        return self.dimension or max(self.same_map, default=self.n_components)


@dataclass
class Plan:
    """What :func:`plan_runs` decided: the runs, the skipped requests, the merged ones."""

    runs: list[Run]
    skipped: list[str]
    #: One sentence per group of requests that gave the same map, saying why.
    merged: list[str]


def _probe_output(method: Method, kernel: Kernel, n_components: int, seed: int | None,
                  n_features: int, rows: Any) -> np.ndarray | None:
    """The map of one request, fitted on ``rows``, applied to ``rows`` (None: cannot tell)."""
    feature_map = method.build(kernel, n_components, seed, n_features)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the real run records its warnings
            Z = feature_map.fit(rows).transform(rows)
    except Exception:  # a map that cannot fit a few rows is run as asked;
        return None  # its real run reports any error with the full data
    return np.asarray(Z.toarray() if sp.issparse(Z) else Z, dtype=np.float64)


def _same_map(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two probe outputs come from the same map: same shape, same values to
    rounding (the same parameters in other memory may round differently; two different
    random maps differ by O(1))."""
    if a is None or b is None or a.shape != b.shape:
        return False
    scale = max(float(np.abs(b).max(initial=0.0)), 1e-300)
    return bool(np.allclose(a, b, rtol=1e-10, atol=1e-10 * scale))


def _distinct_requests(method: Method, sizes: Sequence[int], seed: int | None,
                       kernel: Kernel, n_features: int,
                       rows: Any) -> list[tuple[int, tuple[int, ...], int | None]]:
    """``(n_components, same_map, D)`` per distinct map among the requested ``sizes``.

    Landmark methods are not probed: ``n_components`` training rows are their D, so every
    request is a map of its own. Others are fitted on ``rows`` with the first seed; a
    request whose map gives the same output as an earlier one's joins it.
    """
    if method.landmarks:
        return [(m, (m,), None) for m in sizes]
    groups: list[tuple[list[int], np.ndarray | None]] = []
    for m in sizes:
        output = _probe_output(method, kernel, m, seed, n_features, rows)
        for members, first in groups:
            if _same_map(output, first):
                members.append(m)
                break
        else:
            groups.append(([m], output))
    return [(members[0], tuple(members), None if output is None else output.shape[1])
            for members, output in groups]


def _merged_note(method: Method, members: tuple[int, ...], dimension: int | None,
                 n_features: int) -> str:
    sizes = ", ".join(map(str, members[:-1])) + f" and {members[-1]}"
    rule = f" ({method.description})" if method.description else ""
    return (f"{method.name}: n_components {sizes} give the same map, D = {dimension} on "
            f"{n_features} input features{rule}; it ran once per seed, shown as "
            f"n_components={members[0]}.")


def plan_runs(method_list: list[Method], sizes: list[int], seeds: list[int],
              splits: list[Split], kernel: Kernel, n_features: int, exact: bool) -> Plan:
    """The runs of a comparison, in table order: per split, the baseline, then each method's
    distinct maps by ``n_components``, then seeds (deterministic maps: one run)."""
    rows = splits[0].X_train[:PROBE_ROWS]
    requests = {method.name: _distinct_requests(
        method, sizes, seeds[0] if method.randomized else None, kernel, n_features, rows)
        for method in method_list}
    merged = [_merged_note(method, members, dimension, n_features)
              for method in method_list
              for _, members, dimension in requests[method.name] if len(members) > 1]
    runs: list[Run] = []
    skipped: list[str] = []
    for split in splits:
        n_train = split.X_train.shape[0]
        if exact:  # the exact baseline: no map object, _exact.run_exact
            runs.append(Run(len(runs), EXACT, n_train, 0, None, split, None, (n_train,)))
        for method in method_list:
            for m, members, dimension in requests[method.name]:
                if method.landmarks and m > n_train:
                    skipped.append(f"{method.name} n_components={m} > {n_train} training rows")
                    continue
                for seed_index, seed in enumerate(seeds if method.randomized else [None]):
                    feature_map = method.build(kernel, m, seed, n_features)
                    runs.append(Run(len(runs), method.name, m, seed_index, seed, split,
                                    feature_map, members, dimension))
    return Plan(runs, skipped, merged)


# --------------------------------------------------------------------------- one run
def _measure_exact(run: Run, kernel: Kernel, model_factory: Callable[[], Any], metric: str,
                   on_phase: Callable[[str], None] | None,
                   before_factorising: Callable[[], None] | None = None) -> dict[str, Any]:
    """The baseline's row: :func:`_exact.run_exact`, measured like :func:`_measure_map`."""
    split = run.split
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    cpu = time.process_time()
    result = _exact.run_exact(kernel, split, model_factory, on_phase, before_factorising)
    cpu = time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] - baseline
    error = (0.0 if result.error_features is None
             else relative_error(split.K_error, result.error_features, metric))
    n_train = split.X_train.shape[0]
    return {
        "n_features_out": n_train, "error": error, "score": result.score,
        "fit_time_s": result.fit_time_s, "transform_time_s": result.transform_time_s,
        "model_time_s": result.model_time_s,
        "total_time_s": result.fit_time_s + result.transform_time_s + result.model_time_s,
        "cpu_time_s": cpu, "peak_memory_mb": peak / 2**20, "notes": list(result.notes),
        "alpha": result.alpha, "test_losses": result.losses,
    }


def _fit_model(model_factory: Callable[[], Any], feature_map: Any, Z: Any,
               y: Any) -> tuple[Any, float]:
    """The linear model fitted on the features, and its ridge α (NaN for other models).

    With :class:`SelectAlpha`, α is the grid's best by exact leave-one-out
    (:func:`~kernelmaps.tuning.ridge_alpha_path`), scored on the rows that are not the
    map's landmarks, as :func:`kernelmaps.tune` scores (:func:`~kernelmaps.tuning.
    honest_rows`: a landmark's own features are exact, a new point's are not).
    """
    if isinstance(model_factory, SelectAlpha):
        path = ridge_alpha_path(Z, y, alphas=model_factory.alphas, task=model_factory.task,
                                score_rows=honest_rows(feature_map, Z.shape[0]))
        return path.estimator(), path.alpha
    model = model_factory().fit(Z, y)
    alpha = _exact.closed_form_alpha(model)
    return model, float("nan") if alpha is None else alpha


def _measure_map(run: Run, model_factory: Callable[[], Any], metric: str) -> dict[str, Any]:
    """Fit the map and the model on the training part, score on the test part, measure."""
    split = run.split
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    cpu, start = time.process_time(), time.perf_counter()
    feature_map = run.feature_map.fit(split.X_train)
    fitted = time.perf_counter()
    Z_train = feature_map.transform(split.X_train)
    Z_test = feature_map.transform(split.X_test)
    transformed = time.perf_counter()
    model, alpha = _fit_model(model_factory, feature_map, Z_train, split.y_train)
    predicted = model.predict(Z_test)
    score = float(model.score(Z_test, split.y_test))
    done, cpu = time.perf_counter(), time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] - baseline
    del Z_train, Z_test
    Z_error = feature_map.transform(split.X_train[split.error_rows])
    task = "classification" if hasattr(model, "classes_") else "regression"
    return {
        "n_features_out": int(Z_error.shape[1]),
        "error": relative_error(split.K_error, Z_error, metric), "score": score,
        "fit_time_s": fitted - start, "transform_time_s": transformed - fitted,
        "model_time_s": done - transformed, "total_time_s": done - start,
        "cpu_time_s": cpu, "peak_memory_mb": peak / 2**20, "notes": [],
        "alpha": alpha, "test_losses": test_losses(split.y_test, predicted, task),
    }


def _row(run: Run, measured: dict[str, Any], caught: list[Any]) -> dict[str, Any]:
    info = measured.pop("notes")  # what the run says of itself, not a warning raised
    notes = sorted({str(w.message).splitlines()[0][:160] for w in caught} | set(info))
    return {
        "info_notes": info,
        "method": run.method, "n_components": run.n_components,
        "n_features_out": measured.pop("n_features_out"),
        "n_components_same_map": " ".join(map(str, run.same_map)), "seed": run.seed,
        "random_state": run.random_state, "split": run.split.index, **measured,
        "n_train": run.split.X_train.shape[0], "n_test": run.split.X_test.shape[0],
        "notes": " | ".join(notes),
    }


def _measure(run: Run, kernel: Kernel, model_factory: Callable[[], Any], metric: str,
             on_phase: Callable[[str], None] | None,
             before_factorising: Callable[[], None] | None = None) -> dict[str, Any]:
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            measured = (_measure_exact(run, kernel, model_factory, metric, on_phase,
                                       before_factorising)
                        if run.method == EXACT else _measure_map(run, model_factory, metric))
        # What the run left allocated once its arrays, map and model are gone is what the
        # process keeps for good (a module imported on first use, a cache): made by the
        # first such run in each process, it would make the peak depend on what ran before
        # in the same process. It is the process's memory, not the run's: left out.
        kept = tracemalloc.get_traced_memory()[0] - start
        measured["peak_memory_mb"] -= max(kept, 0) / 2**20
    finally:
        if not tracing:
            tracemalloc.stop()
    return _row(run, measured, caught)


def execute(run: Run, kernel: Kernel, model_factory: Callable[[], Any], metric: str,
            settings: tuple[dict[str, Any], dict[str, Any]],
            on_phase: Callable[[str], None] | None = None,
            blas_threads: int = 1,
            before_factorising: Callable[[], None] | None = None) -> tuple[int, dict[str, Any]]:
    """Measure one run; returns ``(run.index, row)``.

    The run gets a thread of its own, so per-thread caches (the engine's scratch buffers)
    start empty and its peak memory does not depend on which runs went before it in this
    process — the same in a worker as in a serial run. A map's run has BLAS limited to one
    thread (set from whichever thread calls this, :func:`~kernelmaps._engine.blas_threads`:
    the baseline's comes from a thread beside the workers) and so is the transform engine:
    the grid's runs go side by side. The exact
    baseline is one big job — its time is a dense ``n × n`` factorisation — and runs in
    this process (:func:`run_all`), with BLAS on ``blas_threads`` threads (``compare``'s thread cap:
    every core by default). ``settings`` are the caller's kernelmaps and scikit-learn
    settings, which a new thread would not inherit.
    """
    config, sklearn_config = settings
    outcome: dict[str, Any] = {}
    exact = run.method == EXACT
    blas_threads = max(1, int(blas_threads)) if exact else 1

    def work() -> None:
        try:
            with config_context(**{**config, "n_threads": blas_threads}), \
                    sklearn.config_context(**sklearn_config):
                outcome["row"] = _measure(run, kernel, model_factory, metric, on_phase,
                                          before_factorising)
        except BaseException as error:  # re-raised in the calling thread
            outcome["error"] = error

    # The engine's controller, made here if this is the process's first run: its making
    # allocates ~0.4 MB for a moment, which would count in this run's peak only.
    with blas_threads_scope(blas_threads):
        thread = threading.Thread(target=work, name=f"kernelmaps-compare-{run.index}",
                                  daemon=True)
        thread.start()
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return run.index, outcome["row"]


# --------------------------------------------------------------------------- the grid
#: One worker process costs about this much CPU to start: importing NumPy, SciPy,
#: scikit-learn and kernelmaps took 1.2 s in a fresh process on the 2-core Xeon the
#: benchmarks ran on (docs/cli.md, *Threads*).
WORKER_START_S = 1.2
#: With ``n_jobs=None``, one worker is started per this many seconds of estimated
#: single-core work. A worker costs its start-up, and runs beside another take 10-15 % more
#: CPU (shared caches and memory bandwidth): on the 2-core machine shared with other work,
#: two workers took 0.82x the wall time of one process on a 6,000 × 40 table (11 s of CPU
#: in the runs; +25 % CPU), so work of that size stays in one process. (The estimate was a
#: nominal 1e10 flop/s then, 30 s for that table's 11 s; it is now the cost model's seconds
#: at the measured one-thread rate, so the threshold is in seconds of real work.)
SECONDS_PER_WORKER = 15.0


def run_flops(run: Run, n_outputs: int, closed_form: bool, select_alpha: bool,
              n_alphas: int = _cost.PATH_ALPHAS) -> float:
    """GEMM-equivalent flops of one run (:mod:`kernelmaps._cost`'s formulas).

    A map's run: :func:`~kernelmaps._cost.map_ridge_flops` (the map's fit, its transform
    of the training, test and kernel-error rows, ridge on the training features: with
    ``select_alpha``, the leave-one-out path over ``n_alphas`` values) and the predictions.
    The baseline: :func:`~kernelmaps._cost.exact_baseline_cost`."""
    (n_train, d), n_test = run.split.X_train.shape, run.split.X_test.shape[0]
    if run.method == EXACT:
        return _exact.baseline_cost(n_train, n_test, d, n_outputs, closed_form=closed_form,
                                    select_alpha=select_alpha, threads=1).flops
    landmarks = run.method in METHODS and METHODS[run.method].landmarks
    return (_cost.map_ridge_flops(n_train, d, run.size, n_outputs, landmarks=landmarks,
                                  select_alpha=select_alpha, n_alphas=n_alphas,
                                  other_rows=n_test + run.split.error_rows.size)
            + 2.0 * n_test * run.size * n_outputs)


def estimated_seconds(runs: list[Run], n_outputs: int, closed_form: bool,
                      select_alpha: bool = False, n_alphas: int = _cost.PATH_ALPHAS) -> float:
    """Single-core CPU seconds the runs would take: per run :data:`RUN_OVERHEAD_S`, with
    ``select_alpha`` the α path's fixed cost (:func:`~kernelmaps._cost.
    alpha_path_fixed_seconds`), and :func:`run_flops` at the one-thread rate per second of
    CPU time (work, which other processes on the machine do not make larger)."""
    flops = sum(run_flops(run, n_outputs, closed_form, select_alpha, n_alphas) for run in runs)
    fixed = RUN_OVERHEAD_S * len(runs)
    if select_alpha:
        fixed += sum(_cost.alpha_path_fixed_seconds(run.split.X_train.shape[0], n_outputs,
                                                    n_alphas) for run in runs)
    return fixed + _cost.seconds(flops, threads=1, clock="cpu")


def workers_worth(estimate: float, cap: int, n_runs: int) -> int:
    """One worker per :data:`SECONDS_PER_WORKER` of ``estimate`` seconds of work, at least
    one, at most ``cap`` and the number of runs."""
    return max(1, min(cap, n_runs, int(estimate / SECONDS_PER_WORKER)))


def _dispatch_order(run: Run) -> tuple[int, int]:
    """Longest first, so no long run is left alone at the end: the baseline, then by output
    dimension, largest first (a run's cost grows with it)."""
    return (0 if run.method == EXACT else 1, -run.size)


def run_all(runs: list[Run], kernel: Kernel, model_factory: Callable[[], Any], metric: str,
            n_jobs: int, progress: Callable[[dict[str, Any], int, int], None] | None,
            on_phase: Callable[[str], None] | None,
            exact_threads: int = 1) -> list[dict[str, Any]]:
    """The rows of ``runs`` in table order: the exact baseline in this process on
    ``exact_threads`` BLAS threads (one big dense factorisation: the cores are its), and the
    maps' runs on ``n_jobs`` worker processes (one thread each) or, when ``n_jobs`` is 1, in
    this process after it. With worker processes the maps' runs start beside the baseline
    instead of after it (:func:`_beside_baseline`); ``progress`` is called here as each row
    arrives; ``on_phase`` hears the baseline's phases as they start."""
    settings = (get_config(), sklearn.get_config())
    rows: list[dict[str, Any]] = [{}] * len(runs)
    baseline = [run for run in runs if run.method == EXACT]
    grid = [run for run in runs if run.method != EXACT]
    workers = min(n_jobs, len(grid))
    # With the maps' runs in worker processes, the baseline builds its kernel matrix and
    # chooses α beside them, then waits for them to finish before its n × n Cholesky
    # factorisation: a multithreaded factorisation beside busy workers loses its threads'
    # turns at every synchronisation (19.4 s of wall time for 11.5 s alone, the main job
    # on 2 cores), while the runs, done first, leave it every core.
    grid_done = threading.Event()
    wait = grid_done.wait if workers > 1 else None

    def exact_rows() -> list[tuple[int, dict[str, Any]]]:
        return [execute(run, kernel, model_factory, metric, settings, on_phase,
                        blas_threads=exact_threads, before_factorising=wait)
                for run in baseline]

    with contextlib.ExitStack() as stack:
        results: Iterable[tuple[int, dict[str, Any]]]
        if workers <= 1:
            results = itertools.chain(exact_rows(), (
                execute(run, kernel, model_factory, metric, settings) for run in grid))
        else:
            # Worker processes, not threads: each measures its own peak memory (tracemalloc
            # is per process) and runs its Python without sharing a GIL. One BLAS thread
            # each (inner_max_num_threads): n_jobs workers keep n_jobs cores busy, no more.
            # Every array goes to the workers memory-mapped, written once per split before
            # the baseline starts (_memory_mapped) and shared by every run of its split, so
            # a queued task is a few kilobytes of references. The queue's pickles live in
            # this process while the baseline runs beside the grid and count in its peak
            # memory (tracemalloc traces the process, not a thread): 0.42 MB measured on 270
            # digits rows with the arrays inside the tasks.
            folder = stack.enter_context(tempfile.TemporaryDirectory(
                prefix="kernelmaps-compare-", dir=os.environ.get("JOBLIB_TEMP_FOLDER"),
                ignore_cleanup_errors=True))
            shared = _memory_mapped([run.split for run in grid], folder)
            stack.enter_context(parallel_config(backend="loky", inner_max_num_threads=1))
            results = Parallel(n_jobs=workers, return_as="generator_unordered", max_nbytes=0)(
                delayed(execute)(dataclasses.replace(run, split=shared[id(run.split)]),
                                 kernel, model_factory, metric, settings)
                for run in sorted(grid, key=_dispatch_order))
            if baseline:
                results = _beside_baseline(exact_rows, results, grid_done)
        for done, (index, row) in enumerate(results, start=1):
            rows[index] = row
            if progress is not None:
                progress(row, done, len(runs))
    return rows


def _memory_mapped(splits: Iterable[Split], folder: str) -> dict[int, Split]:
    """Each distinct split (by identity) written once under ``folder`` and read back with its
    arrays memory-mapped, read-only: what the grid's tasks carry (joblib pickles a
    memory-mapped array as a reference to its file).

    Written here, before the baseline starts, not by joblib as the tasks are queued: joblib
    writes an array on a thread of its own when the first task that holds it is sent,
    through a copy of the array (``tobytes``), and a copy made while the baseline runs beside
    the grid counts in the baseline's peak memory (tracemalloc traces the process): +0.17 MB,
    the 150 × 150 error kernel matrix, on a loaded machine where the first tasks went out
    late.
    """
    shared: dict[int, Split] = {}
    for split in splits:
        if id(split) not in shared:
            path = os.path.join(folder, f"split-{len(shared)}.joblib")
            joblib.dump(split, path)
            shared[id(split)] = joblib.load(path, mmap_mode="r")
    return shared


def _beside_baseline(exact_rows: Callable[[], list[tuple[int, dict[str, Any]]]],
                     grid: Iterable[tuple[int, dict[str, Any]]],
                     grid_done: threading.Event | None = None,
                     ) -> Iterable[tuple[int, dict[str, Any]]]:
    """The grid's rows (already dispatched to worker processes) and the baseline's, run on a
    thread of this process meanwhile, each yielded as it is done.

    Side by side, not one after the other: the baseline's α path is an eigendecomposition
    on one BLAS thread (memory-bound; ``_exact``), beside its one-thread kernel matrix, and
    the maps' runs fill the other cores. ``grid_done`` is set when the grid's rows are all
    in (or the grid failed or was abandoned): the baseline waits for it before its
    Cholesky factorisation, which then has every core to itself.
    Each run keeps its own thread settings and measurements (the grid's in other
    processes), so the numbers are those of the runs one after the other; only the wall
    times of the two overlap.
    """
    with concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="kernelmaps-compare-baseline") as pool:
        exact = pool.submit(exact_rows)
        reported = False
        try:
            for item in grid:
                yield item
                if not reported and exact.done():
                    yield from exact.result()
                    reported = True
        finally:  # the grid is done (or failed, or abandoned): the baseline may factorise
            if grid_done is not None:
                grid_done.set()
        if not reported:
            yield from exact.result()
