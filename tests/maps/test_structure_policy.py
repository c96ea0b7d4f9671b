"""structure="auto": the one policy (maps/_structure_policy.py) and the three places of
RandomFourierFeatures that ask it — whether fit reads rows before it has them, whether it
reads a sample, and the structure chosen — agree."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures
from kernelmaps.maps._sampling import SAMPLINGS
from kernelmaps.maps._structure_policy import (
    AUTO_MAX_EFFECTIVE_DIMENSION,
    AUTO_MAX_FEATURES,
    auto_reads_data,
    auto_structure,
)


@pytest.mark.parametrize(("sampling", "isotropic", "n_features", "effective", "expected"), [
    ("qmc", True, 5, 3.0, "principal"),
    ("halton", True, 5, AUTO_MAX_EFFECTIVE_DIMENSION, "principal"),
    ("qmc", True, 50, AUTO_MAX_EFFECTIVE_DIMENSION + 0.5, "orthogonal"),
    ("mc", True, 5, None, "orthogonal"),
    ("qmc", True, AUTO_MAX_FEATURES + 1, None, "iid"),
    ("mc", True, AUTO_MAX_FEATURES + 1, None, "iid"),
    ("qmc", False, 5, None, "iid"),
    ("mc", False, 5, None, "iid"),
])
def test_auto_structure_choices(sampling, isotropic, n_features, effective, expected):
    assert auto_structure(sampling, isotropic, n_features, effective) == expected
    reads = auto_reads_data(sampling, lambda: isotropic, n_features)
    assert reads == (effective is not None)


def test_the_density_is_asked_only_where_the_answer_depends_on_it():
    def no_density():
        raise AssertionError("the density was asked for")
    assert not auto_reads_data("mc", no_density)
    assert not auto_reads_data("qmc", no_density, AUTO_MAX_FEATURES + 1)


@pytest.mark.parametrize("sampling", list(SAMPLINGS))
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_the_three_places_of_rff_agree(sampling, kernel):
    X = np.random.RandomState(0).rand(300, 5)
    est = RandomFourierFeatures(n_components=40, kernel=kernel, gamma=0.5, sampling=sampling,
                                random_state=0)
    reads_before_fit = est._fit_reads_rows()
    indices = est._fit_sample_indices(10_000, X.shape[1], np.random.RandomState(0))
    est.fit(X)
    reads = est.effective_dimension_ is not None
    assert reads_before_fit == reads == (indices is not None)
    isotropic = est._spectral_density(est.kernel_, X.shape[1]).isotropic
    assert isotropic == (kernel == "rbf")
    assert est.structure_ == auto_structure(sampling, isotropic, X.shape[1],
                                            est.effective_dimension_)
