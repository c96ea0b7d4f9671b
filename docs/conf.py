"""Sphinx configuration of the kernelmaps documentation site.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Two local extensions in ``docs/_ext``: ``api_pages`` generates the API reference from
``__all__`` at build time (a new public package or name appears without editing anything),
``docstring_fixes`` escapes what RST would misread in docstrings.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import kernelmaps

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "kernelmaps"
author = "kernelmaps developers"
copyright = "2026, kernelmaps developers"
release = kernelmaps.__version__
version = release

sys.path.insert(0, str(DOCS / "_ext"))
extensions = [
    "api_pages",  # docs/_ext: the API reference from __all__
    "docstring_fixes",  # docs/_ext: docstrings read as meant
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
# No autodoc_default_options: Sphinx 9 lets a non-string default ({"members": False})
# override the class template's own :members:, which left the class pages without methods.
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
    # numpydoc links "array-like" to NumPy's glossary, whose inventory is not shipped (the
    # unresolved term printed "numpy:array_like" on the pages); scikit-learn's has the term.
    "array-like": ":term:`sklearn:array-like`",
    "array_like": ":term:`sklearn:array-like`",
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
