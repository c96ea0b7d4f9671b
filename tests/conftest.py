"""Shared fixtures and helpers for the kernelmaps test suite (the BLAS thread limit of every
test is in the root conftest.py)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from kernelmaps import config_context
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


@pytest.fixture(params=[False, pytest.param(True, marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="Numba is not installed"))],
    ids=["numpy", "compiled"])
def jit_path(request):
    """Run the test on the NumPy cosine and on the compiled one (``set_config(jit=...)``):
    CI's suite covers both paths on each CPU kernel family it runs."""
    with config_context(jit=request.param):
        yield request.param
