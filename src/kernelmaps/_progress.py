"""The one progress protocol of kernelmaps, and its one renderer.

A long piece of work — a model's fit (``verbose=1``), ``kernelmaps compare``, ``kernelmaps
tune`` — reports through a :class:`Progress`:

* :meth:`Progress.phase`: a named step begins (``"exact: kernel matrix"``, ``"KernelRidge
  CG"``); the bar's description;
* :meth:`Progress.step`: ``done`` of ``total`` (rows of a table, CG iterations, the fraction
  of a budget), with an optional new total, description and status text;
* :meth:`Progress.message`: a line of its own (a phase finished, an estimate);
* :meth:`Progress.close`: the bar ends (also on leaving a ``with`` block).

It is quiet by default (``enabled=False``: every call returns at once). When enabled it
draws with ``rich`` when rich is installed (the ``cli`` extra), else ``tqdm`` when tqdm is,
else one ``logging`` record per call on the ``"kernelmaps"`` logger (shown by
``logging.basicConfig(level=logging.INFO)``); ``backend=`` chooses one. The bar starts at
the first phase or step, so work that fails on bad input draws nothing.

``backend="lines"`` is for a stream that is not a terminal (a file, a pipe, a CI log), where
a bar is redrawn in place and so reaches the reader only when it ends: it writes a plain,
flushed line (``done/total``, elapsed, estimated remaining) when the work starts, at least
every ``interval`` seconds while it runs (a heartbeat thread, so one slow step still
reports), and when it ends; messages are lines of their own. The command line chooses it
for a stream that is not a terminal (:func:`choose_backend`).

The public callbacks stay as they were and are adapted here, in one place:
``compare(progress=, on_phase=)`` by :meth:`Progress.compare_callbacks`, ``tune(progress=)``
by :meth:`Progress.tune_callback`.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["BACKENDS", "LINE_INTERVAL_S", "LOGGER", "Progress", "choose_backend",
           "default_backend"]

LOGGER = logging.getLogger("kernelmaps")
#: The renderers, in the order :func:`default_backend` tries them ("lines" is chosen for a
#: stream that is not a terminal, :func:`choose_backend`).
BACKENDS = ("rich", "tqdm", "logging", "lines")
#: The longest a line renderer stays silent while work runs, in seconds: a reader of a log
#: file (``tail -f``) sees the run move at least this often.
LINE_INTERVAL_S = 10.0


def default_backend() -> str:
    """The first of :data:`BACKENDS` that is installed (logging always is)."""
    for name in BACKENDS[:2]:
        if importlib.util.find_spec(name) is not None:
            return name
    return "logging"


def choose_backend(stream: Any, preferred: str = "rich") -> str:
    """``preferred`` (a bar) when ``stream`` is a terminal, else ``"lines"``: a bar redrawn
    in place reaches a file or a pipe only when it ends."""
    isatty = getattr(stream, "isatty", None)
    return preferred if callable(isatty) and isatty() else "lines"


def _number(value: float) -> str:
    """An integer in plain notation with thousands separators (``2,000,000``, never
    ``2e+06``); another number in 4 significant digits."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.4g}"


