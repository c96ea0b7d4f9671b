"""Estimator API beyond the registry-driven contract (``tests/test_contract.py``): scikit-learn
pipelines and grid search, and the parameter errors of each map, which name the parameter."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

import kernelmaps as km
from tests._estimators import ENTRIES, by_id

MAPS = [e for e in ENTRIES if e.kind == "transformer" and not e.two_views]  # feature maps


@by_id(MAPS)
def test_grid_search_refit_equals_the_map_and_model_fitted_by_hand(e):
    rng = np.random.RandomState(0)
    X, X_new = rng.uniform(0, 1, size=(90, 3)), rng.uniform(0, 1, size=(20, 3))
    y = (X[:, 0] > X[:, 1]).astype(int)
    pipe = make_pipeline(e.make(), RidgeClassifier())
    search = GridSearchCV(pipe, {"ridgeclassifier__alpha": [1e-3, 1.0]}, cv=3).fit(X, y)
    # The refitted pipeline is a clone of the map (same parameters, same random_state)
    # followed by the model on its features.
    feature_map = e.make()
    model = RidgeClassifier(alpha=search.best_params_["ridgeclassifier__alpha"])
    model.fit(feature_map.fit_transform(X), y)
    np.testing.assert_array_equal(search.decision_function(X_new),
                                  model.decision_function(feature_map.transform(X_new)))


BAD_PARAMS = [
    ("RBFSampler", {"n_components": 0}, "n_components"),
    ("RBFSampler", {"gamma": -1.0}, "gamma"),
    ("RBFSampler", {"gamma": "atuo"}, "gamma"),
    ("SkewedChi2Sampler", {"n_components": -3}, "n_components"),
    ("SkewedChi2Sampler", {"skewedness": np.inf}, "skewedness"),
    ("AdditiveChi2Sampler", {"sample_steps": 0}, "sample_steps"),
    ("AdditiveChi2Sampler", {"sample_interval": -0.1}, "sample_interval"),
    ("AdditiveChi2Sampler", {"sample_steps": 4}, "sample_interval"),
    ("PolynomialCountSketch", {"degree": 0}, "degree"),
    ("PolynomialCountSketch", {"gamma": -1.0}, "gamma"),
    ("PolynomialCountSketch", {"coef0": -1.0}, "coef0"),
    ("Nystroem", {"kernel": "gausian"}, "kernel"),
    ("Nystroem", {"n_components": 0}, "n_components"),
    ("Nystroem", {"degree": 0.5}, "degree"),
    ("Nystroem", {"kernel": "precomputed", "gamma": 1.0}, "gamma"),
    ("Nystroem", {"kernel": "poly", "kernel_params": {"degree": -2}}, "degree"),
]


@pytest.mark.parametrize(("name", "params", "match"), BAD_PARAMS,
                         ids=[f"{n}-{p}" for n, p, _ in BAD_PARAMS])
def test_bad_parameters_name_the_parameter(name, params, match):
    X = np.random.RandomState(0).uniform(size=(30, 4))
    with pytest.raises((ValueError, TypeError), match=match):
        getattr(km, name)(**params).fit(X)


def test_additive_chi2_is_stateless_like_sklearns():
    X = np.random.RandomState(0).uniform(size=(10, 7))
    # transform needs no fit; sample_steps=2 gives 2·2 − 1 = 3 features per input column.
    Z = km.AdditiveChi2Sampler().transform(X)
    assert Z.shape == (10, 21)
    np.testing.assert_array_equal(Z, km.AdditiveChi2Sampler().fit(X).transform(X))
