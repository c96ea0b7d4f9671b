r"""Feature maps for polynomial kernels: the Count Sketch and the exact map.

:class:`PolynomialCountSketch` is the scikit-learn-compatible TensorSketch.
:class:`PolynomialKernelMap` is the exact finite map. The random features of general
dot-product kernels (Random Maclaurin, TensorSRHT) are in :mod:`kernelmaps.maps.dot_product`.
"""

from __future__ import annotations

from math import comb
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval

from kernelmaps._array_api import host_dtype, matmul, on_device
from kernelmaps._engine import scratch_buffer
from kernelmaps.kernels import gamma_constraints, resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap

__all__ = ["PolynomialCountSketch", "PolynomialKernelMap"]


def _scatter_layers(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray
                    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Split the hashing matrix's entries into layers with distinct output columns.

    Layer k holds the k-th entry of every column, so within a layer the scatter
    ``sketch[:, cols] += X[:, rows] * vals`` has no repeated column and NumPy's buffered
    fancy-index update is exact. Hash collisions are rare (n_features ≪ n_components), so
    there are few layers.
    """
    order = np.argsort(cols, kind="stable")
    rows, cols, vals = rows[order], cols[order], vals[order]
    first = np.r_[0, np.flatnonzero(np.diff(cols)) + 1]
    rank = np.arange(cols.size) - np.repeat(first, np.diff(np.r_[first, cols.size]))
    return [(rows[rank == k], cols[rank == k], vals[rank == k])
            for k in range(int(rank.max(initial=-1)) + 1)]


def _count_sketches(X_block: np.ndarray, layers, width: int, sketches: np.ndarray
                    ) -> np.ndarray:
    """The side-by-side Count Sketches of a dense row block, C-ordered ``(b, width)``.

    A gather and a scatter per layer: O(b·n_features) work on top of zeroing the buffer,
    and the result is laid out for the row-wise FFTs that follow (a sparse product would
    return it transposed, and re-laying it out costs more than the FFTs).
    """
    sketches.fill(0.0)
    for rows, cols, vals in layers:
        sketches[:, cols] += X_block[:, rows] * vals.astype(X_block.dtype, copy=False)
    return sketches


class PolynomialCountSketch(FeatureMap):
    r"""TensorSketch approximation of the polynomial kernel.

    Approximates :math:`k(x, y) = (\gamma\langle x, y\rangle + c_0)^d` (Pham & Pagh, 2013).
    With :math:`\tilde x = (\sqrt\gamma\,x, \sqrt{c_0})` and :math:`d` independent Count
    Sketches :math:`C_j\tilde x` (hash :math:`h_j`, sign :math:`s_j`), the sketch of the
    :math:`d`-fold tensor power is their circular convolution, computed with the FFT:

    .. math::

        z(x) = \mathrm{FFT}^{-1}\Big(\prod_{j=1}^{d}\mathrm{FFT}(C_j\tilde x)\Big),
        \qquad \mathbb E[z(x)^\top z(y)] = k(x, y).

    A drop-in replacement for :class:`sklearn.kernel_approximation.PolynomialCountSketch`
    with the same hashes for the same ``random_state`` and the same numbers, but built
    differently: the Count Sketches of a row block are one sparse product with a
    precomputed hashing matrix (no Python loop over features, no dense
    ``n × degree × n_components`` buffer), the FFTs are real-input FFTs written straight
    into the output block, float32 is preserved, and CSR input stays sparse.

    Parameters
    ----------
    gamma : 'scale', 'auto' or float, default=1.0
        Scale of the inner product (scikit-learn's default, 1.0). ``'scale'``:
        :math:`\gamma = 1/(d\,\operatorname{Var}X)` over all entries of the training X (1
        if the variance is 0), :class:`sklearn.svm.SVC`'s definition; ``'auto'``:
        :math:`1/d`. The value used is ``kernel_.gamma``.
    degree : int, default=2
        Degree :math:`d` of the kernel.
    coef0 : float, default=0.0
        Constant term :math:`c_0`; must be non-negative (the sketch embeds
        :math:`\sqrt{c_0}`).
    n_components : int, default=100
        Output dimension D.
    random_state : int, RandomState instance or None, default=None
        Controls the hash functions.

    Attributes
    ----------
    kernel_ : PolynomialKernel
        The kernel approximated, :math:`(\gamma\langle x, y\rangle + c_0)^d`.
    indexHash_ : ndarray of shape (degree, n_features + (coef0 != 0)), dtype=int64
        Hash buckets :math:`h_j` in ``[0, n_components)``.
    bitHash_ : ndarray of shape (degree, n_features + (coef0 != 0)), dtype=int64
        Random signs :math:`s_j \in \{-1, +1\}`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    References
    ----------
    N. Pham and R. Pagh, "Fast and scalable polynomial kernels via explicit feature maps",
    KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import PolynomialCountSketch
    >>> X = np.random.RandomState(0).normal(size=(40, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> sketch = PolynomialCountSketch(degree=2, coef0=1.0, n_components=1000, random_state=0)
    >>> Z = sketch.fit_transform(X)
    >>> Z.shape
    (40, 1000)
    >>> K = sketch.kernel_(X)  # (⟨x, y⟩ + 1)², between 0 and 4 here
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.15 * K.max())
    True
    """

    _parameter_constraints: dict = {
        "gamma": gamma_constraints(allow_zero=True, allow_none=False),
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, gamma: float | str = 1.0, degree: int = 2, coef0: float = 0.0,
                 n_components: int = 100, random_state: Any = None) -> None:
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state

    _check_degenerate_sample = True  # no kernel matrix in fit: checked on a sample

    def _fit_reads_rows(self) -> bool:
        return isinstance(self.gamma, str) and self.gamma == "scale"  # "auto" is 1/d

    def _fit(self, X, random_state):
        if self.coef0 < 0:
            raise ValueError(
                f"coef0 must be >= 0 for PolynomialCountSketch (the sketch uses sqrt(coef0)); "
                f"got coef0={self.coef0!r}. A negative offset makes the polynomial kernel "
                "indefinite, which no real feature map can reproduce."
            )
        self.kernel_ = resolve_kernel("poly", gamma=self.gamma, degree=self.degree,
                                      coef0=float(self.coef0),
                                      owner="PolynomialCountSketch").resolve(X)
        n_features = X.shape[1] + (self.coef0 != 0)
        # Same draws, order and shapes as scikit-learn.
        self.indexHash_ = random_state.randint(
            0, high=self.n_components, size=(self.degree, n_features)
        )
        self.bitHash_ = random_state.choice(a=[-1, 1], size=(self.degree, n_features))
        D = self.n_components
        n_in = X.shape[1]
        # Hashing matrix H (n_in × degree·D): row i has, for each j, the sign s_j(i)·√γ in
        # column j·D + h_j(i), so X @ H stacks the d Count Sketches of √γ·X side by side.
        rows = np.tile(np.arange(n_in), self.degree)
        cols = (self.indexHash_[:, :n_in] + D * np.arange(self.degree)[:, None]).ravel()
        vals = np.sqrt(self.kernel_.gamma) * self.bitHash_[:, :n_in].ravel().astype(np.float64)
        self._hash_matrix = sp.csr_array(
            (vals, (rows, cols)), shape=(n_in, self.degree * D)
        )
        self._scatter_layers = _scatter_layers(rows, cols, vals)
        if self.coef0 != 0:
            # The appended constant feature √c₀ adds a fixed vector to every sketch.
            self._constant_sketch = np.zeros(self.degree * D)
            self._constant_sketch[self.indexHash_[:, -1] + D * np.arange(self.degree)] += (
                self.bitHash_[:, -1] * np.sqrt(self.coef0))
        else:
            self._constant_sketch = None
        return D

    def _block_temp_bytes_per_row(self, n_features):
        D = self.n_components
        # sketches (degree·D reals) and their spectra (degree·(D/2+1) complex).
        return 8 * self.degree * D + 16 * self.degree * (D // 2 + 1)

    def _transform_block(self, X_block, out):
        D, degree = self.n_components, self.degree
        hash_matrix = self._hash_matrix
        if X_block.dtype == np.float32:
            hash_matrix = hash_matrix.astype(np.float32)
        b = X_block.shape[0]
        if sp.issparse(X_block):  # CSR input: the sketch product is sparse too
            sketches = (X_block @ hash_matrix).toarray()
        else:
            sketches = _count_sketches(
                X_block, self._scatter_layers, degree * D,
                scratch_buffer("pcs_sketches", (b, degree * D), out.dtype))
        if self._constant_sketch is not None:
            sketches += self._constant_sketch.astype(sketches.dtype, copy=False)
        if degree == 1:  # the inverse FFT of the FFT: the Count Sketch itself
            out[...] = sketches
            return
        spectra = scratch_buffer("pcs_spectra", (b, degree, D // 2 + 1),
                                 np.result_type(out.dtype, np.complex64))
        np.fft.rfft(sketches.reshape(b, degree, D), axis=2, out=spectra)
        product = spectra[:, 0]
        for j in range(1, degree):
            product *= spectra[:, j]
        np.fft.irfft(product, n=D, axis=1, out=out)

    _device_attributes = ("indexHash_", "bitHash_", "_constant_sketch")

    def _device_parameters(self, xp, device, dtype):
        # On a device the Count Sketches are one dense product X @ H (H has one non-zero
        # per row and degree, d × degree·D: a GEMM beats scatters there), then the FFTs of
        # the namespace's fft extension.
        return {**super()._device_parameters(xp, device, dtype),
                "hash_matrix": on_device(self._hash_matrix.toarray(), xp, device, dtype),
                "constant_sketch": on_device(self._constant_sketch, xp, device, dtype)}

    def _transform_block_device(self, xp, params, X_block, out):
        D, degree = self.n_components, self.degree
        sketches = matmul(xp, X_block, params["hash_matrix"], bias=params["constant_sketch"])
        if degree == 1:
            return sketches
        spectra = xp.fft.rfft(xp.reshape(sketches, (X_block.shape[0], degree, D)), axis=-1)
        product = spectra[:, 0, :]
        for j in range(1, degree):
            product *= spectra[:, j, :]
        return xp.fft.irfft(product, n=D, axis=-1)


def _monomial_plan(n_variables: int, degree: int) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                             np.ndarray]:
    """Build the degree-``degree`` monomials of ``n_variables`` variables level by level.

    Monomials are multisets i₁ ≤ i₂ ≤ … ≤ i_d of variable indices (combinations with
    replacement). Level k is obtained from level k−1 by multiplying a monomial whose largest
    index is j with a variable i ≥ j, so each level is one gather and one product:
    ``level_k = level_{k-1}[:, parent] * x[:, variable]``.

    Returns the per-level ``(parent, variable)`` index arrays and the final coefficients
    √(d!/α!) of the multinomial theorem.
    """
    from math import factorial

    # Level 1: x_i itself, with last index i and multiplicity vector e_i.
    last = np.arange(n_variables)
    log_alpha_factorial = np.zeros(n_variables)  # log α! of each monomial
    run_length = np.ones(n_variables)  # multiplicity of the last index
    plan = []
    for _ in range(1, degree):
        parents = np.repeat(np.arange(last.size), n_variables - last)
        variables = np.concatenate([np.arange(j, n_variables) for j in last])
        same = variables == last[parents]
        new_run = np.where(same, run_length[parents] + 1, 1.0)
        log_alpha_factorial = log_alpha_factorial[parents] + np.log(new_run)
        run_length, last = new_run, variables
        plan.append((parents, variables))
    coefficients = np.sqrt(factorial(degree) * np.exp(-log_alpha_factorial))
    return plan, coefficients


class PolynomialKernelMap(FeatureMap):
    r"""The exact, finite feature map of the polynomial kernel.

    For :math:`\tilde x = (\sqrt\gamma\,x_1, \dots, \sqrt\gamma\,x_p, \sqrt{c_0})` the
    multinomial theorem gives

    .. math::

        (\gamma\langle x, y\rangle + c_0)^d = \langle\tilde x, \tilde y\rangle^d
        = \sum_{|\alpha| = d} \frac{d!}{\alpha!}\,\tilde x^\alpha\,\tilde y^\alpha,
        \qquad z_\alpha(x) = \sqrt{d!/\alpha!}\;\tilde x^\alpha,

    so :math:`z(x)^\top z(y)` *equals* the kernel (to rounding), with one feature per
    multi-index: :math:`\binom{p+d}{d}` features (:math:`\binom{p+d-1}{d}` when
    :math:`c_0 = 0`, where the monomials containing :math:`\sqrt{c_0}` vanish and are left
    out). Products of :math:`\sqrt2` and multinomial coefficients appear automatically in
    :math:`\sqrt{d!/\alpha!}` (e.g. :math:`\sqrt2\,x_1x_2` for :math:`d=2`). See e.g.
    Schölkopf & Smola, *Learning with Kernels*, 2002, §2.1.

    The dimension grows like :math:`p^d/d!`; when the output would exceed ``max_bytes``
    the map refuses with a clear error that suggests :class:`PolynomialCountSketch`.

    Parameters
    ----------
    gamma : 'scale', 'auto' or float, default='scale'
        Scale :math:`\gamma > 0` of the inner product. ``'scale'`` (default, as
        :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the
        variance over all entries of the training X (1 if it is 0), so
        :math:`\gamma\langle x, y\rangle` is of order one whatever the units; ``'auto'``:
        :math:`1/d`. Resolved in ``fit``; the value is ``kernel_.gamma``.
    degree : int, default=2
        Degree :math:`d \ge 1`.
    coef0 : float, default=1.0
        Offset :math:`c_0 \ge 0`.
    max_bytes : int, default=2**31
        Memory budget for one transform output (and the fitted plan); exceeding it raises
        ``ValueError``.

    Attributes
    ----------
    kernel_ : PolynomialKernel
        The kernel whose dot products the features reproduce exactly.
    n_features_out_ : int
        Number of monomials.
    powers_ : ndarray of shape (n_features_out_, n_features_in_ + 1)
        Exponents α of each output feature (the last column is the power of √c₀).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import PolynomialKernelMap
    >>> X = np.array([[1.0, 2.0], [0.5, -1.0]])
    >>> Z = PolynomialKernelMap(gamma=1.0, degree=3, coef0=1.0).fit_transform(X)
    >>> bool(np.allclose(Z @ Z.T, (X @ X.T + 1.0) ** 3))
    True
    """

    _parameter_constraints: dict = {
        "gamma": gamma_constraints(allow_none=False),
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, 0, None, closed="left")],
        "max_bytes": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, gamma: float | str = "scale", degree: int = 2, coef0: float = 1.0,
                 max_bytes: int = 2**31) -> None:
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_bytes = max_bytes

    def _fit_reads_rows(self) -> bool:
        return isinstance(self.gamma, str) and self.gamma == "scale"  # "auto" is 1/d

    def _fit(self, X, random_state):
        self.kernel_ = resolve_kernel("poly", gamma=self.gamma, degree=self.degree,
                                      coef0=float(self.coef0),
                                      owner="PolynomialKernelMap").resolve(X)
        n_variables = X.shape[1] + (self.coef0 != 0)
        n_out = comb(n_variables + self.degree - 1, self.degree)
        itemsize = host_dtype(X).itemsize
        needed = n_out * max(1, X.shape[0]) * itemsize
        if needed > self.max_bytes:
            raise ValueError(
                f"PolynomialKernelMap with degree={self.degree} on {X.shape[1]} features has "
                f"{n_out:,} output features: {needed / 2**30:.2f} GiB for these "
                f"{X.shape[0]:,} rows, over max_bytes={self.max_bytes:,}. Use "
                "PolynomialCountSketch (a random sketch of the same kernel with any "
                "n_components), a lower degree, or raise max_bytes."
            )
        self._plan, self._coefficients = _monomial_plan(n_variables, self.degree)
        self.n_features_out_ = n_out
        return n_out

    @property
    def powers_(self) -> np.ndarray:
        """Exponent vector α of every output feature (last column: power of √c₀)."""
        n_variables = self.n_features_in_ + 1
        identity = np.eye(n_variables, dtype=np.int64)[: n_variables - (self.coef0 == 0)]
        powers = identity
        for parents, variables in self._plan:
            powers = powers[parents] + identity[variables]
        return powers

    def _check_output_budget(self, n_rows: int) -> None:
        needed = n_rows * self.n_features_out_ * 8
        if needed > self.max_bytes:
            raise ValueError(
                f"The output for {n_rows:,} rows × {self.n_features_out_:,} features needs "
                f"{needed / 2**30:.2f} GiB, over max_bytes={self.max_bytes:,}: transform in "
                "smaller batches, raise max_bytes, or use PolynomialCountSketch."
            )

    def _transform_validated(self, X):
        self._check_output_budget(X.shape[0])
        return super()._transform_validated(X)

    def _block_temp_bytes_per_row(self, n_features):
        return 2 * self.n_features_out_ * 8

    def _transform_block(self, X_block, out):
        X_block = X_block.toarray() if sp.issparse(X_block) else X_block
        variables = np.sqrt(self.kernel_.gamma) * X_block
        if self.coef0 != 0:
            constant = np.full((X_block.shape[0], 1), np.sqrt(self.coef0), dtype=out.dtype)
            variables = np.hstack([variables, constant])
        level = variables
        for parents, factor_index in self._plan:
            level = level[:, parents] * variables[:, factor_index]
        np.multiply(level, self._coefficients.astype(out.dtype, copy=False), out=out)

    _device_attributes = ("_coefficients",)

    def _device_parameters(self, xp, device, dtype):
        return {"plan": [(on_device(parents, xp, device), on_device(factors, xp, device))
                         for parents, factors in self._plan],
                "coefficients": on_device(self._coefficients, xp, device, dtype)}

    def _transform_block_device(self, xp, params, X_block, out):
        variables = X_block * float(np.sqrt(self.kernel_.gamma))
        if self.coef0 != 0:
            constant = xp.full((X_block.shape[0], 1), float(np.sqrt(self.coef0)),
                               dtype=X_block.dtype, device=X_block.device)
            variables = xp.concat([variables, constant], axis=1)
        level = variables
        for parents, factor_index in params["plan"]:
            level = xp.take(level, parents, axis=1) * xp.take(variables, factor_index, axis=1)
        return level * params["coefficients"]

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Name the output features by their monomials, like ``x0^2 x1``.

        ``1`` stands for √coef0.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            The names, one per output feature.
        """
        from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

        check_is_fitted(self)
        names = [*_check_feature_names_in(self, input_features), "1"]
        out = []
        for row in self.powers_:
            terms = [name if p == 1 else f"{name}^{p}" for name, p in zip(names, row, strict=True)
                     if p and name != "1"]
            out.append(" ".join(terms) if terms else "1")
        return np.asarray(out, dtype=object)
