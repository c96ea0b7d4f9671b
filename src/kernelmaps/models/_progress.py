"""Progress of long fits: one update per conjugate-gradient iteration, with an ETA.

``verbose=1`` on a model turns it on: :class:`FitProgress` shows the iteration, the relative
residual against ``tol``, the elapsed time and an estimate of the time left through
kernelmaps' one progress renderer (:class:`kernelmaps._progress.Progress`: ``rich``'s
progress bar when rich is installed (the ``cli`` extra), ``tqdm``'s when tqdm is, and
otherwise one ``logging`` record per iteration on the ``"kernelmaps"`` logger, shown by
``logging.basicConfig(level=logging.INFO)``). ``verbose=0`` (the default) prints nothing.
What is CG's own — the ETA — stays here.

The ETA assumes CG keeps its observed rate: the relative residual has fallen by a factor
:math:`\\rho` per iteration since the first one, so reaching ``tol`` from :math:`r_k` takes
:math:`\\log(\\text{tol}/r_k)/\\log\\rho` more iterations (at most ``max_iter`` in all), each
as long as the mean so far.
"""

from __future__ import annotations

import math
import time

from kernelmaps._progress import LOGGER, Progress

__all__ = ["LOGGER", "FitProgress"]


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
        self.progress = Progress(bool(verbose), owner, backend=backend)
        self.enabled = self.progress.enabled
        self.owner = owner
        self.backend = self.progress.backend
        self._start = time.perf_counter()

    # ------------------------------------------------------------------ phases
    def phase(self, message: str) -> None:
        """A one-off message (a phase finished), with the time since the fit started."""
        self.progress.message(f"{message} ({time.perf_counter() - self._start:.2f} s)")

    # ------------------------------------------------------------------ CG
    def start_iterations(self, max_iter: int, tol: float) -> None:
        """Called once before the first CG iteration."""
        self.max_iter, self.tol = max_iter, tol
        self._cg_start = time.perf_counter()
        self._first_residual: float | None = None
        self.progress.phase(f"CG (at most {max_iter} iterations, tol {tol:.0e})")

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
        self.progress.step(iteration, iteration + left, description="CG iteration",
                           status=f"residual {residual:.2e} (tol {self.tol:.0e}), ETA "
                                  f"{seconds_left:.1f} s (~{left} more), elapsed {elapsed:.2f} s")

    def finish(self, iterations: int, converged: bool) -> None:
        """Close the bar and say how CG ended."""
        self.progress.close()
        self.phase(f"CG {'converged' if converged else 'stopped at max_iter'} after "
                   f"{iterations} iterations")
