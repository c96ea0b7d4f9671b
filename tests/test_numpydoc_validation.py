"""numpydoc's validation of every public docstring, with the checks scikit-learn's suite runs.

Every public class and function (the names in ``__all__`` of :mod:`kernelmaps` and of each
public subpackage, the packages the API reference documents) and every public method or
property of those classes (the ones kernelmaps defines, inherited ones included; scikit-learn's
own base-class methods and its generated ``set_*_request`` setters are scikit-learn's) passes
:func:`numpydoc.validate.validate`: summary, Parameters and Returns complete, typed and
described, sections in order. As scikit-learn's ``test_docstrings`` does, ``GL01``, ``GL02``
and ``RT02`` are not checked (layout choices), and ``EX01`` (Examples) only at the top level;
``ES01`` (extended summary) and ``SA01`` (See Also) are not required. A dataclass or named
tuple (a result returned by a function, whose Examples show it) documents its fields under
Attributes rather than Parameters and needs no Examples of its own; every attribute listed
there must be described.

No public docstring may point into a private module (``kernelmaps._x`` or
``kernelmaps.x._y``): a reader cannot import from there (issue 21, item 2).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import warnings

import pytest

import kernelmaps

numpydoc_validate = pytest.importorskip("numpydoc.validate")
numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

#: Not checked anywhere (scikit-learn's choices, see the module docstring).
IGNORED = {"GL01", "GL02", "RT02", "ES01", "SA01"}
TOP_LEVEL_ONLY = {"EX01"}


def public_packages() -> list[str]:
    """kernelmaps and its public subpackages and modules that declare ``__all__`` (the
    packages of the API reference, ``docs/_ext/api_pages.py``)."""
    names = ["kernelmaps"]
    for info in pkgutil.iter_modules(kernelmaps.__path__, "kernelmaps."):
        if info.name.rsplit(".", 1)[1].startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            names.append(info.name)
    return names


def _public_objects() -> dict[str, object]:
    """{defining module.qualified name: object} for every public class and function."""
    objects = {}
    for package in public_packages():
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                objects[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return dict(sorted(objects.items()))


def _fields(cls) -> list[str]:
    if dataclasses.is_dataclass(cls):
        return [field.name for field in dataclasses.fields(cls)]
    return list(getattr(cls, "_fields", ()))


def _public_members(cls) -> list[str]:
    """The public methods and properties of a class that kernelmaps defines."""
    members = []
    for name in dir(cls):
        if name.startswith("_") or (name.startswith("set_") and name.endswith("_request")):
            continue  # private, or scikit-learn's generated metadata-routing setters
        if name in _fields(cls):
            continue  # a result's field: documented under Attributes
        owner = next((klass for klass in cls.__mro__ if name in vars(klass)), None)
        if owner is None or not owner.__module__.startswith("kernelmaps"):
            continue  # scikit-learn's (or Python's) own, documented there
        member = vars(owner)[name]
        if inspect.isfunction(member) or isinstance(member, (property, classmethod,
                                                             staticmethod)):
            members.append(name)
    return members


def _targets():
    for qualified, obj in _public_objects().items():
        yield pytest.param(qualified, None, id=qualified)
        if inspect.isclass(obj):
            for name in _public_members(obj):
                yield pytest.param(f"{qualified}.{name}", name, id=f"{qualified}.{name}")


def _resolve(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _validation_errors(qualified: str, member: str | None) -> list[str]:
    """numpydoc's findings for one object or member, less the ones not checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = numpydoc_validate.validate(qualified)
    owner = _resolve(qualified) if member is None else None
    fields = set(_fields(owner)) if inspect.isclass(owner) else set()
    errors = []
    for code, message in result["errors"]:
        if code in IGNORED or (member is not None and code in TOP_LEVEL_ONLY):
            continue
        if code in ("PR01", "EX01") and fields:
            continue  # a result's fields: checked under Attributes below
        errors.append(f"{code}: {message}")
    return errors


