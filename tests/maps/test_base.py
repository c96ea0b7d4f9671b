"""FeatureMap's engine plumbing: a transform written into a caller's reused buffer."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps import PolynomialKernelMap, RBFSampler

RNG = np.random.RandomState(0)
X = RNG.normal(size=(200, 6))


def test_transform_into_a_buffer_gives_transforms_numbers_in_the_buffer():
    rbf = RBFSampler(gamma=0.2, n_components=40, random_state=0).fit(X)
    buffer = np.full((256, 40), np.nan)  # more rows than X: the first 200 are written
    written = rbf._transform_into(X, buffer)
    assert np.shares_memory(written, buffer) and written.shape == (200, 40)
    np.testing.assert_array_equal(written, rbf.transform(X))  # the same call, bitwise
    assert np.isnan(buffer[200:]).all()


def test_transform_into_declines_what_it_cannot_do_and_validates_like_transform():
    rbf = RBFSampler(gamma=0.2, n_components=40, random_state=0).fit(X)
    # float32 X makes float32 features: not a float64 buffer's dtype.
    assert rbf._transform_into(X.astype(np.float32), np.empty((200, 40))) is None
    # A map that overrides the engine's transform path (an output budget) is not bypassed.
    exact = PolynomialKernelMap(degree=2).fit(X)
    assert exact._transform_into(X, np.empty((200, exact.n_features_out_))) is None
    with pytest.raises(ValueError, match="X has 5 features, but RBFSampler is expecting 6"):
        rbf._transform_into(X[:, :5], np.empty((200, 40)))


def test_block_flops_per_row_is_the_maps_own_count_of_a_rows_work():
    # The engine's thread rule reads a row's work through maps.interface: for a random-feature
    # map an inner product over the row's features plus ~600 operations per output feature.
    import scipy.sparse as sp

    from kernelmaps.maps.interface import block_flops_per_row

    X = np.random.default_rng(0).normal(size=(50, 8))
    rbf = RBFSampler(n_components=30, random_state=0).fit(X)
    assert block_flops_per_row(rbf, X) == 30 * (2 * 8 + 600)
    sparse = sp.random(50, 8, density=0.25, format="csr", random_state=0)
    assert block_flops_per_row(rbf, sparse) == 30 * (2 * sparse.nnz / 50 + 600)
