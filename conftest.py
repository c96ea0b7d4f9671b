"""pytest set-up shared by the tests (``tests/``) and the docstring examples (``src/``)."""

from __future__ import annotations

import os

# scikit-learn's array API dispatch (tests/test_array_api.py, the array-API checks of
# check_estimator, scikit-learn's own suite in tests/test_sklearn_suite.py) refuses to start
# unless SciPy's array API support is on, and SciPy reads this variable once, when it is
# first imported: set it here, in the first file pytest loads, before anything imports SciPy
# (tests/test_array_api.py checks SciPy really saw it). xdist workers inherit it.
os.environ["SCIPY_ARRAY_API"] = "1"

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    """One BLAS/OpenMP thread per test process.

    pytest-xdist already runs one worker per core; nested BLAS threads oversubscribe the
    machine, and OpenBLAS threads spin-waiting on busy cores make small products many-fold
    slower (the ``evaluate.compare`` example: 1.7 s instead of 14 s on 2 busy cores).
    kernelmaps' own thread pool (what the engine tests exercise) is unaffected.
    """
    with threadpool_limits(limits=1):
        yield
