r"""Kernels k(x, y): one definition each, evaluated in bounded-memory row blocks.

Every part of kernelmaps that needs exact kernel values (Nystroem, the kernel machines, the
approximation-error tools) goes through the objects here. The kernels named after
:mod:`sklearn.metrics.pairwise` take the same parameters, defaults and values:

=================  ========================================================  ====================
name               k(x, y)                                                   parameters
=================  ========================================================  ====================
``linear``         :math:`\langle x, y\rangle`                               —
``poly``           :math:`(\gamma\langle x, y\rangle + c_0)^d`               gamma, coef0, degree
``rbf``            :math:`\exp(-\gamma\|x-y\|^2)`                            gamma
``laplacian``      :math:`\exp(-\gamma\|x-y\|_1)`                            gamma
``sigmoid``        :math:`\tanh(\gamma\langle x, y\rangle + c_0)` (not PSD)  gamma, coef0
``cosine``         :math:`\langle x, y\rangle / (\|x\|\|y\|)`                —
``chi2``           :math:`\exp(-\gamma\sum_i (x_i-y_i)^2/(x_i+y_i))`         gamma
``additive_chi2``  :math:`-\sum_i (x_i-y_i)^2/(x_i+y_i)` (conditionally PD)  —
=================  ========================================================  ====================

``gamma=None`` means :math:`1/n_\text{features}` (``chi2``: 1), ``degree=None`` means 3 and
``coef0=None`` means 1, exactly as in scikit-learn. Every kernel with ``gamma`` also takes
scikit-learn's ``gamma="scale"`` — :math:`1/(n_\text{features}\operatorname{Var}X)` on the
training data, 1 if that variance is 0 (:class:`sklearn.svm.SVC`'s definition) — and
``gamma="auto"`` (:math:`1/n_\text{features}`): such a kernel is resolved once on the
training data with :meth:`Kernel.resolve` (estimators do it in ``fit``) and refuses to be
evaluated before, since row blocks must not get different values of γ.

Beyond scikit-learn: ``exponential``, ``student``, ``matern``, ``additive_chi2_psd``,
``skewed_chi2`` and ``arccos`` (see each class).

Common spellings are accepted as aliases (:data:`KERNEL_ALIASES`: ``gaussian`` and
``squared_exponential`` for ``rbf``, ``laplace``, ``tanh``, ``chi_squared``, ``arc_cosine``);
:func:`resolve_kernel` turns a name, alias, :class:`Kernel`, callable or ``'precomputed'`` into
a :class:`Kernel`, once, in ``fit``.

One package, one concern per module: :class:`Kernel` (the currency: values in blocks, blocked
products :math:`K(X, Y)V`, reductions, the diagonal, the rounding-error bound),
:mod:`~kernelmaps.kernels.degenerate` (:class:`DegenerateKernelWarning`: kernel matrices
numerically constant or the identity at an extreme scale parameter),
:mod:`~kernelmaps.kernels.dot_product`, :mod:`~kernelmaps.kernels.shift_invariant`,
:mod:`~kernelmaps.kernels.histogram`, :mod:`~kernelmaps.kernels.spectral` (spectral densities
for random Fourier features), :mod:`~kernelmaps.kernels.mercer` (the Mercer check) and
:mod:`~kernelmaps.kernels.distance` (feature-space distances).
"""

from kernelmaps.kernels._base import IndefiniteKernelWarning, Kernel
from kernelmaps.kernels._gamma import GAMMA_HEURISTICS, gamma_constraints, gamma_value
from kernelmaps.kernels._resolve import (
    KERNEL_ALIASES,
    KERNELS,
    KernelNameOptions,
    canonical_kernel_name,
    get_kernel,
    register_kernel,
    resolve_kernel,
)
from kernelmaps.kernels._rounding import (
    eps_of,
    exp_error,
    inner_product_error,
    sq_distance_error,
)
from kernelmaps.kernels._user import CallableKernel, PrecomputedKernel
from kernelmaps.kernels.degenerate import DegenerateKernelWarning
from kernelmaps.kernels.distance import feature_distance, kernel_distance
from kernelmaps.kernels.dot_product import (
    ArcCosineKernel,
    CosineKernel,
    ExponentialKernel,
    LinearKernel,
    PolynomialKernel,
    SigmoidKernel,
)
from kernelmaps.kernels.histogram import (
    AdditiveChi2Kernel,
    AdditiveChi2PSDKernel,
    Chi2Kernel,
    SkewedChi2Kernel,
)
from kernelmaps.kernels.mercer import MercerReport, check_mercer
from kernelmaps.kernels.shift_invariant import (
    LaplacianKernel,
    MaternKernel,
    RBFKernel,
    StudentKernel,
)
from kernelmaps.kernels.spectral import (
    CauchyProductDensity,
    GaussianDensity,
    GaussianScaleMixtureDensity,
    MultivariateTDensity,
    SpectralDensity,
)

__all__ = [
    "GAMMA_HEURISTICS",
    "KERNELS",
    "KERNEL_ALIASES",
    "AdditiveChi2Kernel",
    "AdditiveChi2PSDKernel",
    "ArcCosineKernel",
    "CallableKernel",
    "CauchyProductDensity",
    "Chi2Kernel",
    "CosineKernel",
    "DegenerateKernelWarning",
    "ExponentialKernel",
    "GaussianDensity",
    "GaussianScaleMixtureDensity",
    "IndefiniteKernelWarning",
    "Kernel",
    "KernelNameOptions",
    "LaplacianKernel",
    "LinearKernel",
    "MaternKernel",
    "MercerReport",
    "MultivariateTDensity",
    "PolynomialKernel",
    "PrecomputedKernel",
    "RBFKernel",
    "SigmoidKernel",
    "SkewedChi2Kernel",
    "SpectralDensity",
    "StudentKernel",
    "canonical_kernel_name",
    "check_mercer",
    "eps_of",
    "exp_error",
    "feature_distance",
    "gamma_constraints",
    "gamma_value",
    "get_kernel",
    "inner_product_error",
    "kernel_distance",
    "register_kernel",
    "resolve_kernel",
    "sq_distance_error",
]
