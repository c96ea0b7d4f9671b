"""
Scaling out with Dask: feature maps and ridge on a chunked array
================================================================

Given a Dask array (``dask.array``), the same estimators work chunk by chunk on Dask's scheduler:
a map's ``transform`` is lazy, and :class:`kernelmaps.distributed.FeatureRidge` fits ridge
regression on z(X) from one pass (per-chunk ZᵀZ and Zᵀy, summed by Dask's tree reduction),
without ever materialising the features. Here a small in-process cluster (threads); the same
code runs on a cluster of machines.
"""

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from kernelmaps import RBFSampler
from kernelmaps.distributed import FeatureRidge

# %%
# An in-process cluster: one worker with two threads (``processes=False`` keeps this example
# light; use worker processes or a real cluster for real work).
cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                       dashboard_address=None)
client = Client(cluster)

# %%
# 200,000 rows generated on the workers in chunks of 25,000: nothing is held by the client.
rng = da.random.default_rng(0)
X = rng.uniform(-1, 1, size=(200_000, 10), chunks=(25_000, 10))
y = da.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(200_000,
                                                                         chunks=25_000)

# %%
# The lazy transform: a Dask array of features, one task per chunk.
feature_map = RBFSampler(gamma=0.1, n_components=300, random_state=0)
Z = feature_map.fit(X).transform(X)
print(f"features: {Z.shape}, {Z.numblocks[0]} chunks, nothing computed yet")

# %%
# Ridge on z(X) in one pass; the score is computed on the cluster too.
ridge = FeatureRidge(RBFSampler(gamma=0.1, n_components=300, random_state=0), alpha=1e-3)
ridge.fit(X, y)
print(f"R² on the first 25,000 rows: {ridge.score(X[:25_000], y[:25_000]):.3f}")

# %%
# Predictions are lazy Dask arrays; compute a few thousand to look at them.
X_look = X[:3000].compute()
predicted = ridge.predict(X[:3000]).compute()
truth = np.sin(2 * X_look[:, 0]) + X_look[:, 1] * X_look[:, 2]
fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
ax.scatter(truth, predicted, s=3, alpha=0.5)
ax.plot([-2, 2], [-2, 2], "k--", linewidth=1)
ax.set(xlabel="f(x) without noise", ylabel="FeatureRidge prediction",
       title="FeatureRidge on 200,000 rows in 8 chunks")
plt.show()

client.close()
cluster.close()
