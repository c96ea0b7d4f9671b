"""PolynomialCountSketch (TensorSketch), degree 2 and 3: kernelmaps vs scikit-learn.

Measures ``PolynomialCountSketch(degree=d, gamma=1.0, coef0=0.0, n_components=2000,
random_state=0).fit_transform(X)`` for d = 2, 3 on dense uniform X (50,000 × 100), and
the defaults (degree 2, ``gamma=1.0``, D=100) at the small sizes (digits, 10,000 × 100), in
float64 and float32: median wall time of interleaved repeats, tracemalloc peak memory and
agreement with scikit-learn; see :mod:`benchmarks._harness` for the method.
scikit-learn takes tens of seconds and several GB per call here, so these cases use one
memory run.
"""

from __future__ import annotations

from benchmarks._harness import Case, cases_in_both_dtypes, main

N_COMPONENTS = 2000

CASES: list[Case] = [
    case
    for degree in (2, 3)
    for case in cases_in_both_dtypes(
        "PolynomialCountSketch",
        {"degree": degree, "gamma": 1.0, "coef0": 0.0, "n_components": N_COMPONENTS,
         "random_state": 0},
        f"deg={degree} D={N_COMPONENTS}",
    )
]
SMALL_CASES: list[Case] = cases_in_both_dtypes("PolynomialCountSketch", {"random_state": 0},
                                               "defaults (deg=2 D=100)")


if __name__ == "__main__":
    main(CASES, __doc__, small_cases=SMALL_CASES)
