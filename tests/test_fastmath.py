"""Tests for the vectorised float64 cosine in :mod:`kernelmaps._fastmath`."""

from __future__ import annotations

import importlib.util
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kernelmaps import _fastmath, config_context, get_config, set_config
from kernelmaps._fastmath import MAX_FAST_ARG, cos_inplace, cos_sin

# Documented absolute-error bound (about 1.8 ulp of 1.0); the analysis in the
# module docstring gives ~3.5e-16 as the worst case, so this is not loose.
ATOL = 4e-16


def _check_against_np_cos(x: np.ndarray) -> None:
    """Assert that ``cos_inplace`` matches ``np.cos`` on ``x`` within ATOL."""
    expected = np.cos(x)
    got = x.copy()
    cos_inplace(got)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    err = np.abs(got[~nan] - expected[~nan])
    assert err.size == 0 or err.max() <= ATOL, f"max abs error {err.max():.3e}"


def _log_uniform(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """Signed values with log10-uniform magnitudes in ``[10**lo, 10**hi]``."""
    return rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(lo, hi, n)


def test_random_magnitudes_accuracy() -> None:
    rng = np.random.default_rng(0)
    # Several chunks plus a ragged tail, magnitudes 1e-3 .. 1e5.
    x = _log_uniform(rng, 3 * _fastmath.CHUNK + 777, -3, 5)
    _check_against_np_cos(x)


def test_typical_feature_map_arguments() -> None:
    # The intended workload: cos(X @ W + b) with roughly normal arguments.
    rng = np.random.default_rng(1)
    for scale in (1.0, 10.0, 100.0):
        _check_against_np_cos(rng.normal(0.0, scale, 50_000))


def test_extended_fast_range_accuracy() -> None:
    # Right up to the fast-path limit, where k is largest.
    rng = np.random.default_rng(2)
    x = rng.uniform(-MAX_FAST_ARG, MAX_FAST_ARG, 50_000)
    _check_against_np_cos(x)


def test_special_values() -> None:
    k = np.arange(-3000.0, 3001.0)
    half_pi_multiples = k * (np.pi / 2)
    x = np.concatenate(
        [
            [0.0, -0.0, 5e-324, -5e-324, 1e-310, 1e-20, np.pi, -np.pi, np.pi / 2],
            half_pi_multiples,
            # Neighbours of the multiples: the worst cases for the reduction.
            np.nextafter(half_pi_multiples, np.inf),
            np.nextafter(half_pi_multiples, -np.inf),
            # Exactly halfway between integers after division by pi, so
            # k = rint(x / pi) may round either way.
            (k + 0.5) * np.pi,
            np.arange(-4.0, 4.0, 1e-3),
        ]
    )
    _check_against_np_cos(x)


def test_zero_and_signed_zero_give_exactly_one() -> None:
    x = np.array([0.0, -0.0, 1e-300, -1e-300])
    cos_inplace(x)
    np.testing.assert_array_equal(x, 1.0)


def test_large_arguments_use_np_cos() -> None:
    # Beyond MAX_FAST_ARG the elements must be recomputed by np.cos, so the
    # result is bit-identical there (a plain Cody-Waite reduction would not
    # even be close at 1e300).
    big = np.array(
        [
            np.nextafter(MAX_FAST_ARG, np.inf),
            -np.nextafter(MAX_FAST_ARG, np.inf),
            1e6,
            3.0e7,
            2.0**52 + 1,
            2.0**53,
            1e22,
            1e300,
            -1e300,
            np.finfo(np.float64).max,
            np.finfo(np.float64).min,
        ]
    )
    got = big.copy()
    cos_inplace(got)
    np.testing.assert_array_equal(got, np.cos(big))
    # Also alone in their array, so no neighbour forces the slow path.
    for value in big:
        single = np.array([value])
        cos_inplace(single)
        np.testing.assert_array_equal(single, np.cos([value]))


def test_boundary_of_fast_range() -> None:
    edge = np.array([MAX_FAST_ARG, -MAX_FAST_ARG, np.nextafter(MAX_FAST_ARG, 0.0)])
    _check_against_np_cos(edge)
    # Just above the limit k still rounds to 2**18; these must nevertheless go
    # to np.cos (bit-identical), even alone in their array.  The fast path
    # differs from np.cos in the last bit for several of them.
    above = MAX_FAST_ARG + np.arange(1, 41) * 0.03
    for value in np.concatenate([above, -above]):
        single = np.array([value])
        cos_inplace(single)
        np.testing.assert_array_equal(single, np.cos([value]))


def test_nan_and_inf_give_nan_like_np_cos() -> None:
    x = np.array([1.0, np.nan, np.inf, -np.inf, -np.nan, 2.0])
    with np.errstate(invalid="ignore"):
        expected = np.cos(x)
        got = x.copy()
        cos_inplace(got)
    assert np.isnan(got[1:5]).all()
    # Non-finite elements are delegated to np.cos, so even the NaN sign and
    # payload bits match.
    np.testing.assert_array_equal(got[1:5].view(np.int64), expected[1:5].view(np.int64))
    # Their finite neighbours in the same chunk still get the fast path.
    np.testing.assert_allclose(got[[0, 5]], expected[[0, 5]], rtol=0, atol=ATOL)


def test_nonfinite_warns_like_np_cos() -> None:
    x = np.array([np.inf, 0.5])
    with pytest.warns(RuntimeWarning, match="invalid value"):
        np.cos(x)
    with pytest.warns(RuntimeWarning, match="invalid value"):
        cos_inplace(x)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        cos_inplace(np.array([-np.inf]))


def test_finite_inputs_raise_no_floating_point_errors() -> None:
    # The fast path's intermediate garbage for huge arguments must not leak
    # out as warnings or errors under the caller's error state.
    x = np.array([1e308, -1e308, 1e-310, 3.0, 1e200])
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        cos_inplace(x)
    np.testing.assert_array_equal(x[[0, 1, 4]], np.cos([1e308, -1e308, 1e200]))


def test_fallback_elements_in_later_chunks() -> None:
    # Unhandled elements in the second chunk and in the ragged tail must be
    # written back at their own positions (index offset per chunk).
    rng = np.random.default_rng(3)
    n = 2 * _fastmath.CHUNK + 11
    x = rng.normal(0.0, 30.0, n)
    positions = [_fastmath.CHUNK + 5, n - 1, n - 3]
    x[positions] = [np.nan, 1e10, -np.inf]
    with np.errstate(invalid="ignore"):
        _check_against_np_cos(x)


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(0, 64),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    )
)
def test_matches_np_cos_property(x: np.ndarray) -> None:
    with np.errstate(invalid="ignore"):
        _check_against_np_cos(x)


