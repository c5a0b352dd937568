"""Compiled kernels of :class:`~oracleboost.oracles.StumpOracle`: histograms and best splits.

A kernel call covers a block of features.  For every feature ``j`` of the block it makes
one pass over the ``n`` bin codes of column ``j`` (stored column-major, so the codes of a
feature are contiguous), accumulating the query into the feature's ``B`` bins, then one
pass over the bins with running left and right sums, keeping the feature's best split.
Nothing of size ``n × d`` is written: a query reads 1 byte per cell of codes and 8 bytes
per row and column of the query, and writes ``O(B K)`` per feature.

Summation is in row order, bin by bin (what ``np.bincount`` does); left sums are running
sums from the first bin and right sums running sums from the last (what ``np.cumsum``
of the reversed histogram does), never ``total − left``: no cancellation, and a side
whose weights are all zero sums to exactly 0.

Tie rule inside a feature: the first best threshold from the left, and for ±1 stumps
``s = +1`` before ``s = −1``; across features the caller takes the lowest feature.

Missing values (LightGBM's ``MissingType::NaN``).  A feature whose training column holds
NaN (``missing[j]``) has one more bin, after its ``n_bins[j]`` finite ones: the NaN rows'
bin, code ``n_bins[j]`` (LightGBM puts it last too).  Its scan is LightGBM's
(``FeatureHistogram::FindBestThresholdSequentially``, in
``src/treelearner/feature_histogram.hpp``): first every threshold with the NaN bin on
the left (its ``REVERSE`` pass, ``default_left = true``), then every threshold with it
on the right (the forward pass, ``default_left = false``), whose last threshold leaves
the NaN rows alone on the right; a split of the second pass replaces the first's only
when strictly better, so a tie between the directions sends NaN left, as LightGBM's
``best_gain > output->gain`` does.  Within a pass the tie rule above holds (LightGBM's
reverse pass keeps the last best threshold from the left; no test meets that tie).  A
feature without a NaN bin is scanned by the loop it always was: nothing is added to it.

The kernels release the GIL (``nogil``), so that blocks of features run on threads, and
are compiled once per machine and cached on disk (``cache=True``); later processes load
the machine code.  ``benchmarks/README.md`` gives the first-call compile time.
"""

from __future__ import annotations

import sys

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}


#: Eight codes are read as one little-endian word (x86, ARM, POWER little-endian); on a
#: big-endian machine the histograms read one code at a time.
_WORDS = sys.byteorder == "little"
_BYTE = np.uint64(255)


@intrinsic
def _word(typingctx, codes, i):  # pragma: no cover - compiled
    """The eight bytes ``codes[i:i + 8]`` of a contiguous uint8 array as one uint64
    (an unaligned load: a feature's codes start anywhere in the last, short block)."""
    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(arr.data, [args[1]])
        return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)
    return types.uint64(codes, types.intp), codegen


@nb.jit(**_JIT)
def hist_1d(codes, v, hist):  # pragma: no cover - compiled
    """``hist[j, b] = Σ_{i : codes[j, i] = b} v[i]`` in row order, for every feature j.

    Four features share a pass over the rows (one load of ``v[i]`` for four updates,
    and four independent chains of updates: 20% faster than one feature a pass), and
    each feature's codes are read eight at a time as one word, whose bytes are taken in
    row order (one load for eight codes: 20% faster again, the same additions)."""
    d, n = codes.shape
    hist[:, :] = 0.0
    j = 0
    m = n - n % 8 if _WORDS else 0
    while j + 3 < d:
        h0, h1, h2, h3 = hist[j], hist[j + 1], hist[j + 2], hist[j + 3]
        c0, c1, c2, c3 = codes[j], codes[j + 1], codes[j + 2], codes[j + 3]
        for i in range(0, m, 8):
            w0, w1, w2, w3 = _word(c0, i), _word(c1, i), _word(c2, i), _word(c3, i)
            for b in range(8):  # unrolled by the compiler
                vi = v[i + b]
                shift = np.uint64(8 * b)
                h0[(w0 >> shift) & _BYTE] += vi
                h1[(w1 >> shift) & _BYTE] += vi
                h2[(w2 >> shift) & _BYTE] += vi
                h3[(w3 >> shift) & _BYTE] += vi
        for i in range(m, n):
            vi = v[i]
            h0[c0[i]] += vi
            h1[c1[i]] += vi
            h2[c2[i]] += vi
            h3[c3[i]] += vi
        j += 4
    while j < d:
        h, c = hist[j], codes[j]
        for i in range(n):
            h[c[i]] += v[i]
        j += 1


