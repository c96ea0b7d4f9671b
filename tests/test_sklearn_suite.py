"""scikit-learn's own test module for kernel approximation, pointed at kernelmaps.

The module ships inside the scikit-learn wheel (``sklearn/tests/test_kernel_approximation.py``).
We copy it, replace its import of the five classes from ``sklearn.kernel_approximation`` by
an import from ``kernelmaps``, and run it with scikit-learn's pytest fixtures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn

SOURCE = Path(sklearn.__file__).parent / "tests" / "test_kernel_approximation.py"


def test_sklearn_kernel_approximation_suite_passes_on_kernelmaps(tmp_path):
    if not SOURCE.exists():
        pytest.fail(f"scikit-learn's test module is missing at {SOURCE}")
    text = SOURCE.read_text()
    redirected, count = re.subn(r"from sklearn\.kernel_approximation import \(",
                                "from kernelmaps import (", text)
    assert count == 1, "scikit-learn's import of the five maps changed shape"
    assert "sklearn.kernel_approximation" not in redirected
    target = tmp_path / "test_kernel_approximation_on_kernelmaps.py"
    target.write_text(redirected)
    env = {**os.environ, "SKLEARN_RUN_FLOAT32_TESTS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "sklearn.conftest", "-p", "no:cacheprovider",
         "-o", "addopts=", str(target)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert "failed" not in summary and "error" not in summary
    # Every test that does not need an array-API library (torch, cupy, ...) runs and passes.
    assert passed >= 78, summary
