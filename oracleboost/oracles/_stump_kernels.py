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

The kernels release the GIL (``nogil``), so that blocks of features run on threads, and
are compiled once per machine and cached on disk (``cache=True``); later processes load
the machine code.  ``benchmarks/README.md`` gives the first-call compile time.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}


@nb.jit(**_JIT)
def _suffix_sums(h, nb_j, out):  # pragma: no cover - compiled
    """``out[b] = h[nb_j-1] + … + h[b]`` summed from the last bin, for b < nb_j."""
    acc = 0.0
    for b in range(nb_j - 1, -1, -1):
        acc += h[b]
        out[b] = acc


@nb.jit(**_JIT)
def sign_splits(codes, r, n_bins, hist, score, thr, sign):  # pragma: no cover - compiled
    """±1 stumps.  For each feature ``j`` of ``codes`` (d_block, n): the histogram of
    ``r`` into ``hist[j]`` and the best ``s · (R_right − R_left)`` over thresholds
    ``t < n_bins[j] − 1`` and ``s ∈ {+1, −1}``, into ``score[j]``, ``thr[j]``,
    ``sign[j]`` (``score = -inf`` when the feature has one bin)."""
    d, n = codes.shape
    suf = np.empty(hist.shape[1])
    for j in range(d):
        h = hist[j]
        h[:] = 0.0
        c = codes[j]
        for i in range(n):
            h[c[i]] += r[i]
        nb_j = n_bins[j]
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
def _accumulate(c, values, h):  # pragma: no cover - compiled
    """``h[c[i], k] += values[i, k]`` in row order."""
    n, K = values.shape
    for i in range(n):
        b = c[i]
        for k in range(K):
            h[b, k] += values[i, k]


@nb.jit(**_JIT)
def code_splits(codes, r, n_bins, hist, score, thr, k_left, k_right):  # pragma: no cover
    """Label-coded multiclass stumps (Grubb & Bagnell 2011, Theorem 2).  For each
    feature: the histogram of the rows of ``r`` (n, K) into ``hist[j]`` (B, K) and the
    best ``max_k R_left,k + max_k R_right,k`` over thresholds, with the first maximising
    class on each side."""
    d, n = codes.shape
    K = r.shape[1]
    suf = np.empty((hist.shape[1], K))
    left = np.empty(K)
    for j in range(d):
        h = hist[j]
        h[:, :] = 0.0
        _accumulate(codes[j], r, h)
        nb_j = n_bins[j]
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
def _lsq_scan(W, S, nb_j, sufW, sufS, left_S, out_left, out_right, out_w):  # pragma: no cover
    """Best least-squares split of one feature from its weight and target histograms:
    the largest ``Σ_k (S_L,k²/W_L + S_R,k²/W_R)`` over thresholds with both sides of
    positive weight.  Returns (gain, t); writes the best sides' sums."""
    K = S.shape[1]
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
            out_w[0], out_w[1] = wl, wr
            for k in range(K):
                out_left[k] = left_S[k]
                out_right[k] = sufS[t + 1, k]
    return best, bt


@nb.jit(**_JIT)
def lsq_splits(codes, target, weight, counts, n_bins, hist_w, hist_s, score, thr, sums_left,
               sums_right, sums_w):  # pragma: no cover - compiled
    """Two-leaf least-squares stumps (Grubb & Bagnell 2011, eq. 4) for targets (n, K).

    ``weight`` of shape (n,) is accumulated with ``weight * target`` in the same pass;
    with ``weight`` of shape (0,) the rows are unweighted and ``counts`` (d_block, B),
    the bin counts computed once at bind, are the weight histograms."""
    d, n = codes.shape
    K = target.shape[1]
    B = hist_s.shape[1]
    weighted = weight.shape[0] == n
    sufW, sufS, left_S = np.empty(B), np.empty((B, K)), np.empty(K)
    for j in range(d):
        S = hist_s[j]
        S[:, :] = 0.0
        c = codes[j]
        if weighted:
            W = hist_w[j]
            W[:] = 0.0
            for i in range(n):
                b = c[i]
                wi = weight[i]
                W[b] += wi
                for k in range(K):
                    S[b, k] += wi * target[i, k]
        else:
            W = counts[j]
            _accumulate(c, target, S)
        g, t = _lsq_scan(W, S, n_bins[j], sufW, sufS, left_S, sums_left[j], sums_right[j],
                         sums_w[j])
        score[j], thr[j] = g, t


@nb.jit(**_JIT)
def bin_counts(codes, B):  # pragma: no cover - compiled
    """Number of rows in each bin of each feature: (d, B) float64."""
    d, n = codes.shape
    out = np.zeros((d, B))
    for j in range(d):
        c = codes[j]
        h = out[j]
        for i in range(n):
            h[c[i]] += 1.0
    return out


@nb.jit(**_JIT)
def leaf_outputs(c, t, left, right, out):  # pragma: no cover - compiled
    """A stump's outputs on the training rows: ``out[i] = left`` where the code
    ``c[i] <= t``, else ``right`` (rows of ``out`` (n, K), leaves of shape (K,))."""
    n, K = out.shape
    for i in range(n):
        v = left if c[i] <= t else right
        for k in range(K):
            out[i, k] = v[k]


@nb.jit(**_JIT)
def bin_codes(col, thresholds, out):  # pragma: no cover - compiled
    """``out[i] = #{t : thresholds[t] < col[i]}`` (``np.searchsorted(side="left")``) by
    binary search; compiled so that features bin in parallel without the GIL."""
    m = thresholds.shape[0]
    for i in range(col.shape[0]):
        x = col[i]
        lo, size = 0, m
        while size > 0:
            half = size >> 1
            if thresholds[lo + half] < x:
                lo += half + 1
                size -= half + 1
            else:
                size = half
        out[i] = lo
