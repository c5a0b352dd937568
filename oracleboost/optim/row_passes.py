"""A booster's passes over the training rows, by lanes on threads.

Each function runs a kernel of :mod:`._column_kernels` over runs of whole lanes of
:class:`~oracleboost.rows.blocks.RowBlocks` (one compiled call a thread), the kernel writing
each lane's partial result into that lane's slot; the partials are then combined in lane
order: sums left to right, minima and maxima (exact in any order).  A lane's partial
depends only on its rows, so a fit is bit for bit the same for every ``n_jobs``.
Elementwise work (the weights' ``exp``, the loss's gradient) runs on the same runs of
rows: its values do not depend on how the rows are cut.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.losses import Loss, MarginLoss
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import ReadyStats, RowBlocks, deferred_stat, ordered_sum, outputs_only
from oracleboost.rows.partitioned import Rows
from oracleboost.rows.partitioned import shaped_like as _shaped_as

__all__ = ["peak", "total", "log", "signed_sums", "two_value_masses", "dual_weights",
           "step_and_weights", "DualWeights", "SHIFT_SLACK", "weighted_inner",
           "weighted_residual", "weighted_mean_loss", "peak_and_inners",
           "weighted_mean", "class_masses", "index_masses", "error_and_margin",
           "vote_error_and_margin", "combined", "ldexp",
           "descent", "squared_step", "SquaredStep", "elementwise", "oriented", "scaled",
           "line_weights", "line_delta", "line_slope", "curvature_argument"]


def elementwise(blocks: RowBlocks, fn: Callable[[int, int], object]) -> None:
    """``fn(lo, hi)`` over runs of rows that cover them all, on threads."""
    blocks.lane_map(lambda q0, q1, lo, hi: fn(lo, hi))


def lane_parts(parts: list) -> np.ndarray:
    """The lanes' partials of every partition, in order (one array in memory)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _peak(blocks: RowBlocks, a: np.ndarray) -> tuple[tuple, float]:
    parts: list[float] = [0.0] * blocks.n_lanes
    flat = a.reshape(a.shape[0], -1)

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        parts[q0] = float(column_kernels.peak(flat[lo:hi].ravel()))

    blocks.lane_map(run)
    return (), max(parts)


def peak(blocks: RowBlocks, a: np.ndarray) -> float:
    """``max |a|`` over every entry (``a`` of shape (n,) or (n, K))."""
    return max(blocks.map(_peak, a)[1])


def _lanes(blocks: RowBlocks, width: int, kernel: Callable[..., None],
           fill: float = 0.0) -> np.ndarray:
    """``(n_lanes, width)`` partials: ``kernel(lo, hi, out_rows)`` on each run."""
    out = np.full((blocks.n_lanes, width), fill)
    blocks.lane_map(lambda q0, q1, lo, hi: kernel(lo, hi, out[q0:q1]))
    return out


def _lane_totals(blocks: RowBlocks, a: np.ndarray) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    return (), _lanes(blocks, 1, lambda lo, hi, out: column_kernels.lane_sums(
        a, lo, hi, lane, out[:, 0]))


def total(blocks: RowBlocks, a: np.ndarray) -> float:
    """``Σ a``: each lane in :func:`oracleboost.rows.column_kernels.interleaved_sum`'s
    order, the lanes in order."""
    return float(ordered_sum(lane_parts(blocks.map(_lane_totals, a)[1])[:, 0]))


@outputs_only(1)
def _log(blocks: RowBlocks, a: np.ndarray) -> tuple[tuple, None]:
    # a weight that underflowed to 0 has the log −inf: its row's exps are 0 (no warning)
    with np.errstate(divide="ignore"):
        return (np.log(a),), None


def log(blocks: RowBlocks, a: np.ndarray) -> np.ndarray:
    """``log a``, elementwise (held where ``a`` is: in memory or on the workers)."""
    return blocks.map(_log, a)[0][0]


