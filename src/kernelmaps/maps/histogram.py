r"""Feature maps for histogram kernels: additive chi² and skewed chi².

Both are scikit-learn-compatible faces (same parameters, attributes and numbers), built on
the shared row-block engine of the other maps.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from kernelmaps._array_api import host_dtype, min_value
from kernelmaps._engine import collection_handler, is_dask_collection, sparse_container_like
from kernelmaps._fastmath import cos_inplace
from kernelmaps.kernels import resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._projection import (
    DenseProjection,
    cos_features_device,
    cos_features_into,
    project_into,
)

__all__ = ["AdditiveChi2Sampler", "SkewedChi2Sampler"]

#: Sampling intervals chosen by Vedaldi & Zisserman for 1, 2 and 3 steps.
_DEFAULT_INTERVALS = {1: 0.8, 2: 0.5, 3: 0.4}
#: A dense block with at most this fraction of positive values is mapped through its
#: positive values only (gathering and scattering them costs less than mapping the zeros).
_SPARSE_BLOCK_DENSITY = 0.75


def _cosh(x: float) -> float:
    """``math.cosh``, but infinity where it overflows (x > 710; scikit-learn's ``np.cosh``
    gives inf there too, so the factor 1/cosh of those steps is 0)."""
    try:
        return math.cosh(x)
    except OverflowError:
        return math.inf


class AdditiveChi2Sampler(FeatureMap):
    r"""Deterministic feature map of the additive chi² kernel.

    Approximates :math:`k(x, y) = \sum_i 2x_iy_i/(x_i+y_i)` by sampling the Fourier
    transform of the kernel's signature at regular intervals (Vedaldi & Zisserman, 2012).
    With sampling interval :math:`L` and :math:`n` steps, each input feature
    :math:`x > 0` gives :math:`2n-1` outputs

    .. math::

        \sqrt{xL},\quad
        \sqrt{\tfrac{2xL}{\cosh(\pi jL)}}\cos(jL\log x),\quad
        \sqrt{\tfrac{2xL}{\cosh(\pi jL)}}\sin(jL\log x),\qquad j=1,\dots,n-1,

    and :math:`x = 0` gives zeros. Columns are ordered as in scikit-learn: all ``sqrt``
    features, then ``cos1``, ``sin1``, ``cos2``, ...

    A drop-in replacement for :class:`sklearn.kernel_approximation.AdditiveChi2Sampler`
    with the same numbers. Dense input is processed in cache-sized row blocks written into
    one preallocated output (no per-step temporaries of the full size); CSR input gives CSR
    output with the same sparsity pattern per step, computed on the stored values only.

    Parameters
    ----------
    sample_steps : int, default=2
        Number of sampling points :math:`n`.
    sample_interval : float, default=None
        Sampling interval :math:`L`; required if ``sample_steps`` is not 1, 2 or 3 (the
        defaults are 0.8, 0.5 and 0.4).

    Attributes
    ----------
    kernel_ : AdditiveChi2PSDKernel
        The kernel approximated, :math:`\sum_i 2x_iy_i/(x_i+y_i)`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when they are all strings.

    References
    ----------
    A. Vedaldi and A. Zisserman, "Efficient additive kernels via explicit feature maps",
    IEEE TPAMI 34(3), 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import AdditiveChi2Sampler
    >>> X = np.random.RandomState(0).uniform(size=(40, 4))  # non-negative, e.g. histograms
    >>> chi2 = AdditiveChi2Sampler(sample_steps=3).fit(X)
    >>> Z = chi2.transform(X)
    >>> Z.shape  # 2·sample_steps − 1 = 5 features per input feature
    (40, 20)
    >>> K = chi2.kernel_(X)  # Σ_i 2 x_i y_i / (x_i + y_i)
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.1 * K.max())
    True
    """

    _parameter_constraints: dict = {
        "sample_steps": [Interval(Integral, 1, None, closed="left")],
        "sample_interval": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(self, *, sample_steps: int = 2, sample_interval: float | None = None) -> None:
        self.sample_steps = sample_steps
        self.sample_interval = sample_interval

    def _resolved_interval(self) -> float:
        if self.sample_interval is not None:
            return float(self.sample_interval)
        if self.sample_steps not in _DEFAULT_INTERVALS:
            raise ValueError(
                "If sample_steps is not in [1, 2, 3], you need to provide sample_interval "
                f"(got sample_steps={self.sample_steps}); e.g. sample_interval=0.4."
            )
        return _DEFAULT_INTERVALS[self.sample_steps]

    def _check_X_values(self, X):
        if min_value(X) < 0:
            raise ValueError(
                f"Negative values in data passed to X in {type(self).__name__}: the additive "
                "chi² kernel is defined for non-negative data such as histograms. Shift or "
                "clip the features (e.g. sklearn.preprocessing.MinMaxScaler) first."
            )

    def _fit_reads_rows(self) -> bool:
        return False  # fit reads X's width only

    def _fit(self, X, random_state):
        self._resolved_interval()
        self.kernel_ = resolve_kernel("additive_chi2_psd", owner="AdditiveChi2Sampler")
        return X.shape[1] * (2 * self.sample_steps - 1)

    @_fit_context(prefer_skip_nested_validation=True)
    def transform(self, X: Any) -> Any:
        """Apply the approximate feature map to ``X`` (fitting is not required).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data.

        Returns
        -------
        X_new : {ndarray, sparse matrix} of shape (n_samples, n_features * (2 * sample_steps - 1))
            CSR if ``X`` is sparse, else dense; float32 if ``X`` is float32.
        """
        if is_dask_collection(X):  # Dask (optional): lazy, chunk by chunk
            return collection_handler("transform")(self, X)
        # Stateless map: like scikit-learn, transform works without a prior fit.
        X = self._validate_X(X, reset=False)
        return self._transform_validated(X)

    def _n_out(self, X):
        return X.shape[1] * (2 * self.sample_steps - 1)

    def _transform_validated(self, X):
        interval = self._resolved_interval()
        if sp.issparse(X):
            return sparse_container_like(X, self._transform_sparse(X, interval))
        return super()._transform_validated(X)

    def _block_temp_bytes_per_row(self, n_features):
        # _steps keeps ~8 block-sized arrays alive (mask, logs, step, factor, cos, sin, ...).
        return 8 * n_features * 8

    def _steps(self, values: np.ndarray, interval: float):
        """Yield the 2n−1 feature blocks of ``values`` in scikit-learn's column order.

        Used for the dense block and the CSR ``data`` array alike, so both paths compute
        bit-identical values. Zeros map to zeros (log is taken of 1 instead of 0).
        """
        yield np.sqrt(values * interval)
        if self.sample_steps == 1:
            return
        positive = values > 0
        log_step = np.log(np.where(positive, values, 1.0).astype(values.dtype, copy=False))
        log_step *= interval
        step = 2 * values * interval
        for j in range(1, self.sample_steps):
            # math.cosh gives a Python float, which keeps float32 data float32 (NEP 50);
            # np.cosh would return a float64 scalar and silently upcast.
            factor = np.sqrt(step / _cosh(math.pi * j * interval))
            angle = j * log_step
            cosine = angle.copy()
            cos_inplace(cosine)  # ~4× np.cos in float64, same values to 3.3e-16
            angle -= np.pi / 2  # sin x = cos(x − π/2)
            cos_inplace(angle)
            cosine *= factor
            angle *= factor
            yield cosine
            yield angle

    def _block_flops_per_row(self, X):
        # Per input feature: a sqrt, a log and a few passes, and per further step a sqrt,
        # two cosines (about 400 operations each; see FeatureMap._block_flops_per_row) and
        # the passes around them (measured on digits: 2,000 per feature at 2 steps).
        return float(X.shape[1] * (200 + 1800 * (self.sample_steps - 1)))

    def _transform_block(self, X_block, out):
        n_features = X_block.shape[1]
        interval = self._resolved_interval()
        # X >= 0 (checked), so the non-zero values are the positive ones.
        if np.count_nonzero(X_block) <= _SPARSE_BLOCK_DENSITY * X_block.size:
            # Histograms are often half zeros (digits: 49 %), and a zero maps to zeros:
            # compute the positive values only, as for CSR input, and scatter them. Row i,
            # column j of the block goes to i·n_out + j + k·n_features of the flat output.
            where = np.flatnonzero(X_block)
            values = X_block.reshape(-1)[where]
            targets = where + (where // n_features) * (out.shape[1] - n_features)
            out[...] = 0
            flat = out.reshape(-1)
            for part in self._steps(values, interval):
                flat[targets] = part
                targets += n_features
            return
        for k, part in enumerate(self._steps(X_block, interval)):
            out[:, k * n_features:(k + 1) * n_features] = part

    def _transform_block_device(self, xp, params, X_block, out):
        # The same 2n − 1 blocks as _steps, in the input's namespace (sin directly).
        interval = self._resolved_interval()
        parts = [xp.sqrt(X_block * interval)]
        if self.sample_steps > 1:
            positive = X_block > 0
            log_step = xp.log(xp.where(positive, X_block, xp.ones_like(X_block))) * interval
            step = 2 * X_block * interval
            for j in range(1, self.sample_steps):
                factor = xp.sqrt(step / math.cosh(math.pi * j * interval))
                angle = j * log_step
                parts += [xp.cos(angle) * factor, xp.sin(angle) * factor]
        return xp.concat(parts, axis=1)

    def _transform_sparse(self, X, interval):
        X = sp.csr_array(X)
        if not X.has_canonical_format:
            # Duplicate entries must be summed before the non-linear map (f(a)+f(b) is not
            # f(a+b)); on a copy, since csr_array(X) may share the caller's buffers.
            X = X.copy()
            X.sum_duplicates()
        parts = [
            sp.csr_array((data, X.indices, X.indptr), shape=X.shape)
            for data in self._steps(X.data, interval)
        ]
        return sp.hstack(parts, format="csr")

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Output feature names: ``additivechi2sampler_<name>_sqrt``, ``_cos<j>``, ``_sin<j>``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            The names, one per output feature.
        """
        check_is_fitted(self, attributes="n_features_in_")
        input_features = _check_feature_names_in(self, input_features, generate_names=True)
        prefix = type(self).__name__.lower()
        names = [f"{prefix}_{name}_sqrt" for name in input_features]
        for j in range(1, self.sample_steps):
            names += [f"{prefix}_{name}_cos{j}" for name in input_features]
            names += [f"{prefix}_{name}_sin{j}" for name in input_features]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.positive_only = True
        return tags


