"""kernelmaps._progress: the one progress protocol and its renderer."""

import io
import logging
import threading
from types import SimpleNamespace

import pytest

from kernelmaps._progress import Progress, choose_backend, default_backend


def _drive(progress):
    progress.phase("exact: kernel matrix")
    progress.step(1, 4, description="nystroem D=50")
    progress.step(3, status="residual 1e-3")
    progress.message("estimate: ~5 s")
    progress.close()


def test_quiet_by_default(caplog, capsys):
    progress = Progress()
    assert progress.backend == "off"
    with caplog.at_level("INFO", logger="kernelmaps"):
        _drive(progress)
    assert not caplog.records and capsys.readouterr() == ("", "")


def test_the_logging_renderer_writes_one_record_per_call(caplog):
    progress = Progress(True, "KernelRidge", backend="logging")
    with caplog.at_level("INFO", logger="kernelmaps"):
        _drive(progress)
    assert [r.getMessage() for r in caplog.records] == [
        "KernelRidge: exact: kernel matrix",
        "KernelRidge: nystroem D=50 1/4",
        "KernelRidge: nystroem D=50 3/4, residual 1e-3",  # the total is kept
        "KernelRidge: estimate: ~5 s",
    ]


def test_the_rich_renderer_draws_the_bar_and_the_messages():
    console_module = pytest.importorskip("rich.console")
    out = io.StringIO()
    console = console_module.Console(file=out, width=100, force_terminal=False)
    progress = Progress(True, backend="rich", console=console)
    with progress:
        progress.step(0.25, 1.0, description="gamma D=32")
        progress.message("a line of its own")
        progress.step(1.0, description="done")
    text = out.getvalue()
    assert "a line of its own" in text and "done" in text and "100%" in text
    assert progress._bar is None  # closed on leaving the block


def test_the_tqdm_renderer(capsys):
    pytest.importorskip("tqdm")
    progress = Progress(True, "KernelRidge", backend="tqdm")
    _drive(progress)
    err = capsys.readouterr().err
    assert "KernelRidge: nystroem D=50" in err and "3/4" in err and "residual 1e-3" in err


def test_a_backend_is_checked_and_one_is_always_there():
    assert default_backend() in ("rich", "tqdm", "logging")
    with pytest.raises(ValueError, match="backend must be one of"):
        Progress(True, backend="curses")


def test_the_public_callbacks_of_compare_and_tune_drive_it():
    seen = []

    class Recorder(Progress):
        def phase(self, name):
            seen.append(("phase", name))

        def step(self, done, total=None, *, description=None, status=None):
            seen.append(("step", done, total, description))

    started = []
    progress = Recorder(True, backend="logging")
    on_row, on_phase = progress.compare_callbacks(on_start=lambda: started.append(1))
    assert not progress.started
    on_phase("exact: kernel matrix")
    on_row({"method": "nystroem", "n_features_out": 50}, 1, 3)
    tune = progress.tune_callback()
    tune(SimpleNamespace(stage="gamma", n_components=32, score=0.5), 0.2)
    assert started == [1] and progress.started  # on_start once, before the first call
    assert seen == [("phase", "exact: kernel matrix"), ("step", 1, 3, "nystroem D=50"),
                    ("step", 0.2, 1.0, "gamma D=32 score=0.5000")]


def test_fit_progress_reports_through_it(caplog):
    from kernelmaps.models._progress import FitProgress

    fit = FitProgress(1, "KernelRidge", backend="logging")
    assert isinstance(fit.progress, Progress)
    with caplog.at_level(logging.INFO, logger="kernelmaps"):
        fit.start_iterations(10, 1e-3)
        fit.iteration(1, 1e-1)
        fit.finish(1, converged=False)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[1].startswith("KernelRidge: CG iteration 1/10, residual 1.00e-01")
    assert "stopped at max_iter after 1 iterations" in messages[-1]


# ------------------------------------------------------------------ the line renderer
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_line_renderer_says_done_of_total_elapsed_and_remaining_every_interval():
    clock, out = FakeClock(), io.StringIO()
    # interval: the rule under test; the heartbeat thread waits on the real clock, which a
    # fast test never lets reach 10 s, so every line here comes from a step.
    progress = Progress(True, backend="lines", stream=out, clock=clock)
    on_row, on_phase = progress.compare_callbacks()
    on_phase("exact: kernel matrix")  # the first event: a line at once
    for done, now in [(1, 4.0), (2, 13.9), (3, 14.0), (4, 19.0), (5, 24.0)]:
        clock.now = now
        on_row({"method": "nystroem", "n_features_out": 50}, done, 10)
    progress.close()
    assert out.getvalue().splitlines() == [
        "exact: kernel matrix: 0 s elapsed",
        "nystroem D=50: 1/10 runs, 4 s elapsed, ~36 s left",  # the first count
        "nystroem D=50: 3/10 runs, 14 s elapsed, ~33 s left",  # 10 s after the last line
        "nystroem D=50: 5/10 runs, 24 s elapsed, ~24 s left",
    ]


def test_the_line_renderer_reports_a_slow_step_from_its_heartbeat():
    out = io.StringIO()
    progress = Progress(True, backend="lines", stream=out, interval=0.01)
    progress.step(1, 3, description="one slow run")
    for _ in range(2000):  # waits for the heartbeat's line (no timing asserted)
        if len(out.getvalue().splitlines()) >= 2:
            break
        threading.Event().wait(0.01)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("one slow run: 1/3") for line in lines)


def test_counts_are_integers_in_plain_notation():
    out = io.StringIO()
    with Progress(True, backend="lines", stream=out) as progress:
        progress.step(2_000_000, 2_000_000, description="reading")
    assert "reading: 2,000,000/2,000,000" in out.getvalue() and "e+06" not in out.getvalue()


def test_a_bar_on_a_terminal_lines_elsewhere():
    assert choose_backend(io.StringIO()) == "lines"
    assert choose_backend(SimpleNamespace(isatty=lambda: True)) == "rich"
