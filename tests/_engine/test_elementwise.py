"""clamp: the same values as NumPy's scalar maximum/minimum, in its faster form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kernelmaps._engine import clamp

SPECIAL = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1.0, -1.0, 1e-30, -1e-30]


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]),
       shape=st.tuples(st.integers(0, 9), st.integers(0, 70)),
       seed=st.integers(0, 2**32 - 1),
       bounds=st.sampled_from([(0.0, None), (None, 0.0), (-1.0, 1.0), (-0.0, None)]),
       order=st.sampled_from(["C", "F"]))
def test_clamp_gives_numpys_scalar_values_bit_for_bit(dtype, shape, seed, bounds, order):
    rng = np.random.default_rng(seed)
    values = rng.normal(0.0, 2.0, size=shape)
    mask = rng.random(shape) < 0.3
    values[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
    block = np.asarray(values, dtype=dtype, order=order)
    expected = block.copy(order=order)
    low, high = bounds
    if low is not None:
        np.maximum(expected, low, out=expected)
    if high is not None:
        np.minimum(expected, high, out=expected)
    clamp(block, low=low, high=high)
    assert block.dtype == dtype
    # Bit for bit, signed zeros and NaNs included.
    np.testing.assert_array_equal(_bits(block), _bits(expected))


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


@given(hnp.arrays(np.float64, st.integers(0, 20)))
def test_clamp_of_a_vector_is_numpys_clip(vector):
    expected = np.minimum(np.maximum(vector, -1.0), 1.0)
    clamp(vector, low=-1.0, high=1.0)
    np.testing.assert_array_equal(_bits(vector), _bits(expected))


def test_clamp_keeps_signed_zero_bounds_apart():
    # -0.0 and 0.0 are equal but not the same bound: maximum(-inf, -0.0) is -0.0. A cache
    # of bound rows keyed by value would hand one out for the other.
    for dtype in (np.float32, np.float64):
        for bound in (0.0, -0.0, 0.0):
            block = np.full((3, 5), -np.inf, dtype=dtype)
            clamp(block, low=bound)
            assert np.all(np.signbit(block) == np.signbit(bound))
            block = np.full((3, 5), np.inf, dtype=dtype)
            clamp(block, high=bound)
            assert np.all(np.signbit(block) == np.signbit(bound))
