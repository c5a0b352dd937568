"""Totally corrective multiclass boosting's N × (K − 1) cells (row, wrong class): the
columns of class votes, the pricing query, and the vote's record on the training rows.

MABoost's construction (:mod:`.mirror_cells`) carried over to column generation
(:mod:`.totally_corrective`, whose docstring has the derivation): a hypothesis h enters
as the vote for its argmax class ``p_i = argmax_k h(x_i)_k`` (ties to the lowest class,
as :class:`.mirror.ArgmaxVote`), and its column over the cells is the vote's pairwise
margin ``u_(i,k) = [p_i = y_i] − [p_i = k]`` ∈ {−1, 0, 1}.  The cells are flat, row by
row, row i's K − 1 wrong classes in class order (as MABoost's weights).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from oracleboost.optim.votes import predicted_index, vote_margins
from oracleboost.oracles.base import Hypothesis

__all__ = ["cell_costs", "wrong_classes", "pricing_query", "VoteColumn", "vote_scores",
           "vote_record"]


def wrong_classes(y: np.ndarray, K: int) -> np.ndarray:
    """The cells' classes, shape (N, K − 1): row i's classes other than ``y_i``, in
    order."""
    k = np.arange(K - 1)[None, :]
    return k + (k >= y[:, None])


def cell_costs(cost: np.ndarray, K: int) -> np.ndarray:
    """Each cell's slack cost: its row's ``c_i`` on every one of the row's K − 1 cells (so
    the cells' costs have mean 1 as the rows' do, and ``d⁰ = c/Σc`` gives each row its
    weight ``s_i/Σ s``, shared equally by its cells: MABoost's start)."""
    return np.repeat(cost, K - 1)


def pricing_query(d: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """The oracle's query ``R`` of shape (N, K) for the cell distribution ``d``:
    ``R_(i, y_i) = q_i = Σ_k d_(i,k)`` (the row sums MABoost shows its learner) and
    ``R_(i, k) = −d_(i,k)`` on the wrong classes.  Each row of R sums to 0, and a vote
    for class c on row i scores ``R_(i,c)``: its column's edge is ``Σ_i R_(i, p_i)``
    (see the module docstring of :mod:`.totally_corrective` for why a label-coded or
    one-hot answer maximising ``<R, h>`` is the best column)."""
    n = y.shape[0]
    cells = d.reshape(n, K - 1)
    R = np.zeros((n, K))
    R[np.arange(n)[:, None], wrong_classes(y, K)] = -cells
    R[np.arange(n), y] = cells.sum(axis=1)  # K − 1 terms a row, in class order
    return R


@dataclass(frozen=True)
class VoteColumn:
    """An oracle answer as a column over the cells.

    Attributes
    ----------
    votes : ndarray of shape (N,)
        Each row's voted class ``p_i``.
    u : ndarray of shape (N (K − 1),)
        ``[p_i = y_i] − [p_i = k]`` on cell (i, k).
    edge : float
        ``d · u`` (numpy's pairwise sum, a fixed order).
    name : bytes
        A digest of the votes: two answers with the same votes on the training rows
        are the same column.
    """

    votes: np.ndarray
    u: np.ndarray
    edge: float
    name: bytes

    @classmethod
    def of(cls, h: Hypothesis, y: np.ndarray, d: np.ndarray, K: int) -> VoteColumn:
        votes = predicted_index(np.asarray(h.train_output, dtype=np.float64))
        right = (votes == y)[:, None]
        u = (right.astype(np.float64)
             - (wrong_classes(y, K) == votes[:, None])).reshape(-1)
        edge = float(np.add.reduce(d * u))
        name = hashlib.blake2b(votes.astype(np.int64).tobytes(), digest_size=16).digest()
        return cls(votes, u, edge, name)


def vote_scores(votes: list[np.ndarray], coef: np.ndarray, K: int) -> np.ndarray:
    """``f = Σ_j coef_j e_(p_j)``, shape (N, K), the terms added in the ensemble's order
    (as its decision function adds them)."""
    n = votes[0].shape[0] if votes else 0
    f = np.zeros((n, K))
    rows = np.arange(n)
    for c, p in zip(coef.tolist(), votes, strict=True):
        f[rows, p] += c
    return f


def vote_record(y: np.ndarray, f: np.ndarray, s: np.ndarray, s_total: float,
                l1: float) -> dict:
    """The vote's ℓ1 margin ``min_i (f_y − max_(k≠y) f_k) / l1`` and its weighted
    training error (ties to the lowest class); its ``loss`` is the booster's
    (``TotallyCorrectiveClassifier._eval_metrics``)."""
    n = y.shape[0]
    wrong = predicted_index(f) != y
    low = float(vote_margins(y, f).min()) if n else np.nan
    return {"margin": low / l1 if l1 > 0 else np.nan,
            "train_error": float(np.add.reduce(np.where(wrong, s, 0.0))) / s_total}
