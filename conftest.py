"""pytest set-up shared by the tests (``tests/``) and the docstring examples (``src/``)."""

from __future__ import annotations

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
