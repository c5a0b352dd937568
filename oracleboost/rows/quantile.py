"""The lower weighted quantile of per-row values, by passes over row blocks.

``weighted_quantile(blocks, y, s, q)`` is the smallest value ``v`` of ``y`` with
``Σ_{y_i ≤ v} s_i ≥ q Σ s_i``: the best constant of the pinball loss (``q = ½``: the
weighted median, the best constant of the absolute loss).  Sorting every row would need
them in one place; here the rows stay where they are (on threads, or on a cluster's
workers) and a few passes narrow the answer down:

* the values are mapped to 64-bit integer keys in the same order (a float's bits,
  the negative ones reversed);
* a pass splits the keys still in play, ``[lo, hi]``, into at most 256 bins of equal
  width (a power of two) and brings back each bin's mass, by lanes, and its smallest and
  largest key;
* the client adds the bins' masses in bin order onto the mass below ``lo`` and keeps the
  first bin where that sum reaches ``q`` times the total; its smallest and largest key
  are the next ``[lo, hi]``.  A bin of one key is the answer.

Each pass divides the span of keys by 256 at least, so there are at most 9 passes.  A
bin's mass is its lanes' sums in row order, the lanes added in order (the same bits on
any number of threads and on a cluster), and the answer depends only on ``n`` and
``block_size``.  When a bin's sub-bins add up, by rounding, to a little less than the
bin did, the crossing is kept in the bin's last non-empty sub-bin.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from oracleboost.rows.blocks import RowBlocks, ordered_sum

__all__ = ["float_key", "weighted_quantile"]

#: Bins of a pass (a power of two: a bin is a run of keys of equal width).
BINS = 256

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False}


_INT64_MIN = np.iinfo(np.int64).min
_INT64_MAX = np.iinfo(np.int64).max


@nb.jit(**_JIT)
def _key(bits):  # pragma: no cover - compiled
    """A float's order-preserving int64 key from its bits (−0 and +0: one key)."""
    if bits < 0:
        if bits == -0x7FFFFFFFFFFFFFFF - 1:  # −0.0
            return np.int64(0)
        return bits ^ np.int64(0x7FFFFFFFFFFFFFFF)
    return bits


@nb.jit(**_JIT)
def _bin_masses(bits, s, lo_key, hi_key, shift, lo, hi, lane, mass, kmin,
                kmax):  # pragma: no cover - compiled
    """Rows ``lo:hi``: each lane's mass in each bin (``mass[q, b]``, in row order) of the
    keys in ``[lo_key, hi_key]``, and each bin's smallest and largest key."""
    base = np.uint64(lo_key)
    sh = np.uint64(shift)
    q = 0
    for start in range(lo, hi, lane):
        for i in range(start, min(start + lane, hi)):
            k = _key(bits[i])
            if k < lo_key or k > hi_key:
                continue
            b = np.int64((np.uint64(k) - base) >> sh)
            mass[q, b] += 1.0 if s.shape[0] == 0 else s[i]
            if k < kmin[b]:
                kmin[b] = k
            if k > kmax[b]:
                kmax[b] = k
        q += 1


@nb.jit(**_JIT)
def _key_range(bits, lo, hi):  # pragma: no cover - compiled
    low, high = np.int64(0x7FFFFFFFFFFFFFFF), np.int64(-0x7FFFFFFFFFFFFFFF - 1)
    for i in range(lo, hi):
        k = _key(bits[i])
        low = min(low, k)
        high = max(high, k)
    return low, high


_NO_WEIGHTS = np.empty(0)


def _bits(y) -> np.ndarray:
    return np.ascontiguousarray(y, dtype=np.float64).view(np.int64)


def _range_stage(blocks: RowBlocks, y) -> tuple[tuple, tuple[int, int]]:
    bits, parts = _bits(y), []
    blocks.lane_map(lambda q0, q1, lo, hi: parts.append(_key_range(bits, lo, hi)))
    return (), (min(int(p[0]) for p in parts), max(int(p[1]) for p in parts))


def _bins_stage(blocks: RowBlocks, y, s, *, lo_key: int, hi_key: int, shift: int,
                n_bins: int) -> tuple[tuple, tuple]:
    bits, lane = _bits(y), blocks.lane
    mass = np.zeros((blocks.n_lanes, n_bins))
    runs: list = []

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        kmin, kmax = np.full(n_bins, _INT64_MAX), np.full(n_bins, _INT64_MIN)
        _bin_masses(bits, _NO_WEIGHTS if s is None else s, lo_key, hi_key, shift, lo, hi,
                    lane, mass[q0:q1], kmin, kmax)
        runs.append((kmin, kmax))

    blocks.lane_map(run)
    return (), (mass, np.min([r[0] for r in runs], axis=0),
                np.max([r[1] for r in runs], axis=0))


def float_key(x: float) -> int:
    """The order-preserving int64 key of the float ``x`` (:func:`_key` of its bits; a
    GPU's passes make the same keys: :mod:`oracleboost.cuda.quantile`)."""
    return int(_key(np.float64(x).view(np.int64)))


def _value(key: int) -> float:
    """The float of a key (:func:`_key`'s inverse)."""
    if key < 0:
        key ^= 0x7FFFFFFFFFFFFFFF
    return float(np.array(key, dtype=np.int64).view(np.float64))


def weighted_quantile(blocks: RowBlocks, y: Any, s: Any, q: float) -> float:
    """The lower weighted ``q``-quantile of the finite values ``y`` with non-negative
    weights ``s`` (None: unit weights; their sum must be positive), by passes over
    ``blocks`` (see the module's docstring)."""
    q = float(q)
    ranges = blocks.map(_range_stage, y)[1]
    lo_key, hi_key = min(r[0] for r in ranges), max(r[1] for r in ranges)
    below, target = 0.0, None
    while lo_key != hi_key:
        shift = max(0, (hi_key - lo_key).bit_length() - (BINS.bit_length() - 1))
        n_bins = ((hi_key - lo_key) >> shift) + 1
        stats = blocks.map(_bins_stage, y, s, lo_key=lo_key, hi_key=hi_key, shift=shift,
                           n_bins=n_bins)[1]
        masses = ordered_sum(np.concatenate([m for m, _, _ in stats]))
        kmin = np.min([k for _, k, _ in stats], axis=0)
        kmax = np.max([k for _, _, k in stats], axis=0)
        if target is None:  # the first pass sees every row: the total, in bin order
            target = q * float(ordered_sum(masses))
        filled = np.flatnonzero(kmin <= kmax)
        # the first bin whose cumulative mass reaches the target (by rounding, possibly
        # none in a later pass: then the last, where the earlier pass put the crossing)
        chosen, before = None, (filled[-1], below)
        for b in filled:
            if below + masses[b] >= target:
                chosen = b
                break
            before = (b, below)
            below += masses[b]
        if chosen is None:
            chosen, below = before
        lo_key, hi_key = int(kmin[chosen]), int(kmax[chosen])
    return _value(lo_key)
