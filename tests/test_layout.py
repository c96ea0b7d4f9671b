"""tests/ mirrors src/kernelmaps/ (the layout rule of tests/README.md): every test folder is a
package of the source tree, every top-level test module tests a top-level module or is one of
the cross-cutting suites that README names, no test module imports another, and the node ids
that conftest.py marks name tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SOURCE = TESTS.parent / "src" / "kernelmaps"


def cross_cutting_suites() -> set[str]:
    text = (TESTS / "README.md").read_text(encoding="utf-8")
    section = text.split("**Cross-cutting suites stay at the top level.**")[1].split("\n\n")[0]
    return set(re.findall(r"`(test_\w+\.py)`", section))


def test_every_test_folder_is_a_source_package_with_an_init():
    folders = [p for p in TESTS.rglob("*") if p.is_dir() and p.name != "__pycache__"
               and not p.name.startswith(".")]
    assert folders
    for folder in folders:
        relative = folder.relative_to(TESTS)
        assert (SOURCE / relative / "__init__.py").is_file(), (
            f"tests/{relative.as_posix()} mirrors no package of src/kernelmaps")
        assert (folder / "__init__.py").is_file(), f"tests/{relative.as_posix()} has no __init__.py"


def test_top_level_test_modules_test_a_top_level_module_or_are_cross_cutting():
    suites = cross_cutting_suites()
    assert {"test_contract.py", "test_array_api.py", "test_readme.py"} <= suites
    assert all((TESTS / name).is_file() for name in suites), suites
    for path in TESTS.glob("test_*.py"):
        module = path.stem.removeprefix("test_")
        mirrors = any((SOURCE / f"{prefix}{module}.py").is_file() for prefix in ("", "_"))
        assert mirrors or path.name in suites or path.name == "test_layout.py", (
            f"tests/{path.name} tests neither a top-level module of src/kernelmaps nor is it a "
            "cross-cutting suite of tests/README.md: move it to the folder of the module it tests")


def test_no_test_module_imports_another():
    for path in TESTS.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*from tests(\.\w+)*\.test_\w+ import", text, re.M), path


def test_the_node_ids_conftest_marks_name_existing_tests():
    # conftest.py marks tests by node-id prefix: a moved file or a renamed test would silently
    # lose its marker.
    tree = ast.parse((TESTS.parent / "conftest.py").read_text(encoding="utf-8"))
    listed = next(ast.literal_eval(node.value) for node in tree.body
                  if isinstance(node, ast.Assign)
                  and [t.id for t in node.targets if isinstance(t, ast.Name)]
                  == ["DEFAULT_BLAS_TESTS"])
    assert listed
    for node_id in listed:
        path, name = node_id.split("::")
        file = TESTS.parent / path
        assert file.is_file(), node_id
        assert re.search(rf"^def {re.escape(name)}\(", file.read_text(encoding="utf-8"), re.M), \
            node_id
