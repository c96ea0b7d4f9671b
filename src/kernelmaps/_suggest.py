"""Did-you-mean suggestions for misspelt names (kernels, methods, columns, options).

One place for the rule, so every message suggests the same way: :func:`difflib.get_close_matches`
(Ratcliff/Obershelp similarity ≥ 0.6, the standard library's own threshold), compared without
case, so ``Gausian`` finds ``gaussian`` and ``Species`` finds ``species``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_matches", "did_you_mean"]


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
