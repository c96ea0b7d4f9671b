"""The cost model (:mod:`kernelmaps._cost`) against this machine, and tune's time budget.

``python -m benchmarks cost [--quick]``

The timing side of ``tests/test_cost.py`` and ``tests/tuning/test_tune.py`` (which test the
formulas and the budget's bookkeeping on scripted clocks, never on a real one): each row is a
time the cost model estimates beside the time measured here on one thread, in CPU seconds on
both sides (the probe's ``clock="cpu"`` rate against the process's CPU time, so time spent
preempted by other processes counts in neither), and their ratio. A ratio outside 1/3…3 is
flagged: a formula off by an order (an n × n eigendecomposition counted as a Cholesky
factorisation was 23× off; a missing kernel matrix or CG sweep, 2-10×). The last row is
:func:`kernelmaps.tuning.tune` with ``time_budget``: its elapsed (wall) time over the budget,
which should stay under 1.2 (the issue's target), with the load average beside it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

import kernelmaps as km
from kernelmaps import _cost
from kernelmaps.models import KernelRidge, estimate_fit_cost
from kernelmaps.tuning import tune

#: Ratios of estimate to measurement outside 1/FACTOR … FACTOR are flagged.
FACTOR = 3.0


def _best_time(fn, repeats: int = 3) -> float:
    """The least CPU time (seconds of this process) of ``repeats`` calls of ``fn``."""
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _cpu(estimate: float) -> float:
    """A cost-model estimate (wall-clock rate) in CPU seconds of one thread."""
    return estimate * _cost.gemm_rate(1) / _cost.gemm_rate(1, clock="cpu")


def rows(quick: bool) -> list[tuple[str, float, float]]:
    """``(case, estimated CPU s, measured CPU s)`` for each calibrated formula."""
    rng = np.random.default_rng(0)
    out = []
    a = rng.standard_normal((768, 768))
    out.append(("probe: 768² product", 2 * 768**3 / _cost.gemm_rate(1, clock="cpu"),
                _best_time(lambda: a @ a)))
    n = 800 if quick else 1200
    B = rng.standard_normal((n, n))
    A = B @ B.T + n * np.eye(n)
    out.append((f"Cholesky n={n}", _cpu(_cost.seconds(_cost.cholesky_flops(n), 1)),
                _best_time(lambda: scipy.linalg.cho_factor(A, check_finite=False))))
    m = n // 2
    out.append((f"eigh n={m}", _cpu(_cost.seconds(_cost.eigh_flops(m), 1)),
                _best_time(lambda: scipy.linalg.eigh(A[:m, :m], driver="evr",
                                                     check_finite=False), repeats=2)))
    state = np.random.RandomState(0)
    n = 1000 if quick else 1500
    X = state.normal(size=(n, 8))
    y = X[:, 0] + 0.1 * state.normal(size=n)
    params = dict(kernel="rbf", gamma=0.1, solver="exact")
    cost = estimate_fit_cost(KernelRidge(**params), X)
    out.append((f"KernelRidge exact n={n}", _cpu(cost.seconds(0)),
                _best_time(lambda: KernelRidge(**params).fit(X, y), repeats=2)))
    n = 5000 if quick else 20000
    X = state.normal(size=(n, 8)).astype(np.float32)
    y = np.sin(X[:, 0]) + 0.1 * state.normal(size=n)
    params = dict(kernel="rbf", gamma=0.1, solver="falkon", n_components=300, random_state=0)
    with km.config_context(kernel_cache_bytes=None):
        cost = estimate_fit_cost(KernelRidge(**params), X)
        iterations = KernelRidge(**params).fit(X, y).fit_info_["iterations"]
        measured = _best_time(lambda: KernelRidge(**params).fit(X, y), repeats=2)
    out.append((f"KernelRidge falkon n={n} M=300", _cpu(cost.seconds(iterations)), measured))
    return out


def budget_row(quick: bool) -> tuple[float, float, str]:
    """tune with a time budget: ``(budget s, elapsed wall s, why it stopped)``."""
    rng = np.random.RandomState(0)
    n = 3000 if quick else 6000
    X = rng.normal(size=(n, 20))
    y = np.sin(X[:, 0] * 2) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    budget = 1.5 if quick else 3.0
    started = time.perf_counter()
    result = tune(X, y, time_budget=budget, search_rows=n // 2, random_state=0)
    return budget, time.perf_counter() - started, result.stopped


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks cost")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; one thread")
    print(f"{'case':<32} {'estimate s':>11} {'measured s':>11} {'ratio':>6}")
    _cost._measured_rate.cache_clear()  # a probe of this moment's load
    with threadpool_limits(1), km.config_context(n_threads=1):
        for case, estimate, measured in rows(args.quick):
            ratio = estimate / max(measured, 1e-9)
            flag = "" if 1 / FACTOR <= ratio <= FACTOR else f"  outside 1/{FACTOR:g}…{FACTOR:g}"
            print(f"{case:<32} {estimate:>11.3f} {measured:>11.3f} {ratio:>6.2f}{flag}")
        budget, elapsed, stopped = budget_row(args.quick)
    print(f"tune time_budget={budget:g} s: elapsed {elapsed:.2f} s = {elapsed / budget:.2f}× "
          f"the budget (target ≤ 1.2; stopped: {stopped})")
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
