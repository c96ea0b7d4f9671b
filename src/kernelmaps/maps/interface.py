"""What a feature map offers kernelmaps' other packages — the models, the Dask fit, ``io``.

Not the users' API (that is :class:`~kernelmaps.maps.FeatureMap`'s ``fit`` and
``transform``): the steps and facts of a map that the machines built on it
(:mod:`kernelmaps.models`) and :func:`kernelmaps.distributed.fit` need beyond them. The map
keeps its hooks private (``_fit``, ``_n_out``, …: a subclass implements them, see
:mod:`kernelmaps.maps._base`); another package calls them only through the functions
here, so each use across the boundary is named, documented and found in one place
(``tests/test_boundaries.py`` refuses any other).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelmaps.maps._base import FeatureMap
from kernelmaps.maps._registry import projection_types

__all__ = [
    "accepts_sparse",
    "block_flops_per_row",
    "checks_degenerate_sample",
    "expect_rows",
    "fit_on_sample",
    "fit_reads_rows",
    "fit_sample_indices",
    "is_precomputed",
    "output_width",
    "projection_types",
    "transform_into",
    "validate_params",
]


def output_width(feature_map: FeatureMap, X: Any) -> int:
    """The number of features ``feature_map`` gives ``X`` (fitted maps: fixed at fit).

    Parameters
    ----------
    feature_map : FeatureMap
        A fitted map (or a stateless one, whose width follows ``X``'s).
    X : array-like of shape (n_samples, n_features)
        The rows to be transformed (their width, for stateless maps).

    Returns
    -------
    int
        The output dimension D. ``FeatureRidge`` sizes its statistics and buffers with
        it; the Dask fit of ``FeatureRidge`` sizes each chunk's statistics.
    """
    return feature_map._n_out(X)


def accepts_sparse(feature_map: FeatureMap) -> bool:
    """Whether ``feature_map`` takes sparse input (CSR rows).

    Parameters
    ----------
    feature_map : FeatureMap
        Any map, fitted or not.

    Returns
    -------
    bool
        ``FeatureRidge``'s scikit-learn tags say the model accepts sparse ``X`` when its
        map does.
    """
    return bool(feature_map._accept_sparse)


def fit_reads_rows(feature_map: FeatureMap) -> bool:
    """Whether ``feature_map.fit`` reads the rows of ``X``, not only its width.

    Parameters
    ----------
    feature_map : FeatureMap
        A map with valid parameters (invalid ones raise ``TypeError``/``ValueError``).

    Returns
    -------
    bool
        True for landmarks, ``gamma="scale"`` or principal axes: ``FeatureRidge.partial_fit``
        then fits the map on the first batch only and says so.
    """
    return feature_map._fit_reads_rows()


def transform_into(feature_map: Any, X: Any, out: np.ndarray) -> np.ndarray | None:
    """``feature_map.transform(X)`` written into ``out[:len(X)]``, or None where it cannot be.

    Parameters
    ----------
    feature_map : FeatureMap or estimator
        The fitted map; any other transformer gives None.
    X : array-like of shape (n_samples, n_features)
        A block of rows.
    out : ndarray of shape (n_rows, n_features_out)
        A reused buffer with at least ``len(X)`` rows.

    Returns
    -------
    ndarray or None
        The features, a view of ``out`` — the same numbers as ``transform`` — or None (a
        device or lazy ``X``, another dtype, a subclass with its own ``transform``, not a
        :class:`FeatureMap`): the models' accumulator of statistics then calls
        ``transform``. It saves a fresh block of memory per block of rows.
    """
    if not isinstance(feature_map, FeatureMap):
        return None
    return feature_map._transform_into(X, out)


def block_flops_per_row(feature_map: FeatureMap, X: Any) -> float:
    """The work of transforming one row of ``X``, in floating-point operations: what the
    engine weighs against the cost of a thread (:data:`kernelmaps._engine.FLOPS_PER_THREAD`)
    when it decides how many threads a transform gets.

    Parameters
    ----------
    feature_map : FeatureMap
        The fitted map.
    X : array-like of shape (n_samples, n_features)
        The rows (their width, and for sparse rows their stored values, are read).

    Returns
    -------
    float
    """
    return feature_map._block_flops_per_row(X)


def expect_rows(feature_map: Any, X: Any) -> None:
    """Say that all of ``X``'s rows are about to be transformed, block by block.

    A caller that transforms ``X`` in blocks of its own (:func:`transform_into` per block)
    says so once before the first: a map whose float64 features are cosines of
    :mod:`kernelmaps._fastmath` then lets the compiled cosine's ``jit="auto"`` rule see the
    whole work (:func:`kernelmaps._fastmath.expect_cosines`) rather than one block's.

    Parameters
    ----------
    feature_map : FeatureMap or estimator
        The fitted map; any other transformer is left alone.
    X : array-like of shape (n_samples, n_features)
        The rows (only their number and dtype are read).

    Returns
    -------
    None
    """
    if isinstance(feature_map, FeatureMap):
        feature_map._expect_rows(X.shape[0], feature_map._output_dtype(X))


def validate_params(feature_map: FeatureMap) -> None:
    """Check the parameters of ``feature_map`` as its ``fit`` does (scikit-learn's rules).

    Parameters
    ----------
    feature_map : FeatureMap
        The map about to be fitted.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        A parameter's type or value is invalid (the message names the valid ones).
        :func:`kernelmaps.distributed.fit` calls this before it touches the collection,
        which fails the same way as an in-memory fit.
    """
    feature_map._validate_params()


def is_precomputed(feature_map: FeatureMap) -> bool:
    """Whether ``feature_map`` reads a precomputed kernel matrix (``kernel="precomputed"``).

    Parameters
    ----------
    feature_map : FeatureMap
        Any map; only :class:`~kernelmaps.maps.Nystroem` takes a precomputed kernel.

    Returns
    -------
    bool
        :func:`kernelmaps.distributed.fit` refuses such a map (the matrix is n × n).
    """
    check = getattr(type(feature_map), "_is_precomputed", None)
    return bool(check is not None and feature_map._is_precomputed())


def fit_sample_indices(feature_map: FeatureMap, n_samples: int, n_features: int,
                       random_state: np.random.RandomState) -> np.ndarray | None:
    """The rows of ``X`` that ``feature_map``'s fit reads, drawn as its in-memory fit draws them.

    Parameters
    ----------
    feature_map : FeatureMap
        The map to fit.
    n_samples, n_features : int
        The shape of ``X``.
    random_state : numpy.random.RandomState
        The fit's random state; the draw advances it as the in-memory fit does.

    Returns
    -------
    ndarray of int or None
        The rows (random Fourier features' principal axes read a sample), or None for
        maps that read no sample. :func:`kernelmaps.distributed.fit` gathers these rows of
        a Dask collection and fits on them: the in-memory fit, without collecting ``X``.
    """
    draw = getattr(feature_map, "_fit_sample_indices", None)
    return None if draw is None else draw(n_samples, n_features, random_state)


def fit_on_sample(feature_map: FeatureMap, data: Any,
                  random_state: np.random.RandomState) -> Any:
    """Validate ``data`` and fit ``feature_map`` on it with ``random_state``, as ``fit`` does.

    Parameters
    ----------
    feature_map : FeatureMap
        The map to fit (its parameters already validated: :func:`validate_params`).
    data : array-like of shape (n_samples, n_features)
        The rows the fit reads: a sample of a larger ``X`` (its landmarks' candidates, the
        rows of :func:`fit_sample_indices`) or a stand-in row with ``X``'s width and dtype.
    random_state : numpy.random.RandomState
        The fit's random state, already advanced by the draw of ``data``.

    Returns
    -------
    ndarray
        ``data`` as validated (dtype policy applied). :func:`kernelmaps.distributed.fit`
        fits a map on a Dask collection this way; the degeneracy check on rows
        (:func:`checks_degenerate_sample`) and the device placement of an in-memory fit are
        the caller's.
    """
    data = feature_map._validate_X(data, reset=True)
    feature_map._n_features_out = int(feature_map._fit(data, random_state))
    return data


def checks_degenerate_sample(feature_map: FeatureMap) -> bool:
    """Whether ``feature_map``'s fit checks ``kernel_`` for degeneracy on a sample of rows.

    Parameters
    ----------
    feature_map : FeatureMap
        Any map.

    Returns
    -------
    bool
        True for the maps that form no kernel matrix of their own in ``fit`` (random
        features): :func:`kernelmaps.distributed.fit` then runs the check on the rows it
        read, as the in-memory fit does.
    """
    return bool(feature_map._check_degenerate_sample)
