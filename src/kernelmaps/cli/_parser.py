"""The ``kernelmaps`` command's options: the argument parser and its value types.

:mod:`argparse` (no extra dependency; subcommands, ``--exact/--no-exact`` and exit status 2
for usage errors are built in), with one-line errors. Each value type refuses bad text with
a message naming what it expected. :mod:`kernelmaps.cli.commands` runs the subcommands.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from kernelmaps import evaluate
from kernelmaps._suggest import did_you_mean
from kernelmaps.cli import tune
from kernelmaps.kernels import KERNEL_ALIASES, KERNELS, resolve_kernel

__all__ = ["DEFAULT_N_COMPONENTS", "DEFAULT_OUT", "build_parser"]

DEFAULT_OUT = "kernelmaps-report"
DEFAULT_N_COMPONENTS = (25, 50, 100, 200, 400, 800)


#: argparse's message for a value outside ``choices`` (quoted names up to Python 3.12.7,
#: bare ones after).
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)")


def _version() -> str:
    """The installed distribution's version (its metadata, the one source of truth)."""
    try:
        return importlib.metadata.version("kernelmaps")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown (not installed; pip install -e . gives it its metadata)"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block otherwise) and
    did-you-mean suggestions for misspelt options, subcommands and choices."""

    def error(self, message: str) -> NoReturn:
        choice = _INVALID_CHOICE.search(message)
        if choice:
            choices = re.findall(r"'([^']*)'", choice["choices"]) or [
                c.strip() for c in choice["choices"].split(",")]
            message += did_you_mean(choice["value"], choices)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            # Reported by the subcommand's parser, which knows its own options.
            parser = self._subparser(getattr(namespace, "command", None)) or self
            options = [option for action in (*self._actions, *parser._actions)
                       for option in action.option_strings]
            hints = "".join(did_you_mean(extra.partition("=")[0], options, quote=False)
                            for extra in extras if extra.startswith("-"))
            parser.error(f"unrecognized arguments: {' '.join(extras)}{hints}")
        return namespace

    def _subparser(self, command: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and command in action.choices:
                return action.choices[command]
        return None


# =========================================================================== parsing
def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 50,100,200; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers; got {text!r}")
    return values


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def _number_above_zero(example: str, below: float | None = None) -> Any:
    """A value type for a finite number in (0, ``below``) — or > 0 when ``below`` is None
    (``example`` shows one)."""
    expected = "a positive number" if below is None else f"a number in (0, {below:g})"

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not (np.isfinite(value) and value > 0 and (below is None or value < below)):
            raise argparse.ArgumentTypeError(f"expected {expected} such as {example}; got "
                                             f"{text!r}")
        return value

    return number


def _fraction(example: str) -> Any:
    """A value type for a number strictly between 0 and 1 (``example`` shows one)."""
    return _number_above_zero(example, below=1.0)


def _int_at_least(low: int, high: int | None = None, what: str = "") -> Any:
    """A value type for an integer in [low, high] (``what`` says what it counts)."""
    bounds = f">= {low}" if high is None else f"in [{low}, {high}]"

    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected an integer {bounds}{what}; got {text!r}")
        return value

    return integer


def _kernel_name(text: str) -> str:
    """A kernel name or alias (kept as typed; :func:`resolve_kernel` reads aliases)."""
    if text == "precomputed":  # the command explains why it cannot take one
        return text
    try:
        resolve_kernel(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown kernel {text!r}{did_you_mean(text, [*KERNELS, *KERNEL_ALIASES])}; "
            f"valid kernels are {sorted(KERNELS)} (aliases: {_aliases_text()})") from None
    return text


def _aliases_text() -> str:
    return ", ".join(f"{alias} = {name}" for alias, name in KERNEL_ALIASES.items())


def _method_names(text: str) -> str:
    """Comma-separated method names, each checked against the registry (kept as typed)."""
    for name in (part.strip() for part in text.split(",")):
        if name and name not in evaluate.METHODS:
            raise argparse.ArgumentTypeError(
                f"unknown method {name!r}{did_you_mean(name, evaluate.METHODS)}; valid "
                f"methods are {sorted(evaluate.METHODS)}")
    return text


def _output_dir(text: str) -> str:
    """A report folder that can be written: checked before any work, by creating (and
    removing) a probe in the folder or in its nearest existing parent — the permission bits
    alone do not say it (root, read-only file systems, /proc)."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory; choose "
                                         "another path")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {text}: {existing} is not a "
                                         "directory; choose another path")
    try:
        tempfile.TemporaryDirectory(dir=existing, prefix=".kernelmaps-probe-").cleanup()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise argparse.ArgumentTypeError(f"cannot write the report folder {text} ({reason} "
                                         f"in {existing}); choose a writable directory") from None
    return text


def _number(text: str) -> int | float:
    """A kernel parameter: an int when it is written as one (degrees), else a float."""
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number; got {text!r}")
    return value


def _kernel_param(text: str) -> tuple[str, int | float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as gamma=0.1; got {text!r}")
    return name.strip(), _number(value)


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", metavar="PATH", default=None,
        help="a data set name (digits, the default; iris, wine, breast_cancer, diabetes, "
             "fashion-mnist) or a file: CSV/TSV (with --target), Parquet, NPZ with X and y, "
             "svmlight/libsvm, or a directory of MNIST-style IDX files")
    parser.add_argument("--target", metavar="COLUMN", default=None,
                        help="target column of a CSV/TSV/Parquet file (default: the column "
                             "named target, label, class or y)")


