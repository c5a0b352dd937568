"""Compiled kernels of :class:`~oracleboost.oracles.HistTreeOracle`.

A query grows one tree over the bound rows' bin codes (those of the stump oracle,
row-major: a row's codes are one run of bytes, which a leaf's scattered rows read
once each).  The
rows of every leaf are a segment of one index array, in increasing row order; a split
rewrites its leaf's segment in place, the left child's rows first (a stable partition,
LightGBM's ``DataPartition``).  The kernels here are the loops over rows:

``gather``
    a leaf's per-row channels (``g``: the target sums' channels and the weight), copied
    into leaf order, so that the histogram reads them one after another (LightGBM's
    ordered gradients).
``leaf_histograms``
    a leaf's histogram of every channel, feature by feature, by runs of its rows: the
    leaf's rows in each partition are cut into runs of ``RUN_ROWS`` (counted from the
    partition's first), each run summed in row order; the caller adds a partition's
    runs in order, then the partitions in order.  So the bits depend on the
    partitions (fixed by ``n`` and the block size), never on the threads, and a
    cluster whose workers hold the partitions makes the same sums.
``split_rows``
    the stable partition of a leaf's segment by a table of bins (True: the bin goes
    left), which serves threshold, missing-value and categorical splits alike.
``best_splits``
    every feature's best split of a leaf from its histogram, and the best of them.
``leaf_outputs``
    each row's leaf value, from the leaves' segments.

The sums are float64, channels last: ``g[i, :K]`` are the row's weighted targets
``w_i t_i`` (or the signed query ``r_i``) and ``g[i, K]`` its weight (or ``|r_i|``).
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

#: A split must gain more than this fraction of its children's gains: less is the
#: rounding of the sums (a constant target's splits gain 1e-16 of them), not a split.
NOISE = 1e-10

#: Rows of a run of a leaf's rows within a partition: the unit of a histogram's sums
#: that a thread takes.  Large enough that a run's own histogram (zeroed, then added)
#: costs a few per cent of its rows' sums; small enough that a leaf of 100,000 rows
#: gives both threads of two work.
RUN_ROWS = 1 << 15


@numba.njit(cache=True, nogil=True)
def gather(rows, lo, hi, g, out):  # pragma: no cover - compiled
    """``out[k] = g[rows[lo + k]]`` for the leaf's segment ``rows[lo:hi]``."""
    C = g.shape[1]
    for k in range(hi - lo):
        i = rows[lo + k]
        for c in range(C):
            out[k, c] = g[i, c]


@numba.njit(cache=True, nogil=True, inline="always")
def _add_rows(codes, d, rows, g, s0, s1, h, sparse):  # pragma: no cover - compiled
    """``h[s − s0, code, c] += g[k, c]`` for the rows ``rows`` and the features
    ``s0 .. s1 − 1``: a row's codes are one run of bytes (``codes`` is row-major), read
    once for all its features.  (Slices and a plain feature range: numba compiles these
    loops to 60% of the time of the same loops through offsets or an index array.)
    ``sparse``: the rows are a small share of all, and each row's codes are asked for
    ``PREFETCH_ROWS`` rows ahead (half the time at 5% of 1,000,000 rows)."""
    C = g.shape[1]
    m = rows.size
    if C == 2:
        # two rows at a time (their codes' loads overlap); each bin still adds its rows
        # in row order, so the sums are those of one row at a time
        k = 0
        while k + 1 < m:
            if sparse and k + PREFETCH_ROWS + 1 < m:  # scattered rows: ask ahead
                prefetch(codes, rows[k + PREFETCH_ROWS] * d + s0)
                prefetch(codes, rows[k + PREFETCH_ROWS + 1] * d + s0)
            b0 = rows[k] * d
            b1 = rows[k + 1] * d
            a0 = g[k, 0]
            a1 = g[k, 1]
            c0 = g[k + 1, 0]
            c1 = g[k + 1, 1]
            for s in range(s0, s1):
                q = codes[b0 + s]
                r = codes[b1 + s]
                h[s - s0, q, 0] += a0
                h[s - s0, q, 1] += a1
                h[s - s0, r, 0] += c0
                h[s - s0, r, 1] += c1
            k += 2
        if k < m:
            b0 = rows[k] * d
            for s in range(s0, s1):
                q = codes[b0 + s]
                h[s - s0, q, 0] += g[k, 0]
                h[s - s0, q, 1] += g[k, 1]
        return
    for k in range(m):
        base = rows[k] * d
        for s in range(s0, s1):
            q = codes[base + s]
            for c in range(C):
                h[s - s0, q, c] += g[k, c]


