"""The method registry: which feature maps :func:`~kernelmaps.evaluate.compare` can run.

An entry (:class:`Method`) says how to build a map for a kernel and an output dimension and
which kernels it approximates; :data:`METHODS` holds the entries in listing order. A new map
plugs in with one :func:`register_method` call; :func:`methods_for` lists the methods for a
kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kernelmaps._suggest import did_you_mean
from kernelmaps.kernels import Kernel
from kernelmaps.kernels.interface import effective_gamma
from kernelmaps.maps import (
    STRUCTURES,
    AdditiveChi2Sampler,
    ArcCosineSampler,
    Nystroem,
    PolynomialCountSketch,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    SkewedChi2Sampler,
    TensorSRHT,
)

__all__ = ["EXACT", "METHODS", "Method", "methods_for", "register_method"]


@dataclass(frozen=True)
class Method:
    """An entry of the method registry :data:`METHODS`.

    Attributes
    ----------
    name : str
        The name used in ``compare(methods=...)`` and ``kernelmaps compare --methods``.
    build : callable
        ``build(kernel, n_components, random_state, n_features) -> feature map`` (unfitted).
    kernels : frozenset of str or None
        Names (``Kernel.name``) of the kernels the map approximates; ``None``: any kernel.
    randomized : bool
        Whether the map has a ``random_state`` (seeds are repeated only for those).
    landmarks : bool
        Whether ``n_components`` counts training rows (at most ``n_train``).
    description : str
        One line for listings.
    """

    name: str
    build: Callable[[Kernel, int, int | None, int], Any]
    kernels: frozenset[str] | None = None
    randomized: bool = True
    landmarks: bool = False
    description: str = ""

    def supports(self, kernel: Kernel) -> bool:
        """Tell whether this method approximates ``kernel``.

        Parameters
        ----------
        kernel : Kernel
            A resolved kernel.

        Returns
        -------
        bool
            True when the method's ``kernels`` include ``kernel.name`` (or it takes any).
        """
        return self.kernels is None or kernel.name in self.kernels

    def n_features_out(self, kernel: Kernel, n_components: int, n_features: int) -> int | None:
        """Compute the output dimension D the map gives, before fitting.

        Two configurations with the same D are the same experiment for a map that rounds
        (``structured`` at n_components 600 and 1000 on d = 784 both give D = 1024).

        Parameters
        ----------
        kernel : Kernel
            A kernel this method supports.
        n_components : int
            The ``n_components`` asked for.
        n_features : int
            The input dimension.

        Returns
        -------
        int or None
            D after the map's rounding (e.g. the Hadamard structures' whole blocks,
            cos/sin pairs), or ``None`` when the map cannot tell before it sees the data
            (Nyström drops numerically dependent landmarks).

        Examples
        --------
        >>> from kernelmaps.evaluate import METHODS
        >>> from kernelmaps.kernels import get_kernel
        >>> METHODS["structured"].n_features_out(get_kernel("rbf"), 1000, 784)
        1024
        """
        feature_map = self.build(kernel, n_components, None, n_features)
        known = getattr(feature_map, "n_features_out_for", None)
        return None if known is None else int(known(n_features))


#: The method registry: name → :class:`Method`, in the order listings show them.
METHODS: dict[str, Method] = {}
#: The name of the exact-kernel baseline row of :func:`~kernelmaps.evaluate.compare`;
#: not a registrable method.
EXACT = "exact"


def register_method(name: str, build: Callable[[Kernel, int, int | None, int], Any], *,
                    kernels: Iterable[str] | None = None, randomized: bool = True,
                    landmarks: bool = False, description: str = "",
                    replace: bool = False) -> Method:
    """Add a feature map to :data:`METHODS` so :func:`compare` and the CLI can run it.

    Parameters
    ----------
    name : str
        Registry name (``"exact"`` is reserved for the baseline).
    build : callable
        ``build(kernel, n_components, random_state, n_features)`` → an unfitted map;
        ``kernel`` is a :class:`~kernelmaps.kernels.Kernel` this method supports.
    kernels : iterable of str or None, default=None
        ``Kernel.name`` of each supported kernel; ``None``: any kernel.
    randomized : bool, default=True
        ``False`` for deterministic maps (fitted once per configuration).
    landmarks : bool, default=False
        ``True`` if ``n_components`` cannot exceed the number of training rows.
    description : str, default=""
        One line describing the map, shown in listings and the report.
    replace : bool, default=False
        Allow overwriting an existing entry.

    Returns
    -------
    Method
        The new registry entry.

    Examples
    --------
    A new map plugs in with one call; :func:`~kernelmaps.evaluate.compare` and
    ``kernelmaps compare --methods`` then run it (here Nyström with k-means landmarks):

    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.evaluate import METHODS, methods_for, register_method
    >>> from kernelmaps.kernels import get_kernel
    >>> method = register_method(
    ...     "nystroem_kmeans",
    ...     lambda kernel, n, seed, n_features: Nystroem(
    ...         kernel=kernel, n_components=n, landmarks="kmeans", random_state=seed),
    ...     landmarks=True, description="Nyström with k-means centres as landmarks")
    >>> "nystroem_kmeans" in methods_for(get_kernel("laplacian"))
    True
    >>> del METHODS["nystroem_kmeans"]  # leave the registry as it was
    """
    if name == EXACT:
        raise ValueError(f"{EXACT!r} is the name of the exact-kernel baseline; pick another.")
    if name in METHODS and not replace:
        raise ValueError(f"method {name!r} is already registered; pass replace=True.")
    method = Method(name=name, build=build,
                    kernels=None if kernels is None else frozenset(kernels),
                    randomized=randomized, landmarks=landmarks, description=description)
    METHODS[name] = method
    return method


def _build_nystroem(kernel: Kernel, n_components: int, random_state: int | None,
                    n_features: int) -> Nystroem:
    return Nystroem(kernel=kernel, n_components=n_components, random_state=random_state)


def _build_rbf_sampler(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> RBFSampler:
    # effective_gamma resolves gamma=None (1/n_features) and the sigma parametrisation in one place.
    return RBFSampler(gamma=effective_gamma(kernel, n_features), n_components=n_components,
                      random_state=random_state)


def _poly_parts(kernel: Kernel, n_features: int, method: str) -> dict[str, Any]:
    """gamma, integer degree and coef0 of a polynomial kernel, for the sketching maps."""
    params = kernel.get_params()
    degree = 3 if params["degree"] is None else params["degree"]
    if float(degree) != int(degree):
        raise ValueError(f"{method} needs an integer polynomial degree; got degree={degree}. "
                         "Use the nystroem method for non-integer degrees.")
    return {"gamma": effective_gamma(kernel, n_features), "degree": int(degree),
            "coef0": 1.0 if params["coef0"] is None else params["coef0"]}


def _build_poly_sketch(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> PolynomialCountSketch:
    return PolynomialCountSketch(**_poly_parts(kernel, n_features, "poly_sketch"),
                                 n_components=n_components, random_state=random_state)


#: AdditiveChi2Sampler's output has n_features·(2·steps − 1) columns; Vedaldi & Zisserman
#: tabulate sampling intervals for 1–3 steps, and more steps buy little at those intervals.
_MAX_CHI2_STEPS = 3


def _build_additive_chi2(kernel: Kernel, n_components: int, random_state: int | None,
                         n_features: int) -> AdditiveChi2Sampler:
    # The largest number of steps whose output fits in n_components (at least one step).
    steps = max(1, min(_MAX_CHI2_STEPS, (n_components // n_features + 1) // 2))
    return AdditiveChi2Sampler(sample_steps=steps)


def _build_skewed_chi2(kernel: Kernel, n_components: int, random_state: int | None,
                       n_features: int) -> SkewedChi2Sampler:
    return SkewedChi2Sampler(skewedness=kernel.get_params()["skewedness"],
                             n_components=n_components, random_state=random_state)


register_method("nystroem", _build_nystroem, landmarks=True,
                description="Nyström: m training rows as landmarks, any kernel")
register_method("rbf_sampler", _build_rbf_sampler,
                kernels=RBFSampler.approximated_kernels(),
                description="random Fourier features (Rahimi & Recht), Gaussian kernel")
register_method("poly_sketch", _build_poly_sketch, kernels={"poly"},
                description="TensorSketch (Pham & Pagh), polynomial kernel")
register_method("additive_chi2", _build_additive_chi2, kernels={"additive_chi2_psd"},
                randomized=False,
                description="deterministic sampled Fourier map (Vedaldi & Zisserman), "
                            "additive chi²; output n_features·(2·steps−1), steps ≤ 3")
register_method("skewed_chi2", _build_skewed_chi2, kernels={"skewed_chi2"},
                description="random Fourier features in log space (Li et al.), skewed chi²")


#: Compare-method name and sampling of the projection structures whose methods predate the
#: structure registry (their names are kept); any other registered structure becomes the
#: method of its own name, with randomised QMC. Every one takes the output form the map's
#: default takes (``output="auto"``: cos/sin pairs for an even D, the offset cosine for an
#: odd one, pairs in whole blocks for a structure that rounds where they add at most 1/8;
#: maps._structure_policy.auto_output), so compare and tune judge each structure by
#: its better form (issue 32).
_LEGACY_RFF_METHODS = {
    "iid": ("rff", "mc"),
    "orthogonal": ("orthogonal", "mc"),
    "structured": ("structured", "mc"),
    "fastfood": ("fastfood", "mc"),
}
#: How the method descriptions (the report's "methods" line) name the output form.
_OUTPUT_FORM = "output cos/sin pairs (an odd D: cos with offset)"


def _random_fourier(structure: str, sampling: str):
    def build(kernel: Kernel, n_components: int, random_state: int | None,
              n_features: int) -> RandomFourierFeatures:
        return RandomFourierFeatures(kernel=kernel, structure=structure, sampling=sampling,
                                     output="auto", n_components=n_components,
                                     random_state=random_state)
    return build


_SYNCED_STRUCTURES: set[str] = set()


def _register_random_fourier_methods() -> None:
    """One method per registered projection structure (maps.STRUCTURES), with
    the kernels the map declares for it (RandomFourierFeatures.approximated_kernels). Run at
    import and again by methods_for / resolve_methods, so that a structure registered
    later is listed too."""
    for name, structure in STRUCTURES.items():
        if name in _SYNCED_STRUCTURES:
            continue
        _SYNCED_STRUCTURES.add(name)
        method, sampling = _LEGACY_RFF_METHODS.get(name, (name, "qmc"))
        register_method(method, _random_fourier(name, sampling),
                        kernels=RandomFourierFeatures.approximated_kernels(name),
                        description=f"random Fourier features, {structure.description}; "
                                    f"{_OUTPUT_FORM}, {sampling}",
                        replace=True)


_register_random_fourier_methods()
register_method("arccos", lambda kernel, n, seed, d: ArcCosineSampler(
                    degree=kernel.get_params()["degree"], n_components=n, random_state=seed),
                kernels={"arccos"},
                description="random sign / ReLU features (Cho & Saul), arc-cosine kernel; "
                            "structure='auto' (the symmetric spherical-radial rule up to "
                            "4,096 features, i.i.d. above)")
register_method("tensor_srht", lambda kernel, n, seed, d: TensorSRHT(
                    **_poly_parts(kernel, d, "tensor_srht"), n_components=n, random_state=seed),
                kernels={"poly"}, description="TensorSRHT (Ahle et al., 2020), polynomial")
def _build_maclaurin(kernel: Kernel, n_components: int, random_state: int | None,
                     n_features: int) -> RandomMaclaurin:
    if kernel.name == "exponential":
        return RandomMaclaurin("exponential", gamma=effective_gamma(kernel, n_features),
                               n_components=n_components, random_state=random_state)
    return RandomMaclaurin("poly", **_poly_parts(kernel, n_features, "maclaurin"),
                           n_components=n_components, random_state=random_state)


register_method("maclaurin", _build_maclaurin, kernels={"poly", "exponential"},
                description="Random Maclaurin (Kar & Karnick, 2012), dot-product kernels")


def methods_for(kernel: Kernel) -> list[str]:
    """List the registered methods that approximate ``kernel``.

    Parameters
    ----------
    kernel : Kernel
        A resolved kernel.

    Returns
    -------
    list of str
        The method names, in registry order.

    Examples
    --------
    >>> from kernelmaps.evaluate import methods_for
    >>> from kernelmaps.kernels import get_kernel
    >>> methods_for(get_kernel("poly"))
    ['nystroem', 'poly_sketch', 'tensor_srht', 'maclaurin']
    """
    _register_random_fourier_methods()
    return [name for name, method in METHODS.items() if method.supports(kernel)]


def resolve_methods(methods: Iterable[str] | None, kernel: Kernel) -> list[Method]:
    """The registry entries for ``methods`` (``None``: every method for ``kernel``), checked."""
    _register_random_fourier_methods()
    if methods is None:
        return [METHODS[name] for name in methods_for(kernel)]
    names = [methods] if isinstance(methods, str) else list(methods)
    if not names:
        raise ValueError(f"methods is empty; valid names are {sorted(METHODS)}.")
    resolved = []
    for name in names:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}{did_you_mean(name, METHODS)}; valid "
                             f"methods are {sorted(METHODS)}.")
        method = METHODS[name]
        if not method.supports(kernel):
            raise ValueError(
                f"method {name!r} approximates the {sorted(method.kernels)} kernel(s), not "
                f"{kernel.name!r}; methods for {kernel.name!r}: {methods_for(kernel)}."
            )
        if method not in resolved:
            resolved.append(method)
    return resolved


def method_order(names: Iterable[str]) -> list[str]:
    """``names`` without repeats: the baseline first, then registry order, then the rest."""
    registered = [EXACT, *METHODS]
    present = list(dict.fromkeys(names))
    return sorted(present, key=lambda m: registered.index(m) if m in registered else 1e9)
