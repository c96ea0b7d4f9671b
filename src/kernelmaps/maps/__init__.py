"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module."""

from kernelmaps.maps.arccos import ArcCosineSampler
from kernelmaps.maps.fourier import RandomFourierFeatures, RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import (
    PolynomialCountSketch,
    PolynomialKernelMap,
    RandomMaclaurin,
    TensorSRHT,
)

__all__ = [
    "AdditiveChi2Sampler",
    "ArcCosineSampler",
    "Nystroem",
    "PolynomialCountSketch",
    "PolynomialKernelMap",
    "RBFSampler",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "SkewedChi2Sampler",
    "TensorSRHT",
]
