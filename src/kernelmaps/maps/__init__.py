"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module."""

from kernelmaps.maps.fourier import RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import PolynomialCountSketch, PolynomialKernelMap

__all__ = [
    "AdditiveChi2Sampler",
    "Nystroem",
    "PolynomialCountSketch",
    "PolynomialKernelMap",
    "RBFSampler",
    "SkewedChi2Sampler",
]
