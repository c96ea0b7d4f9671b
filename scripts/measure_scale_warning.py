"""Does standardising the features help the exact kernel, and does the scale warning say so?

For each data set: the exact-kernel score of ``kernelmaps compare`` (the default ridge model,
Gaussian kernel with its scale from the median heuristic on the data as the maps see it),
5-fold cross-validated, without and with ``StandardScaler`` (fitted on each training fold),
the paired difference per fold with its standard error, and what the scale warnings say:
:func:`kernelmaps.evaluate.check_scales` (the rule in use) and the ratio of the largest to
the smallest feature standard deviation above 100 (the rule it replaced).

"Helps" means the mean paired difference is above two standard errors; "hurts" below minus
two; else "no change". The rule should fire exactly where scaling helps.

Run: ``python scripts/measure_scale_warning.py`` (about a minute on one core; Fashion-MNIST
is skipped when Debian's ``dataset-fashion-mnist`` package is not installed). Prints a
Markdown table (docs/cli.md, *Feature scales*) and the load average.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from kernelmaps import evaluate
from kernelmaps.cli.data import DataError, load_dataset
from kernelmaps.kernels import resolve_kernel

FOLDS = 5
#: The rule replaced: the largest over the smallest feature standard deviation above this.
OLD_RATIO = 100.0


def mixed_scales(X: np.ndarray, seed: int) -> np.ndarray:
    """Columns multiplied by 10^u, u uniform in [-2, 3]: the same information, in units
    that differ by up to five orders of magnitude (as in a table of prices, counts, rates)."""
    return X * 10.0 ** np.random.RandomState(seed).uniform(-2, 3, X.shape[1])


def data_sets() -> Iterator[tuple[str, np.ndarray, np.ndarray, str]]:
    for name in ("wine", "breast_cancer", "digits", "diabetes", "iris"):
        data = load_dataset(name)
        yield name, data.X, data.y, "scikit-learn"
    try:
        data = load_dataset("fashion-mnist")
    except DataError:
        print("fashion-mnist: not installed, skipped")
    else:
        keep, _ = train_test_split(np.arange(data.X.shape[0]), train_size=3000,
                                   stratify=data.y, random_state=0)
        yield ("fashion-mnist", np.asarray(data.X[keep], dtype=float), data.y[keep],
               "3,000 training images, stratified")
    X, y = make_classification(2000, 10, n_informative=5, random_state=0)
    yield "mixed-scale classes", mixed_scales(X, 0), y, "make_classification, 10 features"
    X, _ = make_regression(1000, 8, random_state=0)
    y = 50 * np.sin(X[:, 0]) + 10 * X[:, 1] ** 2 + 5 * X[:, 2:].sum(axis=1)
    yield "mixed-scale regression", mixed_scales(X, 1), y, "8 features, nonlinear target"


def exact_scores(X: np.ndarray, y: np.ndarray, scale: str) -> np.ndarray:
    """The exact-kernel score per fold, as ``kernelmaps compare --cv 5 --scale SCALE``."""
    seen = X if scale == "none" else StandardScaler().fit_transform(X)
    kind = resolve_kernel("rbf")
    gamma = evaluate.median_heuristic(seen, kind, random_state=0).value
    kernel = resolve_kernel("rbf", kernel_params={"gamma": gamma})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = evaluate.compare(X, y, kernel=kernel, methods=["nystroem"], n_components=[10],
                                 n_seeds=1, exact=True, cv=FOLDS, scale=scale, n_jobs=1,
                                 random_state=0)
    return table.loc[table["method"] == "exact", "score"].to_numpy()


def main() -> None:
    print(f"load average before: {os.getloadavg()}")
    header = ("| data | rows × features | drowned features | largest share | σ max/min "
              "| exact score | scaled | difference (± s.e.) | scaling | check_scales "
              "| old rule |")
    print(header)
    print("|" + "---|" * 11)
    agree = True
    for name, X, y, source in data_sets():
        check = evaluate.check_scales(X)
        ratio = evaluate.scale_ratio(X)
        raw, scaled = exact_scores(X, y, "none"), exact_scores(X, y, "standard")
        difference = scaled - raw
        error = difference.std(ddof=1) / np.sqrt(difference.size)
        mean = difference.mean()
        verdict = ("helps" if mean > 2 * error and mean > 0 else
                   "hurts" if mean < -2 * error and mean < 0 else "no change")
        agree &= check.advised == (verdict == "helps")
        print(f"| {name} ({source}) | {X.shape[0]} × {X.shape[1]} | {check.n_drowned} of "
              f"{check.n_features} | {check.largest_share:.3f} | {ratio:.3g} | "
              f"{raw.mean():.4f} | {scaled.mean():.4f} | {mean:+.4f} ± {error:.4f} | "
              f"{verdict} | {'warns' if check.advised else '—'} | "
              f"{'warns' if ratio > OLD_RATIO else '—'} |", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("check_scales warns exactly where scaling helps:", "yes" if agree else "NO")


if __name__ == "__main__":
    main()
