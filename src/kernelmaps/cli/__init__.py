"""The ``kernelmaps`` command line: compare approximations with the exact kernel, check kernels.

Subcommands ``compare``, ``check-kernel`` and ``datasets`` (see ``docs/cli.md``). The
package has one concern per module: :mod:`~kernelmaps.cli.commands` (argument parsing, the
subcommands, :func:`main`), :mod:`~kernelmaps.cli.report` (terminal tables and the HTML
report folder) and :mod:`~kernelmaps.cli.data` (loading data sets and data files). The
console script ``kernelmaps`` and ``python -m kernelmaps`` both run :func:`main`.
"""

from kernelmaps.cli.commands import main

__all__ = ["main"]