@settings(max_examples=100, deadline=None)
@given(st.floats(-MAX_FAST_ARG, MAX_FAST_ARG), st.integers(1, 40))
def test_matches_np_cos_fast_range_property(value: float, n: int) -> None:
    # Bias towards the fast path: a whole array of a single in-range value
    # and its floating-point neighbours.
    x = np.full(n, value)
    x[1::2] = np.nextafter(x[1::2], np.inf)
    _check_against_np_cos(x)


def test_writes_in_place_and_returns_none() -> None:
    x = np.linspace(-20.0, 20.0, 1001)
    expected = np.cos(x)
    address = x.__array_interface__["data"][0]
    assert cos_inplace(x) is None
    assert x.__array_interface__["data"][0] == address
    np.testing.assert_allclose(x, expected, rtol=0, atol=ATOL)


def test_multidimensional_c_contiguous_view() -> None:
    base = np.linspace(-50.0, 50.0, 6 * 7).reshape(6, 7)
    expected = np.cos(base)
    view = base[1:4]  # C-contiguous view: must write through to base
    cos_inplace(view)
    np.testing.assert_allclose(base[1:4], expected[1:4], rtol=0, atol=ATOL)
    np.testing.assert_array_equal(base[0], np.linspace(-50.0, 50.0, 42)[:7])


