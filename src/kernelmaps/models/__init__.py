"""Kernel machines: fitted on explicit features z(x) or on the kernel k directly."""

from kernelmaps.models._ridge_base import ApproximateSolverWarning
from kernelmaps.models.cca import KernelCCA
from kernelmaps.models.cost import FitCost, estimate_fit_cost
from kernelmaps.models.feature_ridge import FeatureRidge, FeatureRidgeClassifier
from kernelmaps.models.fisher import KernelFisherDiscriminant
from kernelmaps.models.fixed_size import FIXED_SIZE_MODELS, make_fixed_size_model
from kernelmaps.models.novelty import KernelMeanDistance
from kernelmaps.models.ridge import KernelRidge
from kernelmaps.models.ridge_classifier import KernelRidgeClassifier
from kernelmaps.models.streaming import StreamingPipeline, make_streaming_pipeline

__all__ = [
    "FIXED_SIZE_MODELS",
    "ApproximateSolverWarning",
    "FeatureRidge",
    "FeatureRidgeClassifier",
    "FitCost",
    "KernelCCA",
    "KernelFisherDiscriminant",
    "KernelMeanDistance",
    "KernelRidge",
    "KernelRidgeClassifier",
    "StreamingPipeline",
    "estimate_fit_cost",
    "make_fixed_size_model",
    "make_streaming_pipeline",
]
