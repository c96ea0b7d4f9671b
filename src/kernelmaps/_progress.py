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

The public callbacks stay as they were and are adapted here, in one place:
``compare(progress=, on_phase=)`` by :meth:`Progress.compare_callbacks`, ``tune(progress=)``
by :meth:`Progress.tune_callback`.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["BACKENDS", "LOGGER", "Progress", "default_backend"]

LOGGER = logging.getLogger("kernelmaps")
#: The renderers, in the order :func:`default_backend` tries them.
BACKENDS = ("rich", "tqdm", "logging")


def default_backend() -> str:
    """The first of :data:`BACKENDS` that is installed (logging always is)."""
    for name in BACKENDS[:-1]:
        if importlib.util.find_spec(name) is not None:
            return name
    return "logging"


def _count(done: float, total: float | None) -> str:
    """``3/7`` for counts, ``42%`` for a fraction (a float total of 1.0), ``3`` without a
    total."""
    if total is None:
        return f"{done:g}"
    if isinstance(total, float) and total == 1.0:
        return f"{100 * done:3.0f}%"
    return f"{done:g}/{total:g}"


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
    """

    def __init__(self, enabled: bool = False, owner: str = "", *, backend: str | None = None,
                 console: Any = None) -> None:
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

    # ------------------------------------------------------------------ the protocol
    def phase(self, name: str) -> None:
        """A named step begins: the bar's description (a logging record)."""
        if not self.enabled:
            return
        self._description = name
        if self.backend == "logging":
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
        if self.backend == "rich":
            self._rich_console().print(text)
        elif self.backend == "tqdm":
            from tqdm import tqdm

            tqdm.write(text)
        else:
            LOGGER.info("%s", text)

    def close(self) -> None:
        """End the bar (a later phase or step starts a new one)."""
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
