"""No package reaches into another's privates: what one package needs from another is public.

The rule, over every module of ``src/kernelmaps`` (its AST):

* **Packages.** A subpackage of ``kernelmaps`` (``cli``, ``tuning``, ``evaluate``,
  ``distributed``, ``models``, ``maps``, ``landmarks``, ``kernels``, ``_ridge``) is one
  package; so is each top-level module (``io``, ``_engine``, ``_cost``, ``_linalg``, …) and
  the root ``kernelmaps/__init__.py``. The top-level modules and ``_ridge`` are the
  library's shared cores: their *module* names start with ``_`` (they are not the users'
  API), yet any package may import their public names — they sit below everyone
  (import-linter's layers).
* **Imports.** Across packages, no import of a private module (``kernelmaps.models._nystrom``:
  a component after the package that starts with ``_``) and no import of a private name
  (``from kernelmaps._engine import _helper``). Importing a shared core module itself
  (``from kernelmaps import _cost``) is importing a public-to-the-library module.
* **Attributes.** ``expr._name`` (``_name`` not a dunder; ``getattr``/``hasattr``/``setattr``/
  ``delattr`` with a string constant ``"_name"`` likewise), where ``expr`` is not ``self``,
  ``cls`` or ``super()``, is allowed only when the accessing package defines ``_name`` (a
  ``def``/``class``, a module- or class-level assignment, or a ``self._name =`` /
  ``cls._name =`` store). A name only another package defines, or none does (a third-party
  private), is a reach-in — unless it is in :data:`THIRD_PARTY`, each with the reason it
  must stay.

Writes count as accesses (``model._n_targets = …`` from another package is a reach-in) but
not as definitions: only a store on ``self``/``cls`` defines. Without types, the rule cannot
tell two packages' same private name apart (``maps`` stores ``self._gamma``, ``kernels``
defines ``Kernel._gamma``): such a coincidence passes; none hides a reach-in today (each of
the 45 the issue counted was a name its reader's package never defines).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kernelmaps"

#: Private names of other libraries that kernelmaps must use, and why. Each is asserted to be
#: nobody's name in kernelmaps (but :data:`SKLEARN_CONVENTIONS`, which kernelmaps' estimators
#: define as scikit-learn asks), so this list cannot hide a reach-in between packages.
THIRD_PARTY = {
    "_parameter_constraints": "scikit-learn's parameter-validation convention: every "
    "estimator declares it; _suggest reads it from any estimator, a user's included, to "
    "name the valid options of a misspelt value",
    "_actions": "argparse keeps a parser's actions there and offers no public list of its "
    "options (the CLI's did-you-mean needs them)",
    "_SubParsersAction": "argparse's subcommand action has no public name; the CLI finds a "
    "subcommand's parser through it",
    "_meta": "dask.array's meta array (the chunks' type, sparse or dense), the attribute "
    "Dask's own documentation on meta names",
    "_final_estimator": "scikit-learn's Pipeline property that StreamingPipeline, a Pipeline "
    "subclass, reads in its available_if check (the check receives the pipeline)",
    "_label_binarizer": "scikit-learn's RidgeClassifier decodes through it; the ridge core "
    "builds a fitted RidgeClassifier from a closed-form solution and must set it",
    "_validate_params": "scikit-learn's BaseEstimator method that checks the parameters "
    "against _parameter_constraints (no public equivalent); maps.interface.validate_params "
    "runs it for the Dask fit as fit does (_suggest extends it with did-you-mean)",
}
#: The entries of :data:`THIRD_PARTY` that kernelmaps defines too: scikit-learn's own
#: conventions, which its estimators follow.
SKLEARN_CONVENTIONS = frozenset({"_parameter_constraints", "_validate_params"})

_OWN = ("self", "cls")
_ATTR_FUNCTIONS = ("getattr", "hasattr", "setattr", "delattr")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def module_name(path: Path, root: Path = SRC) -> str:
    """The dotted module name of ``path`` (``kernelmaps.maps._base``; a package's
    ``__init__`` is the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    """The package of a module: its first component under ``kernelmaps`` (a subpackage or a
    top-level module), or ``kernelmaps`` for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_own(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in _OWN) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id == "super")


def _assigned_names(body: Iterable[ast.stmt]) -> Iterable[str]:
    for statement in body:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        yield from (t.id for t in targets if isinstance(t, ast.Name))


def defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines: functions, classes, module- and class-level assignments,
    and attributes stored on ``self``/``cls``."""
    names = set(_assigned_names(tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(_assigned_names(node.body))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and _is_own(node.value):
            names.add(node.attr)
    return names


def _imported_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _private_import(target: str, names: Iterable[str], package: str,
                    top_level: set[str]) -> str | None:
    """Why importing ``names`` from ``target`` reaches into another package, or None."""
    if target.split(".")[0] != "kernelmaps" or package_of(target) == package:
        return None
    parts = target.split(".")
    if any(_is_private(part) for part in parts[2:]):
        return f"private module {target}"
    private = [n for n in names if _is_private(n)
               and not (target == "kernelmaps" and n in top_level)]
    return f"private name {', '.join(private)} of {target}" if private else None


def _attribute_accesses(tree: ast.Module) -> Iterable[tuple[int, str, str]]:
    """``(line, text, name)`` for each private attribute of something not ``self``/``cls``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) \
                and not _is_own(node.value):
            yield node.lineno, ast.unparse(node), node.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _ATTR_FUNCTIONS and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _is_private(node.args[1].value) \
                and not _is_own(node.args[0]):
            yield node.lineno, ast.unparse(node), node.args[1].value


def reach_ins(sources: Mapping[str, tuple[str, bool]],
              third_party: Mapping[str, str] = THIRD_PARTY) -> list[str]:
    """Every cross-package private access in ``sources`` (module name → (source text,
    whether it is a package's ``__init__``)), as ``"module:line: what"``."""
    trees = {module: (ast.parse(text), is_package)
             for module, (text, is_package) in sources.items()}
    owners: dict[str, set[str]] = defaultdict(set)
    for module, (tree, _) in trees.items():
        for name in defined_names(tree):
            owners[name].add(package_of(module))
    top_level = {module.split(".")[1] for module in trees if module.count(".") >= 1}
    found = []
    for module, (tree, is_package) in sorted(trees.items()):
        package = package_of(module)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _imported_module(node, module, is_package)
                why = _private_import(target, [a.name for a in node.names], package,
                                      top_level)
            elif isinstance(node, ast.Import):
                why = next(filter(None, (_private_import(a.name, (), package, top_level)
                                         for a in node.names)), None)
            else:
                continue
            if why:
                found.append(f"{module}:{node.lineno}: imports {why}")
        for line, text, name in _attribute_accesses(tree):
            if name in third_party or package in owners.get(name, ()):
                continue
            others = sorted(owners.get(name, set()))
            where = f"defined in {', '.join(others)}" if others else "defined in no package"
            found.append(f"{module}:{line}: {text} ({where})")
    return found


def _sources(root: Path = SRC) -> dict[str, tuple[str, bool]]:
    return {module_name(path, root): (path.read_text(encoding="utf-8"),
                                      path.name == "__init__.py")
            for path in sorted(root.rglob("*.py"))}


def test_no_package_reaches_into_another():
    found = reach_ins(_sources())
    assert not found, (
        "private access across packages (make what the other package needs public within "
        "the library: a documented method or function without a leading underscore):\n"
        + "\n".join(found))


def test_third_party_names_are_nobody_else_in_kernelmaps():
    # Listed names must be other libraries' own: an entry that kernelmaps defines would let
    # one package read another's private attribute unseen.
    owners: dict[str, set[str]] = defaultdict(set)
    for module, (text, _) in _sources().items():
        for name in defined_names(ast.parse(text)):
            owners[name].add(package_of(module))
    defined = {name for name in THIRD_PARTY if owners.get(name)}
    assert defined <= SKLEARN_CONVENTIONS, defined


# The rule itself, on small modules: each reach-in of the issue that this test replaced.
_MODEL = ("class Model:\n    def _set_solution(self, s):\n        self._n_targets = 1\n", False)
_MAP = ("class Map:\n    _accept_sparse = 'csr'\n    def _fit(self, X):\n        return 1\n",
        False)


@pytest.mark.parametrize(("module", "text", "expected"), [
    ("kernelmaps.distributed.fit", "def f(model):\n    model._set_solution(None)\n",
     "model._set_solution (defined in models)"),
    ("kernelmaps.distributed.fit", "def f(model):\n    model._n_targets = 2\n",
     "model._n_targets (defined in models)"),
    ("kernelmaps.distributed.fit", "def f(m):\n    return hasattr(m, '_fit')\n",
     "hasattr(m, '_fit') (defined in maps)"),
    ("kernelmaps.models.ridge", "def f(m):\n    return m.feature_map_._accept_sparse\n",
     "m.feature_map_._accept_sparse (defined in maps)"),
    ("kernelmaps.distributed.fit", "from kernelmaps.models._nystrom import X\n",
     "imports private module kernelmaps.models._nystrom"),
    ("kernelmaps.distributed.fit", "from ..models._nystrom import X\n",
     "imports private module kernelmaps.models._nystrom"),
    ("kernelmaps.distributed.fit", "import kernelmaps.maps._base\n",
     "imports private module kernelmaps.maps._base"),
    ("kernelmaps.cli.tune", "from kernelmaps._engine import _blocks\n",
     "imports private name _blocks of kernelmaps._engine"),
    ("kernelmaps.evaluate.registry", "def f(kernel):\n    return kernel._undefined\n",
     "kernel._undefined (defined in no package)"),
])
def test_the_rule_flags_each_kind_of_reach_in(module, text, expected):
    sources = {"kernelmaps.models._nystrom": _MODEL, "kernelmaps.maps._base": _MAP,
               "kernelmaps._engine": ("def blocks():\n    pass\n", False),
               module: (text, False)}
    found = reach_ins(sources)
    assert any(expected in line for line in found), found


@pytest.mark.parametrize(("module", "text"), [
    ("kernelmaps.models.ridge", "def f(model):\n    model._set_solution(None)\n"),  # own
    ("kernelmaps.models.ridge", "from kernelmaps.models._nystrom import X\n"),  # own
    ("kernelmaps.cli.tune", "from kernelmaps import _engine\n"),  # a shared core module
    ("kernelmaps.cli.tune", "from kernelmaps._engine import blocks\n"),  # its public name
    ("kernelmaps.maps.nystroem", "class N:\n    def f(self):\n        return self._fit\n"),
    ("kernelmaps.distributed.fit", "def f(X):\n    return X._meta\n"),  # listed third party
])
def test_the_rule_lets_own_and_public_access_pass(module, text):
    sources = {"kernelmaps.models._nystrom": _MODEL, "kernelmaps.maps._base": _MAP,
               "kernelmaps._engine": ("def blocks():\n    pass\n", False),
               module: (text, False)}
    assert reach_ins(sources) == []
