r"""Random features for the arc-cosine kernels: random sign / ReLU / squared-ReLU units.

:class:`ArcCosineSampler` is the "random hashing" map of one infinitely wide layer of
step, ReLU or squared-ReLU units with Gaussian weights, whose kernel is
:class:`kernelmaps.kernels.ArcCosineKernel` (Cho & Saul, NeurIPS 2009).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Options

from kernelmaps._array_api import host_dtype, matmul
from kernelmaps.kernels import resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._projection import project_into

__all__ = ["ArcCosineSampler"]


def _step_into(out: np.ndarray) -> None:
    # Θ(p): a bool comparison cast back into the float block (no temporary).
    np.greater(out, 0.0, out=out)


def _relu_into(out: np.ndarray) -> None:
    np.maximum(out, 0.0, out=out)


def _squared_relu_into(out: np.ndarray) -> None:
    np.maximum(out, 0.0, out=out)
    np.square(out, out=out)


#: Θ(p)·pⁿ in place, by degree n.
_ACTIVATIONS = {0: _step_into, 1: _relu_into, 2: _squared_relu_into}


class ArcCosineSampler(FeatureMap):
    r"""Random features of the arc-cosine kernel of degree 0, 1 or 2.

    With :math:`w_1, \dots, w_D \sim \mathcal N(0, I)` and the Heaviside step Θ,

    .. math::

        z(x) = \sqrt{2/D}\;\big[\Theta(w_i^\top x)\,(w_i^\top x)^n\big]_{i=1}^{D},
        \qquad \mathbb E[z(x)^\top z(y)] = k_n(x, y)
        = \tfrac1\pi\|x\|^n\|y\|^n J_n(\theta),

    the arc-cosine kernel (Cho & Saul, 2009; :class:`kernelmaps.kernels.ArcCosineKernel`,
    ``get_kernel("arccos", degree=n)``): random sign features (n = 0, a Monte Carlo
    estimate of :math:`1 - \theta/\pi`), ReLU features (n = 1) and squared-ReLU features
    (n = 2). The estimate is unbiased; its error shrinks like :math:`1/\sqrt D`.

    Transform is one BLAS product (CSR input stays sparse) and one or two in-place passes;
    float32 is preserved.

    Parameters
    ----------
    degree : {0, 1, 2}, default=1
        The degree n: 0 step, 1 ReLU, 2 squared ReLU.
    n_components : int, default=100
        Number of random units D (the output dimension).
    random_state : int, RandomState instance or None, default=None
        Controls the Gaussian weights.

    Attributes
    ----------
    kernel_ : ArcCosineKernel
        The kernel approximated.
    random_weights_ : ndarray of shape (n_features, n_components)
        The weights :math:`w_i` as columns (float32 when fitted on float32).
    n_features_out_ : int
        Equal to ``n_components``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when they are all strings.

    References
    ----------
    Y. Cho and L. K. Saul, "Kernel Methods for Deep Learning", NeurIPS 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.maps.arccos import ArcCosineSampler
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> Z = ArcCosineSampler(degree=1, n_components=20000, random_state=0).fit_transform(X)
    >>> round(float(Z[0] @ Z[1]), 1)  # k_1 at a right angle: 1/π ≈ 0.32
    0.3
    """

    _parameter_constraints: dict = {
        "degree": [Options(Integral, {0, 1, 2})],
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, degree: int = 1, n_components: int = 100,
                 random_state: Any = None) -> None:
        self.degree = degree
        self.n_components = n_components
        self.random_state = random_state

    def _fit_reads_rows(self) -> bool:
        return False  # fit reads X's width only

    def _fit(self, X, random_state):
        self.kernel_ = resolve_kernel("arccos", kernel_params={"degree": int(self.degree)},
                                      owner="ArcCosineSampler")
        weights = random_state.normal(size=(X.shape[1], self.n_components))
        self.random_weights_ = weights.astype(host_dtype(X), copy=False)
        self.n_features_out_ = self.n_components
        return self.n_components

    def _transform_block(self, X_block, out):
        project_into(X_block, self.random_weights_.astype(out.dtype, copy=False), out)
        _ACTIVATIONS[int(self.degree)](out)
        out *= np.sqrt(2.0 / self.n_components)

    _device_attributes = ("random_weights_",)

    def _transform_block_device(self, xp, params, X_block, out):
        projections = matmul(xp, X_block, params["random_weights_"], out=out)
        if self.degree == 0:
            units = xp.astype(projections > 0, projections.dtype)
        else:
            units = xp.clip(projections, min=0.0)
            if self.degree == 2:
                units *= units
        units *= float(np.sqrt(2.0 / self.n_components))
        return units
