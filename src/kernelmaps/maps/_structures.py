r"""The built-in projection structures of :class:`~kernelmaps.RandomFourierFeatures`, listed.

:data:`BUILTIN_STRUCTURES` is the list of their :class:`~kernelmaps.maps.Structure` records,
in the order listings show them; ``kernelmaps/maps/__init__.py`` registers each with
:func:`~kernelmaps.maps.register_structure` when the package is assembled, the one place
where the registry (:mod:`kernelmaps.maps._registry`) is filled. No module registers a
structure as a side effect of being imported: adding a built-in structure is one draw
function in the module of its family and one record here.

The draws live with their families: "iid" here (it is only the spectral density's own draws,
or a QMC set mapped through its inverse transforms), "orthogonal", "structured" and
"fastfood" in :mod:`~kernelmaps.maps._structured`, "quadrature" in
:mod:`~kernelmaps.maps._quadrature`, "principal" in :mod:`~kernelmaps.maps._principal`.
"""

from __future__ import annotations

import numpy as np

from kernelmaps.maps._principal import principal_frequencies
from kernelmaps.maps._projection import DenseProjection
from kernelmaps.maps._quadrature import quadrature_frequencies
from kernelmaps.maps._registry import Frequencies, FrequencyRequest, Structure
from kernelmaps.maps._sampling import uniform_points
from kernelmaps.maps._structured import (
    FastfoodProjection,
    SORFProjection,
    fastfood_frequencies,
    next_power_of_two,
    orthogonal_frequencies,
    sorf_frequencies,
)

__all__ = ["BUILTIN_STRUCTURES", "iid_frequencies"]


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


def radial_pairs(n_features: int) -> int:
    """The quadrature rules' block: frequencies come in pairs of radii (±r on a direction)."""
    return 2


#: The built-in structures, in the order listings show them (``list(STRUCTURES)``).
BUILTIN_STRUCTURES: tuple[Structure, ...] = (
    Structure(
        "iid", iid_frequencies, isotropic_only=False, projection_types=(DenseProjection,),
        description="independent frequencies (Rahimi & Recht, 2007); with QMC a scrambled "
                    "point set in the input's coordinates (Avron et al., 2016); any "
                    "shift-invariant kernel"),
    Structure(
        "orthogonal", orthogonal_frequencies, projection_types=(DenseProjection,),
        description="orthogonal random features: one Haar rotation's D' x d block, rows "
                    "scaled by radii of dimension max(D', d) (Yu et al., 2016; Munkhoeva "
                    "et al., 2018); with QMC, stratified radii"),
    Structure(
        "structured", sorf_frequencies, block=next_power_of_two, unbiased=False,
        projection_types=(SORFProjection,),
        description="structured HD₁HD₂HD₃ features (SORF), O(D log d); D rounds up to a "
                    "multiple of the next power of two ≥ the input features"),
    Structure(
        "fastfood", fastfood_frequencies, block=next_power_of_two, unbiased=False,
        projection_types=(FastfoodProjection,),
        description="Fastfood (Le, Sarlós & Smola, 2013); D rounds up to a multiple of the "
                    "next power of two ≥ the input features"),
    Structure(
        "quadrature", quadrature_frequencies, block=radial_pairs,
        projection_types=(DenseProjection,),
        description="stochastic spherical-radial rules (Genz & Monahan; Munkhoeva et al., "
                    "2018) with paired radii instead of a centre term; for smooth kernels at "
                    "low d"),
    Structure(
        "principal", principal_frequencies, reads_data=True,
        projection_types=(DenseProjection,),
        description="randomised QMC frequencies along the data's principal axes (the PCA "
                    "construction of QMC); for data of low effective dimension"),
)
