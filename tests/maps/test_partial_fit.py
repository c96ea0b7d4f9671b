"""partial_fit of the maps: data-free maps fit on the first call and check the width after;
maps whose fit reads rows have none."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.kernel_approximation as skl
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier

import kernelmaps as km

RNG = np.random.RandomState(0)
X = np.abs(RNG.normal(size=(50, 6)))  # non-negative: the chi² maps accept it too
X_MORE = np.abs(RNG.normal(size=(30, 6)))

DATA_FREE = [
    km.RBFSampler(gamma=0.5, n_components=40, random_state=0),
    km.RBFSampler(gamma="auto", n_components=40, random_state=0),
    km.RandomFourierFeatures(gamma=0.5, structure="orthogonal", n_components=40,
                             random_state=0),
    km.RandomFourierFeatures(gamma=0.5, sampling="mc", n_components=40, random_state=0),
    km.PolynomialCountSketch(gamma=0.5, n_components=40, random_state=0),
    km.TensorSRHT(gamma=0.5, n_components=40, random_state=0),
    km.RandomMaclaurin(gamma=0.5, n_components=40, random_state=0),
    km.AdditiveChi2Sampler(),
    km.SkewedChi2Sampler(skewedness=1.0, n_components=40, random_state=0),
    km.ArcCosineSampler(n_components=40, random_state=0),
]
READS_ROWS = [
    km.Nystroem(n_components=20, random_state=0),
    km.RBFSampler(gamma="scale", n_components=40, random_state=0),
    km.RandomFourierFeatures(gamma=0.5, structure="principal", n_components=40, random_state=0),
    km.RandomFourierFeatures(gamma=0.5, n_components=40, random_state=0),  # "auto", QMC
    km.TensorSRHT(n_components=40, random_state=0),  # gamma="scale"
]


@pytest.mark.parametrize("feature_map", DATA_FREE, ids=repr)
def test_first_call_is_fit_then_only_the_width_is_checked(feature_map):
    online = clone(feature_map)
    online.partial_fit(X)
    batch = clone(feature_map).fit(X)
    np.testing.assert_array_equal(online.transform(X_MORE), batch.transform(X_MORE))
    online.partial_fit(X_MORE)  # changes nothing
    np.testing.assert_array_equal(online.transform(X_MORE), batch.transform(X_MORE))
    with pytest.raises(ValueError, match="X has 5 features"):
        online.partial_fit(X_MORE[:, :5])


@pytest.mark.parametrize("name", ["RBFSampler", "PolynomialCountSketch", "SkewedChi2Sampler",
                                  "AdditiveChi2Sampler"])
def test_scikit_learns_maps_give_scikit_learns_fit(name):
    params = {} if name == "AdditiveChi2Sampler" else dict(n_components=40, random_state=0)
    if name != "SkewedChi2Sampler" and name != "AdditiveChi2Sampler":
        params["gamma"] = 0.5
    ours = getattr(km, name)(**params).partial_fit(X).partial_fit(X_MORE)
    theirs = getattr(skl, name)(**params).fit(X)
    # The same draws in the same order; the transforms agree to their own rounding (a few
    # ulps of the features' size: the fast cosine is within 3.3e-16 of np.cos).
    np.testing.assert_allclose(ours.transform(X_MORE), theirs.transform(X_MORE),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("feature_map", READS_ROWS, ids=repr)
def test_maps_that_read_rows_have_no_partial_fit(feature_map):
    assert not hasattr(feature_map, "partial_fit")
    with pytest.raises(AttributeError, match="has no attribute 'partial_fit'") as error:
        feature_map.partial_fit(X)
    # scikit-learn's available_if chains the reason, shown in the traceback.
    assert "fit reads the rows of X" in str(error.value.__cause__)


def test_the_guides_recipe_is_two_lines_per_batch():
    rbf = km.RBFSampler(gamma=0.5, n_components=40, random_state=0)
    sgd = SGDClassifier(random_state=0)
    labels = (X[:, 0] > np.median(X[:, 0])).astype(int)
    for start in range(0, 50, 10):
        batch = X[start:start + 10]
        sgd.partial_fit(rbf.partial_fit(batch).transform(batch), labels[start:start + 10],
                        classes=[0, 1])
    # The map's partial_fit draws once and keeps its draws: every batch went through the
    # map that fit draws, so the classifier is the one fed that map's features.
    fitted = km.RBFSampler(gamma=0.5, n_components=40, random_state=0).fit(X[:10])
    np.testing.assert_array_equal(rbf.transform(X), fitted.transform(X))
    same = SGDClassifier(random_state=0)
    for start in range(0, 50, 10):
        same.partial_fit(fitted.transform(X[start:start + 10]), labels[start:start + 10],
                         classes=[0, 1])
    np.testing.assert_array_equal(sgd.coef_, same.coef_)
    assert sgd.coef_.shape == (1, 40)
