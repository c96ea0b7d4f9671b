r"""The one cost model: a measured rate, and the flop and byte count of every operation.

Everything in kernelmaps that estimates time or memory before doing the work — whether
:func:`~kernelmaps.evaluate.compare` runs its exact baseline and what it prints about it,
how many worker processes a comparison is worth, what :func:`~kernelmaps.tune` can afford
within its budget, and :func:`~kernelmaps.models.estimate_fit_cost` — uses this module, so
the answers cannot disagree: one probe, one formula per operation.

**The rate.** :func:`gemm_rate` measures the float64 matrix-product rate of this machine at
a given number of BLAS threads (:data:`PROBE_REPEATS` products of
:data:`PROBE_SIZE`\ ² matrices, about 0.2 s on one core of a 2-core Xeon, 33-50 Gflop/s
idle), once per process and thread count, per second of elapsed time (a busy machine makes
it slow, and the estimates of what a caller will wait with it) and per second of CPU time
(the machine's speed, for estimates of work).

**The formulas** count every operation in *GEMM-equivalent flops*: the operation's flops
divided by how efficiently it runs compared with a matrix product, with the efficiency
measured on this project's reference machine (2-core Intel Xeon, OpenBLAS 0.3.31 SkylakeX
kernels, one BLAS thread; the measurement is written beside each constant). Seconds are
GEMM-equivalent flops divided by :func:`gemm_rate`. Memory is counted from the shapes.

This module is private and low level: it imports nothing of kernelmaps above ``_config``
and ``_engine``.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import numpy as np

from kernelmaps._config import available_cores, available_memory, resolve_n_threads
from kernelmaps._engine import blas_controller

__all__ = [
    "ALPHA_PATH_ARRAYS",
    "ALPHA_PATH_ENTRY_FLOPS",
    "ALPHA_PATH_PRODUCT_EFFICIENCY",
    "ALPHA_PATH_SPECTRUM_FACTOR",
    "BLOCK_ROWS",
    "CHOLESKY_EFFICIENCY",
    "EIGH_FLOPS",
    "EXACT_FIT_ALWAYS_SAMPLES",
    "EXACT_FIT_MAX_SECONDS",
    "EXACT_FIT_MEMORY_FRACTION",
    "FEATURE_ENTRY_FLOPS",
    "HOLDOUT_SOLVES",
    "INPUT_ENTRY_FLOPS",
    "KERNEL_ENTRY_FLOPS",
    "PATH_ALPHAS",
    "PROBE_SIZE",
    "REPORT_S",
    "RUN_OVERHEAD_S",
    "ExactCost",
    "ExactFitDecision",
    "alpha_path_flops",
    "cg_iteration_flops",
    "cholesky_flops",
    "eigh_flops",
    "exact_baseline_cost",
    "exact_baseline_memory",
    "exact_fit_fits",
    "exact_fit_flops",
    "exact_fit_memory",
    "feature_map_fit_flops",
    "feature_map_flops",
    "feature_path_memory",
    "feature_ridge_flops",
    "gemm_rate",
    "kernel_matrix_flops",
    "load_slowdown",
    "map_ridge_flops",
    "nystrom_first_pass_flops",
    "preconditioner_flops",
    "remeasure_rates",
    "seconds",
    "streamed_ridge_flops",
    "streamed_ridge_memory",
    "triangular_solve_flops",
]

# ----------------------------------------------------------------------------- the probe
#: Side of the probe's square float64 matrices: large enough for BLAS to reach its rate
#: (512² and 1,024² gave 35 and 33 Gflop/s on one thread here), small enough to take
#: ~65 ms per product on one core.
PROBE_SIZE = 1024
#: Products timed. The CPU rate is the best of them (CPU time is not stretched by other
#: processes; the best leaves out a cold cache); the wall rate is their mean, the rate a
#: caller waits at while other processes share the cores. (It was the best too, which left
#: the load out: on the 2-core machine at load 4-6, the best of three products said 1.4×
#: where compare's two workers ran 3.7× their CPU time.)
PROBE_REPEATS = 3

_probe_lock = threading.Lock()


@functools.cache
def _measured_rate(threads: int) -> tuple[float, float]:
    """``(wall, cpu)`` rates of the probe: flops per second of elapsed time, and per second
    of this process's CPU time per thread."""
    a = np.random.default_rng(0).standard_normal((PROBE_SIZE, PROBE_SIZE))
    wall, cpu = 0.0, np.inf
    with blas_controller().limit(limits=threads, user_api="blas"):
        for _ in range(PROBE_REPEATS):
            start, start_cpu = time.perf_counter(), time.process_time()
            a @ a
            wall += (time.perf_counter() - start) / PROBE_REPEATS
            cpu = min(cpu, (time.process_time() - start_cpu) / threads)
    flops = 2.0 * PROBE_SIZE**3
    return flops / max(wall, 1e-9), flops / max(cpu, 1e-9)


