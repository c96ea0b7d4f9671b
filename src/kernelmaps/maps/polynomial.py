r"""Feature maps for polynomial kernels.

:class:`PolynomialCountSketch` is the scikit-learn-compatible TensorSketch.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval

from kernelmaps._base import FeatureMap

__all__ = ["PolynomialCountSketch"]


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
    gamma : float, default=1.0
        Scale of the inner product.
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
    indexHash_ : ndarray of shape (degree, n_features + (coef0 != 0)), dtype=int64
        Hash buckets :math:`h_j` in ``[0, n_components)``.
    bitHash_ : ndarray of shape (degree, n_features + (coef0 != 0)), dtype=int64
        Random signs :math:`s_j \in \{-1, +1\}`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    N. Pham and R. Pagh, "Fast and scalable polynomial kernels via explicit feature maps",
    KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import PolynomialCountSketch
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> PolynomialCountSketch(degree=3, n_components=8, random_state=0).fit_transform(X).shape
    (2, 8)
    """

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="left")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, gamma: float = 1.0, degree: int = 2, coef0: float = 0.0,
                 n_components: int = 100, random_state: Any = None) -> None:
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, random_state):
        if self.coef0 < 0:
            raise ValueError(
                f"coef0 must be >= 0 for PolynomialCountSketch (the sketch uses sqrt(coef0)); "
                f"got coef0={self.coef0!r}. A negative offset makes the polynomial kernel "
                "indefinite, which no real feature map can reproduce."
            )
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
        vals = np.sqrt(self.gamma) * self.bitHash_[:, :n_in].ravel().astype(np.float64)
        self._hash_matrix = sp.csr_array(
            (vals, (rows, cols)), shape=(n_in, self.degree * D)
        )
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
        sketches = X_block @ hash_matrix
        if sp.issparse(sketches):  # CSR input: the sketch product is sparse too
            sketches = sketches.toarray()
        if self._constant_sketch is not None:
            sketches += self._constant_sketch.astype(sketches.dtype, copy=False)
        if degree == 1:  # the inverse FFT of the FFT: the Count Sketch itself
            out[...] = sketches
            return
        spectra = np.fft.rfft(sketches.reshape(-1, degree, D), axis=2)
        product = spectra[:, 0]
        for j in range(1, degree):
            product *= spectra[:, j]
        np.fft.irfft(product, n=D, axis=1, out=out)