def test_float32_path() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 10.0, 1000).astype(np.float32)
    expected = np.cos(x)
    cos_inplace(x)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, expected)


def test_non_contiguous_falls_back() -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(0.0, 10.0, 101)
    original = base.copy()
    strided = base[::2]
    cos_inplace(strided)
    np.testing.assert_array_equal(base[::2], np.cos(original[::2]))
    # Elements between the strided ones are untouched.
    np.testing.assert_array_equal(base[1::2], original[1::2])

    f_order = np.asfortranarray(rng.normal(0.0, 10.0, (30, 7)))
    expected = np.cos(f_order)
    cos_inplace(f_order)
    np.testing.assert_array_equal(f_order, expected)


def test_empty_array() -> None:
    x = np.empty(0)
    cos_inplace(x)
    assert x.shape == (0,)


def test_read_only_array_raises() -> None:
    x = np.ones(10)
    x.flags.writeable = False
    with pytest.raises(ValueError):
        cos_inplace(x)


# ----------------------------------------------------------------- offset, scale and bound
# With a scalar scale folded into the polynomial's coefficients, each coefficient is
# rounded once more (relative 2**-53 of a term at most 1/4 of the sum) and every Horner
# step's rounding scales with |scale|, so the bound becomes ATOL·|scale|; the reference
# scale·np.cos(x) carries its own rounding of the product, half an ulp of |scale|.
def _scaled_atol(scale: np.ndarray | float) -> np.ndarray | float:
    return (ATOL + 2.0**-53) * np.abs(scale)


@pytest.mark.parametrize("rows, width", [(3, 7), (70, 1000), (2, 40_000)])
@pytest.mark.parametrize("per_column_scale", [False, True])
def test_offset_and_scale_match_the_separate_passes(rows: int, width: int,
                                                    per_column_scale: bool) -> None:
    # Rows narrower than a chunk, a few rows per chunk, and one row wider than a chunk.
    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 8.0, (rows, width))
    offset = rng.uniform(0.0, 2 * np.pi, width)
    scale = rng.uniform(0.1, 3.0, width) if per_column_scale else 0.0447
    expected = scale * np.cos(x + offset)
    got = x.copy()
    cos_inplace(got, offset=offset, scale=scale)
    assert np.all(np.abs(got - expected) <= _scaled_atol(scale))
    if per_column_scale:  # the per-column factor is one multiplication, as in NumPy
        plain = x + offset
        cos_inplace(plain)
        np.testing.assert_array_equal(got, plain * scale)


def test_known_bound_skips_only_the_check() -> None:
    # A bound within the fast range takes the same polynomial path without the range
    # check: bitwise the same numbers as the checked path.
    rng = np.random.default_rng(12)
    x = rng.normal(0.0, 20.0, (50, 300))
    offset = rng.uniform(0.0, 2 * np.pi, 300)
    checked, trusted = x.copy(), x.copy()
    cos_inplace(checked, offset=offset, scale=0.5)
    bound = float(np.abs(x + offset).max())
    cos_inplace(trusted, offset=offset, scale=0.5, max_abs=bound)
    np.testing.assert_array_equal(trusted, checked)


@pytest.mark.parametrize("bound", [MAX_FAST_ARG, np.inf, np.nan, None])
def test_unknown_or_large_bound_keeps_the_range_check(bound: float | None) -> None:
    # A bound above half the fast range (or NaN/inf/None) is not trusted: elements beyond
    # the fast range, inf and NaN still go to np.cos.
    x = np.array([[0.5, 2e6, np.inf], [np.nan, -3.0, 1e9]])
    with np.errstate(invalid="ignore"):
        expected = 2.0 * np.cos(x)
    got = x.copy()
    with np.errstate(invalid="ignore"):
        cos_inplace(got, offset=np.zeros(3), scale=2.0, max_abs=bound)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    assert np.all(np.abs(got[finite] - expected[finite]) <= _scaled_atol(2.0))


