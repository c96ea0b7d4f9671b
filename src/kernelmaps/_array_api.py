"""Any array library: namespaces, devices and the engine's device path.

kernelmaps follows scikit-learn's convention. With ``sklearn.config_context(
array_api_dispatch=True)`` an array of another library that implements the Python array
API standard — PyTorch (CPU or CUDA), CuPy, ``array_api_strict``, … — is computed in its
own namespace and on its own device, and the fitted arrays live there too; NumPy arrays and
SciPy sparse matrices keep the NumPy path. Without dispatch, input is converted to NumPy as
scikit-learn does, and an array NumPy cannot take (one on a GPU) gets a clear error naming
``array_api_dispatch``. Namespaces come from ``array-api-compat`` (what scikit-learn itself
builds on), never from scikit-learn's private helpers.

The device engine (:func:`run_blocks_device`, :func:`reduce_blocks_device`) is the
counterpart of :func:`kernelmaps._engine.run_blocks`: devices want few, large blocks (one
GEMM over many rows, bounded by the ``device_block_bytes`` setting) and no threads; block
functions write into views of the output where the library allows (PyTorch: ``addmm``
with ``out=``, in-place ``cos_``), and nothing goes back to the host inside a transform
but one scalar for the finiteness check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np
import scipy.sparse as sp
import sklearn
from array_api_compat import is_numpy_array, is_torch_array

from kernelmaps._config import get_config

__all__ = [
    "Placement",
    "array_placement",
    "check_convertible",
    "check_same_placement",
    "device_block_rows",
    "dispatch_enabled",
    "float_dtypes",
    "host_dtype",
    "is_device_array",
    "itemsize",
    "matmul",
    "min_value",
    "namespace_and_device",
    "on_device",
    "placement_of",
    "reduce_blocks_device",
    "run_blocks_device",
    "set_diagonal",
    "to_numpy",
    "unary",
]

_DISPATCH_HINT = (
    "To compute on the array's own device, enable scikit-learn's array API dispatch: "
    "`with sklearn.config_context(array_api_dispatch=True): ...` (and set the environment "
    "variable SCIPY_ARRAY_API=1 before importing scipy or scikit-learn); otherwise pass a "
    "NumPy array."
)


# ------------------------------------------------------------------------ namespaces
def dispatch_enabled() -> bool:
    """Whether scikit-learn's ``array_api_dispatch`` is on."""
    return bool(sklearn.get_config()["array_api_dispatch"])


def is_device_array(X: Any) -> bool:
    """Whether ``X`` is computed in its own namespace: a non-NumPy array-API array while
    dispatch is on. NumPy arrays and sparse matrices always take the NumPy path."""
    if isinstance(X, np.ndarray) or sp.issparse(X):
        return False
    return (array_api_compat.is_array_api_obj(X) and not is_numpy_array(X)
            and dispatch_enabled())


def namespace_and_device(*arrays: Any) -> tuple[Any, Any]:
    """The (array-api-compat) namespace of ``arrays`` and the device of the first."""
    return array_api_compat.array_namespace(*arrays), array_api_compat.device(arrays[0])


@dataclass(frozen=True, eq=False)  # (holds an array: compared by identity)
class Placement:
    """Where an estimator's validated input lives, settled once at the estimator's boundary
    and carried inward (to the targets, the accumulator, the fitted arrays) instead of
    being asked again at each layer.

    Attributes
    ----------
    on_device : bool
        Whether the input is computed in its own namespace (:func:`is_device_array`).
    xp : module
        Its array-api-compat namespace (NumPy for NumPy arrays and sparse matrices).
    device : object
        Its device (``"cpu"`` for NumPy arrays and sparse matrices).
    dtype : dtype
        Its dtype.
    empty : array or None
        Its first zero rows (``X[:0]``) on a device: where fitted arrays go, without rows;
        ``None`` on the host.
    """

    on_device: bool
    xp: Any
    device: Any
    dtype: Any
    empty: Any


def placement_of(X: Any) -> Placement:
    """The :class:`Placement` of a validated ``X`` (an array, or a sparse matrix)."""
    if is_device_array(X):
        xp, device = namespace_and_device(X)
        return Placement(True, xp, device, X.dtype, X[:0, ...])
    return Placement(False, np, "cpu", X.dtype, None)


def float_dtypes(xp: Any, device: Any) -> list[Any]:
    """The dtype policy on a device: float32 kept, everything else float64 — or float32
    where the device has no float64 (e.g. Apple's MPS)."""
    kinds = xp.__array_namespace_info__().dtypes(device=device, kind="real floating")
    return [xp.float64, xp.float32] if "float64" in kinds else [xp.float32]


def itemsize(xp: Any, dtype: Any) -> int:
    """Bytes per element of a floating dtype of namespace ``xp``."""
    return xp.finfo(dtype).bits // 8


