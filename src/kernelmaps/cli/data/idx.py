r"""MNIST-style IDX files: the reader, directories of image/label pairs, and Fashion-MNIST.

Fashion-MNIST (Xiao, Rasul & Vollgraf, 2017; MIT licence) comes from Debian's
``dataset-fashion-mnist`` package, which installs gzipped IDX files in
:data:`FASHION_MNIST_DIR`; any other directory of MNIST-style IDX files loads the same way.
"""

from __future__ import annotations

import math
import re
import struct
from os import PathLike
from pathlib import Path
from typing import IO

import numpy as np

from kernelmaps.cli.data._base import DataError, Dataset, as_features, same_length
from kernelmaps.cli.data._streams import (
    EXPANSION_ALLOWANCE,
    MAX_EXPANSION,
    expansion_limit,
    open_data,
    read_upto,
)

__all__ = ["FASHION_MNIST_DIR", "FASHION_MNIST_HINT", "load_fashion_mnist",
           "load_idx_directory", "read_idx"]

#: Where Debian's ``dataset-fashion-mnist`` package installs the gzipped IDX files.
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_HINT = (
    "install it with `apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or load any "
    "other directory of MNIST-style IDX files by its path"
)

#: IDX type codes (third byte of the magic number) → big-endian NumPy dtypes.
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | PathLike[str]) -> np.ndarray:
    """Read an IDX file (the MNIST format), gzipped or not.

    The format (LeCun et al., http://yann.lecun.com/exdb/mnist/): a magic number of two zero
    bytes, a type code (``0x08`` uint8, ``0x09`` int8, ``0x0B`` int16, ``0x0C`` int32,
    ``0x0D`` float32, ``0x0E`` float64) and the number of dimensions; then each dimension as
    a big-endian uint32; then the values, big-endian, in C order. Gzip is recognised by its
    magic bytes, whatever the file is called.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ndarray
        With the file's shape and the native-endian version of its dtype.

    Raises
    ------
    DataError
        If the file is not IDX, has an unknown type code, or its size does not match its
        header (truncated or trailing bytes).
    """
    path = Path(path)
    stream, method = open_data(path)  # gzip is recognised by content, not by the name
    with stream:
        return _read_idx_stream(stream, path, method)


def _read_idx_stream(stream: IO[bytes], path: Path, method: str | None) -> np.ndarray:
    """The values are read only once the header's size is checked against what can follow:
    the file's size, or what its compressed size may expand to."""
    head = read_upto(stream, 4, path, method)
    if len(head) < 4 or head[0] != 0 or head[1] != 0:
        raise DataError(
            f"{path}: not an IDX file (magic number {head[:4].hex() or 'missing'}; an IDX file "
            "starts with 00 00 <type> <ndim>)."
        )
    code, ndim = head[2], head[3]
    if code not in _IDX_DTYPES:
        raise DataError(
            f"{path}: unknown IDX type code 0x{code:02X}; valid codes are "
            f"{', '.join(f'0x{c:02X}' for c in _IDX_DTYPES)}."
        )
    if ndim == 0:
        raise DataError(f"{path}: malformed IDX header (0 dimensions).")
    header = 4 + 4 * ndim
    shape = read_upto(stream, 4 * ndim, path, method)
    if len(shape) < 4 * ndim:
        raise DataError(f"{path}: truncated IDX header ({4 + len(shape)} bytes, {header} "
                        "needed).")
    dims = struct.unpack(f">{ndim}I", shape)
    dtype = np.dtype(_IDX_DTYPES[code])
    count = math.prod(dims)
    if count == 0:  # numpy cannot even shape some of these, e.g. 0×2**30×2**30 in float64
        raise DataError(f"{path}: the IDX file holds no values (its shape "
                        f"{'×'.join(map(str, dims))} has a dimension 0).")
    promised = count * dtype.itemsize
    size = path.stat().st_size
    if method is not None and promised > expansion_limit(size):
        raise DataError(
            f"{path}: its header promises {'×'.join(map(str, dims))} values ({promised:,} "
            f"bytes), more than its {size:,} bytes of {method} data may expand to "
            f"({MAX_EXPANSION}× the file, or {EXPANSION_ALLOWANCE >> 20} MiB): refused as a "
            "likely decompression bomb; decompress it yourself if it is genuine."
        )
    if method is None:  # the size of what follows is known without reading it
        body, follows = b"", size - header
    else:  # one byte more than promised tells trailing data
        body = read_upto(stream, promised + 1, path, method)
        follows = len(body)
    if follows != promised:
        more = "more than " if method is not None and follows > promised else ""
        raise DataError(
            f"{path}: malformed IDX file: its header promises {'×'.join(map(str, dims))} "
            f"values of {dtype.itemsize} byte(s) ({promised} bytes) but "
            f"{more}{follows - bool(more)} bytes follow (truncated or corrupted file)."
        )
    if method is None:
        body = read_upto(stream, promised, path, method)
    values = np.frombuffer(body, dtype=dtype, count=count)
    return values.astype(dtype.newbyteorder("="), copy=True).reshape(dims)