def _signed_sums(blocks: RowBlocks, a, y, w, *, norm: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    y = column_kernels.NO_WEIGHTS if y is None else y
    return (), _lanes(blocks, 6, lambda lo, hi, out: column_kernels.signed_sums(
        a, y, w, norm, lo, hi, lane, out))


def signed_sums(blocks: RowBlocks, a: np.ndarray, y: np.ndarray | None, w: np.ndarray,
                norm: float) -> tuple[float, float, float, float, float, float]:
    """:func:`._column_kernels.signed_sums`: the three sums in lane order, the extremes
    over lanes.  ``y`` None: ``w`` is the query ``w · y``, whose signs are the labels
    and magnitudes the weights (one array read instead of two; the same numbers)."""
    p = lane_parts(blocks.map(_signed_sums, a, y, w, norm=norm)[1])
    corr, plus, minus = ordered_sum(p[:, :3])
    return (float(corr), float(plus), float(minus), float(p[:, 3].min()),
            float(p[:, 4].max()), float(p[:, 5].max()))


def _step_margins(blocks: RowBlocks, m, a, y, s, *, c: float) -> tuple[tuple, np.ndarray]:
    lane, out = blocks.lane, blocks.empty()
    parts = _lanes(blocks, 2, lambda lo, hi, p: column_kernels.step_margins(
        m, a, y, c, s, out, lo, hi, lane, p))
    return (out,), parts


def _two_value_masses(blocks: RowBlocks, a, y, w, *, norm: float, sign: float, lo: float,
                      hi: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    y = column_kernels.NO_WEIGHTS if y is None else y
    return (), _lanes(blocks, 3, lambda i, j, out: column_kernels.two_value_masses(
        a, y, w, norm, sign, lo, hi, i, j, lane, out))


def two_value_masses(blocks: RowBlocks, a: np.ndarray, y: np.ndarray | None, w: np.ndarray,
                     norm: float, sign: float, lo: float, hi: float) -> tuple[float, float, int]:
    """:func:`._column_kernels.two_value_masses`, the lanes in order (``y`` None: ``w``
    is the query, as in :func:`signed_sums`)."""
    p = lane_parts(blocks.map(_two_value_masses, a, y, w, norm=norm, sign=sign, lo=lo,
                               hi=hi)[1])
    m_lo, m_hi, other = ordered_sum(p)
    return float(m_lo), float(m_hi), int(other)


def _is_column(a: np.ndarray) -> bool:
    """Whether ``a`` holds one number a row: shape (n,) or (n, 1)."""
    return a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1)


def _column(a: np.ndarray) -> np.ndarray:
    """A one-number-a-row ``a`` as a contiguous (n,) array (a view when it is one)."""
    return np.ascontiguousarray(a).reshape(a.shape[0])


def _as_rows(a: np.ndarray) -> np.ndarray:
    """``a`` as (n, K) rows, C-contiguous (a view when it already is)."""
    return np.ascontiguousarray(a).reshape(a.shape[0], -1)


def _weighted_inner(blocks: RowBlocks, a, b, s) -> tuple[tuple, np.ndarray]:
    lane, a, b = blocks.lane, _as_rows(a), _as_rows(b)
    s = column_kernels.NO_WEIGHTS if s is None else s
    return (), _lanes(blocks, 1, lambda lo, hi, out: column_kernels.weighted_inner(
        a, b, s, lo, hi, lane, out[:, 0]))


def _peak_inners(blocks: RowBlocks, a, s, *bs) -> tuple[tuple, np.ndarray]:
    """Each run's ``max |a|`` (in its first lane's slot, or each lane's in its own) and
    each lane's ``Σ s Σ_k a b`` for every ``b`` of ``bs``: the kernels of :func:`_peak`
    and :func:`_weighted_inner` on the same runs, so the same numbers."""
    lane = blocks.lane
    if 1 <= len(bs) <= 2 and bs[0] is a and all(_is_column(b) for b in bs):
        # a column with itself (and one other): one compiled pass for the three numbers,
        # the same bits as the passes below (a lane's peak in its own slot)
        first, other = _column(a), (_column(bs[1]) if len(bs) == 2 else None)
        weights = None if s is None or len(s) == 0 else s
        parts = _lanes(blocks, 3, lambda lo, hi, out: column_kernels.peak_products(
            first, other, weights, lo, hi, lane, out))
        return (), parts[:, :1 + len(bs)]
    a, bs = _as_rows(a), tuple(_as_rows(b) for b in bs)
    s = column_kernels.NO_WEIGHTS if s is None else s

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        out[0, 0] = column_kernels.peak(a[lo:hi].ravel())
        for k, b in enumerate(bs, start=1):
            column_kernels.weighted_inner(a, b, s, lo, hi, lane, out[:, k])

    return (), _lanes(blocks, 1 + len(bs), run)


def peak_and_inners(blocks: RowBlocks, a: Rows, bs: list, s: Rows | None
                    ) -> tuple[float, list[float]]:
    """``(max |a|, [Σ_i s_i Σ_k a[i, k] b[i, k] for b in bs])`` in one pass: the values
    of :func:`peak` and :func:`weighted_inner`, bit for bit (on a cluster, one round
    trip for all)."""
    p = lane_parts(blocks.map(_peak_inners, a, s, *bs)[1])
    return float(p[:, 0].max()), [float(ordered_sum(p[:, k])) for k in range(1, p.shape[1])]


def weighted_inner(blocks: RowBlocks, a: np.ndarray, b: np.ndarray,
                   s: np.ndarray | None) -> float:
    """``Σ_i s_i Σ_k a[i, k] b[i, k]`` for (n,) or (n, K) arrays, the lanes in order;
    ``s`` None (or of length 0) means unit weights."""
    parts = lane_parts(blocks.map(_weighted_inner, a, b, s)[1])
    return float(ordered_sum(parts[:, 0]))


def _weighted_residual(blocks: RowBlocks, t, a, s, *, coef: float) -> tuple[tuple, np.ndarray]:
    lane, t, a = blocks.lane, _as_rows(t), _as_rows(a)
    s = column_kernels.NO_WEIGHTS if s is None else s
    return (), _lanes(blocks, 1, lambda lo, hi, out: column_kernels.weighted_residual(
        t, a, coef, s, lo, hi, lane, out[:, 0]))


def weighted_residual(blocks: RowBlocks, t: np.ndarray, a: np.ndarray, coef: float,
                      s: np.ndarray | None) -> float:
    """``Σ_i s_i Σ_k (t[i, k] − coef · a[i, k])²``, the lanes in order."""
    parts = lane_parts(blocks.map(_weighted_residual, t, a, s, coef=coef)[1])
    return float(ordered_sum(parts[:, 0]))


def _weighted_loss(blocks: RowBlocks, y, raw, s, *, loss: Loss) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        terms = loss.loss(y[lo:hi], raw[lo:hi])
        if s is not None:
            terms = np.multiply(terms, s[lo:hi])
        column_kernels.lane_sums(terms, 0, hi - lo, lane, out[:, 0])

    return (), _lanes(blocks, 1, run)


def weighted_mean_loss(blocks: RowBlocks, loss: Loss, y: np.ndarray, raw: np.ndarray,
                       s: np.ndarray | None, total: float) -> float:
    """``Σ_i s_i l(raw_i, y_i) / total`` of a pointwise loss, the lanes' sums in order
    (``s`` None: unit weights)."""
    parts = lane_parts(blocks.map(_weighted_loss, y, raw, s, loss=loss)[1])
    return float(ordered_sum(parts[:, 0])) / total


@deferred_stat(2)
def _squared_step(blocks: RowBlocks, f, y, h, s, inner_s, t, *, c: float,
                  coef: float, into_h: bool = False) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane
    # (into_h: the new scores written over h, which the kernel reads first a row)
    f_new, v = h if into_h else blocks.empty(f.shape), blocks.empty(f.shape)
    # None (not NO_WEIGHTS) for unit weights and no target: the kernel is compiled for
    # each case, its loop without a test a row
    parts = _lanes(blocks, 4, lambda lo, hi, out: column_kernels.squared_step(
        f, y, h, c, s, inner_s, t, coef, lo, hi, lane, f_new, v, out))
    return (f_new, v), parts


@dataclass(frozen=True)
class SquaredStep:
    """What :func:`squared_step` gives: the new scores ``f``, the next descent ``−(f −
    y)``, the weighted mean loss, the descent's ``max |v|`` and ``Σ s' v²``, and the
    residual's ``Σ s' (t − coef h)²`` (None when no target was given)."""

    f: Rows
    descent: Rows
    loss: float
    descent_peak: float
    descent_square: float
    residual_square: float | None


def squared_step(blocks: RowBlocks, y: Rows, f: Rows, h: Rows, c: float, s: Rows | None,
                 total: float, *, inner_s: Rows | None = None,
                 residual_of: tuple[Rows, float] | None = None,
                 prefetch: Callable[[Rows], None] | None = None,
                 into_h: bool = False) -> SquaredStep:
    """The squared loss's step ``f + c h``, its next descent ``v = −(f + c h − y)``, its
    weighted mean loss, ``v``'s :func:`peak_and_inners` with itself (weights
    ``inner_s``) and, given ``residual_of = (t, coef)``, :func:`weighted_residual`
    ``(t, h, coef, inner_s)``, in one pass: the values of :func:`combined`,
    :func:`descent`, :func:`weighted_mean_loss` with
    :class:`~oracleboost.losses.Squared` and of those passes, bit for bit (five passes
    over the rows made one).  ``prefetch(v)``, when given, is called with the next
    descent once the pass is submitted, before its stats are waited for (as in
    :func:`step_and_weights`).  ``into_h``: the new scores are written over ``h`` (an
    array of this process that nothing else reads: no new array for them)."""
    t, coef = (None, 0.0) if residual_of is None else residual_of
    # (into_h only where asked: other backends' stages take the pass's usual arguments)
    (f_new, v), later = blocks.map(_squared_step, f, y, h, s, inner_s, t, c=float(c),
                                   coef=float(coef), **({"into_h": True} if into_h else {}))
    descent = _shaped_as(v, f)
    if prefetch is not None:
        prefetch(descent)
    p = lane_parts(later.get())
    loss, square, residual = ordered_sum(p[:, [0, 2, 3]])
    return SquaredStep(_shaped_as(f_new, f), descent, float(loss) / total,
                       float(p[:, 1].max()), float(square),
                       None if residual_of is None else float(residual))


def weighted_mean(blocks: RowBlocks, y: np.ndarray, s: np.ndarray | None) -> float:
    """``Σ s y / Σ s`` (``s`` None: the plain mean), each sum by lanes in order: the same
    bits on any threads and on a cluster."""
    if s is None:
        return total(blocks, y) / float(blocks.n)
    return weighted_inner(blocks, y, s, None) / total(blocks, s)


def _class_masses(blocks: RowBlocks, y, s) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ s [y > 0]`` and ``Σ s [y < 0]`` (``s`` None: unit weights)."""
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        yb, w = y[lo:hi], (1.0 if s is None else s[lo:hi])
        # x + 0.0 is x: the lane's sum over the selected rows, in row order
        column_kernels.lane_sums(np.where(yb > 0, w, 0.0), 0, hi - lo, lane, out[:, 0])
        column_kernels.lane_sums(np.where(yb < 0, w, 0.0), 0, hi - lo, lane, out[:, 1])

    return (), _lanes(blocks, 2, run)


def _error_and_margin(blocks: RowBlocks, y, f, s) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ s [(f > 0) ≠ (y > 0)]`` and ``min y f`` (``s`` None: unit
    weights)."""
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        yb, fb, w = y[lo:hi], f[lo:hi], (1.0 if s is None else s[lo:hi])
        column_kernels.lane_sums(np.where((fb > 0) != (yb > 0), w, 0.0), 0, hi - lo, lane,
                                 out[:, 0])
        m = yb * fb
        for q in range(out.shape[0]):
            out[q, 1] = m[q * lane:(q + 1) * lane].min()

    return (), _lanes(blocks, 2, run)


def class_masses(blocks: RowBlocks, y: Rows, s: Rows | None) -> tuple[float, float]:
    """``(Σ s [y > 0], Σ s [y < 0])`` for ±1 labels, by lanes in order."""
    p = lane_parts(blocks.map(_class_masses, y, s)[1])
    pos, neg = ordered_sum(p)
    return float(pos), float(neg)


def _index_masses(blocks: RowBlocks, y, s, *, K: int) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ s [y = k]`` for k < K (``s`` None: unit weights)."""
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        yb, w = y[lo:hi], (1.0 if s is None else s[lo:hi])
        for k in range(K):
            column_kernels.lane_sums(np.where(yb == k, w, 0.0), 0, hi - lo, lane, out[:, k])

    return (), _lanes(blocks, K, run)


def index_masses(blocks: RowBlocks, y: Rows, s: Rows | None, K: int) -> np.ndarray:
    """``Σ s [y = k]`` for each class index k < K, by lanes in order."""
    return np.asarray(ordered_sum(lane_parts(blocks.map(_index_masses, y, s, K=K)[1])),
                      dtype=np.float64)


def _vote_error_and_margin(blocks: RowBlocks, y, f, s) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ s [argmax f ≠ y]`` and ``min (f_y − max_{k≠y} f_k)`` (``s`` None:
    unit weights)."""
    from oracleboost.optim.votes import predicted_index, vote_margins

    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        yb, fb, w = y[lo:hi], f[lo:hi], (1.0 if s is None else s[lo:hi])
        column_kernels.lane_sums(np.where(predicted_index(fb) != yb, w, 0.0), 0, hi - lo,
                                 lane, out[:, 0])
        m = vote_margins(yb, fb)
        for q in range(out.shape[0]):
            out[q, 1] = m[q * lane:(q + 1) * lane].min()

    return (), _lanes(blocks, 2, run)


def vote_error_and_margin(blocks: RowBlocks, y: Rows, f: Rows, s: Rows | None,
                          total: float) -> tuple[float, float]:
    """Vector scores' weighted training error ``Σ s [argmax f ≠ y] / total`` (ties to
    the lowest class, as ``predict``) and smallest vote margin ``min (f_y − max_{k≠y}
    f_k)``, in one pass by lanes."""
    p = lane_parts(blocks.map(_vote_error_and_margin, y, f, s)[1])
    return float(ordered_sum(p[:, 0])) / total, float(p[:, 1].min())


def error_and_margin(blocks: RowBlocks, y: Rows, f: Rows, s: Rows | None,
                     total: float) -> tuple[float, float]:
    """A binary score's weighted training error ``Σ s [(f > 0) ≠ (y > 0)] / total``
    (``predict`` says ``classes_[1]`` when ``f > 0``) and its smallest margin
    ``min y f``, in one pass by lanes."""
    p = lane_parts(blocks.map(_error_and_margin, y, f, s)[1])
    return float(ordered_sum(p[:, 0])) / total, float(p[:, 1].min())


@outputs_only(1)
def _combined(blocks: RowBlocks, a, *bs, coefs: tuple) -> tuple[tuple, None]:
    out = blocks.empty(a.shape)

    def run(lo: int, hi: int) -> None:
        out[lo:hi] = a[lo:hi]
        for c, b in zip(coefs, bs, strict=True):
            out[lo:hi] += c * b[lo:hi]

    elementwise(blocks, run)
    return (out,), None


@outputs_only(1)
def _scaled(blocks: RowBlocks, a, s) -> tuple[tuple, None]:
    out = blocks.empty(a.shape)
    s = s[:, None] if a.ndim == 2 and s.ndim == 1 else s
    elementwise(blocks, lambda lo, hi: np.multiply(s[lo:hi], a[lo:hi], out=out[lo:hi]))
    return (out,), None


def scaled(blocks: RowBlocks, a: Rows, s: Rows) -> Rows:
    """``s · a`` elementwise (``s`` of shape (n,) or (n, 1) against (n, K) rows)."""
    return _shaped_as(blocks.map(_scaled, a, s)[0][0], a)


@outputs_only(1)
def _ldexp(blocks: RowBlocks, a, *, e: int) -> tuple[tuple, None]:
    out = blocks.empty(a.shape)
    elementwise(blocks, lambda lo, hi: np.ldexp(a[lo:hi], e, out=out[lo:hi]))
    return (out,), None


def combined(blocks: RowBlocks, a: Rows, terms: list[tuple[float, Rows]]) -> Rows:
    """``a + Σ_k c_k · b_k`` for ``terms = [(c_k, b_k), …]``, each term added in turn."""
    return _shaped_as(blocks.map(_combined, a, *(b for _, b in terms),
                                 coefs=tuple(c for c, _ in terms))[0][0], a)


def ldexp(blocks: RowBlocks, a: Rows, e: int) -> Rows:
    """``a · 2**e`` (exact)."""
    return _shaped_as(blocks.map(_ldexp, a, e=int(e))[0][0], a)


@outputs_only(1)
def _descent(blocks: RowBlocks, y, f, *, loss: Loss) -> tuple[tuple, None]:
    out = blocks.empty(f.shape)
    elementwise(blocks, lambda lo, hi: np.negative(loss.gradient(y[lo:hi], f[lo:hi]),
                                                   out=out[lo:hi]))
    return (out,), None


def descent(blocks: RowBlocks, loss: Loss, y: Rows, f: Rows) -> Rows:
    """``−∇l(y, f)`` of a pointwise loss, elementwise."""
    return _shaped_as(blocks.map(_descent, y, f, loss=loss)[0][0], f)


def _logits(blocks: RowBlocks, margins, log_s, *, loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """Pass 1 of :func:`dual_weights`: each run's logits (and log-risk terms), kept by the
    run's first row, and their maxima (in the run's first lane's slot)."""
    separate = not loss.phi_is_neg_dphi
    # Each run of rows keeps its own logits (the loss's answer itself, not a copy into
    # one array: at 1,000,000 rows a copy costs a tenth of the round).  The three passes
    # cut the rows into the same runs, so a run finds its logits by its first row.
    zs: dict[int, np.ndarray] = {}
    log_phis: dict[int, np.ndarray] = {}

    def logits(lo: int, hi: int, out: np.ndarray) -> None:
        z = loss.log_neg_dphi(margins[lo:hi])
        zs[lo] = z if log_s is None else z + log_s[lo:hi]
        out[0, 0] = zs[lo].max()
        if separate:
            lp = loss.log_phi(margins[lo:hi])
            log_phis[lo] = lp if log_s is None else lp + log_s[lo:hi]
            out[0, 1] = log_phis[lo].max()

    tops = _lanes(blocks, 2, logits, fill=-math.inf)
    return (zs, log_phis), tops


def _exps(blocks: RowBlocks, zs, log_phis, *, top: float,
          top_phi: float) -> tuple[tuple, np.ndarray]:
    """Pass 2: ``w = exp(z − top)`` (:func:`._column_kernels.exp`) and the lanes' sums
    (the logits left as they are)."""
    lane, w = blocks.lane, blocks.empty()

    def exps(lo: int, hi: int, out: np.ndarray) -> None:
        column_kernels.shifted_exps(zs[lo], top, w[lo:hi], 0, hi - lo, lane, out[:, 0])
        if log_phis and math.isfinite(top_phi):
            column_kernels.shifted_exps(log_phis[lo], top_phi, column_kernels.NO_OUTPUT,
                                        0, hi - lo, lane, out[:, 1])

    return (w,), _lanes(blocks, 2, exps)


@deferred_stat(1)
def _normalise(blocks: RowBlocks, e, zs, y, *, top: float,
               total: float) -> tuple[tuple, np.ndarray]:
    """Pass 3: the query ``(e / total) · y`` (the weights are its magnitudes) and, with
    the logits ``zs``, the lanes' ``Σ e (z − top)`` (the entropy's, read when the round
    is recorded: see ``deferred_stat``; ``zs`` None: the exps' pass made it)."""
    lane, query = blocks.lane, blocks.empty()
    # a compiled sum, as np.dot's BLAS rounds by CPU
    inner = _lanes(blocks, 1, lambda lo, hi, out: column_kernels.normalise(
        e[lo:hi], column_kernels.NO_WEIGHTS if zs is None else zs[lo], top, y[lo:hi],
        total, query[lo:hi], 0, hi - lo, lane, out[:, 0]))
    return (query,), inner


@outputs_only(1)
def _rescaled(blocks: RowBlocks, q, *, scale: float) -> tuple[tuple, None]:
    """``q · scale`` (in place where a pass may write over its inputs)."""
    out = q if blocks.in_place else blocks.empty()
    elementwise(blocks, lambda lo, hi: np.multiply(q[lo:hi], scale, out=out[lo:hi]))
    return (out,), None


#: How far ``Σ e`` may lie from 1 for the exps of a step shifted by a predicted
#: normaliser (:func:`step_and_weights`) to be the weights as they are: a few hundred
#: roundings of 1 (a prediction from a two-valued column's masses misses by about as many
#: as the sums of those masses and of the exps make); beyond it, they are normalised.
NORMALISED_SLACK = 2.0 ** -40

#: How far below the bound on the new logits' maximum a predicted normaliser may shift
#: the exps (:func:`step_and_weights`): each exp then stays below e^PREDICTION_REACH,
#: and their sum over any number of rows a float64 can index is finite.
PREDICTION_REACH = 600.0

#: How far above the new logits' maximum a shift from a bound may lie before the weights'
#: exps are made again from the maximum itself: with a shift δ too high, the largest
#: ``exp`` is e^−δ instead of 1, and weights below e^(δ−745) of the largest round to 0
#: instead of to a subnormal number (below rounding in every sum they enter).
SHIFT_SLACK = 64.0


@stored_as("DualWeights")
@dataclass(frozen=True)
class DualWeights:
    """What :func:`dual_weights` and :func:`step_and_weights` give: the oracle's query
    ``w · y`` (whose magnitudes are the normalised dual weights ``w``, and signs the
    labels: a booster's passes read it alone), the weights' entropy (a function, read
    when the round is recorded), the log-risk, and the logits' maxima ``tops`` (the
    next step's bound starts from them)."""

    query: Rows
    entropy: Callable[[], float]
    log_loss: float
    tops: tuple[float, float]

    @property
    def w(self) -> np.ndarray:
        """The weights ``|query|`` (in memory)."""
        return np.abs(self.query)


def dual_weights(blocks: RowBlocks, loss: MarginLoss, margins: np.ndarray,
                 log_s: np.ndarray | None, y: np.ndarray, log_mass: float) -> DualWeights:
    """The normalised dual weights ``w ∝ s · (−φ'(margins))`` in log space, the oracle's
    query ``w · y``, the weights' Shannon entropy (Telgarsky 2012, Remark 5) as a
    function to call when it is recorded (on a cluster, its sums come back with the
    next stats the client waits for: one round trip fewer) and the log-risk
    ``log(Σ s φ(margins) / Σ s)`` (``log_mass`` is ``log Σ s``).

    Three passes on threads (or a cluster's partitions), each followed by a reduction
    over lanes:

    1. the logits ``z = log(−φ'(m)) + log s`` and their maximum ``top`` (and, unless
       ``φ = −φ'``, the log-risk terms ``log φ(m) + log s`` and their maximum);
    2. ``w = exp(z − top)`` (:func:`._column_kernels.exp`, compiled and vectorised, the
       same bits on every CPU) and its lanes' sums, whose total in lane order is
       ``total``;
    3. ``w /= total``, ``query = w · y`` and ``Σ e (z − top)``, one compiled pass.

    The entropy ``−Σ w log w = log total − Σ e (z − top) / total`` reuses the logits;
    for the exponential loss (φ = −φ') the normaliser is the risk itself, so one ``exp``
    a row gives all four.  Any ``top`` at or above the maximum gives the same weights
    to rounding: :func:`step_and_weights` takes one from a bound.
    """
    (zs, log_phis), parts = blocks.map(_logits, margins, log_s, loss=loss)
    return _weights_from_logits(blocks, loss, zs, log_phis, lane_parts(parts), y, log_mass)


def _logits_into(v: np.ndarray, log_s, lo: int, hi: int, out: np.ndarray) -> float:
    """``v + log s`` of rows ``lo:hi`` (``log_s`` None: ``v``) into ``out``, and its
    maximum; ``v``, the loss's own answer, is not written into."""
    if log_s is None:
        out[:] = v
    else:
        np.add(v, log_s[lo:hi], out=out)
    return float(out.max())


#: Rows a run of :func:`_step_exps` takes through all its steps at once: a few arrays of
#: this many float64 stay in a core's cache between the steps (the passes are bound by
#: memory: one sweep a step over 10^6 rows reads 8 MB from memory each time).
CHUNK_ROWS = 1 << 15


@deferred_stat(5)
def _step_exps(blocks: RowBlocks, m, a, y, s, log_s, *, c: float, loss: MarginLoss,
               top: float, top_phi: float, query: bool = False) -> tuple[tuple, tuple]:
    """:func:`_step_margins`, pass 1 of :func:`dual_weights` on the new margins and, if
    ``top`` is finite, pass 2 shifted by it: one stage (on a cluster, one round trip).

    Each run of rows goes through the three in chunks of whole lanes (``CHUNK_ROWS``),
    each chunk through all three steps while it is in cache: the same operations on
    the same rows, lane by lane, as three sweeps would make (the same bits).  For the
    exponential loss (``loss.log_weight_is_neg_margin``) a run is one compiled call
    (:func:`._column_kernels.exponential_step`): with the normalisation after it and
    NumPy's ``exp`` in both, 2.16 ms as chunks against 1.50 ms as one pass at 100,000
    rows on two threads (medians of 38, interleaved, a noisy machine).  With ``query``,
    that pass also writes ``e · y`` (the oracle's query if ``Σ e`` is 1: ``top`` the
    weights' log-normaliser); it is the last output (None otherwise)."""
    if not math.isfinite(top):
        (stepped,), step_lanes = _step_margins(blocks, m, a, y, s, c=c)
        logit_rows, logit_tops = _logits(blocks, stepped, log_s, loss=loss)
        return (stepped, *logit_rows, None, None), (step_lanes, logit_tops, None)
    separate = not loss.phi_is_neg_dphi
    lane, n_lanes = blocks.lane, blocks.n_lanes
    margins, e = blocks.empty(), blocks.empty()
    step_parts, sums = np.zeros((n_lanes, 2)), np.zeros((n_lanes, 2))
    tops = np.full((n_lanes, 2), -math.inf)
    zs: dict[int, np.ndarray] = {}  # (each run's, by its first row: see _logits)
    log_phis: dict[int, np.ndarray] = {}
    if loss.log_weight_is_neg_margin:
        # the exponential loss: the whole stage is one compiled pass a run, which keeps
        # no logits (an array of n fewer at the fit's peak, written and read again): the
        # entropy's sums come with the exps, into sums[:, 1] (unused by this loss)
        no_log = column_kernels.NO_WEIGHTS if log_s is None else log_s
        # with the query asked, the exps are not kept: the query holds them (|query|)
        asked, exps = (e, column_kernels.NO_OUTPUT) if query else (column_kernels.NO_OUTPUT, e)

        def fused(q0: int, q1: int, lo: int, hi: int) -> None:
            column_kernels.exponential_step(m, a, y, c, s, no_log, top, margins, exps, asked,
                                            lo, hi, lane, step_parts[q0:q1], tops[q0:q1],
                                            sums[q0:q1])

        blocks.lane_map(fused)
        return (margins, None, log_phis, None if query else e, e if query else None), (
            step_parts, tops, sums)
    chunk = lane * max(1, CHUNK_ROWS // lane)
    phi_sums = separate and math.isfinite(top_phi)

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        zs[lo] = z_run = blocks.empty(hi - lo)
        if separate:
            log_phis[lo] = lp_run = blocks.empty(hi - lo)
        for c0 in range(lo, hi, chunk):
            c1 = min(c0 + chunk, hi)
            qa, qb = q0 + (c0 - lo) // lane, q0 + -(-(c1 - lo) // lane)
            column_kernels.step_margins(m, a, y, c, s, margins, c0, c1, lane,
                                        step_parts[qa:qb])
            new = margins[c0:c1]
            z = z_run[c0 - lo:c1 - lo]
            tops[q0, 0] = max(tops[q0, 0], _logits_into(loss.log_neg_dphi(new), log_s, c0, c1,
                                                        z))
            column_kernels.shifted_exps(z, top, e[c0:c1], 0, c1 - c0, lane, sums[qa:qb, 0])
            if separate:
                lp = lp_run[c0 - lo:c1 - lo]
                tops[q0, 1] = max(tops[q0, 1], _logits_into(loss.log_phi(new), log_s, c0, c1,
                                                            lp))
                if phi_sums:
                    column_kernels.shifted_exps(lp, top_phi, column_kernels.NO_OUTPUT, 0,
                                                c1 - c0, lane, sums[qa:qb, 1])

    blocks.lane_map(run)
    return (margins, zs, log_phis, e, None), (step_parts, tops, sums)


def step_and_weights(blocks: RowBlocks, loss: MarginLoss, m: np.ndarray, a: np.ndarray,
                     y: np.ndarray, c: float, reach: float, s: np.ndarray,
                     log_s: np.ndarray | None, log_mass: float, tops: tuple[float, float],
                     normaliser: float | None = None,
                     prefetch: Callable[[Rows], None] | None = None
                     ) -> tuple[np.ndarray, float, float, DualWeights]:
    """The step's new margins ``m + c y a`` (:func:`._column_kernels.step_margins`), their
    minimum ``low`` and ``wrong = Σ s [wrong]``, then :func:`dual_weights` at the new
    margins: ``(margins, low, wrong, weights)``.

    ``reach ≥ max |c y a|`` bounds the step's move of every margin, and ``tops`` are the
    logits' maxima at ``m``.  When the loss's logs are L-Lipschitz
    (``loss.log_weight_lipschitz``), the new maxima are at most ``tops + L · reach``, so
    the weights' ``exp`` is shifted by that bound in the same pass as the step, without
    waiting for the maxima (one pass and one round trip fewer); it is made again from
    the maxima only when the bound lies more than :data:`SHIFT_SLACK` above them.

    ``normaliser``, for the exponential loss, predicts the new weights' log-normaliser
    ``log Σ s e^(−m')`` (up to the additive constant of the logits, ``log_mass`` and
    the risk: :meth:`.classifier.SignedColumn.log_exp_mass` gives it for a column of
    two values, AdaBoost's ``log Z_t``).  The exps are then shifted by it, so that they
    sum to 1, and the same pass writes the query ``e · y``: when their sum is 1 within
    :data:`NORMALISED_SLACK`, they are the weights, and the normalising pass (a read
    and two writes of every row) is not made.  Otherwise (a column of more values) the
    weights are made as without it: the prediction changes their bits, never whether
    they are right.

    ``prefetch(query)``, when given and a normaliser is predicted, is called with that
    query after the step's stage is submitted and before its stats are waited for: the
    oracle's hint (``BoundOracle._prefetch``) that on a cluster lets the next round's
    histograms come back with this step's stats.
    """
    lip = loss.log_weight_lipschitz
    shift = (math.inf, math.inf) if lip is None else \
        (tops[0] + lip * reach, tops[1] + lip * reach)
    predicted = (normaliser is not None and math.isfinite(normaliser) and lip is not None
                 and loss.log_weight_is_neg_margin)
    if predicted:
        # each exp at most e^PREDICTION_REACH, their sum finite, whatever the prediction
        shift = (max(normaliser, shift[0] - PREDICTION_REACH), shift[1])
    (margins, zs, log_phis, e, query), later = blocks.map(
        _step_exps, m, a, y, s, log_s, c=c, loss=loss, top=shift[0], top_phi=shift[1],
        query=predicted)
    if predicted and prefetch is not None:
        prefetch(query)  # before the wait: the query is the next one if its sum is 1
    parts = later.get()
    if loss.log_weight_is_neg_margin and math.isfinite(shift[0]):
        zs = None  # the fused pass kept no logits (on a cluster: a Partitioned of Nones)
    p = lane_parts([step for step, _, _ in parts])
    low, wrong = float(p[:, 0].min()), float(ordered_sum(p[:, 1]))
    # (without a bound the stage made no exps: e holds None)
    shifted = None if lip is None else (shift, e, lane_parts([sums for _, _, sums in parts]),
                                        query if predicted else None)
    return margins, low, wrong, _weights_from_logits(
        blocks, loss, zs, log_phis, lane_parts([t for _, t, _ in parts]), y, log_mass,
        shifted, margins, log_s)


@stored_as("Entropy")
@dataclass(frozen=True)
class _Entropy:
    """The weights' entropy ``−Σ w log w = log total − Σ e (z − top) / total`` (``w = e /
    total``, ``e = exp(z − top)``), its lanes' sums read when it is called (a fitted
    model keeps it in its running state: a class, so it pickles)."""

    total: float
    later: Any

    def __call__(self) -> float:
        inner = float(ordered_sum(lane_parts(self.later.get())[:, 0]))
        return math.log(self.total) - inner / self.total


def _weights_from_logits(blocks: RowBlocks, loss: MarginLoss, zs, log_phis,
                         tops: np.ndarray, y, log_mass: float,
                         shifted: tuple | None = None, margins=None,
                         log_s=None) -> DualWeights:
    """Passes 2 and 3 of :func:`dual_weights`, from pass 1's outputs and lanes' maxima
    ``tops``; pass 2 is already made when ``shifted = ((top, top_phi), e, sums, query)``
    and its shifts lie within :data:`SHIFT_SLACK` of the maxima, and pass 3 too when
    ``query`` is not None (the exponential loss's step shifted by a predicted
    normaliser) and ``Σ e`` is 1 within :data:`NORMALISED_SLACK`.  ``zs`` None: the
    exponential loss's fused step kept no logits, and its ``sums[:, 1]`` are the
    entropy's; if its shift is not usable, the logits are made again from ``margins``
    (pass 1)."""
    separate = not loss.phi_is_neg_dphi
    exact = (float(tops[:, 0].max()), float(tops[:, 1].max()))
    if shifted is not None and _close_above(shifted[0][0], exact[0]) and (
            not separate or _close_above(shifted[0][1], exact[1])):
        (top, top_phi), e, sums, query = shifted
        if query is not None:  # e · y from a predicted normaliser (no e: zs None too)
            total = float(ordered_sum(sums[:, 0]))
            if abs(total - 1.0) > NORMALISED_SLACK:  # missed: normalised as e would be
                (query,), _ = blocks.map(_rescaled, query, scale=1.0 / total)
            return DualWeights(query, _Entropy(total, ReadyStats([sums[:, 1:]])),
                               top + math.log(total) - log_mass, exact)
    else:
        if zs is None:
            (zs, log_phis), _ = blocks.map(_logits, margins, log_s, loss=loss)
        top, top_phi = exact
        (e,), parts = blocks.map(_exps, zs, log_phis, top=top, top_phi=top_phi)
        sums = lane_parts(parts)
    total = float(ordered_sum(sums[:, 0]))
    (query,), later = blocks.map(_normalise, e, zs, y, top=top, total=total)
    # (the exponential loss's fused step: the entropy's sums came with the exps)
    entropy = _Entropy(total, ReadyStats([sums[:, 1:]]) if zs is None else later)
    if not separate:
        log_loss = top + math.log(total) - log_mass
    elif not math.isfinite(top_phi):
        log_loss = top_phi - log_mass  # all -inf (empty sum) or a +inf term
    else:
        log_loss = top_phi + math.log(float(ordered_sum(sums[:, 1]))) - log_mass
    return DualWeights(query, entropy, log_loss, exact)


def _close_above(shift: float, top: float) -> bool:
    """Whether a shift is usable for logits of maximum ``top``: finite, at most rounding
    below it (a larger logit would make an ``exp`` above 1) and within
    :data:`SHIFT_SLACK` above it."""
    return math.isfinite(top) and top - 1e-9 * max(1.0, abs(top)) <= shift <= top + SHIFT_SLACK


# -- the risk along one column, for the line searches (:class:`.linesearch.RowLine`) -----


@outputs_only(1)
def _oriented(blocks: RowBlocks, a, y, *, norm: float, sign: float) -> tuple[tuple, None]:
    u = blocks.empty()

    def run(lo: int, hi: int) -> None:
        np.divide(np.multiply(y[lo:hi], a[lo:hi], out=u[lo:hi]), norm, out=u[lo:hi])
        u[lo:hi] *= sign

    elementwise(blocks, run)
    return (u,), None


def oriented(blocks: RowBlocks, a: Rows, y: Rows, norm: float, sign: float) -> Rows:
    """The oriented column ``u = sign · y · a / norm``, elementwise."""
    return blocks.map(_oriented, a, y, norm=norm, sign=sign)[0][0]


def _risk_logits(blocks: RowBlocks, m, log_s, *, loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """``log φ(m) + log s`` and their maxima (in each run's first lane's slot)."""
    out = blocks.empty()

    def run(lo: int, hi: int, tops: np.ndarray) -> None:
        tops[0, 0] = _logits_into(loss.log_phi(m[lo:hi]), log_s, lo, hi, out[lo:hi])

    return (out,), _lanes(blocks, 1, run, fill=-math.inf)


def _line_rho(blocks: RowBlocks, lr, *, top: float) -> tuple[tuple, np.ndarray]:
    """``log ρ = lr − top``, ``ρ = exp(log ρ)`` and the lanes' sums of ``ρ``."""
    lane = blocks.lane
    log_rho = lr if blocks.in_place else blocks.empty()
    rho = blocks.empty()

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        np.subtract(lr[lo:hi], top, out=log_rho[lo:hi])
        np.exp(log_rho[lo:hi], out=rho[lo:hi])
        column_kernels.lane_sums(rho, lo, hi, lane, out[:, 0])

    return (log_rho, rho), _lanes(blocks, 1, run)


def line_weights(blocks: RowBlocks, loss: MarginLoss, m: Rows, log_s: Rows | None
                 ) -> tuple[Rows, Rows, float]:
    """The risk's shares along a line, unnormalised: ``log ρ_i = log s_i + log φ(m_i) −
    top`` (``top`` their maximum, so that the largest ``ρ_i`` is 1), ``ρ_i`` and
    ``Σ_i ρ_i`` (the lanes in order); ``ρ_i / Σ ρ`` is row i's share of the risk."""
    (lr,), parts = blocks.map(_risk_logits, m, log_s, loss=loss)
    top = float(lane_parts(parts)[:, 0].max())
    (log_rho, rho), parts = blocks.map(_line_rho, lr, top=top)
    return log_rho, rho, float(ordered_sum(lane_parts(parts)[:, 0]))


def _line_delta(blocks: RowBlocks, m, u, rho, *, loss: MarginLoss,
                alpha: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        # each thread its own error state (NumPy's is per thread); overflow is inf
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.expm1(loss.log_phi_shift(m[lo:hi], alpha * u[lo:hi]))
            np.multiply(rho[lo:hi], terms, out=terms)
        column_kernels.lane_sums(terms, 0, hi - lo, lane, out[:, 0])

    return (), _lanes(blocks, 1, run)


def line_delta(blocks: RowBlocks, loss: MarginLoss, m: Rows, u: Rows, rho: Rows,
               alpha: float) -> float:
    """``Σ_i ρ_i expm1(log φ(m_i + α u_i) − log φ(m_i))``, the lanes in order."""
    parts = lane_parts(blocks.map(_line_delta, m, u, rho, loss=loss, alpha=alpha)[1])
    return float(ordered_sum(parts[:, 0]))


def _line_slope(blocks: RowBlocks, m, u, log_rho, *, loss: MarginLoss,
                alpha: float) -> tuple[tuple, np.ndarray]:
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.add(log_rho[lo:hi], loss.log_neg_dphi_shift(m[lo:hi], alpha * u[lo:hi]))
            terms = np.multiply(u[lo:hi], np.exp(e, out=e), out=e)
        column_kernels.lane_sums(terms, 0, hi - lo, lane, out[:, 0])

    return (), _lanes(blocks, 1, run)


def line_slope(blocks: RowBlocks, loss: MarginLoss, m: Rows, u: Rows, log_rho: Rows,
               alpha: float) -> float:
    """``Σ_i u_i exp(log ρ_i + log(−φ'(m_i + α u_i)) − log φ(m_i))``, the lanes in
    order."""
    parts = lane_parts(blocks.map(_line_slope, m, u, log_rho, loss=loss, alpha=alpha)[1])
    return float(ordered_sum(parts[:, 0]))


def _phi_and_low(blocks: RowBlocks, m, s, *, loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ s φ(m)`` and each run's ``min s`` (unit weights: 1)."""
    lane = blocks.lane

    def run(lo: int, hi: int, out: np.ndarray) -> None:
        terms = loss.phi(m[lo:hi]) if s is None else np.multiply(loss.phi(m[lo:hi]), s[lo:hi])
        column_kernels.lane_sums(terms, 0, hi - lo, lane, out[:, 0])
        out[0, 1] = 1.0 if s is None else s[lo:hi].min()

    return (), _lanes(blocks, 2, run, fill=math.inf)


def curvature_argument(blocks: RowBlocks, loss: MarginLoss, m: Rows, s: Rows | None) -> float:
    """``Σ_j s_j φ(m_j) / min_i s_i``, the argument of Telgarsky's (2013, L115) ``C_t``
    (``s`` None: unit weights)."""
    p = lane_parts(blocks.map(_phi_and_low, m, s, loss=loss)[1])
    return float(ordered_sum(p[:, 0])) / float(p[:, 1].min())
