r"""Rounding-error bounds of an estimator's outputs, for comparing two runs of it.

The NumPy path and a device path (PyTorch, ``array_api_strict``) run the same algorithm in
one precision with different roundings (other BLAS kernels, other summation orders). Each
run is within a first-order bound :math:`B` of the exact result on the same inputs, so the
two agree to :math:`2B`. :func:`error_bound` returns :math:`B` for each output, element by
element, for float32 or float64 runs, computed from the data and from the estimator fitted
in float64 on the same (rounded) inputs — never a number one machine gave.

Every bound is "condition × backward error" (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., 2002, §1.6), with :math:`\epsilon` the run's machine epsilon and
these sources:

* **kernel values** carry the error their kernel declares, :math:`|\hat K - K| \le E`
  entrywise (:meth:`kernelmaps.kernels.Kernel.rounding_error`);
* **a float32 product** of length :math:`m` errs by at most :math:`m\epsilon|A||B|`, in any
  summation order (Higham eq. 3.5), and a rounded operand by :math:`\epsilon|A|`;
* **a map of the input** (the random-feature and sketch maps: projections of ``x`` and
  element-wise functions) is computed by inner products of length at most :math:`m`, each
  componentwise backward stable, so it equals the exact map at an input perturbed by at
  most :math:`m\epsilon|x_i|` per component and errs by at most :math:`m\epsilon\sum_i
  |\partial z/\partial x_i|\,|x_i|` (Skeel's componentwise condition, measured by central
  differences of the float64 map);
* **a solve** is differentiated exactly, through its adjoint: for an output
  :math:`o = g^\top A^{-1}r`, :math:`\delta o = w^\top(\delta r - \delta A\,A^{-1}r)` with
  :math:`w = A^{-\top}g` computed from the data, and each entry of :math:`\delta A,
  \delta r` bounded as above — the first-order bound, as tight as an entrywise one can be;
* **eigen- and singular vectors** move by the first-order formula with every gap
  :math:`1/(\lambda_i - \lambda_j)` (Stewart & Sun, *Matrix Perturbation Theory*, 1990,
  §V.2), the inverse square root of a matrix by its Daleckii–Krein divided differences,
  and CCA's whitened problem by Davis–Kahan–Wedin in the whitened geometry.

The bounds are first order: each drops terms of order :math:`(\epsilon\kappa)^2`, below
1e-6 of the bound at the conditions of these tests.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

import kernelmaps as km
from kernelmaps._linalg import inverse_sqrt_psd
from kernelmaps._ridge import encode_labels
from kernelmaps.kernels import IndefiniteKernelWarning
from kernelmaps.kernels._rounding import default_error
from kernelmaps.models import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelCCA,
    KernelFisherDiscriminant,
    KernelMeanDistance,
    KernelRidge,
    KernelRidgeClassifier,
)
from kernelmaps.models._preconditioner import FalkonPreconditioner
from kernelmaps.models.cca import _centred, _regularised_whitening

#: The dtype of the runs being bounded, and of their small systems (set by
#: :func:`error_bound`).
_DTYPE: ContextVar[type] = ContextVar("dtype", default=np.float32)
_SOLVE_DTYPE: ContextVar[type] = ContextVar("solve_dtype", default=np.float64)
#: Central-difference step of the componentwise condition (relative to each |x_i|).
_STEP = 1e-6
#: Passes of a structured projection whose roundings compound (SORF: three blocks HD).
_PASSES = 3

__all__ = ["error_bound", "kernel_values_bound", "nystroem_precomputed_bound"]


def _eps() -> float:
    return float(np.finfo(_DTYPE.get()).eps)


def _eps_solve() -> float:
    """The models' small systems (solves, eigen- and singular value decompositions, scatter
    matrices) run in float64 whatever the data's dtype (float32 on a device without
    float64): their backward errors, a few ε of the matrix (LAPACK Users' Guide §4), are
    added where each is formed."""
    return float(np.finfo(_SOLVE_DTYPE.get()).eps)


def kernel_error(kernel: Any, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """The declared bound E on the run's values of ``kernel(X, Y)`` (check_mercer's default
    √ε·max|K| for a kernel that declares none)."""
    X_run, Y_run = X.astype(_DTYPE.get()), Y.astype(_DTYPE.get())
    values = kernel.evaluate(X_run, Y_run)
    bound = kernel.rounding_error(X_run, Y_run, values)
    return default_error(values) if bound is None else bound


def kernel_values_bound(kernel: Any, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """:func:`kernel_error` for runs in the dtype of ``X``."""
    token = _DTYPE.set(np.dtype(X.dtype).type)
    try:
        return kernel_error(kernel, X, Y)
    finally:
        _DTYPE.reset(token)


def _kernel64(kernel: Any, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return np.asarray(kernel.evaluate(X.astype(np.float64), Y.astype(np.float64)))


def _product_error(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Rounding of the run's product A @ B (operands rounded to its dtype first)."""
    return (A.shape[1] + 2) * _eps() * (np.abs(A) @ np.abs(B))


