r"""Random Fourier features for shift-invariant kernels.

:class:`RBFSampler` is the scikit-learn-compatible face: same parameters, same random draws
(in the same order and shapes), same numbers, on the shared chunked engine.

:class:`RandomFourierFeatures` is the general engine: spectral density (from
:mod:`kernelmaps.kernels`) × projection structure (iid, orthogonal, structured HD-blocks,
Fastfood) × output form (cos with random offset, or cos/sin pairs).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps.kernels import KERNELS, Kernel, SpectralDensity, resolve_kernel
from kernelmaps.maps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps.maps._projection import (
    cast_projection,
    cos_features_into,
    cos_sin_into,
    iid_projection,
    project_into,
    project_with,
)
from kernelmaps.maps._structured import (
    fastfood_projection,
    next_power_of_two,
    orthogonal_projection,
    sorf_projection,
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
    gamma : 'scale' or float, default=1.0
        Parameter of the RBF kernel :math:`\exp(-\gamma\|x-y\|^2)`. ``'scale'`` uses
        ``1 / (n_features * X.var())`` (1 if the variance is zero).
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
        "gamma": [StrOptions({"scale"}), Interval(Real, 0.0, None, closed="left")],
        **RANDOM_MAP_CONSTRAINTS,
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
        self.kernel_ = resolve_kernel("rbf", gamma=float(self._gamma), owner="RBFSampler")
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


# =========================================================================== the RFF engine
# Random Fourier features = spectral density (kernels.spectral) × projection structure
# (maps._projection, maps._structured) × output form.

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


_STRUCTURES = ("iid", "orthogonal", "structured", "fastfood")


_HADAMARD_STRUCTURES = ("structured", "fastfood")


_DRAW_PROJECTION = {
    "iid": iid_projection,
    "orthogonal": orthogonal_projection,
    "structured": sorf_projection,
    "fastfood": fastfood_projection,
}


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

    With :math:`D'` frequencies :math:`\omega_1, \dots, \omega_{D'}` the two output forms are

    .. math::

        \texttt{cos\_offset}:\; z(x) = \sqrt{2k(0)/D'}\,\cos(\omega_i^\top x + b_i),
        \quad b_i \sim \mathcal U[0, 2\pi) \qquad (D = D' \text{ features}),

        \texttt{cos\_sin}:\; z(x) = \sqrt{k(0)/D'}\,\big[\cos\omega_i^\top x,\;
        \sin\omega_i^\top x\big]_{i} \qquad (D = 2D' \text{ features}),

    both unbiased, :math:`\mathbb E[z(x)^\top z(y)] = k(x-y)`; ``cos_sin`` has the lower
    variance at equal D for the Gaussian kernel (Sutherland & Schneider, 2015).

    The frequencies come in one of four ``structure``\ s:

    ``"iid"``
        independent draws from :math:`p`; an explicit (n_features × D') matrix, O(dD)
        memory and time; CSR input stays sparse.
    ``"orthogonal"``
        ORF (Yu et al., 2016): blocks of d exactly orthogonal directions (QR of a Gaussian
        matrix, Haar-distributed), each scaled by a radius from the density's radial law,
        so every frequency is still marginally distributed as :math:`p` (unbiased) while
        the block's frequencies are negatively correlated: lower error than iid. Needs an
        isotropic density (every kernel above but ``laplacian``); O(dD) memory.
    ``"structured"``
        SORF (Yu et al., 2016): per block of :math:`d_{pad}` frequencies the rows of
        :math:`HD_1HD_2HD_3` (normalised Walsh–Hadamard H, random ±1 diagonals D) scaled by
        radii from the radial law. O(D) parameters, O(D log d) time per row; only
        asymptotically unbiased (the rows are not exactly uniform directions).
    ``"fastfood"``
        Fastfood (Le, Sarlós & Smola, 2013): :math:`V = S H G \Pi H B` per block — ±1
        diagonal B, permutation Π, Gaussian diagonal G, radial scaling S. O(D) parameters,
        O(D log d) time per row (two transforms to SORF's three); asymptotically unbiased.
        Its frequencies within a block are correlated, and its error measured slightly
        above iid (as scikit-learn-extra's Fastfood's), with no gain from ``cos_sin``:
        prefer ``"structured"`` unless the last bit of speed matters.

    The Hadamard-based structures work on :math:`d_{pad} = 2^{\lceil\log_2 d\rceil}`
    coordinates (x padded with zeros) and whole blocks of :math:`d_{pad}` frequencies.

    **Rounding of n_components** (documented, visible in ``n_features_out_`` and in
    ``get_feature_names_out()``; never silent):

    * ``output="cos_sin"`` uses :math:`D' = \lceil \text{n\_components}/2\rceil`
      frequencies, so an odd n_components gives one feature more;
    * ``structure="structured"`` / ``"fastfood"`` round :math:`D'` up to a multiple of
      :math:`d_{pad}` (a whole Hadamard block costs the same as part of one), e.g.
      d = 784, n_components = 1000 gives 1024 features;
    * ``"iid"`` and ``"orthogonal"`` with ``"cos_offset"`` give exactly n_components.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        ``"rbf"``, ``"laplacian"``, ``"matern"``, ``"student"``, or a shift-invariant
        :class:`~kernelmaps.Kernel` object (e.g. ``get_kernel("rbf", sigma=2.0)``). Other
        kernels raise a ``ValueError`` naming the map made for them.
    gamma : float or None, default=None
        γ of ``rbf`` / ``laplacian``; ``None`` means the kernel's default 1/n_features.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel: ``sigma`` (rbf), ``nu`` and ``length_scale``
        (matern), ``alpha`` (student).
    n_components : int, default=100
        Requested number of output features D (see the rounding rules above).
    structure : {"iid", "orthogonal", "structured", "fastfood"}, default="iid"
        How the frequencies are drawn and applied.
    output : {"cos_offset", "cos_sin"}, default="cos_offset"
        ``cos_offset`` is scikit-learn's :math:`\sqrt{2/D}\cos(\omega^\top x+b)`;
        ``cos_sin`` the paired form.
    random_state : int, RandomState instance or None, default=None
        Controls every random draw of ``fit``; ``transform`` is deterministic.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel approximated (parameters resolved).
    projection_ : object
        The fitted frequencies, with ``nbytes`` (parameter memory) and ``project_into``.
        ``"iid"``/``"orthogonal"``: ``weights`` of shape (n_features_in_, D').
        ``"structured"``: ``signs`` (n_blocks, 3, d_pad), int8, and ``row_scale`` (D',).
        ``"fastfood"``: ``signs`` (int8), ``permutation`` (int32), ``gaussian``, all
        (n_blocks, d_pad), and ``row_scale`` (D',): 11 resp. 21 bytes per frequency in
        float64. Float arrays are float32 when fitted on float32.
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
    RBFSampler : scikit-learn's Gaussian-only map, same numbers as scikit-learn.
    ArcCosineSampler, TensorSRHT, RandomMaclaurin : random features for kernels that are
        not shift-invariant.

    References
    ----------
    A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel Machines", NeurIPS 2007.
    F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice and S. Kumar, "Orthogonal
    Random Features", NeurIPS 2016.
    Q. Le, T. Sarlós and A. Smola, "Fastfood — Approximating Kernel Expansions in
    Loglinear Time", ICML 2013.
    D. J. Sutherland and J. Schneider, "On the Error of Random Fourier Features", UAI 2015.

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
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), Kernel],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), None],
        "kernel_params": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "structure": [StrOptions(set(_STRUCTURES))],
        "output": [StrOptions({"cos_offset", "cos_sin"})],
        "random_state": ["random_state"],
    }

    def __init__(self, kernel: str | Kernel = "rbf", *, gamma: float | None = None,
                 kernel_params: dict[str, Any] | None = None, n_components: int = 100,
                 structure: str = "iid", output: str = "cos_offset",
                 random_state: Any = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.structure = structure
        self.output = output
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _resolve_kernel(self) -> Kernel:
        """The Kernel object from ``kernel``, ``gamma`` and ``kernel_params``."""
        if isinstance(self.kernel, Kernel):
            if self.gamma is not None or self.kernel_params:
                raise ValueError(
                    "RandomFourierFeatures got a Kernel object and gamma/kernel_params: put "
                    "the parameters in the Kernel object (or pass the kernel by name)."
                )
        else:
            accepted = KERNELS[self.kernel].param_names
            if self.gamma is not None and "gamma" not in accepted:
                raise ValueError(
                    f"gamma does not apply to the {self.kernel!r} kernel, whose parameters "
                    f"are {list(accepted)}: pass them in kernel_params."
                )
            unknown = sorted(set(self.kernel_params or {}) - set(accepted))
            if unknown:
                raise ValueError(
                    f"kernel_params: kernel {self.kernel!r} got unexpected parameter(s) "
                    f"{unknown}; it accepts {list(accepted) or 'no parameters'}."
                )
        return resolve_kernel(self.kernel, gamma=self.gamma, kernel_params=self.kernel_params,
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
        if self.structure != "iid" and not density.isotropic:
            raise ValueError(
                f"structure={self.structure!r} needs an isotropic spectral density (one that "
                f"depends on ‖ω‖ only, so directions and radii can be drawn separately); the "
                f"{kernel.name!r} kernel's is not (the L1 Laplacian has iid Cauchy "
                "coordinates). Use structure='iid', or kernel='matern' with "
                "kernel_params={'nu': 0.5} — the isotropic exp(-‖x-y‖₂/ℓ) — for which every "
                "structure works."
            )
        return density

    def _n_frequencies(self, n_features: int) -> int:
        """D' after the documented rounding (see the class docstring)."""
        n_frequencies = -(-self.n_components // 2) if self.output == "cos_sin" \
            else self.n_components
        if self.structure in _HADAMARD_STRUCTURES:
            block = next_power_of_two(n_features)
            n_frequencies = -(-n_frequencies // block) * block
        return n_frequencies

    def _fit(self, X, random_state):
        n_features = X.shape[1]
        self.kernel_ = self._resolve_kernel()
        density = self._spectral_density(self.kernel_, n_features)
        self.n_frequencies_ = self._n_frequencies(n_features)
        projection = _DRAW_PROJECTION[self.structure](
            density, n_features, self.n_frequencies_, random_state)
        self.random_offset_ = None
        if self.output == "cos_offset":
            self.random_offset_ = random_state.uniform(0, 2 * np.pi, size=self.n_frequencies_)
        self._kernel_scale = float(density.scale)
        if X.dtype == np.float32:
            projection = cast_projection(projection, np.dtype(np.float32))
            if self.random_offset_ is not None:
                self.random_offset_ = self.random_offset_.astype(np.float32)
        self.projection_ = projection
        per_frequency = 2 if self.output == "cos_sin" else 1
        self.n_features_out_ = per_frequency * self.n_frequencies_
        return self.n_features_out_

    # ------------------------------------------------------------------ transform
    def _block_temp_bytes_per_row(self, n_features):
        temp = self.projection_.temp_bytes_per_row(n_features)
        if self.output == "cos_sin":
            temp += 8 * self.n_frequencies_  # the projections, before cos and sin
        return temp

    def _transform_block(self, X_block, out):
        if self.output == "cos_offset":
            cos_features_into(project_with, X_block, self.projection_,
                              self.random_offset_.astype(out.dtype, copy=False),
                              np.sqrt(2.0 * self._kernel_scale / self.n_frequencies_), out)
            return
        projections = np.empty((out.shape[0], self.n_frequencies_), dtype=out.dtype)
        self.projection_.project_into(X_block, projections)
        cos_sin_into(projections, np.sqrt(self._kernel_scale / self.n_frequencies_), out)
