"""The kernel registry and the one resolver: :func:`resolve_kernel` turns what a user passed
as a kernel (a name and parameters, a :class:`~kernelmaps.kernels.Kernel`, a callable or
``"precomputed"``) into a Kernel; every estimator calls it once, in ``fit``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sklearn.utils._param_validation import StrOptions

from kernelmaps._suggest import did_you_mean
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._user import CallableKernel, PrecomputedKernel

#: Kernel classes by name (scikit-learn's names, plus aliases); filled by
#: :func:`register_kernel` in the modules of :mod:`kernelmaps.kernels`.
KERNELS: dict[str, type[Kernel]] = {}

#: Common names of kernels, accepted wherever a kernel name is (case and ``-``/``_`` do not
#: matter either): the names of the literature and of other libraries (GPy, GPyTorch and
#: scikit-learn's Gaussian processes say "squared exponential"; PyTorch says "tanh").
KERNEL_ALIASES: dict[str, str] = {
    "gaussian": "rbf",
    "squared_exponential": "rbf",
    "laplace": "laplacian",
    "arc_cosine": "arccos",
    "arccosine": "arccos",
    "tanh": "sigmoid",
    "chi_squared": "chi2",
}


def canonical_kernel_name(name: str) -> str:
    """Return the registered name for a kernel name or alias.

    Names are compared without case, with ``-`` read as ``_``.

    Parameters
    ----------
    name : str
        A kernel name or alias.

    Returns
    -------
    str
        ``name`` itself, or the kernel an alias stands for; a name that is neither
        registered nor an alias comes back as it was (the caller reports it).

    Examples
    --------
    >>> from kernelmaps.kernels import canonical_kernel_name
    >>> canonical_kernel_name("Gaussian"), canonical_kernel_name("poly")
    ('rbf', 'poly')
    """
    if name in KERNELS:
        return name
    key = name.strip().lower().replace("-", "_")
    if key in KERNELS:
        return key
    return KERNEL_ALIASES.get(key, name)


class KernelNameOptions(StrOptions):
    """The ``kernel=`` constraint of estimators: every registered kernel name and alias.

    The aliases are those of :data:`KERNEL_ALIASES`.

    The registry is read when the parameter is validated, so a kernel registered after
    import (:func:`register_kernel`) is accepted too; every estimator builds its constraint
    from this one class.

    Parameters
    ----------
    precomputed : bool, default=False
        Whether ``"precomputed"`` is accepted too (the estimator takes a kernel matrix).

    Examples
    --------
    >>> from kernelmaps.kernels import KernelNameOptions
    >>> options = KernelNameOptions(precomputed=True)
    >>> options.is_satisfied_by("gaussian"), options.is_satisfied_by("gausian")
    (True, False)
    >>> "precomputed" in KernelNameOptions().options
    False
    """

    def __init__(self, *, precomputed: bool = False) -> None:
        self.precomputed = precomputed
        super().__init__(set())

    @property
    def options(self) -> set[str]:
        """The accepted names, read from the kernel registry at each call."""
        return {*KERNELS, *KERNEL_ALIASES, *(["precomputed"] if self.precomputed else [])}

    @options.setter
    def options(self, value: object) -> None:
        # StrOptions.__init__ assigns the options; they are always read from the registry.
        pass


def _unknown_kernel(kernel: object, valid: list[str], owner: str | None = None) -> str:
    """The message for a kernel name that is not known, with the close names first."""
    where = f" for {owner}" if owner else ""
    suggestion = did_you_mean(kernel, [*KERNELS, *KERNEL_ALIASES]) if isinstance(
        kernel, str) else ""
    aliases = ", ".join(f"{alias} = {name}" for alias, name in KERNEL_ALIASES.items())
    return (f"Unknown kernel {kernel!r}{where}{suggestion}; valid names are {valid} "
            f"(aliases: {aliases})")


def register_kernel(cls: type[Kernel] | None = None, *, aliases: tuple[str, ...] = ()) -> Any:
    """Register a kernel class under its name, for :func:`get_kernel` and :func:`resolve_kernel`.

    A class decorator, used bare (``@register_kernel``) or with aliases
    (``@register_kernel(aliases=("gaussian",))``): afterwards the class's ``name`` (and each
    alias) is accepted wherever a kernel name is, by the estimators, the Mercer check and
    the ``kernelmaps`` command.

    Parameters
    ----------
    aliases : tuple of str, default=()
        Further names for the same class.

    Returns
    -------
    type of Kernel or callable
        Used bare, the decorated class itself (now registered); called with ``aliases``, the
        decorator that registers the class it is applied to.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import KERNELS, Kernel, get_kernel, register_kernel
    >>> @register_kernel
    ... class MinKernel(Kernel):  # histogram intersection k(x, y) = Σ_i min(x_i, y_i)
    ...     name = "doctest_min"
    ...     def evaluate_into(self, X, Y, out):
    ...         out[...] = np.minimum(X[:, None, :], Y[None, :, :]).sum(axis=-1)
    >>> get_kernel("doctest_min")(np.array([[1.0, 2.0], [3.0, 0.5]]))
    array([[3. , 1.5],
           [1.5, 3.5]])
    >>> del KERNELS["doctest_min"]  # undo the registration
    """

    def register(kernel_class: type[Kernel]) -> type[Kernel]:
        for name in (kernel_class.name, *aliases):
            if not name or name in ("precomputed", "callable"):
                raise ValueError(f"{kernel_class.__name__} needs a name other than {name!r}.")
            KERNELS[name] = kernel_class
        return kernel_class

    return register if cls is None else register(cls)


def get_kernel(kernel: str | Kernel, **params: Any) -> Kernel:
    """Return a :class:`Kernel` from a name and its parameters (a Kernel passes through).

    Parameters
    ----------
    kernel : str or Kernel
        One of ``sorted(KERNELS)``, an alias from ``KERNEL_ALIASES`` (``"gaussian"`` is
        ``"rbf"``), or a Kernel instance. A misspelt name is an error that suggests the
        close names.
    **params
        The kernel's parameters (see each class). Unknown names raise ``TypeError``.

    Returns
    -------
    Kernel
        A new instance of the named kernel's class with ``params``, or ``kernel`` itself.

    Examples
    --------
    >>> from kernelmaps.kernels import get_kernel
    >>> get_kernel("rbf", gamma=0.5)
    RBFKernel(gamma=0.5, sigma=None)
    """
    if isinstance(kernel, Kernel):
        if params:
            raise TypeError("Pass parameters either in the Kernel object or as keywords, not both.")
        return kernel
    if isinstance(kernel, str):
        kernel = canonical_kernel_name(kernel)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(_unknown_kernel(kernel, sorted(KERNELS)) + ".")
    cls = KERNELS[kernel]
    unknown = set(params) - set(cls.param_names)
    if unknown:
        hints = "".join(did_you_mean(name, cls.param_names) for name in sorted(unknown))
        raise TypeError(
            f"kernel {kernel!r} got unexpected parameter(s) {sorted(unknown)}{hints}; it "
            f"accepts {list(cls.param_names) or 'no parameters'}."
        )
    return cls(**params)


def resolve_kernel(kernel: str | Kernel | Callable[..., Any] = "rbf", *,
                   gamma: float | None = None, degree: float | None = None,
                   coef0: float | None = None, kernel_params: dict | None = None,
                   n_jobs: int | None = None, vectorized: bool = False,
                   strict: bool = False, owner: str = "the estimator") -> Kernel:
    """Turn what a user passed as a kernel into a :class:`Kernel` — the one place that does.

    Mirrors how scikit-learn estimators take a kernel:

    * a name (or an alias of ``KERNEL_ALIASES``, e.g. ``"gaussian"``) plus
      ``gamma``/``degree``/``coef0`` (each used only if the named kernel has that
      parameter, as scikit-learn's ``filter_params`` does) and ``kernel_params`` for the rest;
    * a :class:`Kernel` object (returned as it is);
    * a callable, which becomes a :class:`CallableKernel` (``kernel_params`` are its keyword
      arguments; ``vectorized`` says whether it takes blocks or pairs of rows);
    * ``"precomputed"``, which becomes a :class:`PrecomputedKernel`.

    Parameters
    ----------
    kernel : str, Kernel or callable, default='rbf'
        A kernel name or alias, ``'precomputed'``, a :class:`Kernel` or a callable (see
        above).
    gamma : float, {'scale', 'auto'} or None, default=None
        Shortcut parameter of named kernels, as in scikit-learn. ``"scale"`` or ``"auto"``
        give a kernel resolved on the training data with :meth:`Kernel.resolve`; a
        ``gamma`` or ``sigma`` in ``kernel_params`` wins over those strings. None: the
        kernel's default.
    degree : float or None, default=None
        Shortcut parameter of the polynomial kernel. None: the kernel's default.
    coef0 : float or None, default=None
        Shortcut parameter of the polynomial and sigmoid kernels. None: the kernel's default.
    kernel_params : dict, default=None
        Further parameters of a named kernel, or keyword arguments of a callable.
    n_jobs : int, default=None
        Parallelism of scikit-learn's pairwise driver for pairwise callables.
    vectorized : bool, default=False
        Whether a callable computes whole blocks ``f(X, Y) -> matrix``.
    strict : bool, default=False
        Refuse ``gamma``/``degree``/``coef0`` with a Kernel object, a callable or
        ``"precomputed"`` (scikit-learn's Nystroem does; its KernelRidge ignores them).
    owner : str, default='the estimator'
        Who is asking, for error messages.

    Returns
    -------
    Kernel
        The kernel, resolved once; estimators store it as ``kernel_``.

    Examples
    --------
    >>> from kernelmaps.kernels import resolve_kernel
    >>> resolve_kernel("poly", gamma=0.5, degree=2, coef0=1.0)
    PolynomialKernel(gamma=0.5, degree=2, coef0=1.0)
    >>> resolve_kernel("rbf", gamma=0.1, degree=3)  # degree is not an rbf parameter
    RBFKernel(gamma=0.1, sigma=None)
    """
    if isinstance(kernel, str):
        kernel = canonical_kernel_name(kernel)
    named = isinstance(kernel, str) and kernel != "precomputed"
    if strict and not named and any(v is not None for v in (gamma, degree, coef0)):
        raise ValueError(
            f"Don't pass gamma, coef0 or degree to {owner} if using a callable or precomputed "
            "kernel (or a Kernel object): give the kernel's parameters to the kernel itself "
            "(kernel_params for a callable)."
        )
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str) and kernel == "precomputed":
        return PrecomputedKernel()
    if callable(kernel):
        return CallableKernel(kernel, kernel_params, n_jobs=n_jobs, vectorized=vectorized)
    if not named or kernel not in KERNELS:
        raise ValueError(_unknown_kernel(kernel, [*sorted(KERNELS), "precomputed"], owner)
                         + ", a Kernel or a callable.")
    accepted = KERNELS[kernel].param_names
    params = {k: v for k, v in (kernel_params or {}).items() if k in accepted}
    for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        if name in accepted and value is not None:
            if name == "gamma" and isinstance(value, str) and {"gamma", "sigma"} & set(params):
                continue  # a width given in kernel_params wins over "scale"/"auto"
            params[name] = value
    return get_kernel(kernel, **params)
