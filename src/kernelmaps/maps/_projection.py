r"""Shared machinery of the random-projection maps: X ↦ XW written into the output block.

Every map that draws random directions (random Fourier features, the χ² samplers, the
arc-cosine and dot-product sketches) projects a row block with :func:`project_into` and,
for cosine features, finishes in place with :func:`cos_features_into` or
:func:`cos_sin_into`. On a device (array API dispatch) the same steps are
:func:`cos_features_device` and :func:`cos_sin_device`, with each projection's
``project_device``.

A :class:`Projection` (the fitted frequencies: project a block, move to a device, report
its memory) is what a projection structure of :class:`~kernelmaps.RandomFourierFeatures`
draws; the structures themselves are records of the registry
(:mod:`kernelmaps.maps._registry`), the built-in ones listed in
:mod:`kernelmaps.maps._structures`. Explicit weights are :class:`DenseProjection` ("iid",
"orthogonal", "principal", "quadrature"); the Hadamard structures' projections are in
:mod:`~kernelmaps.maps._structured`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from kernelmaps._array_api import matmul, on_device, unary
from kernelmaps._fastmath import cos_inplace, cos_sin

__all__ = [
    "DenseProjection",
    "Projection",
    "cos_features_device",
    "cos_features_into",
    "cos_sin_device",
    "cos_sin_into",
    "project_into",
    "project_with",
    "random_signs",
]


# ============================================================================ projections
class Projection(ABC):
    """Fitted random frequencies (D′ of them), applied to row blocks as X ↦ XW.

    The extension point of the random-feature maps: a subclass holds its fitted state as the
    arrays named in ``array_names`` — exactly its constructor's arguments, from which
    ``__init__`` may derive anything else — and implements :meth:`project_into` (NumPy, into
    a preallocated output block) and :meth:`project_device` (any array-API namespace). The
    base derives everything else from those arrays: the parameter memory (:attr:`nbytes`),
    the dtype cast (:meth:`astype`) and the move to a device (:meth:`to_device`, which
    ``FeatureMap`` uses when it places fitted parameters), so derived attributes never break
    a rebuild. A new structure's projection class joins the registry through
    :class:`Structure` and :func:`register_structure`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.maps import DenseProjection
    >>> projection = DenseProjection(np.eye(3, 2))  # d = 3 inputs, D' = 2 frequencies
    >>> projection.nbytes, projection.astype(np.float32).nbytes
    (48, 24)
    >>> out = np.empty((1, 2))
    >>> projection.project_into(np.array([[1.0, 2.0, 3.0]]), out)
    >>> out
    array([[1., 2.]])
    """

    #: The fitted arrays, in the constructor's order (its keyword arguments).
    array_names: ClassVar[tuple[str, ...]] = ()

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return int(sum(getattr(self, name).nbytes for name in self.array_names))

    def temp_bytes_per_row(self, n_features: int) -> int:
        """Count the bytes of temporaries one row needs inside :meth:`project_into`.

        Parameters
        ----------
        n_features : int
            Number of input features d.

        Returns
        -------
        int
            Bytes per row (this default: none), for the engine's block sizing.
        """
        return 0

    @abstractmethod
    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        """Write ``X_block @ W`` into ``out`` for a NumPy (dense or CSR) row block.

        Parameters
        ----------
        X_block : {ndarray, sparse matrix} of shape (n_rows, n_features)
            The row block.
        out : ndarray of shape (n_rows, n_frequencies)
            The output block, overwritten.
        """

    @abstractmethod
    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """Compute ``X_block @ W (+ bias)`` for a row block of another array library.

        Parameters
        ----------
        xp : module
            The array namespace of ``X_block`` (array API).
        X_block : array of shape (n_rows, n_features)
            The row block, on its device.
        out : array of shape (n_rows, n_frequencies), default=None
            Written into where the library allows.
        bias : array of shape (n_frequencies,), default=None
            Added to every row.

        Returns
        -------
        array of shape (n_rows, n_frequencies)
            The projection, in namespace ``xp`` on ``X_block``'s device.
        """

    def replace_arrays(self, convert: Callable[[Any], Any]) -> Projection:
        """Build the same projection from ``convert(array)`` of each of its arrays.

        Parameters
        ----------
        convert : callable
            ``convert(array) -> array``, applied to each array of ``array_names``.

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return type(self)(**{name: convert(getattr(self, name)) for name in self.array_names})

    def astype(self, dtype: np.dtype) -> Projection:
        """Build the same projection with its floating-point arrays stored in ``dtype``.

        Parameters
        ----------
        dtype : dtype
            The floating-point dtype (integer arrays, e.g. signs, are kept).

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return self.replace_arrays(
            lambda value: value.astype(dtype) if value.dtype.kind == "f" else value)

    def to_device(self, xp: Any, device: Any, dtype: Any = None) -> Projection:
        """Build the same projection with its arrays in namespace ``xp`` on ``device``.

        Parameters
        ----------
        xp : module
            The array namespace to move to (array API).
        device : object
            The device, as ``xp`` names it.
        dtype : dtype of ``xp``, default=None
            Floating-point arrays are cast to it when given.

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return self.replace_arrays(lambda value: on_device(value, xp, device, dtype))


