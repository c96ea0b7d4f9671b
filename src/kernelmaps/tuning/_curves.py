"""Rules read off a curve of scores: the middle of a plateau of near-equal scores (the γ to
keep) and the gain the next doubling of D is likely to bring (when D's growth stops)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["next_gain", "plateau_middle"]


def plateau_middle(scales: list[float], values: list[float], tie: float) -> float:
    """Of the run of neighbouring ``scales`` (sorted) whose values are within ``tie`` of the
    best, the one nearest the run's middle."""
    best = int(np.argmax(values))
    top = values[best]
    low = high = best
    while low > 0 and values[low - 1] >= top - tie:
        low -= 1
    while high < len(values) - 1 and values[high + 1] >= top - tie:
        high += 1
    middle = 0.5 * (scales[low] + scales[high])
    return min(scales[low:high + 1], key=lambda u: abs(u - middle))


def next_gain(dimensions: list[int], scores: list[float]) -> float:
    """The gain the next doubling is likely to bring: a least-squares line through
    (log D, log gain) of the doublings so far, extrapolated (nan: no trend to fit)."""
    gains = np.diff(scores)
    at = np.asarray(dimensions[1:], dtype=float)
    positive = gains > 0
    if positive.sum() < 2:
        return math.nan
    slope, intercept = np.polyfit(np.log(at[positive]), np.log(gains[positive]), 1)
    if slope >= 0:
        return math.nan
    return float(math.exp(intercept + slope * math.log(2.0 * dimensions[-1])))
