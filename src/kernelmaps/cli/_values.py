"""The value types of the ``kernelmaps`` command's options: each turns the text of one option
into a checked value, or refuses it with an :class:`argparse.ArgumentTypeError` naming what it
expected (an example, the valid names and the closest ones to a misspelling).

Standard library only, like :mod:`kernelmaps.cli._parser`, which adds the options.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import tempfile
from pathlib import Path
from typing import Any

from kernelmaps._suggest import did_you_mean
from kernelmaps.cli._catalog import (
    KERNEL_ALIASES,
    KERNEL_NAMES,
    METHOD_NAMES,
    canonical_kernel_name,
)

__all__ = [
    "PARAM_TYPES", "aliases_text", "degree", "fraction", "gamma", "int_at_least",
    "int_list", "kernel_name", "kernel_param", "keyword_or_int", "method_names",
    "model_path", "number", "number_above_zero", "output_dir", "positive_int",
    "writable_folder",
]


# =========================================================================== parsing
def int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 50,100,200; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers; got {text!r}")
    return values


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def number_above_zero(example: str, below: float | None = None) -> Any:
    """A value type for a finite number in (0, ``below``) — or > 0 when ``below`` is None
    (``example`` shows one)."""
    expected = "a positive number" if below is None else f"a number in (0, {below:g})"

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not (math.isfinite(value) and value > 0 and (below is None or value < below)):
            raise argparse.ArgumentTypeError(f"expected {expected} such as {example}; got "
                                             f"{text!r}")
        return value

    return number


def fraction(example: str) -> Any:
    """A value type for a number strictly between 0 and 1 (``example`` shows one)."""
    return number_above_zero(example, below=1.0)


def int_at_least(low: int, high: int | None = None, what: str = "") -> Any:
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


def keyword_or_int(keyword: str, low: int) -> Any:
    """A value type for ``keyword`` itself or an integer >= ``low`` (``--n-components auto``,
    ``--cv loo``)."""
    integer = int_at_least(low)

    def parse(text: str) -> str | int:
        if text == keyword:
            return text
        try:
            return integer(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected {keyword!r} or an integer >= {low}; got {text!r}") from None

    return parse


def kernel_name(text: str) -> str:
    """A kernel name or alias (kept as typed; :func:`resolve_kernel` reads aliases)."""
    if text == "precomputed":  # the command explains why it cannot take one
        return text
    if canonical_kernel_name(text) is None:
        raise argparse.ArgumentTypeError(
            f"unknown kernel {text!r}{did_you_mean(text, [*KERNEL_NAMES, *KERNEL_ALIASES])}; "
            f"valid kernels are {sorted(KERNEL_NAMES)} (aliases: {aliases_text()})")
    return text


def aliases_text() -> str:
    return ", ".join(f"{alias} = {name}" for alias, name in KERNEL_ALIASES.items())


def method_names(text: str) -> str:
    """Comma-separated method names, each checked against the registry (kept as typed)."""
    for name in (part.strip() for part in text.split(",")):
        if name and name not in METHOD_NAMES:
            raise argparse.ArgumentTypeError(
                f"unknown method {name!r}{did_you_mean(name, METHOD_NAMES)}; valid "
                f"methods are {sorted(METHOD_NAMES)}")
    return text


def output_dir(text: str) -> str:
    """A report folder that can be written: checked before any work, by creating (and
    removing) a probe in the folder or in its nearest existing parent — the permission bits
    alone do not say it (root, read-only file systems, /proc)."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory; choose "
                                         "another path")
    writable_folder(path, text, "the report folder")
    return text


def writable_folder(path: Path, text: str, what: str) -> Path:
    """The nearest existing folder of ``path``, checked writable by creating (and removing) a
    probe in it — the permission bits alone do not say it (root, read-only file systems,
    /proc)."""
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
        raise argparse.ArgumentTypeError(f"cannot write {what} {text} ({reason} in "
                                         f"{existing}); choose a writable directory") from None
    return existing


def model_path(text: str) -> str:
    """``--save PATH``: checked before any work — skops importable (the ``persist`` extra)
    and the file writable, so a long search does not end in a traceback."""
    try:
        importlib.import_module("skops.io")
    except ImportError:
        raise argparse.ArgumentTypeError(
            "saving a model needs skops, which is not installed: pip install "
            "'kernelmaps[persist]' (or drop --save)") from None
    path = Path(text).expanduser()
    if path.is_dir() or text.endswith(("/", "\\")):
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file path such as "
                                         f"{Path(text) / 'model.skops'}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"the folder of {text} does not exist; create it "
                                         "or choose another path")
    writable_folder(path.parent, text, "the model file")
    if path.exists():
        try:
            path.open("r+b").close()  # opened for writing, nothing written
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise argparse.ArgumentTypeError(f"cannot overwrite {text} ({reason}); choose "
                                             "another path") from None
    return text


def number(text: str) -> int | float:
    """A kernel parameter: an int when it is written as one (degrees), else a float."""
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number; got {text!r}")
    return value


def gamma(text: str) -> int | float | str:
    """``--gamma`` (and ``--kernel-param gamma=``): a finite number > 0, or ``scale`` /
    ``auto`` (scikit-learn's data-dependent rules, as Python's ``gamma=`` takes them). γ = 0
    makes every kernel value the same (exp(0) = 1: no map or model can learn from it), a
    negative one turns the kernel upside down; leaving it out chooses it by the median
    heuristic."""
    if text.strip().lower() in ("scale", "auto"):
        return text.strip().lower()
    try:
        float(text)  # nan and inf are numbers: number() says they must be finite
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 such as 0.1, or scale or "
                                         f"auto; got {text!r}") from None
    value = number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected gamma > 0 such as 0.1, or scale or auto (gamma = 0 makes every "
            f"kernel value equal; leave it out for the median heuristic); got {text!r}")
    return value


def degree(text: str) -> int | float:
    """``--degree``: a polynomial degree >= 1 (an integer as a rule; scikit-learn's
    polynomial kernel takes a real one too)."""
    value = number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a degree >= 1 such as 3; got {text!r}")
    return value


#: The kernel parameters whose value type is checked at the command line: the same as the
#: flag of the same name.
PARAM_TYPES = {"gamma": gamma, "degree": degree}


def kernel_param(text: str) -> tuple[str, int | float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as gamma=0.1; got {text!r}")
    name = name.strip()
    try:
        return name, PARAM_TYPES.get(name, number)(value)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{name}=: {error}") from None
