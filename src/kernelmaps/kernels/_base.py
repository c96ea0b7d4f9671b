r"""The :class:`Kernel` currency and the one resolver that turns user arguments into it.

Every estimator of kernelmaps calls :func:`resolve_kernel` once, in ``fit``, and keeps the
result as its fitted ``kernel_``; from then on kernel values come from that object only:

``kernel(X, Y=None)``
    the ``(n_X, n_Y)`` matrix, in row blocks on the engine;
``kernel.matmul(X, Y, V)``
    :math:`K(X, Y)\,V` in row blocks, never holding :math:`K(X, Y)` (predictions of kernel
    machines, Fisher projections, kernel means);
``kernel.reduce(X, Y, fn, *aligned)``
    :math:`\sum_b f(K(X_b, Y), a_b)` over row blocks :math:`b` (FALKON's
    :math:`K_{nM}^\top K_{nM} v`, leverage scores), one block per thread in memory;
``kernel.diag(X)``
    :math:`k(x, x)` per row.

A user's function is a :class:`CallableKernel`, a user's matrix a :class:`PrecomputedKernel`,
so callers never branch on what the user passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_array

from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import FLOAT_DTYPES, reduce_blocks, run_blocks, scratch_buffer

if TYPE_CHECKING:
    from kernelmaps.kernels.spectral import SpectralDensity

__all__ = [
    "KERNELS",
    "CallableKernel",
    "IndefiniteKernelWarning",
    "Kernel",
    "PrecomputedKernel",
    "get_kernel",
    "register_kernel",
    "resolve_kernel",
]

_NONFINITE_HINT = (
    "check the kernel's parameters (e.g. a non-integer polynomial degree on negative inner "
    "products) or rescale the data if it overflowed."
)


class IndefiniteKernelWarning(UserWarning):
    """A kernel matrix that should be positive semi-definite has negative eigenvalues."""


class Kernel:
    """A kernel function k(x, y) with its parameters.

    Call it as ``kernel(X, Y=None)`` to get the ``(n_X, n_Y)`` matrix (computed in row
    blocks), ``kernel.matmul(X, Y, V)`` for ``K(X, Y) @ V`` without holding ``K``, or
    ``kernel.diag(X)`` for k(x, x). float32 inputs give float32 values.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> rng = np.random.RandomState(0)
    >>> X, V = rng.normal(size=(6, 3)), rng.normal(size=2)
    >>> kernel = get_kernel("rbf", gamma=0.5)
    >>> kernel(X, X[:2]).shape
    (6, 2)
    >>> bool(np.allclose(kernel.matmul(X, X[:2], V), kernel(X, X[:2]) @ V))
    True
    >>> kernel.diag(X)
    array([1., 1., 1., 1., 1., 1.])
    >>> kernel(X.astype(np.float32)).dtype
    dtype('float32')
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
        return hash((type(self), tuple(sorted(self.get_params().items(), key=repr))))

    # -- validation -----------------------------------------------------------------
    def _check(self, X: Any, name: str) -> Any:
        X = check_array(X, accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name=name)
        if self.requires_non_negative:
            values = X.data if sp.issparse(X) else X
            if values.size and values.min() < 0:
                raise ValueError(
                    f"{name} contains negative values, but the {self.name} kernel is defined "
                    "for non-negative data (histograms); shift or rescale the features."
                )
        return X

    def _check_pair(self, X: Any, Y: Any) -> tuple[Any, Any]:
        X = self._check(X, "X")
        Y = X if Y is None else self._check(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but Y has {Y.shape[1]}: kernel arguments must "
                "have the same number of features."
            )
        return X, Y

    # -- evaluation -----------------------------------------------------------------
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
        symmetric = Y is None
        X, Y = self._check_pair(X, Y)
        K = run_blocks(
            X,
            n_out=Y.shape[0],
            dtype=self._result_dtype(X, Y),
            block_fn=lambda xb, ob: self.evaluate_into(xb, Y, ob),
            temp_bytes_per_row=self._temp_bytes_per_row(Y),
            n_threads=1,
            name=repr(self),
            nonfinite_hint=_NONFINITE_HINT,
        )
        if symmetric:
            self._fix_diagonal(X, K)
        return K

    def matmul(self, X: Any, Y: Any, V: Any, *, n_threads: int | None = None) -> np.ndarray:
        """``K(X, Y) @ V`` in row blocks of ``X``, never holding ``K(X, Y)``.

        Memory beyond the result is one ``(block, n_Y)`` kernel block per thread, so this is
        what predictions of kernel machines use on any number of rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_X, n_features)
        Y : {array-like, sparse matrix} of shape (n_Y, n_features)
        V : array-like of shape (n_Y,) or (n_Y, k)
        n_threads : int or None, default=None
            Threads for the row blocks; ``None``: the process setting (:func:`set_config`).

        Returns
        -------
        ndarray of shape (n_X,) or (n_X, k)
            In the dtype of the kernel values (float32 for float32 inputs).
        """
        X, Y = self._check_pair(X, Y)
        return self._matmul(X, Y, V, n_threads=n_threads)

    def _matmul(self, X: Any, Y: Any, V: Any, *, n_threads: int | None = None) -> np.ndarray:
        dtype = self._result_dtype(X, Y)
        V = np.asarray(V)
        if V.shape[0] != self._n_columns(Y):
            raise ValueError(f"V has {V.shape[0]} rows but K(X, Y) has {self._n_columns(Y)} "
                             "columns: V must have one row per row of Y.")
        squeeze = V.ndim == 1
        V = np.ascontiguousarray(V.reshape(V.shape[0], -1), dtype=dtype)
        m = self._n_columns(Y)

        def block(xb: Any, out: np.ndarray) -> None:
            kb = scratch_buffer("kernel_matmul", (xb.shape[0], m), dtype)
            self.evaluate_into(xb, Y, kb)
            np.matmul(kb, V, out=out)

        result = run_blocks(X, n_out=V.shape[1], dtype=dtype, block_fn=block,
                            temp_bytes_per_row=8 * m + self._temp_bytes_per_row(Y),
                            n_threads=resolve_n_threads(n_threads), name=f"{self!r}.matmul",
                            nonfinite_hint=_NONFINITE_HINT)
        return result[:, 0] if squeeze else result

    def reduce(self, X: Any, Y: Any, fn: Callable[..., np.ndarray], *aligned: Any,
               n_threads: int | None = None) -> np.ndarray:
        r""":math:`\sum_b` ``fn(K(X_b, Y), *aligned_b)`` over row blocks ``b`` of ``X``.

        ``aligned`` are arrays with one row per row of ``X`` (weights, targets), sliced
        with each block. The sum is accumulated in float64 in block order, so it does not
        depend on the thread count. Inputs are not validated (callers pass validated data).
        """
        m = self._n_columns(Y)
        dtype = self._result_dtype(X, Y)

        def block(xb: Any, *parts: Any) -> np.ndarray:
            kb = scratch_buffer("kernel_reduce", (xb.shape[0], m), dtype)
            self.evaluate_into(xb, Y, kb)
            return fn(kb, *parts)

        return reduce_blocks(X, block, aligned=aligned,
                             bytes_per_row=3 * 8 * m + self._temp_bytes_per_row(Y),
                             n_threads=resolve_n_threads(n_threads))

    def evaluate(self, X: Any, Y: Any) -> np.ndarray:
        """One block of the kernel matrix, without validation (inputs already checked)."""
        K = np.empty((X.shape[0], self._n_columns(Y)), dtype=self._result_dtype(X, Y))
        self.evaluate_into(X, Y, K)
        return K

    def evaluate_into(self, X: Any, Y: Any, out: np.ndarray) -> None:  # pragma: no cover
        """Write the block ``k(X, Y)`` into ``out`` (validated inputs)."""
        raise NotImplementedError

    def _n_columns(self, Y: Any) -> int:
        return Y.shape[0]

    def _result_dtype(self, X: Any, Y: Any) -> np.dtype:
        return np.dtype(np.result_type(X.dtype, Y.dtype))

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
        for i in range(X.shape[0]):
            row = X[i:i + 1]
            out[i] = self.evaluate(row, row)[0, 0]
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


