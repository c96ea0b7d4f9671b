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

(k < d also when the spectrum has degenerate or null directions, see :data:`GAP`), where
each QMC point :math:`u` is uniform on the cube, so
:math:`\omega\,|\,\sigma \sim \mathcal N(0, P + (I-P)) = \mathcal N(0, \sigma^2 I)`: each
frequency has exactly the law :math:`p`, whatever the data. The data only decide which
directions get the evenly spread coordinates, i.e. how small the variance is.

The axes come from a uniform sample of at most :data:`PRINCIPAL_SAMPLE_ROWS` centred rows
(one ``eigh`` of a Gram matrix of at most 256 × 256, cheaper than one orthogonal block of
ORF for d ≳ 256). Measured on standardised real data with median-heuristic
γ (docs/random_features.md), with cos/sin features, it has 0.07–0.92× ORF's error at D =
256–4,096 on the nine sets whose effective dimension (the participation ratio
:math:`(\sum\lambda)^2/\sum\lambda^2` of the covariance eigenvalues) is at most 7, and
1.24× at D = 256 on digits (effective dimension 18): hence the ``structure="auto"`` rule of
:class:`~kernelmaps.RandomFourierFeatures`, principal axes up to an effective dimension of
15 (standardised Fashion-MNIST, 11.7, still gains), ORF above — a proposal that a candidate
scoring far better on the sample replaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from kernelmaps._engine import single_threaded_blas
from kernelmaps.kernels.spectral import open_unit_interval
from kernelmaps.maps._projection import DenseProjection
from kernelmaps.maps._registry import Frequencies, FrequencyRequest
from kernelmaps.maps._sampling import uniform_points

__all__ = ["GAP", "PRINCIPAL_SAMPLE_ROWS", "PrincipalCoordinates", "PrincipalFrame",
           "completed_axes", "participation_ratio", "principal_coordinates", "principal_frame",
           "principal_frequencies", "principal_weights", "sample_indices"]

#: Rows of the uniform sample the principal axes are computed from.
PRINCIPAL_SAMPLE_ROWS = 256


