"""The first hour of a user (issue 27): each mistake of the trial answered in one line that
names the file, the column or the flag, with exit status 2 and no traceback — run end to end
in a real pseudo-terminal 80 columns wide, as the user saw it. And the numeric flags refuse
values that mean nothing (``--gamma 0``) at the parser, before any work."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine

from tests.cli.conftest import run_in_pty, run_main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals: POSIX")

#: A small grid: the messages come before any work, and a run that wrongly starts ends soon.
QUICK = ("--methods", "nystroem", "--n-components", "10", "--seeds", "1", "--quiet")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The user's files: wine with its label column named cultivar (also ';'-separated, one
    row long and with one class), breast cancer with a string label."""
    folder = tmp_path_factory.mktemp("user")
    wine = load_wine(as_frame=True).frame.rename(columns={"target": "cultivar"})
    wine.to_csv(folder / "wine.csv", index=False)
    wine.to_csv(folder / "wine_semi.csv", index=False, sep=";")
    wine.head(1).to_csv(folder / "one_row.csv", index=False)
    wine.assign(cultivar=0).to_csv(folder / "one_class.csv", index=False)
    cancer = load_breast_cancer(as_frame=True).frame
    cancer["diagnosis"] = np.where(cancer.pop("target") == 1, "benign", "malignant")
    cancer.to_csv(folder / "cancer.csv", index=False)
    return folder


def one_line(folder, *argv: str) -> str:
    """The one line ``kernelmaps ARGV`` printed in an 80-column terminal, asserted to be
    its only output, an error of the subcommand, with exit status 2."""
    code, lines = run_in_pty(*argv, "--out", str(folder / "report"), cwd=folder)
    shown = "\n".join(lines)
    assert code == 2, shown
    assert len(lines) == 1 and "Traceback" not in shown, shown
    assert lines[0].startswith(f"kernelmaps {argv[0]}: error: "), shown
    return lines[0]


@pytest.mark.parametrize("argv", [("--gamma", "0"), ("--gamma", "-1"), ("--gamma", "nan"),
                                  ("--gamma", "inf"), ("--kernel-param", "gamma=0")])
def test_gamma_must_be_positive_at_the_parser(files, argv):
    # Was: "cannot reshape array of size 0 into shape (0,newaxis)" after the runs started.
    line = one_line(files, "compare", "--data", "wine.csv", "--target", "cultivar", *QUICK,
                    *argv)
    assert "--gamma" in line or "--kernel-param" in line
    assert "gamma > 0" in line or "finite" in line


@pytest.mark.parametrize(("argv", "expected"), [
    (("compare", "--degree", "0", "--kernel", "poly"), "argument --degree: expected a degree >= 1"),
    (("check-kernel", "--max-samples", "1"), "argument --max-samples: expected an integer >= 2"),
    (("tune", "--gamma", "0"), "argument --gamma: expected gamma > 0"),
])
def test_meaningless_numbers_are_refused_with_the_flag(capsys, argv, expected):
    code, _, err = run_main(capsys, argv[0], "--data", "iris", *argv[1:])
    assert code == 2 and expected in err, err


def test_one_row_file_names_the_file_and_what_is_needed(files):
    # Was: "the median heuristic needs at least 2 rows in X." / "X has 1 rows; tune needs
    # at least 3 with cv='loo'."
    line = one_line(files, "compare", "--data", "one_row.csv", "--target", "cultivar", *QUICK)
    assert "one_row.csv has 1 row; compare needs at least 3" in line
    line = one_line(files, "tune", "--data", "one_row.csv", "--target", "cultivar", "--quiet")
    assert "one_row.csv has 1 row; tune needs at least 3" in line and "cv=" not in line


def test_regression_on_labels_names_the_column_and_the_flag(files):
    # Was: "task='regression' needs a numeric y; it holds labels."
    line = one_line(files, "compare", "--data", "cancer.csv", "--target", "diagnosis",
                    "--task", "regression", *QUICK)
    assert "--task regression" in line and "column 'diagnosis' of cancer.csv" in line
    assert "'benign', 'malignant'" in line and "task=" not in line


