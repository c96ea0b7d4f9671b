"""Save and load fitted estimators safely, with :mod:`skops.io` (extra ``persist``).

A pickle runs code when it is loaded, so a model file from someone else is a program from
someone else. :func:`dump` writes the skops format instead: a zip of JSON and ``.npy`` arrays
that is read back without executing anything from the file. :func:`load` trusts an exact,
explicit list of types (:func:`trusted_types`) and refuses a file that holds any other type,
naming it:

* kernelmaps' own classes — its public estimators, the kernels they store as ``kernel_`` and
  the random projections of :class:`~kernelmaps.RandomFourierFeatures`;
* the scikit-learn estimators the documentation puts around kernelmaps, fitted: the scalers
  and the imputer in front of a map, the linear models after it (with the loss objects of
  ``SGDClassifier``/``SGDRegressor``), ``PCA``, ``Pipeline``, ``ColumnTransformer``,
  ``FeatureUnion``, ``OneHotEncoder`` and the label encoders (:data:`SKLEARN_TRUSTED`);
* SciPy's CSR matrices.

The fitted state of every public estimator is made only of arrays, scalars, builtins and
those classes, so every fitted kernelmaps estimator — and a pipeline of them with those
scikit-learn steps — loads with no extra trust. A user's kernel function
(``kernel=callable``) and any other foreign object cannot be loaded safely, by design:
:func:`dump` refuses to write them before writing anything (a file that :func:`load` would
refuse is a model lost later, far from where it could be fixed), unless the types are named
in ``trusted=``, which :func:`load` then needs too.

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
from io import BytesIO
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    Ridge,
    RidgeClassifier,
    RidgeClassifierCV,
    RidgeCV,
    SGDClassifier,
    SGDOneClassSVM,
    SGDRegressor,
)
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    LabelBinarizer,
    LabelEncoder,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.svm import LinearSVC, LinearSVR

from kernelmaps import distributed, kernels, maps, models
from kernelmaps._batches import iter_batches
from kernelmaps.kernels import CallableKernel, Kernel
from kernelmaps.maps.interface import projection_types

__all__ = ["SKLEARN_TRUSTED", "UntrustedTypeError", "dump", "iter_batches", "load",
           "trusted_types"]

_INSTALL_HINT = (
    "kernelmaps.io needs skops: pip install 'kernelmaps[persist]' (or pip install skops)."
)

#: SciPy sparse containers a fitted estimator may hold (PolynomialCountSketch's hash matrix);
#: skops stores them as ``.npz`` arrays, which load without executing code.
_SPARSE_TYPES = (
    "scipy.sparse._csr.csr_array",
    "scipy.sparse._csr.csr_matrix",
)


#: The scikit-learn estimators :func:`load` trusts: those the documentation puts around
#: kernelmaps (and :func:`kernelmaps.tune` returns), whose fitted state is arrays, scalars,
#: builtins and these classes — composition (``Pipeline``, ``ColumnTransformer``,
#: ``FeatureUnion``), preprocessing in front of a map (the scalers, ``SimpleImputer``,
#: ``OneHotEncoder``), the linear models after it (a classifier keeps a ``LabelBinarizer``),
#: ``PCA`` (kernel PCA and its pre-images with :class:`~kernelmaps.Nystroem`) and the label
#: encoders. Exact and explicit: a class joins by being named here (and in the persistence
#: section of the README, which a test compares with this list). ``FunctionTransformer`` is
#: not here: it holds a function, which is code.
SKLEARN_TRUSTED: tuple[type, ...] = (
    # composition
    Pipeline, ColumnTransformer, FeatureUnion,
    # preprocessing in front of a map
    StandardScaler, MinMaxScaler, RobustScaler, MaxAbsScaler, Normalizer, SimpleImputer,
    OneHotEncoder,
    # linear models after it
    Ridge, RidgeCV, RidgeClassifier, RidgeClassifierCV, LogisticRegression, LinearRegression,
    SGDClassifier, SGDRegressor, SGDOneClassSVM, LinearSVC, LinearSVR,
    # kernel PCA on explicit features
    PCA,
    # labels
    LabelBinarizer, LabelEncoder,
)


def _sgd_loss_types() -> set[type]:
    """The loss objects the SGD estimators store as ``loss_function_`` (``Hinge``, …).

    Read from the estimators' own ``loss_functions`` tables, so the list follows the
    installed scikit-learn (the classes live in private modules that move between releases).
    """
    losses: set[type] = set()
    for estimator in (SGDClassifier, SGDRegressor, SGDOneClassSVM):
        for entry in getattr(estimator, "loss_functions", {}).values():
            losses.add(entry[0])
    return losses


#: Builtin containers and scalars that skops writes as data (JSON or its own nodes).
_SAFE_BUILTINS = frozenset({
    "NoneType", "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int",
    "list", "set", "slice", "str", "tuple",
})


class UntrustedTypeError(ValueError):
    """An estimator or model file holds a type that :func:`kernelmaps.io.load` does not trust.

    Raised by :func:`load` before anything is constructed, and by :func:`dump` before
    anything is written (a file that :func:`load` would refuse is not written).

    Examples
    --------
    A user's kernel function is code, which :func:`load` refuses to run, so :func:`dump`
    refuses to write it:

    >>> import numpy as np, tempfile, os
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.io import UntrustedTypeError, dump
    >>> X = np.random.RandomState(0).normal(size=(20, 3))
    >>> model = Nystroem(kernel=np.dot, n_components=5).fit(X)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> try:
    ...     dump(model, path)
    ... except UntrustedTypeError as error:
    ...     print("refused:", "numpy.dot" in str(error), os.path.exists(path))
    refused: True False
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
        projection classes, the scikit-learn estimators of :data:`SKLEARN_TRUSTED` with
        the loss objects of the SGD estimators (``Hinge``, ``SquaredHinge``, …, as named
        by the installed scikit-learn), plus SciPy's CSR containers.

    Examples
    --------
    >>> from kernelmaps.io import trusted_types
    >>> "kernelmaps.maps.nystroem.Nystroem" in trusted_types()
    True
    """
    classes = _kernelmaps_classes() | set(SKLEARN_TRUSTED) | _sgd_loss_types()
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


def _types_in_archive(source: str | BytesIO) -> set[str]:
    """Every type named anywhere in a skops archive's schema (what loading would construct).

    NumPy arrays, dtypes and scalars and builtin containers are data, never code, and are not
    listed.
    """
    with zipfile.ZipFile(source) as archive:
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


def _not_data(names: list[str]) -> set[str]:
    """skops' own untrusted-type names, less NumPy and builtin data (``numpy.dtype``)."""
    return {name for name in names
            if "." not in name or not _is_data_type(*name.rsplit(".", 1))}


