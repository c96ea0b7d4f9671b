r"""The Nyström feature map."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._base import FeatureMap
from kernelmaps.kernels import KERNELS, IndefiniteKernelWarning, Kernel, get_kernel

__all__ = ["Nystroem"]

#: Eigenvalues are floored here before the inverse square root, as in scikit-learn.
_EIGEN_FLOOR = 1e-12


def inverse_sqrt_psd(K: np.ndarray, *, name: str = "Nystroem") -> np.ndarray:
    r"""Symmetric inverse square root :math:`K^{-1/2}` of a landmark kernel matrix.

    Computed from the eigendecomposition of the symmetrised matrix (``eigh`` is several
    times faster than the SVD scikit-learn uses and gives the same matrix for a PSD
    ``K``). Eigenvalues are handled as follows:

    * :math:`\lambda > \tau` (with :math:`\tau = m\,\epsilon\,\lambda_\max`, the rounding
      level): inverted as :math:`\max(\lambda, 10^{-12})^{-1/2}`, like scikit-learn;
    * :math:`|\lambda| \le \tau`: numerically zero (duplicate landmarks, low-rank
      kernels) — the direction is dropped instead of being amplified by :math:`10^{6}`;
    * :math:`\lambda < -\tau`: the matrix is indefinite — the direction is dropped
      (projection onto the PSD cone) and an :class:`IndefiniteKernelWarning` reports the
      negative eigenvalue mass. scikit-learn silently uses :math:`|\lambda|` instead.
    """
    K64 = np.asarray(K, dtype=np.float64)
    K64 = 0.5 * (K64 + K64.T)
    eigenvalues, eigenvectors = scipy.linalg.eigh(K64, check_finite=False)
    m = K64.shape[0]
    largest = max(float(np.abs(eigenvalues).max(initial=0.0)), np.finfo(np.float64).tiny)
    tol = m * np.finfo(np.float64).eps * largest
    negative = eigenvalues < -tol
    if negative.any():
        mass = float(-eigenvalues[negative].sum() / np.abs(eigenvalues).sum())
        warnings.warn(
            f"{name}: the landmark kernel matrix is not positive semi-definite: "
            f"{int(negative.sum())} negative eigenvalue(s), the smallest "
            f"{eigenvalues.min():.3g}, holding {mass:.2%} of the eigenvalue mass "
            "(sum of |eigenvalues|). Their directions are dropped (projection onto the PSD "
            "cone). The kernel is not a Mercer kernel on this data; prefer a PSD kernel.",
            IndefiniteKernelWarning,
            stacklevel=3,
        )
    keep = eigenvalues > tol
    scale = np.zeros_like(eigenvalues)
    scale[keep] = 1.0 / np.sqrt(np.maximum(eigenvalues[keep], _EIGEN_FLOOR))
    return (eigenvectors * scale) @ eigenvectors.T


class Nystroem(FeatureMap):
    r"""Approximate a kernel map using a subset of the training data (Nyström method).

    With landmarks :math:`c_1,\dots,c_m` drawn uniformly from the training rows and
    :math:`K_{mm} = [k(c_i, c_j)]`, the features are

    .. math::

        z(x) = K_{mm}^{-1/2}\,[k(c_1, x), \dots, k(c_m, x)]^\top,
        \qquad z(x)^\top z(y) = k_m(x)^\top K_{mm}^{-1} k_m(y) \approx k(x, y),

    exact on the span of the landmarks (Williams & Seeger, 2001).

    A drop-in replacement for :class:`sklearn.kernel_approximation.Nystroem`: same
    parameters, fitted attributes, landmark draws and numbers (for a well-conditioned
    landmark matrix). Beyond scikit-learn:

    * ``kernel`` also accepts a :class:`kernelmaps.kernels.Kernel` object;
    * ``kernel="precomputed"`` works with ``n_components < n_samples``: ``fit`` takes the
      square training kernel matrix, ``transform`` takes the kernel between new points and
      the training points, shape ``(n_new, n_train)``, and only the landmark columns are used;
    * an indefinite landmark matrix gives an :class:`~kernelmaps.kernels.IndefiniteKernelWarning`
      naming the negative eigenvalue mass, and those directions are dropped rather than
      silently replaced by absolute values; numerically null directions (duplicate
      landmarks) are dropped instead of being amplified;
    * transform evaluates the kernel in cache-sized row blocks on threads and preserves
      float32.

    Parameters
    ----------
    kernel : str, Kernel or callable, default='rbf'
        A name from ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS``, a
        :class:`~kernelmaps.kernels.Kernel`, ``'precomputed'``, or a callable
        ``k(x, y, **kernel_params) -> float`` evaluated on pairs of rows.
    gamma : float, default=None
        Parameter of the rbf, laplacian, polynomial, sigmoid and chi2 kernels.
    coef0 : float, default=None
        Zero coefficient of the polynomial and sigmoid kernels.
    degree : float, default=None
        Degree of the polynomial kernel.
    kernel_params : dict, default=None
        Extra parameters for the kernel (for a callable kernel: passed to it).
    n_components : int, default=100
        Number of landmarks m (clamped to ``n_samples`` with a warning).
    random_state : int, RandomState instance or None, default=None
        Controls the uniform sampling of landmarks.
    n_jobs : int, default=None
        Threads used by transform (``None``: the :func:`kernelmaps.set_config` setting,
        ``-1``: all cores); also passed to scikit-learn for callable kernels.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The landmarks (for ``'precomputed'``: their rows of the training kernel matrix).
    component_indices_ : ndarray of shape (n_components,)
        Indices of the landmarks in the training set.
    normalization_ : ndarray of shape (n_components, n_components)
        :math:`K_{mm}^{-1/2}`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel
    machines", NeurIPS 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import Nystroem
    >>> X = np.random.RandomState(0).rand(20, 3)
    >>> Z = Nystroem(n_components=20, random_state=0).fit_transform(X)
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> bool(np.allclose(Z @ Z.T, rbf_kernel(X)))
    True
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS) | {"precomputed"}), callable, Kernel],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "coef0": [Interval(Real, None, None, closed="neither"), None],
        "degree": [Interval(Real, 1, None, closed="left"), None],
        "kernel_params": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }
    _n_jobs_attr = "n_jobs"

    def __init__(self, kernel: Any = "rbf", *, gamma: float | None = None,
                 coef0: float | None = None, degree: float | None = None,
                 kernel_params: dict | None = None, n_components: int = 100,
                 random_state: Any = None, n_jobs: int | None = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- kernel resolution --------------------------------------------------------
    def _kernel_params(self) -> dict:
        params = dict(self.kernel_params or {})
        named = isinstance(self.kernel, str) and self.kernel != "precomputed"
        if named:
            accepted = KERNELS[self.kernel].param_names
            for name in ("gamma", "coef0", "degree"):
                if name in accepted and getattr(self, name) is not None:
                    params[name] = getattr(self, name)
            # scikit-learn filters kernel_params down to what the kernel accepts.
            return {k: v for k, v in params.items() if k in accepted}
        if self.gamma is not None or self.coef0 is not None or self.degree is not None:
            raise ValueError(
                "Don't pass gamma, coef0 or degree to Nystroem if using a callable or "
                "precomputed kernel (or a Kernel object): give the kernel's parameters "
                "to the kernel itself (kernel_params for a callable)."
            )
        return params

    def _resolved_kernel(self) -> Kernel | None:
        """The Kernel object, or None for callables and 'precomputed'."""
        if isinstance(self.kernel, Kernel):
            self._kernel_params()  # rejects stray gamma/coef0/degree
            return self.kernel
        params = self._kernel_params()  # also rejects stray gamma/coef0/degree
        if isinstance(self.kernel, str) and self.kernel != "precomputed":
            return get_kernel(self.kernel, **params)
        return None

    def _evaluate(self, X: Any, Y: Any | None) -> np.ndarray:
        """k(X, Y) (``Y=None``: symmetric k(X, X)) for validated inputs."""
        kernel = self._resolved_kernel()
        if kernel is not None:
            if Y is None:
                return kernel(X)
            return kernel.evaluate(X, Y)
        # A user callable: scikit-learn's pairwise driver calls it on pairs of rows (once
        # per unordered pair when symmetric).
        return pairwise_kernels(X, Y, metric=self.kernel, filter_params=True,
                                n_jobs=self.n_jobs, **self._kernel_params())

    # -- fit / transform ----------------------------------------------------------
    def _fit(self, X, random_state):
        precomputed = isinstance(self.kernel, str) and self.kernel == "precomputed"
        n_samples = X.shape[0]
        self._resolved_kernel()  # validate kernel parameters before anything else
        if precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(
                "With kernel='precomputed', fit expects the square kernel matrix of the "
                f"training data, shape (n_samples, n_samples); got shape {X.shape}."
            )
        if self.n_components > n_samples:
            n_components = n_samples
            warnings.warn(
                "n_components > n_samples. This is not possible.\n"
                "n_components was set to n_samples, which results in inefficient evaluation "
                "of the full kernel.",
                stacklevel=3,
            )
        else:
            n_components = self.n_components
        # Same draw as scikit-learn: one permutation, the first m indices are landmarks.
        indices = random_state.permutation(n_samples)[:n_components]
        basis = X[indices]
        if precomputed:
            basis_kernel = basis[:, indices]
            basis_kernel = basis_kernel.toarray() if sp.issparse(basis_kernel) else basis_kernel
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                basis_kernel = self._evaluate(basis, None)
        basis_kernel = np.asarray(basis_kernel)
        if not np.isfinite(basis_kernel).all():
            raise ValueError(
                f"The kernel {self.kernel!r} produced non-finite values on the landmarks "
                "(e.g. a polynomial kernel with a non-integer degree on negative inner "
                "products, or inputs so large they overflow). Check the kernel parameters or "
                "rescale the data."
            )
        normalization = inverse_sqrt_psd(basis_kernel)
        self.normalization_ = normalization.astype(
            np.float32 if X.dtype == np.float32 else np.float64, copy=False)
        self.components_ = basis
        self.component_indices_ = indices
        return n_components

    def _block_temp_bytes_per_row(self, n_features):
        return 2 * self.normalization_.shape[0] * 8

    def _transform_block(self, X_block, out):
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            embedded = X_block[:, self.component_indices_]
            embedded = embedded.toarray() if sp.issparse(embedded) else embedded
        else:
            embedded = self._evaluate(X_block, self.components_)
        np.matmul(embedded, self.normalization_.T, out=out)
