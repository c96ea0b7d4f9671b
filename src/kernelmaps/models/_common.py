"""What the kernel machines share: parameter constraints, the fit-time kernel, the centres.

Every model resolves its kernel once in ``fit`` (:func:`fit_kernel`, the one resolver of
:mod:`kernelmaps.kernels` with scikit-learn's ``KernelRidge`` rules) and keeps it as
``kernel_``; every kernel value then comes from that object. Centres are chosen by
:func:`kernelmaps.landmarks.select_landmarks` (:func:`select_centres`).

On an array of another library (scikit-learn's ``array_api_dispatch``) the models compute
in its namespace and on its device; :func:`float64_like` and :func:`as_float64` give the
"float64 where the device has it" dtype there, :func:`check_fitted_placement` enforces
scikit-learn's rule that prediction input uses fit's namespace and device.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._array_api import (
    array_placement,
    check_same_placement,
    float_dtypes,
    is_device_array,
    namespace_and_device,
    on_device,
)
from kernelmaps.kernels import (
    Kernel,
    KernelNameOptions,
    PrecomputedKernel,
    gamma_constraints,
    resolve_kernel,
)
from kernelmaps.landmarks import LANDMARK_STRATEGIES, select_landmarks

__all__ = [
    "KERNEL_PARAMETER_CONSTRAINTS",
    "LANDMARK_PARAMETER_CONSTRAINTS",
    "as_float64",
    "centre_gram",
    "check_fitted_placement",
    "expansion_points",
    "fit_kernel",
    "float64_like",
    "kernel_columns",
    "select_centres",
]

#: Constraints of the scikit-learn-style kernel arguments every model takes.
KERNEL_PARAMETER_CONSTRAINTS: dict = {
    "kernel": [KernelNameOptions(precomputed=True), callable, Kernel],
    "gamma": gamma_constraints(),
    "degree": [Interval(Real, 1, None, closed="left"), None],
    "coef0": [Interval(Real, None, None, closed="neither"), None],
    "kernel_params": [dict, None],
}

#: Constraints of ``landmarks`` / ``landmark_params`` (the centre strategies).
LANDMARK_PARAMETER_CONSTRAINTS: dict = {
    "landmarks": [StrOptions(set(LANDMARK_STRATEGIES))],
    "landmark_params": [dict, None],
}


def fit_kernel(estimator: Any, X: Any, sample_weight: Any = None, *,
               precomputed: bool = True) -> Kernel:
    """The estimator's kernel as a :class:`~kernelmaps.kernels.Kernel`, resolved once in fit.

    scikit-learn's ``KernelRidge`` rules: ``gamma``/``degree``/``coef0`` go to a named
    kernel that has them and are ignored for a Kernel object, a callable (which receives
    ``kernel_params``) or ``"precomputed"``. ``precomputed=False`` refuses
    ``"precomputed"`` for models that need kernel values a user's matrix cannot give.
    ``gamma="scale"``/``"auto"`` (as the estimator's parameter or inside a Kernel object)
    becomes its value on the whole training array ``X`` (:meth:`Kernel.resolve`; a Dask
    array's variance from Dask's reductions), with rows weighted by ``sample_weight``.
    """
    name = type(estimator).__name__
    kernel = resolve_kernel(estimator.kernel, gamma=estimator.gamma, degree=estimator.degree,
                            coef0=estimator.coef0, kernel_params=estimator.kernel_params,
                            owner=name)
    if not precomputed and isinstance(kernel, PrecomputedKernel):
        raise ValueError(f"{name} does not take kernel='precomputed'; pass the data and a "
                         "kernel (a name, a Kernel or a callable).")
    return kernel.resolve(X, sample_weight)


def select_centres(estimator: Any, X: Any, kernel: Kernel,
                   n_components: int) -> tuple[Any, np.ndarray | None]:
    """``n_components`` centres of ``X`` by ``estimator.landmarks``: ``(points, row indices
    or None)`` (see :func:`kernelmaps.landmarks.select_landmarks`), seeded by
    ``estimator.random_state`` and configured by ``estimator.landmark_params``."""
    return select_landmarks(estimator.landmarks, X, kernel, n_components,
                            random_state=check_random_state(estimator.random_state),
                            options=estimator.landmark_params)


def expansion_points(estimator: Any, X: Any) -> Any:
    """The points a model expands on: every row of ``X``, or ``estimator.n_components``
    centres (:func:`select_centres`, with the fitted ``kernel_``) when that is fewer."""
    if estimator.n_components is None or estimator.n_components >= X.shape[0]:
        return X
    points, _ = select_centres(estimator, X, estimator.kernel_, estimator.n_components)
    return points


def kernel_columns(kernel: Kernel, points: Any, indices: np.ndarray | None) -> Any:
    """What ``kernel`` takes as its second argument ``Y`` to reach the given centres.

    The points themselves, except for a :class:`~kernelmaps.kernels.PrecomputedKernel`:
    its values are columns of the user's matrix, so it addresses training points by index.
    """
    return indices if isinstance(kernel, PrecomputedKernel) else points


def centre_gram(kernel: Kernel, rows: Any, columns: Any) -> np.ndarray:
    """The ``(M, M)`` kernel matrix of the centres, returned in float64.

    ``rows`` are the centres' rows of the training input and ``columns`` what
    :func:`kernel_columns` gave; when they are the same points the evaluation is the
    symmetric one, which makes the diagonal of distance kernels exact. The values are
    computed in the dtype of the input, as the data passes compute ``K_nM``: a float64
    ``K_MM`` beside float32 ``K_nM`` blocks makes the two disagree at float32 rounding,
    which the FALKON preconditioner amplifies until its conjugate gradient diverges.
    """
    # In the rows' own dtype: K_MM must match the K_nM blocks' rounding (float32 data).
    values = kernel(rows) if columns is rows else kernel(rows, columns)
    return as_float64(values, rows)


def float64_like(X: Any) -> Any:
    """float64 in ``X``'s namespace — float32 on a device without float64."""
    if is_device_array(X):
        return float_dtypes(*namespace_and_device(X))[0]
    return np.float64


def as_float64(values: Any, X: Any) -> Any:
    """``values`` as :func:`float64_like` ``X``, in ``X``'s namespace and on its device
    (NumPy: ``np.asarray(values, dtype=np.float64)``; sparse matrices stay sparse)."""
    if is_device_array(X):
        xp, device = namespace_and_device(X)
        return xp.astype(on_device(values, xp, device), float64_like(X), copy=False)
    if hasattr(values, "astype") and not isinstance(values, np.ndarray):  # sparse
        return values.astype(np.float64)
    return np.asarray(values, dtype=np.float64)


def check_fitted_placement(estimator: Any, X: Any, fitted: Any, method: str) -> None:
    """Refuse ``X`` in another namespace or on another device than the fitted array
    ``fitted`` (scikit-learn's rule for array API inputs)."""
    check_same_placement(estimator, X, array_placement(fitted), method)
