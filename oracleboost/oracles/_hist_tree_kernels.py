"""Compiled kernels of :class:`~oracleboost.oracles.HistTreeOracle`.

A query grows one tree over the bound rows' bin codes (those of the stump oracle, kept
row-major, where a row's codes are one run of bytes that a histogram reads once, and
column-major, where a split reads one byte a row).  The rows of every leaf are a
segment of one index array, in increasing row order; a split rewrites its leaf's
segment in place, the left child's rows first (a stable partition, LightGBM's
``DataPartition``).  The kernels here are the loops over rows:

``leaf_histograms``
    a leaf's histogram of every channel, feature by feature, by runs of its rows: the
    leaf's rows in each partition are cut into runs of ``RUN_ROWS`` (counted from the
    partition's first), each run summed in row order; the caller adds a partition's
    runs in order, then the partitions in order.  So the bits depend on the
    partitions (fixed by ``n`` and the block size), never on the threads, and a
    cluster whose workers hold the partitions makes the same sums.  Each row's channels
    are read where they are, beside its codes.
``split_rows``
    the stable partition of a leaf's segment by a table of bins (True: the bin goes
    left), which serves threshold, missing-value and categorical splits alike.  It
    reads the split feature's codes column-major (one byte a row, where the row-major
    codes cost a cache line a row).
``best_splits``
    every feature's best split of a leaf from its histogram, and the best of them.
``leaf_outputs``
    each row's leaf value, from the leaves' segments.

The sums are float64, channels last: ``g[i, :K]`` are the row's weighted targets
``w_i t_i`` (or the signed query ``r_i``) and ``g[i, K]`` its weight (or ``|r_i|``);
with unit weights ``g`` has no column ``K``, and the histograms count the rows there.
A leaf's gain is LightGBM's ``G² / (H + λ)`` summed over the K target channels, with
the leaf's sums ``G`` and ``H``; a split's gain is its children's gains less the
leaf's.  With bounds on the leaves' outputs (monotone constraints) the gain of a
child whose output ``v`` is clamped is ``2 G v − (H + λ) v²`` (LightGBM's
``GetLeafGainGivenOutput``), the decrease of the weighted squared error at ``v``.
A split is made only when its gain is more than ``NOISE`` times its children's (less
is the sums' rounding: the splits of a constant target), and a leaf of no weight
(``H + λ = 0``) gains nothing (numba's ``error_model="numpy"``: 0/0 is NaN, which
compares false, not an exception).
"""

from __future__ import annotations

import numba
import numpy as np

from oracleboost.rows.prefetch import PREFETCH_ROWS, prefetch
from oracleboost.rows.vector_add import add_pair

#: A split must gain more than this fraction of its children's gains: less is the
#: rounding of the sums (a constant target's splits gain 1e-16 of them), not a split.
NOISE = 1e-10

#: Rows of a run of a leaf's rows within a partition: the unit of a histogram's sums
#: that a thread takes.  Large enough that a run's own histogram (zeroed, then added)
#: costs a few per cent of its rows' sums; small enough that a leaf of 100,000 rows
#: gives both threads of two work.
RUN_ROWS = 1 << 15


@numba.njit(cache=True, nogil=True, inline="always")
def _add_channels(h, q, g, k, C):  # pragma: no cover - compiled
    """``h[q + c] += g[k, c]`` for the C channels, two at a time (the last one 1.0 where
    ``g`` has C − 1 columns: :func:`leaf_histograms`' unit weights)."""
    G = g.shape[1]
    c = 0
    while c + 1 < C:
        add_pair(h, q + np.uint64(c), g[k, c], g[k, c + 1] if c + 1 < G else 1.0)
        c += 2
    if c < C:
        h[q + np.uint64(c)] += g[k, c] if c < G else 1.0


