r"""Stochastic spherical-radial quadrature features (``structure="quadrature"``).

The rule (Genz & Monahan, 1998; Munkhoeva et al., 2018) with its classic centre term
replaced by pairs of radii s < d < t (below :data:`PER_VERTEX_MIN_FEATURES` inputs) or by a
radius per vertex with self-normalised weights (from it on), so the map stays explicit and
unbiased, is derived in the user guide: docs/random_features.md, "The quadrature structure,
derived".
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import special

from kernelmaps._linalg import cholesky_in_place
from kernelmaps.kernels.spectral import invert_cdf, open_unit_interval
from kernelmaps.maps._projection import DenseProjection
from kernelmaps.maps._registry import Frequencies, FrequencyRequest
from kernelmaps.maps._sampling import self_normalised_chi2, uniform_points
from kernelmaps.maps._structured import haar_frame

__all__ = ["PER_VERTEX_MIN_FEATURES", "paired_radial_rule", "quadrature_frequencies",
           "regular_simplex", "rotated_simplex"]

#: From this many input features on, each vertex of a rule takes its own radius (the
#: published rule's form, with self-normalised weights); below it, each rule's vertices share
#: one pair of radii s < d < t. Measured (docs/random_features.md, "Against the published
#: constructions": standardised sets, cos/sin, 8 seeds, median heuristic × 0.1 / 1 / 10,
#: D = 256 and 1,024), per-vertex over paired error: 0.90–2.01 on iris (d = 4), 1.00–1.12 on
#: diabetes (10); 0.53–1.14, mean 0.90, on wine (13), breast_cancer (30) and digits (64); on
#: the first k columns of breast_cancer and the k most varied of digits, 0.99–1.55 at
#: k = 6 and 8, 0.94–1.08 at 10, 0.68–1.01 at 11 and 0.77–0.98 at 12; in the quadrature
#: paper's setting 0.97–1.03× its published rule on digits and 1.01× on Fashion-MNIST
#: (pairs: 1.05–1.12× and 1.19×).
PER_VERTEX_MIN_FEATURES = 11


@cache
def _simplex(n_features: int) -> np.ndarray:
    if n_features == 1:
        simplex = np.ones((1, 1))  # {−1, +1}: one direction for the even integrand cos
    else:
        # Columns of the Helmert basis of the hyperplane Σ xᵢ = 0 in R^{d+1}: row k is
        # (1, …, 1, −k, 0, …)/√(k(k+1)). Column i is vertex i, of squared norm d/(d+1).
        d = n_features
        helmert = np.zeros((d, d + 1))
        for k in range(1, d + 1):
            helmert[k - 1, :k] = 1.0
            helmert[k - 1, k] = -k
            helmert[k - 1] /= np.sqrt(k * (k + 1.0))
        simplex = helmert.T * np.sqrt((d + 1.0) / d)
    simplex.flags.writeable = False
    return simplex


def regular_simplex(n_features: int) -> np.ndarray:
    """The d + 1 unit vertices of a regular simplex centred at 0, shape (d + 1, d).

    Pairwise inner products are −1/d and :math:`\\sum_j v_jv_j^\\top = \\tfrac{d+1}{d}I`
    (a spherical 2-design). For d = 1 the one direction (1,) (see the module docstring).
    """
    return _simplex(int(n_features))


@cache
def _simplex_gram_factor(n_features: int, k: int) -> np.ndarray:
    d = n_features
    gram = (1.0 + 1.0 / d) * np.eye(k) - 1.0 / d  # k vertices: ⟨v_i, v_j⟩ = −1/d
    # Positive definite for k <= d (its one null vector needs all d + 1 vertices), so the
    # first, unshifted attempt factorises it: L = Rᵀ, bitwise NumPy's lower factor.
    upper, _ = cholesky_in_place(gram, 0.0, what="simplex Gram matrix")
    factor = np.ascontiguousarray(np.triu(upper).T)
    factor.flags.writeable = False
    return factor


def rotated_simplex(n_features: int, k: int, random_state: np.random.RandomState
                    ) -> np.ndarray:
    r"""k vertices of a Haar-rotated regular simplex in R^d, shape (k, d) (k ≤ d + 1).

    All d + 1 vertices: the simplex times a Haar rotation. Fewer (the last, partial rule):
    the same law at O(d·k²) cost — k vectors with the simplex's Gram matrix
    :math:`(1 + 1/d)I - \tfrac1d\mathbf 1\mathbf 1^\top` (its Cholesky factor) in a Haar
    k-frame, so each vertex is uniform on the sphere and the k of them are placed as k
    vertices of a rotated simplex.
    """
    d = n_features
    if d == 1 or k == d + 1:
        return regular_simplex(d) @ haar_frame(d, d, random_state)
    return _simplex_gram_factor(d, k) @ haar_frame(d, k, random_state)


def paired_radial_rule(n_features: int, U: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Squared radii :math:`s < d < t` and weights :math:`w_s, w_t` from uniforms.

    Parameters
    ----------
    n_features : int
        d; the radial law is :math:`\chi^2_d`.
    U : ndarray of shape (n, 3)
        Points of the unit cube: the mixture component, then s, then t.

    Returns
    -------
    s, t, w_s, w_t : ndarrays of shape (n,)
        See the module docstring: :math:`\mathbb E[w_s g(s) + w_t g(t)] = \mathbb E g(\chi^2_d)`.
    """
    d = float(n_features)
    a = d / 2.0
    U = open_unit_interval(U)
    mass_below = special.gammainc(a, a)  # F(d): probability of the first component

    def log_e(x):  # log e(x), e(x) = (x/2)^{d/2} e^{-x/2} / Γ(d/2 + 1)
        return a * np.log(0.5 * x) - 0.5 * x - special.gammaln(a + 1.0)

    log_e_mode = log_e(d)

    def lower_law(x):  # s on (0, d) with CDF e(s)/e(d)
        inside = x < d
        ratio = np.exp(log_e(np.where(inside, x, d)) - log_e_mode)
        return np.where(inside, ratio, 1.0), np.where(inside, ratio * (a / x - 0.5), 0.0)

    def upper_law(x):  # t on (d, ∞) with CDF 1 − e(t)/e(d)
        ratio = np.exp(log_e(np.maximum(x, d)) - log_e_mode)
        return 1.0 - ratio, ratio * np.maximum(0.5 - a / x, 0.0)

    def lambert_start(log_ratio, branch):
        # e(x)/e(d) = r solves a·log z − z = log r + a·log a − a (z = x/2), i.e.
        # z = −a·W(−(r^{1/a})/e): branch 0 below d, −1 above; Newton then polishes it.
        argument = -np.exp(log_ratio / a - 1.0)
        return -2.0 * a * special.lambertw(np.maximum(argument, -np.exp(-1.0)), branch).real

    first = U[:, 0] < mass_below
    s = np.empty(len(U))
    t = np.empty(len(U))
    # First component: s from χ²_d below d, t from ∝ (t − d) p(t) above d.
    s[first] = 2.0 * special.gammaincinv(a, U[first, 1] * mass_below)
    t[first] = invert_cdf(upper_law, U[first, 2],
                          np.maximum(lambert_start(np.log1p(-U[first, 2]), -1), d), lower=d)
    # Second component: s from ∝ (d − s) p(s) below d, t from χ²_d above d (by its upper
    # tail, which stays finite for a coordinate next to 1).
    second = ~first
    s[second] = invert_cdf(lower_law, U[second, 1],
                           np.minimum(lambert_start(np.log(U[second, 1]), 0), d))
    t[second] = 2.0 * special.gammainccinv(a, (1.0 - U[second, 2]) * (1.0 - mass_below))
    # Rounding can put a node a hair across d (a weight of −1e-16); both at d (probability
    # zero) is the limit of the rule, weights ½ and ½.
    s, t = np.minimum(s, d), np.maximum(t, d)
    span = t - s
    degenerate = span == 0
    span[degenerate] = 1.0
    w_s = np.where(degenerate, 0.5, (t - d) / span)
    w_t = np.where(degenerate, 0.5, (d - s) / span)
    return s, t, w_s, w_t


