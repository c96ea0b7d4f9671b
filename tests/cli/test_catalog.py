"""The command line's copy of the registries' names (kernelmaps/cli/_catalog.py) equals the
registries, and ``--help`` or an argument error loads neither NumPy nor scikit-learn (what
made ``kernelmaps --help`` take 2.5–3.3 s, issue 27 item 7)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from kernelmaps import evaluate, kernels
from kernelmaps.cli import _catalog
from kernelmaps.evaluate import comparison
from tests.cli.conftest import ENV


def test_the_catalog_is_the_registries():
    assert list(_catalog.KERNEL_NAMES) == sorted(kernels.KERNELS)
    assert _catalog.KERNEL_ALIASES == kernels.KERNEL_ALIASES
    assert list(_catalog.METHOD_NAMES) == list(evaluate.METHODS)
    assert list(_catalog.MODEL_NAMES) == sorted(evaluate.MODELS)
    assert _catalog.SCALES == evaluate.SCALES
    assert _catalog.MAX_AUTO_CLASSES == evaluate.MAX_AUTO_CLASSES
    assert _catalog.EXACT_AUTO_MAX_SECONDS == evaluate.EXACT_AUTO_MAX_SECONDS
    assert _catalog.DEFAULT_N_COMPONENTS == comparison.DEFAULT_N_COMPONENTS


@pytest.mark.parametrize("name", ["Gaussian", "squared-exponential", "RBF", "poly", "nope"])
def test_the_catalog_reads_names_as_the_registry_does(name):
    known = _catalog.canonical_kernel_name(name)
    assert known == (kernels.canonical_kernel_name(name) if name != "nope" else None)


#: Runs the command line's entry as the console script does, then lists the numerics loaded.
PROBE = textwrap.dedent("""
    import json, sys
    from kernelmaps.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit as exit_:
        code = exit_.code
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "scipy", "sklearn",
                                                             "pandas", "matplotlib", "rich"})
    print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
""")


@pytest.mark.parametrize(("argv", "code"), [
    (["--help"], 0), (["compare", "--help"], 0), (["tune", "--help"], 0), (["--version"], 0),
    (["compare", "--gamma", "0"], 2), (["compare", "--kernel", "gausian"], 2),
    (["tune", "--methods", "rff"], 2), (["nope"], 2),
])
def test_help_and_argument_errors_load_no_numerics(argv, code):
    result = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                            text=True, env=ENV, timeout=120)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report == {"code": code, "heavy": []}, result.stderr
