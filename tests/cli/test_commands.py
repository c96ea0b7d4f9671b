"""The ``kernelmaps`` command: end to end in a subprocess, and every bad input → exit 2 with
one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelmaps.cli import main
from tests.cli.conftest import ENV, run_main

# Test processes share the cores with xdist workers: one BLAS thread each avoids
# oversubscription (multi-threaded OpenBLAS slows down many-fold when cores are busy).


def run_cli(*args: str, script: bool = False) -> subprocess.CompletedProcess:
    """The command in a new process: ``python -m kernelmaps`` or the console script."""
    command = ([str(Path(sys.executable).parent / "kernelmaps")] if script
               else [sys.executable, "-m", "kernelmaps"])
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300,
                          env=ENV)


# --------------------------------------------------------------------------- end to end
def test_compare_end_to_end(digits_csv, tmp_path):
    # One run checked from every side (a fixture shared by several tests would run once per
    # xdist worker): the console script, the files, the numbers, the report.
    out = tmp_path / "report"
    result = run_cli("compare", "--data", str(digits_csv), "--methods", "nystroem,rbf_sampler",
                     "--n-components", "10,40,160", "--seeds", "2", "--error-sample", "200",
                     "--out", str(out), "--json", "--threads", "1", script=True)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "13/13" in result.stderr  # the progress bar ran to the end, on stderr
    check_files(out)
    check_numbers(json.loads(result.stdout), out)
    check_report(json.loads(result.stdout), out)


def check_files(out: Path) -> None:
    for name in ("report.html", "results.csv", "summary.csv", "advice.csv", "error.png",
                 "score.png", "pareto.png", "error_time.png"):
        assert (out / name).stat().st_size > 0, name
    for name in ("error.png", "score.png", "pareto.png", "error_time.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def check_numbers(payload: dict, out: Path) -> None:
    results = pd.read_csv(out / "results.csv")
    assert len(payload["results"]) == len(results) == 1 + 2 * 3 * 2
    exact = results[results.method == "exact"]
    assert len(exact) == 1 and exact["error"].iloc[0] < 1e-8
    assert exact["n_components"].iloc[0] == 300  # 400 rows, 25 % held out
    nystroem = results[results.method == "nystroem"].groupby("n_components")["error"].mean()
    assert list(nystroem.index) == [10, 40, 160] and nystroem.is_monotonic_decreasing
    assert (results.loc[results.method != "exact", "error"] > 1e-4).all()
    summary = pd.read_csv(out / "summary.csv")
    assert summary["method"].tolist() == ["exact"] + ["nystroem"] * 3 + ["rbf_sampler"] * 3
    assert payload["summary"][0]["method"] == "exact"
    assert payload["settings"]["split"] == "random stratified hold-out, test_size=0.25"
    advice = pd.read_csv(out / "advice.csv")
    assert advice["method"].tolist() == ["nystroem", "rbf_sampler"]
    assert [row["method"] for row in payload["advice"]] == ["nystroem", "rbf_sampler"]


def check_report(payload: dict, out: Path) -> None:
    text = (out / "report.html").read_text()
    assert text.count('src="data:image/png;base64,') == 4
    assert "log scale" in text  # the caption names the interval method
    # Nothing fetched from anywhere: every resource is inline. The check reads the markup, not
    # the images' base64 text, where any four letters occur by chance (≈ 330 KB of it here:
    # "http" in about one report in fifty).
    markup = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]*", "data:", text)
    assert re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]*)""", markup) == ["data:"] * 4
    assert not re.search(r"url\(|@import|<link|<script|<iframe", markup)
    assert "http" not in markup.replace("http-equiv", "")
    kernel = payload["settings"]["kernel"]
    assert "by the median heuristic" in kernel and kernel.split(";")[0] in text
    # The gamma the runs used is the one the report states.
    assert pd.read_csv(out / "results.csv")["kernel"].iloc[0] == kernel.split(";")[0]
    assert np.__version__ in text and "scikit-learn" in text
    assert "<td>exact</td>" in text and "<td>rbf_sampler</td>" in text
    assert "<h2>What to use</h2>" in text and "of the reference score" in text


