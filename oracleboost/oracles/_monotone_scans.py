"""Compiled scans of :class:`~oracleboost.oracles.StumpOracle` under monotone
constraints: the best split of each constrained feature among the stumps that rise
(``direction[j] = +1``) or fall (``-1``) with it.

They run after the unconstrained scans of :mod:`._stump_kernels` and overwrite the
constrained features' best splits; unconstrained features (``direction[j] = 0``) are
left as those scans found them.  The passes over the bins, the sums and the tie rules
are :mod:`._stump_kernels`' (a feature with a missing-value bin in LightGBM's two
passes); what differs is which candidates count:

* ±1 stumps ``x ↦ s`` right of the threshold, ``−s`` left: only ``s = direction[j]``,
  the stump that steps the way the constraint allows;
* least-squares stumps: only splits whose right leaf (the weighted mean of the target
  right of the threshold) is at least (``+1``) or at most (``−1``) the left one, as
  LightGBM's ``monotone_constraints_method="basic"`` drops a split whose outputs break
  the constraint.

Constraints bind finite values; where a feature's NaN rows go is learnt as without them.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from oracleboost.oracles._stump_kernels import _JIT, _suffix_sums


@nb.jit(**_JIT)
def sign_rescan(hist, n_bins, missing, direction, score, thr, sign,
                nan_left):  # pragma: no cover - compiled
    """:func:`~._stump_kernels.sign_scan` of the features with ``direction[j] != 0``,
    keeping only the sign ``s = direction[j]``."""
    d, B = hist.shape
    suf = np.empty(B)
    for j in range(d):
        s = direction[j]
        if s == 0:
            continue
        h = hist[j]
        nb_j = n_bins[j]
        best, bt, nan_l = -np.inf, -1, missing[j]
        for p in range(2 if missing[j] else 1):
            _suffix_sums(h, nb_j + p, suf)
            left = h[nb_j] if (missing[j] and p == 0) else 0.0
            for t in range(nb_j - 1 + p):
                left += h[t]
                e = s * (suf[t + 1] - left)
                if e > best:
                    best, bt, nan_l = e, t, missing[j] and p == 0
        score[j], thr[j], sign[j], nan_left[j] = best, bt, s, nan_l


@nb.jit(**_JIT)
def lsq_rescan(hist_w, hist_s, n_bins, missing, direction, score, thr, sums_left,
               sums_right, sums_w, nan_left):  # pragma: no cover - compiled
    """:func:`~._stump_kernels.lsq_scan` (one output, ``hist_s`` of shape (d, B, 1)) of
    the features with ``direction[j] != 0``, keeping only the splits whose leaves
    ``b = S_R/W_R`` and ``a = S_L/W_L`` satisfy ``direction[j] · (b − a) >= 0``."""
    d, B, _ = hist_s.shape
    sufW, sufS = np.empty(B), np.empty(B)
    for j in range(d):
        s = direction[j]
        if s == 0:
            continue
        W, S = hist_w[j], hist_s[j, :, 0]
        nb_j = n_bins[j]
        best, bt, nan_l = -np.inf, -1, missing[j]
        for p in range(2 if missing[j] else 1):
            _suffix_sums(W, nb_j + p, sufW)
            _suffix_sums(S, nb_j + p, sufS)
            first = missing[j] and p == 0
            left_S = S[nb_j] if first else 0.0
            wl = W[nb_j] if first else 0.0
            for t in range(nb_j - 1 + p):
                wl += W[t]
                left_S += S[t]
                wr = sufW[t + 1]
                if not (wl > 0.0 and wr > 0.0):
                    continue
                if s * (sufS[t + 1] / wr - left_S / wl) < 0.0:
                    continue  # the leaves step against the constraint
                g = left_S * (left_S / wl) + sufS[t + 1] * (sufS[t + 1] / wr)
                if g > best:
                    best, bt, nan_l = g, t, missing[j] and p == 0
                    sums_w[j, 0], sums_w[j, 1] = wl, wr
                    sums_left[j, 0] = left_S
                    sums_right[j, 0] = sufS[t + 1]
        score[j], thr[j], nan_left[j] = best, bt, nan_l
