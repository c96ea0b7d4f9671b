"""Every ridge α from one pass over the features: :func:`ridge_alpha_path` (features) and
:func:`kernel_alpha_path` (a centred kernel matrix), exact leave-one-out or k folds.

They live in kernelmaps' ridge core, below :mod:`kernelmaps.models`,
:mod:`kernelmaps.evaluate` and this package, which all use them; this module keeps the names
importable where they were.
"""

from kernelmaps._ridge import DEFAULT_ALPHAS as _DEFAULT_ALPHAS
from kernelmaps._ridge import (
    AlphaPath,
    KernelAlphaPath,
    honest_rows,
    kernel_alpha_path,
    ridge_alpha_path,
)

#: The α grid used when none is given: 10⁻⁶ … 10³, four per decade. Feature maps scale
#: features so that z(x)·z(y) ≈ k(x, y) = O(1), so the eigenvalues of ZᵀZ are O(n) at most.
#: (The ridge core's grid, the same object; its comment is here for the API reference.)
DEFAULT_ALPHAS = _DEFAULT_ALPHAS

__all__ = ["DEFAULT_ALPHAS", "AlphaPath", "KernelAlphaPath", "honest_rows",
           "kernel_alpha_path", "ridge_alpha_path"]
