"""What the engine's outputs must be: the dtype policy, finite values (overflow refused with a
clear error) and the caller's sparse container kept."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["FLOAT_DTYPES", "OVERFLOW_HINT", "check_finite_output", "sparse_container_like"]

#: The dtype policy: float32 is kept, every other input is computed in float64.
FLOAT_DTYPES = (np.float64, np.float32)

OVERFLOW_HINT = (
    "the input is too large in magnitude for this map's arithmetic (it overflowed). Rescale "
    "the features first, e.g. with sklearn.preprocessing.StandardScaler or MaxAbsScaler."
)


def check_finite_output(block: np.ndarray, what: str, start: int,
                        hint: str = OVERFLOW_HINT) -> None:
    """Raise a clear error instead of returning NaN/inf produced by overflow.

    The sum is a cheap single pass over a block that is still in cache; only if it is not
    finite do we look element-wise (a finite block whose sum overflows is not an error).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = block.sum()
    if np.isfinite(total) or np.isfinite(block).all():
        return
    bad = np.argwhere(~np.isfinite(block))[0]
    raise ValueError(
        f"{what} produced a non-finite value ({block[tuple(bad)]}) at row {start + bad[0]}, "
        f"column {bad[1]}: {hint}"
    )


def sparse_container_like(X: Any, result: sp.spmatrix | sp.sparray) -> Any:
    """Return ``result`` in the same sparse interface (matrix vs array) as ``X``, as CSR."""
    if sp.isspmatrix(X):
        return sp.csr_matrix(result)
    return sp.csr_array(result)