# ----------------------------------------------------------------------------- maps
def componentwise_condition(function: Any, X: np.ndarray) -> np.ndarray:
    r""":math:`\sum_i |\partial z_j/\partial x_i|\,|x_i|` per output, by central differences."""
    total = 0.0
    for i in range(X.shape[1]):
        up, down = X.copy(), X.copy()
        up[:, i] *= 1.0 + _STEP
        down[:, i] *= 1.0 - _STEP
        total = total + np.abs(function(up) - function(down)) / (2.0 * _STEP)
    return total


def _projection_map_bound(estimator: Any, X: np.ndarray) -> np.ndarray:
    # The longest float32 sum of any output: the (padded) number of features or of output
    # components, over at most _PASSES compounding passes; plus a few ε of the output's
    # scale for the offsets and the element-wise functions.
    padded = 1 << max(0, int(X.shape[1] - 1).bit_length())
    m = _PASSES * max(padded, int(getattr(estimator, "n_components", 0) or 0))
    values = estimator.transform(X)
    return (m + 2) * _eps() * componentwise_condition(estimator.transform, X) \
        + 8 * _eps() * float(np.abs(values).max())


def _normalization_sensitivity(estimator: Any, K_LL: np.ndarray, k_new: np.ndarray,
                               E_LL: np.ndarray) -> np.ndarray:
    r""":math:`\sum_{k \le l} |\partial z(x)/\partial K_{kl}|\,E_{kl}`: the first-order
    effect on the features of every landmark kernel value moving within its bound — the
    tight entrywise bound. The derivatives are central differences of the library's own
    ``inverse_sqrt_psd`` in float64 (K_LL and K_LL ± h(e_ke_lᵀ + e_le_kᵀ)), so they follow
    whatever it does (the eigenvalue floor and cut, the eigen basis' signs)."""
    M = len(K_LL)
    h = 1e-7 * float(np.abs(K_LL).max())
    total = np.zeros((k_new.shape[0], estimator.normalization_.shape[0]))
    for k in range(M):
        for j in range(k, M):
            step = np.zeros_like(K_LL)
            step[k, j] = step[j, k] = h
            up = inverse_sqrt_psd(K_LL + step, basis=estimator.basis,
                                  eigen_tol=estimator.eigen_tol,
                                  warning=IndefiniteKernelWarning)
            down = inverse_sqrt_psd(K_LL - step, basis=estimator.basis,
                                    eigen_tol=estimator.eigen_tol,
                                    warning=IndefiniteKernelWarning)
            total += np.abs(k_new @ (up - down).T) / (2 * h) * max(E_LL[k, j], E_LL[j, k])
    return total


def _nystroem_bound(estimator: Any, X: np.ndarray) -> np.ndarray:
    # z = k(x, L) Nᵀ: the new kernel values' errors through N, N's error from K_LL's, and
    # the float32 product of length M.
    kernel, landmarks, N = estimator.kernel_, estimator.components_, estimator.normalization_
    k_new = _kernel64(kernel, X, landmarks)
    K_LL = _kernel64(kernel, landmarks, landmarks)
    E_LL = kernel_error(kernel, landmarks, landmarks) \
        + len(K_LL) * _eps_solve() * np.linalg.norm(K_LL, 2)  # eigh's backward error
    from_N = _normalization_sensitivity(estimator, K_LL, k_new, E_LL)
    return (kernel_error(kernel, X, landmarks) @ np.abs(N).T + from_N
            + _product_error(k_new, N.T))


