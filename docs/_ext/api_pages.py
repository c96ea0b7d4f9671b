"""Sphinx extension of the kernelmaps docs: the API reference, generated from ``__all__``.

Every public package of kernelmaps (a module or package under ``kernelmaps`` whose name does
not start with ``_`` and that has ``__all__``) gets one page, ``api/<package>.rst``, listing
its names; each class and function gets one autosummary page, under the most specific
package that exports it (``kernelmaps.maps.Nystroem``, not ``kernelmaps.Nystroem``). A new
public package or name appears without editing anything. References to any other public
spelling of an object (``kernelmaps.Nystroem``, ``kernelmaps.maps.nystroem.Nystroem``, a bare
name relative to the current module) resolve to its page (:func:`resolve_alias`). The pages
are generated files (``docs/api/``, ignored by git).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import warnings
from pathlib import Path

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

import kernelmaps


def public_modules() -> list[str]:
    """kernelmaps and its public subpackages and modules that declare ``__all__``."""
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


def _home(obj: object, exporters: list[str]) -> str:
    """The package an object is documented under: the one its defining module belongs to,
    else the most specific (longest) exporter."""
    module = getattr(obj, "__module__", "") or ""
    owners = [name for name in exporters if module == name or module.startswith(name + ".")]
    return max(owners or exporters, key=len)


def api_layout() -> dict[str, list[tuple[str, str, bool]]]:
    """{package: [(name, kind, documented here)]} for every public name."""
    modules = {name: importlib.import_module(name) for name in public_modules()}
    exporters: dict[int, list[str]] = {}
    objects: dict[int, object] = {}
    for module_name, module in modules.items():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                exporters.setdefault(id(obj), []).append(module_name)
                objects[id(obj)] = obj
    layout: dict[str, list[tuple[str, str, bool]]] = {}
    for module_name, module in modules.items():
        entries = []
        for name in sorted(module.__all__, key=str.lower):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                kind = "class" if inspect.isclass(obj) else "function"
                entries.append((name, kind, _home(obj, exporters[id(obj)]) == module_name))
            elif not inspect.ismodule(obj):
                entries.append((name, "data", True))
        layout[module_name] = entries
    return layout


def data_comment(package: str, name: str) -> list[str] | None:
    """The ``#:`` comment of a constant a package re-exports, from the module defining it.

    autodoc looks for the comment in the package's own ``__init__``; a re-exported array
    would be documented by ``numpy.ndarray``'s docstring instead (with its references).
    """
    obj = getattr(importlib.import_module(package), name)
    for module_name, module in sorted(sys.modules.items()):
        if not (module_name == package or module_name.startswith(package + ".")):
            continue
        if getattr(module, name, None) is not obj:
            continue
        try:
            comments = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in comments:
            return list(comments[("", name)])
    return None


DOCUMENTED: dict[int, str] = {}  # id(object) -> the full name it is documented under
DOCUMENTED_MODULES: set[str] = set()  # the packages with a page


def write_api_pages(app) -> None:
    """Write docs/api/*.rst from __all__ (generated files, not kept in git)."""
    api = Path(app.srcdir) / "api"
    api.mkdir(exist_ok=True)
    layout = api_layout()
    index = ["API reference", "=============", "",
             "Every public class and function, by package. Each object has one page, under "
             "the package that defines it; the packages that re-export it link there.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    DOCUMENTED_MODULES.update(layout)
    for module_name, entries in layout.items():
        index.append(f"   {module_name}")
        module = importlib.import_module(module_name)
        own = [(n, k) for n, k, here in entries if here and k != "data"]
        data = [n for n, k, here in entries if k == "data"]
        elsewhere = [(n, k) for n, k, here in entries if not here]
        for name, _ in own:
            DOCUMENTED[id(getattr(module, name))] = f"{module_name}.{name}"
        lines = [module_name, "=" * len(module_name), "",
                 f".. automodule:: {module_name}", "   :no-members:", "",
                 f".. currentmodule:: {module_name}", ""]
        for title, kind in (("Classes", "class"), ("Functions", "function")):
            names = [n for n, k in own if k == kind]
            if names:
                lines += [title, "-" * len(title), "", ".. autosummary::",
                          "   :toctree: generated", "   :nosignatures:",
                          f"   :template: autosummary/{kind}.rst", "",
                          *(f"   {n}" for n in names), ""]
        if data:
            lines += ["Constants", "---------", ""]
            for name in data:
                doc = data_comment(module_name, name)
                if doc is None:
                    lines += [f".. autodata:: {name}", "   :no-value:", ""]
                else:
                    lines += [f".. py:data:: {name}", "", *(f"   {line}" for line in doc), ""]
        if elsewhere:
            lines += ["Also exported here", "------------------", "",
                      "Documented under the package that defines them:", ""]
            for name, kind in elsewhere:
                role = "class" if kind == "class" else "func"
                target = f"{module_name}.{name}"
                lines.append(f"* :{role}:`{name} <{target}>`")
            lines.append("")
        (api / f"{module_name}.rst").write_text("\n".join(lines))
    (api / "index.rst").write_text("\n".join(index) + "\n")


def _import_path(path: str) -> object | None:
    """The object a dotted path names, or None."""
    parts = path.split(".")
    obj = None
    for cut in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def resolve_alias(app, env, node, contnode):
    """Resolve a reference to another public spelling of a documented object:
    ``kernelmaps.Nystroem`` or ``kernelmaps.maps.nystroem.Nystroem`` for
    ``kernelmaps.maps.Nystroem``, a bare name relative to the current module, and a public
    submodule (``kernelmaps.kernels.distance``) to the page of the package documenting its
    names."""
    if node.get("refdomain") != "py":
        return None
    target_name = node["reftarget"]
    if not target_name.startswith("kernelmaps") and node.get("py:module"):
        target_name = f"{node['py:module']}.{target_name}"
    if not target_name.startswith("kernelmaps"):
        return None
    obj = _import_path(target_name)
    domain = env.get_domain("py")
    if node["reftype"] == "mod" and inspect.ismodule(obj):
        if any(part.startswith("_") for part in target_name.split(".")):
            return None  # private modules have no page
        package = target_name
        while package not in DOCUMENTED_MODULES and "." in package:
            package = package.rsplit(".", 1)[0]
        return domain.resolve_xref(env, node["refdoc"], app.builder, "mod", package, node,
                                   contnode)
    target = DOCUMENTED.get(id(obj))
    if target is None or target == node["reftarget"]:
        return None
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], target,
                               node, contnode)


def setup(app) -> dict:
    write_api_pages(app)  # now: autosummary reads the pages when the builder starts
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
