"""kernelmaps.evaluate.advise: what to use, on tables whose answer is known (issue 12)."""

import math
import re

import numpy as np
import pandas as pd
import pytest

import kernelmaps.evaluate.advice as advice_module
from kernelmaps.evaluate import advise
from kernelmaps.evaluate.advice import advice_sentence
from kernelmaps.kernels import get_kernel


def _table(rows):
    return pd.DataFrame.from_records(
        [{"method": m, "n_components": d, "n_features_out": d, "runs": 1, "score": s,
          "total_time_s": t, "peak_memory_mb": d / 10} for m, d, s, t in rows])


def _timed(rows):
    """A summary with CPU times: (method, D, score, CPU time of each run, MB)."""
    records = []
    for m, d, s, runs, mb in rows:
        runs = np.asarray(runs, dtype=float)
        median = float(np.median(runs))
        records.append({"method": m, "n_components": d, "n_features_out": d,
                        "runs": runs.size, "score": s, "total_time_s": median,
                        "cpu_time_s": median, "cpu_time_min_s": runs.min(),
                        "cpu_time_max_s": runs.max(),
                        "cpu_time_mad_s": float(np.median(np.abs(runs - median))),
                        "peak_memory_mb": mb})
    return pd.DataFrame.from_records(records)


EXACT_ROW = ("exact", 1000, 0.90, [5.0], 80.0)


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
    # rbf_sampler (0.6 s) is faster than nystroem (1.0 s) beyond the timing noise: the bands
    # 0.6 × 1.25 = 0.75 and 1.0 / 1.25 = 0.8 do not overlap.
    assert advice["fastest"].tolist() == [False, True]
    assert advice["advised"].tolist() == [False, True]
    assert advice.loc["nystroem", "score_gap"] == pytest.approx(0.005 / 0.9)
    assert "exact kernel" in advice.attrs["reference"]
    assert advice_sentence(advise(table, 0.01)).startswith("Use rbf_sampler with "
                                                            "n_components=200")
    # A looser tolerance: the first nystroem dimension within 12 %, and it is the fastest.
    loose = advise(table, tolerance=0.12).set_index("method")
    assert loose.loc["nystroem", "n_components"] == 50
    assert loose.loc["rbf_sampler", "n_components"] == 50 and loose.loc["rbf_sampler",
                                                                          "advised"]


def test_power_law_gap_is_extrapolated_and_said_so():
    # gap = 0.4 · D^-0.5 (relative to 1.0): reaches 1 % at D = (0.4 / 0.01)² = 1600.
    rows = [("exact", 5000, 1.0, 10.0)]
    rows += [("rbf_sampler", d, 1.0 - 0.4 * d**-0.5, d / 100) for d in (25, 100, 400)]
    advice = advise(_table(rows), tolerance=0.01).iloc[0]
    assert not advice["meets"] and advice["n_components"] == 400
    assert advice["estimated_n_features_out"] == pytest.approx(1600, rel=1e-6)
    assert "likely needs about 1,600 output features (log-log extrapolation of the score " \
        "gap from 3 dimensions" in advice["advice"]
    assert "slope -0.50" in advice["advice"]


def test_no_method_within_the_target_names_the_closest_and_the_next_command():
    # rbf_sampler: gap 0.4·D^-0.5, 2 % at D = 400 (closest); reaches 1 % at D = 1,600.
    rows = [("exact", 5000, 1.0, 10.0)]
    rows += [("rbf_sampler", d, 1.0 - 0.4 * d**-0.5, d / 100) for d in (25, 100, 400)]
    rows += [("nystroem", d, 1.0 - 0.5 * d**-0.5, d / 100) for d in (25, 100, 400)]
    sentence = advice_sentence(advise(_table(rows), tolerance=0.01))
    assert "Closest: rbf_sampler at D=400, score 0.98, 2 % below the reference." in sentence
    assert "Next: rerun with --methods rbf_sampler --n-components 800,1600 (its trend " \
        "reaches the tolerance at about 1,600 output features)." in sentence


