"""The one registry of every public estimator of kernelmaps, for the contract tests.

Each :class:`Entry` says how to build a small, fast instance (small ``n_components``, a fixed
``random_state``), what input the estimator takes (sparse? non-negative only?), what it is
(``transformer``, ``regressor``, ``classifier`` or ``outlier``), and which of scikit-learn's
checks it is declared to fail, with the reason. ``tests/test_contract.py`` runs the whole
estimator contract over ``ENTRIES``; ``test_every_public_estimator_is_registered`` fails when
a class exported by :mod:`kernelmaps`, :mod:`kernelmaps.maps` or :mod:`kernelmaps.models` has
no entry here, so a new estimator is covered as soon as it is exported.

To register a new estimator, add an ``Entry`` (one per configuration that exercises a
different code path, e.g. one per projection structure).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import kernelmaps
import kernelmaps.distributed
import kernelmaps.maps
import kernelmaps.models
from kernelmaps.maps import (
    AdditiveChi2Sampler,
    ArcCosineSampler,
    FeatureMap,
    Nystroem,
    PolynomialCountSketch,
    PolynomialKernelMap,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    SkewedChi2Sampler,
    TensorSRHT,
)
from kernelmaps.models import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelCCA,
    KernelFisherDiscriminant,
    KernelMeanDistance,
    KernelRidge,
    KernelRidgeClassifier,
    StreamingPipeline,
)

__all__ = ["ENTRIES", "KINDS", "Entry", "make_data", "one_per_class", "public_estimators"]

KINDS = ("transformer", "regressor", "classifier", "outlier")

#: Exported classes that are bases to subclass, not estimators to use.
BASE_CLASSES = frozenset({FeatureMap})
#: Generic wrappers of other estimators, not kernel estimators: the kernel contract tests
#: (kernel_, float32 outputs, block sizes…) do not apply. StreamingPipeline (scikit-learn's
#: Pipeline plus partial_fit) passes scikit-learn's check_estimator in
#: tests/models/test_streaming.py instead.
WRAPPERS = frozenset({StreamingPipeline})

#: Nyström centres are rows of the data: repeating rows changes which are drawn, so weights
#: and repetitions are not exactly equivalent.
_NYSTROM_CENTRES_XFAIL = {
    name: "Nyström centres are drawn from the rows: repeating rows changes the centres, so "
          "weights and repetitions give (slightly) different models."
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")
}


@dataclass(frozen=True)
class Entry:
    """One registered estimator configuration.

    Attributes
    ----------
    id : str
        Test id, unique.
    cls : type
        The public class.
    params : dict
        Constructor parameters of a small, fast, deterministic instance.
    kind : {"transformer", "regressor", "classifier", "outlier"}
        What the estimator is: what ``fit`` needs (``y`` or not) and what its output is.
    sparse : bool
        Whether it takes CSR input (must agree with its ``input_tags.sparse``).
    non_negative : bool
        Whether it needs x >= 0 (must agree with its ``input_tags.positive_only``).
    stateless : bool
        Whether ``transform`` works unfitted (scikit-learn's ``AdditiveChi2Sampler``).
    float32_out : bool
        Whether float32 input gives float32 output (the maps; the models compute their
        small systems and outputs in float64).
    sparse_rtol : float
        Relative tolerance of sparse vs dense input (CCA's whitening amplifies the BLAS
        rounding differences of the two paths, ~1e-16, to ~1e-7).
    two_views : bool
        Whether ``fit(X, y)`` takes a second view ``y`` (KernelCCA); its ``fit_transform``
        returns both views' scores, as scikit-learn's CCA does.
    seed_changes_output : bool
        Whether different ``random_state`` values give different outputs (``False`` where
        the randomness only seeds a search that reaches the same optimum).
    expected_failed_checks : dict
        scikit-learn checks declared to fail, name → reason.
    array_api_unsupported : str
        Why the estimator cannot compute on array-API arrays (PyTorch, ``array_api_strict``)
        under ``array_api_dispatch``; empty (the default) when it can, and then
        ``tests/test_array_api.py`` runs it on those libraries against NumPy.
    """

    id: str
    cls: type
    params: dict = field(default_factory=dict)
    kind: str = "transformer"
    sparse: bool = True
    non_negative: bool = False
    stateless: bool = False
    float32_out: bool = True
    seed_changes_output: bool = True
    expected_failed_checks: dict = field(default_factory=dict)
    two_views: bool = False
    sparse_rtol: float = 1e-10
    array_api_unsupported: str = ""

    def make(self, **overrides: Any) -> BaseEstimator:
        """A fresh instance with the registered parameters (and ``overrides``)."""
        return self.cls(**{**self.params, **overrides})

    @property
    def is_transformer(self) -> bool:
        return hasattr(self.cls, "transform")

    @property
    def output_methods(self) -> tuple[str, ...]:
        """The methods whose outputs the contract tests compare."""
        names = ("transform", "predict", "decision_function", "predict_proba",
                 "score_samples")
        return tuple(name for name in names if hasattr(self.cls, name))

    def __repr__(self) -> str:  # shown in test ids and failures
        return self.id


#: The default RandomFourierFeatures (structure="auto" with QMC) reads a sample of rows for
#: its principal axes: repeating rows changes the sample, as for Nyström's centres.
_RFF_SAMPLE_XFAIL = {
    name: "the default RandomFourierFeatures reads a sample of rows (its principal axes): "
          "repeating rows changes the sample, so weights and repetitions give (slightly) "
          "different features."
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")
}


def _rff(kernel: str, structure: str, output: str, sampling: str = "mc",
         **params: Any) -> Entry:
    suffix = "" if sampling == "mc" else f"-{sampling}"
    return Entry(f"RandomFourierFeatures-{kernel}-{structure}-{output}{suffix}",
                 RandomFourierFeatures,
                 dict(kernel=kernel, structure=structure, sampling=sampling, output=output,
                      n_components=20, random_state=0, **params))


def _model(entry_id: str, cls: type, kind: str, *,
           expected_failed_checks: dict | None = None, array_api_unsupported: str = "",
           seed_changes_output: bool = True, sparse_rtol: float = 1e-10,
           **params: Any) -> Entry:
    """A kernel machine: outputs in float64 (its small systems are solved in float64)."""
    return Entry(entry_id, cls, params, kind=kind, float32_out=False,
                 expected_failed_checks=expected_failed_checks or {},
                 array_api_unsupported=array_api_unsupported,
                 seed_changes_output=seed_changes_output, sparse_rtol=sparse_rtol)


#: The linear models on explicit features accumulate their normal equations with BLAS syrk
#: into host float64 arrays (or on Dask chunks): there is no device path yet.
ENTRIES: tuple[Entry, ...] = (
    # ----------------------------------------------------------------- scikit-learn's five
    Entry("Nystroem", Nystroem, dict(n_components=20, random_state=0)),
    # The Rényi exchange reaches the same subset from any random start on the small data.
    Entry("Nystroem-renyi-eigen", Nystroem,
          dict(n_components=20, landmarks="renyi", basis="eigen", random_state=0),
          seed_changes_output=False),
    Entry("Nystroem-leverage", Nystroem,
          dict(n_components=20, landmarks="leverage", random_state=0)),
    # Pre-images (fit_inverse_transform): the map back is fitted at fit, in float32 too.
    Entry("Nystroem-inverse", Nystroem,
          dict(n_components=20, random_state=0, fit_inverse_transform=True, alpha=0.1)),
    Entry("RBFSampler", RBFSampler, dict(n_components=64, random_state=0)),
    # gamma="scale" resolved on the training data (dense, CSR, float32, device arrays).
    Entry("Nystroem-gamma-scale", Nystroem, dict(gamma="scale", n_components=20,
                                                 random_state=0)),
    Entry("RBFSampler-gamma-scale", RBFSampler, dict(gamma="scale", n_components=64,
                                                     random_state=0)),
    Entry("AdditiveChi2Sampler", AdditiveChi2Sampler, non_negative=True, stateless=True),
    Entry("SkewedChi2Sampler", SkewedChi2Sampler, dict(n_components=64, random_state=0)),
    Entry("PolynomialCountSketch", PolynomialCountSketch, dict(n_components=64, random_state=0)),
    # ----------------------------------------------------------------- random Fourier features
    # Every structure and both outputs; rbf (Gaussian density), Matérn (multivariate t),
    # Student (Gaussian scale mixture) and the L1 Laplacian (iid Cauchy, iid only); Monte
    # Carlo, and each randomised-QMC code path: the default ("auto": principal axes, read
    # from the data), points mapped by inverse CDFs ("iid"), stratified radii
    # ("orthogonal", and the Hadamard structures), weighted paired rules ("quadrature",
    # per-column scales in both output forms), Halton.
    _rff("rbf", "iid", "cos_offset"),
    _rff("rbf", "orthogonal", "cos_sin"),
    _rff("matern", "structured", "cos_offset", kernel_params={"nu": 1.5}),
    _rff("matern", "fastfood", "cos_sin", kernel_params={"nu": 0.5}),
    _rff("laplacian", "iid", "cos_sin", gamma=0.5),
    _rff("rbf", "auto", "cos_sin", "qmc"),
    _rff("laplacian", "iid", "cos_offset", "halton", gamma=0.5),
    _rff("matern", "orthogonal", "cos_offset", "qmc", kernel_params={"nu": 2.5}),
    _rff("student", "structured", "cos_sin", "qmc", kernel_params={"alpha": 2.0}),
    _rff("rbf", "quadrature", "cos_sin", "qmc"),
    _rff("student", "quadrature", "cos_offset", "qmc"),
    _rff("matern", "principal", "cos_offset", "halton", kernel_params={"nu": 0.5}),
    # ----------------------------------------------------------------- other kernels' maps
    Entry("ArcCosineSampler-0", ArcCosineSampler,
          dict(degree=0, n_components=32, random_state=0)),
    Entry("ArcCosineSampler-1", ArcCosineSampler,
          dict(degree=1, n_components=32, random_state=0)),
    Entry("ArcCosineSampler-2", ArcCosineSampler,
          dict(degree=2, n_components=32, random_state=0)),
    Entry("ArcCosineSampler-1-iid", ArcCosineSampler,
          dict(degree=1, n_components=32, structure="iid", random_state=0)),
    Entry("ArcCosineSampler-1-structured", ArcCosineSampler,
          dict(degree=1, n_components=32, structure="structured", random_state=0)),
    Entry("RandomMaclaurin-poly", RandomMaclaurin, dict(n_components=32, random_state=0)),
    Entry("RandomMaclaurin-exponential", RandomMaclaurin,
          dict(kernel="exponential", n_components=32, random_state=0)),
    Entry("TensorSRHT", TensorSRHT, dict(n_components=32, random_state=0)),
    Entry("TensorSRHT-3-coef0", TensorSRHT,
          dict(degree=3, coef0=1.0, n_components=32, random_state=0)),
    Entry("PolynomialKernelMap", PolynomialKernelMap, dict(degree=2)),
    # ----------------------------------------------------------------- kernel machines
    _model("KernelRidge-default", KernelRidge, "regressor"),  # linear kernel, solver="auto"
    _model("KernelRidge-exact", KernelRidge, "regressor", kernel="rbf", solver="exact"),
    _model("KernelRidge-gamma-scale", KernelRidge, "regressor", kernel="rbf", gamma="scale",
           solver="exact"),
    _model("KernelRidge-nystrom", KernelRidge, "regressor", kernel="rbf", solver="nystrom",
           n_components=20, random_state=0, expected_failed_checks=_NYSTROM_CENTRES_XFAIL),
    _model("KernelRidgeClassifier", KernelRidgeClassifier, "classifier"),  # exact (auto)
    # Its Nyström fit caches float32 kernel blocks at its default tol=1e-2 (issue 26): dense
    # rows get them from a fused float32 GEMM + exp, sparse rows as float64 values rounded
    # to float32, ~1e-7 apart in the scores.
    _model("KernelRidgeClassifier-nystrom", KernelRidgeClassifier, "classifier",
           solver="nystrom", n_components=20, random_state=0,
           expected_failed_checks=_NYSTROM_CENTRES_XFAIL, sparse_rtol=1e-5),
    _model("KernelFisherDiscriminant", KernelFisherDiscriminant, "classifier"),
    _model("KernelFisherDiscriminant-centres", KernelFisherDiscriminant, "classifier",
           n_components=10, random_state=0),
    _model("KernelFisherDiscriminant-leverage", KernelFisherDiscriminant, "classifier",
           n_components=10, landmarks="leverage", random_state=0),
    _model("KernelMeanDistance", KernelMeanDistance, "outlier"),
    _model("KernelMeanDistance-centres", KernelMeanDistance, "outlier",
           n_components=10, random_state=0),
    # With the default gamma="scale" (γ ≈ 2 on make_data) the Rényi exchange reaches the same
    # 10 centres from any random start, as for Nystroem-renyi-eigen above.
    _model("KernelMeanDistance-renyi", KernelMeanDistance, "outlier",
           n_components=10, landmarks="renyi", random_state=0, seed_changes_output=False),
    # Two views: fit(X, y) with y the second view. scikit-learn's checks compare
    # fit_transform(X, y) with transform(X); like scikit-learn's CCA (which those checks
    # exempt by name), KernelCCA.fit_transform(X, y) returns both views' variates.
    Entry("KernelCCA", KernelCCA,
          dict(n_components=2, x_map=Nystroem(n_components=20),
               y_map=Nystroem(n_components=20), random_state=0),
          two_views=True, sparse_rtol=1e-6,
          expected_failed_checks={
              name: "fit_transform(X, y) returns (x_scores, y_scores) as sklearn's CCA does"
              for name in ("check_transformer_general", "check_transformer_data_not_an_array")
          }),
    # ----------------------------------------------------------------- linear models on z(x)
    _model("FeatureRidge", FeatureRidge, "regressor", random_state=0),
    _model("FeatureRidge-nystrom", FeatureRidge, "regressor",
           feature_map=Nystroem(n_components=20), random_state=0),
    _model("FeatureRidgeClassifier", FeatureRidgeClassifier, "classifier",
           feature_map=RandomFourierFeatures(n_components=20), random_state=0,
           expected_failed_checks=_RFF_SAMPLE_XFAIL),
)

assert len({e.id for e in ENTRIES}) == len(ENTRIES), "registry ids must be unique"
assert all(e.kind in KINDS for e in ENTRIES)


def by_id(entries):
    """``@pytest.mark.parametrize("e", entries)`` with each entry's registry id as test id."""
    return pytest.mark.parametrize("e", entries, ids=[e.id for e in entries])


def one_per_class(entries) -> list[Entry]:
    """The first entry of each class, in registry order (for the costlier tests)."""
    chosen: dict[type, Entry] = {}
    for e in entries:
        chosen.setdefault(e.cls, e)
    return list(chosen.values())


def public_estimators() -> dict[str, type]:
    """Every estimator class exported by kernelmaps, kernelmaps.maps, kernelmaps.models and
    kernelmaps.distributed."""
    found = {}
    for module in (kernelmaps, kernelmaps.maps, kernelmaps.models, kernelmaps.distributed):
        for name in module.__all__:
            obj = getattr(module, name)
            if (isinstance(obj, type) and issubclass(obj, BaseEstimator)
                    and obj not in BASE_CLASSES and obj not in WRAPPERS):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def make_data(e: Entry, n_samples: int = 60, n_features: int = 5, *, seed: int = 0
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """Data ``(X, y)`` every registered estimator accepts: non-negative (the χ² maps need it)
    with about half the entries zero (so CSR input is really sparse), scaled so the
    polynomial and exponential maps stay in a moderate range; ``y`` fits the entry's kind
    (``None`` for transformers and outlier detectors)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(0.0, 1.0, size=(n_samples, n_features))
    X[rng.uniform(size=X.shape) < 0.5] = 0.0
    X[:, 0] += 0.1  # no all-zero row: cosine-like normalisations stay defined
    if e.kind == "regressor":
        y = np.sin(3 * X[:, 0]) + X[:, 1]
    elif e.kind == "classifier":
        y = np.where(X[:, 0] + X[:, 1] > np.median(X[:, 0] + X[:, 1]), 1, 0)
    elif e.two_views:  # a second view sharing a non-linear signal with X
        y = np.column_stack([np.cos(3 * X[:, 0]), X[:, 1] ** 2, rng.uniform(size=n_samples)])
    else:
        y = None
    return X, y