class CallableKernel(Kernel):
    """A user's function seen as a :class:`Kernel`.

    ``vectorized=False`` (scikit-learn's convention, as in ``Nystroem(kernel=f)``): ``f(x, y,
    **params)`` takes two 1-D rows and returns a number; values come from scikit-learn's
    pairwise driver. ``vectorized=True``: ``f(X, Y, **params)`` returns the whole block.

    Parameters
    ----------
    function : callable
    params : dict or None
        Keyword arguments passed to ``function`` (a model's ``kernel_params``).
    n_jobs : int or None
        Parallelism of scikit-learn's pairwise driver (pairwise callables only).
    vectorized : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import laplacian_kernel
    >>> from kernelmaps.kernels import CallableKernel
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> def k(x, y, scale=1.0):  # on two rows, as scikit-learn's callables
    ...     return np.exp(-scale * np.abs(x - y).sum())
    >>> pairwise = CallableKernel(k, {"scale": 0.5})
    >>> bool(np.allclose(pairwise(X), laplacian_kernel(X, gamma=0.5)))
    True
    >>> blocks = CallableKernel(lambda A, B: laplacian_kernel(A, B, gamma=0.5), vectorized=True)
    >>> bool(np.allclose(blocks(X, X[:2]), pairwise(X, X[:2])))
    True
    """

    name = "callable"
    is_psd = True  # unknown: assumed, and checked where it matters (Nystroem warns)

    def __init__(self, function: Callable[..., Any], params: dict | None = None, *,
                 n_jobs: int | None = None, vectorized: bool = False) -> None:
        if not callable(function):
            raise TypeError(f"function must be callable; got {function!r}.")
        self.function = function
        self.params = dict(params or {})
        self.n_jobs = n_jobs
        self.vectorized = vectorized

    def get_params(self) -> dict[str, Any]:
        return {"function": self.function, "params": self.params, "n_jobs": self.n_jobs,
                "vectorized": self.vectorized}

    def __hash__(self) -> int:
        return hash((type(self), self.function, self.vectorized))

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        if self.vectorized or Y is not None:
            return super().__call__(X, Y)
        # scikit-learn's driver evaluates a symmetric matrix once per unordered pair.
        X = self._check(X, "X")
        return np.asarray(pairwise_kernels(X, None, metric=self.function, n_jobs=self.n_jobs,
                                           **self.params))

    def evaluate_into(self, X, Y, out):
        if not self.vectorized:
            out[...] = pairwise_kernels(X, Y, metric=self.function, n_jobs=self.n_jobs,
                                        **self.params)
            return
        block = np.asarray(self.function(X, Y, **self.params))
        if block.shape != out.shape:
            raise ValueError(
                f"the kernel function returned shape {block.shape} for blocks of {X.shape[0]} "
                f"and {Y.shape[0]} rows; a vectorised kernel must return the "
                f"({X.shape[0]}, {Y.shape[0]}) matrix k(X, Y)."
            )
        out[...] = block


