"""Shared fixtures and helpers for the kernelmaps test suite."""

from __future__ import annotations

import os

# scikit-learn's array API dispatch (tests/test_array_api.py, the array-API checks of
# check_estimator, scikit-learn's own suite in test_sklearn_suite.py) refuses to start
# unless SciPy's array API support is on, and SciPy reads this variable once, when it is
# first imported: set it here, before this file imports SciPy (pytest loads conftest
# before any test module; test_array_api.py checks SciPy really saw it).
os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import kernelmaps as km

#: The five scikit-learn-compatible maps, with small parameters for quick tests.
SKLEARN_MAPS = {
    "RBFSampler": dict(n_components=64),
    "SkewedChi2Sampler": dict(n_components=64),
    "AdditiveChi2Sampler": dict(),
    "PolynomialCountSketch": dict(n_components=64),
    "Nystroem": dict(n_components=20),
}
RANDOMIZED = {"RBFSampler", "SkewedChi2Sampler", "PolynomialCountSketch", "Nystroem"}


def make_map(name: str, **params):
    """A kernelmaps map by class name with the small default test parameters."""
    merged = {**SKLEARN_MAPS[name], **params}
    if name in RANDOMIZED:
        merged.setdefault("random_state", 0)
    return getattr(km, name)(**merged)


def assert_same_numbers(ours, theirs, rtol: float = 1e-8) -> None:
    """Element-wise agreement to ``rtol`` relative, with an absolute floor at rtol × max|theirs|.

    The floor matters for entries that are (nearly) zero, where a relative comparison is
    meaningless: a sum computed in a different order differs there by rounding alone.
    """
    ours = ours.toarray() if sp.issparse(ours) else np.asarray(ours)
    theirs = theirs.toarray() if sp.issparse(theirs) else np.asarray(theirs)
    assert ours.shape == theirs.shape
    scale = float(np.abs(theirs).max(initial=0.0))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * scale)


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    """One BLAS/OpenMP thread per test process.

    pytest-xdist already runs one worker per core; nested BLAS threads oversubscribe the
    machine, and OpenBLAS threads spin-waiting on busy cores make small products many-fold
    slower. kernelmaps' own thread pool (what the engine tests exercise) is unaffected.
    """
    with threadpool_limits(limits=1):
        yield


@pytest.fixture
def rng() -> np.random.RandomState:
    return np.random.RandomState(0)


@pytest.fixture
def X_pos(rng) -> np.ndarray:
    """Non-negative data valid for every map (chi² maps need x >= 0)."""
    return rng.uniform(0, 1, size=(120, 7))
