r"""The one accumulator of ridge's sufficient statistics on explicit features.

Weighted ridge on features :math:`z(x)` with an intercept needs only

.. math::

    G = \sum_b A_b^\top A_b, \qquad A_b = \sqrt{s_b}\,[\,z(X_b),\ 1,\ Y_b\,],

a :math:`(D+1+t)\times(D+1+t)` matrix whose blocks are :math:`Z^\top S Z`,
:math:`Z^\top S\,1`, :math:`\sum s`, :math:`Z^\top S\,Y` and :math:`1^\top S\,Y` (plus the
number of rows seen). It is a sum over rows, so it is an exact merge: the statistics of two
sets of rows add, and rows arriving in any chunking give the same :math:`G` to rounding.
:class:`RidgeStatistics` is that sum; ``FeatureRidge.fit`` (all rows, on threads),
``FeatureRidge.partial_fit`` (one batch per call) and the Dask tree reduction (one per chunk,
added by Dask) are three drivers of it, and :meth:`RidgeStatistics.solve` turns any of them
into the coefficients.

Precision: the features follow the data (float32 features for float32 ``X``, as every map
makes them); the statistics are accumulated in float64 whatever the features' dtype, on the
host — on an array-API device each block's features are made there and copied over.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernelmaps._array_api import is_device_array, to_numpy
from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import rank_update_plan, run_tasks, threads_per_task
from kernelmaps._linalg import mirror_upper_to_lower, solve_psd
from kernelmaps.maps.interface import expect_rows, transform_into

__all__ = ["RidgeStatistics", "Workspace", "Workspaces"]


class Workspace:
    r"""Buffers one thread reuses across the blocks it adds: the block's float64 features
    (rows × D, grown on demand) and the D × D product :math:`Z^\top Z`. A new multi-megabyte
    array per block would be fresh memory from the OS each time (glibc serves it with
    ``mmap``), whose first touch costs page faults on every block."""

    def __init__(self, n_features: int) -> None:
        self.n_features = int(n_features)
        self._features = np.empty((0, self.n_features))
        self._square: np.ndarray | None = None

    def features(self, rows: int) -> np.ndarray:
        """A C-contiguous float64 ``(rows, D)`` buffer (a view of the kept one)."""
        if self._features.shape[0] < rows:
            self._features = np.empty((rows, self.n_features))
        return self._features[:rows]

    def owns(self, Z: Any) -> bool:
        """Whether ``Z`` is (a view of) this workspace's feature buffer."""
        return isinstance(Z, np.ndarray) and Z.base is self._features

    def square(self) -> np.ndarray:
        r"""The ``(D, D)`` float64 buffer of one block's :math:`Z^\top Z`."""
        if self._square is None:
            self._square = np.empty((self.n_features, self.n_features))
        return self._square


class Workspaces:
    """The buffers of :meth:`RidgeStatistics.add`, kept by a caller that adds many batches
    (``partial_fit``): one :class:`Workspace` per thread and the lanes' partial Gram
    matrices, so a batch allocates nothing of the size of D² or of a block. Holds about
    (threads × (block + D²) + lanes × (D+1+t)²) × 8 bytes between batches — what one batch
    needs at its peak anyway."""

    def __init__(self) -> None:
        self._threads: dict[int, Workspace] = {}
        self._lanes: list[np.ndarray] = []
        self._lock = threading.Lock()

    def current(self, n_features: int) -> Workspace:
        """The calling thread's workspace for ``n_features`` features (the engine's pool
        threads live as long as the process, so a kept :class:`Workspaces` finds them
        again at the next batch)."""
        key = threading.get_ident()
        with self._lock:
            workspace = self._threads.get(key)
            if workspace is None or workspace.n_features != n_features:
                workspace = self._threads[key] = Workspace(n_features)
            return workspace

    def lane(self, index: int, size: int) -> np.ndarray:
        """Lane ``index``'s ``(size, size)`` Fortran-ordered Gram, zeroed."""
        while len(self._lanes) <= index:
            self._lanes.append(np.zeros((size, size), order="F"))
        if self._lanes[index].shape != (size, size):
            self._lanes[index] = np.zeros((size, size), order="F")
        else:
            self._lanes[index].fill(0.0)
        return self._lanes[index]


