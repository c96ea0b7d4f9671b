r"""Shared machinery of the random-projection maps: X ↦ XW written into the output block.

Every map that draws random directions (random Fourier features, the χ² samplers, the
arc-cosine and dot-product sketches) projects a row block with :func:`project_into` and,
for cosine features, finishes in place with :func:`cos_features_into` or
:func:`cos_sin_into`. Projections with explicit weights are :class:`DenseProjection`;
the structured ones (orthogonal, SORF, Fastfood) live in :mod:`kernelmaps.maps._structured`.

On a device (array API dispatch) the same steps are :func:`cos_features_device` and
:func:`cos_sin_device`, with each projection's ``project_device``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernelmaps._array_api import matmul, unary
from kernelmaps._fastmath import cos_inplace
from kernelmaps.kernels import SpectralDensity

__all__ = [
    "DenseProjection",
    "cast_projection",
    "cos_features_device",
    "cos_features_into",
    "cos_sin_device",
    "cos_sin_into",
    "iid_projection",
    "project_into",
    "project_with",
    "random_signs",
]


def cos_features_into(projection_into, X_block: Any, weights: Any,
                      offset: np.ndarray, scale: float, out: np.ndarray, *,
                      cosine_inplace: Callable[[np.ndarray], None] = cos_inplace
                      ) -> None:
    """``out = scale · cos(P + offset)`` where ``projection_into`` writes P into ``out``.

    Shared by every "cosine with random offset" map (RBFSampler, SkewedChi2Sampler,
    RandomFourierFeatures): one projection written straight into the output block, then
    three in-place passes over a block that is still in cache. The cosine is
    :func:`kernelmaps._fastmath.cos_inplace` (float64: ~4× faster than ``np.cos``, within
    3.3e-16 of it, so RBFSampler's numbers stay scikit-learn's to rounding).
    """
    projection_into(X_block, weights, out)
    out += offset
    cosine_inplace(out)
    out *= scale



def project_into(X_block: Any, weights: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = X_block @ weights`` (BLAS in place for dense, scipy for CSR)."""
    if sp.issparse(X_block):
        out[...] = X_block @ weights
    else:
        np.matmul(X_block, weights, out=out)



class DenseProjection:
    """Explicit frequencies: ``weights`` of shape (n_features, n_frequencies); O(d·D) memory.

    Used by the "iid" and "orthogonal" structures; accepts CSR rows (sparse × dense BLAS).
    """

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return self.weights.nbytes

    def temp_bytes_per_row(self, n_features: int) -> int:
        return 0

    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        project_into(X_block, self.weights.astype(out.dtype, copy=False), out)

    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """``X_block @ weights (+ bias)`` on the device (one ``addmm`` into ``out``)."""
        return matmul(xp, X_block, self.weights, out=out, bias=bias)



def iid_projection(density: SpectralDensity, d: int, n_frequencies: int,
                    random_state: np.random.RandomState) -> DenseProjection:
    return DenseProjection(
        np.ascontiguousarray(density.sample(d, n_frequencies, random_state).T))



def random_signs(random_state: np.random.RandomState, shape: tuple[int, ...]) -> np.ndarray:
    # int8: one byte per sign; a block's signs are cast to the data's dtype when used.
    return (2 * random_state.randint(0, 2, size=shape) - 1).astype(np.int8)



def cast_projection(projection: Any, dtype: np.dtype) -> Any:
    """The same projection with its floating-point arrays stored in ``dtype``."""
    arrays = {name: (value.astype(dtype) if value.dtype.kind == "f" else value)
              for name, value in vars(projection).items()}
    return type(projection)(**arrays)



def project_with(X_block: Any, projection: Any, out: np.ndarray) -> None:
    # Adapter to cos_features_into's (X_block, weights, out) projection signature.
    projection.project_into(X_block, out)



def cos_sin_into(projections: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out = scale · [cos P, sin P]`` (cosines in the first half of the columns)."""
    n = projections.shape[1]
    if out.dtype == np.float64:
        # sin p = cos(p − π/2): one pass of the fast cosine over the whole contiguous
        # block instead of NumPy's scalar sin; the shift adds at most half an ulp of p of
        # argument error (≤ 1e-14 for |p| ≤ 100), far below the Monte Carlo error.
        out[:, :n] = projections
        np.subtract(projections, np.pi / 2, out=out[:, n:])
        cos_inplace(out)
    else:  # float32 np.cos / np.sin are SIMD-vectorised already
        np.cos(projections, out=out[:, :n])
        np.sin(projections, out=out[:, n:])
    out *= scale


def cos_features_device(xp: Any, projection: Any, X_block: Any, offset: Any, scale: float,
                        out: Any) -> Any:
    """``scale · cos(X_block W + offset)`` on the device: the projection with its offset
    (PyTorch: one ``addmm`` into the output), an in-place cosine and an in-place scale."""
    features = projection.project_device(xp, X_block, out=out, bias=offset)
    features = unary(xp, "cos", features)
    features *= scale
    return features


def cos_sin_device(xp: Any, projections: Any, scale: float) -> Any:
    """``scale · [cos P, sin P]`` on the device (cosines in the first half)."""
    features = xp.concat([xp.cos(projections), xp.sin(projections)], axis=1)
    features *= scale
    return features
