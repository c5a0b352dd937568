"""MABoost's passes over the training rows (binary), as stages of row blocks.

Each function runs a stage (:meth:`~oracleboost.rows.blocks.RowBlocks.map`) over the rows of
a binary :class:`~.estimator.MirrorBoostingClassifier` fit: in memory, its lanes on
threads, or on a Dask cluster, once per partition on the worker that holds it.  A stage
returns per-row arrays (which stay where the rows are) and per-lane partials, which the
caller combines in lane order (sums) or in any order (extremes, counts): the fit is the
same, bit for bit, for every ``n_jobs`` and every number of workers.

A round (Naghibi & Pfister 2014, Algorithm 1) makes, besides the oracle's query and the
column's sums (:mod:`.row_passes`):

* :func:`mirror_step`: step (c) of Algorithm 1 (the point ``∇R(z_{t+1})`` to project,
  and the new dual state, each lane's by the fit's update object, :mod:`.updates`), the
  running vote ``f`` and the vote's record sums;
* the projection (d), by the fit's projection object (:mod:`.updates`: the mirror map's,
  :mod:`.row_projections`, or SparseBoost's normalisation, :func:`divided`);
* :func:`query`: the next round's query ``w · a`` and the record's weight extremes;
* :func:`entropy_step`: all three in one pass for the entropy map's lazy, uncapped round,
  the projection's normaliser predicted (:mod:`.kernels`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from oracleboost.boosters.mirror import kernels as mirror_kernels
from oracleboost.optim import row_passes
from oracleboost.optim.row_passes import lane_parts
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import RowBlocks, deferred_stat, ordered_sum, outputs_only
from oracleboost.rows.partitioned import Rows

if TYPE_CHECKING:
    from oracleboost.boosters.mirror.maps import MirrorMap
    from oracleboost.boosters.mirror.updates import DualUpdate

__all__ = ["divided", "entropy_step", "EntropyStep", "gradient", "mirror_step", "query",
           "VoteSums"]


@outputs_only(1)
def _divided(blocks: RowBlocks, a, *, divisor: float) -> tuple[tuple, None]:
    return (a / divisor,), None


def divided(blocks: RowBlocks, a: Rows, divisor: float) -> Rows:
    """``a / divisor``, elementwise, where the rows are."""
    return blocks.map(_divided, a, divisor=divisor)[0][0]


@outputs_only(1)
def _group_caps(blocks: RowBlocks, group, *, cap: float) -> tuple[tuple, None]:
    return (np.where(group, cap, np.inf),), None


def group_caps(blocks: RowBlocks, group: Rows, cap: float) -> Rows:
    """Per-row caps: ``cap`` on the rows of ``group`` (True: the secondary set), none
    (``inf``) on the others."""
    return blocks.map(_group_caps, group, cap=float(cap))[0][0]


def _above(blocks: RowBlocks, w, cap) -> tuple[tuple, bool]:
    return (), bool(np.any(w > cap))


def any_above(blocks: RowBlocks, w: Rows, cap: Rows) -> bool:
    """Whether some ``w_i`` exceeds its cap."""
    return any(blocks.map(_above, w, cap)[1])


@outputs_only(1)
def _gradient(blocks: RowBlocks, w, *, mirror) -> tuple[tuple, None]:
    return (mirror.gradient(w),), None


def gradient(blocks: RowBlocks, mirror: MirrorMap, w: Rows) -> Rows:
    """``∇R(w)`` of the mirror map (elementwise), where the rows are."""
    return blocks.map(_gradient, w, mirror=mirror)[0][0]


@deferred_stat(1)
def _query(blocks: RowBlocks, w, a) -> tuple[tuple, np.ndarray]:
    out = np.empty(blocks.n)
    parts = np.zeros((blocks.n_lanes, 2))

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        np.multiply(w[lo:hi], a[lo:hi], out=out[lo:hi])
        parts[q0] = (w[lo:hi].max(initial=-math.inf), np.count_nonzero(w[lo:hi] == 0.0))

    blocks.lane_map(run)
    return (out,), parts


def query(blocks: RowBlocks, w: Rows, a: Rows,
          prefetch: Callable[[Rows], None] | None = None) -> tuple[Rows, float, int]:
    """The oracle's query ``w · a``, ``max w`` and the number of exact zeros of ``w``
    (the extremes and counts are exact in any order).  ``prefetch(q)``, when given, is
    called with the query once its pass is submitted, before its stats are waited for
    (``BoundOracle._prefetch``: on a cluster the next round's histograms come back with
    them)."""
    (q,), later = blocks.map(_query, w, a)
    if prefetch is not None:
        prefetch(q)
    p = lane_parts(later.get())
    return q, float(p[:, 0].max()), int(p[:, 1].sum())


class VoteSums:
    """The record's sums over the running vote ``f``: ``Σ s [a f ≤ 0]`` (the vote's
    error with ties counted, the loss Theorems 1–5 bound), ``Σ s [predict wrong]`` and
    ``min a f``; and for SparseBoost the new state's ``‖y‖₁``."""

    def __init__(self, parts: np.ndarray) -> None:
        self.loss_mass, self.wrong_mass, self.mass = map(float, ordered_sum(parts[:, [0, 1, 3]]))
        self.low = float(parts[:, 2].min())