def remeasure_rates() -> None:
    """Forget the rates measured so far, so that the next :func:`gemm_rate` probes again.

    The rates are measured once per process and thread count; a caller that times work
    against the load of the moment (``python -m benchmarks cost``, each row) asks for a
    fresh probe here.

    Returns
    -------
    None
    """
    with _probe_lock:
        _measured_rate.cache_clear()


def gemm_rate(threads: int | None = None, clock: str = "wall") -> float:
    """The float64 matrix-product rate (flop/s) of this machine on ``threads`` BLAS threads.

    ``None``: kernelmaps' ``n_threads`` setting (every core by default). ``clock="wall"``:
    per second of elapsed time, what a caller waits for on the machine as loaded now (the
    exact baseline's decision and estimate, tune's budget, ``estimate_fit_cost``);
    ``"cpu"``: per second of CPU time, the machine's speed whatever other work shares it
    (the single-core work a comparison's worker count is decided on). Both come from the
    same products, measured once per process and thread count (see the module).
    """
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu'; got {clock!r}.")
    threads = resolve_n_threads() if threads is None else max(1, int(threads))
    with _probe_lock:
        wall, cpu = _measured_rate(threads)
    return wall if clock == "wall" else cpu


def seconds(flops: float, threads: int | None = None, clock: str = "wall") -> float:
    """Seconds that ``flops`` GEMM-equivalent flops take at :func:`gemm_rate`."""
    return float(flops) / gemm_rate(threads, clock)


def load_slowdown(threads: int | None = 1, workers: int = 1) -> float:
    """How much longer work takes in elapsed time than in CPU time at the machine's load now.

    The probe's CPU rate over its wall rate on ``threads`` BLAS threads, s, at least 1:
    other processes sharing the cores stretch a run's elapsed time, not its CPU time. With
    ``workers`` one-thread processes of the caller's own side by side (compare's), they
    share the cores with each other too: the probe's thread got 1/s of a core, so about
    c·s − 1 threads (c the cores) were busy beside it when s > 1, and each worker gets
    c / (those + workers) of a core. (``compare`` on 20,000 × 784, 2 workers on 2 cores at
    load 6-7: the probe's s = 2.2 put the runs at 113 s for 175 s measured; this gives 2.7.)
    """
    slowdown = max(gemm_rate(threads, "cpu") / gemm_rate(threads, "wall"), 1.0)
    if workers <= 1:
        return slowdown
    cores = available_cores()
    beside = cores * slowdown - 1.0 if slowdown > 1.0 else 0.0
    return max(slowdown, (beside + workers) / cores)