def nystroem_precomputed_bound(estimator: Any, gram: np.ndarray, rows: np.ndarray, *,
                               dtype: type = np.float32) -> np.ndarray:
    """:func:`_nystroem_bound` for ``kernel="precomputed"``: the given values are exact (both
    runs see the same), so only N's float64 eigendecomposition and the run's product of
    length M round. ``gram``: the training kernel matrix; ``rows``: the kernel values of
    the points transformed, against the training points."""
    token = _DTYPE.set(dtype)
    try:
        columns = np.asarray(estimator.component_indices_)
        K_LL, k_new = gram[columns][:, columns], rows[:, columns]
        E_LL = np.full(K_LL.shape, len(K_LL) * _eps_solve() * np.linalg.norm(K_LL, 2))
        return _normalization_sensitivity(estimator, K_LL, k_new, E_LL) \
            + _product_error(k_new, estimator.normalization_.T)
    finally:
        _DTYPE.reset(token)


# ----------------------------------------------------------------------------- ridge
def _ridge_bound(model: KernelRidge, X: np.ndarray, X_new: np.ndarray, y: np.ndarray,
                 weights: np.ndarray) -> np.ndarray:
    kernel, coef = model.kernel_, np.asarray(model.dual_coef_)
    beta = coef.reshape(coef.shape[0], -1)
    centres = X if model.solver_ == "exact" else np.asarray(model.X_fit_)
    K_new = _kernel64(kernel, X_new, centres)
    # The prediction K(X_new, C) β in float32.
    bound = kernel_error(kernel, X_new, centres) @ np.abs(beta) + _product_error(K_new, beta)
    if model.solver_ == "exact":
        # c = D c', (DKD + αI)c' = Dy with D = diag(√w): δp = −vᵀ(DΔD)c' with the adjoint
        # v = (DKD + αI)⁻¹Dk(x), one α per column; and Cholesky's backward error,
        # (n + 2)ε|R|ᵀ|R| <= (n + 2)ε√(a_ii a_jj) on A = DKD + αI.
        alphas = np.broadcast_to(np.atleast_1d(np.asarray(model.alpha, float)),
                                 (beta.shape[1],))
        root_w = np.sqrt(weights)
        K = _kernel64(kernel, X, X)
        E = kernel_error(kernel, X, X) * np.outer(root_w, root_w)
        system = K * np.outer(root_w, root_w)
        for t, alpha in enumerate(alphas):
            A = system + alpha * np.eye(len(K))
            E_solve = E + (len(K) + 2) * _eps_solve() * np.sqrt(np.outer(np.diag(A),
                                                                         np.diag(A)))
            V = scipy.linalg.solve(A, root_w[:, None] * K_new.T, assume_a="pos")
            scaled = np.abs(beta[:, t]) / root_w  # |c'|
            bound[:, t] += np.abs(V).T @ (E_solve @ scaled)
    else:
        bound += _falkon_bound(model, X, K_new, y.reshape(len(y), -1), beta, weights)
    return bound[:, 0] if coef.ndim == 1 else bound


