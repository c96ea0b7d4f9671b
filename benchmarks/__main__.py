"""Run every kernelmaps-vs-scikit-learn benchmark: ``python -m benchmarks [--quick]``.

``python -m benchmarks dask [--quick]`` runs the Dask scale-out benchmark instead
(:mod:`benchmarks.bench_dask`).

All map families (Fourier, histogram, polynomial, Nyström) in one process and one table;
each case is timed, memory-profiled and checked for agreement as described in
:mod:`benchmarks._harness`. Options: ``--quick``, ``--repeats N``, ``--n-samples N``,
``--json PATH``.
"""

from __future__ import annotations

import sys

from benchmarks import bench_fourier, bench_histogram, bench_nystroem, bench_polynomial
from benchmarks._harness import Case, main

CASES: list[Case] = [
    *bench_fourier.CASES,
    *bench_histogram.CASES,
    *bench_nystroem.CASES,
    *bench_polynomial.CASES,
]

if __name__ == "__main__":
    if sys.argv[1:2] == ["dask"]:
        from benchmarks import bench_dask

        bench_dask.main(sys.argv[2:])
    else:
        main(CASES, __doc__)
