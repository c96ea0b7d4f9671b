"""The chunked transform engine: blocks, threads, memory bound, settings."""

from __future__ import annotations

import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import kernelmaps as km
from kernelmaps._engine import run_blocks
from tests._estimators import ENTRIES, one_per_class

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)


def test_blocks_cover_rows_once_in_order(rng):
    X = rng.normal(size=(1000, 3))
    seen = []

    def block_fn(xb, out):
        seen.append(xb.shape[0])
        out[...] = xb.sum(axis=1, keepdims=True)

    with km.config_context(block_bytes=4096):
        out = run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=block_fn,
                         n_threads=1)
    assert seen == [512, 488]  # 4096 bytes / 8 bytes per output row
    np.testing.assert_array_equal(out[:, 0], X.sum(axis=1))


def test_transform_is_thread_safe(rng):
    X = rng.uniform(size=(3000, 5))
    est = km.RBFSampler(n_components=300, random_state=0).fit(X)
    reference = est.transform(X)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: est.transform(X), range(8)))
    for result in results:
        np.testing.assert_array_equal(result, reference)


def _extra_peak_bytes(est, X) -> int:
    """Peak bytes allocated by transform beyond its output."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = est.transform(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - out.nbytes


@pytest.mark.parametrize("e", MAPS, ids=[e.id for e in MAPS])
def test_transform_memory_bounded_by_block_not_n(e, rng):
    X_small = rng.uniform(size=(8_000, 10))
    X_large = rng.uniform(size=(32_000, 10))
    est = e.make(**({"n_components": 256} if "n_components" in e.params else {}))
    est.fit(X_small)
    with km.config_context(n_threads=2, block_bytes=256 * 1024):
        extra_small = _extra_peak_bytes(est, X_small)
        extra_large = _extra_peak_bytes(est, X_large)
    out_large = X_large.shape[0] * est.transform(X_large[:1]).shape[1] * 8
    # Four times the rows, (about) the same working memory: a few blocks per thread.
    assert extra_large < 4 * 1024 * 1024
    assert extra_large < 0.1 * out_large
    assert extra_large < 2 * extra_small + 512 * 1024


def test_sparse_rows_are_blocked_too(rng):
    X = sp.random(5000, 50, density=0.05, format="csr", random_state=0)
    est = km.RBFSampler(n_components=64, random_state=0).fit(X)
    with km.config_context(block_bytes=4096):
        blocked = est.transform(X)
    np.testing.assert_allclose(blocked, est.transform(X.toarray()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("setting", "value"), [
    ("n_threads", 0), ("n_threads", -3), ("n_threads", 1.5), ("block_bytes", 10),
    ("block_bytes", "big"),
])
def test_bad_settings_rejected(setting, value):
    with pytest.raises(ValueError, match=setting):
        km.set_config(**{setting: value})


def test_config_context_restores():
    before = km.get_config()
    with km.config_context(n_threads=1, block_bytes=8192, device_block_bytes=4096):
        assert km.get_config() == {"n_threads": 1, "block_bytes": 8192,
                                   "device_block_bytes": 4096, "kernel_cache_bytes": None}
    assert km.get_config() == before


def test_empty_output_shape():
    out = run_blocks(np.empty((0, 3)), n_out=5, dtype=np.dtype(np.float32),
                     block_fn=lambda xb, o: None)
    assert out.shape == (0, 5) and out.dtype == np.float32
