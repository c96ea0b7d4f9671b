r"""Kernels k(x, y): one definition each, evaluated in bounded-memory row blocks.

Every part of kernelmaps that needs exact kernel values (Nystroem, the kernel machines, the
approximation-error tools) goes through the objects here. The kernels named after
:mod:`sklearn.metrics.pairwise` take the same parameters, defaults and values:

==================  =======================================================  =================
name                k(x, y)                                                   parameters
==================  =======================================================  =================
``linear``          :math:`\langle x, y\rangle`                               —
``poly``            :math:`(\gamma\langle x, y\rangle + c_0)^d`               gamma, coef0, degree
``rbf``             :math:`\exp(-\gamma\|x-y\|^2)`                             gamma
``laplacian``       :math:`\exp(-\gamma\|x-y\|_1)`                             gamma
``sigmoid``         :math:`\tanh(\gamma\langle x, y\rangle + c_0)` (not PSD)   gamma, coef0
``cosine``          :math:`\langle x, y\rangle / (\|x\|\|y\|)`                 —
``chi2``            :math:`\exp(-\gamma\sum_i (x_i-y_i)^2/(x_i+y_i))`          gamma
``additive_chi2``   :math:`-\sum_i (x_i-y_i)^2/(x_i+y_i)` (conditionally PD)   —
==================  =======================================================  =================

``gamma=None`` means :math:`1/n_\text{features}` (``chi2``: 1), ``degree=None`` means 3 and
``coef0=None`` means 1, exactly as in scikit-learn.

The histogram kernels (``chi2``, ``additive_chi2``) and the L1 distance reuse scikit-learn's
compiled pairwise routines block by block: they are well kept and fast, so there is no reason
to rewrite them (see DESIGN notes). Dot-product and RBF kernels are computed here with one
BLAS call plus in-place ufuncs and preserve float32.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import additive_chi2_kernel, manhattan_distances
from sklearn.preprocessing import normalize
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_array

__all__ = [
    "KERNELS",
    "AdditiveChi2Kernel",
    "AdditiveChi2PSDKernel",
    "ArcCosineKernel",
    "Chi2Kernel",
    "CosineKernel",
    "ExponentialKernel",
    "IndefiniteKernelWarning",
    "Kernel",
    "LaplacianKernel",
    "LinearKernel",
    "MaternKernel",
    "MercerReport",
    "PolynomialKernel",
    "RBFKernel",
    "SigmoidKernel",
    "SkewedChi2Kernel",
    "SpectralDensity",
    "StudentKernel",
    "check_mercer",
    "get_kernel",
    "resolve_kernel",
]

_FLOATS = (np.float64, np.float32)


class IndefiniteKernelWarning(UserWarning):
    """A kernel matrix that should be positive semi-definite has negative eigenvalues."""


def _dense_block(X: Any) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else X


class Kernel:
    """A kernel function k(x, y) with its parameters.

    Call it as ``kernel(X, Y=None)`` to get the ``(n_X, n_Y)`` matrix (computed in row
    blocks), or ``kernel.diag(X)`` for k(x, x). float32 inputs give float32 values.
    """

    name: ClassVar[str] = ""
    #: Names of the parameters, in the order of the constructor.
    param_names: ClassVar[tuple[str, ...]] = ()
    #: Whether every Gram matrix of the kernel is positive semi-definite.
    is_psd: ClassVar[bool] = True
    #: Whether the inputs must be non-negative (histogram kernels).
    requires_non_negative: ClassVar[bool] = False

    def get_params(self) -> dict[str, Any]:
        """The kernel's parameters as a dict."""
        return {p: getattr(self, p) for p in self.param_names}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.get_params().items()))))

    # -- evaluation -----------------------------------------------------------------
    def _check(self, X: Any, name: str) -> Any:
        X = check_array(X, accept_sparse="csr", dtype=list(_FLOATS), input_name=name)
        if self.requires_non_negative:
            values = X.data if sp.issparse(X) else X
            if values.size and values.min() < 0:
                raise ValueError(
                    f"{name} contains negative values, but the {self.name} kernel is defined "
                    "for non-negative data (histograms); shift or rescale the features."
                )
        return X

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y=None``: ``Y = X``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_X, n_features)
        Y : {array-like, sparse matrix} of shape (n_Y, n_features), default=None

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
        """
        from kernelmaps._base import run_blocks  # the one chunked engine

        X = self._check(X, "X")
        Y_is_X = Y is None
        Y = X if Y_is_X else self._check(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but Y has {Y.shape[1]}: kernel arguments must "
                "have the same number of features."
            )
        dtype = np.result_type(X.dtype, Y.dtype)
        K = run_blocks(
            X,
            n_out=Y.shape[0],
            dtype=np.dtype(dtype),
            block_fn=lambda xb, ob: self.evaluate_into(xb, Y, ob),
            temp_bytes_per_row=self._temp_bytes_per_row(Y),
            n_threads=1,
            name=repr(self),
            nonfinite_hint=(
                "check the kernel's parameters (e.g. a non-integer polynomial degree on "
                "negative inner products) or rescale the data if it overflowed."
            ),
        )
        if Y_is_X:
            self._fix_diagonal(X, K)
        return K

    def evaluate(self, X: Any, Y: Any) -> np.ndarray:
        """One block of the kernel matrix, without validation (inputs already checked)."""
        K = np.empty((X.shape[0], Y.shape[0]), dtype=np.result_type(X.dtype, Y.dtype))
        self.evaluate_into(X, Y, K)
        return K

    def evaluate_into(self, X: Any, Y: Any, out: np.ndarray) -> None:  # pragma: no cover
        """Write the block ``k(X, Y)`` into ``out`` (validated inputs)."""
        raise NotImplementedError

    def _temp_bytes_per_row(self, Y: Any) -> int:
        return 0

    def _fix_diagonal(self, X: Any, K: np.ndarray) -> None:
        """Make k(x, x) exact on the diagonal of a symmetric evaluation (distance kernels)."""

    def diag(self, X: Any) -> np.ndarray:
        """The values k(x, x) for each row of ``X``, shape (n_samples,)."""
        X = self._check(X, "X")
        return self._diag(X)

    def _diag(self, X: Any) -> np.ndarray:
        out = np.empty(X.shape[0], dtype=X.dtype)
        for start in range(0, X.shape[0], 1024):
            xb = X[start:start + 1024]
            for i in range(xb.shape[0]):
                row = xb[i:i + 1]
                out[start + i] = self.evaluate(row, row)[0, 0]
        return out

    def _gamma(self, n_features: int) -> float:
        gamma = getattr(self, "gamma", None)
        return 1.0 / n_features if gamma is None else float(gamma)

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """The spectral measure of a shift-invariant kernel (Bochner's theorem).

        Raises ``ValueError`` for kernels that are not shift-invariant.
        """
        raise ValueError(
            f"The {self.name} kernel is not shift-invariant, so it has no spectral density for "
            "random Fourier features. Use Nystroem (any kernel), PolynomialCountSketch / "
            "PolynomialKernelMap (polynomial) or the map made for this kernel instead."
        )


def _check_positive(name: str, value: Any, kernel: str, *, allow_none: bool = True,
                    allow_zero: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{kernel} kernel: {name} must be a real number; got {value!r}.")
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{kernel} kernel: {name} must be finite and {bound}; got {value!r}.")


def _check_real(name: str, value: Any, kernel: str) -> None:
    if value is None:
        return
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool) \
            or not np.isfinite(value):
        raise ValueError(f"{kernel} kernel: {name} must be a finite real number; got {value!r}.")


def dot_into(X: Any, Y: Any, out: np.ndarray) -> None:
    """``out[...] = X @ Y.T`` for dense or sparse operands (BLAS writes in place if dense)."""
    if sp.issparse(X) or sp.issparse(Y):
        out[...] = safe_sparse_dot(X, Y.T, dense_output=True)
    else:
        np.matmul(X, Y.T, out=out)


class LinearKernel(Kernel):
    r"""Linear kernel :math:`k(x, y) = \langle x, y\rangle`."""

    name = "linear"

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)

    def _diag(self, X):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1), dtype=X.dtype).ravel()
        return np.einsum("ij,ij->i", X, X)


class PolynomialKernel(Kernel):
    r"""Polynomial kernel :math:`k(x, y) = (\gamma\langle x, y\rangle + c_0)^d`.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale of the inner product; ``None`` means ``1 / n_features``.
    degree : float or None, default=None
        Degree ``d``; ``None`` means 3.
    coef0 : float or None, default=None
        Offset ``c_0``; ``None`` means 1.
    """

    name = "poly"
    param_names = ("gamma", "degree", "coef0")

    def __init__(self, gamma: float | None = None, degree: float | None = None,
                 coef0: float | None = None) -> None:
        _check_positive("gamma", gamma, "polynomial")
        _check_real("coef0", coef0, "polynomial")
        if degree is not None:
            _check_real("degree", degree, "polynomial")
            if degree < 1:
                raise ValueError(f"polynomial kernel: degree must be >= 1; got {degree!r}.")
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        out += 1.0 if self.coef0 is None else self.coef0
        out **= 3 if self.degree is None else self.degree


class RBFKernel(Kernel):
    r"""Gaussian (RBF) kernel :math:`k(x, y) = \exp(-\gamma\|x-y\|^2) = \exp(-\|x-y\|^2/2\sigma^2)`.

    The squared distance is expanded as :math:`\|x\|^2 + \|y\|^2 - 2\langle x,y\rangle` (one
    BLAS call) and clipped at zero against rounding, as scikit-learn does.

    Parameters
    ----------
    gamma : float or None, default=None
        Inverse squared length scale; ``None`` means ``1 / n_features`` (unless ``sigma``).
    sigma : float or None, default=None
        Bandwidth σ; gives ``gamma = 1 / (2 σ²)``. Pass ``gamma`` or ``sigma``, not both.
    """

    name = "rbf"
    param_names = ("gamma", "sigma")

    def __init__(self, gamma: float | None = None, sigma: float | None = None) -> None:
        _check_positive("gamma", gamma, "rbf")
        _check_positive("sigma", sigma, "rbf")
        if gamma is not None and sigma is not None:
            raise ValueError("rbf kernel: pass gamma or sigma (gamma = 1/(2 sigma²)), not both.")
        self.gamma = gamma
        self.sigma = sigma

    def _gamma(self, n_features: int) -> float:
        if self.sigma is not None:
            return 1.0 / (2.0 * float(self.sigma) ** 2)
        return super()._gamma(n_features)

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """Normal frequencies, ω ~ N(0, 2γ I) (Rahimi & Recht, 2007)."""
        return GaussianDensity(np.sqrt(2.0 * self._gamma(n_features)))

    def evaluate_into(self, X, Y, out):
        # exp(-γ‖x−y‖²) = exp(min(2γ⟨x,y⟩ − γ‖x‖² − γ‖y‖², 0)): the scale −2γ rides on the
        # (small) Y operand of the BLAS call, saving one pass over the block.
        gamma = self._gamma(X.shape[1])
        dot_into(X, Y * (2.0 * gamma), out)
        out -= (gamma * row_sq_norms(X))[:, None]
        out -= (gamma * row_sq_norms(Y))[None, :]
        np.minimum(out, 0.0, out=out)
        np.exp(out, out=out)

    def _fix_diagonal(self, X, K):
        np.fill_diagonal(K, 1.0)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)


def row_sq_norms(X: Any) -> np.ndarray:
    """Squared Euclidean norms of the rows of a dense or sparse matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(X.dtype, copy=False)
    return np.einsum("ij,ij->i", X, X)


def sq_dist_into(X: Any, Y: Any, out: np.ndarray) -> None:
    """Squared Euclidean distances ``‖x−y‖²`` into ``out``, clipped at 0 against rounding."""
    dot_into(X, Y, out)
    out *= -2.0
    out += row_sq_norms(X)[:, None]
    out += row_sq_norms(Y)[None, :]
    np.maximum(out, 0.0, out=out)


class LaplacianKernel(Kernel):
    r"""Laplacian kernel :math:`k(x, y) = \exp(-\gamma\|x-y\|_1)`.

    Parameters
    ----------
    gamma : float or None, default=None
        Inverse length scale; ``None`` means ``1 / n_features``.
    """

    name = "laplacian"
    param_names = ("gamma",)

    def __init__(self, gamma: float | None = None) -> None:
        _check_positive("gamma", gamma, "laplacian")
        self.gamma = gamma

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """The L1 Laplacian is a product of 1-D Laplacians: iid Cauchy(0, γ) coordinates."""
        return CauchyProductDensity(self._gamma(n_features))

    def evaluate_into(self, X, Y, out):
        # scikit-learn's compiled L1 distance (dense: scipy cdist, sparse: Cython).
        out[...] = manhattan_distances(X, Y)
        out *= -self._gamma(X.shape[1])
        np.exp(out, out=out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)


class ExponentialKernel(Kernel):
    r"""Exponential dot-product kernel :math:`k(x, y) = \exp(\gamma\langle x, y\rangle)`.

    Positive definite: its Maclaurin coefficients :math:`\gamma^n/n!` are all positive
    (Schoenberg; the kernel :class:`~kernelmaps.RandomMaclaurin` approximates, Kar & Karnick
    2012). Note :math:`\exp(-\gamma\|x-y\|^2/2) = e^{-\gamma\|x\|^2/2}\,
    \exp(\gamma\langle x, y\rangle)\,e^{-\gamma\|y\|^2/2}`. Large
    :math:`\gamma\langle x, y\rangle` overflow: a clear error, never inf.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale; ``None`` means ``1 / n_features``.
    """

    name = "exponential"
    param_names = ("gamma",)

    def __init__(self, gamma: float | None = None) -> None:
        _check_positive("gamma", gamma, "exponential")
        self.gamma = gamma

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        np.exp(out, out=out)

    def _diag(self, X):
        return np.exp(self._gamma(X.shape[1]) * row_sq_norms(X))


class SigmoidKernel(Kernel):
    r"""Sigmoid kernel :math:`k(x, y) = \tanh(\gamma\langle x, y\rangle + c_0)`.

    Not positive semi-definite in general (Lin & Lin, 2003): Nystroem warns when its
    landmark matrix turns out indefinite.
    """

    name = "sigmoid"
    param_names = ("gamma", "coef0")
    is_psd = False

    def __init__(self, gamma: float | None = None, coef0: float | None = None) -> None:
        _check_positive("gamma", gamma, "sigmoid")
        _check_real("coef0", coef0, "sigmoid")
        self.gamma = gamma
        self.coef0 = coef0

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        out += 1.0 if self.coef0 is None else self.coef0
        np.tanh(out, out=out)


class CosineKernel(Kernel):
    r"""Cosine similarity :math:`k(x, y) = \langle x, y\rangle / (\|x\|\|y\|)`.

    Rows of zeros give 0, as in scikit-learn.
    """

    name = "cosine"

    def evaluate_into(self, X, Y, out):
        dot_into(normalize(X), normalize(Y), out)


def _additive_chi2_into(X: Any, Y: Any, out: np.ndarray) -> None:
    # scikit-learn's compiled kernel needs dense input; a row block is small.
    out[...] = additive_chi2_kernel(_dense_block(X), _dense_block(Y))


class AdditiveChi2Kernel(Kernel):
    r"""scikit-learn's additive chi² kernel :math:`k(x, y) = -\sum_i (x_i-y_i)^2/(x_i+y_i)`.

    Defined for non-negative data. It is only conditionally positive definite (it is the
    negative of a squared distance), kept under this name for compatibility with
    ``sklearn.metrics.pairwise.additive_chi2_kernel``; ``exp(gamma * k)`` is the ``chi2``
    kernel.
    """

    name = "additive_chi2"
    is_psd = False
    requires_non_negative = True

    def evaluate_into(self, X, Y, out):
        _additive_chi2_into(X, Y, out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.zeros(X.shape[0], dtype=X.dtype)


class Chi2Kernel(Kernel):
    r"""Exponentiated chi² kernel :math:`k(x, y) = \exp(-\gamma\sum_i (x_i-y_i)^2/(x_i+y_i))`.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale; ``None`` means 1 (scikit-learn's default for this kernel).
    """

    name = "chi2"
    param_names = ("gamma",)
    requires_non_negative = True

    def __init__(self, gamma: float | None = None) -> None:
        _check_positive("gamma", gamma, "chi2")
        self.gamma = gamma

    def evaluate_into(self, X, Y, out):
        _additive_chi2_into(X, Y, out)
        out *= 1.0 if self.gamma is None else self.gamma
        np.exp(out, out=out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)



# --------------------------------------------------------------------------- spectral measures
class SpectralDensity:
    r"""Spectral measure of a shift-invariant kernel, for random Fourier features.

    By Bochner's theorem :math:`k(x - y) = k(0)\,\mathbb E_{\omega\sim p}[\cos\omega^\top(x-y)]`
    for a probability density :math:`p`. ``scale`` is :math:`k(0)`; ``sample`` draws
    frequencies; for isotropic densities (:math:`p` depends on :math:`\|\omega\|` only)
    ``sample_radii`` draws :math:`\|\omega\|`, which orthogonal random features need
    (Yu et al., 2016): directions from orthogonal blocks, lengths from this law.
    """

    #: Whether p(ω) depends on ‖ω‖ only.
    isotropic: bool = True
    #: k(0), the total mass of the spectral measure.
    scale: float = 1.0

    def sample(self, n_features: int, size: int, random_state: np.random.RandomState
               ) -> np.ndarray:
        """``size`` frequencies, shape ``(size, n_features)``."""
        if not self.isotropic:  # pragma: no cover - overridden by non-isotropic densities
            raise NotImplementedError
        directions = random_state.normal(size=(size, n_features))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return directions * self.sample_radii(n_features, size, random_state)[:, None]

    def sample_radii(self, n_features: int, size: int, random_state: np.random.RandomState
                     ) -> np.ndarray:  # pragma: no cover - abstract
        """``size`` draws of ‖ω‖, shape ``(size,)``."""
        raise NotImplementedError


class GaussianDensity(SpectralDensity):
    r"""ω ~ N(0, s² I): the Gaussian kernel :math:`\exp(-s^2\|\delta\|^2/2)`."""

    def __init__(self, std: float) -> None:
        self.std = float(std)

    def sample(self, n_features, size, random_state):
        return self.std * random_state.normal(size=(size, n_features))

    def sample_radii(self, n_features, size, random_state):
        return self.std * np.sqrt(random_state.chisquare(n_features, size=size))


class MultivariateTDensity(SpectralDensity):
    r"""ω = z / (ℓ √(u/ν')), z ~ N(0, I), u ~ χ²_ν': the Matérn kernel with ν = ν'/2.

    The Matérn spectral density is :math:`\propto (2\nu/\ell^2 + \|\omega\|^2)^{-(\nu + d/2)}`,
    a multivariate Student t with :math:`2\nu` degrees of freedom and scale :math:`1/\ell`,
    i.e. :math:`\omega = z\,/\,(\ell\sqrt{u/2\nu})` (Rasmussen & Williams, 2006, eq. 4.15).
    """

    def __init__(self, dof: float, length_scale: float) -> None:
        self.dof = float(dof)
        self.length_scale = float(length_scale)

    def _inverse_scales(self, size, random_state):
        return 1.0 / (self.length_scale * np.sqrt(random_state.chisquare(self.dof, size=size)
                                                  / self.dof))

    def sample(self, n_features, size, random_state):
        z = random_state.normal(size=(size, n_features))
        return z * self._inverse_scales(size, random_state)[:, None]

    def sample_radii(self, n_features, size, random_state):
        chi = np.sqrt(random_state.chisquare(n_features, size=size))
        return chi * self._inverse_scales(size, random_state)


class GaussianScaleMixtureDensity(SpectralDensity):
    r"""ω | s ~ N(0, 2s I), s ~ Exponential(rate α): the Student kernel 1/(α + ‖δ‖²).

    From :math:`1/(\alpha + r^2) = \int_0^\infty e^{-s\alpha} e^{-s r^2}\,ds
    = \tfrac1\alpha\,\mathbb E_{s\sim\mathrm{Exp}(\alpha)}[e^{-s r^2}]`: a mixture of
    Gaussians with total mass ``scale`` = 1/α.
    """

    def __init__(self, alpha: float) -> None:
        self.alpha = float(alpha)
        self.scale = 1.0 / self.alpha

    def _stds(self, size, random_state):
        return np.sqrt(2.0 * random_state.exponential(1.0 / self.alpha, size=size))

    def sample(self, n_features, size, random_state):
        z = random_state.normal(size=(size, n_features))
        return z * self._stds(size, random_state)[:, None]

    def sample_radii(self, n_features, size, random_state):
        chi = np.sqrt(random_state.chisquare(n_features, size=size))
        return chi * self._stds(size, random_state)


class CauchyProductDensity(SpectralDensity):
    r"""iid Cauchy(0, γ) coordinates: the L1 Laplacian :math:`\exp(-\gamma\|\delta\|_1)`.

    Not isotropic (its level sets are not spheres), so orthogonal constructions that draw
    radii do not apply.
    """

    isotropic = False

    def __init__(self, gamma: float) -> None:
        self.gamma = float(gamma)

    def sample(self, n_features, size, random_state):
        return self.gamma * random_state.standard_cauchy(size=(size, n_features))

    def sample_radii(self, n_features, size, random_state):
        raise ValueError(
            "The L1 Laplacian kernel's spectral density is not isotropic, so it has no radial "
            "law: use the 'iid' structure for it."
        )


# --------------------------------------------------------------------------- more kernels
def _pairwise_euclidean(X: Any, Y: Any, out: np.ndarray) -> None:
    sq_dist_into(X, Y, out)
    np.sqrt(out, out=out)


class StudentKernel(Kernel):
    r"""Student (inverse multiquadric-type) kernel :math:`k(x, y) = 1/(\alpha + \|x-y\|^2)`.

    Positive definite for every :math:`\alpha > 0`: it is a mixture of Gaussians (see
    :class:`GaussianScaleMixtureDensity`). :math:`k(x, x) = 1/\alpha`.

    Parameters
    ----------
    alpha : float, default=1.0
        The offset :math:`\alpha > 0`.
    """

    name = "student"
    param_names = ("alpha",)

    def __init__(self, alpha: float = 1.0) -> None:
        _check_positive("alpha", alpha, "student", allow_none=False)
        self.alpha = alpha

    def evaluate_into(self, X, Y, out):
        sq_dist_into(X, Y, out)
        out += self.alpha
        np.reciprocal(out, out=out)

    def _fix_diagonal(self, X, K):
        np.fill_diagonal(K, 1.0 / self.alpha)

    def _diag(self, X):
        return np.full(X.shape[0], 1.0 / self.alpha, dtype=X.dtype)

    def spectral_density(self, n_features: int) -> SpectralDensity:
        return GaussianScaleMixtureDensity(self.alpha)


class MaternKernel(Kernel):
    r"""Matérn kernel with :math:`\nu \in \{1/2, 3/2, 5/2\}` and length scale :math:`\ell`.

    With :math:`r = \|x-y\|/\ell`:
    :math:`\nu=1/2`: :math:`e^{-r}`;
    :math:`\nu=3/2`: :math:`(1+\sqrt3 r)e^{-\sqrt3 r}`;
    :math:`\nu=5/2`: :math:`(1+\sqrt5 r+5r^2/3)e^{-\sqrt5 r}`
    (Rasmussen & Williams, *Gaussian Processes for Machine Learning*, 2006, eq. 4.17). Values
    equal :class:`sklearn.gaussian_process.kernels.Matern`.

    Parameters
    ----------
    nu : {0.5, 1.5, 2.5}, default=1.5
        Smoothness.
    length_scale : float, default=1.0
        Length scale :math:`\ell > 0`.
    """

    name = "matern"
    param_names = ("nu", "length_scale")
    _SUPPORTED_NU = (0.5, 1.5, 2.5)

    def __init__(self, nu: float = 1.5, length_scale: float = 1.0) -> None:
        if nu not in self._SUPPORTED_NU:
            raise ValueError(
                f"matern kernel: nu={nu!r} is not supported; use one of {self._SUPPORTED_NU} "
                "(the closed forms), or the rbf kernel for nu=inf."
            )
        _check_positive("length_scale", length_scale, "matern", allow_none=False)
        self.nu = nu
        self.length_scale = length_scale

    def evaluate_into(self, X, Y, out):
        _pairwise_euclidean(X, Y, out)
        root = {0.5: 1.0, 1.5: np.sqrt(3.0), 2.5: np.sqrt(5.0)}[self.nu]
        out *= root / self.length_scale  # out = c·r
        if self.nu == 0.5:
            np.negative(out, out=out)
            np.exp(out, out=out)
            return
        scaled = out.copy()
        np.negative(out, out=out)
        np.exp(out, out=out)  # e^{-c r}
        polynomial = 1.0 + scaled
        if self.nu == 2.5:
            polynomial += scaled * scaled / 3.0  # (√5 r)²/3 = 5r²/3
        out *= polynomial

    def _temp_bytes_per_row(self, Y):
        return 16 * Y.shape[0]

    def _fix_diagonal(self, X, K):
        np.fill_diagonal(K, 1.0)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def spectral_density(self, n_features: int) -> SpectralDensity:
        return MultivariateTDensity(2.0 * self.nu, self.length_scale)


class AdditiveChi2PSDKernel(Kernel):
    r"""The additive chi² kernel :math:`k(x, y) = \sum_i 2x_iy_i/(x_i+y_i)` (0/0 := 0).

    Positive definite on non-negative data; this is the kernel
    :class:`~kernelmaps.AdditiveChi2Sampler` approximates (Vedaldi & Zisserman, 2012). It is
    computed from scikit-learn's compiled ``additive_chi2`` through
    :math:`4xy/(x+y) = (x + y) - (x-y)^2/(x+y)`.
    """

    name = "additive_chi2_psd"
    requires_non_negative = True

    def evaluate_into(self, X, Y, out):
        # 4xy/(x+y) = (x+y) − (x−y)²/(x+y), and scikit-learn's kernel is −Σ(x−y)²/(x+y).
        _additive_chi2_into(X, Y, out)
        out += np.asarray(X.sum(axis=1)).reshape(-1, 1)
        out += np.asarray(Y.sum(axis=1)).reshape(1, -1)
        out *= 0.5

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()


class SkewedChi2Kernel(Kernel):
    r"""Skewed chi² kernel :math:`k(x, y) = \prod_i 2\sqrt{(x_i+c)(y_i+c)}/(x_i+y_i+2c)`.

    Defined for :math:`x_i, y_i > -c`; the kernel :class:`~kernelmaps.SkewedChi2Sampler`
    approximates (Li, Ionescu & Sminchisescu, 2010). Evaluated in log space, one feature at a
    time, so memory stays at one output block.

    Parameters
    ----------
    skewedness : float, default=1.0
        The skewedness :math:`c > 0`.
    """

    name = "skewed_chi2"
    param_names = ("skewedness",)

    def __init__(self, skewedness: float = 1.0) -> None:
        _check_positive("skewedness", skewedness, "skewed_chi2", allow_none=False)
        self.skewedness = skewedness

    def _check(self, X, name):
        X = super()._check(X, name)
        values = X.data if sp.issparse(X) else X
        if values.size and values.min() <= -self.skewedness:
            raise ValueError(
                f"{name} contains values <= -skewedness ({-self.skewedness}); the skewed chi² "
                "kernel is defined for x > -skewedness. Increase skewedness or shift the data."
            )
        return X

    def evaluate_into(self, X, Y, out):
        c = self.skewedness
        X, Y = _dense_block(X), _dense_block(Y)
        # log k = Σ_i [½log(x_i+c) + ½log(y_i+c) + log 2 − log(x_i+y_i+2c)]
        out.fill(0.0)
        for i in range(X.shape[1]):
            out -= np.log(X[:, i, None] + Y[None, :, i] + 2 * c)
        out += (0.5 * np.log(X + c).sum(axis=1) + X.shape[1] * np.log(2.0))[:, None]
        out += 0.5 * np.log(Y + c).sum(axis=1)[None, :]
        np.exp(out, out=out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)


class ArcCosineKernel(Kernel):
    r"""Arc-cosine kernel of degree :math:`n \in \{0, 1, 2\}` (Cho & Saul, NeurIPS 2009).

    .. math::

        k_n(x, y) = \tfrac1\pi\|x\|^n\|y\|^n J_n(\theta),\quad
        \theta = \arccos\frac{\langle x,y\rangle}{\|x\|\|y\|},

    with :math:`J_0 = \pi-\theta`, :math:`J_1 = \sin\theta + (\pi-\theta)\cos\theta`,
    :math:`J_2 = 3\sin\theta\cos\theta + (\pi-\theta)(1+2\cos^2\theta)`. It is the kernel of
    an infinitely wide layer of step (n=0), ReLU (n=1) or squared-ReLU (n=2) units with
    Gaussian weights, :math:`k_n(x,y) = 2\,\mathbb E_w[\Theta(w^\top x)\Theta(w^\top y)
    (w^\top x)^n(w^\top y)^n]`. A zero vector is given :math:`\cos\theta = 0`.

    Parameters
    ----------
    degree : {0, 1, 2}, default=1
    """

    name = "arccos"
    param_names = ("degree",)

    def __init__(self, degree: int = 1) -> None:
        if degree not in (0, 1, 2) or isinstance(degree, bool):
            raise ValueError(f"arccos kernel: degree must be 0, 1 or 2; got {degree!r}.")
        self.degree = degree

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        norms_x = np.sqrt(row_sq_norms(X))
        norms_y = np.sqrt(row_sq_norms(Y))
        denominator = norms_x[:, None] * norms_y[None, :]
        cos = np.divide(out, denominator, out=np.zeros_like(out), where=denominator > 0)
        np.clip(cos, -1.0, 1.0, out=cos)
        theta = np.arccos(cos)
        angle = np.pi - theta
        if self.degree == 0:
            np.divide(angle, np.pi, out=out)
            return
        sin = np.sqrt(1.0 - cos * cos)
        if self.degree == 1:
            j = sin + angle * cos
        else:
            j = 3.0 * sin * cos + angle * (1.0 + 2.0 * cos * cos)
        np.multiply(denominator ** self.degree, j, out=out)
        out /= np.pi

    def _temp_bytes_per_row(self, Y):
        return 48 * Y.shape[0]

    def _fix_diagonal(self, X, K):
        # arccos is ill-conditioned at 1 (θ ≈ √(2ε) from rounding): use the exact θ = 0.
        np.fill_diagonal(K, self._diag(X))

    def _diag(self, X):
        sq = row_sq_norms(X)
        return (sq ** self.degree) * {0: 1.0, 1: 1.0, 2: 3.0}[self.degree]


#: Kernel classes by name (scikit-learn's names, plus ``polynomial`` as an alias).
KERNELS: dict[str, type[Kernel]] = {
    "linear": LinearKernel,
    "poly": PolynomialKernel,
    "polynomial": PolynomialKernel,
    "rbf": RBFKernel,
    "laplacian": LaplacianKernel,
    "sigmoid": SigmoidKernel,
    "cosine": CosineKernel,
    "chi2": Chi2Kernel,
    "additive_chi2": AdditiveChi2Kernel,
    # Beyond sklearn.metrics.pairwise:
    "exponential": ExponentialKernel,
    "student": StudentKernel,
    "matern": MaternKernel,
    "additive_chi2_psd": AdditiveChi2PSDKernel,
    "skewed_chi2": SkewedChi2Kernel,
    "arccos": ArcCosineKernel,
}


def resolve_kernel(kernel: str | Kernel | Callable, *, gamma: float | None = None,
                   degree: float | None = None, coef0: float | None = None,
                   kernel_params: dict | None = None) -> Kernel | Callable | str:
    """Turn scikit-learn-style kernel arguments into a :class:`Kernel` (or pass through).

    Mirrors how scikit-learn estimators take a kernel: a name plus ``gamma``/``degree``/
    ``coef0`` (each used only if the named kernel has that parameter, as scikit-learn's
    ``filter_params`` does) and ``kernel_params`` for the rest; a :class:`Kernel` object;
    a callable on pairs of rows (returned unchanged); or ``"precomputed"`` (returned
    unchanged).
    """
    if isinstance(kernel, str) and kernel == "precomputed":
        return kernel
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return kernel
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r}; valid names are "
                         f"{[*sorted(KERNELS), 'precomputed']}, a Kernel or a callable.")
    accepted = KERNELS[kernel].param_names
    params = {k: v for k, v in (kernel_params or {}).items() if k in accepted}
    for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        if name in accepted and value is not None:
            params[name] = value
    return get_kernel(kernel, **params)