@nb.jit(**_JIT)
def hist_2d(codes, v, hist):  # pragma: no cover - compiled
    """``hist[j, b, k] = Σ_{i : codes[j, i] = b} v[i, k]`` in row order."""
    d, n = codes.shape
    K = v.shape[1]
    hist[:, :, :] = 0.0
    for j in range(d):
        h, c = hist[j], codes[j]
        for i in range(n):
            b = c[i]
            for k in range(K):
                h[b, k] += v[i, k]


@nb.jit(**_JIT)
def hist_weighted(codes, w, t, hist_w, hist_s):  # pragma: no cover - compiled
    """Weight and weighted-target histograms in one pass: ``hist_w[j, b] = Σ w_i`` and
    ``hist_s[j, b, k] = Σ w_i t[i, k]`` over the rows in bin b of feature j."""
    d, n = codes.shape
    K = t.shape[1]
    hist_w[:, :] = 0.0
    hist_s[:, :, :] = 0.0
    for j in range(d):
        W, S, c = hist_w[j], hist_s[j], codes[j]
        if K == 1:  # the common case, without the inner loop (2.5 times faster)
            t1, S1 = t[:, 0], S[:, 0]
            m = n - n % 8 if _WORDS else 0
            for i in range(0, m, 8):  # eight codes a load, as in hist_1d
                word = _word(c, i)
                for r in range(8):
                    b = (word >> np.uint64(8 * r)) & _BYTE
                    wi = w[i + r]
                    W[b] += wi
                    S1[b] += wi * t1[i + r]
            for i in range(m, n):
                b = c[i]
                wi = w[i]
                W[b] += wi
                S1[b] += wi * t1[i]
            continue
        for i in range(n):
            b = c[i]
            wi = w[i]
            W[b] += wi
            for k in range(K):
                S[b, k] += wi * t[i, k]


@nb.jit(**_JIT)
def side_rows(column, side, rows):  # pragma: no cover - compiled
    """The rows ``i`` with ``side[column[i]] > 0`` (a split's counted side: ``column``
    the block's codes of its feature, ``side`` the table of its bins), in order, into
    ``rows``; returns how many."""
    m = 0
    for i in range(column.shape[0]):  # without a branch: kept when the count moves on
        rows[m] = i
        m += side[column[i]] > 0.0
    return m


@nb.jit(**_JIT, parallel=True)
def block_side_rows(codes, d, starts, stops, split, side, rows,
                    counts):  # pragma: no cover - compiled
    """:func:`side_rows` of every block (a block's rows ``starts[k]:stops[k]``, numbered
    from 0 within it, into the same slice of ``rows``; their number into
    ``counts[k]``), blocks on numba's threads."""
    for k in nb.prange(starts.shape[0]):
        a, b = starts[k], stops[k]
        column = codes[a * d:b * d].reshape((d, b - a))[split]
        counts[k] = side_rows(column, side, rows[a:b])