def test_offset_and_scale_on_float32_are_numpys_passes() -> None:
    rng = np.random.default_rng(13)
    x = rng.normal(0.0, 5.0, (40, 2000)).astype(np.float32)
    offset = rng.uniform(0.0, 6.0, 2000).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 2000).astype(np.float32)
    expected = np.cos(x + offset) * scale
    cos_inplace(x, offset=offset, scale=scale)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, expected)


def test_offset_on_non_contiguous_rows() -> None:
    rng = np.random.default_rng(14)
    base = rng.normal(0.0, 5.0, (20, 12))
    view = base[:, ::2]
    offset = rng.uniform(0.0, 6.0, 6)
    expected = 3.0 * np.cos(view + offset)
    cos_inplace(view, offset=offset, scale=3.0)
    assert np.all(np.abs(base[:, ::2] - expected) <= _scaled_atol(3.0))


# ------------------------------------------------------------------ the compiled path (jit)
# The test extra installs Numba (kernelmaps[jit]); without it only these tests are skipped.
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="Numba (the jit extra) is not installed")
_ROW_FORMS = ["plain", "offset", "offset+scalar", "offset+columns+bound", "scalar"]


@needs_numba
@pytest.mark.parametrize(("shape", "form"),
                         [(shape, form) for shape in [(240, 1000), (3, 7), (2, 40_000)]
                          for form in _ROW_FORMS]
                         + [(shape, form) for shape in [(5000,), (4, 5, 6)]
                            for form in ["plain", "scalar"]])
def test_compiled_cosine_gives_the_numpy_passes_numbers_bitwise(shape, form) -> None:
    # The same IEEE operations in the same order, no fused multiply-add: equal, not close.
    rng = np.random.default_rng(21)
    x = rng.normal(0.0, 30.0, shape)
    width = shape[-1]
    kwargs: dict = {}
    if "offset" in form:
        kwargs["offset"] = rng.uniform(0.0, 2 * np.pi, width)
    if "scalar" in form:
        kwargs["scale"] = 0.0447
    if "columns" in form:
        kwargs["scale"] = rng.uniform(0.1, 2.0, width)
    if "bound" in form:
        kwargs["max_abs"] = float(np.abs(x + kwargs["offset"]).max())
    expected, got = x.copy(), x.copy()
    with config_context(jit=False):  # the NumPy passes, whatever auto chose
        cos_inplace(expected, **kwargs)
    calls = _compiled_calls()
    with config_context(jit=True):
        cos_inplace(got, **kwargs)
    assert _compiled_calls() > calls  # the compiled kernel ran (not the NumPy passes)
    np.testing.assert_array_equal(got, expected)


def _unload() -> None:
    """Forget the loaded kernels, as in a process that has not loaded them yet."""
    _fastmath._compiled_cos_rows.cache_clear()
    _fastmath._compiled_cos_sin_rows.cache_clear()


def _compiled_calls() -> int:
    info = _fastmath._compiled_cos_rows.cache_info()
    return info.hits + info.misses


@needs_numba
def test_compiled_cosine_sends_rows_beyond_the_fast_range_to_numpy() -> None:
    rng = np.random.default_rng(22)
    x = rng.normal(0.0, 30.0, (50, 300))
    x[3, 5], x[7, 1], x[9, 9], x[11, 0] = np.inf, np.nan, 1e9, -MAX_FAST_ARG
    expected, got = x.copy(), x.copy()
    with np.errstate(invalid="ignore"):
        with config_context(jit=False):  # the NumPy passes, whatever auto chose
            cos_inplace(expected, offset=np.zeros(300), scale=0.5)
        with config_context(jit=True):
            cos_inplace(got, offset=np.zeros(300), scale=0.5)
    np.testing.assert_array_equal(got, expected)  # NaN where NumPy gives NaN
    assert np.isnan(got[3, 5]) and np.isnan(got[7, 1])
    np.testing.assert_array_equal(got[9, 9], 0.5 * np.cos(1e9))


