"""Every ridge α from one pass over the features: :func:`ridge_alpha_path` (features) and
:func:`kernel_alpha_path` (a centred kernel matrix), exact leave-one-out or k folds.

They live in kernelmaps' ridge core, below :mod:`kernelmaps.models`,
:mod:`kernelmaps.evaluate` and this package, which all use them; this module keeps the names
importable where they were.
"""

from kernelmaps._ridge import (
    DEFAULT_ALPHAS,
    AlphaPath,
    KernelAlphaPath,
    honest_rows,
    kernel_alpha_path,
    ridge_alpha_path,
)

__all__ = ["DEFAULT_ALPHAS", "AlphaPath", "KernelAlphaPath", "honest_rows",
           "kernel_alpha_path", "ridge_alpha_path"]
