"""RBFSampler (random Fourier features): kernelmaps vs scikit-learn.

Measures ``RBFSampler(gamma=1.0, n_components=2000, random_state=0).fit_transform(X)`` on
dense uniform X (50,000 × 100), and the defaults (``n_components=100``) at the small sizes
(digits, 10,000 × 100), in float64 and float32: median wall time of interleaved repeats,
tracemalloc peak memory and agreement with scikit-learn; see :mod:`benchmarks._harness`
for the method.
"""

from __future__ import annotations

from benchmarks._harness import Case, cases_in_both_dtypes, main

N_COMPONENTS = 2000

CASES: list[Case] = cases_in_both_dtypes(
    "RBFSampler",
    {"gamma": 1.0, "n_components": N_COMPONENTS, "random_state": 0},
    f"D={N_COMPONENTS}",
)
SMALL_CASES: list[Case] = cases_in_both_dtypes("RBFSampler", {"random_state": 0},
                                               "defaults (D=100)")


if __name__ == "__main__":
    main(CASES, __doc__, small_cases=SMALL_CASES)
