"""A vote's answers: the class each row's scores predict, and each row's margin (binary
scores of shape (n,), or one score a class of shape (n, K))."""

from __future__ import annotations

import numpy as np

__all__ = ["predicted_index", "vote_margins", "vote_share"]


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