def test_an_estimate_too_large_to_be_sensible_is_said_so_in_plain_words():
    # A gap that barely shrinks: its line reaches 1 % near D = 1e12.
    rows = [("exact", 5000, 1.0, 10.0)]
    rows += [("rbf_sampler", d, 1.0 - 0.1 * d**-0.1, d / 100) for d in (25, 100, 400)]
    advice = advise(_table(rows), tolerance=0.01)
    text = advice.iloc[0]["advice"]
    assert "beyond 1,000,000 output features, too many to be sensible" in text
    assert not re.search(r"\d[eE][+-]?\d", text), text  # no 2.59e+09
    sentence = advice_sentence(advice)
    assert 'Next: a larger D is out of this map\'s reach; fit the kernel machine with ' \
        'FALKON instead, KernelRidgeClassifier(solver="falkon", n_components=5000) (5,000 ' \
        'centres' in sentence


def test_a_landmark_map_is_never_advised_more_landmarks_than_training_rows():
    # nystroem reaches 1 % at D = 1,600 by its trend, but there are 1,000 training rows.
    rows = [("exact", 1000, 1.0, 10.0)]
    rows += [("nystroem", d, 1.0 - 0.4 * d**-0.5, d / 100) for d in (25, 100, 400)]
    advice = advise(_table(rows), tolerance=0.01)
    assert "more than the 1,000 training rows a landmark map can use" in \
        advice.iloc[0]["advice"]
    assert 'n_components=1000) (1,000 centres' in advice_sentence(advice)


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
    assert not advice["fastest"].any() and not advice["advised"].any()
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
    assert advice["n_components"].tolist() == [200] and advice["advised"].all()
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


# --------------------------------------------------------------------------- the tie rule
def test_times_within_the_noise_are_tied_and_memory_decides():
    # a's median 1.0 s and b's 1.2 s are within TIME_NOISE (25 %) of each other: tied; b
    # needs less memory, so b is advised although its median is slower.
    advice = advise(_timed([EXACT_ROW, ("a", 100, 0.9, [0.95, 1.0, 1.05], 20.0),
                            ("b", 100, 0.9, [1.1, 1.2, 1.3], 10.0)]))
    assert advice["fastest"].tolist() == [True, True]
    assert advice["advised"].tolist() == [False, True]
    assert "as fast as a within the timing noise, with the least memory" in \
        advice_sentence(advice)


def test_a_method_faster_beyond_the_noise_wins_whatever_its_memory():
    # 1.0 s against 2.0 s: 1.0 × 1.25 < 2.0 / 1.25.
    advice = advise(_timed([EXACT_ROW, ("a", 100, 0.9, [0.95, 1.0, 1.05], 50.0),
                            ("b", 100, 0.9, [1.9, 2.0, 2.1], 10.0)]))
    assert advice["fastest"].tolist() == [True, False]
    assert advice["advised"].tolist() == [True, False]
    assert advice_sentence(advice).startswith("Use a with n_components=100: within 1 % of "
                                              "the reference score and the fastest (1 s CPU")


def test_scattered_runs_widen_the_band_one_disturbed_run_does_not():
    # Medians 1.0 and 1.8 s are beyond the 25 % floor (1.25 < 1.44). a's runs scatter by
    # 0.2 s (MAD; 3 MAD = 60 %): its timings are that noisy, so b (less memory) is tied with
    # it and advised.
    b = ("b", 100, 0.9, [1.7, 1.8, 1.9], 10.0)
    assert advise(_timed([EXACT_ROW, ("a", 100, 0.9, [0.8, 1.0, 1.2], 50.0), b]))[
        "advised"].tolist() == [False, True]
    # One disturbed run (4 s) is no scatter: a's MAD is 0.05 s, a stays clearly faster.
    assert advise(_timed([EXACT_ROW, ("a", 100, 0.9, [0.95, 1.0, 4.0], 50.0), b]))[
        "advised"].tolist() == [True, False]


