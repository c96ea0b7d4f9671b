"""The γ rule for the main job: 1/d (``gamma=None``), scikit-learn's ``"scale"`` and the
median heuristic, measured by the exact-kernel ridge score (α by leave-one-out on the training
rows) of ``kernelmaps.compare`` with 5-fold cross-validation, unscaled data (compare's
default) and standardised data. ``python scripts/measure_gamma_rule.py``."""

import warnings

import numpy as np
from sklearn import datasets
from sklearn.preprocessing import StandardScaler

from kernelmaps.evaluate import compare, median_heuristic
from kernelmaps.kernels import RBFKernel

SETS = {"wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer,
        "digits": datasets.load_digits, "diabetes": datasets.load_diabetes}


def exact_score(X, y, kernel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare(X, y, kernel=kernel, methods=["nystroem"], n_components=[20],
                        n_seeds=1, cv=5, random_state=0, error_sample=50, n_jobs=1)
    exact = table[table.method == "exact"]["score"]
    return float(exact.mean()), float(exact.std(ddof=1) / np.sqrt(exact.size))


print(f"{'data':<14} {'scaling':<9} {'1/d':>15} {'scale':>15} {'median':>15}")
for name, load in SETS.items():
    X, y = load(return_X_y=True)
    for scaling in ("none", "standard"):
        Z = X if scaling == "none" else StandardScaler().fit_transform(X)
        rules = {"1/d": RBFKernel(),
                 "scale": RBFKernel(gamma=1.0 / (Z.shape[1] * Z.var())),
                 "median": RBFKernel(gamma=median_heuristic(Z, "rbf").value)}
        cells = [f"{m:.3f}±{s:.3f}" for m, s in (exact_score(Z, y, k) for k in rules.values())]
        gammas = " ".join(f"{k.gamma if k.gamma else 1 / Z.shape[1]:.3g}" for k in rules.values())
        print(f"{name:<14} {scaling:<9} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15}   γ: {gammas}",
              flush=True)