def test_one_class_target_says_the_column_has_one_class(files):
    # Was: "the training part holds a single class; use more data".
    for command in ("compare", "tune"):
        line = one_line(files, command, "--data", "one_class.csv", "--target", "cultivar",
                        "--quiet", *(QUICK if command == "compare" else ()))
        assert "column 'cultivar' of one_class.csv holds a single class" in line
        assert "use more data" not in line


def test_semicolon_csv_is_read_by_its_separator(capsys, files):
    # Was: "unknown target column 'cultivar'; columns are ['alcohol;malic_acid;…']".
    code, out, err = run_main(capsys, "check-kernel", "--data", str(files / "wine_semi.csv"),
                              "--target", "cultivar", "--max-samples", "50")
    assert code == 0, err
    assert "178 × 13" in out


def test_a_misspelt_file_suggests_the_file_on_disk_not_a_data_set(files):
    # Was: "did you mean 'wine'?" (the bundled data set: other data) for wine.cvs beside
    # wine.csv, and every .csv of the folder for nothere.csv.
    line = one_line(files, "compare", "--data", "wine.cvs", *QUICK)
    assert "(did you mean 'wine.csv'" in line and "'wine'?" not in line
    line = one_line(files, "compare", "--data", "nothere.csv", *QUICK)
    assert "did you mean" not in line


def test_a_misspelt_kernel_puts_the_suggestion_first(files):
    line = one_line(files, "compare", "--kernel", "gausian", *QUICK)
    assert line.index("(did you mean 'gaussian'?)") < line.index("valid kernels")


def test_datasets_breaks_no_word_at_80_columns(files):
    # Was: "dataset-fashio" / "n-mnist" (and a path) cut inside a cell of the table.
    code, lines = run_in_pty("datasets", cwd=files)
    assert code == 0 and max(len(line) for line in lines) <= 80
    where = [line for line in lines if line.startswith("fashion-mnist: ")]
    assert len(where) == 1
    assert "/usr/share/datasets/fashion-mnist" in where[0] or "dataset-fashion-mnist" in where[0]


def test_the_install_hint_is_never_cut_inside_a_word():
    from rich.console import Console

    from kernelmaps.cli import report
    from kernelmaps.cli.data.catalog import DatasetInfo
    from kernelmaps.cli.data.idx import FASHION_MNIST_HINT

    console = Console(width=80, record=True)
    report.print_datasets(console, [DatasetInfo("fashion-mnist", "Zalando clothing images",
                                                "60000 × 784", False, FASHION_MNIST_HINT)],
                          title="Data sets")
    text = console.export_text()
    assert "apt-get install dataset-fashion-mnist`" in text
    words = set(" ".join(text.split()).split())
    assert set(FASHION_MNIST_HINT.split()) <= words


def test_nan_says_impute_or_drop_not_another_model():
    from kernelmaps import RBFSampler

    X = np.ones((5, 3))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN") as caught:
        RBFSampler().fit(X)
    assert "SimpleImputer" in str(caught.value) and "HistGradientBoosting" not in str(
        caught.value)


def test_a_misspelt_estimator_kernel_puts_the_suggestion_first_and_sorts_the_names():
    from kernelmaps import Nystroem

    with pytest.raises(ValueError) as caught:
        Nystroem(kernel="gausian").fit(np.ones((5, 3)))
    message = str(caught.value)
    assert message.index("did you mean 'gaussian'") < message.index("'additive_chi2'")
    listed = message[message.index("["):message.index("]") + 1]
    names = [name.strip(" '") for name in listed.strip("[]").split(",")]
    assert names == sorted(names) and len(names) == 23


def test_tune_test_size_leaving_too_few_rows_names_the_flag(capsys, files):
    # Was: "--test-size 0.99: The train_size = 1 should be greater or equal to the number
    # of classes = 3" (scikit-learn's words).
    code, _, err = run_main(capsys, "tune", "--data", str(files / "wine.csv"), "--target",
                            "cultivar", "--test-size", "0.99", "--quiet", "--out",
                            str(files / "report"))
    assert code == 2
    assert "--test-size 0.99 leaves 1 of the 178 rows of wine.csv to search on" in err
