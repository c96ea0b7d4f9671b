"""Fast in-place float64 cosine built from vectorised NumPy ufunc passes.

Why this exists
---------------
NumPy's ``np.cos`` on float64 calls the C library's scalar ``cos`` once per
element (float32 is SIMD-vectorised, float64 is not), which costs roughly
17-30 ns/element for arguments of magnitude 1-100.  Random Fourier feature
maps spend most of their time in ``cos(X @ W + b)``, so this module evaluates
the cosine with a short sequence of SIMD-vectorised ufunc passes (``multiply``,
``add``, integer shift/xor) over cache-resident chunks instead.

Algorithm
---------
Cody-Waite additive argument reduction (W. J. Cody and W. Waite, *Software
Manual for the Elementary Functions*, Prentice-Hall, 1980, the SIN/COS
chapter; see also J.-M. Muller, *Elementary Functions: Algorithms and
Implementation*, 3rd ed., Birkhauser, 2016, chapter on range reduction):

1. ``k = rint(x / pi)``.  Rounding is done by adding and subtracting the
   "magic" constant ``1.5 * 2**52``: after the addition the low mantissa bits
   of the sum hold ``2**51 + k`` as an integer, so the parity of ``k`` can be
   read from the least significant bit without a float->int conversion pass.
2. ``r = (x - k * PI_HI) - k * PI_LO`` where ``PI_HI`` keeps only the top 33
   significant bits of pi, so ``k * PI_HI`` is exact for ``|k| < 2**20`` and
   the subtraction is exact by Sterbenz' lemma; ``PI_LO = round(pi - PI_HI)``
   leaves a representation error of 7e-27, i.e. < 1e-20 after scaling by
   ``k``.  The computed ``r`` is within half an ulp of ``x - k*pi`` and
   ``|r| <= pi/2 + 4e-10`` (``k`` may be off by one only when ``x / pi`` is
   within rounding error of a half-integer).
3. ``cos(x) = (-1)**k * cos(r)``.  ``cos(r)`` is an even polynomial of degree
   16 in ``r`` (degree 8 in ``u = r*r``) evaluated by Horner's rule.  The
   coefficients were computed for this module with a weighted Remez exchange
   in 60-digit decimal arithmetic, with ``c0 = 1`` and ``c1 = -1/2`` pinned to
   their exact values and the remaining coefficients rounded to double one at
   a time (re-optimising the higher ones after each rounding).  The
   approximation error of the double-precision coefficients is 5.8e-18 on
   ``u in [0, (pi/2 + 1e-6)**2]``.
4. The sign ``(-1)**k`` is applied branch-free by shifting the parity bit of
   step 1 into the IEEE sign position and xor-ing it into the result.

Elements with ``|x| <= MAX_FAST_ARG`` (``2**18 * pi``, about 8.2e5, so
``|k| <= 2**18``, a factor 4 below the exactness limit) use the fast path.
All others, inf and NaN included, are recomputed with ``np.cos`` (masked, so
only those elements pay for it), which also keeps ``np.cos``'s NaN results
and floating-point warnings/errors for non-finite input.

Accuracy
--------
The guarantee is on the absolute error, not the relative one: near the zeros
of cos the result is small and its relative error is not bounded.  A
first-order error budget at ``|r| -> pi/2`` (the worst case) is 1.1e-16
(rounding of ``r``) + 0.9e-16 (rounding of ``u``) + 1.3e-16 (Horner
rounding) + 0.06e-16 (approximation) ~= 3.5e-16, so the absolute error is
below 4e-16 (1.8 ulp of 1.0) for every finite input.  Measured against
``np.cos``: 3.26e-16 maximum over 1e7 random arguments with log-uniform
magnitudes 1e-3..1e5, over 1e7 arguments next to the zeros of cos, and over
special values (multiples of pi/2 and their neighbours, +-0, subnormals,
``MAX_FAST_ARG``); results beyond ``MAX_FAST_ARG``, inf and NaN are
bit-identical to ``np.cos``.

Speed
-----
On a shared 2-vCPU AMD EPYC (Zen 5) VM with NumPy 2.4, for 1e6 float64
elements, median of 31 interleaved runs: ``np.cos`` 17.8 ns/element and
``cos_inplace`` 3.9 ns/element for N(0, 10**2) arguments, 21.4 vs 4.8
ns/element for N(0, 100**2) (4.4-4.5x).  Under heavy load from other
processes the medians varied (``np.cos`` 18-58, ``cos_inplace`` 4-14
ns/element) but the speed-up stayed between 3.6x and 5.7x.

Offset, scale and a known bound
-------------------------------
Feature maps want ``scale * cos(P + offset)`` with one offset per column.
``cos_inplace`` adds the offset and applies the scale chunk by chunk (chunks
of whole rows) while the chunk is in cache, instead of one pass over the whole
block each: a scalar scale is folded into the polynomial's coefficients (no
pass at all), a per-column scale is one multiplication of the chunk. A caller
that has bounded the arguments (``max_abs``, e.g. by Cauchy-Schwarz on the
projection: :func:`kernelmaps.maps._projection.argument_bound`) within half the
fast range spares the two reductions of the range check. Measured on the same
VM, RBF features of 240 x 1,000 float64 (the engine's block), interleaved
medians: 0.95x the time of the separate passes.

Compiled with Numba (``set_config(jit="auto")``, the default)
--------------------------------------------------------------
The NumPy form makes 23-28 passes over each chunk, each a ufunc call that reads and
writes the chunk in L2: about 4.5-6.7 ns/element, a third of ``FeatureRidge``'s one-pass
fit on float64 data. :func:`_cos_rows` is the same algorithm, element by element, for
Numba to compile into one pass per row: 1.0-1.1 ns/element on the same machine (240 x
1,000 blocks, interleaved medians). It makes the same IEEE operations in the same order,
and Numba without ``fastmath`` neither reassociates nor contracts a multiply and an add
into an FMA, so its numbers are the NumPy form's bit for bit (tested on every shape and
form): which path runs never changes a result.

Once loaded, the compiled kernel is faster at every size (measured from 10 elements, one
row of 10, to 240 x 1,000: 2.5-13x per call, dispatch included, at load average 8.6-9.2
on 2 vCPUs). What it costs is loading it, once per process: importing Numba and loading
the kernel from Numba's disk cache (the first compile, ~1 s more, happens once per
install). ``jit="auto"`` therefore counts the elements the NumPy cosine has done in the
process and switches when they reach :data:`JIT_AUTO_ELEMENTS`, the work whose NumPy time
equals that load — the ski-rental rule: a process never pays more than twice what the
better choice in hindsight would have cost, and one that cosines little (``import
kernelmaps``, small transforms) never imports Numba at all. A call whose whole work is
known before its first block — ``FeatureRidge``'s pass over its rows, a map's ``transform``
of an array — tells the rule so (:func:`expect_cosines`): when that work would take the count
past :data:`JIT_AUTO_ELEMENTS` (alone, or with what the process did before), its first block
loads the compiled kernel, instead of its blocks running on NumPy's passes until the count
crosses. (Measured, one thread, load 4-5, CPU time over a bare ``syrk`` of the same rows: a
fresh process's 200,000 x 1,000 fit, 1.24 -> 1.12-1.15.)

``output="cos_sin"`` (:func:`cos_sin`) has its own compiled loop: the NumPy form copies the
projections into the first half of the output, subtracts π/2 into the second and runs the
cosine over both; compiled, one pass reads each projection once and writes its cosine and
its sine with the same operations, bit for bit. Measured on a 2-vCPU AMD EPYC (Zen 5) VM,
one thread, load 2-3.5, medians of 41: the default ``RandomFourierFeatures`` transform of
2,000 x 20 rows at D = 1,000 went from 5.2-5.3 ms to 4.5 ms (its cos/sin step from 2.5 to
1.7 ms), against 10.2 ms with NumPy's passes.

The work is done in chunks of ``CHUNK = 32768`` elements: each of the four
live float64 buffers (the chunk plus three scratch buffers) is 256 KiB, so
they stay in the 1 MiB L2 cache, while the 28 ufunc calls per chunk (about
0.5-1 us of overhead each) cost under 1 ns/element.  16384 and 65536 measured
within noise of 32768; 8192 and below were clearly slower (call overhead).
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from kernelmaps._config import get_config
from kernelmaps._optional import import_optional

__all__ = ["JIT_AUTO_ELEMENTS", "MAX_FAST_ARG", "compiled_pays", "compiled_pays_loading",
           "cos_inplace", "cos_sin", "expect_cosines"]

# Elements processed per block of ufunc passes (see the module docstring).
CHUNK = 32768

#: ``jit="auto"``'s crossover: the cosine elements a process does with NumPy before it loads
#: the compiled kernel (the module docstring). Measured in one process per run (240 x 1,000
#: blocks with offset and scale, 40 medians per path, NumPy and compiled interleaved twice;
#: 3 fresh processes at load average 8.5-9.0 on a shared 2-vCPU AMD EPYC): importing Numba
#: and the first call from its disk cache took 3.8-12 s, the NumPy passes 35-88 ns and the
#: compiled kernel 3.5-4.2 ns per element, so the load was repaid after 1.04e8, 1.29e8 and
#: 1.43e8 elements: the median, rounded. (A 1,000 x 1,000 transform is 1e6 elements.)
#: Re-measured the same way on a quieter 2-vCPU AMD EPYC VM (issue 33, load 3.6-3.7, 3
#: fresh processes, CPU time): the load took 0.33-0.34 s (0.54-0.56 s with a cold cache, the
#: kernel compiled), NumPy 3.0-3.1 ns and compiled 0.52-0.53 ns per element: repaid after
#: 1.29-1.35e8 elements (cold: 2.1-2.2e8) — the same crossover on a machine ten times faster
#: per element, so the constant stays. A call that knows its work up front (a fit's pass,
#: a whole transform: :func:`expect_cosines`) switches at its first block when that work
#: takes the count past it: a 100,000 x 1,000 fit (1e8) is rightly left on NumPy's passes in
#: a fresh process (0.31 s of NumPy cosine against 0.34 s of load + 0.05 s compiled), and
#: the second such fit of the process loads the kernel at its start, not a third of the way.
JIT_AUTO_ELEMENTS = 130_000_000

# Rounding constant 1.5 * 2**52: for |t| < 2**51, t + MAGIC rounds t to the
# nearest integer (ties to even) and stores 2**51 + rint(t) in the mantissa.
_MAGIC = np.float64(6755399441055744.0)
_INV_PI = np.float64(float.fromhex("0x1.45f306dc9c883p-2"))  # round(1/pi)
# pi split so that k * _PI_HI is exact: _PI_HI has 33 significant bits.
_PI_HI = np.float64(float.fromhex("0x1.921fb544p+1"))
_PI_LO = np.float64(float.fromhex("0x1.0b4611a626331p-33"))  # round(pi - _PI_HI)

# Bound on |k| = |rint(x/pi)|: 2**18 leaves a factor-4 margin below the 2**20
# limit where k*_PI_HI stops being exact.
_MAX_K = 2.0**18
# Elements up to this magnitude take the fast path (|k| <= 2**18), all larger
# ones go to np.cos.
MAX_FAST_ARG = float(_MAX_K * np.pi)

# cos(sqrt(u)) ~= sum(c[i] * u**i), highest degree first for Horner's rule.
# Weighted minimax on u in [0, (pi/2 + 1e-6)**2], c0 = 1 and c1 = -1/2 exact.
_COEFS = tuple(
    np.float64(float.fromhex(h))
    for h in (
        "0x1.9fc8058e2f246p-45",
        "-0x1.9357389752a0cp-37",
        "0x1.1eecfad41d863p-29",
        "-0x1.27e4f9f2e8ce0p-22",
        "0x1.a01a019ba6080p-16",
        "-0x1.6c16c16c101f5p-10",
        "0x1.55555555554ddp-5",
        "-0x1.0000000000000p-1",
        "0x1.0000000000000p+0",
    )
)


def _cos_chunk(
    x: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray,
    coefs: tuple[np.float64, ...] = _COEFS, checked: bool = True,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Overwrite the contiguous float64 chunk ``x`` with the fast-path cosine.

    Must run with floating-point errors ignored: elements outside the fast
    path's range produce garbage (and overflow/invalid flags) here and are
    handed back to the caller for ``np.cos``.

    Parameters
    ----------
    x : ndarray of float64, 1-D, contiguous
        Arguments; overwritten with their cosines.
    a, b, c : ndarray of float64
        Scratch buffers of the same length as ``x``.
    coefs : tuple of float64
        The Horner coefficients, highest degree first (:data:`_COEFS`, or
        :data:`_COEFS` times a scale folded into the result).
    checked : bool
        Whether to run the range check; ``False`` only when the caller has
        bounded every element by ``MAX_FAST_ARG / 2`` (no NaN, no inf).

    Returns
    -------
    tuple of (ndarray of intp, ndarray of float64) or None
        ``None`` when every element was handled; otherwise the indices into
        ``x`` of the unhandled elements (``|x| > MAX_FAST_ARG``, inf, NaN)
        and their original values, which the caller overwrites with
        ``np.cos`` of those values.
    """
    mul, add, sub = np.multiply, np.add, np.subtract
    # Steps 1-2: a = x/pi + MAGIC (parity of k in its low bit), b = k.
    mul(x, _INV_PI, out=a)
    add(a, _MAGIC, out=a)
    sub(a, _MAGIC, out=b)
    # Chunk-level range check with two SIMD reductions and no writes; NaN
    # makes the comparisons False.  (np.dot(b, b) would be a single pass, but
    # OpenBLAS threads it, which is far slower at this size.)  The bound is
    # strict because |x| slightly above MAX_FAST_ARG still rounds to
    # |k| == 2**18: those chunks take the exact per-element test on x below,
    # so whether an element goes to np.cos never depends on its neighbours.
    bad = None
    if checked and not (b.min() > -_MAX_K and b.max() < _MAX_K):
        idx = np.flatnonzero(~(np.abs(x) <= MAX_FAST_ARG))  # `~(<=)` keeps NaN
        if idx.size:
            # Save the originals before x is overwritten below.
            bad = (idx, x[idx])
    # Cody-Waite reduction: c = (x - k*PI_HI) - k*PI_LO.
    mul(b, _PI_HI, out=c)
    sub(x, c, out=c)
    mul(b, _PI_LO, out=b)
    sub(c, b, out=c)
    # Horner in u = r*r (u in b, polynomial accumulated in c).
    mul(c, c, out=b)
    mul(b, coefs[0], out=c)
    add(c, coefs[1], out=c)
    for coef in coefs[2:]:
        mul(c, b, out=c)
        add(c, coef, out=c)
    # Apply (-1)**k: move the parity bit of the magic sum into the sign bit
    # and xor it into the result, written straight into x.
    ai = a.view(np.int64)
    np.left_shift(ai, 63, out=ai)
    np.bitwise_xor(c.view(np.int64), ai, out=x.view(np.int64))
    return bad


