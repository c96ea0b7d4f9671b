"""The peers of ``python -m benchmarks stream``: the scikit-learn recipe, river, and a file.

Cases (called by :func:`benchmarks.bench_stream.main`; each returns table rows):

``case_sgd_regression`` / ``case_sgd_classification``
    scikit-learn's *Kernel Approximation* recipe — its own
    :class:`sklearn.kernel_approximation.RBFSampler` then ``SGDRegressor`` /
    ``SGDClassifier.partial_fit``, one pass over 10⁴-row chunks — beside
    ``FeatureRidge`` / ``FeatureRidgeClassifier.partial_fit`` over the same chunks, at the
    same D and γ, on :func:`benchmarks.bench_ridge.make_data`'s 20 smooth features (the
    classes: the target's quartiles). Rows/s of the training pass (each learner's own
    transform included; ridge's solve included) and the test R² / accuracy on separate rows.
``case_river``
    river's online ``RBFSampler`` (one frequency per input feature: an additive kernel, not
    the Gaussian) into ``LinearRegression``, one row at a time (``learn_one``), on the first
    ``river_rows`` rows of the same stream, D = ``n_components`` — skipped with a message when
    river is not installed (it is never a kernelmaps dependency). Its SGD step is
    :data:`RIVER_STEP` (the default diverges).
``case_file_parquet``
    A Parquet file of ``file_rows`` × 20 (written in 10⁶-row row groups under a temporary
    directory, deleted afterwards) read by :func:`kernelmaps.io.iter_batches` in 65,536-row
    batches: the reader alone, then into ``FeatureRidge.partial_fit``; each in a fresh
    subprocess reporting its rows/s and peak resident memory (``VmHWM``: the whole process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_ridge import GAMMA, N_FEATURES, make_data

__all__ = ["case_file_parquet", "case_river", "case_sgd_classification",
           "case_sgd_regression", "print_rows"]

ALPHA = 1e-3
#: river's SGD step: its default (0.01) diverges on its 1,000 features of size up to 1
#: (R² of -10²⁴ measured; with a StandardScaler in front too); 0.001 ≈ 1/‖z‖² is stable.
RIVER_STEP = 0.001
TEST_ROWS = 20_000


def _chunks(n: int, batch: int) -> list[slice]:
    return [slice(start, min(start + batch, n)) for start in range(0, n, batch)]


def _classes(y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.searchsorted(edges, y)


def case_sgd_regression(n: int = 200_000, D: int = 1000, batch: int = 10_000,
                        seed: int = 0) -> list[dict[str, Any]]:
    """The recipe with ``SGDRegressor`` against ``FeatureRidge.partial_fit`` (test R²)."""
    from sklearn.kernel_approximation import RBFSampler as SkRBFSampler
    from sklearn.linear_model import SGDRegressor

    from kernelmaps import RBFSampler
    from kernelmaps.models import FeatureRidge

    X, y = make_data(n, seed)
    X_test, y_test = make_data(TEST_ROWS, seed + 100)
    rows = []
    start = time.perf_counter()
    sampler, sgd = SkRBFSampler(gamma=GAMMA, n_components=D, random_state=0), SGDRegressor(
        random_state=0)
    for part in _chunks(n, batch):
        if part.start == 0:
            sampler.fit(X[part])
        sgd.partial_fit(sampler.transform(X[part]), y[part])
    seconds = time.perf_counter() - start
    rows.append({"case": "sklearn RBFSampler + SGDRegressor.partial_fit (1 pass)",
                 "rows_per_s": n / seconds,
                 "score": sgd.score(sampler.transform(X_test), y_test), "metric": "R²"})
    start = time.perf_counter()
    ridge = FeatureRidge(RBFSampler(gamma=GAMMA, n_components=D, random_state=0), alpha=ALPHA)
    for part in _chunks(n, batch):
        ridge.partial_fit(X[part], y[part])
    ridge.coef_  # noqa: B018 - the lazy solve, timed
    seconds = time.perf_counter() - start
    rows.append({"case": "kernelmaps FeatureRidge.partial_fit", "rows_per_s": n / seconds,
                 "score": ridge.score(X_test, y_test), "metric": "R²"})
    return rows


def case_sgd_classification(n: int = 200_000, D: int = 1000, batch: int = 10_000,
                            seed: int = 0) -> list[dict[str, Any]]:
    """The recipe with ``SGDClassifier`` against ``FeatureRidgeClassifier.partial_fit`` on
    four classes (the target's quartiles), test accuracy."""
    from sklearn.kernel_approximation import RBFSampler as SkRBFSampler
    from sklearn.linear_model import SGDClassifier

    from kernelmaps import RBFSampler
    from kernelmaps.models import FeatureRidgeClassifier

    X, target = make_data(n, seed)
    X_test, target_test = make_data(TEST_ROWS, seed + 100)
    edges = np.quantile(target, [0.25, 0.5, 0.75])
    y, y_test = _classes(target, edges), _classes(target_test, edges)
    classes = np.arange(4)
    rows = []
    start = time.perf_counter()
    sampler, sgd = SkRBFSampler(gamma=GAMMA, n_components=D, random_state=0), SGDClassifier(
        random_state=0)
    for part in _chunks(n, batch):
        if part.start == 0:
            sampler.fit(X[part])
        sgd.partial_fit(sampler.transform(X[part]), y[part], classes=classes)
    seconds = time.perf_counter() - start
    rows.append({"case": "sklearn RBFSampler + SGDClassifier.partial_fit (1 pass)",
                 "rows_per_s": n / seconds,
                 "score": sgd.score(sampler.transform(X_test), y_test), "metric": "accuracy"})
    start = time.perf_counter()
    ridge = FeatureRidgeClassifier(RBFSampler(gamma=GAMMA, n_components=D, random_state=0),
                                   alpha=ALPHA)
    for part in _chunks(n, batch):
        ridge.partial_fit(X[part], y[part], classes=classes)
    ridge.coef_  # noqa: B018 - the lazy solve, timed
    seconds = time.perf_counter() - start
    rows.append({"case": "kernelmaps FeatureRidgeClassifier.partial_fit",
                 "rows_per_s": n / seconds, "score": ridge.score(X_test, y_test),
                 "metric": "accuracy"})
    return rows


def case_river(river_rows: int = 5_000, D: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """river's online RBFSampler + LinearRegression, ``learn_one`` per row (test R²); one
    row saying it was skipped when river is not installed."""
    try:
        from river import feature_extraction, linear_model, optim
    except ImportError:
        return [{"case": "river RBFSampler: skipped (pip install river to run it; never a "
                         "kernelmaps dependency)"}]
    X, y = make_data(river_rows, seed)
    X_test, y_test = make_data(2_000, seed + 100)
    names = [f"x{j}" for j in range(N_FEATURES)]
    model = (feature_extraction.RBFSampler(gamma=GAMMA, n_components=max(1, D // N_FEATURES),
                                           seed=0)
             | linear_model.LinearRegression(optimizer=optim.SGD(RIVER_STEP)))
    start = time.perf_counter()
    for row, target in zip(X, y, strict=True):
        model.learn_one(dict(zip(names, row, strict=True)), float(target))
    seconds = time.perf_counter() - start
    predicted = np.array([model.predict_one(dict(zip(names, row, strict=True)))
                          for row in X_test])
    r2 = 1 - np.mean((predicted - y_test) ** 2) / np.var(y_test)
    return [{"case": f"river RBFSampler + LinearRegression.learn_one ({river_rows:,} rows)",
             "rows_per_s": river_rows / seconds, "score": float(r2), "metric": "R²"}]


# ---------------------------------------------------------------------- the file case
_CHILD = r"""
import json, sys, time
import numpy as np
from kernelmaps.io import iter_batches
path, mode, D, gamma = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
start, rows = time.perf_counter(), 0
if mode == "read":
    for X, y in iter_batches(path, target="y", batch_rows=65_536):
        rows += len(X)
else:
    from kernelmaps import RBFSampler
    from kernelmaps.models import FeatureRidge
    model = FeatureRidge(RBFSampler(n_components=D, gamma=gamma, random_state=0), alpha=1e-3)
    for X, y in iter_batches(path, target="y", batch_rows=65_536):
        model.partial_fit(X, y)
        rows += len(X)
    model.coef_
seconds = time.perf_counter() - start
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
print(json.dumps({"rows": rows, "seconds": seconds,
                  "peak_bytes": int(peak[0].split()[1]) * 1024 if peak else None}))
"""


def write_parquet(path: Path, n: int, seed: int = 0, group: int = 1_000_000) -> None:
    """``n`` rows of make_data's problem in row groups of ``group``, never all in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    for index, start in enumerate(range(0, n, group)):
        X, y = make_data(min(group, n - start), seed + index)
        table = pa.table({**{f"x{j}": X[:, j] for j in range(N_FEATURES)}, "y": y})
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=group)
    if writer is not None:
        writer.close()


def case_file_parquet(file_rows: int = 1_000_000, D: int = 256) -> list[dict[str, Any]]:
    """Rows/s and peak RSS of streaming a Parquet file: the reader alone, then into
    ``FeatureRidge.partial_fit`` (each a fresh subprocess, one BLAS thread)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stream.parquet"
        write_parquet(path, file_rows)
        size = path.stat().st_size
        for mode, name in (("read", "iter_batches alone"),
                           ("fit", f"iter_batches + FeatureRidge.partial_fit, D={D}")):
            done = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode, str(D),
                                   str(GAMMA)], capture_output=True, text=True, env=env,
                                  check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"case": f"{file_rows:,}-row Parquet ({size / 1e9:.2f} GB): {name}",
                         "rows_per_s": result["rows"] / result["seconds"],
                         "peak_gb": (result["peak_bytes"] or 0) / 1e9})
    return rows


