"""The margin booster's passes over the rows (Ji, Srebro & Telgarsky 2021), by lanes.

:class:`~.accelerated.AcceleratedMarginClassifier` reads its ``n`` rows through the
scores ``Z w`` (one entry a row, binary; one a class a row, multiclass), the dual point
``q = ∇ψ(Z w)`` (eq. C.1) and the query ``r`` whose product with the columns is ``Zᵀq``.
Each function here is a stage of :class:`~oracleboost.rows.blocks.RowBlocks` (in memory, on
threads) or of a cluster's blocks (on the workers): elementwise work on runs of rows,
and sums made lane by lane in row order, the lanes added in order, so the answers are
the same bits for every ``n_jobs`` and on a cluster.  An (n, K) array's lane sums its
rows' entries row by row, each row's in class order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.losses import MarginLoss
from oracleboost.optim.row_passes import lane_parts
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import RowBlocks, ordered_sum, outputs_only
from oracleboost.rows.partitioned import Rows, shaped_like

__all__ = ["DualPoint", "scores", "momentum_scores", "dual_point", "query", "worst_row",
           "draw_row"]

_SQRT2 = math.sqrt(2.0)


def row_lane_sums(x: np.ndarray, lo: int, hi: int, lane: int, out: np.ndarray) -> None:
    """Each lane's sum of ``x[lo:hi]`` (shape (n,) or (n, K), C order) into ``out``."""
    K = 1 if x.ndim == 1 else x.shape[1]
    column_kernels.lane_sums(x.reshape(-1), lo * K, hi * K, lane * K, out)


def _own_class(y: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The own-class cells ``(rows, y)`` of the rows ``lo:hi``, relative to ``lo``."""
    return np.arange(hi - lo), y[lo:hi]


@outputs_only(1)
def _scores(blocks: RowBlocks, S, y, *, scale: float, multiclass: bool,
            intercept) -> tuple[tuple, None]:
    """``Z w`` from ``S = H w``: binary ``−y (S + b) / scale``; multiclass the logits
    ``(S_ij − S_{i c_i}) / (√2 scale)`` (0 in the own-class cells)."""
    out = blocks.empty(S.shape)

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        s = S[lo:hi] if intercept is None else S[lo:hi] + intercept
        if not multiclass:
            out[lo:hi] = -y[lo:hi] * s / scale
        else:
            own = s[_own_class(y, lo, hi)]
            out[lo:hi] = (s - own[:, None]) / (_SQRT2 * scale)

    blocks.lane_map(run)
    return (out,), None


def scores(blocks: RowBlocks, S: Rows, y: Rows, scale: float, multiclass: bool,
           intercept: float | np.ndarray | None) -> Rows:
    """:func:`_scores` over every row (``intercept``: None, or b, added to S first)."""
    return shaped_like(blocks.map(_scores, S, y, scale=scale, multiclass=multiclass,
                                  intercept=intercept)[0][0], S)


@outputs_only(2)
def _momentum(blocks: RowBlocks, Zw, Zg, Zz, *, beta: float,
              theta: float) -> tuple[tuple, None]:
    """Algorithm 2's scores updated by one row: ``Zg' = β (Zg + Zz)``,
    ``Zw' = Zw − θ (Zg' + Zz)`` (``Zg`` None: zero)."""
    g, w = blocks.empty(Zz.shape), blocks.empty(Zz.shape)

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        z = Zz[lo:hi]
        g[lo:hi] = beta * ((0.0 if Zg is None else Zg[lo:hi]) + z)
        w[lo:hi] = Zw[lo:hi] - theta * (g[lo:hi] + z)

    blocks.lane_map(run)
    return (g, w), None


def momentum_scores(blocks: RowBlocks, Zw: Rows, Zg: Rows | None, Zz: Rows, beta: float,
                    theta: float) -> tuple[Rows, Rows]:
    """``(Zg', Zw')`` of :func:`_momentum`."""
    (g, w), _ = blocks.map(_momentum, Zw, Zg, Zz, beta=beta, theta=theta)
    return shaped_like(g, Zz), shaped_like(w, Zz)


@stored_as("DualPoint")
@dataclass(frozen=True)
class DualPoint:
    """The dual point at scores ``Z w``: ``xi`` the scores that are rows of Z (−∞ in
    the own-class cells), ``q = ∇ψ(xi)``, ``r`` the query whose product with the
    columns gives ``Zᵀq`` (binary ``−y q``; multiclass ``Q − e_c ∘ rowsum Q``; the
    kernel form ``q``), ``r_sums`` its sums over the rows (the intercept's entry of
    ``Zᵀq``), ``lanes`` each lane's mass of ``q`` (Algorithm 2 draws from them),
    ``qmass = Σ q``, ``log_sum = log Σ s ℓ(xi)``, ``log_dpsi = log ℓ'(ψ)``, ``top =
    max xi`` and ``wrong`` the mass ``Σ s`` of the rows some score of which is ≥ 0."""

    xi: Rows
    q: Rows
    r: Rows
    r_sums: np.ndarray
    lanes: np.ndarray
    qmass: float
    log_sum: float
    log_dpsi: float
    top: float
    wrong: float


def _dual_terms(blocks: RowBlocks, Zw, y, log_s, s, *, loss: MarginLoss,
                multiclass: bool) -> tuple[tuple, np.ndarray]:
    """``xi`` (the rows only), ``lp = log s + log ℓ(xi)``, and each lane's ``max lp``,
    ``max xi`` and wrong mass."""
    xi = blocks.empty(Zw.shape)
    np.copyto(xi, Zw)
    lp = blocks.empty(Zw.shape)
    lane = blocks.lane
    parts = np.full((blocks.n_lanes, 3), -math.inf)
    parts[:, 2] = 0.0

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        x = xi[lo:hi]
        if multiclass:
            x[_own_class(y, lo, hi)] = -np.inf  # no row of Z (it would force margin 0)
        ls = log_s[lo:hi]
        np.add(loss.log_phi(-x), ls[:, None] if multiclass else ls, out=lp[lo:hi])
        parts[q0, 0] = lp[lo:hi].max(initial=-math.inf)
        parts[q0, 1] = x.max(initial=-math.inf)
        bad = (x >= 0).any(axis=1) if multiclass else x >= 0
        row_lane_sums(np.where(bad, s[lo:hi], 0.0), 0, hi - lo, lane, parts[q0:q1, 2])

    blocks.lane_map(run)
    return (xi, lp), parts


def _dual_sums(blocks: RowBlocks, lp, *, top: float) -> tuple[tuple, np.ndarray]:
    """Each lane's ``Σ exp(lp − top)``."""
    lane, out = blocks.lane, np.zeros(blocks.n_lanes)
    blocks.lane_map(lambda q0, q1, lo, hi: row_lane_sums(np.exp(lp[lo:hi] - top), 0, hi - lo,
                                                      lane, out[q0:q1]))
    return (), out


