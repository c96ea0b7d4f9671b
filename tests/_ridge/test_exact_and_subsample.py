"""The ridge core's exact solves and α paths (kernelmaps._ridge): the exact baseline equals
scikit-learn on the Cholesky features at a fixed α, and α chosen on a subsample of the rows
scores within the leave-one-out noise of the α chosen on all of them."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import train_test_split

from kernelmaps._ridge import (
    DEFAULT_ALPHAS,
    alpha_subsample_rows,
    centre_kernel_in_place,
    kernel_alpha_path,
    subsample_kernel_alpha,
)
from kernelmaps._ridge import kernel_path as kernel_path_module
from kernelmaps.evaluate import _exact, median_heuristic
from kernelmaps.evaluate._alpha import SelectAlpha
from kernelmaps.evaluate._splits import Split
from kernelmaps.kernels import get_kernel


def _split(X, y, n_train, stratify=True):
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=n_train, random_state=0, stratify=y if stratify else None)
    kernel = get_kernel("rbf", gamma=median_heuristic(X_train, "rbf").value)
    return kernel, Split(0, X_train, y_train, X_test, y_test)


def _cholesky_features(kernel, split):
    """The exact features: rows of L (K = LLᵀ) for training rows, L⁻¹k(X, x) for test rows."""
    K = np.asarray(kernel(split.X_train, split.X_train), dtype=np.float64)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(K.shape[0]))
    Z_test = np.linalg.solve(L, np.asarray(kernel(split.X_test, split.X_train)).T).T
    return L, Z_test


def test_the_rule_for_m():
    assert [alpha_subsample_rows(n) for n in (10, 2_000, 2_001, 8_000, 12_000, 15_000,
                                              100_000)] == [10, 2_000, 2_000, 2_000, 3_000,
                                                            3_000, 3_000]
    for n in range(2, 30_000, 997):  # never more rows than there are, at most n/3 beyond 2,000
        m = alpha_subsample_rows(n)
        assert 1 <= m <= n and (m == n or m <= max(2_000, n / 3))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_baseline_equals_scikit_learn_on_the_cholesky_features_at_a_fixed_alpha(task):
    if task == "classification":
        X, y = load_digits(return_X_y=True)  # unscaled pixels 0…16
        kernel, split = _split(X[:600], y[:600], 400)
        model = RidgeClassifier(alpha=0.01)
    else:
        X, y = load_diabetes(return_X_y=True)
        kernel, split = _split(X, y, 300, stratify=False)
        model = Ridge(alpha=0.01)
    run = _exact.run_exact(kernel, split, lambda: Ridge(alpha=0.01) if task == "regression"
                           else RidgeClassifier(alpha=0.01))
    L, Z_test = _cholesky_features(kernel, split)
    reference = model.fit(L, split.y_train)
    if task == "classification":
        wrong = (reference.predict(Z_test) != split.y_test).astype(float)
        np.testing.assert_array_equal(run.losses, wrong)  # the same label on every row
        assert run.score == pytest.approx(reference.score(Z_test, split.y_test), abs=1e-12)
    else:
        # R² of targets ~150 with residuals ~50: a relative 1e-7 is far above the rounding
        # of a 300-row Cholesky (condition ~1e4 at α = 0.01) and far below any real change.
        assert run.score == pytest.approx(reference.score(Z_test, split.y_test), rel=1e-7)
    assert run.alpha == 0.01


def test_baseline_with_alpha_chosen_on_a_subsample_solves_all_rows_at_that_alpha(monkeypatch):
    X, y = load_digits(return_X_y=True)
    kernel, split = _split(X[:900], y[:900], 600)
    monkeypatch.setattr(kernel_path_module, "ALPHA_SUBSAMPLE_MIN_ROWS", 200)
    assert alpha_subsample_rows(600) == 200
    phases = []
    run = _exact.run_exact(kernel, split, SelectAlpha(DEFAULT_ALPHAS, "classification"),
                           phases.append)
    assert phases == [_exact.PHASES[0], _exact.alpha_phase(200), _exact.PHASES[1],
                      _exact.PHASES[2]]
    K = np.asarray(kernel(split.X_train, split.X_train), dtype=np.float64)
    path, rows = subsample_kernel_alpha(K, split.y_train, task="classification")
    assert rows.size == 200 and run.alpha == path.alpha
    assert any("on 200 of the 600 training rows" in note for note in run.notes)
    # ... and the model is the one on all 600 rows at that α.
    L, Z_test = _cholesky_features(kernel, split)
    reference = RidgeClassifier(alpha=run.alpha).fit(L, split.y_train)
    np.testing.assert_array_equal(
        run.losses, (reference.predict(Z_test) != split.y_test).astype(float))


@pytest.mark.parametrize(("name", "n_rows"), [("digits", 449), ("breast_cancer", 142)])
def test_alpha_chosen_on_a_subsample_is_within_the_loo_noise_of_the_full_path(name, n_rows):
    # Real, unscaled data, the CLI's kernel (median heuristic); m = n/3 rows (the rule's
    # smallest ratio is n/4 with m >= 2,000: these small sets stand in at a smaller m).
    loader = {"digits": load_digits, "breast_cancer": load_breast_cancer}[name]
    X, y = loader(return_X_y=True)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.25, random_state=0,
                                              stratify=y)
    kernel = get_kernel("rbf", gamma=median_heuristic(X_train, "rbf").value)
    K = np.asarray(kernel(X_train, X_train), dtype=np.float64)
    sub, rows = subsample_kernel_alpha(K, y_train, task="classification", n_rows=n_rows)
    assert rows.size == n_rows
    centre_kernel_in_place(K)
    full = kernel_alpha_path(K, y_train, task="classification", overwrite=True)
    n = y_train.size
    noise = np.sqrt(full.score * (1 - full.score) / n)  # the LOO accuracy's standard error
    at_sub = full.scores[np.flatnonzero(full.alphas == sub.alpha)[0]]
    assert at_sub >= full.score - 2 * noise
    # The subsample is not the whole set: its own best α is chosen on other evidence.
    assert sub.dual_coef.shape[0] == n_rows < n


def test_the_subsample_path_from_the_rows_own_kernel_matrix_equals_the_one_from_k():
    # The exact baseline hands subsample_kernel_alpha a callable giving the drawn rows' own
    # kernel matrix, so the path runs beside the n × n build: the same rows, the same α.
    X, y = load_digits(return_X_y=True)
    X_train, y_train = X[:900], y[:900]
    kernel = get_kernel("rbf", gamma=median_heuristic(X_train, "rbf").value)
    K = np.asarray(kernel(X_train, X_train), dtype=np.float64)
    seen = []

    def submatrix(rows):
        seen.append(rows)
        return kernel(X_train[rows], X_train[rows])

    from_k, rows_k = subsample_kernel_alpha(K, y_train, task="classification", n_rows=300)
    from_x, rows_x = subsample_kernel_alpha(submatrix, y_train, task="classification",
                                            n_rows=300)
    np.testing.assert_array_equal(rows_x, rows_k)
    np.testing.assert_array_equal(seen[0], rows_k)
    assert from_x.alpha == from_k.alpha
    # Both submatrices are the kernel's values of the same pairs, from GEMMs of other shapes:
    # a few ulps apart (K ≤ 1). The leave-one-out accuracy counts labels, which move only
    # for a row decided within rounding (none here); the errors are sums of squares of
    # residuals that carry the matrix's rounding times the path's conditioning (α ≥ 1e-6
    # on eigenvalues ≤ 300): 1e-6 relative bounds that with room.
    np.testing.assert_array_equal(from_x.scores, from_k.scores)
    np.testing.assert_allclose(from_x.errors, from_k.errors, rtol=1e-6)
    with pytest.raises(ValueError, match="K\\(rows\\) must return"):
        subsample_kernel_alpha(lambda rows: K[:10, :10], y_train, n_rows=300,
                               task="classification")


def test_the_training_kernel_is_written_in_place_with_the_values_of_row_blocks():
    # _exact._train_kernel writes float64 rows straight into K (the engine's blocks) where
    # it copied blocks of BLOCK_ROWS rows: the same values; float32 data keeps the blocks.
    rng = np.random.RandomState(0)
    X = rng.normal(size=(1500, 8))
    kernel = get_kernel("rbf", gamma=0.05)
    blocks = np.vstack([kernel(X[start:start + 1024], X) for start in (0, 1024)])
    # Other row blocks are other GEMM shapes; the d=8-term dot products may be summed in
    # another order: exponent ≤ 0.05·2·max|x|² ≈ 5 carries a few ulps of its size, passed on
    # to K ≤ 1 by exp — 64 ulps bound it (as test_blocked_evaluation_equals_single_block).
    from tests._rounding import assert_equal_to_rounding

    assert_equal_to_rounding(_exact._train_kernel(kernel, X), blocks, ulps=64)
    K32 = _exact._train_kernel(kernel, X.astype(np.float32))
    assert K32.dtype == np.float64
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(K32, np.vstack(
        [kernel(X32[start:start + 1024], X32) for start in (0, 1024)]).astype(np.float64))


def test_the_kernel_path_forms_its_projections_by_block_with_the_same_scores():
    # kernel_alpha_path scales U by Λ^{1/2} block by block inside the row loop instead of
    # holding P = U Λ^{1/2} whole (an m × r array less at the baseline's peak): the same
    # element-wise products, the same GEMMs on them.
    from kernelmaps._linalg import psd_spectrum
    from kernelmaps._ridge.labels import encode_targets
    from kernelmaps._ridge.path import _loo_scores

    X, y = load_digits(return_X_y=True)
    X, y = X[:500], y[:500]
    kernel = get_kernel("rbf", gamma=median_heuristic(X, "rbf").value)
    K = np.asarray(kernel(X, X), dtype=np.float64)
    centre_kernel_in_place(K)
    path = kernel_alpha_path(K, y, task="classification")
    Y, classes = encode_targets(y, 500, "classification", rows_of="K")
    lam, U = psd_spectrum(K, driver="evr")
    y_mean = Y.mean(axis=0)
    UtY = U.T @ (Y - y_mean)
    root = np.sqrt(lam)
    scores, errors = _loo_scores(lam, U * root, root[:, None] * UtY, 500, y_mean, Y,
                                 path.alphas, "classification", classes, y)
    np.testing.assert_array_equal(path.scores, scores)
    # The GEMMs read the same numbers from other memory (a fresh block, not a view of P):
    # BLAS may pick another kernel by alignment; sums of 500 squared residuals, each a
    # rational function of the projections, agree to far below 1e-10 relative.
    np.testing.assert_allclose(path.errors, errors, rtol=1e-10)


@pytest.mark.parametrize("n_train", [150, 600])  # the path on every row; on 200 of them
def test_the_kernel_matrix_is_freed_before_the_test_rows(monkeypatch, n_train):
    # The test rows' kernel blocks must not come on top of the n × n matrix (the main job's
    # peak RSS was K beside them): by the test-rows phase no frame holds it any more.
    import weakref

    X, y = load_digits(return_X_y=True)
    kernel, split = _split(X[:900], y[:900], n_train)
    monkeypatch.setattr(kernel_path_module, "ALPHA_SUBSAMPLE_MIN_ROWS", 200)
    built = []
    train_kernel = _exact._train_kernel

    def recorded(*args):
        K = train_kernel(*args)
        built.append(weakref.ref(K))
        return K

    monkeypatch.setattr(_exact, "_train_kernel", recorded)
    alive_at_test_rows = []

    def on_phase(phase):
        if phase == _exact.PHASES[2]:
            alive_at_test_rows.append(built[0]() is not None)

    _exact.run_exact(kernel, split, SelectAlpha(DEFAULT_ALPHAS, "classification"), on_phase)
    assert alive_at_test_rows == [False]


def test_the_path_beside_the_kernel_matrix_gives_the_run_of_the_path_after_it(monkeypatch):
    # With two threads the α path runs beside the n × n build, on the rows' own kernel
    # matrix; with one (compare --threads 1) after it, on K's submatrix: the same α and the
    # same predictions (the submatrices agree to rounding, test above).
    import kernelmaps as km

    X, y = load_digits(return_X_y=True)
    kernel, split = _split(X[:900], y[:900], 600)
    monkeypatch.setattr(kernel_path_module, "ALPHA_SUBSAMPLE_MIN_ROWS", 200)
    factory = SelectAlpha(DEFAULT_ALPHAS, "classification")
    beside = []
    monkeypatch.setattr(_exact, "_alpha_path_beside",
                        lambda *a, _f=_exact._alpha_path_beside: beside.append(1) or _f(*a))
    with km.config_context(n_threads=2):
        two = _exact.run_exact(kernel, split, factory)
    with km.config_context(n_threads=1):
        one = _exact.run_exact(kernel, split, factory)
    assert beside == [1]  # only the two-thread run went beside
    assert two.alpha == one.alpha
    np.testing.assert_array_equal(two.losses, one.losses)
    assert two.score == one.score
