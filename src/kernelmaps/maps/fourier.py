r"""Random Fourier features for shift-invariant kernels.

:class:`RBFSampler` is the scikit-learn-compatible face: same parameters, same random draws
(in the same order and shapes), same numbers, on the shared chunked engine.

:class:`RandomFourierFeatures` is the general engine: spectral density (from
:mod:`kernelmaps.kernels`) × projection structure (the registry
:data:`kernelmaps.maps.STRUCTURES`: iid, orthogonal, structured HD-blocks, Fastfood,
principal-axes QMC, spherical-radial quadrature) × sampling (Monte Carlo or randomised QMC) ×
output form (cos with random offset, or cos/sin pairs).
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._array_api import (
    host_dtype,
    is_device_array,
    namespace_and_device,
    to_numpy,
)
from kernelmaps.kernels import (
    KERNELS,
    Kernel,
    KernelNameOptions,
    SpectralDensity,
    canonical_kernel_name,
    gamma_constraints,
    gamma_value,
    resolve_kernel,
)
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._fourier_form import FourierForm, draw_form, form_features, sample_error
from kernelmaps.maps._principal import (
    PrincipalCoordinates,
    completed_axes,
    participation_ratio,
    principal_coordinates,
    principal_frame,
    principal_weights,
    sample_indices,
)
from kernelmaps.maps._projection import (
    DenseProjection,
    cos_features_device,
    cos_features_into,
    cos_sin_device,
    cos_sin_into,
    project_into,
    project_with,
)
from kernelmaps.maps._registry import STRUCTURES, Frequencies, Structure
from kernelmaps.maps._sampling import SAMPLINGS
from kernelmaps.maps._structure_policy import (
    AUTO_MIN_SAMPLE_ROWS,
    auto_candidates,
    auto_output,
    auto_reads_data,
    auto_structure,
    choose_measured,
    scoring_frequencies,
    scoring_margin,
)

__all__ = ["RBFSampler", "RandomFourierFeatures"]


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
    gamma : 'scale', 'auto' or float, default=1.0
        Parameter of the RBF kernel :math:`\exp(-\gamma\|x-y\|^2)` (scikit-learn's
        default, 1.0). ``'scale'`` uses :math:`1/(d\,\operatorname{Var}X)` over all entries
        of the training X (sparse X: :math:`\overline{X^2}-\bar X^2`; 1 if the variance is
        0), :class:`sklearn.svm.SVC`'s definition; ``'auto'`` uses :math:`1/d`.
    n_components : int, default=100
        Number of Monte Carlo samples D, the output dimension.
    random_state : int, RandomState instance or None, default=None
        Controls the random weights and offsets.

    Attributes
    ----------
    kernel_ : RBFKernel
        The Gaussian kernel approximated, with γ resolved (``gamma='scale'`` → its value).
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
    >>> X = np.random.RandomState(0).normal(size=(40, 10))
    >>> rbf = RBFSampler(gamma=0.5, n_components=2000, random_state=0).fit(X)
    >>> Z = rbf.transform(X)
    >>> Z.shape
    (40, 2000)
    >>> rbf.kernel_
    RBFKernel(gamma=0.5, sigma=None)
    >>> # z(x)·z(y) estimates exp(-γ‖x-y‖²) with error O(1/√D)
    >>> bool(np.abs(Z @ Z.T - rbf.kernel_(X)).max() < 0.15)
    True
    """

    _parameter_constraints: dict = {
        "gamma": gamma_constraints(allow_zero=True, allow_none=False),
        **RANDOM_MAP_CONSTRAINTS,
    }

    def __init__(self, *, gamma: float | str = 1.0, n_components: int = 100,
                 random_state: Any = None) -> None:
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state

    _check_degenerate_sample = True  # no kernel matrix in fit: checked on a sample
    _cosine_per_feature = True

    def _fit_reads_rows(self) -> bool:
        return isinstance(self.gamma, str) and self.gamma == "scale"  # "auto" is 1/d

    def _fit(self, X, random_state):
        n_features = X.shape[1]
        self._gamma = gamma_value(self.gamma, X)  # 'scale' / 'auto': scikit-learn's values
        self.kernel_ = resolve_kernel("rbf", gamma=float(self._gamma), owner="RBFSampler")
        # Same draws, order and shapes as scikit-learn: normal weights, then offsets.
        self.random_weights_ = (2.0 * self._gamma) ** 0.5 * random_state.normal(
            size=(n_features, self.n_components)
        )
        self.random_offset_ = random_state.uniform(0, 2 * np.pi, size=self.n_components)
        if host_dtype(X) == np.float32:
            self.random_weights_ = self.random_weights_.astype(np.float32)
            self.random_offset_ = self.random_offset_.astype(np.float32)
        return self.n_components

    @classmethod
    def approximated_kernels(cls) -> frozenset[str]:
        """Names (``Kernel.name``) of the kernels this map approximates: the Gaussian."""
        return frozenset({"rbf"})

    def _transform_block(self, X_block, out):
        cos_features_into(project_into, X_block, self.random_weights_, self.random_offset_,
                          (2.0 / self.n_components) ** 0.5, out)

    _device_attributes = ("random_weights_", "random_offset_")

    def _transform_block_device(self, xp, params, X_block, out):
        return cos_features_device(xp, DenseProjection(params["random_weights_"]), X_block,
                                   params["random_offset_"], (2.0 / self.n_components) ** 0.5,
                                   out)


# =========================================================================== the RFF engine
# Random Fourier features = spectral density (kernels.spectral) × projection structure
# (the registry of maps._registry) × sampling (maps._sampling) × output form.

