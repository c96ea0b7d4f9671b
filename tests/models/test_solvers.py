"""models._cg, models._preconditioner, models._falkon: conjugate gradient, the FALKON
preconditioner and their interface, on small dense systems."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

from kernelmaps._linalg import cholesky_in_place
from kernelmaps.models._cg import (
    Preconditioner,
    conjugate_gradient,
    preconditioned_conjugate_gradient,
)
from kernelmaps.models._falkon import falkon_solve
from kernelmaps.models._preconditioner import (
    DeviceFalkonPreconditioner,
    FalkonPreconditioner,
)
from tests._helpers import spd_matrix


def centres_problem(n=2000, M=200, alpha=20.0, gamma=0.5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    C = X[rng.permutation(n)[:M]]
    K_nM, K_MM = rbf_kernel(X, C, gamma=gamma), rbf_kernel(C, gamma=gamma)
    return K_nM, K_MM, alpha


def test_conjugate_gradient_equals_a_direct_solve():
    H = spd_matrix(30, condition=1e3)
    rng = np.random.RandomState(1)
    b = rng.normal(size=(30, 3)) * np.array([1.0, 1e-3, 1e4])  # columns of any scale
    x, iterations, converged = conjugate_gradient(lambda V: H @ V, b, max_iter=500,
                                                  tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-8)
    assert converged and 0 < iterations < 500


def test_recomputing_the_true_residual_keeps_an_exact_cg_exact():
    H = spd_matrix(60, condition=1e4)
    b = np.random.RandomState(3).normal(size=(60, 2))
    applied = []

    def operator(V):
        applied.append(V.shape[1])
        return H @ V

    x, iterations, converged = conjugate_gradient(operator, b, max_iter=2000, tol=1e-10,
                                                  true_residual_every=5)
    assert converged
    np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-7)
    # Every 5th application carries [p, x] together: one pass, no extra one.
    assert len(applied) == iterations
    assert applied[4] == 4 and applied[3] == 2


def test_cg_stops_where_an_inexact_operator_stops_it_improving():
    # An operator with relative rounding noise (float32 products): the updated residual
    # keeps falling while the true one stalls near the noise; with the true residual
    # recomputed, CG stops there (not converged) instead of running to max_iter, and what
    # it returns is as good as the best it saw.
    H = spd_matrix(80, condition=1e3)
    b = np.random.RandomState(4).normal(size=(80, 1))
    noise = np.random.RandomState(5)

    def inexact(V):
        HV = H @ V
        return HV + 1e-6 * np.abs(H) @ np.abs(V) * noise.uniform(-1, 1, size=V.shape)

    x, iterations, converged = conjugate_gradient(inexact, b, max_iter=3000, tol=1e-14,
                                                  true_residual_every=10, attainable=1e-5)
    assert not converged and iterations < 3000
    relative = np.linalg.norm(H @ x - b) / np.linalg.norm(b)
    assert relative < 1e-3
    # Without the recomputation the reported residual passes 1e-14 while the true one
    # cannot: CG would call this converged.
    noise = np.random.RandomState(5)
    x_blind, _, blind = conjugate_gradient(inexact, b, max_iter=3000, tol=1e-14)
    assert blind and np.linalg.norm(H @ x_blind - b) / np.linalg.norm(b) > 1e-10


def test_falkon_warns_on_a_tol_below_the_attainable_residual_and_stops_there():
    from kernelmaps.models._falkon import ToleranceBelowPrecisionWarning

    K_nM, K_MM, alpha = centres_problem()
    rhs = K_nM.T @ np.ones((K_nM.shape[0], 1))

    def solve(tol, attainable):
        return falkon_solve(lambda V: K_nM.T @ (K_nM @ V), K_MM.copy(), alpha, rhs=rhs,
                            total_weight=K_nM.shape[0], max_iter=200, tol=tol,
                            attainable_residual=attainable)

    with pytest.warns(ToleranceBelowPrecisionWarning):
        low = solve(1e-12, 1e-5)
    floor = solve(1e-5, 1e-5)
    assert low.iterations == floor.iterations
    np.testing.assert_array_equal(low.coef, floor.coef)
    assert solve(1e-12, 0.0).iterations > floor.iterations


def test_conjugate_gradient_stops_each_column_at_its_tolerance():
    H = spd_matrix(40, condition=1e4)
    b = np.random.RandomState(2).normal(size=(40, 2))
    b[:, 1] = 0.0  # already solved: must stay exactly 0 while the other column iterates
    x, _, converged = conjugate_gradient(lambda V: H @ V, b, max_iter=1000,
                                         tol=1e-6)
    assert converged
    assert np.linalg.norm(H @ x[:, 0] - b[:, 0]) <= 1e-6 * np.linalg.norm(b[:, 0])
    np.testing.assert_array_equal(x[:, 1], 0.0)
    # A well-conditioned system converges in few iterations; the identity in one.
    _, one, _ = conjugate_gradient(lambda V: 3.0 * V, b[:, :1], max_iter=10, tol=1e-10)
    assert one == 1


def test_conjugate_gradient_reports_non_convergence():
    H = spd_matrix(50, condition=1e6)
    b = np.random.RandomState(3).normal(size=(50, 1))
    _, iterations, converged = conjugate_gradient(lambda V: H @ V, b, max_iter=3, tol=1e-12)
    assert iterations == 3 and not converged
    _, zero, converged = conjugate_gradient(lambda V: H @ V, np.zeros((50, 1)), max_iter=3,
                                            tol=1e-12)
    assert zero == 0 and converged


def test_cholesky_in_place_factors_singular_psd_matrices():
    rng = np.random.RandomState(0)
    low_rank = rng.normal(size=(20, 3))
    matrix = low_rank @ low_rank.T  # rank 3: plain Cholesky fails
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(matrix)
    factored, jitter = cholesky_in_place(matrix.copy(), 1e-14)
    assert jitter >= 1e-14  # grown from the jitter given, never below it
    R = np.triu(factored)  # the upper factor; the strict lower triangle keeps the matrix
    np.testing.assert_array_equal(np.tril(factored, -1), np.tril(matrix, -1))
    np.testing.assert_allclose(R.T @ R, matrix, atol=1e-6)
    # The jitter grows ×100 a bounded number of times (to 1e8 from 1e-14), so a matrix with
    # a large negative eigenvalue is refused with a pointer to the Mercer check.
    with pytest.raises(ValueError, match=r"not positive definite.*check_mercer"):
        cholesky_in_place(np.diag([1.0, -1e10]), 1e-14)


def test_preconditioner_is_exact_for_the_nystrom_approximation_of_the_operator():
    # B = T⁻¹A⁻¹ is built so that Bᵀ((n/M)·K_MM² + α·K_MM)B = (n/M)·I exactly.
    _, K_MM, alpha = centres_problem(M=60, alpha=5.0)
    n, M = 2000.0, K_MM.shape[0]
    preconditioner = FalkonPreconditioner(K_MM, alpha, n)
    B = preconditioner.apply(np.eye(M))
    H_approx = (n / M) * K_MM @ K_MM + alpha * K_MM
    np.testing.assert_allclose(B.T @ H_approx @ B, (n / M) * np.eye(M), atol=1e-6 * n / M)
    np.testing.assert_allclose(preconditioner.apply_transpose(np.eye(M)), B.T, atol=1e-10)


def test_preconditioned_operator_is_close_to_a_multiple_of_the_identity():
    K_nM, K_MM, alpha = centres_problem()
    n, M = K_nM.shape
    H = K_nM.T @ K_nM + alpha * K_MM
    B = FalkonPreconditioner(K_MM, alpha, float(n)).apply(np.eye(M))
    scaled = (M / n) * (B.T @ H @ B)
    spectrum = np.linalg.eigvalsh((scaled + scaled.T) / 2)
    assert spectrum.min() > 0.5 and spectrum.max() < 2.0  # ≈ (n/M)·I
    assert np.linalg.cond(H) > 1e8  # what CG would face without the preconditioner


def test_preconditioner_with_every_point_a_centre_is_exact():
    # M = n: K_nMᵀK_nM = K², so the preconditioned operator is the identity.
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    K = rbf_kernel(X, gamma=5.0)  # condition number ≈ 1e3
    alpha = 1.0
    B = FalkonPreconditioner(K, alpha, 40.0).apply(np.eye(40))
    np.testing.assert_allclose(B.T @ (K @ K + alpha * K) @ B, np.eye(40), atol=1e-9)


def test_falkon_solves_the_normal_equations():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 3))
    C = X[:40]
    KnM, KMM = rbf_kernel(X, C, gamma=0.5), rbf_kernel(C, gamma=0.5)
    Y = rng.normal(size=(500, 2))
    alpha = 0.3
    beta, iterations, *_ = falkon_solve(lambda V: KnM.T @ (KnM @ V), KMM, alpha, rhs=KnM.T @ Y,
                                    total_weight=500.0, max_iter=300, tol=1e-12)
    expected = np.linalg.solve(KnM.T @ KnM + alpha * KMM, KnM.T @ Y)
    np.testing.assert_allclose(beta, expected, rtol=1e-6, atol=1e-8)
    assert 0 < iterations < 300


def test_falkon_solves_weighted_normal_equations():
    K_nM, K_MM, _ = centres_problem(n=600, M=50)
    rng = np.random.RandomState(4)
    Y = rng.normal(size=(600, 2))
    w = rng.uniform(0.2, 3.0, size=600)
    alpha = 0.5
    beta, iterations, *_ = falkon_solve(lambda V: K_nM.T @ (w[:, None] * (K_nM @ V)), K_MM, alpha,
                                    rhs=K_nM.T @ (w[:, None] * Y), total_weight=w.sum(),
                                    max_iter=500, tol=1e-12)
    H = K_nM.T @ (w[:, None] * K_nM) + alpha * K_MM
    np.testing.assert_allclose(beta, np.linalg.solve(H, K_nM.T @ (w[:, None] * Y)),
                               rtol=1e-6, atol=1e-8)
    assert 0 < iterations < 500


def test_falkon_warns_when_max_iter_is_reached():
    K_nM, K_MM, _ = centres_problem(n=400, M=40)
    Y = np.random.RandomState(5).normal(size=(400, 1))
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        _, iterations, *_ = falkon_solve(lambda V: K_nM.T @ (K_nM @ V), K_MM, 1e-6,
                                     rhs=K_nM.T @ Y, total_weight=400.0, max_iter=2,
                                     tol=1e-14)
    assert iterations == 2


def test_converged_columns_leave_the_iteration():
    # An easy column (b an eigenvector: one step) and a hard one: after the first step the
    # operator sees the hard column only, and both solutions are right.
    H = spd_matrix(80, 1e4, seed=3)
    H = (H + H.T) / 2
    _, vectors = np.linalg.eigh(H)
    b = np.column_stack([np.random.RandomState(1).normal(size=80), vectors[:, -1]])
    widths = []

    def operator(V):
        widths.append(V.shape[1])
        return H @ V

    x, _, converged = conjugate_gradient(operator, b, max_iter=500, tol=1e-10)
    assert converged and widths[0] == 2 and set(widths[1:]) == {1}
    expected = np.linalg.solve(H, b)
    # CG to relative residual 1e-10: the error is at most κ·1e-10 of the solution.
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e4 * 1e-10 * np.abs(expected).max())


def test_preconditioned_cg_takes_any_object_implementing_the_interface():
    # A Jacobi split preconditioner B = D^{-1/2}, written against the Preconditioner
    # protocol only: CG on BᵀHB gives H⁻¹r.
    H = spd_matrix(30, 1e4, seed=3)
    r = np.random.RandomState(4).normal(size=(30, 2))

    class Jacobi:
        jitter = 0.0

        def __init__(self, H):
            self.scale = 1.0 / np.sqrt(np.diag(H))[:, None]

        def apply(self, V):
            return self.scale * V

        def apply_transpose(self, V):
            return self.scale * V

        def operator(self, matvec, alpha):
            return lambda V: self.scale * matvec(self.scale * V)

    preconditioner: Preconditioner = Jacobi(H)
    coef, _, converged = preconditioned_conjugate_gradient(
        preconditioner, lambda V: H @ V, 0.0, r, max_iter=500, tol=1e-12)
    assert converged
    np.testing.assert_allclose(coef, np.linalg.solve(H, r), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", [FalkonPreconditioner, DeviceFalkonPreconditioner])
def test_both_falkon_preconditioners_give_the_operator_BtHB(cls):
    # The one FALKON operator (_FalkonFactors.operator) against BᵀHB composed from B's
    # columns, for the host buffer and the device twin (NumPy here: inverse factors).
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    C = X[:20]
    K_nM, K_MM = rbf_kernel(X, C, gamma=0.5), rbf_kernel(C, gamma=0.5)
    alpha = 1e-2
    preconditioner = cls(K_MM, alpha, 200.0)
    B = preconditioner.apply(np.eye(20))
    np.testing.assert_allclose(preconditioner.apply_transpose(np.eye(20)), B.T, atol=1e-10)
    H = K_nM.T @ K_nM + alpha * (K_MM + preconditioner.jitter * np.eye(20))
    V = rng.normal(size=(20, 3))
    np.testing.assert_allclose(preconditioner.operator(lambda W: K_nM.T @ (K_nM @ W), alpha)(V),
                               B.T @ H @ B @ V, rtol=1e-7, atol=1e-7 * np.abs(B.T @ H @ B).max())