def get_kernel(kernel: str | Kernel, **params: Any) -> Kernel:
    """Return a :class:`Kernel` from a name and parameters (or pass a Kernel through).

    Parameters
    ----------
    kernel : str or Kernel
        One of ``sorted(KERNELS)`` or a Kernel instance.
    **params
        The kernel's parameters (see each class). Unknown names raise ``TypeError``.

    Returns
    -------
    Kernel
    """
    if isinstance(kernel, Kernel):
        if params:
            raise TypeError("Pass parameters either in the Kernel object or as keywords, not both.")
        return kernel
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r}; valid names are {sorted(KERNELS)}.")
    cls = KERNELS[kernel]
    unknown = set(params) - set(cls.param_names)
    if unknown:
        raise TypeError(
            f"kernel {kernel!r} got unexpected parameter(s) {sorted(unknown)}; it accepts "
            f"{list(cls.param_names) or 'no parameters'}."
        )
    return cls(**params)


# --------------------------------------------------------------------------- Mercer check
@dataclass(frozen=True)
class MercerReport:
    """Result of :func:`check_mercer`: is the kernel's Gram matrix on a sample symmetric PSD?

    Attributes
    ----------
    passed : bool
        Symmetric and no eigenvalue below ``-tolerance``.
    is_symmetric : bool
        ``max_asymmetry`` within the rounding tolerance.
    max_asymmetry : float
        max |K_ij − K_ji|, relative to max |K|.
    min_eigenvalue : float
        Smallest eigenvalue of the symmetrised Gram matrix.
    negative_mass : float
        Sum of |negative eigenvalues| divided by the trace (sum of |eigenvalues| if the trace
        is not positive).
    tolerance : float
        The eigenvalue tolerance used: ``n · eps(dtype) · max |eigenvalue| · 10``.
    n_samples : int
        Number of sample points the Gram matrix was built on.
    worst_pair : tuple of int or None
        Indices (into the sample) of the most offending pair: the most asymmetric pair, or
        the pair whose 2×2 Gram matrix is furthest from PSD (k_ij² − k_ii·k_jj largest).
        None if the check passed or no 2×2 witness exists.
    worst_eigenvector : ndarray or None
        The eigenvector of the smallest eigenvalue when it is below ``-tolerance``.
    sample_indices : ndarray
        Rows of ``X`` used.
    """

    passed: bool
    is_symmetric: bool
    max_asymmetry: float
    min_eigenvalue: float
    negative_mass: float
    tolerance: float
    n_samples: int
    worst_pair: tuple[int, int] | None = None
    worst_eigenvector: np.ndarray | None = field(default=None, repr=False)
    sample_indices: np.ndarray | None = field(default=None, repr=False)

    def summary(self) -> str:
        """A few human-readable lines."""
        verdict = "PASSED: symmetric positive semi-definite" if self.passed else "FAILED"
        lines = [
            f"Mercer check on {self.n_samples} points: {verdict}",
            f"  symmetric: {self.is_symmetric} (max relative asymmetry {self.max_asymmetry:.3g})",
            f"  smallest eigenvalue: {self.min_eigenvalue:.6g} (tolerance {self.tolerance:.3g})",
            f"  negative eigenvalue mass / trace: {self.negative_mass:.3g}",
        ]
        if self.worst_pair is not None:
            i, j = self.worst_pair
            lines.append(f"  worst offending pair of sample points: ({i}, {j})")
        return "\n".join(lines)


