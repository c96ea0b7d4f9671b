r"""Randomised QMC frequencies in the principal axes of the data (``structure="principal"``).

A randomised QMC set (scrambled Sobol') integrates best along its first coordinates; the
random-feature integrand :math:`\omega\mapsto\cos\omega^\top(x-y)` varies most along the
directions in which the differences :math:`x - y` of the data vary most. So the Gaussian
coordinates of each frequency are laid along the principal axes of the training data, the
first QMC coordinate along the axis of largest variance — the principal-component
construction of QMC for Gaussian integrals (Acworth, Broadie & Glasserman, 1998; Glasserman,
*Monte Carlo Methods in Financial Engineering*, 2003, §5.5), here applied to random Fourier
features (Avron, Sindhwani, Yang & Mahoney, JMLR 2016, sample the same integrand with QMC in
the input's own coordinates).

Unbiased: the isotropic densities are Gaussian scale mixtures, :math:`\omega = \sigma z` with
:math:`z \sim \mathcal N(0, I_d)`, and for any fixed orthogonal :math:`V`,
:math:`Vz \sim \mathcal N(0, I_d)` too. With :math:`V_k` the top k axes (k = d when the sample
has at least d rows) and :math:`P = V_kV_k^\top`,

.. math::

    \omega = \sigma(u_0)\,\big(V_k\,\Phi^{-1}(u_{1..k}) + (I - P)\,h\big),
    \qquad h \sim \mathcal N(0, I_d),

where each QMC point :math:`u` is uniform on the cube, so
:math:`\omega\,|\,\sigma \sim \mathcal N(0, P + (I-P)) = \mathcal N(0, \sigma^2 I)`: each
frequency has exactly the law :math:`p`, whatever the data. The data only decide which
directions get the evenly spread coordinates, i.e. how small the variance is.

The axes come from the singular vectors of a uniform sample of at most
:data:`PRINCIPAL_SAMPLE_ROWS` centred rows (an SVD of a 256 × d matrix, cheaper than one
orthogonal block of ORF for d ≳ 256). Measured on standardised real data with median-heuristic
γ (docs/random_features.md), this beats ORF by 1.2–6× when the data's effective dimension
(the participation ratio :math:`(\sum\lambda)^2/\sum\lambda^2` of the covariance
eigenvalues) is at most about 10, and loses to it above about 12: the
``structure="auto"`` rule of :class:`~kernelmaps.RandomFourierFeatures`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from kernelmaps.kernels.spectral import open_unit_interval
from kernelmaps.maps._projection import (
    DenseProjection,
    Frequencies,
    FrequencyRequest,
    Structure,
    register_structure,
)
from kernelmaps.maps._sampling import uniform_points

__all__ = ["PRINCIPAL_SAMPLE_ROWS", "PrincipalFrame", "principal_frame",
           "principal_frequencies"]

#: Rows of the uniform sample the principal axes are computed from.
PRINCIPAL_SAMPLE_ROWS = 256


@dataclass(frozen=True)
class PrincipalFrame:
    """Principal axes of a sample of rows.

    Attributes
    ----------
    axes : ndarray of shape (n_features, k)
        Orthonormal columns, by decreasing variance (k = min(rows, n_features)).
    participation_ratio : float
        :math:`(\\sum\\lambda)^2/\\sum\\lambda^2` of the sample covariance's eigenvalues, the
        data's effective dimension (1 for data on a line, d for isotropic data); d when the
        sample has no variance.
    """

    axes: np.ndarray
    participation_ratio: float


def principal_frame(rows: np.ndarray) -> PrincipalFrame:
    """The principal axes of ``rows`` (a dense sample, any float dtype), in float64."""
    rows = np.asarray(rows, dtype=np.float64)
    n_features = rows.shape[1]
    centred = rows - rows.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    variances = singular ** 2
    total = variances.sum()
    ratio = float(total ** 2 / (variances ** 2).sum()) if total > 0 else float(n_features)
    return PrincipalFrame(np.ascontiguousarray(vt.T), ratio)


def principal_frequencies(request: FrequencyRequest) -> Frequencies:
    """Draw D′ frequencies in the principal frame (see the module docstring)."""
    density, d, size = request.density, request.n_features, request.n_frequencies
    axes = np.eye(d) if request.frame is None else request.frame
    k = axes.shape[1]
    mixture = int(density.mixture)
    points = open_unit_interval(uniform_points(request.sampling, size, mixture + k,
                                               request.random_state))
    omega = special.ndtri(points[:, mixture:]) @ axes.T
    if k < d:  # the rest of R^d: an independent Gaussian projected off the top-k axes
        rest = request.random_state.normal(size=(size, d))
        omega += rest - (rest @ axes) @ axes.T
    sigma = density.scale_ppf(points[:, 0] if mixture else np.full(size, 0.5))
    omega *= sigma[:, None]
    return Frequencies(DenseProjection(np.ascontiguousarray(omega.T)))


register_structure(Structure(
    "principal", principal_frequencies, reads_data=True, projection_types=(DenseProjection,),
    description="randomised QMC frequencies along the data's principal axes (the PCA "
                "construction of QMC); for data of low effective dimension"))
