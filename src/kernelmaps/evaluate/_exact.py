r"""The exact-kernel baseline of :func:`~kernelmaps.evaluate.compare`, from a Cholesky factor.

The exact finite feature map of a training set :math:`x_1, \dots, x_n` is the Cholesky
factor of its kernel matrix, :math:`K = LL^\top`:

.. math::

    z(x_i) = L_{i,:}, \qquad z(x) = L^{-1}\,[k(x_1, x), \dots, k(x_n, x)]^\top,

so that :math:`z(x)\cdot z(y) = k(x, y)` whenever :math:`x` or :math:`y` is a training row
(and :math:`k(x, X)K^{-1}k(X, y)`, the projection onto the span of the training points, for
two test rows — which is all a linear model fitted on the training rows can see, by the
representer theorem). Any linear model on :math:`z` is therefore the kernel machine with the
same loss and regulariser. It costs :math:`n^3/3` flops for the factor (against about
:math:`9n^3` for the eigendecomposition of Nyström with every row as a landmark) and
:math:`n^2 n_\text{test}` for the test rows; :math:`K` is built in blocks of rows into one
float64 array that is factorised in place (LAPACK ``potrf``), and the test rows are mapped
in blocks. What it will cost, before it runs, is priced by the one cost model
(``kernelmaps._cost.exact_baseline_cost``: the same numbers decide ``exact="auto"`` and are
printed to the user).

For ridge models (``Ridge``/``RidgeClassifier`` with an intercept) the features are not
formed at all: ridge on :math:`z` with an unpenalised intercept is kernel ridge regression
on the centred kernel, :math:`\beta = (HKH + \alpha I)^{-1}(Y - \bar Y)` with
:math:`H = I - \tfrac1n\mathbf 1\mathbf 1^\top`, predicting
:math:`f(x) = (k(x, X) - \bar k(x) - \bar k_X + \bar K)\,\beta + \bar Y` — the same
minimiser, for one :math:`n \times n` array and one Cholesky factorisation
(``closed_form_alpha`` decides when this applies). With α chosen (:class:`SelectAlpha`), α
is the best by exact leave-one-out on ``m = alpha_subsample_rows(n)`` training rows — one
``m × m`` eigendecomposition, about :math:`9m^3` flops and :math:`2m^2` doubles — and the
``n × n`` matrix is then factorised once at that α, unchanged (``m = n`` up to 2,000 rows:
the path's own solution, no Cholesky). The solves, paths and label decoding are the ridge
core's (:mod:`kernelmaps._ridge`).

**Jitter.** :math:`K` is factorised as it is; if it is numerically singular (duplicate
rows, a very smooth kernel) a jitter :math:`\delta I` is added, starting at
:math:`n\,\epsilon\,\overline{\operatorname{diag} K}` (:math:`\epsilon` the float64 machine
epsilon) and growing ×100 until the factorisation succeeds
(:func:`kernelmaps._linalg.cholesky_in_place`); the jitter used is stated in the
row's ``notes``. Its effect on :math:`ZZ^\top` is :math:`\delta I`, at the rounding level.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.metrics import r2_score

from kernelmaps import _cost
from kernelmaps._config import available_memory as _available_memory
from kernelmaps._config import config_context, get_config, resolve_n_threads
from kernelmaps._cost import BLOCK_ROWS
from kernelmaps._engine import single_threaded_blas, written_once_buffer
from kernelmaps._ridge import (
    KernelAlphaPath,
    alpha_subsample_rows,
    centre_kernel_in_place,
    centred_dual_in_place,
    encode_targets,
    kernel_alpha_path,
    labels_from_scores,
    lower_factor_in_place,
    subsample_kernel_alpha,
)
from kernelmaps.evaluate._alpha import SelectAlpha, test_losses
from kernelmaps.evaluate._splits import Split
from kernelmaps.kernels import Kernel

__all__ = ["ALPHA_PATH_PHASE", "BLOCK_ROWS", "PHASES", "ExactRun", "alpha_phase",
           "available_memory", "baseline_cost", "closed_form_alpha", "run_exact"]

#: The phases of the baseline, in order, as reported to ``compare(on_phase=...)``.
PHASES = ("exact: kernel matrix", "exact: Cholesky", "exact: test rows", "exact: linear model")
#: The phase of choosing α (:class:`SelectAlpha`) by exact leave-one-out on ``m`` training
#: rows (:func:`alpha_phase` fills in ``m``): one m × m eigendecomposition. With every row
#: (n ≤ 2,000) it replaces the Cholesky factorisation; on a subsample the Cholesky follows.
ALPHA_PATH_PHASE = "exact: α by leave-one-out on {m} rows"


@dataclass
class ExactRun:
    """What :func:`run_exact` measured."""

    score: float
    error_features: np.ndarray | None  # rows of z for the error sample (None: closed form)
    fit_time_s: float
    transform_time_s: float
    model_time_s: float
    notes: list[str]
    alpha: float  # the ridge α used (chosen or fixed); NaN for other models
    losses: np.ndarray  # per test row (see _alpha.test_losses)


def closed_form_alpha(model: Any) -> float | None:
    """``alpha`` when ``model`` is a ridge model the closed form reproduces, else None.

    That is a :class:`~sklearn.linear_model.Ridge` or
    :class:`~sklearn.linear_model.RidgeClassifier` (exactly those classes) with an
    intercept, no positivity constraint and no class weights: its minimiser on the exact
    features is the centred kernel ridge solution.
    """
    if type(model) not in (Ridge, RidgeClassifier):
        return None
    if not model.fit_intercept or model.positive or getattr(model, "class_weight", None):
        return None
    return float(model.alpha)


def _train_kernel(kernel: Kernel, X: Any) -> np.ndarray:
    """:math:`K = k(X, X)` as one C-contiguous float64 array: float64 rows written straight
    into it (the engine's row blocks, no temporary of ``BLOCK_ROWS × n``: what lets the α path
    run beside it without raising the peak), other dtypes converted in blocks of rows.

    The array is a :func:`~kernelmaps._engine.written_once_buffer` (base pages, not the
    transparent huge pages NumPy advises): it is written once here and then factorised in
    place, and its first touch is most of its build. Measured at 15,000 training rows (the
    main job at scale: a 1.8 GB matrix; fresh processes, alternated, load 0.7, the 2-core
    development VM): the build on one thread 4.27-4.37 s in huge pages against 1.18-1.22 s
    in base pages, the Cholesky factorisation after it on two 9.47-9.64 s against
    9.61-9.84 s (TLB misses)."""
    n = X.shape[0]
    K = written_once_buffer((n, n), np.float64)
    if X.dtype == np.float64:
        return kernel(X, X, out=K)  # Y given: k(x_i, x_j) as every other block computes it
    for start in range(0, n, BLOCK_ROWS):
        K[start:start + BLOCK_ROWS] = kernel(X[start:start + BLOCK_ROWS], X)
    return K


def _alpha_path_beside(kernel: Kernel, split: Split, alphas: np.ndarray, task: str,
                       m: int) -> concurrent.futures.Future:
    """Start choosing α on ``m`` training rows (:func:`~kernelmaps._ridge.
    subsample_kernel_alpha`) on a thread of its own, from the rows' own kernel matrix, so
    that the ``n × n`` one is built meanwhile; both on one thread (BLAS and the engine).

    The ``m × m`` eigendecomposition is memory-bound BLAS-2 work on one thread (see
    :func:`_closed_form`); built after the kernel matrix it kept the second core idle for its
    whole time (3.6 s of 29 s of CPU at n = 15,000, m = 3,000 on 2 cores)."""
    settings = {**get_config(), "n_threads": 1}
    X, y = split.X_train, np.asarray(split.y_train)

    def submatrix(rows: np.ndarray) -> np.ndarray:
        return np.asarray(kernel(X[rows], X[rows]), dtype=np.float64)

    def work() -> KernelAlphaPath:
        with single_threaded_blas(), config_context(**settings):
            path, _ = subsample_kernel_alpha(submatrix, y, alphas=alphas, task=task,
                                             n_rows=m)
        return path

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kernelmaps-alpha")
    try:
        return pool.submit(work)
    finally:
        pool.shutdown(wait=False)  # the thread ends when the path is done


def _wait(before_factorising: Callable[[], None] | None) -> float:
    """Call ``before_factorising`` (if any); the seconds it took."""
    if before_factorising is None:
        return 0.0
    start = time.perf_counter()
    before_factorising()
    return time.perf_counter() - start


def _timed(on_phase: Callable[[str], None] | None, phase: str) -> float:
    if on_phase is not None:
        on_phase(phase)
    return time.perf_counter()


def run_exact(kernel: Kernel, split: Split, model_factory: Callable[[], Any],
              on_phase: Callable[[str], None] | None = None,
              before_factorising: Callable[[], None] | None = None) -> ExactRun:
    """Fit the linear model on the exact kernel of ``split`` and score it (see the module).

    ``before_factorising``, if given, is called (and waited for) just before the ``n × n``
    Cholesky factorisation: ``compare`` holds it there until its maps' runs are done, so
    that the factorisation gets the cores to itself (see ``_runs.run_all``); the time it
    waits is not counted in the baseline's times.
    """
    notes: list[str] = []
    model = model_factory()
    alpha = closed_form_alpha(model)
    alphas = (model_factory.alphas if alpha is not None
              and isinstance(model_factory, SelectAlpha) else None)
    n = split.X_train.shape[0]
    pending = None
    start = _timed(on_phase, PHASES[0])
    # Beside the n × n build only with a second thread to run on (compare's thread cap:
    # --threads 1 keeps one busy); else the path follows on a subsample of K, as before.
    if alphas is not None and alpha_subsample_rows(n) < n and resolve_n_threads() >= 2:
        task = "classification" if isinstance(model, RidgeClassifier) else "regression"
        pending = _alpha_path_beside(kernel, split, alphas, task, alpha_subsample_rows(n))
        with single_threaded_blas(), config_context(n_threads=1):
            K = _train_kernel(kernel, split.X_train)
    else:
        K = _train_kernel(kernel, split.X_train)
    if alpha is not None:
        kernel_time = time.perf_counter() - start
        # Handed over in a list, so that no frame of this one keeps the n × n matrix alive
        # once the solve is done: the test rows' blocks would come on top of it (the main
        # job's peak RSS, 2.25 GB, was K beside them).
        held = [K]
        del K
        return _closed_form(held, kernel, split, model, alpha, alphas, kernel_time, on_phase,
                            notes, pending, before_factorising)
    waited = _wait(before_factorising)
    _timed(on_phase, PHASES[1])
    L = lower_factor_in_place(K, 0.0, notes)
    del K  # L is K's memory
    for begin in range(0, n, BLOCK_ROWS):  # zero the strict upper triangle of L
        stop = min(begin + BLOCK_ROWS, n)
        L[begin:stop, stop:] = 0.0
        block = L[begin:stop, begin:stop]
        block[np.triu_indices(stop - begin, 1)] = 0.0
    fitted = _timed(on_phase, PHASES[2])
    X_test = split.X_test
    Z_test = np.empty((X_test.shape[0], n), dtype=np.float64)
    for begin in range(0, X_test.shape[0], BLOCK_ROWS):
        block = np.asarray(kernel(X_test[begin:begin + BLOCK_ROWS], split.X_train),
                           dtype=np.float64).T
        Z_test[begin:begin + BLOCK_ROWS] = scipy.linalg.solve_triangular(
            L, block, lower=True, overwrite_b=True, check_finite=False).T
    transformed = _timed(on_phase, PHASES[3])
    model.fit(L, split.y_train)
    score = float(model.score(Z_test, split.y_test))
    done = time.perf_counter()
    task = "classification" if hasattr(model, "classes_") else "regression"
    losses = test_losses(split.y_test, model.predict(Z_test), task)
    return ExactRun(score, L[split.error_rows], fitted - start - waited, transformed - fitted,
                    done - transformed, notes, float("nan"), losses)


def alpha_phase(m: int) -> str:
    """The phase name of choosing α by leave-one-out on ``m`` training rows."""
    return ALPHA_PATH_PHASE.format(m=m)


def _closed_form(held: list[np.ndarray], kernel: Kernel, split: Split, model: Any,
                 alpha: float, alphas: np.ndarray | None, kernel_time: float,
                 on_phase: Callable[[str], None] | None, notes: list[str],
                 pending: concurrent.futures.Future | None = None,
                 before_factorising: Callable[[], None] | None = None) -> ExactRun:
    """Ridge with an intercept on the exact features, solved as centred kernel ridge: at
    ``alpha`` by one Cholesky factorisation, or — ``alphas`` given — at the α of the grid
    with the best leave-one-out score on ``m`` training rows
    (:func:`~kernelmaps._ridge.alpha_subsample_rows`: all of them up to 2,000), from one
    ``m × m`` eigendecomposition, then (``m < n``) one Cholesky factorisation of all ``n``
    rows at that α, unchanged (the rule and its measurement:
    :func:`~kernelmaps._ridge.alpha_subsample_rows`).

    ``held``: a list holding the kernel matrix, the only reference to it (taken out, and
    the matrix freed after the solve). ``pending``: the path on ``m < n`` rows, already
    started beside the kernel matrix (:func:`_alpha_path_beside`); this waits for it.

    Times: ``fit`` the kernel matrix, ``model`` the centring, α path (what is left of it
    once the kernel matrix is built), factorisation and solve, ``transform`` the test rows'
    kernel values and predictions.
    """
    solve_start = time.perf_counter()
    K = held.pop()  # the only reference left: freed as soon as it is deleted below
    task = "classification" if isinstance(model, RidgeClassifier) else "regression"
    n = K.shape[0]
    Y, classes = encode_targets(split.y_train, n, task, rows_of="X_train")
    Y_mean = Y.mean(axis=0)
    beta = None
    waited = 0.0
    if alphas is not None:
        m = alpha_subsample_rows(n)
        _timed(on_phase, alpha_phase(m))
        # The eigendecomposition on one BLAS thread: its tridiagonal reduction is BLAS-2,
        # bound by memory, so a second thread gains little on an idle machine and costs a
        # lot on a busy one (m = 3,000 on 2 cores at load 11: 71 s of wall time, 26 s of CPU,
        # on two threads; 14-17 s, 5.6 s of CPU, on one); the Cholesky factorisation below,
        # BLAS-3, gets them all.
        with single_threaded_blas():
            if pending is not None:
                path = pending.result()
            elif m < n:
                path, _ = subsample_kernel_alpha(K, split.y_train, alphas=alphas, task=task,
                                                 n_rows=m)
            else:  # every row: the path's own dual solution, from K's memory
                row_means = centre_kernel_in_place(K)
                path = kernel_alpha_path(K, split.y_train, alphas=alphas, task=task,
                                         overwrite=True)
                del K
                beta = path.dual_coef
        alpha = path.alpha
        if m < n:
            notes.append(f"exact baseline: α = {alpha:.3g} chosen by leave-one-out on {m} "
                         f"of the {n} training rows (then one Cholesky factorisation of "
                         "all of them)")
    if beta is None:
        row_means = centre_kernel_in_place(K)
        waited = _wait(before_factorising)
        _timed(on_phase, PHASES[1])
        beta = centred_dual_in_place(K, Y - Y_mean, alpha, notes)
        del K
    fitted = _timed(on_phase, PHASES[2])
    X_test = split.X_test
    predictions = np.empty((X_test.shape[0], Y.shape[1]), dtype=np.float64)
    for begin in range(0, X_test.shape[0], BLOCK_ROWS):
        block = np.asarray(kernel(X_test[begin:begin + BLOCK_ROWS], split.X_train),
                           dtype=np.float64)
        # k(x, x_j) - r_j - mean_j k(x, x_j) + g: the row mean of k - r is that mean - g.
        block -= row_means[None, :]
        block -= block.mean(axis=1, keepdims=True)
        predictions[begin:begin + BLOCK_ROWS] = block @ beta + Y_mean
    if task == "classification":
        decided = labels_from_scores(classes, predictions)
    else:
        decided = predictions[:, 0]
    losses = test_losses(split.y_test, decided, task)
    score = (1.0 - float(losses.mean()) if task == "classification"
             else float(r2_score(split.y_test, decided)))
    done = time.perf_counter()
    return ExactRun(score, None, kernel_time, done - fitted, fitted - solve_start - waited, notes,
                    float(alpha), losses)


def baseline_cost(n_train: int, n_test: int, n_features: int, n_outputs: int, *,
                  closed_form: bool, select_alpha: bool, threads: int) -> _cost.ExactCost:
    """The cost of :func:`run_exact` as it will run: the cost model's
    :func:`~kernelmaps._cost.exact_baseline_cost` with α chosen on the rows
    :func:`~kernelmaps._ridge.alpha_subsample_rows` gives (the path on all rows, and no
    Cholesky, when that is every row). The one place the baseline's algorithm meets its
    price: ``exact="auto"``'s decision, the printed estimate and the worker count use it."""
    m = alpha_subsample_rows(n_train) if closed_form and select_alpha else None
    return _cost.exact_baseline_cost(
        n_train, n_test, n_features, n_outputs, closed_form=closed_form,
        select_alpha=select_alpha, m=None if m is None or m >= n_train else m,
        threads=threads)


def available_memory() -> float:
    """Bytes of memory available now (:func:`kernelmaps._config.available_memory`)."""
    return _available_memory()
