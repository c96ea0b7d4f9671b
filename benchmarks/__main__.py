"""Run every kernelmaps-vs-scikit-learn benchmark: ``python -m benchmarks [--quick]``.

``python -m benchmarks dask [--quick]`` runs the Dask scale-out benchmark instead
(:mod:`benchmarks.bench_dask`).

All map families (Fourier, histogram, polynomial, Nyström) in one process and one table,
at scikit-learn's example scale (digits, 1,797 × 64), 10,000 × 100 (every map with its
default parameters) and 50,000 × 100 (larger outputs); each case is timed against
scikit-learn, memory-profiled and checked for agreement as described in
:mod:`benchmarks._harness`. Options: ``--quick``, ``--sizes digits,10000,50000``,
``--repeats N``, ``--n-samples N``, ``--json PATH``.

``python -m benchmarks engine`` runs :mod:`benchmarks.bench_engine` instead (where the
engine's threads pay: work units, fixed costs, the crossover).

``python -m benchmarks random_features [options]`` runs
:mod:`benchmarks.bench_random_features` instead (random Fourier features: error of every
structure × sampling on real data, the default against ORF, fit and transform time).
``python -m benchmarks quality [--quick]`` runs :mod:`benchmarks.bench_quality` instead (the
default random Fourier features, fitted per seed, against every structure × output form,
three kernel widths, standard errors; ``--sets``, ``--widths``, ``--dimensions``, ``--seeds``).
``python -m benchmarks kernel_methods [options]`` runs
:mod:`benchmarks.bench_kernel_methods` instead (feature map + linear SVM vs SVC / SVR).
``python -m benchmarks ridge [options]`` runs :mod:`benchmarks.bench_ridge` instead (FALKON
with the cached kernel block beside the recompute path, ``KernelRidgeClassifier``).
``python -m benchmarks stream [options]`` runs :mod:`benchmarks.bench_stream` instead (the
one-pass FeatureRidge fit and partial_fit beside a bare BLAS syrk, one thread and every core).
``python -m benchmarks exact [options]`` runs :mod:`benchmarks.bench_exact` instead (compare's
exact baseline beside one Cholesky factorisation of the same kernel matrix).
``python -m benchmarks cost [--quick] [--compare [--large]]`` runs :mod:`benchmarks.bench_cost`
instead (the cost model's estimates beside timings on one thread, and tune's time budget: the
timing side of tests/test_cost.py and tests/tuning/test_tune.py; ``--compare``: compare's
and tune's estimates beside their measured CPU and wall time).
``python -m benchmarks gpu [options]`` runs :mod:`benchmarks.bench_gpu` instead (PyTorch
tensors on a GPU through the array API; ``--small --device cpu`` runs it on a CPU).
``python -m benchmarks dask [options]`` runs :mod:`benchmarks.bench_dask` instead (Dask).
``python -m benchmarks gate [--repeat N] [--record]`` runs the speed gate of CI instead
(:mod:`benchmarks.gate`: each headline case as a ratio to its peer or floor, against the
ratios recorded in ``benchmarks/gate_record.json``; exit status 1 beyond 2× a record).
"""

from __future__ import annotations

import os
import sys

if sys.argv[1:2] == ["gpu"]:
    # Array API dispatch needs SciPy's array API support, read when SciPy is first imported.
    os.environ.setdefault("SCIPY_ARRAY_API", "1")

from benchmarks import (
    bench_cost,
    bench_engine,
    bench_exact,
    bench_fourier,
    bench_histogram,
    bench_kernel_methods,
    bench_nystroem,
    bench_polynomial,
    bench_quality,
    bench_random_features,
    bench_ridge,
    bench_stream,
    bench_tune,
)
from benchmarks._harness import Case, main

#: Benchmarks with their own table, run as ``python -m benchmarks NAME [options]``.
FAMILIES = {"kernel_methods": bench_kernel_methods.main, "ridge": bench_ridge.main,
            "tune": bench_tune.main, "random_features": bench_random_features.main,
            "engine": bench_engine.main, "stream": bench_stream.main,
            "exact": bench_exact.main, "cost": bench_cost.main,
            "quality": bench_quality.main}

_FAMILIES = (bench_fourier, bench_histogram, bench_nystroem, bench_polynomial)
CASES: list[Case] = [case for family in _FAMILIES for case in family.CASES]
SMALL_CASES: list[Case] = [case for family in _FAMILIES for case in family.SMALL_CASES]

if __name__ == "__main__":
    if sys.argv[1:2] == ["dask"]:
        from benchmarks import bench_dask  # dask is needed only here

        bench_dask.main(sys.argv[2:])
    elif sys.argv[1:2] == ["gpu"]:
        from benchmarks import bench_gpu  # torch is needed only here

        bench_gpu.main(sys.argv[2:])
    elif sys.argv[1:2] == ["gate"]:
        from benchmarks import gate

        sys.exit(gate.main(sys.argv[2:]))
    elif len(sys.argv) > 1 and sys.argv[1] in FAMILIES:
        FAMILIES[sys.argv[1]](sys.argv[2:])
    else:
        main(CASES, __doc__, small_cases=SMALL_CASES)
