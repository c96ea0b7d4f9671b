"""scikit-learn's own test module for kernel approximation, pointed at kernelmaps.

The module ships inside the scikit-learn wheel (``sklearn/tests/test_kernel_approximation.py``).
We run it twice, side by side, with scikit-learn's pytest fixtures: as shipped, and with its
import of the five classes from ``sklearn.kernel_approximation`` replaced by an import from
``kernelmaps``. Every case scikit-learn passes must pass on kernelmaps — the array-API cases
included: with PyTorch (CPU) and ``array_api_strict`` installed (test dependencies) and
``SCIPY_ARRAY_API=1``, the Nystroem cases run on torch and array_api_strict arrays instead
of being skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sklearn

SOURCE = Path(sklearn.__file__).parent / "tests" / "test_kernel_approximation.py"
#: The namespaces whose array-API cases must run (not be skipped) here, on CPU.
REQUIRED_NAMESPACES = ("torch-cpu", "array_api_strict")


def _start(module: Path, report: Path) -> subprocess.Popen:
    env = {**os.environ, "SKLEARN_RUN_FLOAT32_TESTS": "1", "SCIPY_ARRAY_API": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "sklearn.conftest", "-p", "no:cacheprovider",
         "-o", "addopts=", f"--junitxml={report}", str(module)],
        cwd=module.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def _outcomes(report: Path) -> dict[str, str]:
    """Test name (with its parameters) → passed / failed / skipped, from a JUnit report."""
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        children = {child.tag for child in case}
        outcomes[case.get("name")] = ("failed" if children & {"failure", "error"}
                                      else "skipped" if "skipped" in children else "passed")
    return outcomes


def test_sklearn_kernel_approximation_suite_passes_on_kernelmaps(tmp_path):
    if not SOURCE.exists():
        pytest.fail(f"scikit-learn's test module is missing at {SOURCE}")
    text = SOURCE.read_text()
    redirected, count = re.subn(r"from sklearn\.kernel_approximation import \(",
                                "from kernelmaps import (", text)
    assert count == 1, "scikit-learn's import of the five maps changed shape"
    assert "sklearn.kernel_approximation" not in redirected
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours_module = tmp_path / "ours" / "test_kernel_approximation_on_kernelmaps.py"
    ours_module.write_text(redirected)
    theirs_module = tmp_path / "theirs" / "test_kernel_approximation.py"
    theirs_module.write_text(text)
    runs = {name: _start(module, tmp_path / f"{name}.xml")
            for name, module in (("ours", ours_module), ("theirs", theirs_module))}
    logs = {name: run.communicate(timeout=900)[0] for name, run in runs.items()}

    assert runs["theirs"].returncode == 0, logs["theirs"][-3000:]
    theirs = _outcomes(tmp_path / "theirs.xml")
    ours = _outcomes(tmp_path / "ours.xml")
    failed = sorted(name for name, outcome in ours.items() if outcome == "failed")
    assert not failed, f"{len(failed)} failed: {failed[:10]}\n{logs['ours'][-4000:]}"
    passed = {name for name, outcome in ours.items() if outcome == "passed"}
    missing = sorted(name for name, outcome in theirs.items()
                     if outcome == "passed" and name not in passed)
    assert not missing, f"scikit-learn passes these, kernelmaps does not: {missing[:10]}"
    # The array-API cases really ran on CPU (torch and array_api_strict are installed and
    # SciPy's array API support is on), rather than being skipped.
    for namespace in REQUIRED_NAMESPACES:
        ran = [name for name in passed if namespace in name]
        assert len(ran) >= 20, f"only {len(ran)} {namespace} cases passed: {logs['ours'][-2000:]}"
