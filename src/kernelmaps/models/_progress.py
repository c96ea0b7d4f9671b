"""Progress of long fits: one update per conjugate-gradient iteration, with an ETA.

``verbose=1`` on a model turns it on: :class:`FitProgress` shows the iteration, the relative
residual against ``tol``, the elapsed time and an estimate of the time left, with ``rich``'s
progress bar when rich is installed (the ``cli`` extra), ``tqdm``'s when tqdm is, and
otherwise one ``logging`` record per iteration on the ``"kernelmaps"`` logger (shown by
``logging.basicConfig(level=logging.INFO)``). ``verbose=0`` (the default) prints nothing.

The ETA assumes CG keeps its observed rate: the relative residual has fallen by a factor
:math:`\\rho` per iteration since the first one, so reaching ``tol`` from :math:`r_k` takes
:math:`\\log(\\text{tol}/r_k)/\\log\\rho` more iterations (at most ``max_iter`` in all), each
as long as the mean so far.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import time
from typing import Any

__all__ = ["LOGGER", "FitProgress"]

LOGGER = logging.getLogger("kernelmaps")


def _backend() -> str:
    for name in ("rich", "tqdm"):
        if importlib.util.find_spec(name) is not None:
            return name
    return "logging"


class FitProgress:
    """Reports the phases and the CG iterations of one fit (a no-op when not verbose).

    Parameters
    ----------
    verbose : int
        0: silent; ≥ 1: report.
    owner : str
        The estimator's name, at the start of every message.
    backend : {"rich", "tqdm", "logging"} or None, default=None
        ``None``: the first of them that is installed.
    """

    def __init__(self, verbose: int, owner: str, *, backend: str | None = None) -> None:
        self.enabled = bool(verbose)
        self.owner = owner
        self.backend = (backend or _backend()) if self.enabled else "off"
        self._bar: Any = None
        self._start = time.perf_counter()

    # ------------------------------------------------------------------ phases
    def phase(self, message: str) -> None:
        """A one-off message (a phase finished), with the time since the fit started."""
        if not self.enabled:
            return
        text = f"{self.owner}: {message} ({time.perf_counter() - self._start:.2f} s)"
        if self.backend == "rich":
            self._rich_console().print(text)
        elif self.backend == "tqdm":
            from tqdm import tqdm

            tqdm.write(text)
        else:
            LOGGER.info(text)

    # ------------------------------------------------------------------ CG
    def start_iterations(self, max_iter: int, tol: float) -> None:
        """Called once before the first CG iteration."""
        self.max_iter, self.tol = max_iter, tol
        self._cg_start = time.perf_counter()
        self._first_residual: float | None = None
        if not self.enabled:
            return
        if self.backend == "rich":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[status]}"),
                                 console=self._rich_console())
            self._bar.start()
            self._task = self._bar.add_task(f"{self.owner} CG", total=max_iter, status="")
        elif self.backend == "tqdm":
            from tqdm import tqdm

            self._bar = tqdm(total=max_iter, desc=f"{self.owner} CG", unit="it")

    def eta(self, iteration: int, residual: float) -> tuple[float, int]:
        """``(seconds left, iterations left)`` at the observed rate (see the module)."""
        elapsed = time.perf_counter() - self._cg_start
        left = self.max_iter - iteration
        if self._first_residual is None:
            self._first_residual = residual
        if iteration > 1 and 0 < residual < self._first_residual:
            rate = math.log(residual / self._first_residual) / (iteration - 1)
            if residual <= self.tol:
                left = 0
            else:
                left = min(left, math.ceil(math.log(self.tol / residual) / rate))
        return left * elapsed / max(iteration, 1), left

    def iteration(self, iteration: int, residual: float) -> None:
        """The CG callback: iteration ``iteration`` ended at relative residual ``residual``."""
        seconds_left, left = self.eta(iteration, residual)
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self._cg_start
        status = (f"residual {residual:.2e} (tol {self.tol:.0e}), ETA {seconds_left:.1f} s "
                  f"(~{left} more)")
        if self.backend == "rich":
            self._bar.update(self._task, completed=iteration, total=iteration + left,
                             status=status)
        elif self.backend == "tqdm":
            self._bar.total = iteration + left
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(iteration - self._bar.n)
        else:
            LOGGER.info("%s: CG iteration %d/%d, %s, elapsed %.2f s", self.owner, iteration,
                        self.max_iter, status, elapsed)

    def finish(self, iterations: int, converged: bool) -> None:
        """Close the bar and say how CG ended."""
        if self._bar is not None:
            if self.backend == "rich":
                self._bar.stop()
            else:
                self._bar.close()
            self._bar = None
        self.phase(f"CG {'converged' if converged else 'stopped at max_iter'} after "
                   f"{iterations} iterations")

    def _rich_console(self) -> Any:
        from rich.console import Console

        if not hasattr(self, "_console"):
            self._console = Console(stderr=True)
        return self._console