# ----------------------------------------------------------------------------- constants
#: GEMM-equivalent flops per kernel value beyond the 2·d of its inner products (the
#: element-wise passes: norms, the exponential, the store), per byte of the value's dtype
#: ÷ 8. Measured for the RBF kernel on one thread: 170-220 per float64 value (n = 4,000 ×
#: 4,000, 20,000 × 500 and 20,000 × 2,000, d = 5-100), 83-95 per float32 value; load 2.5.
#: Kernels without an exponential (linear, polynomial) cost less, ``chi2`` and other
#: pairwise kernels more.
KERNEL_ENTRY_FLOPS = 180.0
#: Cholesky factorisation (LAPACK ``potrf``, n³/3 flops) runs at this fraction of the
#: product rate: measured 0.56, 0.69, 0.84 at n = 1,000, 2,000, 4,000 on one thread (load
#: 0.9-3; the factor grows with n as more of it is matrix products).
CHOLESKY_EFFICIENCY = 0.7
#: The symmetric eigendecomposition with eigenvectors (``scipy.linalg.eigh``, driver
#: ``evr`` or ``evd``) costs this many n³ GEMM-equivalent flops: measured 7.9 and 7.8 (evr),
#: 7.2 and 7.4 (evd) at n = 1,000 and 2,000 on one thread, load 0.9-3 (16× a Cholesky
#: factorisation at n = 2,000). Two BLAS threads on the loaded 2-core machine did not help.
EIGH_FLOPS = 7.8
#: Triangular solves with many right-hand sides (``trsm``, n²·k flops) at this fraction of
#: the product rate: measured 0.83-0.90 at n = 1,000-4,000, k = 500, one thread.
TRSM_EFFICIENCY = 0.85
#: A triangular solve with one or a few right-hand sides reads the whole M × M triangle for
#: 2·M²·t flops: memory-bound, counted at this fraction of the product rate.
TRSV_EFFICIENCY = 0.25
#: One CG sweep over a cached kernel block (``NystromSystem``: a float64 sub-block copy,
#: then K_b v and K_bᵀ u while it is in cache) costs this much per block value plus
#: :data:`SWEEP_COLUMN_FLOPS` per target column: measured 30 and 37 (float32 blocks, M =
#: 500 and 2,000, one column), 50 + 40 (ten columns), 27 (float64), on one thread, load 2.6.
SWEEP_ENTRY_FLOPS = 25.0
SWEEP_COLUMN_FLOPS = 8.0
#: GEMM-equivalent flops per output feature and row of a feature map beyond its 2·d
#: projection (the cosine or the kernel's element-wise passes). Measured for the random
#: Fourier maps (``rff``, ``rbf_sampler``, ``orthogonal``, ``quadrature``, ``principal``)
#: on one thread, CPU time at the probe's CPU rate: 480 per value at d = 64 (digits, 1,797
#: rows, D = 800) and 100-250 at d = 784 (Fashion-MNIST, 3,000 rows, D = 400-800), load
#: 12-17; 300 is within 1.4× of both (it was 40, which made the small-d maps 3-4× slower
#: than estimated). The structured maps (FWHT blocks) cost the same at d = 784 and up to 3×
#: more at d = 64 (a share of compare's work too small to need a formula of their own).
FEATURE_ENTRY_FLOPS = 300.0
#: GEMM-equivalent flops per input value a transform reads beyond its products (validation,
#: the copy to the engine's blocks): ~4 ns per value, measured as the part of a transform
#: that does not grow with D (10 ms for 3,000 × 784 at D = 25; 2 ms for 1,797 × 64), at 35
#: Gflop/s, load 12-17.
INPUT_ENTRY_FLOPS = 140.0
#: The α path on features (:func:`alpha_path_flops`) took this many times its Gram, projection
#: and eigendecomposition flops (least squares over 25 paths: n = 1,347, 5,000, 20,000; D =
#: 25-1,600; 2 and 10 outputs; 37 α; one thread, load 12; every path within 0.85-1.54× of
#: the fitted formula).
ALPHA_PATH_SPECTRUM_FACTOR = 1.1
#: The path's products (the fitted values ``P diag(1/(λ+α)) c`` and the leverages
#: ``P² (1/(λ+α))``, one product per block of rows for every α at once,
#: ``_ridge.path._loo_scores``) run at this fraction of the product rate: fitted with
#: :data:`ALPHA_PATH_ENTRY_FLOPS` to the path alone on 15,000 rows, 26 outputs, 37 α (0.63 s
#: at D = 250 and 3.10 s at D = 1,000, one thread, 33.5 Gflop/s probe, load 12-14; the
#: formula gives 0.58 s and 2.96 s). Before the path formed its blocks so (α by α, skinny
#: products re-reading the projections) the same flops ran at 0.135 of the rate.
ALPHA_PATH_PRODUCT_EFFICIENCY = 1.0
#: And its element-wise work per scored row, output and α (the leave-one-out residual, the
#: argmax or squared error of the score), in place on each block (see above; 900 before).
ALPHA_PATH_ENTRY_FLOPS = 600.0
#: The path scores its rows in blocks of about this many fitted values (rows × outputs × α,
#: at least 16 rows; ``_ridge.path._CHUNK_ELEMENTS``, a test checks they agree) ...
ALPHA_PATH_GROUP_ELEMENTS = 2**17
#: ... and each block costs this much CPU time beyond its flops (NumPy calls on small
#: arrays, the score's label decoding): compare's runs exceeded their flops' time by 0.054 s
#: each on wine and 0.081 s on digits, compare's own work outside the runs included (one
#: process, load 14-16, measured with the α-by-α path): 1.5 ms a group, 52 ms a run
#: (:data:`RUN_OVERHEAD_S`). At load 2-4 the same runs cost less (wine's runs
#: 5.0 s of CPU against 6.4 s at load 13): 1.2 ms a group and 45 ms a run sit between the two.
ALPHA_PATH_GROUP_S = 0.0012
#: The fixed CPU cost of a map and ridge on its features beyond their flops — a ``compare``
#: run, a ``tune`` configuration — (validation, the map's draw, tracemalloc's
#: bookkeeping, the model's set-up, its kernel error and its share of compare's planning),
#: beside the α path's per-group cost (``_cost.ALPHA_PATH_GROUP_S``). Measured as
#: ``kernelmaps compare``'s CPU time from its estimate to the end of its runs
#: (``timing["cpu_runs_s"]`` of ``--json``), less the runs' flops and groups at the probe's
#: rate, per run: 14.2, 13.4, 13.0, 15.0 ms on wine, iris, diabetes, breast_cancer
#: (136-142 runs, one process, load 4.6; digits' 19 ms a run with 4 groups each agrees).
#: It was 45 ms, fitted with the α-by-α path (37 small products a run), which put the
#: small sets' estimates at 2.2-3.6× their CPU time once the path formed its blocks.
RUN_OVERHEAD_S = 0.0125
#: The command line's work after a comparison's runs, in CPU seconds (elapsed seconds at
#: :func:`load_slowdown`): the summary and advice, the HTML report with its plots
#: (matplotlib imported on first use) and the terminal's tables (``kernelmaps compare``;
#: ``--json`` reports it as ``timing["cpu_report_s"]``): measured 1.46-1.88 s on wine,
#: digits, breast_cancer, iris and diabetes (load 4.6; 1.5-2.6 s elapsed at load 1-4).
REPORT_S = 1.6
#: The α grid's size the path is priced at when no other is given: kernelmaps' default grid
#: (``_ridge.DEFAULT_ALPHAS``, 10⁻⁶…10³ at four per decade; a test checks they agree).
PATH_ALPHAS = 37
#: The exact α path (``kernel_alpha_path``: the eigenvectors, the driver's workspace, its
#: blocks of rows; the matrix itself is decomposed in place and the projections formed per
#: block) holds this many m × m float64 arrays beside the kernel matrix it is given:
#: compare's baseline on the full-n path peaked at 2.76 n² doubles in all (K included) at
#: n = 1,950 on the letters set (tracemalloc; 3.69 n² when SciPy copied the matrix for
#: LAPACK and the projections U Λ^{1/2} were one more array, as at the 3.3-3.6 n² measured
#: at n = 3,000 and 5,000).
ALPHA_PATH_ARRAYS = 1.8
#: Kernel rows computed (or test rows mapped) per block by the exact baseline: its
#: temporaries are two blocks of ``BLOCK_ROWS × n`` float64 values. Not the engine's
#: working-set rule on purpose: each test-row block is one triangular solve that streams the
#: whole n × n factor, so blocks must stay wide as n grows (the engine's 8 MB working set
#: would give 209 rows at n = 5,000: five times the passes over a 200 MB factor). Chosen
#: with the baseline (e5c6d55), not measured.
BLOCK_ROWS = 1024


