"""PolynomialKernelMap: dot products equal the polynomial kernel exactly."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import polynomial_kernel

from kernelmaps import PolynomialKernelMap


@settings(max_examples=50, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)),
                elements=st.floats(-3, 3, allow_nan=False)),
       degree=st.integers(1, 4), coef0=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       gamma=st.sampled_from([0.1, 1.0, 2.0]))
def test_dot_products_equal_the_kernel(X, degree, coef0, gamma):
    Z = PolynomialKernelMap(degree=degree, coef0=coef0, gamma=gamma).fit_transform(X)
    K = polynomial_kernel(X, degree=degree, coef0=coef0, gamma=gamma)
    np.testing.assert_allclose(Z @ Z.T, K, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(K).max()))


@pytest.mark.parametrize(("p", "degree", "coef0"), [(3, 2, 1.0), (7, 3, 0.5), (5, 3, 0.0),
                                                    (1, 4, 2.0)])
def test_dimension(p, degree, coef0):
    m = PolynomialKernelMap(degree=degree, coef0=coef0).fit(np.ones((2, p)))
    expected = comb(p + degree, degree) if coef0 else comb(p + degree - 1, degree)
    assert m.n_features_out_ == expected == m.transform(np.ones((1, p))).shape[1]
    assert len(set(m.get_feature_names_out())) == expected  # one name per distinct monomial
    assert (m.powers_.sum(axis=1) == degree).all()
    assert len({tuple(r) for r in m.powers_}) == expected


def test_degree_two_has_the_sqrt_two_cross_terms():
    x = np.array([[2.0, 3.0]])
    z = PolynomialKernelMap(gamma=1.0, degree=2, coef0=0.0).fit_transform(x)[0]
    names = list(PolynomialKernelMap(gamma=1.0, degree=2, coef0=0.0).fit(x)
                 .get_feature_names_out())
    assert dict(zip(names, z, strict=True)) == pytest.approx(
        {"x0^2": 4.0, "x0 x1": np.sqrt(2) * 6.0, "x1^2": 9.0})


def test_memory_budget_suggests_count_sketch(rng):
    X = rng.normal(size=(1000, 200))
    with pytest.raises(ValueError, match=r"over max_bytes.*PolynomialCountSketch"):
        PolynomialKernelMap(degree=4).fit(X)  # 70 million features
    m = PolynomialKernelMap(degree=2, max_bytes=10**6).fit(X[:2, :10])
    with pytest.raises(ValueError, match=r"smaller batches.*PolynomialCountSketch"):
        m.transform(rng.normal(size=(20_000, 10)))


@pytest.mark.parametrize(("params", "match"), [({"degree": 0}, "degree"),
                                               ({"coef0": -1.0}, "coef0"),
                                               ({"gamma": 0.0}, "gamma")])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        PolynomialKernelMap(**params).fit(np.ones((2, 2)))
