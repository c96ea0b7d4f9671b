r"""Structured random projections: orthogonal (Haar), SORF and Fastfood, on the FWHT.

Orthogonal random features draw one block of a Haar rotation (Yu et al., 2016; Munkhoeva et
al., 2018); SORF and Fastfood replace the dense Gaussian matrix by products of random diagonals and
Hadamard transforms (Yu et al., 2016; Le, Sarlós & Smola, 2013), applied with the fast
Walsh–Hadamard transform below in O(D log d) per row and O(D) memory. Orthogonal and
Fastfood draw their radii from the density's radial law, by Monte Carlo or, with
``sampling="qmc"``, as a stratified one-dimensional randomised QMC set
(:func:`kernelmaps.maps._sampling.radii`); SORF draws block shares and weighted radii whose
weighted second moment is exact (:func:`sorf_frequencies`), stratified under QMC: the
directions are what they are, and QMC goes into the radii alone. Their records in
:data:`kernelmaps.maps.STRUCTURES` are listed in :mod:`kernelmaps.maps._structures`.

Fast Walsh–Hadamard transform (FWHT) on row blocks, in NumPy + BLAS
-------------------------------------------------------------------

The unnormalised Walsh–Hadamard matrix of order :math:`d = 2^k` is the Kronecker power
:math:`H_d = H_2^{\otimes k}` with :math:`H_2 = \begin{psmallmatrix}1&1\\1&-1\end{psmallmatrix}`
(Sylvester's order, the one :func:`scipy.linalg.hadamard` returns). It is symmetric and
:math:`H_d H_d = d\,I`, so :math:`H_d/\sqrt d` is orthogonal.

How it is computed, and why
---------------------------
The textbook FWHT is :math:`k = \log_2 d` radix-2 butterfly passes. Written in NumPy (each
pass two ufunc calls on ``(…, d/2h, 2, h)`` views), it measured 25–45 ns per element at
``d = 1024`` on this project's machine, because the passes with small ``h`` (2 … 16) run
NumPy's iterator over inner loops of only ``h`` elements. Grouping the butterfly levels into
*radix-m stages* fixes that: since :math:`H_d = H_{m_1}\otimes H_{m_2}\otimes\dots` for
:math:`d = m_1 m_2\cdots`, each stage multiplies one axis of the array, viewed as
``(…, m_j, post)``, by a small dense :math:`H_{m_j}` with :math:`m_j \le 32` — one BLAS
call over all rows of the block (a plain GEMM for the innermost stage, a stacked GEMM for
the others). At ``d = 1024`` that is two stages of radix 32, measured at 4–7 ns per element
in float64 and about 2 ns in float32. The cost is :math:`2\sum_j m_j \le 64\lceil k/5\rceil`
flops per element, i.e. still :math:`O(d\log d)` per row.

Why not a library: the FWHT packages on the package index are either unmaintained C
extensions (``fht``, 2017; ``ffht-unofficial``) or bring PyTorch/CUDA
(``hadamard-transform``, ``fast-hadamard-transform``); none is worth a dependency when
NumPy + the BLAS NumPy already ships are this fast and release the GIL.

Stages ping-pong between the array and a scratch buffer of the same shape, so no stage
allocates; when the number of stages is odd, one final copy puts the result back.

On a device (array API dispatch), :func:`fwht_device` runs the same radix stages as
batched matrix products of the array's own library, and the structured projections
transform all the Hadamard blocks of a row block at once (a device wants few large
operations, not many cache-sized ones).
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cache
from typing import Any

import numpy as np
from scipy.linalg import hadamard

from kernelmaps._array_api import on_device
from kernelmaps.kernels.interface import dense_block
from kernelmaps.maps._projection import DenseProjection, Projection, random_signs
from kernelmaps.maps._registry import Frequencies, FrequencyRequest
from kernelmaps.maps._sampling import radii, self_normalised_chi2, uniform_points

__all__ = [
    "FastfoodProjection",
    "SORFProjection",
    "fastfood_frequencies",
    "fwht",
    "fwht_device",
    "haar_block",
    "haar_frame",
    "haar_orthogonal",
    "is_power_of_two",
    "next_power_of_two",
    "orthogonal_frequencies",
    "radix_stages",
    "sorf_frequencies",
    "sorf_radii",
]

#: Largest radix of one stage: log2 32 = 5 butterfly levels per BLAS call. Larger radices
#: cost more flops per element (2m) than they save in calls (measured: radix 64 is slower).
MAX_RADIX_BITS = 5


def is_power_of_two(n: int) -> bool:
    """Whether ``n`` is a positive power of two (1 included)."""
    return n >= 1 and (n & (n - 1)) == 0


def next_power_of_two(n: int) -> int:
    """The smallest power of two ``>= n`` (``n >= 1``)."""
    return 1 << max(0, int(n) - 1).bit_length()


def radix_stages(d: int) -> tuple[int, ...]:
    """The radices ``(m_1, m_2, …)`` with product ``d``, each ``<= 2**MAX_RADIX_BITS``.

    Levels are split as evenly as possible (e.g. 2048 → (16, 16, 8)), so no stage is a
    wasteful radix-2 one. ``d = 1`` has no stage.
    """
    bits = d.bit_length() - 1
    if bits == 0:
        return ()
    n_stages = -(-bits // MAX_RADIX_BITS)
    base, extra = divmod(bits, n_stages)
    return tuple(1 << (base + (j < extra)) for j in range(n_stages))


@cache
def _hadamard_block(m: int, dtype: np.dtype) -> np.ndarray:
    # Read-only so that the cached matrix can be shared by threads without risk.
    block = hadamard(m).astype(dtype)
    block.flags.writeable = False
    return block


def fwht(x: np.ndarray, *, scratch: np.ndarray | None = None) -> np.ndarray:
    r"""Unnormalised Walsh–Hadamard transform along the last axis, in place.

    Computes :math:`x \leftarrow x H_d` for every row (equivalently :math:`H_d x`, since
    :math:`H_d` is symmetric), i.e. the same numbers as ``x @ scipy.linalg.hadamard(d)``
    up to rounding, in :math:`O(d\log d)` operations per row (see the module docstring for
    the radix-m stages).

    Parameters
    ----------
    x : ndarray of shape (..., d), float32 or float64, C-contiguous
        ``d`` must be a power of two. Overwritten with the transform.
    scratch : ndarray of the same shape and dtype, optional
        Work buffer (C-contiguous); allocated when not given. Its content is destroyed.

    Returns
    -------
    x : ndarray
        The input array, now holding the transform.

    Raises
    ------
    ValueError
        If ``d`` is not a power of two, or an array is not C-contiguous (a reshape would
        then silently copy and the result would be lost), or the scratch does not match.
    """
    d = x.shape[-1]
    if not is_power_of_two(d):
        raise ValueError(
            f"fwht needs a power-of-two length along the last axis; got {d}. Pad with "
            f"zeros to {next_power_of_two(max(d, 1))}."
        )
    if not x.flags.c_contiguous:
        raise ValueError("fwht works in place and needs a C-contiguous array; pass "
                         "np.ascontiguousarray(x) and use the returned array.")
    stages = radix_stages(d)
    if not stages or x.size == 0:
        return x
    if scratch is None:
        scratch = np.empty_like(x)
    elif scratch.shape != x.shape or scratch.dtype != x.dtype or \
            not scratch.flags.c_contiguous:
        raise ValueError(
            f"scratch must be a C-contiguous {x.dtype} array of shape {x.shape}; got "
            f"{scratch.dtype} {scratch.shape}."
        )
    source, target = x, scratch
    post = 1  # product of the radices already applied = stride of the current axis
    for m in stages:
        block = _hadamard_block(m, x.dtype)
        if post == 1:
            # Innermost axis: rows of m consecutive elements times H_m, one GEMM.
            np.matmul(source.reshape(-1, m), block, out=target.reshape(-1, m))
        else:
            # Axis of stride `post`: H_m times each (m, post) slab, one stacked GEMM.
            np.matmul(block, source.reshape(-1, m, post), out=target.reshape(-1, m, post))
        post *= m
        source, target = target, source
    if source is not x:
        x[...] = source
    return x



_device_hadamard: dict[tuple[str, str, str, int], Any] = {}


def _hadamard_device(xp: Any, m: int, device: Any, dtype: Any) -> Any:
    key = (xp.__name__, str(device), str(dtype), m)
    if key not in _device_hadamard:  # a few KiB per (device, dtype, radix), kept for reuse
        _device_hadamard[key] = on_device(hadamard(m).astype(np.float64), xp, device, dtype)
    return _device_hadamard[key]


def fwht_device(xp: Any, x: Any) -> Any:
    r"""Unnormalised Walsh–Hadamard transform along the last axis, on ``x``'s device.

    The radix-m stages of :func:`fwht` as (batched) matrix products of ``x``'s namespace;
    returns a new array (the input is left unchanged).
    """
    d = x.shape[-1]
    if not is_power_of_two(d):
        raise ValueError(f"fwht needs a power-of-two length along the last axis; got {d}.")
    shape = x.shape
    post = 1
    for m in radix_stages(d):
        block = _hadamard_device(xp, m, x.device, x.dtype)
        # Innermost axis: one GEMM; the axis of stride `post`: H_m times each (m, post) slab.
        x = (xp.reshape(x, (-1, m)) @ block if post == 1
             else block @ xp.reshape(x, (-1, m, post)))
        post *= m
    return xp.reshape(x, shape)


def padded_device(xp: Any, X: Any, width: int) -> Any:
    """Rows of ``X`` padded with zeros to ``width`` columns, on the device."""
    if X.shape[1] == width:
        return X
    zeros = xp.zeros((X.shape[0], width - X.shape[1]), dtype=X.dtype, device=X.device)
    return xp.concat([X, zeros], axis=1)


# ======================================================================== structured maps
def signed_padded_into(X_dense: np.ndarray, signs: np.ndarray, work: np.ndarray) -> None:
    """``work = pad(X) * signs`` row by row: the zero padding to d_pad, then a ±1 diagonal."""
    d = X_dense.shape[1]
    np.multiply(X_dense, signs[:d], out=work[:, :d])
    if d < work.shape[1]:
        work[:, d:] = 0.0


class HadamardBlocks(Projection):
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
        X_dense = dense_block(X_block)
        d_pad = self.block_size
        work = np.empty((out.shape[0], d_pad), dtype=out.dtype)
        scratch = np.empty_like(work)
        row_scale = self.row_scale.astype(out.dtype, copy=False)
        for k in range(out.shape[1] // d_pad):
            columns = slice(k * d_pad, (k + 1) * d_pad)
            result = self._block_into(X_dense, k, work, scratch)
            np.multiply(result, row_scale[columns], out=out[:, columns])

    @abstractmethod
    def _blocks_device(self, xp: Any, X_padded: Any) -> Any:
        """Unscaled projections of every block, shape (rows, n_blocks, d_pad)."""

    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """The projections of a row block on its device, all blocks at once."""
        work = self._blocks_device(xp, padded_device(xp, X_block, self.block_size))
        projections = xp.reshape(work, (X_block.shape[0], -1))
        projections *= self.row_scale
        if bias is not None:
            projections += bias
        return projections


class SORFProjection(HadamardBlocks):
    r"""Structured orthogonal random features: :math:`\omega_i = r_i\,(HD_1HD_2HD_3)_i`.

    Per block of :math:`d_{pad}` frequencies: three random ±1 diagonals (``signs``, shape
    (n_blocks, 3, d_pad)) and the radii; :math:`H` is the normalised Hadamard matrix, so
    the block is orthogonal with unit rows (Yu et al., 2016). The three unnormalised
    transforms contribute :math:`d_{pad}^{3/2}`, folded into ``row_scale`` = r / d_pad^1.5.
    """

    array_names = ("signs", "row_scale")

    def __init__(self, signs: np.ndarray, row_scale: np.ndarray) -> None:
        self.signs = signs
        self.row_scale = row_scale

    def _block_into(self, X_dense, k, work, scratch):
        signs = self.signs[k].astype(work.dtype, copy=False)
        signed_padded_into(X_dense, signs[2], work)  # D₃ x
        fwht(work, scratch=scratch)                    # H D₃ x
        work *= signs[1]
        fwht(work, scratch=scratch)                    # H D₂ H D₃ x
        work *= signs[0]
        return fwht(work, scratch=scratch)             # H D₁ H D₂ H D₃ x

    def _blocks_device(self, xp, X_padded):
        signs = xp.astype(self.signs, X_padded.dtype)[None, ...]  # (1, n_blocks, 3, d_pad)
        work = fwht_device(xp, X_padded[:, None, :] * signs[:, :, 2, :])    # H D₃ x
        work *= signs[:, :, 1, :]
        work = fwht_device(xp, work)                                        # H D₂ H D₃ x
        work *= signs[:, :, 0, :]
        return fwht_device(xp, work)                                        # H D₁ H D₂ H D₃ x


class FastfoodProjection(HadamardBlocks):
    r"""Fastfood (Le, Sarlós & Smola, 2013): :math:`V = S\,H\,G\,\Pi\,H\,B` per block.

    :math:`B` random ±1 diagonal (``signs``), :math:`\Pi` a random permutation
    (``permutation``: :math:`(\Pi v)_i = v_{\pi(i)}`), :math:`G` a Gaussian diagonal
    (``gaussian``), :math:`H` the unnormalised Hadamard matrix; all of shape
    (n_blocks, d_pad). Every row of :math:`HG\Pi HB` has length
    :math:`\sqrt{d_{pad}}\,\|G\|`, so :math:`S_{ii} = r_i/(\sqrt{d_{pad}}\|G\|)`
    (``row_scale``) gives frequency i the radius :math:`r_i` drawn from the kernel's radial
    law.
    """

    array_names = ("signs", "permutation", "gaussian", "row_scale")

    def __init__(self, signs: np.ndarray, permutation: np.ndarray, gaussian: np.ndarray,
                 row_scale: np.ndarray) -> None:
        self.signs = signs
        self.permutation = permutation
        self.gaussian = gaussian
        self.row_scale = row_scale

    def _block_into(self, X_dense, k, work, scratch):
        signed_padded_into(X_dense, self.signs[k].astype(work.dtype, copy=False), work)  # B x
        fwht(work, scratch=scratch)                                                        # HBx
        # mode="clip": the indices are valid, and the default "raise" buffers the output.
        np.take(work, self.permutation[k], axis=1, out=scratch, mode="clip")              # Π…
        scratch *= self.gaussian[k].astype(work.dtype, copy=False)                         # G…
        return fwht(scratch, scratch=work)                                                 # H…

    def _blocks_device(self, xp, X_padded):
        n_blocks, d_pad = self.signs.shape
        signs = xp.astype(self.signs, X_padded.dtype)
        work = fwht_device(xp, X_padded[:, None, :] * signs[None, ...])    # H B x
        # Π per block as one gather over the flattened blocks: column k·d_pad + π_k(i).
        offsets = xp.arange(0, n_blocks * d_pad, d_pad, device=X_padded.device)
        gather = xp.reshape(xp.astype(self.permutation, offsets.dtype) + offsets[:, None], (-1,))
        work = xp.take(xp.reshape(work, (X_padded.shape[0], -1)), gather, axis=1)
        work = xp.reshape(work, (X_padded.shape[0], n_blocks, d_pad))
        work *= self.gaussian                                              # G Π H B x
        return fwht_device(xp, work)                                       # H G Π H B x


def haar_orthogonal(d: int, random_state: np.random.RandomState) -> np.ndarray:
    """A Haar-distributed d × d orthogonal matrix: QR of a Gaussian matrix, signs fixed.

    Without the sign correction Q is not Haar (Mezzadri, 2007); with it every row is
    uniform on the sphere, which is what makes each orthogonal frequency unbiased.
    """
    return haar_block(d, d, random_state)


def haar_block(rows: int, columns: int, random_state: np.random.RandomState) -> np.ndarray:
    r"""The top-left ``rows × columns`` block of a Haar-distributed rotation of order
    :math:`m = \max(\text{rows}, \text{columns})`.

    The Q factor of an :math:`m \times k` Gaussian matrix (:math:`k = \min(\text{rows},
    \text{columns})`) with the signs of R's diagonal fixed is uniform on the Stiefel manifold,
    i.e. distributed as k columns of a Haar matrix (Mezzadri, 2007): O(m·k²) work. With
    ``rows <= columns`` the rows are orthonormal; with ``rows >= columns`` the columns are,
    so the rows form a tight frame of :math:`\mathbb R^{\text{columns}}`
    (:math:`\sum_i q_i q_i^\top = I`). Either way each row is the first ``columns``
    coordinates of a uniform unit vector of :math:`\mathbb R^m`.
    """
    m, k = max(rows, columns), min(rows, columns)
    q, r = np.linalg.qr(random_state.normal(size=(m, k)))
    q = q * np.sign(np.diag(r))
    return q.T if rows < columns else q


def haar_frame(d: int, k: int, random_state: np.random.RandomState) -> np.ndarray:
    """k orthonormal directions of a Haar-distributed rotation of R^d, shape (min(k, d), d).

    The first k rows of a Haar matrix in law (:func:`haar_block`): O(d·k²) work instead of
    O(d³), for blocks that keep k < d directions.
    """
    return haar_block(min(k, d), d, random_state)


def orthogonal_frequencies(request: FrequencyRequest) -> Frequencies:
    r"""Orthogonal random features: the D′ × d top-left block of one Haar rotation of
    order :math:`m = \max(D', d)`, each row scaled by a radius of the radial law in
    dimension m.

    With :math:`D' \le d` the rows are D′ orthonormal directions with radii in dimension d
    (ORF, Yu et al., 2016). With :math:`D' > d` the frequencies are not stacked independent
    d × d blocks (Yu et al.'s construction) but one :math:`D' \times d` matrix Q with
    orthonormal columns (the "Gort" construction of Munkhoeva et al., 2018, their public
    code): row :math:`q_i` is the first d coordinates of a uniform unit vector of
    :math:`\mathbb R^{D'}`, so with an independent radius :math:`r_i` of the density's
    radial law in dimension D′, :math:`r_i q_i` is the first d coordinates of a frequency of
    :math:`p_{D'}`, whose law is :math:`p_d` for every isotropic density here (Gaussian
    scale mixtures, defined in every dimension): each frequency is still exactly unbiased.
    The gain is the set's second moment: :math:`\sum_i r_i^2 q_i q_i^\top = Q^\top
    \operatorname{diag}(r^2) Q` with :math:`Q^\top Q = I` and :math:`r_i^2` of relative
    spread :math:`\sqrt{2/D'}` (Gaussian) instead of :math:`\sqrt{2/d}`, so the quadratic
    term of the kernel, which dominates its error for a smooth kernel, is nearly exact:
    measured 0.54–0.67× the error of stacked blocks with stratified radii (0.43–0.59× Yu et
    al.'s, χ_d radii) in Munkhoeva et al.'s setting (digits, γ = 1/d, D′ = 2n(d + 1),
    n = 1…5), within 2 % of them for rough kernels. Radii by Monte Carlo or,
    with QMC, stratified (:func:`kernelmaps.maps._sampling.radii`).
    """
    d, size = request.n_features, request.n_frequencies
    directions = haar_block(size, d, request.random_state)
    lengths = radii(request.density, max(size, d), size, request.random_state,
                    request.sampling)
    return Frequencies(DenseProjection(np.ascontiguousarray((directions * lengths[:, None]).T)))


def sorf_radii(request: FrequencyRequest) -> np.ndarray:
    """Radii of the density's radial law in dimension d_pad, one per frequency (the
    construction of earlier versions, kept for :class:`~kernelmaps.ArcCosineSampler`'s
    ``"structured"``, whose features take no weights)."""
    d_pad = next_power_of_two(request.n_features)
    # Radii of the padded dimension: the first d coordinates of an isotropic frequency in
    # R^d_pad have exactly the kernel's spectral law in R^d (padding adds zeros to x).
    return radii(request.density, d_pad, request.n_frequencies, request.random_state,
                 request.sampling)


def sorf_frequencies(request: FrequencyRequest, *, weighted: bool = True) -> Frequencies:
    r"""Structured orthogonal frequencies: SORF blocks :math:`HD_1HD_2HD_3` with radii whose
    squares add up, block by block, as exactly as the directions do.

    Frequency i of block j (of k = D′/d_pad blocks) is
    :math:`\omega_{ji} = \sigma_{ji}\,\rho_{ji}\,\sqrt{a_j}\,b_{ji}`, where :math:`b_{ji}` is
    row i of the orthogonal block (unit norm; its first d coordinates act on the zero-padded
    input) and

    * :math:`(a_1, \dots, a_k) \sim \mathrm{Dirichlet}(d_{pad}/2, \dots, d_{pad}/2)` — the
      blocks' shares, :math:`\sum_j a_j = 1`, so :math:`\sum_{ji} a_j b_{ji}b_{ji}^\top = I`
      exactly (the "Gort" trick of Munkhoeva et al., 2018, for Hadamard blocks: the rows'
      norms vary, their second moment does not);
    * :math:`\rho_{ji}^2 \sim \chi^2_{D'+2}` with weights :math:`w_{ji} \propto 1/\rho_{ji}^2`
      summing to 1, drawn by :func:`~kernelmaps.maps._sampling.self_normalised_chi2`
      (stratified under QMC), and :math:`\sigma_{ji}` the density's mixing scale (constant
      for the Gaussian).

    Unbiased radially: :math:`a_j \sim \mathrm{Beta}(d_{pad}/2, (D'-d_{pad})/2)` and for
    :math:`\rho^2 \sim \chi^2_{D'}`, :math:`a_j\rho^2 \sim \chi^2_{d_{pad}}` (beta–gamma
    algebra), the density's radial law in dimension d_pad, whose first d coordinates are
    its law in dimension d; the weights turn the :math:`\chi^2_{D'+2}` draws into exact
    :math:`\chi^2_{D'}` expectations (size-biasing, normalised without a ratio estimator's
    bias: see that function), as the spherical-radial rule's weights do. The gain:
    :math:`w_{ji}\rho_{ji}^2` is the same for every frequency, so
    :math:`\sum_{ji} w_{ji}\,\rho_{ji}^2 a_j\,b_{ji}b_{ji}^\top \propto I` exactly (for the
    Gaussian), and the kernel's quadratic term — the error of a smooth kernel — has no
    radial variance at all, as with the published ROM's fixed norm, but without its bias.
    (The blocks stay only approximately uniform directions, as before.)

    ``weighted=False``: the construction of earlier versions, per-frequency radii of the
    radial law in dimension d_pad and equal weights.
    """
    random_state, density = request.random_state, request.density
    d_pad = next_power_of_two(request.n_features)
    size = request.n_frequencies
    n_blocks = size // d_pad
    signs = random_signs(random_state, (n_blocks, 3, d_pad))
    if not weighted:
        return Frequencies(SORFProjection(signs, sorf_radii(request) / d_pad ** 1.5))
    shares = random_state.chisquare(d_pad, n_blocks)
    shares /= shares.sum()
    squared, weights = self_normalised_chi2(size, size, random_state, request.sampling)
    sigma = (density.scale_ppf(uniform_points(request.sampling, size, 1, random_state)[:, 0])
             if density.mixture else density.scale_ppf(np.full(size, 0.5)))
    lengths = sigma * np.sqrt(squared * np.repeat(shares, d_pad))
    return Frequencies(SORFProjection(signs, lengths / d_pad ** 1.5), weights)


def fastfood_frequencies(request: FrequencyRequest) -> Frequencies:
    random_state = request.random_state
    d_pad = next_power_of_two(request.n_features)
    n_blocks = request.n_frequencies // d_pad
    signs = random_signs(random_state, (n_blocks, d_pad))
    permutation = np.stack([random_state.permutation(d_pad) for _ in range(n_blocks)])
    gaussian = random_state.normal(size=(n_blocks, d_pad))
    lengths = radii(request.density, d_pad, request.n_frequencies, random_state,
                    request.sampling).reshape(n_blocks, d_pad)
    row_scale = lengths / (np.sqrt(d_pad) * np.linalg.norm(gaussian, axis=1, keepdims=True))
    return Frequencies(FastfoodProjection(signs, permutation.astype(np.int32), gaussian,
                                          row_scale.ravel()))