@nb.jit(**_JIT)
def side_counts(codes, rows, hist):  # pragma: no cover - compiled
    """``hist[j, b] = #{i in rows : codes[j, i] = b}``: the rows of one side of a split
    (:func:`side_rows`), by bin of every feature.

    Four features a pass over the rows, as in :func:`hist_1d`: the work is that side's
    rows, not all of them (at a fifth of 100,000 rows and 50 features, 0.6 ms against
    ``hist_1d``'s 2.0 ms on one thread).  The counts are whole numbers, exact in
    float64: their sums do not depend on the order."""
    d = codes.shape[0]
    m = rows.shape[0]
    hist[:, :] = 0.0
    j = 0
    while j + 3 < d:
        h0, h1, h2, h3 = hist[j], hist[j + 1], hist[j + 2], hist[j + 3]
        c0, c1, c2, c3 = codes[j], codes[j + 1], codes[j + 2], codes[j + 3]
        for q in range(m):
            i = rows[q]
            h0[c0[i]] += 1.0
            h1[c1[i]] += 1.0
            h2[c2[i]] += 1.0
            h3[c3[i]] += 1.0
        j += 4
    while j < d:
        h, c = hist[j], codes[j]
        for q in range(m):
            h[c[rows[q]]] += 1.0
        j += 1


@nb.jit(**_JIT)
def shifted_histogram(hist, on_side, counts, counted, other, c,
                      out):  # pragma: no cover - compiled
    """``out = hist − c·(counted·on_side + other·(counts − on_side))``, element by
    element (a histogram less ``c`` times a stump's: ``counted`` on the ``on_side`` rows
    of each bin, ``other`` on the rest of its ``counts``); returns whether every entry
    is finite.  One pass over the bins instead of NumPy's seven."""
    finite = True
    d, B = hist.shape
    for j in range(d):
        for b in range(B):
            side = on_side[j, b]
            x = hist[j, b] - c * (counted * side + other * (counts[j, b] - side))
            out[j, b] = x
            finite &= np.isfinite(x)
    return finite


#: Which histogram kernel :func:`histograms` runs.
HIST_1D, HIST_2D, HIST_WEIGHTED, HIST_SIDE = 0, 1, 2, 3


@nb.jit(**_JIT, parallel=True)
def histograms(kind, codes, d, starts, stops, tasks, runs, blocks_per_partition, v, t,
               parts_w, parts_s, out_w, out_s, rows, counts):  # pragma: no cover - compiled
    """Every row block's histograms on numba's threads, then their sums in block order.

    ``codes`` holds the blocks one after another, block ``k`` (rows
    ``starts[k]:stops[k]``) as its ``(d, rows)`` feature-major codes.  Task ``i`` is
    ``tasks[i] = (k, fa, fb)``: block ``k``'s features ``fa:fb`` into its slot of the
    partials ``parts_*[k, fa:fb]``; the runs ``runs[r]:runs[r + 1]`` of consecutive
    tasks go one a thread.  ``kind`` picks the kernel: :data:`HIST_1D` (``v`` of shape
    (n,) into ``parts_w``), :data:`HIST_2D` (``t`` (n, K) into ``parts_s``) or
    :data:`HIST_WEIGHTED` (``v`` the weights and ``t`` the targets, into both) or
    :data:`HIST_SIDE` (:func:`side_counts` of block ``k``'s side rows, ``rows[starts[k]:
    starts[k] + counts[k]]``, made once a block by :func:`block_side_rows`, into
    ``parts_w``).

    With more than one block, the partials are then added element by element, feature by
    feature: each partition's ``blocks_per_partition`` blocks left to right, then the
    partitions' sums left to right, into ``out_*`` (with one block the caller passes
    ``out_*[None]`` as the partials; ``blocks_per_partition = 0``: not here, see
    :func:`add_histograms`).  A histogram's bits depend on the blocks, never on how
    many threads ran them.
    """
    for r in nb.prange(runs.shape[0] - 1):
        for i in range(runs[r], runs[r + 1]):
            k, fa, fb = tasks[i, 0], tasks[i, 1], tasks[i, 2]
            a, b = starts[k], stops[k]
            c = codes[a * d:b * d].reshape((d, b - a))[fa:fb]
            if kind == HIST_1D:
                hist_1d(c, v[a:b], parts_w[k, fa:fb])
            elif kind == HIST_2D:
                hist_2d(c, t[a:b], parts_s[k, fa:fb])
            elif kind == HIST_SIDE:
                side_counts(c, rows[a:a + counts[k]], parts_w[k, fa:fb])
            else:
                hist_weighted(c, v[a:b], t[a:b], parts_w[k, fa:fb], parts_s[k, fa:fb])
    if blocks_per_partition > 0 and starts.shape[0] > 1:
        for j in nb.prange(d):
            _add_feature(kind, j, blocks_per_partition, parts_w, parts_s, out_w, out_s)


