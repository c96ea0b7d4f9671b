"""Kernel machines: fitted on explicit features z(x) or on the kernel k directly."""

from kernelmaps.models.fisher import KernelFisherDiscriminant
from kernelmaps.models.novelty import KernelMeanDistance
from kernelmaps.models.ridge import KernelRidge

__all__ = ["KernelFisherDiscriminant", "KernelMeanDistance", "KernelRidge"]
