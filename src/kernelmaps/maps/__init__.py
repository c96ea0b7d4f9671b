"""Explicit feature maps z(x) with z(x)·z(y) ≈ k(x, y), one family per module.

``nystroem`` (any kernel, data-dependent), ``fourier`` (shift-invariant kernels), ``histogram``
(χ² kernels), ``polynomial`` (Count Sketch, exact map), ``dot_product`` (Random Maclaurin,
TensorSRHT), ``arccos`` (arc-cosine kernels); ``_base`` is the :class:`FeatureMap` contract,
``_projection`` (projections and output forms) and ``_structured`` the random projections
they share.

The random-Fourier-feature structures are an extension point: :data:`STRUCTURES` maps each
value of ``RandomFourierFeatures(structure=...)`` to a :class:`Structure` (its ``draw``
function, the rounding of D, whether it needs an isotropic density or reads the data), whose
draws return a :class:`Projection`; :func:`register_structure` adds one (docs: "Adding a
structure" in the random-features guide). The registry lives in ``_registry``; the built-in
structures (``_structures.BUILTIN_STRUCTURES``) are registered below, here where the package
is assembled, and nowhere else.
"""

from kernelmaps.maps._base import FeatureMap
from kernelmaps.maps._projection import DenseProjection, Projection
from kernelmaps.maps._registry import (
    STRUCTURES,
    Frequencies,
    FrequencyRequest,
    Structure,
    register_structure,
)
from kernelmaps.maps._structures import BUILTIN_STRUCTURES
from kernelmaps.maps.arccos import ArcCosineSampler
from kernelmaps.maps.dot_product import RandomMaclaurin, TensorSRHT
from kernelmaps.maps.fourier import RandomFourierFeatures, RBFSampler
from kernelmaps.maps.histogram import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.maps.polynomial import PolynomialCountSketch, PolynomialKernelMap

# The built-in random-Fourier-feature structures, in their listing order. The estimators read
# the registry only when fitted (and the structure constraint only when validated), so
# registering after their import is soon enough for every reader.
for _structure in BUILTIN_STRUCTURES:
    register_structure(_structure)
del _structure

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
