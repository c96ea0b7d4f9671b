"""The base class of every feature map: validation, dtype policy and the fit/transform contract.

A map implements three things only:

``_fit(X, random_state)``
    draw its randomness / pick its landmarks from validated ``X``, set ``kernel_`` (the
    kernel it approximates, through :func:`kernelmaps.kernels.resolve_kernel`) and return
    the output dimension;
``_transform_block(X_block, out_block)``
    write the features of a block of rows into the preallocated ``out_block`` (a view of
    the final output), using in-place operations;
``_block_temp_bytes_per_row(n_features)`` (optional)
    how many bytes of temporaries one row needs inside ``_transform_block``, so the engine
    can size blocks to stay in cache.

Everything else — parameter validation, input validation at the boundary, the dtype policy
(float32 in → float32 out, anything else → float64) — lives here once; blocks, threads and
finiteness checks are the engine's (:mod:`kernelmaps._engine`).

Any array library (scikit-learn's ``array_api_dispatch=True`` with a PyTorch, CuPy or
``array_api_strict`` array): ``_fit`` runs as for NumPy — random parameters are drawn with
NumPy's ``RandomState`` exactly as for NumPy input — and the arrays named in
``_device_attributes`` are then moved to the input's device once. A map computes on the
device with

``_device_parameters(xp, device, dtype)``
    the arrays its device transform needs, in that namespace, device and dtype (built once
    at fit, or converted when a map fitted on NumPy transforms a device array);
``_transform_block_device(xp, params, X_block, out)``
    the features of a block as an array of the input's namespace — written into ``out``
    (a view of the output) where the library allows, else returned (see
    :func:`kernelmaps._array_api.run_blocks_device`).
"""

from __future__ import annotations

import inspect
from numbers import Integral
from typing import Any

import array_api_compat
import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from kernelmaps._array_api import (
    check_same_placement,
    is_device_array,
    namespace_and_device,
    on_device,
)
from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import collection_handler, is_dask_collection, run_blocks
from kernelmaps._fastmath import expect_cosines
from kernelmaps._suggest import SuggestOptionsMixin
from kernelmaps._validation import validate_input
from kernelmaps.kernels.degenerate import warn_if_degenerate_on_sample

__all__ = ["RANDOM_MAP_CONSTRAINTS", "FeatureMap", "place"]

#: Constraints of the two parameters every randomised map shares (scikit-learn's names).
RANDOM_MAP_CONSTRAINTS: dict = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def place(value: Any, xp: Any, device: Any, dtype: Any = None) -> Any:
    """A fitted value in namespace ``xp`` on ``device``: arrays are moved (floating ones
    cast to ``dtype``), parameter objects that know how (projections:
    :meth:`kernelmaps.maps._projection.Projection.to_device`) move themselves, anything else
    is returned as it is."""
    if value is None or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, np.ndarray) or array_api_compat.is_array_api_obj(value):
        return on_device(value, xp, device, dtype)
    if hasattr(value, "to_device"):
        # The object rebuilds itself from its own fitted arrays (not from vars(), which
        # would also pass derived attributes to its constructor).
        return value.to_device(xp, device, dtype)
    return value


def _placement_key(xp: Any, device: Any, dtype: Any) -> tuple[str, str, str]:
    return (xp.__name__, str(device), str(dtype))