def _attribute_errors(qualified: str) -> list[str]:
    """Attributes listed without a description, and a result's fields not listed."""
    obj = _resolve(qualified)
    if not inspect.isclass(obj):
        return []
    doc = numpydoc_docscrape.ClassDoc(obj, config={"show_class_members": False})
    listed = {attribute.name for attribute in doc["Attributes"]}
    return ([f"attribute without a description: {attribute.name}"
             for attribute in doc["Attributes"] if not "".join(attribute.desc)]
            + [f"field not listed under Attributes: {name}" for name in _fields(obj)
               if name not in listed])


#: ``kernelmaps._x`` or ``kernelmaps.x._y`` (a dotted path into a private module), or a
#: source file of one (``maps/_quadrature.py``).
PRIVATE = re.compile(r"kernelmaps(?:\.\w+)*\._[a-z]\w*|\b\w+/_[a-z]\w*\.py\b")


def _private_references(qualified: str) -> list[str]:
    obj = _resolve(qualified)
    texts = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):
        texts += [inspect.getdoc(getattr(obj, name)) or "" for name in _public_members(obj)]
    return sorted({match for text in texts for match in PRIVATE.findall(text)})


def _check(what: str, errors: list[str]) -> None:
    assert not errors, f"{what}:\n" + "\n".join(errors)


def test_the_sweep_covers_every_public_package():
    packages = public_packages()
    for expected in ("kernelmaps.maps", "kernelmaps.kernels", "kernelmaps.models",
                     "kernelmaps.evaluate", "kernelmaps.tuning", "kernelmaps.landmarks",
                     "kernelmaps.distributed", "kernelmaps.io", "kernelmaps.cli"):
        assert expected in packages
    assert len(_public_objects()) > 100


@pytest.mark.parametrize(("qualified", "member"), list(_targets()))
def test_docstring_passes_numpydoc_validation(qualified, member):
    _check(qualified, _validation_errors(qualified, member))


@pytest.mark.parametrize("qualified", [name for name, obj in _public_objects().items()
                                       if inspect.isclass(obj)])
def test_every_attribute_is_described(qualified):
    _check(qualified, _attribute_errors(qualified))


@pytest.mark.parametrize("qualified", list(_public_objects()))
def test_no_public_docstring_points_into_a_private_module(qualified):
    _check(qualified, _private_references(qualified))


def _public_modules() -> list[str]:
    """The public packages and the public modules defining their objects."""
    defining = {obj.__module__ for obj in _public_objects().values()}
    return sorted(set(public_packages()) | {name for name in defining if not any(
        part.startswith("_") for part in name.split("."))})


@pytest.mark.parametrize("module", _public_modules())
def test_no_public_module_docstring_points_into_a_private_module(module):
    # Module docstrings are the API reference's package and module pages.
    doc = importlib.import_module(module).__doc__ or ""
    _check(module, sorted(set(PRIVATE.findall(doc))))


def _defaults_not_stated(qualified: str, member: str | None) -> list[str]:
    """Parameters with a default in the signature whose type line does not state it."""
    if member is None:
        obj = _resolve(qualified)
    else:
        owner = _resolve(qualified.rsplit(".", 1)[0])
        obj = inspect.getattr_static(owner, member)
        obj = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
    func = obj.__init__ if inspect.isclass(obj) else obj
    if isinstance(obj, property) or not callable(func):
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        documented = {name.strip().lstrip("*"): entry.type
                      for entry in numpydoc_docscrape.get_doc_object(obj)["Parameters"]
                      for name in entry.name.split(",")}
    missing = []
    for name, parameter in inspect.signature(func).parameters.items():
        kind = documented.get(name)
        if parameter.default is inspect.Parameter.empty or kind is None:
            continue
        if kind == "None":
            continue  # scikit-learn's "y : None / Ignored." for an unused parameter
        if "default" not in kind and "optional" not in kind:
            missing.append(f"{name} : {kind} (default {parameter.default!r} not stated)")
    return missing


@pytest.mark.parametrize(("qualified", "member"), list(_targets()))
def test_every_default_is_stated(qualified, member):
    _check(qualified, _defaults_not_stated(qualified, member))