class PrecomputedKernel(Kernel):
    """Kernel values the user computed: rows of ``X`` are :math:`k(x_i, t_j)` against the
    training points :math:`t_1..t_n`.

    ``Y`` names training points by index: ``kernel(X, Y)`` and ``kernel.matmul(X, Y, V)``
    take the columns ``Y`` (an integer array; ``None``: all columns) of ``X``. So a model
    fitted on the square training matrix predicts from the rectangular ``k(X_new, X_train)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import PrecomputedKernel, RBFKernel
    >>> X = np.random.RandomState(0).normal(size=(5, 2))
    >>> K = RBFKernel(gamma=0.5)(X)  # k(x_i, t_j) with the training points t = X
    >>> pre = PrecomputedKernel()
    >>> bool(np.array_equal(pre(K, np.array([0, 3])), K[:, [0, 3]]))
    True
    >>> bool(np.allclose(pre.matmul(K, np.array([0, 3]), [1.0, -1.0]), K[:, 0] - K[:, 3]))
    True
    >>> pre.diag(K)  # k(t_i, t_i) from the square training matrix
    array([1., 1., 1., 1., 1.])
    """

    name = "precomputed"

    def _check(self, X: Any, name: str) -> Any:
        return check_array(X, accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name=name)

    def _check_pair(self, X: Any, Y: Any) -> tuple[Any, Any]:
        X = self._check(X, "X")
        columns = np.arange(X.shape[1]) if Y is None else np.asarray(Y)
        if columns.ndim != 1 or (columns.size and (
                not np.issubdtype(columns.dtype, np.integer)
                or columns.min() < 0 or columns.max() >= X.shape[1])):
            raise ValueError(
                "With a precomputed kernel, Y must be the indices of training points (an "
                f"integer array of columns of X, each in [0, {X.shape[1]})); got {Y!r}."
            )
        return X, columns

    def _n_columns(self, Y: Any) -> int:
        return len(Y)

    def _result_dtype(self, X: Any, Y: Any) -> np.dtype:
        return np.dtype(X.dtype)

    def _temp_bytes_per_row(self, Y: Any) -> int:
        return 8 * len(Y)

    def evaluate_into(self, X, Y, out):
        out[...] = dense_block(X[:, Y])

    def _diag(self, X):
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                "k(x, x) of new points is not in a precomputed kernel matrix k(X_new, X_train); "
                f"only the square training matrix has it on its diagonal (got shape {X.shape})."
            )
        return np.asarray(dense_block(X).diagonal()).copy()


