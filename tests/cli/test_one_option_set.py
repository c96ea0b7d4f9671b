"""One option set: the same flag means the same thing (type, choices, meaning) in every
subcommand; tune takes compare's kernel and scale options; prerequisites are checked before
any work (one line, exit 2)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from kernelmaps.cli import commands
from kernelmaps.cli import tune as tune_command
from kernelmaps.cli._parser import THREADS_HELP, build_parser
from tests.cli.conftest import ENV, run_main


def _options(command: str) -> dict[str, argparse.Action]:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    return {option: action for action in sub._actions for option in action.option_strings}


def test_shared_options_have_one_type_and_one_set_of_choices():
    compare, tune = _options("compare"), _options("tune")
    shared = sorted(set(compare) & set(tune) - {"-h", "--help"})
    for needed in ("--gamma", "--scale", "--kernel", "--kernel-param", "--degree", "--coef0",
                   "--threads", "--random-state", "--task", "--test-size", "--out", "--data"):
        assert needed in shared, needed
    # Same value type (the one definition in _parser; --n-components and --cv take a list
    # and 'auto'/'loo' in tune by design) and the same choices.
    for option in set(shared) - {"--n-components", "--cv"}:
        a, b = compare[option], tune[option]
        same = getattr(a.type, "__qualname__", a.type) == getattr(b.type, "__qualname__", b.type)
        assert same, option
        assert a.choices == b.choices, option
    # --threads means one thing: the same sentence, only the default stated differs.
    for action in (compare["--threads"], tune["--threads"]):
        head = THREADS_HELP.split("{default}")[0]
        assert action.help.startswith(head) and "compare spends them" in action.help
    # tune no longer carries value parsers of its own.
    assert not any(hasattr(tune_command, name)
                   for name in ("_between", "_at_least", "_keyword_or_int", "add_parser"))


def test_tune_takes_gamma_and_fixes_it(capsys, tmp_path):
    code, out, err = run_main(capsys, "tune", "--data", "iris", "--gamma", "0.25",
                              "--n-components", "16", "--threads", "1", "--out",
                              str(tmp_path / "r"), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["params"]["gamma"] == pytest.approx(0.25)
    assert all(t["gamma"] == pytest.approx(0.25) for t in payload["trials"])


def test_tune_decides_scaling_by_compares_rule_and_says_so(capsys, tmp_path):
    code, out, err = run_main(capsys, "tune", "--data", "wine", "--n-components", "16",
                              "--threads", "1", "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert "scaling: standard (auto: 12 of the 13 features" in out
    assert "--scale standard" in out  # the compare command reproduces it
    code, out, err = run_main(capsys, "tune", "--data", "wine", "--scale", "none",
                              "--n-components", "16", "--threads", "1", "--out",
                              str(tmp_path / "r"), "--json")
    assert code == 0, err
    assert json.loads(out)["scale"] == "none"


def test_compare_takes_scale_auto(capsys, tmp_path):
    code, out, err = run_main(capsys, "compare", "--data", "wine", "--scale", "auto",
                              "--methods", "rbf_sampler", "--n-components", "20", "--seeds",
                              "1", "--no-exact", "--threads", "1", "--out",
                              str(tmp_path / "r"), "--json")
    assert code == 0, err
    assert json.loads(out)["settings"]["scale"].startswith("standard (fitted on the training")
    assert "consider --scale standard" not in err  # no warning: the rule was applied


def _run_without(module: str, *argv: str, cwd) -> subprocess.CompletedProcess:
    """``python -m kernelmaps ARGV`` in a new process where ``module`` cannot be imported."""
    blocker = cwd / "blocker"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import sys
        sys.modules[{module!r}] = None  # import {module} raises ImportError
    """))
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(blocker), ENV.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "kernelmaps", *argv], capture_output=True,
                          text=True, timeout=300, env=env)


def test_save_without_skops_fails_first_in_one_line(tmp_path):
    result = _run_without("skops", "tune", "--data", "digits", "--save",
                          str(tmp_path / "model.skops"), "--out", str(tmp_path / "r"),
                          cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "--save" in lines[0] and "pip install 'kernelmaps[persist]'" in lines[0]
    assert not (tmp_path / "r").exists()  # no search ran, no report written


def test_save_without_skops_fails_before_the_command_runs(capsys, tmp_path, monkeypatch):
    # The order, not a duration: --save is checked while the arguments are parsed, so the
    # command (data loading, the search) is never entered.
    monkeypatch.setitem(sys.modules, "skops", None)  # import skops raises ImportError
    monkeypatch.setitem(sys.modules, "skops.io", None)

    def entered(args):
        raise AssertionError("kernelmaps tune ran before --save was checked")

    monkeypatch.setitem(commands._HANDLERS, "tune", entered)
    code, _, err = run_main(capsys, "tune", "--data", "digits", "--save",
                            str(tmp_path / "model.skops"), "--out", str(tmp_path / "r"))
    assert code == 2 and "pip install 'kernelmaps[persist]'" in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["compare", "tune"])
def test_a_missing_cli_extra_is_one_line_before_any_work(tmp_path, command):
    result = _run_without("matplotlib", command, "--data", "iris", "--out",
                          str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'kernelmaps[cli]'" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes anywhere")
def test_save_to_an_unwritable_folder_fails_first(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run_main(capsys, "tune", "--data", "iris", "--save",
                                str(locked / "m.skops"), "--out", str(tmp_path / "r"))
    finally:
        locked.chmod(0o700)
    assert code == 2 and "--save" in err and "cannot write" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_save_to_a_directory_fails_first(capsys, tmp_path):
    code, _, err = run_main(capsys, "tune", "--data", "iris", "--save", str(tmp_path),
                            "--out", str(tmp_path / "r"))
    assert code == 2 and "is a directory" in err and not (tmp_path / "r").exists()


def test_tune_report_folder_is_checked_like_compares(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = run_main(capsys, "tune", "--data", "iris", "--out", str(tmp_path / "file"))
    assert code == 2 and "argument --out" in err and "not a directory" in err
