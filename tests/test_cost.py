"""kernelmaps._cost: the one cost model — formulas against known counts, the probe's
bookkeeping on scripted clocks, and estimates against their formulas at a fixed rate.

No test here reads a real clock: how far the formulas are from this machine (the probe
against a product, the factorisation constants, the estimates against timed fits) is
measured by ``python -m benchmarks cost``, where a busy machine makes a slow run, not a
red test.
"""

import numpy as np
import pytest

import kernelmaps as km
from kernelmaps import _cost
from kernelmaps.models import KernelRidge, estimate_fit_cost


# ----------------------------------------------------------------------------- formulas
def test_formulas_count_the_known_flops():
    n, m, t = 3000, 500, 4
    assert _cost.cholesky_flops(n) * _cost.CHOLESKY_EFFICIENCY == pytest.approx(n**3 / 3)
    assert _cost.eigh_flops(n) == pytest.approx(_cost.EIGH_FLOPS * n**3)
    assert _cost.kernel_matrix_flops(10, 20, 3) == pytest.approx(
        10 * 20 * (2 * 3 + _cost.KERNEL_ENTRY_FLOPS))
    assert _cost.kernel_matrix_flops(10, 20, 3, itemsize=4) == pytest.approx(
        10 * 20 * (2 * 3 + _cost.KERNEL_ENTRY_FLOPS / 2))
    assert _cost.triangular_solve_flops(n, 100) == pytest.approx(
        n * n * 100 / _cost.TRSM_EFFICIENCY)
    assert _cost.preconditioner_flops(m) == pytest.approx(3 * _cost.cholesky_flops(m))
    assert _cost.feature_ridge_flops(n, m, t, select_alpha=True) == pytest.approx(
        _cost.alpha_path_flops(n, m, t, _cost.PATH_ALPHAS))
    assert _cost.feature_ridge_flops(n, m, t, select_alpha=False) == pytest.approx(
        2 * n * m * m + 2 * n * m * t + _cost.cholesky_flops(m))


def test_the_alpha_path_formula():
    # Spectrum (syrk n·D·r + projections 2·n·D·r + eigh of r, r = min(n, D)), the per-α
    # products 2·n·r·A·(t + 1) at their efficiency, the per-entry work n·t·A.
    n, D, t, A = 5000, 400, 10, 37
    spectrum = _cost.ALPHA_PATH_SPECTRUM_FACTOR * (3 * n * D * D + _cost.eigh_flops(D))
    products = 2 * n * D * A * (t + 1) / _cost.ALPHA_PATH_PRODUCT_EFFICIENCY
    entries = _cost.ALPHA_PATH_ENTRY_FLOPS * n * t * A
    assert _cost.alpha_path_flops(n, D, t, A) == pytest.approx(spectrum + products + entries)
    # Fewer rows than features: the n × n side is decomposed (r = n).
    small = _cost.alpha_path_flops(100, D, 1, A)
    assert small == pytest.approx(
        _cost.ALPHA_PATH_SPECTRUM_FACTOR * (3 * 100 * D * 100 + _cost.eigh_flops(100))
        + 2 * 100 * 100 * A * 2 / _cost.ALPHA_PATH_PRODUCT_EFFICIENCY
        + _cost.ALPHA_PATH_ENTRY_FLOPS * 100 * A)
    # On a kernel matrix: the n × n eigendecomposition, no Gram matrix.
    assert _cost.alpha_path_flops(n, 0, t, A, kernel=True) == pytest.approx(
        _cost.eigh_flops(n) + 2 * n * n * A * (t + 1) / _cost.ALPHA_PATH_PRODUCT_EFFICIENCY
        + entries)
    # Linear in the α grid's size and in the outputs beyond the spectrum; the default grid
    # is the ridge core's.
    from kernelmaps._ridge import DEFAULT_ALPHAS

    assert DEFAULT_ALPHAS.size == _cost.PATH_ALPHAS
    assert (_cost.alpha_path_flops(n, D, t, 2 * A) - spectrum
            == pytest.approx(2 * (products + entries)))
    # For 10 outputs at small D the per-α work dominates: 25 features on 20,000 rows cost
    # far more than the Gram matrix and eigendecomposition the formula once counted alone
    # (measured 0.27 s there against 0.001 s by the old formula).
    assert _cost.alpha_path_flops(20000, 25, 10) > 100 * (2 * 20000 * 25**2
                                                          + _cost.eigh_flops(25))


