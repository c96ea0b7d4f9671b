"""
Kernel methods on explicit features: one-class SVM, kernel PCA, kernel CCA
==========================================================================

A feature map z with z(x)·z(y) ≈ k(x, y) turns a linear algorithm into a kernel algorithm:
fit the linear algorithm on z(X). Three of the kernel methods of the kernel methods guide,
each next to its exact counterpart:

* novelty detection: :class:`~kernelmaps.Nystroem` + scikit-learn's ``SGDOneClassSVM``
  against ``OneClassSVM``;
* kernel PCA: :class:`~kernelmaps.Nystroem` + ``PCA`` against ``KernelPCA``;
* kernel CCA: :class:`kernelmaps.models.KernelCCA`, which finds the non-linear relation
  between two views that linear CCA cannot see.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cross_decomposition import CCA
from sklearn.datasets import make_circles
from sklearn.decomposition import PCA, KernelPCA
from sklearn.linear_model import SGDOneClassSVM
from sklearn.pipeline import make_pipeline
from sklearn.svm import OneClassSVM

from kernelmaps import Nystroem
from kernelmaps.models import KernelCCA

# %%
# **One-class SVM.** Inliers from two Gaussian clusters; the decision boundaries of the
# exact model (black) and of Nyström features + SGD (red) nearly coincide.
rng = np.random.RandomState(42)
centres = np.array([[-2.0, -2.0], [2.0, 2.0]])
X_train = centres[rng.randint(2, size=1000)] + 0.7 * rng.normal(size=(1000, 2))
exact = OneClassSVM(gamma=0.5, nu=0.05).fit(X_train)
approx = make_pipeline(Nystroem(gamma=0.5, n_components=200, random_state=0),
                       SGDOneClassSVM(nu=0.05, tol=1e-4, random_state=0)).fit(X_train)
grid_x, grid_y = np.meshgrid(np.linspace(-6, 6, 150), np.linspace(-6, 6, 150))
grid = np.c_[grid_x.ravel(), grid_y.ravel()]
agreement = np.mean(exact.predict(grid) == approx.predict(grid))
print(f"one-class: same inlier/outlier decision on {agreement:.1%} of the grid")

# %%
# **Kernel PCA.** PCA of Nyström features is kernel PCA (centring z(X) is centring the
# kernel matrix); on two concentric circles the first component separates them.
X_circles, circle = make_circles(n_samples=600, factor=0.3, noise=0.05, random_state=0)
kpca = KernelPCA(n_components=2, kernel="rbf", gamma=5.0).fit(X_circles)
approx_pca = make_pipeline(Nystroem(gamma=5.0, n_components=150, random_state=0),
                           PCA(n_components=2)).fit(X_circles)
exact_1 = kpca.transform(X_circles)[:, 0]
approx_1 = approx_pca.transform(X_circles)[:, 0]
correlation = abs(np.corrcoef(exact_1, approx_1)[0, 1])
print(f"kernel PCA: first components correlate at {correlation:.4f}")

# %%
# **Kernel CCA.** One hidden variable t; the first view sees t, the second only t². Linear
# CCA finds no correlation (corr(t, t²) = 0 for a symmetric t); kernel CCA finds it.
t = rng.uniform(-1, 1, size=600)
view_x = np.c_[t, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
view_y = np.c_[t ** 2, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
kcca = KernelCCA(n_components=1, reg=1e-3, random_state=0).fit(view_x[:400], view_y[:400])
u, v = kcca.transform(view_x[400:], view_y[400:])
linear = CCA(n_components=1).fit(view_x[:400], view_y[:400])
lu, lv = linear.transform(view_x[400:], view_y[400:])
print(f"kernel CCA held-out correlation {kcca.score(view_x[400:], view_y[400:]):.3f}, "
      f"linear CCA {abs(np.corrcoef(lu[:, 0], lv[:, 0])[0, 1]):.3f}")

# %%
# The three side by side: the one-class boundaries (exact in black, approximate in red), the
# first kernel principal component of each point by both methods (coloured by circle), and
# the first canonical variates of the held-out rows.
fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained")
ax = axes[0]
ax.scatter(X_train[:, 0], X_train[:, 1], s=3, color="0.6")
for model, color in ((exact, "k"), (approx, "C3")):
    ax.contour(grid_x, grid_y, model.decision_function(grid).reshape(grid_x.shape),
               levels=[0], colors=color)
ax.set(title="One-class SVM: exact (black), Nystroem + SGD (red)", xlabel="x₁", ylabel="x₂")
ax = axes[1]
ax.scatter(exact_1, np.sign(np.dot(exact_1, approx_1)) * approx_1,  # signs are arbitrary
           c=circle, cmap="coolwarm", s=6)
ax.set(title="Kernel PCA, first component", xlabel="KernelPCA (exact)",
       ylabel="Nystroem(150) + PCA")
ax = axes[2]
ax.scatter(u[:, 0], v[:, 0], s=6, label="KernelCCA")
ax.scatter(lu[:, 0], lv[:, 0], s=6, label="linear CCA", alpha=0.6)
ax.set(title="Canonical variates on held-out rows", xlabel="first view",
       ylabel="second view")
ax.legend()
plt.show()