def _falkon_bound(model: KernelRidge, X: np.ndarray, K_new: np.ndarray, Y: np.ndarray,
                  beta: np.ndarray, weights: np.ndarray) -> np.ndarray:
    # Hβ = r, H = KᵀSK + αK_MM, r = KᵀSY (S the sample weights), from the run's kernel values
    # and products. With w = H⁻¹k(x): δp = wᵀ(δr − δHβ), δr = ΔᵀSY, δHβ = KᵀSΔβ + ΔᵀSKβ
    # + αΔ_MMβ, so
    #   |δp| <= (|SY|ᵀE)|w| + |SKw|ᵀE|β| + |SKβ|ᵀE|w| + α|w|ᵀE_MM|β|
    # plus the float32 products: each CG step's K_bᵀ(K_b V) (n + M + 2)ε|K|ᵀ|K||V|, which
    # accumulate in the residual once per iteration (Greenbaum, SIAM J. Matrix Anal. Appl.
    # 18, 1997), and r's (n + 1)ε|K|ᵀ|Y|; and CG's stop, ‖Bᵀ(r − Hβ)‖ <= tol‖Bᵀr‖, which
    # moves p by at most ‖B⁻¹w‖·tol‖Bᵀr‖ (B⁻¹ = AT).
    kernel, centres, alpha = model.kernel_, np.asarray(model.X_fit_), float(model.alpha)
    K, E = _kernel64(kernel, X, centres), kernel_error(kernel, X, centres)
    K_MM, E_MM = _kernel64(kernel, centres, centres), kernel_error(kernel, centres, centres)
    n, M = K.shape
    S = weights[:, None]
    H = K.T @ (S * K) + alpha * K_MM
    W = scipy.linalg.solve(H, K_new.T, assume_a="sym")  # (M, n_new)
    preconditioner = FalkonPreconditioner(K_MM, alpha, float(weights.sum()))
    B = preconditioner.apply(np.eye(M))  # B = T⁻¹A⁻¹, M × M
    B_inverse_W = np.linalg.solve(B, W)
    out = np.zeros((K_new.shape[0], Y.shape[1]))
    for t in range(Y.shape[1]):
        b, y = np.abs(beta[:, t]), np.abs(weights * Y[:, t])
        values = ((y @ E) @ np.abs(W) + (E @ b) @ np.abs(S * (K @ W))
                  + np.abs(weights * (K @ beta[:, t])) @ E @ np.abs(W)
                  + alpha * (E_MM @ b) @ np.abs(W))
        eps = _eps()
        products = model.n_iter_ * (n + M + 2) * eps * (S[:, 0] * (np.abs(K) @ b)) \
            @ (np.abs(K) @ np.abs(W)) + (n + 1) * eps * (y @ np.abs(K)) @ np.abs(W)
        rhs = preconditioner.apply_transpose(K.T @ (weights * Y[:, t]))
        stop = np.linalg.norm(B_inverse_W, axis=0) * model.tol * np.linalg.norm(rhs)
        out[:, t] = values + products + stop
    return out


def _map_bound(feature_map: Any, X: np.ndarray) -> np.ndarray:
    """The bound on a fitted map's features of ``X`` run in the run's dtype."""
    if isinstance(feature_map, km.Nystroem):
        return _nystroem_bound(feature_map, X)
    return np.broadcast_to(_projection_map_bound(feature_map, X),
                           (len(X), feature_map.transform(X[:1]).shape[1]))


