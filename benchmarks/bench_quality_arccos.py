"""The arc-cosine cells of ``python -m benchmarks quality``: every structure of
:class:`~kernelmaps.ArcCosineSampler` against the default's choice.

For each data set of :mod:`benchmarks.bench_quality` (the same two disjoint row draws, the
standardised sets and the quadrature paper's settings: rows divided by the largest absolute
value, D = 2n(d + 1)), degree n ∈ {0, 1, 2} and D, the relative Frobenius error
:math:`\\|K(A, B) - Z_A Z_B^\\top\\|_F / \\|K(A, B)\\|_F` of each structure (``iid``,
``orthogonal``, ``structured``, ``quadrature``), the mean over the seeds (10), the
default's structure (``structure="auto"``, read from one fit's ``structure_``) and its
ratio to the best structure, and the earlier default's (``"iid"``) ratio to the default.
A structure whose rounding changes D (``"structured"`` where D is not a multiple of
:math:`d_{pad}`) reads "n/a" and is left out of the best.

In the paper's settings a reference column gives Munkhoeva et al.'s degree-0 rule as their
code computes it (simplex directions and antipodes at radii :math:`r \\sim \\chi_{d+2}`,
weights :math:`\\sqrt d/r`, Θ(0) = ½, and the centre term
:math:`\\tfrac14(1 - \\overline{d/r^2})`), with Haar rotations in place of their butterfly
matrices; for degree 1 their rule is ``"quadrature"`` itself (the random radius cancels
against its weight), so no column is needed there.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

from benchmarks.bench_random_features import print_table
from kernelmaps.kernels import get_kernel
from kernelmaps.maps.arccos import ARCCOS_STRUCTURES, ArcCosineSampler, spherical_rule

DEGREES = (0, 1, 2)
SEEDS = 10


def error(A: np.ndarray, B: np.ndarray, K: np.ndarray, norm: float, degree: int, D: int,
          seed: int, structure: str) -> float | None:
    """One seed's relative error, or None when the structure's rounding changes D."""
    sampler = ArcCosineSampler(degree=degree, n_components=D, structure=structure,
                               random_state=seed)
    if sampler.n_features_out_for(A.shape[1]) != D:
        return None
    sampler.fit(A)
    return float(np.linalg.norm(K - sampler.transform(A) @ sampler.transform(B).T) / norm)


def paper_degree0_error(A: np.ndarray, B: np.ndarray, K: np.ndarray, norm: float, D: int,
                        seed: int) -> float:
    """Munkhoeva et al.'s degree-0 rule (see the module docstring), one seed."""
    random_state = np.random.RandomState(seed)
    d = A.shape[1]
    directions, _ = spherical_rule(d, D, random_state)
    radii = np.sqrt(random_state.chisquare(d + 2, size=D // 2)).repeat(2)
    weights = np.sqrt(d) / radii

    def features(X: np.ndarray) -> np.ndarray:
        return np.heaviside(X @ directions.T, 0.5) * weights

    K_hat = 2.0 * (features(A) @ features(B).T / D + 0.25 * (1.0 - np.mean(weights ** 2)))
    return float(np.linalg.norm(K - K_hat) / norm)


def cell_record(name: str, A: np.ndarray, B: np.ndarray, degree: int, D: int, seeds: int,
                paper: bool) -> dict:
    """Every structure's mean error, the default's structure and the ratios."""
    K = get_kernel("arccos", degree=degree)(A, B)
    norm = float(np.linalg.norm(K))
    errors: dict[str, float | None] = {}
    for structure in ARCCOS_STRUCTURES:
        values = [error(A, B, K, norm, degree, D, seed, structure) for seed in range(seeds)]
        errors[structure] = None if None in values else statistics.mean(values)
    default_form = ArcCosineSampler(degree=degree, n_components=D, random_state=0).fit(
        A).structure_
    best_form = min((f for f in errors if errors[f] is not None), key=errors.__getitem__)
    default = errors[default_form]
    reference = None
    if paper and degree == 0 and D % 2 == 0:
        reference = statistics.mean(paper_degree0_error(A, B, K, norm, D, seed)
                                    for seed in range(seeds))
    return {"set": name, "d": A.shape[1], "rows": len(A), "degree": degree, "D": D,
            "errors": errors, "default": default, "default_form": default_form,
            "best_form": best_form, "ratio": default / errors[best_form],
            "iid_over_default": errors["iid"] / default, "paper_rule": reference}


def run(settings: Sequence, seeds: int | None, report=print) -> list[dict]:
    """The cells of every setting (``bench_quality.Setting``: name, A, B, dimensions)."""
    records = []
    for setting in settings:
        paper = setting.name.endswith("(paper)")
        for degree in DEGREES:
            for D in setting.dimensions:
                records.append(cell_record(setting.name, setting.A, setting.B, degree, D,
                                           seeds or SEEDS, paper))
                report(f"  arccos-{degree} {setting.name} D={D}: default/best "
                       f"{records[-1]['ratio']:.2f}, iid/default "
                       f"{records[-1]['iid_over_default']:.2f}")
    return records


def print_records(records: Sequence[dict]) -> None:
    headers = ["set (d, rows)", "n", "D", *ARCCOS_STRUCTURES, "default form", "default/best",
               "iid/default", "paper's n=0 rule"]
    rows = [[f"{r['set']} ({r['d']}, {r['rows']})", str(r["degree"]), str(r["D"]),
             *("n/a" if r["errors"][s] is None else f"{r['errors'][s]:.4f}"
               for s in ARCCOS_STRUCTURES),
             r["default_form"], f"{r['ratio']:.2f}", f"{r['iid_over_default']:.2f}",
             "" if r["paper_rule"] is None else f"{r['paper_rule']:.4f}"] for r in records]
    print_table(headers, rows)
    for degree in DEGREES:
        cells = [r for r in records if r["degree"] == degree]
        if not cells:
            continue
        ratios = [r["ratio"] for r in cells]
        gains = [r["iid_over_default"] for r in cells]
        print(f"arc-cosine n={degree}: default/best max {max(ratios):.2f} over {len(cells)} "
              f"cells; iid (the earlier default) / default {min(gains):.2f} – "
              f"{max(gains):.2f}")
    print()