def _mirror_step(blocks: RowBlocks, w, z, f, a, out, s, log_s, *, coef: float,
                 update: DualUpdate, mirror, alpha_eta: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    target, f_new = np.empty(blocks.n), np.empty(blocks.n)
    z_new = update.dual_rows(target, blocks.n)
    parts = np.zeros((blocks.n_lanes, 4))
    parts[:, 2] = math.inf

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        ab, hb = a[lo:hi], out[lo:hi]
        step = np.multiply(ab, hb)  # a h: the column u up to sign and norm
        step *= -coef  # η d = −η sign a h / norm (the loss vector d = −u)
        fb = np.add(f[lo:hi], coef * hb, out=f_new[lo:hi])  # the vote, f += η sign h / norm
        tb = target[lo:hi]
        # (c): the point ∇R(z_{t+1}) of the update (and its new dual state)
        update.point(tb, None if z_new is None else z_new[lo:hi], step,
                     None if z is None else z[lo:hi], w[lo:hi], mirror,
                     None if log_s is None else log_s[lo:hi], alpha_eta)
        if update.unnormalised:  # SparseBoost's ‖y_{t+1}‖₁
            column_kernels.lane_sums(tb, 0, hi - lo, lane, parts[q0:q1, 3])
        margins = ab * fb
        wrong = margins <= 0.0  # the vote's error, ties counted as errors
        mistaken = (fb > 0.0) != (ab > 0)  # predict's error: f = 0 says classes_[0]
        if s is None:
            parts[q0:q1, 0] = _lane_counts(wrong, lane)
            parts[q0:q1, 1] = _lane_counts(mistaken, lane)
        else:
            sb = s[lo:hi]
            column_kernels.lane_sums(np.where(wrong, sb, 0.0), 0, hi - lo, lane,
                                     parts[q0:q1, 0])
            column_kernels.lane_sums(np.where(mistaken, sb, 0.0), 0, hi - lo, lane,
                                     parts[q0:q1, 1])
        parts[q0, 2] = margins.min(initial=math.inf)

    blocks.lane_map(run)
    return (target, z_new, f_new), parts


def _lane_counts(mask: np.ndarray, lane: int) -> np.ndarray:
    """Each lane's count of ``mask`` (exact in any order), as floats."""
    n = mask.shape[0]
    full = n // lane * lane
    counts = np.count_nonzero(mask[:full].reshape(-1, lane), axis=1).astype(np.float64)
    if full < n:
        counts = np.append(counts, float(np.count_nonzero(mask[full:])))
    return counts


def mirror_step(blocks: RowBlocks, w: Rows, z: Rows | None, f: Rows, a: Rows, out: Rows,
                s: Rows | None, log_s: Rows | None, *, coef: float, update: DualUpdate,
                mirror: MirrorMap, alpha_eta: float = 0.0
                ) -> tuple[Rows, Rows | None, Rows, VoteSums]:
    """Algorithm 1 (c) and the vote, for the hypothesis with outputs ``out`` on the
    training rows and ``coef = η_t · sign / norm``:

    * the point to project, by ``update`` (:mod:`.updates`): ``∇R(z_t) + η d`` (lazy:
      ``z`` is the dual average, ``log z`` for the entropy map) or ``∇R(w_t) + η d``
      (active); SparseBoost's unnormalised ``max(0, y + η d − α η)`` (eq. 29, ``alpha_eta``
      = α η); the MadaBoost variant's ``log s + min(0, log z + η d)`` (Lemma 5);
    * the new dual state (``None`` for the active update);
    * the vote ``f + coef · out``, and its :class:`VoteSums`.

    ``s`` None means equal weights (the record's sums are counts); ``log_s`` is read by
    the MadaBoost variant's update only (None: equal weights)."""
    (target, z_new, f_new), parts = blocks.map(
        _mirror_step, w, z, f, a, out, s, log_s, coef=coef, update=update, mirror=mirror,
        alpha_eta=alpha_eta)
    return target, z_new, f_new, VoteSums(lane_parts(parts))


@deferred_stat(4)
def _entropy_step(blocks: RowBlocks, z, f, a, out, s, *, coef: float,
                  log_norm: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    target, f_new, e, query_rows = (blocks.empty() for _ in range(4))
    parts = np.zeros((blocks.n_lanes, mirror_kernels.N_STATS))
    weights = column_kernels.NO_WEIGHTS if s is None else s

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        mirror_kernels.entropy_step(z, f, a, out, weights, coef, log_norm, target, f_new, e,
                                    query_rows, lo, hi, lane, parts[q0:q1])

    blocks.lane_map(run)
    return (target, f_new, e, query_rows), parts


class EntropyStep(NamedTuple):
    """:func:`entropy_step`'s results: the new dual average ``log z``, the vote ``f`` and
    its :class:`VoteSums`; the weights, the query ``w · a``, ``max w``, the exact zeros of
    ``w`` and ``log_norm`` (the weights' log-normaliser ``log Σ z``); ``predicted``:
    whether the exps of the predicted normaliser were the weights (else the softmax made
    them)."""

    z: Rows
    f: Rows
    sums: VoteSums
    w: Rows
    query: Rows
    top: float
    zeros: int
    log_norm: float
    predicted: bool


def entropy_step(blocks: RowBlocks, z: Rows, f: Rows, a: Rows, out: Rows, s: Rows | None,
                 *, coef: float, log_norm: float,
                 prefetch: Callable[[Rows], None] | None = None) -> EntropyStep:
    """Algorithm 1 (c) and (d) for the entropy map, the lazy update and no cap, and the
    next query, in one pass (:func:`.kernels.entropy_step`): the dual average
    ``log z + η d`` and the vote ``f + coef · out`` as :func:`mirror_step` makes them
    (the same bits), and the softmax ``w = exp(log z' − log_norm)`` with ``log_norm``
    the predicted ``log Σ z'`` (the module's docstring of :mod:`.kernels`).

    When the exps sum to 1 within :data:`.row_passes.NORMALISED_SLACK` (AdaBoost's
    test), they are the weights and the pass's ``e · a`` is the query.  Otherwise (a
    prediction that missed: a column of more than two values, or one not finite) the
    weights are the softmax of
    :func:`.row_projections.kl_softmax_rows` and the query is :func:`query`'s: the
    prediction changes the weights' bits, never whether they are right.

    ``prefetch(query)``, when given, is called with the pass's query before its stats
    are waited for (``BoundOracle._prefetch``: on a cluster the next round's histograms
    come back with them, one wait fewer)."""
    outputs, later = blocks.map(_entropy_step, z, f, a, out, s, coef=coef,
                                log_norm=log_norm)
    z_new, f_new, e, q = outputs
    if prefetch is not None:
        prefetch(q)  # before the wait: the query is the next one if Σ e is 1
    p = lane_parts(later.get())
    sums = VoteSums(p[:, :4])
    total = float(ordered_sum(p[:, 4]))
    if abs(total - 1.0) <= row_passes.NORMALISED_SLACK:
        return EntropyStep(z_new, f_new, sums, e, q, float(p[:, 5].max()), int(p[:, 6].sum()),
                           log_norm, True)
    from oracleboost.optim.row_projections import kl_softmax_rows

    w, norm = kl_softmax_rows(blocks, z_new)
    q, top, zeros = query(blocks, w, a, prefetch=prefetch)
    return EntropyStep(z_new, f_new, sums, w, q, top, zeros, norm, False)
