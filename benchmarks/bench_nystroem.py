"""Nystroem with the RBF kernel: kernelmaps vs scikit-learn.

Measures ``Nystroem(kernel="rbf", gamma=None, n_components=1000, random_state=0)
.fit_transform(X)`` (gamma=None: 1 / n_features) on dense uniform X (50,000 × 100), and at
the small sizes (digits, 10,000 × 100) the defaults (``n_components=100``) and
``n_components=300``, in float64 and float32: median wall time of interleaved repeats,
tracemalloc peak memory and agreement with scikit-learn; see :mod:`benchmarks._harness` for
the method. With these settings the landmark kernel matrix is well conditioned, so both
libraries should give the same features.
"""

from __future__ import annotations

from benchmarks._harness import Case, cases_in_both_dtypes, main

N_COMPONENTS = 1000

CASES: list[Case] = cases_in_both_dtypes(
    "Nystroem",
    {"kernel": "rbf", "gamma": None, "n_components": N_COMPONENTS, "random_state": 0},
    f"rbf m={N_COMPONENTS}",
)
SMALL_CASES: list[Case] = [
    *cases_in_both_dtypes("Nystroem", {"random_state": 0}, "defaults (m=100)"),
    *cases_in_both_dtypes("Nystroem", {"n_components": 300, "random_state": 0}, "m=300"),
]


if __name__ == "__main__":
    main(CASES, __doc__, small_cases=SMALL_CASES)