def _extra_trust(trusted: Any, caller: str) -> set[str]:
    """Validate ``trusted=``: type names, listed one by one (never "trust everything")."""
    if trusted is None:
        return set()
    if isinstance(trusted, (str, bool)) or not all(isinstance(t, str) for t in trusted):
        raise TypeError(
            f"{caller}(trusted=...) takes a list of fully qualified type names, such as "
            "['mymodule.MyScaler'] (what the UntrustedTypeError names); got "
            f"{trusted!r}. There is no 'trust everything'."
        )
    return set(trusted)


def _skops_io() -> Any:
    try:
        import skops.io
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from error
    return skops.io


def dump(estimator: Any, path: str | os.PathLike[str], *,
         trusted: list[str] | None = None) -> None:
    """Write ``estimator`` to ``path`` in the skops format (no pickle), if :func:`load` reads it.

    The estimator is serialised in memory first and the types it holds are checked against
    :func:`trusted_types` (plus ``trusted``) before anything is written: an object that
    :func:`load` would refuse — a user's kernel function, an estimator of another library —
    raises :class:`UntrustedTypeError` naming its types, and no file is written or replaced.

    Parameters
    ----------
    estimator : estimator object
        Usually a fitted kernelmaps estimator or a pipeline of kernelmaps and the
        scikit-learn estimators of :data:`SKLEARN_TRUSTED`.
    path : str or path-like
        The file to write (conventionally ``*.skops``); replaced if it exists.
    trusted : list of str, default=None
        Fully qualified names of further types you trust (as the error names them, e.g.
        ``['sklearn.ensemble._forest.RandomForestClassifier']``). The file is then
        written; :func:`load` reads it only with the same ``trusted=``.

    Raises
    ------
    UntrustedTypeError
        ``estimator`` holds a type that :func:`load` would not trust; nothing was written.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sklearn.linear_model import SGDClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.io import dump, load
    >>> X = np.random.RandomState(0).normal(size=(40, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> model = make_pipeline(StandardScaler(), RBFSampler(n_components=8, random_state=0),
    ...                       SGDClassifier(random_state=0)).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> dump(model, path)
    >>> bool(np.array_equal(load(path).predict(X), model.predict(X)))
    True
    """
    sio = _skops_io()
    extra = _extra_trust(trusted, "dump")
    path = os.fspath(path)
    data = sio.dumps(estimator)
    found = _types_in_archive(BytesIO(data)) | _not_data(sio.get_untrusted_types(data=data))
    refused = sorted(found - set(trusted_types()) - extra)
    if refused:
        raise UntrustedTypeError(
            f"kernelmaps.io.dump did not write {path!r}: the estimator holds types that "
            f"kernelmaps.io.load does not trust, so the file could not be loaded back: "
            f"{refused}. Nothing was written. If you trust them, name them: "
            f"kernelmaps.io.dump(estimator, path, trusted={refused}) writes the file, and "
            f"kernelmaps.io.load(path, trusted={refused}) (or skops.io.load with the same "
            "trusted=) reads it back."
        )
    with open(path, "wb") as file:
        file.write(data)


