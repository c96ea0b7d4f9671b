"""The layers of docs/design.md: no import of kernelmaps hides inside a function.

import-linter (``lint-imports``, contracts in pyproject.toml, run by .ci/run) checks the
direction of every import, those inside functions included. This test adds the design's
second rule: "never hide an import inside a function to dodge a cycle". An import of
``kernelmaps`` (absolute or relative) inside a function or method body is the usual way to
dodge one, so it is refused wherever it appears; only optional heavy third-party
dependencies are imported where they are used, so that ``import kernelmaps`` loads NumPy,
SciPy and scikit-learn only (tests/test_import_cost.py).

One kind of function-level import is not a dodge: a package's ``__init__`` loading one of its
own submodules on first use (the PEP 562 ``__getattr__`` of ``kernelmaps`` serving
``compare``/``tune``; ``kernelmaps.distributed``'s Dask handlers, whose modules import Dask).
That import points into the package itself, cannot close a cycle with another layer, and
import-linter still checks it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kernelmaps"


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of the module at ``path`` (relative to src/) and whether it is a package."""
    parts = list(path.with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _function_level_imports(tree: ast.AST, path: Path) -> list[str]:
    """Return ``"file:line: import ..."`` for each kernelmaps import inside a function
    that is not a package lazily loading its own submodule."""
    found = []
    name, is_package = _module_name(path)
    package = name if is_package else name.rpartition(".")[0]

    def own_submodule(imported: str) -> bool:
        return is_package and (imported == package or imported.startswith(package + "."))

    def absolute(node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            if in_function and isinstance(child, ast.Import):
                names = [
                    a.name
                    for a in child.names
                    if a.name.split(".")[0] == "kernelmaps" and not own_submodule(a.name)
                ]
                if names:
                    found.append(f"{path}:{child.lineno}: import {', '.join(names)}")
            elif in_function and isinstance(child, ast.ImportFrom):
                module = absolute(child)
                if module.split(".")[0] == "kernelmaps" and not own_submodule(module):
                    dots = "." * child.level
                    found.append(
                        f"{path}:{child.lineno}: from {dots}{child.module or ''} import ..."
                    )
            visit(child, inside)

    visit(tree, False)
    return found


def function_level_kernelmaps_imports(root: Path = SRC) -> list[str]:
    """Every kernelmaps import inside a function body under ``root``, as ``file:line: ...``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(_function_level_imports(tree, path.relative_to(root.parent)))
    return found


def test_no_kernelmaps_import_inside_a_function():
    hidden = function_level_kernelmaps_imports()
    assert not hidden, (
        "imports of kernelmaps inside functions (move them to the top of the module; if that "
        "makes a cycle, the code is in the wrong layer, see docs/design.md):\n"
        + "\n".join(hidden)
    )


@pytest.mark.parametrize(
    ("path", "source", "n_found"),
    [
        ("kernelmaps/evaluate/m.py", "def f():\n    from kernelmaps.tuning import tune\n", 1),
        ("kernelmaps/evaluate/m.py", "def f():\n    from . import _exact\n", 1),
        ("kernelmaps/evaluate/m.py", "class A:\n    def f(s):\n        import kernelmaps.io\n", 1),
        ("kernelmaps/evaluate/m.py", "def f():\n    def g():\n        from ..maps import X\n", 1),
        ("kernelmaps/evaluate/m.py", "def f():\n    import pandas\n    from rich import box\n", 0),
        ("kernelmaps/evaluate/m.py", "from kernelmaps.kernels import K\nimport numpy as np\n", 0),
        ("kernelmaps/evaluate/m.py", "if True:\n    from kernelmaps import maps\n", 0),
        # a package loading its own submodule on first use: allowed; anything else is not
        ("kernelmaps/__init__.py", "def __getattr__(n):\n    from kernelmaps import tuning\n", 0),
        ("kernelmaps/distributed/__init__.py", "def f():\n    from ._falkon import fit\n", 0),
        ("kernelmaps/distributed/__init__.py", "def f():\n    from ..models import M\n", 1),
        ("kernelmaps/distributed/_fit.py", "def f():\n    from ._falkon import fit\n", 1),
    ],
)
def test_the_scan_sees_function_level_imports_only(path, source, n_found):
    assert len(_function_level_imports(ast.parse(source), Path(path))) == n_found