@needs_numba
def test_compiled_cosine_runs_on_threads_with_the_same_numbers() -> None:
    # Numba releases the GIL (nogil): the engine's threads run the kernel side by side.
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(23)
    blocks = [rng.normal(0.0, 10.0, (200, 500)) for _ in range(8)]
    expected = [b.copy() for b in blocks]
    for block in expected:
        with config_context(jit=False):  # the NumPy passes, whatever auto chose
            cos_inplace(block, scale=2.0)

    def run(block: np.ndarray) -> np.ndarray:
        with config_context(jit=True):
            cos_inplace(block, scale=2.0)
        return block

    with ThreadPoolExecutor(4) as pool:
        for got, want in zip(pool.map(run, [b.copy() for b in blocks]), expected,
                             strict=True):
            np.testing.assert_array_equal(got, want)


def test_compiled_cosine_without_a_writable_cache_compiles_per_process(monkeypatch) -> None:
    # Numba raises RuntimeError for cache=True where it finds no directory to write its
    # cache to (a read-only install): the kernel is then compiled without the disk cache.
    calls: list = []
    monkeypatch.setattr(_fastmath, "import_optional", lambda name, extra: _fake_numba(calls))
    monkeypatch.setattr(_fastmath, "_cos_one", _fastmath._cos_element)  # as never compiled
    _fastmath._compiled_cos_rows.cache_clear()
    try:
        assert _fastmath._compiled_cos_rows() is _fastmath._cos_rows
        assert calls == [{"inline": "always"}, {"nogil": True, "cache": True}, {"nogil": True}]
    finally:
        _fastmath._compiled_cos_rows.cache_clear()


def _fake_numba(calls: list):
    class Numba:  # cache=True fails as on a read-only install; the kernel runs as Python
        @staticmethod
        def njit(**options):
            calls.append(options)
            if options.get("cache"):
                raise RuntimeError("cannot cache function: no locator available")
            return lambda function: function

    return Numba


def test_auto_past_the_crossover_compiles_without_a_writable_cache(monkeypatch) -> None:
    # jit="auto", the default, on a read-only install: the kernel is compiled per process,
    # and the call that crosses JIT_AUTO_ELEMENTS gives the NumPy path's numbers, equal.
    calls: list = []
    monkeypatch.setattr(_fastmath, "import_optional", lambda name, extra: _fake_numba(calls))
    monkeypatch.setattr(_fastmath, "_cos_one", _fastmath._cos_element)  # as never compiled
    monkeypatch.setattr(_fastmath, "_numba_installed", lambda: True)
    monkeypatch.setattr(_fastmath, "_numpy_elements", 0)
    monkeypatch.setattr(_fastmath, "JIT_AUTO_ELEMENTS", 60)
    x = np.random.default_rng(24).normal(0.0, 20.0, (3, 16))
    offset = np.linspace(0.0, 6.0, 16)
    expected = x.copy()
    with config_context(jit=False):
        cos_inplace(expected, offset=offset, scale=0.3)
    _unload()
    try:
        below, above = x[:1].copy(), x.copy()
        cos_inplace(below, offset=offset, scale=0.3)  # 16 elements: NumPy's passes
        assert calls == []
        cos_inplace(above, offset=offset, scale=0.3)  # 64 in all: compiled from here on
        assert calls == [{"inline": "always"}, {"nogil": True, "cache": True}, {"nogil": True}]
        np.testing.assert_array_equal(below, expected[:1])
        np.testing.assert_array_equal(above, expected)
    finally:
        _fastmath._compiled_cos_rows.cache_clear()


