r"""The pre-image learner of the Nyström map (``fit_inverse_transform=True``).

A feature vector rarely has an exact pre-image, so the map back is learned, as in
:class:`~sklearn.decomposition.KernelPCA` (Bakır, Weston & Schölkopf, 2004): kernel ridge
regression from the features of the landmarks to the landmarks (or, with
``inverse_fit_rows='all'``, from every fit row's features to the row, the landmarks the
basis). :class:`~kernelmaps.maps.Nystroem` keeps the learned ``dual_coef_`` and
``X_transformed_fit_``; this module fits them and maps features back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array

from kernelmaps._array_api import (
    is_device_array,
    matmul,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps._engine import FLOAT_DTYPES
from kernelmaps._linalg import solve_psd
from kernelmaps.kernels import Kernel

__all__ = ["fit_preimage_map", "needs_fit_inverse_transform", "preimages"]

#: Rows per block when the pre-image map is fitted on every fit row.
_INVERSE_BLOCK_ROWS = 4096


class needs_fit_inverse_transform:
    """A method that exists only on instances with ``fit_inverse_transform=True``.

    Looking it up on an instance with ``fit_inverse_transform=False`` raises
    :class:`~sklearn.exceptions.NotFittedError` — an ``AttributeError``, so ``hasattr`` is
    False, as on scikit-learn's Nystroem, and scikit-learn's checks and ``Pipeline`` see no
    inverse — whose message says which parameter to set.
    """

    def __init__(self, method: Any) -> None:
        self.method = method
        self.__doc__ = method.__doc__
        self.__name__ = method.__name__
        self.__wrapped__ = method

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is not None and not getattr(obj, "fit_inverse_transform", False):
            raise NotFittedError(
                f"This {type(obj).__name__} has no {self.__name__}: it was created with "
                "fit_inverse_transform=False (the default). Set "
                f"{type(obj).__name__}(fit_inverse_transform=True) — and alpha, the ridge of "
                "the map back — and fit it, as for KernelPCA."
            )
        return self.method.__get__(obj, owner)


def fit_preimage_map(kernel: Kernel, components: Any, normalization: Any, X: Any, *,
                     alpha: float, inverse_fit_rows: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""``(dual_coef_, X_transformed_fit_)`` of the pre-image map of a fitted Nyström map.

    :math:`B = (G + \alpha I)^{-1} C` with :math:`G_{ij} = k(z(c_i), z(c_j))` and :math:`C`
    the landmarks (``components``); with ``inverse_fit_rows='all'``,
    :math:`B = (K_{nm}^\top K_{nm} + \alpha G)^{-1} K_{nm}^\top X`,
    :math:`K_{nm} = [k(z(x_j), z(c_i))]`, summed over row blocks. Both in the dtype of
    ``X`` (float32 or float64); ``X_transformed_fit_`` holds the landmarks' features.
    """
    if kernel.requires_non_negative:
        raise ValueError(
            f"fit_inverse_transform=True evaluates the {kernel.name} kernel on the "
            "features, which take negative values, but that kernel is defined for "
            "non-negative data only. Use another kernel, or set fit_inverse_transform=False."
        )
    bits = namespace_and_device(X)[0].finfo(X.dtype).bits if is_device_array(X) \
        else np.dtype(X.dtype).itemsize * 8
    dtype = np.float32 if bits == 32 else np.float64  # as NumPy's fit (moved after)
    landmarks = _host_dense(components)
    normalization = _host_dense(normalization)
    # The landmarks' own features z(c_i), (m, n_features_out): k(C, C) W^T.
    with np.errstate(over="ignore", invalid="ignore"):
        features = kernel(landmarks) @ normalization.T
        landmark_gram = kernel(features)  # G = k(z(c_i), z(c_j)), (m, m)
        if inverse_fit_rows == "all":
            # Subset of regressors: every fit row a target, the landmarks the basis;
            # K_nm^T K_nm and K_nm^T X summed over row blocks (memory O(block·m)).
            system = alpha * landmark_gram
            target = np.zeros_like(landmarks)
            X = to_numpy(X) if is_device_array(X) else X
            for start in range(0, X.shape[0], _INVERSE_BLOCK_ROWS):
                rows = _host_dense(X[start:start + _INVERSE_BLOCK_ROWS])
                cross = kernel(kernel(rows, landmarks) @ normalization.T, features)
                system += cross.T @ cross
                target += cross.T @ rows
        else:
            system = landmark_gram + alpha * np.eye(landmark_gram.shape[0])
            target = landmarks
    # Symmetric to rounding only (blocks of kernel values, sums of products): solved as its
    # symmetric part. Least squares, without a warning, where it is not positive definite:
    # with every fit row a target, αG is singular whenever the landmarks' features are
    # (gamma 1e-6 on unit-scale data already), the minimum-norm pre-image map is the answer,
    # and a kernel that degenerate is warned about by the map itself (DegenerateKernelWarning,
    # naming gamma); tests/test_extreme_parameters.py pins that no other warning comes.
    dual_coef = solve_psd((system + system.T) / 2, target, overwrite=True, warn=False)
    if not np.isfinite(dual_coef).all():
        raise ValueError(
            "fit_inverse_transform=True could not learn the pre-image map: the ridge "
            "system is not finite. Raise alpha, or check the kernel parameters."
        )
    return dual_coef.astype(dtype, copy=False), features.astype(dtype, copy=False)


def preimages(kernel: Kernel, transformed_fit: Any, dual_coef: Any, X: Any) -> Any:
    """The pre-images :math:`k(X, Z_{fit})\\,B` of the features ``X``: float32 for float32
    ``X``, else float64 (on ``X``'s device, in its dtype, for an array-API ``X``)."""
    expected = transformed_fit.shape[1]
    if is_device_array(X):  # on X's device, in X's dtype
        xp, device = namespace_and_device(X)
        if X.ndim != 2 or X.shape[1] != expected:
            raise ValueError(_inverse_shape_message(X.shape, expected))
        basis = on_device(transformed_fit, xp, device, X.dtype)
        coef = on_device(dual_coef, xp, device, X.dtype)
        return matmul(xp, kernel.evaluate(X, basis), coef)
    features = check_array(X, accept_sparse="csr", dtype=list(FLOAT_DTYPES),
                           input_name="X")
    if features.shape[1] != expected:
        raise ValueError(_inverse_shape_message(features.shape, expected))
    basis = to_numpy(transformed_fit).astype(features.dtype, copy=False)
    coef = to_numpy(dual_coef).astype(features.dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(kernel(features, basis) @ coef, dtype=features.dtype)


def _inverse_shape_message(shape: tuple, expected: int) -> str:
    return (f"X has {shape[1] if len(shape) == 2 else shape} features, but "
            f"Nystroem.inverse_transform expects {expected} (n_features_out_): give the "
            "output of transform.")


def _host_dense(A: Any) -> np.ndarray:
    """A float64 host ndarray of a NumPy, sparse or device array."""
    A = to_numpy(A) if is_device_array(A) else A
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)