def test_the_alpha_path_fixed_cost_counts_its_groups():
    # The path scores its rows in blocks of ALPHA_PATH_GROUP_ELEMENTS fitted values (the ridge
    # core's chunk, every α at once): digits (1,347 rows, 10 classes, 37 α) 354 rows a block,
    # 4 blocks; 20,000 rows 57 blocks; a small set one block; many outputs at least 16 rows.
    from kernelmaps._ridge import path

    assert path._CHUNK_ELEMENTS == _cost.ALPHA_PATH_GROUP_ELEMENTS
    for n, t in [(1347, 10), (20000, 10), (133, 3), (5000, 1000)]:
        blocks = path._row_blocks(n, t * 37)
        assert _cost.alpha_path_groups(n, t, 37) == len(blocks)
    assert _cost.alpha_path_groups(1347, 10, 37) == 4
    assert _cost.alpha_path_groups(133, 3, 37) == 1
    assert _cost.alpha_path_fixed_seconds(1347, 10) == pytest.approx(
        4 * _cost.ALPHA_PATH_GROUP_S)


def test_map_and_ridge_flops():
    n, d, D, t = 3000, 784, 400, 10
    read = n * d * _cost.INPUT_ENTRY_FLOPS
    assert _cost.feature_map_flops(n, d, D) == pytest.approx(
        n * D * (2 * d + _cost.FEATURE_ENTRY_FLOPS) + read)
    # A landmark map: kernel values against the D landmarks, times the D × D normalisation;
    # its fit: the landmarks' kernel matrix and its eigendecomposition.
    assert _cost.feature_map_flops(n, d, D, landmarks=True) == pytest.approx(
        _cost.kernel_matrix_flops(n, D, d) + 2 * n * D * D + read)
    assert _cost.feature_map_fit_flops(d, D, landmarks=True) == pytest.approx(
        _cost.kernel_matrix_flops(D, D, d) + _cost.eigh_flops(D))
    assert _cost.feature_map_fit_flops(d, D, landmarks=False) == 0
    for landmarks in (False, True):
        assert _cost.map_ridge_flops(n, d, D, t, landmarks=landmarks, other_rows=500) == \
            pytest.approx(_cost.feature_map_fit_flops(d, D, landmarks)
                          + _cost.feature_map_flops(n + 500, d, D, landmarks)
                          + _cost.alpha_path_flops(n, D, t))


def test_an_all_rows_fit_is_priced_by_its_own_arithmetic():
    # Issue 34: tune's fit on all rows (features streamed into ridge's sums, α chosen on
    # held-out rows by one Cholesky factorisation per α tried) was priced as the
    # leave-one-out path on all rows' features (an n × D eigen-path it never runs).
    n, d, D, t, m = 20000, 784, 4096, 10, 5000
    solves = _cost.HOLDOUT_SOLVES * (_cost.cholesky_flops(D)
                                     + 2 * _cost.triangular_solve_flops(D, t) + 2 * m * D * t)
    sums = n * D * D + 2 * n * D * t + 2 * m * D * D
    assert _cost.streamed_ridge_flops(n, d, D, t, m) == pytest.approx(
        _cost.feature_map_flops(n, d, D) + sums + solves)
    # A landmark map: its fit, the kernel columns only, the normalisation on the sums
    # (N G Nᵀ) and on the held-out rows — not 2·n·D² on every row.
    columns = (_cost.kernel_matrix_flops(n, D, d) + n * d * _cost.INPUT_ENTRY_FLOPS
               + 4 * D**3 + 2 * m * D * D)
    assert _cost.streamed_ridge_flops(n, d, D, t, m, landmarks=True) == pytest.approx(
        _cost.feature_map_fit_flops(d, D, True) + columns + sums + solves)
    # The leave-one-out price of the same fit was 1.5× and more of it.
    loo = _cost.map_ridge_flops(n, d, D, t, landmarks=True)
    assert loo > 1.5 * _cost.streamed_ridge_flops(n, d, D, t, m, landmarks=True)


