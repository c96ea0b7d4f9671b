"""``kernelmaps tune`` end to end (small), and its bad input → exit 2 with one line."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

import kernelmaps.io
from kernelmaps.cli import tune as tune_command
from kernelmaps.cli._parser import build_parser
from kernelmaps.tuning.result import Trial, TuneResult
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
    # (with the table's column names, which it keeps and checks)
    frame = pd.DataFrame(X[:20], columns=loaded.feature_names_in_)
    assert loaded.predict(frame).shape == (20,)


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
    assert args.memory_budget is None  # tune's default: half the memory available
    assert parser.parse_args(["tune", "--memory-budget", "4"]).memory_budget == 4.0


def test_memory_budget_reaches_tune_in_bytes(capsys, monkeypatch, tmp_path):
    seen = {}
    real_tune = tune_command.tune

    def spy(*args, **kwargs):
        seen["memory_budget"] = kwargs["memory_budget"]
        return real_tune(*args, **kwargs)

    monkeypatch.setattr(tune_command, "tune", spy)
    code, _, err = run_main(capsys, "tune", "--data", "iris", "--n-components", "20",
                            "--memory-budget", "0.5", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 0, err
    assert seen["memory_budget"] == 0.5e9


def _tied_result():
    """A search whose refine step scored 0.9928 at γ = 2⁻⁸·⁵ while tune kept γ = 2⁻⁹ at
    0.9916: within half a standard error (½·√(p(1−p)/n), 0.0011 on 1,347 rows) of each
    other, and γ = 2⁻⁹ is the middle of the tied run."""
    def trial(stage, u, d, score, rows=1347):
        return Trial(stage=stage, gamma=2.0**u, n_components=d, n_features_out=d,
                     n_rows=rows, alpha=1e-3, score=score, time_s=0.1)

    trials = [trial("gamma", -9, 128, 0.985), trial("gamma", -8, 128, 0.980),
              trial("n_components", -9, 256, 0.9916), trial("refine", -9.5, 256, 0.9910),
              trial("refine", -8.5, 256, 0.9928), trial("final", -9, 256, 0.9920, rows=1797)]
    return TuneResult(estimator=None, params={"gamma": 2.0**-9, "n_components": 256},
                      score=0.9920, trials=trials, task="classification",
                      scoring="accuracy", cv="loo", scale_name="gamma", heuristic=2.0**-9,
                      time_s=1.0, stopped="converged")


def test_tune_report_says_why_a_higher_refine_row_is_not_kept():
    # Issue 27: the report's table showed a refine row scoring 0.9928 not chosen over
    # 0.9916, with no reason on screen.
    result = _tied_result()
    rows = tune_command._trial_rows(result)
    assert tune_command._TRIAL_HEADERS[-1] == "kept"
    kept = {row[0] + " " + row[1]: row[-1] for row in rows}
    assert kept[f"n_components {2.0**-9:.6g}"] == "★ kept"
    width = 0.5 * np.sqrt(0.9928 * 0.0072 / 1347)
    assert kept[f"refine {2.0**-8.5:.6g}"] == f"tie (within ±{width:.4f})"
    assert kept[f"refine {2.0**-9.5:.6g}"] == ""  # lower: nothing to explain
    assert kept[f"gamma {2.0**-9:.6g}"] == ""  # another D
    text = tune_command._tie_text(result)
    assert f"{width:.4f} here, are ties" in text and "nearest the run's middle" in text
