"""pytest set-up shared by the tests (``tests/``) and the docstring examples (``src/``).

BLAS threads. The suite runs with BLAS limited to one thread, except the tests marked
``blas_default_threads``, which run with BLAS at the thread count it had when the session
started — its own default, as users run kernelmaps:

* Most tests are small computations in the test itself (references, ``Z @ Z.T``, scikit-learn
  for comparison) beside the product, on one pytest-xdist worker per core. On BLAS's own
  threads those products wake threads that then spin on the cores the other workers need
  (OpenBLAS's idle threads spin for tens of milliseconds after each call): the suite's wall
  time grows, and nothing about kernelmaps is learnt from it. So the pin stays for them.
* kernelmaps itself no longer needs the pin to be fast: its engine keeps BLAS on one thread
  inside every call of several blocks and every small call, and runs its own threads only
  where a call's work pays for them and a core is free (``kernelmaps._engine``). The marked
  tests check exactly that, where users meet it: the engine (``tests/_engine/``), a map
  (``tests/maps/test_nystroem.py``), and every map against scikit-learn, a model and
  ``evaluate.compare`` (listed in :data:`DEFAULT_BLAS_TESTS`, so that those modules need not
  know about this set-up). They are a few seconds of the suite, so the suite's wall time
  under ``pytest -n auto`` stays what it was.
"""

from __future__ import annotations

import os

# scikit-learn's array API dispatch (tests/test_array_api.py, the array-API checks of
# check_estimator, scikit-learn's own suite in tests/test_sklearn_suite.py) refuses to start
# unless SciPy's array API support is on, and SciPy reads this variable once, when it is
# first imported: set it here, in the first file pytest loads, before anything imports SciPy
# (tests/test_array_api.py checks SciPy really saw it). xdist workers inherit it.
os.environ["SCIPY_ARRAY_API"] = "1"

import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

#: Tests outside the files that mark their own which run with BLAS's default threads:
#: every drop-in map against scikit-learn, a model fitted and predicting, and the
#: comparison runner (node-id prefixes).
DEFAULT_BLAS_TESTS = (
    "tests/maps/test_sklearn_equivalence.py::test_dense_output_equals_sklearn",
    "tests/models/test_ridge.py::test_nystrom_close_to_exact_with_fewer_centres",
    "tests/evaluate/test_evaluate.py::test_compare_deterministic_methods_run_once",
    "tests/evaluate/test_evaluate.py::test_compare_randomized_maps_of_other_kernels",
)
MARKER = "blas_default_threads"

#: Tests whose outcome does not depend on the floating-point arithmetic of the BLAS kernels:
#: the command line (parsing, files, messages, report pages and progress; the numbers it
#: prints are the library's, which its own tests check on every kernel family), docstrings
#: and documentation pages, messages, the layout, layers and boundaries of the code, import
#: costs and the speed gate's plumbing. ``.ci/run``'s second pass, on another OpenBLAS
#: kernel family, leaves them out (``-m "not arithmetic_free"``): running them twice checks
#: nothing more, and they are a third of the suite's time (measured: tests/cli alone 192 s
#: of the suite's ~9 minutes on 2 cores).
ARITHMETIC_FREE = "arithmetic_free"
ARITHMETIC_FREE_TESTS = (
    "tests/cli/",
    "tests/test_numpydoc_validation.py",
    "tests/test_docstrings.py",
    "tests/test_docs_conf.py",
    "tests/test_suggest.py",
    "tests/test_layers.py",
    "tests/test_layout.py",
    "tests/test_boundaries.py",
    "tests/test_project_files.py",
    "tests/test_import_cost.py",
    "tests/test_speed_gate.py",
    "tests/test_readme.py",
    "tests/test_report_screenshot.py",
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARKER}: run with BLAS at its own default thread count (see conftest.py)")
    config.addinivalue_line(
        "markers", f"{ARITHMETIC_FREE}: the outcome does not depend on the BLAS kernels' "
                   "arithmetic (see conftest.py)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(DEFAULT_BLAS_TESTS):
            item.add_marker(MARKER)
        if item.nodeid.startswith(ARITHMETIC_FREE_TESTS):
            item.add_marker(ARITHMETIC_FREE)


#: BLAS's and OpenMP's thread counts when the session started, before the pin.
_defaults: dict[str, int] = {}


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    """One BLAS/OpenMP thread per test process (see the module docstring)."""
    for info in ThreadpoolController().info():
        api = info["user_api"]
        _defaults[api] = max(_defaults.get(api, 1), info["num_threads"])
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(autouse=True)
def _blas_default_threads(request):
    """BLAS back at its default thread count for a test marked ``blas_default_threads``."""
    if request.node.get_closest_marker(MARKER) is None or not _defaults:
        yield
        return
    with threadpool_limits(limits=dict(_defaults)):
        yield