@numba.njit(cache=True, nogil=True, inline="always")
def _add_rows(codes, d, rows, g, C, s0, s1, h, B, sparse):  # pragma: no cover - compiled
    """``h[((s − s0)·B + code)·C + c] += g[i, c]`` for the rows ``i`` of ``rows`` and the
    features ``s0 .. s1 − 1`` (``h`` flat: a feature's ``B`` bins of ``C`` channels,
    then the next feature's; ``g[k, C − 1]`` is 1.0 where ``g`` has C − 1 columns): a
    row's codes are one run of bytes (``codes`` is row-major), read once for all its
    features.  The offsets are unsigned and the histogram flat: numba then computes an
    address with one add, where a signed index of a 3-d array costs a check for
    negative indices and two multiplies (a third of the loop's time).  ``sparse``: the
    rows are a small share of all, and each row's codes are asked for
    ``PREFETCH_ROWS`` rows ahead (half the time at 5% of 1,000,000 rows), and so are its
    channels: ``g`` holds every row's, read where they are, beside the row's codes."""
    m = rows.size
    ud = np.uint64(d)
    uB = np.uint64(B)
    uC = np.uint64(C)
    u1 = np.uint64(1)
    first = np.uint64(s0)
    if C == 2:
        # two rows at a time (their codes' loads overlap); each bin still adds its rows
        # in row order, so the sums are those of one row at a time
        gf = g.reshape(-1)
        G = np.uint64(g.shape[1])
        unit = G == u1  # (a loop-invariant test: the compiler makes two loops)
        k = 0
        while k + 1 < m:
            if sparse and k + PREFETCH_ROWS + 1 < m:  # scattered rows: ask ahead
                prefetch(codes, rows[k + PREFETCH_ROWS] * d + s0)
                prefetch(codes, rows[k + PREFETCH_ROWS + 1] * d + s0)
                prefetch(gf, rows[k + PREFETCH_ROWS] * g.shape[1])
                prefetch(gf, rows[k + PREFETCH_ROWS + 1] * g.shape[1])
            uk = np.uint64(k)
            i0 = np.uint64(rows[uk])
            i1 = np.uint64(rows[uk + u1])
            b0 = i0 * ud + first
            b1 = i1 * ud + first
            g0 = i0 * G
            g1 = i1 * G
            a0 = gf[g0]
            c0 = gf[g1]
            a1 = 1.0 if unit else gf[g0 + u1]
            c1 = 1.0 if unit else gf[g1 + u1]
            off = np.uint64(0)
            for s in range(s1 - s0):
                us = np.uint64(s)
                q = (off + np.uint64(codes[b0 + us])) * np.uint64(2)
                r = (off + np.uint64(codes[b1 + us])) * np.uint64(2)
                add_pair(h, q, a0, a1)  # (one 16-byte add of the bin's two sums)
                add_pair(h, r, c0, c1)
                off += uB
            k += 2
        if k < m:
            b0 = np.uint64(rows[k]) * ud + first
            a0 = g[rows[k], 0]
            a1 = 1.0 if unit else g[rows[k], 1]
            off = np.uint64(0)
            for s in range(s1 - s0):
                q = (off + np.uint64(codes[b0 + np.uint64(s)])) * np.uint64(2)
                add_pair(h, q, a0, a1)
                off += uB
        return
    for k in range(m):
        base = np.uint64(rows[k]) * ud + first
        off = np.uint64(0)
        for s in range(s1 - s0):
            _add_channels(h, (off + np.uint64(codes[base + np.uint64(s)])) * uC, g, rows[k],
                          C)
            off += uB


@numba.njit(cache=True, nogil=True, inline="always")
def _add_rows_of(codes, d, rows, g, C, feats, s0, s1, h, B):  # pragma: no cover - compiled
    """:func:`_add_rows` for the features ``feats[s0:s1]``."""
    ud = np.uint64(d)
    uB = np.uint64(B)
    uC = np.uint64(C)
    for k in range(rows.size):
        base = np.uint64(rows[k]) * ud
        off = np.uint64(0)
        for s in range(s0, s1):
            _add_channels(h, (off + np.uint64(codes[base + np.uint64(feats[s])])) * uC, g,
                          rows[k], C)
            off += uB


@numba.njit(cache=True, nogil=True, inline="always")
def _histogram_piece(p, pieces, codes, d, rows, run_seg, g, feats, flat, F, B, C, every,
                     sparse):  # pragma: no cover - compiled
    """:func:`leaf_histograms`' piece ``p``: a run and a span of the features."""
    r, s0, s1 = pieces[p, 0], pieces[p, 1], pieces[p, 2]
    h = flat[(r * F + s0) * B * C:(r * F + s1) * B * C]
    h[:] = 0.0
    k0, k1 = run_seg[r], run_seg[r + 1]
    if every:
        _add_rows(codes, d, rows[k0:k1], g, C, s0, s1, h, B, sparse)
    else:
        _add_rows_of(codes, d, rows[k0:k1], g, C, feats, s0, s1, h, B)