def test_memory_within_five_percent_is_equal_then_the_smaller_d_then_score_then_listing():
    # Tied on time; memories 10.0 and 10.3 MB (3 % apart) are equal; a's D = 128 is smaller.
    rows = [EXACT_ROW, ("b", 256, 0.9, [1.0], 10.0), ("a", 128, 0.9, [1.1], 10.3)]
    advice = advise(_timed(rows))
    assert advice.set_index("method")["advised"].to_dict() == {"b": False, "a": True}
    assert "of those with the least memory (within 5 %, with b), the smallest D" in \
        advice_sentence(advice)
    # Same D too: the better score wins, whichever median is smaller (not a coin toss)...
    rows[2] = ("a", 256, 0.91, [0.9], 10.3)
    advice = advise(_timed(rows))
    assert advice["method"].tolist() == ["b", "a"] and advice["advised"].tolist() == [False, True]
    assert "and the same D as b, the best score" in advice_sentence(advice)
    # ... and with the same score, the first listed.
    rows[2] = ("a", 256, 0.9, [0.9], 10.3)
    advice = advise(_timed(rows))
    assert advice["method"].tolist() == ["b", "a"] and advice["advised"].tolist() == [True, False]
    assert "the same D and the same score as a, listed first" in advice_sentence(advice)
    # 6 % less memory is not equal: the smaller wins again.
    rows[2] = ("a", 256, 0.9, [0.9], 9.4)
    assert advise(_timed(rows))["advised"].tolist() == [False, True]


def test_a_borderline_method_tied_in_one_run_only_does_not_change_the_advice():
    # Measured on digits at D = 400: Nyström at 1.5-1.9x the random features' CPU time from
    # run to run, so tied with them in some runs only; same memory and D, a lower score. It
    # is listed first, and before the score step it was advised whenever it was tied.
    def run(nystroem_time):
        rows = [EXACT_ROW, ("nystroem", 400, 0.9859, [nystroem_time], 15.45),
                ("rbf_sampler", 400, 0.9874, [0.0275], 15.45),
                ("rff", 400, 0.9844, [0.0276], 15.45)]
        advice = advise(_timed(rows))
        return advice, advice.loc[advice["advised"], "method"].item()

    tied, advised_tied = run(0.040)      # 1.45x: inside the band
    apart, advised_apart = run(0.052)    # 1.89x: outside
    assert tied.set_index("method")["fastest"]["nystroem"]
    assert not apart.set_index("method")["fastest"]["nystroem"]
    assert advised_tied == advised_apart == "rbf_sampler"


def test_timing_noise_inside_the_band_never_changes_the_advice():
    # Three methods meeting the tolerance, tied on time: any timings within ±10 % of these
    # (what two identical runs differ by), with now and then one run disturbed 3x, give the
    # same advice; memory and D decide.
    # (c / a at most 1.25 · 1.1 / 0.9 = 1.53 < 1.25², the floor's widest tie.)
    base = {"a": (1.0, 30.0, 256), "b": (1.15, 12.0, 256), "c": (1.25, 12.2, 128)}
    rng = np.random.RandomState(0)
    advised = set()
    for _ in range(200):
        rows = [EXACT_ROW]
        for method, (t, mb, d) in base.items():
            runs = t * rng.uniform(0.9, 1.1, size=3)
            runs[rng.randint(3)] *= 3.0 if rng.rand() < 0.3 else 1.0
            rows.append((method, d, 0.9, runs, mb))
        advice = advise(_timed(rows))
        advised.add(advice.loc[advice["advised"], "method"].item())
    assert advised == {"c"}  # b and c tie on memory (within 5 %); c has the smaller D


