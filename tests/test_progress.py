"""kernelmaps._progress: the one progress protocol and its renderer."""

import io
import logging
from types import SimpleNamespace

import pytest

from kernelmaps._progress import Progress, default_backend


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