@numba.njit(cache=True, nogil=True)
def plan_pieces(run_seg, F, width, T):  # pragma: no cover - compiled
    """How :func:`leaf_histograms` cuts a leaf's ``(run, feature)`` cells among ``T``
    threads: ``(pieces, shares)``, a piece ``(r, s0, s1)`` the features ``s0 .. s1 − 1``
    of run ``r`` (at most ``width`` features, whose bins stay in the core's cache while
    the run's codes stream past), in run order, thread ``t`` taking
    ``pieces[shares[t]:shares[t + 1]]``.  The cells (a run's rows times the features)
    are laid end to end, run after run, and cut into ``T`` equal shares at the nearest
    feature: a thread reads the codes of its runs alone, but for the run at each cut,
    whose features two threads share.  So a leaf of two runs (32,768 rows and 7,232) is
    shared as evenly as one of forty, where whole runs a thread would leave one thread
    4.5 times the other's work, and features a thread would have both read every row.
    Which thread sums a piece changes no bit: each piece is summed in row order."""
    R = run_seg.size - 1
    spans = (F + width - 1) // width
    total = 0
    for r in range(R):
        total += (run_seg[r + 1] - run_seg[r]) * F
    # the threads' cuts, as positions r·F + s in the cells' order
    cut = np.empty(T + 1, np.int64)
    cut[0] = 0
    cut[T] = R * F
    r = 0
    before = 0  # cells of the runs before r
    for t in range(1, T):
        target = total * t // T
        while r < R - 1 and before + (run_seg[r + 1] - run_seg[r]) * F <= target:
            before += (run_seg[r + 1] - run_seg[r]) * F
            r += 1
        m = run_seg[r + 1] - run_seg[r]
        s = min(F, (target - before + m // 2) // m)
        cut[t] = max(cut[t - 1], r * F + s)
    pieces = np.empty((R * spans + T, 3), np.int64)
    shares = np.empty(T + 1, np.int64)
    shares[0] = 0
    P = 0
    t = 1
    for r in range(R):
        for k in range(spans):
            a = r * F + F * k // spans
            b = r * F + F * (k + 1) // spans
            while a < b:
                while t < T and cut[t] <= a:  # the next thread's share starts here
                    shares[t] = P
                    t += 1
                e = cut[t] if t < T and cut[t] < b else b
                pieces[P, 0] = r
                pieces[P, 1] = a - r * F
                pieces[P, 2] = e - r * F
                P += 1
                a = e
    while t <= T:
        shares[t] = P
        t += 1
    return pieces[:P], shares


@numba.njit(cache=True, nogil=True, parallel=True)
def leaf_histograms(codes, d, rows, run_seg, g, feats, pieces, shares, out, sparse,
                    serial):  # pragma: no cover
    """The histograms of runs of a leaf's rows.

    ``rows[run_seg[r]:run_seg[r + 1]]`` are the leaf's rows of run ``r`` (in row
    order), ``g[i]`` the channels of row ``i`` (every row's), ``codes`` the codes
    row-major (row ``i``'s code of feature ``j`` at ``i·d + j``), and ``out`` of shape
    ``(R, F, B, C)`` (C-contiguous): run ``r``'s histogram of feature ``feats[s]`` is
    ``out[r, s]``, summed in row order.  Where ``g`` has C − 1 columns, each row's last
    channel is 1.0 (unit weights: the last channel counts the rows, and no column of
    ones is kept or read).  The work is cut into pieces (:func:`plan_pieces`), thread
    ``t`` of numba's summing ``pieces[shares[t]:shares[t + 1]]`` (``serial``: every
    piece on the calling thread): how the pieces are cut and who sums them changes no
    sum."""
    R, F, B, C = out.shape
    flat = out.reshape(-1)
    every = feats.size == d  # feats is 0 .. d − 1
    if serial:
        for p in range(pieces.shape[0]):
            _histogram_piece(p, pieces, codes, d, rows, run_seg, g, feats, flat, F, B, C,
                             every, sparse)
        return
    for t in numba.prange(shares.size - 1):  # one share a thread
        for p in range(shares[t], shares[t + 1]):
            _histogram_piece(p, pieces, codes, d, rows, run_seg, g, feats, flat, F, B, C,
                             every, sparse)


@numba.njit(cache=True, nogil=True)
def split_rows(column, rows, lo, hi, goes_left, tmp):  # pragma: no cover - compiled
    """Partition ``rows[lo:hi]`` in place, stably: the rows whose code of the split
    feature (``column``: that feature's codes, column-major) goes left
    (``goes_left[code]``) first.  Returns how many went left.  Branch-free: each row is
    written to both places and the side's count moves on.  The indices are unsigned:
    numba then makes an address with one add, where a signed index costs a test for a
    negative one (1.0 against 2.9 ns a row at 1,000,000 rows)."""
    n_left = np.uint64(0)
    n_right = np.uint64(0)
    u1 = np.uint64(1)
    ulo = np.uint64(lo)
    for k in range(ulo, np.uint64(hi)):
        i = rows[k]
        left = np.uint64(goes_left[np.uint64(column[np.uint64(i)])])
        rows[ulo + n_left] = i
        tmp[n_right] = i
        n_left += left
        n_right += u1 - left
    at = ulo + n_left
    for k in range(n_right):
        rows[at + k] = tmp[k]
    return np.int64(n_left)


@numba.njit(cache=True, nogil=True, parallel=True)
def split_chunks(column, rows, lo, goes_left, bounds, left, right, counts):  # pragma: no cover
    """The first pass of a split on threads: each chunk ``bounds[t] .. bounds[t + 1]``
    of the segment (positions from ``lo``) writes its left rows, in order, from
    ``left[bounds[t]]`` and its right rows from ``right[bounds[t]]``, and counts its
    left rows into ``counts[t]`` (unsigned indices, as :func:`split_rows`)."""
    u1 = np.uint64(1)
    for t in numba.prange(bounds.size - 1):
        a, b = np.uint64(bounds[t]), np.uint64(bounds[t + 1])
        n_left = np.uint64(0)
        n_right = np.uint64(0)
        at = np.uint64(lo)
        for k in range(a, b):
            i = rows[at + k]
            side = np.uint64(goes_left[np.uint64(column[np.uint64(i)])])
            left[a + n_left] = i
            right[a + n_right] = i
            n_left += side
            n_right += u1 - side
        counts[t] = np.int64(n_left)


@numba.njit(cache=True, nogil=True, parallel=True)
def split_join(rows, lo, bounds, left, right, counts, n_left):  # pragma: no cover
    """The second pass: chunk ``t``'s left rows go after the left rows of the chunks
    before it, its right rows after all the left rows and the right rows of the chunks
    before it (the stable partition, the same for any chunks)."""
    T = bounds.size - 1
    left_at = np.empty(T, dtype=np.int64)
    right_at = np.empty(T, dtype=np.int64)
    p = 0
    q = 0
    for t in range(T):
        left_at[t] = p
        right_at[t] = q
        p += counts[t]
        q += bounds[t + 1] - bounds[t] - counts[t]
    for t in numba.prange(T):
        a = np.uint64(bounds[t])
        nl = np.uint64(counts[t])
        nr = np.uint64(bounds[t + 1]) - a - nl
        at = np.uint64(lo + left_at[t])
        for k in range(nl):
            rows[at + k] = left[a + k]
        at = np.uint64(lo + n_left + right_at[t])
        for k in range(nr):
            rows[at + k] = right[a + k]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gain(G, H, K, lam):  # pragma: no cover - compiled
    s = 0.0
    for c in range(K):
        s += G[c] * G[c]
    return s / (H + lam)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _clamped(G, H, lam, lo, hi):  # pragma: no cover - compiled
    v = G / (H + lam)
    if v < lo:
        v = lo
    if v > hi:
        v = hi
    return v


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gain_at(G, H, lam, v):  # pragma: no cover - compiled
    return 2.0 * G * v - (H + lam) * v * v


@numba.njit(cache=True, nogil=True, inline="always")
def _pass_start(h, nb, has_nan, nan_pass, cnt_factor):  # pragma: no cover - compiled
    """A scan's pass over one feature of one target channel: ``(nan_left, G, H, rows,
    m)``, the sums that start it (the missing-value bin's on the first of two passes,
    LightGBM's ``FindBestThresholdSequentially``) and its ``m`` thresholds (the second
    pass's last one leaves the missing rows alone on the right)."""
    nan_left = has_nan and nan_pass == 0
    if nan_left:
        hl = h[nb, 1]
        return True, h[nb, 0], hl, np.floor(hl * cnt_factor + 0.5), nb - 1
    return False, 0.0, 0.0, 0.0, nb if has_nan else nb - 1


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _scan_bounded(h, nb, has_nan, direction, G, H, count, cnt_factor, lam, min_data,
                  min_weight, min_gain, lo_bound, hi_bound, parent):  # pragma: no cover
    """:func:`best_splits`' scan of one feature for one target channel whose outputs
    are clamped to ``[lo_bound, hi_bound]`` (monotone constraints): returns ``(gain, t,
    nan_left, G_left, H_left)``, ``t = -1`` when no split is valid."""
    best = 0.0
    best_t = -1
    best_nan_left = False
    best_gl = 0.0
    best_hl = 0.0
    for nan_pass in range(2 if has_nan else 1):
        nan_left, gl, hl, n_left, m = _pass_start(h, nb, has_nan, nan_pass, cnt_factor)
        for t in range(m):
            gl += h[t, 0]
            hb = h[t, 1]
            hl += hb
            n_left += np.floor(hb * cnt_factor + 0.5)
            if n_left < min_data or count - n_left < min_data:
                continue
            hr = H - hl
            if hl < min_weight or hr < min_weight:
                continue
            gr = G - gl
            vl = _clamped(gl, hl, lam, lo_bound, hi_bound)
            vr = _clamped(gr, hr, lam, lo_bound, hi_bound)
            if (direction > 0 and vl > vr) or (direction < 0 and vl < vr):
                continue
            children = _gain_at(gl, hl, lam, vl) + _gain_at(gr, hr, lam, vr)
            gain = children - parent
            if not (gain > min_gain and gain > NOISE * abs(children)):
                continue
            if gain > best:
                best = gain
                best_t = t
                best_nan_left = nan_left
                best_gl = gl
                best_hl = hl
    return best, best_t, best_nan_left, best_gl, best_hl


@numba.njit(cache=True, nogil=True, inline="always")
def _largest(x, m):  # pragma: no cover - compiled
    """The largest of ``x[:m]`` (−inf if m is 0), for ``x`` without NaN: four running
    maxima, independent of each other (the largest of numbers is the same in any order
    when none is NaN)."""
    a = b = c = e = -np.inf
    t = 0
    while t + 3 < m:
        a = x[t] if x[t] > a else a
        b = x[t + 1] if x[t + 1] > b else b
        c = x[t + 2] if x[t + 2] > c else c
        e = x[t + 3] if x[t + 3] > e else e
        t += 4
    while t < m:
        a = x[t] if x[t] > a else a
        t += 1
    a = b if b > a else a
    c = e if e > c else c
    return c if c > a else a


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _scan_unbounded(h, nb, has_nan, G, H, count, cnt_factor, lam, min_data, min_weight,
                    min_gain, parent, buf):  # pragma: no cover - compiled
    """:func:`_scan_bounded` without bounds on the outputs, in three loops a pass: the
    running sums of the thresholds (in bin order), every threshold's gain (no
    dependence between thresholds: the compiler computes four at a time, and the two
    divisions a threshold are most of a scan's time), then the first of the largest.
    The same operations on the same numbers as the scalar scan, so the same bits and
    the same choice; an invalid threshold's gain is −1 (a valid one gains more than
    ``min_gain`` ≥ 0), and the gains are computed only from the first to the last
    threshold with ``min_data`` rows on each side.  ``buf``: scratch of shape (4, B)."""
    gla = buf[0]
    hla = buf[1]
    nla = buf[2]
    gains = buf[3]
    best = 0.0
    best_t = -1
    best_nan_left = False
    best_gl = 0.0
    best_hl = 0.0
    for nan_pass in range(2 if has_nan else 1):
        nan_left, gl, hl, n_left, m = _pass_start(h, nb, has_nan, nan_pass, cnt_factor)
        for t in range(m):
            gl += h[t, 0]
            hb = h[t, 1]
            hl += hb
            n_left += np.floor(hb * cnt_factor + 0.5)
            gla[t] = gl
            hla[t] = hl
            nla[t] = n_left
        # the thresholds with min_data rows on each side: the gains are computed from
        # the first to the last of them (the others are invalid; a small leaf's rows
        # leave most bins of the features it was split on empty, at the ends)
        first = 0
        while first < m and not (nla[first] >= min_data and count - nla[first] >= min_data):
            first += 1
        stop = m
        while stop > first and not (nla[stop - 1] >= min_data
                                    and count - nla[stop - 1] >= min_data):
            stop -= 1
        # (views from the first: an index from 0 is known not to be negative, and the
        # loop is widened; from `first` numba checks each index's sign)
        ga, ha, na, gv = gla[first:stop], hla[first:stop], nla[first:stop], gains[first:stop]
        for k in range(stop - first):
            a = ga[k]
            b = ha[k]
            c = na[k]
            hr = H - b
            gr = G - a
            children = a * a / (b + lam) + gr * gr / (hr + lam)
            gain = children - parent
            ok = ((c >= min_data) & (count - c >= min_data) & (b >= min_weight)
                  & (hr >= min_weight) & (gain > min_gain) & (gain > NOISE * abs(children)))
            gv[k] = gain if ok else -1.0
        top = _largest(gv, stop - first)
        if top > best:  # the first threshold of the largest gain
            t = first
            while gains[t] != top:
                t += 1
            best = top
            best_t = t
            best_nan_left = nan_left
            best_gl = gla[t]
            best_hl = hla[t]
    return best, best_t, best_nan_left, best_gl, best_hl


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _scan_channels(h, nb, has_nan, direction, K, total, count, cnt_factor, lam, min_data,
                   min_weight, min_gain, bounded, lo_bound, hi_bound, parent, GL, GR,
                   left):  # pragma: no cover - compiled
    """:func:`best_splits`' scan of one feature for K > 1 target channels (the channel
    K the weight): returns ``(gain, t, nan_left)`` and the best left sums in ``left``."""
    C = K + 1
    best = 0.0
    best_t = -1
    best_nan_left = False
    for nan_pass in range(2 if has_nan else 1):
        nan_left = has_nan and nan_pass == 0
        for c in range(C):
            GL[c] = h[nb, c] if nan_left else 0.0
        n_left = 0.0
        if nan_left:
            n_left = np.floor(h[nb, K] * cnt_factor + 0.5)
        last = nb - 1 if (has_nan and not nan_left) else nb - 2
        for t in range(last + 1):
            for c in range(C):
                GL[c] += h[t, c]
            n_left += np.floor(h[t, K] * cnt_factor + 0.5)
            n_right = count - n_left
            if n_left < min_data or n_right < min_data:
                continue
            HL = GL[K]
            for c in range(C):
                GR[c] = total[c] - GL[c]
            HR = GR[K]
            if HL < min_weight or HR < min_weight:
                continue
            if bounded:
                vl = _clamped(GL[0], HL, lam, lo_bound, hi_bound)
                vr = _clamped(GR[0], HR, lam, lo_bound, hi_bound)
                if (direction > 0 and vl > vr) or (direction < 0 and vl < vr):
                    continue
                gain = _gain_at(GL[0], HL, lam, vl) + _gain_at(GR[0], HR, lam, vr)
            else:
                gain = _gain(GL, HL, K, lam) + _gain(GR, HR, K, lam)
            children = gain
            gain -= parent
            if not (gain > min_gain and gain > NOISE * abs(children)):
                continue
            if gain > best:
                best = gain
                best_t = t
                best_nan_left = nan_left
                for c in range(C):
                    left[c] = GL[c]
    return best, best_t, best_nan_left


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _scan_features(hist, feats, usable, n_bins, missing, K, total, count, cnt_factor, lam,
                   min_data, min_weight, min_gain, directions, bounded, lo_bound, hi_bound,
                   parent, s0, s1, gains, ts, nan_lefts, lefts, splittable,
                   minus):  # pragma: no cover
    """:func:`best_splits`' scans of the features ``feats[s0:s1]``, each feature's best
    into its slot of ``gains``, ``ts``, ``nan_lefts`` and ``lefts``, after ``hist[s] -=
    minus[s]`` where ``minus`` is not empty.  (A function of its own, not inlined into
    the parallel loop: compiled there, the gains' loop is no longer widened, and the
    scan takes 1.7 times as long.)"""
    C = K + 1
    H = total[K]
    buf = np.empty((4, hist.shape[1]))
    GL = np.empty(C)
    GR = np.empty(C)
    if minus.shape[0] > 0:  # every feature, usable or not: this leaf's children's
        # histograms will be taken from this one
        cells = hist.shape[1] * hist.shape[2]
        hf = hist.reshape(-1)
        mf = minus.reshape(-1)
        for q in range(s0 * cells, s1 * cells):
            hf[q] -= mf[q]
    for s in range(s0, s1):
        if not usable[s]:  # (usable and splittable may be one array)
            splittable[s] = False
            continue
        j = feats[s]
        if K == 1 and not bounded:  # (the usual case, in loops a compiler widens)
            gain, t, nan_left, gl, hl = _scan_unbounded(
                hist[s], n_bins[j], missing[j], total[0], H, count, cnt_factor, lam,
                min_data, min_weight, min_gain, parent, buf)
            lefts[s, 0] = gl
            lefts[s, 1] = hl
        elif K == 1:
            gain, t, nan_left, gl, hl = _scan_bounded(
                hist[s], n_bins[j], missing[j], directions[j], total[0], H, count,
                cnt_factor, lam, min_data, min_weight, min_gain, lo_bound, hi_bound,
                parent)
            lefts[s, 0] = gl
            lefts[s, 1] = hl
        else:
            gain, t, nan_left = _scan_channels(
                hist[s], n_bins[j], missing[j], directions[j], K, total, count,
                cnt_factor, lam, min_data, min_weight, min_gain, bounded, lo_bound,
                hi_bound, parent, GL, GR, lefts[s])
        gains[s] = gain
        ts[s] = t
        nan_lefts[s] = nan_left
        splittable[s] = t >= 0


@numba.njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def best_splits(hist, feats, usable, n_bins, missing, K, total, count, lam, min_data,
                min_weight, min_gain, directions, bounded, lo_bound, hi_bound, out_left,
                splittable, spans, minus):  # pragma: no cover
    """The best split of a leaf over the features ``feats`` (histograms ``hist[s]`` of
    shape (B, K + 1)), with the leaf's sums ``total`` (K + 1) and row count ``count``.

    Returns ``(gain, s, t, nan_left)``: the gain over the leaf's (at most 0: no valid
    split), the slot of the feature in ``feats``, the last bin on the left, and where
    the missing-value bin goes; ``out_left`` gets the left child's sums.

    For each feature the thresholds are scanned left to right and a later one wins only
    when strictly better; features in order, a later one only when strictly better (the
    lowest feature among equals, as LightGBM's ``SplitInfo`` compares).  A feature with
    a missing-value bin (its code ``n_bins[j]``) is scanned as LightGBM's
    ``FindBestThresholdSequentially`` scans it: first with that bin on the left of every
    threshold, then on the right (where the last threshold leaves the missing rows
    alone on the right); the second pass wins only when strictly better.  A split needs
    ``min_data`` rows (counted from the weights, as LightGBM counts them:
    ``round(H_bin · count / H)``) and ``min_weight`` of weight on each side.  With
    ``bounded`` the outputs are clamped to ``[lo_bound, hi_bound]`` and a split on a
    feature of direction ``directions[j]`` (+1 rising, −1 falling) must keep its
    children's outputs in that order (LightGBM's basic monotone constraints).  A split
    is valid when it also gains more than ``min_gain`` (and than ``NOISE``).

    Only the features with ``usable[s]`` are scanned; ``splittable[s]`` says which have
    a valid split (LightGBM's ``is_splittable``: a feature without one is not scanned
    again below this leaf).

    The features are scanned in ``spans`` spans on numba's threads (each feature's best
    into its own slot), and the best of them is then taken in feature order: the answer
    depends neither on the spans nor on the threads.

    ``minus``, where not empty (its shape that of ``hist``), is first taken from
    ``hist`` in place (LightGBM's histogram subtraction: ``hist`` the parent's histogram,
    ``minus`` the smaller child's), feature by feature on the threads that then scan
    them, while they are in the cache."""
    C = K + 1
    F = feats.size
    H = total[K]
    cnt_factor = count / H if H > 0 else 0.0
    if bounded:
        v = _clamped(total[0], H, lam, lo_bound, hi_bound)
        parent = _gain_at(total[0], H, lam, v)
    else:
        parent = _gain(total, H, K, lam)
    gains = np.zeros(F)
    ts = np.full(F, -1, dtype=np.int64)
    nan_lefts = np.zeros(F, dtype=np.bool_)
    lefts = np.empty((F, C))
    T = max(1, min(spans, F))
    if T == 1:  # (no parallel region to start)
        _scan_features(hist, feats, usable, n_bins, missing, K, total, count, cnt_factor,
                       lam, min_data, min_weight, min_gain, directions, bounded, lo_bound,
                       hi_bound, parent, 0, F, gains, ts, nan_lefts, lefts, splittable,
                       minus)
    else:
        for span in numba.prange(T):
            _scan_features(hist, feats, usable, n_bins, missing, K, total, count,
                           cnt_factor, lam, min_data, min_weight, min_gain, directions,
                           bounded, lo_bound, hi_bound, parent, F * span // T,
                           F * (span + 1) // T, gains, ts, nan_lefts, lefts, splittable,
                           minus)
    best = 0.0
    best_s = -1
    for s in range(F):
        if ts[s] >= 0 and gains[s] > best:
            best = gains[s]
            best_s = s
    if best_s < 0:
        return best, best_s, -1, False
    for c in range(C):
        out_left[c] = lefts[best_s, c]
    return best, best_s, ts[best_s], nan_lefts[best_s]


@numba.njit(cache=True, nogil=True)
def column_total(h, out):  # pragma: no cover - compiled
    """``out[c] = Σ_q h[q, c]`` in bin order: a leaf's sums from one feature's
    histogram."""
    for c in range(h.shape[1]):
        out[c] = 0.0
    for q in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[c] += h[q, c]


@numba.njit(cache=True, nogil=True)
def binned_tree_outputs(codes, d, feature, node_bin, missing_bin, default_left, left,
                        right, value, out):  # pragma: no cover - compiled
    """``out[i] = value[leaf]`` for each row ``i`` of the row-major ``codes``, its leaf
    found by walking the tree on its bins: at a node, the row goes left when its code of
    the node's feature is at most ``node_bin``, or is the feature's missing-value bin
    (``missing_bin``, -1 for none) and ``default_left``; the children are node indices,
    or ``~leaf``.  The same rows a leaf as the splits that grew the tree
    (``split_rows`` with their ``goes_left``)."""
    K = value.shape[1]
    for i in range(out.shape[0]):
        node = 0
        while node >= 0:
            code = np.int64(codes[i * d + feature[node]])
            if code == missing_bin[node]:
                go_left = default_left[node]
            else:
                go_left = code <= node_bin[node]
            node = left[node] if go_left else right[node]
        for k in range(K):
            out[i, k] = value[~node, k]


@numba.njit(cache=True, nogil=True, parallel=True)
def leaf_outputs(rows, starts, stops, value, out, leaf_of, chunks):  # pragma: no cover
    """``out[i] = value[leaf]`` (``value`` of shape (L,) or (L, K)) for every row ``i``
    of every leaf's segment (the segments tile ``rows``; each is in row order).  The
    rows ``0 .. n − 1`` are cut into ``chunks`` ranges on numba's threads; each thread
    writes the leaf of each row of its range into ``leaf_of`` (its rows found in each
    leaf's segment by binary search), then ``out`` over its range in row order.  The
    map is a byte a row (at 1,000,000 rows it stays in the core's cache, where writing
    the outputs leaf by leaf scattered 8 bytes a row over all of ``out``: 6.3 ms a tree
    on one thread, where this takes about 2)."""
    n = rows.size
    for t in numba.prange(chunks):
        a, b = n * t // chunks, n * (t + 1) // chunks
        for leaf in range(starts.size):
            segment = rows[starts[leaf]:stops[leaf]]
            for k in range(np.searchsorted(segment, a), np.searchsorted(segment, b)):
                leaf_of[np.uint64(segment[k])] = leaf
        for i in range(np.uint64(a), np.uint64(b)):
            out[i] = value[leaf_of[i]]


def leaf_map(n: int, n_leaves: int) -> np.ndarray:
    """:func:`leaf_outputs`' map of ``n`` rows to their leaves: a byte a row where the
    leaves' indices fit."""
    return np.empty(n, dtype=np.uint8 if n_leaves <= 256 else np.int32)
