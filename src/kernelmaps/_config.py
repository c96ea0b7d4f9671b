"""Process-wide settings of the transform engine.

These knobs matter for every map and are therefore set in one place rather than as a
constructor parameter on each estimator (which would break drop-in compatibility with
scikit-learn's signatures):

``n_threads``
    The most threads the chunked transform engine runs row blocks on. ``None`` (default)
    allows every core available to the process; ``1`` runs blocks serially. A call uses
    fewer where its work would not pay for them or other processes keep the cores busy
    (see :mod:`kernelmaps._engine`); results are identical for any setting. Inside a call
    of several blocks BLAS runs on one thread, so the machine is not oversubscribed. A map
    with its own ``n_jobs`` parameter (``Nystroem``) overrides this when ``n_jobs`` is not
    ``None``.
``block_bytes``
    Target size in bytes of the working set of one row block (output rows plus the map's
    temporaries). The default keeps a block in the per-core L2/L3 cache, so the in-place
    ufunc passes after the matrix product hit cache rather than main memory.
``device_block_bytes``
    The same budget for arrays on an accelerator (PyTorch, CuPy, ... through scikit-learn's
    ``array_api_dispatch``): one row block's output rows plus temporaries. Devices want
    large blocks (one GEMM over many rows), so the default is 1 GiB; a transform whose
    output and temporaries fit runs as one block. Lower it when device memory is short.
``kernel_cache_bytes``
    How many bytes of kernel blocks one fit may keep between its passes over the data
    (``KernelRidge(solver="nystrom")`` keeps its ``K_nM`` blocks so a conjugate-gradient
    iteration reads them instead of recomputing them). ``None`` (default): half of the
    memory available when the fit starts (:func:`available_memory`); ``0`` recomputes
    every pass.
``jit``
    Whether the float64 cosine of the random-feature maps (``RBFSampler``,
    ``RandomFourierFeatures``, ``SkewedChi2Sampler``, the χ² maps) runs as Numba-compiled
    code — one pass per row instead of NumPy's chunked ufunc passes, about 5× faster, with
    the same numbers bit for bit (the same IEEE operations in the same order, no fused
    multiply-add). ``"auto"`` (default): compiled once the cosine work of the process — or
    of one fit or transform, counted before its first block — repays loading Numba
    (:data:`kernelmaps._fastmath.JIT_AUTO_ELEMENTS`), NumPy before that and
    where Numba is not installed, so ``import kernelmaps`` and small transforms never import
    it. ``True``: always compiled (an ImportError naming the fix when Numba is missing).
    ``False``: NumPy only. The setting also chooses how ``KernelRidge(solver="nystrom")``'s
    conjugate-gradient passes sweep a float32 kernel cache: with a compiled kernel instead
    of two BLAS calls per sub-block (1.1-2.6× faster a pass; equal to rounding, not bit for
    bit: :func:`kernelmaps.models.interface.compiled_sweep`). There ``True`` always
    compiles, ``False`` never, and ``"auto"`` compiles when the fit's own known work — the
    cache's size × ``max_iter`` passes, up to 3 targets — repays loading Numba, never by
    what the process ran before, so a fit's numbers do not depend on its history
    (``fit_info_["sweep"]`` says which ran).

:func:`set_config` changes the settings of the whole process; :func:`config_context` changes
them for the calling thread only (its context, as :mod:`contextvars` defines it), so threads
of a service can each use their own without undoing each other's. The engine's worker
threads run in the context of the call that started them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from kernelmaps._optional import import_optional
from kernelmaps._suggest import did_you_mean

_DEFAULTS: dict[str, Any] = {"n_threads": None, "block_bytes": 8 * 1024 * 1024,
                             "device_block_bytes": 1024 * 1024 * 1024,
                             "kernel_cache_bytes": None, "jit": "auto"}
_lock = threading.Lock()
#: The process-wide settings (:func:`set_config`).
_config: dict[str, Any] = dict(_DEFAULTS)
#: The settings of the active :func:`config_context` blocks of this thread (or task).
_overrides: ContextVar[Mapping[str, Any]] = ContextVar(
    "kernelmaps_config", default=MappingProxyType({}))


def get_config() -> dict[str, Any]:
    """Return a copy of the current kernelmaps settings.

    Returns
    -------
    dict
        ``n_threads``, ``block_bytes``, ``device_block_bytes``, ``kernel_cache_bytes`` and
        ``jit``:
        the process-wide settings, with those of the calling thread's
        :func:`config_context`.

    Examples
    --------
    >>> from kernelmaps import config_context, get_config
    >>> with config_context(n_threads=2):
    ...     get_config()["n_threads"]
    2
    """
    return {**_config, **_overrides.get()}


def _check_setting(name: str, value: Any) -> None:
    if name == "n_threads":
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value == 0 or value < -1):
            raise ValueError(
                f"n_threads must be None, -1 (all cores) or a positive int; got {value!r}."
            )
    elif name in ("block_bytes", "device_block_bytes"):
        if not isinstance(value, int) or isinstance(value, bool) or value < 4096:
            raise ValueError(f"{name} must be an int >= 4096; got {value!r}.")
    elif name == "kernel_cache_bytes":
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 0):
            raise ValueError("kernel_cache_bytes must be None (half the available memory) "
                             f"or an int >= 0 (0: no cache); got {value!r}.")
    elif name == "jit":
        if not (isinstance(value, bool) or (isinstance(value, str) and value == "auto")):
            raise ValueError(f'jit must be "auto", True or False; got {value!r}.')
        if value is True:
            import_optional("numba", extra="jit")  # the prerequisite, before any work
    else:  # pragma: no cover - guarded by the keyword-only signature
        raise ValueError(f"unknown setting {name!r}")


def _check_names(settings: Mapping[str, Any], caller: str) -> None:
    """Refuse a setting that does not exist, naming the closest one (a TypeError, as Python's)."""
    for key in settings:
        if key not in _DEFAULTS:
            raise TypeError(f"{caller}() got an unexpected keyword argument {key!r}"
                            f"{did_you_mean(key, _DEFAULTS)}; the settings are "
                            f"{sorted(_DEFAULTS)}.")


def set_config(*, n_threads: int | str | None = "unchanged",
               block_bytes: int | str = "unchanged",
               device_block_bytes: int | str = "unchanged",
               kernel_cache_bytes: int | str | None = "unchanged",
               jit: bool | str = "unchanged", **unknown: Any) -> None:
    """Change kernelmaps settings for the whole process.

    Parameters
    ----------
    n_threads : int or None, default="unchanged"
        The most threads the transform engine uses; ``None`` or ``-1`` means all available
        cores (the initial setting is ``None``).
    block_bytes : int, default="unchanged"
        Target working-set size of one row block, in bytes (at least 4096; initially
        8 MiB).
    device_block_bytes : int, default="unchanged"
        The same for arrays on an accelerator (array API dispatch), in bytes (at least
        4096; initially 1 GiB).
    kernel_cache_bytes : int or None, default="unchanged"
        Bytes of kernel blocks a fit may keep between passes over the data; ``None``
        (initially): half the memory available when the fit starts; ``0``: none.
    jit : {"auto", True, False}, default="unchanged"
        Compile the random-feature maps' float64 cosine (and FALKON's sweep of a float32
        kernel cache) with Numba: ``"auto"`` (initially) once the process's cosine work
        (or one call's, known up front) repays loading Numba — for the sweep, once the
        fit's own work does —, ``True`` always (an ImportError naming the fix when Numba
        is missing), ``False`` never.
    **unknown : dict
        Refused: a TypeError naming the closest setting (``n_thread`` → ``n_threads``).

    Examples
    --------
    >>> from kernelmaps import get_config, set_config
    >>> previous = get_config()["block_bytes"]
    >>> set_config(block_bytes=4 * 1024 * 1024)
    >>> get_config()["block_bytes"]
    4194304
    >>> set_config(block_bytes=previous)
    """
    _check_names(unknown, "set_config")
    settings = (("n_threads", n_threads), ("block_bytes", block_bytes),
                ("device_block_bytes", device_block_bytes),
                ("kernel_cache_bytes", kernel_cache_bytes), ("jit", jit))
    updates = {k: v for k, v in settings if not (isinstance(v, str) and v == "unchanged")}
    for key, value in updates.items():
        _check_setting(key, value)
    with _lock:
        _config.update(updates)


@contextmanager
def config_context(**settings: Any) -> Iterator[None]:
    """Change kernelmaps settings (see :func:`set_config`) inside a ``with`` block.

    The change is local to the calling thread (its :mod:`contextvars` context): other
    threads keep their settings, and a block ending in one thread never undoes a block still
    active in another. Threads started inside the block do not inherit it, except the
    engine's own worker threads.

    Parameters
    ----------
    **settings : dict
        The settings to change, by name (those of :func:`set_config`).

    Yields
    ------
    None
        The settings apply until the block ends.

    Examples
    --------
    >>> from kernelmaps import config_context, get_config
    >>> with config_context(kernel_cache_bytes=0):
    ...     get_config()["kernel_cache_bytes"]
    0
    """
    _check_names(settings, "config_context")
    for key, value in settings.items():
        _check_setting(key, value)
    token = _overrides.set({**_overrides.get(), **settings})
    try:
        yield
    finally:
        _overrides.reset(token)


def available_cores() -> int:
    """Cores this process may run on (respects CPU affinity, e.g. in containers)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_n_threads(n_jobs: int | None = None) -> int:
    """Number of threads to use: an estimator's ``n_jobs`` if given, else the setting."""
    value = n_jobs if n_jobs is not None else get_config()["n_threads"]
    cores = available_cores()
    if value is None or value == -1:
        return cores
    if value < -1:  # joblib convention: -2 means all but one core
        return max(1, cores + 1 + value)
    return max(1, int(value))


def available_memory() -> float:
    """Bytes of memory available to new allocations now, without swapping.

    Linux's ``MemAvailable`` (free memory plus the page cache it can drop), else psutil when
    installed, else the free pages ``os.sysconf`` reports; ``inf`` when none can tell.
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    try:  # pragma: no cover - not Linux
        import psutil
    except ImportError:  # pragma: no cover
        try:
            return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            return float("inf")
    return float(psutil.virtual_memory().available)  # pragma: no cover