#: Which map to use instead, for kernels that have no spectral density (not shift-invariant).
_NOT_SHIFT_INVARIANT_ALTERNATIVES = {
    "poly": "TensorSRHT, RandomMaclaurin or PolynomialCountSketch (random features), or "
            "PolynomialKernelMap (exact)",
    "polynomial": "TensorSRHT, RandomMaclaurin or PolynomialCountSketch (random features), "
                  "or PolynomialKernelMap (exact)",
    "arccos": "ArcCosineSampler",
    "additive_chi2": "AdditiveChi2Sampler",
    "additive_chi2_psd": "AdditiveChi2Sampler",
    "skewed_chi2": "SkewedChi2Sampler",
    "linear": "no map at all (the data are their own features) or Nystroem",
}


class _StructureOptions(StrOptions):
    """The ``structure`` constraint: "auto" or any structure registered when fit runs."""

    def __init__(self) -> None:
        super().__init__(set())

    # The registry is read when the parameter is validated, so a structure registered after
    # import (kernelmaps.maps.register_structure) is accepted.
    options = property(lambda self: {"auto", *STRUCTURES}, lambda self, value: None)


class RandomFourierFeatures(FeatureMap):
    r"""Random Fourier features for any shift-invariant kernel, with structured projections.

    By Bochner's theorem a shift-invariant kernel is
    :math:`k(x-y) = k(0)\,\mathbb E_{\omega\sim p}[\cos\omega^\top(x-y)]` for its spectral
    density :math:`p`, taken from :mod:`kernelmaps.kernels` (Rahimi & Recht, 2007):

    ==============================================  ========================================
    kernel                                          frequencies ω
    ==============================================  ========================================
    ``rbf`` :math:`e^{-\gamma\|x-y\|^2}`            :math:`\mathcal N(0, 2\gamma I)`
    ``laplacian`` :math:`e^{-\gamma\|x-y\|_1}`      iid Cauchy(0, γ) coordinates
    ``matern`` ν ∈ {½, 3/2, 5/2}, length ℓ          multivariate t, 2ν d.o.f., scale 1/ℓ
    ``student`` :math:`1/(\alpha+\|x-y\|^2)`        Gaussian scale mixture, :math:`k(0)=1/\alpha`
    ==============================================  ========================================

    With :math:`D'` frequencies :math:`\omega_1, \dots, \omega_{D'}` and weights
    :math:`a_i` (:math:`a_i = 1/D'` except for ``"quadrature"`` and ``"structured"``) the
    two output forms are

    .. math::

        \texttt{cos\_offset}:\; z(x) = \big[\sqrt{2k(0)a_i}\,\cos(\omega_i^\top x + b_i)\big]_i,
        \quad b_i \sim \mathcal U[0, 2\pi) \qquad (D = D' \text{ features}),

        \texttt{cos\_sin}:\; z(x) = \big[\sqrt{k(0)a_i}\cos\omega_i^\top x,\;
        \sqrt{k(0)a_i}\sin\omega_i^\top x\big]_{i} \qquad (D = 2D' \text{ features}),

    both unbiased, :math:`\mathbb E[z(x)^\top z(y)] = k(x-y)`; ``cos_sin`` has the lower
    variance at equal D for the Gaussian kernel (Sutherland & Schneider, 2015).

    **Output form** (``output``): ``"auto"`` (default) takes ``"cos_sin"`` wherever the
    pairs give no more features than ``"cos_offset"`` after the structure's rounding, or, for
    a structure that rounds D′ up to whole blocks, no more than 1/8 above n_components
    (``"structured"`` with n_components = 1000 on 16 features: 1,024 features as 512 pairs,
    not 1,008 offset cosines); ``"cos_offset"`` otherwise: an odd n_components with a
    structure that keeps D′ (so D is exactly n_components), or a Hadamard structure whose
    blocks would double D as pairs (n_components = 1000 on 784 features: 1,024 offset
    cosines, not 2 × 1,024 pairs); stored in ``output_``. Per pair, for i.i.d. frequencies
    and :math:`k(0) = 1`, D times the variance
    is :math:`1 + \tfrac12 k(2\Delta) - k(\Delta)^2` for the offset form and
    :math:`1 + k(2\Delta) - 2k(\Delta)^2` for pairs (Sutherland & Schneider, 2015): pairs win
    wherever :math:`k(2\Delta) \le 2k(\Delta)^2` (the Gaussian, Laplacians, Matérns), most
    for smooth kernels, where the offset's variance does not vanish as :math:`k \to 1`. Measured
    (``python -m benchmarks quality``: relative Frobenius error of K(A, B) on two disjoint
    draws, mean of 5 seeds; iris, wine, diabetes, breast_cancer, digits and Fashion-MNIST,
    standardised; D = 256, 1,024, 4,096, Fashion-MNIST 256 and 1,024; and the quadrature
    paper's setting, rows divided by their largest value, γ = 1/d, D = 4n(d + 1), on digits
    and Fashion-MNIST), the range over the sets and D of the default's error over the best
    of the 12 structure × output forms (docs/random_features.md has every cell; 3 of 55 are
    above 1.10, all at γ/10):

    ======================  ==============  =================================
    γ (median heuristic ×)  mean k(x, y)    default / best form (this version;
                                            before: ``cos_offset``)
    ======================  ==============  =================================
    0.1 (smooth)            0.85 – 0.91     1.00 – 1.21 (2.19 – 53.71)
    1                       0.37 – 0.42     1.00 – 1.03 (1.19 – 12.80)
    10 (rough)              0.00 – 0.07     1.00 – 1.01 (1.00 – 2.23)
    1/d (paper's setting)   0.84 – 0.86     1.00 – 1.07 (11.16 – 22.62)
    ======================  ==============  =================================

    ``"cos_offset"`` stays available: it is scikit-learn's :class:`RBFSampler` form (that
    class keeps it, and scikit-learn's numbers).

    **Structure** (``structure``; a name from the registry
    :data:`~kernelmaps.maps.STRUCTURES`, which a new structure joins with
    :func:`~kernelmaps.maps.register_structure`):

    ``"iid"``
        independent draws from :math:`p` (with QMC: one scrambled point set in the input's
        coordinates, Avron et al., 2016); an explicit (n_features × D') matrix, O(dD)
        memory and time; CSR input stays sparse. The only one for the L1 ``laplacian``.
    ``"orthogonal"``
        orthogonal random features: the D′ × d top-left block of one Haar rotation of
        order max(D′, d) (QR of a Gaussian matrix), each row scaled by a radius from the
        density's radial law in dimension max(D′, d). Up to d frequencies: orthogonal
        directions (ORF, Yu et al., 2016); beyond: one D′ × d matrix with orthonormal
        columns (the "Gort" features of Munkhoeva et al., 2018), whose rows with radii of
        dimension D′ are still distributed as :math:`p` (unbiased) while their second
        moment is nearly exact: about half the error of Yu et al.'s stacked blocks for a
        smooth kernel, the same for a rough one. Needs an isotropic density (every kernel
        above but ``laplacian``); O(dD) memory.
    ``"principal"``
        randomised QMC frequencies whose Gaussian coordinates lie along the principal axes
        of (a 256-row sample of) the training data, so the QMC set's most even coordinates
        follow the data's largest variance (the PCA construction of QMC). Each frequency
        still has the law :math:`p`, for any data. Far below ORF's error on data of low
        effective dimension; O(dD) memory.
    ``"quadrature"``
        stochastic spherical-radial rules (Genz & Monahan, 1998; Munkhoeva et al., 2018):
        Haar rotations of the regular simplex. Below 11 inputs each rule's vertices share
        a pair of radii :math:`s < d < t` with weights exact for the quadratic part of the
        integrand; from 11 on each vertex has its own radius, weighted
        :math:`\propto 1/\rho^2` and normalised without bias (the published rule's form:
        0.97–1.03× its error in its own setting, where the pairs measured 1.05–1.19×).
        The classic rule's centre term (negative for many draws) is replaced by either
        device, so the map stays explicit and unbiased (derived in the user guide,
        docs/random_features.md, "The quadrature structure, derived"). Best for smooth
        kernels (small γ) at low d.
    ``"structured"``
        SORF (Yu et al., 2016): per block of :math:`d_{pad}` frequencies the rows of
        :math:`HD_1HD_2HD_3` (normalised Walsh–Hadamard H, random ±1 diagonals D), block j
        scaled by a Dirichlet share :math:`\sqrt{a_j}` (:math:`\sum_j a_j = 1`) and each row
        by a radius of dimension D′ with a weight :math:`\propto 1/\rho^2`: each frequency
        keeps the radial law, and the weighted second moment is exactly isotropic, so a
        smooth kernel's quadratic term has no radial variance: the error of the published
        ROM's fixed norm, without its bias (derived in docs/random_features.md).
        O(D) parameters, O(D log d) time per row; only asymptotically unbiased (the rows
        are not exactly uniform directions).
    ``"fastfood"``
        Fastfood (Le, Sarlós & Smola, 2013): :math:`V = S H G \Pi H B` per block — ±1
        diagonal B, permutation Π, Gaussian diagonal G, radial scaling S. O(D) parameters,
        O(D log d) time per row (two transforms to SORF's three); asymptotically unbiased.
        Its frequencies within a block are correlated, and its error measured slightly
        above iid (as scikit-learn-extra's Fastfood's), with no gain from ``cos_sin``:
        prefer ``"structured"`` unless the last bit of speed matters.
    ``"auto"`` (default)
        chosen at fit and stored in ``structure_`` (docs/random_features.md has the
        measurements). Where the fit reads a 256-row sample (QMC sampling, an isotropic
        density, at most 4,096 features), a rule proposes ``"principal"`` when the data's
        effective dimension (the participation ratio
        :math:`(\sum\lambda)^2/\sum\lambda^2` of the sample's covariance eigenvalues,
        ``effective_dimension_``) is at most 15 and ``"orthogonal"`` above; then every
        candidate structure that gives the width asked (``"principal"``, ``"orthogonal"``,
        ``"quadrature"``, ``"structured"`` where D′ is whole Hadamard blocks, ``"iid"``;
        above an effective dimension of 15 not ``"principal"`` and ``"iid"``, as their
        QMC Gaussian coordinates never scored far better there, and ``"iid"`` not above
        10, where it was never kept) is drawn and scored on
        the sample — the relative
        Frobenius error :math:`\|K - ZZ^\top\|_F/\|K\|_F` on its second half, the
        principal axes taken from its first (``structure_errors_``) — and one whose error is
        below the proposal's by more than 1.2× replaces it (one draw on 128 rows only
        roughly predicts a draw's error elsewhere, hence a margin). Where the rule proposes
        ``"principal"`` each candidate is scored at the full D′ and the scored draw of the
        one chosen is the map kept (the principal draw in the whole sample's axes: it is
        drawn with as many QMC coordinates as that frame has, the first half's axes
        completed by the whole sample's principal axes outside their span, so it is the
        draw ``structure="principal"`` makes, drawn once). Where it proposes
        ``"orthogonal"`` and D′ > 128, the choice is made at a width of D_s = 128
        frequencies: the candidates are drawn at D_s on a random stream of their own
        (seeded from ``random_state``'s state, so the choice is deterministic), a candidate
        replaces the rule only if below it by :math:`1.2\,(D'/D_s)^{0.2}` (the rule's error
        falls faster with D′), and only the
        structure chosen is then drawn at the full D′, independent of the scoring: the map
        is exactly that structure's draw from ``random_state`` (``"structured"``, whose
        blocks are wider than D_s above 128 features, is not scored there; one thread,
        5,000 × 784 rows, D = 2,048: the fit took 155 ms with every candidate scored at the
        full D′, 86–96 ms scored at D_s, of which the map's own draw is 62–67 ms). Measured
        (mean of 16
        seeds of the default's own error over the best explicit structure's, cos/sin):
        0.81–1.01 in 30 cells of standardised iris, wine, diabetes, breast_cancer and
        digits at the median heuristic × 0.1, × 1 and × 10, D = 256 and 1,024 (without
        ``"structured"`` among the candidates 0.90–1.30, where the rule alone reached
        1.57); 0.91–0.95 in the quadrature paper's setting on digits, where it reached
        4.57. ``"iid"`` for a density that is not isotropic or more than 4,096 features,
        ``"orthogonal"`` whenever ``sampling="mc"`` (no rows read).

    **Sampling** (``sampling``): ``"mc"`` draws independent random numbers; ``"qmc"``
    (default) a scrambled Sobol' set and ``"halton"`` a scrambled Halton set from
    :mod:`scipy.stats.qmc`. The structure decides where the QMC points go: all coordinates
    (``"iid"``, ``"principal"``), the radii alone (``"orthogonal"``, ``"structured"``,
    ``"fastfood"``: stratified over the radial law by its inverse CDF), the radial pairs
    (``"quadrature"`` below 11 inputs; from 11 on its per-vertex radii are stratified);
    the phases :math:`b_i` too. Every point of a randomised QMC set is
    uniform on the cube, so every frequency keeps its law and the map stays unbiased.

    The Hadamard-based structures work on :math:`d_{pad} = 2^{\lceil\log_2 d\rceil}`
    coordinates (x padded with zeros) and whole blocks of :math:`d_{pad}` frequencies.

    **Rounding of n_components** (documented, visible in ``n_features_out_``, in
    ``get_feature_names_out()`` and before fitting in :meth:`n_features_out_for`; never
    silent):

    * ``output="cos_sin"`` uses :math:`D' = \lceil \text{n\_components}/2\rceil`
      frequencies, so an odd n_components gives one feature more;
    * ``structure="structured"`` / ``"fastfood"`` round :math:`D'` up to a multiple of
      :math:`d_{pad}` (a whole Hadamard block costs the same as part of one), e.g.
      d = 784, n_components = 1000 gives 1024 features; with ``output="auto"`` as pairs
      where that adds at most 1/8 (d = 16, n_components = 1000: 1,024 features, 512
      pairs);
    * ``"quadrature"`` rounds :math:`D'` up to an even number (radii come in pairs), and
      with ``output="auto"`` takes pairs for any n_components (1002 gives 1004);
    * ``"iid"``, ``"orthogonal"`` and ``"principal"`` (hence ``"auto"``) with
      ``"cos_offset"`` or ``output="auto"`` (the default) give exactly n_components.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        ``"rbf"``, ``"laplacian"``, ``"matern"``, ``"student"``, or a shift-invariant
        :class:`~kernelmaps.Kernel` object (e.g. ``get_kernel("rbf", sigma=2.0)``). Other
        kernels raise a ``ValueError`` naming the map made for them.
    gamma : 'scale', 'auto', float or None, default='scale'
        The γ of ``rbf`` / ``laplacian``. ``'scale'`` (default, as :class:`sklearn.svm.SVC`):
        :math:`\gamma = 1/(d\,\operatorname{Var}X)`, the variance over all entries of the
        training X (sparse X: :math:`\overline{X^2}-\bar X^2`; 1 if it is 0), so
        :math:`\gamma\|x-y\|^2` is of order one whatever the units; ``'auto'`` and
        ``None``: :math:`1/d`. Resolved once in ``fit`` into ``kernel_``. The strings are
        ignored for a Kernel object and for kernels without γ (``matern``, ``student``);
        a number there is an error.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel: ``sigma`` (rbf), ``nu`` and ``length_scale``
        (matern), ``alpha`` (student).
    n_components : int, default=100
        Requested number of output features D (see the rounding rules above).
    structure : str, default="auto"
        How the frequencies are drawn and applied: ``"auto"``, ``"iid"``, ``"orthogonal"``,
        ``"principal"``, ``"quadrature"``, ``"structured"``, ``"fastfood"``, or any
        structure registered since (see above).
    sampling : {"qmc", "halton", "mc"}, default="qmc"
        Randomised QMC (scrambled Sobol' or Halton points) or independent random numbers.
    output : {"auto", "cos_offset", "cos_sin"}, default="auto"
        ``cos_offset`` is scikit-learn's :math:`\sqrt{2/D}\cos(\omega^\top x+b)`;
        ``cos_sin`` the paired form; ``"auto"``: ``cos_sin`` for an even n_components,
        ``cos_offset`` for an odd one, pairs in whole blocks for a structure that rounds
        (see above). Before 0.2 (Unreleased) the default was
        ``cos_offset``: pass it to get the earlier numbers.
    random_state : int, RandomState instance or None, default=None
        Controls every random draw of ``fit``; ``transform`` is deterministic.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel approximated (parameters resolved).
    structure_ : str
        The structure used (``structure``, or what ``"auto"`` chose).
    output_ : str
        The output form used (``output``, or what ``"auto"`` chose).
    effective_dimension_ : float or None
        The participation ratio of the sample's covariance spectrum when the fit read the
        data (``"auto"`` with QMC on an isotropic density, ``"principal"``), else None.
    structure_errors_ : dict of str to float or None
        Where ``structure="auto"`` scored its candidates on the sample: each candidate's
        relative Frobenius error there, at the full D′ or, above an effective dimension of
        15 with D′ > 128, at the scoring width of 128 frequencies (see ``"auto"`` above);
        else None.
    projection_ : Projection
        The fitted frequencies (a :class:`~kernelmaps.maps.Projection`), with
        ``nbytes`` (parameter memory) and ``project_into``. Dense structures: ``weights``
        of shape (n_features_in_, D'). ``"structured"``: ``signs`` (n_blocks, 3, d_pad),
        int8, and ``row_scale`` (D',). ``"fastfood"``: ``signs`` (int8), ``permutation``
        (int32), ``gaussian``, all (n_blocks, d_pad), and ``row_scale`` (D',): 11 resp. 21
        bytes per frequency in float64. Float arrays are float32 when fitted on float32.
    frequency_weights_ : ndarray of shape (D',) or None
        The weights :math:`a_i` (sum 1) of ``"quadrature"`` and ``"structured"``; None for
        equal weights.
    random_offset_ : ndarray of shape (D',) or None
        The phases b (``cos_offset``); None for ``cos_sin``.
    n_frequencies_ : int
        D', the number of frequencies.
    n_features_out_ : int
        Number of output features after rounding: D' (``cos_offset``) or 2D' (``cos_sin``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when they are all strings.

    See Also
    --------
    RBFSampler : The Gaussian-only map of scikit-learn, with the same numbers.
    ArcCosineSampler, TensorSRHT, RandomMaclaurin : Random features for kernels that are
        not shift-invariant.

    Notes
    -----
    With QMC on an isotropic density, ``structure="auto"`` and ``"principal"`` read a
    uniform sample of at most 256 rows of the training data (drawn from ``random_state``),
    so the fitted map depends on the data as well as on its width; the estimate stays
    unbiased for any data. On a Dask collection the same rows are gathered
    (:func:`kernelmaps.distributed.fit`).

    References
    ----------
    A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel Machines", NeurIPS 2007.
    F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice and S. Kumar, "Orthogonal
    Random Features", NeurIPS 2016.
    Q. Le, T. Sarlós and A. Smola, "Fastfood — Approximating Kernel Expansions in
    Loglinear Time", ICML 2013.
    D. J. Sutherland and J. Schneider, "On the Error of Random Fourier Features", UAI 2015.
    H. Avron, V. Sindhwani, J. Yang and M. W. Mahoney, "Quasi-Monte Carlo Feature Maps for
    Shift-Invariant Kernels", JMLR 17, 2016.
    A. Genz and J. Monahan, "Stochastic Integration Rules for Infinite Regions", SIAM J.
    Sci. Comput. 19, 1998.
    M. Munkhoeva, Y. Kapushev, E. Burnaev and I. Oseledets, "Quadrature-based Features for
    Kernel Approximation", NeurIPS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> X = np.random.RandomState(0).normal(size=(40, 6))
    >>> rff = RandomFourierFeatures("matern", kernel_params={"nu": 1.5}, n_components=1001,
    ...                             structure="structured", random_state=0).fit(X)
    >>> rff.n_features_out_  # rounded up to whole blocks of d_pad = 8 frequencies
    1008
    >>> Z = rff.transform(X)
    >>> Z.shape
    (40, 1008)
    >>> bool(np.abs(Z @ Z.T - rff.kernel_(X)).max() < 0.25)  # ≈ the Matérn-3/2 kernel
    True
    >>> auto = RandomFourierFeatures(gamma=0.1, n_components=256, random_state=0).fit(X)
    >>> auto.structure_, round(auto.effective_dimension_, 1)  # 6 noise features: d_eff ≈ 6
    ('quadrature', 5.3)
    >>> sorted(auto.structure_errors_)  # scored on the sample: the rule's "principal" lost
    ['iid', 'orthogonal', 'principal', 'quadrature', 'structured']
    """

    _parameter_constraints: dict = {
        "kernel": [KernelNameOptions(), Kernel],
        "gamma": gamma_constraints(),
        "kernel_params": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "structure": [_StructureOptions()],
        "sampling": [StrOptions(set(SAMPLINGS))],
        "output": [StrOptions({"auto", "cos_offset", "cos_sin"})],
        "random_state": ["random_state"],
    }

    def __init__(self, kernel: str | Kernel = "rbf", *, gamma: float | str | None = "scale",
                 kernel_params: dict[str, Any] | None = None, n_components: int = 100,
                 structure: str = "auto", sampling: str = "qmc", output: str = "auto",
                 random_state: Any = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.structure = structure
        self.sampling = sampling
        self.output = output
        self.random_state = random_state

    # ------------------------------------------------------------------ what it approximates
    @classmethod
    def approximated_kernels(cls, structure: str = "auto") -> frozenset[str]:
        """Name the kernels (``Kernel.name``) this map approximates with ``structure``.

        Read from the kernels, so it is declared once: :mod:`kernelmaps.evaluate`'s method
        registry asks here.

        Parameters
        ----------
        structure : str, default="auto"
            A name of :data:`~kernelmaps.maps.STRUCTURES`, or ``"auto"``.

        Returns
        -------
        frozenset of str
            Every registered kernel with a spectral density; for the structures that draw
            radii, only the isotropic ones (all but the L1 ``laplacian``).
        """
        needs_isotropy = structure != "auto" and STRUCTURES[structure].isotropic_only
        return frozenset(name for name, isotropic in _shift_invariant_kernels().items()
                         if isotropic or not needs_isotropy)

    def n_features_out_for(self, n_features: int) -> int:
        """Compute the output dimension D this map gives for ``n_features`` inputs.

        Applies the documented rounding of ``n_components`` (``output``, ``structure``)
        before fitting; equals ``n_features_out_`` after a fit on data of that width.

        Parameters
        ----------
        n_features : int
            Number of input features d.

        Returns
        -------
        int
            The number of output features D.
        """
        self._validate_params()
        structure = None if self.structure == "auto" else STRUCTURES[self.structure]
        output = self._output(structure, int(n_features))
        return self._width_of(output, structure, int(n_features))

    # ------------------------------------------------------------------ fitting
    def _resolve_kernel(self) -> Kernel:
        """The Kernel object from ``kernel``, ``gamma`` and ``kernel_params`` (a
        ``gamma="scale"`` still unresolved: :meth:`_fit` resolves it on the data).

        A numeric ``gamma`` is refused where it cannot apply (a Kernel object, a kernel
        without γ); the string defaults ``"scale"``/``"auto"`` are ignored there, as
        scikit-learn's ``SVC`` ignores ``gamma`` for kernels that have none.
        """
        numeric_gamma = self.gamma is not None and not isinstance(self.gamma, str)
        gamma = self.gamma
        if isinstance(self.kernel, Kernel):
            if numeric_gamma or self.kernel_params:
                raise ValueError(
                    "RandomFourierFeatures got a Kernel object and gamma/kernel_params: put "
                    "the parameters in the Kernel object (or pass the kernel by name)."
                )
            gamma = None
        else:
            accepted = KERNELS[canonical_kernel_name(self.kernel)].param_names
            if "gamma" not in accepted:
                if numeric_gamma:
                    raise ValueError(
                        f"gamma does not apply to the {self.kernel!r} kernel, whose "
                        f"parameters are {list(accepted)}: pass them in kernel_params."
                    )
                gamma = None
            unknown = sorted(set(self.kernel_params or {}) - set(accepted))
            if unknown:
                raise ValueError(
                    f"kernel_params: kernel {self.kernel!r} got unexpected parameter(s) "
                    f"{unknown}; it accepts {list(accepted) or 'no parameters'}."
                )
        return resolve_kernel(self.kernel, gamma=gamma, kernel_params=self.kernel_params,
                              owner="RandomFourierFeatures")

    def _spectral_density(self, kernel: Kernel, n_features: int) -> SpectralDensity:
        try:
            density = kernel.spectral_density(n_features)
        except ValueError as error:
            instead = _NOT_SHIFT_INVARIANT_ALTERNATIVES.get(kernel.name, "Nystroem")
            raise ValueError(
                f"RandomFourierFeatures approximates shift-invariant kernels k(x - y) only "
                f"(rbf, laplacian, matern, student); the {kernel.name!r} kernel is not one. "
                f"Use {instead} instead."
            ) from error
        if self.structure != "auto" and STRUCTURES[self.structure].isotropic_only \
                and not density.isotropic:
            raise ValueError(
                f"structure={self.structure!r} needs an isotropic spectral density (one that "
                f"depends on ‖ω‖ only, so directions and radii can be drawn separately); the "
                f"{kernel.name!r} kernel's is not (the L1 Laplacian has iid Cauchy "
                "coordinates). Use structure='iid' (or 'auto'), or kernel='matern' with "
                "kernel_params={'nu': 0.5} — the isotropic exp(-‖x-y‖₂/ℓ) — for which every "
                "structure works."
            )
        return density

    def _n_frequencies(self, output: str, structure: Structure | None, n_features: int) -> int:
        """D' after the documented rounding (see the class docstring)."""
        n_frequencies = -(-self.n_components // 2) if output == "cos_sin" \
            else self.n_components
        return n_frequencies if structure is None else \
            structure.n_frequencies(n_frequencies, n_features)

    def _width_of(self, output: str, structure: Structure | None, n_features: int) -> int:
        """D: the features of ``output`` after the structure's rounding."""
        n_frequencies = self._n_frequencies(output, structure, n_features)
        return n_frequencies * (2 if output == "cos_sin" else 1)

    def _output(self, structure: Structure | None, n_features: int) -> str:
        """The output form: ``output``, or what ``"auto"`` takes for ``n_components`` with
        this structure's rounding."""
        if self.output != "auto":
            return self.output
        blocks = structure is not None and structure.block is not None
        return auto_output(self._width_of("cos_sin", structure, n_features),
                           self._width_of("cos_offset", structure, n_features),
                           self.n_components if blocks else None)

    def _reads_data(self, density: SpectralDensity, n_features: int) -> bool:
        """Whether ``_fit`` reads a sample of rows (the principal axes)."""
        if self.structure == "auto":
            return auto_reads_data(self.sampling, lambda: density.isotropic, n_features)
        return STRUCTURES[self.structure].reads_data

    def _fit_sample_indices(self, n_samples: int, n_features: int,
                            random_state: np.random.RandomState) -> np.ndarray | None:
        """The rows of X that ``_fit`` reads, drawn from ``random_state`` (None: none).

        :func:`kernelmaps.distributed.fit` gathers exactly these rows from a Dask
        collection and fits on them; a fit on at most that many rows draws nothing here, so
        it equals the fit on all of X.
        """
        kernel = self._resolve_kernel()
        if not kernel.is_resolved():  # the density's form does not depend on γ's value
            kernel = type(kernel)(**{**kernel.get_params(), "gamma": 1.0})
        density = self._spectral_density(kernel, n_features)
        if not self._reads_data(density, n_features):
            return None
        return sample_indices(n_samples, random_state)

    def _draw(self, name: str, density: SpectralDensity, n_features: int,
              random_state: np.random.RandomState, frame: Any = None,
              coordinates: PrincipalCoordinates | None = None,
              n_frequencies: int | None = None) -> FourierForm:
        """Draw the form of structure ``name`` (the output form ``output`` gives it) with its
        D′, or ``n_frequencies`` (a candidate scored at a reduced width); ``coordinates``: a
        ``"principal"`` draw's, drawn already, taken in ``frame``."""
        structure = STRUCTURES[name]
        output = self._output(structure, n_features)
        if n_frequencies is None:
            n_frequencies = self._n_frequencies(output, structure, n_features)
        frequencies = None if coordinates is None else \
            Frequencies(DenseProjection(principal_weights(frame, coordinates)))
        return draw_form(name, output, n_frequencies, density, n_features, random_state,
                         self.sampling, frame if name == "principal" else None, frequencies)

    def _principal_coordinates(self, density: SpectralDensity, n_features: int, k: int,
                               random_state: np.random.RandomState) -> PrincipalCoordinates:
        """The coordinates ``structure="principal"`` draws for a frame of k axes."""
        structure = STRUCTURES["principal"]
        n_frequencies = self._n_frequencies(self._output(structure, n_features), structure,
                                            n_features)
        return principal_coordinates(density, n_features, n_frequencies, k, random_state,
                                     self.sampling)

    def _choose_form(self, X: Any, density: SpectralDensity,
                     random_state: np.random.RandomState) -> FourierForm:
        """The drawn form, resolving ``structure="auto"``: by the static rule where no rows
        are read, else by measuring each candidate on the sample's two halves."""
        n_features = X.shape[1]
        self.effective_dimension_ = None
        self.structure_errors_ = None
        if not self._reads_data(density, n_features):
            name = self.structure if self.structure != "auto" else \
                auto_structure(self.sampling, density.isotropic, n_features)
            return self._draw(name, density, n_features, random_state)
        rows = _rows(X, sample_indices(X.shape[0], random_state))
        if self.structure != "auto":  # "principal" (or a registered structure reading rows)
            frame = principal_frame(rows)
            self.effective_dimension_ = frame.participation_ratio
            return self._draw(self.structure, density, n_features, random_state, frame.axes)
        # The axes of the whole sample are computed only where "principal" is scored (and,
        # with more features than the scored half has rows, only where it is kept: at
        # d = 784 the frame's eigh and QR cost 15 ms; the effective dimension alone, 1 ms).
        self.effective_dimension_ = participation_ratio(rows)
        rule = auto_structure(self.sampling, density.isotropic, n_features,
                              self.effective_dimension_)
        width = self._width_of(self._output(None, n_features), None, n_features)
        candidates = auto_candidates(
            density.isotropic, {name: s.isotropic_only for name, s in STRUCTURES.items()},
            lambda name: self._width_of(self._output(STRUCTURES[name], n_features),
                                        STRUCTURES[name], n_features), width, rule,
            self.effective_dimension_)
        if len(rows) < AUTO_MIN_SAMPLE_ROWS or rule not in candidates or len(candidates) < 2:
            axes = principal_frame(rows).axes if rule == "principal" else None
            return self._draw(rule, density, n_features, random_state, axes)
        # Cross-fitted: the principal axes the score uses come from the sample's first half,
        # the pairs scored from its second (axes fitted to the scored rows can only flatter
        # "principal": on digits at γ/10, D = 1,024, 4 seeds, scored so it won 3 of 4 fits
        # and its error on other rows was 0.9-2.8×, mean 1.7×, its score); the map kept has
        # the axes of the whole sample.
        half = len(rows) // 2
        scored = rows[half:]
        K = self.kernel_.evaluate(scored, scored)
        n_full = self._n_frequencies(self._output(None, n_features), None, n_features)
        n_scored = scoring_frequencies(n_full, rule)
        if n_scored < n_full:
            return self._choose_reduced(candidates, rule, n_full, n_scored, scored, K,
                                        density, n_features, random_state)
        axes = full = None
        if "principal" in candidates:
            axes = principal_frame(rows[:half]).axes
        if axes is not None and n_features <= half:
            # Scored in the first half's axes with as many coordinates as the whole sample's
            # frame has (completed by the whole sample's principal axes outside the half's
            # span, completed_axes), so that the draw scored is the draw kept in the whole
            # sample's axes: no second draw where the two frames' k differ (raw digits: 54-57
            # of the 64 pixels vary in 128 rows, 54-60 in 256; the redraw cost 1.7 ms of a
            # 16 ms fit), and the score is that of the map kept. Above ``half`` features the
            # whole frame (an eigh of the rows' Gram and a QR: 15 ms at d = 784) is computed
            # only where "principal" is kept, and redrawn there.
            full = principal_frame(rows).axes
            completed = completed_axes(axes, rows, full.shape[1])
            axes = axes if completed is None else completed  # None: redrawn below
        # Each candidate is drawn from the same state, the draw `structure=name` makes: the
        # state is saved once and set back before each draw (a deepcopy of the RandomState
        # per candidate cost 0.2 ms each), and the winner's end state is the one left.
        start = random_state.get_state()
        drawn, errors, coordinates = {}, {}, None
        for name in candidates:
            random_state.set_state(start)
            if name == "principal":  # its coordinates kept, to be taken in other axes
                coordinates = self._principal_coordinates(density, n_features, axes.shape[1],
                                                          random_state)
            form = self._draw(name, density, n_features, random_state, axes,
                              coordinates if name == "principal" else None)
            features = form_features(form, scored)
            errors[name] = sample_error(K, features, features)
            drawn[name] = form, random_state.get_state()
        name = choose_measured(errors, rule)
        form, end = drawn[name]
        if name == "principal":  # the same draw in the whole sample's axes
            full = principal_frame(rows).axes if full is None else full
            if full.shape[1] == axes.shape[1]:  # the same random numbers: no second draw
                form = replace(form, projection=DenseProjection(
                    principal_weights(full, coordinates)))
            else:  # another k, other numbers: redrawn from the same state
                random_state.set_state(start)
                form = self._draw(name, density, n_features, random_state, full)
                end = random_state.get_state()
        random_state.set_state(end)
        self.structure_errors_ = errors
        return form

    def _choose_reduced(self, candidates: tuple[str, ...], rule: str, n_full: int,
                        n_scored: int, scored: np.ndarray, K: np.ndarray,
                        density: SpectralDensity, n_features: int,
                        random_state: np.random.RandomState) -> FourierForm:
        """``structure="auto"`` where the candidates are scored at ``n_scored`` < D′
        frequencies (:func:`~kernelmaps.maps._structure_policy.scoring_frequencies`).

        The scoring draws come from a stream of their own, seeded from ``random_state``'s
        state without advancing it (so the choice is deterministic); the structure chosen
        is then drawn at the full D′ from ``random_state`` — the numbers ``structure=name``
        draws from that state — independent of the scoring, so the map kept has exactly
        that structure's law. A candidate whose blocks do not divide ``n_scored`` (Hadamard
        blocks wider than it) is left out of the scoring.
        """
        start = random_state.get_state()
        scoring_state = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(
            [*start[1].tolist(), start[2]])))
        scoring_start = scoring_state.get_state()
        errors = {}
        for name in candidates:
            if STRUCTURES[name].n_frequencies(n_scored, n_features) != n_scored:
                continue
            scoring_state.set_state(scoring_start)
            form = self._draw(name, density, n_features, scoring_state,
                              n_frequencies=n_scored)
            features = form_features(form, scored)
            errors[name] = sample_error(K, features, features)
        self.structure_errors_ = errors
        name = choose_measured(errors, rule, scoring_margin(n_full, n_scored))
        return self._draw(name, density, n_features, random_state)

    _check_degenerate_sample = True  # no kernel matrix in fit: checked on a sample
    _cosine_per_feature = True

    def _fit_reads_rows(self) -> bool:
        kernel = self._resolve_kernel()
        if isinstance(self.gamma, str) and self.gamma == "scale" and not kernel.is_resolved():
            return True  # γ from the rows' variance
        if self.structure != "auto":
            return STRUCTURES[self.structure].reads_data
        if not kernel.is_resolved():
            kernel = type(kernel)(**{**kernel.get_params(), "gamma": 1.0})
        # The width is unknown here, so the answer is the safe one.
        return auto_reads_data(self.sampling, lambda: self._spectral_density(kernel, 2).isotropic)

    def _fit(self, X, random_state):
        n_features = X.shape[1]
        self.kernel_ = self._resolve_kernel().resolve(X)  # gamma="scale": on all of X, once
        density = self._spectral_density(self.kernel_, n_features)
        form = self._choose_form(X, density, random_state)
        self.structure_, self.output_ = form.structure, form.output
        self.n_frequencies_ = form.n_frequencies
        self.random_offset_ = form.offset
        self._kernel_scale = float(density.scale)
        self.frequency_weights_ = form.weights
        self._feature_scale = form.feature_scale
        projection = form.projection
        if host_dtype(X) == np.float32:
            projection = projection.astype(np.dtype(np.float32))
            for name in ("random_offset_", "frequency_weights_", "_feature_scale"):
                value = getattr(self, name)
                if isinstance(value, np.ndarray):
                    setattr(self, name, value.astype(np.float32))
        self.projection_ = projection
        per_frequency = 2 if self.output_ == "cos_sin" else 1
        self.n_features_out_ = per_frequency * self.n_frequencies_
        return self.n_features_out_

    # ------------------------------------------------------------------ transform
    def _block_temp_bytes_per_row(self, n_features):
        temp = self.projection_.temp_bytes_per_row(n_features)
        if self.output_ == "cos_sin":
            temp += 8 * self.n_frequencies_  # the projections, before cos and sin
        return temp

    def _transform_block(self, X_block, out):
        scale = self._feature_scale
        if isinstance(scale, np.ndarray):
            scale = scale.astype(out.dtype, copy=False)
        if self.output_ == "cos_offset":
            cos_features_into(project_with, X_block, self.projection_,
                              self.random_offset_.astype(out.dtype, copy=False), scale, out)
            return
        projections = np.empty((out.shape[0], self.n_frequencies_), dtype=out.dtype)
        self.projection_.project_into(X_block, projections)
        cos_sin_into(projections, scale, out)

    _device_attributes = ("projection_", "random_offset_", "frequency_weights_",
                          "_feature_scale")

    def _transform_block_device(self, xp, params, X_block, out):
        projection, scale = params["projection_"], params["_feature_scale"]
        if self.output_ == "cos_offset":
            return cos_features_device(xp, projection, X_block, params["random_offset_"],
                                       scale, out)
        return cos_sin_device(xp, projection.project_device(xp, X_block), scale)


def _rows(X: Any, indices: np.ndarray) -> np.ndarray:
    """Rows ``indices`` of X (NumPy, CSR or a device array) as a dense float64 NumPy array."""
    if len(indices) < X.shape[0]:
        if is_device_array(X):
            xp, device = namespace_and_device(X)
            X = xp.take(X, xp.asarray(indices, device=device), axis=0)
        else:
            X = X[indices]
    if sp.issparse(X):
        X = X.toarray()
    return np.asarray(to_numpy(X), dtype=np.float64)


_SHIFT_INVARIANT: dict[str, bool] = {}


def _shift_invariant_kernels() -> dict[str, bool]:
    """Registered kernel name → whether its spectral density is isotropic, for the kernels
    that have one (default parameters; isotropy does not depend on them)."""
    if not _SHIFT_INVARIANT:
        for name, cls in KERNELS.items():
            try:
                _SHIFT_INVARIANT[name] = bool(cls().spectral_density(1).isotropic)
            except (ValueError, TypeError):  # not shift-invariant / needs parameters
                continue
    return dict(_SHIFT_INVARIANT)
