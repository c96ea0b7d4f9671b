"""Run every kernelmaps-vs-scikit-learn benchmark: ``python -m benchmarks [--quick]``.

All map families (Fourier, histogram, polynomial, Nyström) in one process and one table;
each case is timed, memory-profiled and checked for agreement as described in
:mod:`benchmarks._harness`. Options: ``--quick``, ``--repeats N``, ``--n-samples N``,
``--json PATH``.
"""

from __future__ import annotations

from benchmarks import bench_fourier, bench_histogram, bench_nystroem, bench_polynomial
from benchmarks._harness import Case, main

CASES: list[Case] = [
    *bench_fourier.CASES,
    *bench_histogram.CASES,
    *bench_nystroem.CASES,
    *bench_polynomial.CASES,
]

if __name__ == "__main__":
    main(CASES, __doc__)
