"""Save and load fitted estimators safely, with :mod:`skops.io` (extra ``persist``).

A pickle runs code when it is loaded, so a model file from someone else is a program from
someone else. :func:`dump` writes the skops format instead: a zip of JSON and ``.npy`` arrays
that is read back without executing anything from the file. :func:`load` trusts exactly
kernelmaps' own classes — its public estimators, the kernels they store as ``kernel_`` and
the random projections of :class:`~kernelmaps.RandomFourierFeatures` — plus SciPy's sparse
matrices, and refuses a file that holds any other type, naming it.

The fitted state of every public estimator is made only of arrays, scalars, builtins and
those classes, so every fitted kernelmaps estimator loads with no extra trust. Two things
cannot be loaded safely, by design: a user's kernel function (``kernel=callable``) and any
foreign object placed in an estimator; :func:`load` refuses them.

:func:`iter_batches` reads the other way round: a Parquet, CSV or ``.npy`` data file larger
than memory as a stream of ``(X, y)`` row batches for ``partial_fit`` (see
the "Online and out-of-core" guide).

Examples
--------
>>> import numpy as np, tempfile, os
>>> from kernelmaps import RBFSampler
>>> from kernelmaps.io import dump, load
>>> X = np.random.RandomState(0).normal(size=(20, 3))
>>> sampler = RBFSampler(n_components=8, random_state=0).fit(X)
>>> path = os.path.join(tempfile.mkdtemp(), "sampler.skops")
>>> dump(sampler, path)
>>> bool(np.array_equal(load(path).transform(X), sampler.transform(X)))
True
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelBinarizer, MinMaxScaler, StandardScaler

from kernelmaps import distributed, kernels, maps, models
from kernelmaps._batches import iter_batches
from kernelmaps.kernels import CallableKernel, Kernel
from kernelmaps.maps._registry import projection_types

__all__ = ["UntrustedTypeError", "dump", "iter_batches", "load", "trusted_types"]

_INSTALL_HINT = (
    "kernelmaps.io needs skops: pip install 'kernelmaps[persist]' (or pip install skops)."
)

#: SciPy sparse containers a fitted estimator may hold (PolynomialCountSketch's hash matrix);
#: skops stores them as ``.npz`` arrays, which load without executing code.
_SPARSE_TYPES = (
    "scipy.sparse._csr.csr_array",
    "scipy.sparse._csr.csr_matrix",
)


#: scikit-learn's classes that kernelmaps itself returns fitted — :func:`kernelmaps.tune`'s
#: ``Pipeline([("scale", StandardScaler | MinMaxScaler)?, ("map", ...), ("model", Ridge |
#: RidgeClassifier)])`` (a classifier keeps a ``LabelBinarizer``): plain estimators of
#: arrays, trusted so its result loads back.
_SKLEARN_CLASSES = (Pipeline, Ridge, RidgeClassifier, LabelBinarizer, StandardScaler,
                    MinMaxScaler)


#: Builtin containers and scalars that skops writes as data (JSON or its own nodes).
_SAFE_BUILTINS = frozenset({
    "NoneType", "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int",
    "list", "set", "slice", "str", "tuple",
})


class UntrustedTypeError(ValueError):
    """A model file holds a type that :func:`kernelmaps.io.load` does not trust.

    Examples
    --------
    A user's kernel function is code, which :func:`load` refuses to run:

    >>> import numpy as np, tempfile, os
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.io import UntrustedTypeError, dump, load
    >>> X = np.random.RandomState(0).normal(size=(20, 3))
    >>> model = Nystroem(kernel=lambda x, y: float(x @ y), n_components=5).fit(X)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> dump(model, path)
    >>> try:
    ...     load(path)
    ... except UntrustedTypeError:
    ...     print("refused")
    refused
    """


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _kernelmaps_classes() -> set[type]:
    public = [getattr(module, name) for module in (maps, models, kernels)
              for name in module.__all__]
    # distributed's estimators (its Dask functions load Dask lazily: not through __all__).
    public += list(vars(distributed).values())
    classes = {c for c in public if isinstance(c, type)}
    estimators = {c for c in classes if issubclass(c, BaseEstimator)}
    kernel_classes = {c for c in classes if issubclass(c, Kernel)
                      and c not in (Kernel, CallableKernel)}
    # The projection classes of the registered structures (maps.STRUCTURES),
    # kernelmaps' own only: a structure registered by a user does not extend the trust.
    projections = {c for c in projection_types()
                   if c.__module__.startswith("kernelmaps.")}
    return estimators | kernel_classes | projections


def trusted_types() -> list[str]:
    """List the fully qualified type names :func:`load` accepts, sorted.

    Returns
    -------
    list of str
        The public estimators of kernelmaps, its kernels (not
        :class:`~kernelmaps.kernels.CallableKernel`, which holds a user's function) and
        projection classes, the scikit-learn classes of
        :func:`kernelmaps.tune`'s pipeline (``Pipeline``, ``Ridge``, ``RidgeClassifier``,
        ``LabelBinarizer``, ``StandardScaler``, ``MinMaxScaler``), plus SciPy's CSR
        containers.

    Examples
    --------
    >>> from kernelmaps.io import trusted_types
    >>> "kernelmaps.maps.nystroem.Nystroem" in trusted_types()
    True
    """
    classes = _kernelmaps_classes() | set(_SKLEARN_CLASSES)
    return sorted({_qualified(c) for c in classes} | set(_SPARSE_TYPES))


def _is_data_type(module: str, name: str) -> bool:
    """Builtin containers/scalars and NumPy arrays, dtypes and scalars: data, never code."""
    if module == "builtins":
        return name in _SAFE_BUILTINS
    if module == "numpy":
        value = getattr(np, name, None)
        return name in ("ndarray", "dtype") or (
            isinstance(value, type) and issubclass(value, np.generic))
    return module.startswith("numpy.dtypes") and name.endswith("DType")


def _types_in_file(path: str) -> set[str]:
    """Every type named anywhere in the file's schema (what loading would construct)."""
    with zipfile.ZipFile(path) as archive:
        schema = json.loads(archive.read("schema.json"))
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__module__" in node and "__class__" in node:
                module, name = str(node["__module__"]), str(node["__class__"])
                if not _is_data_type(module, name):
                    found.add(f"{module}.{name}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _skops_io() -> Any:
    try:
        import skops.io
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from error
    return skops.io


def dump(estimator: Any, path: str | os.PathLike[str]) -> None:
    """Write ``estimator`` to ``path`` in the skops format (no pickle).

    Parameters
    ----------
    estimator : estimator object
        Usually a fitted kernelmaps estimator; anything skops can write is accepted, but
        :func:`load` reads back only what :func:`trusted_types` lists.
    path : str or path-like
        The file to write (conventionally ``*.skops``); replaced if it exists.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.io import dump
    >>> X = np.random.RandomState(0).normal(size=(20, 3))
    >>> path = os.path.join(tempfile.mkdtemp(), "sampler.skops")
    >>> dump(RBFSampler(n_components=8, random_state=0).fit(X), path)
    >>> os.path.getsize(path) > 0
    True
    """
    _skops_io().dump(estimator, os.fspath(path))


def load(path: str | os.PathLike[str]) -> Any:
    """Read an estimator written by :func:`dump`, trusting only kernelmaps' own types.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`dump` (or ``skops.io.dump``).

    Returns
    -------
    estimator object
        The estimator, with results identical to the one that was saved.

    Raises
    ------
    UntrustedTypeError
        The file holds a type that is not in :func:`trusted_types` (for example a user's
        kernel function, or an object of another library); nothing was loaded.
    ValueError
        The file is not a readable skops file (truncated, not a zip, corrupted).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.io import dump, load
    >>> X = np.random.RandomState(0).normal(size=(20, 3))
    >>> sampler = RBFSampler(n_components=8, random_state=0).fit(X)
    >>> path = os.path.join(tempfile.mkdtemp(), "sampler.skops")
    >>> dump(sampler, path)
    >>> bool(np.array_equal(load(path).transform(X), sampler.transform(X)))
    True
    """
    sio = _skops_io()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no model file at {path!r}.")
    try:
        # Two gates: every type the schema names (skops itself would trust scikit-learn's
        # and other libraries' classes by default), and skops' own list of untrusted types.
        found = _types_in_file(path) | set(sio.get_untrusted_types(file=path))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        raise ValueError(
            f"{path!r} is not a readable skops model file ({type(error).__name__}: {error}); "
            "write models with kernelmaps.io.dump."
        ) from error
    allowed = set(trusted_types())
    refused = sorted(set(found) - allowed)
    if refused:
        raise UntrustedTypeError(
            f"{path!r} holds types kernelmaps does not trust: {refused}. kernelmaps.io.load "
            f"loads only kernelmaps' own classes and SciPy sparse matrices ({len(allowed)} "
            "types, see kernelmaps.io.trusted_types()). If you know where the file comes "
            "from and trust it, inspect it with skops.io.get_untrusted_types and load it "
            "with skops.io.load(path, trusted=[...])."
        )
    try:
        return sio.load(path, trusted=sorted(found))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as error:
        raise ValueError(
            f"{path!r} could not be read as a kernelmaps model ({type(error).__name__}: "
            f"{error})."
        ) from error
