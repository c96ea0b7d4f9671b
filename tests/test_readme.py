"""The README's two set-up commands stay true: CI runs the test one, the main job runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.index("```bash") < 40  # right under the title
    commands = _readme_commands()
    assert len(commands) == 2
    assert "examples/digits_demo.py" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in ci


def test_main_job_runs_and_reports_every_map():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "digits_demo.py")],
                            capture_output=True, text=True, timeout=300, check=True)
    lines = {line.split("  ")[0].strip(): line.split() for line in result.stdout.splitlines()
             if line.strip()}
    for name in ("Nystroem (rbf)", "RBFSampler", "PolynomialCountSketch",
                 "AdditiveChi2Sampler", "SkewedChi2Sampler"):
        row = next(v for k, v in lines.items() if k.startswith(name))
        error, accuracy = float(row[-3]), float(row[-2])
        assert 0 < error < 0.2, (name, error)
        assert accuracy > 0.9, (name, accuracy)
