r"""What to use: the smallest output dimension of each map that scores like the exact kernel.

:func:`advise` reads a :func:`~kernelmaps.evaluate.compare` table. For each method it finds
the smallest output dimension whose mean test score is within ``tolerance`` (relative) of the
reference score — the exact-kernel baseline — with its time and memory, and advises one of
the methods that meet it. When a method meets it at none of the dimensions tried, the
dimension it would likely need is estimated from the trend of its score gap, and the estimate
says how: a least-squares line through :math:`(\log D, \log \text{gap})` over the dimensions
tried with a positive gap, extrapolated to :math:`\log(\text{tolerance})` (random-feature
errors decay like :math:`D^{-1/2}`, Nyström's faster: a power law is the usual shape). No
line, no number: with fewer than two such dimensions, or a gap that does not shrink, it says
so.

**Which method is advised: the tie rule.** Timings are noisy, so two runs of the same
comparison must not advise different methods because one map was a few per cent faster this
time. A method's time is the median CPU time :math:`t` of its runs (the seeds and folds
repeat the same work; CPU time is what other processes on the machine do not inflate), and
its noise band is :math:`[t/(1+w), t(1+w)]` with :math:`w = \max(\text{TIME\_NOISE},
3\,\text{MAD}/t)`: at least :data:`TIME_NOISE` = 0.25 (the medians of two identical runs,
or of a serial and a parallel run, measured up to 1.2× apart on a busy 2-core machine), and
wider for a method whose runs scatter more — measured by their median absolute deviation
(:data:`NOISE_MADS`), which one disturbed run among three does not move. Among the
methods that meet the tolerance:

1. those whose band overlaps the band of the fastest (least median) are **tied** with it;
2. among them, those within :data:`MEMORY_TOLERANCE` (5 %) of the least peak memory
   (tracemalloc peaks of two identical runs differ by kilobytes);
3. among those, the smallest output dimension D;
4. among those, the best mean test score (the same data and seeds give the same score, to
   rounding; scores within :data:`SCORE_ROUNDING` of each other are equal);
5. and then the first in the method listing (registry order).

Each step uses only quantities that do not change between identical runs, except the
band overlap. A method near the edge of the fastest's band (measured: Nyström at 1.5–1.9×
the random features' time on digits at D = 400, from run to run) may be tied in one run and
not in the next; steps 2–5 then pick the same method either way unless the borderline
method beats the others on memory, D or score — before step 4 it won by its place in the
listing, and two identical runs on digits advised ``nystroem`` in one run and
``rbf_sampler`` in five.

Without an exact baseline the reference is the best mean score of any method at its largest
dimension, and ``DataFrame.attrs["reference"]`` says so: the advice is then relative to the
best approximation tried, not to the kernel.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelmaps._optional import import_optional
from kernelmaps.evaluate.comparison import summarize
from kernelmaps.evaluate.registry import EXACT, METHODS

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

__all__ = ["MEMORY_TOLERANCE", "NOISE_MADS", "NOISE_SES", "TIME_NOISE", "advise"]

#: The least relative timing noise assumed around a method's median time (see the module).
TIME_NOISE = 0.25
#: A method's runs spread by more than the floor widen its band: this many median absolute
#: deviations either side (about two standard deviations for normal noise; one disturbed run
#: of three does not move it, unlike the range).
NOISE_MADS = 3.0
#: Peak memories within this relative difference of the least are taken as equal.
MEMORY_TOLERANCE = 0.05
#: Mean scores closer than this (relative) are equal in the tie rule's score step: far below
#: one test row's weight, far above the rounding of a mean of a few accuracies.
SCORE_ROUNDING = 1e-9

ADVICE_COLUMNS = ("method", "n_components", "n_features_out", "score", "score_gap",
                  "total_time_s", "cpu_time_s", "cpu_time_min_s", "cpu_time_max_s",
                  "cpu_time_mad_s", "peak_memory_mb", "meets", "fastest", "advised",
                  "estimated_n_features_out", "beats_reference", "above_reason", "score_diff_se",
                  "advice")

#: An estimated output dimension above this is said as "too large to be sensible", not as a
#: number: a million features on even 10,000 rows is 80 GB of float64 features.
LARGEST_SENSIBLE_D = 1_000_000

#: A score above the exact kernel's by more than this many standard errors of the paired
#: difference on the test rows is beyond the test split's noise (about 95 %, two-sided).
NOISE_SES = 2.0


#: The columns of :func:`compare`'s table (and of its summary) that the advice reads.
_NEEDED = ("method", "n_components", "n_features_out", "score", "total_time_s",
           "peak_memory_mb")


def _summary(table: pd.DataFrame) -> pd.DataFrame:
    pd = import_optional("pandas")
    if not isinstance(table, pd.DataFrame):
        raise TypeError("table must be the DataFrame returned by kernelmaps.evaluate.compare "
                        f"(or its summarize()); got {type(table).__name__}.")
    missing = [column for column in _NEEDED if column not in table.columns]
    if missing or table.empty:
        raise ValueError("table must be the DataFrame returned by kernelmaps.evaluate.compare "
                         "(or its summarize()): "
                         + (f"it lacks the columns {missing}." if missing else "it has no rows."))
    return table if "runs" in table.columns else summarize(table)


def _reference(summary: pd.DataFrame) -> tuple[float, str]:
    exact = summary[summary["method"] == EXACT]
    if len(exact):
        score = float(exact["score"].iloc[0])
        return score, f"the exact kernel's score ({score:.4g})"
    largest = summary.loc[summary.groupby("method")["n_components"].idxmax()]
    best = largest.loc[largest["score"].idxmax()]
    return float(best["score"]), (
        f"no exact baseline: the best approximation tried, {best['method']} at "
        f"n_components={int(best['n_components'])} ({float(best['score']):.4g}) — not the "
        "kernel itself")


def plain(value: float) -> str:
    """A count in plain notation, two significant digits and thousands separators
    (``2,600``), never ``2.59e+03``."""
    return f"{round(float(f'{value:.2g}')):,}"


def _extrapolate(dimensions: np.ndarray, gaps: np.ndarray, tolerance: float,
                 tried: int, limit: int | None) -> tuple[float, str]:
    """The dimension a log-log fit of the gap reaches ``tolerance`` at, and how it was found;
    ``limit``: the most output features the map can have (a landmark map's training rows)."""
    positive = gaps > 0
    points = np.unique(dimensions[positive]).size
    missed = f"not within tolerance up to D={tried:,}"
    if points < 2:
        return math.nan, (f"{missed}; too few output dimensions with a positive score gap "
                          "to estimate a trend")
    slope, intercept = np.polyfit(np.log(dimensions[positive]), np.log(gaps[positive]), 1)
    if slope >= 0:
        return math.nan, (f"{missed}; the score gap does not shrink with D over {points} "
                          "dimensions: no estimate")
    needed = float(math.exp((math.log(tolerance) - intercept) / slope))
    how = f"log-log extrapolation of the score gap from {points} dimensions, slope {slope:.2f}"
    if needed > LARGEST_SENSIBLE_D:
        return needed, (f"{missed}; the trend reaches the tolerance only beyond "
                        f"{LARGEST_SENSIBLE_D:,} output features, too many to be sensible: "
                        f"this map will not get there ({how})")
    if limit is not None and needed > limit:
        return needed, (f"{missed}; the trend reaches the tolerance only at about "
                        f"{plain(needed)} output features, more than the {limit:,} training "
                        f"rows a landmark map can use ({how})")
    return needed, f"{missed}; likely needs about {plain(needed)} output features ({how})"


def _above_reference(row: Any, reference: float, exact: Any,
                     selected: bool | None) -> tuple[str, str]:
    """Why a row scores above the exact kernel — ``'noise'`` (within :data:`NOISE_SES`
    standard errors of the paired difference), ``'regularisation'`` (beyond) or
    ``'unknown'`` (no standard error) — and the sentence saying so."""
    difference = float(row["score"]) - reference
    se = float(row.get("score_diff_se", math.nan))
    where = (f"from n_components={int(row['n_components'])} "
             f"(D={int(row['n_features_out'])})")
    if not math.isfinite(se) or se <= 0:
        return "unknown", (f"scores above the exact kernel by {difference:.3g} {where}; the "
                           "noise of the test split is unknown here (no per-row comparison)")
    if difference <= NOISE_SES * se:
        return "noise", (f"scores above the exact kernel by {difference:.3g} {where}, within "
                         f"the test split's noise ({difference / se:.1f} standard errors of "
                         "the paired difference): as good as the exact kernel, not better")
    alpha, exact_alpha = float(row.get("alpha", math.nan)), float(exact.get("alpha", math.nan))
    same_alpha = math.isfinite(alpha) and alpha == exact_alpha
    if (not selected if selected is not None else same_alpha):
        cause = (f"at one fixed alpha ({alpha:.3g}) the exact kernel is likely "
                 "under-regularised and the map's finite D acts as extra regularisation; "
                 "compare with alpha chosen per row")
    else:
        cause = ("the map's finite D likely acts as extra regularisation (a low-rank "
                 "feature space cuts off the kernel's small eigen-directions, which ridge's "
                 "alpha on the exact kernel only shrinks)")
    return "regularisation", (
        f"scores above the exact kernel by {difference:.3g} {where}, beyond the test "
        f"split's noise ({difference / se:.1f} standard errors of the paired "
        f"difference): {cause}")


def _times(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with the time the advice compares: median CPU time, its spread and its
    noise (or, for a table without CPU times, the total time as a single run)."""
    summary = summary.copy()
    if "cpu_time_s" not in summary.columns:
        summary["cpu_time_s"] = summary["total_time_s"]
    for bound in ("cpu_time_min_s", "cpu_time_max_s"):
        if bound not in summary.columns:
            summary[bound] = summary["cpu_time_s"]
    if "cpu_time_mad_s" not in summary.columns:
        summary["cpu_time_mad_s"] = 0.0
    return summary


def _band(row: Any) -> tuple[float, float]:
    """A method's timing noise band: a factor ``1 + w`` either side of its median, ``w``
    the larger of TIME_NOISE and NOISE_MADS median absolute deviations (relative)."""
    median = float(row["cpu_time_s"])
    spread = NOISE_MADS * float(row["cpu_time_mad_s"]) / median if median > 0 else 0.0
    width = 1 + max(TIME_NOISE, spread)
    return median / width, median * width


def _choose(advice: pd.DataFrame) -> tuple[list[int], int | None, str]:
    """The tie rule (see the module): the rows tied with the fastest, the advised row, and
    a phrase saying why it (empty when no row meets the tolerance)."""
    meeting = advice.index[advice["meets"]].tolist()
    if not meeting:
        return [], None, ""
    bands = {i: _band(advice.loc[i]) for i in meeting}
    fastest = min(meeting, key=lambda i: (advice.loc[i, "cpu_time_s"], i))
    tied = [i for i in meeting if bands[i][0] <= bands[fastest][1]]
    least = min(advice.loc[i, "peak_memory_mb"] for i in tied)
    small = [i for i in tied
             if advice.loc[i, "peak_memory_mb"] <= least * (1 + MEMORY_TOLERANCE)]
    smallest_d = min(advice.loc[i, "n_features_out"] for i in small)
    narrowest = [i for i in small if advice.loc[i, "n_features_out"] == smallest_d]
    best_score = max(advice.loc[i, "score"] for i in narrowest)
    # Scores equal to rounding are equal: the mean of the same accuracies summed in another
    # order differs in its last bits.
    best = [i for i in narrowest
            if advice.loc[i, "score"] >= best_score - SCORE_ROUNDING * max(1.0, abs(best_score))]
    chosen = best[0]

    def others(rows: list[int]) -> str:
        return _names([advice.loc[i, "method"] for i in rows if i != chosen])

    if len(tied) == 1:
        return tied, chosen, "the fastest"
    why = f"as fast as {others(tied)} within the timing noise"
    if len(small) == 1:
        return tied, chosen, why + ", with the least memory"
    memory = f"the least memory (within {_percent(MEMORY_TOLERANCE)}, with {others(small)})"
    if len(narrowest) == 1:
        return tied, chosen, f"{why}; of those with {memory}, the smallest D"
    if len(best) == 1:
        return tied, chosen, (f"{why}; with {memory} and the same D as {others(narrowest)}, "
                              "the best score")
    return tied, chosen, (f"{why}; with {memory}, the same D and the same score as "
                          f"{others(best)}, listed first")


def advise(table: pd.DataFrame, tolerance: float = 0.01) -> pd.DataFrame:
    r"""Advise the smallest ``n_components`` of each method and the one method to use.

    For each method, the smallest ``n_components`` scoring within ``tolerance`` of exact.

    Parameters
    ----------
    table : DataFrame
        The output of :func:`~kernelmaps.evaluate.compare` (or of
        :func:`~kernelmaps.evaluate.summarize`).
    tolerance : float, default=0.01
        Largest relative score gap :math:`(s_\text{ref} - s)/|s_\text{ref}|` accepted
        (0.01: within 1 % of the reference score).

    Returns
    -------
    DataFrame
        One row per method (registry order) with columns ``method, n_components,
        n_features_out, score, score_gap, total_time_s`` (median wall time), ``cpu_time_s,
        cpu_time_min_s, cpu_time_max_s, cpu_time_mad_s`` (median CPU time, the range of the
        runs and their median absolute deviation),
        ``peak_memory_mb`` (of the smallest output dimension D that meets the tolerance —
        the smallest ``n_components`` giving it, for maps that round D up — else of the
        largest tried), ``meets``, ``fastest`` (True for the methods meeting it whose time
        is tied with the fastest's within the timing noise), ``advised`` (True for the one
        method the tie rule of the module picks: tied on time, then least memory, then
        smallest D, then best score, then listing order), ``estimated_n_features_out``
        (the D a log-log extrapolation of the score gap reaches the tolerance at, when not
        met; else NaN) and ``advice`` (a sentence saying how the row was found).
        ``attrs["reference"]`` describes the reference score, ``attrs["tolerance"]`` the tolerance,
        ``attrs["why"]`` why the advised method, in words (``''`` when none meets it).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"method": ["exact", "a", "a"], "n_components": [100, 10, 20],
    ...     "n_features_out": [100, 10, 20], "runs": 1, "score": [0.9, 0.85, 0.895],
    ...     "total_time_s": [5.0, 0.1, 0.2], "peak_memory_mb": [80.0, 1.0, 2.0]})
    >>> advise(table)[["method", "n_components", "meets", "advised"]].to_dict("records")
    [{'method': 'a', 'n_components': 20, 'meets': True, 'advised': True}]
    """
    pd = import_optional("pandas")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must be a relative score gap in (0, 1), e.g. 0.01 for "
                         f"1 %; got {tolerance!r}.")
    summary = _times(_summary(table))
    reference, described = _reference(summary)
    exact_rows = summary[summary["method"] == EXACT]
    exact = exact_rows.iloc[0] if len(exact_rows) else {}
    # Whether compare chose α per row (None: a table that does not say).
    selected = table.attrs.get("settings", {}).get("alpha_selected")
    scale = abs(reference) if reference != 0 else 1.0
    # The training rows (the exact kernel's n): the most landmarks a map can draw.
    n_train = int(exact["n_components"]) if len(exact_rows) else None
    records = []
    for method, group in summary[summary["method"] != EXACT].groupby("method", sort=False):
        # By the real output dimension: maps that round D up (Hadamard blocks, cos/sin
        # pairs) give several n_components one D; the smallest such n_components is kept.
        group = group.sort_values(["n_features_out", "n_components"])
        gaps = (reference - group["score"].to_numpy(dtype=float)) / scale
        meeting = np.flatnonzero(gaps <= tolerance)
        beats, reason = False, ""
        if meeting.size:
            row, needed = group.iloc[meeting[0]], math.nan
            text = (f"within {_percent(tolerance)} of the reference from n_components="
                    f"{int(row['n_components'])} (D={int(row['n_features_out'])}) on")
            # Above the exact kernel is not "within tolerance": say why (noise or not).
            # (Above by more than rounding: a map equal to the kernel, Nyström with every
            # training row as a landmark, scores the same up to ~1e-12.)
            beats = len(exact_rows) > 0 and float(row["score"]) - reference > 1e-9 * scale
            if beats:
                reason, text = _above_reference(row, reference, exact, selected)
        else:
            row = group.iloc[-1]
            known = METHODS.get(method)
            limit = n_train if known is not None and known.landmarks else None
            needed, text = _extrapolate(group["n_features_out"].to_numpy(dtype=float), gaps,
                                        tolerance, int(row["n_features_out"]), limit)
        records.append({
            "method": method, "n_components": int(row["n_components"]),
            "n_features_out": int(row["n_features_out"]), "score": float(row["score"]),
            "score_gap": float((reference - row["score"]) / scale),
            "total_time_s": float(row["total_time_s"]),
            "cpu_time_s": float(row["cpu_time_s"]),
            "cpu_time_min_s": float(row["cpu_time_min_s"]),
            "cpu_time_max_s": float(row["cpu_time_max_s"]),
            "cpu_time_mad_s": float(row["cpu_time_mad_s"]),
            "peak_memory_mb": float(row["peak_memory_mb"]), "meets": bool(meeting.size),
            "fastest": False, "advised": False, "estimated_n_features_out": needed,
            "beats_reference": bool(beats), "above_reason": reason,
            "score_diff_se": float(row.get("score_diff_se", math.nan)), "advice": text})
    advice = pd.DataFrame.from_records(records, columns=list(ADVICE_COLUMNS))
    tied, advised, why = _choose(advice)
    advice.loc[tied, "fastest"] = True
    if advised is not None:
        advice.loc[advised, "advised"] = True
    advice.attrs["reference"] = described
    advice.attrs["tolerance"] = tolerance
    advice.attrs["why"] = why
    advice.attrs["n_train"] = n_train
    advice.attrs["task"] = table.attrs.get("settings", {}).get("task")
    return advice


def _percent(tolerance: float) -> str:
    return f"{100 * tolerance:.3g} %"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def advice_heading(tolerance: float) -> str:
    """The advice table's heading: the tolerance and what the marks ★ and ≈ mean (the short
    form of :func:`advice_rule_text`, for the terminal)."""
    return (f"What to use (within {_percent(tolerance)} of the reference score; ★ advised, "
            "≈ as fast within the timing noise)")


def advice_rule_text(tolerance: float) -> str:
    """Say, in words, how :func:`advise` finds each row and picks the advised method.

    The one statement of the rule that reports show (the HTML report under its advice
    table, the terminal under its own): it is built from this module's constants, so it
    cannot drift from the code.

    Parameters
    ----------
    tolerance : float
        The relative score gap the advice used.

    Returns
    -------
    str
        A paragraph (plain text).

    Examples
    --------
    >>> from kernelmaps.evaluate.advice import advice_rule_text
    >>> "2 standard errors" in advice_rule_text(0.01)
    True
    """
    return (f"For each method, the smallest n_components whose mean score is within "
            f"{_percent(tolerance)} of the reference score, its median CPU time and peak "
            "memory. ≈ marks the methods as fast as the fastest within the timing noise (at "
            f"least {100 * TIME_NOISE:.0f} % either side of the median CPU time, "
            f"{NOISE_MADS:g} median absolute deviations for runs that scatter more); of "
            f"those, ★ marks the one with the least memory (within "
            f"{_percent(MEMORY_TOLERANCE)}), then the smallest D, then the best score, then "
            "the first listed. Where no dimension meets the tolerance, the estimate (if any) "
            "is a log-log extrapolation of the score gap against D over the dimensions "
            "tried, as stated in the row. A row that scores above the exact kernel says "
            "whether that is within the test split's noise (at most "
            f"{NOISE_SES:g} standard errors of the paired score difference on the test rows) "
            "or beyond it, and the likely reason.")


def advice_sentence(advice: Any) -> str:
    """One line: the advised method and why it, or that none meets the tolerance."""
    tolerance = advice.attrs.get("tolerance", 0.01)
    if not len(advice) or not advice["advised"].any():
        return (f"No method came within {_percent(tolerance)} of the reference score at "
                f"the dimensions tried. {_closest(advice)}Reference: "
                f"{advice.attrs.get('reference', '?')}.")
    best = advice[advice["advised"]].iloc[0]
    dimension = ("" if best["n_features_out"] == best["n_components"]
                 else f" (D={int(best['n_features_out'])} output features)")
    beats = bool(best.get("beats_reference", False))
    closeness = ("at or above the reference score" if beats
                 else f"within {_percent(tolerance)} of the reference score")
    text = (f"Use {best['method']} with n_components={int(best['n_components'])}{dimension}: "
            f"{closeness} and {advice.attrs.get('why', 'the fastest')} "
            f"({best['cpu_time_s']:.3g} s CPU, {best['peak_memory_mb']:.1f} MB, score "
            f"{best['score']:.4g}). Reference: {advice.attrs['reference']}.")
    # The advised method when it scores above the reference, and any method that does so
    # beyond the noise: the cases where "within tolerance" would mislead.
    if "above_reason" in advice:
        above = advice[(advice["advised"] & advice["beats_reference"])
                       | (advice["above_reason"] == "regularisation")]
        for _, row in above.iterrows():
            text += f" Note: {row['method']} {row['advice']}."
    return text


#: FALKON's centres suggested when a larger D is out of reach: at least this many (the
#: Fashion-MNIST case of issue 34: M = 5,000 reached 0.886 in 41 s and 2.1 GB on 60,000 rows).
FALKON_CENTRES = 5000


def _closest(advice: Any) -> str:
    """The method that came closest, its gap, and what to run next (with numbers): a larger
    D when its trend reaches the tolerance at a sensible one, else the kernel machine itself
    with FALKON (M centres in blocks: no n × M feature matrix held)."""
    if not len(advice):
        return ""
    row = advice.loc[advice["score_gap"].idxmin()]
    method, tried = row["method"], int(row["n_features_out"])
    text = (f"Closest: {method} at D={tried:,}, score {row['score']:.4g}, "
            f"{100 * row['score_gap']:.2g} % below the reference. ")
    needed = float(row["estimated_n_features_out"])
    n_train = advice.attrs.get("n_train")
    reachable = (math.isfinite(needed) and needed <= LARGEST_SENSIBLE_D
                 and not (n_train is not None and needed > n_train
                          and METHODS.get(method) is not None and METHODS[method].landmarks))
    if reachable:
        # The estimate (a noisy trend can put it at or below D tried: then twice D), and
        # a doubling on the way when it is further than that.
        target = max(round(float(f"{needed:.2g}")), tried + 1)
        target = target if target > tried + 1 else 2 * tried
        values = [*([2 * tried] if 2 * tried < target else []), target]
        return text + (f"Next: rerun with --methods {method} --n-components "
                       f"{','.join(map(str, values))} (its trend reaches the tolerance at "
                       f"about {plain(needed)} output features). ")
    centres = max(FALKON_CENTRES, 4 * tried)
    if n_train is not None:
        centres = min(centres, n_train)
    model = ("KernelRidge" if advice.attrs.get("task") == "regression"
             else "KernelRidgeClassifier")
    return text + (f"Next: a larger D is out of this map's reach; fit the kernel machine "
                   f"with FALKON instead, {model}(solver=\"falkon\", "
                   f"n_components={centres}) ({centres:,} centres, in blocks: no n × D "
                   "feature matrix held; docs/models.md). ")
