r"""Fair terms for :func:`~kernelmaps.evaluate.compare`: ridge's α chosen per row, and how far
a row's score is from the exact kernel's.

:class:`SelectAlpha` is the model factory of ``compare(model="ridge")`` without a fixed
``alpha``: every row — each map × D and the exact baseline — gets its α by exact
leave-one-out on its own training rows over the same grid, from one eigendecomposition
(:func:`kernelmaps.tuning.ridge_alpha_path` on the features, the same identity on the
centred kernel matrix for the baseline, :func:`kernelmaps.tuning.kernel_alpha_path`, on a
subsample of the training rows when they are many), scored as :func:`kernelmaps.tune` scores
(accuracy, ties broken by the squared error of the ±1 class codes; R² for regression). One
fixed α favours whichever row it happens to suit.

:func:`test_losses` and :func:`difference_se` measure whether a row that scores above the
exact kernel does so beyond the test split's noise: the score difference of two models on
the same test rows is a mean of per-row loss differences :math:`d_i`, whose standard error is
:math:`\operatorname{sd}(d)/\sqrt{n}` (a paired comparison: the rows both models find hard
cancel out). Private to :mod:`kernelmaps.evaluate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import Ridge, RidgeClassifier

# Per test row: 1 for a wrong class or the squared residual — the ridge core's one scoring.
from kernelmaps._ridge.scoring import difference_se
from kernelmaps._ridge.scoring import row_losses as test_losses

__all__ = ["SelectAlpha", "difference_se", "test_losses"]


@dataclass(frozen=True)
class SelectAlpha:
    """The model factory of a comparison whose ridge α is chosen per row.

    Called, it gives the unfitted ridge model of the task (what ``compare`` reports as the
    model, and what a run falls back to); the runs see this class and choose α instead.
    """

    alphas: np.ndarray
    task: str

    def __call__(self) -> Ridge | RidgeClassifier:
        return RidgeClassifier() if self.task == "classification" else Ridge()
