r"""Choosing γ, α and D for a feature map and a linear model, using the problem's structure.

:func:`tune` (:mod:`~kernelmaps.tuning.search`)
    the kernel's scale by a 1-D search in log scale around the median heuristic, D by
    doubling, α in closed form; returns a fitted pipeline, the parameters and every
    configuration tried (:class:`TuneResult`);
:func:`ridge_alpha_path`
    every ridge α scored from one eigendecomposition of the features (exact leave-one-out
    or k folds), and the linear model at the best one (:class:`AlphaPath`);
:func:`kernel_alpha_path`
    the same for kernel ridge, from one eigendecomposition of the centred kernel matrix
    (:class:`KernelAlphaPath`): the exact baseline of :func:`~kernelmaps.evaluate.compare`.

The α paths are kernelmaps' ridge core, which sits below :mod:`kernelmaps.models`,
:mod:`kernelmaps.evaluate` and this package; they are re-exported here. This package sits
above :mod:`kernelmaps.evaluate` and uses its public median heuristic, method registry and
target checks. See ``docs/tuning.md``.
"""

from kernelmaps._ridge import DEFAULT_ALPHAS as _RIDGE_ALPHAS
from kernelmaps._ridge import (
    AlphaPath,
    KernelAlphaPath,
    honest_rows,
    kernel_alpha_path,
    ridge_alpha_path,
)
from kernelmaps.tuning.result import Trial, TuneResult
from kernelmaps.tuning.search import START_COMPONENTS, tune

#: The α grid used when none is given: 10⁻⁶ … 10³, four per decade. Feature maps scale
#: features so that z(x)·z(y) ≈ k(x, y) = O(1), so the eigenvalues of ZᵀZ are O(n) at most.
#: (The ridge core's grid, the same object; its comment is here for the API reference.)
DEFAULT_ALPHAS = _RIDGE_ALPHAS

__all__ = ["DEFAULT_ALPHAS", "START_COMPONENTS", "AlphaPath", "KernelAlphaPath", "Trial",
           "TuneResult", "honest_rows", "kernel_alpha_path", "ridge_alpha_path", "tune"]
