"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest

from kernelmaps._engine import _blocks


@pytest.fixture
def free_cores(monkeypatch):
    """Set how many cores the engine sees free of other processes' work (the load average
    of a shared test machine would otherwise decide)."""
    def set_free(cores: float) -> None:
        monkeypatch.setattr(_blocks, "free_cores", lambda available: float(cores))
    set_free(64)
    return set_free