def _feature_ridge_bound(model: Any, X: np.ndarray, X_new: np.ndarray, Y: np.ndarray,
                         weights: np.ndarray) -> np.ndarray:
    # With the intercept as a feature, Z̃ = [z(X), 1] and θ = [w; b] solve
    # Hθ = Z̃ᵀSY, H = Z̃ᵀSZ̃ + αĨ (Ĩ = I but 0 for b), and p = z̃(x)ᵀθ. The features are made
    # in the run's dtype (error E on training rows, E_new on new ones); everything after is
    # float64 on the host. With the adjoint v = H⁻¹z̃(x) and the residual r = Y − Z̃θ:
    #   |δp| <= E_new|w| + |v|ᵀ(Eᵀ|Sr|) + |SZ̃v|ᵀE|w|
    # plus the float64 normal equations ((n + 2)ε₆₄|Z̃|ᵀS|Z̃||θ| and (n + 2)ε₆₄|Z̃|ᵀS|Y|),
    # Cholesky's backward error ((P + 2)ε₆₄√(h_ii h_jj)) and the prediction's product.
    feature_map = model.feature_map_
    Z, Z_new = feature_map.transform(X), feature_map.transform(X_new)
    Z = np.column_stack([np.asarray(Z, np.float64), np.ones(len(X))])
    Z_new = np.column_stack([np.asarray(Z_new, np.float64), np.ones(len(X_new))])
    D = Z.shape[1] - 1
    E = np.column_stack([_map_bound(feature_map, X), np.zeros(len(X))])
    E_new = _map_bound(feature_map, X_new)
    coef = np.asarray(model.coef_, np.float64).reshape(-1, D)  # (t, D)
    theta = np.vstack([coef.T, np.atleast_1d(np.asarray(model.intercept_, np.float64))])
    penalty = np.full(D + 1, float(model.alpha))
    penalty[D] = 0.0 if model.fit_intercept else float(model.alpha)
    H = Z.T @ (weights[:, None] * Z) + np.diag(penalty)
    V = np.linalg.solve(H, Z_new.T)  # (D + 1, n_new)
    residual = np.abs(weights[:, None] * (Y - Z @ theta))  # (n, t)
    eps64 = float(np.finfo(np.float64).eps)
    absZ = np.abs(Z)
    E_H = (len(X) + 2) * eps64 * (absZ.T @ (weights[:, None] * absZ)) \
        + (D + 3) * eps64 * np.sqrt(np.outer(np.diag(H), np.diag(H)))
    E_rhs = (len(X) + 2) * eps64 * (absZ.T @ np.abs(weights[:, None] * Y))
    SZV = np.abs(weights[:, None] * (Z @ V))  # (n, n_new)
    out = np.empty((len(X_new), theta.shape[1]))
    for t in range(theta.shape[1]):
        w = np.abs(theta[:D, t])
        out[:, t] = (E_new @ w + np.abs(V).T @ (E.T @ residual[:, t])
                     + SZV.T @ (E[:, :D] @ w)
                     + np.abs(V).T @ (E_H @ np.abs(theta[:, t]) + E_rhs[:, t])
                     + (D + 3) * eps64 * (np.abs(Z_new) @ np.abs(theta[:, t])))
    return out