@nb.jit(**_JIT)
def _add_feature(kind, j, blocks_per_partition, parts_w, parts_s, out_w,
                 out_s):  # pragma: no cover - compiled
    if kind != HIST_2D:
        _add_block_histograms(parts_w[:, j], out_w[j], blocks_per_partition)
    if kind != HIST_1D:
        _add_block_histograms_2d(parts_s[:, j], out_s[j], blocks_per_partition)


@nb.jit(**_JIT)
def add_histograms(kind, fa, fb, blocks_per_partition, parts_w, parts_s, out_w,
                   out_s):  # pragma: no cover - compiled
    """The second half of :func:`histograms` alone, for features ``fa:fb`` (after its
    first half ran with ``blocks_per_partition = 0`` on Python threads)."""
    for j in range(fa, fb):
        _add_feature(kind, j, blocks_per_partition, parts_w, parts_s, out_w, out_s)


@nb.jit(**_JIT)
def _add_block_histograms(parts, out, per_partition):  # pragma: no cover - compiled
    """``out = Σ_k parts[k]`` for one feature's partials ``parts`` (blocks, B), element
    by element: each partition's blocks in order, then the partitions' sums in order
    (the additions of NumPy's ``acc += part``, block by block: contiguous rows)."""
    n_blocks, B = parts.shape
    acc = np.empty(B)
    for g in range(0, n_blocks, per_partition):
        acc[:] = parts[g]
        for k in range(g + 1, min(g + per_partition, n_blocks)):
            for b in range(B):
                acc[b] += parts[k, b]
        if g == 0:
            out[:] = acc
        else:
            for b in range(B):
                out[b] += acc[b]


@nb.jit(**_JIT)
def _add_block_histograms_2d(parts, out, per_partition):  # pragma: no cover - compiled
    """:func:`_add_block_histograms` of partials (blocks, B, K) into ``out`` (B, K)."""
    n_blocks, B, K = parts.shape
    acc = np.empty((B, K))
    for g in range(0, n_blocks, per_partition):
        acc[:, :] = parts[g]
        for k in range(g + 1, min(g + per_partition, n_blocks)):
            for b in range(B):
                for c in range(K):
                    acc[b, c] += parts[k, b, c]
        if g == 0:
            out[:, :] = acc
        else:
            for b in range(B):
                for c in range(K):
                    out[b, c] += acc[b, c]


@nb.jit(**_JIT)
def _suffix_sums(h, nb_j, out):  # pragma: no cover - compiled
    """``out[b] = h[nb_j-1] + … + h[b]`` summed from the last bin, for b < nb_j."""
    acc = 0.0
    for b in range(nb_j - 1, -1, -1):
        acc += h[b]
        out[b] = acc


@nb.jit(**_JIT)
def sign_scan(hist, n_bins, missing, score, thr, sign,
              nan_left):  # pragma: no cover - compiled
    """±1 stumps: for each feature j, the best ``s · (R_right − R_left)`` over thresholds
    ``t < n_bins[j] − 1`` and ``s ∈ {+1, −1}`` from the histogram ``hist[j]`` of r, into
    ``score[j]``, ``thr[j]``, ``sign[j]`` (``score = -inf`` when the feature has one bin).
    A feature with a missing-value bin (``missing[j]``) is scanned by
    :func:`_sign_missing`, which also writes ``nan_left[j]``."""
    d, B = hist.shape
    suf = np.empty(B)
    for j in range(d):
        h = hist[j]
        nb_j = n_bins[j]
        if missing[j]:
            score[j], thr[j], sign[j], nan_left[j] = _sign_missing(h, nb_j, suf)
            continue
        _suffix_sums(h, nb_j, suf)
        best, bt, bs = -np.inf, -1, 0
        left = 0.0
        for t in range(nb_j - 1):
            left += h[t]
            e = suf[t + 1] - left
            if e > best:
                best, bt, bs = e, t, 1
            if -e > best:
                best, bt, bs = -e, t, -1
        score[j], thr[j], sign[j] = best, bt, bs


