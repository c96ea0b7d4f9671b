"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module."""

from kernelmaps.maps.fourier import RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import PolynomialCountSketch

__all__ = [
    "AdditiveChi2Sampler",
    "Nystroem",
    "PolynomialCountSketch",
    "RBFSampler",
    "SkewedChi2Sampler",
]