# ----------------------------------------------------------------------------- Fisher
def _fisher_bounds(model: KernelFisherDiscriminant, X: np.ndarray, X_new: np.ndarray,
                   labels: np.ndarray) -> dict[str, np.ndarray]:
    # K (n × p) in float32; S_W = K̃ᵀK̃ (K̃: K centred per class), S_B = K_BᵀK_B (rows
    # √n_c(m_c − m)), B = S_W + μI, μ = reg·tr S_W/p; all p eigenpairs S_B a = λBa,
    # aᵀBa = 1. First order (Stewart & Sun §VI.3):
    #   δa_i = Σ_{j≠i} a_j·a_jᵀ(δS_B − λ_iδB)a_i/(λ_i − λ_j) − ½(a_iᵀδBa_i)a_i,
    # with a_jᵀδS_W a_i = (K̃a_j)ᵀ(Δ̃a_i) + (Δ̃a_j)ᵀ(K̃a_i) (and alike for S_B) bounded
    # entrywise by E; f(x) = k(x)ᵀa_i then moves by Σ_j |k(x)ᵀa_j|·|…|.
    kernel, centres = model.kernel_, np.asarray(model.X_fit_)
    K = _kernel64(kernel, X, centres)
    # The scatter matrices are float64 products of length n (backward: n ε₆₄ |K|).
    E = kernel_error(kernel, X, centres) + len(K) * _eps_solve() * np.abs(K)
    classes = [labels == c for c in np.unique(labels)]
    overall = K.mean(axis=0)
    K_W = np.vstack([K[rows] - K[rows].mean(axis=0) for rows in classes])
    K_B = np.vstack([np.sqrt(rows.sum()) * (K[rows].mean(axis=0) - overall)
                     for rows in classes])
    within, between = K_W.T @ K_W, K_B.T @ K_B
    p = within.shape[0]
    mu = model.reg * np.trace(within) / p
    ratios, A = scipy.linalg.eigh(between, within + mu * np.eye(p))
    E_W = np.vstack([E[rows] + E[rows].mean(axis=0) for rows in classes])  # |Δ̃| bound
    E_B = np.vstack([np.sqrt(rows.sum()) * (E[rows].mean(axis=0) + E.mean(axis=0))
                     for rows in classes])
    delta_mu = model.reg * 2 * float((np.abs(K_W) * E_W).sum()) / p
    F_new = _kernel64(kernel, X_new, centres) @ A  # k(x)ᵀa_j for every j
    coef = np.asarray(model.coef_)
    transform = kernel_error(kernel, X_new, centres) @ np.abs(coef) \
        + _product_error(_kernel64(kernel, X_new, centres), coef)
    train = kernel_error(kernel, X, centres) @ np.abs(coef)
    F_train = K @ A
    for column in range(coef.shape[1]):
        i = int(np.argmin(np.abs(ratios - model.eigenvalues_[column])))
        a_i = A[:, [i]]
        dW = np.abs(K_W @ A).T @ (E_W @ np.abs(a_i)) + (E_W @ np.abs(A)).T @ np.abs(K_W @ a_i)
        dB = np.abs(K_B @ A).T @ (E_B @ np.abs(a_i)) + (E_B @ np.abs(A)).T @ np.abs(K_B @ a_i)
        # eigh's backward error: p ε₆₄ ‖S_B‖ and p ε₆₄ ‖B‖ between a_j and a_i.
        norms = np.linalg.norm(A, axis=0) * float(np.linalg.norm(a_i))
        dW = dW[:, 0] + delta_mu * np.abs(A.T @ a_i)[:, 0] \
            + p * _eps_solve() * np.linalg.norm(within + mu * np.eye(p), 2) * norms
        dB = dB + p * _eps_solve() * np.linalg.norm(between, 2) * norms[:, None]
        coupling = (dB[:, 0] + abs(ratios[i]) * dW)
        with np.errstate(divide="ignore"):
            coupling = coupling / np.abs(ratios[i] - ratios)
        coupling[i] = 0.5 * dW[i]
        transform[:, column] += np.abs(F_new) @ coupling
        train[:, column] += np.abs(F_train) @ coupling
    # The LDA on the training projections P (float64 of float32-kernel projections, to the
    # bound `train`): scores = P_new W(P) + b(P). Its first-order response to every training
    # projection, ∂scores/∂P[r, c], by central differences of scikit-learn's LDA fit:
    # |δs| <= |δP_new||W| + Σ_{r,c} |∂s/∂P[r, c]|·train[r, c].
    P = K @ coef
    P_new = _kernel64(kernel, X_new, centres) @ coef
    W = np.asarray(model.discriminant_coef_)
    y_index = np.unique(labels, return_inverse=True)[1]
    h = 1e-7 * float(np.abs(P).max())
    decision = transform @ np.abs(W).T
    for r in range(P.shape[0]):
        for c in range(P.shape[1]):
            moved = [P.copy(), P.copy()]
            moved[0][r, c] += h
            moved[1][r, c] -= h
            up, down = (LinearDiscriminantAnalysis().fit(Q, y_index) for Q in moved)
            change = (P_new @ (up.coef_ - down.coef_).T + (up.intercept_ - down.intercept_))
            decision += np.abs(change) / (2 * h) * train[r, c]
    # Probabilities: the logistic is ¼-Lipschitz; a softmax output moves by at most ½ of
    # the largest score change.
    if decision.shape[1] == 1:
        decision = decision[:, 0]
        probability = np.repeat(0.25 * decision[:, None], 2, axis=1)
    else:
        probability = np.repeat(0.5 * decision.max(axis=1, keepdims=True), decision.shape[1],
                                axis=1)
    return {"transform": transform, "decision_function": decision,
            "predict_proba": probability}


