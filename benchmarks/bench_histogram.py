"""Histogram-kernel maps: AdditiveChi2Sampler and SkewedChi2Sampler, kernelmaps vs scikit-learn.

Measures ``fit_transform`` of

* ``AdditiveChi2Sampler(sample_steps=2)`` (300 output columns) on a 5%-dense CSR matrix
  (CSR output) and on dense non-negative uniform data;
* ``SkewedChi2Sampler(skewedness=1.0, n_components=2000, random_state=0)`` on dense data;

each in float64 and float32, X of 50,000 × 100; and both maps with their defaults
(``AdditiveChi2Sampler()`` dense and CSR, ``SkewedChi2Sampler(random_state=0)``, D=100) at
the small sizes (digits, 10,000 × 100): median wall time of interleaved repeats,
tracemalloc peak memory and agreement with scikit-learn; see :mod:`benchmarks._harness`
for the method.
"""

from __future__ import annotations

from benchmarks._harness import Case, cases_in_both_dtypes, main

N_COMPONENTS = 2000
ADDITIVE = {"sample_steps": 2}

CASES: list[Case] = [
    *cases_in_both_dtypes("AdditiveChi2Sampler", ADDITIVE, "steps=2", data="csr"),
    *cases_in_both_dtypes("AdditiveChi2Sampler", ADDITIVE, "steps=2"),
    *cases_in_both_dtypes(
        "SkewedChi2Sampler",
        {"skewedness": 1.0, "n_components": N_COMPONENTS, "random_state": 0},
        f"D={N_COMPONENTS}",
    ),
]
SMALL_CASES: list[Case] = [
    *cases_in_both_dtypes("AdditiveChi2Sampler", {}, "defaults (steps=2)", data="csr"),
    *cases_in_both_dtypes("AdditiveChi2Sampler", {}, "defaults (steps=2)"),
    *cases_in_both_dtypes("SkewedChi2Sampler", {"random_state": 0}, "defaults (D=100)"),
]


if __name__ == "__main__":
    main(CASES, __doc__, small_cases=SMALL_CASES)