@nb.jit(**_JIT)
def _sign_missing(h, nb_j, suf):  # pragma: no cover - compiled
    """:func:`sign_scan` of a feature whose NaN rows are in the bin ``nb_j`` after its
    finite bins: pass 0 puts that bin on the left (LightGBM's reverse pass; the left sum
    starts from it), pass 1 on the right (the right sums run from it, and the last
    threshold ``t = nb_j − 1`` leaves it alone there).  Returns ``(score, t, s,
    nan_left)``; a pass-1 split wins only when strictly better (LightGBM's tie rule)."""
    best, bt, bs, nan_l = -np.inf, -1, 0, True
    for p in range(2):
        _suffix_sums(h, nb_j + p, suf)
        left = h[nb_j] if p == 0 else 0.0
        for t in range(nb_j - 1 + p):
            left += h[t]
            e = suf[t + 1] - left
            if e > best:
                best, bt, bs, nan_l = e, t, 1, p == 0
            if -e > best:
                best, bt, bs, nan_l = -e, t, -1, p == 0
    return best, bt, bs, nan_l


@nb.jit(**_JIT)
def code_scan(hist, n_bins, missing, score, thr, k_left, k_right,
              nan_left):  # pragma: no cover - compiled
    """Label-coded multiclass stumps (Grubb & Bagnell 2011, Theorem 2): from the
    histograms ``hist[j]`` (B, K) of the rows of r, the best
    ``max_k R_left,k + max_k R_right,k`` over thresholds, with the first maximising
    class on each side.  A feature with a missing-value bin (``missing[j]``) is scanned
    by :func:`_code_missing`, which also writes ``nan_left[j]``."""
    d, B, K = hist.shape
    suf = np.empty((B, K))
    left = np.empty(K)
    for j in range(d):
        h = hist[j]
        nb_j = n_bins[j]
        if missing[j]:
            score[j], thr[j], k_left[j], k_right[j], nan_left[j] = _code_missing(
                h, nb_j, suf, left)
            continue
        for k in range(K):
            _suffix_sums(h[:, k], nb_j, suf[:, k])
        left[:] = 0.0
        best, bt, bl, br = -np.inf, -1, 0, 0
        for t in range(nb_j - 1):
            kl, kr = 0, 0
            for k in range(K):
                left[k] += h[t, k]
            for k in range(1, K):
                if left[k] > left[kl]:
                    kl = k
                if suf[t + 1, k] > suf[t + 1, kr]:
                    kr = k
            s = left[kl] + suf[t + 1, kr]
            if s > best:
                best, bt, bl, br = s, t, kl, kr
        score[j], thr[j], k_left[j], k_right[j] = best, bt, bl, br


@nb.jit(**_JIT)
def _code_missing(h, nb_j, suf, left):  # pragma: no cover - compiled
    """:func:`code_scan` of a feature with a missing-value bin ``nb_j``, in the two
    passes of :func:`_sign_missing`; returns ``(score, t, k_left, k_right, nan_left)``."""
    K = h.shape[1]
    best, bt, bl, br, nan_l = -np.inf, -1, 0, 0, True
    for p in range(2):
        for k in range(K):
            _suffix_sums(h[:, k], nb_j + p, suf[:, k])
            left[k] = h[nb_j, k] if p == 0 else 0.0
        for t in range(nb_j - 1 + p):
            kl, kr = 0, 0
            for k in range(K):
                left[k] += h[t, k]
            for k in range(1, K):
                if left[k] > left[kl]:
                    kl = k
                if suf[t + 1, k] > suf[t + 1, kr]:
                    kr = k
            s = left[kl] + suf[t + 1, kr]
            if s > best:
                best, bt, bl, br, nan_l = s, t, kl, kr, p == 0
    return best, bt, bl, br, nan_l


