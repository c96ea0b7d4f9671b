"""``kernelmaps tune`` end to end (small), and its bad input → exit 2 with one line."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from sklearn.datasets import load_digits

import kernelmaps.io
from kernelmaps.cli._parser import build_parser
from tests.cli.conftest import run_main


def test_tune_end_to_end(capsys, tmp_path):
    out, model = tmp_path / "report", tmp_path / "model.skops"
    code, stdout, err = run_main(
        capsys, "tune", "--data", "digits", "--n-components", "64", "--search-rows", "600",
        "--test-size", "0.3", "--threads", "1", "--out", str(out), "--save", str(model),
        "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    params = payload["params"]
    assert set(params) == {"method", "kernel", "gamma", "alpha", "n_components"}
    assert params["n_components"] == 64 and payload["scoring"] == "accuracy"
    assert payload["score"] > 0.9 and payload["test_score"] > 0.9
    assert len(payload["trials"]) >= 3 and payload["trials"][-1]["stage"] == "final"
    # The compare command states the same configuration, and it runs: every row at the
    # chosen alpha (--alpha keeps it fixed), the map and D tune chose.
    command = shlex.split(payload["compare_command"])
    assert command[:2] == ["kernelmaps", "compare"]
    assert command[command.index("--gamma") + 1] == f"{params['gamma']:.6g}"
    assert command[command.index("--n-components") + 1] == "64"
    code, stdout, err = run_main(capsys, *command[1:], "--seeds", "1", "--threads", "1",
                                 "--no-exact", "--out", str(tmp_path / "compare"), "--json")
    assert code == 0, err
    compared = json.loads(stdout)
    alpha = float(command[command.index("--alpha") + 1])
    assert [(row["method"], row["n_components"], row["alpha"])
            for row in compared["results"]] == [(params["method"], 64, alpha)]
    assert compared["settings"]["alpha"] == f"{alpha:.6g} (fixed)"
    # The report: the tune section with both plots, every trial, and the files.
    page = (out / "report.html").read_text()
    assert "Every configuration tried" in page and page.count("data:image/png;base64") == 2
    assert (out / "score_gamma.png").stat().st_size > 0
    assert (out / "score_components.png").stat().st_size > 0
    assert (out / "trials.csv").read_text().count("\n") == len(payload["trials"]) + 1
    # The saved model loads through kernelmaps.io (nothing beyond its trusted types) and
    # predicts like the one tuned.
    loaded = kernelmaps.io.load(model)
    X, _ = load_digits(return_X_y=True)
    assert loaded.predict(X[:20]).shape == (20,)


def test_tune_prints_the_choice_and_a_progress_bar(capsys, tmp_path):
    code, stdout, err = run_main(
        capsys, "tune", "--data", "diabetes", "--n-components", "32", "--threads", "1",
        "--out", str(tmp_path / "r"))
    assert code == 0, err
    for line in ("kernel: rbf, gamma =", "alpha:", "validation score:", "reproduce with: "
                 "kernelmaps compare --data diabetes", "--task regression"):
        assert line in stdout
    assert "done" in err  # the progress bar's last state (rich, on stderr)


@pytest.mark.parametrize("argv,needle", [
    (["--n-components", "0"], "--n-components"),
    (["--cv", "1"], "--cv"),
    (["--cv", "gcv"], "--cv"),
    (["--time-budget", "-3"], "--time-budget"),
    (["--tolerance", "2"], "--tolerance"),
    (["--search-rows", "3"], "--search-rows"),
    (["--kernel", "linear"], "scale"),
    (["--kernel", "nope"], "--kernel"),
    (["--method", "nope"], "--method"),
    (["--method", "poly_sketch"], "does not approximate"),
    (["--n-components", "5000"], "--n-components 5000 exceeds"),
    (["--data", "no/such/file.csv"], "no/such/file.csv"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, needle):
    code, _, err = run_main(capsys, "tune", "--data", "iris", "--out", str(tmp_path / "r"),
                            *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_save_needs_a_file_in_an_existing_folder(capsys, tmp_path):
    code, _, err = run_main(capsys, "tune", "--data", "iris", "--save",
                            str(tmp_path / "missing" / "m.skops"))
    assert code == 2 and "--save" in err


def test_registered_beside_the_other_commands():
    parser = build_parser()
    args = parser.parse_args(["tune", "--data", "iris"])
    assert args.command == "tune" and args.n_components == "auto" and args.cv == "loo"
    assert np.isclose(args.tolerance, 0.005)
