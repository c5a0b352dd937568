"""A vote's answers: the class each row's scores predict, and each row's margin (binary
scores of shape (n,), or one score a class of shape (n, K))."""

from __future__ import annotations

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost.oracles.base import Hypothesis, predict_validated
from oracleboost.oracles.trees import TreeStructure

__all__ = ["ArgmaxVote", "one_hot", "predicted_index", "vote_margins", "vote_share"]


def predicted_index(f: np.ndarray) -> np.ndarray:
    """The class each row's scores predict: ``f > 0`` (shape (n,): 1 means
    ``classes_[1]``) or ``argmax f`` (shape (n, K); ties to the lowest class)."""
    return (f > 0).astype(np.intp) if f.ndim == 1 else np.argmax(f, axis=1)


def vote_margins(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Each row's margin: ``y f`` for ±1 labels and scores of shape (n,), or
    ``f_{y} − max_{k≠y} f_k`` for class indices and scores of shape (n, K)."""
    if f.ndim == 1:
        return y * f
    rows = np.arange(f.shape[0])
    others = f.copy()
    others[rows, y] = -np.inf
    return f[rows, y] - others.max(axis=1)


def vote_share(f: np.ndarray, l1: float) -> np.ndarray:
    """Each class's share of a vote, rows summing to 1 (shape (n, K)): for scores of
    shape (n,) and a vote of ℓ1 norm ``l1``, ``(1 ± f / l1) / 2`` clipped to [0, 1] (a
    half each before any round); for one score a class, each score over the row's total
    (uniform where the total is not positive)."""
    if f.ndim == 1:
        p = np.clip(0.5 + 0.5 * f / l1, 0.0, 1.0) if l1 > 0 else np.full(f.shape, 0.5)
        return np.column_stack([1.0 - p, p])
    total = f.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, f / np.where(total > 0, total, 1.0),
                         1.0 / f.shape[1])
    return share


def one_hot(index: np.ndarray, K: int) -> np.ndarray:
    """Rows ``e_index`` of K columns."""
    out = np.zeros((index.shape[0], K))
    out[np.arange(index.shape[0]), index] = 1.0
    return out


class ArgmaxVote(Hypothesis):
    """One vote for the class a multiclass hypothesis ranks first: ``e_{argmax h(x)}``."""

    def __init__(self, inner: Hypothesis, n_classes: int) -> None:
        self.inner = inner
        self.n_classes = int(n_classes)
        self.key = None if inner.key is None else ("argmax", inner.key)
        self.scale = 1.0

    def predict(self, X: ArrayLike) -> np.ndarray:
        return one_hot(np.argmax(self.inner.predict(X), axis=1), self.n_classes)

    def _predict_validated(self, X) -> np.ndarray:
        # the inner hypothesis skips its own check of X as well
        return one_hot(np.argmax(predict_validated(self.inner, X), axis=1), self.n_classes)

    def tree_structure(self) -> TreeStructure | None:
        """The inner hypothesis' tree with each leaf's vector replaced by the vote for
        its largest entry (the first, as ``argmax`` takes it); None when the inner
        hypothesis is not a tree."""
        tree = self.inner.tree_structure()
        if tree is None:
            return None
        return tree.with_values(one_hot(np.argmax(tree.value, axis=1), self.n_classes))

    def __repr__(self) -> str:
        return f"ArgmaxVote({self.inner!r})"
