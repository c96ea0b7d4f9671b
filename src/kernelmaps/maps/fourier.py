r"""Random Fourier features for shift-invariant kernels.

:class:`RBFSampler` is the scikit-learn-compatible face: same parameters, same random draws
(in the same order and shapes), same numbers, on the shared chunked engine.

:class:`RandomFourierFeatures` is the general engine: spectral density (from
:mod:`kernelmaps.kernels`) × projection structure (iid, orthogonal, structured HD-blocks,
Fastfood) × output form (cos with random offset, or cos/sin pairs).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._base import RANDOM_MAP_CONSTRAINTS, FeatureMap
from kernelmaps._fastmath import cos_inplace
from kernelmaps.kernels import KERNELS, Kernel, SpectralDensity, get_kernel
from kernelmaps.maps._hadamard import fwht, next_power_of_two

__all__ = ["RBFSampler", "RandomFourierFeatures"]


def cos_features_into(projection_into, X_block: Any, weights: Any,
                      offset: np.ndarray, scale: float, out: np.ndarray, *,
                      cosine_inplace: Callable[[np.ndarray], None] = cos_inplace
                      ) -> None:
    """``out = scale · cos(P + offset)`` where ``projection_into`` writes P into ``out``.

    Shared by every "cosine with random offset" map (RBFSampler, SkewedChi2Sampler,
    RandomFourierFeatures): one projection written straight into the output block, then
    three in-place passes over a block that is still in cache. The cosine is
    :func:`kernelmaps._fastmath.cos_inplace` (float64: ~4× faster than ``np.cos``, within
    3.3e-16 of it, so RBFSampler's numbers stay scikit-learn's to rounding).
    """
    projection_into(X_block, weights, out)
    out += offset
    cosine_inplace(out)
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
# Random Fourier features = spectral density (from kernels.py) × projection structure ×
# output form. The structures below draw the frequencies ω and apply X ↦ Xωᵀ to a row
# block; RandomFourierFeatures turns the projections into cosine features.

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


def _dense(X_block: Any) -> np.ndarray:
    return X_block.toarray() if sp.issparse(X_block) else X_block


def _signed_padded_into(X_dense: np.ndarray, signs: np.ndarray, work: np.ndarray) -> None:
    """``work = pad(X) * signs`` row by row: the zero padding to d_pad, then a ±1 diagonal."""
    d = X_dense.shape[1]
    np.multiply(X_dense, signs[:d], out=work[:, :d])
    if d < work.shape[1]:
        work[:, d:] = 0.0


class _HadamardBlocks(ABC):
    """Shared driver of the Hadamard structures: one block of d_pad frequencies at a time.

    The row block is densified once (the only way a Hadamard transform can consume CSR
    rows); each structure block is then computed in two contiguous (rows, d_pad) buffers and
    written, scaled by its radii, into its slice of the output. Working on one block at a
    time keeps the FWHT's working set in L2 (measured 1.6× faster at d = 1024, D = 8192
    than transforming all blocks of the row block at once).
    """

    signs: np.ndarray  # (n_blocks, …, d_pad) in both structures
    row_scale: np.ndarray

    @property
    def block_size(self) -> int:
        """d_pad, the Hadamard transform length."""
        return self.signs.shape[-1]

    def temp_bytes_per_row(self, n_features: int) -> int:
        # The densified input row and the two work buffers.
        return 8 * (n_features + 2 * self.block_size)

    @abstractmethod
    def _block_into(self, X_dense: np.ndarray, k: int, work: np.ndarray,
                    scratch: np.ndarray) -> np.ndarray:
        """Unscaled projections of block ``k`` (returns the buffer holding them)."""

    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        X_dense = _dense(X_block)
        d_pad = self.block_size
        work = np.empty((out.shape[0], d_pad), dtype=out.dtype)
        scratch = np.empty_like(work)
        row_scale = self.row_scale.astype(out.dtype, copy=False)
        for k in range(out.shape[1] // d_pad):
            columns = slice(k * d_pad, (k + 1) * d_pad)
            result = self._block_into(X_dense, k, work, scratch)
            np.multiply(result, row_scale[columns], out=out[:, columns])


class _DenseProjection:
    """Explicit frequencies: ``weights`` of shape (n_features, n_frequencies); O(d·D) memory.

    Used by the "iid" and "orthogonal" structures; accepts CSR rows (sparse × dense BLAS).
    """

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return self.weights.nbytes

    def temp_bytes_per_row(self, n_features: int) -> int:
        return 0

    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        project_into(X_block, self.weights.astype(out.dtype, copy=False), out)


class _SORFProjection(_HadamardBlocks):
    r"""Structured orthogonal random features: :math:`\omega_i = r_i\,(HD_1HD_2HD_3)_i`.

    Per block of :math:`d_{pad}` frequencies: three random ±1 diagonals (``signs``, shape
    (n_blocks, 3, d_pad)) and the radii; :math:`H` is the normalised Hadamard matrix, so
    the block is orthogonal with unit rows (Yu et al., 2016). The three unnormalised
    transforms contribute :math:`d_{pad}^{3/2}`, folded into ``row_scale`` = r / d_pad^1.5.
    """

    def __init__(self, signs: np.ndarray, row_scale: np.ndarray) -> None:
        self.signs = signs
        self.row_scale = row_scale

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return self.signs.nbytes + self.row_scale.nbytes

    def _block_into(self, X_dense, k, work, scratch):
        signs = self.signs[k].astype(work.dtype, copy=False)
        _signed_padded_into(X_dense, signs[2], work)  # D₃ x
        fwht(work, scratch=scratch)                    # H D₃ x
        work *= signs[1]
        fwht(work, scratch=scratch)                    # H D₂ H D₃ x
        work *= signs[0]
        return fwht(work, scratch=scratch)             # H D₁ H D₂ H D₃ x


class _FastfoodProjection(_HadamardBlocks):
    r"""Fastfood (Le, Sarlós & Smola, 2013): :math:`V = S\,H\,G\,\Pi\,H\,B` per block.

    :math:`B` random ±1 diagonal (``signs``), :math:`\Pi` a random permutation
    (``permutation``: :math:`(\Pi v)_i = v_{\pi(i)}`), :math:`G` a Gaussian diagonal
    (``gaussian``), :math:`H` the unnormalised Hadamard matrix; all of shape
    (n_blocks, d_pad). Every row of :math:`HG\Pi HB` has length
    :math:`\sqrt{d_{pad}}\,\|G\|`, so :math:`S_{ii} = r_i/(\sqrt{d_{pad}}\|G\|)`
    (``row_scale``) gives frequency i the radius :math:`r_i` drawn from the kernel's radial
    law.
    """

    def __init__(self, signs: np.ndarray, permutation: np.ndarray, gaussian: np.ndarray,
                 row_scale: np.ndarray) -> None:
        self.signs = signs
        self.permutation = permutation
        self.gaussian = gaussian
        self.row_scale = row_scale

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return (self.signs.nbytes + self.permutation.nbytes + self.gaussian.nbytes
                + self.row_scale.nbytes)

    def _block_into(self, X_dense, k, work, scratch):
        _signed_padded_into(X_dense, self.signs[k].astype(work.dtype, copy=False), work)  # B x
        fwht(work, scratch=scratch)                                                        # HBx
        # mode="clip": the indices are valid, and the default "raise" buffers the output.
        np.take(work, self.permutation[k], axis=1, out=scratch, mode="clip")              # Π…
        scratch *= self.gaussian[k].astype(work.dtype, copy=False)                         # G…
        return fwht(scratch, scratch=work)                                                 # H…


def _iid_projection(density: SpectralDensity, d: int, n_frequencies: int,
                    random_state: np.random.RandomState) -> _DenseProjection:
    return _DenseProjection(
        np.ascontiguousarray(density.sample(d, n_frequencies, random_state).T))


def _haar_orthogonal(d: int, random_state: np.random.RandomState) -> np.ndarray:
    """A Haar-distributed d × d orthogonal matrix: QR of a Gaussian matrix, signs fixed.

    Without the sign correction Q is not Haar (Mezzadri, 2007); with it every row is
    uniform on the sphere, which is what makes each orthogonal frequency unbiased.
    """
    q, r = np.linalg.qr(random_state.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def _orthogonal_projection(density: SpectralDensity, d: int, n_frequencies: int,
                           random_state: np.random.RandomState) -> _DenseProjection:
    # Yu et al. (2016): blocks of d orthogonal directions, each with its own radius from
    # the radial law. A partial last block keeps its first rows — still orthogonal and
    # uniform — so n_frequencies needs no rounding.
    blocks = []
    for start in range(0, n_frequencies, d):
        size = min(d, n_frequencies - start)
        directions = _haar_orthogonal(d, random_state)[:size]
        blocks.append(directions * density.sample_radii(d, size, random_state)[:, None])
    return _DenseProjection(np.ascontiguousarray(np.vstack(blocks).T))


def _random_signs(random_state: np.random.RandomState, shape: tuple[int, ...]) -> np.ndarray:
    # int8: one byte per sign; a block's signs are cast to the data's dtype when used.
    return (2 * random_state.randint(0, 2, size=shape) - 1).astype(np.int8)


def _sorf_projection(density: SpectralDensity, d: int, n_frequencies: int,
                     random_state: np.random.RandomState) -> _SORFProjection:
    d_pad = next_power_of_two(d)
    n_blocks = n_frequencies // d_pad
    signs = _random_signs(random_state, (n_blocks, 3, d_pad))
    # Radii of the padded dimension: the first d coordinates of an isotropic frequency in
    # R^d_pad have exactly the kernel's spectral law in R^d (padding adds zeros to x).
    radii = density.sample_radii(d_pad, n_frequencies, random_state)
    return _SORFProjection(signs, radii / d_pad ** 1.5)


def _fastfood_projection(density: SpectralDensity, d: int, n_frequencies: int,
                         random_state: np.random.RandomState) -> _FastfoodProjection:
    d_pad = next_power_of_two(d)
    n_blocks = n_frequencies // d_pad
    signs = _random_signs(random_state, (n_blocks, d_pad))
    permutation = np.stack([random_state.permutation(d_pad) for _ in range(n_blocks)])
    gaussian = random_state.normal(size=(n_blocks, d_pad))
    radii = density.sample_radii(d_pad, n_frequencies, random_state).reshape(n_blocks, d_pad)
    row_scale = radii / (np.sqrt(d_pad) * np.linalg.norm(gaussian, axis=1, keepdims=True))
    return _FastfoodProjection(signs, permutation.astype(np.int32), gaussian,
                               row_scale.ravel())


_DRAW_PROJECTION = {
    "iid": _iid_projection,
    "orthogonal": _orthogonal_projection,
    "structured": _sorf_projection,
    "fastfood": _fastfood_projection,
}


def _cast_projection(projection: Any, dtype: np.dtype) -> Any:
    """The same projection with its floating-point arrays stored in ``dtype``."""
    arrays = {name: (value.astype(dtype) if value.dtype.kind == "f" else value)
              for name, value in vars(projection).items()}
    return type(projection)(**arrays)


def _project_with(X_block: Any, projection: Any, out: np.ndarray) -> None:
    # Adapter to cos_features_into's (X_block, weights, out) projection signature.
    projection.project_into(X_block, out)


def _cos_sin_into(projections: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out = scale · [cos P, sin P]`` (cosines in the first half of the columns)."""
    n = projections.shape[1]
    if out.dtype == np.float64:
        # sin p = cos(p − π/2): one pass of the fast cosine over the whole contiguous
        # block instead of NumPy's scalar sin; the shift adds at most half an ulp of p of
        # argument error (≤ 1e-14 for |p| ≤ 100), far below the Monte Carlo error.
        out[:, :n] = projections
        np.subtract(projections, np.pi / 2, out=out[:, n:])
        cos_inplace(out)
    else:  # float32 np.cos / np.sin are SIMD-vectorised already
        np.cos(projections, out=out[:, :n])
        np.sin(projections, out=out[:, n:])
    out *= scale


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
    >>> from kernelmaps.maps.fourier import RandomFourierFeatures
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures("matern", kernel_params={"nu": 1.5}, n_components=10,
    ...                             structure="structured", random_state=0).fit(X)
    >>> rff.n_features_out_  # rounded up to a whole block of d_pad = 4 frequencies
    12
    >>> rff.transform(X).shape
    (5, 12)
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
            return self.kernel
        params = dict(self.kernel_params or {})
        kernel_class = KERNELS[self.kernel]
        if self.gamma is not None:
            if "gamma" not in kernel_class.param_names:
                raise ValueError(
                    f"gamma does not apply to the {self.kernel!r} kernel, whose parameters "
                    f"are {list(kernel_class.param_names)}: pass them in kernel_params."
                )
            params["gamma"] = self.gamma
        try:
            return get_kernel(self.kernel, **params)
        except TypeError as error:  # unknown parameter names: a value error of kernel_params
            raise ValueError(f"kernel_params: {error}") from error

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
            projection = _cast_projection(projection, np.dtype(np.float32))
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
            cos_features_into(_project_with, X_block, self.projection_,
                              self.random_offset_.astype(out.dtype, copy=False),
                              np.sqrt(2.0 * self._kernel_scale / self.n_frequencies_), out)
            return
        projections = np.empty((out.shape[0], self.n_frequencies_), dtype=out.dtype)
        self.projection_.project_into(X_block, projections)
        _cos_sin_into(projections, np.sqrt(self._kernel_scale / self.n_frequencies_), out)
