"""The fast Walsh–Hadamard transform equals multiplication by scipy.linalg.hadamard."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.linalg import hadamard

from kernelmaps.maps._structured import (
    MAX_RADIX_BITS,
    fwht,
    is_power_of_two,
    next_power_of_two,
    radix_stages,
)


# 2^0 … 2^11: one, two and three radix stages (odd counts end with a copy back).
@pytest.mark.parametrize("d", [2 ** k for k in range(0, 12)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fwht_equals_hadamard_matrix_product(d, dtype):
    x = np.random.RandomState(d).normal(size=(3, d)).astype(dtype)
    expected = x.astype(np.float64) @ hadamard(d)
    result = fwht(x)
    assert result is x and x.dtype == dtype
    tolerance = (1e-12 if dtype == np.float64 else 1e-5) * np.sqrt(d) * np.log2(2 * d)
    np.testing.assert_allclose(x, expected, atol=tolerance * np.abs(expected).max())


@pytest.mark.parametrize("d", [2 ** 12, 2 ** 15, 2 ** 16])
def test_fwht_follows_sylvester_recursion_beyond_the_matrix_test(d):
    # H_2d = [[H_d, H_d], [H_d, -H_d]]: checks the 3- and 4-stage transforms against the
    # half-size ones, down to sizes checked against scipy's matrix above.
    x = np.random.RandomState(1).normal(size=(2, d))
    half = d // 2
    left, right = fwht(x[:, :half].copy()), fwht(x[:, half:].copy())
    np.testing.assert_allclose(fwht(x.copy()), np.hstack([left + right, left - right]),
                               atol=1e-9 * np.sqrt(d))


def test_fwht_acts_on_the_last_axis_of_any_leading_shape():
    x = np.random.RandomState(0).normal(size=(2, 3, 4, 64))
    expected = x @ hadamard(64)
    scratch = np.empty_like(x)
    fwht(x, scratch=scratch)
    np.testing.assert_allclose(x, expected, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(x=st.tuples(st.integers(0, 5), st.integers(0, 11)).flatmap(
    lambda s: arrays(np.float64, (s[0], 2 ** s[1]), elements=st.floats(-1e3, 1e3))))
def test_fwht_is_its_own_inverse_up_to_d(x):
    d = x.shape[1]
    original = x.copy()
    np.testing.assert_allclose(fwht(x), original @ hadamard(d), atol=1e-9 * max(1, d))
    fwht(x)
    np.testing.assert_allclose(x, d * original, atol=1e-9 * d * d)


@pytest.mark.parametrize("d", [2 ** k for k in range(0, 17)])
def test_radix_stages_multiply_to_d_and_are_small(d):
    stages = radix_stages(d)
    assert int(np.prod(stages, dtype=np.int64)) == d
    assert all(2 <= m <= 2 ** MAX_RADIX_BITS for m in stages)
    assert len(stages) == -(-(d.bit_length() - 1) // MAX_RADIX_BITS)


def test_power_of_two_helpers():
    assert [next_power_of_two(n) for n in (1, 2, 3, 5, 8, 9, 784, 1024)] == \
        [1, 2, 4, 8, 8, 16, 1024, 1024]
    assert [is_power_of_two(n) for n in (0, 1, 2, 3, 4, 6, 1024)] == \
        [False, True, True, False, True, False, True]


def test_fwht_rejects_non_power_of_two():
    with pytest.raises(ValueError, match=r"power-of-two.*got 6.*Pad with zeros to 8"):
        fwht(np.zeros((2, 6)))


def test_fwht_rejects_non_contiguous_input():
    with pytest.raises(ValueError, match="C-contiguous"):
        fwht(np.zeros((4, 16))[:, ::2])


def test_fwht_rejects_mismatched_scratch():
    with pytest.raises(ValueError, match="scratch must be"):
        fwht(np.zeros((2, 16)), scratch=np.zeros((2, 8)))