def test_progress_shows_the_phases_of_the_exact_baseline(capsys, tmp_path, digits_csv,
                                                         monkeypatch):
    from kernelmaps._progress import Progress
    from kernelmaps.cli import report

    descriptions = []

    class Bar(Progress):  # records what the progress bar would show
        def phase(self, name):
            descriptions.append(name)

        def step(self, done, total=None, *, description=None, status=None):
            descriptions.append(description)

    monkeypatch.setattr(report, "progress_bar", lambda console, disable: Bar())
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                              "rbf_sampler", "--n-components", "20", "--seeds", "1",
                              "--exact", "--threads", "1", "--tolerance", "0.5", "--out",
                              str(tmp_path / "r"))
    assert code == 0, err
    # alpha chosen by leave-one-out on every training row (few): one eigendecomposition
    # instead of the Cholesky factor.
    assert descriptions[:4] == ["exact: kernel matrix",
                                "exact: α by leave-one-out on 300 rows", "exact: test rows",
                                "exact D=300"]
    # The advice, far from its edge by construction: rbf_sampler with 20 features scores
    # 0.82 against the exact 0.97 on these 100 test rows (a 15 % gap); 50 % tolerance is 33
    # test rows away, no rounding of any BLAS moves that.
    assert "What to use (within 50 % of the reference score" in out
    assert "Use rbf_sampler with n_components=20" in " ".join(out.split())
    descriptions.clear()
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                              "rbf_sampler", "--n-components", "20", "--seeds", "1",
                              "--exact", "--threads", "2", "--out", str(tmp_path / "r"))
    assert code == 0, err
    # With workers for the maps the baseline still runs first in this process, on every
    # BLAS thread: the bar shows its phases.
    assert descriptions[:3] == ["exact: kernel matrix",
                                "exact: α by leave-one-out on 300 rows", "exact: test rows"]
    assert sorted(descriptions[3:]) == ["exact D=300", "rbf_sampler D=20"]


def test_default_threads_start_as_many_workers_as_the_work_is_worth(capsys, tmp_path,
                                                                     digits_csv):
    # Two tiny runs (well under a second of work) are not worth a worker.
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                              "rbf_sampler", "--n-components", "10,20", "--seeds", "1",
                              "--no-exact", "--json", "--out", str(tmp_path))
    assert code == 0, err
    threads = json.loads(out)["settings"]["threads"]
    assert threads.startswith("1 (every run in this process): one per 15 s of the ~0 s of "
                              "work estimated (a worker costs ~1.2 s to start)")


def test_threads_change_only_the_times(capsys, tmp_path, digits_csv):
    # The same comparison on 1 and on 2 worker processes: the same rows, in the same order,
    # the same numbers (to rounding: the data sit at other addresses in a worker) and the
    # same advice; the report says how the runs were spread and which requests merged.
    tables = {}
    for threads in ("1", "2"):
        out = tmp_path / threads
        code, _, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                                "nystroem,structured", "--n-components", "25,50,100",
                                "--seeds", "2", "--error-sample", "100", "--threads", threads,
                                "--quiet", "--out", str(out))
        assert code == 0, err
        tables[threads] = {name: pd.read_csv(out / f"{name}.csv")
                           for name in ("results", "summary", "advice")}
    one, two = tables["1"], tables["2"]
    columns = ["method", "n_components", "n_features_out", "n_components_same_map", "seed"]
    pd.testing.assert_frame_equal(one["results"][columns], two["results"][columns])
    np.testing.assert_allclose(two["results"]["error"], one["results"]["error"], rtol=1e-12)
    np.testing.assert_allclose(two["results"]["score"], one["results"]["score"], rtol=1e-12)
    pd.testing.assert_frame_equal(one["advice"][["method", "n_components", "meets"]],
                                  two["advice"][["method", "n_components", "meets"]])
    # structured at 25 and 50 is one map on 64 pixels (D = 64): run once per seed.
    summary = one["summary"]
    assert summary["method"].tolist() == ["exact"] + ["nystroem"] * 3 + ["structured"] * 2
    assert summary["n_components_same_map"].tolist()[-2:] == ["25 50", "100"]
    assert {"cpu_time_s", "cpu_time_min_s", "cpu_time_max_s"} <= set(summary.columns)
    text = (tmp_path / "2" / "report.html").read_text()
    # a number cell: breaks before its note only, never inside a number
    assert '<td class="num breaks"><span class="nw">64</span><wbr><span class="nw">' \
        '(n=25–50)</span></td>' in text
    assert "structured: n_components 25 and 50 give the same map, D = 64 on 64 input " \
        "features" in text
    assert "2 worker processes of one thread each" in text
    assert "1 (every run in this process)" in (tmp_path / "1" / "report.html").read_text()


