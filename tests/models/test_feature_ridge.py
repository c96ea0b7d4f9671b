"""FeatureRidge / FeatureRidgeClassifier: the one accumulator of statistics and partial_fit."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted

import kernelmaps
from kernelmaps import Nystroem, RBFSampler
from kernelmaps.models import FeatureRidge, FeatureRidgeClassifier
from kernelmaps.models import _accumulator as accumulator_module
from kernelmaps.models import feature_ridge as feature_ridge_module
from kernelmaps.models._accumulator import RidgeStatistics
from tests._rounding import assert_equal_to_rounding

RNG = np.random.RandomState(0)
X = RNG.normal(size=(400, 4))
Y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * RNG.normal(size=400)
WEIGHTS = RNG.uniform(0.5, 2.0, size=400)
LABELS = np.digitize(Y, np.quantile(Y, [0.33, 0.66]))  # three classes
MAP = RBFSampler(gamma=0.3, n_components=30, random_state=0)


def _condition(model: FeatureRidge) -> float:
    """cond(S + αI) of the centred D × D system the model solved."""
    statistics = model._statistics
    D = statistics.n_features
    G = statistics.symmetric()
    mean = G[:D, D] / G[D, D]
    S = G[:D, :D] - G[D, D] * np.outer(mean, mean) + model.alpha * np.eye(D)
    return float(np.linalg.cond(S))


def _chunked(model, cuts, **fit_params):
    bounds = [0, *sorted(set(cuts)), len(X)]
    for start, stop in itertools.pairwise(bounds):
        if stop > start:
            model.partial_fit(X[start:stop], Y[start:stop], sample_weight=WEIGHTS[start:stop],
                              **fit_params)
    return model


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=399), max_size=12))
def test_any_chunking_gives_fit_to_rounding(cuts):
    batch = FeatureRidge(MAP, alpha=0.1).fit(X, Y, sample_weight=WEIGHTS)
    online = _chunked(FeatureRidge(MAP, alpha=0.1), cuts)
    # G's entries are sums of n = 400 weighted products: another summation order moves each
    # by at most n·eps·max|G|, and the solve amplifies a relative change of the system by at
    # most cond(S + αI): coef_ agrees to n·cond ulps of its size (4× for the centring).
    ulps = 4 * len(X) * _condition(batch)
    assert_equal_to_rounding(online.coef_, batch.coef_, ulps=ulps)
    assert_equal_to_rounding(np.float64(online.intercept_), np.float64(batch.intercept_),
                             ulps=ulps, scale=float(np.abs(batch.coef_).max()))
    assert online._statistics.n_samples == len(X)


def test_a_dropped_row_is_not_rounding():
    # The bound above is tight enough to see a real difference: one row fewer moves coef_
    # by far more than it.
    batch = FeatureRidge(MAP, alpha=0.1).fit(X, Y, sample_weight=WEIGHTS)
    fewer = FeatureRidge(MAP, alpha=0.1).fit(X[1:], Y[1:], sample_weight=WEIGHTS[1:])
    bound = 4 * len(X) * _condition(batch) * np.finfo(float).eps * np.abs(batch.coef_).max()
    assert np.abs(fewer.coef_ - batch.coef_).max() > 100 * bound


def test_classifier_partial_fit_is_fit_and_checks_classes():
    batch = FeatureRidgeClassifier(MAP, alpha=0.1).fit(X, LABELS)
    online = FeatureRidgeClassifier(MAP, alpha=0.1)
    for start in range(0, 400, 150):
        online.partial_fit(X[start:start + 150], LABELS[start:start + 150],
                           classes=[0, 1, 2] if start == 0 else None)
    np.testing.assert_array_equal(online.classes_, [0, 1, 2])
    # n = 400 rows, cond(S + αI) < 1e4 here: 4·n·cond ulps (see the regression test).
    assert_equal_to_rounding(online.coef_, batch.coef_, ulps=4 * 400 * 1e4)
    np.testing.assert_array_equal(online.predict(X), batch.predict(X))
    with pytest.raises(ValueError, match=r"label\(s\) \[7\]"):
        online.partial_fit(X[:3], [0, 7, 1])
    with pytest.raises(ValueError, match="not the same as on the first call"):
        online.partial_fit(X[:3], [0, 1, 1], classes=[0, 1])
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        FeatureRidgeClassifier(MAP).partial_fit(X[:10], LABELS[:10])
    # A class absent from the first batch is fine when classes= names it.
    first = FeatureRidgeClassifier(MAP).partial_fit(X[LABELS < 2], LABELS[LABELS < 2],
                                                    classes=[0, 1, 2])
    assert first.coef_.shape == (3, MAP.n_components)


def test_partial_fit_after_fit_goes_on_from_its_statistics():
    both = FeatureRidge(MAP, alpha=0.1).fit(X[:250], Y[:250]).partial_fit(X[250:], Y[250:])
    batch = FeatureRidge(MAP, alpha=0.1).fit(X, Y)
    # 4·n·cond ulps, as in test_any_chunking_gives_fit_to_rounding.
    assert_equal_to_rounding(both.coef_, batch.coef_, ulps=4 * len(X) * _condition(batch))


def test_targets_must_keep_their_shape():
    model = FeatureRidge(MAP).partial_fit(X[:10], Y[:10])
    with pytest.raises(ValueError, match="every batch needs the same targets"):
        model.partial_fit(X[:10], np.c_[Y[:10], Y[:10]])
    with pytest.raises(ValueError, match="X has 3 features"):
        model.partial_fit(X[:10, :3], Y[:10])


def test_predict_solves_once_per_change_of_the_statistics(monkeypatch):
    solves = []
    original = RidgeStatistics.solve
    monkeypatch.setattr(RidgeStatistics, "solve",
                        lambda self, *a: solves.append(1) or original(self, *a))
    model = FeatureRidge(MAP).partial_fit(X[:100], Y[:100]).partial_fit(X[100:], Y[100:])
    assert solves == [] and "coef_" not in vars(model)
    model.predict(X[:5])
    model.predict(X[:5])
    assert model.coef_.shape == (30,)
    assert len(solves) == 1
    model.partial_fit(X[:5], Y[:5])
    model.predict(X[:5])
    assert len(solves) == 2
    restored = pickle.loads(pickle.dumps(model.partial_fit(X[:5], Y[:5])))
    np.testing.assert_array_equal(restored.predict(X[:5]), model.predict(X[:5]))


@pytest.mark.filterwarnings("ignore:n_components > n_samples")  # Nystroem's own warning
def test_first_batch_fits_the_map_and_warns_when_too_small():
    with pytest.warns(UserWarning, match="fits its map Nystroem on the first batch only"):
        FeatureRidge(Nystroem(gamma=0.3, n_components=50, random_state=0)).partial_fit(
            X[:40], Y[:40])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a data-free map: no warning for a small batch
        model = FeatureRidge(MAP).partial_fit(X[:5], Y[:5])
    np.testing.assert_array_equal(model.feature_map_.random_weights_,
                                  RBFSampler(**MAP.get_params()).fit(X).random_weights_)


def test_a_frozen_prefitted_map_is_used_as_it_is():
    nystroem = Nystroem(gamma=0.3, n_components=50, random_state=0).fit(X[:200])
    landmarks = nystroem.components_.copy()
    for model in (FeatureRidge(FrozenEstimator(nystroem)).fit(X[200:], Y[200:]),
                  FeatureRidge(FrozenEstimator(nystroem)).partial_fit(X[200:210], Y[200:210])):
        assert model.feature_map_ is nystroem
        np.testing.assert_array_equal(nystroem.components_, landmarks)
    with pytest.raises(ValueError, match="X has 3 features"):
        FeatureRidge(FrozenEstimator(nystroem)).fit(X[:, :3], Y)


def test_accumulators_add_and_refuse_other_shapes():
    Z = MAP.fit(X).transform(X)
    whole, first, second = (RidgeStatistics(30, 1) for _ in range(3))
    whole.add_features(Z, Y[:, None], np.ones(400))
    first.add_features(Z[:123], Y[:123, None], np.ones(123))
    second.add_features(Z[123:], Y[123:, None], np.ones(277))
    # Each entry of G sums 400 products of terms ≤ max|G|/1 in size: 400 ulps of max|G|.
    assert_equal_to_rounding((first + second).symmetric(), whole.symmetric(), ulps=400)
    assert (first + second).n_samples == 400
    with pytest.raises(ValueError, match="of 30 features and 2 targets to statistics of 30"):
        first += RidgeStatistics(30, 2)


def test_threads_give_the_one_thread_fit_to_rounding():
    big_X = np.tile(X, (10, 1))
    big_Y = np.tile(Y, 10)
    with kernelmaps.config_context(n_threads=1, block_bytes=64 * 1024):
        one = FeatureRidge(MAP, alpha=0.1).fit(big_X, big_Y)
    with kernelmaps.config_context(n_threads=2, block_bytes=64 * 1024):
        two = FeatureRidge(MAP, alpha=0.1).fit(big_X, big_Y)
    # The two threads' sums are added at the end: another order of the same n = 4000 terms.
    assert_equal_to_rounding(two.coef_, one.coef_, ulps=4 * 4000 * _condition(one))


def test_the_accumulator_adds_weighted_blocks_without_touching_the_callers_features():
    from kernelmaps.models._accumulator import Workspace

    Z = MAP.fit(X).transform(X)
    before = Z.copy()
    root = np.sqrt(WEIGHTS)
    reused, fresh = RidgeStatistics(30, 1), RidgeStatistics(30, 1)
    workspace = Workspace(30)
    for rows in (slice(0, 50), slice(50, 400), slice(0, 10)):  # the buffer grows, then shrinks
        reused.add_features(Z[rows], Y[rows, None], root[rows], workspace=workspace)
        fresh.add_features(Z[rows], Y[rows, None], root[rows])
    np.testing.assert_array_equal(Z, before)
    np.testing.assert_array_equal(reused.gram, fresh.gram)  # the same operations, bitwise
    A = np.hstack([Z, np.ones((400, 1)), Y[:, None]]) * root[:, None]
    A = np.vstack([A, A[:10]])
    # Each entry sums 410 products: 410 ulps of max|G| (written per block, then added).
    assert_equal_to_rounding(reused.symmetric(), A.T @ A, ulps=410)
    assert reused.n_samples == 410


@pytest.mark.parametrize("cls", [FeatureRidge, FeatureRidgeClassifier])
def test_the_deferred_solve_is_a_documented_property_that_check_is_fitted_never_runs(
        cls, monkeypatch):
    solves = []
    original = RidgeStatistics.solve
    monkeypatch.setattr(RidgeStatistics, "solve",
                        lambda self, *a: solves.append(1) or original(self, *a))
    for name in ("coef_", "intercept_"):  # an explicit mechanism, said where it is read
        assert isinstance(getattr(cls, name), property)
        assert "solved" in getattr(cls, name).__doc__
    model = cls(MAP)
    assert not hasattr(model, "coef_") and not hasattr(model, "intercept_")  # unfitted
    y, classes = (Y, {}) if cls is FeatureRidge else (Y > 0, {"classes": [False, True]})
    model.partial_fit(X[:100], y[:100], **classes)
    check_is_fitted(model)  # scikit-learn's probe reads vars(): no solve
    assert solves == []
    coef, intercept = model.coef_, model.intercept_  # the one solve, on read
    assert len(solves) == 1 and model.coef_ is coef and model.intercept_ is intercept
    # The deferred solution is fit's (same rows, same statistics, the same solve).
    fitted = cls(MAP).fit(X[:100], y[:100])
    np.testing.assert_array_equal(coef, fitted.coef_)
    np.testing.assert_array_equal(intercept, fitted.intercept_)


def test_fit_and_partial_fit_settle_the_placement_of_x_once(monkeypatch):
    # The model's boundary asks where X lives once (placement_of) and carries the answer to
    # the targets, the accumulator and the fitted arrays: none of them asks again.
    expected = FeatureRidge(MAP).fit(X, Y)
    asked = []
    original = feature_ridge_module.placement_of
    monkeypatch.setattr(feature_ridge_module, "placement_of",
                        lambda X: asked.append(1) or original(X))

    def ask_again(X):
        raise AssertionError("the placement of X was asked again inside the model")

    monkeypatch.setattr(feature_ridge_module, "is_device_array", ask_again)
    monkeypatch.setattr(accumulator_module, "is_device_array", ask_again)
    model = FeatureRidge(MAP).fit(X, Y)
    assert len(asked) == 1
    np.testing.assert_array_equal(model.coef_, expected.coef_)
    model = FeatureRidge(MAP).partial_fit(X[:200], Y[:200]).partial_fit(X[200:], Y[200:])
    assert len(asked) == 3
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-9, atol=1e-12)


def test_partial_fit_keeps_its_buffers_between_batches_but_never_pickles_them():
    model = FeatureRidge(RBFSampler(gamma=0.3, n_components=30, random_state=0), alpha=0.1)
    with kernelmaps.config_context(block_bytes=64 * 1024):  # several lanes per batch
        for rows in (slice(0, 200), slice(200, 400)):
            model.partial_fit(X[rows], Y[rows])
    workspaces = model._workspaces
    assert workspaces._threads and all(w.n_features == 30 for w in workspaces._threads.values())
    restored = pickle.loads(pickle.dumps(model))
    assert "_workspaces" not in restored.__dict__
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    whole = FeatureRidge(RBFSampler(gamma=0.3, n_components=30, random_state=0),
                         alpha=0.1).fit(X, Y)
    assert_equal_to_rounding(model.coef_, whole.coef_, ulps=4 * 400 * _condition(whole))
    assert "_workspaces" not in model.fit(X, Y).__dict__  # a refit drops them


def test_a_batch_is_cut_into_an_even_number_of_equal_blocks_for_two_threads():
    from kernelmaps._engine import RANK_UPDATE_MIN_ROWS as MIN_BLOCK_ROWS

    rbf = RBFSampler(gamma=0.3, n_components=30, random_state=0).fit(X)
    sizes: list[int] = []

    class Recording(RBFSampler):
        def _transform_into(self, X_block, out):
            sizes.append(X_block.shape[0])
            return super()._transform_into(X_block, out)

    recording = Recording(**rbf.get_params()).fit(X)
    n = 2 * MIN_BLOCK_ROWS + 1808  # three blocks of at most MIN_BLOCK_ROWS rows
    rows = np.tile(X, (-(-n // 400), 1))[:n]
    targets = np.tile(Y, (-(-n // 400)))[:n, None]
    for threads in (1, 2):
        sizes.clear()
        with kernelmaps.config_context(block_bytes=64 * 1024):  # blocks at their floor
            statistics = RidgeStatistics(30, 1).add(recording, rows, targets, np.ones(n),
                                                    n_threads=threads)
        assert sorted(sizes) == [n // 4] * 4, sizes  # four equal blocks, whatever the threads
        if threads == 1:
            first = statistics.gram.copy()
    np.testing.assert_array_equal(statistics.gram, first)  # lanes fixed by the sizes