# ----------------------------------------------------------------------------- formulas
def kernel_matrix_flops(n_rows: float, n_cols: float, n_features: float,
                        itemsize: int = 8) -> float:
    """The kernel matrix k(X, Y) of ``n_rows × n_cols`` values on ``n_features`` inputs:
    ``n_rows·n_cols·(2·n_features + KERNEL_ENTRY_FLOPS·itemsize/8)``."""
    return float(n_rows) * n_cols * (2.0 * n_features + KERNEL_ENTRY_FLOPS * itemsize / 8)


def cholesky_flops(n: float) -> float:
    """One Cholesky factorisation of n × n: ``n³/3 / CHOLESKY_EFFICIENCY``."""
    return float(n) ** 3 / 3.0 / CHOLESKY_EFFICIENCY


def eigh_flops(n: float) -> float:
    """One symmetric eigendecomposition of n × n with eigenvectors: ``EIGH_FLOPS·n³``."""
    return EIGH_FLOPS * float(n) ** 3


def triangular_solve_flops(n: float, n_rhs: float) -> float:
    """Solves with an n × n triangle and ``n_rhs`` right-hand sides: ``n²·n_rhs`` flops at
    :data:`TRSM_EFFICIENCY`, or :data:`TRSV_EFFICIENCY` (memory-bound) below 16 of them."""
    efficiency = TRSM_EFFICIENCY if n_rhs >= 16 else TRSV_EFFICIENCY
    return float(n) ** 2 * n_rhs / efficiency


def preconditioner_flops(n_centres: float) -> float:
    """The FALKON preconditioner on M centres: ``potrf``, ``lauum``, ``potrf`` of M × M
    (M³/3 each)."""
    return 3.0 * cholesky_flops(n_centres)


def nystrom_first_pass_flops(n_rows: float, n_centres: float, n_features: float,
                             n_targets: float, itemsize: int = 8) -> float:
    """FALKON's first pass: the kernel blocks K_nM and the right-hand side K_nMᵀ W Y."""
    return (kernel_matrix_flops(n_rows, n_centres, n_features, itemsize)
            + 2.0 * n_rows * n_centres * n_targets)