def test_tunes_all_rows_budget_is_the_streamed_formula(fixed_rate):
    from kernelmaps.tuning import _large

    n, d, D, t = 20000, 784, 2048, 10
    held = min(_large.HOLDOUT_ROWS, n // 4)
    assert _large.all_rows_seconds(n, d, D, t, landmarks=True) == pytest.approx(
        _cost.streamed_ridge_flops(n, d, D, t, held, landmarks=True) / RATE
        + _cost.RUN_OVERHEAD_S)


def test_the_load_slowdown_is_the_probes_cpu_over_wall_rate(monkeypatch):
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (1e10, 2.5e10))
    assert _cost.load_slowdown(1) == pytest.approx(2.5)
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (3e10, 2.5e10))
    assert _cost.load_slowdown(1) == 1.0  # never below 1
    # Workers of one's own share the cores with what the probe saw: on 2 cores a probe at
    # 2.5× saw 4 threads beside it; 2 workers then get 2/6 of a core each.
    monkeypatch.setattr(_cost, "available_cores", lambda: 2)
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (1e10, 2.5e10))
    assert _cost.load_slowdown(1, workers=2) == pytest.approx(3.0)
    # An idle machine: as many workers as cores run at full speed.
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (2e10, 2e10))
    assert _cost.load_slowdown(1, workers=2) == 1.0
    assert _cost.load_slowdown(1, workers=4) == pytest.approx(2.0)


def test_the_exact_baseline_with_alpha_on_a_subsample():
    # α from the exact LOO path on m rows (their own m × m kernel matrix, computed beside
    # the n × n one, and the eigh of m), then one Cholesky at the full n.
    n, n_test, d, t, m = 15000, 5000, 16, 26, 2000
    cost = _cost.exact_baseline_cost(n, n_test, d, t, closed_form=True, select_alpha=True,
                                     m=m)
    assert cost.factorisation == "eigendecomposition + Cholesky"
    assert cost.factorisation_flops == pytest.approx(
        _cost.kernel_matrix_flops(m, m, d) + _cost.alpha_path_flops(m, 0, t, kernel=True)
        + _cost.cholesky_flops(n) + 2 * n * n * t)
    assert cost.kernel_matrix_flops == pytest.approx(_cost.kernel_matrix_flops(n, n, d))
    assert cost.test_rows_flops == pytest.approx(
        _cost.kernel_matrix_flops(n_test, n, d) + 2 * n * n_test * t)
    # Memory: K (8 n²), two blocks of kernel rows, the path's m × m arrays: under the
    # issue's 2 n² doubles; the full-n path (m=None) holds its arrays at n × n (measured
    # 2.76 n² doubles in all: the matrix decomposed in place, the projections per block).
    path = _cost.ALPHA_PATH_ARRAYS * 8
    assert cost.memory_bytes == 8 * n * n + 2 * 8 * _cost.BLOCK_ROWS * n + path * m * m
    assert cost.memory_bytes < 2 * 8 * n * n
    full = _cost.exact_baseline_cost(n, n_test, d, t, closed_form=True, select_alpha=True)
    assert full.factorisation == "eigendecomposition"
    assert full.memory_bytes - cost.memory_bytes == pytest.approx(path * (n * n - m * m))
    assert 2.8 < full.memory_bytes / (8 * n * n) < 3.0
    # The numbers: the full path is ~9 n³ = 3e13 at n = 15,000, 20× a Cholesky.
    assert 2.5e13 < full.factorisation_flops < 3.5e13
    assert full.factorisation_flops > 20 * _cost.cholesky_flops(n) * 0.7
    fixed = _cost.exact_baseline_cost(n, n_test, d, t, closed_form=True)
    assert fixed.factorisation == "Cholesky" and fixed.memory_bytes < cost.memory_bytes


