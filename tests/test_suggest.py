"""Every estimator answers a misspelt option value with the value meant (kernelmaps._suggest).

Driven by the estimator registry (tests/_estimators.py): for every registered class and every
parameter with a ``StrOptions`` constraint, each option misspelt by one doubled letter must
fail ``fit`` with scikit-learn's ``InvalidParameterError`` whose message names the option.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from kernelmaps._suggest import SuggestOptionsMixin, did_you_mean
from kernelmaps.evaluate import (
    choose_scale,
    compare,
    make_scaler,
    relative_error,
    task_of,
)
from kernelmaps.landmarks import select_landmarks
from kernelmaps.models import KernelRidge, make_fixed_size_model
from kernelmaps.tuning import tune
from tests._estimators import ENTRIES, by_id, make_data, one_per_class


def _misspelt(option: str) -> str:
    """``option`` with its middle letter doubled (``"rbf"`` → ``"rbbf"``), a typo's shape."""
    middle = len(option) // 2
    return option[:middle] + option[middle] + option[middle:]


def _string_options(cls: type) -> dict[str, list[str]]:
    """Parameter name → its ``StrOptions`` values, sorted, for every such parameter."""
    found: dict[str, list[str]] = {}
    for name, constraints in getattr(cls, "_parameter_constraints", {}).items():
        options = {option for constraint in constraints if isinstance(constraint, StrOptions)
                   for option in constraint.options}
        if options:
            found[name] = sorted(options)
    return found


def _cases():
    for e in one_per_class(ENTRIES):
        for name, options in _string_options(e.cls).items():
            for option in options:
                yield pytest.param(e, name, option, id=f"{e.id}-{name}={option}")


def test_every_registered_estimator_has_string_options_to_check():
    # The parametrised test below must not pass vacuously: the models and maps with a
    # string option (solver, kernel, landmarks, structure, ...) are all in it.
    classes = {e.cls.__name__ for e in one_per_class(ENTRIES) if _string_options(e.cls)}
    assert {"KernelRidge", "KernelRidgeClassifier", "Nystroem", "RandomFourierFeatures",
            "KernelFisherDiscriminant", "KernelMeanDistance"} <= classes


@pytest.mark.parametrize(("e", "name", "option"), list(_cases()))
def test_a_misspelt_option_names_the_option_meant(e, name, option):
    typo = _misspelt(option)
    if typo in _string_options(e.cls)[name]:
        pytest.skip(f"{typo!r} is itself an option")
    X, y = make_data(e)
    model = e.make(**{name: typo})
    with pytest.raises(InvalidParameterError) as raised:
        model.fit(X) if y is None else model.fit(X, y)
    message = str(raised.value)
    assert "did you mean" in message and repr(option) in message.split("did you mean")[1], \
        message


@by_id(one_per_class(ENTRIES))
def test_every_estimator_suggests_through_the_mixin(e):
    assert issubclass(e.cls, SuggestOptionsMixin)


def test_the_hint_is_for_the_parameter_scikit_learn_rejects():
    # Two string parameters wrong at once: scikit-learn names the first one it checks, and
    # the hint must be that parameter's (not the other's).
    X, y = make_data(next(e for e in ENTRIES if e.cls is KernelRidge))
    with pytest.raises(InvalidParameterError) as raised:
        KernelRidge(solver="falcon", landmarks="uniforn").fit(X, y)
    message = str(raised.value)
    assert "'landmarks'" in message and "did you mean 'uniform'?" in message, message
    assert "falkon" not in message, message


def test_did_you_mean_lists_every_close_option():
    assert did_you_mean("nystrom", ["nystroem", "nystrom_x", "rff"]) == \
        " (did you mean 'nystroem' or 'nystrom_x'?)"


_ROWS = np.random.RandomState(0).uniform(size=(6, 2))
_XY = np.random.RandomState(0).uniform(size=(40, 3)), np.arange(40) % 2


@pytest.mark.parametrize(("call", "meant"), [
    (lambda: make_scaler("standrd", sparse=False), "standard"),
    (lambda: choose_scale("atuo", _ROWS), "auto"),
    (lambda: task_of(np.arange(6), "regresion"), "regression"),
    (lambda: relative_error(np.eye(2), np.eye(2), metric="spectrall"), "spectral"),
    (lambda: select_landmarks("kmaens", _ROWS, "rbf", 2), "kmeans"),
    (lambda: make_fixed_size_model("ridgee"), "ridge"),
    (lambda: tune(*_XY, method="nystrom"), "nystroem"),
    (lambda: compare(*_XY, methods=["rff", "nystrom"]), "nystroem"),
    (lambda: compare(*_XY, methods=["rff"], model="ridg"), "ridge"),
], ids=["make_scaler", "choose_scale", "task_of", "relative_error", "select_landmarks",
        "make_fixed_size_model", "tune-method", "compare-methods", "compare-model"])
def test_functions_taking_an_option_name_suggest_it(call, meant):
    with pytest.raises(ValueError, match=rf"did you mean '{meant}'"):
        call()