@nb.jit(**_JIT)
def lsq_scan(hist_w, hist_s, n_bins, missing, score, thr, sums_left, sums_right,
             sums_w, nan_left):  # pragma: no cover - compiled
    """Two-leaf least-squares stumps (Grubb & Bagnell 2011, eq. 4): from the weight
    histograms ``hist_w[j]`` (B,) and target histograms ``hist_s[j]`` (B, K), the
    largest ``Σ_k (S_L,k²/W_L + S_R,k²/W_R)`` over thresholds with both sides of
    positive weight, and the best split's side sums.  A feature with a missing-value
    bin (``missing[j]``) is scanned by :func:`_lsq_missing`, which also writes
    ``nan_left[j]``."""
    d, B, K = hist_s.shape
    sufW, sufS, left_S = np.empty(B), np.empty((B, K)), np.empty(K)
    for j in range(d):
        W, S = hist_w[j], hist_s[j]
        nb_j = n_bins[j]
        if missing[j]:
            score[j], thr[j], nan_left[j] = _lsq_missing(
                W, S, nb_j, sufW, sufS, left_S, sums_left[j], sums_right[j], sums_w[j])
            continue
        _suffix_sums(W, nb_j, sufW)
        for k in range(K):
            _suffix_sums(S[:, k], nb_j, sufS[:, k])
        left_S[:] = 0.0
        wl = 0.0
        best, bt = -np.inf, -1
        for t in range(nb_j - 1):
            wl += W[t]
            for k in range(K):
                left_S[k] += S[t, k]
            wr = sufW[t + 1]
            if not (wl > 0.0 and wr > 0.0):
                continue
            # S * (S / W): large targets overflow only when the answer itself would.
            g = 0.0
            for k in range(K):
                g += left_S[k] * (left_S[k] / wl) + sufS[t + 1, k] * (sufS[t + 1, k] / wr)
            if g > best:
                best, bt = g, t
                sums_w[j, 0], sums_w[j, 1] = wl, wr
                for k in range(K):
                    sums_left[j, k] = left_S[k]
                    sums_right[j, k] = sufS[t + 1, k]
        score[j], thr[j] = best, bt


@nb.jit(**_JIT)
def _lsq_missing(W, S, nb_j, sufW, sufS, left_S, sums_left, sums_right,
                 sums_w):  # pragma: no cover - compiled
    """:func:`lsq_scan` of a feature with a missing-value bin ``nb_j``, in the two
    passes of :func:`_sign_missing`, writing the best split's side sums into this
    feature's ``sums_*``; returns ``(score, t, nan_left)``."""
    K = S.shape[1]
    best, bt, nan_l = -np.inf, -1, True
    for p in range(2):
        _suffix_sums(W, nb_j + p, sufW)
        for k in range(K):
            _suffix_sums(S[:, k], nb_j + p, sufS[:, k])
            left_S[k] = S[nb_j, k] if p == 0 else 0.0
        wl = W[nb_j] if p == 0 else 0.0
        for t in range(nb_j - 1 + p):
            wl += W[t]
            for k in range(K):
                left_S[k] += S[t, k]
            wr = sufW[t + 1]
            if not (wl > 0.0 and wr > 0.0):
                continue
            g = 0.0
            for k in range(K):
                g += left_S[k] * (left_S[k] / wl) + sufS[t + 1, k] * (sufS[t + 1, k] / wr)
            if g > best:
                best, bt, nan_l = g, t, p == 0
                sums_w[0], sums_w[1] = wl, wr
                for k in range(K):
                    sums_left[k] = left_S[k]
                    sums_right[k] = sufS[t + 1, k]
    return best, bt, nan_l


