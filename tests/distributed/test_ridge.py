"""FeatureRidge / FeatureRidgeClassifier: agreement with scikit-learn's Ridge / RidgeClassifier
on materialised features, and the same numbers on dask collections (the scikit-learn contract
runs in tests/test_contract.py, from the registry)."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import Ridge, RidgeClassifier

import kernelmaps as km
from kernelmaps.distributed import FeatureRidge, FeatureRidgeClassifier
from tests._rounding import assert_labels_agree_where_decided
from tests.conftest import assert_same_numbers


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(900, 5))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=900)
    return X, y, da.from_array(X, chunks=(250, 5))


MAPS = {
    "rff": lambda: km.RBFSampler(gamma=0.5, n_components=150, random_state=0),
    "nystroem": lambda: km.Nystroem(gamma=0.5, n_components=80, landmarks=np.random.RandomState(1)
                                    .uniform(-1, 1, size=(80, 5))),
}


@pytest.mark.parametrize("map_name", MAPS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_equals_sklearn_ridge_on_materialised_features(problem, map_name, fit_intercept):
    X, y, dX = problem
    weights = np.random.RandomState(2).uniform(0.5, 2, size=X.shape[0])
    Z = MAPS[map_name]().fit_transform(X)
    reference = Ridge(alpha=1e-2, solver="cholesky", fit_intercept=fit_intercept).fit(
        Z, y, sample_weight=weights)
    for data in (X, dX):  # in memory, and chunk by chunk on Dask
        model = FeatureRidge(MAPS[map_name](), alpha=1e-2, fit_intercept=fit_intercept).fit(
            data, y, sample_weight=weights)
        assert_same_numbers(model.coef_, reference.coef_, rtol=1e-8)
        np.testing.assert_allclose(model.intercept_, reference.intercept_, atol=1e-8)
        np.testing.assert_allclose(model.predict(X), reference.predict(Z), atol=1e-8)


def test_several_targets_and_dask_targets(problem):
    X, y, dX = problem
    Y = np.column_stack([y, -2 * y + 1])
    model = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(dX, da.from_array(Y, chunks=100))
    reference = Ridge(alpha=1e-2, solver="cholesky").fit(MAPS["rff"]().fit_transform(X), Y)
    assert model.coef_.shape == (2, 150) and model.intercept_.shape == (2,)
    assert_same_numbers(model.coef_, reference.coef_, rtol=1e-8)


def test_predict_and_score_on_dask(problem):
    X, y, dX = problem
    model = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(X, y)
    lazy = model.predict(dX)
    assert isinstance(lazy, da.Array) and lazy.shape == (900,) and lazy.chunks == (dX.chunks[0],)
    np.testing.assert_allclose(lazy.compute(), model.predict(X), rtol=1e-12, atol=1e-12)
    weights = np.linspace(0.1, 1, 900)
    np.testing.assert_allclose(model.score(dX, y), model.score(X, y), rtol=1e-10)
    np.testing.assert_allclose(model.score(dX, da.from_array(y, chunks=300), weights),
                               model.score(X, y, weights), rtol=1e-10)
    assert model.score(X, y) > 0.95


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_equals_ridge_classifier(problem, n_classes):
    X, y, dX = problem
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    names = np.array(["low", "mid", "high"])[labels]
    Z = MAPS["rff"]().fit_transform(X)
    reference = RidgeClassifier(alpha=1e-2, solver="cholesky").fit(Z, names)
    for data in (X, dX):
        model = FeatureRidgeClassifier(MAPS["rff"](), alpha=1e-2).fit(data, names)
        np.testing.assert_array_equal(model.classes_, reference.classes_)
        assert_same_numbers(model.coef_, reference.coef_, rtol=1e-8)
        np.testing.assert_allclose(model.decision_function(X), reference.decision_function(Z),
                                   atol=1e-8)
    lazy = model.predict(dX)
    assert isinstance(lazy, da.Array)
    # Labels are the argmax of scores equal to 1e-8 (asserted above): they agree wherever the
    # two best scores are further apart than that.
    undecided = assert_labels_agree_where_decided(
        lazy.compute(), reference.predict(Z), reference.decision_function(Z), tie=1e-8)
    assert model.score(dX, names) == pytest.approx(reference.score(Z, names),
                                                   abs=undecided / len(names) + 1e-12)
    scores = model.decision_function(dX)
    assert scores.shape == ((900,) if n_classes == 2 else (900, n_classes))


def test_dask_dataframe_and_series(problem):
    import dask.dataframe as dd
    import pandas as pd

    X, y, _ = problem
    frame = pd.DataFrame(X, columns=list("abcde"))
    ddf = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4)
    model = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(ddf, dy)
    assert list(model.feature_names_in_) == list("abcde")
    in_memory = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(frame, y)
    assert_same_numbers(model.coef_, in_memory.coef_, rtol=1e-8)
    np.testing.assert_allclose(model.predict(ddf).compute(), in_memory.predict(frame),
                               atol=1e-10)


def test_random_state_overrides_the_maps_own(problem):
    X, y, _ = problem
    one = FeatureRidge(km.RBFSampler(random_state=1), random_state=5).fit(X, y)
    assert one.feature_map_.random_state == 5 and one.feature_map.random_state == 1
    kept = FeatureRidge(km.RBFSampler(random_state=1)).fit(X, y)
    assert kept.feature_map_.random_state == 1


def test_bad_chunks_give_clear_errors(problem):
    _, y, dX = problem
    bad_y = y.copy()
    bad_y[700] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        FeatureRidge(MAPS["rff"]()).fit(dX, bad_y)
    with pytest.raises(ValueError, match="sample_weight must be finite and non-negative"):
        FeatureRidge(MAPS["rff"]()).fit(dX, y, sample_weight=-np.ones(900))
    with pytest.raises(ValueError, match="y has 10 rows but X has 900"):
        FeatureRidge(MAPS["rff"]()).fit(dX, y[:10])
    with pytest.raises(ValueError, match="at least 2 classes"):
        FeatureRidgeClassifier(MAPS["rff"]()).fit(dX, np.zeros(900))
    with pytest.raises(ValueError, match="1-D y"):
        FeatureRidgeClassifier(MAPS["rff"]()).fit(dX, np.zeros((900, 2)))


def test_dask_chunks_and_partial_fit_batches_are_one_accumulator(problem):
    # Dask's tree reduction, partial_fit over the same chunks, and fit: three drivers of one
    # accumulator, so one model to rounding (1e-8 of coef_, as against scikit-learn above).
    X, y, dX = problem
    on_dask = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(dX, y)
    online = FeatureRidge(MAPS["rff"](), alpha=1e-2)
    for start in range(0, X.shape[0], 250):  # dX's chunks
        online.partial_fit(X[start:start + 250], y[start:start + 250])
    in_memory = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(X, y)
    for model in (on_dask, online):
        assert_same_numbers(model.coef_, in_memory.coef_, rtol=1e-8)
    assert on_dask._n_rows == online._n_rows == X.shape[0]
    # The statistics Dask kept are partial_fit's to go on from.
    more = on_dask.partial_fit(X[:100], y[:100])
    both = FeatureRidge(MAPS["rff"](), alpha=1e-2).fit(np.r_[X, X[:100]], np.r_[y, y[:100]])
    assert_same_numbers(more.coef_, both.coef_, rtol=1e-8)
    with pytest.raises(TypeError, match="partial_fit takes in-memory batches"):
        online.partial_fit(dX, y)


def test_a_frozen_map_is_not_refitted_on_dask(problem):
    X, y, dX = problem
    nystroem = km.Nystroem(gamma=0.5, n_components=40, random_state=0).fit(X[:300])
    model = FeatureRidge(FrozenEstimator(nystroem), alpha=1e-2).fit(dX, y)
    assert model.feature_map_ is nystroem
    reference = FeatureRidge(FrozenEstimator(nystroem), alpha=1e-2).fit(X, y)
    assert_same_numbers(model.coef_, reference.coef_, rtol=1e-8)