def _count(done: float, total: float | None) -> str:
    """``3/7`` for counts, ``42%`` for a fraction (a float total of 1.0), ``3`` without a
    total; counts in plain notation (``2,000,000/2,000,000``)."""
    if total is None:
        return _number(done)
    if isinstance(total, float) and total == 1.0:
        return f"{100 * done:3.0f}%"
    return f"{_number(done)}/{_number(total)}"


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Progress:
    """Reports phases, steps with totals and messages of one piece of work (see the module).

    Parameters
    ----------
    enabled : bool, default=False
        Report at all; ``False`` makes every method a no-op.
    owner : str, default=""
        Put at the start of every message (a model's class name).
    backend : {"rich", "tqdm", "logging"} or None, default=None
        ``None``: :func:`default_backend`.
    console : rich.console.Console or None, default=None
        The console rich draws on (default: standard error).
    stream : file-like or None, default=None
        Where ``backend="lines"`` writes (default: ``console.file`` when a console is given,
        else standard error).
    interval : float, default=LINE_INTERVAL_S
        ``backend="lines"``: the longest silence, in seconds, while work runs.
    clock : callable, default=time.monotonic
        ``backend="lines"``: the clock elapsed and remaining times are read from.
    """

    def __init__(self, enabled: bool = False, owner: str = "", *, backend: str | None = None,
                 console: Any = None, stream: TextIO | None = None,
                 interval: float = LINE_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = bool(enabled)
        self.owner = owner
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS} or None; got {backend!r}.")
        self.backend = (backend or default_backend()) if self.enabled else "off"
        self._console = console
        self._bar: Any = None
        self._task: Any = None
        self._description = ""
        self._done: float = 0
        self._total: float | None = None
        self.started = False
        #: What a count counts, said by the line renderer (``"runs"`` for compare).
        self.unit = ""
        self._lines = (_LineRenderer(self, stream, interval, clock)
                       if self.backend == "lines" else None)

    # ------------------------------------------------------------------ the protocol
    def phase(self, name: str) -> None:
        """A named step begins: the bar's description (a logging record)."""
        if not self.enabled:
            return
        self._description = name
        if self._lines is not None:
            self._lines.update()
        elif self.backend == "logging":
            LOGGER.info("%s", self._prefixed(name))
        elif self.backend == "rich" or self._bar is not None:
            self._render()  # tqdm draws from the first step: it needs the total

    def step(self, done: float, total: float | None = None, *,
             description: str | None = None, status: str | None = None) -> None:
        """``done`` units of ``total`` (the last total given when ``None``)."""
        if not self.enabled:
            return
        self._done = done
        if total is not None:
            self._total = total
        if description is not None:
            self._description = description
        if self._lines is not None:
            self._lines.update(status, counted=True)
            return
        if self.backend == "logging":
            LOGGER.info("%s %s%s", self._prefixed(self._description),
                        _count(done, self._total), f", {status}" if status else "")
            return
        self._render(status)

    def message(self, text: str) -> None:
        """A line of its own, above the bar."""
        if not self.enabled:
            return
        text = self._prefixed(text)
        if self._lines is not None:
            self._lines.write(text)
        elif self.backend == "rich":
            self._rich_console().print(text)
        elif self.backend == "tqdm":
            from tqdm import tqdm

            tqdm.write(text)
        else:
            LOGGER.info("%s", text)

    def close(self) -> None:
        """End the bar (a later phase or step starts a new one)."""
        if self._lines is not None:
            self._lines.finish()
        if self._bar is not None:
            if self.backend == "rich":
                self._bar.stop()
            else:
                self._bar.close()
            self._bar = None
        self._done, self._total = 0, None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the public callbacks
    def compare_callbacks(self, on_start: Callable[[], None] | None = None) -> tuple[
            Callable[[dict[str, Any], int, int], None], Callable[[str], None]]:
        """``(progress, on_phase)`` for :func:`kernelmaps.evaluate.compare`: a step per row
        (described by its method and D), a phase per phase of the exact baseline.
        ``on_start`` is called once, before the first of either."""
        def begin() -> None:
            if not self.started:
                self.started = True
                if on_start is not None:
                    on_start()

        self.unit = "runs"

        def progress(row: dict[str, Any], done: int, total: int) -> None:
            begin()
            self.step(done, total, description=f"{row['method']} D={row['n_features_out']}")

        def on_phase(name: str) -> None:
            begin()
            self.phase(name)

        return progress, on_phase

    def tune_callback(self) -> Callable[[Any, float], None]:
        """``progress(trial, fraction_done)`` for :func:`kernelmaps.tune`: a step of the
        fraction, described by the trial's stage, D and score."""
        def progress(trial: Any, done: float) -> None:
            self.started = True
            self.step(done, 1.0, description=f"{trial.stage} D={trial.n_components} "
                                             f"score={trial.score:.4f}")

        return progress

    # ------------------------------------------------------------------ rendering
    def _prefixed(self, text: str) -> str:
        return f"{self.owner}: {text}" if self.owner else text

    def _render(self, status: str | None = None) -> None:
        if self.backend == "rich":
            if self._bar is None:
                from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

                self._bar = Progress(TextColumn("{task.description:<24}"), BarColumn(),
                                     TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                                     TextColumn("{task.fields[status]}"),
                                     console=self._rich_console())
                self._bar.start()
                self._task = self._bar.add_task("", total=None, count="", status="")
            fields: dict[str, Any] = {"description": self._prefixed(self._description),
                                      "completed": self._done, "total": self._total,
                                      "count": _count(self._done, self._total)
                                      if self._total is not None else ""}
            if status is not None:
                fields["status"] = status
            self._bar.update(self._task, **fields)
        else:  # tqdm
            from tqdm import tqdm

            if self._bar is None:
                self._bar = tqdm(total=self._total)
            self._bar.set_description_str(self._prefixed(self._description), refresh=False)
            if self._total is not None:
                self._bar.total = self._total
            if status is not None:
                self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(self._done - self._bar.n)

    def _rich_console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console