def load(path: str | os.PathLike[str], *, trusted: list[str] | None = None) -> Any:
    """Read an estimator written by :func:`dump`, trusting only the types of :func:`trusted_types`.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`dump` (or ``skops.io.dump``).
    trusted : list of str, default=None
        Fully qualified names of further types you trust in this file (as
        :class:`UntrustedTypeError` names them). Only for files whose origin you trust.

    Returns
    -------
    estimator object
        The estimator, with results identical to the one that was saved.

    Raises
    ------
    UntrustedTypeError
        The file holds a type that is neither in :func:`trusted_types` nor in ``trusted``
        (for example a user's kernel function, or an object of another library); nothing
        was loaded.
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
    extra = _extra_trust(trusted, "load")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no model file at {path!r}.")
    try:
        # Two gates: every type the schema names (skops itself would trust scikit-learn's
        # and other libraries' classes by default), and skops' own list of untrusted types.
        skops_untrusted = set(sio.get_untrusted_types(file=path))
        found = _types_in_archive(path) | _not_data(sorted(skops_untrusted))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        raise ValueError(
            f"{path!r} is not a readable skops model file ({type(error).__name__}: {error}); "
            "write models with kernelmaps.io.dump."
        ) from error
    allowed = set(trusted_types())
    refused = sorted(found - allowed - extra)
    if refused:
        raise UntrustedTypeError(
            f"{path!r} holds types kernelmaps does not trust: {refused}. kernelmaps.io.load "
            f"loads only kernelmaps' own classes, the scikit-learn estimators of "
            f"kernelmaps.io.SKLEARN_TRUSTED and SciPy sparse matrices ({len(allowed)} types, "
            "see kernelmaps.io.trusted_types()). If you know where the file comes from and "
            f"trust it, name the types: kernelmaps.io.load(path, trusted={refused})."
        )
    try:
        # What was checked, plus the NumPy data skops lists too (``numpy.dtype``).
        return sio.load(path, trusted=sorted(found | skops_untrusted))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as error:
        raise ValueError(
            f"{path!r} could not be read as a kernelmaps model ({type(error).__name__}: "
            f"{error})."
        ) from error
