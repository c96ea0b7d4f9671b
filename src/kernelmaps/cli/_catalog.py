"""The names the command line offers, as plain data: kernels, methods, models, scalings.

The argument parser (:mod:`kernelmaps.cli._parser`) builds its help and checks its values
from these, so ``kernelmaps --help`` and an argument error answer at once, without loading
NumPy, scikit-learn and the registries that hold the same names
(:data:`kernelmaps.kernels.KERNELS`, :data:`kernelmaps.evaluate.METHODS`, ...), which
take seconds to import. This module imports nothing; ``tests/cli/test_catalog.py`` fails
when a registry and this copy differ, so a kernel or method added there is added here too.
"""

from __future__ import annotations

__all__ = ["DEFAULT_N_COMPONENTS", "EXACT_AUTO_MAX_SECONDS", "KERNEL_ALIASES", "KERNEL_NAMES",
           "MAX_AUTO_CLASSES", "METHOD_NAMES", "MODEL_NAMES", "SCALES", "canonical_kernel_name"]

#: The registered kernel names (sorted(kernelmaps.kernels.KERNELS)).
KERNEL_NAMES = ("additive_chi2", "additive_chi2_psd", "arccos", "chi2", "cosine",
                "exponential", "laplacian", "linear", "matern", "poly", "polynomial", "rbf",
                "sigmoid", "skewed_chi2", "student")
#: kernelmaps.kernels.KERNEL_ALIASES: alias → kernel name.
KERNEL_ALIASES = {"gaussian": "rbf", "squared_exponential": "rbf", "laplace": "laplacian",
                  "arc_cosine": "arccos", "arccosine": "arccos", "tanh": "sigmoid",
                  "chi_squared": "chi2"}
#: The methods of kernelmaps.evaluate.METHODS, in its order.
METHOD_NAMES = ("nystroem", "rbf_sampler", "poly_sketch", "additive_chi2", "skewed_chi2",
                "rff", "orthogonal", "structured", "fastfood", "quadrature", "principal",
                "arccos", "tensor_srht", "maclaurin")
#: sorted(kernelmaps.evaluate.MODELS): the linear models of compare.
MODEL_NAMES = ("logistic", "ridge", "svm")
#: kernelmaps.evaluate.SCALES: the feature scalings.
SCALES = ("none", "standard", "minmax")
#: kernelmaps.evaluate.MAX_AUTO_CLASSES: task="auto" reads at most this many distinct
#: real values as classes.
MAX_AUTO_CLASSES = 20
#: kernelmaps.evaluate.EXACT_AUTO_MAX_SECONDS: exact="auto" runs the baseline below this.
EXACT_AUTO_MAX_SECONDS = 60.0
#: kernelmaps.evaluate.comparison.DEFAULT_N_COMPONENTS: the output dimensions compare sweeps.
DEFAULT_N_COMPONENTS = (25, 50, 100, 200, 400, 800)


def canonical_kernel_name(name: str) -> str | None:
    """The kernel ``name`` stands for (kernelmaps.kernels.canonical_kernel_name's rule: no
    case, ``-`` read as ``_``, aliases resolved), or None when it names none."""
    key = name.strip().lower().replace("-", "_")
    if name in KERNEL_NAMES or key in KERNEL_NAMES:
        return name if name in KERNEL_NAMES else key
    return KERNEL_ALIASES.get(key)
