"""The block-size rule and a call's plan: blocks for the work and the working set, threads
for the work and the free cores, BLAS's threads inside a block."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import kernelmaps as km
from kernelmaps._engine import _blocks, run_blocks, threads_per_task
from tests._estimators import ENTRIES, one_per_class

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)

F = _blocks.FLOPS_PER_THREAD




def plan(n_rows, flops_per_row, *, n_threads=2, bytes_per_row=8, n_features=4):
    return _blocks.Plan(np.empty((n_rows, n_features)), n_rows, bytes_per_row,
                         flops_per_row, n_threads)


def test_blocks_are_cut_for_the_work_and_the_working_set(free_cores):
    # 10,000 rows of 3.5 threads' work: four blocks, whatever the working set.
    assert plan(10_000, 3.5 * F / 10_000).rows == 2500
    # Much work: 16 blocks at the most for its sake, at least 128 rows each.
    assert plan(10_000, 100 * F / 10_000).rows == 625
    assert plan(1000, 100 * F / 1000).rows == 128
    # Cheap rows, or a large working set: the working-set budget (block_bytes) decides.
    with km.config_context(block_bytes=8192):
        assert plan(10_000, 1.0).rows == 1024
        assert plan(10_000, 100 * F / 10_000, bytes_per_row=16).rows == 512
    # The work per row, when the caller does not give it: per 8 bytes of working set one
    # inner product over the features and element-wise passes (2 · 4 + 300 here).
    assert _blocks.estimated_flops_per_row(np.empty((3, 4)), 16) == 2 * (2 * 4 + 300)


@pytest.mark.parametrize(("work", "n_threads", "free", "expected"), [
    (1.9 * F, 8, 64, 1),   # less than two threads' work: the caller's thread only
    (2.0 * F, 8, 64, 2),
    (5.5 * F, 8, 64, 5),
    (100 * F, 3, 64, 3),   # the thread setting caps
    (100 * F, 8, 2.6, 3),
    # A busy machine, no core free for a second thread: only long work gets one.
    (1.9 * _blocks.FLOPS_PER_THREAD_BUSY, 8, 1.4, 1),
    (2.0 * _blocks.FLOPS_PER_THREAD_BUSY, 8, 1.4, 2),
])
def test_threads_follow_the_work_the_setting_and_the_free_cores(free_cores, work, n_threads,
                                                                free, expected):
    free_cores(free)
    assert plan(100_000, work / 100_000, n_threads=n_threads).threads == expected


def test_threads_never_exceed_the_blocks_or_an_outer_schedulers_cap(free_cores):
    assert plan(300, F, n_threads=8).threads == 3  # 300 rows: blocks of 128, 128 and 44
    with threads_per_task(1):
        assert plan(100_000, F, n_threads=8).threads == 1


@pytest.mark.parametrize(("n_rows", "flops_per_row", "pinned"), [
    (200, 1.0, True),                                    # small work
    (1000, F / 100, True),                               # several blocks
    (100, 2 * km._engine.FLOPS_FOR_BLAS_THREADS / 100, False),  # one large block: BLAS's threads
])
def test_blas_runs_on_one_thread_except_in_one_large_block(free_cores, n_rows, flops_per_row,
                                                           pinned):
    assert plan(n_rows, flops_per_row).single_threaded_blas is pinned
    with threads_per_task(1):  # inside an outer scheduler's task (or an engine block)
        assert plan(n_rows, flops_per_row).single_threaded_blas


def _blas_threads() -> set[int]:
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


@pytest.mark.blas_default_threads
def test_small_calls_never_wake_blas_threads(free_cores):
    # The product runs as users run it here (BLAS at its own thread count, see conftest.py).
    default = _blas_threads()
    assert max(default) > 1 or km._config.available_cores() == 1  # the marker lifted the pin
    seen = []

    def block(xb, out):
        seen.append(_blas_threads())
        np.matmul(xb, np.ones((xb.shape[1], out.shape[1])), out=out)

    run_blocks(np.ones((300, 4)), n_out=3, dtype=np.dtype(np.float64), block_fn=block)
    assert seen == [{1}]
    assert _blas_threads() == default  # and the count is given back


@pytest.mark.parametrize("n_rows", [1, 255, 256, 4096, 10_000, 3 * 4096 + 5, 100_000])
@pytest.mark.parametrize(("n_features", "n_targets"), [(30, 1), (1000, 3), (10_000, 1)])
def test_rank_update_blocks_cover_the_rows_once_at_their_floor_and_in_even_counts(
        n_rows, n_features, n_targets):
    P = n_features + 1 + n_targets
    plan = km._engine.rank_update_plan(n_rows, 8 * (2 * P + n_features), 8 * P, 8 * P * P)
    assert plan.starts == list(range(0, n_rows, plan.rows))
    floor = max(256, min(_blocks.RANK_UPDATE_MIN_ROWS, _blocks.RANK_UPDATE_MAX_BYTES // (8 * P)))
    count = len(plan.starts)
    two_lanes = _blocks.LANE_BYTES // (8 * P * P) >= 2
    if count > 1 and two_lanes:
        assert count % 2 == 0  # equal work for two threads
    else:
        assert plan.rows >= min(n_rows, floor)
    assert 1 <= plan.lanes <= min(_blocks.MAX_LANES, count)
    assert (plan.lanes > 1) == (count > 1 and two_lanes)


def test_a_ten_thousand_row_batch_is_four_blocks_of_2500():
    P = 30 + 2
    with km.config_context(block_bytes=64 * 1024):
        plan = km._engine.rank_update_plan(10_000, 8 * (2 * P + 30), 8 * P, 8 * P * P)
    assert (plan.rows, len(plan.starts), plan.lanes) == (2500, 4, 4)
