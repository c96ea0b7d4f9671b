"""The documentation site's configuration (docs/conf.py and its extensions in docs/_ext),
without building the site (CI builds it with warnings as errors after the tests): the API
reference covers every public name once, the shipped inventories are there, the docstring
escaping leaves code alone."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

import kernelmaps

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def conf():
    return load(ROOT / "docs" / "conf.py", "kernelmaps_docs_conf")


@pytest.fixture(scope="module")
def api_pages():
    return load(ROOT / "docs" / "_ext" / "api_pages.py", "kernelmaps_docs_api_pages")


@pytest.fixture(scope="module")
def docstring_fixes():
    return load(ROOT / "docs" / "_ext" / "docstring_fixes.py", "kernelmaps_docs_fixes")


def test_every_public_class_and_function_has_one_page(api_pages):
    layout = api_pages.api_layout()
    assert {"kernelmaps", "kernelmaps.kernels", "kernelmaps.maps", "kernelmaps.models",
            "kernelmaps.landmarks", "kernelmaps.evaluate", "kernelmaps.distributed",
            "kernelmaps.io"} <= set(layout)
    homes: dict[int, list[str]] = {}
    for package, entries in layout.items():
        module = importlib.import_module(package)
        listed = {name for name, _, _ in entries}
        public = {name for name in module.__all__
                  if not inspect.ismodule(getattr(module, name))}
        assert listed == public, package
        for name, kind, here in entries:
            if here and kind != "data":
                homes.setdefault(id(getattr(module, name)), []).append(f"{package}.{name}")
    # each object documented exactly once ...
    assert all(len(places) == 1 for places in homes.values()), homes
    # ... under the package that defines it
    assert homes[id(kernelmaps.Nystroem)] == ["kernelmaps.maps.Nystroem"]
    assert homes[id(kernelmaps.compare)] == ["kernelmaps.evaluate.compare"]
    assert homes[id(kernelmaps.set_config)] == ["kernelmaps.set_config"]


def test_inventories_are_shipped_for_offline_builds(conf):
    for name in ("python", "scipy", "sklearn", "pandas", "dask"):
        assert name in conf.intersphinx_mapping
        url, location = conf.intersphinx_mapping[name]
        assert url.startswith("https://") and Path(location).stat().st_size > 10_000


@pytest.mark.parametrize(("line", "escaped"), [
    ("n_features_in_ : int", r"n_features_in\_ : int"),
    ("ndarray of shape (n_features_in_,)", r"ndarray of shape (n_features_in\_,)"),
    ("the error |K_ij - K_ji| is small", r"the error \|K_ij - K_ji\| is small"),
    ("so ``n_features_out_`` may be smaller", "so ``n_features_out_`` may be smaller"),
    (":attr:`components_` holds them", ":attr:`components_` holds them"),
    ("| a | b |", "| a | b |"),  # a table row
])
def test_docstring_text_is_escaped_outside_code(docstring_fixes, line, escaped):
    assert docstring_fixes.escape_plain_text(line) == escaped


def test_math_literal_and_doctest_blocks_are_left_alone(docstring_fixes):
    lines = ["Text with n_features_in_.", "", ".. math::", "", "    K_{mm}^{-1/2} |x|", "",
             "Example::", "", "    fitted.n_features_out_", "",
             ">>> model.n_features_in_", "64", "", "After: coef_."]
    docstring_fixes.escape_docstring(None, "class", "kernelmaps.X", None, None, lines)
    assert lines[0] == r"Text with n_features_in\_."
    assert lines[4] == "    K_{mm}^{-1/2} |x|"
    assert lines[8] == "    fitted.n_features_out_"
    assert lines[10] == ">>> model.n_features_in_"
    assert lines[13] == r"After: coef\_."


def test_math_role_spanning_lines_is_left_alone(docstring_fixes):
    # numpydoc hands over a paragraph line by line; a :math: role wrapped onto the next line
    # must not have its subscripts escaped (K\_{nM} would print an underscore).
    lines = [r"solves :math:`(K_{nM}^\top K_{nM} + \alpha K_{MM})\beta =",
             r"K_{nM}^\top y` by CG, with coef_ after.", "", "Then intercept_."]
    docstring_fixes.escape_docstring(None, "class", "kernelmaps.X", None, None, lines)
    assert lines[0] == r"solves :math:`(K_{nM}^\top K_{nM} + \alpha K_{MM})\beta ="
    assert lines[1] == r"K_{nM}^\top y` by CG, with coef\_ after."
    assert lines[3] == r"Then intercept\_."