def test_auto_without_numba_stays_on_numpy_and_true_names_the_fix(monkeypatch) -> None:
    monkeypatch.setattr(_fastmath, "_numba_installed", lambda: False)
    monkeypatch.setattr(_fastmath, "JIT_AUTO_ELEMENTS", 0)
    monkeypatch.setattr(_fastmath, "_loaded", lambda: False)
    assert get_config()["jit"] == "auto" and not _fastmath._use_compiled(10**9)
    with pytest.raises(ValueError, match='jit must be "auto", True or False'):
        set_config(jit="yes")
    monkeypatch.setitem(sys.modules, "numba", None)  # Numba missing: import fails
    with pytest.raises(ImportError, match=r"pip install 'kernelmaps\[jit\]'"):
        set_config(jit=True)


@needs_numba
@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 40), width=st.integers(1, 300), seed=st.integers(0, 2**32 - 1),
       crossover=st.integers(0, 24_000), scale=st.floats(0.01, 10.0))
def test_auto_gives_the_numpy_numbers_on_either_side_of_the_crossover(
        rows, width, seed, crossover, scale) -> None:
    # Whether "auto" has switched yet (the first call or the second of the same size) never
    # changes a number: both equal jit=False's, bitwise.
    x = np.random.default_rng(seed).normal(0.0, 50.0, (rows, width))
    offset = np.random.default_rng(seed + 1).uniform(0.0, 6.3, width)
    expected = x.copy()
    with config_context(jit=False):
        cos_inplace(expected, offset=offset, scale=scale)
    saved = (_fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements)
    _unload()  # not loaded yet
    try:
        _fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements = crossover, 0
        first, second = x.copy(), x.copy()
        loaded = _fastmath._compiled_cos_rows.cache_info
        cos_inplace(first, offset=offset, scale=scale)
        assert loaded().currsize == (x.size >= crossover)
        cos_inplace(second, offset=offset, scale=scale)
        assert loaded().currsize == (2 * x.size >= crossover)
    finally:
        _fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements = saved
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)


# ------------------------------------------------------------------ cos_sin (cos and sin of P)
def _sine_bound(projections: np.ndarray, scale: float) -> np.ndarray:
    # sin p = cos(p − π/2): the cosine's ATOL, plus the argument's error — the rounding of
    # p − π/2 (half an ulp of it) and π/2's own (6.2e-17) — times |cos'| ≤ 1, all × |scale|.
    shifted = np.abs(projections) + np.pi / 2
    return abs(scale) * (ATOL + np.spacing(shifted) / 2 + 6.2e-17)


@pytest.mark.parametrize("scale", [1.0, 0.0447])
def test_cos_sin_gives_cos_and_sin_within_the_bound(scale: float) -> None:
    P = np.random.default_rng(31).normal(0.0, 30.0, (64, 50))
    out = np.empty((64, 100))
    cos_sin(P, out, scale)
    assert np.all(np.abs(out[:, :50] - scale * np.cos(P)) <= abs(scale) * ATOL)
    assert np.all(np.abs(out[:, 50:] - scale * np.sin(P)) <= _sine_bound(P, scale))


def test_cos_sin_refuses_an_out_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"out must have shape \(2, 6\)"):
        cos_sin(np.zeros((2, 3)), np.empty((2, 5)))


@needs_numba
@pytest.mark.parametrize("shape", [(240, 500), (3, 7), (1, 1), (2, 20_000)])
@pytest.mark.parametrize("scale", ["one", "scalar", "columns"])
def test_compiled_cos_sin_gives_the_numpy_form_bitwise(shape, scale) -> None:
    # One pass reading each p once, the same IEEE operations as the copy, the shift and
    # the cosine passes: equal, not close — rows beyond the fast range included.
    rng = np.random.default_rng(32)
    P = rng.normal(0.0, 30.0, shape)
    if shape[0] > 2:
        P[1, 0], P[2, -1] = 1e9, np.inf
    factor = {"one": 1.0, "scalar": 0.0447,
              "columns": rng.uniform(0.1, 2.0, 2 * shape[1])}[scale]
    expected, got = np.empty((shape[0], 2 * shape[1])), np.empty((shape[0], 2 * shape[1]))
    with np.errstate(invalid="ignore"):
        with config_context(jit=False):
            cos_sin(P, expected, factor)
        info = _fastmath._compiled_cos_sin_rows.cache_info
        calls = info().hits + info().misses
        with config_context(jit=True):
            cos_sin(P, got, factor)
    assert info().hits + info().misses > calls  # the compiled kernel ran
    np.testing.assert_array_equal(got, expected)