# ============================================================================ output forms
def cos_features_into(projection_into, X_block: Any, weights: Any,
                      offset: np.ndarray, scale: Any, out: np.ndarray) -> None:
    """``out = scale · cos(P + offset)`` where ``projection_into`` writes P into ``out``.

    ``scale`` is a number or one factor per column (quadrature weights).

    Shared by every "cosine with random offset" map (RBFSampler, SkewedChi2Sampler,
    RandomFourierFeatures): one projection written straight into the output block, then
    the offset, the cosine and the scale applied chunk by chunk while each chunk is in
    cache (:func:`kernelmaps._fastmath.cos_inplace`; float64: ~4× faster than ``np.cos``,
    within 3.3e-16 of it, so RBFSampler's numbers stay scikit-learn's to rounding). Where
    the frequencies are an explicit matrix and the rows dense, the arguments are bounded
    first (:func:`argument_bound`), which spares the cosine its range check.
    """
    projection_into(X_block, weights, out)
    bound = argument_bound(X_block, weights, offset) if out.dtype == np.float64 else None
    cos_inplace(out, offset=offset, scale=scale, max_abs=bound)


def argument_bound(X_block: Any, weights: Any, offset: np.ndarray) -> float | None:
    r"""An upper bound on :math:`|x_i^\top w_k + b_k|` over a block, or ``None``.

    Cauchy–Schwarz: :math:`\max_i\lVert x_i\rVert_2\,\max_k\lVert w_k\rVert_2 +
    \max_k|b_k|` (d·D + b·d operations, against the block's b·D cosines). The computed
    projection can exceed the exact one by :math:`d\,\varepsilon` relative (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1) and the norms be
    rounded down by a few ulps; the cosine uses the bound only when it is below half its
    fast range, a margin of a factor 2 over both. NaN or inf in the rows makes the bound
    NaN or inf, which the cosine treats as unknown. ``None`` (unknown) for sparse rows or
    projections that are not a matrix.
    """
    if not (isinstance(X_block, np.ndarray) and isinstance(weights, np.ndarray)
            and X_block.ndim == 2 and weights.ndim == 2 and X_block.size and weights.size):
        return None
    with np.errstate(all="ignore"):  # inf/NaN rows give an inf/NaN bound: "unknown"
        rows = np.sqrt(np.einsum("ij,ij->i", X_block, X_block).max())
        columns = np.sqrt(np.einsum("ij,ij->j", weights, weights).max())
        return float(rows * columns + np.abs(offset).max())