def test_the_baseline_grows_as_n_cubed_in_time_and_n_squared_in_memory():
    small = _cost.exact_baseline_cost(10000, 100, 10, 3, closed_form=True, threads=1)
    large = _cost.exact_baseline_cost(20000, 100, 10, 3, closed_form=True, threads=1)
    assert 3.3 < large.memory_bytes / small.memory_bytes < 4.0
    assert 7.0 < large.flops / small.flops < 8.1
    features = _cost.exact_baseline_cost(10000, 100, 10, 3, closed_form=False, threads=1)
    assert features.memory_bytes > 2.5 * small.memory_bytes
    assert small.seconds == pytest.approx(small.flops / _cost.gemm_rate(1))
    assert small.as_dict()["seconds"] == pytest.approx(
        sum(small.as_dict()[key] for key in ("kernel_matrix_s", "factorisation_s",
                                             "test_rows_s")))


# ----------------------------------------------------------------------------- the probe
class _Clocks:
    """``time`` for :mod:`kernelmaps._cost`: each clock returns its readings in turn."""

    def __init__(self, wall, cpu):
        self._wall, self._cpu = iter(wall), iter(cpu)

    def perf_counter(self):
        return next(self._wall)

    def process_time(self):
        return next(self._cpu)


def test_the_probe_is_the_mean_wall_and_the_best_cpu_of_its_products(monkeypatch):
    # Three products timed 0.3, 0.1 and 0.2 s apart (wall) and 0.5, 0.16, 0.3 s of CPU time
    # on two threads: the wall rate is their mean (a descheduled slice is the load a caller
    # waits with), the CPU rate the best, per thread (CPU time is not stretched by the load).
    _cost.remeasure_rates()
    monkeypatch.setattr(_cost, "time", _Clocks(wall=[0, 0.3, 1, 1.1, 2, 2.2],
                                               cpu=[0, 0.5, 1, 1.16, 2, 2.3]))
    flops = 2.0 * _cost.PROBE_SIZE**3
    try:
        assert _cost.gemm_rate(2) == pytest.approx(flops / 0.2)
        # Measured once per thread count: the clocks (now exhausted) are not read again.
        assert _cost.gemm_rate(2, clock="cpu") == pytest.approx(flops / (0.16 / 2))
        assert _cost.seconds(3 * flops, threads=2) == pytest.approx(0.6)
        # Until asked to measure again: then the next call probes the clocks afresh.
        monkeypatch.setattr(_cost, "time", _Clocks(wall=[0, 0.5, 1, 1.5, 2, 2.5],
                                                   cpu=[0, 1, 1, 2, 2, 3]))
        assert _cost.gemm_rate(2) == pytest.approx(flops / 0.2)
        _cost.remeasure_rates()
        assert _cost.gemm_rate(2) == pytest.approx(flops / 0.5)
    finally:
        _cost.remeasure_rates()
    with pytest.raises(ValueError, match="clock must be"):
        _cost.gemm_rate(1, clock="user")


# ----------------------------------------------------------------------------- estimates
#: A fixed probe rate (flop/s per thread) for the estimates below: they are formulas of
#: their inputs at the measured rate, tested here at a known one (the rates measured on this
#: machine against fits timed here: ``python -m benchmarks cost``).
RATE = 1e10


@pytest.fixture
def fixed_rate(monkeypatch):
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (RATE * threads, RATE))
    with km.config_context(n_threads=1):
        yield


