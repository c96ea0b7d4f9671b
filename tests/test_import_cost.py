"""``import kernelmaps`` loads what the maps need: not the evaluation tools, plots, tables or
the terminal UI. Each check runs in a fresh interpreter (sys.modules of this one is shared by
every test)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

#: What the feature maps never need: plots, data frames, the terminal UI, the linear SVMs and
#: the statistics of the comparison tools.
HEAVY = ("matplotlib", "pandas", "rich", "sklearn.svm", "scipy.stats")

# Records every `import` statement executed by a kernelmaps module (builtins.__import__ sees
# them even when the module is already loaded), then imports kernelmaps.
SPY = textwrap.dedent("""
    import builtins, json, sys

    heavy = tuple(json.loads(sys.argv[1]))
    direct, dependencies = [], set()
    real_import = builtins.__import__

    def spy(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__") or ""
        if level == 0 and importer.split(".")[0] == "kernelmaps" \\
                and name.split(".")[0] != "kernelmaps":
            names = [name, *(f"{name}.{item}" for item in fromlist or ())]
            dependencies.add(name)
            direct.extend(f"{importer} imports {n}" for n in names
                          if any(n == h or n.startswith(h + ".") for h in heavy))
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = spy
    import kernelmaps
    bare = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "scipy", "sklearn"))
    # What `import kernelmaps` loaded before the names became lazy (PEP 562): the maps,
    # the kernels, the landmarks.
    kernelmaps.Nystroem, kernelmaps.check_mercer, kernelmaps.renyi_entropy_subset
    builtins.__import__ = real_import
    print(json.dumps({
        "direct": direct,
        "dependencies": sorted(dependencies),
        "bare": bare,
        "heavy_loaded": [h for h in heavy if h in sys.modules],
        "kernelmaps_modules": sorted(m for m in sys.modules if m.startswith("kernelmaps")),
    }))
""")


def run_python(code: str, *args: str) -> str:
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_kernelmaps_does_not_import_heavy_modules():
    report = json.loads(run_python(SPY, json.dumps(HEAVY)))
    # `import kernelmaps` alone loads no numerics (the command line's --help is instant) ...
    assert report["bare"] == []
    # ... and with the maps loaded, no kernelmaps module imports any of them ...
    assert report["direct"] == []
    # ... the evaluation tools and the command line stay unloaded ...
    loaded = report["kernelmaps_modules"]
    assert not [m for m in loaded if m.startswith(("kernelmaps.evaluate", "kernelmaps.cli"))]
    assert "kernelmaps.maps.nystroem" in loaded and "kernelmaps.kernels" in loaded
    # ... and whatever of them is loaded is loaded by the dependencies themselves: importing
    # exactly the third-party modules kernelmaps imports loads the same (scikit-learn >= 1.8
    # imports pandas, scipy.stats and rich from sklearn.base / sklearn.metrics when they are
    # installed).
    assert report["dependencies"], "the spy saw no third-party import"
    baseline = json.loads(run_python(
        "import importlib, json, sys\n"
        "for name in json.loads(sys.argv[1]): importlib.import_module(name)\n"
        "print(json.dumps([h for h in json.loads(sys.argv[2]) if h in sys.modules]))",
        json.dumps(report["dependencies"]), json.dumps(HEAVY)))
    assert set(report["heavy_loaded"]) <= set(baseline)


def test_kernelmaps_works_without_the_cli_extra():
    # pandas, matplotlib and rich made unimportable: the maps import and run all the same.
    code = textwrap.dedent("""
        import sys
        from importlib.abc import MetaPathFinder

        class Missing(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("pandas", "matplotlib", "rich"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Missing())
        import numpy as np
        import kernelmaps

        X = np.random.RandomState(0).normal(size=(50, 4))
        Z = kernelmaps.Nystroem(n_components=10, random_state=0).fit_transform(X)
        print(Z.shape, sorted(m for m in ("pandas", "matplotlib", "rich") if m in sys.modules))
    """)
    assert run_python(code).strip() == "(50, 10) []"


def test_evaluation_entry_points_load_on_first_use():
    code = textwrap.dedent("""
        import sys
        import kernelmaps

        before = "kernelmaps.evaluate" in sys.modules
        compare = kernelmaps.compare
        import kernelmaps.evaluate as evaluate

        print(before, compare is evaluate.compare,
              kernelmaps.approximation_error is evaluate.approximation_error,
              kernelmaps.summarize is evaluate.summarize,
              {"compare", "summarize", "approximation_error"} <= set(dir(kernelmaps)))
        try:
            kernelmaps.no_such_name
        except AttributeError as error:
            print(error)
    """)
    assert run_python(code).splitlines() == [
        "False True True True True",
        "module 'kernelmaps' has no attribute 'no_such_name'",
    ]


def test_subpackages_are_attributes_after_import_kernelmaps():
    # kernelmaps.models used to exist only once something had imported it (issue 27 item 8).
    code = textwrap.dedent("""
        import kernelmaps

        names = ("cli", "distributed", "evaluate", "io", "kernels", "landmarks", "maps",
                 "models", "tuning")
        print(kernelmaps.models.KernelRidge.__module__, kernelmaps.kernels.RBFKernel.__name__,
              kernelmaps.tuning.tune is kernelmaps.tune, set(names) <= set(dir(kernelmaps)),
              set(kernelmaps.__all__) <= set(dir(kernelmaps)))
        print(all(hasattr(kernelmaps, name) for name in (*names, *kernelmaps.__all__)))
    """)
    assert run_python(code).splitlines() == [
        "kernelmaps.models.ridge RBFKernel True True True", "True"]


# jit="auto" (the default) loads Numba only once the process's cosine work repays it
# (kernelmaps._fastmath.JIT_AUTO_ELEMENTS): a fresh interpreter shows what was imported.
AUTO = textwrap.dedent("""
    import sys
    import numpy as np
    import kernelmaps
    from kernelmaps import _fastmath

    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 6))
    maps = [kernelmaps.RBFSampler(n_components=300, random_state=0),
            kernelmaps.RandomFourierFeatures(n_components=256, output="cos_sin",
                                             random_state=0),
            kernelmaps.SkewedChi2Sampler(n_components=100, random_state=0),
            kernelmaps.AdditiveChi2Sampler()]
    data = [X, X, np.abs(X), np.abs(X)]
    small = [m.fit(x).transform(x) for m, x in zip(maps, data)]
    print(kernelmaps.get_config()["jit"], "numba" in sys.modules)
    if len(sys.argv) > 1:  # lower the crossover to what these transforms did, plus one call
        _fastmath.JIT_AUTO_ELEMENTS = _fastmath._numpy_elements + int(sys.argv[1])
        large = [m.transform(x) for m, x in zip(maps, data)]
        with kernelmaps.config_context(jit=False):
            plain = [m.transform(x) for m, x in zip(maps, data)]
        print("numba" in sys.modules, _fastmath._compiled_cos_rows.cache_info().currsize,
              all(np.array_equal(a, b) for a, b in zip(small + large, plain + plain)))
""")


def test_import_and_small_transforms_never_import_numba():
    assert run_python(AUTO).split() == ["auto", "False"]


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="Numba is not installed")
def test_auto_switches_at_the_crossover_with_the_numpy_numbers_bitwise():
    # The transforms either side of the crossover give the NumPy path's features, equal.
    assert run_python(AUTO, "60000").split() == ["auto", "False", "True", "1", "True"]