def print_rows(title: str, rows: list[dict[str, Any]]) -> None:
    """One table: case, rows/s, and the score or the peak memory."""
    print(f"\n{title} (load average {' '.join(f'{v:.2f}' for v in os.getloadavg())})")
    for row in rows:
        if "rows_per_s" not in row:
            print(f"  {row['case']}")
            continue
        extra = (f"test {row['metric']} {row['score']:.3f}" if "score" in row
                 else f"peak RSS {row['peak_gb']:.2f} GB")
        print(f"  {row['case']:<62} {row['rows_per_s']:>10,.0f} rows/s  {extra}")


def main_tables(n: int, D: int, batch: int, quick: bool = False) -> None:
    """The peer tables of ``python -m benchmarks stream``."""
    print_rows(f"The scikit-learn recipe vs partial_fit, regression: n={n:,}, d=20, D={D}, "
               f"{batch:,}-row chunks", case_sgd_regression(n, D, batch))
    print_rows(f"The same, 4 classes (the target's quartiles): n={n:,}, D={D}",
               case_sgd_classification(n, D, batch))
    print_rows(f"river (online, one row at a time), D={D}",
               case_river(1_000 if quick else 5_000, D))
    print_rows("A Parquet file larger than the batches (peak RSS: the whole process)",
               case_file_parquet(200_000 if quick else 2_000_000))
