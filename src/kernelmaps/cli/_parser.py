"""The ``kernelmaps`` command's options: the argument parser (its value types in ``_values``).

:mod:`argparse` (no extra dependency; subcommands, ``--exact/--no-exact`` and exit status 2
for usage errors are built in), with one-line errors. Each value type refuses bad text with
a message naming what it expected. :mod:`kernelmaps.cli.commands` runs the subcommands.

This module imports the standard library only (the names it offers come from
:mod:`kernelmaps.cli._catalog`): ``kernelmaps --help`` and an argument error answer without
loading NumPy or scikit-learn.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from kernelmaps._suggest import did_you_mean
from kernelmaps.cli._catalog import (
    DEFAULT_N_COMPONENTS,
    EXACT_AUTO_MAX_SECONDS,
    KERNEL_NAMES,
    MAX_AUTO_CLASSES,
    METHOD_NAMES,
    MODEL_NAMES,
    SCALES,
)
from kernelmaps.cli._values import (
    aliases_text,
    degree,
    fraction,
    gamma,
    int_at_least,
    int_list,
    kernel_name,
    kernel_param,
    keyword_or_int,
    method_names,
    model_path,
    number,
    number_above_zero,
    output_dir,
    positive_int,
)

__all__ = ["DEFAULT_N_COMPONENTS", "DEFAULT_OUT", "DEFAULT_TUNE_OUT", "SCALE_CHOICES",
           "build_parser"]

DEFAULT_OUT = "kernelmaps-report"
DEFAULT_TUNE_OUT = "kernelmaps-tune-report"
#: ``--scale``'s values in every subcommand: ``auto`` applies compare's scale rule
#: (:func:`kernelmaps.evaluate.choose_scale`).
SCALE_CHOICES = ("auto", *SCALES)


#: argparse's message for a value outside ``choices`` (quoted names up to Python 3.12.7,
#: bare ones after).
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)")


def _version() -> str:
    """The installed distribution's version (its metadata, the one source of truth)."""
    import importlib.metadata  # only for --version: scanning the distributions costs

    try:
        return importlib.metadata.version("kernelmaps")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown (not installed; pip install -e . gives it its metadata)"


