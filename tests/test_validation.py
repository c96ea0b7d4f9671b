"""The boundary's messages about targets (issue 34): text labels to a regressor, NaN in y."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps.models import FeatureRidge, KernelRidge

REGRESSORS = {"KernelRidge": (KernelRidge, "KernelRidgeClassifier"),
              "FeatureRidge": (FeatureRidge, "FeatureRidgeClassifier")}
X = np.random.RandomState(0).normal(size=(20, 3))


@pytest.mark.parametrize("name", REGRESSORS)
@pytest.mark.parametrize("as_", [np.asarray, lambda y: np.asarray(y, dtype=object), list])
def test_text_labels_to_a_regressor_point_to_its_classifier(name, as_):
    # Was scikit-learn's bare "could not convert string to float: np.str_('a')" (or, for an
    # object array, a message blaming X).
    cls, classifier = REGRESSORS[name]
    y = as_(["cat", "dog"] * 10)
    with pytest.raises(ValueError) as caught:
        cls().fit(X, y)
    message = str(caught.value)
    assert message.startswith(f"y passed to {name} must hold numbers")
    assert f"use {classifier}" in message and "'cat', 'dog'" in message
    assert "X passed" not in message
    numbers = as_(["1.5", "2"] * 10)  # numbers as text: converted, as scikit-learn does
    assert cls().fit(X, numbers).predict(X).shape == (20,)


@pytest.mark.parametrize("name", REGRESSORS)
def test_nan_in_y_names_the_rows_and_the_fix(name):
    cls, _ = REGRESSORS[name]
    y = np.ones(20)
    y[[3, 11]] = np.nan
    with pytest.raises(ValueError) as caught:
        cls().fit(X, y)
    message = str(caught.value)
    assert message.startswith("Input y contains NaN.")  # scikit-learn's first line, kept
    for part in (f"y passed to {name}", "2 non-finite value(s)", "2 of its 20 rows",
                 "rows 3, 11", "np.isfinite(y)", "impute"):
        assert part in message
    Y = np.c_[np.ones(20), y]  # two targets: the rows, not the entries
    with pytest.raises(ValueError, match=r"in 2 of its 20 rows \(rows 3, 11\)"):
        cls().fit(X, Y)