def test_quiet_prints_nothing(capsys, tmp_path, digits_csv):
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                              "rbf_sampler", "--n-components", "20", "--seeds", "1",
                              "--no-exact", "--quiet", "--threads", "1", "--out",
                              str(tmp_path / "r"))
    assert code == 0 and out == "" and err == ""
    assert len(pd.read_csv(tmp_path / "r" / "results.csv")) == 1


def test_bad_input_in_a_real_process(tmp_path):
    result = run_cli("compare", "--data", "missing.csv", "--out", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


# --------------------------------------------------------------------------- in process
def test_terminal_table_and_kernel_options(capsys, digits_csv, tmp_path):
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--kernel", "rbf",
                              "--gamma", "0.001", "--methods", "rbf_sampler", "--n-components",
                              "20,40", "--seeds", "1", "--threads", "1", "--out", str(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.split()[:2] == ["exact", "300"] for line in lines)
    assert any(line.split()[:2] == ["rbf_sampler", "40"] for line in lines)
    assert "RBFKernel(gamma=0.001, sigma=None)" in out and "median heuristic" not in out
    # sigma given: the heuristic must not also set gamma.
    code, out, err = run_main(capsys, "compare", "--data", str(digits_csv), "--kernel-param",
                              "sigma=20", "--methods", "nystroem", "--n-components", "20",
                              "--seeds", "1", "--no-exact", "--json", "--threads", "1",
                              "--out", str(tmp_path))
    assert code == 0, err
    assert json.loads(out)["settings"]["kernel"] == "RBFKernel(gamma=None, sigma=20)"


def test_regression_with_task_and_model(capsys, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(120, 3))
    np.savez(tmp_path / "r.npz", X=X, y=np.sin(3 * X[:, 0]) + X[:, 1] ** 2)
    code, out, err = run_main(capsys, "compare", "--data", str(tmp_path / "r.npz"),
                              "--methods", "nystroem", "--n-components", "10,40",
                              "--model", "svm", "--seeds", "1", "--json", "--threads", "1",
                              "--out", str(tmp_path / "out"))
    assert code == 0, err
    payload = json.loads(out)
    assert {row["scoring"] for row in payload["results"]} == {"r2"}
    assert payload["settings"]["model"] == "svm (regression)"


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    idx = tmp / "idx"
    idx.mkdir()
    (idx / "train-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x05ab")
    (idx / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x01a")
    rows = "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30))
    good = _write(tmp / "good.csv", "a,b,label\n" + rows)
    return [
        (["--data", str(tmp / "missing.csv")], "no such file or directory"),
        (["--data", _write(tmp / "m.csv", 'a,b\n"1,2\n')], "unreadable or malformed file"),
        (["--data", _write(tmp / "x.npz", "not a zip")], "not an NPZ archive"),
        (["--data", str(idx)], "malformed IDX file"),
        (["--data", good, "--target", "nope"],
         "unknown target column 'nope'; columns are ['a', 'b', 'label']"),
        (["--data", _write(tmp / "s.csv", "a,b,label\n1,red,0\n2,3,1\n")],
         "non-numeric feature column(s) ['b'] (e.g. 'red' at line 2)"),
        (["--data", _write(tmp / "n.csv", "a,b,label\n1,,0\n2,3,1\n,4,0\n")],
         "2 NaN value(s) in 2 row(s): line 2 column 'b', line 4 column 'a'"),
        (["--data", good, "--methods", "nystroem,magic"],
         "unknown method 'magic'; valid methods are ['additive_chi2', 'arccos'"),
        (["--data", good, "--methods", "poly_sketch"],
         "methods for 'rbf': ['nystroem', 'rbf_sampler'"),
        (["--data", good, "--kernel", "magic"], "unknown kernel 'magic'; valid kernels are"),
        (["--data", good, "--kernel-param", "nu=2"],
         "kernel 'rbf' has no parameter(s) ['nu']; it accepts ['gamma', 'sigma']"),
        (["--data", _write(tmp / "t.csv", "a,label\n1,0\n2,1\n")],
         "t.csv has 2 rows; compare needs at least 3 (two to train on and one to test)"),
        (["--data", good, "--cv", "40"], "too little data for 40-fold cross-validation"),
        (["--data", good, "--n-components", "ten"], "expected comma-separated integers"),
        (["--data", good, "--model", "forest"], "invalid choice: 'forest'"),
        (["--data", good, "--kernel-param", "gamma"], "expected NAME=VALUE"),
        (["--data", "digits", "--target", "y"],
         "applies to table files, not to the bundled data set 'digits'; drop --target COLUMN."),
        (["--data", _write(tmp / "f.csv", "a,b\n1,2\n3,4\n")],
         "which column is the target? none is called target, label, labels, class or y; "
         "columns are ['a', 'b']; name it with --target COLUMN (the likely one: 'b', the "
         "last column)."),
        (["--data", good, "--kernel", "precomputed"],
         "--kernel precomputed needs kernel values, but --data gives features"),
    ]


def test_every_bad_input_exits_2_with_one_line(capsys, tmp_path):
    for argv, message in bad_inputs(tmp_path):
        code, out, err = run_main(capsys, "compare", *argv, "--out", str(tmp_path / "o"))
        assert code == 2, (argv, err)
        assert message in err, (argv, err)
        assert err.count("\n") == 1 and err.startswith("kernelmaps"), (argv, err)
        assert "Traceback" not in err and out == "", argv


def test_out_must_be_a_directory(capsys, tmp_path, digits_csv):
    code, _, err = run_main(capsys, "compare", "--data", str(digits_csv), "--methods",
                            "rbf_sampler", "--n-components", "10", "--seeds", "1", "--no-exact",
                            "--quiet", "--out", _write(tmp_path / "file", "x"))
    assert code == 2 and "exists and is not a directory" in err


def test_traceback_flag_shows_the_error(capsys, tmp_path):
    with pytest.raises(ValueError, match="no such file or directory"):
        main(["--traceback", "compare", "--data", str(tmp_path / "missing.csv")])


# --------------------------------------------------------------------------- other commands
def test_check_kernel(capsys, digits_csv):
    code, out, _ = run_main(capsys, "check-kernel", "--data", str(digits_csv),
                            "--max-samples", "200")
    assert code == 0 and "PASSED" in out and "median heuristic" in out
    code, out, _ = run_main(capsys, "check-kernel", "--data", str(digits_csv), "--kernel",
                            "sigmoid", "--coef0", "1", "--max-samples", "200", "--json")
    report = json.loads(out)
    assert code == 1 and report["passed"] is False and report["min_eigenvalue"] < 0
    assert report["n_samples"] == 200
    code, _, err = run_main(capsys, "check-kernel", "--kernel", "linear", "--gamma", "1")
    assert code == 2 and "kernel 'linear' has no parameter(s) ['gamma']" in err


def test_check_kernel_on_features_only(capsys, tmp_path):
    path = _write(tmp_path / "f.csv", "a,b\n" + "".join(f"{i},{i * i % 7}\n" for i in range(20)))
    code, out, _ = run_main(capsys, "check-kernel", "--data", path, "--kernel", "laplacian")
    assert code == 0 and "20 points" in out


def test_datasets_listing(capsys):
    code, out, _ = run_main(capsys, "datasets")
    assert code == 0 and "digits" in out and "fashion-mnist" in out
    code, out, _ = run_main(capsys, "datasets", "--json")
    names = [entry["name"] for entry in json.loads(out)]
    assert names[0] == "digits" and "fashion-mnist" in names