class _VersionAction(argparse.Action):
    """``--version``: the installed version, read from the metadata only when asked (reading
    it costs a scan of the installed distributions on every run otherwise)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        print(f"{parser.prog} {_version()}")  # on stdout, as argparse's own version action
        parser.exit()


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


# =========================================================================== options
# Every option is defined once, here, and added to each subcommand that takes it: the same
# flag has the same value type and the same meaning everywhere (a subcommand may differ in
# its default only, stated in its help).

#: ``--threads``: one meaning in every subcommand (see :func:`_add_run_options`).
THREADS_HELP = ("the most CPU cores the command keeps busy at once: kernelmaps' n_threads "
                "setting (default: {default}). compare spends them on worker processes of "
                "one thread each, its runs being independent fits; tune, whose steps run "
                "one after another, on threads for BLAS and the transform engine in its "
                "process; 1: one thread, in this process")


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", metavar="PATH", default=None,
        help="a data set name (digits, the default; iris, wine, breast_cancer, diabetes, "
             "fashion-mnist) or a file: CSV/TSV (with --target), Parquet, NPZ with X and y, "
             "svmlight/libsvm, or a directory of MNIST-style IDX files")
    parser.add_argument("--target", metavar="COLUMN", default=None,
                        help="target column of a CSV/TSV/Parquet file (default: the column "
                             "named target, label, class or y)")


def _add_kernel_options(parser: argparse.ArgumentParser, *, kernel_help: str = "",
                        gamma_help: str = "default: the median heuristic, stated in the "
                                          "output") -> None:
    group = parser.add_argument_group("kernel")
    group.add_argument("--kernel", default="rbf", metavar="NAME", type=kernel_name,
                       help=kernel_help or (
                           "kernel name from kernelmaps.kernels: "
                           f"{', '.join(sorted(KERNEL_NAMES))} "
                           f"(aliases: {aliases_text()}; default: rbf)"))
    group.add_argument("--gamma", type=gamma, default=None,
                       help=f"gamma of the kernel (> 0, or scale or auto as in scikit-learn; "
                            f"{gamma_help})")
    group.add_argument("--degree", type=degree, default=None,
                       help="polynomial degree (>= 1; default: 3)")
    group.add_argument("--coef0", type=number, default=None, help="polynomial/sigmoid offset")
    group.add_argument("--kernel-param", type=kernel_param, action="append", default=[],
                       metavar="NAME=VALUE",
                       help="any kernel parameter, e.g. sigma=2 or nu=2.5 (repeatable)")
    group.add_argument("--random-state", type=int_at_least(0, 2**32 - 1), default=0,
                       help="seed of every random choice (default: 0)")


def _add_scale_option(parser: argparse.ArgumentParser, default: str | None,
                      default_text: str) -> None:
    parser.add_argument(
        "--scale", choices=list(SCALE_CHOICES), default=default,
        help="feature scaling, fitted on the training rows: none, standard, minmax, or auto: "
             "standard when at least half of the features carry less than a tenth of an "
             f"equal share of the variance, else none (default: {default_text})")


def _add_task_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", choices=["auto", "classification", "regression"],
                        default="auto",
                        help="auto: class labels unless the target is real-valued with more "
                             f"than {MAX_AUTO_CLASSES} distinct values")


def _add_test_size_option(parser: argparse.ArgumentParser, default: float | None,
                          default_text: str) -> None:
    parser.add_argument("--test-size", type=fraction("0.25"), default=default, metavar="F",
                        help=f"held-out fraction (default: {default_text})")


def _add_run_options(parser: argparse.ArgumentParser, *, out: str, threads_default: str,
                     quiet: str, json_help: str) -> None:
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N",
                        help=THREADS_HELP.format(default=threads_default))
    parser.add_argument("--out", default=out, metavar="DIR", type=output_dir,
                        help=f"report folder (default: ./{out})")
    parser.add_argument("--quiet", action="store_true", help=quiet)
    parser.add_argument("--json", action="store_true", help=json_help)


# =========================================================================== subcommands
def _add_compare(commands: Any) -> None:
    compare = commands.add_parser(
        "compare", help="feature maps side by side with the exact kernel, with a report",
        description="Fit feature maps at several output dimensions and seeds, a linear model "
                    "on their features, and the exact-kernel model as the baseline; print a "
                    "table and write a report folder.")
    _add_data_options(compare)
    _add_kernel_options(compare)
    compare.add_argument("--methods", action="append", default=None, metavar="A,B",
                         type=method_names,
                         help="methods (comma-separated or repeated): "
                              f"{', '.join(METHOD_NAMES)} (default: every method for "
                              "the kernel)")
    compare.add_argument("--n-components", type=int_list, default=list(DEFAULT_N_COMPONENTS),
                         metavar="N,N",
                         help="output dimensions (default: "
                              f"{','.join(map(str, DEFAULT_N_COMPONENTS))})")
    compare.add_argument("--model", choices=list(MODEL_NAMES), default="ridge",
                         help="linear model on the features (default: ridge)")
    compare.add_argument("--alpha", type=number_above_zero("0.01"), default=None, metavar="A",
                         help="ridge's alpha, the same for every row (default: chosen per "
                              "row, the exact baseline included, by leave-one-out on its "
                              "training rows; --model ridge only)")
    _add_task_option(compare)
    compare.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                         help="run the exact-kernel baseline (default: while its estimated "
                              f"time (<= {EXACT_AUTO_MAX_SECONDS:.0f} s) and memory fit; "
                              "the report says why it was skipped)")
    compare.add_argument("--seeds", type=positive_int, default=3,
                         help="seeds per randomised map (default: 3)")
    _add_test_size_option(compare, 0.25, "0.25, when the data has no test split")
    compare.add_argument("--cv", type=int_at_least(2, what=" (folds)"), default=None,
                         metavar="K",
                         help="K-fold cross-validation instead of one split")
    compare.add_argument("--error-sample", type=int_at_least(2, what=" (rows)"), default=500,
                         help="training rows the kernel error is measured on (default: 500)")
    compare.add_argument("--metric", choices=["fro", "spectral", "max"], default="fro",
                         help="norm of the kernel error (default: fro)")
    compare.add_argument("--max-rows", type=positive_int, default=None, metavar="N",
                         help="use a random subsample of N rows (stratified by class for "
                              "classification), stated in the output")
    _add_scale_option(compare, None,
                      "none: compare measures the data as given; a warning suggests "
                      "standard where auto would choose it")
    compare.add_argument("--tolerance", type=fraction("0.01"), default=0.01,
                         help="advice: the smallest n_components per method whose score is "
                              "within this relative gap of the exact score (default: 0.01)")
    _add_run_options(compare, out=DEFAULT_OUT,
                     threads_default="one worker per 15 s of estimated work, at most one "
                                     "per core",
                     quiet="no progress bar, table or messages",
                     json_help="print settings, summary and rows as JSON on stdout")
    compare.add_argument("--wide", action="store_true",
                         help="the full table with the spreads (95%% interval of the kernel "
                              "error, score standard deviation, CPU-time range), however wide "
                              "the terminal (default: the full table when it fits, else a "
                              "compact one; the report always has them)")


def _add_tune(commands: Any) -> None:
    tune = commands.add_parser(
        "tune", help="choose the scaling, gamma, alpha and D for a feature map + ridge, faster "
                     "than a grid",
        description="Choose the feature scaling (by compare's scale rule), the kernel's scale "
                    "(gamma), ridge's alpha and the output dimension D: alpha in closed form "
                    "(leave-one-out), gamma by a 1-D search around the median heuristic, D by "
                    "doubling. Prints the choice and writes a report.")
    _add_data_options(tune)
    _add_kernel_options(
        tune, kernel_help="a kernel with a median heuristic: rbf, laplacian, chi2, poly, "
                          "sigmoid, matern (aliases resolve; default: rbf)",
        gamma_help="fixed at this value; default: searched around the median heuristic")
    tune.add_argument("--method", default="nystroem", choices=list(METHOD_NAMES),
                      metavar="NAME",
                      help=f"feature map: {', '.join(METHOD_NAMES)} (default: nystroem)")
    tune.add_argument("--n-components", type=keyword_or_int("auto", 1), default="auto",
                      metavar="N|auto",
                      help="output dimension D, or auto to grow it by doubling (default)")
    tune.add_argument("--tolerance", type=fraction("0.005"), default=0.005,
                      help="D stops doubling when a doubling gains less than this relative "
                           "score (default: 0.005)")
    tune.add_argument("--cv", type=keyword_or_int("loo", 2), default="loo", metavar="loo|K",
                      help="validation: closed-form leave-one-out (default) or K folds")
    tune.add_argument("--time-budget", type=number_above_zero("60"), default=None,
                      metavar="SECONDS",
                      help="stop searching so the whole run fits in this many seconds")
    _add_task_option(tune)
    _add_scale_option(tune, "auto", "auto")
    tune.add_argument("--search-rows", type=int_at_least(10), default=5000, metavar="N",
                      help="rows (a random subsample) the γ search runs on; beyond them D is "
                           "judged, and the model fitted, on all rows (default: 5000)")
    tune.add_argument("--memory-budget", type=number_above_zero("4"), default=None,
                      metavar="GB",
                      help="gigabytes one step may hold beyond the data; D stops growing "
                           "where the next would not fit (default: half the memory "
                           "available)")
    tune.add_argument("--max-components", type=int_at_least(1), default=4096, metavar="N",
                      help="largest D of the doubling (default: 4096)")
    _add_test_size_option(tune, None, "the data set's own test split if it has one, else "
                                      "none")
    tune.add_argument("--save", default=None, metavar="PATH", type=model_path,
                      help="write the fitted pipeline with kernelmaps.io (skops format; "
                           "needs pip install 'kernelmaps[persist]')")
    _add_run_options(tune, out=DEFAULT_TUNE_OUT, threads_default="every core",
                     quiet="no progress bar or messages",
                     json_help="print the choice and every configuration as JSON on stdout")


def build_parser() -> argparse.ArgumentParser:
    """The ``kernelmaps`` argument parser (subcommands in ``args.command``)."""
    parser = _Parser(prog="kernelmaps",
                     description="Explicit kernel feature maps, compared with the exact kernel.")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an input error")
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    _add_compare(commands)

    check = commands.add_parser(
        "check-kernel", help="is the kernel positive semi-definite on this data? (Mercer)",
        description="Build the kernel's Gram matrix on (a sample of) the data and check that "
                    "it is symmetric positive semi-definite. Exit status 1 if it is not.")
    _add_data_options(check)
    _add_kernel_options(check)
    check.add_argument("--max-samples", type=int_at_least(2, what=" (rows)"), default=1000,
                       help="rows sampled for the Gram matrix (default: 1000)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")

    _add_tune(commands)

    listing = commands.add_parser("datasets", help="the data sets available offline",
                                  description="The named data sets and where they come from.")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    return parser