@numba.njit(cache=True, nogil=True, inline="always")
def _add_rows_of(codes, d, rows, g, feats, s0, s1, h):  # pragma: no cover - compiled
    """:func:`_add_rows` for the features ``feats[s0:s1]``."""
    C = g.shape[1]
    for k in range(rows.size):
        base = rows[k] * d
        for s in range(s0, s1):
            q = codes[base + feats[s]]
            for c in range(C):
                h[s - s0, q, c] += g[k, c]


@numba.njit(cache=True, nogil=True, parallel=True)
def leaf_histograms(codes, d, rows, run_seg, g, feats, cuts, out, sparse):  # pragma: no cover
    """The histograms of runs of a leaf's rows.

    ``rows[run_seg[r]:run_seg[r + 1]]`` are the leaf's rows of run ``r`` (in row
    order), ``g[k]`` the channels of ``rows[k]``, ``codes`` the codes row-major (row
    ``i``'s code of feature ``j`` at ``i·d + j``), and ``out`` of shape ``(R, F, B, C)``:
    run ``r``'s histogram of feature ``feats[s]`` is ``out[r, s]``, summed in row
    order.  A task is a run and a span ``feats[cuts[t]:cuts[t + 1]]`` of the features:
    how the features are cut changes no sum."""
    R = out.shape[0]
    T = cuts.size - 1
    every = feats.size == d  # feats is 0 .. d − 1
    for task in numba.prange(R * T):
        r = task // T
        t = task - r * T
        s0, s1 = cuts[t], cuts[t + 1]
        h = out[r, s0:s1]
        h[:] = 0.0
        k0, k1 = run_seg[r], run_seg[r + 1]
        if every:
            _add_rows(codes, d, rows[k0:k1], g[k0:k1], s0, s1, h, sparse)
        else:
            _add_rows_of(codes, d, rows[k0:k1], g[k0:k1], feats, s0, s1, h)


@numba.njit(cache=True, nogil=True)
def split_rows(codes, d, rows, lo, hi, j, goes_left, tmp):  # pragma: no cover
    """Partition ``rows[lo:hi]`` in place, stably: the rows whose code of feature ``j``
    goes left (``goes_left[code]``) first.  Returns how many went left.  Branch-free:
    each row is written to both places and the side's count moves on."""
    n_left = 0
    n_right = 0
    for k in range(lo, hi):
        if k + PREFETCH_ROWS < hi:
            prefetch(codes, rows[k + PREFETCH_ROWS] * d + j)
        i = rows[k]
        left = np.intp(goes_left[codes[i * d + j]])
        rows[lo + n_left] = i
        tmp[n_right] = i
        n_left += left
        n_right += 1 - left
    for k in range(n_right):
        rows[lo + n_left + k] = tmp[k]
    return n_left


