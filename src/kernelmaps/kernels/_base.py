r"""The :class:`Kernel` currency and the one resolver that turns user arguments into it.

Every estimator of kernelmaps calls :func:`resolve_kernel` once, in ``fit``, and keeps the
result as its fitted ``kernel_``; from then on kernel values come from that object only:

``kernel(X, Y=None)``
    the ``(n_X, n_Y)`` matrix, in row blocks on the engine;
``kernel.matmul(X, Y, V, accumulate=None)``
    :math:`K(X, Y)\,V` in row blocks, never holding :math:`K(X, Y)`, summed in the kernel
    values' dtype or in ``accumulate`` (predictions of kernel machines, Fisher projections,
    kernel means; ``evaluate_matmul`` for inputs already validated);
``kernel.reduce(X, Y, fn, *aligned)``
    :math:`\sum_b f(K(X_b, Y), a_b)` over row blocks :math:`b` (FALKON's
    :math:`K_{nM}^\top K_{nM} v`, leverage scores), one block per thread in memory;
``kernel.diag(X)``
    :math:`k(x, x)` per row.

A user's function is a :class:`CallableKernel`, a user's matrix a :class:`PrecomputedKernel`,
so callers never branch on what the user passed.

Every kernel also computes on any array-API array (PyTorch, CuPy, ``array_api_strict``) with
scikit-learn's ``array_api_dispatch=True``: each class has ``_evaluate_device(xp, X, Y)``
(the block in the arrays' own namespace and device) and ``_diag_device(xp, X)``, and the
public methods above dispatch to them, through the engine's device path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.utils.validation import check_array

from kernelmaps._array_api import (
    float_dtypes,
    is_device_array,
    itemsize,
    matmul,
    min_value,
    namespace_and_device,
    on_device,
    set_diagonal,
)
from kernelmaps._config import resolve_n_threads
from kernelmaps._docstrings import inherit_docstrings
from kernelmaps._engine import reduce_blocks, run_blocks, scratch_buffer
from kernelmaps.kernels._gamma import gamma_value, is_gamma_heuristic
from kernelmaps.kernels._ops import _float_dtypes_of

if TYPE_CHECKING:
    from kernelmaps.kernels.spectral import SpectralDensity

_NONFINITE_HINT = (
    "check the kernel's parameters (e.g. a non-integer polynomial degree on negative inner "
    "products) or rescale the data if it overflowed."
)


class IndefiniteKernelWarning(UserWarning):
    """A kernel matrix that should be positive semi-definite has negative eigenvalues.

    Examples
    --------
    Turn the warning into an error, to refuse an indefinite landmark matrix:

    >>> import warnings
    >>> from kernelmaps.kernels import IndefiniteKernelWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", IndefiniteKernelWarning)
    """



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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # evaluate_into / rounding_error overrides implement the contract documented here.
        inherit_docstrings(cls)


    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The kernel's parameters as a dict, scikit-learn's estimator convention.

        With :meth:`~kernelmaps.kernels.Kernel.set_params` this makes a kernel object searchable and
        clonable like an estimator: :func:`sklearn.base.clone` copies a kernel passed as an
        estimator parameter, and ``GridSearchCV`` reaches its parameters as
        ``nystroem__kernel__gamma``.

        Parameters
        ----------
        deep : bool, default=True
            Accepted for scikit-learn's protocol; a kernel holds no nested estimators.

        Returns
        -------
        dict
            Parameter name → value, in the order of the constructor.
        """
        return {p: getattr(self, p) for p in self.param_names}

    def set_params(self, **params: Any) -> Kernel:
        """Set parameters in place, validated exactly as the constructor validates them.

        The new values are checked by building a kernel of the same class from the merged
        parameters, so ``set_params(gamma=-1)`` raises the constructor's ``ValueError`` and
        leaves the kernel unchanged.

        Parameters
        ----------
        **params
            Parameter names of :meth:`~kernelmaps.kernels.Kernel.get_params` and their new values.

        Returns
        -------
        self : Kernel
            This kernel, with the new parameters (validated by its constructor).

        Examples
        --------
        >>> from kernelmaps.kernels import get_kernel
        >>> get_kernel("rbf", gamma=0.5).set_params(gamma=2.0)
        RBFKernel(gamma=2.0, sigma=None)
        """
        if not params:
            return self
        current = self.get_params(deep=False)
        unknown = sorted(set(params) - set(current))
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has no parameter(s) {unknown}; its parameters are "
                f"{list(current) or 'none'}."
            )
        checked = type(self)(**{**current, **params})
        self.__dict__.update(checked.__dict__)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.get_params().items(), key=repr))))

    # -- validation -----------------------------------------------------------------
    def _check(self, X: Any, name: str) -> Any:
        X = check_array(X, accept_sparse="csr", dtype=_float_dtypes_of(X), input_name=name)
        if self.requires_non_negative and min_value(X) < 0:
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
    def __call__(self, X: Any, Y: Any = None, *, out: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y=None``: ``Y = X``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_X, n_features)
        Y : {array-like, sparse matrix} of shape (n_Y, n_features), default=None
        out : ndarray of shape (n_X, n_Y), default=None
            Where to write ``K`` (host arrays only): a C-contiguous array of the values'
            dtype (float64 for float64 inputs), filled in blocks of rows and returned — a
            large matrix built in its final memory, with no temporary of its size.

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            ``out`` when given.
        """
        symmetric = Y is None
        X, Y = self._check_pair(X, Y)
        if is_device_array(X):
            if out is not None:
                raise ValueError("out applies to host (NumPy) arrays only; a device array's "
                                 "kernel matrix is returned on its device (drop out).")
            return self._call_device(X, Y, symmetric)
        K = run_blocks(
            X,
            n_out=Y.shape[0],
            dtype=self._result_dtype(X, Y),
            block_fn=lambda xb, ob: self.evaluate_into(xb, Y, ob),
            temp_bytes_per_row=self._temp_bytes_per_row(Y),
            n_threads=resolve_n_threads(),
            name=repr(self),
            nonfinite_hint=_NONFINITE_HINT,
            out=out,
        )
        if symmetric:
            self._fix_diagonal(X, K)
        return K

    def matmul(self, X: Any, Y: Any, V: Any, *, n_threads: int | None = None,
               accumulate: Any = None) -> np.ndarray:
        r"""``K(X, Y) @ V`` in row blocks of ``X``, never holding ``K(X, Y)``.

        Memory beyond the result is one ``(block, n_Y)`` kernel block per thread, so this is
        what predictions of kernel machines use on any number of rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_X, n_features)
            The rows of the kernel matrix.
        Y : {array-like, sparse matrix} of shape (n_Y, n_features)
            The columns of the kernel matrix.
        V : array-like of shape (n_Y,) or (n_Y, k)
            The vector or matrix multiplied, one row per row of ``Y``.
        n_threads : int or None, default=None
            Threads for the row blocks; ``None``: the process setting
            (:func:`kernelmaps.set_config`).
        accumulate : dtype or None, default=None
            The dtype the products are summed in. ``None``: the kernel values' dtype
            (float32 for float32 inputs). ``numpy.float64``: each kernel block, still
            computed in the inputs' dtype, is widened to float64 before it is multiplied
            (float64 where an array-API device has it) — a float32 sum of ``n_Y`` terms
            :math:`k(x, y_j)\,v_j` loses up to :math:`n_Y\varepsilon_{32}\sum_j
            |k(x, y_j)||v_j|`, far more than the kernel values' own rounding when ``V`` has
            cancelling entries (the dual coefficients of kernel machines).

        Returns
        -------
        ndarray of shape (n_X,) or (n_X, k)
            ``K(X, Y) @ V``, in the dtype of the kernel values (float32 for float32 inputs),
            or in ``accumulate``.
        """
        X, Y = self._check_pair(X, Y)
        return self.evaluate_matmul(X, Y, V, n_threads=n_threads, accumulate=accumulate)

    def evaluate_matmul(self, X: Any, Y: Any, V: Any, *, n_threads: int | None = None,
                        accumulate: Any = None, name: str | None = None) -> Any:
        """:meth:`matmul` of validated inputs, as :meth:`evaluate` is of a block.

        Parameters
        ----------
        X, Y : {ndarray, sparse matrix, device array}
            The rows and the columns of the kernel matrix, validated (as :meth:`evaluate`
            takes them).
        V : array-like of shape (n_Y,) or (n_Y, k)
            The vector or matrix multiplied, one row per row of ``Y``.
        n_threads : int or None, default=None
            Threads for the row blocks; ``None``: the process setting.
        accumulate : dtype or None, default=None
            The dtype the products are summed in (see :meth:`matmul`).
        name : str or None, default=None
            What an error about a non-finite value names (the caller's method);
            ``None``: this kernel's ``matmul``.

        Returns
        -------
        array of shape (n_X,) or (n_X, k)
            ``K(X, Y) @ V`` (an array of ``X``'s namespace and device for device arrays).
        """
        name = f"{self!r}.matmul" if name is None else name
        if is_device_array(X):
            return self._matmul_device(X, Y, V, accumulate, name)
        dtype = self._result_dtype(X, Y)
        sums = dtype if accumulate is None else np.dtype(accumulate)
        V = np.asarray(V)
        if V.shape[0] != self._n_columns(Y):
            raise ValueError(f"V has {V.shape[0]} rows but K(X, Y) has {self._n_columns(Y)} "
                             "columns: V must have one row per row of Y.")
        squeeze = V.ndim == 1
        V = np.ascontiguousarray(V.reshape(V.shape[0], -1), dtype=sums)
        m = self._n_columns(Y)
        widen = sums != dtype

        def block(xb: Any, out: np.ndarray) -> None:
            kb = scratch_buffer("kernel_matmul", (xb.shape[0], m), dtype)
            self.evaluate_into(xb, Y, kb)
            if widen:  # into this thread's float64 buffer, then a float64 product
                wide = scratch_buffer("kernel_matmul_wide", kb.shape, sums)
                np.copyto(wide, kb)
                kb = wide
            np.matmul(kb, V, out=out)

        # Per row: the kernel block (8 bytes a value, float32's counted as float64's) and,
        # with accumulate, room for its float64 copy beside a float32 block (12).
        result = run_blocks(X, n_out=V.shape[1], dtype=sums, block_fn=block,
                            temp_bytes_per_row=(8 if accumulate is None else 12) * m
                            + self._temp_bytes_per_row(Y),
                            n_threads=resolve_n_threads(n_threads), name=name,
                            nonfinite_hint=_NONFINITE_HINT)
        return result[:, 0] if squeeze else result

    def reduce(self, X: Any, Y: Any, fn: Callable[..., np.ndarray], *aligned: Any,
               n_threads: int | None = None) -> np.ndarray:
        r"""Sum ``fn(K(X_b, Y), *aligned_b)`` over the row blocks ``b`` of ``X``.

        The sum :math:`\sum_b` is accumulated in float64 in block order, so it does not
        depend on the thread count. Inputs are not validated (callers pass validated data).

        Parameters
        ----------
        X : {ndarray, sparse matrix, device array} of shape (n_X, n_features)
            Validated rows, cut into blocks.
        Y : {ndarray, sparse matrix, device array} of shape (n_Y, n_features)
            Validated columns, whole in every block.
        fn : callable
            ``fn(K_b, *aligned_b)`` with ``K_b`` the ``(block, n_Y)`` kernel block; returns
            an array of the same shape for every block.
        *aligned : array-like
            Arrays with one row per row of ``X`` (weights, targets), sliced with each block.
        n_threads : int or None, default=None
            Threads for the row blocks; ``None``: the process setting
            (:func:`kernelmaps.set_config`).

        Returns
        -------
        ndarray
            The sum of ``fn``'s values over the blocks.
        """
        m = self._n_columns(Y)
        if is_device_array(X):
            xp, _ = namespace_and_device(X)
            Y = self._device_columns(xp, X, Y)
            # A device block holds its kernel rows and about one temporary of their size.
            bytes_per_row = 2 * itemsize(xp, self._device_dtype(xp, X, Y)) * m \
                + self._temp_bytes_per_row(Y)
            return reduce_blocks(
                X, lambda xb, *parts: fn(self._evaluate_device(xp, xb, Y), *parts),
                aligned=aligned, bytes_per_row=bytes_per_row)
        dtype = self._result_dtype(X, Y)

        def block(xb: Any, *parts: Any) -> np.ndarray:
            kb = scratch_buffer("kernel_reduce", (xb.shape[0], m), dtype)
            self.evaluate_into(xb, Y, kb)
            return fn(kb, *parts)

        return reduce_blocks(X, block, aligned=aligned,
                             bytes_per_row=3 * 8 * m + self._temp_bytes_per_row(Y),
                             n_threads=resolve_n_threads(n_threads))

    def evaluate(self, X: Any, Y: Any) -> np.ndarray:
        """Compute one block of the kernel matrix, without validation.

        Parameters
        ----------
        X : {ndarray, sparse matrix, device array} of shape (n_X, n_features)
            Validated rows.
        Y : {ndarray, sparse matrix, device array} of shape (n_Y, n_features)
            Validated columns.

        Returns
        -------
        ndarray of shape (n_X, n_Y)
            ``k(X[i], Y[j])``, in the dtype of the inputs (an array of ``X``'s namespace
            and device for device arrays).
        """
        if is_device_array(X):
            xp, _ = namespace_and_device(X)
            return self._evaluate_device(xp, X, self._device_columns(xp, X, Y))
        K = np.empty((X.shape[0], self._n_columns(Y)), dtype=self._result_dtype(X, Y))
        self.evaluate_into(X, Y, K)
        return K

    def evaluate_into(self, X: Any, Y: Any, out: np.ndarray) -> None:  # pragma: no cover
        """Write the block ``k(X, Y)`` into ``out`` (validated inputs).

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_X, n_features)
            Validated rows.
        Y : {ndarray, sparse matrix} of shape (n_Y, n_features)
            Validated columns.
        out : ndarray of shape (n_X, n_Y)
            The array written, in the dtype of the kernel values.
        """
        raise NotImplementedError

    def rounding_error(self, X: Any, Y: Any, K: np.ndarray) -> np.ndarray | None:
        r"""A bound on the rounding error of each value of ``K = self.evaluate(X, Y)``.

        :math:`E` with :math:`|K_{ij} - k(x_i, y_j)| \le E_{ij}` to first order in the machine
        epsilon of ``K``'s dtype, whatever BLAS kernel, block size or thread count computed ``K``
        (each kernel's derivation, from Higham's bounds, is in ``docs/kernels.md``). The Mercer
        check judges symmetry and positive semi-definiteness against it. ``None`` (this default):
        the kernel declares no bound, and :func:`~kernelmaps.kernels.check_mercer` assumes
        :math:`\sqrt\epsilon\max|K|`.

        Parameters
        ----------
        X, Y : {ndarray, sparse matrix}
            Validated inputs, as given to :meth:`~kernelmaps.kernels.Kernel.evaluate`.
        K : ndarray of shape (n_X, n_Y)
            The values :meth:`~kernelmaps.kernels.Kernel.evaluate` computed from them.

        Returns
        -------
        ndarray of shape (n_X, n_Y), float64, or None
            The bound :math:`E`, or ``None`` where the kernel declares none.
        """
        return None

    def _n_columns(self, Y: Any) -> int:
        return Y.shape[0]

    def _result_dtype(self, X: Any, Y: Any) -> np.dtype:
        return np.dtype(np.result_type(X.dtype, Y.dtype))

    def _temp_bytes_per_row(self, Y: Any) -> int:
        return 0

    def _fix_diagonal(self, X: Any, K: np.ndarray) -> None:
        """Make k(x, x) exact on the diagonal of a symmetric evaluation (distance kernels)."""

    def diag(self, X: Any) -> np.ndarray:
        """Compute the values k(x, x) for each row of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The points.

        Returns
        -------
        ndarray of shape (n_samples,)
            The values k(x, x), one per row, in the dtype of the kernel values.
        """
        X = self._check(X, "X")
        if is_device_array(X):
            return self._diag_device(namespace_and_device(X)[0], X)
        return self._diag(X)

    def _diag(self, X: Any) -> np.ndarray:
        out = np.empty(X.shape[0], dtype=X.dtype)
        for i in range(X.shape[0]):
            row = X[i:i + 1]
            out[i] = self.evaluate(row, row)[0, 0]
        return out

    # -- the device path (array API dispatch) -------------------------------------
    def _evaluate_device(self, xp: Any, X: Any, Y: Any) -> Any:  # pragma: no cover
        """The block ``k(X, Y)`` as a new array of ``X``'s namespace and device."""
        raise NotImplementedError

    def _diag_device(self, xp: Any, X: Any) -> Any:
        """k(x, x) per row on the device; this default evaluates rows one at a time
        (kernels with a closed form override it)."""
        return xp.concat([self._evaluate_device(xp, X[i:i + 1, ...], X[i:i + 1, ...])[0, ...]
                          for i in range(X.shape[0])])

    #: Whether a symmetric evaluation gets the exact diagonal (see ``_fix_diagonal``).
    _exact_diagonal: ClassVar[bool] = False

    def _device_columns(self, xp: Any, X: Any, Y: Any) -> Any:
        """``Y`` as the block functions need it next to ``X`` (same namespace/device)."""
        return on_device(Y, xp, namespace_and_device(X)[1])

    def _device_dtype(self, xp: Any, X: Any, Y: Any) -> Any:
        return xp.result_type(X.dtype, Y.dtype)

    def _call_device(self, X: Any, Y: Any, symmetric: bool) -> Any:
        xp, _ = namespace_and_device(X)
        Y = self._device_columns(xp, X, Y)
        dtype = self._device_dtype(xp, X, Y)
        K = run_blocks(X, n_out=self._n_columns(Y), dtype=dtype,
                       block_fn=lambda xb, out: self._evaluate_device(xp, xb, Y),
                       temp_bytes_per_row=self._temp_bytes_per_row(Y), name=repr(self),
                       nonfinite_hint=_NONFINITE_HINT)
        if symmetric and self._exact_diagonal:
            K = set_diagonal(xp, K, xp.astype(self._diag_device(xp, X), K.dtype))
        return K

    def _matmul_device(self, X: Any, Y: Any, V: Any, accumulate: Any, name: str) -> Any:
        xp, device = namespace_and_device(X)
        Y = self._device_columns(xp, X, Y)
        dtype = self._device_dtype(xp, X, Y)
        # float64 sums where the device has float64 (Apple's MPS has none).
        sums = dtype if accumulate is None else float_dtypes(xp, device)[0]
        V = on_device(V, xp, device, sums)
        if V.shape[0] != self._n_columns(Y):
            raise ValueError(f"V has {V.shape[0]} rows but K(X, Y) has {self._n_columns(Y)} "
                             "columns: V must have one row per row of Y.")
        squeeze = V.ndim == 1
        V = xp.reshape(V, (V.shape[0], -1))
        m = self._n_columns(Y)
        result = run_blocks(
            X, n_out=V.shape[1], dtype=sums,
            block_fn=lambda xb, out: matmul(
                xp, xp.astype(self._evaluate_device(xp, xb, Y), sums, copy=False), V,
                out=out),
            temp_bytes_per_row=m * (itemsize(xp, dtype) + itemsize(xp, sums))
            + self._temp_bytes_per_row(Y),
            name=name, nonfinite_hint=_NONFINITE_HINT)
        return result[:, 0] if squeeze else result

    # -- data-dependent parameters (gamma="scale" / "auto") ---------------------------
    def is_resolved(self) -> bool:
        """Tell whether every parameter is a value.

        Returns
        -------
        bool
            False while ``gamma="scale"`` or ``"auto"`` is left to resolve on training data
            with :meth:`resolve`.
        """
        return not is_gamma_heuristic(getattr(self, "gamma", None))

    def resolve(self, X: Any, sample_weight: Any = None) -> Kernel:
        r"""Return this kernel with its data-dependent parameters set from the training data.

        ``gamma="scale"`` becomes :math:`1/(d\,\operatorname{Var} X)` (1 if the variance is
        0) and ``gamma="auto"`` :math:`1/d`, as in :class:`sklearn.svm.SVC`; see
        :func:`~kernelmaps.kernels.gamma_value`. Estimators call this once in ``fit``, on the whole
        training array, and keep the result as ``kernel_``: kernel values are computed in
        row blocks, and every block must use the same γ. A kernel without such parameters
        returns itself.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The training data (a Dask array's variance comes from Dask's reductions).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights of a weighted fit: the variance counts each row with its weight,
            so a weight of 2 equals a repeated row. None: ``X.var()``, scikit-learn's.

        Returns
        -------
        Kernel
            A new kernel of the same class with numbers for the data-dependent parameters,
            or ``self``.

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps.kernels import get_kernel
        >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])  # Var X = 1, 2 features
        >>> get_kernel("rbf", gamma="scale").resolve(X)
        RBFKernel(gamma=0.5, sigma=None)
        """
        if self.is_resolved():
            return self
        if not hasattr(X, "shape"):
            X = np.asarray(X, dtype=np.float64)
        if len(X.shape) != 2:
            raise ValueError(f"{self!r}.resolve needs the 2-D training data (n_samples, "
                             f"n_features); got an array of shape {tuple(X.shape)}.")
        params = self.get_params()
        params["gamma"] = gamma_value(params["gamma"], X, sample_weight)
        return type(self)(**params)

    def _numeric_gamma(self) -> float | None:
        """``gamma`` as a number (None stays None); refuses an unresolved ``"scale"``."""
        gamma = getattr(self, "gamma", None)
        if isinstance(gamma, str):
            raise ValueError(
                f"{self!r} has gamma={gamma!r}, which is resolved on the training data: call "
                f"kernel.resolve(X_train) first (estimators do it in fit and keep the result "
                f"as kernel_), or pass a number as gamma. It is never resolved per block, "
                "since blocks would get different values of gamma."
            )
        return None if gamma is None else float(gamma)

    def _gamma(self, n_features: int) -> float:
        gamma = self._numeric_gamma()
        return 1.0 / n_features if gamma is None else gamma

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """Return the spectral measure of a shift-invariant kernel (Bochner's theorem).

        Raises ``ValueError`` for kernels that are not shift-invariant.

        Parameters
        ----------
        n_features : int
            The input dimension ``d`` (the measure is on :math:`\\mathbb{R}^d`; a ``gamma``
            of None means ``1/d``).

        Returns
        -------
        SpectralDensity
            The measure random Fourier features sample their frequencies from.
        """

        raise ValueError(
            f"The {self.name} kernel is not shift-invariant, so it has no spectral density for "
            "random Fourier features. Use Nystroem (any kernel), PolynomialCountSketch / "
            "PolynomialKernelMap (polynomial) or the map made for this kernel instead."
        )
