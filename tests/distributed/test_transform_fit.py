"""kernelmaps.distributed.transform / fit on dask collections (local scheduler)."""

from __future__ import annotations

import pickle

import dask
import dask.array as da
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state

import kernelmaps as km
import kernelmaps.maps
from kernelmaps._engine import is_dask_collection, run_blocks, threads_per_task
from kernelmaps.distributed import fit, landmark_sample_size, transform
from kernelmaps.distributed._fit import uniform_rows
from tests._rounding import assert_equal_to_rounding

#: Chunks of 160 rows against one in-memory pass: other BLAS calls, so equal to rounding. The
#: maps sum d=6 products (or D=40 for the Nyström projection) of about the output's size, and
#: the cosine maps multiply the error of an argument up to ~|w|·|x| ≈ 10 into the output:
#: 256 ulps of the output's scale bound both with room.
ROUNDING_ULPS = 256

#: Every public map of kernelmaps (a new map is covered without editing this file).
MAP_NAMES = sorted(name for name in kernelmaps.maps.__all__
                   if isinstance(getattr(kernelmaps.maps, name), type)
                   and issubclass(getattr(kernelmaps.maps, name), kernelmaps.maps.FeatureMap)
                   and name != "FeatureMap")


def make(name: str, **params):
    cls = getattr(km, name)
    if "random_state" in cls().get_params():
        params.setdefault("random_state", 0)
    if "n_components" in cls().get_params():
        params.setdefault("n_components", 40)
    return cls(**params)


@pytest.fixture(scope="module")
def data():
    X = np.random.RandomState(0).uniform(0, 1, size=(700, 6))  # valid for the χ² maps too
    return X, da.from_array(X, chunks=(160, 4))  # uneven row chunks, split columns


@pytest.mark.parametrize("name", MAP_NAMES)
def test_transform_is_lazy_and_equals_in_memory(name, data):
    X, dX = data
    fitted = make(name).fit(X)
    Z = transform(fitted, dX)
    assert isinstance(Z, da.Array)
    assert Z.chunks[0] == dX.chunks[0] and Z.numblocks[1] == 1
    expected = fitted.transform(X)
    np.testing.assert_allclose(Z.compute(), expected, rtol=1e-12, atol=1e-12)
    # The map's own transform given a dask array is the same lazy computation.
    own = fitted.transform(dX)
    assert isinstance(own, da.Array) and own.name == Z.name


@pytest.mark.parametrize("name", MAP_NAMES)
def test_fit_on_dask_equals_in_memory_fit(name, data):
    X, dX = data
    if name == "Nystroem":  # landmarks are a sample: tested below
        return
    on_dask = fit(make(name), dX)
    in_memory = make(name).fit(X)
    assert on_dask.n_features_in_ == 6
    # The same parameters (random maps read no data) in two fitted copies at other addresses:
    # equal to rounding (see ROUNDING_ULPS below).
    assert_equal_to_rounding(on_dask.transform(X), in_memory.transform(X), ulps=ROUNDING_ULPS)


def test_float32_kept_and_other_dtypes_become_float64(data):
    X, dX = data
    rff = make("RBFSampler").fit(X.astype(np.float32))
    Z32 = transform(rff, dX.astype(np.float32))
    assert Z32.dtype == np.float32 and Z32.compute().dtype == np.float32
    assert_equal_to_rounding(Z32.compute(), rff.transform(X.astype(np.float32)),
                             ulps=ROUNDING_ULPS)
    Zint = transform(rff, (dX * 10).astype(np.int64))
    assert Zint.dtype == np.float64 and Zint.compute().dtype == np.float64


