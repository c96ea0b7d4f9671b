"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module.

``nystroem`` (any kernel, data-dependent), ``fourier`` (shift-invariant kernels), ``histogram``
(χ² kernels), ``polynomial`` (Count Sketch, exact map), ``dot_product`` (Random Maclaurin,
TensorSRHT), ``arccos`` (arc-cosine kernels); ``_base`` is the :class:`FeatureMap` contract,
``_projection`` and ``_structured`` the random projections they share.
"""

from kernelmaps.maps._base import FeatureMap
from kernelmaps.maps.arccos import ArcCosineSampler
from kernelmaps.maps.dot_product import RandomMaclaurin, TensorSRHT
from kernelmaps.maps.fourier import RandomFourierFeatures, RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import PolynomialCountSketch, PolynomialKernelMap

__all__ = [
    "AdditiveChi2Sampler",
    "ArcCosineSampler",
    "FeatureMap",
    "Nystroem",
    "PolynomialCountSketch",
    "PolynomialKernelMap",
    "RBFSampler",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "SkewedChi2Sampler",
    "TensorSRHT",
]
