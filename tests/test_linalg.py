"""kernelmaps._linalg: in-place Cholesky, SPD solves with a fallback, lauum, inverse roots;
and the one-buffer FALKON preconditioner built from them."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from kernelmaps._linalg import (
    SINGULAR_WARNING,
    cholesky_in_place,
    inverse_sqrt_psd,
    lower_times_upper_in_place,
    psd_factor,
    psd_factor_solve,
    psd_spectrum,
    restore_symmetric,
    solve_psd,
)
from kernelmaps.models import KernelRidge, _ridge_base
from kernelmaps.models._preconditioner import FalkonPreconditioner
from tests._helpers import peak_bytes, spd_matrix

EPS = np.finfo(np.float64).eps


def test_solve_psd_in_place_solves_and_restores():
    A = spd_matrix(300, 1e6)
    A = (A + A.T) / 2
    B = np.random.RandomState(1).normal(size=(300, 3))
    original = A.copy()
    x = solve_psd(A, B, overwrite=True)
    # Normwise forward error of a backward-stable solve: a few κ·eps of ‖x‖.
    expected = np.linalg.solve(original, B)
    assert np.abs(x - expected).max() <= 300 * 1e6 * EPS * np.abs(expected).max()
    np.testing.assert_array_equal(np.tril(A, -1), np.tril(original, -1))  # not touched
    restore_symmetric(A, original.diagonal().copy())
    np.testing.assert_array_equal(A, original)  # a copy of what was there: exact


def test_solve_psd_falls_back_to_least_squares_with_the_one_warning():
    rng = np.random.RandomState(0)
    F = rng.normal(size=(50, 5))
    A = F @ F.T  # rank 5: Cholesky fails
    b = A @ rng.normal(size=(50, 1))  # consistent: least squares solves it
    with pytest.warns(UserWarning, match="Singular matrix in solving dual problem"):
        x = solve_psd(A.copy(), b, overwrite=True)
    assert np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b)
    assert "least-squares" in SINGULAR_WARNING


def test_solve_psd_runs_a_small_system_on_one_blas_thread_and_a_large_one_on_the_callers(
        monkeypatch):
    # Woken BLAS threads spin on the cores after the call (blas_for_work): a small system's
    # Cholesky runs on one, as FeatureRidge's D = 1,000 solve (m³/3 < 2³⁰ operations does).
    from threadpoolctl import threadpool_info, threadpool_limits

    from kernelmaps import _linalg
    from kernelmaps._engine import FLOPS_FOR_BLAS_THREADS

    seen = []
    factor = _linalg.psd_factor

    def recording(system, **kwargs):
        seen.append(max(pool["num_threads"] for pool in threadpool_info()
                        if pool["user_api"] == "blas"))
        return factor(system, **kwargs)

    monkeypatch.setattr(_linalg, "psd_factor", recording)
    large = int(np.ceil((3 * FLOPS_FOR_BLAS_THREADS) ** (1 / 3)))  # m³/3 ≥ the threshold
    with threadpool_limits(2, user_api="blas"):
        solve_psd(np.eye(50), np.ones((50, 1)))
        solve_psd(np.eye(large), np.ones(large))
    assert seen == [1, 2]


def test_psd_factor_solves_many_right_hand_sides_or_refuses_an_indefinite_matrix():
    A = spd_matrix(120, 1e4)
    A = (A + A.T) / 2
    rng = np.random.RandomState(2)
    factor = psd_factor(A)  # a copy: A stays as it was
    for B in (rng.normal(size=(120, 2)), rng.normal(size=120)):
        np.testing.assert_allclose(psd_factor_solve(factor, B), np.linalg.solve(A, B),
                                   rtol=0, atol=120 * 1e4 * EPS * 1e2)
    indefinite = np.diag([1.0, 2.0, -1e-3])
    original = indefinite.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refusing is the caller's: no warning here
        assert psd_factor(indefinite, overwrite=True) is None
    np.testing.assert_array_equal(indefinite, original)  # restored for the caller


def test_cholesky_in_place_keeps_the_lower_triangle_and_grows_the_jitter():
    rng = np.random.RandomState(0)
    F = rng.normal(size=(200, 4))
    K = F @ F.T  # rank 4
    original = K.copy()
    R, jitter = cholesky_in_place(K, 0.0, floor=1e-10)
    assert R is K and jitter >= 1e-10
    np.testing.assert_array_equal(np.tril(K, -1), np.tril(original, -1))
    upper = np.triu(R)
    # Backward error of Cholesky: |RᵀR − A| ≤ (n+1)·eps·|Rᵀ||R| entrywise.
    bound = 201 * EPS * (np.abs(upper).T @ np.abs(upper))
    assert np.all(np.abs(upper.T @ upper - (original + jitter * np.eye(200))) <= bound)
    with pytest.raises(ValueError, match="square C-contiguous float64"):
        cholesky_in_place(np.eye(3, dtype=np.float32), 0.0)


def test_lower_times_upper_in_place_is_r_r_transpose():
    R = np.triu(np.random.RandomState(0).uniform(0.5, 1.5, size=(120, 120)))
    buffer = R + np.tril(np.full((120, 120), 7.0), -1)  # lower triangle must survive
    lower_times_upper_in_place(buffer)
    expected = R @ R.T
    # Each entry is a dot product of ≤ 120 positive terms: ≤ 120·eps of its value.
    np.testing.assert_allclose(np.triu(buffer), np.triu(expected), rtol=120 * EPS, atol=0)
    assert np.all(np.tril(buffer, -1) == np.tril(np.full((120, 120), 7.0), -1))


def test_cholesky_in_place_grows_the_jitter_of_a_callers_shifted_matrix():
    # The one jittered potrf loop with a caller's own shifted/restore (FALKON's TTᵀ + sI):
    # eigenvalues 3 and -1 need a shift above 1, reached as 1e-3 → 0.1 → 10.
    source = np.array([[1.0, 2.0], [2.0, 1.0]])
    buffer = np.zeros((2, 2))
    calls: list = []

    def shifted(jitter):
        calls.append(jitter)
        buffer[...] = source + jitter * np.eye(2)

    def restore():
        calls.append("restore")

    R, used = cholesky_in_place(buffer, 1e-3, shifted=shifted, restore=restore)
    assert calls == [1e-3, "restore", pytest.approx(0.1), "restore", pytest.approx(10.0)]
    assert used == pytest.approx(10.0)
    np.testing.assert_allclose(np.triu(R).T @ np.triu(R), source + used * np.eye(2))
    with pytest.raises(TypeError, match="together"):
        cholesky_in_place(buffer, 0.0, shifted=shifted)


def test_inverse_sqrt_psd():
    A = spd_matrix(40, 1e3)
    A = (A + A.T) / 2
    root = inverse_sqrt_psd(A, 1e-3)
    shifted = A + 1e-3 * np.eye(40)
    # (A + sI)^{-1/2} (A + sI) (A + sI)^{-1/2} = I up to κ·eps.
    np.testing.assert_allclose(root @ shifted @ root, np.eye(40), atol=40 * 1e3 * EPS * 10)


def test_inverse_sqrt_psd_shift_keeps_null_directions_pseudo_inverse_drops_them():
    # A rank-2 PSD matrix (a duplicated row of a Gram matrix): the regularised root keeps
    # the null direction (scaled by s^-1/2), the pseudo-inverse root drops it.
    Z = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    A = Z @ Z.T
    null = np.array([1.0, 0.0, -1.0]) / np.sqrt(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither regime warns on a PSD matrix
        regularised = inverse_sqrt_psd(A, 1e-2)
        pseudo = inverse_sqrt_psd(A)
    np.testing.assert_allclose(regularised @ null, null / np.sqrt(1e-2), rtol=1e-12)
    np.testing.assert_allclose(pseudo @ null, 0.0, atol=1e-12)
    # On the range, pseudo⁻¹ root squared is A⁺ (the Moore-Penrose inverse).
    np.testing.assert_allclose(pseudo @ pseudo, np.linalg.pinv(A), atol=1e-12)


def test_inverse_sqrt_psd_warns_with_the_callers_category_on_indefinite_matrices():
    class Category(UserWarning):
        pass

    A = np.diag([1.0, -0.5])
    with pytest.warns(Category, match="who: the thing is not positive semi-definite"):
        root = inverse_sqrt_psd(A, name="who", what="thing", warning=Category)
    np.testing.assert_allclose(root, np.diag([1.0, 0.0]))  # projected onto the PSD cone


def test_one_buffer_preconditioner_equals_the_explicit_factors_and_needs_one_matrix():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 3))
    K_MM = rbf_kernel(X, gamma=0.5)
    M, alpha, n = 400, 0.1, 5000.0
    T = np.linalg.cholesky(K_MM + 4 * M * EPS * np.eye(M)).T
    A = np.linalg.cholesky(T @ T.T + alpha * M / n * np.eye(M)).T
    buffer = K_MM.copy()
    preconditioner, peak = peak_bytes(
        lambda: FalkonPreconditioner(buffer, alpha, n, overwrite=True))
    assert preconditioner.buffer is buffer
    # In place: beyond the buffer only vectors and blocks of rows, not another M × M array.
    assert peak < 0.5 * buffer.nbytes
    V = rng.normal(size=(M, 2))
    B_V = np.linalg.solve(T, np.linalg.solve(A, V))
    Bt_V = np.linalg.solve(A.T, np.linalg.solve(T.T, V))
    # The factors differ from numpy's by the jitter (≤ 1e-13 relative here) and rounding;
    # B amplifies both by κ(K_MM + jitter) at most.
    kappa = np.linalg.cond(K_MM + 4 * M * EPS * np.eye(M))
    tolerance = 1e3 * kappa * EPS
    np.testing.assert_allclose(preconditioner.apply(V), B_V, rtol=0,
                               atol=tolerance * np.abs(B_V).max())
    np.testing.assert_allclose(preconditioner.apply_transpose(V), Bt_V, rtol=0,
                               atol=tolerance * np.abs(Bt_V).max())


def test_exact_ridge_factorises_in_place_for_each_alpha(monkeypatch):
    # Several alphas: one n × n matrix (the kernel's), restored between the factorisations.
    # (The degeneracy check, which needs its own n × n temporary, is left out of the count.)
    monkeypatch.setattr(_ridge_base, "warn_if_degenerate", lambda *args, **kwargs: None)
    rng = np.random.RandomState(0)
    X, Y = rng.normal(size=(800, 3)), rng.normal(size=(800, 3))
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=np.array([0.1, 1.0, 10.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, peak = peak_bytes(lambda: model.fit(X, Y))
    assert peak < 1.5 * 800 * 800 * 8  # a copy per alpha was 2 n × n arrays at once
    K = rbf_kernel(X, gamma=0.3)
    for j, a in enumerate([0.1, 1.0, 10.0]):
        expected = np.linalg.solve(K + a * np.eye(800), Y[:, j])
        kappa = np.linalg.cond(K + a * np.eye(800))
        assert np.abs(model.dual_coef_[:, j] - expected).max() <= \
            800 * kappa * EPS * np.abs(expected).max()


def test_psd_spectrum_drops_the_null_space_and_reconstructs():
    # A doubly centred rank-5 Gram matrix: the constant vector and 34 more directions are
    # numerically zero (±1e-15, some negative) and must go; the rest rebuild it.
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(40, 5))
    Z -= Z.mean(axis=0)
    G = Z @ Z.T
    lam, U = psd_spectrum(G.copy(), overwrite=True)
    assert lam.shape == (5,) and U.shape == (40, 5) and np.all(lam > 0)
    assert np.all(np.diff(lam) >= 0)
    # Reconstruction through eigh: ~n · eps of ‖G‖ (Golub & Van Loan 8.1.2).
    scale = np.abs(G).max()
    assert np.abs((U * lam) @ U.T - G).max() <= 40 * 64 * EPS * scale
    assert np.abs(U.T @ np.ones(40)).max() <= 40 * 64 * EPS * np.sqrt(40)


def test_psd_spectrum_overwrites_a_c_ordered_matrix_in_place():
    # SciPy copies a C-ordered array for LAPACK whatever overwrite_a says; psd_spectrum hands
    # it the Fortran-ordered transpose, the same symmetric matrix: n² doubles fewer at peak.
    import tracemalloc

    n = 400
    A = np.random.RandomState(0).normal(size=(n, n))
    A = A @ A.T
    A = (A + A.T) / 2  # exactly symmetric: both orders are the same matrix, bit for bit
    expected_lam, expected_U = psd_spectrum(A, driver="evr")  # on a copy
    B = A.copy()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    lam, U = psd_spectrum(B, overwrite=True, driver="evr")
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert peak < 1.5 * 8 * n * n  # the eigenvectors (n²) and the workspace, no copy of B
    np.testing.assert_array_equal(lam, expected_lam)
    np.testing.assert_array_equal(np.abs(U), np.abs(expected_U))


def test_potrf_in_place_is_scipys_dpotrf_without_the_gil():
    # The same LAPACK routine as SciPy's f2py wrapper, bit for bit, but the GIL released:
    # compare's joblib threads keep feeding the worker processes while the baseline's
    # 15,000² factorisation runs (SciPy's wrapper held it for the whole call).
    import threading

    from scipy.linalg import lapack

    from kernelmaps._linalg import potrf_in_place

    n = 2500
    A = np.random.RandomState(0).normal(size=(n, n))
    A = A @ A.T + n * np.eye(n)
    expected = A.copy()
    lapack.dpotrf(expected.T, lower=1, clean=0, overwrite_a=1)
    ours = A.copy()
    assert potrf_in_place(ours) == 0
    np.testing.assert_array_equal(ours, expected)
    not_pd = -np.eye(4)
    assert potrf_in_place(not_pd) > 0  # LAPACK's info: the order of the failing minor

    # While it runs in a thread, this thread runs Python: with the GIL held it could not
    # (sleep would wait for the GIL until the factorisation ends: at most one more turn).
    turns = []
    for _ in range(4):  # a bigger matrix for the timing, refactorised a few times
        B = A.copy()
        worker = threading.Thread(target=potrf_in_place, args=(B,))
        worker.start()
        count = 0
        while worker.is_alive():
            count += 1
            time.sleep(0.0005)
        worker.join()
        turns.append(count)
    assert max(turns) >= 5, turns
