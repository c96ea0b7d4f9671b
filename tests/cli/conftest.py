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


def pty_output(*argv: str, columns: int = 80, cwd: Path | None = None) -> tuple[int, str]:
    """``python -m kernelmaps ARGV`` in a real pseudo-terminal ``columns`` wide (its size set
    with ``TIOCSWINSZ``, as a terminal emulator does): ``(exit code, what it showed)``, escape
    sequences removed and line ends as ``\\n`` (a lone ``\\r`` is a redraw, kept). POSIX only
    (the callers skip elsewhere)."""
    import fcntl
    import pty
    import re
    import struct
    import subprocess
    import sys
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {**ENV, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "kernelmaps", *argv], stdin=follower,
                               stdout=follower, stderr=follower, env=env, cwd=cwd,
                               close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command ended and closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    code = process.wait(timeout=300)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "",
                  b"".join(chunks).decode("utf-8", errors="replace"))
    return code, text.replace("\r\n", "\n")


def run_in_pty(*argv: str, columns: int = 80, cwd: Path | None = None) -> tuple[int, list[str]]:
    """:func:`pty_output` as ``(exit code, the non-blank lines it showed)``."""
    code, text = pty_output(*argv, columns=columns, cwd=cwd)
    return code, [line for line in text.split("\n") if line.strip()]