#: Kernel classes by name (scikit-learn's names, plus aliases); filled by
#: :func:`register_kernel` in the modules of :mod:`kernelmaps.kernels`.
KERNELS: dict[str, type[Kernel]] = {}


def register_kernel(cls: type[Kernel] | None = None, *, aliases: tuple[str, ...] = ()) -> Any:
    """Class decorator: make ``cls`` known to :func:`get_kernel` / :func:`resolve_kernel`
    under ``cls.name`` (and ``aliases``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import KERNELS, Kernel, get_kernel, register_kernel
    >>> @register_kernel
    ... class MinKernel(Kernel):  # histogram intersection k(x, y) = Σ_i min(x_i, y_i)
    ...     name = "doctest_min"
    ...     def evaluate_into(self, X, Y, out):
    ...         out[...] = np.minimum(X[:, None, :], Y[None, :, :]).sum(axis=-1)
    >>> get_kernel("doctest_min")(np.array([[1.0, 2.0], [3.0, 0.5]]))
    array([[3. , 1.5],
           [1.5, 3.5]])
    >>> del KERNELS["doctest_min"]  # undo the registration
    """

    def register(kernel_class: type[Kernel]) -> type[Kernel]:
        for name in (kernel_class.name, *aliases):
            if not name or name in ("precomputed", "callable"):
                raise ValueError(f"{kernel_class.__name__} needs a name other than {name!r}.")
            KERNELS[name] = kernel_class
        return kernel_class

    return register if cls is None else register(cls)