def cg_iteration_flops(n_cached: float, n_recomputed: float, n_centres: float,
                       n_features: float, n_targets: float, itemsize: int = 8) -> float:
    """One CG iteration of FALKON: a sweep over the cached blocks, the kernel values of the
    rows beyond the cache recomputed and swept, and four triangular solves with the M × M
    preconditioner."""
    n_rows = float(n_cached) + n_recomputed
    sweep = n_rows * n_centres * (SWEEP_ENTRY_FLOPS + SWEEP_COLUMN_FLOPS * n_targets)
    return (sweep + kernel_matrix_flops(n_recomputed, n_centres, n_features, itemsize)
            + 4.0 * triangular_solve_flops(n_centres, n_targets))


def feature_map_flops(n_rows: float, n_features: float, n_components: float,
                      landmarks: bool = False) -> float:
    """A feature map's transform of ``n_rows`` rows to D = ``n_components`` features.

    Random features: ``n_rows·D·(2·n_features + FEATURE_ENTRY_FLOPS)``; a landmark map
    (Nyström): the kernel values against its D landmarks (:func:`kernel_matrix_flops`) and
    their product with its D × D normalisation (2·n_rows·D²). Either way plus
    ``n_rows·n_features·INPUT_ENTRY_FLOPS`` for reading the input.
    """
    n, D = float(n_rows), float(n_components)
    read = n * n_features * INPUT_ENTRY_FLOPS
    if landmarks:
        return kernel_matrix_flops(n, D, n_features) + 2.0 * n * D * D + read
    return n * D * (2.0 * n_features + FEATURE_ENTRY_FLOPS) + read


def feature_map_fit_flops(n_features: float, n_components: float, landmarks: bool) -> float:
    """A feature map's fit: a landmark map's (Nyström) kernel matrix of its D landmarks and
    its eigendecomposition (:func:`eigh_flops` (D)); a random-feature map's draw, counted as
    nothing here (its cost is in the fixed cost of a run)."""
    if not landmarks:
        return 0.0
    D = float(n_components)
    return kernel_matrix_flops(D, D, n_features) + eigh_flops(D)


def alpha_path_flops(n_rows: float, n_components: float, n_targets: float,
                     n_alphas: float = PATH_ALPHAS, kernel: bool = False) -> float:
    r"""Ridge's exact leave-one-out α path on ``n_rows`` rows (``_ridge.ridge_alpha_path`` on
    n × D features; ``kernel=True``: ``_ridge.kernel_alpha_path`` on an n × n kernel matrix,
    ``n_components`` ignored), ``n_targets`` outputs t and ``n_alphas`` values A.

    With r = min(n, D) (r = n for the kernel path):

    * the spectrum: the Gram matrix (``syrk``, n·D·r), the projections Zc·V (2·n·D·r) and
      the r × r eigendecomposition, times :data:`ALPHA_PATH_SPECTRUM_FACTOR`; on a kernel
      matrix the n × n eigendecomposition alone;
    * per α the fitted values and leverages, 2·n·r·A·(t + 1) flops at
      :data:`ALPHA_PATH_PRODUCT_EFFICIENCY`;
    * per row, output and α the leave-one-out residual and score,
      :data:`ALPHA_PATH_ENTRY_FLOPS`.

    The one formula of the path's cost: compare's runs, its exact baseline and tune's
    configurations are priced by it (a faster path is one edit here).
    """
    n, A, t = float(n_rows), float(n_alphas), float(n_targets)
    if kernel:
        r = n
        spectrum = eigh_flops(n)
    else:
        D = float(n_components)
        r = min(n, D)
        spectrum = ALPHA_PATH_SPECTRUM_FACTOR * (3.0 * n * D * r + eigh_flops(r))
    products = 2.0 * n * r * A * (t + 1.0) / ALPHA_PATH_PRODUCT_EFFICIENCY
    return spectrum + products + ALPHA_PATH_ENTRY_FLOPS * n * t * A


