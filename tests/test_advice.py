"""kernelmaps.evaluate.advise: what to use, on tables whose answer is known (issue 12)."""

import math

import pandas as pd
import pytest

from kernelmaps.evaluate import advise
from kernelmaps.evaluate.advice import advice_sentence


def _table(rows):
    return pd.DataFrame.from_records(
        [{"method": m, "n_components": d, "n_features_out": d, "runs": 1, "score": s,
          "total_time_s": t, "peak_memory_mb": d / 10} for m, d, s, t in rows])


def test_smallest_dimension_within_tolerance_and_the_fastest_method():
    table = _table([
        ("exact", 1000, 0.90, 50.0),
        ("nystroem", 50, 0.80, 0.5), ("nystroem", 100, 0.895, 1.0), ("nystroem", 200, 0.90, 2.0),
        ("rbf_sampler", 50, 0.85, 0.1), ("rbf_sampler", 100, 0.89, 0.3),  # gap 1.1 %: no
        ("rbf_sampler", 200, 0.8915, 0.6),  # gap 0.94 %: yes, and faster than nystroem's 1.0 s
    ])
    advice = advise(table, tolerance=0.01).set_index("method")
    assert advice.loc["nystroem", "n_components"] == 100 and advice.loc["nystroem", "meets"]
    assert advice.loc["rbf_sampler", "n_components"] == 200
    assert advice["fastest"].tolist() == [False, True]
    assert advice.loc["nystroem", "score_gap"] == pytest.approx(0.005 / 0.9)
    assert "exact kernel" in advice.attrs["reference"]
    assert advice_sentence(advise(table, 0.01)).startswith("Use rbf_sampler with "
                                                            "n_components=200")
    # A looser tolerance: the first nystroem dimension within 12 %, and it is the fastest.
    loose = advise(table, tolerance=0.12).set_index("method")
    assert loose.loc["nystroem", "n_components"] == 50
    assert loose.loc["rbf_sampler", "n_components"] == 50 and loose.loc["rbf_sampler",
                                                                          "fastest"]


def test_power_law_gap_is_extrapolated_and_said_so():
    # gap = 0.4 · D^-0.5 (relative to 1.0): reaches 1 % at D = (0.4 / 0.01)² = 1600.
    rows = [("exact", 5000, 1.0, 10.0)]
    rows += [("rbf_sampler", d, 1.0 - 0.4 * d**-0.5, d / 100) for d in (25, 100, 400)]
    advice = advise(_table(rows), tolerance=0.01).iloc[0]
    assert not advice["meets"] and advice["n_components"] == 400
    assert advice["estimated_n_features_out"] == pytest.approx(1600, rel=1e-6)
    assert "likely needs D ≈ 1.6e+03 output features (log-log extrapolation of the score " \
        "gap from 3 dimensions" in advice["advice"]
    assert "slope -0.50" in advice["advice"]


def test_a_map_that_rounds_d_up_is_advised_by_its_real_dimension():
    rows = [("exact", 500, 0.9, 9.0)]
    rows += [("fastfood", n, 0.9, 1.0) for n in (25, 50)]  # both give D = 64
    table = _table(rows)
    table["n_features_out"] = [500, 64, 64]
    advice = advise(table)
    assert advice["n_components"].tolist() == [25] and advice["n_features_out"].tolist() == [64]
    assert advice_sentence(advice).startswith("Use fastfood with n_components=25 (D=64 output "
                                              "features)")


def test_no_trend_no_number():
    rows = [("exact", 500, 0.9, 1.0), ("a", 10, 0.5, 0.1), ("a", 20, 0.4, 0.1),
            ("b", 10, 0.5, 0.1)]
    advice = advise(_table(rows)).set_index("method")
    assert math.isnan(advice.loc["a", "estimated_n_features_out"])
    assert "does not shrink" in advice.loc["a", "advice"]
    assert "too few output dimensions" in advice.loc["b", "advice"]
    assert not advice["fastest"].any()
    assert advice_sentence(advise(_table(rows))).startswith("No method came within 1 %")


def test_without_exact_baseline_the_reference_is_labelled():
    rows = [("a", 10, 0.80, 0.1), ("a", 100, 0.95, 1.0), ("b", 10, 0.94, 0.2)]
    advice = advise(_table(rows))
    assert advice.attrs["reference"].startswith("no exact baseline: the best approximation "
                                                "tried, a at n_components=100")
    # b's 0.94 is 1.05 % below the reference 0.95: not within 1 %, within 2 %.
    assert not advice.set_index("method").loc["b", "meets"]
    assert advise(_table(rows), tolerance=0.02).set_index("method").loc["b", "meets"]


def test_from_a_compare_table_and_bad_tolerance():
    from sklearn.datasets import load_digits

    from kernelmaps.evaluate import compare, summarize
    from kernelmaps.kernels import get_kernel

    X, y = load_digits(return_X_y=True)
    table = compare(X[:300], y[:300], kernel=get_kernel("rbf", gamma=0.001),
                    methods=["nystroem"], n_components=[20, 200], n_seeds=1)
    summary = summarize(table).set_index("n_components")
    exact, small, large = summary["score"].iloc[0], summary.loc[20, "score"], \
        summary.loc[200, "score"]
    tolerance = ((exact - small) + (exact - large)) / 2 / exact  # between the two gaps
    advice = advise(table, tolerance=tolerance)
    assert advice["method"].tolist() == ["nystroem"]
    assert advice["n_components"].tolist() == [200] and advice["fastest"].all()
    with pytest.raises(ValueError, match="tolerance must be a relative score gap"):
        advise(table, tolerance=5)


@pytest.mark.parametrize(("table", "error", "match"), [
    ("results.csv", TypeError, "got str"),
    (pd.DataFrame(), ValueError, "lacks the columns"),
    (pd.DataFrame(columns=["method", "n_components", "n_features_out", "score",
                           "total_time_s", "peak_memory_mb"]), ValueError, "no rows"),
])
def test_a_table_that_is_not_compares_output_is_refused_clearly(table, error, match):
    with pytest.raises(error, match=match):
        advise(table)
