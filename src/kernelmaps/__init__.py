"""kernelmaps: explicit kernel feature maps and scalable kernel machines.

A drop-in superset of :mod:`sklearn.kernel_approximation`::

    from kernelmaps import Nystroem, RBFSampler  # instead of sklearn.kernel_approximation
"""

from kernelmaps._config import config_context, get_config, set_config
from kernelmaps.evaluate import approximation_error, compare, summarize
from kernelmaps.kernels import (
    DegenerateKernelWarning,
    IndefiniteKernelWarning,
    Kernel,
    MercerReport,
    check_mercer,
    get_kernel,
)
from kernelmaps.landmarks import quadratic_renyi_entropy, renyi_entropy_subset
from kernelmaps.maps import (
    AdditiveChi2Sampler,
    ArcCosineSampler,
    Nystroem,
    PolynomialCountSketch,
    PolynomialKernelMap,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    SkewedChi2Sampler,
    TensorSRHT,
)

__version__ = "0.1.0"

__all__ = [
    "AdditiveChi2Sampler",
    "ArcCosineSampler",
    "DegenerateKernelWarning",
    "IndefiniteKernelWarning",
    "Kernel",
    "MercerReport",
    "Nystroem",
    "PolynomialCountSketch",
    "PolynomialKernelMap",
    "RBFSampler",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "SkewedChi2Sampler",
    "TensorSRHT",
    "__version__",
    "approximation_error",
    "check_mercer",
    "compare",
    "config_context",
    "get_config",
    "get_kernel",
    "quadratic_renyi_entropy",
    "renyi_entropy_subset",
    "set_config",
    "summarize",
]
