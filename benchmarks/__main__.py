"""Run every kernelmaps-vs-scikit-learn benchmark: ``python -m benchmarks [--quick]``.

All map families (Fourier, histogram, polynomial, Nyström) in one process and one table;
each case is timed, memory-profiled and checked for agreement as described in
:mod:`benchmarks._harness`. Options: ``--quick``, ``--repeats N``, ``--n-samples N``,
``--json PATH``.

``python -m benchmarks kernel_methods [options]`` runs
:mod:`benchmarks.bench_kernel_methods` instead (feature map + linear SVM vs SVC / SVR).
"""

from __future__ import annotations

import sys

from benchmarks import (
    bench_fourier,
    bench_histogram,
    bench_kernel_methods,
    bench_nystroem,
    bench_polynomial,
)
from benchmarks._harness import Case, main

#: Benchmarks with their own table, run as ``python -m benchmarks NAME [options]``.
FAMILIES = {"kernel_methods": bench_kernel_methods.main}

CASES: list[Case] = [
    *bench_fourier.CASES,
    *bench_histogram.CASES,
    *bench_nystroem.CASES,
    *bench_polynomial.CASES,
]

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in FAMILIES:
        FAMILIES[sys.argv[1]](sys.argv[2:])
    else:
        main(CASES, __doc__)
