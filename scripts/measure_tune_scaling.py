"""``kernelmaps.tune`` deciding scaling (``scale="auto"``, compare's scale rule) against
``scale="none"`` (tune before it decided scaling) and a ``GridSearchCV`` that standardises
first (``StandardScaler`` + ``SVC(kernel="rbf")``, C × γ grid, 5-fold), on a held-out 30 %
test split (stratified, seed 0). ``python scripts/measure_tune_scaling.py``.

Data: breast_cancer, wine (scikit-learn) and a heavy-tailed set made here, shaped like raw
word and capital-run frequencies: 15 zero-inflated log-normal "frequencies" (most rows 0,
the rest of order 0.1–1) and 3 Pareto "run lengths" (tail index 1.5, up to thousands), the
class a logistic function of a few log-frequencies and the log run length.
"""

import os
import time

import numpy as np
from sklearn import datasets
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import kernelmaps


def heavy_tailed(n=2000, seed=0):
    rng = np.random.RandomState(seed)
    words = rng.lognormal(mean=-1.5, sigma=1.0, size=(n, 15)) * (rng.rand(n, 15) < 0.3)
    runs = 10.0 * (rng.pareto(1.5, size=(n, 3)) + 1.0)
    logit = (3.0 * np.log1p(10 * words[:, :4]).sum(axis=1)
             - 2.0 * np.log1p(10 * words[:, 4:6]).sum(axis=1)
             + 1.2 * np.log(runs[:, 0]) - 4.0)
    y = (rng.rand(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return np.hstack([words, runs]), y


SETS = {"heavy_tailed": heavy_tailed,
        "breast_cancer": lambda: datasets.load_breast_cancer(return_X_y=True),
        "wine": lambda: datasets.load_wine(return_X_y=True)}

print(f"load {os.getloadavg()[0]:.2f}; test accuracy (time s)")
print(f"{'data':<14} {'tune none':>16} {'tune auto':>16} {'grid std+SVC':>16}  auto chose")
for name, load in SETS.items():
    X, y = load()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    cells = []
    for scale in ("none", "auto"):
        t = time.perf_counter()
        result = kernelmaps.tune(X_tr, y_tr, random_state=0, scale=scale)
        cells.append(f"{result.estimator.score(X_te, y_te):.4f} ({time.perf_counter() - t:.1f})")
        chosen = result.scale
    t = time.perf_counter()
    gamma = 1.0 / X_tr.shape[1]  # 'scale' on standardised data
    grid = GridSearchCV(make_pipeline(StandardScaler(), SVC()),
                        {"svc__C": 10.0 ** np.arange(-1, 4),
                         "svc__gamma": gamma * 2.0 ** np.arange(-3, 4)}, cv=5).fit(X_tr, y_tr)
    cells.append(f"{grid.score(X_te, y_te):.4f} ({time.perf_counter() - t:.1f})")
    print(f"{name:<14} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16}  {chosen}", flush=True)
