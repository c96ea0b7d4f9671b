r"""Random features for the arc-cosine kernels: random sign / ReLU / squared-ReLU units.

:class:`ArcCosineSampler` is the "random hashing" map of one infinitely wide layer of
step, ReLU or squared-ReLU units with Gaussian weights, whose kernel is
:class:`kernelmaps.kernels.ArcCosineKernel` (Cho & Saul, NeurIPS 2009), with the weights
drawn i.i.d., in orthogonal or Hadamard blocks (the projection structures of
:data:`kernelmaps.maps.STRUCTURES`, for the Gaussian law N(0, I)), or as the spherical rule
derived below (``"quadrature"``).

The spherical-radial rule for the arc-cosine kernels, derived
-------------------------------------------------------------
With :math:`f(w) = \Theta(w^\top x)\Theta(w^\top y)(w^\top x)^n(w^\top y)^n`, the kernel is
:math:`k_n(x, y) = 2\,\mathbb E_{w\sim\mathcal N(0, I)} f(w)`. Write :math:`w = r v` with
:math:`r \sim \chi_d` and v uniform on the sphere, independent. f is positively homogeneous
of degree 2n, :math:`f(rv) = r^{2n} f(v)`, so the radial integral is exact and analytic:

.. math::

    \mathbb E f(w) = \mathbb E[r^{2n}]\;\mathbb E_v f(v) = \rho_n^{2n}\,\mathbb E_v f(v),
    \qquad \rho_n^{2n} = \mathbb E\chi_d^{2n} = \frac{2^n\Gamma(d/2 + n)}{\Gamma(d/2)}
    = \prod_{j=0}^{n-1}(d + 2j),

i.e. 1, d and d(d + 2) for n = 0, 1, 2: every unit is put at the one radius
:math:`\rho_n` (any radius for n = 0, where f does not depend on it; √d is used), and the
radial rule has no error left. The spherical integral is the symmetric degree-3 rule of
Genz & Monahan (1998) used by Munkhoeva et al. (2018): the d + 1 vertices :math:`v_j` of a
Haar-rotated regular simplex and their antipodes,

.. math::

    \mathbb E_v f(v) \approx \frac1{2(d+1)}\sum_{j=1}^{d+1} \big[f(Qv_j) + f(-Qv_j)\big],

unbiased because each :math:`Qv_j` is uniform on the sphere. The antipodes do most of the
work: with :math:`a = v^\top x` and :math:`b = v^\top y`, :math:`f(v) + f(-v)` is
:math:`\tfrac12(1 + \operatorname{sgn}a\operatorname{sgn}b)` for n = 0,
:math:`\tfrac12(ab + |a||b|)` for n = 1 and :math:`\tfrac12(a^2b^2 + a|a|\,b|b|)` for
n = 2: the constant ½ (n = 0) and the bilinear part :math:`x^\top y/(2d)` (n = 1) are
integrated exactly by the rotated simplex (a spherical 2-design), and only the remainder
is estimated.
D units are :math:`\lceil D/2\rceil` directions in rules of d + 1 (independent rotations;
the last rule keeps the vertices it needs), each with its antipode but the last one when
D is odd, which counts twice instead (:math:`2f(v)` has the mean of
:math:`f(v) + f(-v)`), so D is never rounded and the estimate stays unbiased:

.. math::

    z(x) = \Big[\sqrt{c_i/m}\;\Theta(\omega_i^\top x)(\omega_i^\top x)^n\Big]_{i=1}^{D},
    \quad m = \lceil D/2\rceil,\quad c_i = 2 \text{ for an unpaired unit, else } 1,

with :math:`\omega_i = \pm\rho_n Q v_j`. For n = 1 this is Munkhoeva et al.'s rule (their
radius :math:`\chi_{d+2}` cancels against its weight), with Haar rotations where their code
uses butterfly matrices; for n = 0 the exact radial moment replaces their random radius,
weight and centre term (measured: equal error within 3.5 %); n = 2 is not in their paper.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Options, StrOptions

from kernelmaps._array_api import host_dtype
from kernelmaps._engine import clamp
from kernelmaps.kernels import get_kernel, resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._projection import DenseProjection
from kernelmaps.maps._quadrature import regular_simplex, rotated_simplex
from kernelmaps.maps._registry import STRUCTURES, FrequencyRequest
from kernelmaps.maps._structure_policy import auto_arccos_structure
from kernelmaps.maps._structured import sorf_frequencies

__all__ = ["ARCCOS_STRUCTURES", "ArcCosineSampler", "moment_radius", "spherical_rule"]

#: The structures of :class:`ArcCosineSampler` (``"auto"`` chooses among them).
ARCCOS_STRUCTURES = ("iid", "orthogonal", "structured", "quadrature")


def _step_into(out: np.ndarray) -> None:
    # Θ(p): a bool comparison cast back into the float block (no temporary).
    np.greater(out, 0.0, out=out)


def _relu_into(out: np.ndarray) -> None:
    clamp(out, low=0.0)


def _squared_relu_into(out: np.ndarray) -> None:
    clamp(out, low=0.0)
    np.square(out, out=out)


#: Θ(p)·pⁿ in place, by degree n.
_ACTIVATIONS = {0: _step_into, 1: _relu_into, 2: _squared_relu_into}


def moment_radius(n_features: int, degree: int) -> float:
    r"""The radius :math:`\rho_n = (\mathbb E\chi_d^{2n})^{1/(2n)}` of the quadrature units.

    :math:`\mathbb E\chi_d^{2n} = \prod_{j<n}(d + 2j)`; for n = 0 any radius gives the same
    features, and :math:`\sqrt d` (the radius for n = 1) is returned.

    Parameters
    ----------
    n_features : int
        d.
    degree : int
        n.

    Returns
    -------
    float
    """
    if degree == 0:
        return math.sqrt(n_features)
    moment = math.prod(n_features + 2.0 * j for j in range(degree))
    return moment ** (1.0 / (2 * degree))


def spherical_rule(n_features: int, n_components: int,
                   random_state: np.random.RandomState) -> tuple[np.ndarray, np.ndarray | float]:
    r"""Unit directions and scales of the symmetric simplex rule for D units.

    Parameters
    ----------
    n_features : int
        d.
    n_components : int
        D, the number of units (odd D: the last direction has no antipode).
    random_state : RandomState
        The rotations' source.

    Returns
    -------
    directions : ndarray of shape (n_components, n_features)
        :math:`\pm Qv_j` on the unit sphere, each direction next to its antipode.
    scale : float or ndarray of shape (n_components,)
        :math:`\sqrt{c_i/m}` (see the module docstring): the float :math:`\sqrt{2/D}` for an
        even D.
    """
    d, D = n_features, n_components
    m, pairs = -(-D // 2), D // 2
    vertices = regular_simplex(d).shape[0]
    rules = [rotated_simplex(d, min(vertices, m - start), random_state)
             for start in range(0, m, vertices)]
    omega = np.vstack(rules)
    paired = np.stack([omega[:pairs], -omega[:pairs]], axis=1).reshape(2 * pairs, d)
    directions = np.vstack([paired, omega[pairs:]])
    if D % 2 == 0:
        return directions, math.sqrt(2.0 / D)
    scale = np.full(D, math.sqrt(1.0 / m))
    scale[-1] = math.sqrt(2.0 / m)
    return directions, scale


class ArcCosineSampler(FeatureMap):
    r"""Random features of the arc-cosine kernel of degree 0, 1 or 2.

    With weights :math:`w_1, \dots, w_D`, each marginally :math:`\mathcal N(0, I)`, and the
    Heaviside step Θ,

    .. math::

        z(x) = \sqrt{2/D}\;\big[\Theta(w_i^\top x)\,(w_i^\top x)^n\big]_{i=1}^{D},
        \qquad \mathbb E[z(x)^\top z(y)] = k_n(x, y)
        = \tfrac1\pi\|x\|^n\|y\|^n J_n(\theta),

    the arc-cosine kernel (Cho & Saul, 2009; :class:`kernelmaps.kernels.ArcCosineKernel`,
    ``get_kernel("arccos", degree=n)``): random sign features (n = 0, a Monte Carlo
    estimate of :math:`1 - \theta/\pi`), ReLU features (n = 1) and squared-ReLU features
    (n = 2).

    **Structure** (``structure``) — how the weights are drawn:

    ``"iid"``
        independent Gaussian weights (Cho & Saul's features; the numbers of earlier
        versions); error :math:`\propto 1/\sqrt D`.
    ``"orthogonal"``
        orthogonal random features (the ``"orthogonal"`` structure of
        :class:`~kernelmaps.RandomFourierFeatures` for N(0, I): the D × d block of one Haar
        orthogonal matrix of order max(D, d), rows scaled by :math:`\chi_{\max(D, d)}`
        radii, as Munkhoeva et al.'s "Gort" — each weight exactly N(0, I)); unbiased. The
        measurements below predate this construction (they used Yu et al.'s stacked d × d
        blocks with :math:`\chi_d` radii).
    ``"structured"``
        SORF rows :math:`HD_1HD_2HD_3` with :math:`\chi_{d_{pad}}` radii (the blocks of
        that map's ``"structured"``, which also weights its radii: these features take no
        weights); O(D log d) per row, only asymptotically unbiased;
        D rounds up to a multiple of :math:`d_{pad} = 2^{\lceil\log_2 d\rceil}`.
    ``"quadrature"``
        the symmetric spherical rule with the exact radial moment (module docstring:
        Haar-rotated simplices and their antipodes at radius :math:`\rho_n`); unbiased,
        D exact.
    ``"auto"`` (default)
        chosen at fit and stored in ``structure_``; the rule: ``"quadrature"``
        up to 4,096 input features, ``"iid"`` above (the rotations cost O(d³) per d + 1
        units). Measured (``python -m benchmarks quality --kernels arccos``, 2026-11-28,
        load average ≈ 15 on 2 cores: relative Frobenius error of K(A, B) on two disjoint
        draws of at most 550 rows, mean of 10 seeds; standardised iris, wine, diabetes,
        breast_cancer, digits and Fashion-MNIST at D = 256 and 1,024 — 12 cells per degree
        — and the quadrature paper's settings, rows divided by their largest value, D =
        2n(d + 1) for n = 1, 2, 3 on digits and Fashion-MNIST — 6 cells), the error of the
        best other structure and of ``"iid"`` (the earlier default) over the quadrature
        rule's:

        ======  ==========================  ==========================
        degree  best other / quadrature     iid / quadrature
                (standardised; paper's)     (standardised; paper's)
        ======  ==========================  ==========================
        0       1.29 – 1.81; 1.47 – 1.86    1.30 – 1.97; 1.47 – 2.02
        1       1.08 – 7.65; 7.69 – 10.92   1.20 – 11.32; 9.12 – 12.67
        2       0.99 – 5.13; 1.50 – 2.13    1.15 – 6.67; 1.50 – 2.65
        ======  ==========================  ==========================

        The quadrature rule was the best structure in 35 of the 36 cells, and in the 36th
        (Fashion-MNIST, d = 784, degree 2, D = 256: fewer units than one rule has) 1.3 %
        above ``"orthogonal"``, within the seeds' spread. The gains are largest where
        whole rules fit (D ≥ 2(d + 1)) and for degree 1, whose bilinear part the rule
        integrates exactly. Fit draws one QR factorisation per rule: O(d³), measured
        (one BLAS thread) 0.24 s against iid's 0.09 s at d = 784, D = 1,024; transform is
        the same product.

    **Rounding of n_components**: only ``"structured"`` changes D (to whole Hadamard
    blocks); it is visible in ``n_features_out_``, ``get_feature_names_out()`` and, before
    fitting, :meth:`n_features_out_for`.

    Transform is one product with the weights (CSR input stays sparse, but for
    ``"structured"``, which densifies row blocks) and one or two in-place passes; float32
    is preserved.

    Parameters
    ----------
    degree : {0, 1, 2}, default=1
        The degree n: 0 step, 1 ReLU, 2 squared ReLU.
    n_components : int, default=100
        Number of random units D (the output dimension; see the rounding above).
    structure : {"auto", "iid", "orthogonal", "structured", "quadrature"}, default="auto"
        How the weights are drawn (see above). Before 0.2 (Unreleased) the only form was
        ``"iid"``: pass it to get the earlier numbers.
    random_state : int, RandomState instance or None, default=None
        Controls the weights.

    Attributes
    ----------
    kernel_ : ArcCosineKernel
        The kernel approximated.
    structure_ : str
        The structure used (``structure``, or what ``"auto"`` chose).
    projection_ : Projection
        The weights (a :class:`~kernelmaps.maps.Projection`): ``weights`` of shape
        (n_features_in_, D) for the dense structures (the :math:`w_i` as columns); the
        Hadamard blocks' ``signs`` and ``row_scale`` for ``"structured"``. Float arrays are
        float32 when fitted on float32.
    n_features_out_ : int
        D, the number of units after rounding.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when they are all strings.

    References
    ----------
    Y. Cho and L. K. Saul, "Kernel Methods for Deep Learning", NeurIPS 2009.
    F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice and S. Kumar, "Orthogonal
    Random Features", NeurIPS 2016.
    A. Genz and J. Monahan, "Stochastic Integration Rules for Infinite Regions", SIAM J.
    Sci. Comput. 19, 1998.
    M. Munkhoeva, Y. Kapushev, E. Burnaev and I. Oseledets, "Quadrature-based Features for
    Kernel Approximation", NeurIPS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.maps.arccos import ArcCosineSampler
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> sampler = ArcCosineSampler(degree=1, n_components=2000, random_state=0).fit(X)
    >>> sampler.structure_
    'quadrature'
    >>> Z = sampler.transform(X)
    >>> round(float(Z[0] @ Z[1]), 2)  # k_1 at a right angle: 1/π ≈ 0.32
    0.32
    """

    _parameter_constraints: dict = {
        "degree": [Options(Integral, {0, 1, 2})],
        "structure": [StrOptions({"auto", *ARCCOS_STRUCTURES})],
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, degree: int = 1, n_components: int = 100, structure: str = "auto",
                 random_state: Any = None) -> None:
        self.degree = degree
        self.n_components = n_components
        self.structure = structure
        self.random_state = random_state

    def _fit_reads_rows(self) -> bool:
        return False  # fit reads X's width only

    def _structure(self, n_features: int) -> str:
        return auto_arccos_structure(n_features) if self.structure == "auto" \
            else self.structure

    def n_features_out_for(self, n_features: int) -> int:
        """Compute the output dimension D this map gives for ``n_features`` inputs.

        Parameters
        ----------
        n_features : int
            Number of input features d.

        Returns
        -------
        int
            ``n_components``, rounded up to whole Hadamard blocks for ``"structured"``;
            equals ``n_features_out_`` after a fit on data of that width.
        """
        self._validate_params()
        structure = self._structure(int(n_features))
        if structure != "structured":
            return int(self.n_components)
        return STRUCTURES["structured"].n_frequencies(int(self.n_components), int(n_features))

    def _fit(self, X, random_state):
        d = X.shape[1]
        self.kernel_ = resolve_kernel("arccos", kernel_params={"degree": int(self.degree)},
                                      owner="ArcCosineSampler")
        self.structure_ = self._structure(d)
        D = self.n_features_out_for(d)
        self._feature_scale = math.sqrt(2.0 / D)
        if self.structure_ == "iid":  # the draws of earlier versions
            projection = DenseProjection(random_state.normal(size=(d, D)))
        elif self.structure_ == "quadrature":
            directions, self._feature_scale = spherical_rule(d, D, random_state)
            radius = moment_radius(d, int(self.degree))
            projection = DenseProjection(np.ascontiguousarray((directions * radius).T))
        else:  # the registry's draws for N(0, I): the Gaussian kernel with γ = 1/2
            density = get_kernel("rbf", gamma=0.5).spectral_density(d)
            request = FrequencyRequest(density, d, D, random_state, "mc")
            # "structured" for the Fourier map weights its frequencies; these features take
            # no weights, so its blocks here keep per-frequency radii of the radial law.
            projection = (sorf_frequencies(request, weighted=False)
                          if self.structure_ == "structured"
                          else STRUCTURES[self.structure_].draw(request)).projection
        if host_dtype(X) == np.float32:
            projection = projection.astype(np.dtype(np.float32))
            if isinstance(self._feature_scale, np.ndarray):
                self._feature_scale = self._feature_scale.astype(np.float32)
        self.projection_ = projection
        self.n_features_out_ = D
        return D

    def _block_temp_bytes_per_row(self, n_features):
        return self.projection_.temp_bytes_per_row(n_features)

    def _transform_block(self, X_block, out):
        self.projection_.project_into(X_block, out)
        _ACTIVATIONS[int(self.degree)](out)
        scale = self._feature_scale
        out *= scale.astype(out.dtype, copy=False) if isinstance(scale, np.ndarray) else scale

    _device_attributes = ("projection_", "_feature_scale")

    def _transform_block_device(self, xp, params, X_block, out):
        projections = params["projection_"].project_device(xp, X_block, out=out)
        if self.degree == 0:
            units = xp.astype(projections > 0, projections.dtype)
        else:
            units = xp.clip(projections, min=0.0)
            if self.degree == 2:
                units *= units
        units *= params["_feature_scale"]
        return units
