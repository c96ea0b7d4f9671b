"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module.

``nystroem`` (any kernel, data-dependent), ``fourier`` (shift-invariant kernels), ``histogram``
(χ² kernels), ``polynomial`` (Count Sketch, exact map), ``dot_product`` (Random Maclaurin,
TensorSRHT), ``arccos`` (arc-cosine kernels); ``_base`` is the :class:`FeatureMap` contract,
``_projection`` and ``_structured`` the random projections they share.

The random-Fourier-feature structures are an extension point: :data:`STRUCTURES` maps each
value of ``RandomFourierFeatures(structure=...)`` to a :class:`Structure` (its ``draw``
function, the rounding of D, whether it needs an isotropic density or reads the data), whose
draws return a :class:`Projection`; :func:`register_structure` adds one (docs: "Adding a
structure" in the random-features guide).
"""

from kernelmaps.maps._base import FeatureMap
from kernelmaps.maps._projection import (
    STRUCTURES,
    DenseProjection,
    Frequencies,
    FrequencyRequest,
    Projection,
    Structure,
    register_structure,
)
from kernelmaps.maps.arccos import ArcCosineSampler
from kernelmaps.maps.dot_product import RandomMaclaurin, TensorSRHT
from kernelmaps.maps.fourier import RandomFourierFeatures, RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import PolynomialCountSketch, PolynomialKernelMap

__all__ = [
    "STRUCTURES",
    "AdditiveChi2Sampler",
    "ArcCosineSampler",
    "DenseProjection",
    "FeatureMap",
    "Frequencies",
    "FrequencyRequest",
    "Nystroem",
    "PolynomialCountSketch",
    "PolynomialKernelMap",
    "Projection",
    "RBFSampler",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "SkewedChi2Sampler",
    "Structure",
    "TensorSRHT",
    "register_structure",
]
