"""One tie rule, one decoding, one α check (kernelmaps._ridge): every caller goes through
them, so two places cannot order candidates or decode scores differently."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits
from sklearn.preprocessing import LabelBinarizer

from kernelmaps._ridge import (
    best_index,
    check_alpha,
    check_alphas,
    check_fixed_alpha,
    encode_labels,
    encode_targets,
    labels_from_scores,
    path_scores,
    ranking_score,
    ridge_alpha_path,
    row_losses,
)
from kernelmaps.tuning import search as search_module


def test_best_index_orders_by_score_then_error_then_the_larger_alpha():
    alphas = np.array([0.1, 1.0, 10.0, 100.0])
    scores = np.array([0.90, 0.95, 0.95, 0.95])   # accuracies on 20 rows: steps of 0.05
    errors = np.array([0.10, 0.30, 0.20, 0.20])
    assert best_index(alphas, scores, errors, "classification", 20) == 3  # tie → larger α
    errors[3] = 0.25
    assert best_index(alphas, scores, errors, "classification", 20) == 2  # smaller error
    scores[0] = 1.0
    assert best_index(alphas, scores, errors, "classification", 20) == 0  # score first


def test_the_error_never_outweighs_one_accuracy_step():
    rng = np.random.RandomState(0)
    for n_rows in (2, 7, 150, 10_000):
        correct = rng.randint(0, n_rows + 1, size=200)
        scores = correct / n_rows
        errors = rng.exponential(scale=rng.choice([1e-3, 1.0, 1e6]), size=200)
        ranked = ranking_score(scores, errors, "classification", n_rows)
        lexical = np.lexsort((errors, -scores))   # by score, then by the smaller error
        np.testing.assert_array_equal(np.sort(-ranked), -ranked[lexical])


def test_tune_ranks_configurations_by_the_same_rule_as_the_path_ranks_alpha():
    # Two configurations whose chosen α tie on accuracy: tune must prefer the one the path
    # rule would prefer (smaller error), by the same function, not a rule of its own.
    X, y = load_digits(return_X_y=True)
    X = X[:300] / 16.0
    paths = [ridge_alpha_path(X[:, :k], y[:300], task="classification",
                              alphas=[1e-2, 1.0, 1e2]) for k in (20, 40, 64)]
    search = search_module._Search.__new__(search_module._Search)
    search.task, search.rows = "classification", np.arange(300)
    objectives = [search.objective(path) for path in paths]
    expected = [ranking_score(p.score, p.errors[p.best_index], "classification", 300)
                for p in paths]
    assert objectives == expected
    # Pool the three chosen (score, error) pairs as one path: the path rule picks the
    # configuration tune ranks first.
    pooled = best_index(np.arange(3.0), np.array([p.score for p in paths]),
                        np.array([p.errors[p.best_index] for p in paths]), "classification",
                        300)
    order = int(np.argmax(objectives))
    assert pooled == order or objectives[pooled] == objectives[order]


def test_each_path_choice_is_the_best_by_the_rule():
    X, y = load_digits(return_X_y=True)
    path = ridge_alpha_path(X[:400] / 16.0, y[:400], task="classification")
    ranked = np.round(ranking_score(path.scores, path.errors, "classification", 400), 12)
    best = np.flatnonzero(ranked == ranked.max())
    assert path.best_index == best.max()  # the largest α among the best


def test_one_decoding_for_every_shape():
    classes = np.array(["a", "b", "c"])
    scores = np.array([[0.1, 0.7, 0.2], [0.9, -1.0, 0.0]])
    np.testing.assert_array_equal(labels_from_scores(classes, scores), ["b", "a"])
    # An α path's (n, classes, n_alphas): the same decision per α.
    stacked = np.stack([scores, -scores], axis=2)
    np.testing.assert_array_equal(labels_from_scores(classes, stacked, axis=1),
                                  [["b", "a"], ["a", "b"]])
    two = np.array([0, 1])
    np.testing.assert_array_equal(labels_from_scores(two, np.array([0.5, -0.5, 0.0])),
                                  [1, 0, 0])
    np.testing.assert_array_equal(labels_from_scores(two, np.array([[0.5], [-0.5]])), [1, 0])


def test_path_scores_are_one_minus_the_mean_row_loss():
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 3, size=50)
    classes = np.arange(3)
    Y = np.where(labels[:, None] == classes[None, :], 1.0, -1.0)
    predicted = rng.normal(size=(50, 3, 4))
    scores, errors = path_scores(Y, predicted, "classification", classes, labels)
    decided = labels_from_scores(classes, predicted, axis=1)
    np.testing.assert_allclose(scores, 1 - row_losses(labels, decided, "classification")
                               .mean(axis=0))
    np.testing.assert_allclose(errors, ((predicted - Y[:, :, None]) ** 2).mean(axis=(0, 1)))


@pytest.mark.parametrize("bad", [0, -1.0, np.nan, np.inf])
def test_every_alpha_check_refuses_the_same_values(bad):
    with pytest.raises(ValueError, match="alphas must be"):
        check_alphas([1.0, bad], np.array([1.0]))
    with pytest.raises(ValueError, match="alpha must be a positive"):
        check_alpha(bad, 1, "exact")
    with pytest.raises(ValueError, match="alpha must be None"):
        check_fixed_alpha(bad)
    assert check_fixed_alpha(None) is None and check_fixed_alpha(2) == 2.0
    np.testing.assert_array_equal(check_alpha([1.0, 2.0], 2, "exact"), [1.0, 2.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=30),
       st.booleans())
def test_the_one_pm1_encoder_is_label_binarizers_and_encode_targets_uses_it(labels, numeric):
    y = np.array([ord(label) for label in labels] if numeric else labels)
    if np.unique(y).size < 2:
        y = np.append(y, y[0] + 1 if numeric else "z")
    binarizer = LabelBinarizer(pos_label=1, neg_label=-1).fit(y)
    expected = binarizer.transform(y).astype(np.float64)
    np.testing.assert_array_equal(encode_labels(y, binarizer.classes_), expected)
    Y, classes = encode_targets(y, y.shape[0], "classification")
    np.testing.assert_array_equal(classes, binarizer.classes_)
    np.testing.assert_array_equal(Y, expected)
    assert Y.dtype == np.float64


def test_encode_labels_codes_an_unseen_label_minus_one_everywhere():
    classes = np.array([0, 1, 2])
    np.testing.assert_array_equal(encode_labels(np.array([2, 5]), classes),
                                  [[-1.0, -1.0, 1.0], [-1.0, -1.0, -1.0]])
    np.testing.assert_array_equal(encode_labels(np.array([1, 5]), classes[:2]), [[1.0], [-1.0]])
