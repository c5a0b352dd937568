"""A vote's answers: the class each row's scores predict, and each row's margin (binary
scores of shape (n,), or one score a class of shape (n, K))."""

from __future__ import annotations

import numpy as np

__all__ = ["predicted_index", "vote_margins"]


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