class SkewedChi2Sampler(FeatureMap):
    r"""Random features approximating the skewed chi² kernel.

    The skewed chi² kernel (Li, Ionescu & Sminchisescu, 2010) with skewedness :math:`c`,

    .. math::

        k(x, y) = \prod_i \frac{2\sqrt{(x_i+c)(y_i+c)}}{x_i + y_i + 2c},

    is shift-invariant in :math:`\log(x+c)`; its random Fourier features are

    .. math::

        z(x) = \sqrt{2/D}\,\cos(W^\top\log(x+c) + b),\quad
        W_{ij} = \tfrac1\pi\log\tan(\tfrac\pi2 u_{ij}),\ u_{ij}\sim\mathcal U(0,1),\quad
        b_j\sim\mathcal U[0,2\pi).

    A drop-in replacement for :class:`sklearn.kernel_approximation.SkewedChi2Sampler`
    (same draws, same numbers). Beyond scikit-learn, CSR input is accepted without
    densifying: :math:`\log(x+c) = \log c + \log(1+x/c)` and the second term is zero where
    ``x`` is, so the projection is a sparse product plus the constant row
    :math:`\log c\cdot\mathbf 1^\top W`.

    Parameters
    ----------
    skewedness : float, default=1.0
        The skewedness :math:`c`; inputs must satisfy :math:`x > -c`.
    n_components : int, default=100
        Number of Monte Carlo samples D, the output dimension.
    random_state : int, RandomState instance or None, default=None
        Controls the random weights and offsets.

    Attributes
    ----------
    kernel_ : SkewedChi2Kernel
        The kernel approximated, with this ``skewedness``.
    random_weights_ : ndarray of shape (n_features, n_components)
        The frequencies, drawn from the kernel's (hyperbolic secant) spectral density.
    random_offset_ : ndarray of shape (n_components,)
        The random phases, uniform on [0, 2π).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    References
    ----------
    F. Li, C. Ionescu and C. Sminchisescu, "Random Fourier approximations for skewed
    multiplicative histogram kernels", DAGM 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import SkewedChi2Sampler
    >>> X = np.random.RandomState(0).uniform(size=(40, 4))
    >>> skewed = SkewedChi2Sampler(skewedness=0.5, n_components=1000, random_state=0).fit(X)
    >>> Z = skewed.transform(X)
    >>> Z.shape
    (40, 1000)
    >>> bool(np.abs(Z @ Z.T - skewed.kernel_(X)).max() < 0.1)
    True
    """

    _parameter_constraints: dict = {
        "skewedness": [Interval(Real, None, None, closed="neither")],
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, skewedness: float = 1.0, n_components: int = 100,
                 random_state: Any = None) -> None:
        self.skewedness = skewedness
        self.n_components = n_components
        self.random_state = random_state

    _check_degenerate_sample = True  # no kernel matrix in fit: checked on a sample
    _cosine_per_feature = True

    def _fit_reads_rows(self) -> bool:
        return False  # fit reads X's width only

    def _fit(self, X, random_state):
        n_features = X.shape[1]
        self.kernel_ = resolve_kernel("skewed_chi2",
                                      kernel_params={"skewedness": float(self.skewedness)},
                                      owner="SkewedChi2Sampler")
        # Same draws, order and shapes as scikit-learn (inverse CDF of the sech density).
        uniform = random_state.uniform(size=(n_features, self.n_components))
        self.random_weights_ = 1.0 / np.pi * np.log(np.tan(np.pi / 2.0 * uniform))
        self.random_offset_ = random_state.uniform(0, 2 * np.pi, size=self.n_components)
        if host_dtype(X) == np.float32:
            self.random_weights_ = self.random_weights_.astype(np.float32)
            self.random_offset_ = self.random_offset_.astype(np.float32)
        if self.skewedness > 0:
            # Offset of the sparse path: b + log(c)·1ᵀW (see the class docstring).
            # (math.log: a Python float keeps float32 parameters float32.)
            self._sparse_offset = self.random_offset_ + math.log(self.skewedness) * (
                self.random_weights_.sum(axis=0))
        return self.n_components

    def transform(self, X: Any) -> Any:
        """Apply the fitted feature map to ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The input samples, with every entry above ``-skewedness``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            The random features (a lazy dask array for Dask input).
        """
        if is_dask_collection(X):  # Dask (optional): lazy, chunk by chunk
            return collection_handler("transform")(self, X)
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        self._check_domain(X)
        return self._transform_validated(X)

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit the map to ``X`` and transform ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data, with every entry above ``-skewedness``.
        y : None
            Ignored.
        **fit_params : dict
            Ignored.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            The random features of ``X``.
        """
        return self.fit(X).transform(X)

    def _check_domain(self, X) -> None:
        c = self.skewedness
        if sp.issparse(X):
            values, implicit_zero = X.data, X.nnz < X.shape[0] * X.shape[1]
            if implicit_zero and -c >= 0:
                raise ValueError(
                    "X may not contain entries smaller than -skewedness: the implicit zeros of "
                    f"the sparse input are <= -skewedness={-c}. Use skewedness > 0."
                )
        else:
            values = X
        smallest = min_value(values)
        if smallest <= -c:
            raise ValueError(
                f"X may not contain entries smaller than -skewedness: found {smallest!r} "
                f"<= -skewedness = {-c!r}. The skewed chi² kernel is defined for x > "
                "-skewedness; increase skewedness or shift the data."
            )

    def _block_temp_bytes_per_row(self, n_features):
        return n_features * 8

    def _transform_block(self, X_block, out):
        c = self.skewedness
        scale = np.sqrt(2.0) / np.sqrt(self.n_components)
        if sp.issparse(X_block):
            log_part = X_block.copy()
            np.log1p(log_part.data / c, out=log_part.data)
            cos_features_into(project_into, log_part, self.random_weights_,
                              self._sparse_offset, scale, out)
            return
        shifted = X_block + c
        np.log(shifted, out=shifted)
        cos_features_into(project_into, shifted, self.random_weights_, self.random_offset_,
                          scale, out)

    _device_attributes = ("random_weights_", "random_offset_", "_sparse_offset")

    def _transform_block_device(self, xp, params, X_block, out):
        return cos_features_device(
            xp, DenseProjection(params["random_weights_"]),
            xp.log(X_block + float(self.skewedness)), params["random_offset_"],
            math.sqrt(2.0) / math.sqrt(self.n_components), out)
