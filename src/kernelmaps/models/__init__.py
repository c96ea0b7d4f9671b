"""Kernel machines: fitted on explicit features z(x) or on the kernel k directly."""

from kernelmaps.models.cca import KernelCCA
from kernelmaps.models.fisher import KernelFisherDiscriminant
from kernelmaps.models.fixed_size import FIXED_SIZE_MODELS, make_fixed_size_model
from kernelmaps.models.novelty import KernelMeanDistance
from kernelmaps.models.ridge import KernelRidge

__all__ = [
    "FIXED_SIZE_MODELS",
    "KernelCCA",
    "KernelFisherDiscriminant",
    "KernelMeanDistance",
    "KernelRidge",
    "make_fixed_size_model",
]
