"""Kernel objects follow scikit-learn's get_params/set_params protocol (clone, searches)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from kernelmaps import Nystroem
from kernelmaps.kernels import KERNELS, CallableKernel, get_kernel


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_clone_and_set_params_round_trip(name):
    kernel = get_kernel(name)
    copy = clone(kernel)
    assert copy == kernel and copy is not kernel
    assert kernel.set_params(**kernel.get_params()) == copy


def test_set_params_validates_like_the_constructor_and_keeps_the_kernel():
    kernel = get_kernel("rbf", gamma=0.5)
    with pytest.raises(ValueError, match="gamma"):
        kernel.set_params(gamma=-1.0)
    with pytest.raises(ValueError, match="not both"):
        kernel.set_params(sigma=2.0)  # gamma is still set
    with pytest.raises(ValueError, match=r"no parameter\(s\) \['width'\]"):
        kernel.set_params(width=1.0)
    assert kernel.get_params() == {"gamma": 0.5, "sigma": None}  # unchanged by the errors
    # Switching to sigma works once gamma is cleared, and the values follow it: γ = 1/(2σ²).
    X = np.random.RandomState(0).normal(size=(5, 3))
    kernel.set_params(gamma=None, sigma=2.0)
    np.testing.assert_allclose(kernel(X), get_kernel("rbf", gamma=0.125)(X), rtol=1e-12)


def test_set_params_changes_the_values():
    X = np.random.RandomState(0).normal(size=(5, 3))
    kernel = get_kernel("rbf", gamma=0.1).set_params(gamma=0.7)
    np.testing.assert_allclose(kernel(X), get_kernel("rbf", gamma=0.7)(X), rtol=0, atol=0)


def test_callable_kernel_clones():
    def k(x, y, width=1.0):
        return np.exp(-np.sum((x - y) ** 2) / width)

    kernel = CallableKernel(k, {"width": 2.0})
    copy = clone(kernel)
    assert copy.params == {"width": 2.0} and copy.params is not kernel.params
    X = np.random.RandomState(0).normal(size=(4, 2))
    # The same pairwise driver on the same arrays: identical values.
    np.testing.assert_array_equal(copy(X), kernel(X))
    assert CallableKernel(k)(X).shape == (4, 4)  # params=None: no keyword arguments


@pytest.mark.filterwarnings("ignore::kernelmaps.DegenerateKernelWarning")  # gamma=1, on purpose
def test_grid_search_over_a_kernel_object_parameter():
    X, y = load_digits(return_X_y=True)
    pipe = make_pipeline(Nystroem(kernel=get_kernel("rbf", gamma=1.0), n_components=60,
                                  random_state=0), RidgeClassifier())
    search = GridSearchCV(pipe, {"nystroem__kernel__gamma": [1e-3, 1.0]}, cv=3).fit(X, y)
    # gamma=1 on raw pixels (squared distances ~ 10³) makes every landmark a spike.
    assert search.best_params_ == {"nystroem__kernel__gamma": 1e-3}
    assert search.best_score_ > 0.9
    assert pipe.steps[0][1].kernel.gamma == 1.0  # the search worked on clones
