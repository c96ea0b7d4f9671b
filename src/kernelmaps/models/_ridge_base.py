r"""What kernel ridge regression and classification share: parameters, both solvers, state.

:class:`~kernelmaps.models.KernelRidge` (numeric targets) and
:class:`~kernelmaps.models.KernelRidgeClassifier` (±1 one-vs-rest targets) are one
estimator with two ways of reading ``y``. Both solve, for targets :math:`Y` (n × t),

* ``solver="exact"``: :math:`(K + \alpha I)C = Y` — the n × n kernel matrix is factorised
  in place, once per distinct ``alpha`` (:func:`kernelmaps._linalg.solve_psd`);
* ``solver="auto"``: exact while the exact fit fits the machine
  (:func:`kernelmaps._cost.exact_fit_fits`), else Nyström with an
  :class:`ApproximateSolverWarning`;
* ``solver="nystrom"``: :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top W
  Y` by FALKON (:func:`~kernelmaps.models._falkon.falkon_solve`) over a
  :class:`~kernelmaps.models._nystrom.NystromSystem` (in memory) or its Dask counterpart
  (:mod:`kernelmaps.distributed._falkon`).

Whichever path fits, :meth:`_KernelRidgeBase._solve_nystrom` (Nyström) or
:meth:`_KernelRidgeBase._set_exact_state` sets the fitted attributes, so an attribute added
there reaches the in-memory and the Dask fits alike.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from kernelmaps._array_api import is_device_array, namespace_and_device
from kernelmaps._cost import exact_fit_fits
from kernelmaps._linalg import solve_psd_device
from kernelmaps._ridge import check_alpha, solve_shifted_in_place
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.kernels.degenerate import warn_if_degenerate
from kernelmaps.models._common import (
    KERNEL_PARAMETER_CONSTRAINTS,
    LANDMARK_PARAMETER_CONSTRAINTS,
    as_float64,
    centre_gram,
    check_fitted_placement,
    fit_kernel,
    kernel_columns,
    select_centres,
)
from kernelmaps.models._falkon import falkon_solve
from kernelmaps.models._nystrom import NystromSystem
from kernelmaps.models._progress import FitProgress

__all__ = ["ApproximateSolverWarning", "check_alpha", "warn_approximate_solver"]

#: What ``solver="auto"``'s warning states about the gap to the exact solver: measured, the
#: rms relative difference of FALKON's predictions (M = 1,000, uniform centres) to the exact
#: solver's on 2,000 test points of docs/models.md's synthetic problem (load 1.3-6.5):
#: 8e-6 (6,000 × 5, γ = 0.1, α = 1), 1e-2 (6,000 × 5, γ = 1, α = 0.1), 7.6e-3 (12,000 × 10,
#: γ = 0.1, α = 1), 0.30 (12,000 × 10, γ = 1, α = 0.1: largest difference 0.86). It
#: depends on the data, γ, α and M (a narrow kernel and a small α need more centres); no
#: bound is computed per fit.
FALKON_MEASURED_GAP = ("8e-6 to 0.3 rms relative on the problems of docs/models.md, the "
                       "largest with a narrow kernel and a small alpha")


class ApproximateSolverWarning(UserWarning):
    """``solver="auto"`` fitted by Nyström/FALKON because the exact solve does not fit.

    The model then differs from scikit-learn's ``KernelRidge`` (``dual_coef_`` has one
    coefficient per centre). Pass ``solver="exact"`` or ``solver="falkon"`` to choose.

    Examples
    --------
    Make the choice an error, to never get an approximation unasked:

    >>> import warnings
    >>> from kernelmaps.models import ApproximateSolverWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", ApproximateSolverWarning)
    """


#: How to get the exact model, said by :func:`warn_approximate_solver` (in memory).
EXACT_HINT = "Pass solver='exact' for the exact model anyway"


def warn_approximate_solver(model: Any, n_samples: int, reason: str, *,
                            exact_hint: str = EXACT_HINT, stacklevel: int = 2) -> None:
    """Say once that ``solver="auto"`` fits ``model`` by Nyström/FALKON, not exactly.

    The one message of :class:`ApproximateSolverWarning`, for the in-memory fit (the exact
    fit does not fit the machine, :func:`kernelmaps._cost.exact_fit_fits`) and the Dask fit
    (the exact solve needs the n × n kernel matrix in one process): it names M, the gap to
    the exact solver measured on docs/models.md's problems (:data:`FALKON_MEASURED_GAP`) and
    how to choose either solver explicitly. ``reason``: why the approximation was chosen;
    ``exact_hint``: how to get the exact model on this path; ``stacklevel``: as
    :func:`warnings.warn`'s, counted from the caller of this function.
    """
    M = min(model.n_components, n_samples)
    warnings.warn(
        f"{type(model).__name__}: solver='auto' fits by Nyström/FALKON with M = {M} "
        f"centres, not exactly as scikit-learn's KernelRidge: {reason}. Its predictions "
        f"differ from the exact solver's by an amount that depends on the data, gamma, "
        f"alpha and M (measured: {FALKON_MEASURED_GAP}); a larger n_components narrows "
        f"it. {exact_hint}, or solver='falkon' to choose the approximation (and silence "
        "this warning).",
        ApproximateSolverWarning, stacklevel=stacklevel + 1)


class _KernelRidgeBase(SuggestOptionsMixin, BaseEstimator):
    """Parameters, solvers and fitted state of kernel ridge (see the module)."""

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither"), "array-like"],
        **KERNEL_PARAMETER_CONSTRAINTS,
        "solver": [StrOptions({"auto", "exact", "nystrom", "falkon"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        **LANDMARK_PARAMETER_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, alpha: float | np.ndarray = 1.0, *, kernel: Any = "linear",
                 gamma: float | str | None = None, degree: float = 3, coef0: float = 1,
                 kernel_params: dict | None = None, solver: str = "auto",
                 n_components: int = 1000, landmarks: str = "uniform",
                 landmark_params: dict | None = None, max_iter: int = 100, tol: float = 1e-4,
                 random_state: Any = None, verbose: int = 0) -> None:
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.solver = solver
        self.n_components = n_components
        self.landmarks = landmarks
        self.landmark_params = landmark_params
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _pairwise(self) -> bool:
        """Whether X holds kernel values (``kernel="precomputed"``), for the tags."""
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _choose_solver(self, X: Any, n_targets: int = 1) -> tuple[str, str | None]:
        """The solver that runs, and why ``"auto"`` chose Nyström (None otherwise).

        ``"auto"`` is exact while the exact fit fits the machine by the one cost model
        (:func:`kernelmaps._cost.exact_fit_fits`: memory and time budgets).
        """
        if self.solver == "falkon":  # the algorithm's name for the one Nyström solver
            return "nystrom", None
        if self.solver != "auto":
            return self.solver, None
        itemsize = getattr(getattr(X, "dtype", None), "itemsize", 8)
        n_features = 0 if self._pairwise else X.shape[1]  # a precomputed K is only copied
        decision = exact_fit_fits(X.shape[0], n_features, n_targets, itemsize)
        return ("exact", None) if decision.fits else ("nystrom", decision.reason)

    def _warn_approximate(self, n_samples: int, reason: str) -> None:
        warn_approximate_solver(self, n_samples, reason, stacklevel=5)

    # ------------------------------------------------------------------ fit (in memory)
    def _fit_targets(self, X: Any, Y: Any, sample_weight: Any, ravel: bool) -> None:
        """Fit validated ``X`` to the float64 target matrix ``Y`` (n × t)."""
        self.kernel_ = fit_kernel(self, X, sample_weight)  # kernel parameter errors before any work
        if self._pairwise and X.shape[0] != X.shape[1]:
            raise ValueError("With kernel='precomputed', X must be the square (n_samples, "
                             f"n_samples) training kernel matrix; got shape {X.shape}.")
        solver, approximate = self._choose_solver(X, Y.shape[1])
        if approximate is not None:
            self._warn_approximate(X.shape[0], approximate)
        alpha = check_alpha(self.alpha, Y.shape[1], solver)
        progress = FitProgress(self.verbose, type(self).__name__)
        if solver == "exact":
            fit_exact = self._fit_exact_device if is_device_array(X) else self._fit_exact
            coef = fit_exact(X, Y, alpha, sample_weight, progress)
            self._set_exact_state(X, coef, ravel)
            return
        n = X.shape[0]
        centres, indices = select_centres(self, X, self.kernel_, min(self.n_components, n))
        columns = kernel_columns(self.kernel_, centres, indices)
        weights = as_float64(np.ones(n), X) if sample_weight is None else sample_weight
        system = NystromSystem(self.kernel_, X, columns, weights, Y,
                               block_dtype=self._nystrom_block_dtype(X, columns.shape[0]),
                               passes=self.max_iter)
        progress.phase(f"first pass over K_nM ({system.info['path']})")
        self._solve_nystrom(system, self.kernel_, centres, indices, float(alpha[0]), ravel,
                            total_weight=float(array_api_compat.array_namespace(weights)
                                               .sum(weights)),
                            n_features_in=self.n_features_in_,
                            feature_names_in=getattr(self, "feature_names_in_", None),
                            progress=progress)
        system.release()

    def _fit_exact(self, X, Y, alpha, sample_weight, progress) -> np.ndarray:
        # A fresh array from the kernel (never the caller's X), so it is factorised in place.
        K = np.asarray(self.kernel_(X), dtype=np.float64)
        warn_if_degenerate(K, X, self.kernel_, owner=type(self).__name__,
                           what="training points", stacklevel=6)
        progress.phase("kernel matrix")
        if sample_weight is not None:
            # Weighted ridge through √w scaling, as scikit-learn does (Y out of place: it
            # may be the caller's array).
            root = np.sqrt(sample_weight)
            K *= root[:, None]
            K *= root[None, :]
            Y = Y * root[:, None]
        coefficients = solve_shifted_in_place(K, Y, alpha, stacklevel=6)
        progress.phase("Cholesky solve")
        if sample_weight is not None:
            coefficients *= np.sqrt(sample_weight)[:, None]
        return coefficients

    def _fit_exact_device(self, X, Y, alpha, sample_weight, progress):
        """:meth:`_fit_exact` on X's device: the same weighted system, solved there."""
        xp, device = namespace_and_device(X)
        K = as_float64(self.kernel_(X), X)
        if sample_weight is not None:
            root = xp.sqrt(sample_weight)
            K = K * (root[:, None] * root[None, :])
            Y = Y * root[:, None]
        identity = xp.eye(K.shape[0], dtype=K.dtype, device=device)
        if alpha.size == 1:
            coefficients = solve_psd_device(xp, K + float(alpha[0]) * identity, Y,
                                            stacklevel=6)
        else:  # one system per target
            coefficients = xp.concat([
                solve_psd_device(xp, K + a * identity, Y[:, j:j + 1], stacklevel=6)
                for j, a in enumerate(alpha.tolist())], axis=1)
        if sample_weight is not None:
            coefficients *= xp.sqrt(sample_weight)[:, None]
        return coefficients

    # ------------------------------------------------------------------ fitted state
    def _set_exact_state(self, X: Any, coef: Any, ravel: bool) -> None:
        self.__dict__.pop("center_indices_", None)  # a refit keeps no Nyström centres
        self.solver_ = "exact"
        self.X_fit_ = X
        self._columns = kernel_columns(self.kernel_, X, _row_indices(X))
        self.dual_coef_ = _ravelled(coef, ravel)
        self.n_iter_ = 1  # one direct solve
        self.fit_info_ = {"solver": "exact", "path": "direct", "iterations": 1,
                          "converged": True}

    def _nystrom_block_dtype(self, X: Any, n_centres: int) -> Any:
        """The dtype of the cached kernel blocks of a Nyström fit (``None``: X's)."""
        return None

    def _solve_nystrom(self, system: Any, kernel: Any, centres: Any, indices: Any,
                       alpha: float, ravel: bool, *, total_weight: float, n_features_in: int,
                       feature_names_in: Any, progress: FitProgress) -> None:
        r"""Solve the Nyström normal equations over ``system`` and set the fitted state.

        The one place a Nyström fit ends, in memory and on Dask: ``system`` gives
        ``rhs`` (:math:`K_{nM}^\top W Y`), ``gram_times(V)`` and ``info``; ``centres`` are
        the centres' rows (``indices`` their positions, or None).
        """
        start = time.perf_counter()
        columns = kernel_columns(kernel, centres, indices)
        K_MM = centre_gram(kernel, centres, columns)
        warn_if_degenerate(K_MM, centres, kernel, owner=type(self).__name__,
                           what="centres", stacklevel=6)
        progress.start_iterations(self.max_iter, self.tol)
        # K_MM is a fresh array: the preconditioner factorises it in place (one M × M buffer).
        result = falkon_solve(system.gram_times, K_MM, alpha, rhs=system.rhs,
                              total_weight=total_weight, max_iter=self.max_iter, tol=self.tol,
                              overwrite=True, callback=progress.iteration,
                              attainable_residual=getattr(system, "attainable_residual", 0.0),
                              widen=getattr(system, "widen", None))
        progress.finish(result.iterations, result.converged)
        self.kernel_ = kernel
        self.__dict__.pop("center_indices_", None)
        if indices is not None:
            self.center_indices_ = indices
        # A precomputed kernel reaches the centres by their row indices (its columns).
        self.X_fit_ = self._columns = columns
        self.solver_ = "nystrom"
        self.dual_coef_ = _ravelled(result.coef, ravel)
        self.n_iter_ = result.iterations
        self.n_features_in_ = n_features_in
        self.__dict__.pop("feature_names_in_", None)
        if feature_names_in is not None:
            self.feature_names_in_ = feature_names_in
        self.fit_info_ = {"solver": "nystrom", **system.info, "iterations": result.iterations,
                          "converged": result.converged, "jitter": result.jitter,
                          "preconditioner_s": result.preconditioner_s,
                          "solve_s": time.perf_counter() - start}

    # ------------------------------------------------------------------ predict
    def _decision(self, X: Any, method: str) -> Any:
        """:math:`k(X, \\text{centres})\\,c` in row blocks (float64 accumulation)."""
        check_is_fitted(self)
        X = validate_input(self, X, reset=False)
        check_fitted_placement(self, X, self.dual_coef_, method)
        return self.kernel_.evaluate_matmul(X, self._columns, self.dual_coef_,
                                            accumulate=np.float64,
                                            name=f"{type(self).__name__}.{method}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._pairwise
        tags.input_tags.pairwise = self._pairwise
        tags.array_api_support = True
        return tags


def _ravelled(coef: Any, ravel: bool) -> Any:
    if not ravel:
        return coef
    return array_api_compat.array_namespace(coef).reshape(coef, (-1,))


def _row_indices(X: Any) -> Any:
    """0 … n−1, on X's device for a device array (a precomputed kernel's columns)."""
    if is_device_array(X):
        xp, device = namespace_and_device(X)
        return xp.arange(X.shape[0], device=device)
    return np.arange(X.shape[0])
