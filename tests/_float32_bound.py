r"""How far float32 Nyström kernel ridge may be from the float64 solution: an error bound.

A float32 fit computes its kernel values in float32 and solves, in float64 arithmetic, the
normal equations of those rounded values. So its predictions differ from the float64
closed form :math:`f = K_* H^{-1} K^\top W Y`, :math:`H = K^\top W K + \alpha K_{MM}`, by

* the effect of the rounding :math:`E = \tilde K - K` of the kernel values (to first order,
  :math:`|\delta f_x| \le |E_x||\beta| + |r|^\top W|E||g_x| + |WKg_x|^\top|E||\beta| +
  \alpha|g_x|^\top|E_{MM}||\beta|` with :math:`g_x = H^{-1}k_x` and :math:`r = Y - K\beta`:
  the componentwise condition number of the prediction times the actual rounding);
* stopping CG at a relative residual ``tol`` of the preconditioned system
  :math:`P = B^\top \tilde H B`: the unknown :math:`\gamma` is off by at most
  :math:`\text{tol}\,\|B^\top \tilde r\|/\lambda_{\min}(P)`, so :math:`f_x` by
  :math:`\|(K_* B)_x\|` times that;
* the float64 solves, :math:`\kappa(H)\,\varepsilon_{64}\,\|f\|_\infty` (normwise forward error).

The rounding :math:`E` is measured (float32 kernel of the float32-rounded data against the
float64 kernel): it is the input perturbation of the solver, not its output.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def _solve(H, B):
    """``H⁻¹B``; least squares where ``H`` is singular to working precision (an RBF kernel at
    γ = 1e-9 on unit-scale data: LU's pivot is exactly zero on some BLAS kernels, e.g.
    OpenBLAS's Haswell family). The bound's ``solves`` term, κ(H)·ε₆₄·‖f‖, is then infinite or
    huge: the bound holds and says nothing, as the callers expect at such parameters."""
    try:
        return np.linalg.solve(H, B)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, B, rcond=None)[0]


def float32_prediction_bound(kernel, X, centres, X_test, Y, alpha, *, tol, weights=None,
                             dtype=np.float32):
    """``(f, bound)``: float64 closed-form predictions at ``X_test`` (n_test, t) and the bound
    on |FALKON − f| per prediction for a fit on ``dtype`` data. ``centres`` are the fitted
    centres. For float64 the rounding is taken as one ulp of every kernel value (|E| =
    eps64·|K|: BLAS may round a value either way in another block or memory address)."""
    X, X_test = np.asarray(X, np.float64), np.asarray(X_test, np.float64)
    C = np.asarray(centres, np.float64)
    Y = np.asarray(Y, np.float64).reshape(X.shape[0], -1)
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, np.float64)
    f32 = np.float32

    def values_and_rounding(A, B):
        exact = kernel(A, B).astype(np.float64)
        if dtype == np.float64:
            return exact, np.finfo(np.float64).eps * np.abs(exact)
        rounded = kernel(A.astype(f32), B.astype(f32)).astype(np.float64)
        return exact, np.abs(rounded - exact)

    K, E = values_and_rounding(X, C)
    K_MM, E_MM = values_and_rounding(C, C)
    K_test, E_test = values_and_rounding(X_test, C)
    M = C.shape[0]
    # FALKON factorises K_MM plus a jitter (M·eps64·mean diagonal): part of its H.
    K_MM = K_MM + M * np.finfo(np.float64).eps * max(np.trace(K_MM) / M, 1e-300) * np.eye(M)
    H = K.T @ (w[:, None] * K) + alpha * K_MM
    beta = _solve(H, K.T @ (w[:, None] * Y))
    f = K_test @ beta
    G = _solve(H, K_test.T)  # column x: g_x = H⁻¹ k_x
    residual = Y - K @ beta
    abs_beta = np.abs(beta)
    rounding = (E_test @ abs_beta
                + (np.abs(G).T @ (E.T @ (w[:, None] * np.abs(residual))))
                + np.abs(w[:, None] * (K @ G)).T @ (E @ abs_beta)
                + alpha * np.abs(G).T @ (E_MM @ abs_beta))
    # CG stopped at ‖r‖ ≤ tol·‖Bᵀ rhs‖ on P = BᵀHB, B = T⁻¹A⁻¹ (the FALKON factors).
    T = np.linalg.cholesky(K_MM).T
    A = np.linalg.cholesky(T @ T.T + alpha * M / w.sum() * np.eye(M)).T
    B = scipy.linalg.solve_triangular(T, scipy.linalg.solve_triangular(A, np.eye(M)))
    P = B.T @ H @ B
    lam_min = np.linalg.eigvalsh((P + P.T) / 2)[0]
    gamma_error = tol * np.linalg.norm(B.T @ (K.T @ (w[:, None] * Y)), axis=0) / lam_min
    stopping = np.linalg.norm(K_test @ B, axis=1)[:, None] * gamma_error[None, :]
    solves = np.linalg.cond(H) * np.finfo(np.float64).eps * np.abs(f).max()
    return f, rounding + stopping + solves