def test_the_estimate_of_an_exact_fit_counts_its_kernel_and_cholesky(fixed_rate):
    n, d, t = 1500, 8, 3
    X = np.random.RandomState(0).normal(size=(n, d))
    cost = estimate_fit_cost(KernelRidge(kernel="rbf", gamma=0.1, solver="exact"), X,
                             n_targets=t)
    assert (cost.solver, cost.path, cost.iteration_s, cost.cache_bytes) == \
        ("exact", "direct", 0.0, 0)
    assert cost.first_pass_s == pytest.approx(
        n * n * (2 * d + _cost.KERNEL_ENTRY_FLOPS) / RATE)
    assert cost.factorisation_s == pytest.approx(
        (n**3 / 3 / _cost.CHOLESKY_EFFICIENCY + 2 * n * n * t) / RATE)
    # The float64 kernel matrix, factorised in place; float32 data computes it in float32
    # first (one more n × n array). _cost.exact_fit_memory is also solver="auto"'s budget.
    assert cost.memory_bytes == 8 * n * n == _cost.exact_fit_memory(n)
    cost32 = estimate_fit_cost(KernelRidge(kernel="rbf", gamma=0.1, solver="exact"),
                               X.astype(np.float32))
    assert cost32.memory_bytes == 12 * n * n
    assert cost.seconds(50) == cost.first_pass_s + cost.factorisation_s


@pytest.mark.parametrize(("budget_rows", "path"), [(20000, "cached"), (5000, "partly cached"),
                                                   (0, "recompute")])
def test_the_estimate_of_a_falkon_fit_counts_its_passes(fixed_rate, budget_rows, path):
    n, d, M = 20000, 8, 300
    X = np.random.RandomState(0).normal(size=(n, d)).astype(np.float32)
    model = KernelRidge(kernel="rbf", gamma=0.1, solver="falkon", n_components=M)
    with km.config_context(kernel_cache_bytes=budget_rows * M * 4):
        cost = estimate_fit_cost(model, X)
    assert (cost.solver, cost.path, cost.cache_bytes) == ("nystrom", path, budget_rows * M * 4)
    assert cost.first_pass_s == pytest.approx(
        _cost.nystrom_first_pass_flops(n, M, d, 1, 4) / RATE)
    assert cost.factorisation_s == pytest.approx(
        (_cost.kernel_matrix_flops(M, M, d, 4) + _cost.preconditioner_flops(M)) / RATE)
    assert cost.iteration_s == pytest.approx(
        _cost.cg_iteration_flops(budget_rows, n - budget_rows, M, d, 1, 4) / RATE)
    assert cost.seconds(20) == pytest.approx(
        cost.first_pass_s + cost.factorisation_s + 20 * cost.iteration_s)


def test_recomputing_the_kernel_blocks_costs_more_per_iteration():
    cached = _cost.cg_iteration_flops(20000, 0, 300, 8, 1, 4)
    recompute = _cost.cg_iteration_flops(0, 20000, 300, 8, 1, 4)
    # Recomputing a block adds its kernel values (2·d + the entry's passes) to the sweep.
    assert recompute - cached == pytest.approx(_cost.kernel_matrix_flops(20000, 300, 8, 4))
    assert recompute > 2 * cached


def test_exact_fit_fits_by_the_memory_and_the_time_budget(fixed_rate, monkeypatch):
    # solver="auto"'s rule (issue 34): exact while the fit fits both budgets.
    monkeypatch.setattr(_cost, "available_memory", lambda: 1e12)
    n, d = 6000, 5
    decision = _cost.exact_fit_fits(n, d)
    assert decision.fits and decision.memory_bytes == 8 * n * n
    assert decision.seconds == pytest.approx(_cost.exact_fit_flops(n, d, 1) / RATE)
    monkeypatch.setattr(_cost, "EXACT_FIT_MAX_SECONDS", 0.5 * decision.seconds)
    over_time = _cost.exact_fit_fits(n, d)
    assert not over_time.fits and "more than" in over_time.reason and " s)" in over_time.reason
    monkeypatch.setattr(_cost, "available_memory", lambda: 1.9 * 8 * n * n)
    monkeypatch.setattr(_cost, "EXACT_FIT_MAX_SECONDS", 1e9)
    over_memory = _cost.exact_fit_fits(n, d)
    assert not over_memory.fits and "50% of the memory" in over_memory.reason
    assert _cost.exact_fit_fits(_cost.EXACT_FIT_ALWAYS_SAMPLES, d).fits  # no probe, no check