def _dual_q(blocks: RowBlocks, xi, y, log_s, *, loss: MarginLoss, log_dpsi: float,
            form: str) -> tuple[tuple, np.ndarray]:
    """``q = exp(log s + log ℓ'(xi) − log ℓ'(ψ))`` and the query ``r`` (see
    :class:`DualPoint`), with each lane's mass of q and sums of r's columns."""
    multiclass = form == "multiclass"
    q = blocks.empty(xi.shape)
    r = q if form == "kernel" else blocks.empty(xi.shape)
    K = xi.shape[1] if multiclass else 1
    lane = blocks.lane
    parts = np.zeros((blocks.n_lanes, 1 + K))

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        ls = log_s[lo:hi]
        np.exp(loss.log_neg_dphi(-xi[lo:hi]) + (ls[:, None] if multiclass else ls)
               - log_dpsi, out=q[lo:hi])
        row_lane_sums(q[lo:hi], 0, hi - lo, lane, parts[q0:q1, 0])
        _query_into(q, y, form, lo, hi, lane, r, parts[q0:q1, 1:])

    blocks.lane_map(run)
    return (q, r), parts


def _query_into(q, y, form: str, lo: int, hi: int, lane: int, r, sums) -> None:
    """The query ``r`` of rows ``lo:hi`` (see :class:`DualPoint`; the kernel form's is
    ``q`` itself) and each lane's sums of its columns into ``sums`` (lanes, K)."""
    if form == "binary":
        np.multiply(-y[lo:hi], q[lo:hi], out=r[lo:hi])
    elif form == "multiclass":
        rr = r[lo:hi]
        rr[...] = q[lo:hi]
        rr[_own_class(y, lo, hi)] = -q[lo:hi].sum(axis=1)
    for k in range(sums.shape[1]):
        col = r[lo:hi] if r.ndim == 1 else np.ascontiguousarray(r[lo:hi, k])
        row_lane_sums(col, 0, hi - lo, lane, sums[:, k])


def _query(blocks: RowBlocks, q, y, *, form: str) -> tuple[tuple, np.ndarray]:
    r = q if form == "kernel" else blocks.empty(q.shape)
    parts = np.zeros((blocks.n_lanes, q.shape[1] if form == "multiclass" else 1))
    blocks.lane_map(lambda q0, q1, lo, hi: _query_into(q, y, form, lo, hi, blocks.lane, r,
                                                       parts[q0:q1]))
    return (r,), parts


def query(blocks: RowBlocks, q: Rows, y: Rows, form: str) -> tuple[Rows, np.ndarray]:
    """The query ``r`` of a dual point ``q`` (shape (n,) or (n, K); see
    :class:`DualPoint`) and its sums over the rows, as :func:`dual_point` makes them."""
    (r,), parts = blocks.map(_query, q, y, form=form)
    r = shaped_like(r, q) if form == "multiclass" else r
    return r, np.asarray(ordered_sum(lane_parts(parts)))


