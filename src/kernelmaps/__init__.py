"""kernelmaps: explicit kernel feature maps and scalable kernel machines.

A drop-in superset of :mod:`sklearn.kernel_approximation`::

    from kernelmaps import Nystroem, RBFSampler  # instead of sklearn.kernel_approximation

``import kernelmaps`` itself loads neither NumPy nor scikit-learn: every public name and
every subpackage (``kernelmaps.models``, ``kernelmaps.kernels``, ``kernelmaps.maps``,
``kernelmaps.evaluate``, ``kernelmaps.tuning``, ...) is imported on first use (PEP 562), so
the ``kernelmaps`` command answers ``--help`` at once, and ``kernelmaps.models.KernelRidge``
works whatever was imported before. The feature maps load NumPy, SciPy and scikit-learn
only; the evaluation entry points (:func:`approximation_error`, :func:`compare`,
:func:`summarize`, in :mod:`kernelmaps.evaluate`) and :func:`tune` (in
:mod:`kernelmaps.tuning`) load the linear models, the SVMs and scipy.stats besides.
"""

import importlib as _importlib
import typing as _typing

# Loaded for its registration (standard library only): maps and models hand Dask
# collections to it through the engine (Dask itself is imported only when such a collection
# arrives).
from kernelmaps import distributed  # noqa: F401
from kernelmaps._config import config_context, get_config, set_config

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
    from kernelmaps import (  # noqa: F401 - the subpackages served by __getattr__
        cli,
        evaluate,
        io,
        kernels,
        landmarks,
        maps,
        models,
        tuning,
    )
    from kernelmaps.evaluate import approximation_error, compare, summarize
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
    from kernelmaps.tuning import tune

#: The public names, by the subpackage that defines them; each is imported on first use.
_LAZY_NAMES = {
    "kernelmaps.kernels": ("DegenerateKernelWarning", "IndefiniteKernelWarning", "Kernel",
                           "MercerReport", "check_mercer", "feature_distance", "get_kernel",
                           "kernel_distance"),
    "kernelmaps.landmarks": ("quadratic_renyi_entropy", "renyi_entropy_subset"),
    "kernelmaps.maps": ("AdditiveChi2Sampler", "ArcCosineSampler", "Nystroem",
                        "PolynomialCountSketch", "PolynomialKernelMap", "RBFSampler",
                        "RandomFourierFeatures", "RandomMaclaurin", "SkewedChi2Sampler",
                        "TensorSRHT"),
    # the evaluation tools import the linear models, the SVMs and scipy.stats
    "kernelmaps.evaluate": ("approximation_error", "compare", "summarize"),
    "kernelmaps.tuning": ("tune",),
}
_HOME = {name: module for module, names in _LAZY_NAMES.items() for name in names}

#: The public subpackages and modules, each imported on first use as ``kernelmaps.<name>``.
_SUBMODULES = ("cli", "distributed", "evaluate", "io", "kernels", "landmarks", "maps",
               "models", "tuning")


def __getattr__(name: str) -> object:
    if name in _HOME:
        value = getattr(_importlib.import_module(_HOME[name]), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"kernelmaps.{name}")
    else:
        raise AttributeError(f"module 'kernelmaps' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    # What a reader should see: the public names and the public subpackages, loaded or not
    # (not the helpers of this file or the private modules).
    return sorted({*__all__, *_SUBMODULES})