def cos_inplace(x: np.ndarray, *, offset: np.ndarray | None = None,
                scale: float | np.ndarray = 1.0, max_abs: float | None = None) -> None:
    """Overwrite ``x`` with ``scale * cos(x + offset)`` in place.

    Float64 C-contiguous arrays use a vectorised Cody-Waite reduction and
    minimax polynomial (see the module docstring); the absolute error is below
    4e-16 for every finite argument (``4e-16 * |scale|`` with a scale).
    Float32 arrays, other dtypes that ``np.cos`` can write back in place, and
    non-contiguous arrays use ``np.cos(x, out=x)``.

    The offset and the scale are applied chunk by chunk while the chunk is in
    the L2 cache, instead of as separate passes over the whole array: the
    offset is added first (``x + offset`` rounded as NumPy rounds it), a
    scalar scale is folded into the polynomial's coefficients (no pass at
    all: the result is within the error bound above of ``scale * cos``, not
    bitwise ``np.multiply``'s), and a scale of one factor per column is
    multiplied last.

    Parameters
    ----------
    x : ndarray
        Array to transform; must be writeable.  Modified in place.  2-D
        ``(rows, D)`` when ``offset`` or an array ``scale`` is given.
    offset : ndarray of shape (D,), default=None
        Added to every row before the cosine.
    scale : float or ndarray of shape (D,), default=1.0
        Factor of the result (one number, or one per column).
    max_abs : float, default=None
        A bound the caller has proven on ``|x + offset|`` (a NaN or inf
        bound, or none, means unknown).  When it is at most
        ``MAX_FAST_ARG / 2`` the per-chunk range check is skipped (two
        reductions of the chunk's eight passes' worth of work); otherwise
        every element is checked as usual.

    Returns
    -------
    None
        The result is stored in ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, np.pi, 1e3])
    >>> cos_inplace(x)
    >>> bool(np.allclose(x, np.cos([0.0, np.pi, 1e3]), rtol=0, atol=4e-16))
    True
    >>> y = np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> cos_inplace(y, offset=np.array([0.5, -0.5]), scale=2.0, max_abs=3.5)
    >>> expected = 2.0 * np.cos(np.array([[0.5, 0.5], [2.5, 2.5]]))
    >>> bool(np.allclose(y, expected, rtol=0, atol=8e-16))
    True
    """
    if not x.flags.writeable:
        raise ValueError("cos_inplace requires a writeable array")
    _cos_inplace(x, offset, scale, max_abs, may_compile=True)


