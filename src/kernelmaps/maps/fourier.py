r"""Random Fourier features for shift-invariant kernels.

:class:`RBFSampler` is the scikit-learn-compatible face: same parameters, same random draws
(in the same order and shapes), same numbers, on the shared chunked engine.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._base import FeatureMap

__all__ = ["RBFSampler"]


def cos_features_into(projection_into, X_block: Any, weights: np.ndarray,
                      offset: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out = scale · cos(P + offset)`` where ``projection_into`` writes P into ``out``.

    Shared by every "cosine with random offset" map (RBFSampler, SkewedChi2Sampler): one
    BLAS product written straight into the output block, then three in-place passes over a
    block that is still in cache.
    """
    projection_into(X_block, weights, out)
    out += offset
    np.cos(out, out=out)
    out *= scale


def project_into(X_block: Any, weights: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = X_block @ weights`` (BLAS in place for dense, scipy for CSR)."""
    if sp.issparse(X_block):
        out[...] = X_block @ weights
    else:
        np.matmul(X_block, weights, out=out)


class RBFSampler(FeatureMap):
    r"""Random Fourier features approximating the Gaussian (RBF) kernel.

    Implements random kitchen sinks (Rahimi & Recht, 2007):

    .. math::

        z(x) = \sqrt{2/D}\,\cos(W^\top x + b), \qquad
        W_{ij} \sim \mathcal N(0, 2\gamma), \quad b_j \sim \mathcal U[0, 2\pi),

    so that :math:`\mathbb E[z(x)^\top z(y)] = \exp(-\gamma\|x-y\|^2)`.

    A drop-in replacement for :class:`sklearn.kernel_approximation.RBFSampler`: same
    parameters and fitted attributes, and for the same ``random_state`` the same output
    (the random weights are drawn in the same order and shapes). Transform runs in
    cache-sized row blocks on threads (see :func:`kernelmaps.set_config`), writes into one
    preallocated output, preserves float32 and accepts CSR input.

    Parameters
    ----------
    gamma : 'scale' or float, default=1.0
        Parameter of the RBF kernel :math:`\exp(-\gamma\|x-y\|^2)`. ``'scale'`` uses
        ``1 / (n_features * X.var())`` (1 if the variance is zero).
    n_components : int, default=100
        Number of Monte Carlo samples D, the output dimension.
    random_state : int, RandomState instance or None, default=None
        Controls the random weights and offsets.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, n_components)
        The frequencies W, float32 when fitted on float32 data.
    random_offset_ : ndarray of shape (n_components,)
        The phases b.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when they are all strings.

    References
    ----------
    A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel Machines", NeurIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RBFSampler
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    >>> RBFSampler(gamma=0.5, n_components=4, random_state=0).fit_transform(X).shape
    (3, 4)
    """

    _parameter_constraints: dict = {
        "gamma": [StrOptions({"scale"}), Interval(Real, 0.0, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, gamma: float | str = 1.0, n_components: int = 100,
                 random_state: Any = None) -> None:
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, random_state):
        n_features = X.shape[1]
        if isinstance(self.gamma, str):  # 'scale'
            sparse = sp.issparse(X)
            variance = X.multiply(X).mean() - X.mean() ** 2 if sparse else X.var()
            self._gamma = 1.0 / (n_features * variance) if variance != 0 else 1.0
        else:
            self._gamma = self.gamma
        # Same draws, order and shapes as scikit-learn: normal weights, then offsets.
        self.random_weights_ = (2.0 * self._gamma) ** 0.5 * random_state.normal(
            size=(n_features, self.n_components)
        )
        self.random_offset_ = random_state.uniform(0, 2 * np.pi, size=self.n_components)
        if X.dtype == np.float32:
            self.random_weights_ = self.random_weights_.astype(np.float32)
            self.random_offset_ = self.random_offset_.astype(np.float32)
        return self.n_components

    def _transform_block(self, X_block, out):
        cos_features_into(project_into, X_block, self.random_weights_, self.random_offset_,
                          (2.0 / self.n_components) ** 0.5, out)
