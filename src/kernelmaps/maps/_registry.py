r"""The registry of random-Fourier-feature projection structures.

A structure is how :class:`~kernelmaps.RandomFourierFeatures` draws its frequencies: a
:class:`Structure` record (its ``draw`` function, how D is rounded, whether the density must
be isotropic, whether it reads the data, the :class:`~kernelmaps.maps.Projection` classes its
draws return) in :data:`STRUCTURES`, added with :func:`register_structure`. The map, the
device move, :mod:`kernelmaps.io`'s trust list and the method registry of
:mod:`kernelmaps.evaluate` read that one registry.

This module holds the registry only; it registers nothing when imported. The built-in
structures are listed in :mod:`kernelmaps.maps._structures` and registered, explicitly and
in their listing order, where the package is assembled (``kernelmaps/maps/__init__.py``).
The projections and the output forms are :mod:`kernelmaps.maps._projection`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kernelmaps.kernels import SpectralDensity
from kernelmaps.maps._projection import Projection

__all__ = [
    "STRUCTURES",
    "Frequencies",
    "FrequencyRequest",
    "Structure",
    "projection_types",
    "register_structure",
]


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
