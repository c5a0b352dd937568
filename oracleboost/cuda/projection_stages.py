"""The device twins of MABoost's Bregman projections (:mod:`oracleboost.optim.
row_projections`) and of its capped sets' passes (:mod:`oracleboost.boosters.mirror.
passes`): part of :data:`oracleboost.cuda.stages.TWINS`.

The projections' client side is the CPU's (:func:`~oracleboost.optim.row_projections.
euclidean_simplex_rows_near`, :func:`~oracleboost.optim.row_projections.kl_simplex_rows`):
the selection of the threshold, its bracket and its closed form.  Each of its passes
over the rows runs here as one lane: the first pass's checks, the values at the pivots
(from the buckets' exact fixed-point sums, by the CPU's recurrence), the exact counts
between pivots, the device's own sample (every ``stride``-th row, thinned by a hash of
its position: it only guides the pivots), and the candidates gathered in row order
(appended in any order, then sorted by row).  So the threshold is the CPU's to the
rounding of the sums, and the weights with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost.cuda.device import fetch, upload
from oracleboost.cuda.row_kernels import ACTIVE_EUCLIDEAN, MIRROR_UPDATES
from oracleboost.optim import row_projections as rp
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed
from oracleboost.rows.partitioned import NotDistributedError

if TYPE_CHECKING:
    from oracleboost.cuda.blocks import DeviceBlocks

__all__ = ["PROJECTION_TWINS", "map_name", "update_code"]

_ROW_PROJECTIONS = "oracleboost.optim.row_projections"
_MIRROR = "oracleboost.boosters.mirror.passes"


def map_name(mirror: Any) -> str:
    """``"entropy"`` or ``"euclidean"``: the library's own maps (a map of the user's may
    compute otherwise), refused by name otherwise."""
    name = getattr(mirror, "name", None)
    if type(mirror).__module__ != _MIRROR.rsplit(".", 1)[0] + ".maps" or \
            name not in ("entropy", "euclidean"):
        raise NotDistributedError(
            f"mirror={getattr(mirror, 'name', type(mirror).__name__)!r} does not run on the "
            "GPU: it has no device twin (the GPU runs mirror='entropy' and 'euclidean'); "
            "fit on the CPU")
    return name


def update_code(update: Any, mirror: Any) -> int:
    """The kernels' code of MABoost's update (c) (:data:`~.row_kernels.MIRROR_UPDATES`;
    the active update with the Euclidean map :data:`~.row_kernels.ACTIVE_EUCLIDEAN`, the
    other updates' points read no map): the library's own classes only (a subclass may
    change the point), refused by name otherwise."""
    name = getattr(type(update), "name", None)
    if type(update).__module__ != _MIRROR.rsplit(".", 1)[0] + ".updates" or \
            name not in MIRROR_UPDATES:
        raise NotDistributedError(
            f"the update {type(update).__name__} does not run on the GPU (it runs "
            f"{sorted(MIRROR_UPDATES)}); fit on the CPU")
    if name == "active" and map_name(mirror) == "euclidean":
        return ACTIVE_EUCLIDEAN
    return MIRROR_UPDATES[name]


def _copy(blocks: DeviceBlocks, a: Any) -> tuple[tuple, None]:
    """A copy of ``a``."""
    out = blocks.empty()
    blocks.kernels.scaled[blocks.grid](a, 1.0, out)
    return (out,), None


# -- the entropy map's projection onto the simplex: row_projections.kl_softmax_rows ------
def _kl_top(blocks: DeviceBlocks, lz: Any) -> tuple[tuple, np.ndarray]:
    """The stat of :func:`oracleboost.optim.row_projections._kl_stats` without caps:
    ``max log z`` over the rows finite or ``−inf``, ``[NaN]``, ``[+inf]``, the number of
    rows with ``log z > −inf`` (the caps' entries: none)."""
    terms = blocks.empty((4, blocks.n))
    blocks.kernels.log_flags[blocks.grid](lz, terms, blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 4, (3,))
    stats = np.zeros((1, 13))
    stats[0, :4] = got.high[0], got.high[1], got.high[2], got.sums[3]
    stats[0, 4] = math.inf  # min cap: none
    return (), stats


def _kl_exps(blocks: DeviceBlocks, lz: Any, *, top: float) -> tuple[tuple, np.ndarray]:
    """``e = exp(log z − top)`` and the stat ``(Σ e, 0)`` (a sum and its correction, as
    the CPU's compensated lanes)."""
    e = blocks.empty()
    blocks.kernels.exps[blocks.grid](lz, top, e)
    return (e,), np.array([[blocks.reduce.sums(e)[0], 0.0]])


def _divide(blocks: DeviceBlocks, e: Any, *, total: float) -> tuple[tuple, None]:
    """``e / total``, written over ``e`` (the projection's own array)."""
    blocks.kernels.quotient[blocks.grid](e, total, e)
    return (e,), None


# -- the Euclidean projection onto the (capped) simplex: row_projections' passes --------
def _eu_pass(blocks: DeviceBlocks, z: Any, caps: Any, *, cap: float, first: bool,
             a: float, b: float, piv: np.ndarray, stride: int, thr: int, gathering: bool,
             limit: int) -> tuple[tuple, rp._Pass]:
    """A selection pass of the Euclidean projection
    (:func:`oracleboost.optim.row_projections._eu_pass`), as one lane: the first pass's
    checks; then the candidates ``(z, cap)`` and the fixed rows' sums (``gathering``),
    or the values at the pivots, the counts between them and the sample."""
    caps_d, cap = blocks.optional(caps), float(cap)
    return _device_pass(
        stats=lambda: _eu_first(blocks, z, caps_d), first=first, gathering=gathering,
        candidates=lambda: _eu_candidates(blocks, z, caps, caps_d, cap, a, b, limit),
        values=lambda: _eu_values(blocks, z, caps_d, cap, a, b, piv),
        sample=lambda: _appended_sample(blocks, blocks.kernels.eu_sample, thr,
                                        (z, caps_d, cap, float(a), float(b), int(stride))),
        P=int(piv.size), stride=stride)


def _device_pass(*, stats: Callable, first: bool, gathering: bool, candidates: Callable,
                 values: Callable, sample: Callable, P: int, stride: int
                 ) -> tuple[tuple, rp._Pass]:
    """One selection pass's :class:`~oracleboost.optim.row_projections._Pass`, one
    lane: ``stats()`` on the first pass; then ``candidates()`` (gathering), or
    ``values()`` at ``P`` pivots (if any) and ``sample()`` (``stride > 0``)."""
    st = stats() if first else None
    if gathering:
        cands, fixed = candidates()
        return (), rp._Pass(st, np.zeros((1, 0)), fixed, np.zeros(1, dtype=np.int64),
                            np.empty(0, dtype=np.uint64), np.empty(0), cands)
    vals, counts = values() if P else (np.zeros((1, 0)), np.zeros(1, dtype=np.int64))
    keys, smp = sample() if stride > 0 else (np.empty(0, dtype=np.uint64), np.empty(0))
    return (), rp._Pass(st, vals, None, counts, keys, smp, ())


def _gathered_rows(blocks: DeviceBlocks, limit: int, run: Callable[[Any, Any], None]
                   ) -> np.ndarray:
    """The rows a gathering kernel appends (``run(idx, count)``: at most ``limit``, in
    any order), sorted: the candidates in row order."""
    idx = blocks.cuda.device_array(max(1, min(blocks.n, limit) + 1), dtype=np.int64)
    count = upload(np.zeros(1, dtype=np.int64))
    run(idx, count)
    k = int(fetch(count)[0])
    if k > idx.shape[0]:
        raise RuntimeError(f"the projection's bracket holds {k} candidates, more than the "
                           f"{idx.shape[0]} its pass was sized for")
    return np.sort(fetch(idx)[:k])


def _eu_first(blocks: DeviceBlocks, z: Any, caps_d: Any) -> np.ndarray:
    """The lane's ``(min z, max z, [NaN in z], min cap, [NaN in cap], Σ finite caps, 0,
    #{cap = inf}, #breakpoints)``."""
    terms = blocks.empty((3, blocks.n))
    blocks.kernels.eu_stats[blocks.grid](z, caps_d, terms, blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 7, (0, 1, 2))
    return np.array([[got.low[3], got.high[3], max(got.high[4], 0.0), got.low[5],
                      max(got.high[6], 0.0), got.sums[0], 0.0, got.sums[1], got.sums[2]]])


def _eu_candidates(blocks: DeviceBlocks, z: Any, caps: Any, caps_d: Any, cap: float,
                   a: float, b: float, limit: int) -> tuple[tuple, np.ndarray]:
    """The rows with a breakpoint inside ``(a, b)`` as ``(z, cap)`` in row order, and
    the fixed rows' ``(Σ (z − b) free, #free, Σ cap capped)``."""
    fixed = blocks.empty((3, blocks.n))

    def run(idx: Any, count: Any) -> None:
        blocks.kernels.eu_gather[blocks.grid](z, caps_d, cap, float(a), float(b), idx,
                                             count, fixed, blocks.reduce.ext)

    rows = _gathered_rows(blocks, limit, run)
    got = blocks.reduce.settle(fixed, 3, (0, 1, 2))
    zc, cc = np.empty(0), np.empty(0)
    if rows.size:
        rows_d = upload(rows)
        zc_d = blocks.cuda.device_array(rows.size, dtype=np.float64)
        blocks.kernels.take[blocks.grid](z, rows_d, zc_d)
        zc = fetch(zc_d)
        if caps is None:
            cc = np.full(rows.size, cap)
        else:
            cc_d = blocks.cuda.device_array(rows.size, dtype=np.float64)
            blocks.kernels.take[blocks.grid](caps_d, rows_d, cc_d)
            cc = fetch(cc_d)
    return (zc, cc), np.array([[got.sums[0], got.sums[1], got.sums[2]]])


def _eu_values(blocks: DeviceBlocks, z: Any, caps_d: Any, cap: float, a: float, b: float,
               piv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``g`` at the pivots, ``Σ_i clip(z_i − p_j, 0, cap_i)``, from the buckets' exact
    sums by :func:`oracleboost.optim.row_projections._eu_refine`'s recurrence (the
    largest pivot down, non-negative terms), and the counts between pivots."""
    P = int(piv.size)
    # every bucket's term x − p_{k−1} is in [0, max z − p_0]: the sums' one scale
    top = float(blocks.reduce.maxima(z)[0])
    e = fixed_point_exponent(max(top - float(piv[0]), 0.0), 2 * blocks.n)
    acc = upload(np.zeros((4, P + 1), dtype=np.int64))
    counts = upload(np.zeros(P + 1, dtype=np.int64))
    blocks.kernels.eu_refine[blocks.grid](z, caps_d, cap, float(a), float(b),
                                         upload(np.ascontiguousarray(piv, dtype=np.float64)),
                                         P, int(e), acc, counts)
    sums = fetch(acc)
    AZ, AL = from_fixed(sums[0], int(e)), from_fixed(sums[2], int(e))
    NZ, NL = sums[1].astype(np.float64), sums[3].astype(np.float64)
    values = np.zeros((1, P))
    rp.eu_pivot_values(AZ, NZ, AL, NL, np.asarray(piv, dtype=np.float64), P, values[0])
    return values, fetch(counts)


#: The device's sample keys are below this prime (:func:`row_kernels`' ``sample_key``).
_KEY_PRIME = 2147483647


def _appended_sample(blocks: DeviceBlocks, kernel: Any, thr: int,
                     head: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A pass's sample by ``kernel(*head, thr', count, keys, vals)``: counted, then
    appended, then its ``KEEP`` smallest keys (the same set in any order of the
    threads)."""
    limit = _KEY_PRIME if thr >= rp._ALL else int(thr / 2.0**64 * _KEY_PRIME)
    count = upload(np.zeros(1, dtype=np.int64))
    run = kernel[blocks.grid]
    run(*head, limit, count, blocks.cuda.device_array(0, np.int64), blocks.nothing)
    m = int(fetch(count)[0])
    if m == 0:
        return np.empty(0, dtype=np.uint64), np.empty(0)
    keys, vals = blocks.cuda.device_array(m, np.int64), blocks.cuda.device_array(m, np.float64)
    count = upload(np.zeros(1, dtype=np.int64))
    run(*head, limit, count, keys, vals)
    return rp._bottom(fetch(keys).astype(np.uint64), fetch(vals), rp.KEEP)


def _eu_residual_stage(blocks: DeviceBlocks, z: Any, caps: Any, *, cap: float,
                       tau: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ clip(z − τ, 0, cap), 0, #free rows)`` (a sum and its correction,
    as the CPU's compensated lanes)."""
    terms = blocks.empty((2, blocks.n))
    blocks.kernels.eu_residual[blocks.grid](z, blocks.optional(caps), float(cap),
                                           float(tau), terms, blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 2, (0, 1))
    return (), np.array([[got.sums[0], 0.0, got.sums[1]]])


def _eu_weights_stage(blocks: DeviceBlocks, z: Any, caps: Any, *, cap: float,
                      tau: float) -> tuple[tuple, None]:
    """``w = clip(z − τ, 0, cap)``."""
    w = blocks.empty()
    blocks.kernels.eu_weights[blocks.grid](z, blocks.optional(caps), float(cap),
                                          float(tau), w)
    return (w,), None


# -- the KL projection onto a capped simplex: row_projections' passes -------------------
def _log_cap(cap: float) -> float:
    """The one cap's log, as the CPU takes it (``np.log`` of the float64)."""
    with np.errstate(divide="ignore"):
        return float(np.log(np.float64(cap)))


def _kl_pass(blocks: DeviceBlocks, lz: Any, caps: Any, *, cap: float, first: bool,
             a: float, b: float, piv: np.ndarray, stride: int, thr: int, gathering: bool,
             limit: int) -> tuple[tuple, rp._Pass]:
    """A selection pass of the KL projection
    (:func:`oracleboost.optim.row_projections._kl_pass`), as one lane (as
    :func:`_eu_pass`): the breakpoints are the capped rows' ``r = log cap − log z``, the
    candidates ``(r, log z, cap)``."""
    caps_d, cap = blocks.optional(caps), float(cap)
    log_cap = _log_cap(cap)
    return _device_pass(
        stats=lambda: _kl_first(blocks, lz, caps), first=first, gathering=gathering,
        candidates=lambda: _kl_candidates(blocks, lz, caps_d, cap, log_cap, a, b, limit),
        values=lambda: _kl_values(blocks, lz, caps_d, cap, log_cap, a, b, piv),
        sample=lambda: _appended_sample(blocks, blocks.kernels.kl_sample, thr,
                                        (lz, caps_d, cap, log_cap, float(a), float(b),
                                         int(stride))),
        P=int(piv.size), stride=stride)


def _kl_first(blocks: DeviceBlocks, lz: Any, caps: Any) -> np.ndarray:
    """:func:`oracleboost.optim.row_projections._kl_stats` of the lane: the logs'
    checks (:func:`_kl_top`) and the caps' (none: their entries empty)."""
    stats = _kl_top(blocks, lz)[1]
    if caps is not None:
        terms = blocks.empty((5, blocks.n))
        blocks.kernels.kl_cap_stats[blocks.grid](lz, caps, terms, blocks.reduce.ext)
        got = blocks.reduce.settle(terms, 7, (0, 1, 2, 3, 4))
        stats[0, 4:13] = (got.low[5], max(got.high[6], 0.0), got.sums[0], 0.0, got.sums[1],
                          got.sums[2], 0.0, got.sums[3], got.sums[4])
    return stats


def _kl_candidates(blocks: DeviceBlocks, lz: Any, caps_d: Any, cap: float, log_cap: float,
                   a: float, b: float, limit: int) -> tuple[tuple, np.ndarray]:
    """The capped rows with ``r`` inside ``(a, b)`` as ``(r, log z, cap)`` in row order,
    and the fixed rows' ``(Σ cap on C, 0, μ = max log z free, Σ exp(log z − μ) free)``."""
    fixed = blocks.empty((2, blocks.n))

    def run(idx: Any, count: Any) -> None:
        blocks.kernels.kl_gather[blocks.grid](lz, caps_d, cap, log_cap, float(a), float(b),
                                             idx, count, fixed, blocks.reduce.ext)

    rows = _gathered_rows(blocks, limit, run)
    got = blocks.reduce.settle(fixed, 2, (0,))
    mx, s = float(got.high[1]), 0.0
    if mx > -math.inf:  # the free rows' exps, shifted by their largest log
        e = blocks.empty()
        blocks.kernels.shifted_exps[blocks.grid](fixed[1], mx, e)
        s = float(blocks.reduce.sums(e)[0])
    cands = (np.empty(0), np.empty(0), np.empty(0))
    if rows.size:
        out = [blocks.cuda.device_array(rows.size, dtype=np.float64) for _ in range(3)]
        blocks.kernels.kl_take[blocks.grid](lz, caps_d, cap, log_cap, upload(rows), *out)
        cands = tuple(fetch(x) for x in out)
    return cands, np.array([[got.sums[0], 0.0, mx, s]])


def _kl_values(blocks: DeviceBlocks, lz: Any, caps_d: Any, cap: float, log_cap: float,
               a: float, b: float, piv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``h`` at the pivots, ``Σ_i min(cap_i, exp(p_j + log z_i))``, from the buckets'
    exact sums by :func:`oracleboost.optim.row_projections._kl_refine`'s recurrence, and
    the counts between pivots."""
    P = int(piv.size)
    # every term (a cap, or an exp below its cap) is at most the largest finite cap
    if caps_d.shape[0]:
        finite = blocks.empty()
        blocks.kernels.finite_part[blocks.grid](caps_d, finite)
        top_cap = float(blocks.reduce.maxima(finite)[0])
    else:
        top_cap = cap
    e = int(fixed_point_exponent(top_cap, blocks.n))
    acc = upload(np.zeros((2, P + 1), dtype=np.int64))
    counts = upload(np.zeros(P + 1, dtype=np.int64))
    blocks.kernels.kl_refine[blocks.grid](lz, caps_d, cap, log_cap, float(a), float(b),
                                         upload(np.ascontiguousarray(piv, dtype=np.float64)),
                                         P, e, acc, counts)
    sums = fetch(acc)
    Cc, E = from_fixed(sums[0], e), from_fixed(sums[1], e)
    mu, u = -math.inf, 0.0
    if caps_d.shape[0]:  # the uncapped rows: exp(p + μ) Σ exp(log z − μ)
        logs = blocks.empty()
        blocks.kernels.uncapped_logs[blocks.grid](lz, caps_d, logs)
        mu = float(blocks.reduce.maxima(logs)[0])
        if mu > -math.inf:
            ex = blocks.empty()
            blocks.kernels.shifted_exps[blocks.grid](logs, mu, ex)
            u = float(blocks.reduce.sums(ex)[0])
    values = np.zeros((1, P))
    rp.kl_pivot_values(Cc, E, np.zeros(P), np.asarray(piv, dtype=np.float64), P, mu, u,
                       values[0])
    return values, fetch(counts)


def _kl_weights(blocks: DeviceBlocks, lz: Any, caps: Any, *, cap: float, left: float,
                log_c_rel: float, top: float) -> tuple[tuple, np.ndarray]:
    """``w`` on the capped set at its caps, ``min(cap, exp(log_c_rel + (log z −
    top)))`` elsewhere, and the stat ``(Σ w, 0, Σ w over r > left)``."""
    w, terms = blocks.empty(), blocks.empty((2, blocks.n))
    blocks.kernels.kl_weights[blocks.grid](lz, blocks.optional(caps), float(cap),
                                          _log_cap(float(cap)), float(left),
                                          float(log_c_rel), float(top), w, terms,
                                          blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 2, (0, 1))
    return (w,), np.array([[got.sums[0], 0.0, got.sums[1]]])


def _support_caps(blocks: DeviceBlocks, lz: Any, caps: Any, *, cap: float
                  ) -> tuple[tuple, None]:
    """``w = cap`` where ``log z > −inf``, else 0 (the tight KL projection)."""
    w = blocks.empty()
    blocks.kernels.support_caps[blocks.grid](lz, blocks.optional(caps), float(cap), w)
    return (w,), None


def _group_caps(blocks: DeviceBlocks, group: Any, *, cap: float) -> tuple[tuple, None]:
    """``cap`` on the rows of ``group``, ``inf`` on the others."""
    out = blocks.empty()
    blocks.kernels.group_caps[blocks.grid](group, float(cap), out)
    return (out,), None


def _above(blocks: DeviceBlocks, w: Any, cap: Any) -> tuple[tuple, bool]:
    """Whether some ``w_i`` exceeds its cap."""
    flags = blocks.empty()
    blocks.kernels.above[blocks.grid](w, cap, flags)
    return (), bool(blocks.reduce.maxima(flags)[0] > 0.0)


#: The projections' stages that have a device twin, by their qualified name.
PROJECTION_TWINS = {
    f"{_ROW_PROJECTIONS}._kl_top": _kl_top,
    f"{_ROW_PROJECTIONS}._kl_exps": _kl_exps,
    f"{_ROW_PROJECTIONS}._divide": _divide,
    f"{_ROW_PROJECTIONS}._eu_pass": _eu_pass,
    f"{_ROW_PROJECTIONS}._eu_residual_stage": _eu_residual_stage,
    f"{_ROW_PROJECTIONS}._eu_weights_stage": _eu_weights_stage,
    f"{_ROW_PROJECTIONS}._copy": _copy,
    f"{_ROW_PROJECTIONS}._kl_pass": _kl_pass,
    f"{_ROW_PROJECTIONS}._kl_weights": _kl_weights,
    f"{_ROW_PROJECTIONS}._support_caps": _support_caps,
    f"{_MIRROR}._group_caps": _group_caps,
    f"{_MIRROR}._above": _above,
}