# ------------------------------------------------------------------ work known up front
def _count_numpy_chunks(monkeypatch) -> list:
    chunks: list = []
    original = _fastmath._cos_chunk

    def counted(*args, **kwargs):
        chunks.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_fastmath, "_cos_chunk", counted)
    return chunks


@needs_numba
@pytest.mark.parametrize("output", ["cos_offset", "cos_sin"])
@pytest.mark.parametrize("rows", [40, 400])
def test_a_transform_whose_known_work_repays_the_load_compiles_from_its_first_block(
        monkeypatch, output, rows) -> None:
    # jit="auto" with the crossover at 20,000 cosines: a transform of 400 × 100 (40,000,
    # in blocks of ~10 rows) loads the kernel before its first block — no NumPy passes at
    # all — where the running total alone would switch only halfway; 40 × 100 (4,000)
    # stays on NumPy's passes. Either way the numbers are jit=False's, bitwise.
    from kernelmaps import RandomFourierFeatures

    X = np.random.default_rng(41).normal(size=(rows, 5))
    rff = RandomFourierFeatures(gamma=0.2, n_components=100, output=output,
                                random_state=0).fit(X)
    with config_context(jit=False):
        expected = rff.transform(X)
    monkeypatch.setattr(_fastmath, "JIT_AUTO_ELEMENTS", 20_000)
    monkeypatch.setattr(_fastmath, "_numpy_elements", 0)
    chunks = _count_numpy_chunks(monkeypatch)
    _unload()
    try:
        with config_context(block_bytes=8192, n_threads=1):
            got = rff.transform(X)
        assert _fastmath._loaded() == (rows == 400)
        assert (len(chunks) == 0) == (rows == 400)
    finally:
        _unload()
    np.testing.assert_array_equal(got, expected)


@needs_numba
def test_feature_ridge_tells_auto_its_whole_pass(monkeypatch) -> None:
    # The accumulator says the whole fit's cosines (n × D) before its first block, predict
    # its own: past the crossover each runs compiled from its first block, with jit=False's
    # numbers.
    from kernelmaps import RBFSampler
    from kernelmaps.models import FeatureRidge

    rng = np.random.default_rng(42)
    X, y = rng.normal(size=(3_000, 4)), rng.normal(size=3_000)
    model = FeatureRidge(RBFSampler(gamma=0.3, n_components=50, random_state=0), alpha=1e-2)
    with config_context(jit=False):
        expected = model.fit(X, y).coef_.copy()
        expected_scores = model.predict(X)
    monkeypatch.setattr(_fastmath, "JIT_AUTO_ELEMENTS", 100_000)  # the fit: 150,000
    monkeypatch.setattr(_fastmath, "_numpy_elements", 0)
    chunks = _count_numpy_chunks(monkeypatch)
    _unload()
    try:
        got = model.fit(X, y).coef_
        assert _fastmath._loaded() and not chunks
        _unload()  # predict, in blocks of its own, says its whole work too
        _fastmath._numpy_elements = 0
        with config_context(block_bytes=8192):
            scores = model.predict(X)
        assert _fastmath._loaded() and not chunks
    finally:
        _unload()
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(scores, expected_scores)


