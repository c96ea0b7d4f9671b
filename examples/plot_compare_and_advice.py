"""
Which map, how many components? ``compare`` and ``advise``
==========================================================

:func:`kernelmaps.evaluate.compare` runs feature maps at several output dimensions and seeds
next to the exact kernel (the same linear model on the exact feature map of the training
set), and :func:`kernelmaps.evaluate.advise` answers the question: for each method, the
smallest dimension whose score is within a tolerance of the exact score, and the fastest
method that gets there. This is what ``kernelmaps compare`` runs and reports.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits

from kernelmaps.evaluate import (
    advise,
    compare,
    median_heuristic,
    plot_error,
    plot_pareto,
    plot_score,
    summarize,
)
from kernelmaps.kernels import get_kernel

# %%
# Digits, the Gaussian kernel with γ by the median heuristic, three maps, two seeds.
X, y = load_digits(return_X_y=True)
gamma = median_heuristic(X, "rbf").value
table = compare(X, y, kernel=get_kernel("rbf", gamma=gamma),
                methods=["nystroem", "rbf_sampler", "orthogonal"],
                n_components=[50, 100, 200, 400], n_seeds=2, random_state=0)
summary = summarize(table)
print(summary[["method", "n_components", "error", "score", "total_time_s"]].to_string())

# %%
# What to use: within 1 % of the exact score.
advice = advise(summary, tolerance=0.01)
print(advice[["method", "n_components", "score", "total_time_s"]].to_string())

# %%
# The report's plots: kernel error and test score against D, and score against time with
# the Pareto front.
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")
plot_error(table, ax=axes[0])
plot_score(table, ax=axes[1])
plot_pareto(table, ax=axes[2])
plt.show()