@numba.njit(cache=True, nogil=True)
def split_rows_gather(codes, d, rows, lo, hi, j, goes_left, tmp, g, g_flat, keep_left,
                      kept):  # pragma: no cover - compiled
    """:func:`split_rows`, also copying the channels of the rows of one side
    (``keep_left``) into ``kept``, in row order: the gather of that child's histogram,
    made while its rows are read anyway; at most ``len(kept) − 1`` of them (the last
    slot takes the other side's writes once the others are full).  Returns ``(n_left,
    rows of that side)``: the copy is whole when the second is below ``len(kept)``."""
    C = g.shape[1]
    capacity = kept.shape[0]
    n_left = 0
    n_right = 0
    m = 0
    last = capacity - 1  # a slot for the writes past the kept rows
    for k in range(lo, hi):
        if k + PREFETCH_ROWS < hi:
            ahead = rows[k + PREFETCH_ROWS]
            prefetch(codes, ahead * d + j)
            prefetch(g_flat, ahead * C)
        i = rows[k]
        side = goes_left[codes[i * d + j]]
        left = np.intp(side)
        rows[lo + n_left] = i
        tmp[n_right] = i
        n_left += left
        n_right += 1 - left
        # every row written where the kept side's next one goes, the count moved only
        # for that side: no branch to mispredict (once the kept rows fill all but the
        # last slot, every write goes there: the copy is then whole only if no kept
        # row came after)
        at = min(m, last)
        for c in range(C):
            kept[at, c] = g[i, c]
        m += np.intp(side == keep_left)
    for k in range(n_right):
        rows[lo + n_left + k] = tmp[k]
    return n_left, m


@numba.njit(cache=True, nogil=True, parallel=True)
def split_sides(codes, d, rows, lo, j, goes_left, bounds, sides, counts):  # pragma: no cover
    """The first pass of a split on threads: each chunk ``bounds[t] .. bounds[t + 1]``
    of the segment (positions from ``lo``) records each row's side in ``sides`` (1:
    left) and counts its left rows into ``counts[t]``."""
    for t in numba.prange(bounds.size - 1):
        a, b = bounds[t], bounds[t + 1]
        n_left = 0
        for k in range(a, b):
            if k + PREFETCH_ROWS < b:
                prefetch(codes, rows[lo + k + PREFETCH_ROWS] * d + j)
            side = goes_left[codes[rows[lo + k] * d + j]]
            sides[k] = side
            n_left += np.intp(side)
        counts[t] = n_left


@numba.njit(cache=True, nogil=True, parallel=True)
def split_place(rows, lo, sides, bounds, left_at, right_at, tmp, g, g_flat, keep_left,
                kept, kept_at):  # pragma: no cover - compiled
    """The second pass: chunk ``t`` writes its left rows from ``tmp[left_at[t]]`` and
    its right rows from ``tmp[right_at[t]]``, in order (the stable partition, the same
    for any chunks), and the channels of the kept side's rows from
    ``kept[kept_at[t]]`` (its last ``T`` rows are scratch: chunk ``t`` writes the other
    side's channels to row ``len(kept) − T + t``)."""
    C = g.shape[1]
    T = bounds.size - 1
    spare = kept.shape[0] - T  # kept's last T rows: each chunk's slot for the others
    for t in numba.prange(T):
        a, b = bounds[t], bounds[t + 1]
        p = left_at[t]
        q = right_at[t]
        r = kept_at[t]
        for k in range(a, b):
            if k + PREFETCH_ROWS < b:
                prefetch(g_flat, rows[lo + k + PREFETCH_ROWS] * C)
            i = rows[lo + k]
            left = np.intp(sides[k])
            # selects, not branches: a row's side is as likely as a coin's
            tmp[p if left else q] = i
            p += left
            q += 1 - left
            keep = np.intp(sides[k] == keep_left)
            at = r if keep else spare + t
            for c in range(C):
                kept[at, c] = g[i, c]
            r += keep


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


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _scan_scalar(h, nb, has_nan, direction, G, H, count, cnt_factor, lam, min_data,
                 min_weight, min_gain, bounded, lo_bound, hi_bound, parent):  # pragma: no cover
    """:func:`best_splits`'s scan of one feature for one target channel: returns
    ``(gain, t, nan_left, G_left, H_left)``, ``t = -1`` when no split is valid."""
    best = 0.0
    best_t = -1
    best_nan_left = False
    best_gl = 0.0
    best_hl = 0.0
    for nan_pass in range(2 if has_nan else 1):
        nan_left = has_nan and nan_pass == 0
        gl = 0.0
        hl = 0.0
        n_left = 0.0
        if nan_left:
            gl = h[nb, 0]
            hl = h[nb, 1]
            n_left = np.floor(hl * cnt_factor + 0.5)
        last = nb - 1 if (has_nan and not nan_left) else nb - 2
        for t in range(last + 1):
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
            if bounded:
                vl = _clamped(gl, hl, lam, lo_bound, hi_bound)
                vr = _clamped(gr, hr, lam, lo_bound, hi_bound)
                if (direction > 0 and vl > vr) or (direction < 0 and vl < vr):
                    continue
                gain = _gain_at(gl, hl, lam, vl) + _gain_at(gr, hr, lam, vr)
            else:
                gain = gl * gl / (hl + lam) + gr * gr / (hr + lam)
            children = gain
            gain -= parent
            if not (gain > min_gain and gain > NOISE * abs(children)):
                continue
            if gain > best:
                best = gain
                best_t = t
                best_nan_left = nan_left
                best_gl = gl
                best_hl = hl
    return best, best_t, best_nan_left, best_gl, best_hl