@nb.jit(**_JIT)
def leaf_outputs(c, t, left, right, out):  # pragma: no cover - compiled
    """A stump's outputs on the training rows: ``out[i] = left`` where the code
    ``c[i] <= t``, else ``right`` (rows of ``out`` (n, K), leaves of shape (K,))."""
    n, K = out.shape
    if K == 1:  # the common case: a select a row, no inner loop (3 times faster)
        lo, hi = left[0], right[0]
        for i in range(n):
            out[i, 0] = lo if c[i] <= t else hi
        return
    for i in range(n):
        v = left if c[i] <= t else right
        for k in range(K):
            out[i, k] = v[k]


@nb.jit(**_JIT)
def leaf_outputs_nan_left(c, t, nan_code, left, right, out):  # pragma: no cover - compiled
    """:func:`leaf_outputs` of a split that also sends its feature's missing-value bin
    (code ``nan_code``, after the finite bins) to the left.  (A split that sends it
    right is :func:`leaf_outputs` itself: ``nan_code > t``.)"""
    n, K = out.shape
    for i in range(n):
        v = left if (c[i] <= t or c[i] == nan_code) else right
        for k in range(K):
            out[i, k] = v[k]


#: Rows a chunk of :func:`bin_block`: their values of a run of features stay in cache
#: from the first feature to the last (256 rows of 8 features: 16 KiB).
BIN_CHUNK = 256


#: Thresholds a feature's search covers in :func:`bin_block`'s fast path: 255, the most a
#: feature of ``max_bins ≤ 255`` has (254), padded; eight steps.
SEARCH_WIDTH = 255


@nb.jit(**_JIT, inline="always")
def _below(thresholds, step, x):  # pragma: no cover - compiled
    """``#{t : thresholds[t] < x}`` over ``2 step − 1`` non-decreasing thresholds
    (``step`` a power of two, or 0 for none): a binary search of fixed steps, each
    adding its step when the threshold under it lies below ``x``.  NaN lies below none
    (0)."""
    k = 0
    while step > 0:
        k += step * (thresholds[k + step - 1] < x)
        step >>= 1
    return k


@nb.jit(**_JIT, inline="always")
def _below_255(thresholds, x0, x1, x2, x3):  # pragma: no cover - compiled
    """:func:`_below` of four values over :data:`SEARCH_WIDTH` thresholds, side by
    side.  The steps start from a constant, so the compiler unrolls them and keeps each
    comparison an addition (in a loop it may turn it back into a branch: 40–45 ns a
    value on random data here, against 5); ``thresholds`` is the feature's own view
    (an offset into all features' array, added in every step, took 10 ns a value)."""
    k0 = k1 = k2 = k3 = 0
    s = 128
    while s > 0:
        k0 += s * (thresholds[k0 + s - 1] < x0)
        k1 += s * (thresholds[k1 + s - 1] < x1)
        k2 += s * (thresholds[k2 + s - 1] < x2)
        k3 += s * (thresholds[k3 + s - 1] < x3)
        s >>= 1
    return k0, k1, k2, k3


@nb.jit(**_JIT)
def bin_block(X, a, b, j0, j1, padded, starts, n_thresholds, out,
              missing):  # pragma: no cover - compiled
    """Bin codes of the rows ``a:b`` and features ``j0:j1`` of ``X`` into ``out[j − j0,
    i − a]`` (a row block's codes, feature-major): ``#{t : θ_jt < X[i, j]}``
    (``np.searchsorted(side="left")`` over feature ``j``'s ``n_thresholds[j]``
    thresholds θ), or ``n_thresholds[j] + 1`` (the missing-value bin, after the finite
    ones) where ``X[i, j]`` is NaN; ``missing[j − j0]`` counts the NaN.

    Feature ``j``'s thresholds are ``padded[starts[j]:starts[j + 1]]``, padded with
    ``+inf`` to ``2^k − 1`` (:func:`_below`; :data:`SEARCH_WIDTH` for up to 255), so
    that the search's steps are the same for every row: four rows are searched side by
    side with no branch on the data.  The rows go by chunks of :data:`BIN_CHUNK`, each
    chunk feature by feature: a row of C-ordered ``X`` is read from the cache lines the
    chunk's first feature brought in, a column of F-ordered ``X`` in runs."""
    for c0 in range(a, b, BIN_CHUNK):
        c1 = min(b, c0 + BIN_CHUNK)
        for j in range(j0, j1):
            thresholds = padded[starts[j]:starts[j + 1]]
            width = thresholds.shape[0]
            nan_code = n_thresholds[j] + 1
            row = out[j - j0]
            nan = 0
            i = c0
            if width == SEARCH_WIDTH:
                while i + 4 <= c1:
                    x0, x1, x2, x3 = X[i, j], X[i + 1, j], X[i + 2, j], X[i + 3, j]
                    k0, k1, k2, k3 = _below_255(thresholds, x0, x1, x2, x3)
                    row[i - a] = k0 if x0 == x0 else nan_code
                    row[i + 1 - a] = k1 if x1 == x1 else nan_code
                    row[i + 2 - a] = k2 if x2 == x2 else nan_code
                    row[i + 3 - a] = k3 if x3 == x3 else nan_code
                    nan += (x0 != x0) + (x1 != x1) + (x2 != x2) + (x3 != x3)
                    i += 4
            step = (width + 1) >> 1
            while i < c1:
                x = X[i, j]
                row[i - a] = _below(thresholds, step, x) if x == x else nan_code
                nan += x != x
                i += 1
            missing[j - j0] += nan