class _LineRenderer:
    """``backend="lines"`` of a :class:`Progress`: plain flushed lines (see the module).

    A line is written at the first phase, at the first step, on a phase or step at least
    ``interval`` seconds after the last line, by the heartbeat thread when a step runs
    longer than that, and at :meth:`finish`. The remaining time is the pace so far carried
    to the total (``elapsed · (total − done)/done``), said only once something is done.
    """

    def __init__(self, progress: Progress, stream: TextIO | None, interval: float,
                 clock: Callable[[], float]) -> None:
        self.progress = progress
        self._stream = stream
        self.interval = float(interval)
        self.clock = clock
        self._start: float | None = None
        self._last = 0.0
        self._status: str | None = None
        self._last_line = ""
        self._counted = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def stream(self) -> Any:
        if self._stream is not None:
            return self._stream
        console = self.progress._console
        return console.file if console is not None else sys.stderr

    def line(self) -> str:
        """The state as one line: ``description: 3/13 runs, 42 s elapsed, ~1 min 10 s
        left``."""
        p = self.progress
        elapsed = self.clock() - (self._start if self._start is not None else self.clock())
        parts = []
        if p._total is not None or p._done:
            parts.append(_count(p._done, p._total).strip() + (f" {p.unit}" if p.unit else ""))
        parts.append(f"{_duration(elapsed)} elapsed")
        if p._total and 0 < p._done < p._total:
            parts.append(f"~{_duration(elapsed * (p._total - p._done) / p._done)} left")
        if self._status:
            parts.append(self._status)
        label = p._prefixed(p._description)
        return (f"{label}: " if label else "") + ", ".join(parts)

    def write(self, text: str) -> None:
        with self._lock:
            stream = self.stream()
            stream.write(text + "\n")
            stream.flush()
            self._last, self._last_line = self.clock(), text

    def update(self, status: str | None = None, counted: bool = False) -> None:
        """A phase or a step (``counted``): a line when it is the first, or the first step
        (the total is known from then on), or the last line is ``interval`` old."""
        self._status = status
        first = self._start is None or (counted and not self._counted)
        self._counted = self._counted or counted
        if self._start is None:
            self._start = self.clock()
            self._stop.clear()
            self._thread = threading.Thread(target=self._beat, daemon=True,
                                            name="kernelmaps-progress")
            self._thread.start()
        if first or self.clock() - self._last >= self.interval:
            self.write(self.line())

    def _beat(self) -> None:
        # Sleeps until the last line is ``interval`` old (a line in between restarts the
        # wait), so the silence never exceeds ``interval`` beyond the thread's wake-up.
        while not self._stop.wait(min(max(self._last + self.interval - self.clock(), 0.01),
                                      self.interval)):
            if self.clock() - self._last >= self.interval:
                self.write(self.line())

    def finish(self) -> None:
        if self._start is None:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.line() != self._last_line:  # the end, unless just said
            self.write(self.line())
        self._start, self._thread, self._status, self._counted = None, None, None, False