def alpha_path_groups(n_rows: float, n_targets: float, n_alphas: float = PATH_ALPHAS) -> int:
    """The blocks of rows the path scores (every α at once): ``n_rows`` in steps of
    ``ALPHA_PATH_GROUP_ELEMENTS // (n_targets·n_alphas)`` rows (at least 16)."""
    step = max(16, ALPHA_PATH_GROUP_ELEMENTS // max(1, int(n_targets * n_alphas)))
    return max(1, -(-int(n_rows) // step))


def alpha_path_fixed_seconds(n_rows: float, n_targets: float,
                             n_alphas: float = PATH_ALPHAS) -> float:
    """CPU seconds of the α path beyond its flops (:func:`alpha_path_flops`):
    :data:`ALPHA_PATH_GROUP_S` per block of rows (:func:`alpha_path_groups`)."""
    return ALPHA_PATH_GROUP_S * alpha_path_groups(n_rows, n_targets, n_alphas)


def feature_ridge_flops(n_rows: float, n_components: float, n_targets: float,
                        select_alpha: bool, n_alphas: float = PATH_ALPHAS) -> float:
    """Ridge on n × D features: with α chosen on a path of ``n_alphas`` values,
    :func:`alpha_path_flops`; at a fixed α, the Gram matrix ZᵀZ (2·n·D²), the projections of
    the targets (2·n·D·t) and one Cholesky factorisation of D × D."""
    n, D = float(n_rows), float(n_components)
    if select_alpha:
        return alpha_path_flops(n, D, n_targets, n_alphas)
    return 2.0 * n * D * D + 2.0 * n * D * n_targets + cholesky_flops(D)


def map_ridge_flops(n_rows: float, n_features: float, n_components: float, n_targets: float,
                    *, landmarks: bool = False, select_alpha: bool = True,
                    n_alphas: float = PATH_ALPHAS, other_rows: float = 0) -> float:
    """A feature map and ridge on its features, the unit of work of ``compare``'s runs and
    ``tune``'s configurations: the map's fit (:func:`feature_map_fit_flops`), its transform
    of the ``n_rows`` training rows and ``other_rows`` more (test rows, kernel-error rows;
    :func:`feature_map_flops`) and ridge on the training features
    (:func:`feature_ridge_flops`: with ``select_alpha``, the α path of ``n_alphas``)."""
    return (feature_map_fit_flops(n_features, n_components, landmarks)
            + feature_map_flops(float(n_rows) + other_rows, n_features, n_components, landmarks)
            + feature_ridge_flops(n_rows, n_components, n_targets, select_alpha, n_alphas))


#: ``tune``'s all-rows fit (``_ridge.holdout_alpha_path``) factorises ridge's D × D matrix
#: this many times: the α it starts from and its two neighbours (the walk's least), a step
#: further where the score still improves, and the model at the chosen α on all rows.
HOLDOUT_SOLVES = 5


def streamed_ridge_flops(n_rows: float, n_features: float, n_components: float,
                         n_targets: float, n_held: float, *, landmarks: bool = False,
                         n_solves: float = HOLDOUT_SOLVES) -> float:
    r"""A feature map and ridge from sums over row blocks, α chosen on ``n_held`` held-out
    rows: ``tune``'s fit on all rows (``tuning._large``: ``_ridge.FeatureSums`` and
    ``_ridge.holdout_alpha_path``), the arithmetic of that path, not the leave-one-out path's
    (:func:`map_ridge_flops`, 1.5-2.5× more at n = 20,000, D = 2,048-4,096).

    With D = ``n_components``, t = ``n_targets``, m = ``n_held``:

    * the map's fit (:func:`feature_map_fit_flops`);
    * every row's features: a random-feature map's transform (:func:`feature_map_flops`); a
      landmark map's kernel values against its D landmarks only
      (:func:`kernel_matrix_flops`), its D × D normalisation N applied to the sums instead
      (N G Nᵀ, 4·D³) and to the held-out rows (2·m·D²);
    * the sums: the Gram matrix by ``syrk`` (n·D²), ZᵀY (2·n·D·t);
    * the held-out rows' downdate of the Gram matrix (2·m·D²);
    * ``n_solves`` factorisations of D × D (:func:`cholesky_flops`), each with its two
      triangular solves of t columns and the held-out rows' fitted values (2·m·D·t).
    """
    n, D, m, t = float(n_rows), float(n_components), float(n_held), float(n_targets)
    fit = feature_map_fit_flops(n_features, D, landmarks)
    if landmarks:
        features = (kernel_matrix_flops(n, D, n_features) + n * n_features * INPUT_ENTRY_FLOPS
                    + 4.0 * D**3 + 2.0 * m * D * D)
    else:
        features = feature_map_flops(n, n_features, D)
    sums = n * D * D + 2.0 * n * D * t + 2.0 * m * D * D
    solves = n_solves * (cholesky_flops(D) + 2.0 * triangular_solve_flops(D, t)
                         + 2.0 * m * D * t)
    return fit + features + sums + solves


def feature_path_memory(n_rows: float, n_components: float, n_targets: float) -> float:
    """Bytes of ridge's α path on ``n_rows × n_components`` features beyond the data
    (``kernelmaps.tuning.ridge_alpha_path``): the features, their centred copy and their
    projections on the eigenvectors (three ``n × D`` float64 arrays), and the Gram matrix,
    its eigenvectors and the driver's workspace (three ``r × r``, r = min(n, D)), plus the
    targets' ``n × t`` codes. A sum of the arrays, not a measurement."""
    n, D = float(n_rows), float(n_components)
    r = min(n, D)
    return 8.0 * (3.0 * n * D + 3.0 * r * r + 2.0 * n * n_targets)


def streamed_ridge_memory(n_held: float, n_components: float, n_features: float,
                          block_rows: float) -> float:
    """Bytes of ridge from sums over row blocks (``kernelmaps._ridge.FeatureSums``, α chosen
    on ``n_held`` held-out rows) beyond the data: four ``D × D`` float64 matrices (the Gram
    sum, its centred copy, a Cholesky factor, the map's own normalisation), the held-out
    rows' features, and one block's features, kernel values and inputs. A sum of the
    arrays, not a measurement."""
    D = float(n_components)
    return 8.0 * (4.0 * D * D + n_held * D + block_rows * (2.0 * D + n_features))


# ----------------------------------------------------------------------------- the baseline
def exact_baseline_memory(n_train: int, n_test: int, closed_form: bool,
                          select_alpha: bool = False, m: int | None = None) -> float:
    """Peak bytes of compare's exact baseline: the n × n float64 kernel matrix (factorised
    in place) and two blocks of kernel rows; with α chosen on a path, the path's arrays,
    :data:`ALPHA_PATH_ARRAYS` of m × m (``m`` rows; ``m=None``: the path on all n rows);
    with features (not closed form), the test
    features (n_test × n) and two n × n arrays of the linear model's own (scikit-learn's
    ridge centres a copy and forms XᵀX; liblinear copies the data)."""
    n = float(n_train)
    memory = 8 * n * n + 2 * 8 * BLOCK_ROWS * n
    if closed_form and select_alpha:
        side = n if m is None else float(m)
        memory += ALPHA_PATH_ARRAYS * 8 * side * side
    if not closed_form:
        memory += 8 * float(n_test) * n + 2 * 8 * n * n
    return memory


@dataclass(frozen=True)
class ExactCost:
    """What compare's exact baseline will cost: GEMM-equivalent flops per phase, bytes, and
    seconds at the rate of the thread count it was priced at."""

    kernel_matrix_flops: float
    factorisation: str  # "Cholesky", "eigendecomposition" or "eigendecomposition + Cholesky"
    factorisation_flops: float
    test_rows_flops: float
    memory_bytes: float
    rate: float  # GEMM flop/s used for the seconds

    @property
    def flops(self) -> float:
        """Every phase together."""
        return self.kernel_matrix_flops + self.factorisation_flops + self.test_rows_flops

    @property
    def seconds(self) -> float:
        """The whole baseline, in seconds."""
        return self.flops / self.rate

    def as_dict(self) -> dict[str, object]:
        """The form of ``compare``'s ``cost_estimate["exact"]``."""
        return {"kernel_matrix_s": self.kernel_matrix_flops / self.rate,
                "factorisation": self.factorisation,
                "factorisation_s": self.factorisation_flops / self.rate,
                "test_rows_s": self.test_rows_flops / self.rate,
                "seconds": self.seconds, "memory_bytes": int(self.memory_bytes)}


def exact_baseline_cost(n_train: int, n_test: int, n_features: int, n_outputs: int, *,
                        closed_form: bool, select_alpha: bool = False, m: int | None = None,
                        threads: int | None = 1) -> ExactCost:
    r"""Price compare's exact baseline (``evaluate/_exact.run_exact``).

    Phases, in GEMM-equivalent flops:

    * the kernel matrix, :func:`kernel_matrix_flops` (n, n, d);
    * the factorisation: closed-form ridge at a fixed α, one Cholesky (n³/3) and the solve
      (2n²t); with α chosen per row, the exact leave-one-out path on ``m`` training rows
      (their own m × m kernel matrix, computed beside the n × n one, and
      :func:`alpha_path_flops` on it) then one Cholesky at the full n
      — or, ``m=None``, the path on all n rows (no Cholesky); with features (any
      other linear model), the Cholesky factor and the linear model on n × n features,
      counted as n³ more (a rough guess: its solvers iterate);
    * the test rows: their kernel values (n_test × n) and, with features, the triangular
      solves (n²·n_test), else the predictions (2·n·n_test·t).

    ``threads``: the BLAS threads the baseline runs on (its seconds are at that rate).
    """
    n = float(n_train)
    kernel = kernel_matrix_flops(n, n, n_features)
    if closed_form and select_alpha and m is None:
        name, factor = "eigendecomposition", alpha_path_flops(n, n, n_outputs, kernel=True)
    elif closed_form and select_alpha:
        name = "eigendecomposition + Cholesky"
        side = min(float(m), n)
        factor = (kernel_matrix_flops(side, side, n_features)
                  + alpha_path_flops(side, 0, n_outputs, kernel=True)
                  + cholesky_flops(n) + 2 * n * n * n_outputs)
    elif closed_form:
        name, factor = "Cholesky", cholesky_flops(n) + 2 * n * n * n_outputs
    else:
        name, factor = "Cholesky", cholesky_flops(n) + n**3
    test = kernel_matrix_flops(n_test, n, n_features)
    test += (2 * n * n_test * n_outputs if closed_form
             else triangular_solve_flops(n, n_test))
    memory = exact_baseline_memory(n_train, n_test, closed_form, select_alpha, m)
    return ExactCost(kernel, name, factor, test, memory, gemm_rate(threads))


# ----------------------------------------------------------------------------- a model's exact fit
#: ``KernelRidge(solver="auto")`` stays exact while the exact fit's estimated time is at most
#: this many seconds (:func:`exact_fit_fits`). scikit-learn's ``KernelRidge`` always solves
#: exactly, so a user who did not choose a solver is asked to wait for it up to this long:
#: five minutes, the order of a large scikit-learn fit on a laptop (n ≈ 25,000 by these
#: formulas at 35 Gflop/s) — past it FALKON fits in seconds, and the warning says how to
#: insist on exact. A judgement, not a measurement (the formulas are: 12,000 × 10 estimated
#: 40 s at load 5.5, fitted in 47 s at load 1.3-2.6).
EXACT_FIT_MAX_SECONDS = 300.0
#: ... and while its memory (:func:`exact_fit_memory`) is at most this fraction of the memory
#: available: the other half is left to the data, the predictions and other processes (the
#: fraction compare's ``exact="auto"`` leaves too). Chosen, not measured.
EXACT_FIT_MEMORY_FRACTION = 0.5
#: Up to this many rows the exact fit always fits (≤ 144 MB, about a second): no probe of the
#: rate is run (it costs ~0.2 s once per process).
EXACT_FIT_ALWAYS_SAMPLES = 3000


def exact_fit_memory(n_samples: float, itemsize: int = 8) -> float:
    """Bytes of an exact kernel ridge fit beyond the data: the n × n float64 kernel matrix,
    factorised in place, plus the matrix in X's dtype when that is not float64 (it is
    computed there, then converted)."""
    n2 = float(n_samples) ** 2
    return 8 * n2 + (itemsize * n2 if itemsize != 8 else 0.0)


def exact_fit_flops(n_samples: float, n_features: float, n_targets: float,
                    itemsize: int = 8) -> float:
    """An exact kernel ridge fit: the kernel matrix (``n_features=0``: a precomputed one,
    only copied), its Cholesky factorisation and the two triangular solves (2·n²·t)."""
    n = float(n_samples)
    return (kernel_matrix_flops(n, n, n_features, itemsize) + cholesky_flops(n)
            + 2.0 * n * n * n_targets)


@dataclass(frozen=True)
class ExactFitDecision:
    """Whether an exact kernel ridge fit fits this machine now, and why (for messages)."""

    fits: bool
    reason: str
    seconds: float
    memory_bytes: float
    available_bytes: float


def exact_fit_fits(n_samples: int, n_features: int, n_targets: int = 1, itemsize: int = 8, *,
                   threads: int | None = None) -> ExactFitDecision:
    """Decide whether an exact kernel ridge fit fits the machine: ``solver="auto"``'s rule.

    It fits while its memory (:func:`exact_fit_memory`) is at most
    :data:`EXACT_FIT_MEMORY_FRACTION` of the memory available now and its time
    (:func:`exact_fit_flops` at :func:`gemm_rate` on ``threads``) at most
    :data:`EXACT_FIT_MAX_SECONDS`; up to :data:`EXACT_FIT_ALWAYS_SAMPLES` rows it always does.
    """
    memory = exact_fit_memory(n_samples, itemsize)
    if n_samples <= EXACT_FIT_ALWAYS_SAMPLES:
        return ExactFitDecision(True, f"{n_samples} rows <= {EXACT_FIT_ALWAYS_SAMPLES}",
                                0.0, memory, float("inf"))
    available = available_memory()
    time_s = seconds(exact_fit_flops(n_samples, n_features, n_targets, itemsize),
                     resolve_n_threads() if threads is None else threads)
    estimate = (f"the exact fit of {n_samples} rows needs ~{memory / 1e9:.1f} GB of "
                f"{available / 1e9:.1f} GB available and ~{time_s:.0f} s")
    if memory > EXACT_FIT_MEMORY_FRACTION * available:
        return ExactFitDecision(False, f"{estimate} (more than "
                                f"{EXACT_FIT_MEMORY_FRACTION:.0%} of the memory)",
                                time_s, memory, available)
    if time_s > EXACT_FIT_MAX_SECONDS:
        return ExactFitDecision(False, f"{estimate} (more than {EXACT_FIT_MAX_SECONDS:.0f} s)",
                                time_s, memory, available)
    return ExactFitDecision(True, estimate, time_s, memory, available)
