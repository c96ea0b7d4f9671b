"""What ``kernelmaps compare`` and ``tune`` say about data beyond ``--max-rows`` or memory.

Both commands load the whole file into memory (``--max-rows`` subsamples it after loading).
A file whose float64 values (from its metadata: the Parquet footer, the ``.npy`` header, a
CSV's size) would not fit in the memory available is refused before loading, with the way to
use every row instead: stream it with :func:`kernelmaps.io.iter_batches` into
``FeatureRidge(...).partial_fit`` (docs/online.md). A ``--max-rows`` subsample says the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from kernelmaps._batches import estimated_bytes
from kernelmaps.cli.data import DataError

__all__ = ["LOAD_FACTOR", "STREAM_HINT", "available_memory", "check_fits_in_memory",
           "subsample_hint"]

#: Loading takes about this many times the float64 values: pandas' frame, the float64 array,
#: the train/test split's copies.
LOAD_FACTOR = 3
#: The way to every row of a file larger than memory, said once for both commands.
STREAM_HINT = ("to fit a model on every row in bounded memory, stream the file in batches: "
               "kernelmaps.io.iter_batches(path, target=...) into FeatureRidge(...).partial_fit "
               "or FeatureRidgeClassifier(...).partial_fit (the guide 'Online and out-of-core', "
               "docs/online.md)")


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``, else free pages), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def check_fits_in_memory(source: str | None, command: str) -> None:
    """Refuse (:class:`DataError`) a data file too large to load, before loading it."""
    if source is None or not Path(source).is_file():
        return  # the default or a bundled data set, a directory of IDX files: the loader's
    path = Path(source)
    needed = estimated_bytes(path)
    available = available_memory()
    if needed is None or available is None or LOAD_FACTOR * needed <= available:
        return
    raise DataError(
        f"{path}: about {needed / 1e9:.1f} GB as float64 values, and {command} loads the "
        f"whole file (about {LOAD_FACTOR}× that) before any --max-rows subsample, with "
        f"{available / 1e9:.1f} GB of memory available: it would not fit. To compare maps, "
        f"run {command} on a sample written to a smaller file; {STREAM_HINT}.")


def subsample_hint(n_rows: int) -> str:
    """The sentence after ``--max-rows: using m of n rows``: how to use all ``n_rows``."""
    return f"The other rows are not used; {STREAM_HINT.replace('every row', f'all {n_rows} rows')}."
