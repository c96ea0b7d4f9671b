"""The speed gate's machinery (benchmarks/gate.py): ratios, the verdict, the re-measure.

The gate's cases themselves run in .ci/run (``python -m benchmarks gate``); here synthetic
cases of known ratio check that it measures a ratio, passes within FACTOR times the record,
fails beyond it after measuring once more, and exits 1 with the table.
"""

from __future__ import annotations

import json

import pytest
from benchmarks import gate

ROOT = gate.RECORD.parents[1]


class _WorkClock:
    """The gate's clocks (CPU and wall), moved only by the synthetic work: no test here
    depends on how fast or loaded the machine is."""

    def __init__(self) -> None:
        self.now = 0.0

    def process_time(self) -> float:
        return self.now

    perf_counter = process_time


CLOCK = _WorkClock()


def _busy(seconds: float):
    """Work of ``seconds`` on the gate's clock."""

    def work() -> None:
        CLOCK.now += seconds

    return work


@pytest.fixture(autouse=True)
def _work_clock(monkeypatch):
    monkeypatch.setattr(gate, "time", CLOCK)


@pytest.fixture(autouse=True)
def _one_call_per_sample(monkeypatch):
    monkeypatch.setattr(gate, "MIN_SAMPLE_S", 0.0)  # the synthetic work is long enough


@pytest.fixture
def synthetic(monkeypatch):
    """One case whose side ``ours`` does three times the work of its floor."""
    calls = []

    def case():
        calls.append(1)
        return _busy(0.003), _busy(0.001), 3

    monkeypatch.setattr(gate, "CASES", {"three": case})
    monkeypatch.setattr(gate, "QUALITY_CASES", {})
    return calls


def test_measure_ratio_finds_the_ratio_of_the_work():
    measure = gate.measure_ratio(_busy(0.003), _busy(0.001), pairs=3,
                                 clock=CLOCK.process_time)
    assert measure.ratio == pytest.approx(3.0) and measure.spread == pytest.approx(0.0)
    assert measure.pairs == 3 and measure.ours_s == pytest.approx(0.003)


def test_a_case_within_its_factor_passes_and_beyond_fails_after_a_second_look(synthetic):
    passed, _ = gate.run_gate(["three"], {"cases": {"three": {"ratio": 3.0}}},
                                     quiet=True)
    assert passed and len(synthetic) == 1  # measured once
    passed, _ = gate.run_gate(["three"], {"cases": {"three": {"ratio": 1.0}}}, quiet=True)
    assert not passed and len(synthetic) == 3  # 3 > 2 × 1: measured again, then failed


def test_a_case_of_its_own_factor_fails_beyond_it(synthetic, monkeypatch):
    # 3 = 2 × 1.5: within FACTOR (2) of a record of 1.5, beyond a factor of 1.5 of 1.8.
    monkeypatch.setattr(gate, "CASE_FACTOR", {"three": 1.5})
    assert gate.run_gate(["three"], {"cases": {"three": {"ratio": 2.1}}}, quiet=True)[0]
    assert not gate.run_gate(["three"], {"cases": {"three": {"ratio": 1.8}}}, quiet=True)[0]
    assert gate.allowed_ratio("three", 2.0) == 3.0
    assert gate.allowed_ratio("other", 2.0) == gate.FACTOR * 2.0


def test_the_gate_exits_1_with_the_table(synthetic, tmp_path, capsys):
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"cases": {"three": {"ratio": 1.0}}}))
    assert gate.main(["--record-path", str(record)]) == 1
    out = capsys.readouterr().out
    assert "SPEED GATE FAILED" in out and "load avg" in out
    assert "three" in out and "re-measured" in out and " NO" in out
    record.write_text(json.dumps({"cases": {"three": {"ratio": 3.0}}}))
    assert gate.main(["--record-path", str(record), "--repeat", "2"]) == 0
    assert "summary of 2 runs (0 failed)" in capsys.readouterr().out


def test_a_quality_case_fails_above_its_limit_whatever_its_record(monkeypatch):
    # Errors with fixed seeds are deterministic: the limit is the target (1.10), not 2× a record.
    monkeypatch.setattr(gate, "QUALITY_CASES", {"q": lambda: (1.2, 0.012, 0.010)})
    passed, measures = gate.run_gate(["q"], {"cases": {"q": {"ratio": 1.0}}}, quiet=True)
    assert not passed and measures["q"].ratio == 1.2
    monkeypatch.setattr(gate, "QUALITY_CASES", {"q": lambda: (1.05, 0.0105, 0.010)})
    assert gate.run_gate(["q"], {"cases": {"q": {"ratio": 1.0}}}, quiet=True)[0]


def test_every_case_is_recorded_and_ci_runs_the_gate_and_the_layers():
    record = json.loads(gate.RECORD.read_text())
    assert set(record["cases"]) == set(gate.CASES) | set(gate.QUALITY_CASES)
    assert all(case["ratio"] > 0 for case in record["cases"].values())
    assert {"machine", "date", "load", "threads"} <= set(record)
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m benchmarks gate" in ci and "lint-imports" in ci