def get_kernel(kernel: str | Kernel, **params: Any) -> Kernel:
    """Return a :class:`Kernel` from a name and its parameters (a Kernel passes through).

    Parameters
    ----------
    kernel : str or Kernel
        One of ``sorted(KERNELS)`` or a Kernel instance.
    **params
        The kernel's parameters (see each class). Unknown names raise ``TypeError``.

    Returns
    -------
    Kernel

    Examples
    --------
    >>> from kernelmaps.kernels import get_kernel
    >>> get_kernel("rbf", gamma=0.5)
    RBFKernel(gamma=0.5, sigma=None)
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


def resolve_kernel(kernel: str | Kernel | Callable[..., Any] = "rbf", *,
                   gamma: float | None = None, degree: float | None = None,
                   coef0: float | None = None, kernel_params: dict | None = None,
                   n_jobs: int | None = None, vectorized: bool = False,
                   strict: bool = False, owner: str = "the estimator") -> Kernel:
    """Turn what a user passed as a kernel into a :class:`Kernel` — the one place that does.

    Mirrors how scikit-learn estimators take a kernel:

    * a name plus ``gamma``/``degree``/``coef0`` (each used only if the named kernel has that
      parameter, as scikit-learn's ``filter_params`` does) and ``kernel_params`` for the rest;
    * a :class:`Kernel` object (returned as it is);
    * a callable, which becomes a :class:`CallableKernel` (``kernel_params`` are its keyword
      arguments; ``vectorized`` says whether it takes blocks or pairs of rows);
    * ``"precomputed"``, which becomes a :class:`PrecomputedKernel`.

    Parameters
    ----------
    kernel : str, Kernel or callable
    gamma, degree, coef0 : float or None
        scikit-learn's shortcut parameters of named kernels.
    kernel_params : dict or None
        Further parameters of a named kernel, or keyword arguments of a callable.
    n_jobs : int or None
        Parallelism of scikit-learn's pairwise driver for pairwise callables.
    vectorized : bool, default=False
        Whether a callable computes whole blocks ``f(X, Y) -> matrix``.
    strict : bool, default=False
        Refuse ``gamma``/``degree``/``coef0`` with a Kernel object, a callable or
        ``"precomputed"`` (scikit-learn's Nystroem does; its KernelRidge ignores them).
    owner : str
        Who is asking, for error messages.

    Returns
    -------
    Kernel

    Examples
    --------
    >>> from kernelmaps.kernels import resolve_kernel
    >>> resolve_kernel("poly", gamma=0.5, degree=2, coef0=1.0)
    PolynomialKernel(gamma=0.5, degree=2, coef0=1.0)
    >>> resolve_kernel("rbf", gamma=0.1, degree=3)  # degree is not an rbf parameter
    RBFKernel(gamma=0.1, sigma=None)
    """
    named = isinstance(kernel, str) and kernel != "precomputed"
    if strict and not named and any(v is not None for v in (gamma, degree, coef0)):
        raise ValueError(
            f"Don't pass gamma, coef0 or degree to {owner} if using a callable or precomputed "
            "kernel (or a Kernel object): give the kernel's parameters to the kernel itself "
            "(kernel_params for a callable)."
        )
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str) and kernel == "precomputed":
        return PrecomputedKernel()
    if callable(kernel):
        return CallableKernel(kernel, kernel_params, n_jobs=n_jobs, vectorized=vectorized)
    if not named or kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r} for {owner}; valid names are "
                         f"{[*sorted(KERNELS), 'precomputed']}, a Kernel or a callable.")
    accepted = KERNELS[kernel].param_names
    params = {k: v for k, v in (kernel_params or {}).items() if k in accepted}
    for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        if name in accepted and value is not None:
            params[name] = value
    return get_kernel(kernel, **params)


# ----------------------------------------------------------------- block helpers of kernels
def check_positive(name: str, value: Any, kernel: str, *, allow_none: bool = True,
                   allow_zero: bool = False) -> None:
    """Validate a positive (or non-negative) real kernel parameter."""
    if value is None and allow_none:
        return
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{kernel} kernel: {name} must be a real number; got {value!r}.")
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{kernel} kernel: {name} must be finite and {bound}; got {value!r}.")


def check_real(name: str, value: Any, kernel: str) -> None:
    """Validate a finite real kernel parameter (``None`` allowed)."""
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


def dense_block(X: Any) -> np.ndarray:
    """A row block as a dense array (sparse blocks are small enough to densify)."""
    return X.toarray() if sp.issparse(X) else X
