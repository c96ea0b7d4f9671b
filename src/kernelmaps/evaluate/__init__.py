r"""How good is an approximation? Kernel error and learning results, next to the exact kernel.

Three layers, each usable on its own:

:func:`approximation_error` (:mod:`~kernelmaps.evaluate.error`)
    the relative error of the Gram matrix :math:`ZZ^\top` of a feature map against the exact
    kernel matrix :math:`K` on a random subsample, over several random seeds, with a
    confidence interval; the exact kernel is the fitted map's ``kernel_`` unless given;
:func:`compare` (:mod:`~kernelmaps.evaluate.comparison`)
    maps × output dimensions × seeds, each fitted on a training split and followed by the same
    linear model, next to the exact-kernel model, side by side on worker processes: a tidy
    :class:`pandas.DataFrame` (error, test score, fit and transform time, CPU time, peak
    memory), summarised by :func:`summarize`;
the plots (:mod:`~kernelmaps.evaluate.plots`)
    the four views of that table (matplotlib): :func:`plot_error`, :func:`plot_score`,
    :func:`plot_pareto`, :func:`plot_error_time`;
:func:`advise` (:mod:`~kernelmaps.evaluate.advice`)
    what to use: per method, the smallest output dimension scoring within a tolerance of the
    exact kernel, and the one method to use — the fastest, or among those as fast within the
    timing noise, the least memory, then the smallest D.

Which maps :func:`compare` can run is the method registry :data:`METHODS`
(:mod:`~kernelmaps.evaluate.registry`): a name, how to build the map for a kernel and an
output dimension, and which kernels it approximates. A new map plugs in with one
:func:`register_method` call. :func:`median_heuristic` (:mod:`~kernelmaps.evaluate.heuristics`)
chooses a kernel's scale from the data; :func:`check_scales` says whether standardising the
features would plausibly help.

This package sits above ``kernels``, ``maps`` and ``models`` and imports from them and from
kernelmaps' low-level helpers — the ridge core among them, whose α paths
:func:`~kernelmaps.tuning.ridge_alpha_path` and :func:`~kernelmaps.tuning.kernel_alpha_path`
it uses — never from :mod:`kernelmaps.tuning` or ``cli``, which sit above it; pandas and
matplotlib (the ``cli`` extra) are imported only by the functions that need them.
``import kernelmaps`` does not import this package until one of its names is used.
"""

from kernelmaps.evaluate._splits import (
    MAX_AUTO_CLASSES,
    SCALES,
    ScaleCheck,
    check_scales,
    choose_scale,
    make_scaler,
    scale_ratio,
    task_of,
)
from kernelmaps.evaluate.advice import advise
from kernelmaps.evaluate.comparison import (
    EXACT_AUTO_MAX_SECONDS,
    EXACT_AUTO_MAX_TRAIN,
    EXACT_AUTO_MEMORY_FRACTION,
    EXACT_MAX_TRAIN,
    MODELS,
    compare,
    summarize,
)
from kernelmaps.evaluate.error import ApproximationError, approximation_error, relative_error
from kernelmaps.evaluate.heuristics import (
    ParameterChoice,
    main_kernel,
    median_heuristic,
    median_heuristic_parameter,
)
from kernelmaps.evaluate.plots import (
    dimension_ticks,
    pareto_front,
    plot_error,
    plot_error_time,
    plot_pareto,
    plot_score,
)
from kernelmaps.evaluate.registry import METHODS, Method, methods_for, register_method

__all__ = [
    "EXACT_AUTO_MAX_SECONDS",
    "EXACT_AUTO_MAX_TRAIN",
    "EXACT_AUTO_MEMORY_FRACTION",
    "EXACT_MAX_TRAIN",
    "MAX_AUTO_CLASSES",
    "METHODS",
    "MODELS",
    "SCALES",
    "ApproximationError",
    "Method",
    "ParameterChoice",
    "ScaleCheck",
    "advise",
    "approximation_error",
    "check_scales",
    "choose_scale",
    "compare",
    "dimension_ticks",
    "main_kernel",
    "make_scaler",
    "median_heuristic",
    "median_heuristic_parameter",
    "methods_for",
    "pareto_front",
    "plot_error",
    "plot_error_time",
    "plot_pareto",
    "plot_score",
    "register_method",
    "relative_error",
    "scale_ratio",
    "summarize",
    "task_of",
]
