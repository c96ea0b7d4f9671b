r"""The published random-feature constructions, written from their papers, for the quality
benchmark's comparison in Munkhoeva et al.'s setting (``python -m benchmarks quality
--published``).

Munkhoeva, Kapushev, Burnaev & Oseledets, *Quadrature-based features for kernel
approximation* (NeurIPS 2018), §5 and their public code (github.com/maremun/quffka): the
Gaussian kernel :math:`e^{-\gamma\|x-y\|^2}` with :math:`\gamma = 1/d` on rows divided by the
data's largest value, two draws of 550 rows, the relative Frobenius error
:math:`\|K - \hat K\|_F / \|K\|_F`, and :math:`D' = 2n(d + 1)` **frequencies** (rows of the
projection), each giving a cos/sin pair, so :math:`2D'` features and
:math:`\hat K = \frac{1}{D'}\sum_i a_i [\cos\omega_i^\top x\cos\omega_i^\top y +
\sin\omega_i^\top x\sin\omega_i^\top y] + c`. Every construction below returns the
frequencies :math:`\omega_i` for the unit Gaussian (the rows are scaled by
:math:`\sqrt{2\gamma}`), the weights :math:`a_i` and the constant c:

* ``G`` (Rahimi & Recht, 2007): i.i.d. :math:`\mathcal N(0, I_d)` rows.
* ``ORF`` (Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, NeurIPS 2016): stacked
  independent d × d Haar rotations, each row scaled by its own :math:`\chi_d` radius.
* ``Gort`` (Munkhoeva et al.'s orthogonal baseline): one :math:`D' \times d` matrix with
  orthonormal columns (the Q factor of a Gaussian matrix), each row scaled by its own
  :math:`\chi_{D'}` radius.
* ``ROM`` (Choromanski, Rowland & Weller, NeurIPS 2017, the S-Rademacher matrix with three
  blocks; Yu et al.'s SORF): stacked blocks :math:`\sqrt{d_p}\,HD_1HD_2HD_3` of order
  :math:`d_p` = the next power of two ≥ d (H the normalised Hadamard matrix, :math:`D_k`
  random ±1 diagonals), rows zero-padded inputs: every row of norm exactly
  :math:`\sqrt{d_p}` (no radial draw; biased, with a lower variance).
* ``SR`` (Munkhoeva et al.'s stochastic spherical-radial rule, degree 3, as their code uses
  it for the Gaussian kernel): :math:`D'/(d + 1)` rules, each the d + 1 vertices
  :math:`v_j` of a regular simplex under a Haar rotation Q, vertex j at its own radius
  :math:`\rho_j \sim \chi_{d+2}` with weight :math:`a_j = d/\rho_j^2`, and the centre term
  :math:`c = 1 - \overline{a}`. (Their fast version rotates with butterfly matrices; a Haar
  rotation is the law those approximate.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import hadamard

__all__ = ["PUBLISHED", "published_error"]

Construction = Callable[[int, int, np.random.RandomState],
                        tuple[np.ndarray, np.ndarray | None, float]]


def _haar(d: int, random_state: np.random.RandomState) -> np.ndarray:
    q, r = np.linalg.qr(random_state.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def _chi(k: int, size: int, random_state: np.random.RandomState) -> np.ndarray:
    return np.sqrt(random_state.chisquare(k, size))


def gaussian(d, D, random_state):
    return random_state.normal(size=(D, d)), None, 0.0


def orf(d, D, random_state):
    directions = np.vstack([_haar(d, random_state) for _ in range(-(-D // d))])[:D]
    return directions * _chi(d, D, random_state)[:, None], None, 0.0


def gort(d, D, random_state):
    q, r = np.linalg.qr(random_state.normal(size=(D, d)))  # D >= d: orthonormal columns
    return q * np.sign(np.diag(r)) * _chi(D, D, random_state)[:, None], None, 0.0


def rom(d, D, random_state):
    d_pad = 1 << max(0, d - 1).bit_length()
    H = hadamard(d_pad) / np.sqrt(d_pad)
    blocks = []
    for _ in range(-(-D // d_pad)):
        block = np.eye(d_pad)
        for _ in range(3):
            block = block @ (H * random_state.choice([-1.0, 1.0], d_pad))
        blocks.append(block)
    # Zero-padded inputs see only the first d columns.
    return np.sqrt(d_pad) * np.vstack(blocks)[:D, :d], None, 0.0


def _simplex(d: int) -> np.ndarray:
    """The d + 1 unit vertices of a regular simplex centred at 0 in R^d, shape (d + 1, d)."""
    centred = np.eye(d + 1) - 1.0 / (d + 1)
    basis = np.linalg.svd(centred)[2][:d]  # orthonormal basis of the plane Σx = 0
    vertices = centred @ basis.T
    return vertices / np.linalg.norm(vertices, axis=1, keepdims=True)


def spherical_radial(d, D, random_state):
    if D % (d + 1):
        raise ValueError(f"the SR rule needs D' a multiple of d + 1 = {d + 1}; got {D}.")
    simplex = _simplex(d)
    directions = np.vstack([simplex @ _haar(d, random_state).T for _ in range(D // (d + 1))])
    rho = _chi(d + 2, D, random_state)
    weights = d / rho ** 2
    return directions * rho[:, None], weights, float(1.0 - weights.mean())


#: name → (construction, family of our structures it is compared with).
PUBLISHED: dict[str, tuple[Construction, str]] = {
    "G": (gaussian, "iid"), "ORF": (orf, "orthogonal"), "Gort": (gort, "orthogonal"),
    "ROM": (rom, "structured"), "SR": (spherical_radial, "quadrature"),
}


def published_error(name: str, A: np.ndarray, B: np.ndarray, K: np.ndarray, gamma: float,
                    D: int, seed: int) -> float:
    """One seed's relative Frobenius error of construction ``name`` with D′ frequencies."""
    construction = PUBLISHED[name][0]
    W, weights, constant = construction(A.shape[1], D, np.random.RandomState(seed))
    scale = np.sqrt(2.0 * gamma)
    PA, PB = (A * scale) @ W.T, (B * scale) @ W.T
    a = np.ones(D) if weights is None else weights
    K_hat = ((np.cos(PA) * a) @ np.cos(PB).T + (np.sin(PA) * a) @ np.sin(PB).T) / D + constant
    return float(np.linalg.norm(K - K_hat) / np.linalg.norm(K))