def quadrature_frequencies(request: FrequencyRequest) -> Frequencies:
    """Draw the spherical-radial rules: paired radii per rule below
    :data:`PER_VERTEX_MIN_FEATURES` inputs, a radius per vertex from it on."""
    if request.n_features >= PER_VERTEX_MIN_FEATURES:
        return _per_vertex_frequencies(request)
    density, d, random_state = request.density, request.n_features, request.random_state
    n_frequencies = request.n_frequencies  # even (the structure rounds it)
    simplex = regular_simplex(d)
    vertices = simplex.shape[0]
    n_rules = -(-(n_frequencies // 2) // vertices)
    mixture = int(density.mixture)
    points = uniform_points(request.sampling, n_rules, 3 + mixture, random_state)
    s, t, w_s, w_t = paired_radial_rule(d, points[:, mixture:])
    sigma = density.scale_ppf(points[:, 0] if mixture else np.full(n_rules, 0.5))
    omega = np.zeros((n_rules, vertices, 2, d))
    last = n_frequencies // 2 - (n_rules - 1) * vertices  # vertices of the last rule
    for rule in range(n_rules):
        used = vertices if rule < n_rules - 1 else last
        for node in range(2):
            omega[rule, :used, node] = rotated_simplex(d, used, random_state)
    omega *= (sigma[:, None] * np.sqrt(np.stack([s, t], axis=1)))[:, None, :, None]
    weights = np.broadcast_to(np.stack([w_s, w_t], axis=1)[:, None, :],
                              (n_rules, vertices, 2))
    # Rules in order, and in each the pairs (vertex j at s, vertex j at t) adjacent, so the
    # truncation to D′ keeps whole pairs.
    omega = omega.reshape(-1, d)[:n_frequencies]
    weights = weights.reshape(-1)[:n_frequencies] * (2.0 / n_frequencies)
    return Frequencies(DenseProjection(np.ascontiguousarray(omega.T)),
                       np.ascontiguousarray(weights))


def _per_vertex_frequencies(request: FrequencyRequest) -> Frequencies:
    r"""Rules whose every vertex has its own squared radius :math:`x_i`, weights
    :math:`w_i = x_i^{-1}/\sum_j x_j^{-1}`.

    The radii and weights of all D′ frequencies are one draw of
    :func:`~kernelmaps.maps._sampling.self_normalised_chi2` with d degrees of freedom, so
    :math:`E\sum_i w_i g(x_i) = E g(\chi^2_d)` for every g; the directions (rotated simplices)
    and the scales σ of a scale mixture (one per rule) are independent of the radii and each
    marginally uniform on the sphere resp. the mixing law, so
    :math:`E\sum_i w_i \cos(\sigma\sqrt{x_i}\,v_i^\top\delta) = k(\delta)` exactly.
    """
    density, d, random_state = request.density, request.n_features, request.random_state
    n_frequencies = request.n_frequencies
    vertices = d + 1
    n_rules = -(-n_frequencies // vertices)
    squared, weights = self_normalised_chi2(d, n_frequencies, random_state, request.sampling)
    if density.mixture:
        sigma = density.scale_ppf(uniform_points(request.sampling, n_rules, 1,
                                                 random_state)[:, 0])
    else:
        sigma = density.scale_ppf(np.full(n_rules, 0.5))
    last = n_frequencies - (n_rules - 1) * vertices  # vertices of the last rule
    omega = np.vstack([rotated_simplex(d, vertices if rule < n_rules - 1 else last,
                                       random_state) for rule in range(n_rules)])
    omega *= (np.repeat(sigma, vertices)[:n_frequencies] * np.sqrt(squared))[:, None]
    return Frequencies(DenseProjection(np.ascontiguousarray(omega.T)),
                       np.ascontiguousarray(weights))
