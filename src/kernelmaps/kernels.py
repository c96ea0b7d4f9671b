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
    "Chi2Kernel",
    "CosineKernel",
    "IndefiniteKernelWarning",
    "Kernel",
    "LaplacianKernel",
    "LinearKernel",
    "PolynomialKernel",
    "RBFKernel",
    "SigmoidKernel",
    "get_kernel",
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
    r"""Gaussian (RBF) kernel :math:`k(x, y) = \exp(-\gamma\|x-y\|^2)`.

    The squared distance is expanded as :math:`\|x\|^2 + \|y\|^2 - 2\langle x,y\rangle` (one
    BLAS call) and clipped at zero against rounding, as scikit-learn does.

    Parameters
    ----------
    gamma : float or None, default=None
        Inverse squared length scale; ``None`` means ``1 / n_features``.
    """

    name = "rbf"
    param_names = ("gamma",)

    def __init__(self, gamma: float | None = None) -> None:
        _check_positive("gamma", gamma, "rbf", allow_zero=True)
        self.gamma = gamma

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
        _check_positive("gamma", gamma, "laplacian", allow_zero=True)
        self.gamma = gamma

    def evaluate_into(self, X, Y, out):
        # scikit-learn's compiled L1 distance (dense: scipy cdist, sparse: Cython).
        out[...] = manhattan_distances(X, Y)
        out *= -self._gamma(X.shape[1])
        np.exp(out, out=out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)


class SigmoidKernel(Kernel):
    r"""Sigmoid kernel :math:`k(x, y) = \tanh(\gamma\langle x, y\rangle + c_0)`.

    Not positive semi-definite in general (Lin & Lin, 2003): Nystroem warns when its
    landmark matrix turns out indefinite.
    """

    name = "sigmoid"
    param_names = ("gamma", "coef0")
    is_psd = False

    def __init__(self, gamma: float | None = None, coef0: float | None = None) -> None:
        _check_positive("gamma", gamma, "sigmoid", allow_zero=True)
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
        _check_positive("gamma", gamma, "chi2", allow_zero=True)
        self.gamma = gamma

    def evaluate_into(self, X, Y, out):
        _additive_chi2_into(X, Y, out)
        out *= 1.0 if self.gamma is None else self.gamma
        np.exp(out, out=out)

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)


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
}


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