# ----------------------------------------------------------------------------- novelty
def _mean_distance_score_bound(model: KernelMeanDistance, X: np.ndarray,
                               points: np.ndarray) -> np.ndarray:
    # score(x) = −(k(x, x) − 2k(x, C)β + βᵀK_CCβ): every kernel value to its bound, the
    # products in float32. With landmarks β = K_CC⁺b, b = K_nCᵀ1/n, and ∂score/∂β =
    # 2(k(x, C) − K_CCβ) =: 2g, so through β: 2wᵀ(δb − ΔK_CCβ) with w = K_CC⁺g.
    kernel, centres = model.kernel_, np.asarray(model.X_fit_)
    beta = np.asarray(model.mean_coef_)
    K_CC = _kernel64(kernel, centres, centres)
    E_CC = kernel_error(kernel, centres, centres) \
        + len(K_CC) * _eps_solve() * np.linalg.norm(K_CC, 2)  # pinv's (eigh's) backward error
    k_new = _kernel64(kernel, points, centres)
    diag_error = np.array([kernel_error(kernel, x[None], x[None])[0, 0] for x in points])
    cross = kernel_error(kernel, points, centres) @ np.abs(beta) \
        + _product_error(k_new, beta[:, None])[:, 0]
    norm = float(np.abs(beta) @ (E_CC @ np.abs(beta))) \
        + float(np.abs(beta) @ _product_error(K_CC, beta[:, None])[:, 0])
    bound = diag_error + 2 * cross + norm
    if not (len(centres) == len(X) and np.array_equal(centres, X)):
        K_nC = _kernel64(kernel, X, centres)
        delta_b = kernel_error(kernel, X, centres).mean(axis=0) \
            + (len(X) + 1) * _eps() * np.abs(K_nC).mean(axis=0)
        g = k_new - K_CC @ beta  # (n_points, m)
        w = g @ np.linalg.pinv(K_CC, rcond=1e-12, hermitian=True)
        bound = bound + 2 * np.abs(w) @ (delta_b + E_CC @ np.abs(beta))
    return bound


def _mean_distance_bounds(model: KernelMeanDistance, X: np.ndarray,
                          X_new: np.ndarray) -> dict[str, np.ndarray]:
    score = _mean_distance_score_bound(model, X, X_new)
    # The offset, a percentile of the training scores, moves by at most their largest bound.
    offset = float(_mean_distance_score_bound(model, X, X).max())
    return {"score_samples": score, "decision_function": score + offset}


