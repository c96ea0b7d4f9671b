"""
Every scikit-learn map on digits: kernel error and accuracy
===========================================================

Each of the five maps of :mod:`sklearn.kernel_approximation`, from kernelmaps, on
scikit-learn's bundled digits data. For every map: the relative approximation error of its
kernel, ‖K − ZZᵀ‖_F / ‖K‖_F, on held-out rows — K from the kernel the fitted map
approximates, its ``kernel_`` — and the test accuracy of a linear classifier trained on the
features, next to the exact-kernel SVM as the baseline. Runs offline in a few seconds:

    python examples/plot_every_map_on_digits.py
"""

from __future__ import annotations

import time

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

import kernelmaps as km
from kernelmaps.evaluate import relative_error


def main() -> dict[str, tuple[float, float]]:
    """Print the table; return {map: (kernel error, accuracy)}."""
    X, y = load_digits(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)  # non-negative, as the chi² maps require
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    n_features = X.shape[1]
    gamma = 1.0 / (n_features * X_train.var())
    D = 1000
    maps = {
        "Nystroem (rbf)": km.Nystroem(gamma=gamma, n_components=D, random_state=0),
        "RBFSampler": km.RBFSampler(gamma=gamma, n_components=D, random_state=0),
        "PolynomialCountSketch": km.PolynomialCountSketch(
            gamma=1.0 / n_features, degree=2, coef0=1.0, n_components=D, random_state=0),
        "AdditiveChi2Sampler": km.AdditiveChi2Sampler(sample_steps=2),
        "SkewedChi2Sampler": km.SkewedChi2Sampler(skewedness=1.0, n_components=D,
                                                  random_state=0),
    }
    evaluation_rows = X_test[:300]
    print(f"digits: {X_train.shape[0]} train / {X_test.shape[0]} test rows, "
          f"{n_features} features, n_components={D}, gamma={gamma:.4g}\n")
    header = f"{'map':24s} {'n_out':>6s} {'kernel error':>13s} {'accuracy':>9s} {'time s':>7s}"
    print(header)
    print("-" * len(header))
    results = {}
    start = time.perf_counter()
    svm = SVC(kernel="rbf", gamma=gamma, C=10.0).fit(X_train, y_train)
    exact_score = svm.score(X_test, y_test)
    print(f"{'exact rbf SVM':24s} {'-':>6s} {0.0:13.4f} {exact_score:9.4f} "
          f"{time.perf_counter() - start:7.2f}")
    for name, feature_map in maps.items():
        start = time.perf_counter()
        Z_train = feature_map.fit_transform(X_train)
        Z_test = feature_map.transform(X_test)
        model = RidgeClassifier(alpha=1e-2).fit(Z_train, y_train)
        score = model.score(Z_test, y_test)
        elapsed = time.perf_counter() - start
        # kernel_ is the exact kernel the fitted map approximates (rbf, poly, χ², …).
        K = feature_map.kernel_(evaluation_rows)
        error = relative_error(K, feature_map.transform(evaluation_rows))
        print(f"{name:24s} {Z_train.shape[1]:6d} {error:13.4f} {score:9.4f} {elapsed:7.2f}")
        results[name] = (error, score)
    results["exact rbf SVM"] = (0.0, exact_score)
    return results


def plot(results: dict[str, tuple[float, float]]) -> None:
    """Kernel error and accuracy per map, side by side."""
    names = list(results)
    _, (ax_error, ax_score) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
    ax_error.barh(names, [results[n][0] for n in names], color="C0")
    ax_error.set(xlabel="relative kernel error ‖K − ZZᵀ‖_F / ‖K‖_F", title="Kernel error")
    ax_score.barh(names, [results[n][1] for n in names], color="C2")
    ax_score.set(xlabel="test accuracy", xlim=(0.8, 1.0), title="Ridge classifier on z(x)")
    ax_score.set_yticklabels([])
    ax_error.invert_yaxis()
    ax_score.invert_yaxis()
    plt.show()


if __name__ == "__main__":
    plot(main())