def _gram(kernel: Kernel | str | Callable, X: np.ndarray) -> np.ndarray:
    # Evaluate k(X, X) as a generic two-argument call: no symmetry or diagonal is assumed.
    if isinstance(kernel, str):
        kernel = get_kernel(kernel)
    if isinstance(kernel, Kernel):
        return kernel.evaluate(kernel._check(X, "X"), kernel._check(X, "X"))
    if callable(kernel):
        K = np.asarray(kernel(X, X), dtype=np.float64)
        if K.shape != (X.shape[0], X.shape[0]):
            raise ValueError(
                f"kernel(X, X) must return an (n, n) matrix; got shape {K.shape}. Pass a "
                "vectorised callable k(X, Y) -> matrix, a Kernel object or a kernel name."
            )
        return K
    raise TypeError(f"kernel must be a name, a Kernel or a callable k(X, Y); got {kernel!r}.")


def check_mercer(kernel: Kernel | str | Callable, X: Any, *, max_samples: int = 1000,
                 random_state: Any = None) -> MercerReport:
    r"""Check that a kernel is a valid (Mercer) kernel on a sample of points.

    A function k is a Mercer kernel iff every Gram matrix :math:`K_{ij} = k(x_i, x_j)` is
    symmetric positive semi-definite. On (a random subsample of at most ``max_samples`` rows
    of) ``X`` this builds K, measures its asymmetry, and eigen-decomposes its symmetric part.
    The eigenvalue tolerance scales with n and the dtype,
    :math:`\tau = 10\,n\,\epsilon\,\max|\lambda|`, because rounding alone produces
    negative eigenvalues of that size in a PSD matrix. A passing check is evidence on this
    sample, not a proof; a failing one is a proof (with a witness pair when a 2×2 minor is
    already indefinite).

    Parameters
    ----------
    kernel : str, Kernel or callable
        A kernel name, a :class:`Kernel`, or a vectorised callable ``k(X, Y) -> matrix``.
    X : array-like of shape (n_samples, n_features)
        Points to test on.
    max_samples : int, default=1000
        Subsample size (the eigen-decomposition costs O(n³)).
    random_state : int, RandomState instance or None, default=None
        Controls the subsample.

    Returns
    -------
    MercerReport

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import check_mercer
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> check_mercer("rbf", X).passed
    True
    >>> check_mercer(lambda A, B: (A[:, None, 0] != B[None, :, 0]).astype(float), X).passed
    False
    """
    from sklearn.utils import check_random_state

    X = check_array(X, dtype=list(_FLOATS), input_name="X")
    if not isinstance(max_samples, (int, np.integer)) or max_samples < 2:
        raise ValueError(f"max_samples must be an int >= 2; got {max_samples!r}.")
    n = X.shape[0]
    if n < 2:
        raise ValueError("check_mercer needs at least 2 points in X.")
    indices = np.arange(n)
    if n > max_samples:
        indices = np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))
    X = X[indices]
    K = np.asarray(_gram(kernel, X), dtype=np.float64)
    if not np.isfinite(K).all():
        raise ValueError("The kernel returned non-finite values on X; it cannot be a Mercer "
                         "kernel there (check its parameters or rescale X).")
    scale = max(float(np.abs(K).max()), np.finfo(np.float64).tiny)
    eps = np.finfo(X.dtype).eps
    asymmetry = np.abs(K - K.T)
    max_asymmetry = float(asymmetry.max()) / scale
    is_symmetric = max_asymmetry <= 10 * eps
    eigenvalues, eigenvectors = np.linalg.eigh(0.5 * (K + K.T))
    m = K.shape[0]
    tolerance = 10 * m * eps * max(float(np.abs(eigenvalues).max()), np.finfo(np.float64).tiny)
    min_eigenvalue = float(eigenvalues[0])
    negatives = float(np.abs(eigenvalues[eigenvalues < 0]).sum())
    trace = float(np.trace(K))
    denominator = trace if trace > 0 else float(np.abs(eigenvalues).sum())
    negative_mass = float(negatives / denominator) if denominator > 0 else 0.0
    psd = min_eigenvalue >= -tolerance
    worst_pair = None
    worst_vector = None
    if not is_symmetric:
        i, j = np.unravel_index(np.argmax(asymmetry), asymmetry.shape)
        worst_pair = (int(i), int(j))
    elif not psd:
        worst_vector = eigenvectors[:, 0].copy()
        diag = np.diag(K)
        violation = K * K - np.outer(diag, diag)  # > 0: the 2×2 minor is indefinite
        np.fill_diagonal(violation, -np.inf)
        i, j = np.unravel_index(np.argmax(violation), violation.shape)
        negative_diag = np.flatnonzero(diag < -tolerance)
        if violation[i, j] > tolerance * scale:
            worst_pair = (int(min(i, j)), int(max(i, j)))
        elif negative_diag.size:  # k(x, x) < 0 is the smallest witness of all
            worst_pair = (int(negative_diag[0]), int(negative_diag[0]))
    return MercerReport(
        passed=bool(is_symmetric and psd),
        is_symmetric=bool(is_symmetric),
        max_asymmetry=max_asymmetry,
        min_eigenvalue=min_eigenvalue,
        negative_mass=negative_mass,
        tolerance=float(tolerance),
        n_samples=int(m),
        worst_pair=worst_pair,
        worst_eigenvector=worst_vector,
        sample_indices=indices,
    )