_IDX_NAME = re.compile(
    r"^(?P<prefix>.+?)[-_.](?P<kind>images|labels)[-.]idx(?P<ndim>\d)-ubyte(?:\.gz)?$")
_TEST_PREFIXES = ("t10k", "test")


def _idx_pairs(directory: Path) -> dict[str, dict[str, Path]]:
    pairs: dict[str, dict[str, Path]] = {}
    for path in sorted(directory.iterdir()):
        match = _IDX_NAME.match(path.name)
        if match and path.is_file():
            pairs.setdefault(match["prefix"], {})[match["kind"]] = path
    return pairs


def _read_idx_pair(files: dict[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    images, labels = read_idx(files["images"]), read_idx(files["labels"])
    if labels.ndim != 1:
        raise DataError(f"{files['labels']}: labels must be 1-D; got shape {labels.shape}.")
    X = as_features(images, str(files["images"]))
    same_length(X, labels, str(files["images"].parent), files["images"].name)
    return X, labels.astype(np.int64)


def load_idx_directory(directory: str | PathLike[str], name: str | None = None) -> Dataset:
    """Load a directory of MNIST-style IDX files.

    Files are paired by prefix: ``<prefix>-images-idx<k>-ubyte[.gz]`` with
    ``<prefix>-labels-idx1-ubyte[.gz]`` (``.`` or ``_`` may replace the first ``-``). With a
    ``train`` pair and a ``t10k`` (or ``test``) pair, the second becomes the fixed test split;
    a single pair is the whole data set. Images are flattened to one row each.

    Parameters
    ----------
    directory : str or path-like
    name : str or None
        Name of the data set (default: the directory name).

    Returns
    -------
    Dataset
    """
    directory = Path(directory)
    pairs = {prefix: files for prefix, files in _idx_pairs(directory).items()
             if {"images", "labels"} <= set(files)}
    if not pairs:
        found = sorted(p.name for p in directory.iterdir())[:10]
        raise DataError(
            f"{directory}: no pair of IDX files (<prefix>-images-idx3-ubyte[.gz] with "
            f"<prefix>-labels-idx1-ubyte[.gz]) in this directory; found {found}."
        )
    test_prefix = next((p for p in _TEST_PREFIXES if p in pairs), None)
    if "train" in pairs:
        train_prefix = "train"
    elif len(pairs) == 1:
        train_prefix = next(iter(pairs))
    else:
        raise DataError(
            f"{directory}: several IDX pairs {sorted(pairs)} and none is called 'train'; keep "
            "one pair, or name them train-… and t10k-…."
        )
    X, y = _read_idx_pair(pairs[train_prefix])
    X_test = y_test = None
    if test_prefix is not None and test_prefix != train_prefix:
        X_test, y_test = _read_idx_pair(pairs[test_prefix])
        if X_test.shape[1] != X.shape[1]:
            raise DataError(f"{directory}: test images have {X_test.shape[1]} pixels but "
                            f"training images have {X.shape[1]}.")
    return Dataset(name=name or directory.name, X=X, y=y, X_test=X_test, y_test=y_test,
                   source=str(directory),
                   description=f"IDX files in {directory}")


def load_fashion_mnist(directory: str | PathLike[str] = FASHION_MNIST_DIR) -> Dataset:
    """Fashion-MNIST (Xiao, Rasul & Vollgraf, 2017) from Debian's ``dataset-fashion-mnist``.

    60,000 training and 10,000 test images of 28×28 grey levels (0–255, kept as they are),
    10 classes of clothing. MIT licence.

    Raises
    ------
    DataError
        If the files are not there, saying what to install.
    """
    directory = Path(directory)
    if not (directory / "train-images-idx3-ubyte.gz").exists():
        raise DataError(f"Fashion-MNIST is not installed ({directory} has no IDX files): "
                        f"{FASHION_MNIST_HINT}.")
    data = load_idx_directory(directory, name="fashion-mnist")
    return Dataset(name="fashion-mnist", X=data.X, y=data.y, X_test=data.X_test,
                   y_test=data.y_test, source=str(directory),
                   description="Fashion-MNIST: 28×28 grey images of 10 kinds of clothing "
                               "(Debian dataset-fashion-mnist, MIT licence)")
