"""What :func:`~kernelmaps.tuning.tune` returns: :class:`TuneResult` and its :class:`Trial` rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sklearn.pipeline import Pipeline

from kernelmaps._optional import import_optional

__all__ = ["Trial", "TuneResult"]


@dataclass(frozen=True)
class Trial:
    """One configuration scored by :func:`tune` (a row of ``TuneResult.table``).

    Attributes
    ----------
    stage : str
        ``"gamma"`` (the γ search), ``"n_components"`` (D growth), ``"refine"`` (γ at the
        final D) or ``"final"`` (all rows: the final model, and beyond the search sample
        each D judged there, α chosen on held-out rows; the last one is the model).
    gamma : float
        The kernel's scale parameter (``TuneResult.scale_name`` says which).
    n_components : int
        The map's ``n_components`` parameter.
    n_features_out : int
        The map's real output dimension.
    n_rows : int
        Rows the features were computed on.
    alpha : float
        The best α for this configuration.
    score : float
        Validation score at that α (accuracy or R²).
    time_s : float
        Wall time: map fit, transform and α path.
    estimated_s : float
        What kernelmaps' cost model (the one behind ``compare``'s estimate) priced this
        configuration at, in seconds at the machine's rate when it was priced (its
        elapsed-time rate, so with the load of that moment), before tune's learned slowdown
        and safety margin: beside ``time_s``, how far tune's budget can trust the model.
    """

    stage: str
    gamma: float
    n_components: int
    n_features_out: int
    n_rows: int
    alpha: float
    score: float
    time_s: float
    estimated_s: float = float("nan")


@dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    estimator : sklearn.pipeline.Pipeline
        ``Pipeline([("map", feature map), ("model", Ridge or RidgeClassifier)])``, fitted on
        all rows at the chosen parameters, with a first step ``("scale", scaler)`` when
        ``scale`` is not ``"none"``; use it as is (``predict``, ``score``).
    params : dict
        ``method``, ``kernel`` (name), the scale parameter (``gamma`` or ``length_scale``),
        ``alpha`` and ``n_components``.
    score : float
        Validation score of the final model (leave-one-out or k-fold on all rows; accuracy
        for classification, R² for regression).
    trials : list of Trial
        Every configuration tried, in order.
    task : str
        ``"classification"`` or ``"regression"``.
    scoring : str
        ``"accuracy"`` or ``"r2"``.
    cv : "loo" or int
        The validation: leave-one-out or the number of folds.
    scale_name : str
        The kernel parameter searched (``gamma`` for most kernels).
    heuristic : float
        The median heuristic's value of that parameter (the centre of the search).
    time_s : float
        Wall time of :func:`tune`.
    stopped : str
        Why the search ended (converged, bounds, the time budget).
    notes : list of str
        Caveats of the result: the model not refitted on all rows for lack of time, the
        chosen α at an edge of the grid.
    scale : str
        The feature scaling in front of the map (``"none"``, ``"standard"`` or
        ``"minmax"``): with one, the pipeline's first step is the fitted scaler.
    scale_reason : str
        Why that scaling: set by the caller, or what compare's scale rule found.
    """

    estimator: Pipeline
    params: dict[str, Any]
    score: float
    trials: list[Trial]
    task: str
    scoring: str
    cv: str | int
    scale_name: str
    heuristic: float
    time_s: float
    stopped: str
    notes: list[str] = field(default_factory=list)
    scale: str = "none"
    scale_reason: str = ""

    @property
    def table(self) -> Any:
        """Every configuration tried as a :class:`pandas.DataFrame` (needs pandas)."""
        pd = import_optional("pandas")
        return pd.DataFrame([asdict(t) for t in self.trials],
                            columns=[f.name for f in Trial.__dataclass_fields__.values()])

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        if self.scale != "none":
            params += f", scale={self.scale!r}"
        return (f"TuneResult({params}; {self.scoring} {self.score:.4f} by {self.cv}, "
                f"{len(self.trials)} configurations in {self.time_s:.1f} s)")
