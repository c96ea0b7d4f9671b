r"""Shared machinery of the random-projection maps: X ↦ XW written into the output block.

Every map that draws random directions (random Fourier features, the χ² samplers, the
arc-cosine and dot-product sketches) projects a row block with :func:`project_into` and,
for cosine features, finishes in place with :func:`cos_features_into` or
:func:`cos_sin_into`. On a device (array API dispatch) the same steps are
:func:`cos_features_device` and :func:`cos_sin_device`, with each projection's
``project_device``.

The projection structures of :class:`~kernelmaps.RandomFourierFeatures` are an extension
point: a :class:`Projection` subclass (the fitted frequencies: project a block, move to a
device, report its memory) and a :class:`Structure` entry (how to draw them, how D is
rounded, whether the density must be isotropic), added with :func:`register_structure` to
:data:`STRUCTURES`. The map, the device move, :mod:`kernelmaps.io`'s trust list and the
method registry of :mod:`kernelmaps.evaluate` read that one registry. Explicit weights are
:class:`DenseProjection` ("iid" here; "orthogonal" and the Hadamard structures in
:mod:`~kernelmaps.maps._structured`, "principal" in :mod:`~kernelmaps.maps._principal`,
"quadrature" in :mod:`~kernelmaps.maps._quadrature`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from kernelmaps._array_api import matmul, on_device, unary
from kernelmaps._fastmath import cos_inplace
from kernelmaps.kernels import SpectralDensity
from kernelmaps.maps._sampling import uniform_points

__all__ = [
    "STRUCTURES",
    "DenseProjection",
    "Frequencies",
    "FrequencyRequest",
    "Projection",
    "Structure",
    "cos_features_device",
    "cos_features_into",
    "cos_sin_device",
    "cos_sin_into",
    "iid_frequencies",
    "project_into",
    "project_with",
    "projection_types",
    "random_signs",
    "register_structure",
]


# ============================================================================ projections
class Projection(ABC):
    """Fitted random frequencies (D′ of them), applied to row blocks as X ↦ XW.

    The extension point of the random-feature maps: a subclass holds its fitted state as the
    arrays named in ``array_names`` — exactly its constructor's arguments, from which
    ``__init__`` may derive anything else — and implements :meth:`project_into` (NumPy, into
    a preallocated output block) and :meth:`project_device` (any array-API namespace). The
    base derives everything else from those arrays: the parameter memory (:attr:`nbytes`),
    the dtype cast (:meth:`astype`) and the move to a device (:meth:`to_device`, which
    ``FeatureMap`` uses when it places fitted parameters), so derived attributes never break
    a rebuild. A new structure's projection class joins the registry through
    :class:`Structure` and :func:`register_structure`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.maps import DenseProjection
    >>> projection = DenseProjection(np.eye(3, 2))  # d = 3 inputs, D' = 2 frequencies
    >>> projection.nbytes, projection.astype(np.float32).nbytes
    (48, 24)
    >>> out = np.empty((1, 2))
    >>> projection.project_into(np.array([[1.0, 2.0, 3.0]]), out)
    >>> out
    array([[1., 2.]])
    """

    #: The fitted arrays, in the constructor's order (its keyword arguments).
    array_names: ClassVar[tuple[str, ...]] = ()

    @property
    def nbytes(self) -> int:
        """Bytes of fitted parameters."""
        return int(sum(getattr(self, name).nbytes for name in self.array_names))

    def temp_bytes_per_row(self, n_features: int) -> int:
        """Count the bytes of temporaries one row needs inside :meth:`project_into`.

        Parameters
        ----------
        n_features : int
            Number of input features d.

        Returns
        -------
        int
            Bytes per row (this default: none), for the engine's block sizing.
        """
        return 0

    @abstractmethod
    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        """Write ``X_block @ W`` into ``out`` for a NumPy (dense or CSR) row block.

        Parameters
        ----------
        X_block : {ndarray, sparse matrix} of shape (n_rows, n_features)
            The row block.
        out : ndarray of shape (n_rows, n_frequencies)
            The output block, overwritten.
        """

    @abstractmethod
    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """Compute ``X_block @ W (+ bias)`` for a row block of another array library.

        Parameters
        ----------
        xp : module
            The array namespace of ``X_block`` (array API).
        X_block : array of shape (n_rows, n_features)
            The row block, on its device.
        out : array of shape (n_rows, n_frequencies), default=None
            Written into where the library allows.
        bias : array of shape (n_frequencies,), default=None
            Added to every row.

        Returns
        -------
        array of shape (n_rows, n_frequencies)
            The projection, in namespace ``xp`` on ``X_block``'s device.
        """

    def replace_arrays(self, convert: Callable[[Any], Any]) -> Projection:
        """Build the same projection from ``convert(array)`` of each of its arrays.

        Parameters
        ----------
        convert : callable
            ``convert(array) -> array``, applied to each array of ``array_names``.

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return type(self)(**{name: convert(getattr(self, name)) for name in self.array_names})

    def astype(self, dtype: np.dtype) -> Projection:
        """Build the same projection with its floating-point arrays stored in ``dtype``.

        Parameters
        ----------
        dtype : dtype
            The floating-point dtype (integer arrays, e.g. signs, are kept).

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return self.replace_arrays(
            lambda value: value.astype(dtype) if value.dtype.kind == "f" else value)

    def to_device(self, xp: Any, device: Any, dtype: Any = None) -> Projection:
        """Build the same projection with its arrays in namespace ``xp`` on ``device``.

        Parameters
        ----------
        xp : module
            The array namespace to move to (array API).
        device : object
            The device, as ``xp`` names it.
        dtype : dtype of ``xp``, default=None
            Floating-point arrays are cast to it when given.

        Returns
        -------
        Projection
            A new projection of the same class.
        """
        return self.replace_arrays(lambda value: on_device(value, xp, device, dtype))


# ============================================================================ the registry
@dataclass(frozen=True)
class FrequencyRequest:
    """What a structure's ``draw`` gets: the law, the sizes, the randomness.

    Attributes
    ----------
    density : SpectralDensity
        The kernel's spectral density.
    n_features : int
        d, the input dimension.
    n_frequencies : int
        D′ after the structure's rounding.
    random_state : RandomState
        The only source of randomness.
    sampling : {"mc", "qmc", "halton"}
        Where the uniform numbers come from: independent draws, or a scrambled Sobol' or
        Halton set (:mod:`scipy.stats.qmc`).
    frame : ndarray of shape (n_features, k) or None
        Orthonormal principal axes of the training data (k ≤ d), for the structures that
        read the data (``Structure.reads_data``); ``None`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> from kernelmaps.maps import STRUCTURES, FrequencyRequest
    >>> request = FrequencyRequest(get_kernel("rbf", gamma=0.5).spectral_density(3),
    ...                            n_features=3, n_frequencies=4,
    ...                            random_state=np.random.RandomState(0))
    >>> STRUCTURES["orthogonal"].draw(request).projection.weights.shape
    (3, 4)
    """

    density: SpectralDensity
    n_features: int
    n_frequencies: int
    random_state: np.random.RandomState
    sampling: str = "mc"
    frame: np.ndarray | None = None


@dataclass(frozen=True)
class Frequencies:
    """What a structure's ``draw`` returns.

    Attributes
    ----------
    projection : Projection
        The D′ frequencies.
    weights : ndarray of shape (D′,) or None
        Quadrature weights aᵢ (Σ aᵢ = 1) of the frequencies in the estimate
        k(x−y) ≈ k(0) Σ aᵢ cos ωᵢᵀ(x−y); ``None``: equal weights 1/D′.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.maps import DenseProjection, Frequencies
    >>> Frequencies(DenseProjection(np.ones((2, 4)))).weights is None  # equal weights
    True
    """

    projection: Projection
    weights: np.ndarray | None = None


@dataclass(frozen=True)
class Structure:
    """An entry of the projection-structure registry :data:`STRUCTURES`.

    Attributes
    ----------
    name : str
        The value of ``RandomFourierFeatures(structure=...)``.
    draw : callable
        ``draw(FrequencyRequest) -> Frequencies``.
    block : callable or None
        ``block(n_features) -> b``: D′ is rounded up to a multiple of b (a whole block costs
        what part of one does); ``None``: no rounding.
    isotropic_only : bool
        Whether it draws directions and radii separately, so it needs a density that
        depends on ‖ω‖ only.
    reads_data : bool
        Whether it reads the training data (a sample of rows, for the principal axes).
    unbiased : bool
        Whether every frequency has exactly the law p (so E[z(x)ᵀz(y)] = k(x − y) for any
        D), not only asymptotically (the Hadamard structures' rows are not exactly uniform).
    projection_types : tuple of type
        The :class:`Projection` classes its draws return (:mod:`kernelmaps.io` trusts them).
    description : str
        One line for listings (``kernelmaps compare``'s method list).

    Examples
    --------
    >>> from kernelmaps.maps import STRUCTURES
    >>> list(STRUCTURES)
    ['iid', 'orthogonal', 'structured', 'fastfood', 'quadrature', 'principal']
    >>> STRUCTURES["structured"].n_frequencies(100, n_features=20)  # whole blocks of 32
    128
    >>> STRUCTURES["iid"].isotropic_only, STRUCTURES["principal"].reads_data
    (False, True)
    """

    name: str
    draw: Callable[[FrequencyRequest], Frequencies]
    block: Callable[[int], int] | None = None
    isotropic_only: bool = True
    reads_data: bool = False
    unbiased: bool = True
    projection_types: tuple[type, ...] = field(default=())
    description: str = ""

    def n_frequencies(self, requested: int, n_features: int) -> int:
        """Round a requested number of frequencies as this structure does.

        Parameters
        ----------
        requested : int
            Frequencies asked for.
        n_features : int
            Input dimension d (the block size may depend on it).

        Returns
        -------
        int
            D′: ``requested`` rounded up to a whole number of blocks (unchanged without
            ``block``).
        """
        if self.block is None:
            return requested
        size = self.block(n_features)
        return max(1, -(-requested // size)) * size


#: The registry: structure name → :class:`Structure`, in the order listings show them.
STRUCTURES: dict[str, Structure] = {}


def register_structure(structure: Structure, *, replace: bool = False) -> Structure:
    """Add a projection structure to :data:`STRUCTURES`.

    :class:`~kernelmaps.RandomFourierFeatures` (its ``structure`` parameter), the device
    move, :mod:`kernelmaps.io`'s trust list and :mod:`kernelmaps.evaluate`'s method
    registry all read the registry, so a structure is one ``draw`` function, its
    :class:`Projection` class and this call.

    Parameters
    ----------
    structure : Structure
        The entry; its ``name`` becomes a value of ``RandomFourierFeatures(structure=...)``.
    replace : bool, default=False
        Whether an entry of the same name may be replaced (otherwise a ``ValueError``).

    Returns
    -------
    Structure
        ``structure``, now registered.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.maps import (STRUCTURES, DenseProjection, Frequencies, Structure,
    ...                              register_structure)
    >>> def draw(request):  # independent draws from the spectral density
    ...     omega = request.density.sample(request.n_features, request.n_frequencies,
    ...                                    request.random_state)
    ...     return Frequencies(DenseProjection(np.ascontiguousarray(omega.T)))
    >>> _ = register_structure(Structure("doctest_iid", draw, isotropic_only=False,
    ...                                  projection_types=(DenseProjection,)))
    >>> X = np.random.RandomState(0).normal(size=(10, 3))
    >>> RandomFourierFeatures("laplacian", gamma=0.5, structure="doctest_iid",
    ...                       n_components=64, random_state=0).fit_transform(X).shape
    (10, 64)
    >>> del STRUCTURES["doctest_iid"]  # undo the registration
    """
    if not replace and structure.name in STRUCTURES:
        raise ValueError(f"structure {structure.name!r} is already registered; pass "
                         "replace=True.")
    for cls in structure.projection_types:
        if not (isinstance(cls, type) and issubclass(cls, Projection)):
            raise TypeError(f"projection_types of {structure.name!r} must be Projection "
                            f"subclasses; got {cls!r}.")
    STRUCTURES[structure.name] = structure
    return structure


def projection_types() -> list[type]:
    """Every :class:`Projection` class a registered structure returns (deduplicated)."""
    return list(dict.fromkeys(cls for s in STRUCTURES.values() for cls in s.projection_types))


# ============================================================================ output forms
def cos_features_into(projection_into, X_block: Any, weights: Any,
                      offset: np.ndarray, scale: Any, out: np.ndarray, *,
                      cosine_inplace: Callable[[np.ndarray], None] = cos_inplace
                      ) -> None:
    """``out = scale · cos(P + offset)`` where ``projection_into`` writes P into ``out``.

    ``scale`` is a number or one factor per column (quadrature weights).

    Shared by every "cosine with random offset" map (RBFSampler, SkewedChi2Sampler,
    RandomFourierFeatures): one projection written straight into the output block, then
    three in-place passes over a block that is still in cache. The cosine is
    :func:`kernelmaps._fastmath.cos_inplace` (float64: ~4× faster than ``np.cos``, within
    3.3e-16 of it, so RBFSampler's numbers stay scikit-learn's to rounding).
    """
    projection_into(X_block, weights, out)
    out += offset
    cosine_inplace(out)
    out *= scale



def project_into(X_block: Any, weights: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = X_block @ weights`` (BLAS in place for dense, scipy for CSR)."""
    if sp.issparse(X_block):
        out[...] = X_block @ weights
    else:
        np.matmul(X_block, weights, out=out)



class DenseProjection(Projection):
    """Explicit frequencies: ``weights`` of shape (n_features, n_frequencies); O(d·D) memory.

    Used by the "iid", "orthogonal", "principal" and "quadrature" structures; accepts CSR
    rows (sparse × dense BLAS).

    Parameters
    ----------
    weights : ndarray of shape (n_features, n_frequencies)
        The frequencies ω₁ … ω_D′ as columns.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures(gamma=0.5, structure="iid", n_components=8,
    ...                             random_state=0).fit(X)
    >>> type(rff.projection_).__name__, rff.projection_.weights.shape
    ('DenseProjection', (3, 8))
    """

    array_names = ("weights",)

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    def project_into(self, X_block: Any, out: np.ndarray) -> None:
        """Write ``X_block @ weights`` into ``out`` (BLAS in place; CSR rows through SciPy).

        Parameters
        ----------
        X_block : {ndarray, sparse matrix} of shape (n_rows, n_features)
            The row block.
        out : ndarray of shape (n_rows, n_frequencies)
            The output block, overwritten; ``weights`` are cast to its dtype.
        """
        project_into(X_block, self.weights.astype(out.dtype, copy=False), out)

    def project_device(self, xp: Any, X_block: Any, out: Any = None, bias: Any = None) -> Any:
        """Compute ``X_block @ weights (+ bias)`` on the device (one ``addmm`` into ``out``).

        Parameters
        ----------
        xp : module
            The array namespace of ``X_block`` (array API).
        X_block : array of shape (n_rows, n_features)
            The row block, on its device.
        out : array of shape (n_rows, n_frequencies), default=None
            Written into where the library allows.
        bias : array of shape (n_frequencies,), default=None
            Added to every row.

        Returns
        -------
        array of shape (n_rows, n_frequencies)
            The projection, in namespace ``xp`` on ``X_block``'s device.
        """
        return matmul(xp, X_block, self.weights, out=out, bias=bias)


def iid_frequencies(request: FrequencyRequest) -> Frequencies:
    """Independent frequencies (``"mc"``: the density's draws, unchanged numbers), or one
    randomised QMC point set mapped by the density's inverse transforms (Avron et al., 2016),
    coordinates in the order of the input's features."""
    density, d, size = request.density, request.n_features, request.n_frequencies
    if request.sampling == "mc":
        omega = density.sample(d, size, request.random_state)
    else:
        points = uniform_points(request.sampling, size, density.uniform_dims(d),
                                request.random_state)
        omega = density.from_uniforms(d, points)
    return Frequencies(DenseProjection(np.ascontiguousarray(omega.T)))


def random_signs(random_state: np.random.RandomState, shape: tuple[int, ...]) -> np.ndarray:
    # int8: one byte per sign; a block's signs are cast to the data's dtype when used.
    return (2 * random_state.randint(0, 2, size=shape) - 1).astype(np.int8)



def project_with(X_block: Any, projection: Any, out: np.ndarray) -> None:
    # Adapter to cos_features_into's (X_block, weights, out) projection signature.
    projection.project_into(X_block, out)



def cos_sin_into(projections: np.ndarray, scale: Any, out: np.ndarray) -> None:
    """``out = scale · [cos P, sin P]`` (cosines in the first half of the columns; ``scale``
    a number or one factor per output column)."""
    n = projections.shape[1]
    if out.dtype == np.float64:
        # sin p = cos(p − π/2): one pass of the fast cosine over the whole contiguous
        # block instead of NumPy's scalar sin; the shift adds at most half an ulp of p of
        # argument error (≤ 1e-14 for |p| ≤ 100), far below the Monte Carlo error.
        out[:, :n] = projections
        np.subtract(projections, np.pi / 2, out=out[:, n:])
        cos_inplace(out)
    else:  # float32 np.cos / np.sin are SIMD-vectorised already
        np.cos(projections, out=out[:, :n])
        np.sin(projections, out=out[:, n:])
    out *= scale


def cos_features_device(xp: Any, projection: Any, X_block: Any, offset: Any, scale: Any,
                        out: Any) -> Any:
    """``scale · cos(X_block W + offset)`` on the device: the projection with its offset
    (PyTorch: one ``addmm`` into the output), an in-place cosine and an in-place scale
    (a number or a device array with one factor per column)."""
    features = projection.project_device(xp, X_block, out=out, bias=offset)
    features = unary(xp, "cos", features)
    features *= scale
    return features


def cos_sin_device(xp: Any, projections: Any, scale: Any) -> Any:
    """``scale · [cos P, sin P]`` on the device (cosines in the first half; ``scale`` a
    number or one factor per output column)."""
    features = xp.concat([xp.cos(projections), xp.sin(projections)], axis=1)
    features *= scale
    return features


register_structure(Structure(
    "iid", iid_frequencies, isotropic_only=False, projection_types=(DenseProjection,),
    description="independent frequencies (Rahimi & Recht, 2007); with QMC a scrambled point "
                "set in the input's coordinates (Avron et al., 2016); any shift-invariant "
                "kernel"))
