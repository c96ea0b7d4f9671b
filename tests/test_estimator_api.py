"""The scikit-learn estimator contract, for every map, and clear errors on bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelmaps as km
from tests.conftest import SKLEARN_MAPS, make_map

ALL_MAPS = [make_map(name) for name in SKLEARN_MAPS]


@parametrize_with_checks(ALL_MAPS)
def test_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_float32_in_float32_out(name, X_pos):
    est = make_map(name)
    Z32 = est.fit_transform(X_pos.astype(np.float32))
    assert Z32.dtype == np.float32
    Z64 = make_map(name).fit_transform(X_pos)
    assert Z64.dtype == np.float64
    # float32 results are float64 results to float32 accuracy.
    np.testing.assert_allclose(Z32, Z64, rtol=2e-3, atol=2e-4 * np.abs(Z64).max())


@pytest.mark.parametrize("name", SKLEARN_MAPS)
@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.uint8])
def test_other_dtypes_become_float64(name, dtype, X_pos):
    Z = make_map(name).fit_transform((X_pos * 10).astype(dtype))
    assert Z.dtype == np.float64


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_sparse_input_accepted(name, X_pos):
    X = X_pos * (X_pos > 0.6)
    Z_sparse = make_map(name).fit_transform(sp.csr_matrix(X))
    Z_dense = make_map(name).fit_transform(X)
    Z_sparse = Z_sparse.toarray() if sp.issparse(Z_sparse) else Z_sparse
    np.testing.assert_allclose(Z_sparse, Z_dense, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_pickle_roundtrip(name, X_pos):
    est = make_map(name).fit(X_pos)
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.transform(X_pos), est.transform(X_pos))


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_set_output_pandas(name, X_pos):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X_pos, columns=[f"col{i}" for i in range(X_pos.shape[1])])
    est = make_map(name).set_output(transform="pandas")
    out = est.fit_transform(frame)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())
    assert list(est.feature_names_in_) == list(frame.columns)
    np.testing.assert_allclose(out.to_numpy(), make_map(name).fit_transform(X_pos))


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_feature_names_out(name, X_pos):
    est = make_map(name).fit(X_pos)
    names = est.get_feature_names_out()
    assert len(names) == est.transform(X_pos).shape[1]
    assert all(str(n).startswith(name.lower()) for n in names)


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_pipeline_and_grid_search(name):
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(200, 2))
    y = ((X[:, 0] - 0.5) ** 2 + (X[:, 1] - 0.5) ** 2 < 0.1).astype(int)  # not linearly separable
    pipe = make_pipeline(make_map(name), RidgeClassifier(alpha=1e-3))
    grid = {"ridgeclassifier__alpha": [1e-3, 1e-1]}
    search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert search.best_score_ > 0.6
    assert search.predict(X).shape == (200,)


def test_random_state_honoured(X_pos):
    for name in ("RBFSampler", "SkewedChi2Sampler", "PolynomialCountSketch", "Nystroem"):
        a = make_map(name, random_state=1).fit_transform(X_pos)
        b = make_map(name, random_state=1).fit_transform(X_pos)
        c = make_map(name, random_state=2).fit_transform(X_pos)
        np.testing.assert_array_equal(a, b)
        assert not np.allclose(a, c)


# ---------------------------------------------------------------------------- bad input
BAD_INPUTS = {
    "nan": (np.array([[0.1, np.nan], [0.2, 0.3]]), ValueError, "NaN"),
    "inf": (np.array([[0.1, np.inf], [0.2, 0.3]]), ValueError, "infinity"),
    "empty": (np.empty((0, 3)), ValueError, "0 sample"),
    "no features": (np.empty((3, 0)), ValueError, "0 feature"),
    "1-d": (np.array([0.1, 0.2, 0.3]), ValueError, "Expected 2D array"),
    "3-d": (np.ones((2, 2, 2)), ValueError, "dim 3"),
    "complex": (np.array([[1 + 1j, 0.2]]), ValueError, "Complex data not supported"),
    "strings": (np.array([["a", "b"], ["c", "d"]]), ValueError, "strings"),
}


@pytest.mark.parametrize("name", SKLEARN_MAPS)
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_at_fit(name, case):
    X, error, match = BAD_INPUTS[case]
    with pytest.raises(error, match=match):
        make_map(name).fit(X)


@pytest.mark.parametrize("name", SKLEARN_MAPS)
@pytest.mark.parametrize("case", ["nan", "inf", "1-d", "complex"])
def test_bad_input_at_transform(name, case, X_pos):
    X, error, match = BAD_INPUTS[case]
    est = make_map(name).fit(X_pos[:, :2])
    with pytest.raises(error, match=match):
        est.transform(X)


@pytest.mark.parametrize("name", SKLEARN_MAPS)
def test_wrong_number_of_features_at_transform(name, X_pos):
    est = make_map(name).fit(X_pos)
    with pytest.raises(ValueError, match=r"X has 3 features, but \w+ is expecting 7 features"):
        est.transform(X_pos[:, :3])


BAD_PARAMS = [
    ("RBFSampler", {"n_components": 0}, "n_components"),
    ("RBFSampler", {"gamma": -1.0}, "gamma"),
    ("RBFSampler", {"gamma": "auto"}, "gamma"),
    ("SkewedChi2Sampler", {"n_components": -3}, "n_components"),
    ("SkewedChi2Sampler", {"skewedness": np.inf}, "skewedness"),
    ("AdditiveChi2Sampler", {"sample_steps": 0}, "sample_steps"),
    ("AdditiveChi2Sampler", {"sample_interval": -0.1}, "sample_interval"),
    ("AdditiveChi2Sampler", {"sample_steps": 4}, "sample_interval"),
    ("PolynomialCountSketch", {"degree": 0}, "degree"),
    ("PolynomialCountSketch", {"gamma": -1.0}, "gamma"),
    ("PolynomialCountSketch", {"coef0": -1.0}, "coef0"),
    ("Nystroem", {"kernel": "gaussian"}, "kernel"),
    ("Nystroem", {"n_components": 0}, "n_components"),
    ("Nystroem", {"degree": 0.5}, "degree"),
    ("Nystroem", {"kernel": "precomputed", "gamma": 1.0}, "gamma"),
    ("Nystroem", {"kernel": "poly", "kernel_params": {"degree": -2}}, "degree"),
]


@pytest.mark.parametrize(("name", "params", "match"), BAD_PARAMS,
                         ids=[f"{n}-{p}" for n, p, _ in BAD_PARAMS])
def test_bad_parameters_name_the_parameter(name, params, match, X_pos):
    with pytest.raises((ValueError, TypeError), match=match):
        make_map(name, **params).fit(X_pos)


def test_transform_before_fit_is_a_clear_error(X_pos):
    from sklearn.exceptions import NotFittedError

    for name in ("RBFSampler", "SkewedChi2Sampler", "PolynomialCountSketch", "Nystroem"):
        with pytest.raises(NotFittedError, match="not fitted"):
            make_map(name).transform(X_pos)
    # The additive chi² map is stateless, as in scikit-learn.
    assert km.AdditiveChi2Sampler().transform(X_pos).shape == (120, 21)