# ----------------------------------------------------------------------------- CCA
def _cca_view(Z: np.ndarray, reg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One view's centred features, mean and whitening, by KernelCCA's own helpers."""
    centred, mean = _centred(Z)
    return centred, mean, _regularised_whitening(centred, reg)[0]


def _cca_scores(model: KernelCCA, view_x: tuple, view_y: tuple, new_x: np.ndarray,
                new_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The variates of new features from the two views' (centred, mean, whitening):
    KernelCCA.fit's algebra after the maps, in float64."""
    (centred_x, mean_x, whiten_x), (centred_y, mean_y, whiten_y) = view_x, view_y
    M = (centred_x @ whiten_x).T @ (centred_y @ whiten_y) / len(centred_x)
    U, _, Tt = scipy.linalg.svd(M, full_matrices=False)
    k = model.n_components
    w_x, w_y = whiten_x @ U[:, :k], whiten_y @ Tt[:k].T
    signs = np.sign(w_x[np.abs(w_x).argmax(axis=0), np.arange(k)])
    return (new_x - mean_x) @ (w_x * signs), (new_y - mean_y) @ (w_y * signs)


def _cca_bounds(model: KernelCCA, X: np.ndarray, Y: np.ndarray, X_new: np.ndarray,
                Y_new: np.ndarray) -> dict[str, np.ndarray]:
    # Each view's Nyström features to their bound δZ (float32; float64 from there on).
    # Whitening at reg = 1e-3 and close canonical correlations make the weights sensitive,
    # so the training features' errors are propagated exactly to first order:
    # Σ_{r,c} |∂scores/∂Z[r, c]|·δZ[r, c], the derivatives by central differences of fit's
    # algebra (_cca_scores); the new points' features and the float32 product add
    # |δZ_new||w| + (D + 2)ε(|Z_new| + |z̄|)|w|.
    # Covariances, eigh and the SVD in float64 add (n + D)ε₆₄|Z| (backward, per feature).
    features = [(Z, fitted.transform(new),
                 _nystroem_bound(fitted, data) + sum(Z.shape) * _eps_solve() * np.abs(Z),
                 _nystroem_bound(fitted, new))
                for fitted, data, new in ((model.x_map_, X, X_new), (model.y_map_, Y, Y_new))
                for Z in [fitted.transform(data)]]
    (_, new_x, _, _), (_, new_y, _, _) = features
    views = [_cca_view(Z, model.reg) for Z, *_ in features]
    totals = [np.zeros((len(new_x), model.n_components)) for _ in range(2)]
    for view, (Z, _, delta, _) in enumerate(features):
        h = 1e-7 * float(np.abs(Z).max())
        for r in range(Z.shape[0]):
            for c in range(Z.shape[1]):
                shifted = []
                for sign in (1.0, -1.0):
                    moved = Z.copy()
                    moved[r, c] += sign * h
                    pair = list(views)
                    pair[view] = _cca_view(moved, model.reg)
                    shifted.append(_cca_scores(model, *pair, new_x, new_y))
                for i in range(2):
                    totals[i] += np.abs(shifted[0][i] - shifted[1][i]) / (2 * h) * delta[r, c]
    out = {}
    for i, (name, weights) in enumerate((("transform-x", model.x_weights_),
                                          ("transform-y", model.y_weights_))):
        Z, Z_new, _, delta_new = features[i]
        weights = np.asarray(weights)
        out[name] = (totals[i] + delta_new @ np.abs(weights)
                     + _product_error(np.abs(Z_new) + np.abs(Z.mean(axis=0)), weights))
    return out


# ----------------------------------------------------------------------------- dispatch
def error_bound(estimator: Any, X: np.ndarray, X_new: np.ndarray, y: Any = None,
                y_new: Any = None, *, dtype: type = np.float32,
                solve_dtype: type = np.float64,
                sample_weight: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Bounds on the rounding error of each output method of ``estimator`` run in ``dtype``.

    ``estimator`` is fitted in float64 on ``X`` (and ``y``): float64 values of the run's
    inputs, so that it is the exact result the runs approximate. Returns
    ``{method: bound}``, each broadcastable to the method's output on ``X_new``
    (``transform-x``/``transform-y``: the two views of :class:`KernelCCA`).
    ``solve_dtype`` is the dtype of the small systems (float32 on a device without
    float64); ``sample_weight`` those :class:`KernelRidge` was fitted with.
    """
    tokens = _DTYPE.set(dtype), _SOLVE_DTYPE.set(solve_dtype)
    try:
        return _bounds(estimator, X, X_new, y, y_new, sample_weight)
    finally:
        _DTYPE.reset(tokens[0])
        _SOLVE_DTYPE.reset(tokens[1])


def _bounds(estimator: Any, X: np.ndarray, X_new: np.ndarray, y: Any, y_new: Any,
            sample_weight: np.ndarray | None) -> dict[str, np.ndarray]:
    if isinstance(estimator, KernelRidge):
        weights = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight)
        return {"predict": _ridge_bound(estimator, X, X_new, np.asarray(y), weights)}
    if isinstance(estimator, KernelRidgeClassifier):
        # Kernel ridge regression on the ±1 one-vs-rest targets: the scores' bound is the
        # regression's, with those targets.
        weights = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight)
        targets = encode_labels(np.asarray(y), estimator.classes_)
        bound = _ridge_bound(estimator, X, X_new, targets, weights)
        if estimator.classes_.size == 2:  # one score per row
            bound = np.asarray(bound).reshape(len(X_new))
        return {"decision_function": bound}
    if isinstance(estimator, FeatureRidge | FeatureRidgeClassifier):
        weights = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight)
        if isinstance(estimator, FeatureRidge):
            targets = np.asarray(y, np.float64).reshape(len(X), -1)
        else:
            targets = encode_labels(np.asarray(y), estimator.classes_)
        bound = _feature_ridge_bound(estimator, X, X_new, targets, weights)
        if bound.shape[1] == 1 and np.ndim(estimator.coef_) == 1:
            bound = bound[:, 0]
        key = "predict" if isinstance(estimator, FeatureRidge) else "decision_function"
        return {key: bound}
    if isinstance(estimator, KernelFisherDiscriminant):
        return _fisher_bounds(estimator, X, X_new, np.asarray(y))
    if isinstance(estimator, KernelMeanDistance):
        return _mean_distance_bounds(estimator, X, X_new)
    if isinstance(estimator, KernelCCA):
        return _cca_bounds(estimator, X, y, X_new, y_new)
    if isinstance(estimator, km.Nystroem):
        return {"transform": _nystroem_bound(estimator, X_new)}
    return {"transform": _projection_map_bound(estimator, X_new)}
