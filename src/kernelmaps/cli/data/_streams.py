"""Reading data files with bounded memory: decompression limits and size checks.

Files come from users, so no size read from a file (a header, a compressed stream) may decide
an allocation on its own:

* compressed input (gzip, bzip2, xz or a one-member zip, recognised by its magic bytes,
  whatever the file is called) is decompressed as a stream and refused once it expands past
  :data:`MAX_EXPANSION` times its size, or :data:`EXPANSION_ALLOWANCE` for small files —
  a decompression bomb stops there, after that much memory;
* a stream is read only up to the size its header declares (:func:`read_capped`), so
  trailing data never accumulates;
* tables are refused above :data:`MAX_TABLE_COLUMNS` columns before pandas parses them
  (pandas needs about 0.1 ms and 2.5 kB per column: a million-column line would take minutes
  and gigabytes).

Uncompressed files are read as they are: their size on disk is the user's choice.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
import zlib
from pathlib import Path
from typing import IO

from kernelmaps.cli.data._base import DataError

__all__ = ["EXPANSION_ALLOWANCE", "MAX_EXPANSION", "MAX_TABLE_COLUMNS", "check_table_width",
           "compression_of", "expansion_limit", "open_data", "read_capped", "read_data",
           "read_upto"]

#: Compressed input may expand to this many times its size (text and images compress
#: 3–20×; deflate's own maximum is about 1032×)...
MAX_EXPANSION = 100
#: ...or to this many bytes, whichever is more (small files of repetitive content).
EXPANSION_ALLOWANCE = 64 << 20
#: Tables wider than this are refused before parsing; wider data belongs in NPZ/svmlight.
MAX_TABLE_COLUMNS = 100_000
_CHUNK = 1 << 20

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
          (b"PK\x03\x04", "zip"))


def compression_of(path: Path) -> str | None:
    """``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zip"`` or None, from the file's first bytes."""
    with open(path, "rb") as handle:
        head = handle.read(6)
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def expansion_limit(compressed_bytes: int) -> int:
    """The most bytes ``compressed_bytes`` of compressed input may decompress to."""
    return max(MAX_EXPANSION * compressed_bytes, EXPANSION_ALLOWANCE)


def open_data(path: Path) -> tuple[IO[bytes], str | None]:
    """The file as a binary stream, decompressing it if it is compressed; and the method."""
    method = compression_of(path)
    try:
        if method == "gzip":
            return gzip.open(path, "rb"), method
        if method == "bzip2":
            return bz2.open(path, "rb"), method
        if method == "xz":
            return lzma.open(path, "rb"), method
        if method == "zip":
            archive = zipfile.ZipFile(path)
            names = [info for info in archive.infolist() if not info.is_dir()]
            if len(names) != 1:
                archive.close()
                raise DataError(f"{path}: a zip archive of data must hold exactly one file; it "
                                f"holds {len(names)}.")
            return archive.open(names[0]), method
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, zlib.error) as error:
        raise DataError(f"{path}: unreadable {method} data ({error}).") from error
    return open(path, "rb"), None


def read_upto(stream: IO[bytes], n: int, path: Path, method: str | None) -> bytes:
    """At most ``n`` bytes of ``stream`` (fewer at its end), read in chunks; a corrupted
    compressed stream is a :class:`DataError`."""
    chunks, total = [], 0
    try:
        while total < n:
            chunk = stream.read(min(_CHUNK, n - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, zlib.error) as error:
        raise DataError(f"{path}: unreadable {method} data ({error}).") from error
    return b"".join(chunks)


def read_capped(stream: IO[bytes], limit: int, path: Path, method: str | None) -> bytes:
    """Read ``stream`` to its end, refusing it (:class:`DataError`) past ``limit`` bytes."""
    data = read_upto(stream, limit + 1, path, method)
    if len(data) > limit:
        raise DataError(
            f"{path}: the {method} data expands to more than {limit:,} bytes "
            f"({MAX_EXPANSION}× the file, or {EXPANSION_ALLOWANCE >> 20} MiB): refused as a "
            "likely decompression bomb; decompress it yourself if it is genuine."
        )
    return data


def read_data(path: Path) -> tuple[bytes, str | None]:
    """The whole file, decompressed within :func:`expansion_limit` if it is compressed."""
    stream, method = open_data(path)
    with stream:
        if method is None:
            return stream.read(), None
        return read_capped(stream, expansion_limit(path.stat().st_size), path, method), method


def check_table_width(head: bytes, separator: str, path: Path) -> None:
    """Refuse a table whose header line has more than :data:`MAX_TABLE_COLUMNS` columns."""
    end = head.find(b"\n")
    columns = head.count(separator.encode(), 0, len(head) if end < 0 else end) + 1
    if columns > MAX_TABLE_COLUMNS:
        raise DataError(
            f"{path}: the header line has {columns:,} columns, more than the "
            f"{MAX_TABLE_COLUMNS:,} a table may have here (parsing it would take minutes and "
            "gigabytes); save wide data as NPZ (numpy.savez) or svmlight."
        )
