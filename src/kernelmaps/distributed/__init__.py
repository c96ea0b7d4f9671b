"""kernelmaps on Dask: the same maps and kernel machines on data larger than one machine.

Everything runs on Dask's own scheduler (``dask.array`` blockwise tasks and tree reductions,
local threads or a ``dask.distributed`` cluster); nothing here schedules, queues or retries
work itself, so a lost worker's chunks are recomputed by Dask.

``transform(feature_map, X)``
    z(X) lazily, one row chunk at a time; the fitted map travels once. A map's own
    ``transform`` given a dask array returns the same.
``fit(feature_map, X)``
    fit a map without collecting ``X``: random maps read no data, Nystroem gathers a uniform
    sample of rows. A map's own ``fit`` given a dask array does the same.
``kernelmaps.models.FeatureRidge`` / ``FeatureRidgeClassifier`` on dask arrays
    ridge regression / one-vs-rest classification on z(X) from one pass: per-chunk Gram
    matrices of the features, summed by Dask's tree reduction, one D × D solve (also
    importable from here, where they first lived).
``kernelmaps.models.KernelRidge`` / ``KernelRidgeClassifier(solver='nystrom')`` on dask arrays
    FALKON's conjugate gradient, one Nyström system per row chunk kept on its worker (the
    chunk's kernel blocks cached within the ``kernel_cache_bytes`` budget), each iteration's
    K_nM products summed by Dask's tree reduction (``docs/dask.md`` has the passes).

This package holds no estimator of its own: the estimators live in :mod:`kernelmaps.models`
and :mod:`kernelmaps.maps`, and dispatch a Dask collection to the handlers registered here.

Install with ``pip install "kernelmaps[dask]"``; ``docs/dask.md`` has the design (what
travels, what is reduced, memory per worker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernelmaps._handlers import register_collection_handler

if TYPE_CHECKING:  # pragma: no cover - loaded on first use below
    from kernelmaps.models.feature_ridge import FeatureRidge, FeatureRidgeClassifier

__all__ = ["FeatureRidge", "FeatureRidgeClassifier", "fit", "landmark_sample_size", "transform"]

#: The estimators kernelmaps.models holds, importable from here where they first lived;
#: loaded on first use (PEP 562), so `import kernelmaps` does not load kernelmaps.models.
_MOVED = {"FeatureRidge": "kernelmaps.models.feature_ridge",
          "FeatureRidgeClassifier": "kernelmaps.models.feature_ridge"}

# Dask is an optional dependency: the functions that need it load it on first use, so the
# estimators above work on in-memory data without it.
_NEEDS_DASK = {
    "transform": "kernelmaps.distributed._transform",
    "fit": "kernelmaps.distributed._fit",
    "landmark_sample_size": "kernelmaps.distributed._fit",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _MOVED:
        return getattr(importlib.import_module(_MOVED[name]), name)
    if name not in _NEEDS_DASK:
        raise AttributeError(f"module 'kernelmaps.distributed' has no attribute {name!r}")

    try:
        module = importlib.import_module(_NEEDS_DASK[name])
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] in {"dask", "distributed"}:
            raise ImportError(
                f"kernelmaps.distributed.{name} needs Dask: pip install 'kernelmaps[dask]'."
            ) from error
        raise
    return getattr(module, name)


def _fit_on_dask(feature_map: Any, X: Any) -> Any:
    return __getattr__("fit")(feature_map, X)


def _transform_on_dask(feature_map: Any, X: Any) -> Any:
    return __getattr__("transform")(feature_map, X)


def _map_rows_on_dask(estimator: Any, X: Any, method: str) -> Any:
    from kernelmaps.distributed._transform import map_rows  # Dask: loaded on first use

    owner = f"{type(estimator).__name__}.{'predict' if method == '_decision' else method}"
    return map_rows(estimator, X, method, owner=owner)


def _fit_kernel_ridge_on_dask(model: Any, X: Any, y: Any, sample_weight: Any) -> Any:
    from kernelmaps.distributed._falkon import fit_kernel_ridge  # Dask: loaded on first use

    return fit_kernel_ridge(model, X, y, sample_weight)


def _fit_feature_ridge_on_dask(model: Any, X: Any, y: Any, sample_weight: Any) -> None:
    from kernelmaps.distributed._ridge_dask import fit_feature_ridge  # Dask: on first use

    fit_feature_ridge(model, X, y, sample_weight)


def _score_on_dask(model: Any, X: Any, y: Any, sample_weight: Any) -> float:
    from kernelmaps.distributed._ridge_dask import dask_score  # Dask: loaded on first use

    return dask_score(model, X, y, sample_weight)


def _variance_on_dask(X: Any, sample_weight: Any = None) -> float:
    """The variance of all entries of a Dask array (``gamma="scale"``): Dask's own
    reductions, accumulated in float64. With row weights (a Dask array aligned with X's
    rows): the weighted mean first, then the weighted mean square deviation (two passes,
    no cancellation), as the in-memory fit computes it."""
    if sample_weight is None:
        return float(X.var(dtype="float64").compute())
    total = sample_weight.sum()
    mean = (X.mean(axis=1, dtype="float64") * sample_weight).sum() / total
    deviation = ((X.astype("float64") - mean) ** 2).mean(axis=1)
    return float(((deviation * sample_weight).sum() / total).compute())


# Maps and models sit below this layer: they dispatch Dask input through the engine's
# registry instead of importing kernelmaps.distributed.
register_collection_handler("fit", _fit_on_dask)
register_collection_handler("transform", _transform_on_dask)
register_collection_handler("map_rows", _map_rows_on_dask)
register_collection_handler("fit_kernel_ridge", _fit_kernel_ridge_on_dask)
register_collection_handler("fit_feature_ridge", _fit_feature_ridge_on_dask)
register_collection_handler("score", _score_on_dask)
register_collection_handler("variance", _variance_on_dask)
