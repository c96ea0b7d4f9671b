"""``kernelmaps compare`` and ``tune`` with their output in a pipe: progress lines while the work
runs (a bar redrawn in place reached a file or a pipe only when it ended)."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.cli.conftest import ENV

RUNS = re.compile(r": (\d+)/(\d+) runs, .* elapsed")
PERCENT = re.compile(r"score=\S+: +(\d+)%, .* elapsed")


def lines_as_they_arrive(*args: str) -> tuple[int, list[tuple[str, bool]]]:
    """The command's merged output read line by line as written: ``(line, process still
    running when it was read)``."""
    process = subprocess.Popen([sys.executable, "-m", "kernelmaps", *args], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = [(line.rstrip("\n"), process.poll() is None) for line in process.stdout]
    return process.wait(timeout=300), seen


def test_compare_writes_progress_lines_to_a_pipe_while_it_runs(digits_csv, tmp_path):
    code, seen = lines_as_they_arrive(
        "compare", "--data", str(digits_csv), "--methods", "nystroem,rbf_sampler",
        "--n-components", "10,40,160", "--seeds", "2", "--error-sample", "200",
        "--out", str(tmp_path / "report"), "--threads", "1")
    assert code == 0, "\n".join(line for line, _ in seen)
    counts = [(int(m[1]), int(m[2]), alive) for line, alive in seen
              if (m := RUNS.search(line))]
    # A count short of the total, read while the process was still running: progress as it
    # happens, not one bar at the end.
    assert any(done < total and alive for done, total, alive in counts), seen
    assert counts[-1][:2] == (13, 13)


def test_tune_writes_progress_lines_to_a_pipe_while_it_runs(digits_csv, tmp_path):
    code, seen = lines_as_they_arrive(
        "tune", "--data", str(digits_csv), "--max-components", "64",
        "--out", str(tmp_path / "report"), "--threads", "1")
    assert code == 0, "\n".join(line for line, _ in seen)
    percents = [(int(m[1]), alive) for line, alive in seen if (m := PERCENT.search(line))]
    assert any(p < 100 and alive for p, alive in percents), seen
