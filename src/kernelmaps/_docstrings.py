"""Docstrings of overriding methods, inherited from the method they override."""

from __future__ import annotations

import inspect


def inherit_docstrings(cls: type) -> None:
    """Give each public method ``cls`` overrides without a docstring its base's docstring.

    An override that implements the base method's contract (a kernel's ``evaluate_into``)
    documents nothing new; with the base's docstring on it, ``help()``, the API pages and
    numpydoc's validation read the contract instead of an empty docstring.
    """
    for name, member in vars(cls).items():
        if name.startswith("_") or not inspect.isfunction(member) or member.__doc__:
            continue
        for base in cls.__mro__[1:]:
            doc = getattr(vars(base).get(name), "__doc__", None)
            if doc:
                member.__doc__ = doc
                break
