"""What the models offer kernelmaps' other packages: the steps of a fit that Dask drives.

Not the users' API (that is each estimator's ``fit``/``predict``). :mod:`kernelmaps.distributed`
fits ``FeatureRidge``/``FeatureRidgeClassifier`` and FALKON (``KernelRidge`` and
``KernelRidgeClassifier`` with ``solver="nystrom"``) on Dask collections with the models'
own code: it sets the targets, builds the statistics or the Nyström system on the chunks,
and hands them back to the model to solve. The functions here are those steps; the
estimators keep their methods private, and no other package calls them
(``tests/test_boundaries.py``). The names re-exported below are the pieces of the models'
machinery the Dask fits reuse as they are:

- :class:`RidgeStatistics` — the accumulator of a ``FeatureRidge`` fit; a chunk's
  statistics are added where it lives and merged by Dask's tree reduction;
- :class:`NystromSystem` — FALKON's system of one block of rows (one per chunk on Dask),
  with :func:`cache_budget` and :func:`attainable_residual`;
- :class:`NystromSystemLike` — what :func:`solve_nystrom` needs from a system;
- :func:`fit_kernel` — the model's kernel resolved on the training rows (``gamma="scale"``);
- :class:`FitProgress` — a fit's progress report (``verbose``);
- :func:`warn_approximate_solver` — ``solver="auto"``'s one :class:`ApproximateSolverWarning`
  message, where it fits by FALKON.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from kernelmaps.maps import FeatureMap
from kernelmaps.models._accumulator import RidgeStatistics
from kernelmaps.models._common import fit_kernel
from kernelmaps.models._kernel_blocks import (
    COMPILED_SWEEP_SAVING,
    attainable_residual,
    cache_budget,
    compiled_sweep,
)
from kernelmaps.models._nystrom import NystromSystem
from kernelmaps.models._progress import FitProgress
from kernelmaps.models._ridge_base import ApproximateSolverWarning, warn_approximate_solver

__all__ = [
    "COMPILED_SWEEP_SAVING",
    "ApproximateSolverWarning",
    "FitProgress",
    "NystromSystem",
    "NystromSystemLike",
    "RidgeStatistics",
    "attainable_residual",
    "cache_budget",
    "compiled_sweep",
    "encode_targets",
    "fit_kernel",
    "n_targets",
    "new_feature_map",
    "set_classes",
    "set_solution",
    "set_target_shape",
    "solve_nystrom",
    "warn_approximate_solver",
]


class NystromSystemLike(Protocol):
    r"""What FALKON's solve needs from a Nyström system (in memory, or one per Dask chunk).

    ``rhs`` is :math:`K_{nM}^\top W Y` (M × t), ``gram_times(V)`` gives
    :math:`K_{nM}^\top W K_{nM} V`, ``info`` the system's facts for ``fit_info_``
    (``path`` and the cache). Optionally ``attainable_residual`` (the floor of the CG
    residual in the blocks' precision) and ``widen()`` (recompute the blocks in float64 when
    the floor is reached).
    """

    rhs: np.ndarray
    info: dict[str, Any]

    def gram_times(self, V: np.ndarray) -> np.ndarray:
        """Return :math:`K_{nM}^\\top W K_{nM} V`."""


def set_classes(model: Any, classes: np.ndarray) -> None:
    """Set a classifier's classes (sorted unique labels) and its number of ±1 target columns.

    Parameters
    ----------
    model : FeatureRidgeClassifier or KernelRidgeClassifier
        The classifier being fitted.
    classes : ndarray
        The sorted unique labels of ``y`` (on Dask: computed from the collection).

    Raises
    ------
    ValueError
        Fewer than two classes.
    """
    model._set_classes(classes)


def set_target_shape(model: Any, ravel: bool, n_targets: int) -> None:
    """Set a regressor's target layout: 1-D ``y`` (``ravel``) and its number of columns.

    Parameters
    ----------
    model : FeatureRidge
        The regressor being fitted.
    ravel : bool
        Whether ``y`` is 1-D (the fitted ``coef_`` is then 1-D and ``intercept_`` a float).
    n_targets : int
        The number of target columns.
    """
    model._ravel = bool(ravel)
    model._n_targets = int(n_targets)


def n_targets(model: Any) -> int:
    """The number of target columns of a fit under way.

    Set by :func:`set_classes` (a classifier's ±1 columns, one for two classes) or
    :func:`set_target_shape`; the Dask fits size the statistics and the encoded targets
    with it.

    Parameters
    ----------
    model : estimator
        A ridge model of :mod:`kernelmaps.models` being fitted.

    Returns
    -------
    int
        The width of the targets the model solves for.
    """
    return model._n_targets


def encode_targets(model: Any, y: np.ndarray) -> np.ndarray:
    """The float64 targets a fit solves for: a classifier's ±1 one-vs-rest columns.

    Parameters
    ----------
    model : estimator
        A ridge model being fitted (a classifier after :func:`set_classes`).
    y : ndarray
        Labels (or targets) of a block of rows; on Dask, one chunk.

    Returns
    -------
    ndarray of shape (n_rows, n_targets)
        The encoded targets.
    """
    return model._encode(y)


def new_feature_map(model: Any) -> FeatureMap:
    """The map a ``FeatureRidge`` fit fits, as the in-memory fit makes it.

    A clone of ``feature_map`` (or the default map), or the fitted map itself when it is
    wrapped in :class:`sklearn.frozen.FrozenEstimator`; the Dask fit then fits it on the
    collection (or uses the frozen one as it is).

    Parameters
    ----------
    model : FeatureRidge or FeatureRidgeClassifier
        The model being fitted.

    Returns
    -------
    FeatureMap
        The map, with the model's ``random_state`` where it takes one.
    """
    return model._new_map()


def set_solution(model: Any, statistics: RidgeStatistics) -> None:
    """Solve a ``FeatureRidge`` fit from its statistics and set the fitted state.

    Parameters
    ----------
    model : FeatureRidge or FeatureRidgeClassifier
        The model, with ``feature_map_`` fitted and its targets set.
    statistics : RidgeStatistics
        The statistics of every row (on Dask: the tree-reduced sum of the chunks').
    """
    model._set_solution(statistics)


def solve_nystrom(model: Any, system: NystromSystemLike, kernel: Any, centres: Any,
                  indices: Any, alpha: float, ravel: bool, *, total_weight: float,
                  n_features_in: int, feature_names_in: Any, progress: FitProgress) -> None:
    """Solve FALKON's normal equations over ``system`` and set the model's fitted state.

    The one place a Nyström fit ends, in memory and on Dask (there ``system`` sums one
    :class:`NystromSystem` per chunk).

    Parameters
    ----------
    model : KernelRidge or KernelRidgeClassifier
        The model being fitted (``solver="nystrom"``).
    system : NystromSystemLike
        The system: its right-hand side and products with the Gram matrix.
    kernel : Kernel
        The fitted kernel (``kernel_``).
    centres : ndarray
        The centres' rows.
    indices : ndarray or None
        The centres' positions in the training rows, or None.
    alpha : float
        The ridge penalty.
    ravel : bool
        Whether ``dual_coef_`` is 1-D.
    total_weight : float
        The sum of the sample weights.
    n_features_in : int
        The number of features of ``X``.
    feature_names_in : ndarray or None
        ``X``'s column names, or None.
    progress : FitProgress
        The fit's progress report.
    """
    model._solve_nystrom(system, kernel, centres, indices, alpha, ravel,
                         total_weight=total_weight, n_features_in=n_features_in,
                         feature_names_in=feature_names_in, progress=progress)
