r"""Random features of dot-product kernels beyond scikit-learn: Random Maclaurin, TensorSRHT.

:class:`RandomMaclaurin` (Kar & Karnick, 2012) covers any dot-product kernel with
non-negative Maclaurin coefficients (polynomial, exponential); :class:`TensorSRHT` (Ahle et
al., 2020) the polynomial kernel, with subsampled randomised Hadamard transforms.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import comb, gammaln
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._array_api import host_dtype, matmul
from kernelmaps.kernels import gamma_constraints, resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._projection import project_into
from kernelmaps.maps._structured import fwht, fwht_device, next_power_of_two, padded_device

__all__ = ["RandomMaclaurin", "TensorSRHT"]


def _maclaurin_coefficients(kernel: str, gamma: float, degree: int, coef0: float,
                            orders: np.ndarray) -> np.ndarray:
    r"""Coefficients :math:`a_n` of :math:`f(t) = \sum_n a_n t^n` at the given orders.

    ``poly``: :math:`(\gamma t + c_0)^d`, :math:`a_n = \binom dn\gamma^n c_0^{d-n}` (0 past d);
    ``exponential``: :math:`e^{\gamma t}`, :math:`a_n = \gamma^n/n!`.
    """
    orders = np.asarray(orders, dtype=np.float64)
    if kernel == "exponential":
        return np.exp(orders * np.log(gamma) - gammaln(orders + 1.0))
    with np.errstate(divide="ignore"):  # 0**0 = 1 is what the binomial theorem needs
        return comb(degree, orders) * gamma ** orders * np.float64(coef0) ** (degree - orders)


class RandomMaclaurin(FeatureMap):
    r"""Random Maclaurin features of dot-product kernels (Kar & Karnick, 2012).

    A dot-product kernel :math:`k(x, y) = f(\langle x, y\rangle)` whose Maclaurin
    coefficients are non-negative, :math:`f(t) = \sum_{n\ge0} a_n t^n`, is positive definite
    (Schoenberg) and has the unbiased random features

    .. math::

        z_i(x) = \sqrt{\frac{a_{N_i}}{q_{N_i} D}}\;\prod_{j=1}^{N_i} w_{ij}^\top x,
        \qquad N_i \sim q,\quad w_{ij} \in \{-1, +1\}^d \text{ Rademacher},

    since :math:`\mathbb E[(w^\top x)(w^\top y)] = \langle x, y\rangle` and
    :math:`\mathbb E[z(x)^\top z(y)] = \sum_n q_n \frac{a_n}{q_n}\langle x,y\rangle^n = f`.
    The order law is Kar & Karnick's geometric one,
    :math:`q_n \propto \text{order\_decay}^{-n}`, restricted to the orders with
    :math:`a_n > 0` (so no feature is spent on a zero coefficient).

    Supported kernels:

    * ``"poly"``: :math:`(\gamma\langle x,y\rangle + c_0)^d`,
      :math:`a_n = \binom dn \gamma^n c_0^{d-n}` — ``get_kernel("poly", ...)``;
    * ``"exponential"``: :math:`\exp(\gamma\langle x,y\rangle)`, :math:`a_n = \gamma^n/n!`
      (``degree`` and ``coef0`` are ignored).

    The variance grows with :math:`\|x\|^{2N}`; scale the rows (e.g. to unit norm) first.
    For the polynomial kernel :class:`TensorSRHT` and :class:`PolynomialCountSketch` usually
    have lower variance at equal D; Random Maclaurin is the one that also handles
    :math:`\exp(\gamma\langle x,y\rangle)`.

    Transform is one BLAS product (CSR input stays sparse) followed by products of groups
    of its columns; float32 is preserved.

    Parameters
    ----------
    kernel : {"poly", "polynomial", "exponential"}, default="poly"
        The dot-product kernel.
    gamma : 'scale', 'auto' or float, default='scale'
        Scale :math:`\gamma > 0` of the inner product. ``'scale'`` (default, as
        :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the
        variance over all entries of the training X (1 if it is 0), so
        :math:`\gamma\langle x, y\rangle` is of order one whatever the units; ``'auto'``:
        :math:`1/d`. Resolved in ``fit``; the value is ``kernel_.gamma``.
    degree : int, default=2
        Degree of ``poly``.
    coef0 : float, default=0.0
        Offset :math:`c_0 \ge 0` of ``poly`` (a negative offset gives negative
        coefficients: the kernel is then not positive definite).
    n_components : int, default=100
        Number of features D.
    order_decay : float, default=2.0
        Kar & Karnick's :math:`p > 1`: :math:`q_n \propto p^{-n}`. Larger values spend
        more features on low orders.
    random_state : int, RandomState instance or None, default=None
        Controls the orders and the Rademacher vectors.

    Attributes
    ----------
    kernel_ : PolynomialKernel or ExponentialKernel
        The kernel approximated.
    orders_ : ndarray of shape (n_components,), dtype=int64
        Order :math:`N_i` of each feature (sorted).
    random_weights_ : ndarray of shape (n_features, orders_.sum())
        The Rademacher vectors as columns, grouped feature by feature (float32 when fitted
        on float32; ±1 values).
    feature_scale_ : ndarray of shape (n_components,)
        :math:`\sqrt{a_{N_i}/(q_{N_i} D)}`.
    n_features_out_ : int
        Equal to ``n_components``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    References
    ----------
    P. Kar and H. Karnick, "Random Feature Maps for Dot Product Kernels", AISTATS 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomMaclaurin
    >>> X = np.random.RandomState(0).normal(size=(40, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> rm = RandomMaclaurin("exponential", gamma=0.5, n_components=2000, random_state=0)
    >>> Z = rm.fit_transform(X)
    >>> Z.shape
    (40, 2000)
    >>> K = rm.kernel_(X)  # exp(⟨x, y⟩ / 2)
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.15 * K.max())
    True
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions({"poly", "polynomial", "exponential"})],
        "gamma": gamma_constraints(allow_none=False),
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, 0, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "order_decay": [Interval(Real, 1, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, kernel: str = "poly", *, gamma: float | str = "scale", degree: int = 2,
                 coef0: float = 0.0, n_components: int = 100, order_decay: float = 2.0,
                 random_state: Any = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.order_decay = order_decay
        self.random_state = random_state

    def _draw_orders(self, random_state: np.random.RandomState) -> tuple[np.ndarray,
                                                                          np.ndarray]:
        """Orders N_i and their probabilities q_{N_i}."""
        kind = "exponential" if self.kernel == "exponential" else "poly"
        ratio = 1.0 / self.order_decay
        if kind == "exponential":  # every a_n > 0: the geometric law on {0, 1, 2, ...}
            orders = random_state.geometric(1.0 - ratio, size=self.n_components) - 1
            return orders, (1.0 - ratio) * ratio ** orders
        support = np.arange(self.degree + 1)
        positive = _maclaurin_coefficients(kind, self.kernel_.gamma, self.degree, self.coef0,
                                           support) > 0
        support = support[positive]
        law = ratio ** support
        law /= law.sum()
        index = random_state.choice(support.size, size=self.n_components, p=law)
        return support[index], law[index]

    _check_degenerate_sample = True  # no kernel matrix in fit: checked on a sample

    def _fit_reads_rows(self) -> bool:
        return isinstance(self.gamma, str) and self.gamma == "scale"  # "auto" is 1/d

    def _fit(self, X, random_state):
        self.kernel_ = resolve_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                                      coef0=float(self.coef0),
                                      owner="RandomMaclaurin").resolve(X)
        orders, probabilities = self._draw_orders(random_state)
        by_order = np.argsort(orders, kind="stable")
        self.orders_ = orders[by_order].astype(np.int64)
        kind = "exponential" if self.kernel == "exponential" else "poly"
        coefficients = _maclaurin_coefficients(kind, self.kernel_.gamma, self.degree,
                                               self.coef0, self.orders_)
        self.feature_scale_ = np.sqrt(coefficients / (probabilities[by_order]
                                                      * self.n_components))
        weights = 2.0 * random_state.randint(0, 2, size=(X.shape[1], self.orders_.sum())) - 1.0
        self.random_weights_ = weights.astype(host_dtype(X))
        # (order, number of features) runs, in the column order of random_weights_.
        values, counts = np.unique(self.orders_, return_counts=True)
        self._order_runs = [(int(v), int(c)) for v, c in zip(values, counts, strict=True)]
        self.n_features_out_ = self.n_components
        return self.n_components

    def _block_temp_bytes_per_row(self, n_features):
        return 8 * int(self.random_weights_.shape[1])  # = Σ orders

    def _transform_block(self, X_block, out):
        rows = out.shape[0]
        projections = np.empty((rows, self.random_weights_.shape[1]), dtype=out.dtype)
        project_into(X_block, self.random_weights_.astype(out.dtype, copy=False), projections)
        column = feature = 0
        for order, count in self._order_runs:
            target = out[:, feature:feature + count]
            if order == 0:
                target.fill(1.0)
            else:
                group = projections[:, column:column + order * count].reshape(rows, count, order)
                np.multiply.reduce(group, axis=2, out=target)
            column += order * count
            feature += count
        out *= self.feature_scale_.astype(out.dtype, copy=False)

    _device_attributes = ("orders_", "random_weights_", "feature_scale_")

    def _transform_block_device(self, xp, params, X_block, out):
        rows = X_block.shape[0]
        projections = matmul(xp, X_block, params["random_weights_"])
        features, column = [], 0
        for order, count in self._order_runs:
            if order == 0:
                features.append(xp.ones((rows, count), dtype=X_block.dtype,
                                        device=X_block.device))
            else:
                group = projections[:, column:column + order * count]
                features.append(xp.prod(xp.reshape(group, (rows, count, order)), axis=2))
            column += order * count
        result = xp.concat(features, axis=1)
        result *= params["feature_scale_"]
        return result


class TensorSRHT(FeatureMap):
    r"""TensorSRHT random features of the polynomial kernel (Ahle et al., SODA 2020).

    With :math:`\tilde x = (\sqrt\gamma\,x, \sqrt{c_0})` zero-padded to
    :math:`d_{pad} = 2^{\lceil\log_2 \dim\tilde x\rceil}`, the unnormalised Walsh–Hadamard
    matrix :math:`H`, independent random ±1 diagonals :math:`D_1, \dots, D_p` and
    independent uniform coordinates :math:`r_{ji} \in \{1, \dots, d_{pad}\}`,

    .. math::

        z_i(x) = \frac{1}{\sqrt D}\prod_{j=1}^{p} (H D_j \tilde x)_{r_{ji}},
        \qquad \mathbb E[z(x)^\top z(y)] = \langle\tilde x, \tilde y\rangle^p
        = (\gamma\langle x, y\rangle + c_0)^p,

    because :math:`\mathbb E_r[(HD\tilde x)_r (HD\tilde y)_r] = \langle\tilde x,\tilde
    y\rangle` for every D and the p factors are independent. The random signs spread each
    input's mass over all coordinates before sampling (the subsampled randomised Hadamard
    transform), which keeps the variance close to that of Gaussian projections at
    :math:`O(p\,(d\log d + D))` time per row instead of :math:`O(p\,dD)`. Each coordinate
    list :math:`r_{j\cdot}` is a concatenation of random permutations of the
    :math:`d_{pad}` coordinates (sampling without replacement within a run), which keeps
    every :math:`r_{ji}` uniform.

    The parameters are :class:`PolynomialCountSketch`'s. CSR input is densified one row
    block at a time (the Hadamard transform is dense); float32 is preserved.
    ``n_components`` is used as given (no rounding): only the transform length is padded,
    internally.

    Parameters
    ----------
    gamma : 'scale', 'auto' or float, default='scale'
        Scale :math:`\gamma > 0` of the inner product. ``'scale'`` (default, as
        :class:`sklearn.svm.SVC`): :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the
        variance over all entries of the training X (1 if it is 0), so
        :math:`\gamma\langle x, y\rangle` is of order one whatever the units; ``'auto'``:
        :math:`1/d`. Resolved in ``fit``; the value is ``kernel_.gamma``.
    degree : int, default=2
        Degree :math:`p \ge 1`.
    coef0 : float, default=0.0
        Offset :math:`c_0 \ge 0` (the map embeds :math:`\sqrt{c_0}`).
    n_components : int, default=100
        Output dimension D.
    random_state : int, RandomState instance or None, default=None
        Controls the signs and the sampled coordinates.

    Attributes
    ----------
    kernel_ : PolynomialKernel
        The kernel approximated.
    signs_ : ndarray of shape (degree, d_pad), dtype=int8
        The diagonals :math:`D_j` (±1).
    indices_ : ndarray of shape (degree, n_components), dtype=int32
        The sampled coordinates :math:`r_{ji}`.
    n_features_out_ : int
        Equal to ``n_components``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string feature names.

    References
    ----------
    T. D. Ahle, M. Kapralov, J. B. T. Knudsen, R. Pagh, A. Velingker, D. P. Woodruff and
    A. Zandieh, "Oblivious Sketching of High-Degree Polynomial Kernels", SODA 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import TensorSRHT
    >>> X = np.random.RandomState(0).normal(size=(40, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> srht = TensorSRHT(degree=3, coef0=1.0, n_components=2000, random_state=0)
    >>> Z = srht.fit_transform(X)
    >>> Z.shape
    (40, 2000)
    >>> K = srht.kernel_(X)  # (⟨x, y⟩ + 1)³, between 0 and 8 here
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.2 * K.max())
    True
    """

    _parameter_constraints: dict = {
        "gamma": gamma_constraints(allow_none=False),
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, 0, None, closed="left")],
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, gamma: float | str = "scale", degree: int = 2, coef0: float = 0.0,
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
        self.kernel_ = resolve_kernel("poly", gamma=self.gamma, degree=self.degree,
                                      coef0=float(self.coef0),
                                      owner="TensorSRHT").resolve(X)
        d_pad = next_power_of_two(X.shape[1] + (self.coef0 != 0))
        signs = 2 * random_state.randint(0, 2, size=(self.degree, d_pad)) - 1
        self.signs_ = signs.astype(np.int8)  # cast to the data's dtype when used
        n_runs = -(-self.n_components // d_pad)
        self.indices_ = np.stack([
            np.concatenate([random_state.permutation(d_pad) for _ in range(n_runs)])
            [: self.n_components]
            for _ in range(self.degree)
        ]).astype(np.int32)
        self.n_features_out_ = self.n_components
        return self.n_components

    def _block_temp_bytes_per_row(self, n_features):
        # augmented input, transform and its scratch (d_pad each), gathered coordinates (D).
        return 8 * (3 * self.signs_.shape[1] + self.n_components)

    def _augmented(self, X_block: Any, dtype: np.dtype) -> np.ndarray:
        """x̃ = (√γ x, √c₀, 0, …, 0) of length d_pad for each row."""
        X_dense = X_block.toarray() if sp.issparse(X_block) else X_block
        d = X_dense.shape[1]
        augmented = np.zeros((X_dense.shape[0], self.signs_.shape[1]), dtype=dtype)
        np.multiply(X_dense, np.sqrt(self.kernel_.gamma), out=augmented[:, :d])
        if self.coef0 != 0:
            augmented[:, d] = np.sqrt(self.coef0)
        return augmented

    def _transform_block(self, X_block, out):
        augmented = self._augmented(X_block, out.dtype)
        transformed = np.empty_like(augmented)
        scratch = np.empty_like(augmented)
        gathered = np.empty_like(out)
        signs = self.signs_.astype(out.dtype, copy=False)
        for j in range(self.degree):
            np.multiply(augmented, signs[j], out=transformed)
            fwht(transformed, scratch=scratch)
            # mode="clip": the indices are valid, and "raise" would buffer the output.
            target = out if j == 0 else gathered
            np.take(transformed, self.indices_[j], axis=1, out=target, mode="clip")
            if j > 0:
                out *= gathered
        out *= 1.0 / np.sqrt(self.n_components)

    _device_attributes = ("signs_", "indices_")

    def _transform_block_device(self, xp, params, X_block, out):
        rows = X_block.shape[0]
        d_pad = self.signs_.shape[1]
        augmented = X_block * float(np.sqrt(self.kernel_.gamma))
        if self.coef0 != 0:
            constant = xp.full((rows, 1), float(np.sqrt(self.coef0)), dtype=X_block.dtype,
                               device=X_block.device)
            augmented = xp.concat([augmented, constant], axis=1)
        augmented = padded_device(xp, augmented, d_pad)
        signs = xp.astype(params["signs_"], X_block.dtype)
        # All p transforms H D_j x̃ at once, then one gather of every sampled coordinate:
        # column j·d_pad + r_ji of the flattened (rows, p·d_pad) transforms.
        transformed = xp.reshape(fwht_device(xp, augmented[:, None, :] * signs[None, ...]),
                                 (rows, -1))
        indices = params["indices_"]
        offsets = xp.arange(0, self.degree * d_pad, d_pad, device=X_block.device)
        gather = xp.reshape(xp.astype(indices, offsets.dtype) + offsets[:, None], (-1,))
        sampled = xp.reshape(xp.take(transformed, gather, axis=1),
                             (rows, self.degree, self.n_components))
        result = xp.prod(sampled, axis=1)
        result *= float(1.0 / np.sqrt(self.n_components))
        return result
