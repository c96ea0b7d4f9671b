"""Small helpers shared by test modules of several packages, written once.

Package-specific shared pieces live next to their tests: ``tests/cli/conftest.py`` (the
``digits_csv`` fixture and ``run_main``), the estimator registry and ``by_id`` in
``tests/_estimators.py``, the rounding-error assertions in ``tests/_rounding.py`` and
``tests/_error_bounds.py``. The relative error of features against a kernel matrix is the
library's own, :func:`kernelmaps.evaluate.relative_error`.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp


def dense(a) -> np.ndarray:
    """``a`` as a dense NumPy array (sparse matrices and arrays included)."""
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def gram(Z: np.ndarray) -> np.ndarray:
    """The Gram matrix ``Z Zᵀ`` of the features ``Z``: one estimate of the kernel matrix."""
    return Z @ Z.T


def relative_difference(estimate: np.ndarray, K: np.ndarray) -> float:
    """``‖estimate − K‖_F / ‖K‖_F`` for a kernel-matrix *estimate* (for instance a mean of Gram
    matrices over seeds). From features ``Z`` use :func:`kernelmaps.evaluate.relative_error`
    ``(K, Z)``, the same quantity with ``estimate = Z Zᵀ``."""
    return float(np.linalg.norm(estimate - K) / np.linalg.norm(K))


def mixture(n_big: int = 1000, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian clusters with sizes 100:10:1 (unit spread, centres ~6 apart), and their
    labels: imbalanced clustered data, where landmark strategies differ."""
    rng = np.random.RandomState(seed)
    sizes = [n_big, n_big // 10, n_big // 100]
    centres = rng.normal(scale=6.0, size=(3, d))
    X = np.vstack([rng.normal(size=(s, d)) + c for s, c in zip(sizes, centres, strict=True)])
    labels = np.repeat(np.arange(3), sizes)
    return X, labels


def spd_matrix(m: int, condition: float, seed: int = 0) -> np.ndarray:
    """A random symmetric positive-definite ``m × m`` matrix with the given condition number
    (a random rotation of the eigenvalues ``geomspace(1, 1/condition, m)``)."""
    rng = np.random.RandomState(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    return (Q * np.geomspace(1.0, 1.0 / condition, m)) @ Q.T


def peak_bytes(run: Callable[[], Any]) -> tuple[Any, int]:
    """``(run(), the peak bytes Python and NumPy allocated while it ran)`` (tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def unevenly_scaled(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three features on scales 1, 1000 (offset by 5000) and 0.01, and a class label that
    depends on the first two: data where standardising helps an isotropic kernel."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 1000.0, 0.01]) + np.array([0, 5e3, 0])
    y = (X[:, 0] + (X[:, 1] - 5e3) / 1000 > 0).astype(int)
    return X, y
