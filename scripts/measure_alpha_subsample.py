"""How an α chosen by exact leave-one-out on m training rows carries to all n of them.

The measurement behind ``kernelmaps._ridge.alpha_subsample_rows`` (docs/cli.md, "How α is
chosen for the exact baseline"). For each data set: a stratified 75 % training split, the
RBF kernel at the CLI's median-heuristic γ on the unscaled features, the α path on all n
training rows (one n × n eigendecomposition: its leave-one-out accuracy at any α, and the
test accuracy at any α), then the α path on m rows (three uniform subsamples), and the full
path's LOO and test accuracy at that α carried over three ways: unchanged, ×√(n/m), ×n/m.

    python scripts/measure_alpha_subsample.py wine breast_cancer digits
    python scripts/measure_alpha_subsample.py synthetic26 fashion --ratios 3,4
    python scripts/measure_alpha_subsample.py synthetic26_8k fashion8k --ratios rule

``fashion`` needs Fashion-MNIST's IDX files (``apt-get install dataset-fashion-mnist``);
``synthetic26`` is ``make_classification`` with 26 classes and 16 integer features 0…15 (like
UCI letter), made here: no data is downloaded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_classification
from sklearn.model_selection import train_test_split

from kernelmaps._linalg import psd_spectrum
from kernelmaps._ridge import alpha_subsample_rows, encode_targets, kernel_alpha_path
from kernelmaps._ridge.path import _loo_scores
from kernelmaps.cli.data import load_dataset  # the CLI's IDX reader
from kernelmaps.evaluate.heuristics import median_heuristic
from kernelmaps.kernels import resolve_kernel


def synthetic(n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """26 classes, 16 integer-valued features 0…15 (the shape of UCI letter)."""
    X, y = make_classification(n_samples=n, n_features=16, n_informative=12, n_redundant=2,
                               n_classes=26, n_clusters_per_class=1, class_sep=1.5,
                               random_state=seed)
    low, high = np.percentile(X, 1, axis=0), np.percentile(X, 99, axis=0)
    return np.clip(np.round((X - low) / (high - low) * 15), 0, 15), y


def fashion(n: int) -> tuple[np.ndarray, np.ndarray]:
    data = load_dataset("fashion-mnist")
    rows = np.random.RandomState(0).choice(data.X.shape[0], n, replace=False)
    return np.asarray(data.X[rows], dtype=np.float64), np.asarray(data.y)[rows]


DATA = {
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "synthetic26": lambda: tuple(a[:6000] for a in synthetic()),
    "synthetic26_8k": lambda: tuple(a[:8000] for a in synthetic()),
    "fashion": lambda: fashion(6000),
    "fashion8k": lambda: fashion(8000),
}


def centred(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = K.mean(axis=1)
    return K - r[:, None] - r[None, :] + r.mean(), r


def measure(name: str, ratios: list[int | None]) -> None:
    X, y = DATA[name]()
    X = np.asarray(X, dtype=np.float64)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0,
                                                        stratify=y)
    n = X_train.shape[0]
    gamma = median_heuristic(X_train, "rbf").value
    kernel = resolve_kernel("rbf", gamma=gamma)
    K = np.asarray(kernel(X_train, X_train))
    K_test = np.asarray(kernel(X_test, X_train))
    K_centred, row_means = centred(K)
    Y, classes = encode_targets(y_train, n, "classification")
    y_mean = Y.mean(axis=0)
    started = time.perf_counter()
    lam, U = psd_spectrum(K_centred.copy(), driver="evd")
    seconds = time.perf_counter() - started
    root = np.sqrt(lam)
    P, UtY = U * root, U.T @ (Y - y_mean)
    K_test_centred = K_test - row_means[None, :]
    K_test_centred -= K_test_centred.mean(axis=1, keepdims=True)

    def loo(alpha: float) -> float:
        scores, _ = _loo_scores(lam, P, root[:, None] * UtY, n, y_mean, Y,
                                np.atleast_1d(alpha), "classification", classes,
                                np.asarray(y_train))
        return float(scores[0])

    def test(alpha: float) -> float:
        predicted = K_test_centred @ (U @ (UtY / (lam + alpha)[:, None])) + y_mean
        labels = (classes[predicted.argmax(axis=1)] if predicted.shape[1] > 1
                  else classes[(predicted[:, 0] > 0).astype(int)])
        return float(np.mean(labels == y_test))

    full = kernel_alpha_path(K_centred.copy(), y_train, task="classification")
    se = np.sqrt(full.score * (1 - full.score) / n)
    print(f"\n## {name}: n_train={n} d={X.shape[1]} classes={classes.size} gamma={gamma:.3g} "
          f"eigh {seconds:.1f}s")
    print(f"full path: alpha={full.alpha:.3g} LOO={full.score:.4f} (SE {se:.4f}) "
          f"test={test(full.alpha):.4f}")
    for ratio in ratios:
        m = alpha_subsample_rows(n) if ratio is None else n // ratio
        for seed in range(3):
            rows = np.sort(np.random.RandomState(seed).choice(n, m, replace=False))
            sub = kernel_alpha_path(centred(K[np.ix_(rows, rows)])[0], y_train[rows],
                                    task="classification")
            cells = [f"{label}: a={alpha:.3g} LOO={loo(alpha):.4f} test={test(alpha):.4f}"
                     for label, alpha in (("const", sub.alpha),
                                          ("sqrt", sub.alpha * np.sqrt(n / m)),
                                          ("n/m", sub.alpha * n / m))]
            print(f"m={m} (n/{n / m:.2f}) seed={seed} alpha_m={sub.alpha:.3g} | "
                  + " | ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", choices=sorted(DATA))
    parser.add_argument("--ratios", default="3,4",
                        help="m = n // ratio, comma-separated; 'rule': alpha_subsample_rows(n)")
    args = parser.parse_args()
    ratios = [None if r == "rule" else int(r) for r in args.ratios.split(",")]
    for name in args.data:
        measure(name, ratios)


if __name__ == "__main__":
    main()