def host_dtype(X: Any) -> np.dtype:
    """The NumPy floating dtype matching ``X``'s (float32 or float64), for any library."""
    if isinstance(X, np.ndarray) or sp.issparse(X):
        return np.dtype(X.dtype)
    xp = array_api_compat.array_namespace(X)
    return np.dtype(np.float32 if xp.finfo(X.dtype).bits == 32 else np.float64)


def min_value(X: Any) -> float:
    """The smallest stored value of a dense, sparse or device array (``inf`` if empty)."""
    if sp.issparse(X):
        return float(X.data.min()) if X.data.size else float("inf")
    if isinstance(X, np.ndarray):
        return float(X.min()) if X.size else float("inf")
    xp = array_api_compat.array_namespace(X)
    return float(xp.min(X)) if X.shape[0] * X.shape[-1] else float("inf")


def check_convertible(X: Any, owner: str) -> None:
    """Without dispatch, refuse up front an array NumPy cannot take (one on a GPU), with
    the fix, instead of a deep conversion error."""
    if (isinstance(X, np.ndarray) or sp.issparse(X) or not array_api_compat.is_array_api_obj(X)
            or is_numpy_array(X) or dispatch_enabled()):
        return
    try:
        np.asarray(X[:1, ...] if getattr(X, "ndim", 0) else X)
    except Exception as error:  # torch CUDA: TypeError; CuPy: TypeError; strict: RuntimeError
        raise TypeError(
            f"{owner} got an array of {type(X).__module__}.{type(X).__name__} on device "
            f"{array_api_compat.device(X)} that NumPy cannot read ({error}). {_DISPATCH_HINT}"
        ) from error


def array_placement(x: Any) -> tuple[str, str] | None:
    """``(namespace, device)`` of a non-NumPy array (whatever the dispatch setting); ``None``
    for NumPy arrays, sparse matrices and everything else."""
    if isinstance(x, np.ndarray) or sp.issparse(x) or not array_api_compat.is_array_api_obj(x) \
            or is_numpy_array(x):
        return None
    return array_api_compat.array_namespace(x).__name__, str(array_api_compat.device(x))


def check_same_placement(estimator: Any, X: Any, fitted: tuple[str, str] | None,
                         method: str) -> None:
    """scikit-learn's rule: ``method``'s validated input ``X`` must use the namespace and
    device of fit (``fitted``, from :func:`array_placement` of a fitted array)."""
    given = array_placement(X)
    if fitted == given:
        return

    def describe(placement: tuple[str, str] | None) -> str:
        return "NumPy arrays" if placement is None else \
            f"{placement[0]} arrays on device {placement[1]}"

    raise ValueError(
        f"Inputs passed to {type(estimator).__name__}.{method}() must use the same namespace "
        f"and the same device as those passed to fit(): it was fitted on {describe(fitted)} "
        f"and got {describe(given)}. Pass arrays of the library and device fit saw "
        "(non-NumPy arrays under sklearn.config_context(array_api_dispatch=True)), or refit."
    )


# ------------------------------------------------------------------------ moving arrays
def to_numpy(x: Any) -> np.ndarray:
    """A NumPy copy (or view) of an array of any library, from any device."""
    if isinstance(x, np.ndarray):
        return x
    if is_torch_array(x):
        return x.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(x):
        return x.get()
    try:
        return np.from_dlpack(x, device="cpu")
    except (TypeError, BufferError, RuntimeError, ValueError):
        return np.asarray(x)


def on_device(value: Any, xp: Any, device: Any, dtype: Any = None) -> Any:
    """``value`` (NumPy or any namespace) as an array of ``xp`` on ``device``.

    Floating arrays are cast to ``dtype`` when given (float64 without it becomes float32
    on a device that has no float64); integer arrays keep their type. Returns ``value``
    itself when it already is such an array, so calling this on fitted parameters costs
    nothing once they live on the device.
    """
    if value is None:
        return None
    if not isinstance(value, np.ndarray) and array_api_compat.array_namespace(value) is xp \
            and array_api_compat.device(value) == device:
        if dtype is None or value.dtype == dtype or not xp.isdtype(value.dtype,
                                                                    "real floating"):
            return value
        return xp.astype(value, dtype)
    host = to_numpy(value)
    if dtype is None and host.dtype == np.float64:
        dtype = float_dtypes(xp, device)[0]
    if dtype is not None and host.dtype.kind == "f":
        host = host.astype(np.float32 if xp.finfo(dtype).bits == 32 else np.float64,
                           copy=False)
    # A copy: the device array must never share memory with a host array someone owns.
    return xp.asarray(np.ascontiguousarray(host), device=device, copy=True)


