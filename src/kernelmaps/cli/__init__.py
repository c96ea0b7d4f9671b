"""The ``kernelmaps`` command line: compare approximations with the exact kernel, check kernels.

Subcommands ``compare``, ``tune``, ``check-kernel`` and ``datasets`` (see ``docs/cli.md``).
The package has one concern per module: the options' parser (standard library only),
:mod:`~kernelmaps.cli.commands` (the subcommands),
:mod:`~kernelmaps.cli.tune`, :mod:`~kernelmaps.cli.report` (terminal tables and the HTML
report folder) and :mod:`~kernelmaps.cli.data` (loading data sets and data files). The
console script ``kernelmaps`` and ``python -m kernelmaps`` both run :func:`main`.

:func:`main` parses the arguments before it loads the subcommands (NumPy, scikit-learn,
pandas, matplotlib: seconds), so ``--help``, ``--version`` and an argument error answer at
once.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from kernelmaps.cli._parser import build_parser

__all__ = ["main"]

#: The modules of this package loaded on first use as ``kernelmaps.cli.<name>`` (PEP 562).
_SUBMODULES = ("commands", "data", "report", "tune")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kernelmaps`` command line.

    The arguments are parsed first (an error or ``--help`` exits here, status 2 or 0), then
    ``kernelmaps.cli.commands.run`` runs the subcommand.

    Parameters
    ----------
    argv : sequence of str or None, default=None
        The arguments after the program name; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 on success, non-zero after a reported error.

    Examples
    --------
    >>> import contextlib, io
    >>> from kernelmaps.cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = main(["datasets"])
    >>> status, "digits" in out.getvalue()
    (0, True)
    """
    args = build_parser().parse_args(argv)
    from kernelmaps.cli import commands  # the subcommands: loaded once the arguments parse

    return commands.run(args, argv)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"kernelmaps.cli.{name}")
    raise AttributeError(f"module 'kernelmaps.cli' has no attribute {name!r}")