def test_expect_cosines_switches_a_call_that_would_cross_the_crossover(monkeypatch) -> None:
    # Below the crossover, with what the process did before, nothing changes (the blocks
    # count themselves); a call that takes the count past it switches at its first block.
    crossover = _fastmath.JIT_AUTO_ELEMENTS
    monkeypatch.setattr(_fastmath, "_numpy_elements", 5)
    _fastmath.expect_cosines(crossover - 6)
    assert _fastmath._numpy_elements == 5
    _fastmath.expect_cosines(crossover - 5)
    assert _fastmath._numpy_elements == crossover
    monkeypatch.setattr(_fastmath, "_numpy_elements", _fastmath._NEVER)  # a broken Numba
    _fastmath.expect_cosines(10**12)
    assert _fastmath._numpy_elements == _fastmath._NEVER


@needs_numba
@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 30), width=st.integers(1, 200), seed=st.integers(0, 2**32 - 1),
       crossover=st.integers(0, 24_000), known=st.booleans(),
       scale=st.floats(0.01, 10.0))
def test_auto_cos_sin_gives_the_numpy_numbers_on_either_side_of_the_crossover(
        rows, width, seed, crossover, known, scale) -> None:
    # cos_sin under "auto", with or without its work said up front (expect_cosines), loads
    # the compiled kernel exactly when the rule says, and never changes a number.
    P = np.random.default_rng(seed).normal(0.0, 50.0, (rows, width))
    expected = np.empty((rows, 2 * width))
    with config_context(jit=False):
        cos_sin(P, expected, scale)
    saved = (_fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements)
    _unload()
    try:
        _fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements = crossover, 0
        got = np.empty_like(expected)
        if known:
            _fastmath.expect_cosines(got.size)
        cos_sin(P, got, scale)
        assert _fastmath._loaded() == (got.size >= crossover)
    finally:
        _fastmath.JIT_AUTO_ELEMENTS, _fastmath._numpy_elements = saved
        _unload()
    np.testing.assert_array_equal(got, expected)


def test_compiled_pays_loading_decides_now_and_loads_on_another_thread(monkeypatch) -> None:
    # The decision is compiled_pays's; the load runs on a thread of its own, and ready()
    # waits for it. A failing load: "auto" answers no, jit=True raises.
    import threading

    monkeypatch.setattr(_fastmath, "_numba_installed", lambda: True)
    threads: list = []
    released = threading.Event()

    def load() -> None:
        threads.append(threading.current_thread())
        released.wait(10)

    with config_context(jit="auto"):
        assert _fastmath.compiled_pays_loading(_fastmath.JIT_AUTO_ELEMENTS - 1, load) is None
        ready = _fastmath.compiled_pays_loading(_fastmath.JIT_AUTO_ELEMENTS, load)
        assert ready is not None
        released.set()  # the load was still waiting: the caller was not
        assert ready() is True
        assert threads and threads[0] is not threading.current_thread()

    def broken() -> None:
        raise ImportError("numba: a broken install")

    with config_context(jit="auto"):
        assert _fastmath.compiled_pays_loading(_fastmath.JIT_AUTO_ELEMENTS, broken)() is False
    with config_context(jit=False):
        assert _fastmath.compiled_pays_loading(10.0 * _fastmath.JIT_AUTO_ELEMENTS, load) is None
    with config_context(jit=True):
        ready = _fastmath.compiled_pays_loading(0.0, broken)
        with pytest.raises(ImportError, match="broken install"):
            ready()
        assert _fastmath.compiled_pays(0.0, lambda: None) is True
        with pytest.raises(ImportError, match="broken install"):
            _fastmath.compiled_pays(0.0, broken)
        # Numba not installed under jit=True: the error naming the fix, before any thread.
        monkeypatch.setattr(_fastmath, "_numba_installed", lambda: False)
        monkeypatch.setitem(sys.modules, "numba", None)
        with pytest.raises(ImportError, match=r"pip install 'kernelmaps\[jit\]'"):
            _fastmath.compiled_pays_loading(0.0, load)