# ------------------------------------------------------------------------ in-place helpers
def matmul(xp: Any, A: Any, B: Any, *, out: Any = None, bias: Any = None) -> Any:
    """``A @ B (+ bias)``, written into ``out`` where the library allows.

    PyTorch: one ``addmm`` (or ``matmul``) straight into ``out`` — no temporary. Other
    libraries: the standard ``@`` and an in-place add; the engine copies the result into
    ``out`` when it is not ``out`` itself.
    """
    if is_torch_array(A):
        import torch  # an optional dependency: only ever reached with a torch tensor

        if bias is None:
            return torch.matmul(A, B, out=out)
        return torch.addmm(bias, A, B, out=out)
    result = A @ B
    if bias is not None:
        result += bias
    return result


def unary(xp: Any, name: str, x: Any, **kwargs: Any) -> Any:
    """``xp.<name>(x, **kwargs)``, in place for PyTorch (``x.cos_()``, ``x.clip_(max=0)``);
    use the returned array."""
    if is_torch_array(x):
        return getattr(x, name + "_")(**kwargs)
    return getattr(xp, name)(x, **kwargs)


def set_diagonal(xp: Any, K: Any, values: Any) -> Any:
    """``K`` with its diagonal replaced by ``values`` (returns the array to use)."""
    if is_torch_array(K):
        K.diagonal().copy_(values)
        return K
    n = min(K.shape)
    eye = xp.eye(K.shape[0], K.shape[1], dtype=xp.bool, device=array_api_compat.device(K))
    diagonal = xp.zeros(K.shape[1], dtype=K.dtype, device=array_api_compat.device(K))
    diagonal[:n] = values
    return xp.where(eye, diagonal[None, :], K)


# ------------------------------------------------------------------------ the device engine
def device_block_rows(n_rows: int, bytes_per_row: int) -> int:
    """Rows per device block so one block's working set is about ``device_block_bytes``."""
    rows = get_config()["device_block_bytes"] // max(1, bytes_per_row)
    return int(min(max(1, n_rows), max(1, rows)))


def run_blocks_device(
    X: Any,
    *,
    n_out: int,
    dtype: Any,
    block_fn: Callable[[Any, Any], Any],
    temp_bytes_per_row: int = 0,
    name: str = "transform",
    nonfinite_hint: str = "",
) -> Any:
    """:func:`kernelmaps._engine.run_blocks` for an array on its device.

    ``block_fn(X_block, out)`` returns the block's ``(rows, n_out)`` result; ``out`` is a
    view of the output to write into (and return), or ``None`` when the whole output is one
    block and the function allocates it. Rows are cut into blocks only when output rows
    plus temporaries exceed ``device_block_bytes``. One reduction and one scalar sent to
    the host check the result is finite.
    """
    xp, device = namespace_and_device(X)
    n_samples = X.shape[0]
    if n_samples == 0:
        return xp.empty((0, n_out), dtype=dtype, device=device)
    rows = device_block_rows(n_samples, n_out * itemsize(xp, dtype) + temp_bytes_per_row)
    if rows >= n_samples:
        out = block_fn(X, None)
    else:
        out = xp.empty((n_samples, n_out), dtype=dtype, device=device)
        for start in range(0, n_samples, rows):
            stop = min(start + rows, n_samples)
            view = out[start:stop, ...]
            result = block_fn(X[start:stop, ...], view)
            if result is not view:
                out[start:stop, ...] = result
    check_finite_device(xp, out, name, nonfinite_hint)
    return out


def check_finite_device(xp: Any, block: Any, what: str, hint: str) -> None:
    """:func:`kernelmaps._engine.check_finite_output` on the device: one sum, one scalar
    to the host; the element-wise search only runs when something is wrong."""
    if bool(xp.isfinite(xp.sum(block))) or bool(xp.all(xp.isfinite(block))):
        return
    position = ", ".join(f"{axis} {int(index[0])}" for axis, index in
                         zip(("row", "column"), xp.nonzero(~xp.isfinite(block)), strict=False))
    raise ValueError(f"{what} produced a non-finite value at {position}: {hint}")


def reduce_blocks_device(
    X: Any,
    block_fn: Callable[..., Any],
    *,
    bytes_per_row: int,
    aligned: tuple = (),
) -> Any:
    """:func:`kernelmaps._engine.reduce_blocks` for an array on its device: the sum of
    ``block_fn(X_b, *aligned_b)`` over device-sized row blocks, accumulated in float64
    where the device has it (in block order, so deterministic). Returns a device array."""
    xp, device = namespace_and_device(X)
    accumulate = float_dtypes(xp, device)[0]
    rows = device_block_rows(X.shape[0], bytes_per_row)
    total = None
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        part = block_fn(X[start:stop, ...], *(a[start:stop, ...] for a in aligned))
        part = xp.astype(xp.asarray(part, device=device), accumulate)
        total = part if total is None else total + part
    return total
