"""``structure="auto"``: which projection structure :class:`~kernelmaps.RandomFourierFeatures`
takes when the user leaves the choice to it — the one place the rule is written.

The principal-axes QMC structure for an isotropic density drawn by quasi-Monte Carlo on data
of low effective dimension (it reads a sample of rows for their principal axes); orthogonal
random features (ORF) for other isotropic densities up to :data:`AUTO_MAX_FEATURES` inputs;
i.i.d. frequencies otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["AUTO_MAX_EFFECTIVE_DIMENSION", "AUTO_MAX_FEATURES", "auto_reads_data",
           "auto_structure"]

#: structure="auto" takes the principal-axes QMC structure when the data's effective
#: dimension (participation ratio of the covariance spectrum) is at most this, else ORF.
#: Measured (docs/random_features.md): principal beats ORF up to ≈ 10 and loses above ≈ 12.
AUTO_MAX_EFFECTIVE_DIMENSION = 10.0
#: Above this many features "auto" takes "iid": ORF and the principal axes cost O(d³) resp.
#: O(D′·d·256) to draw and O(d·D) memory, which stops paying at text-like widths.
AUTO_MAX_FEATURES = 4096


def auto_reads_data(sampling: str, isotropic: Callable[[], bool],
                    n_features: int | None = None) -> bool:
    """Whether ``structure="auto"`` reads a sample of rows (their principal axes).

    Parameters
    ----------
    sampling : str
        The frequencies' sampling; Monte Carlo (``"mc"``) never reads rows.
    isotropic : callable
        Whether the kernel's spectral density is isotropic; called only when the answer
        depends on it (the density of a kernel that has none raises).
    n_features : int, default=None
        The inputs' width; ``None`` where it is not known yet: the answer for a width up to
        :data:`AUTO_MAX_FEATURES` (the safe one — rows are then at hand).

    Returns
    -------
    reads : bool
    """
    if sampling == "mc" or (n_features is not None and n_features > AUTO_MAX_FEATURES):
        return False
    return isotropic()


def auto_structure(sampling: str, isotropic: bool, n_features: int,
                   effective_dimension: float | None = None) -> str:
    """The structure ``structure="auto"`` takes.

    Parameters
    ----------
    sampling : str
        The frequencies' sampling.
    isotropic : bool
        Whether the kernel's spectral density is isotropic.
    n_features : int
        The inputs' width.
    effective_dimension : float, default=None
        The participation ratio of the rows' covariance spectrum, where
        :func:`auto_reads_data` says the rows are read.

    Returns
    -------
    structure : {"principal", "orthogonal", "iid"}
    """
    if not auto_reads_data(sampling, lambda: isotropic, n_features):
        return "orthogonal" if isotropic and n_features <= AUTO_MAX_FEATURES else "iid"
    return "orthogonal" if effective_dimension > AUTO_MAX_EFFECTIVE_DIMENSION else "principal"