def _cos_inplace(x: np.ndarray, offset: np.ndarray | None, scale: float | np.ndarray,
                 max_abs: float | None, may_compile: bool) -> None:
    """:func:`cos_inplace`; ``may_compile=False``: the NumPy passes, whatever ``jit`` says
    (for a caller that has already asked :func:`_use_compiled` about this work)."""
    per_column = offset is not None or np.ndim(scale) > 0
    if x.size == 0:
        return
    if per_column and (x.ndim != 2 or not x.flags.c_contiguous):
        # One pass each over an array without whole rows to chunk by (rare here).
        if offset is not None:
            x += offset
        _cos_inplace(x, None, 1.0, max_abs, may_compile)
        x *= scale
        return
    fast = x.dtype == np.float64 and x.flags.c_contiguous
    if not fast and not per_column:
        # float32 np.cos is already SIMD-vectorised; other layouts/dtypes are
        # rare here and not worth a dedicated path.
        np.cos(x, out=x)
        if np.ndim(scale) or scale != 1.0:
            x *= scale
        return
    # Chunks of whole rows where a row vector applies (a row longer than a
    # chunk is a chunk of its own), of CHUNK elements otherwise.
    width = x.shape[-1] if per_column else 1
    rows = max(1, CHUNK // width) if per_column else CHUNK
    grid = x.reshape(-1, width)  # a view, since x is C-contiguous
    n = grid.shape[0]
    size = min(n, rows) * width
    if not fast:  # float32: np.cos, with the offset and the scale per chunk in cache
        for start in range(0, n, rows):
            part = grid[start:start + rows]
            if offset is not None:
                part += offset
            np.cos(part, out=part)
            part *= scale
        return
    scalar = np.ndim(scale) == 0
    coefs = _COEFS if not scalar or scale == 1.0 else tuple(
        np.float64(scale) * coef for coef in _COEFS)
    checked = not (max_abs is not None and max_abs <= MAX_FAST_ARG / 2)
    if may_compile and _use_compiled(x.size):
        rows_view = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x.reshape(1, -1)
        skipped = _cos_compiled(rows_view, offset, coefs, None if scalar else scale, checked)
        if skipped is not None:  # rows with an argument beyond the fast range: NumPy's path
            for i in skipped:
                _cos_inplace(rows_view[i:i + 1], offset, scale, None, may_compile=False)
        return
    a = np.empty(size)
    b = np.empty(size)
    c = np.empty(size)
    fallback = []
    with np.errstate(all="ignore"):
        for start in range(0, n, rows):
            part = grid[start:start + rows]
            if offset is not None:
                part += offset
            flat = part.reshape(-1)
            m = flat.shape[0]
            bad = _cos_chunk(flat, a[:m], b[:m], c[:m], coefs, checked)
            if bad is not None:
                fallback.append((start * width + bad[0], bad[1]))
            if not scalar:
                part *= scale
    # Outside errstate, so np.cos warns/raises exactly as it would on its own.
    flat = x.reshape(-1)
    for idx, values in fallback:
        flat[idx] = np.cos(values) * (scale if scalar else scale[idx % width])


def cos_sin(projections: np.ndarray, out: np.ndarray,
            scale: float | np.ndarray = 1.0) -> None:
    """Write ``scale · [cos P, sin P]`` into ``out``: the cosines of ``projections`` in the
    first half of the columns, their sines in the second.

    The sine is the cosine of ``p − π/2`` (one more rounding of the argument: at most half
    an ulp of ``p``), so both halves are :func:`cos_inplace`'s fast cosine, within 4e-16 ×
    ``|scale|`` of the shifted argument's cosine. The NumPy form copies ``P``, subtracts
    π/2 into the second half and runs :func:`cos_inplace` over ``out``; compiled (``jit``,
    the same rule as :func:`cos_inplace`'s) it is one pass that reads each ``p`` once and
    writes both of its features, with the same numbers bit for bit.

    Parameters
    ----------
    projections : ndarray of float64, shape (n, m)
        The arguments P.
    out : ndarray of float64, shape (n, 2m)
        Overwritten with the features.
    scale : float or ndarray of shape (2m,), default=1.0
        Factor of the result (one number, or one per output column).

    Returns
    -------
    None
        The result is stored in ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.0, 1.0]])
    >>> out = np.empty((1, 4))
    >>> cos_sin(P, out)
    >>> expected = [[1.0, np.cos(1.0), 0.0, np.sin(1.0)]]
    >>> bool(np.allclose(out, expected, rtol=0, atol=1e-15))
    True
    """
    rows, width = projections.shape
    if out.shape != (rows, 2 * width):
        raise ValueError(f"out must have shape {(rows, 2 * width)} (the projections' rows, "
                         f"twice their columns); got {out.shape}.")
    if not out.flags.writeable:
        raise ValueError("cos_sin requires a writeable out")
    if out.size == 0:
        return
    compiles = (out.dtype == np.float64 and projections.dtype == np.float64
                and out.flags.c_contiguous and projections.flags.c_contiguous
                and not np.may_share_memory(projections, out))
    if compiles and _use_compiled(out.size, _compiled_cos_sin_rows):
        scalar = np.ndim(scale) == 0
        coefs = _COEFS if not scalar or scale == 1.0 else tuple(
            np.float64(scale) * coef for coef in _COEFS)
        skipped = np.empty(rows, dtype=np.int64)
        count = _compiled_cos_sin_rows()(
            projections, out, np.asarray(coefs, dtype=np.float64),
            _NO_VECTOR if scalar else np.ascontiguousarray(scale, dtype=np.float64), skipped)
        skipped = skipped[:count] if count else None
        for i in () if skipped is None else skipped:  # beyond the fast range: NumPy's path
            _cos_sin_passes(projections[i:i + 1], out[i:i + 1], scale, may_compile=False)
        return
    _cos_sin_passes(projections, out, scale, may_compile=not compiles)


def _cos_sin_passes(projections: np.ndarray, out: np.ndarray, scale: float | np.ndarray,
                    may_compile: bool) -> None:
    """:func:`cos_sin`'s NumPy form: the copy, the shift, :func:`cos_inplace` over both."""
    width = projections.shape[1]
    out[:, :width] = projections
    np.subtract(projections, _HALF_PI, out=out[:, width:])
    _cos_inplace(out, None, scale, None, may_compile)


# ----------------------------------------------------------------------- compiled (Numba)
def _cos_element(v: float, coefs: np.ndarray) -> float:
    """``cos v`` for one argument in the fast range, by the NumPy passes' operations in their
    order (``a = v/pi + MAGIC``, ``k = a - MAGIC``, the Cody-Waite reduction, Horner with
    ``coefs``, the sign of ``(-1)**k`` as a negation): the one definition both compiled
    kernels use, inlined into each by Numba (:func:`_compile_element`)."""
    a = v * _INV_PI_F + _MAGIC_F
    k = a - _MAGIC_F
    r = (v - k * _PI_HI_F) - k * _PI_LO_F
    u = r * r
    p = u * coefs[0] + coefs[1]
    p = p * u + coefs[2]
    p = p * u + coefs[3]
    p = p * u + coefs[4]
    p = p * u + coefs[5]
    p = p * u + coefs[6]
    p = p * u + coefs[7]
    p = p * u + coefs[8]
    if np.int64(k) & 1:
        p = -p
    return p


#: What the kernels call for one element: :func:`_cos_element` itself until a kernel is
#: compiled, then Numba's compilation of it (inlined), which the kernels' compilation
#: resolves from this module's globals (:func:`_compile_element`).
_cos_one: Callable[[float, np.ndarray], float] = _cos_element


def _compile_element(numba: Any) -> None:
    """Put Numba's inlined compilation of :func:`_cos_element` where the kernels look for it
    (once per process, before either kernel is compiled or loaded from the disk cache)."""
    global _cos_one
    if _cos_one is _cos_element:
        _cos_one = numba.njit(inline="always")(_cos_element)


def _cos_rows(x: np.ndarray, offset: np.ndarray, coefs: np.ndarray, scale: np.ndarray,
              checked: bool, skipped: np.ndarray) -> int:
    """The fast path of :func:`cos_inplace` row by row, for Numba to compile (``jit``).

    Each element goes through the same IEEE operations as the NumPy passes, in the same
    order — the offset added, ``a = x/pi + MAGIC``, ``k = a - MAGIC``, the Cody-Waite
    reduction, Horner with ``coefs``, the sign of ``(-1)**k`` (a negation: the NumPy path's
    xor of the sign bit), the per-column ``scale`` last — and Numba, without ``fastmath``,
    neither reassociates nor fuses a multiply and an add, so the results are the NumPy
    path's bit for bit. ``offset`` and ``scale`` are empty when absent. With ``checked``, a
    row holding an argument outside the fast range (``|x| > MAX_FAST_ARG``, inf, NaN) is
    left as it was and its index written to ``skipped``; the count is returned, and the
    caller runs those rows through the NumPy path (which sends exactly those elements to
    ``np.cos``).
    """
    n, width = x.shape
    has_offset = offset.shape[0] == width
    has_scale = scale.shape[0] == width
    count = 0
    for i in range(n):
        row = x[i]
        if checked:
            inside = True
            for j in range(width):
                v = row[j] + offset[j] if has_offset else row[j]
                if not abs(v) <= MAX_FAST_ARG:
                    inside = False
                    break
            if not inside:
                skipped[count] = i
                count += 1
                continue
        for j in range(width):
            v = row[j] + offset[j] if has_offset else row[j]
            p = _cos_one(v, coefs)
            if has_scale:
                p = p * scale[j]
            row[j] = p
    return count


def _cos_sin_rows(projections: np.ndarray, out: np.ndarray, coefs: np.ndarray,
                  scale: np.ndarray, skipped: np.ndarray) -> int:
    """:func:`cos_sin` row by row, for Numba to compile (``jit``): ``out[i, j]`` the cosine of
    ``p = projections[i, j]`` and ``out[i, m + j]`` that of ``p − π/2``, each element through
    :func:`_cos_rows`'s operations (the NumPy form's ``np.subtract`` first, for the sine),
    so the results are :func:`_cos_sin_passes`' bit for bit; one read of each ``p`` for its
    two features, where the NumPy form copies and shifts the block before its cosine passes.
    A row holding an argument outside the fast range is left as it was and its index
    written to ``skipped``; the count is returned (the caller runs those rows through the
    NumPy form)."""
    n, width = projections.shape
    has_scale = scale.shape[0] == 2 * width
    count = 0
    for i in range(n):
        source = projections[i]
        target = out[i]
        inside = True
        for j in range(width):
            if not (abs(source[j]) <= MAX_FAST_ARG and abs(source[j] - _HALF_PI) <= MAX_FAST_ARG):
                inside = False
                break
        if not inside:
            skipped[count] = i
            count += 1
            continue
        for half in range(2):  # the cosines, then the sines (cos(p − π/2))
            for j in range(width):
                v = source[j] - _HALF_PI if half else source[j]
                p = _cos_one(v, coefs)
                if has_scale:
                    p = p * scale[half * width + j]
                target[half * width + j] = p
    return count


# Python floats for the compiled kernel (Numba freezes module globals as constants).
_INV_PI_F, _MAGIC_F = float(_INV_PI), float(_MAGIC)
_PI_HI_F, _PI_LO_F = float(_PI_HI), float(_PI_LO)
_NO_VECTOR = np.empty(0)
#: The shift of the sine's argument, ``sin p = cos(p − π/2)`` (:func:`cos_sin`).
_HALF_PI = np.pi / 2


# Cosine elements done by the NumPy path under jit="auto" in this process (a plain counter:
# a count lost to a race between threads only delays the switch by one block).
_numpy_elements = 0


@functools.cache
def _numba_installed() -> bool:
    """Whether Numba can be imported, without importing it."""
    return importlib.util.find_spec("numba") is not None


def _use_compiled(elements: int,
                  kernel: Callable[[], Callable[..., int]] | None = None) -> bool:
    """Whether a cosine of ``elements`` runs compiled: ``jit=True`` always, ``False``
    never, ``"auto"`` once loaded or once the process's NumPy cosine work reaches
    :data:`JIT_AUTO_ELEMENTS` (where Numba is installed), ``kernel`` (default:
    :func:`_compiled_cos_rows`) being the one loaded at the switch."""
    global _numpy_elements
    setting = get_config()["jit"]
    if not isinstance(setting, str):
        return bool(setting)
    if _loaded():  # Numba loaded: faster at every size
        return True
    if not _numba_installed():
        return False
    _numpy_elements += elements
    if _numpy_elements < JIT_AUTO_ELEMENTS:
        return False
    try:
        (_compiled_cos_rows if kernel is None else kernel)()
    except ImportError:  # a broken Numba install: "auto" stays on NumPy's path for good
        _numpy_elements = _NEVER
        return False
    return True


def _loaded() -> bool:
    """Whether a compiled kernel has been loaded in this process (Numba imported)."""
    return bool(_compiled_cos_rows.cache_info().currsize
                or _compiled_cos_sin_rows.cache_info().currsize)


#: ``_numpy_elements`` after a failed load of Numba: never reaches the crossover again.
_NEVER = -(2**62)


def expect_cosines(elements: int) -> None:
    """Tell ``jit="auto"`` that one call is about to run ``elements`` float64 cosines.

    A caller that knows its work up front — ``FeatureRidge``'s pass over its rows, a map's
    ``transform`` of a whole array — says so before its first block. When that work, with
    the NumPy cosines the process has already done, reaches :data:`JIT_AUTO_ELEMENTS`, the
    call would cross the crossover and pay the load anyway: its first cosine loads the
    compiled kernel, instead of its blocks running on NumPy's passes until the count
    crosses (a process still pays at most about twice the better choice in hindsight: what
    it ran on NumPy before this call is below the crossover, whose NumPy time is the load's).
    Smaller work changes nothing (its blocks are counted as they run). ``jit=True`` or
    ``False`` ignore it.

    Parameters
    ----------
    elements : int
        The cosines the call will run.

    Returns
    -------
    None

    Examples
    --------
    >>> expect_cosines(1_000)  # far below the crossover: nothing changes
    """
    global _numpy_elements
    if _numpy_elements != _NEVER and _numpy_elements + elements >= JIT_AUTO_ELEMENTS:
        _numpy_elements = max(_numpy_elements, JIT_AUTO_ELEMENTS)


def compiled_pays(saved_cosines: float, load: Callable[[], Any]) -> bool:
    """Whether a call runs another compiled kernel, by the work it saves, known up front.

    For kernels other than the cosine (the FALKON sweep:
    :func:`kernelmaps.models.interface.compiled_sweep`): the caller states what the
    compiled kernel would save over its NumPy/BLAS form in the whole call, in the time of
    NumPy cosines (its own measured exchange rate), and ``jit="auto"`` compiles when that
    reaches :data:`JIT_AUTO_ELEMENTS` — the cost of loading Numba in the same unit — and
    Numba is installed. The process's history is not consulted (unlike the cosine's count,
    whose two paths are bitwise equal): the same call makes the same choice in any process.
    ``jit=True`` always compiles, ``False`` never. ``load()`` (importing Numba and loading
    the kernel) runs when the answer is yes; under ``"auto"`` a broken Numba install
    (an ImportError) answers no.

    Parameters
    ----------
    saved_cosines : float
        What the compiled kernel saves over the call, in NumPy float64 cosines' time.
    load : callable
        Loads the compiled kernel (raises ImportError where Numba is missing).

    Returns
    -------
    bool
        Whether to run the compiled kernel.

    Examples
    --------
    >>> compiled_pays(1_000, load=lambda: None)  # far below the crossover (jit="auto")
    False
    """
    if not _pays(saved_cosines):
        return False
    try:
        load()
    except ImportError:  # a broken Numba install: "auto" keeps the NumPy/BLAS path
        if get_config()["jit"] is True:
            raise
        return False
    return True


def _pays(saved_cosines: float) -> bool:
    """The decision of :func:`compiled_pays` without the load: ``jit=True`` (raising the
    ImportError naming the fix where Numba is not installed), or ``"auto"`` with the saving
    at the crossover and Numba installed."""
    setting = get_config()["jit"]
    if setting is True:
        if not _numba_installed():
            import_optional("numba", extra="jit")
        return True
    return setting is not False and saved_cosines >= JIT_AUTO_ELEMENTS and _numba_installed()


def compiled_pays_loading(saved_cosines: float,
                          load: Callable[[], Any]) -> Callable[[], bool] | None:
    """:func:`compiled_pays`, with the load on a background thread while the caller works.

    For a call that has other work before its first compiled kernel (FALKON's first pass
    over the data before its CG sweeps): loading Numba and the kernel from its disk cache
    (0.2-0.36 s, measured in :func:`kernelmaps.models.interface.compiled_sweep`) then
    runs beside that work instead of before the kernel's first call. The decision is
    :func:`compiled_pays`'s, taken now from the same known work; where Numba is not
    installed, ``jit=True`` raises the ImportError naming the fix now, before any work.

    Parameters
    ----------
    saved_cosines : float
        As :func:`compiled_pays`'s.
    load : callable
        As :func:`compiled_pays`'s; run on a daemon thread here.

    Returns
    -------
    callable or None
        None when the call runs its NumPy/BLAS form; else ``ready()``, which waits for the
        load and returns whether the compiled kernel is loaded: True, or — a Numba install
        that fails to import — False under ``"auto"`` (the NumPy/BLAS form runs) and the
        ImportError under ``jit=True``.

    Examples
    --------
    >>> compiled_pays_loading(1_000, load=lambda: None) is None  # below the crossover
    True
    """
    if not _pays(saved_cosines):
        return None
    forced = get_config()["jit"] is True
    failure: list[ImportError] = []

    def run() -> None:
        try:
            load()
        except ImportError as error:  # raised (True) or answered (auto) by ready()
            failure.append(error)

    thread = threading.Thread(target=run, name="kernelmaps-jit-load", daemon=True)
    thread.start()

    def ready() -> bool:
        thread.join()
        if failure and forced:
            raise failure[0]
        return not failure

    return ready


@functools.cache
def _compiled_cos_rows() -> Callable[..., int]:
    """:func:`_cos_rows` compiled by Numba (once per process; the machine code is cached on
    disk by Numba, ``cache=True``), releasing the GIL so the engine's threads run it side by
    side."""
    numba = import_optional("numba", extra="jit")
    _compile_element(numba)
    try:
        return numba.njit(nogil=True, cache=True)(_cos_rows)
    except RuntimeError:  # no writable cache directory (read-only install): compile per process
        return numba.njit(nogil=True)(_cos_rows)


def _cos_compiled(x: np.ndarray, offset: np.ndarray | None, coefs: tuple[np.float64, ...],
                  scale: np.ndarray | None, checked: bool) -> np.ndarray | None:
    """Run the compiled kernel on a C-contiguous 2-D float64 ``x``; the rows it skipped."""
    skipped = np.empty(x.shape[0] if checked else 0, dtype=np.int64)
    count = _compiled_cos_rows()(
        x, _NO_VECTOR if offset is None else np.ascontiguousarray(offset, dtype=np.float64),
        np.asarray(coefs, dtype=np.float64),
        _NO_VECTOR if scale is None else np.ascontiguousarray(scale, dtype=np.float64),
        checked, skipped)
    return skipped[:count] if count else None


@functools.cache
def _compiled_cos_sin_rows() -> Callable[..., int]:
    """:func:`_cos_sin_rows` compiled by Numba, as :func:`_compiled_cos_rows` is."""
    numba = import_optional("numba", extra="jit")
    _compile_element(numba)
    try:
        return numba.njit(nogil=True, cache=True)(_cos_sin_rows)
    except RuntimeError:  # no writable cache directory (read-only install): compile per process
        return numba.njit(nogil=True)(_cos_sin_rows)
