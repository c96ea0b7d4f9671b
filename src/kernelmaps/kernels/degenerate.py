r"""Kernel matrices that carry no information about the data, and the warning that says so.

At an extreme scale parameter a kernel matrix degrades in one of two ways, both silently:

* **numerically constant** — every entry equal to working precision (:math:`\gamma \to 0`
  for the rbf kernel, a length scale far above the distances in the data): the kernel
  cannot tell the points apart, so a model built on it is a constant;
* **numerically the identity** — every value between two different points negligible next
  to :math:`k(x, x)` (:math:`\gamma \to \infty`): each point is only similar to itself, so
  features and predictions vanish away from the points the model was fitted on.

:func:`warn_if_degenerate` checks a kernel matrix an estimator forms anyway during ``fit``
(Nystroem's landmark matrix, the kernel machines' training or centre matrix) and warns with
a :class:`DegenerateKernelWarning` naming the parameter to change. Maps that form no kernel
matrix in ``fit`` (the random-feature maps: ``RBFSampler``, ``RandomFourierFeatures``,
``SkewedChi2Sampler``, the polynomial sketches) run the same check through
:func:`warn_if_degenerate_on_sample`, on the kernel matrix of at most
:data:`SAMPLE_ROWS` rows of the data: the kernel's parameter against the data's scale, at
a cost of :math:`O(64^2 d)`, no :math:`n \times n` matrix. "Numerically" means
within :math:`\sqrt{\epsilon}` of the dtype the kernel was computed in (about
:math:`1.5\times10^{-8}` in float64): past it, every result computed from the matrix has
lost at least half its significant digits to rounding. A kernel with a width parameter
(``rbf``, ``laplacian``, ...) counts as constant well before that, once its values differ by
at most :data:`NEARLY_CONSTANT_SPREAD` of their size (measured: the fits have lost the data
there), and the warning names the median heuristic's value for ``gamma``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernelmaps._array_api import is_device_array, to_numpy
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._user import PrecomputedKernel

__all__ = [
    "NEARLY_CONSTANT_SPREAD",
    "SAMPLE_ROWS",
    "DegenerateKernelWarning",
    "scale_parameter",
    "warn_if_degenerate",
    "warn_if_degenerate_on_sample",
]

#: Rows of the data whose kernel matrix :func:`warn_if_degenerate_on_sample` checks.
SAMPLE_ROWS = 64
#: A kernel with a width parameter (``rbf``, ``laplacian``, ...) is too wide when its
#: values over the points differ by at most this fraction of their size — far above the
#: rounding level, where the model has already lost the data. Measured on the 64 evenly
#: spaced rows of the bundled sets, rbf at the median heuristic γₕ × m (spread = (max −
#: min)/max): wine, breast_cancer, digits, diabetes gave 1.2e-2, 3.0e-2, 9.2e-4, 2.7e-3 at
#: m = 0.001 and 0.11, 0.27, 9.1e-3, 2.6e-2 at m = 0.01 (so no warning from γₕ/100 to
#: γₕ × 100: there the spread is at least ~m/2 by construction); digits' training accuracy
#: (KernelRidgeClassifier / FeatureRidgeClassifier + RBFSampler) was 0.102 / 0.102 at γ =
#: 1e-9 (spread 4.4e-6), 0.55 / 0.49 at 1e-8 (4.4e-5), 0.84 / 0.80 at 1e-7 (4.4e-4), 0.99 /
#: 0.97 at γₕ = 2.1e-4 (0.60). Below 1e-3 the warning catches all of the failed fits.
NEARLY_CONSTANT_SPREAD = 1e-3
#: Kernels exp(−γ·s(x, y)) and the median heuristic's γ = c / median s
#: (:func:`kernelmaps.evaluate.median_heuristic`: rbf ½ on ‖x−y‖², laplacian and chi2 1).
_HEURISTIC_FACTOR = {"rbf": 0.5, "laplacian": 1.0, "chi2": 1.0}


class DegenerateKernelWarning(UserWarning):
    """A kernel matrix formed in ``fit`` is numerically constant or the identity.

    The model built on it is then degenerate (see :mod:`kernelmaps.kernels.degenerate`).

    Examples
    --------
    Turn the warning into an error while tuning, to skip such a parameter:

    >>> import warnings
    >>> from kernelmaps.kernels import DegenerateKernelWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", DegenerateKernelWarning)
    """



#: Kernels whose matrix tends to the identity as their scale parameter narrows them:
#: name → (parameter, +1 if a larger value widens the kernel, −1 if it narrows it).
_WIDTH_PARAMETERS: dict[str, tuple[str, int]] = {
    "rbf": ("gamma", -1),
    "laplacian": ("gamma", -1),
    "chi2": ("gamma", -1),
    "matern": ("length_scale", +1),
    "student": ("alpha", +1),
    "skewed_chi2": ("skewedness", +1),
}
#: Kernels with a scale parameter whose extremes make the matrix constant (not the identity).
_OTHER_SCALE_PARAMETERS = {"poly": "gamma", "polynomial": "gamma", "exponential": "gamma",
                           "sigmoid": "gamma"}


def scale_parameter(kernel: Kernel) -> tuple[str, Any, int] | None:
    """``(name, value, direction)`` of the parameter that sets the kernel's width, or None.

    ``direction`` is +1 if a larger value widens the kernel (a length scale), −1 if it
    narrows it (``gamma``) and 0 if the kernel has no notion of width (polynomial,
    sigmoid: both extremes are degenerate).
    """
    if kernel.name == "rbf" and getattr(kernel, "sigma", None) is not None:
        return "sigma", kernel.sigma, +1
    if kernel.name in _WIDTH_PARAMETERS:
        name, direction = _WIDTH_PARAMETERS[kernel.name]
        return name, getattr(kernel, name), direction
    if kernel.name in _OTHER_SCALE_PARAMETERS:
        name = _OTHER_SCALE_PARAMETERS[kernel.name]
        return name, getattr(kernel, name), 0
    return None


def _row_groups(points: Any) -> np.ndarray:
    """An id per row, equal for identical rows (dense or CSR)."""
    if sp.issparse(points):
        points = sp.csr_array(points)
        points.sum_duplicates()
        keys = [points.indices[a:b].tobytes() + points.data[a:b].tobytes()
                for a, b in zip(points.indptr[:-1], points.indptr[1:], strict=True)]
    else:
        keys = [row.tobytes() for row in np.ascontiguousarray(points)]
    ids: dict[bytes, int] = {}
    return np.array([ids.setdefault(key, len(ids)) for key in keys])


def _largest_between_distinct(K: np.ndarray, groups: np.ndarray) -> float:
    """max |k(x, y)| over pairs of rows that are not identical."""
    distinct = groups[:, None] != groups[None, :]
    return float(np.max(np.abs(K), where=distinct, initial=0.0))


def _hint(kernel: Kernel, too_wide: bool) -> str:
    scale = scale_parameter(kernel)
    if scale is None:
        return "Check the kernel and the scale of the features."
    name, value, direction = scale
    if direction == 0:
        return f"Check {name}={value!r} against the scale of the features."
    raise_it = too_wide == (direction < 0)  # a narrowing parameter is raised when too wide
    adjective = ("small" if raise_it else "large")
    return (f"{name}={value!r} is too {adjective} for the distances in the data: "
            f"{'raise' if raise_it else 'lower'} it, or rescale the features (e.g. with "
            "sklearn.preprocessing.StandardScaler).")


def _heuristic_hint(K: np.ndarray, groups: np.ndarray, kernel: Kernel) -> str:
    """" (the median heuristic gives gamma ≈ …)" from the kernel's own values, or ""."""
    gamma = getattr(kernel, "gamma", None)
    if kernel.name not in _HEURISTIC_FACTOR or not isinstance(gamma, (int, float)) \
            or gamma <= 0:
        return ""
    step = max(1, -(-K.shape[0] // SAMPLE_ROWS))  # evenly spaced rows: no n × n temporaries
    K, groups = np.asarray(K[::step, ::step], dtype=np.float64), groups[::step]
    distinct = groups[:, None] != groups[None, :]
    with np.errstate(all="ignore"):  # s(x, y) = −ln k(x, y) / γ between distinct points
        scaled = -np.log(K[distinct])
    scaled = scaled[np.isfinite(scaled) & (scaled > 0)]
    if scaled.size == 0:
        return ""
    value = _HEURISTIC_FACTOR[kernel.name] * gamma / float(np.median(scaled))
    return (f" The median heuristic on these points gives gamma ≈ {value:.2g} "
            f"({value / gamma:.2g} × yours; kernelmaps.evaluate.median_heuristic).")


def warn_if_degenerate(K: np.ndarray, points: Any, kernel: Kernel, *, owner: str,
                       what: str, stacklevel: int = 3) -> str | None:
    """Warn if the kernel matrix of ``points`` is numerically constant or the identity.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        ``kernel(points)``, in any float dtype.
    points : {ndarray, sparse matrix} of shape (n, n_features)
        The points; their dtype sets the precision the kernel was computed in. When they
        are all equal (or there is one) nothing is checked: the data, not the kernel, is
        degenerate then.
    kernel : Kernel
        The kernel (precomputed kernels are not checked: there is no parameter to blame).
    owner, what : str
        Who formed the matrix and of what, for the message ("Nystroem", "landmarks").
    stacklevel : int, default=3

    Returns
    -------
    {"constant", "identity"} or None
        What was found (and warned about).
    """
    if isinstance(kernel, PrecomputedKernel) or points.shape[0] < 2:
        return None
    if is_device_array(K) or is_device_array(points):  # a diagnosis: done on the host
        K, points = to_numpy(K), to_numpy(points)
    groups = _row_groups(points)
    if groups.max() == 0:  # every row the same point
        return None
    tolerance = float(np.sqrt(np.finfo(points.dtype if points.dtype == np.float32
                                       else np.float64).eps))
    n = K.shape[0]
    largest = float(max(K.max(), -K.min()))
    spread = float(K.max() - K.min())
    scale = scale_parameter(kernel)
    # A width parameter also fails well above the rounding level (NEARLY_CONSTANT_SPREAD).
    limit = max(tolerance, NEARLY_CONSTANT_SPREAD) if scale and scale[2] else tolerance
    if spread <= limit * largest or largest == 0.0:
        relative = spread / largest if largest else 0.0
        level = (f"below the rounding level {tolerance:.1g}" if relative <= tolerance else
                 f"below {NEARLY_CONSTANT_SPREAD:g}, where fits lose the data")
        warnings.warn(
            f"{owner}: the kernel matrix of the {n} {what} is numerically constant with "
            f"{kernel!r}: its entries differ by at most {relative:.2g} of their size "
            f"({level}), so the kernel cannot tell the points apart "
            f"and what is fitted on it is (nearly) constant. {_hint(kernel, too_wide=True)}"
            f"{_heuristic_hint(K, groups, kernel)}",
            DegenerateKernelWarning, stacklevel=stacklevel)
        return "constant"
    if scale is None or scale[2] == 0:
        return None  # e.g. the linear kernel of orthogonal points is legitimately diagonal
    # For these kernels k(x, x) is the largest value, so the largest entry stands for it.
    off = _largest_between_distinct(K, groups) / largest
    if off <= tolerance:
        warnings.warn(
            f"{owner}: the kernel matrix of the {n} {what} is numerically the identity with "
            f"{kernel!r}: the largest value between two distinct points is "
            f"{off:.2g} × k(x, x) (below the rounding level {tolerance:.1g}), so "
            "every point away from them gets numerically zero kernel values: features and "
            f"predictions vanish there. {_hint(kernel, too_wide=False)}",
            DegenerateKernelWarning, stacklevel=stacklevel)
        return "identity"
    return None


def warn_if_degenerate_on_sample(X: Any, kernel: Kernel, *, owner: str,
                                 max_rows: int = SAMPLE_ROWS, stacklevel: int = 3) -> str | None:
    """Warn if ``kernel`` is numerically constant or the identity on the rows of ``X``.

    :func:`warn_if_degenerate` on the kernel matrix of at most ``max_rows`` rows of ``X``,
    evenly spaced (no random draw: a map's random numbers stay scikit-learn's), for
    estimators that form no kernel matrix of their own in ``fit``. A kernel that is the
    identity on the whole data is the identity on any sample of it, and a constant one is
    constant on any sample; a sample can only miss a pair of close rows, so the warning
    errs towards silence.

    Parameters
    ----------
    X : {ndarray, sparse matrix, device array} of shape (n_samples, n_features)
        The training data, validated.
    kernel : Kernel
        The estimator's ``kernel_``.
    owner : str
        The estimator, for the message.
    max_rows : int, default=SAMPLE_ROWS
        Rows sampled.
    stacklevel : int, default=3
        As for :func:`warnings.warn`, counted from the caller of this function.

    Returns
    -------
    {"constant", "identity"} or None
        What was found (and warned about).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from kernelmaps.kernels import RBFKernel
    >>> from kernelmaps.kernels.degenerate import warn_if_degenerate_on_sample
    >>> X = np.random.RandomState(0).normal(size=(500, 4))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     warn_if_degenerate_on_sample(X, RBFKernel(gamma=1e12), owner="example")
    'identity'
    >>> warn_if_degenerate_on_sample(X, RBFKernel(gamma=0.25), owner="example") is None
    True
    """
    if isinstance(kernel, PrecomputedKernel):
        return None
    n = X.shape[0]
    step = max(1, -(-n // max_rows))  # ceil(n / max_rows)
    # Both axes named and the stop in bounds: what the array API specifies.
    sample = X[: min(n, step * max_rows) : step, :]
    if is_device_array(sample):  # a diagnosis: done on the host
        sample = to_numpy(sample)
    if sp.issparse(sample):
        try:
            K = kernel(sample)
        except ValueError:
            # Rows outside the kernel's domain (skewed chi² at x <= -c, which scikit-learn's
            # fit accepts): transform refuses them with the reason; nothing to diagnose here.
            return None
    else:
        # The kernel's own definition on the sample, without the boundary's validation (the
        # caller's fit has validated X): a diagnosis run by every fit of a random-feature map
        # costs 70 µs here instead of 180 µs through Kernel.__call__ (62 rows of digits),
        # against a fit + transform of about 4 ms. Rows outside the kernel's domain give
        # non-finite values: nothing to diagnose then (transform refuses them, saying why).
        sample = np.ascontiguousarray(sample)
        K = np.empty((sample.shape[0], sample.shape[0]),
                     dtype=kernel._result_dtype(sample, sample))
        with np.errstate(all="ignore"):
            kernel.evaluate_into(sample, sample, K)
        if not np.isfinite(K).all():
            return None
        kernel._fix_diagonal(sample, K)
    return warn_if_degenerate(K, sample, kernel, owner=owner,
                              what=f"rows sampled evenly from X ({n} rows)",
                              stacklevel=stacklevel + 1)