def test_a_table_without_cpu_times_uses_the_total_time():
    # Tables of earlier versions (and hand-made ones) have total_time_s only: one run each.
    rows = [("exact", 1000, 0.90, 50.0), ("a", 100, 0.9, 1.0), ("b", 100, 0.9, 1.2)]
    table = _table(rows)
    table["peak_memory_mb"] = [80.0, 20.0, 10.0]
    advice = advise(table)
    assert advice["cpu_time_s"].tolist() == [1.0, 1.2] and advice["advised"].tolist() == [
        False, True]


@pytest.fixture(scope="module")
def digits_advice_twice():
    from sklearn.datasets import load_digits

    from kernelmaps.evaluate import compare

    X, y = load_digits(return_X_y=True)
    # At one fixed alpha (the scores, times and memories below were measured so): choosing
    # alpha per row adds each row's own eigendecomposition and moves those numbers.
    # Nyström is left out: at this alpha it takes 1.5-1.7x rff's time (measured), at the
    # edge of the band, with rff's memory and a better score, so it is tied in some runs and
    # not in others, and advised when tied (test_a_borderline_method_... shows the case the
    # score step settles; this one it cannot).
    # Five seeds: a method's time is the median of five runs.
    settings = {"kernel": get_kernel("rbf", gamma=0.0002), "n_components": [50, 400],
                "methods": ["rff", "orthogonal", "structured"], "n_seeds": 5,
                "error_sample": 200, "alpha": 1e-2}
    # One run on worker processes, one in this process: two runs of the same comparison.
    tables = [compare(X, y, n_jobs=n_jobs, **settings) for n_jobs in (2, 1)]
    # rff and orthogonal do the same work, but a process's CPU clock counts the cycles it
    # waits for memory the other core contends for: beside a busy process one median came
    # out 1.58x the other's in 50 runs (1.0-1.4x in the rest), outside the rule's 1.56x band,
    # which flipped `advised` in one full-suite run in six. The band is widened to 4x here,
    # so timings cannot decide; what this test asserts is that everything else (scores,
    # memory, D, the sentence) is the same in two runs. The band itself is tested on
    # synthetic tables above.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(advice_module, "TIME_NOISE", 1.0)
        return [advise(table, tolerance=0.025) for table in tables]


def test_two_identical_runs_on_digits_give_the_same_advice(digits_advice_twice):
    # Far from every edge by construction. Scores: at D = 400 (448) every method is within
    # 0.8 % of the exact 0.991, at D = 50 (64) each is 4.8 % or more below it; a 2.5 %
    # tolerance is 7 test rows of 450 from both. Times: every method is tied (the fixture's
    # 4x band); rff and orthogonal have the least memory (15.4 MB; structured 17.4, 13 %
    # more) and the same D: the better scoring of the two, or rff, listed first, if they
    # score the same, is advised whatever the timings.
    first, second = digits_advice_twice
    columns = ["method", "n_components", "n_features_out", "score", "meets", "advised"]
    pd.testing.assert_frame_equal(first[columns], second[columns])
    assert first["meets"].all() and first["n_components"].tolist() == [400] * 3
    scores = first.set_index("method")["score"]
    if abs(scores["rff"] - scores["orthogonal"]) <= 1e-9:
        best, other, why = "rff", "orthogonal", "the same D and the same score as orthogonal, " \
                                                "listed first"
    else:
        best, other = sorted(["rff", "orthogonal"], key=lambda m: -scores[m])
        why = f"the same D as {other}, the best score"
    assert first.loc[first["advised"], "method"].item() == best
    # The advice and why it is the one it is may not differ between runs.
    for advice in (first, second):
        sentence = advice_sentence(advice)
        assert re.match(rf"Use {best} with n_components=400: within 2\.5 % of the reference "
                        rf"score and as fast as .*{other}.* within the timing noise; with "
                        rf"the least memory \(within 5 %, with {other}\)", sentence), sentence
        assert why in sentence, sentence