def test_the_fitted_map_is_one_key_of_the_graph(data):
    X, dX = data
    ny = make("Nystroem", n_components=200).fit(X)
    Z = transform(ny, dX)
    size = len(pickle.dumps(ny))
    graph = dict(Z.__dask_graph__())
    holders = [key for key, task in graph.items() if len(pickle.dumps(task)) > size // 2]
    assert len(holders) == 1  # the map itself, once
    chunk_tasks = [key for key in graph if key[0] == Z.name]
    assert len(chunk_tasks) == dX.numblocks[0]
    for key in chunk_tasks:  # each chunk task refers to the map's key, small on its own
        assert holders[0] in graph[key].dependencies
        assert len(pickle.dumps(graph[key])) < size // 20


def test_transform_computes_nothing_until_asked(data):
    X, dX = data
    calls = []

    def record(block):
        calls.append(block.shape[0])
        return block

    rff = make("RBFSampler").fit(X)
    Z = transform(rff, dX.map_blocks(record, meta=np.empty((0, 0))))
    assert calls == [] and Z.shape == (700, 40)
    Z[:10].compute()
    assert 0 < len(calls) < dX.numblocks[0]  # only the chunk holding the first rows


def test_dask_dataframe_input(data):
    import dask.dataframe as dd
    import pandas as pd

    X, _ = data
    columns = [f"f{i}" for i in range(6)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=columns), npartitions=3)
    ny = make("Nystroem", n_components=30).fit(frame)  # fit on the DataFrame
    assert list(ny.feature_names_in_) == columns
    Z = ny.transform(frame)
    assert isinstance(Z, da.Array)
    np.testing.assert_allclose(Z.compute(), ny.transform(pd.DataFrame(X, columns=columns)),
                               rtol=1e-12, atol=1e-12)
    renamed = frame.rename(columns={"f0": "other"})
    with pytest.raises(ValueError, match="feature names"):
        ny.transform(renamed)


def test_fit_transform_on_dask_is_lazy_and_matches(data):
    X, dX = data
    Z = make("RBFSampler").fit_transform(dX)
    assert isinstance(Z, da.Array)
    assert_equal_to_rounding(Z.compute(), make("RBFSampler").fit_transform(X),
                             ulps=ROUNDING_ULPS)


def test_gamma_scale_reads_the_variance_of_the_whole_array(data):
    X, dX = data
    on_dask = fit(km.RBFSampler(gamma="scale", random_state=0), dX)
    in_memory = km.RBFSampler(gamma="scale", random_state=0).fit(X)
    np.testing.assert_allclose(on_dask._gamma, in_memory._gamma, rtol=1e-12)
    np.testing.assert_allclose(on_dask.random_weights_, in_memory.random_weights_, rtol=1e-12)


def test_nystroem_uniform_landmarks_are_rows_drawn_across_chunks(data):
    X, dX = data
    ny = km.Nystroem(n_components=60, random_state=0).fit(dX)
    idx = ny.component_indices_
    assert idx.shape == (60,) and np.unique(idx).size == 60
    np.testing.assert_array_equal(ny.components_, X[idx])
    chunk_of = np.searchsorted(np.cumsum(dX.chunks[0]), idx, side="right")
    assert np.unique(chunk_of).size == dX.numblocks[0]  # every chunk contributes
    # The features are Nyström's with these landmarks, exactly.
    given = km.Nystroem(landmarks=X[idx]).fit(X)
    np.testing.assert_allclose(ny.transform(X), given.transform(X), rtol=1e-10, atol=1e-12)
    # Deterministic for a seed, independent of the chunking.
    again = km.Nystroem(n_components=60, random_state=0).fit(dX.rechunk((97, 6)))
    np.testing.assert_array_equal(again.component_indices_, idx)
    # The in-memory draw (scikit-learn's): the same landmark rows as fitting in memory (in
    # another order, as the map's own fit shuffles the gathered sample), so the same kernel
    # approximation z(x)·z(y).
    in_memory = km.Nystroem(n_components=60, random_state=0).fit(X)
    np.testing.assert_array_equal(np.sort(in_memory.component_indices_), np.sort(idx))
    Z, Z_memory = ny.transform(X[:200]), in_memory.transform(X[:200])
    np.testing.assert_allclose(Z @ Z.T, Z_memory @ Z_memory.T, rtol=0, atol=1e-10)


def test_uniform_sample_of_very_many_rows_uses_o_size_memory(monkeypatch):
    # Above SAME_DRAW_MAX_ROWS no permutation of range(n) is formed (Floyd's algorithm).
    import kernelmaps.distributed._fit as fit_module

    monkeypatch.setattr(fit_module, "SAME_DRAW_MAX_ROWS", 10)
    monkeypatch.setattr(fit_module, "uniform_subset", None)  # must not be reached
    X = da.from_array(np.arange(40.0).reshape(40, 1), chunks=20)
    rows, indices = uniform_rows(X, 10, check_random_state(0))
    np.testing.assert_array_equal(rows[:, 0], indices)
    assert np.unique(indices).size == 10


