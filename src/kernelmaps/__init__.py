"""kernelmaps: explicit kernel feature maps and scalable kernel machines.

A drop-in superset of :mod:`sklearn.kernel_approximation`::

    from kernelmaps import Nystroem, RBFSampler  # instead of sklearn.kernel_approximation

Importing kernelmaps loads NumPy, SciPy and scikit-learn only. The evaluation entry points
(:func:`approximation_error`, :func:`compare`, :func:`summarize`) live in
:mod:`kernelmaps.evaluate`, and :func:`tune` in :mod:`kernelmaps.tuning`, imported on first
use of one of these names (PEP 562).
"""

import types as _types
import typing as _typing

# Loaded for its registration: maps and models hand Dask collections to it through the
# engine (Dask itself is imported only when such a collection arrives).
from kernelmaps import distributed  # noqa: F401
from kernelmaps._config import config_context, get_config, set_config
from kernelmaps.kernels import (
    DegenerateKernelWarning,
    IndefiniteKernelWarning,
    Kernel,
    MercerReport,
    check_mercer,
    feature_distance,
    get_kernel,
    kernel_distance,
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
    "feature_distance",
    "get_config",
    "get_kernel",
    "kernel_distance",
    "quadratic_renyi_entropy",
    "renyi_entropy_subset",
    "set_config",
    "summarize",
    "tune",
]

if _typing.TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; loaded lazily below
    from kernelmaps.evaluate import approximation_error, compare, summarize
    from kernelmaps.tuning import tune

#: Names served lazily from kernelmaps.evaluate: it imports the linear models, the SVMs and
#: scipy.stats, which the feature maps do not need.
_EVALUATE = frozenset({"approximation_error", "compare", "summarize"})
#: Served lazily from kernelmaps.tuning (which builds on kernelmaps.evaluate).
_TUNING = frozenset({"tune"})


def __getattr__(name: str) -> object:
    if name in _EVALUATE:
        from kernelmaps import evaluate

        value = getattr(evaluate, name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name in _TUNING:
        from kernelmaps import tuning

        value = getattr(tuning, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kernelmaps' has no attribute {name!r}")


def __dir__() -> list[str]:
    # What a reader should see: the public names and the public subpackages already loaded
    # (kernels, maps, ...), not the helpers of this file or the private modules.
    loaded = {name for name, value in globals().items()
              if isinstance(value, _types.ModuleType) and not name.startswith("_")}
    return sorted(set(__all__) | loaded)
