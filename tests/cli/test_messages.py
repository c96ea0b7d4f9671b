"""Messages a user reads: did-you-mean for columns, kernels, methods, options and data set
names (never hidden behind "…"), errors that name the flag, ``--out`` checked before any work,
kernel aliases, ``--version``."""

from __future__ import annotations

import importlib.metadata

import pytest

from kernelmaps._suggest import close_matches, did_you_mean
from kernelmaps.cli.data import DataError, load_dataset
from kernelmaps.kernels import KERNEL_ALIASES, KERNELS, get_kernel, resolve_kernel
from tests.cli.conftest import run_main


def one_error_line(capsys, *argv: str) -> str:
    code, _, err = run_main(capsys, *argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ the suggestion rule
def test_close_matches_ignore_case_and_keep_the_choice_spelling():
    assert close_matches("SPECIE", ["Species", "sepal"]) == ["Species"]
    assert close_matches("xyz", ["Species", "sepal"]) == []
    assert did_you_mean("rbff", ["rbf", "poly"]) == " (did you mean 'rbf'?)"
    assert did_you_mean("lapalcian", ["laplacian", "laplace"]) == (
        " (did you mean 'laplacian' or 'laplace'?)")


# ------------------------------------------------------------------ kernels
def test_aliases_resolve_to_the_registered_kernel():
    for alias, name in KERNEL_ALIASES.items():
        assert name in KERNELS, alias
        assert alias not in KERNELS  # an alias never shadows a registered name
        assert type(get_kernel(alias)) is KERNELS[name]
    assert get_kernel("Gaussian", gamma=0.5) == get_kernel("rbf", gamma=0.5)
    assert resolve_kernel("squared-exponential", gamma=0.5).name == "rbf"
    assert get_kernel("POLY", degree=2).name == "poly"


def test_unknown_kernel_suggests_the_close_names():
    with pytest.raises(ValueError, match=r"Unknown kernel 'gausian' \(did you mean 'gaussian'\?\)"
                                         r"; valid names are \[.*'rbf'.*\] \(aliases: gaussian"):
        get_kernel("gausian")
    with pytest.raises(ValueError, match=r"'laplacain' for Nystroem \(did you mean 'laplacian'"):
        resolve_kernel("laplacain", owner="Nystroem")
    with pytest.raises(ValueError, match=r"Unknown kernel 'magic'; valid names"):
        get_kernel("magic")  # nothing close: no suggestion
    with pytest.raises(TypeError, match=r"\['gama'\] \(did you mean 'gamma'"):
        get_kernel("rbf", gama=1.0)


def test_cli_accepts_a_kernel_alias(capsys, tmp_path):
    code, out, err = run_main(capsys, "check-kernel", "--kernel", "gaussian", "--max-samples",
                              "50", "--gamma", "0.01")
    assert code == 0, err
    assert "RBFKernel(gamma=0.01" in out


# ------------------------------------------------------------------ the command's options
@pytest.mark.parametrize(("argv", "message"), [
    (["--kernel", "gausian"],
     "argument --kernel: unknown kernel 'gausian' (did you mean 'gaussian'?); valid kernels"),
    (["--methods", "nystrom"],
     "argument --methods: unknown method 'nystrom' (did you mean 'nystroem'?); valid methods"),
    (["--methods", "nystroem,rbf_sampelr"], "unknown method 'rbf_sampelr' (did you mean "
                                            "'rbf_sampler'?)"),
    (["--model", "rigde"], "argument --model: invalid choice: 'rigde'"),
    (["--n-componets", "10"],
     "unrecognized arguments: --n-componets 10 (did you mean --n-components?)"),
    (["--test-size", "1.5"], "argument --test-size: expected a number in (0, 1)"),
    (["--test-size", "0"], "argument --test-size: expected a number in (0, 1)"),
    (["--cv", "1"], "argument --cv: expected an integer >= 2 (folds); got '1'"),
    (["--random-state", "-1"], "argument --random-state: expected an integer in [0, "),
    (["--error-sample", "1"], "argument --error-sample: expected an integer >= 2 (rows)"),
    (["--data", "digit"], "no such file or directory: digit (did you mean 'digits'?)"),
])
def test_option_errors_name_the_flag_and_suggest(capsys, tmp_path, argv, message):
    line = one_error_line(capsys, "compare", *argv, "--out", str(tmp_path / "out"))
    assert line.startswith("kernelmaps compare: error: "), line
    assert message in line
    for python_name in ("test_size", "random_state", "error_sample"):
        assert python_name not in line.replace("--random-state", "")  # the flag, not the name
    if "rigde" in argv:
        assert line.endswith("(did you mean 'ridge'?) (see kernelmaps compare --help)")


def test_misspelt_subcommand_is_suggested(capsys):
    line = one_error_line(capsys, "compar")
    assert "invalid choice: 'compar'" in line and "(did you mean 'compare'?)" in line


# ------------------------------------------------------------------ data
def test_target_column_suggestion_is_never_cut(tmp_path):
    # 30 columns: the listing stops at 20 with "…", the close match (column 26) is still named
    names = [f"feature_{i:02d}" for i in range(25)] + ["species", *[f"z{i}" for i in range(4)]]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n")
    with pytest.raises(DataError) as info:
        load_dataset(path, target="specie")
    text = str(info.value)
    assert "…" in text  # the long listing is cut ...
    assert "unknown target column 'specie' (did you mean 'species'?)" in text  # ... not the hint


def test_misspelt_file_name_suggests_the_file(capsys, tmp_path):
    (tmp_path / "train.csv").write_text("a,label\n1,0\n")
    line = one_error_line(capsys, "compare", "--data", str(tmp_path / "train.cvs"),
                          "--out", str(tmp_path / "out"))
    assert f"(did you mean '{tmp_path / 'train.csv'}'?)" in line


# ------------------------------------------------------------------ --out before any work
def test_out_unwritable_fails_before_loading_the_data(capsys, tmp_path, monkeypatch):
    import kernelmaps.cli.commands as commands

    def no_loading(*args, **kwargs):  # the data must not even be read
        raise AssertionError("data loaded before --out was checked")

    monkeypatch.setattr(commands, "load_dataset", no_loading)
    line = one_error_line(capsys, "compare", "--out", "/proc/kernelmaps-report")
    assert "argument --out: cannot write the report folder /proc/kernelmaps-report" in line
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    line = one_error_line(capsys, "compare", "--out", str(a_file))
    assert "argument --out:" in line and "exists and is not a directory" in line
    line = one_error_line(capsys, "compare", "--out", str(a_file / "sub"))
    assert f"{a_file} is not a directory" in line


def test_out_in_a_read_only_folder(capsys, tmp_path, monkeypatch):
    # Root writes into folders whose permission bits say read-only (CI runs as root), so the
    # refusal a user sees is simulated where the probe is made: the folder's OS error.
    import kernelmaps.cli._values as values

    locked = tmp_path / "locked"
    locked.mkdir()

    class Refused:
        def __init__(self, *, dir, prefix):
            raise PermissionError(13, "Permission denied", str(dir))

    monkeypatch.setattr(values.tempfile, "TemporaryDirectory", Refused)
    line = one_error_line(capsys, "compare", "--out", str(locked / "report"))
    assert "argument --out: cannot write the report folder" in line
    assert f"(Permission denied in {locked})" in line and "choose a writable directory" in line


def test_out_check_leaves_nothing_behind(capsys, tmp_path, monkeypatch):
    import kernelmaps.cli.commands as commands

    monkeypatch.setattr(commands, "load_dataset", lambda *a, **k: (_ for _ in ()).throw(
        ValueError("stop here")))
    run_main(capsys, "compare", "--out", str(tmp_path / "new" / "report"))
    assert list(tmp_path.iterdir()) == []  # the probe is removed; no folder made yet


# ------------------------------------------------------------------ --version
def test_version_comes_from_the_package_metadata(capsys):
    code, out, _ = run_main(capsys, "--version")
    assert code == 0
    assert out.strip() == f"kernelmaps {importlib.metadata.version('kernelmaps')}"


def test_help_documents_the_aliases(capsys):
    _, out, _ = run_main(capsys, "compare", "--help")
    assert "gaussian = rbf" in " ".join(out.split())
