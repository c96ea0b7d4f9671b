"""The kernel parameters typed on the command line, checked against the kernel's own.

Kept apart from :mod:`kernelmaps.cli._parser`, which imports the standard library only:
this reads the kernel registry (:mod:`kernelmaps.kernels`, NumPy and scikit-learn).
"""

from __future__ import annotations

import argparse
from typing import Any

from kernelmaps.kernels import resolve_kernel

__all__ = ["kernel_params_from_args"]


def kernel_params_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The kernel parameters typed on the command line (``--gamma``, ``--degree``,
    ``--coef0``, ``--kernel-param``), refused when the kernel lacks one: resolve_kernel drops
    parameters a named kernel lacks (scikit-learn's rule for gamma, degree and coef0), and a
    parameter typed on the command line must not vanish silently."""
    params = {name: getattr(args, name) for name in ("gamma", "degree", "coef0")
              if getattr(args, name) is not None}
    params.update(dict(args.kernel_param))
    kind = resolve_kernel(args.kernel, owner="--kernel")
    unknown = sorted(set(params) - set(kind.param_names))
    if unknown:
        raise ValueError(f"kernel {args.kernel!r} has no parameter(s) {unknown}; it accepts "
                         f"{list(kind.param_names) or 'none'}.")
    return params

