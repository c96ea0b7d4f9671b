r"""A pipeline that forwards ``partial_fit``: a feature map and an online model in one object.

scikit-learn's :class:`~sklearn.pipeline.Pipeline` has no ``partial_fit`` (scikit-learn RFC
#4834), so the *Kernel Approximation* guide's online recipe — a random feature map and
:class:`~sklearn.linear_model.SGDClassifier` — is a hand-written loop. For ridge the one
object is :class:`~kernelmaps.models.FeatureRidge` / ``FeatureRidgeClassifier``, which hold
their map and whose ``partial_fit`` is exact; :class:`StreamingPipeline` is the one object
for any other online model.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import _fit_context
from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

__all__ = ["StreamingPipeline", "make_streaming_pipeline"]


def _final_has_partial_fit(pipeline: StreamingPipeline) -> bool:
    final = pipeline._final_estimator
    return final == "passthrough" or hasattr(final, "partial_fit")


class StreamingPipeline(Pipeline):
    """A scikit-learn :class:`~sklearn.pipeline.Pipeline` that forwards ``partial_fit``.

    ``partial_fit(X, y)`` runs, for each step in order, that step's ``partial_fit`` on the
    batch as the previous steps transformed it, then passes the batch on through the step's
    ``transform``; the last step gets ``partial_fit(Xt, y, **params)`` (``classes=`` for a
    classifier, as its first call needs). A transformer step without ``partial_fit`` is used
    as it is if it is fitted (a scaler fitted on a sample, say), and is an error otherwise.

    The data-free maps of kernelmaps (random features with a numeric γ, the sketches, the
    histogram maps) fit on their first ``partial_fit`` and then only check the width, so
    every batch gets the same features. Maps whose fit reads rows (Nyström,
    ``gamma="scale"``, principal axes) have no ``partial_fit``: fit them on a sample first.
    Everything else — ``fit``, ``predict``, ``score``, ``set_output``, parameters as
    ``step__param``, ``named_steps`` — is :class:`~sklearn.pipeline.Pipeline`'s.

    Parameters
    ----------
    steps : list of tuples
        ``(name, estimator)`` pairs: transformers, then the final estimator.
    transform_input : list of str, default=None
        As :class:`~sklearn.pipeline.Pipeline`.
    memory : str or object with the joblib.Memory interface, default=None
        As :class:`~sklearn.pipeline.Pipeline` (used by ``fit`` only).
    verbose : bool, default=False
        As :class:`~sklearn.pipeline.Pipeline`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The final classifier's classes.
    n_features_in_ : int
        Number of features seen by the first step.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen by the first step, when they are strings.

    See Also
    --------
    make_streaming_pipeline : The same, with the step names made from the classes.
    kernelmaps.models.FeatureRidge : Ridge on a map's features; ``partial_fit`` is exact.

    Examples
    --------
    The *Kernel Approximation* guide's online recipe, two lines per batch:

    >>> import numpy as np
    >>> from sklearn.linear_model import SGDClassifier
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.models import make_streaming_pipeline
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> model = make_streaming_pipeline(RBFSampler(gamma=1.0, n_components=200,
    ...                                            random_state=0),
    ...                                 SGDClassifier(random_state=0))
    >>> for start in range(0, 2000, 500):
    ...     model = model.partial_fit(X[start:start + 500], y[start:start + 500],
    ...                               classes=[0, 1])
    >>> bool(model.score(X, y) > 0.8)
    True
    """

    @available_if(_final_has_partial_fit)
    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X: Any, y: Any = None, **params: Any) -> StreamingPipeline:
        """Update every step with one batch: ``partial_fit`` then ``transform``, in order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One batch of rows.
        y : array-like of shape (n_samples,) or (n_samples, n_targets), default=None
            Their targets.
        **params : dict
            Passed to the last step's ``partial_fit`` (``classes=``, ``sample_weight=``).

        Returns
        -------
        self : object
            The pipeline, updated.
        """
        Xt = X
        for _, name, step in self._iter(with_final=False, filter_passthrough=True):
            if hasattr(step, "partial_fit"):
                step.partial_fit(Xt, y)
            else:
                try:
                    check_is_fitted(step)
                except Exception as error:
                    raise TypeError(
                        f"StreamingPipeline.partial_fit: step {name!r} "
                        f"({type(step).__name__}) has no partial_fit and is not fitted. Fit "
                        "it on a sample of rows first (it is then used as it is), or use a "
                        "step that has partial_fit.") from error
            Xt = step.transform(Xt)
        final = self._final_estimator
        if final != "passthrough":
            final.partial_fit(Xt, y, **params)
        return self


def make_streaming_pipeline(*steps: Any, memory: Any = None, transform_input: Any = None,
                            verbose: bool = False) -> StreamingPipeline:
    """Build a :class:`StreamingPipeline` from estimators, naming the steps by their classes.

    As :func:`sklearn.pipeline.make_pipeline`, for a pipeline with ``partial_fit``.

    Parameters
    ----------
    *steps : list of estimators
        Transformers, then the final estimator.
    memory : str or object with the joblib.Memory interface, default=None
        As :func:`sklearn.pipeline.make_pipeline`.
    transform_input : list of str, default=None
        As :func:`sklearn.pipeline.make_pipeline`.
    verbose : bool, default=False
        As :func:`sklearn.pipeline.make_pipeline`.

    Returns
    -------
    StreamingPipeline
        The pipeline.

    Examples
    --------
    >>> from sklearn.linear_model import SGDRegressor
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.models import make_streaming_pipeline
    >>> make_streaming_pipeline(RBFSampler(), SGDRegressor()).steps[0][0]
    'rbfsampler'
    """
    return StreamingPipeline(_name_estimators(steps), memory=memory,
                             transform_input=transform_input, verbose=verbose)
