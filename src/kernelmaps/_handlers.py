"""The registry of what to do with a lazy (Dask) collection, by operation name.

``kernelmaps.distributed`` registers its functions here when it is imported (``import
kernelmaps`` imports it), so maps and models dispatch a Dask input through
:func:`collection_handler` without importing the layer above them. This module imports the
standard library only: registering costs nothing, so ``import kernelmaps`` stays light (the
command line answers ``--help`` without loading NumPy or scikit-learn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["collection_handler", "register_collection_handler"]

_COLLECTION_HANDLERS: dict[str, Callable[..., Any]] = {}


def register_collection_handler(operation: str, handler: Callable[..., Any]) -> None:
    """Make ``handler`` what :func:`collection_handler` returns for ``operation``."""
    _COLLECTION_HANDLERS[operation] = handler


def collection_handler(operation: str) -> Callable[..., Any]:
    """The registered function for ``operation`` on a Dask collection."""
    try:
        return _COLLECTION_HANDLERS[operation]
    except KeyError:
        raise TypeError(
            f"a Dask collection was passed ({operation}), but kernelmaps.distributed, which "
            "handles them, is not loaded: pip install 'kernelmaps[dask]' and import kernelmaps."
        ) from None