def dual_point(blocks: RowBlocks, loss: MarginLoss, Zw: Rows, y: Rows, log_s: Rows,
               s: Rows, form: str) -> DualPoint:
    """The dual point at ``Zw`` (``form``: ``"binary"``, ``"multiclass"`` or
    ``"kernel"``): three passes, each followed by a reduction over lanes, in log space.

    With margins ``m = −xi``: ``ℓ(xi) = φ(m)`` and ``ℓ'(xi) = −φ'(m)``; for the weighted
    potential ``ψ(xi) = ℓ⁻¹(Σ_i s_i ℓ(xi_i))``, ``∇ψ(xi)_i = s_i ℓ'(xi_i) / ℓ'(ψ(xi))``
    (unit weights: the paper's eq. 2.1; integer weights: repeated rows)."""
    multiclass = form == "multiclass"
    (xi, lp), parts = blocks.map(_dual_terms, Zw, y, log_s, s, loss=loss,
                                 multiclass=multiclass)
    p = lane_parts(parts)
    top_lp, top, wrong = float(p[:, 0].max()), float(p[:, 1].max()), float(
        ordered_sum(p[:, 2]))
    if math.isfinite(top_lp):
        _, sums = blocks.map(_dual_sums, lp, top=top_lp)
        log_sum = top_lp + math.log(float(ordered_sum(lane_parts(sums))))
    else:  # every term −∞ (an empty sum) or one +∞
        log_sum = top_lp
    log_dpsi = loss.log_neg_dphi_at_value(log_sum)  # log ℓ'(ψ) = log(−φ'(φ⁻¹(Σ sℓ)))
    (q, r), parts = blocks.map(_dual_q, xi, y, log_s, loss=loss, log_dpsi=log_dpsi,
                               form=form)
    if multiclass:  # (a cluster's outputs are told their shape)
        xi, q, r = (shaped_like(a, Zw) for a in (xi, q, r))
    p = lane_parts(parts)
    sums = ordered_sum(p)
    return DualPoint(xi, q, r, np.asarray(sums[1:]), p[:, 0].copy(), float(sums[0]),
                     log_sum, float(log_dpsi), top, wrong)


def _worst(blocks: RowBlocks, xi) -> tuple[tuple, tuple[float, int]]:
    """The largest entry of ``xi`` and its first flat index (row-major)."""
    flat = xi.reshape(-1)
    i = int(np.argmax(flat))
    return (), (float(flat[i]), i)


def _sizes(blocks: RowBlocks) -> tuple[int, ...]:
    """Rows of each partition (in memory, one)."""
    return tuple(getattr(blocks, "sizes", (blocks.n,)))


def worst_row(blocks: RowBlocks, dual: DualPoint, width: int) -> int:
    """Algorithm 1's row for the perceptron: the largest score of a row of Z (the
    lowest flat index, row-major, on ties)."""
    stats = blocks.map(_worst, dual.xi)[1]
    best, index, offset = -math.inf, 0, 0
    for (value, i), rows in zip(stats, _sizes(blocks), strict=True):
        if value > best:
            best, index = value, offset + i
        offset += rows * width
    return index


def _find_in_lane(blocks: RowBlocks, q, *, lane_index: int, start: float,
                  target: float) -> tuple[tuple, int]:
    """The first flat index (row-major, in these blocks) in lane ``lane_index`` at
    which the running mass ``start + q_0 + q_1 + …`` passes ``target`` (the lane's
    last positive entry if none does)."""
    lo = lane_index * blocks.lane
    hi = min(lo + blocks.lane, blocks.n)
    flat = q[lo:hi].reshape(-1)
    width = flat.shape[0] // max(1, hi - lo)
    running = np.add.accumulate(np.concatenate([[start], flat]))[1:]
    above = np.flatnonzero(running > target)
    k = int(above[0]) if above.size else int(np.flatnonzero(flat > 0)[-1])
    return (), lo * width + k


def draw_row(blocks: RowBlocks, dual: DualPoint, u: float, width: int) -> int:
    """Algorithm 2's row ``i ~ q / Σ q`` (a flat index, row-major) for a uniform ``u``
    in [0, 1): the first index at which the running mass passes ``u · Σ q``, the
    running mass being each lane's in row order, started from the lanes' masses
    before it added in order.  (NumPy's ``choice`` runs one sum over every row, which
    a cluster's partitions could make only one after another.)  One pass over one
    lane."""
    masses = dual.lanes
    ends = np.add.accumulate(masses)  # the running mass at each lane's end, in order
    target = u * float(ends[-1])
    lane = int(np.searchsorted(ends, target, side="right"))
    if lane >= len(ends):  # u · Σq rounded up to Σq: the last lane with mass
        lane = int(np.flatnonzero(masses > 0)[-1])
    start = float(ends[lane - 1]) if lane > 0 else 0.0
    sizes = _sizes(blocks)
    first_lanes = np.cumsum([0] + [-(-m // blocks.lane) for m in sizes[:-1]])
    part = int(np.searchsorted(first_lanes, lane, side="right")) - 1
    k = blocks.map_one(part, _find_in_lane, dual.q, lane_index=lane - int(first_lanes[part]),
                       start=start, target=target)
    return sum(sizes[:part]) * width + k
