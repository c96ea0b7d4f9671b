"""The estimator contract, for every public estimator in the registry (``tests/_estimators.py``).

scikit-learn's ``check_estimator``; float32 in → float32 out; other dtypes → float64; CSR input
gives the dense result; pickling; outputs independent of the engine's row blocks and thread
count; ``kernel_`` after fit; feature names and pandas output of transformers; random_state
honoured; clear errors on bad input. A new estimator exported by kernelmaps is covered by
all of these once it has a registry entry (a test below fails until it has one).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import ClassNamePrefixFeaturesOutMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelmaps as km
import kernelmaps.io
from kernelmaps.kernels import Kernel
from tests._estimators import (
    ENTRIES,
    Entry,
    by_id,
    make_data,
    one_per_class,
    public_estimators,
)
from tests._helpers import dense
from tests._rounding import assert_equal_to_rounding, assert_labels_agree_where_decided

SPARSE = [e for e in ENTRIES if e.sparse]
TRANSFORMERS = [e for e in ENTRIES if e.is_transformer]
RANDOMIZED = [e for e in ENTRIES if "random_state" in e.params]
FLOAT32_OUT = [e for e in ENTRIES if e.float32_out]
#: Methods whose outputs are floating-point numbers (not class labels).
FLOAT_METHODS = ("transform", "decision_function", "predict_proba", "score_samples")


def fitted(e: Entry, X, y, **overrides):
    return e.make(**overrides).fit(X, y)


def float_outputs(e: Entry, est, X) -> dict[str, np.ndarray]:
    """Every floating-point output of a fitted estimator on ``X``, by method name."""
    methods = [m for m in e.output_methods if m in FLOAT_METHODS]
    if e.kind == "regressor":
        methods.append("predict")
    return {m: getattr(est, m)(X) for m in methods}


def all_outputs(e: Entry, est, X) -> dict[str, np.ndarray]:
    """Every output (labels too) of a fitted estimator on ``X``, by method name."""
    return {m: getattr(est, m)(X) for m in e.output_methods}


#: Two computations of one output that differ only in BLAS's summation order (another row
#: block, thread, memory address, CPU kernel) agree to about one ulp per term summed, of the
#: terms' size: the registry's estimators sum at most a few hundred terms of about the
#: output's size (60-400 rows, 5 features, D <= 64), so 1,024 ulps of the output's scale
#: bounds that with room — and is still 2e-13 relative in float64, far below a real error.
ROUNDING_ULPS = 1024


def assert_outputs_agree(e: Entry, got: dict, expected: dict) -> None:
    """``got`` equals ``expected`` to rounding: floating outputs to ``ROUNDING_ULPS`` of their
    scale, labels on every row whose decision is not a tie within that rounding."""
    for method, result in got.items():
        if method == "predict" and e.kind in ("classifier", "outlier"):
            assert_labels_agree_where_decided(result, expected[method],
                                              expected["decision_function"],
                                              ulps=ROUNDING_ULPS, err_msg=method)
        else:
            assert_equal_to_rounding(result, expected[method], ulps=ROUNDING_ULPS,
                                     err_msg=method)


# ------------------------------------------------------------------------------ the registry
def test_every_public_estimator_is_registered():
    registered = {e.cls for e in ENTRIES}
    missing = sorted(name for name, cls in public_estimators().items() if cls not in registered)
    assert not missing, (
        f"public estimators without an entry in tests/_estimators.py: {missing}; add one so "
        "the contract tests cover them")
    stale = sorted({e.cls.__name__ for e in ENTRIES} - {c.__name__ for c in
                                                        public_estimators().values()})
    assert not stale, f"registry entries for classes kernelmaps does not export: {stale}"


@by_id(ENTRIES)
def test_registry_declarations_match_the_estimator_tags(e):
    tags = e.make().__sklearn_tags__()
    assert tags.input_tags.sparse == e.sparse
    assert tags.input_tags.positive_only == e.non_negative
    expected_type = {"transformer": None, "regressor": "regressor",
                     "classifier": "classifier", "outlier": "outlier_detector"}[e.kind]
    assert tags.estimator_type == expected_type
    if e.is_transformer:
        declared = tags.transformer_tags.preserves_dtype
        assert ("float32" in declared) == e.float32_out


# ------------------------------------------------------------------------------ scikit-learn
_CHECKED = [e.make() for e in ENTRIES]
_XFAIL = {id(est): e.expected_failed_checks for est, e in zip(_CHECKED, ENTRIES, strict=True)}


@parametrize_with_checks(_CHECKED, expected_failed_checks=lambda est: _XFAIL[id(est)],
                         xfail_strict=True)
# The checks' tiny data sets have fewer rows than the maps' n_components: a warned clamp.
@pytest.mark.filterwarnings("ignore:n_components > n_samples:UserWarning")
def test_check_estimator(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------------ dtypes
@by_id(ENTRIES)
def test_float32_in_float32_out(e):
    X, y = make_data(e)
    out32 = float_outputs(e, fitted(e, X.astype(np.float32), y), X.astype(np.float32))
    out64 = float_outputs(e, fitted(e, X, y), X)
    for method, result in out32.items():
        expected = np.float32 if e.float32_out else np.float64
        assert dense(result).dtype == expected, method
        assert dense(out64[method]).dtype == np.float64, method
        # The float32 result is the float64 result to float32 accuracy.
        reference = dense(out64[method])
        np.testing.assert_allclose(dense(result), reference, rtol=2e-3,
                                   atol=2e-4 * np.abs(reference).max(), err_msg=method)


@by_id(FLOAT32_OUT)
def test_transform_dtype_follows_the_input_not_the_fit(e):
    X, y = make_data(e)
    fit64, fit32 = fitted(e, X, y), fitted(e, X.astype(np.float32), y)
    Z32 = dense(fit64.transform(X.astype(np.float32)))
    Z64 = dense(fit32.transform(X))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    reference = dense(fit64.transform(X))
    for result in (Z32, Z64):
        np.testing.assert_allclose(result, reference, rtol=2e-3,
                                   atol=2e-4 * np.abs(reference).max())


@by_id(ENTRIES)
@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.uint8])
def test_other_dtypes_are_computed_in_float64(e, dtype):
    X, y = make_data(e)
    X = np.round(X * 10)
    for method, result in float_outputs(e, fitted(e, X.astype(dtype), y),
                                        X.astype(dtype)).items():
        assert dense(result).dtype == np.float64, method
        np.testing.assert_allclose(dense(result),
                                   dense(float_outputs(e, fitted(e, X, y), X)[method]),
                                   rtol=1e-12, atol=1e-12, err_msg=method)


# ------------------------------------------------------------------------------ sparse input
@by_id(SPARSE)
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array, sp.csc_matrix])
def test_sparse_input_gives_the_dense_result(e, container):
    X, y = make_data(e)
    from_sparse = all_outputs(e, fitted(e, container(X), y), container(X))
    from_dense = all_outputs(e, fitted(e, X, y), X)
    for method, result in from_sparse.items():
        reference = dense(from_dense[method])
        np.testing.assert_allclose(dense(result), reference, rtol=e.sparse_rtol,
                                   atol=1e-12 * max(1.0, np.abs(reference).max()),
                                   err_msg=method)


# ------------------------------------------------------------------------------ pickling
@by_id(ENTRIES)
def test_pickle_round_trip_gives_identical_outputs(e):
    X, y = make_data(e)
    est = fitted(e, X, y)
    restored = pickle.loads(pickle.dumps(est))
    # The restored arrays are equal but live at other addresses, where BLAS may take another
    # code path (alignment): equal to rounding, not bit for bit.
    for name, value in vars(est).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(restored, name), value, err_msg=name)
    assert_outputs_agree(e, all_outputs(e, restored, X), all_outputs(e, est, X))


@by_id(ENTRIES)
def test_safe_persistence_round_trip_gives_identical_outputs(e, tmp_path):
    # kernelmaps.io loads every fitted estimator with no trust beyond kernelmaps' own classes.
    X, y = make_data(e)
    est = fitted(e, X, y)
    path = tmp_path / "model.skops"
    km.io.dump(est, path)
    restored = km.io.load(path)
    assert type(restored) is type(est)
    if hasattr(est, "kernel_"):
        assert restored.kernel_ == est.kernel_
    for name, value in vars(est).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(restored, name), value, err_msg=name)
    # Equal arrays at other addresses: equal to rounding (see the pickle test above).
    assert_outputs_agree(e, all_outputs(e, restored, X), all_outputs(e, est, X))


# ------------------------------------------------------------------------------ the engine
# 400 rows: with block_bytes=4096 every estimator runs several row blocks (at least 128 rows
# each), with 1 << 26 one block.
SMALL_BLOCKS, ONE_BLOCK = 4096, 1 << 26


@by_id(ENTRIES)
def test_outputs_independent_of_block_size(e):
    X, y = make_data(e, n_samples=400)
    est = fitted(e, X, y)
    with km.config_context(n_threads=1, block_bytes=ONE_BLOCK):
        reference = all_outputs(e, est, X)
    with km.config_context(n_threads=1, block_bytes=SMALL_BLOCKS):
        blocked = all_outputs(e, est, X)
        refitted = all_outputs(e, fitted(e, X, y), X)
    # Other blocks are other BLAS calls (other shapes): equal to rounding.
    assert_outputs_agree(e, blocked, reference)
    for method in blocked:
        # Fitting in small blocks changes only the order of the blocked sums' terms.
        ref = dense(reference[method])
        np.testing.assert_allclose(dense(refitted[method]), ref, rtol=1e-9,
                                   atol=1e-9 * max(1.0, np.abs(ref).max()), err_msg=method)


@by_id(ENTRIES)
def test_fit_and_outputs_independent_of_thread_count(e):
    X, y = make_data(e, n_samples=400)
    results = []
    for n_threads in (1, 2):
        with km.config_context(n_threads=n_threads, block_bytes=SMALL_BLOCKS):
            results.append(all_outputs(e, fitted(e, X, y), X))
    one, two = results
    # Same blocks, but each thread's temporaries at other addresses: equal to rounding.
    assert_outputs_agree(e, two, one)


# ------------------------------------------------------------------------------ kernel_
@by_id(ENTRIES)
def test_kernel_is_a_kernel_after_fit(e):
    X, y = make_data(e)
    est = e.make()
    assert not hasattr(est, "kernel_")
    est.fit(X, y)
    assert isinstance(est.kernel_, Kernel)
    K = np.asarray(est.kernel_(X[:8]))
    assert K.shape == (8, 8) and np.isfinite(K).all()
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)
    assert not hasattr(clone(est), "kernel_")


# ------------------------------------------------------------------------------ transformers
@by_id(TRANSFORMERS)
def test_feature_names_out(e):
    X, y = make_data(e)
    est = fitted(e, X, y)
    names = est.get_feature_names_out()
    n_out = est.transform(X).shape[1]
    assert len(names) == n_out and len(set(names)) == n_out
    assert all(isinstance(n, str) for n in names)
    if type(est).get_feature_names_out is ClassNamePrefixFeaturesOutMixin.get_feature_names_out:
        # scikit-learn's naming, as its maps do: the class name and the column number.
        assert list(names) == [f"{e.cls.__name__.lower()}{i}" for i in range(n_out)]


@by_id(TRANSFORMERS)
def test_set_output_pandas(e):
    pd = pytest.importorskip("pandas")
    X, y = make_data(e)
    frame = pd.DataFrame(X, columns=[f"col{i}" for i in range(X.shape[1])])
    est = e.make().set_output(transform="pandas")
    # Two-view estimators' fit_transform returns both views (scikit-learn's CCA convention).
    out = est.fit(frame, y).transform(frame) if e.two_views else est.fit_transform(frame, y)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())
    assert list(est.feature_names_in_) == list(frame.columns)
    np.testing.assert_allclose(out.to_numpy(), dense(fitted(e, X, y).transform(X)))


# ------------------------------------------------------------------------------ random_state
@by_id(RANDOMIZED)
def test_random_state_honoured(e):
    X, y = make_data(e)
    a = float_outputs(e, fitted(e, X, y, random_state=1), X)
    b = float_outputs(e, fitted(e, X, y, random_state=1), X)
    c = float_outputs(e, fitted(e, X, y, random_state=2), X)
    for method in a:  # two fits, the same call on the same data: equal to rounding
        assert_equal_to_rounding(a[method], b[method], ulps=ROUNDING_ULPS, err_msg=method)
    differs = any(not np.allclose(dense(a[m]), dense(c[m])) for m in a)
    assert differs == e.seed_changes_output


@by_id(ENTRIES)
def test_outputs_before_fit_raise_not_fitted(e):
    X, _ = make_data(e)
    for method in e.output_methods:
        if e.stateless and method == "transform":
            continue  # stateless maps (scikit-learn's AdditiveChi2Sampler) need no fit
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(e.make(), method)(X)


# ------------------------------------------------------------------------------ bad input
BAD_INPUTS = {
    "nan": (np.array([[0.1, np.nan], [0.2, 0.3]]), "NaN"),
    "inf": (np.array([[0.1, np.inf], [0.2, 0.3]]), "infinity"),
    "empty": (np.empty((0, 2)), "0 sample"),
    "no features": (np.empty((2, 0)), "0 feature"),
    "1-d": (np.array([0.1, 0.2]), "Expected 2D array"),
    "3-d": (np.ones((2, 2, 2)), "dim 3"),
    "complex": (np.array([[1 + 1j, 0.2], [0.3, 0.4]]), "Complex data not supported"),
    "strings": (np.array([["a", "b"], ["c", "d"]]), "strings"),
}
#: Cases checked again on fitted estimators (shape-preserving ones: same n_features).
AT_PREDICT = ("nan", "inf", "1-d", "complex", "strings")


def _y_for(e: Entry, n: int):
    if e.two_views:
        return np.random.RandomState(0).uniform(size=(n, 2))
    if e.kind == "regressor":
        return np.arange(n, dtype=float)
    if e.kind == "classifier":
        return np.arange(n) % 2
    return None


def bad_input_cases(cases):
    """Every (entry, case) pair."""
    return pytest.mark.parametrize(("e", "case"), [
        pytest.param(e, case, id=f"{e.id}-{case}") for e in ENTRIES for case in cases
    ])


@bad_input_cases(BAD_INPUTS)
def test_bad_input_at_fit_is_a_clear_error(e, case):
    X, match = BAD_INPUTS[case]
    with pytest.raises(ValueError, match=match):
        e.make().fit(X, _y_for(e, len(X)))


@bad_input_cases(AT_PREDICT)
def test_bad_input_after_fit_is_a_clear_error(e, case):
    X_train, y = make_data(e, n_features=2)
    est = fitted(e, X_train, y)
    X, match = BAD_INPUTS[case]
    for method in e.output_methods:
        with pytest.raises(ValueError, match=match):
            getattr(est, method)(X)


@by_id(ENTRIES)
def test_wrong_number_of_features_after_fit(e):
    X, y = make_data(e, n_features=5)
    est = fitted(e, X, y)
    for method in e.output_methods:
        with pytest.raises(ValueError,
                           match=rf"X has 3 features, but {e.cls.__name__} is expecting 5"):
            getattr(est, method)(X[:, :3])


# ------------------------------------------------------------------------------ column names
@by_id(one_per_class(ENTRIES))
def test_a_dataframe_s_column_names_are_kept_and_checked(e):
    # issue 34, item 4: every estimator fitted on a DataFrame keeps its columns' names, so
    # scikit-learn's checks on predict/transform apply (a different column order raises).
    pd = pytest.importorskip("pandas")
    X, y = make_data(e)
    frame = pd.DataFrame(X, columns=[f"col{i}" for i in range(X.shape[1])])
    method = e.output_methods[0]
    with warnings.catch_warnings():  # no "X does not have valid feature names" on the way
        warnings.simplefilter("error", UserWarning)
        est = e.make().fit(frame, y)
        getattr(est, method)(frame)  # the same columns: accepted
    assert list(est.feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="feature names"):
        getattr(est, method)(frame[frame.columns[::-1]])