def test_uniform_sample_is_uniform():
    # Every row of a chunked array is equally likely: 120 draws of 10 rows out of 40.
    X = da.from_array(np.arange(40.0).reshape(40, 1), chunks=((3, 17, 20), (1,)))
    counts = np.zeros(40)
    rng = check_random_state(0)
    with dask.config.set(scheduler="synchronous"):
        for _ in range(120):
            rows, indices = uniform_rows(X, 10, rng)
            np.testing.assert_array_equal(rows[:, 0], indices)
            assert np.unique(indices).size == 10  # without replacement
            counts[indices] += 1
    expected = 120 * 10 / 40
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 72  # χ²(39) exceeds 72 with probability 0.001


@pytest.mark.parametrize("strategy", ["kmeans", "leverage", "renyi"])
def test_data_driven_landmarks_run_on_a_uniform_sample(strategy, data):
    X, dX = data
    ny = km.Nystroem(n_components=25, landmarks=strategy, random_state=0)
    fit(ny, dX, sample_size=300)
    assert ny.components_.shape == (25, 6)
    if strategy == "kmeans":
        assert not hasattr(ny, "component_indices_")
    else:  # rows of the full X, by position
        np.testing.assert_array_equal(ny.components_, X[ny.component_indices_])
    # A good landmark set: the kernel is approximated as well as by the in-memory strategy.
    exact = km.get_kernel("rbf", gamma=1.0 / 6)(X)
    Z = ny.transform(X)
    Z_mem = km.Nystroem(n_components=25, landmarks=strategy, random_state=0).fit_transform(X)
    error = np.linalg.norm(Z @ Z.T - exact) / np.linalg.norm(exact)
    error_mem = np.linalg.norm(Z_mem @ Z_mem.T - exact) / np.linalg.norm(exact)
    assert error < 2 * error_mem + 1e-3


def test_landmark_sample_size():
    assert landmark_sample_size(100, 10**7) == 10_000
    assert landmark_sample_size(2_000, 10**7) == 40_000
    assert landmark_sample_size(2_000, 30_000) == 30_000
    assert landmark_sample_size(50, 10**6, 500) == 500
    with pytest.raises(ValueError, match="sample_size must be an int >= the number of "):
        landmark_sample_size(50, 10**6, 10)


def test_clear_errors(data):
    X, dX = data
    rff = make("RBFSampler")
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        transform(rff.fit(X), X)
    with pytest.raises(TypeError, match="fits kernelmaps feature maps"):
        fit(object(), dX)
    with pytest.raises(ValueError, match="2-D array"):
        make("RBFSampler").fit(dX[:, 0])
    with pytest.raises(ValueError, match="has 6 features"):
        transform(make("RBFSampler").fit(X[:, :3]), dX)
    with pytest.raises(NotFittedError):
        transform(make("RBFSampler"), dX)
    with pytest.raises(ValueError, match="precomputed"):
        km.Nystroem(kernel="precomputed", n_components=5).fit(dX)
    with pytest.raises(ValueError, match="n_components"):
        km.RBFSampler(n_components=0).fit(dX)  # parameters validated as in memory
    # Values are checked where the chunks are transformed.
    negative = make("AdditiveChi2Sampler").transform(dX - 2)
    with pytest.raises(ValueError, match="Negative values"):
        negative.compute()


def test_engine_hooks():
    assert is_dask_collection(da.zeros(3)) and not is_dask_collection(np.zeros(3))
    threads = set()

    def block(xb, out):
        import threading

        threads.add(threading.get_ident())
        out[:] = 1.0

    X = np.zeros((4096, 1))
    with km.config_context(block_bytes=4096), threads_per_task(1):
        run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=block, n_threads=4)
    assert len(threads) == 1


def _jit_setting(block):
    return np.full((1, 1), km.get_config()["jit"] is True)


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_local_scheduler_tasks_see_the_callers_settings(scheduler):
    # docs/dask.md: on the local scheduler a config_context block reaches the tasks.
    pytest.importorskip("numba")  # in the test extra: runs in CI
    X = da.zeros((40, 3), chunks=(10, 3))
    probe = X.map_blocks(_jit_setting, chunks=((1,) * 4, (1,)), dtype=bool)
    with km.config_context(jit=True):
        assert probe.compute(scheduler=scheduler).all()
    assert not probe.compute(scheduler=scheduler).any()
