"""Sphinx configuration of the kernelmaps documentation site.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference is generated at build time from ``__all__``: every public package of
kernelmaps (a module or package under ``kernelmaps`` whose name does not start with ``_`` and
that has ``__all__``) gets one page listing its names, and each object gets one page, under
the most specific package that exports it (``kernelmaps.maps.Nystroem``, not
``kernelmaps.Nystroem``). A new public package or name appears without editing this file.
References to any other public spelling of an object (``kernelmaps.Nystroem``,
``kernelmaps.maps.nystroem.Nystroem``) resolve to its page (:func:`_resolve_alias`).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import pkgutil
import re
import warnings
from pathlib import Path

import kernelmaps

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "kernelmaps"
author = "kernelmaps developers"
copyright = "2026, kernelmaps developers"
release = kernelmaps.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from the site itself: math renders offline
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_inventories", "_templates", "**/README.md",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
templates_path = ["_templates"]

# Every reference to one of our objects must resolve (nitpicky); see nitpick_ignore below for
# the few external names that no shipped inventory holds.
nitpicky = True

# ------------------------------------------------------------------ HTML
html_theme = "pydata_sphinx_theme"
html_title = f"kernelmaps {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path: list[str] = []
html_last_updated_fmt = None
html_show_sourcelink = False

# ------------------------------------------------------------------ autodoc / numpydoc
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc Parameters section carries the types
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False  # the class template lists the members itself
numpydoc_class_members_toctree = False
# Types in Parameters/Attributes are parsed token by token, so "ndarray of shape
# (n_features_in_,)" stays text (a bare trailing underscore would be an RST link otherwise);
# only the aliases below become links.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    "Kernel": "kernelmaps.kernels.Kernel",
    "DataFrame": "pandas.DataFrame",
}

# ------------------------------------------------------------------ MyST (the guides)
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
suppress_warnings = [
    # The guides link to source files of the repository (README.md, benchmarks/...), which
    # are not pages of the site; MyST reports each such link as unresolvable.
    "myst.xref_missing",
]

# ------------------------------------------------------------------ intersphinx (offline)
INVENTORIES = DOCS / "_inventories"
_DOCS_URLS = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "pandas": "https://pandas.pydata.org/docs/",
    "dask": "https://docs.dask.org/en/stable/",
}
# CI reaches package registries only: the inventories ship in docs/_inventories (see the
# README there), so cross-references to these projects are checked offline too. A build with
# KERNELMAPS_DOCS_ONLINE=1 takes every project's live inventory instead.
_ONLINE = os.environ.get("KERNELMAPS_DOCS_ONLINE") == "1"
intersphinx_mapping = {
    name: (url, None if _ONLINE else str(INVENTORIES / f"{name}.inv"))
    for name, url in _DOCS_URLS.items()
    if _ONLINE or (INVENTORIES / f"{name}.inv").exists()
}

# Names no shipped inventory holds, each with its reason. Our own objects are never here.
nitpick_ignore_regex = [
    (r"py:.*", r"numpy(\..*)?"),  # no NumPy inventory offline (docs/_inventories/README.md)
    (r"py:.*", r"matplotlib(\..*)?"),  # no Matplotlib documentation package in Debian 12
    (r"py:.*", r"sklearn\.frozen\.FrozenEstimator"),  # newer than scikit-learn 1.2's inventory
    (r"py:.*", r"skops(\..*)?"),  # no skops inventory shipped
    (r"std:term", r"numpy:.*"),  # numpydoc's "array_like" links into NumPy's glossary
]

# Docstring problems known when the site was set up, left to the docstring sweep of issue 21
# (item 2: numpydoc validation of every public docstring, which rewrites these modules). Each
# entry is (where, what); the build reports how many it met, so none is forgotten. Remove an
# entry when its docstring is fixed. Nothing outside src/kernelmaps docstrings is filtered.
KNOWN_DOCSTRING_PROBLEMS = [
    # RST errors: malformed tables, broken indentation
    (r"kernelmaps\.evaluate\.heuristics\.median_heuristic", r"Malformed table"),
    (r"docstring of kernelmaps\.kernels:", r"Malformed table"),
    (r"docstring of kernelmaps\.evaluate:", r"(Definition list|Block quote) ends without"),
    (r"docstring of kernelmaps\.evaluate:", r"Unexpected indentation"),
    (r"kernelmaps\.maps\.nystroem\.Nystroem", r"Block quote ends without a blank line"),
    (r"kernelmaps\.models\.fixed_size\.make_fixed_size_model", r"Block quote ends without"),
    # references into private modules or to private functions ("nothing public points into
    # a private module")
    (r"kernelmaps\.evaluate\.comparison\.compare", r"kernelmaps\.evaluate\._exact"),
    (r"kernelmaps\.models\.ridge\.KernelRidge", r"kernelmaps\.models\._solvers"),
    (r"docstring of kernelmaps\.distributed:", r"kernelmaps\.distributed\._falkon"),
    (r"docstring of kernelmaps\.kernels:", r"kernelmaps\.kernels\._base"),
    (r"kernelmaps\.distributed\._ridge\.FeatureRidge", r"normal_statistics"),
    (r"kernelmaps\.distributed\._fit\.fit", r"uniform_rows"),
    (r"kernelmaps\.distributed\._transform\.transform", r"kernelmaps\.distributed\.ship"),
]


# ------------------------------------------------------------------ the gallery
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "reference_url": {"kernelmaps": None},
    "doc_module": ("kernelmaps",),
    "backreferences_dir": "gen_modules/backreferences",
    "min_reported_time": 1,
    "capture_repr": ("_repr_html_", "__repr__"),
    "plot_gallery": "True",
}


# ------------------------------------------------------------------ the API pages
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


DOCUMENTED: dict[int, str] = {}  # id(object) -> the full name it is documented under
DOCUMENTED_MODULES: set[str] = set()  # the packages with a page


def write_api_pages(app) -> None:
    """Write docs/api/*.rst from __all__ (generated files, not kept in git)."""
    api = DOCS / "api"
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
                          f"   :template: {kind}.rst", "",
                          *(f"   {n}" for n in names), ""]
        if data:
            lines += ["Constants", "---------", ""]
            lines += [f".. autodata:: {n}\n   :no-value:\n" for n in data]
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


def _resolve_alias(app, env, node, contnode):
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


_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z]\w*)_(?![\w`])")
_BAR = re.compile(r"(?<!\\)\|")


def _escape_plain_text(line: str) -> str:
    """Escape in the text parts of a docstring line (outside ``literals``, `roles` and
    math) what RST would misread: a trailing underscore (``n_features_in_``, scikit-learn's
    attribute names, read as a link) and ``|`` (|x| read as a substitution)."""
    if line.lstrip().startswith(("|", "+-", "+=")):  # a table row
        return line
    parts = re.split(r"(``.*?``|`[^`]*`)", line)
    for i in range(0, len(parts), 2):
        parts[i] = _BAR.sub(r"\\|", _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i]))
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines) -> None:
    if not name.startswith("kernelmaps"):
        return
    # Left as they are: the body of a directive or literal block (a line ending in "::",
    # e.g. ".. math::" with LaTeX) and doctest blocks (">>>" up to the next blank line).
    block_indent, in_doctest = None, False
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and (not line.strip() or indent > block_indent):
            continue
        block_indent = indent if line.rstrip().endswith("::") else None
        in_doctest = bool(line.strip()) and (in_doctest or line.lstrip().startswith(">>>"))
        if block_indent is None and not in_doctest:
            lines[i] = _escape_plain_text(line)


class _KnownProblems(logging.Filter):
    """Drops the warnings listed in KNOWN_DOCSTRING_PROBLEMS, counting them."""

    def __init__(self, app) -> None:
        from sphinx.util.logging import WarningLogRecordTranslator

        super().__init__()
        self.met: set[int] = set()
        # Sphinx turns a record's location into "file:line" text in this filter, after the
        # one that counts warnings; the same translation here (it is idempotent).
        self.translate = WarningLogRecordTranslator(app)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        self.translate.filter(record)
        where, what = str(getattr(record, "location", "") or ""), record.getMessage()
        for i, (location, message) in enumerate(KNOWN_DOCSTRING_PROBLEMS):
            if re.search(location, where) and re.search(message, what):
                self.met.add(i)
                return False
        return True


def _report_known_problems(app, exception) -> None:
    known = app.config._known_problems_filter
    unmet = [entry for i, entry in enumerate(KNOWN_DOCSTRING_PROBLEMS) if i not in known.met]
    logging.getLogger("sphinx").info(
        "kernelmaps docs: %d of %d known docstring problems met (KNOWN_DOCSTRING_PROBLEMS in "
        "docs/conf.py)%s", len(known.met), len(KNOWN_DOCSTRING_PROBLEMS),
        "; not met (fixed? remove them): " + repr(unmet) if unmet else "")


def setup(app) -> None:
    write_api_pages(app)  # before autosummary reads the sources
    app.connect("missing-reference", _resolve_alias)
    # before numpydoc (priority 500), which turns the sections into RST
    app.connect("autodoc-process-docstring", _escape_docstring, priority=400)
    known = _KnownProblems(app)
    for handler in logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, known)  # before Sphinx counts the warning
    app.config._known_problems_filter = known
    app.connect("build-finished", _report_known_problems)