class FeatureMap(SuggestOptionsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                 BaseEstimator):
    """Base class of every kernelmaps feature map z(x) with z(x)·z(y) ≈ k(x, y).

    Subclasses implement ``_fit`` and ``_transform_block``; see the module docstring.

    Examples
    --------
    The exact map of the linear kernel, z(x) = x; validation, the dtype policy, row blocks
    on threads, feature names and ``set_output`` come from the base:

    >>> import numpy as np
    >>> from kernelmaps.kernels import resolve_kernel
    >>> from kernelmaps.maps import FeatureMap
    >>> class IdentityMap(FeatureMap):
    ...     _accept_sparse = False  # _transform_block below writes dense rows only
    ...     def _fit(self, X, random_state):
    ...         self.kernel_ = resolve_kernel("linear")
    ...         return X.shape[1]  # the output dimension
    ...     def _transform_block(self, X_block, out):
    ...         out[...] = X_block
    >>> X = np.random.RandomState(0).normal(size=(5, 3)).astype(np.float32)
    >>> identity = IdentityMap().fit(X)
    >>> Z = identity.transform(X)
    >>> Z.dtype, identity.get_feature_names_out().tolist()
    (dtype('float32'), ['identitymap0', 'identitymap1', 'identitymap2'])
    >>> bool(np.allclose(Z @ Z.T, identity.kernel_(X)))
    True
    """

    #: scikit-learn's parameter constraints; a map without parameters keeps this empty dict.
    _parameter_constraints: dict = {}
    #: Sparse formats accepted (``False``: dense only). CSR is what row blocks need.
    _accept_sparse: str | bool = "csr"
    #: ``n_jobs``-like attribute name that overrides the global thread setting, if any.
    _n_jobs_attr: str | None = None
    #: Fitted arrays that live on the input's device after a fit on a device array.
    _device_attributes: tuple[str, ...] = ()

    # ------------------------------------------------------------------ validation
    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        """Validate ``X`` at the fit/transform boundary and apply the dtype policy."""
        X = validate_input(self, X, reset=reset, accept_sparse=self._accept_sparse)
        self._check_X_values(X)
        return X

    def _check_X_values(self, X: Any) -> None:
        """Map-specific domain checks (e.g. non-negativity); default: none."""

    # ------------------------------------------------------------------ fitting
    def _fit(self, X: Any, random_state: np.random.RandomState) -> int:  # pragma: no cover
        raise NotImplementedError

    #: Whether ``fit`` checks ``kernel_`` for degeneracy on a sample of X's rows
    #: (:func:`~kernelmaps.kernels.degenerate.warn_if_degenerate_on_sample`): set by the maps
    #: that form no kernel matrix of their own in ``fit`` (random features).
    _check_degenerate_sample = False

    #: Whether the float64 transform takes one cosine of :mod:`kernelmaps._fastmath` per
    #: output feature (the random-feature maps with a cosine output): a transform of many
    #: rows then tells ``jit="auto"`` its work up front (:meth:`_expect_rows`).
    _cosine_per_feature = False

    def _expect_rows(self, n_rows: int, dtype: np.dtype) -> None:
        """Tell the cosine's ``jit="auto"`` rule that ``n_rows`` rows of ``dtype`` features
        are about to be made (:func:`kernelmaps._fastmath.expect_cosines`)."""
        if self._cosine_per_feature and dtype == np.float64:
            expect_cosines(int(n_rows) * self._n_features_out)

    def _fit_validated(self, X: Any) -> None:
        random_state = check_random_state(getattr(self, "random_state", None))
        self._n_features_out = int(self._fit(X, random_state))
        if self._check_degenerate_sample:
            # Frames: here, fit or fit_transform, scikit-learn's _fit_context (two), the
            # caller.
            warn_if_degenerate_on_sample(X, self.kernel_, owner=type(self).__name__,
                                         stacklevel=5)
        self._device_cache = None
        if is_device_array(X):
            xp, device = namespace_and_device(X)
            for name in self._device_attributes:
                if hasattr(self, name):  # some are fitted only for some parameters
                    # The dtype NumPy's fit gives it (cast for computing, per transform).
                    setattr(self, name, place(getattr(self, name), xp, device))
            self._device_cache = (_placement_key(xp, device, X.dtype),
                                  self._device_parameters(xp, device, X.dtype))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> FeatureMap:
        """Fit the feature map to ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted map.
        """
        if is_dask_collection(X):  # Dask (optional): fit without collecting X
            return collection_handler("fit")(self, X)
        X = self._validate_X(X, reset=True)
        self._fit_validated(X)
        return self

    # ------------------------------------------------------------------ online
    def _fit_reads_rows(self) -> bool:
        """Whether ``fit`` reads the rows of ``X`` (landmarks, ``gamma="scale"``, principal
        axes) and not only its width. Maps whose fit is data-free override this; the default
        is the safe answer."""
        return True

    def _has_partial_fit(self) -> bool:
        try:
            reads_rows = self._fit_reads_rows()
        except (TypeError, ValueError):  # invalid parameters: fit will say which
            return False
        if reads_rows:
            raise AttributeError(
                f"This {type(self).__name__} has no partial_fit: with these parameters its "
                "fit reads the rows of X (landmarks, gamma='scale' or principal axes), so a "
                "fit on one batch would silently depend on that batch. Fit it on a sample of "
                "rows instead (then wrap it in sklearn.frozen.FrozenEstimator to pass it to "
                "a model), give a numeric gamma, or let FeatureRidge(...).partial_fit fit it "
                "on the first batch.")
        return True

    @available_if(_has_partial_fit)
    def partial_fit(self, X: Any, y: Any = None) -> FeatureMap:
        """Fit on the first call; afterwards only check ``X``'s width (online learning).

        Available on the maps whose fit reads only the width of ``X`` — random features
        with a numeric (or ``"auto"``) γ and a data-free structure, the sketches, the
        histogram maps — so that a chunk loop is ``map.partial_fit(X_b)`` then
        ``map.transform(X_b)``: the first call is :meth:`fit` on that batch (the same numbers
        as ``fit``, and as scikit-learn's ``fit`` for its five maps), later calls change
        nothing and raise if the number of features (or their names) changed. Maps whose
        fit reads rows (Nyström's landmarks, ``gamma="scale"``, the principal axes) have no
        ``partial_fit`` (an ``AttributeError`` says what to do instead).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One batch of rows.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted map.
        """
        if "_n_features_out" not in self.__dict__:
            return self.fit(X)
        if is_dask_collection(X):
            raise TypeError(f"{type(self).__name__}.partial_fit takes in-memory batches.")
        self._validate_X(X, reset=False)  # the width and feature names fit saw
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit to ``X`` and return its features, validating ``X`` only once.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        **fit_params : dict
            Ignored; accepted for API compatibility.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            The features z(X).
        """
        if is_dask_collection(X):  # Dask (optional): fit without collecting, lazy features
            return self.fit(X).transform(X)
        X = self._validate_X(X, reset=True)
        self._fit_validated(X)
        return self._transform_validated(X)

    # ------------------------------------------------------------------ transform
    def transform(self, X: Any) -> Any:
        """Map ``X`` to the approximate kernel feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            The features z(X); float32 if ``X`` is float32, else float64. For a dask
            ``X``: the same, as a lazy dask array (:func:`kernelmaps.distributed.transform`).
        """
        if is_dask_collection(X):  # Dask (optional): lazy, chunk by chunk
            return collection_handler("transform")(self, X)
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self._transform_validated(X)

    def _transform_into(self, X: Any, out: np.ndarray) -> np.ndarray | None:
        """``transform(X)`` written into ``out[:len(X)]`` (a caller's reused float buffer of
        ``n_features_out_`` columns), or None where this map cannot: ``X`` on a device or
        lazy, features of another dtype than ``out``'s, or a subclass whose ``transform`` is
        not the engine's (it would be bypassed). The same validation and numbers as
        :meth:`transform`."""
        cls = type(self)
        if (inspect.unwrap(cls.transform) is not inspect.unwrap(FeatureMap.transform)
                or cls._transform_validated is not FeatureMap._transform_validated
                or is_dask_collection(X) or is_device_array(X)):
            return None
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        if self._output_dtype(X) != out.dtype or self._n_out(X) != out.shape[1]:
            return None
        return self._transform_validated(X, out=out[: X.shape[0]])

    def _transform_validated(self, X: Any, out: np.ndarray | None = None) -> Any:
        self._check_same_placement(X)
        if is_device_array(X):
            return self._transform_device(X)
        self._expect_rows(X.shape[0], self._output_dtype(X))
        return run_blocks(
            X,
            n_out=self._n_out(X),
            dtype=self._output_dtype(X),
            block_fn=self._transform_block,
            temp_bytes_per_row=self._block_temp_bytes_per_row(X.shape[1]),
            flops_per_row=self._block_flops_per_row(X),
            n_threads=resolve_n_threads(
                getattr(self, self._n_jobs_attr) if self._n_jobs_attr else None
            ),
            name=f"{type(self).__name__}.transform",
            out=out,
        )

    # ------------------------------------------------------------------ on a device
    def _transform_device(self, X: Any) -> Any:
        xp, device = namespace_and_device(X)
        cache = getattr(self, "_device_cache", None)
        key = _placement_key(xp, device, X.dtype)
        params = cache[1] if cache is not None and cache[0] == key \
            else self._device_parameters(xp, device, X.dtype)
        return run_blocks(
            X,
            n_out=self._n_out(X),
            dtype=X.dtype,
            block_fn=lambda X_block, out: self._transform_block_device(xp, params, X_block, out),
            temp_bytes_per_row=self._block_temp_bytes_per_row(X.shape[1]),
            name=f"{type(self).__name__}.transform",
        )

    def _check_same_placement(self, X: Any) -> None:
        """scikit-learn's rule: transform's input uses the namespace and device fit saw."""
        if not hasattr(self, "_device_cache"):
            return  # never fitted (a stateless map transforms without fit)
        cache = self._device_cache
        check_same_placement(self, X, None if cache is None else cache[0][:2], "transform")

    def _device_parameters(self, xp: Any, device: Any, dtype: Any) -> dict[str, Any]:
        """The arrays the device transform needs (default: the ``_device_attributes``)."""
        return {name: place(getattr(self, name), xp, device, dtype)
                for name in self._device_attributes if hasattr(self, name)}

    def _transform_block_device(self, xp: Any, params: dict[str, Any], X_block: Any,
                                out: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _n_out(self, X: Any) -> int:
        """Output dimension for ``X`` (fitted maps: fixed at fit time)."""
        return self._n_features_out

    def _output_dtype(self, X: Any) -> np.dtype:
        return np.dtype(np.float32) if X.dtype == np.float32 else np.dtype(np.float64)

    def _block_temp_bytes_per_row(self, n_features: int) -> int:
        """Bytes of temporaries per row inside ``_transform_block`` (default: none)."""
        return 0

    def _block_flops_per_row(self, X: Any) -> float:
        """Work of one row of ``_transform_block`` in floating-point operations, which the
        engine weighs against the cost of a thread (:data:`kernelmaps._engine.FLOPS_PER_THREAD`).

        Default: per output feature, an inner product over the row's features (its stored
        values, if sparse) plus element-wise passes worth about 600 operations — a cos costs
        about 400 operations' time of a matrix product (measured for the random-feature,
        histogram and sketch maps on digits: 650-1000 per feature at d = 64).
        """
        features = X.nnz / max(1, X.shape[0]) if sp.issparse(X) else X.shape[1]
        return float(self._n_out(X) * (2 * features + 600))

    def _transform_block(self, X_block: Any, out: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._accept_sparse)
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.array_api_support = True
        return tags