def _add_kernel_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("kernel")
    group.add_argument("--kernel", default="rbf", metavar="NAME", type=_kernel_name,
                       help=f"kernel name from kernelmaps.kernels: {', '.join(sorted(KERNELS))} "
                            f"(aliases: {_aliases_text()}; default: rbf)")
    group.add_argument("--gamma", type=_number, default=None,
                       help="gamma of the kernel (default: the median heuristic, stated in "
                            "the output)")
    group.add_argument("--degree", type=_number, default=None, help="polynomial degree")
    group.add_argument("--coef0", type=_number, default=None, help="polynomial/sigmoid offset")
    group.add_argument("--kernel-param", type=_kernel_param, action="append", default=[],
                       metavar="NAME=VALUE",
                       help="any kernel parameter, e.g. sigma=2 or nu=2.5 (repeatable)")
    group.add_argument("--random-state", type=_int_at_least(0, 2**32 - 1), default=0,
                       help="seed of every random choice (default: 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``kernelmaps`` argument parser (subcommands in ``args.command``)."""
    parser = _Parser(prog="kernelmaps",
                     description="Explicit kernel feature maps, compared with the exact kernel.")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an input error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    compare = commands.add_parser(
        "compare", help="feature maps side by side with the exact kernel, with a report",
        description="Fit feature maps at several output dimensions and seeds, a linear model "
                    "on their features, and the exact-kernel model as the baseline; print a "
                    "table and write a report folder.")
    _add_data_options(compare)
    _add_kernel_options(compare)
    compare.add_argument("--methods", action="append", default=None, metavar="A,B",
                         type=_method_names,
                         help="methods (comma-separated or repeated): "
                              f"{', '.join(evaluate.METHODS)} (default: every method for "
                              "the kernel)")
    compare.add_argument("--n-components", type=_int_list, default=list(DEFAULT_N_COMPONENTS),
                         metavar="N,N",
                         help="output dimensions (default: "
                              f"{','.join(map(str, DEFAULT_N_COMPONENTS))})")
    compare.add_argument("--model", choices=sorted(evaluate.MODELS), default="ridge",
                         help="linear model on the features (default: ridge)")
    compare.add_argument("--alpha", type=_number_above_zero("0.01"), default=None, metavar="A",
                         help="ridge's alpha, the same for every row (default: chosen per "
                              "row, the exact baseline included, by leave-one-out on its "
                              "training rows; --model ridge only)")
    compare.add_argument("--task", choices=["auto", "classification", "regression"],
                         default="auto",
                         help="auto: class labels unless the target is real-valued with more "
                              f"than {evaluate.MAX_AUTO_CLASSES} distinct values")
    compare.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                         help="run the exact-kernel baseline (default: while its estimated "
                              f"time (<= {evaluate.EXACT_AUTO_MAX_SECONDS:.0f} s) and memory fit; "
                              "the report says why it was skipped)")
    compare.add_argument("--seeds", type=_positive_int, default=3,
                         help="seeds per randomised map (default: 3)")
    compare.add_argument("--test-size", type=_fraction("0.25"), default=0.25,
                         help="held-out fraction when the data has no test split "
                              "(default: 0.25)")
    compare.add_argument("--cv", type=_int_at_least(2, what=" (folds)"), default=None,
                         metavar="K",
                         help="K-fold cross-validation instead of one split")
    compare.add_argument("--error-sample", type=_int_at_least(2, what=" (rows)"), default=500,
                         help="training rows the kernel error is measured on (default: 500)")
    compare.add_argument("--metric", choices=["fro", "spectral", "max"], default="fro",
                         help="norm of the kernel error (default: fro)")
    compare.add_argument("--max-rows", type=_positive_int, default=None, metavar="N",
                         help="use a random subsample of N rows (stratified by class for "
                              "classification), stated in the output")
    compare.add_argument("--scale", choices=list(evaluate.SCALES), default=None,
                         help="feature scaling fitted on the training rows only (default: "
                              "none; a warning suggests standard when most features carry "
                              "less than a tenth of an equal share of the variance)")
    compare.add_argument("--tolerance", type=_fraction("0.01"), default=0.01,
                         help="advice: the smallest n_components per method whose score is "
                              "within this relative gap of the exact score (default: 0.01)")
    compare.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                         help="worker processes of one thread each to spread the runs over "
                              "(default: one per 30 s of estimated work, at most one per "
                              "core; 1: everything in this process, on one thread)")
    compare.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", type=_output_dir,
                         help=f"report folder (default: ./{DEFAULT_OUT})")
    compare.add_argument("--wide", action="store_true",
                         help="the full table with the spreads (95%% interval of the kernel "
                              "error, score standard deviation, CPU-time range), however wide "
                              "the terminal (default: the full table when it fits, else a "
                              "compact one; the report always has them)")
    compare.add_argument("--quiet", action="store_true",
                         help="no progress bar, table or messages")
    compare.add_argument("--json", action="store_true",
                         help="print settings, summary and rows as JSON on stdout")

    check = commands.add_parser(
        "check-kernel", help="is the kernel positive semi-definite on this data? (Mercer)",
        description="Build the kernel's Gram matrix on (a sample of) the data and check that "
                    "it is symmetric positive semi-definite. Exit status 1 if it is not.")
    _add_data_options(check)
    _add_kernel_options(check)
    check.add_argument("--max-samples", type=_positive_int, default=1000,
                       help="rows sampled for the Gram matrix (default: 1000)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")

    tune.add_parser(commands, _add_data_options)

    listing = commands.add_parser("datasets", help="the data sets available offline",
                                  description="The named data sets and where they come from.")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    return parser
