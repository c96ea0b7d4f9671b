"""The README's two set-up commands stay true: CI runs the test one, the main job runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# The suite runs on xdist workers that share the cores: one BLAS thread per process avoids
# oversubscription (multi-threaded OpenBLAS on busy cores is many-fold slower).
ONE_BLAS_THREAD = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.index("```bash") < 40  # right under the title
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("&& .venv/bin/kernelmaps compare")  # the main job, defaults
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in ci


def test_main_job_runs_and_reports_every_default_method(tmp_path):
    # The README's main job as written (its last step, in this environment's venv), from a
    # fresh directory so its default report folder lands there.
    command = _readme_commands()[0].split("&&")[-1].split()
    command[0] = str(Path(sys.executable).parent / Path(command[0]).name)
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env=ONE_BLAS_THREAD)
    assert result.returncode == 0, result.stderr
    report = tmp_path / "kernelmaps-report"
    assert (report / "report.html").exists()
    printed = {line.split()[0] for line in result.stdout.splitlines() if line.split()}
    assert {"exact", "nystroem", "rbf_sampler"} <= printed
    results = pd.read_csv(report / "results.csv")
    exact = results[results.method == "exact"].iloc[0]
    assert exact["error"] < 1e-8 and exact["score"] > 0.98
    for method in ("nystroem", "rbf_sampler"):
        rows = results[results.method == method]
        assert rows.groupby("n_components")["score"].mean().max() > 0.95, method
    nystroem = results[results.method == "nystroem"].groupby("n_components")["error"].mean()
    assert nystroem.is_monotonic_decreasing


def test_digits_example_runs_and_reports_every_map():
    # The gallery example run as a script (MPLBACKEND=Agg: its figure goes nowhere).
    example = ROOT / "examples" / "plot_every_map_on_digits.py"
    result = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                            timeout=300, check=True, env={**ONE_BLAS_THREAD, "MPLBACKEND": "Agg"})
    lines = {line.split("  ")[0].strip(): line.split() for line in result.stdout.splitlines()
             if line.strip()}
    for name in ("Nystroem (rbf)", "RBFSampler", "PolynomialCountSketch",
                 "AdditiveChi2Sampler", "SkewedChi2Sampler"):
        row = next(v for k, v in lines.items() if k.startswith(name))
        error, accuracy = float(row[-3]), float(row[-2])
        assert 0 < error < 0.2, (name, error)
        assert accuracy > 0.9, (name, accuracy)