@numba.njit(cache=True, nogil=True, error_model="numpy")
def best_splits(hist, feats, usable, n_bins, missing, K, total, count, lam, min_data,
                min_weight, min_gain, directions, bounded, lo_bound, hi_bound, out_left,
                splittable):  # pragma: no cover
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
    again below this leaf)."""
    C = K + 1
    H = total[K]
    cnt_factor = count / H if H > 0 else 0.0
    if bounded:
        v = _clamped(total[0], H, lam, lo_bound, hi_bound)
        parent = _gain_at(total[0], H, lam, v)
    else:
        parent = _gain(total, H, K, lam)
    best = 0.0
    best_s = -1
    best_t = -1
    best_nan_left = False
    if K == 1:  # one target channel: the scan on scalars (a third of the time)
        G = total[0]
        for s in range(feats.size):
            if not usable[s]:  # (usable and splittable may be one array)
                splittable[s] = False
                continue
            j = feats[s]
            gain, t, nan_left, gl, hl = _scan_scalar(
                hist[s], n_bins[j], missing[j], directions[j], G, H, count, cnt_factor,
                lam, min_data, min_weight, min_gain, bounded, lo_bound, hi_bound, parent)
            splittable[s] = t >= 0
            if t >= 0 and gain > best:
                best = gain
                best_s = s
                best_t = t
                best_nan_left = nan_left
                out_left[0] = gl
                out_left[1] = hl
        return best, best_s, best_t, best_nan_left
    GL = np.empty(C)
    GR = np.empty(C)
    for s in range(feats.size):
        if not usable[s]:
            splittable[s] = False
            continue
        splittable[s] = False
        j = feats[s]
        nb = n_bins[j]
        h = hist[s]
        has_nan = missing[j]
        direction = directions[j]
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
                splittable[s] = True
                if gain > best:
                    best = gain
                    best_s = s
                    best_t = t
                    best_nan_left = nan_left
                    for c in range(C):
                        out_left[c] = GL[c]
    return best, best_s, best_t, best_nan_left


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
def leaf_outputs(rows, starts, stops, value, out):  # pragma: no cover - compiled
    """``out[i] = value[leaf]`` for every row ``i`` of every leaf's segment."""
    for leaf in range(starts.size):
        for k in range(starts[leaf], stops[leaf]):
            out[rows[k]] = value[leaf]


@numba.njit(cache=True, nogil=True)
def leaf_outputs_2d(rows, starts, stops, value, out):  # pragma: no cover - compiled
    """``out[i, :] = value[leaf, :]`` for every row of every leaf's segment."""
    K = value.shape[1]
    for leaf in range(starts.size):
        for k in range(starts[leaf], stops[leaf]):
            i = rows[k]
            for c in range(K):
                out[i, c] = value[leaf, c]
