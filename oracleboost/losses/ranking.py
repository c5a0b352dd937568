"""Pairwise ranking: the ranking hinge and the pairwise disagreement metric (Grubb & Bagnell
2011, §5(b)); NDCG as LightGBM reports it (:func:`ndcg`).

Pairs are ``P = {(i, j): groups_i = groups_j, y_i > y_j}`` with ``y`` graded relevance
(larger is better) and ``groups`` the query id of each row.  The risk averages over all
pairs of all queries together (one 1/|P|, not a per-query average).

Computation is vectorised per query: queries of equal size m are stacked and handled as
``(queries, m, m)`` blocks of at most ``_BLOCK`` pair cells, so that 1,000 queries of 50
documents take a few milliseconds; a query too large for one block is split by rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_finite_array, check_groups, check_sample_weight
from oracleboost.losses.base import RankingLoss

__all__ = ["PairwiseHinge", "pairwise_disagreement", "ndcg"]

_BLOCK = 1 << 20  # pair cells per vectorised block (8 MB per float64 temporary)


def _check_inputs(y, raw, groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = check_finite_array(y, "y")
    raw = check_finite_array(raw, "raw")
    if raw.shape != y.shape:
        raise ValueError(f"raw must have the shape of y, {y.shape}; got {raw.shape}")
    return y, raw, check_groups(groups, len(y), "groups")


def _blocks(groups: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(rows, cols)`` index arrays of shapes ``(Q, r)`` and ``(Q, m)``.

    Each of the Q stacked queries has m documents ``cols[q]``; ``rows[q]`` is a subset of
    them.  Every ordered pair (i, j) of documents of the same query, i ≠ j or not, is
    visited exactly once as (a row, a column).
    """
    _, inv = np.unique(groups, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    counts = np.bincount(inv)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for m in np.unique(counts):
        if m < 2:
            continue  # a lone document forms no pair
        cols = order[starts[counts == m][:, None] + np.arange(m)]
        if m * m <= _BLOCK:
            step = _BLOCK // (m * m)
            for s in range(0, len(cols), step):
                yield cols[s : s + step], cols[s : s + step]
        else:
            step = max(1, _BLOCK // m)
            for c in cols:
                for s in range(0, m, step):
                    yield c[None, s : s + step], c[None, :]


def _pairs(y, raw, groups) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(rows, cols, in_P, diff)`` with ``in_P[q, a, b] = y_i > y_j`` and
    ``diff[q, a, b] = f_i − f_j`` for i = rows[q, a], j = cols[q, b]."""
    for rows, cols in _blocks(groups):
        in_p = y[rows][:, :, None] > y[cols][:, None, :]
        diff = raw[rows][:, :, None] - raw[cols][:, None, :]
        yield rows, cols, in_p, diff


def _no_pairs() -> ValueError:
    return ValueError(
        "there are no ranking pairs: no query has two documents of different relevance y"
    )


class PairwiseHinge(RankingLoss):
    """Pairwise ranking hinge ``R[f] = (1/|P|) Σ_{(i,j)∈P} max(0, margin − (f_i − f_j))``.

    A functional of the whole score vector, not a pointwise loss.  Its L2(P̂) gradient is
    ``g_n = N ∂R/∂f_n = (N/|P|) [Σ_{j:(n,j)∈P} −viol_nj + Σ_{i:(i,n)∈P} viol_in]`` with
    ``viol_ij = 1[f_i − f_j < margin]``: the better document of a violated pair gets −1,
    the worse +1, so a descent step raises the former and lowers the latter.

    At the kink ``f_i − f_j = margin`` exactly, the pair's subdifferential is
    ``t (e_j − e_i)``, ``t ∈ [0, 1]``; ``viol`` is strict, so t = 0 (the pair counts as
    satisfied), as :class:`~oracleboost.losses.MulticlassHinge` does at its own kink.
    Ties in the scores (f_i = f_j) are no kink: the pair is violated by ``margin > 0``.

    ``__call__`` and ``gradient`` require ``groups`` (the query id of each row).  Sample
    weights are not supported: ``__call__`` accepts only ``None`` or uniform weights (the
    booster passes ones).  The per-example ``loss(y, raw)`` is undefined for a pairwise
    loss and raises ``NotImplementedError``.  ``init_raw`` is 0: R is invariant to adding
    a constant, so every constant is a best constant (R = margin).

    Parameters
    ----------
    margin : float > 0, default=1.0
    """

    name = "pairwise_hinge"
    differentiable = False
    pointwise = False
    context_keys = ("groups",)

    def __init__(self, margin: float = 1.0) -> None:
        try:
            ok = bool(np.isfinite(margin) and margin > 0)
        except TypeError:
            ok = False
        if not ok or isinstance(margin, bool):
            raise ValueError(f"margin must be a positive finite number; got {margin!r}")
        self.margin = float(margin)

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        raise NotImplementedError(
            "PairwiseHinge is not a pointwise loss: the per-example loss(y, raw) is "
            "undefined; call the loss object, loss(y, raw, groups=qid), for R[f]"
        )

    def __call__(
        self,
        y: ArrayLike,
        raw: ArrayLike,
        sample_weight: ArrayLike | None = None,
        groups: ArrayLike | None = None,
    ) -> float:
        """R[f], the mean hinge over all pairs; ``sample_weight`` must be None or uniform."""
        y, raw, groups = _check_inputs(y, raw, groups)
        if sample_weight is not None:
            w = check_sample_weight(sample_weight, len(y))
            if np.any(w != w[0]):
                raise ValueError(
                    "sample_weight is not supported by the pairwise ranking loss: it must "
                    "be None or uniform"
                )
        total, n_pairs = 0.0, 0
        for _, _, in_p, diff in _pairs(y, raw, groups):
            n_pairs += int(np.count_nonzero(in_p))
            total += float(np.sum(np.maximum(self.margin - diff[in_p], 0.0)))
        if n_pairs == 0:
            raise _no_pairs()
        return total / n_pairs

    def gradient(
        self, y: ArrayLike, raw: ArrayLike, groups: ArrayLike | None = None
    ) -> np.ndarray:
        """``N ∂R/∂f_n``, shape ``(n,)`` (the L2(P̂) gradient; note §1.2)."""
        y, raw, groups = _check_inputs(y, raw, groups)
        n = len(y)
        g = np.zeros(n)
        n_pairs = 0
        for rows, cols, in_p, diff in _pairs(y, raw, groups):
            n_pairs += int(np.count_nonzero(in_p))
            viol = in_p & (diff < self.margin)
            g -= np.bincount(rows.ravel(), weights=viol.sum(axis=2).ravel(), minlength=n)
            g += np.bincount(cols.ravel(), weights=viol.sum(axis=1).ravel(), minlength=n)
        if n_pairs == 0:
            raise _no_pairs()
        return g * (n / n_pairs)

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        return 0.0


_TIE_WEIGHT = {"count": 1.0, "half": 0.5, "ignore": 0.0}


def pairwise_disagreement(
    y: ArrayLike, raw: ArrayLike, groups: ArrayLike, ties: str = "half"
) -> float:
    """Fraction of violated pairs, ``(1/|P|) Σ_{(i,j)∈P} (1[f_i < f_j] + τ 1[f_i = f_j])``.

    The test metric of Grubb & Bagnell's Figure 2 ("the percentage of violated ranking
    constraints").  A tied pair counts τ = 1 with ``ties="count"`` (f_i ≤ f_j is a
    violation), ½ with ``"half"`` (a random tie-break's expectation) and 0 with
    ``"ignore"``; tied pairs stay in the denominator ``|P|`` in every case.  At f = 0 the
    three rules give 1, ½ and 0.
    """
    if ties not in _TIE_WEIGHT:
        raise ValueError(f"ties must be one of {list(_TIE_WEIGHT)}; got {ties!r}")
    y, raw, groups = _check_inputs(y, raw, groups)
    tau = _TIE_WEIGHT[ties]
    bad, n_pairs = 0.0, 0
    for _, _, in_p, diff in _pairs(y, raw, groups):
        d = diff[in_p]
        n_pairs += d.size
        bad += np.count_nonzero(d < 0) + tau * np.count_nonzero(d == 0)
    if n_pairs == 0:
        raise _no_pairs()
    return float(bad) / n_pairs


def ndcg(y: ArrayLike, raw: ArrayLike, groups: ArrayLike) -> float:
    """NDCG over each query's whole list, averaged over the queries, as LightGBM's
    ``ndcg`` metric computes it: the gain of relevance ``y`` is ``2**y − 1`` (its
    default ``label_gain``), the discount ``1 / log2(1 + rank)``, and a query whose
    ideal DCG is 0 (every relevance 0, or a lone document) counts 1.

    Each query is scored by :func:`sklearn.metrics.ndcg_score` on the gains (queries of
    one size stacked in one call).  Tied scores share their gains' mean
    (``ignore_ties=False``: the expectation over orders of the tie) where LightGBM keeps
    the rows' order.  ``y`` must be non-negative (LightGBM's labels are grades 0, 1, …);
    any finite grade is taken: a query's NDCG, DCG/IDCG, does not change when its gains
    are all divided by one number, so they are computed divided by ``2**k`` (``k`` the
    integer part of the query's largest grade; :func:`_scaled_gains`), which keeps
    ``2**y`` within float64 for grades of 1,024 and more.
    """
    from sklearn.metrics import ndcg_score  # (sklearn.metrics is slow to import)

    y, raw, groups = _check_inputs(y, raw, groups)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, one relevance per row; got shape {y.shape}")
    if (y < 0).any():
        raise ValueError("y must be non-negative relevance grades for NDCG (gain 2**y - 1)")
    _, inv = np.unique(groups, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    counts = np.bincount(inv)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    total = 0.0
    for m in np.unique(counts):
        rows = order[starts[counts == m][:, None] + np.arange(m)]  # (queries, m)
        g, f = _scaled_gains(y[rows]), raw[rows]
        scored = (g > 0).any(axis=1) if m > 1 else np.zeros(len(rows), dtype=bool)
        total += np.count_nonzero(~scored)  # an ideal DCG of 0: every order is ideal
        if scored.any():
            total += ndcg_score(g[scored], f[scored]) * np.count_nonzero(scored)
    return float(total / len(counts))


def _scaled_gains(grades: np.ndarray) -> np.ndarray:
    """Each row's gains ``2**y − 1`` divided by ``2**k``, ``k = floor(max(y))`` of the row
    (0 below 1): ``2**(y − k) − 2**−k``, below 2, so no grade overflows.

    Grades below 1 take ``expm1(y ln 2) · 2**−k`` (the difference would cancel: 2**y is
    near 1); grades of 1 and more the difference, which loses at most one bit (2**y ≥ 2),
    and is exact for integer grades.  A row whose largest grade is below 1 keeps the
    plain gains ``expm1(y ln 2)``.
    """
    k = np.floor(np.maximum(grades.max(axis=1, keepdims=True), 0.0))
    # 2**-k as ldexp's integer exponent; beyond 2**-1074 it is 0 either way
    shift = -np.minimum(k, 2000.0).astype(np.int64)
    with np.errstate(under="ignore"):  # gains below 2**-1074 of the top one: 0
        small = np.ldexp(np.expm1(np.minimum(grades, 1.0) * np.log(2.0)), shift)
        large = np.exp2(grades - k) - np.ldexp(1.0, shift)
    return np.where(grades < 1.0, small, large)
