r"""The Nyström feature map: landmarks (uniform, k-means, leverage, Rényi, given) and bases."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from kernelmaps._array_api import (
    is_device_array,
    matmul,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps._engine import FLOAT_DTYPES, scratch_buffer
from kernelmaps._linalg import INVERSE_SQRT_BASES, inverse_sqrt_psd
from kernelmaps.kernels import (
    IndefiniteKernelWarning,
    Kernel,
    KernelNameOptions,
    gamma_constraints,
    resolve_kernel,
)
from kernelmaps.kernels.degenerate import warn_if_degenerate
from kernelmaps.kernels.interface import result_dtype
from kernelmaps.landmarks import LANDMARK_STRATEGIES, select_landmarks
from kernelmaps.maps._base import FeatureMap
from kernelmaps.maps._preimage import (
    fit_preimage_map,
    needs_fit_inverse_transform,
    preimages,
)

__all__ = ["Nystroem"]

#: The two feature bases of the Nyström map (see :class:`Nystroem`).
BASES = INVERSE_SQRT_BASES

class Nystroem(FeatureMap):
    r"""Approximate a kernel map using a subset of the training data (Nyström method).

    With landmarks :math:`c_1,\dots,c_m`, :math:`K_{mm} = [k(c_i, c_j)] = U\Lambda U^\top`
    and :math:`k_m(x) = [k(c_1, x), \dots, k(c_m, x)]^\top`, the features are

    .. math::

        z(x) = K_{mm}^{-1/2}\,k_m(x) \quad (\texttt{basis='symmetric'}), \qquad
        \hat\Phi_i(x) = \lambda_i^{-1/2} \sum_{t=1}^m u_{ti}\, k(c_t, x)
        \quad (\texttt{basis='eigen'}),

    and in both bases :math:`z(x)^\top z(y) = k_m(x)^\top K_{mm}^{+} k_m(y) \approx k(x, y)`,
    exact on the span of the landmarks (Williams & Seeger, 2001). The eigen basis is the
    Nyström approximation of the kernel's eigenfunctions used by fixed-size kernel models
    (De Brabanter et al., 2010): its features are ordered by decreasing eigenvalue, so its
    first k columns give the best rank-k approximation of :math:`K_{mm}`.

    A drop-in replacement for :class:`sklearn.kernel_approximation.Nystroem`: same
    parameters, fitted attributes, landmark draws and numbers (for a well-conditioned
    landmark matrix) with the default ``landmarks='uniform'``, ``basis='symmetric'``.
    Beyond scikit-learn:

    * ``landmarks`` chooses the landmarks: uniform rows (scikit-learn's draw), k-means
      centres, rows sampled by ridge leverage score, rows maximising the quadratic Rényi
      entropy, or points you give (see :mod:`kernelmaps.landmarks`);
    * ``basis='eigen'`` gives the eigen-feature map, truncated to the numerical rank
      (``eigen_tol``), so ``n_features_out_`` may be smaller than ``n_components``;
    * ``kernel`` also accepts a :class:`kernelmaps.kernels.Kernel` object;
    * ``kernel="precomputed"`` works with ``n_components < n_samples``: ``fit`` takes the
      square training kernel matrix, ``transform`` takes the kernel between new points and
      the training points, shape ``(n_new, n_train)``, and only the landmark columns are used;
    * an indefinite landmark matrix gives an :class:`~kernelmaps.kernels.IndefiniteKernelWarning`
      naming the negative eigenvalue mass, and those directions are dropped rather than
      silently replaced by absolute values; numerically null directions (duplicate
      landmarks) are dropped instead of being amplified;
    * transform evaluates the kernel in cache-sized row blocks on threads and preserves
      float32;
    * ``fit_inverse_transform=True`` learns pre-images, as
      :class:`~sklearn.decomposition.KernelPCA` does, so that ``make_pipeline(Nystroem(...,
      fit_inverse_transform=True), PCA(k))`` is kernel PCA with ``inverse_transform`` at
      Nyström's cost (see :meth:`inverse_transform`).

    Parameters
    ----------
    kernel : str, Kernel or callable, default='rbf'
        A name from ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS``, a
        :class:`~kernelmaps.kernels.Kernel`, ``'precomputed'``, or a callable
        ``k(x, y, **kernel_params) -> float`` evaluated on pairs of rows.
    gamma : 'scale', 'auto', float or None, default=None
        Parameter of the rbf, laplacian, polynomial, sigmoid and chi2 kernels; ``None``
        is the kernel's default (:math:`1/d`; chi2: 1), as in scikit-learn.
        ``'scale'``: :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the variance over all
        entries of the training X (sparse X: :math:`\overline{X^2}-\bar X^2`; 1 if it
        is 0), :class:`sklearn.svm.SVC`'s definition, resolved once in ``fit`` into
        ``kernel_``; ``'auto'``: :math:`1/d`.
    coef0 : float, default=None
        Zero coefficient of the polynomial and sigmoid kernels.
    degree : float, default=None
        Degree of the polynomial kernel.
    kernel_params : dict, default=None
        Extra parameters for the kernel (for a callable kernel: passed to it).
    n_components : int, default=100
        Number of landmarks m for the sampling strategies (clamped to ``n_samples`` with a
        warning). Ignored when ``landmarks`` is an array.
    random_state : int, RandomState instance or None, default=None
        Controls the landmark selection (every strategy is random).
    n_jobs : int, default=None
        Threads used by transform (``None``: the :func:`kernelmaps.set_config` setting,
        ``-1``: all cores); also passed to scikit-learn for callable kernels.
    landmarks : {'uniform', 'kmeans', 'leverage', 'renyi'} or array-like, default='uniform'
        How the landmarks are chosen (an array: of shape (n_landmarks, n_features)):

        * ``'uniform'``: ``n_components`` training rows drawn uniformly without
          replacement — exactly scikit-learn's draw. O(n).
        * ``'kmeans'``: k-means centres (k-means++ seeding, Lloyd iterations; Zhang et al.,
          2008). Not rows of X. O(n·m·d) per iteration. Needs coordinates, so not with
          ``kernel='precomputed'``.
        * ``'leverage'``: rows sampled by ridge leverage score, recursive RLS-Nyström
          (Musco & Musco, 2017). O(n·m·(d + m)). Needs a PSD kernel.
        * ``'renyi'``: rows maximising the quadratic Rényi entropy (fixed-size kernel
          models; De Brabanter et al., 2010). O(n·m·d) per pass.
        * an array: these points are the landmarks (``n_components`` is ignored); they
          must have X's number of features and be finite. Not with ``kernel='precomputed'``.

        See :mod:`kernelmaps.landmarks` for the algorithms.
    landmark_params : dict, default=None
        Options of the strategy's function in :mod:`kernelmaps.landmarks`:
        ``'kmeans'``: ``minibatch`` (bool), ``max_iter`` (int);
        ``'leverage'``: ``accelerated`` (bool); ``'renyi'``: ``n_passes`` (int).
    basis : {'symmetric', 'eigen'}, default='symmetric'
        ``'symmetric'``: :math:`K_{mm}^{-1/2} k_m(x)`, ``n_components`` features (as
        scikit-learn). ``'eigen'``: the eigen-feature map above, one feature per retained
        eigenvalue, largest first.
    eigen_tol : float in [0, 1), default=None
        Eigenvalues of :math:`K_{mm}` at or below ``eigen_tol`` × the largest are treated
        as zero: their directions are dropped (``basis='eigen'``: their features are
        removed; ``'symmetric'``: they contribute nothing, the width stays m). ``None``:
        the rounding level :math:`m\,\epsilon\,\lambda_\max` (numpy's ``matrix_rank``
        tolerance), which keeps scikit-learn's numbers for a well-conditioned matrix.
    fit_inverse_transform : bool, default=False
        Learn the map back from features to inputs at ``fit`` (kernel ridge regression,
        Bakır, Weston & Schölkopf, 2004; as :class:`~sklearn.decomposition.KernelPCA`), which
        :meth:`inverse_transform` applies. Not with ``kernel='precomputed'`` nor the
        histogram kernels (chi2), which are undefined on the (signed) features.
    alpha : float, default=1.0
        Ridge of the map back (``fit_inverse_transform=True`` only): as
        :class:`~sklearn.decomposition.KernelPCA`'s ``alpha``, and equal to it when every
        training row is a landmark.
    inverse_fit_rows : {'all', 'landmarks'}, default='all'
        The targets of the map back (``fit_inverse_transform=True`` only). ``'all'``:
        every fit row, with the m landmarks as the basis of the regression (subset of
        regressors; O(n·m·(d + m)) time, O(m·(m + d)) memory, in row blocks); the same
        ``alpha`` then behaves as KernelPCA's at every m. ``'landmarks'``: the m landmarks
        only (O(m³), independent of n); a smaller ``alpha`` fits it best.

    Attributes
    ----------
    components_ : ndarray of shape (n_landmarks, n_features)
        The landmarks used (for ``'precomputed'``: their rows of the training kernel
        matrix). k-means centres and given points are not training rows.
    component_indices_ : ndarray of shape (n_landmarks,)
        Indices of the landmarks in the training set. Set only when the landmarks are
        training rows (``'uniform'``, ``'leverage'``, ``'renyi'``); absent (the attribute
        does not exist) for ``'kmeans'`` and for given points.
    normalization_ : ndarray of shape (n_features_out_, n_landmarks)
        The matrix applied to :math:`k_m(x)`: :math:`K_{mm}^{-1/2}` (symmetric) or
        :math:`\Lambda_r^{-1/2}U_r^\top` (eigen).
    n_features_out_ : int
        Number of output features: ``n_landmarks`` (symmetric) or the retained rank
        (eigen).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit. Defined only when X has feature names that are
        all strings.
    dual_coef_ : ndarray of shape (n_landmarks, n_features_in_)
        Coefficients of the map back (:math:`B` in :meth:`inverse_transform`). Set only
        with ``fit_inverse_transform=True``.
    X_transformed_fit_ : ndarray of shape (n_landmarks, n_features_out_)
        The features of the landmarks, the basis of the map back. Set only with
        ``fit_inverse_transform=True``.

    See Also
    --------
    kernelmaps.landmarks : The landmark selection functions.
    kernelmaps.models.fixed_size.make_fixed_size_model : Landmarks → eigen features →
        linear model in one pipeline.

    References
    ----------
    C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel
    machines", NeurIPS 2001.
    K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nyström low-rank approximation and
    error analysis", ICML 2008.
    C. Musco and C. Musco, "Recursive sampling for the Nyström method", NeurIPS 2017.
    K. De Brabanter, J. De Brabanter, J. A. K. Suykens and B. De Moor, "Optimized
    fixed-size kernel models for large data sets", Computational Statistics & Data
    Analysis 54(6), 2010.
    G. H. Bakır, J. Weston and B. Schölkopf, "Learning to find pre-images", NeurIPS 2003
    (NIPS 16, 2004).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import Nystroem
    >>> X = np.random.RandomState(0).rand(20, 3)
    >>> Z = Nystroem(n_components=20, random_state=0).fit_transform(X)
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> bool(np.allclose(Z @ Z.T, rbf_kernel(X)))
    True
    >>> ny = Nystroem(landmarks="renyi", basis="eigen", n_components=10, random_state=0)
    >>> ny.fit_transform(X).shape
    (20, 10)
    """

    _parameter_constraints: dict = {
        "kernel": [KernelNameOptions(precomputed=True), callable, Kernel],
        "gamma": gamma_constraints(allow_zero=True),
        "coef0": [Interval(Real, None, None, closed="neither"), None],
        "degree": [Interval(Real, 1, None, closed="left"), None],
        "kernel_params": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "landmarks": [StrOptions(set(LANDMARK_STRATEGIES)), "array-like", "sparse matrix"],
        "landmark_params": [dict, None],
        "basis": [StrOptions(set(BASES))],
        "eigen_tol": [Interval(Real, 0, 1, closed="left"), None],
        "fit_inverse_transform": ["boolean"],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "inverse_fit_rows": [StrOptions({"landmarks", "all"})],
    }
    _n_jobs_attr = "n_jobs"

    def __init__(self, kernel: Any = "rbf", *, gamma: float | str | None = None,
                 coef0: float | None = None, degree: float | None = None,
                 kernel_params: dict | None = None, n_components: int = 100,
                 random_state: Any = None, n_jobs: int | None = None,
                 landmarks: str | Any = "uniform", landmark_params: dict | None = None,
                 basis: str = "symmetric", eigen_tol: float | None = None,
                 fit_inverse_transform: bool = False, alpha: float = 1.0,
                 inverse_fit_rows: str = "all") -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.landmarks = landmarks
        self.landmark_params = landmark_params
        self.basis = basis
        self.eigen_tol = eigen_tol
        self.fit_inverse_transform = fit_inverse_transform
        self.alpha = alpha
        self.inverse_fit_rows = inverse_fit_rows

    # -- kernel resolution --------------------------------------------------------
    def _is_precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _resolve_kernel(self) -> Kernel:
        return resolve_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                              coef0=self.coef0, kernel_params=self.kernel_params,
                              n_jobs=self.n_jobs, strict=True, owner="Nystroem")

    def _symmetric_kernel(self, basis: Any) -> np.ndarray:
        # k(C, C) with the exact diagonal of distance kernels; a non-finite value is reported
        # by fit with the kernel's name, so the engine's generic check is not wanted here.
        try:
            return self.kernel_(basis)
        except ValueError as error:
            if "non-finite" not in str(error):
                raise
            return None

    # -- landmarks ----------------------------------------------------------------
    def _choose_landmarks(self, X: Any, random_state: np.random.RandomState
                          ) -> tuple[Any, np.ndarray | None]:
        """(landmark points, their row indices in X or None)."""
        if not isinstance(self.landmarks, str):
            if self.landmark_params:
                raise ValueError(
                    "landmark_params configures a landmark strategy, but landmarks is an "
                    "array of points; drop landmark_params or pass a strategy name."
                )
            return self._given_landmarks(X), None
        n_samples = X.shape[0]
        if self.n_components > n_samples:
            n_components = n_samples
            warnings.warn(
                "n_components > n_samples. This is not possible.\n"
                "n_components was set to n_samples, which results in inefficient evaluation "
                "of the full kernel.",
                stacklevel=4,
            )
        else:
            n_components = self.n_components
        return select_landmarks(self.landmarks, X, self.kernel_, n_components,
                                random_state=random_state, options=self.landmark_params)

    def _given_landmarks(self, X: Any) -> Any:
        """Validate landmark points given by the user; cast them to X's dtype."""
        if self._is_precomputed():
            raise ValueError(
                "landmarks given as points need a kernel to evaluate on them, but "
                "kernel='precomputed' gives only the training kernel matrix. Pass a kernel, "
                "or a strategy name ('uniform', 'leverage', 'renyi') to pick training rows."
            )
        landmarks = to_numpy(self.landmarks) if is_device_array(self.landmarks) \
            else self.landmarks  # validated on the host (small), then moved to X's device
        points = check_array(landmarks, accept_sparse="csr", dtype=list(FLOAT_DTYPES),
                             ensure_all_finite=False, ensure_min_samples=0,
                             input_name="landmarks")
        if points.shape[0] == 0:
            raise ValueError("landmarks is an empty array; give at least one point, or a "
                             "strategy name such as 'uniform'.")
        if points.shape[1] != X.shape[1]:
            raise ValueError(
                f"landmarks has {points.shape[1]} features but X has {X.shape[1]}: give the "
                f"landmark points in X's feature space, shape (n_landmarks, {X.shape[1]})."
            )
        values = points.data if sp.issparse(points) else points
        if not np.isfinite(values).all():
            raise ValueError(
                "landmarks contains NaN or infinity; every landmark must be a finite point. "
                "Remove or impute those rows."
            )
        kernel = self.kernel_
        if kernel.requires_non_negative and values.size and values.min() < 0:
            raise ValueError(
                f"landmarks contains negative values, but the {kernel.name} kernel is "
                "defined for non-negative data (histograms); give non-negative points."
            )
        if is_device_array(X):
            xp, device = namespace_and_device(X)
            return on_device(points.toarray() if sp.issparse(points) else points, xp,
                             device, X.dtype)
        return points.astype(X.dtype, copy=False)

    # -- fit / transform ----------------------------------------------------------
    def _fit(self, X, random_state):
        precomputed = self._is_precomputed()
        # Validates the kernel's parameters first; gamma="scale" on all of X, once.
        self.kernel_ = self._resolve_kernel().resolve(X)
        if precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(
                "With kernel='precomputed', fit expects the square kernel matrix of the "
                f"training data, shape (n_samples, n_samples); got shape {X.shape}."
            )
        basis, indices = self._choose_landmarks(X, random_state)
        with np.errstate(over="ignore", invalid="ignore"):
            # Precomputed: the landmarks' rows of K, against the landmarks' own columns.
            basis_kernel = self.kernel_.evaluate(basis, indices) if precomputed \
                else self._symmetric_kernel(basis)
        if basis_kernel is None or not _all_finite(basis_kernel):
            raise ValueError(
                f"The kernel {self.kernel!r} produced non-finite values on the landmarks "
                "(e.g. a polynomial kernel with a non-integer degree on negative inner "
                "products, or inputs so large they overflow). Check the kernel parameters or "
                "rescale the data."
            )
        if not precomputed:
            warn_if_degenerate(basis_kernel, basis, self.kernel_, owner="Nystroem",
                               what="landmarks", stacklevel=6)
        # The pseudo-inverse root (shift 0): null directions dropped, negative ones warned.
        normalization = inverse_sqrt_psd(basis_kernel, basis=self.basis,
                                         eigen_tol=self.eigen_tol, name="Nystroem",
                                         what="landmark kernel matrix",
                                         warning=IndefiniteKernelWarning)
        if normalization.shape[0] == 0:
            raise ValueError(
                "The landmark kernel matrix has no eigenvalue above eigen_tol × the largest "
                "(it is numerically zero), so basis='eigen' has no feature. Check the kernel "
                "and its parameters, or lower eigen_tol."
            )
        if is_device_array(X):
            self.normalization_ = namespace_and_device(X)[0].astype(normalization, X.dtype)
        else:
            self.normalization_ = normalization.astype(
                np.float32 if X.dtype == np.float32 else np.float64, copy=False)
        self.components_ = basis
        if indices is None:
            # k-means centres and given points are not training rows: no stale indices
            # from an earlier fit may survive.
            self.__dict__.pop("component_indices_", None)
        else:
            self.component_indices_ = indices
        self.n_features_out_ = int(normalization.shape[0])
        if self.fit_inverse_transform:
            self._fit_inverse(X)
        else:  # a refit without the inverse leaves no stale pre-image map
            for name in ("dual_coef_", "X_transformed_fit_"):
                self.__dict__.pop(name, None)
        return self.n_features_out_

    # -- pre-images ---------------------------------------------------------------
    def _fit_inverse(self, X: Any) -> None:
        r"""Learn the pre-image map z ↦ x by kernel ridge regression (Bakır et al., 2004)."""
        if self._is_precomputed():
            raise ValueError(
                "fit_inverse_transform=True learns a map back to the input points, but "
                "kernel='precomputed' gives only the kernel matrix, not the points. Pass the "
                "kernel itself (as KernelPCA also requires), or set fit_inverse_transform=False."
            )
        self.dual_coef_, self.X_transformed_fit_ = fit_preimage_map(
            self.kernel_, self.components_, self.normalization_, X, alpha=self.alpha,
            inverse_fit_rows=self.inverse_fit_rows)

    @needs_fit_inverse_transform
    def inverse_transform(self, X: Any) -> np.ndarray:
        r"""Map features back to the input space: the learned pre-images.

        A feature vector rarely has an exact pre-image (a point x with z(x) equal to it,
        above all after a projection such as :class:`~sklearn.decomposition.PCA`'s), so
        the map back is learned, as in
        :class:`~sklearn.decomposition.KernelPCA` with ``fit_inverse_transform=True``
        (Bakır, Weston & Schölkopf, 2004): kernel ridge regression from the features of
        the landmarks to the landmarks,

        .. math::

            \hat x(z) = \sum_{i=1}^m \beta_i\, k(z, z(c_i)), \qquad
            B = (G + \alpha I)^{-1} C, \quad G_{ij} = k(z(c_i), z(c_j)),

        with the map's kernel (``kernel_``) evaluated on feature vectors and
        :math:`C` the landmarks (``components_``). With ``inverse_fit_rows='all'`` every
        fit row is a target and the landmarks stay the basis (subset of regressors):
        :math:`B = (K_{nm}^\top K_{nm} + \alpha G)^{-1} K_{nm}^\top X`,
        :math:`K_{nm} = [k(z(x_j), z(c_i))]`. ``B`` is ``dual_coef_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_out_)
            Features, as returned by :meth:`transform` (or mapped back into the feature
            space, e.g. by ``PCA.inverse_transform`` in a pipeline).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features_in_)
            The pre-images: float32 if ``X`` is float32, else float64 (an array of X's
            namespace, on its device, for an array-API ``X``).

        Raises
        ------
        NotFittedError
            Already when the method is looked up, with ``fit_inverse_transform=False``
            (the default, as scikit-learn's Nystroem, which has no ``inverse_transform``:
            ``hasattr`` is then False, so a pipeline of it has none either); when called,
            if the map was not fitted with ``fit_inverse_transform=True``.

        References
        ----------
        G. H. Bakır, J. Weston and B. Schölkopf, "Learning to find pre-images", NeurIPS
        2003 (NIPS 16, 2004).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.decomposition import PCA
        >>> from sklearn.pipeline import make_pipeline
        >>> from kernelmaps import Nystroem
        >>> X = np.random.RandomState(0).rand(200, 3)
        >>> kpca = make_pipeline(
        ...     Nystroem(gamma=1.0, n_components=50, fit_inverse_transform=True,
        ...              alpha=1e-3, random_state=0),
        ...     PCA(n_components=3)).fit(X)
        >>> X_back = kpca.inverse_transform(kpca.transform(X))
        >>> X_back.shape
        (200, 3)
        >>> bool(np.mean((X_back - X) ** 2) < 0.1 * np.var(X))
        True
        """
        check_is_fitted(self)
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError(
                "This Nystroem was fitted with fit_inverse_transform=False, so it has no "
                "pre-image map yet: fit it again (fit_inverse_transform=True is set now)."
            )
        self._check_same_placement(X)
        return preimages(self.kernel_, self.X_transformed_fit_, self.dual_coef_, X)

    def _block_temp_bytes_per_row(self, n_features):
        return 2 * self.normalization_.shape[1] * 8

    def _block_flops_per_row(self, X):
        # m kernel values (an inner product and about 300 operations of element-wise
        # passes each, for the RBF kernel; precomputed: a copy) and the (m × n_out)
        # normalisation product.
        m, n_out = self.normalization_.shape[1], self.normalization_.shape[0]
        if self._is_precomputed():
            features = 0.0
        else:
            features = X.nnz / max(1, X.shape[0]) if sp.issparse(X) else X.shape[1]
        return float(m * (2 * features + 300) + 2 * m * n_out)

    def _transform_block(self, X_block, out):
        columns = self.component_indices_ if self._is_precomputed() else self.components_
        # Into a reused per-thread buffer: no fresh (b × m) allocation per block.
        embedded = scratch_buffer(
            "nystroem_kernel", (X_block.shape[0], self.normalization_.shape[1]),
            result_dtype(self.kernel_, X_block, self.components_))
        self.kernel_.evaluate_into(X_block, columns, embedded)
        np.matmul(embedded, self.normalization_.T, out=out)

    _device_attributes = ("components_", "normalization_", "dual_coef_", "X_transformed_fit_")

    def _device_parameters(self, xp, device, dtype):
        columns = self.component_indices_ if self._is_precomputed() else self.components_
        return {"columns": on_device(columns, xp, device, dtype),
                "normalization": on_device(self.normalization_, xp, device, dtype)}

    def _transform_block_device(self, xp, params, X_block, out):
        embedded = self.kernel_.evaluate(X_block, params["columns"])
        return matmul(xp, embedded, params["normalization"].T, out=out)


def _all_finite(K: Any) -> bool:
    if is_device_array(K):
        xp, _ = namespace_and_device(K)
        return bool(xp.all(xp.isfinite(K)))
    return bool(np.isfinite(np.asarray(K)).all())