def project_into(X_block: Any, weights: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = X_block @ weights`` (BLAS in place for dense, scipy for CSR)."""
    if sp.issparse(X_block):
        out[...] = X_block @ weights
    else:
        np.matmul(X_block, weights, out=out)



class DenseProjection(Projection):
    """Explicit frequencies: ``weights`` of shape (n_features, n_frequencies); O(d·D) memory.

    Used by the "iid", "orthogonal", "principal" and "quadrature" structures; accepts CSR
    rows (sparse × dense BLAS).

    Parameters
    ----------
    weights : ndarray of shape (n_features, n_frequencies)
        The frequencies ω₁ … ω_D′ as columns.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures(gamma=0.5, structure="iid", n_components=8,
    ...                             random_state=0).fit(X)
    >>> type(rff.projection_).__name__, rff.projection_.weights.shape
    ('DenseProjection', (3, 4))
    """

    array_names = ("weights",)

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        """Write ``X_block @ weights`` into ``out`` (BLAS in place; CSR rows through SciPy).

        Parameters
        ----------
        X_block : {ndarray, sparse matrix} of shape (n_rows, n_features)
            The row block.
        out : ndarray of shape (n_rows, n_frequencies)
            The output block, overwritten; ``weights`` are cast to its dtype.
        """
        project_into(X_block, self.weights.astype(out.dtype, copy=False), out)

    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """Compute ``X_block @ weights (+ bias)`` on the device (one ``addmm`` into ``out``).

        Parameters
        ----------
        xp : module
            The array namespace of ``X_block`` (array API).
        X_block : array of shape (n_rows, n_features)
            The row block, on its device.
        out : array of shape (n_rows, n_frequencies), default=None
            Written into where the library allows.
        bias : array of shape (n_frequencies,), default=None
            Added to every row.

        Returns
        -------
        array of shape (n_rows, n_frequencies)
            The projection, in namespace ``xp`` on ``X_block``'s device.
        """
        return matmul(xp, X_block, self.weights, out=out, bias=bias)


def random_signs(random_state: np.random.RandomState, shape: tuple[int, ...]) -> np.ndarray:
    # int8: one byte per sign; a block's signs are cast to the data's dtype when used.
    return (2 * random_state.randint(0, 2, size=shape) - 1).astype(np.int8)



def project_with(X_block: Any, projection: Any, out: np.ndarray) -> None:
    # Adapter to cos_features_into's (X_block, weights, out) projection signature.
    projection.project_into(X_block, out)



def cos_sin_into(projections: np.ndarray, scale: Any, out: np.ndarray) -> None:
    """``out = scale · [cos P, sin P]`` (cosines in the first half of the columns; ``scale``
    a number or one factor per output column)."""
    n = projections.shape[1]
    if out.dtype == np.float64:
        # sin p = cos(p − π/2): the fast cosine over both halves instead of NumPy's scalar
        # sin (compiled: one pass reading each p once); the shift adds at most half an ulp
        # of p of argument error (≤ 1e-14 for |p| ≤ 100), far below the Monte Carlo error.
        cos_sin(projections, out, scale)
        return
    # float32 np.cos / np.sin are SIMD-vectorised already
    np.cos(projections, out=out[:, :n])
    np.sin(projections, out=out[:, n:])
    out *= scale


def cos_features_device(xp: Any, projection: Any, X_block: Any, offset: Any, scale: Any,
                        out: Any) -> Any:
    """``scale · cos(X_block W + offset)`` on the device: the projection with its offset
    (PyTorch: one ``addmm`` into the output), an in-place cosine and an in-place scale
    (a number or a device array with one factor per column)."""
    features = projection.project_device(xp, X_block, out=out, bias=offset)
    features = unary(xp, "cos", features)
    features *= scale
    return features


def cos_sin_device(xp: Any, projections: Any, scale: Any) -> Any:
    """``scale · [cos P, sin P]`` on the device (cosines in the first half; ``scale`` a
    number or one factor per output column)."""
    features = xp.concat([xp.cos(projections), xp.sin(projections)], axis=1)
    features *= scale
    return features