@nb.jit(**_JIT)
def stump_sum(X, used, slot, threshold, left, right, nan_left, out, start, stop,
              block):  # pragma: no cover - compiled
    """Add every round's stump to ``out`` for the rows ``start:stop``: round ``r`` adds
    ``left[r]`` to row ``i`` where ``X[i, used[slot[r]]] <= threshold[r]``, or where it
    is NaN and ``nan_left[r]``, else ``right[r]`` (rows of ``out`` (n, K), leaf rows (K,)).

    ``left`` and ``right`` are the products ``coef[r] * leaf`` already rounded to
    float64, so each addition is the one ``out += coef[r] * h.predict(X)`` makes, and
    every row receives its terms in round order: the sums equal the loop of single
    predictions bit for bit, whatever ``block`` and however the rows are split between
    calls (threads).  No multiplication is left here to fuse into an FMA.

    The rows go by blocks of ``block``: the block's values of the ``used`` features are
    copied feature-major, and its rows of ``out`` class-major, into buffers that stay in
    cache while every round passes over them (contiguous, so the compare-select-add loop
    vectorises), then the sums are copied back (copies are exact).  The copy notes
    whether the block holds a NaN; only such a block takes the loop that tests for it.
    """
    m = used.shape[0]
    R = slot.shape[0]
    K = out.shape[1]
    xb = np.empty((m, block))
    ob = np.empty((K, block))
    for a in range(start, stop, block):
        w = min(block, stop - a)
        nan = False
        for i in range(w):
            for j in range(m):
                x = X[a + i, used[j]]
                xb[j, i] = x
                nan |= x != x
            for k in range(K):
                ob[k, i] = out[a + i, k]
        if nan:
            _stump_sum_missing(xb, slot, threshold, left, right, nan_left, ob, w)
        else:
            for r in range(R):
                s = slot[r]
                t = threshold[r]
                for k in range(K):
                    lo = left[r, k]
                    hi = right[r, k]
                    for i in range(w):
                        ob[k, i] += lo if xb[s, i] <= t else hi
        for i in range(w):
            for k in range(K):
                out[a + i, k] = ob[k, i]


@nb.jit(**_JIT)
def _stump_sum_missing(xb, slot, threshold, left, right, nan_left, ob,
                       w):  # pragma: no cover - compiled
    """The rounds of :func:`stump_sum` over a block that holds a NaN: a NaN goes to
    the side ``nan_left[r]`` names (no comparison sends it left)."""
    K = ob.shape[0]
    for r in range(slot.shape[0]):
        s = slot[r]
        t = threshold[r]
        nl = nan_left[r]
        for k in range(K):
            lo = left[r, k]
            hi = right[r, k]
            for i in range(w):
                x = xb[s, i]
                ob[k, i] += lo if (x <= t or (nl and x != x)) else hi
