"""Did-you-mean suggestions for misspelt names (kernels, methods, columns, options).

One place for the rule, so every message suggests the same way: :func:`difflib.get_close_matches`
(Ratcliff/Obershelp similarity ≥ 0.6, the standard library's own threshold), compared without
case, so ``Gausian`` finds ``gaussian`` and ``Species`` finds ``species``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["SuggestOptionsMixin", "close_matches", "did_you_mean"]


def close_matches(word: object, choices: Iterable[object], n: int = 3) -> list[str]:
    """The choices closest to ``word`` (best first, at most ``n``), compared without case.

    Examples
    --------
    >>> close_matches("specie", ["sepal_length", "species", "petal_width"])
    ['species']
    >>> close_matches("Gausian", ["gaussian", "laplacian", "rbf"])
    ['gaussian']
    """
    by_key: dict[str, str] = {}
    for choice in choices:
        by_key.setdefault(str(choice).lower(), str(choice))
    keys = difflib.get_close_matches(str(word).lower(), list(by_key), n=n, cutoff=0.6)
    return [by_key[key] for key in keys]


def did_you_mean(word: object, choices: Iterable[object], *, quote: bool = True) -> str:
    """``" (did you mean 'x'?)"`` for the close choices of ``word``, or ``""`` when none is.

    ``quote=False`` leaves the names bare (option flags such as ``--n-components``).

    Examples
    --------
    >>> did_you_mean("nystrom", ["nystroem", "rff", "orthogonal"])
    " (did you mean 'nystroem'?)"
    >>> did_you_mean("--n-componets", ["--n-components", "--seeds"], quote=False)
    ' (did you mean --n-components?)'
    >>> did_you_mean("magic", ["rbf", "poly"])
    ''
    """
    matches = close_matches(word, choices)
    if not matches:
        return ""
    names = [repr(m) if quote else m for m in matches]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f" (did you mean {listed}?)"


class SuggestOptionsMixin:
    """Estimators: a misspelt string parameter gets a did-you-mean in scikit-learn's error.

    scikit-learn's parameter validation (``_validate_params``) reports the constraints but
    not which option was meant; this adds the close options of the parameter's
    ``StrOptions`` (``gamma="scael"`` → ``(did you mean 'scale'?)``) and raises the same
    :class:`~sklearn.utils._param_validation.InvalidParameterError`. Put it before
    ``BaseEstimator`` in the bases.
    """

    def _validate_params(self) -> None:
        # scikit-learn loaded here, not at import: the command line's argument parser uses
        # did_you_mean and must answer --help without it (and estimators have it loaded).
        from sklearn.utils._param_validation import InvalidParameterError

        try:
            super()._validate_params()  # type: ignore[misc]
        except InvalidParameterError as error:
            # The hint is for the parameter scikit-learn names (it stops at the first wrong
            # one, and another string parameter may be wrong too).
            match = _INVALID.fullmatch(str(error).strip())
            hint = _option_hint(self, match["param"].strip("'") if match else None)
            if not hint:
                raise
            raise InvalidParameterError(_suggestion_first(str(error), hint)) from error


#: scikit-learn's InvalidParameterError text.
_INVALID = re.compile(r"(?s)The (?P<param>'\w+') parameter of (?P<owner>\w+) must be "
                      r"(?P<constraints>.*)\. Got (?P<value>.*) instead\.?")


def _suggestion_first(message: str, hint: str) -> str:
    """scikit-learn's message with the did-you-mean first and the options sorted
    (``{'sigmoid', 'chi_squared', ...}`` is a set: 23 kernel names in hash order, the one
    meant at the end); the message with the hint appended when it has another form."""
    match = _INVALID.fullmatch(message.strip())
    if not match:
        return f"{message.rstrip('.')}{hint}."

    def sort(options: re.Match[str]) -> str:
        return str(sorted(re.findall(r"'([^']*)'", options[1])))

    constraints = re.sub(r"\{([^{}]*)\}", sort, match["constraints"])
    return (f"The {match['param']} parameter of {match['owner']} got {match['value']}{hint}; "
            f"it must be {constraints}.")


def _option_hint(estimator: Any, parameter: str | None = None) -> str:
    """The did-you-mean of ``parameter`` (None: the first string parameter) outside its
    ``StrOptions``, or ``""``."""
    from sklearn.utils._param_validation import StrOptions  # see _validate_params

    for name, constraints in getattr(estimator, "_parameter_constraints", {}).items():
        if parameter is not None and name != parameter:
            continue
        value = getattr(estimator, name, None)
        if not isinstance(value, str):
            continue
        options = {option for constraint in constraints if isinstance(constraint, StrOptions)
                   for option in constraint.options}
        if options and value not in options:
            hint = did_you_mean(value, sorted(options))
            if hint:
                return hint
    return ""
