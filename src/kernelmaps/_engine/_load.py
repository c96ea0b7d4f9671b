"""Load sensing: the cores other processes leave free (the load average less this process's
own use, bounded by the threads runnable right now), which caps the engine's threads."""

from __future__ import annotations

import math
import os
import threading
import time

__all__ = ["free_cores", "runnable_elsewhere"]

#: This process's CPU use (cores' worth), smoothed over about a minute like the load
#: average it is compared with, and the (wall, CPU) clock readings it was last updated at.
usage_lock = threading.Lock()
usage = {"wall": time.monotonic(), "cpu": time.process_time(), "cores": 0.0}


def free_cores(cores: int) -> float:
    """Cores not taken by other processes: ``cores`` less the 1-minute load average (runnable
    threads of every process) that is not this process's own CPU use.

    A second engine thread pays only where a core is free for it: on a machine whose cores
    are all busy, the threads of one call wait for each other (and for the GIL between
    NumPy calls) a scheduler time slice at a time — measured on a 2-core VM at load 8, two
    threads took 3-5× longer than one at 0.5-2 ms of work. Where the load average is not
    available (Windows), every core counts as free.

    The load average lags by about a minute: a process started after a heavy job (or this
    process's own earlier work, before its usage is known) would see the finished job's
    load and run single-threaded for that minute — measured on a 2-core VM: a new process
    started right after a 30 s two-core job saw a load average of 1.37, so 0.63 free cores
    (one thread), with no thread of any other process runnable. Where Linux says how many
    threads are runnable right now (:func:`runnable_elsewhere`), the estimate of the other
    processes' use cannot exceed that instantaneous count.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - platform-dependent
        return float(cores)
    wall, cpu = time.monotonic(), time.process_time()
    with usage_lock:
        elapsed = wall - usage["wall"]
        if elapsed >= 1.0:
            recent = math.exp(-elapsed / 60.0)  # the load average's own time constant
            rate = (cpu - usage["cpu"]) / elapsed
            usage.update(wall=wall, cpu=cpu,
                          cores=recent * usage["cores"] + (1.0 - recent) * rate)
        own = usage["cores"]
    busy = max(0.0, load - own)
    now = runnable_elsewhere()
    return cores - (busy if now is None else min(busy, now))


#: The last reading of :func:`runnable_elsewhere` and when it was taken (monotonic s):
#: read at most every 0.25 s, so a stream of small calls does not walk /proc each time.
_runnable = {"at": -1.0, "value": None}


def runnable_elsewhere() -> float | None:
    """Threads of other processes runnable now (Linux: the running count of /proc/loadavg
    less this process's threads in state R), or None where /proc is not there."""
    now = time.monotonic()
    with usage_lock:
        if now - _runnable["at"] < 0.25:
            return _runnable["value"]
    try:
        with open("/proc/loadavg", encoding="ascii") as file:
            running = int(file.read().split()[3].split("/")[0])
        own = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat", encoding="ascii",
                          errors="replace") as file:
                    stat = file.read()
            except OSError:  # the thread ended meanwhile
                continue
            own += stat[stat.rindex(")") + 2:].startswith("R")
        value: float | None = float(max(0, running - own))
    except (OSError, ValueError, IndexError):
        value = None
    with usage_lock:
        _runnable.update(at=now, value=value)
    return value
