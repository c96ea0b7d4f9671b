"""Every public class and function of the maps, kernels and landmarks has a docstring
``Examples`` section with doctest examples; they run with the suite (``--doctest-modules``
over ``src`` in pyproject.toml)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import sys

import pytest

import kernelmaps.cli
import kernelmaps.kernels
import kernelmaps.landmarks
import kernelmaps.maps

MODULES = (kernelmaps.maps, kernelmaps.kernels, kernelmaps.landmarks)


def public_api():
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, Warning):
                continue  # a warning category: nothing to run
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield pytest.param(obj, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("obj", list(public_api()))
def test_public_object_has_runnable_examples(obj):
    doc = inspect.getdoc(obj) or ""
    assert "\nExamples\n--------\n" in doc, f"{obj.__qualname__} has no Examples section"
    examples = doctest.DocTestParser().get_examples(doc.split("\nExamples\n--------\n")[1])
    assert examples, f"the Examples section of {obj.__qualname__} has no >>> example"
    # At least one example shows its expected output: examples are checked, not just run.
    assert any(example.want for example in examples), obj.__qualname__


def test_python_m_kernelmaps_does_not_run_on_import(capsys, monkeypatch):
    # pytest's doctest collection never imports __main__.py; other tools may. Imported (not
    # run), it must do nothing: with a command line that would print the version and exit,
    # the import neither exits nor prints.
    monkeypatch.setattr(sys, "argv", ["kernelmaps", "--version"])
    monkeypatch.delitem(sys.modules, "kernelmaps.__main__", raising=False)
    module = importlib.import_module("kernelmaps.__main__")
    assert capsys.readouterr() == ("", "")
    assert module.main is kernelmaps.cli.main  # `python -m kernelmaps` is the command


def test_no_docstring_holds_a_control_character():
    # A formula in a docstring that is not a raw string loses its backslash: "\top" becomes
    # a tab and "op", "\frac" a form feed (two such formulas were found this way).
    import ast
    from pathlib import Path

    source = Path(kernelmaps.maps.__file__).resolve().parents[1]
    found = []
    for path in sorted(source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc and any(c in doc for c in "\t\b\f\a\v\r"):
                    found.append(f"{path.relative_to(source)}:{getattr(node, 'lineno', 1)}")
    assert not found, found