def sample_indices(n_samples: int, random_state: np.random.RandomState) -> np.ndarray:
    """The rows the principal axes are computed from, in the order drawn.

    All rows when there are at most :data:`PRINCIPAL_SAMPLE_ROWS` (nothing is drawn, so a
    fit given exactly the sampled rows — :func:`kernelmaps.distributed.fit` — draws the same
    numbers afterwards as the fit on all of X); otherwise a uniform sample without
    replacement, by a generator seeded from ``random_state`` (O(256) work whatever n: a
    permutation of n rows measured 35 ms at n = 10⁶).
    """
    if n_samples <= PRINCIPAL_SAMPLE_ROWS:
        return np.arange(n_samples)
    generator = np.random.default_rng(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    return generator.choice(n_samples, PRINCIPAL_SAMPLE_ROWS, replace=False)


@dataclass(frozen=True)
class PrincipalFrame:
    """Principal axes of a sample of rows.

    Attributes
    ----------
    axes : ndarray of shape (n_features, k)
        Orthonormal columns, by decreasing variance: the leading axes whose eigenvalues are
        separated from their neighbours (k ≤ min(rows, n_features); see
        :func:`principal_frame`).
    participation_ratio : float
        :math:`(\\sum\\lambda)^2/\\sum\\lambda^2` of the sample covariance's eigenvalues, the
        data's effective dimension (1 for data on a line, d for isotropic data); d when the
        sample has no variance.
    """

    axes: np.ndarray
    participation_ratio: float


#: Relative eigenvalue gap (to the largest eigenvalue) below which two principal axes count as
#: one degenerate direction. Eigenvectors of eigenvalues closer than this are determined by
#: rounding (another BLAS, CPU or memory address could return another basis of their span),
#: so the frame keeps only the leading axes that are separated from both neighbours by more,
#: and leaves the rest of R^d — together with the directions of negligible variance — to
#: independent Gaussian coordinates, which are the same on every machine. A rounding error
#: ε of the sample then moves a kept axis by at most about ε/GAP (≈ 1e-8 relative).
GAP = 1e-8


def principal_frame(rows: np.ndarray) -> PrincipalFrame:
    """The principal axes of ``rows`` (a dense sample, any float dtype), in float64.

    From the eigenvectors of the smaller of the two Gram matrices of the centred sample
    (d × d, or rows × rows when d is larger; at most 256 × 256): the axes are only a frame
    for the QMC coordinates, so the squared condition number of a Gram matrix costs nothing
    that matters, and one small ``eigh`` is 5–10× faster than an SVD of the sample.

    The axes are those a computation equal to rounding reproduces: the leading ones whose
    eigenvalues are separated from their neighbours by more than :data:`GAP` of the
    largest (so no basis of a degenerate or null subspace, which rounding decides), each
    with its sign fixed by a fixed reference vector (eigensolvers fix no sign).
    """
    rows = np.asarray(rows, dtype=np.float64)
    n_features = rows.shape[1]
    centred = rows - rows.mean(axis=0)
    # Small problems: BLAS threads cost more than they save (measured 40× slower, 0.8 s
    # instead of 20 ms, for an SVD of 256 × 64 on a loaded 2-core machine).
    with single_threaded_blas():
        gram = _gram(centred)
        if n_features <= centred.shape[0]:
            variances, axes = np.linalg.eigh(gram)
            variances, axes = variances[::-1], axes[:, ::-1]
        else:
            variances, vectors = np.linalg.eigh(gram)
            variances, vectors = variances[::-1], vectors[:, ::-1]
            axes = centred.T @ vectors  # the row-space axes, scaled by their σ (see below)
    variances = np.clip(variances, 0.0, None)
    ratio = _participation(gram, n_features)
    kept = _separated(variances)
    axes = axes[:, :kept]
    if n_features > centred.shape[0] and kept:  # Xᵀu/σ, orthonormalised once more
        with single_threaded_blas():
            axes = np.linalg.qr(axes / np.sqrt(variances[:kept]))[0]
    axes = axes * np.where(axes.T @ _reference(n_features) < 0, -1.0, 1.0)
    return PrincipalFrame(np.ascontiguousarray(axes), ratio)


def completed_axes(axes: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray | None:
    """A frame of ``k`` axes for a draw scored in ``axes`` (the frame of part of a sample) and
    kept in the frame of the whole sample ``rows``, which has ``k`` axes: the first k of
    ``axes``, or all of them followed by the principal axes of the whole sample's variance
    outside their span — so one draw of k coordinates serves both frames.

    None where that is not well defined: d above the rows (only the d × d Gram matrix is
    used), or the leading ``k - axes.shape[1]`` eigenvalues of the variance outside the span
    not separated from their neighbours by :data:`GAP` × the sample's total variance (the
    same rule as :func:`principal_frame`, so rounding cannot choose among them).

    Parameters
    ----------
    axes : ndarray of shape (d, k_a)
        Orthonormal axes (:func:`principal_frame` of part of ``rows``).
    rows : ndarray of shape (n, d)
        The whole sample.
    k : int
        The axes the whole sample's frame has.

    Returns
    -------
    ndarray of shape (d, k) or None
    """
    if k <= axes.shape[1]:
        return axes[:, :k]
    rows = np.asarray(rows, dtype=np.float64)
    n_features, missing = rows.shape[1], k - axes.shape[1]
    if n_features > rows.shape[0]:
        return None
    centred = rows - rows.mean(axis=0)
    with single_threaded_blas():
        outside = centred - (centred @ axes) @ axes.T
        variances, vectors = np.linalg.eigh(_gram(outside))
    variances = np.clip(variances[::-1], 0.0, None)
    if not np.all(-np.diff(variances[:missing + 1]) > GAP * float(np.sum(centred * centred))):
        return None
    extra = vectors[:, ::-1][:, :missing]
    extra = extra * np.where(extra.T @ _reference(n_features) < 0, -1.0, 1.0)
    return np.ascontiguousarray(np.hstack([axes, extra]))


def participation_ratio(rows: np.ndarray) -> float:
    """The effective dimension of ``rows`` as :func:`principal_frame` gives it, without the
    axes (no eigensolver: at d = 784 the frame's ``eigh`` and QR took 15 ms of a 256-row
    sample, this 1 ms): what ``structure="auto"`` reads when it needs no axes."""
    rows = np.asarray(rows, dtype=np.float64)
    with single_threaded_blas():
        return _participation(_gram(rows - rows.mean(axis=0)), rows.shape[1])


def _gram(centred: np.ndarray) -> np.ndarray:
    """The smaller of the centred sample's two Gram matrices (same nonzero eigenvalues)."""
    return centred.T @ centred if centred.shape[1] <= centred.shape[0] else centred @ centred.T


def _participation(gram: np.ndarray, n_features: int) -> float:
    r""":math:`(\sum\lambda)^2/\sum\lambda^2` of the Gram's eigenvalues, as
    :math:`\operatorname{tr}(G)^2/\|G\|_F^2`; d when the sample has no variance (or one
    too large for its Gram to be finite). The ratio is scale-free, so a Gram whose squares
    would underflow (a sample of values near 1e-90: ``‖G‖²`` rounds to 0) or overflow is
    divided by its trace first; others are computed as they are."""
    total = float(np.trace(gram))
    if not 0 < total < np.inf:
        return float(n_features)
    if not 1e-150 < total < 1e150:
        gram, total = gram / total, 1.0
    return total ** 2 / float(np.sum(gram * gram))


def _separated(variances: np.ndarray) -> int:
    """How many leading eigenvalues are each separated from both neighbours (and from 0)
    by more than GAP × the largest."""
    if len(variances) == 0 or variances[0] <= 0:
        return 0
    gaps = -np.diff(np.append(variances, 0.0)) > GAP * variances[0]  # λᵢ − λᵢ₊₁
    separated = gaps & np.concatenate([[True], gaps[:-1]])  # and λᵢ₋₁ − λᵢ
    return int(np.argmin(separated)) if not separated.all() else len(variances)


def _reference(n_features: int) -> np.ndarray:
    # A fixed direction with no structure of its own (cos j): an axis is never orthogonal to
    # it except by coincidence, so its sign is a well-defined, continuous choice.
    return np.cos(np.arange(1.0, n_features + 1.0))


@dataclass(frozen=True)
class PrincipalCoordinates:
    r"""The random part of a principal draw, which any frame of k axes takes.

    Attributes
    ----------
    gaussian : ndarray of shape (D′, k)
        :math:`\Phi^{-1}(u_{1..k})`: the QMC coordinates along the k axes.
    rest : ndarray of shape (d, D′) or None
        The independent Gaussian for the rest of :math:`\mathbb R^d` (None when k = d).
    radius : ndarray of shape (D′,)
        :math:`\sigma(u_0)` of the scale mixture.
    """

    gaussian: np.ndarray
    rest: np.ndarray | None
    radius: np.ndarray


def principal_coordinates(density, n_features: int, size: int, k: int,
                          random_state: np.random.RandomState,
                          sampling: str) -> PrincipalCoordinates:
    """Draw the coordinates of D′ = ``size`` frequencies for a frame of ``k`` axes."""
    mixture = int(density.mixture)
    points = open_unit_interval(uniform_points(sampling, size, mixture + k, random_state))
    rest = random_state.normal(size=(n_features, size)) if k < n_features else None
    return PrincipalCoordinates(
        special.ndtri(points[:, mixture:]), rest,
        density.scale_ppf(points[:, 0] if mixture else np.full(size, 0.5)))


def principal_weights(axes: np.ndarray, coordinates: PrincipalCoordinates) -> np.ndarray:
    """The (d, D′) frequencies of ``coordinates`` in the frame ``axes`` (d × k):
    ``structure="auto"`` scores a draw in its sample's first half's axes and keeps it in the
    whole sample's (same k: same random numbers, no second draw)."""
    weights = axes @ coordinates.gaussian.T  # (d, D′): the frequencies
    if coordinates.rest is not None:  # the rest of R^d: projected off the top-k axes
        rest = coordinates.rest
        weights += rest - axes @ (axes.T @ rest)
    weights *= coordinates.radius
    return weights


def principal_frequencies(request: FrequencyRequest) -> Frequencies:
    """Draw D′ frequencies in the principal frame (see the module docstring)."""
    d = request.n_features
    axes = np.eye(d) if request.frame is None else request.frame
    coordinates = principal_coordinates(request.density, d, request.n_frequencies,
                                        axes.shape[1], request.random_state, request.sampling)
    return Frequencies(DenseProjection(principal_weights(axes, coordinates)))
