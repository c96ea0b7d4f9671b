"""The ridge core: what every ridge in kernelmaps shares, written once, below the layers that
use it (``models``, ``evaluate``, ``tuning``); it imports only NumPy, SciPy, scikit-learn and
kernelmaps' low-level helpers (``_linalg``, ``_array_api``).

``checks``
    α validation (a grid, one α or one per target, compare's α) and ``cv``;
``labels``
    labels → ±1 codes (``LabelBinarizer``) and scores → labels (the one decoding rule);
``scoring``
    per-row losses, path scores, and the one tie rule (score, then squared error, then the
    larger α);
``exact``
    exact kernel ridge solves: one Cholesky factorisation per distinct α, in place;
``path``
    ``ridge_alpha_path`` on features (exact leave-one-out or k folds, one decomposition);
``holdout``
    ridge from sums over row blocks (features never held whole), α chosen on held-out rows;
``kernel_path``
    ``kernel_alpha_path`` on a centred kernel matrix, and α chosen on a subsample of its rows
    (``alpha_subsample_rows``) for the exact baseline at scale.

The public names are re-exported by :mod:`kernelmaps.tuning`.
"""

from kernelmaps._ridge.checks import (
    check_alpha,
    check_alphas,
    check_cv,
    check_fixed_alpha,
)
from kernelmaps._ridge.exact import (
    centred_dual_in_place,
    lower_factor_in_place,
    solve_shifted_in_place,
)
from kernelmaps._ridge.holdout import FeatureSums, HoldoutPath, holdout_alpha_path
from kernelmaps._ridge.kernel_path import (
    KernelAlphaPath,
    alpha_subsample_rows,
    centre_kernel_in_place,
    kernel_alpha_path,
    subsample_kernel_alpha,
)
from kernelmaps._ridge.labels import (
    check_target,
    encode_labels,
    encode_targets,
    label_binarizer,
    labels_from_scores,
)
from kernelmaps._ridge.path import DEFAULT_ALPHAS, AlphaPath, honest_rows, ridge_alpha_path
from kernelmaps._ridge.scoring import (
    best_index,
    difference_se,
    path_scores,
    ranking_score,
    row_losses,
)

__all__ = [
    "DEFAULT_ALPHAS",
    "AlphaPath",
    "FeatureSums",
    "HoldoutPath",
    "KernelAlphaPath",
    "alpha_subsample_rows",
    "best_index",
    "centre_kernel_in_place",
    "centred_dual_in_place",
    "check_alpha",
    "check_alphas",
    "check_cv",
    "check_fixed_alpha",
    "check_target",
    "difference_se",
    "encode_labels",
    "encode_targets",
    "holdout_alpha_path",
    "honest_rows",
    "kernel_alpha_path",
    "label_binarizer",
    "labels_from_scores",
    "lower_factor_in_place",
    "path_scores",
    "ranking_score",
    "ridge_alpha_path",
    "row_losses",
    "solve_shifted_in_place",
    "subsample_kernel_alpha",
]
