"""Shared by the tests of the ``kernelmaps`` command: a small CSV file, and the command run in
this process with its exit code and output."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from sklearn.datasets import load_digits

from kernelmaps.cli import main

#: The environment of a ``kernelmaps`` subprocess: BLAS on one thread, as CI's workers.
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def digits_csv(tmp_path_factory) -> Path:
    """The first 400 digits as a CSV file with a ``label`` column (one file per test module)."""
    X, y = load_digits(return_X_y=True)
    frame = pd.DataFrame(X[:400], columns=[f"px{i}" for i in range(64)])
    frame["label"] = y[:400]
    path = tmp_path_factory.mktemp("data") / "digits.csv"
    frame.to_csv(path, index=False)
    return path


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """``kernelmaps ARGV`` in this process: ``(exit code, stdout, stderr)``."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse exits by itself on usage errors and --version
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err
