"""``kernelmaps compare`` with its default threads against ``--threads 1``, end to end.

``python -m benchmarks.bench_compare [--sizes digits,6000,50000] [--repeats N]
[--before SRC]`` runs the command as a user does (a new process, the default grid, the report
written) on:

* ``digits``: scikit-learn's 1,797 × 64 (the command's default data set);
* ``6000``: a 6,000 × 40, 5-class ``make_classification`` CSV (written to a temporary folder);
* ``50000``: Fashion-MNIST's training images subsampled to 50,000 rows (``--max-rows``; its
  10,000 test images stay the test set) when ``dataset-fashion-mnist`` is installed, else a
  50,000 × 100 ``make_classification`` CSV (said in the table).

Variants run interleaved (default, ``--threads 1``, then again), so a change of load on a
shared machine hits both; with ``--before SRC`` (a ``src`` folder of another checkout, e.g.
``git archive main src | tar -x -C /tmp/before``) the same command with that code runs
beside them. The table gives the median wall time of each variant, the ratio of
``--threads 1`` to the default, the median CPU time of the command and its workers (what the
load of other processes does not inflate: on a shared machine the wall time is only as good
as the load average beside it), the 1-minute load average before each run, and the method
each run advised (two runs of the same code should name the same).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

FASHION = Path("/usr/share/datasets/fashion-mnist")


def _csv(folder: Path, rows: int, features: int) -> str:
    X, y = make_classification(n_samples=rows, n_features=features, n_informative=20,
                               n_classes=5, random_state=0)
    path = folder / f"classification-{rows}.csv"
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(features)])
    frame["label"] = y
    frame.to_csv(path, index=False)
    return str(path)


def _data_sets(sizes: list[str], folder: Path) -> dict[str, tuple[list[str], str]]:
    """Name → (the command's data options, what they are)."""
    sets = {}
    for size in sizes:
        if size == "digits":
            sets[size] = (["--data", "digits"], "digits, 1,797 × 64")
        elif size == "6000":
            sets[size] = (["--data", _csv(folder, 6000, 40)], "make_classification 6,000 × 40")
        elif size == "50000":
            if (FASHION / "train-images-idx3-ubyte.gz").exists():
                sets[size] = (["--data", "fashion-mnist", "--max-rows", "50000"],
                              "Fashion-MNIST, 50,000 training × 784 (+ 10,000 test)")
            else:
                sets[size] = (["--data", _csv(folder, 50000, 100)],
                              "make_classification 50,000 × 100 (no Fashion-MNIST here)")
        else:
            raise SystemExit(f"unknown size {size!r}; use digits, 6000, 50000")
    return sets


def _advised(out: Path) -> str:
    advice = pd.read_csv(out / "advice.csv")
    column = "advised" if "advised" in advice.columns else "fastest"
    chosen = advice[advice[column]]
    if chosen.empty:
        return "none"
    return f"{chosen['method'].iloc[0]} {chosen['n_components'].iloc[0]}"


def _cpu() -> float:
    """CPU seconds of the finished children: the command and the workers it waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(data: list[str], threads: list[str], src: str | None,
         out: Path) -> tuple[float, float, float, str]:
    env = dict(os.environ)
    if src is not None:  # PYTHONPATH comes before the editable install's path
        env["PYTHONPATH"] = src
    load, cpu = os.getloadavg()[0], _cpu()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kernelmaps", "compare", *data, *threads, "--quiet",
                    "--out", str(out)], check=True, env=env)
    return time.perf_counter() - start, _cpu() - cpu, load, _advised(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="digits,6000,50000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", default=None, metavar="SRC",
                        help="src folder of the code to compare with (run beside ours)")
    args = parser.parse_args(argv)
    variants = [("default", [], None), ("--threads 1", ["--threads", "1"], None)]
    if args.before:
        variants += [("before: default", [], args.before),
                     ("before: --threads 1", ["--threads", "1"], args.before)]
    print(f"cores: {len(os.sched_getaffinity(0))}; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, (data, described) in _data_sets(args.sizes.split(","), folder).items():
            for repeat in range(args.repeats):
                for label, threads, src in variants:
                    wall, cpu, load, advised = _run(data, threads, src, folder / "out")
                    records.append({"data": described, "variant": label, "repeat": repeat,
                                    "wall_s": wall, "cpu_s": cpu, "load": load,
                                    "advised": advised})
                    print(f"  {name:>6} {label:<20} {wall:7.1f} s wall {cpu:7.1f} s CPU  "
                          f"load {load:5.2f}  advised {advised}", flush=True)
    table = pd.DataFrame(records)
    summary = table.groupby(["data", "variant"], sort=False).agg(
        runs=("wall_s", "size"), median_s=("wall_s", "median"), min_s=("wall_s", "min"),
        max_s=("wall_s", "max"), cpu_s=("cpu_s", "median"), load_min=("load", "min"),
        load_max=("load", "max"),
        advised=("advised", lambda a: " / ".join(dict.fromkeys(a)))).reset_index()
    for _, group in summary.groupby("data", sort=False):
        medians = group.set_index("variant")["median_s"]
        summary.loc[group.index, "vs --threads 1"] = np.round(
            medians["--threads 1"] / group["median_s"].to_numpy(), 2)
        if args.before:
            summary.loc[group.index, "vs before default"] = np.round(
                medians["before: default"] / group["median_s"].to_numpy(), 2)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(summary.round(2).to_string(index=False))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