class RidgeStatistics:
    r"""Sufficient statistics of weighted ridge on ``n_features`` features and ``n_targets``
    targets: :math:`G = \sum A_b^\top A_b` with :math:`A_b = \sqrt{s_b}\,[z(X_b), 1, Y_b]`.

    Only the upper triangle of :attr:`gram` is read (it is accumulated by BLAS ``syrk``, half
    the flops of a general product); :meth:`symmetric` gives the full matrix. Two
    accumulators of the same shape add exactly (``a + b``, ``a += b``): that is how threads,
    ``partial_fit`` calls and Dask chunks combine.

    Parameters
    ----------
    n_features : int
        D, the number of features z(x).
    n_targets : int
        t, the number of target columns.

    Attributes
    ----------
    gram : ndarray of shape (D + 1 + t, D + 1 + t), Fortran order, float64
        :math:`G`; only its upper triangle is read (the lower one is not kept up to date).
    n_samples : int
        Rows added so far (the weights' total is ``gram[D, D]``).
    """

    def __init__(self, n_features: int, n_targets: int) -> None:
        self.n_features = int(n_features)
        self.n_targets = int(n_targets)
        size = self.n_features + 1 + self.n_targets
        self.gram = np.zeros((size, size), order="F")
        self.n_samples = 0

    @classmethod
    def from_gram(cls, gram: np.ndarray, n_features: int, n_samples: int = 0
                  ) -> RidgeStatistics:
        """The accumulator holding ``gram`` (upper triangle or full, as a Dask sum gives)."""
        statistics = cls(n_features, gram.shape[0] - 1 - int(n_features))
        statistics.gram[...] = np.triu(gram)
        statistics.n_samples = int(n_samples)
        return statistics

    @classmethod
    def wrap(cls, gram: np.ndarray, n_features: int, n_samples: int) -> RidgeStatistics:
        """The accumulator whose state is ``gram`` (an upper triangle kept elsewhere, e.g. by
        an estimator as plain arrays), without a copy: adding rows updates it."""
        statistics = cls.__new__(cls)
        statistics.n_features = int(n_features)
        statistics.n_targets = gram.shape[0] - 1 - int(n_features)
        statistics.gram = gram
        statistics.n_samples = int(n_samples)
        return statistics

    # ------------------------------------------------------------------ adding rows
    def add_features(self, Z: Any, Y: np.ndarray, root_weights: np.ndarray | None, *,
                     workspace: Workspace | None = None) -> None:
        r"""Add the rows of one block of features: :math:`G \mathrel{+}= A^\top A`.

        :math:`A^\top A` is added block by block of :math:`A = \sqrt{s}\,[Z, B]`,
        :math:`B = [1, Y]`: :math:`Z^\top Z` (BLAS ``syrk``: the floor, D² flops per row),
        :math:`Z^\top B` and :math:`B^\top B` (thin products) — :math:`A` itself is never
        assembled, so the features are not copied.

        Parameters
        ----------
        Z : ndarray, sparse matrix or array-API array of shape (b, D)
            The block's features (any dtype; float64 C-contiguous features are used in
            place — and scaled in place by the weights, when that is the workspace's own
            buffer — anything else is copied into a float64 buffer).
        Y : ndarray of shape (b, t)
            The block's targets.
        root_weights : ndarray of shape (b,) or None
            :math:`\sqrt{s}` of the block's sample weights (``None``: all 1).
        workspace : Workspace, default=None
            Buffers reused across blocks (one per thread); ``None``: fresh ones.
        """
        D, b = self.n_features, Y.shape[0]
        workspace = Workspace(D) if workspace is None else workspace
        if not workspace.owns(Z) and not (isinstance(Z, np.ndarray) and Z.dtype == np.float64
                                          and Z.flags.c_contiguous and root_weights is None):
            own = workspace.features(b)
            np.copyto(own, Z.toarray() if sp.issparse(Z) else to_numpy(Z))
            Z = own
        B = np.empty((b, 1 + self.n_targets), order="F")  # Bᵀ C-contiguous for BᵀZ
        B[:, 0] = 1.0
        B[:, 1:] = Y
        if root_weights is not None:  # (unit weights: the passes are saved)
            Z *= root_weights[:, None]  # the workspace's buffer, never the caller's array
            B *= root_weights[:, None]
        gram = self.gram
        # NumPy's matmul recognises ZᵀZ and calls BLAS syrk (half a product's flops, both
        # triangles written back) into the reused buffer, and it releases the GIL, so the
        # accumulator's threads run their updates side by side (SciPy's syrk wrapper holds
        # the GIL: two threads ran at 1.05× one). Only the upper triangle of G is read.
        # (G is Fortran-ordered: adding the symmetric product's transpose, and (BᵀZ)ᵀ,
        # walks both operands in memory order; BᵀZ, a (1+t) × D product, is one streaming
        # read of Z, where NumPy's ZᵀB ran 3× slower.)
        square = workspace.square()
        np.matmul(Z.T, Z, out=square)
        gram[:D, :D] += square.T
        if B.shape[1] == 2:
            # One target: Zᵀ1 and Zᵀy as vector products. OpenBLAS hands a one-row GEMM to
            # GEMV (one streaming read of Z) but packs Z for a two-row one: BᵀZ took 3.0-3.3
            # ms on a 3,847 × 1,000 block, the column sums and yᵀZ 1.7-1.9 ms (one thread,
            # load 4, medians of 41): 0.017 of the fit's syrk at D = 1,000.
            gram[:D, D] += Z.sum(axis=0) if root_weights is None else B[:, 0] @ Z
            gram[:D, D + 1] += B[:, 1] @ Z
        else:
            gram[:D, D:] += (B.T @ Z).T
        gram[D:, D:] += B.T @ B
        self.n_samples += b

    def add(self, feature_map: Any, X: Any, Y: np.ndarray, weights: np.ndarray, *,
            n_threads: int | None = None, workspaces: Workspaces | None = None,
            on_device: bool | None = None) -> RidgeStatistics:
        """Add the rows of ``X`` (features made block by block with ``feature_map``).

        Row blocks hold about the engine's ``block_bytes`` of features and augmented copy
        (at least :data:`~kernelmaps._engine.RANK_UPDATE_MIN_ROWS` rows: the engine's
        :func:`~kernelmaps._engine.rank_update_plan`). With several threads (the engine's
        setting, or ``n_threads``) the blocks are dealt to lanes fixed by the sizes, each lane a
        task of the engine's threads (:func:`kernelmaps._engine.run_tasks`) that makes its
        blocks' features and folds them into its own partial sums — the transform of one
        block runs while another thread's Gram update runs — and the lanes are added at the
        end in lane order: the exact merge, the same for any thread count. Each thread
        runs BLAS and the map's transform on one thread. Device arrays use one thread.

        Parameters
        ----------
        feature_map : FeatureMap
            The fitted map z.
        X : {ndarray, sparse matrix, array-API array} of shape (n, d)
            The rows.
        Y : ndarray of shape (n, t)
            Their targets (float64, on the host).
        weights : ndarray of shape (n,)
            Their non-negative sample weights.
        n_threads : int, default=None
            Threads; ``None``: :func:`kernelmaps.set_config`'s ``n_threads``.
        workspaces : Workspaces, default=None
            The buffers to reuse (a caller adding many batches keeps one, e.g.
            ``partial_fit``); ``None``: new ones for this call.
        on_device : bool, default=None
            Whether ``X`` is a device array, as the caller's boundary settled it
            (:class:`kernelmaps._array_api.Placement`); ``None``: asked here.

        Returns
        -------
        self : RidgeStatistics
        """
        n, D, P = X.shape[0], self.n_features, self.gram.shape[0]
        if n == 0:
            return self
        # Blocks and lanes are the engine's (a rank-b update of the (D+1+t)² Gram per block).
        plan = rank_update_plan(n, 8 * (2 * P + D), 8 * P, 8 * P * P)
        rows, starts, lanes = plan.rows, plan.starts, plan.lanes
        root = None if np.all(weights == 1.0) else np.sqrt(weights)
        # Block j is folded into lane j mod `lanes`, each lane in block order, and the lanes
        # are added in lane order: the number of lanes depends on the sizes only, so the sums
        # are the same, bitwise, for any number of threads (which take whole lanes).
        if on_device is None:  # not settled by the caller's boundary (Placement.on_device)
            on_device = is_device_array(X)
        threads = 1 if on_device else min(resolve_n_threads(n_threads), lanes)

        def fold(target: RidgeStatistics, start: int, workspace: Workspace) -> None:
            stop = min(start + rows, n)
            X_b = X[start:stop, :]  # (array API: every axis indexed)
            # Features straight into the thread's reused buffer where the map can (a fresh
            # 30 MB block per call is fresh memory: page faults, measured 1-5 µs a row).
            Z = transform_into(feature_map, X_b, workspace.features(stop - start))
            if Z is None:
                Z = feature_map.transform(X_b)
            target.add_features(Z, Y[start:stop], None if root is None else root[start:stop],
                                workspace=workspace)

        if not on_device:  # the whole pass's cosines, for the compiled cosine's "auto"
            expect_rows(feature_map, X)
        pool = Workspaces() if workspaces is None else workspaces
        if lanes == 1:
            workspace = pool.current(D)
            for start in starts:
                fold(self, start, workspace)
            return self
        # Lane 0 is this accumulator itself; lanes 1… are zeroed and filled by the thread
        # that takes them (the engine's threads, see run_tasks), then added to it in lane
        # order, each thread adding a range of columns.
        parts: list[Any] = [self] + [None] * (lanes - 1)
        columns = np.linspace(0, P, threads + 1).astype(int)

        def work(lane: int) -> None:
            workspace = pool.current(D)
            with threads_per_task(1):
                if lane:
                    parts[lane] = RidgeStatistics.wrap(pool.lane(lane, P), D, 0)
                for start in starts[lane::lanes]:
                    fold(parts[lane], start, workspace)

        def merge(index: int) -> None:
            # Column range `index` of G (contiguous: G is Fortran-ordered), lanes in order:
            # every entry is summed in the same order whatever the thread count.
            left, right = columns[index], columns[index + 1]
            for part in parts[1:]:
                self.gram[:, left:right] += part.gram[:, left:right]

        run_tasks(lanes, work, threads)
        run_tasks(threads, merge, threads)
        self.n_samples += sum(part.n_samples for part in parts[1:])
        return self

    # ------------------------------------------------------------------ merging
    def _check_same_shape(self, other: RidgeStatistics) -> None:
        if (other.n_features, other.n_targets) != (self.n_features, self.n_targets):
            raise ValueError(
                f"Cannot add ridge statistics of {other.n_features} features and "
                f"{other.n_targets} targets to statistics of {self.n_features} features and "
                f"{self.n_targets} targets.")

    def __iadd__(self, other: RidgeStatistics) -> RidgeStatistics:
        self._check_same_shape(other)
        self.gram += other.gram
        self.n_samples += other.n_samples
        return self

    def __add__(self, other: RidgeStatistics) -> RidgeStatistics:
        total = RidgeStatistics(self.n_features, self.n_targets)
        total += self
        total += other
        return total

    # ------------------------------------------------------------------ solving
    def symmetric(self) -> np.ndarray:
        """The full symmetric :math:`G` (a new array)."""
        return np.triu(self.gram) + np.triu(self.gram, 1).T

    @property
    def weight_total(self) -> float:
        r""":math:`\sum s`, the total sample weight."""
        return float(self.gram[self.n_features, self.n_features])

    def solve(self, alpha: float, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
        r"""``(coef (D, t), intercept (t,))`` of ridge with penalty ``alpha``.

        With weighted means :math:`\mu = Z^\top s / \sum s` and :math:`\bar y`, the centred
        system :math:`(Z^\top S Z - (\textstyle\sum s)\,\mu\mu^\top + \alpha I)\,w = Z^\top S Y
        - (\textstyle\sum s)\,\mu\bar y^\top`, :math:`b = \bar y - \mu^\top w` is
        scikit-learn's ``Ridge`` (Cholesky; least squares if the matrix is singular, with
        :data:`kernelmaps._linalg.SINGULAR_WARNING`).

        Parameters
        ----------
        alpha : float
            The penalty α ≥ 0 on the weights (not on the intercept).
        fit_intercept : bool
            Centre features and targets with their weighted means and fit ``b``.

        Returns
        -------
        coef : ndarray of shape (D, t)
        intercept : ndarray of shape (t,)
        """
        D = self.n_features
        gram = self.gram  # upper triangle: rows ≤ columns are the sums
        # A C-ordered copy whose upper triangle is mirrored onto the lower one (the same
        # numbers as triu(G) + triu(G, 1)ᵀ: 1.5-1.6 ms instead of 6.7 ms at D = 1,000, one
        # thread — 0.025 of the gate's 10,000-row syrk).
        S = np.array(gram[:D, :D], order="C")
        mirror_upper_to_lower(S)
        ZY = gram[:D, D + 1:].copy()
        total = gram[D, D]
        if fit_intercept:
            mean, target_mean = gram[:D, D] / total, gram[D, D + 1:] / total
            S -= total * np.outer(mean, mean)
            ZY -= total * np.outer(mean, target_mean)
        S.flat[:: D + 1] += alpha
        coef = solve_psd(S, ZY, overwrite=True, stacklevel=4)  # S is this method's copy
        intercept = target_mean - mean @ coef if fit_intercept else np.zeros(ZY.shape[1])
        return coef, intercept
