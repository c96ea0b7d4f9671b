"""The ``kernelmaps`` command's options: the argument parser and its value types.

:mod:`argparse` (no extra dependency; subcommands, ``--exact/--no-exact`` and exit status 2
for usage errors are built in), with one-line errors. Each value type refuses bad text with
a message naming what it expected. :mod:`kernelmaps.cli.commands` runs the subcommands.
"""

from __future__ import annotations

import argparse
import re
from typing import NoReturn

import numpy as np

from kernelmaps import evaluate
from kernelmaps.kernels import KERNELS

__all__ = ["DEFAULT_N_COMPONENTS", "DEFAULT_OUT", "build_parser"]

DEFAULT_OUT = "kernelmaps-report"
DEFAULT_N_COMPONENTS = (25, 50, 100, 200, 400, 800)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block otherwise)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1) such as 0.01; got "
                                         f"{text!r}")
    return value


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
    group.add_argument("--kernel", default="rbf", metavar="NAME",
                       help=f"kernel name from kernelmaps.kernels: {', '.join(sorted(KERNELS))} "
                            "(default: rbf)")
    group.add_argument("--gamma", type=_number, default=None,
                       help="gamma of the kernel (default: the median heuristic, stated in "
                            "the output)")
    group.add_argument("--degree", type=_number, default=None, help="polynomial degree")
    group.add_argument("--coef0", type=_number, default=None, help="polynomial/sigmoid offset")
    group.add_argument("--kernel-param", type=_kernel_param, action="append", default=[],
                       metavar="NAME=VALUE",
                       help="any kernel parameter, e.g. sigma=2 or nu=2.5 (repeatable)")
    group.add_argument("--random-state", type=int, default=0,
                       help="seed of every random choice (default: 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``kernelmaps`` argument parser (subcommands in ``args.command``)."""
    parser = _Parser(prog="kernelmaps",
                     description="Explicit kernel feature maps, compared with the exact kernel.")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an input error")
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
                         help="methods (comma-separated or repeated): "
                              f"{', '.join(evaluate.METHODS)} (default: every method for "
                              "the kernel)")
    compare.add_argument("--n-components", type=_int_list, default=list(DEFAULT_N_COMPONENTS),
                         metavar="N,N",
                         help="output dimensions (default: "
                              f"{','.join(map(str, DEFAULT_N_COMPONENTS))})")
    compare.add_argument("--model", choices=sorted(evaluate.MODELS), default="ridge",
                         help="linear model on the features (default: ridge)")
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
    compare.add_argument("--test-size", type=float, default=0.25,
                         help="held-out fraction when the data has no test split "
                              "(default: 0.25)")
    compare.add_argument("--cv", type=int, default=None, metavar="K",
                         help="K-fold cross-validation instead of one split")
    compare.add_argument("--error-sample", type=_positive_int, default=500,
                         help="training rows the kernel error is measured on (default: 500)")
    compare.add_argument("--metric", choices=["fro", "spectral", "max"], default="fro",
                         help="norm of the kernel error (default: fro)")
    compare.add_argument("--max-rows", type=_positive_int, default=None, metavar="N",
                         help="use a random subsample of N rows (stratified by class for "
                              "classification), stated in the output")
    compare.add_argument("--scale", choices=list(evaluate.SCALES), default=None,
                         help="feature scaling fitted on the training rows only (default: "
                              "none; a warning suggests standard when features' scales differ "
                              "by more than 100x)")
    compare.add_argument("--tolerance", type=_fraction, default=0.01,
                         help="advice: the smallest n_components per method whose score is "
                              "within this relative gap of the exact score (default: 0.01)")
    compare.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                         help="worker processes of one thread each to spread the runs over "
                              "(default: one per 30 s of estimated work, at most one per "
                              "core; 1: everything in this process, on one thread)")
    compare.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                         help=f"report folder (default: ./{DEFAULT_OUT})")
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

    listing = commands.add_parser("datasets", help="the data sets available offline",
                                  description="The named data sets and where they come from.")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    return parser
