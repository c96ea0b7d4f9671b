"""Load sensing: the cores other processes leave free."""

from __future__ import annotations

import os
import time

import pytest

from kernelmaps._engine import _load
from tests._estimators import ENTRIES, one_per_class

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)


def test_free_cores_discount_this_processs_own_load(monkeypatch):
    # The load average counts this process's own threads too; its CPU use is taken off.
    monkeypatch.setattr(_load.os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    monkeypatch.setattr(_load, "runnable_elsewhere", lambda: None)  # the average alone
    monkeypatch.setitem(_load.usage, "cores", 2.0)
    monkeypatch.setitem(_load.usage, "wall", time.monotonic() + 60)  # no update now
    assert _load.free_cores(2) == 1.0
    monkeypatch.setitem(_load.usage, "cores", 0.0)
    assert _load.free_cores(2) == -1.0  # three other threads want the two cores


def test_a_finished_jobs_load_does_not_keep_the_engine_on_one_thread(monkeypatch):
    # The 1-minute load average still shows a job that ended; the runnable count does not.
    monkeypatch.setattr(_load.os, "getloadavg", lambda: (1.9, 1.9, 1.6))
    monkeypatch.setitem(_load.usage, "cores", 0.0)  # a process that just started
    monkeypatch.setitem(_load.usage, "wall", time.monotonic() + 60)  # no update now
    monkeypatch.setattr(_load, "runnable_elsewhere", lambda: 0.0)
    assert _load.free_cores(2) == 2.0
    # Another process really busy on one core: both estimates say so.
    monkeypatch.setattr(_load, "runnable_elsewhere", lambda: 1.0)
    assert _load.free_cores(2) == pytest.approx(1.0, abs=0.2)
    # No /proc (not Linux): the load average alone, as before.
    monkeypatch.setattr(_load, "runnable_elsewhere", lambda: None)
    assert _load.free_cores(2) < 0.2


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="Linux's /proc only")
def test_runnable_elsewhere_reads_proc():
    value = _load.runnable_elsewhere()
    assert value is not None and value >= 0
    assert _load.runnable_elsewhere() == value  # cached for a quarter of a second
