"""Shared fixtures and helpers for the kernelmaps test suite (the BLAS thread limit of every
test is in the root conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._helpers import dense


def assert_same_numbers(ours, theirs, rtol: float = 1e-8) -> None:
    """Element-wise agreement to ``rtol`` relative, with an absolute floor at rtol × max|theirs|.

    The floor matters for entries that are (nearly) zero, where a relative comparison is
    meaningless: a sum computed in a different order differs there by rounding alone.
    """
    ours, theirs = dense(ours), dense(theirs)
    assert ours.shape == theirs.shape
    scale = float(np.abs(theirs).max(initial=0.0))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * scale)


@pytest.fixture
def rng() -> np.random.RandomState:
    return np.random.RandomState(0)
