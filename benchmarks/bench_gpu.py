"""kernelmaps on a GPU: PyTorch CUDA tensors through scikit-learn's array API dispatch.

One table, one run, side by side (float32 throughout, every estimator fitted and applied
under ``sklearn.config_context(array_api_dispatch=True)`` on tensors already on the device):

* RBFSampler and RandomFourierFeatures (iid, orthogonal, structured = SORF), 1,000,000 × 100
  → 4,096 features: ``transform`` against the floor of any random-feature map on this device,
  the raw torch ``addmm`` + in-place ``cos_`` of the same shapes;
* PolynomialCountSketch (degree 2), 1,000,000 × 100 → 4,096: ``transform`` against the same
  floor (one output of that size);
* Nystroem (RBF), 200,000 × 100, 2,000 landmarks: ``fit`` and ``transform`` against
  scikit-learn's own array-API ``Nystroem`` on the same tensor (the same landmarks: both
  draw them with the same permutation);
* KernelRidge(solver="nystrom"), 1,000,000 × 20 with 20,000 centres (the problem of
  :mod:`benchmarks.bench_ridge`): ``fit`` on the device, and its test RMSE next to the
  RMSE of the same model fitted on the CPU with NumPy (``--skip-cpu-reference`` leaves that
  long fit out).

Times are medians of ``--repeats`` runs after one untimed warm-up, each bracketed by
``torch.cuda.synchronize()``. ``agree`` is max |ours − reference| / max |reference| on the
first 2,000 rows, the reference being kernelmaps' NumPy result for the same
``random_state`` (maps), scikit-learn's Nystroem on the device (Nystroem), or the CPU fit's
test RMSE (KernelRidge, relative difference).

    python -m benchmarks gpu                      # CUDA, the sizes above
    python -m benchmarks gpu --small              # 1/100 of the rows (and of the centres)
    python -m benchmarks gpu --device cpu --small # the same code on CPU torch
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

# scikit-learn refuses array API dispatch unless SciPy's own support is on, and SciPy reads
# this once, at import: set it before anything imports SciPy.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn
import sklearn.kernel_approximation

import kernelmaps as km
from benchmarks._harness import machine_lines
from benchmarks.bench_ridge import GAMMA, LAMBDA, make_data
from kernelmaps._array_api import to_numpy
from kernelmaps.maps.fourier import RandomFourierFeatures
from kernelmaps.models import KernelRidge

N_FEATURES = 100
N_COMPONENTS = 4096
AGREE_ROWS = 2000
SEED = 0
#: Full-size rows, per family; --small divides them (and the ridge centres) by 100.
SIZES = {"features": 1_000_000, "nystroem": 200_000, "ridge": 1_000_000}
NYSTROEM_LANDMARKS = 2000
RIDGE_CENTRES = 20_000
RIDGE_TEST_ROWS = 20_000


@dataclass
class Row:
    case: str
    shape: str
    ours_s: float
    reference: str
    reference_s: float | None
    agree: float | None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return None if self.reference_s is None else self.ours_s / self.reference_s


def _torch():
    import torch  # an optional dependency: this benchmark needs it

    return torch


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        _torch().cuda.synchronize()


def median_time(fn: Callable[[], Any], device: str, repeats: int) -> float:
    """Median wall time of ``fn()`` after one untimed warm-up; results released each time."""
    result = fn()
    del result
    times = []
    for _ in range(repeats):
        _synchronize(device)
        start = time.perf_counter()
        result = fn()
        _synchronize(device)
        times.append(time.perf_counter() - start)
        del result
    return statistics.median(times)


def relative_difference(ours: Any, reference: Any) -> float:
    ours = np.asarray(to_numpy(ours), dtype=np.float64)
    reference = np.asarray(to_numpy(reference), dtype=np.float64)
    return float(np.abs(ours - reference).max() / max(np.abs(reference).max(), 1e-300))


def dispatch():
    return sklearn.config_context(array_api_dispatch=True)


# ------------------------------------------------------------------------ the cases
def feature_rows(device: str, n: int, repeats: int) -> list[Row]:
    """Random-feature maps and the Count Sketch against addmm + cos_ of the same shapes."""
    torch = _torch()
    X_host = np.random.RandomState(SEED).uniform(0, 1, size=(n, N_FEATURES)).astype(np.float32)
    X = torch.asarray(X_host, device=device)
    generator = torch.Generator(device=device).manual_seed(SEED)
    W = torch.randn(N_FEATURES, N_COMPONENTS, device=device, generator=generator)
    b = 2 * np.pi * torch.rand(N_COMPONENTS, device=device, generator=generator)

    def floor():
        out = torch.addmm(b, X, W)
        return out.cos_()

    floor_s = median_time(floor, device, repeats)
    shape = f"{n:,} × {N_FEATURES} → {N_COMPONENTS:,}"
    maps = {
        "RBFSampler": km.RBFSampler(gamma=0.1, n_components=N_COMPONENTS, random_state=SEED),
        **{f"RandomFourierFeatures {structure}": RandomFourierFeatures(
            "rbf", gamma=0.1, structure=structure, n_components=N_COMPONENTS,
            random_state=SEED) for structure in ("iid", "orthogonal", "structured")},
        "PolynomialCountSketch deg 2": km.PolynomialCountSketch(
            gamma=0.1, degree=2, n_components=N_COMPONENTS, random_state=SEED),
    }
    rows = [Row("torch addmm + cos_ (floor)", shape, floor_s, "-", None, None)]
    for name, estimator in maps.items():
        with dispatch():
            estimator.fit(X)
            seconds = median_time(lambda est=estimator: est.transform(X), device, repeats)
            head = estimator.transform(X[:AGREE_ROWS])
        reference = sklearn.clone(estimator).fit(X_host).transform(X_host[:AGREE_ROWS])
        rows.append(Row(name, shape, seconds, "floor", floor_s,
                        relative_difference(head, reference), "transform"))
    return rows


def nystroem_rows(device: str, n: int, repeats: int) -> list[Row]:
    """kernelmaps' Nystroem against scikit-learn's array-API Nystroem on the same tensor."""
    torch = _torch()
    X_host = np.random.RandomState(SEED).uniform(0, 1, size=(n, N_FEATURES)).astype(np.float32)
    X = torch.asarray(X_host, device=device)
    m = min(NYSTROEM_LANDMARKS, n)
    params = {"kernel": "rbf", "gamma": 0.1, "n_components": m, "random_state": SEED}
    ours, theirs = km.Nystroem(**params), sklearn.kernel_approximation.Nystroem(**params)
    shape = f"{n:,} × {N_FEATURES}, m={m:,}"
    with dispatch():
        fit = {name: median_time(lambda est=est: est.fit(X), device, repeats)
               for name, est in (("ours", ours), ("theirs", theirs))}
        transform = {name: median_time(lambda est=est: est.transform(X), device, repeats)
                     for name, est in (("ours", ours), ("theirs", theirs))}
        agree = relative_difference(ours.transform(X[:AGREE_ROWS]),
                                    theirs.transform(X[:AGREE_ROWS]))
    return [Row("Nystroem rbf", shape, fit["ours"], "sklearn Nystroem", fit["theirs"], agree,
                "fit"),
            Row("Nystroem rbf", shape, transform["ours"], "sklearn Nystroem",
                transform["theirs"], agree, "transform")]


def ridge_rows(device: str, n: int, centres: int, cpu_reference: bool) -> list[Row]:
    """KernelRidge(solver="nystrom") fitted on the device; test RMSE against a CPU fit."""
    torch = _torch()
    X_host, y_host = make_data(n + RIDGE_TEST_ROWS, SEED)
    X_host = X_host.astype(np.float32)
    X_train, X_test = X_host[:n], X_host[n:]
    y_train, y_test = y_host[:n], y_host[n:]
    model = KernelRidge(alpha=LAMBDA * n, kernel="rbf", gamma=GAMMA, solver="nystrom",
                        n_components=centres, random_state=SEED)
    X, y = torch.asarray(X_train, device=device), torch.asarray(y_train, device=device)
    with dispatch():
        _synchronize(device)
        start = time.perf_counter()
        fitted = sklearn.clone(model).fit(X, y)
        _synchronize(device)
        seconds = time.perf_counter() - start
        predictions = fitted.predict(torch.asarray(X_test, device=device))
    rmse = float(np.sqrt(np.mean((to_numpy(predictions) - y_test) ** 2)))
    shape = f"{n:,} × {X_host.shape[1]}, M={centres:,}"
    note = f"fit; test RMSE {rmse:.4f}, {fitted.n_iter_} CG iterations"
    if not cpu_reference:
        return [Row("KernelRidge nystrom", shape, seconds, "-", None, None, note)]
    start = time.perf_counter()
    on_cpu = sklearn.clone(model).fit(X_train, y_train)
    cpu_seconds = time.perf_counter() - start
    cpu_rmse = float(np.sqrt(np.mean((on_cpu.predict(X_test) - y_test) ** 2)))
    return [Row("KernelRidge nystrom", shape, seconds, "same fit, NumPy on CPU", cpu_seconds,
                abs(rmse - cpu_rmse) / cpu_rmse, f"{note}; CPU RMSE {cpu_rmse:.4f}")]


# ------------------------------------------------------------------------ driver
def _format(rows: list[Row]) -> str:
    header = (f"{'case':34} {'shape':30} {'ours s':>9} {'reference':24} {'ref s':>9} "
              f"{'ours/ref':>8} {'agree':>8}  note")
    lines = [header, "-" * len(header)]
    for row in rows:
        ref = "" if row.reference_s is None else f"{row.reference_s:9.4f}"
        ratio = "" if row.ratio is None else f"{row.ratio:8.2f}"
        agree = "" if row.agree is None else f"{row.agree:8.1e}"
        lines.append(f"{row.case:34} {row.shape:30} {row.ours_s:9.4f} {row.reference:24} "
                     f"{ref:>9} {ratio:>8} {agree:>8}  {row.note}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto",
                        help="torch device: 'auto' (cuda if available, else cpu), 'cuda', "
                             "'cuda:1', 'cpu', ...")
    parser.add_argument("--small", action="store_true",
                        help="1/100 of the rows and of the ridge centres (a smoke run that "
                             "also fits a CPU)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case")
    parser.add_argument("--skip-cpu-reference", action="store_true",
                        help="do not fit the KernelRidge case on the CPU for its test RMSE")
    parser.add_argument("--only", choices=("features", "nystroem", "ridge"), action="append",
                        help="run only these families (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    torch = _torch()
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" \
        else args.device
    scale = 100 if args.small else 1
    sizes = {name: n // scale for name, n in SIZES.items()}
    families = args.only or ["features", "nystroem", "ridge"]
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU"
    print(machine_lines())
    print(f"device:     {device} ({name}); torch {torch.__version__}; float32; "
          f"repeats={args.repeats} (median){'; SMALL (1/100 of the rows)' if args.small else ''}")
    rows: list[Row] = []
    if "features" in families:
        rows += feature_rows(device, sizes["features"], args.repeats)
    if "nystroem" in families:
        rows += nystroem_rows(device, sizes["nystroem"], args.repeats)
    if "ridge" in families:
        rows += ridge_rows(device, sizes["ridge"], RIDGE_CENTRES // scale,
                           not args.skip_cpu_reference)
    print(_format(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": device, "device_name": name, "torch": torch.__version__,
                       "rows": [asdict(row) | {"ratio": row.ratio} for row in rows]}, fh,
                      indent=2)
    return rows


if __name__ == "__main__":
    main()
