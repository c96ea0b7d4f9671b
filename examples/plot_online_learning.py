"""
Online learning on Fashion-MNIST: the guide's SGD recipe against exact streaming ridge
======================================================================================

scikit-learn's *Kernel Approximation* guide recommends explicit feature maps for online
learning, with a map and :class:`~sklearn.linear_model.SGDClassifier` fed chunk by chunk.
Here the images arrive in batches of 1,000, and three models see them at the same number of
random Fourier features D:

* the guide's recipe: ``RBFSampler.partial_fit`` + ``transform``, then
  ``SGDClassifier.partial_fit`` on the features, one pass;
* :class:`~kernelmaps.models.FeatureRidgeClassifier` ``.partial_fit``, which sums the
  sufficient statistics of ridge on z(X) — after the last batch it *is* the batch fit;
* the batch ``fit`` on all the rows at once, for reference.

Accuracy on the official test images, and rows per second of the training pass. A
subsample (12,000 training and 2,000 test images) keeps the example at a few seconds.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier

from kernelmaps import RBFSampler
from kernelmaps.cli.data import FASHION_MNIST_DIR, read_idx
from kernelmaps.models import FeatureRidgeClassifier

# %%
# The IDX files as they are on disk (uint8 pixels, 47 MB for all 60,000 training images);
# each batch is scaled to [0, 1] in float32 when it is used, as a stream from disk would be.
images = read_idx(f"{FASHION_MNIST_DIR}/train-images-idx3-ubyte.gz").reshape(60_000, -1)
labels = read_idx(f"{FASHION_MNIST_DIR}/train-labels-idx1-ubyte.gz")
test_images = read_idx(f"{FASHION_MNIST_DIR}/t10k-images-idx3-ubyte.gz").reshape(10_000, -1)
test_labels = read_idx(f"{FASHION_MNIST_DIR}/t10k-labels-idx1-ubyte.gz")
keep = np.random.default_rng(0).permutation(60_000)[:12_000]
images, labels = images[keep], labels[keep]
X_test = test_images[:2_000].astype(np.float32) / 255
y_test = test_labels[:2_000]
classes = np.arange(10)
BATCH, D, GAMMA = 1_000, 1_000, 0.01  # γ ≈ 1 / (784 · pixel variance), numeric: data-free


def batches():
    for start in range(0, len(images), BATCH):
        yield (images[start:start + BATCH].astype(np.float32) / 255,
               labels[start:start + BATCH])


def sampler():
    return RBFSampler(n_components=D, gamma=GAMMA, random_state=0)


# %%
# One pass of each online learner over the same stream; the test accuracy after each batch
# draws its learning curve.
sgd_map, sgd = sampler(), SGDClassifier(random_state=0)
ridge = FeatureRidgeClassifier(sampler(), alpha=1.0)
curves = {"map + SGDClassifier.partial_fit": [], "FeatureRidgeClassifier.partial_fit": []}
seconds = dict.fromkeys(curves, 0.0)
rows_seen = 0
for X_batch, y_batch in batches():
    start = time.perf_counter()
    sgd.partial_fit(sgd_map.partial_fit(X_batch).transform(X_batch), y_batch, classes=classes)
    seconds["map + SGDClassifier.partial_fit"] += time.perf_counter() - start
    start = time.perf_counter()
    ridge.partial_fit(X_batch, y_batch, classes=classes)
    seconds["FeatureRidgeClassifier.partial_fit"] += time.perf_counter() - start
    if rows_seen == 0:  # the map is fixed after its first batch: the test features too
        Z_test = sgd_map.transform(X_test)
    rows_seen += len(X_batch)
    curves["map + SGDClassifier.partial_fit"].append(sgd.score(Z_test, y_test))
    curves["FeatureRidgeClassifier.partial_fit"].append(ridge.score(X_test, y_test))

# %%
# The batch fit on all 12,000 rows at once.
X_all = images.astype(np.float32) / 255
start = time.perf_counter()
batch = FeatureRidgeClassifier(sampler(), alpha=1.0).fit(X_all, labels)
seconds["FeatureRidgeClassifier.fit (batch)"] = time.perf_counter() - start
same = np.abs(ridge.coef_ - batch.coef_).max() / np.abs(batch.coef_).max()

print(f"{'training pass':36} {'test accuracy':>13} {'rows/s':>8}")
finals = {**{name: curve[-1] for name, curve in curves.items()},
          "FeatureRidgeClassifier.fit (batch)": batch.score(X_test, y_test)}
for name, accuracy in finals.items():
    print(f"{name:36} {accuracy:13.3f} {len(images) / seconds[name]:8,.0f}")
print(f"partial_fit's coefficients against fit's: {same:.0e} (relative)")

# %%
# SGD's accuracy depends on where its learning-rate schedule has got to; ridge's statistics
# give the minimiser after every batch, so its curve is the batch fit on the rows so far.
# (The rates above include each learner's own transform; ridge's also adds each batch's
# ``D × D`` update and solves again for every test score drawn here.)
fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
rows = BATCH * np.arange(1, len(images) // BATCH + 1)
for name, curve in curves.items():
    ax.plot(rows, curve, marker="o", markersize=3, label=name)
ax.axhline(finals["FeatureRidgeClassifier.fit (batch)"], color="k", linestyle="--",
           linewidth=1, label="FeatureRidgeClassifier.fit on all rows")
ax.set(xlabel="training rows seen", ylabel="test accuracy (2,000 images)",
       title=f"Fashion-MNIST, one pass in batches of {BATCH:,}, D = {D:,}")
ax.legend(loc="lower right")
plt.show()
