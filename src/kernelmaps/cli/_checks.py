"""The data a subcommand was given, checked against what it needs, in the user's words.

The library's own checks speak of ``X``, ``y`` and Python parameters (``task='regression'``,
``cv='loo'``); here the same conditions are refused before any work with the file, the
column and the flag that the user typed, and what to do instead: one line, exit status 2
(:class:`InputError`, a ValueError).
"""

from __future__ import annotations

import argparse

import numpy as np

from kernelmaps.cli.data import Dataset
from kernelmaps.evaluate import task_of
from kernelmaps.tuning.search import min_rows

__all__ = ["InputError", "check_data"]

#: compare's fewest rows: two to train on (the median heuristic needs two) and one to test.
COMPARE_MIN_ROWS = 3


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit status 2."""


def _target_text(data: Dataset) -> str:
    """``column 'cultivar' of wine.csv`` (a table), or ``the target of digits`` (other data)."""
    if data.target is not None:
        return f"column {data.target!r} of {data.name}"
    return f"the target of {data.name}"


def _rows(n: int) -> str:
    return f"{n} row{'s' * (n != 1)}"


def check_data(data: Dataset, args: argparse.Namespace) -> str:
    """Refuse data the subcommand ``args.command`` cannot run on (too few rows, ``--task
    regression`` on labels, a target of one class); the task (:func:`task_of`) otherwise."""
    n = data.X.shape[0]
    if args.command == "tune":
        needed = min_rows(args.cv)
        why = (f"with --cv {args.cv} (two per fold; use fewer folds)" if isinstance(args.cv, int)
               else "(leave-one-out validation fits on two and leaves one out)")
    else:
        needed, why = COMPARE_MIN_ROWS, "(two to train on and one to test)"
    if data.X_test is None and n < needed:
        raise InputError(f"{data.name} has {_rows(n)}; {args.command} needs at least {needed} "
                         f"{why}.")
    max_rows = getattr(args, "max_rows", None)
    if data.X_test is None and max_rows is not None and max_rows < needed:
        raise InputError(f"--max-rows {max_rows} keeps {_rows(max_rows)}; {args.command} needs "
                         f"at least {needed} {why}.")
    y = np.asarray(data.y)
    if args.task == "regression" and y.dtype.kind not in "biuf":
        labels = np.unique(y.astype(str))
        example = ", ".join(repr(str(v)) for v in labels[:3]) + (", ..." * (labels.size > 3))
        raise InputError(f"--task regression needs a numeric target, but {_target_text(data)} "
                         f"holds labels ({example}); drop --task to classify them, or "
                         "choose a numeric --target.")
    task = task_of(y, args.task)
    if task == "classification" and np.unique(y).size < 2:
        only = np.asarray(y[0]).item()
        raise InputError(f"{_target_text(data)} holds a single class ({only!r} in all "
                         f"{_rows(n)}): there is nothing to tell apart, and more rows of it "
                         "will not help; choose another --target.")
    return task
