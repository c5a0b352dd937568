"""MABoost's Bregman projections as stages of row blocks.

The projection of Algorithm 1, step (d) (Naghibi & Pfister 2014, Def. 1, eq. (2))::

    Π_S(z) = argmin_{w ∈ S} B_R(w, z)

onto the simplex, smooth boosting's capped simplex ``S_k`` (§3.1, a scalar cap ``k/N``)
or the dataset-combining set ``S_c`` (§3.2, eq. (26): per-row caps, ``np.inf`` on the
primary set), for the two mirror maps:

* ``R = ½‖w‖²``: ``w = clip(z − τ, 0, cap)`` with the one threshold ``τ`` such that
  ``g(τ) = Σ_i clip(z_i − τ, 0, cap_i) = 1``;
* ``R = Σ w log w − w``: ``w = min(cap, c·z)`` with the one ``c > 0`` such that
  ``h(log c) = Σ_i min(cap_i, c·z_i) = 1`` (uncapped: ``w = z / Σ z``).

``τ`` and ``log c`` are global: they depend on every row.  Here they are found exactly
without gathering the rows.  Every pass over the rows is a stage of
:meth:`~oracleboost.rows.blocks.RowBlocks.map` (in memory on threads, or once per partition
on a Dask cluster's workers): it returns per-lane partials, which the client adds in
lane order (:func:`~oracleboost.rows.blocks.ordered_sum`), integer counts, and a bounded
sample or set of candidates.  A lane's partial depends only on its rows, counts are
exact, the sample and the candidates are sets fixed by the rows alone, so every decision
and every sum is the same number for any ``n_jobs`` and on any number of workers: the
projection is bit for bit the same (``tests/test_row_projections.py``).

**The selection** (``g`` and ``h`` are monotone and piecewise linear, respectively
piecewise exponential, with breakpoints ``z_i`` and ``z_i − cap_i``, respectively
``r_i = log cap_i − log z_i``).  The client keeps a bracket ``(a, b)`` of breakpoint
values with the answer in it (at first the whole line) and the number ``m`` of
breakpoints strictly inside it:

1. *sample*: a pass takes the breakpoints inside ``(a, b)`` of every ``s``-th row of
   each lane (and, for very large ``m``, those whose hash of value and position falls
   below a threshold): about ``SAMPLE`` values; a partition sends at most ``KEEP`` of
   them, and the client keeps the ``KEEP`` of smallest hash (the same set however the
   rows are cut);
2. *refine*: ``P`` pivots (the sample's quantiles inside ``(a, b)``), and a pass giving
   every lane's ``g`` (``h``) at every pivot — each row finds its bucket among the
   pivots by binary search and the lane's values at all pivots follow from its buckets'
   sums — and the exact count of breakpoints between consecutive pivots.  The bracket
   becomes the gap between the last pivot on the left of the answer and the next one,
   with its count.  Repeated (with the sample of the same pass) while ``m > GATHER``;
3. *gather*: a pass returns the rows with a breakpoint inside ``(a, b)`` (at most
   ``GATHER``) and, per lane, the sums of the other rows, whose status (zero, capped,
   free) is the same everywhere in the bracket.  The client evaluates ``g`` (``h``) at
   the gathered breakpoints (fixed part plus the candidates in row order), which fixes
   the piece ``[left, right]`` and on it the closed form of ``τ`` (``log c``);
4. *finish*: a pass gives ``Σ w`` (summed exactly: compensated lane sums added by
   ``math.fsum``) and the free rows; one Newton step on the piece (exactly a no-op in
   exact arithmetic) takes the residual ``1 − Σ w`` out; a last pass computes ``w``
   (KL: the first pass computes ``w`` too, and the second runs only when the Newton
   step moves).

So a projection of ``n`` rows makes ``1 + R + 1 + 2`` passes, ``R`` the rounds of
refinement: none when the breakpoints fit in ``GATHER`` (``n ≤ 32,768``, or ``16,384``
capped: then the first pass gathers them all, and the projection makes 3 passes), one
up to about ``P · GATHER / 2`` breakpoints (``P = 128`` pivots: 2 million), and about
``⌈log_P(m / GATHER)⌉`` in general (``P`` shrinks when there are many lanes, so that a
pass's partials stay at most ``LANE_BUDGET`` numbers).  Each pass is O(n) (a
refinement's binary search over ``P`` pivots is 7 steps a row, without branches); the
client sorts at most ``KEEP + GATHER`` values.  Given an earlier threshold and its
bracket's width (:func:`euclidean_simplex_rows_near`: MABoost's rounds move each row
by at most η_t), the first pass evaluates ``g`` at pivots near it in place of the
sample, and the next gathers: one pass fewer (at 100,000 rows, 2.4 ms against 3.0 a
projection; 93 of 100 MABoost rounds).  The uncapped KL projection is the softmax in log
space: 3 passes (maximum, lane sums of ``exp``, division).

Exact zeros and the edge cases are those of :mod:`.projections` (whose public functions
delegate here): coordinates with ``cap_i = 0`` or ``log z_i = −inf`` are exactly 0;
caps summing to 1 (within 8 ulps) give ``w = cap``; infeasible caps raise the same
``ValueError``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numba as nb
import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import RowBlocks, ordered_sum, outputs_only
from oracleboost.rows.partitioned import Partitioned, Rows

__all__ = ["euclidean_simplex_rows", "euclidean_simplex_rows_near", "kl_simplex_rows",
           "kl_softmax_rows", "Near"]

_EPS = float(np.finfo(np.float64).eps)
# |Σ cap − 1| below which the capped set is the single point w = cap (Σ cap = 1 up to
# the rounding of caps such as 1/N).
_TIGHT = 8.0 * _EPS

#: Breakpoint values a sampling pass aims at (the refinement's pivots are its quantiles).
SAMPLE = 1 << 12
#: At most this many sampled values come back from a partition (the smallest hashes).
KEEP = 1 << 13
#: The bracket's breakpoints are gathered once at most this many remain.
GATHER = 1 << 15
#: Pivots of a refinement: at most ``MAX_PIVOTS`` (the unrolled search of
#: :func:`_below` is written for 128), fewer when ``n_lanes × P`` would exceed
#: ``LANE_BUDGET`` partials (never fewer than ``MIN_PIVOTS``).
MAX_PIVOTS = 128
MIN_PIVOTS = 8
LANE_BUDGET = 1 << 18

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}
_NO_CAPS = np.empty(0)
_NO_PIVOTS = np.empty(0)
_ALL = (1 << 64) - 1  # the hash threshold that keeps everything
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


# ---------------------------------------------------------------------------------------
# compiled kernels: each covers the rows lo:hi of a run of whole lanes
# ---------------------------------------------------------------------------------------


@nb.jit(**_JIT)
def _mix(x):  # pragma: no cover - compiled
    """SplitMix64's finaliser: a bijection of uint64 that scatters nearby inputs."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@nb.jit(**_JIT)
def _below(piv, x):  # pragma: no cover - compiled
    """The number of entries ``< x`` of the increasing ``piv`` of ``MAX_PIVOTS`` = 128
    entries (padded with ``+inf``): a binary search without branches, unrolled (a
    data-dependent branch a step costs more than the rest of a row's work)."""
    k = 64 * (piv[64] < x)
    k += 32 * (piv[k + 32] < x)
    k += 16 * (piv[k + 16] < x)
    k += 8 * (piv[k + 8] < x)
    k += 4 * (piv[k + 4] < x)
    k += 2 * (piv[k + 2] < x)
    k += 1 * (piv[k + 1] < x)
    return k + (piv[k] < x)


@nb.jit(**_JIT)
def _compact(keys, vals, n, keep, tk, tv):  # pragma: no cover - compiled
    """Keep the ``keep`` smallest distinct ``(key, value)`` of the first ``n`` items
    (sorted) and lower the acceptance threshold ``(tk, tv)`` to the largest kept one
    when items had to go.  Returns the new count."""
    k = keys[:n].copy()
    v = vals[:n].copy()
    o1 = np.argsort(v, kind="mergesort")
    o2 = np.argsort(k[o1], kind="mergesort")
    m = 0
    for j in range(n):
        i = o1[o2[j]]
        if m > 0 and k[i] == keys[m - 1] and v[i] == vals[m - 1]:
            continue
        if m == keep:
            tk[0] = keys[m - 1]
            tv[0] = vals[m - 1]
            break
        keys[m] = k[i]
        vals[m] = v[i]
        m += 1
    return m


@nb.jit(**_JIT)
def _offer(x, pos, kind, fb, ub, keys, vals, st, tk, tv, keep):  # pragma: no cover
    """Offer the sampled breakpoint ``x`` (row ``pos`` of its lane, breakpoint ``kind``):
    kept if its hash is at most the threshold ``(tk, tv)``."""
    fb[0] = x + 0.0  # -0.0 hashes as 0.0
    key = _mix(ub[0] ^ _mix(np.uint64(pos) * np.uint64(4) + np.uint64(kind) + _GOLD))
    if key < tk[0] or (key == tk[0] and fb[0] <= tv[0]):
        n = st[0]
        if n == keys.shape[0]:
            n = _compact(keys, vals, n, keep, tk, tv)
            st[0] = n
            if not (key < tk[0] or (key == tk[0] and fb[0] <= tv[0])):
                return
        keys[n] = key
        vals[n] = fb[0]
        st[0] = n + 1


@nb.jit(**_JIT)
def _eu_stats(z, caps, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane: ``min z, max z, [NaN in z], min cap, [NaN in cap]``, the finite caps'
    compensated sum (Neumaier: sum, correction), the number of infinite caps and of
    the breakpoints (``z_i`` where ``cap_i > 0``, ``z_i − cap_i`` where finite too)."""
    has = caps.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        zmin, zmax, znan = np.inf, -np.inf, 0.0
        for i in range(start, stop):
            x = z[i]
            znan += x != x
            zmin = x if x < zmin else zmin
            zmax = x if x > zmax else zmax
        cmin, cnan, s, comp, ninf, nbp = np.inf, 0.0, 0.0, 0.0, 0.0, 0.0
        if has:
            for i in range(start, stop):
                c = caps[i]
                if c != c:
                    cnan = 1.0
                    continue
                cmin = min(cmin, c)
                nbp += (c > 0.0) + ((c > 0.0) & (c < np.inf))
                if c == np.inf:
                    ninf += 1.0
                else:
                    t = s + c
                    comp += (s - t) + c if abs(s) >= abs(c) else (c - t) + s
                    s = t
        out[q, 0], out[q, 1], out[q, 2] = zmin, zmax, znan
        out[q, 3], out[q, 4], out[q, 5], out[q, 6], out[q, 7] = cmin, cnan, s, comp, ninf
        out[q, 8] = nbp
        q += 1


@nb.jit(**_JIT)
def eu_pivot_values(AZ, NZ, AL, NL, piv, P, out):  # pragma: no cover - compiled
    """``g`` at the ``P`` pivots into ``out[0:P]`` from the buckets' sums (``AZ[k] = Σ
    (z − p_{k−1})`` and ``NZ[k]`` the count over the ``z`` breakpoints of bucket ``k``;
    ``AL``, ``NL`` over the ``z − cap`` ones): the top pivot down, adding non-negative
    terms (:func:`_eu_refine`; on the GPU, from the buckets' fixed-point sums)."""
    zp, nz, lp, nl = AZ[P], NZ[P], AL[P], NL[P]
    out[P - 1] = zp - lp
    for j in range(P - 2, -1, -1):
        d = piv[j + 1] - piv[j]
        zp = zp + nz * d + AZ[j + 1]
        nz += NZ[j + 1]
        lp = lp + nl * d + AL[j + 1]
        nl += NL[j + 1]
        out[j] = zp - lp


@nb.jit(**_JIT)
def kl_pivot_values(Cc, E, D, piv, P, mu, u, out):  # pragma: no cover - compiled
    """``h`` at the ``P`` pivots into ``out[0:P]`` from the buckets' sums (``Cc[k]`` the
    caps, ``E[k] = Σ exp(p_{k−1} + log z)`` of bucket ``k``) and the uncapped rows'
    ``exp(p + μ) u`` (``D`` scratch of ``P`` entries; :func:`_kl_refine`; on the GPU,
    from the buckets' fixed-point sums)."""
    d = E[P]
    D[P - 1] = d
    for j in range(P - 2, -1, -1):
        d = E[j + 1] + math.exp(piv[j] - piv[j + 1]) * d
        D[j] = d
    cp = 0.0
    for j in range(P):
        cp += Cc[j]
        v = cp + D[j]
        if u > 0.0:
            v += math.exp(piv[j] + mu) * u
        out[j] = v


@nb.jit(**_JIT)
def _eu_refine(z, caps, cap, lo, hi, lane, a, b, P, piv, ref, counts, out, stride,
               keys, vals, st, tk, tv, keep, fb, ub):  # pragma: no cover - compiled
    """Refinement and sampling pass of the Euclidean projection on ``lo:hi``.

    With ``P`` pivots ``p_j`` (``piv``, padded to 128 with ``+inf``; ``ref[k] =
    p_{k−1}``), ``out[q, j]`` = lane ``q``'s ``Σ_i clip(z_i − p_j, 0, cap_i)``, as
    ``Σ_{z_i > p_j} (z_i − p_j) − Σ_{L_i > p_j} (L_i − p_j)`` (``L = z − cap``): each sum
    from the buckets between consecutive pivots (``A_k = Σ (x − p_{k−1})`` and the count
    of the breakpoints ``x`` of bucket ``k``), adding non-negative terms from the top
    pivot down.  ``counts[k]`` += the breakpoints strictly inside ``(a, b)`` strictly
    between pivots ``k − 1`` and ``k``.  Every ``stride``-th row of a lane offers its
    breakpoints inside ``(a, b)`` to the sample (``stride = 0``: none)."""
    has = caps.shape[0] > 0
    AZ, NZ = np.zeros(piv.shape[0] + 1), np.zeros(piv.shape[0] + 1)
    AL, NL = np.zeros(piv.shape[0] + 1), np.zeros(piv.shape[0] + 1)
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        if P > 0:  # (without pivots, a pass only samples)
            AZ[:] = 0.0
            NZ[:] = 0.0
            AL[:] = 0.0
            NL[:] = 0.0
            for i in range(start, stop):
                c = caps[i] if has else cap
                if not c > 0.0:
                    continue  # cap 0: w_i = 0, no breakpoint
                x = z[i]
                k = _below(piv, x)
                AZ[k] += x - ref[k]  # bucket 0 is never read
                NZ[k] += 1.0
                counts[k] += (a < x) & (x < b) & (piv[min(k, 127)] != x)
                if c < np.inf:
                    y = x - c
                    k = _below(piv, y)
                    AL[k] += y - ref[k]
                    NL[k] += 1.0
                    counts[k] += (a < y) & (y < b) & (piv[min(k, 127)] != y)
            eu_pivot_values(AZ, NZ, AL, NL, piv, P, out[q])
        if stride > 0:
            for i in range(start, stop, stride):
                c = caps[i] if has else cap
                if not c > 0.0:
                    continue
                x = z[i]
                if a < x and x < b:
                    _offer(x, i - start, 0, fb, ub, keys, vals, st, tk, tv, keep)
                if c < np.inf:
                    y = x - c
                    if a < y and y < b:
                        _offer(y, i - start, 1, fb, ub, keys, vals, st, tk, tv, keep)
        q += 1


@nb.jit(**_JIT)
def _eu_gather(z, caps, cap, lo, hi, lane, a, b, fixed, cz, cc):  # pragma: no cover
    """The rows with a breakpoint strictly inside ``(a, b)`` into ``cz, cc`` (in row
    order; returns their number; the buffers hold one more), and per lane the other
    rows' ``Σ (z_i − b)`` and count over the free ones (``L_i ≤ a``, ``z_i ≥ b``) and
    ``Σ cap_i`` over the capped ones (``L_i ≥ b``); without branches on the data."""
    has = caps.shape[0] > 0
    n = 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        sff, nff, scap = 0.0, 0.0, 0.0
        for i in range(start, stop):
            c = caps[i] if has else cap
            if not c > 0.0:
                continue
            x = z[i]
            y = x - c  # -inf when uncapped
            cand = ((a < x) & (x < b)) | ((a < y) & (y < b))
            cz[n] = x
            cc[n] = c
            n += cand
            free = ~cand & (a < x) & (y <= a)  # then x ≥ b
            sff += (x - b) if free else 0.0
            nff += free
            scap += c if ~cand & (y >= b) else 0.0
        fixed[q, 0], fixed[q, 1], fixed[q, 2] = sff, nff, scap
        q += 1
    return n


@nb.jit(**_JIT)
def _clip(x, tau, c):  # pragma: no cover - compiled
    """``clip(x − τ, 0, c)``, without branches (exact zeros; 0 where ``c = 0``)."""
    v = x - tau
    v = v if v > 0.0 else 0.0
    return v if v < c else c


@nb.jit(**_JIT)
def _eu_residual(z, caps, cap, tau, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane ``Σ clip(z − τ, 0, cap)`` (compensated: sum, correction) and the number
    of free rows ``0 < w < cap``."""
    has = caps.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        s, comp, nf = 0.0, 0.0, 0.0
        for i in range(start, stop):
            c = caps[i] if has else cap
            wi = _clip(z[i], tau, c)
            nf += (wi > 0.0) & (wi < c)
            t = s + wi
            comp += (s - t) + wi if s >= wi else (wi - t) + s  # Neumaier (w ≥ 0)
            s = t
        out[q, 0], out[q, 1], out[q, 2] = s, comp, nf
        q += 1


@nb.jit(**_JIT)
def _eu_weights(z, caps, cap, tau, lo, hi, w):  # pragma: no cover - compiled
    """``w = clip(z − τ, 0, cap)`` on ``lo:hi``."""
    if caps.shape[0] > 0:
        for i in range(lo, hi):
            w[i] = _clip(z[i], tau, caps[i])
    else:
        for i in range(lo, hi):
            w[i] = _clip(z[i], tau, cap)


@nb.jit(**_JIT)
def _compensated_sums(x, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane of ``x[lo:hi]`` (``x`` holding the run's rows from 0): ``Σ x`` in row
    order, compensated (Neumaier): ``out[q] = (sum, correction)``."""
    q = 0
    for start in range(0, hi - lo, lane):
        stop = min(start + lane, hi - lo)
        s, comp = 0.0, 0.0
        for i in range(start, stop):
            v = x[i]
            t = s + v
            comp += (s - t) + v if abs(s) >= abs(v) else (v - t) + s
            s = t
        out[q, 0], out[q, 1] = s, comp
        q += 1


@nb.jit(**_JIT)
def _kl_stats(lz, caps, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane: ``max log z`` (finite or -inf), ``[NaN]``, ``[+inf]``, the rows with
    ``log z > −inf``; ``min cap, [NaN cap]``; the finite caps' compensated sum and
    number of infinite caps, over every row and over the rows with ``log z > −inf``;
    the number of breakpoints (rows with ``log z > −inf`` and ``0 < cap < inf``)."""
    has = caps.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        top, nan, pinf, npos = -np.inf, 0.0, 0.0, 0.0
        cmin, cnan = np.inf, 0.0
        s, comp, ninf, ps, pcomp, pinfc, nbp = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        for i in range(start, stop):
            x = lz[i]
            if x != x:
                nan = 1.0
            elif x == np.inf:
                pinf = 1.0
            elif x > -np.inf:
                top = max(top, x)
                npos += 1.0
            if has:
                c = caps[i]
                if c != c:
                    cnan = 1.0
                    continue
                cmin = min(cmin, c)
                nbp += (c > 0.0) & (c < np.inf) & (x > -np.inf)
                if c == np.inf:
                    ninf += 1.0
                    if x > -np.inf:
                        pinfc += 1.0
                    continue
                t = s + c
                comp += (s - t) + c if abs(s) >= abs(c) else (c - t) + s
                s = t
                if x > -np.inf:
                    t = ps + c
                    pcomp += (ps - t) + c if abs(ps) >= abs(c) else (c - t) + ps
                    ps = t
        out[q, 0], out[q, 1], out[q, 2], out[q, 3] = top, nan, pinf, npos
        out[q, 4], out[q, 5] = cmin, cnan
        out[q, 6], out[q, 7], out[q, 8] = s, comp, ninf
        out[q, 9], out[q, 10], out[q, 11], out[q, 12] = ps, pcomp, pinfc, nbp
        q += 1


@nb.jit(**_JIT)
def _kl_refine(lz, r, caps, cap, lo, hi, lane, a, b, P, piv, ref, counts, out, stride,
               keys, vals, st, tk, tv, keep, fb, ub):  # pragma: no cover - compiled
    """Refinement and sampling pass of the KL projection on ``lo:hi`` (``r`` the run's
    ``log cap − log z``).

    ``out[q, j]`` = lane ``q``'s ``h(p_j) = Σ_i min(cap_i, exp(p_j + log z_i))``: the
    caps of the rows with ``r_i ≤ p_j``, plus ``Σ_{k > j} exp(p_j − p_{k−1}) E_k`` with
    ``E_k = Σ exp(p_{k−1} + log z_i)`` over the rows of bucket ``k`` (each term below its
    cap: no overflow), plus the uncapped rows' ``exp(p_j + μ) Σ exp(log z_i − μ)``.
    Counts and sample as in :func:`_eu_refine`."""
    has = caps.shape[0] > 0
    Cc, E, D = (np.zeros(piv.shape[0] + 1), np.zeros(piv.shape[0] + 1),
                np.zeros(piv.shape[0] + 1))
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        Cc[:] = 0.0
        E[:] = 0.0
        mu = -np.inf
        for i in range(start, stop if P > 0 else start):  # without pivots: sample only
            c = caps[i] if has else cap
            x = lz[i]
            if not c > 0.0 or not x > -np.inf:
                continue  # w_i = 0
            if c == np.inf:
                mu = max(mu, x)
                continue
            ri = r[i - lo]
            k = _below(piv, ri)
            counts[k] += (a < ri) & (ri < b) & (piv[min(k, 127)] != ri)
            Cc[k] += c
            E[k] += math.exp(ref[k] + x)  # bucket 0 is never read
        if stride > 0:
            for i in range(start, stop, stride):
                c = caps[i] if has else cap
                x = lz[i]
                if not c > 0.0 or not x > -np.inf or c == np.inf:
                    continue
                ri = r[i - lo]
                if a < ri and ri < b:
                    _offer(ri, i - start, 0, fb, ub, keys, vals, st, tk, tv, keep)
        if P > 0:
            u = 0.0
            if mu > -np.inf:
                for i in range(start, stop):
                    c = caps[i] if has else cap
                    if c == np.inf and lz[i] > -np.inf:
                        u += math.exp(lz[i] - mu)
            kl_pivot_values(Cc, E, D, piv, P, mu, u, out[q])
        q += 1


@nb.jit(**_JIT)
def _kl_gather(lz, r, caps, cap, lo, hi, lane, a, b, fixed, cr, cl, cc):  # pragma: no cover
    """The rows with ``r_i`` strictly inside ``(a, b)`` into ``cr, cl, cc`` (``r, log z,
    cap``; returns their number), and per lane the sum of the caps of the rows capped
    on the whole bracket (``r_i ≤ a``; compensated: sum, correction, for the exact mass
    ``1 − Σ_C cap``) and, over the free ones (``r_i ≥ b`` or uncapped),
    ``μ = max log z`` and ``Σ exp(log z_i − μ)``."""
    has = caps.shape[0] > 0
    n = 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        scap, comp, mx = 0.0, 0.0, -np.inf
        for i in range(start, stop):
            c = caps[i] if has else cap
            x = lz[i]
            if not c > 0.0 or not x > -np.inf:
                continue
            ri = r[i - lo]
            if c < np.inf and a < ri and ri < b:
                cr[n] = ri
                cl[n] = x
                cc[n] = c
                n += 1
            elif c < np.inf and ri <= a:
                t = scap + c
                comp += (scap - t) + c if scap >= c else (c - t) + scap  # Neumaier
                scap = t
            else:
                mx = max(mx, x)
        s = 0.0
        if mx > -np.inf:
            for i in range(start, stop):
                c = caps[i] if has else cap
                x = lz[i]
                if not c > 0.0 or not x > -np.inf:
                    continue
                if c == np.inf or r[i - lo] >= b:
                    s += math.exp(x - mx)
        fixed[q, 0], fixed[q, 1], fixed[q, 2], fixed[q, 3] = scap, comp, mx, s
        q += 1
    return n


# ---------------------------------------------------------------------------------------
# the stages (run once in memory, or once per partition on a cluster's workers)
# ---------------------------------------------------------------------------------------


class _Pass(NamedTuple):
    """What a selection pass brings back of one partition (or all of them, combined)."""

    stats: np.ndarray | None  # (lanes, k): the first pass's checks and cap sums
    values: np.ndarray  # (lanes, P): g (h) at the pivots
    fixed: np.ndarray | None  # (lanes, 3 or 4): the gather pass's sums of the fixed rows
    counts: np.ndarray  # (P + 1,) int64: breakpoints between consecutive pivots
    keys: np.ndarray  # the sample: hashes (uint64) ...
    sample: np.ndarray  # ... and values
    cands: tuple  # the gathered rows' arrays, in row order


def _runs(blocks: RowBlocks, fn: Callable[[int, int, int, int], Any]) -> list:
    """``fn(q0, q1, lo, hi)`` over the runs of lanes of :meth:`RowBlocks.lane_map`, the
    results in row order."""
    out: dict[int, Any] = {}

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        out[q0] = fn(q0, q1, lo, hi)

    blocks.lane_map(run)
    return [out[k] for k in sorted(out)]


def _bottom(keys: np.ndarray, vals: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``keep`` smallest distinct ``(key, value)`` pairs: the same set however the
    rows were cut (it is the rows' own bottom-``keep``)."""
    if keys.size == 0:
        return keys, vals
    order = np.lexsort((vals, keys))
    keys, vals = keys[order], vals[order]
    new = np.ones(keys.size, dtype=bool)
    new[1:] = (keys[1:] != keys[:-1]) | (vals[1:] != vals[:-1])
    return keys[new][:keep], vals[new][:keep]


def _sampler(thr: int) -> tuple:
    """A run's sample buffer: keys, values, count, the acceptance threshold (hash
    ``thr``, below 2**64, and value) and the scratch of :func:`_offer`."""
    fb = np.empty(1)
    return (np.empty(2 * KEEP, dtype=np.uint64), np.empty(2 * KEEP),
            np.zeros(1, dtype=np.int64), np.array([thr], dtype=np.uint64),
            np.array([np.inf]), fb, fb.view(np.uint64))


def _selection_pass(blocks: RowBlocks, refine: Callable, gather: Callable,
                    stats: Callable | None, n_stats: int, head: Callable, n_cands: int,
                    n_fixed: int, *, a: float, b: float, piv: np.ndarray, stride: int, thr: int,
                    gathering: bool, limit: int) -> tuple[tuple, _Pass]:
    """One pass of the selection over this partition's rows, the shared body of the
    Euclidean and KL stages: on every run of lanes, ``stats(lo, hi, lane, out)`` (the
    first pass's checks), then either ``gather`` (the candidates and the fixed rows'
    sums) or ``refine`` (the pivots' values, the counts between pivots and the sample),
    each called as ``kernel(*head(lo, hi), lo, hi, lane, a, b, …)``."""
    lanes, lane, P = blocks.n_lanes, blocks.lane, piv.size
    st = np.zeros((lanes, n_stats)) if stats is not None else None
    values = np.zeros((lanes, P))
    fixed = np.zeros((lanes, n_fixed)) if gathering else None
    # the pivots padded with +inf for the unrolled search, and each bucket's reference
    # pivot (the one below it; bucket 0's is never used)
    padded = np.full(MAX_PIVOTS, np.inf)
    padded[:P] = piv
    ref = np.zeros(MAX_PIVOTS + 1)
    ref[1:P + 1] = piv

    def run(q0: int, q1: int, lo: int, hi: int):
        if stats is not None:
            stats(lo, hi, lane, st[q0:q1])
        if gathering:
            size = min(hi - lo, limit) + 1  # the kernels write one past the last
            bufs = tuple(np.empty(size) for _ in range(n_cands))
            k = gather(*head(lo, hi), lo, hi, lane, a, b, fixed[q0:q1], *bufs)
            return None, None, tuple(x[:k] for x in bufs)
        counts = np.zeros(MAX_PIVOTS + 1, dtype=np.int64)
        keys, vals, n, tk, tv, fb, ub = _sampler(thr)
        refine(*head(lo, hi), lo, hi, lane, a, b, P, padded, ref, counts, values[q0:q1],
               stride, keys, vals, n, tk, tv, KEEP, fb, ub)
        return counts[:P + 1], _bottom(keys[:n[0]], vals[:n[0]], KEEP), None

    parts = _runs(blocks, run)
    if gathering:
        counts = np.zeros(1, dtype=np.int64)
        keys, sample = np.empty(0, dtype=np.uint64), np.empty(0)
        cands = tuple(np.concatenate([p[2][k] for p in parts]) for k in range(n_cands))
    else:
        counts = np.sum([p[0] for p in parts], axis=0)
        # (one run's bottom is already its own: sorted, distinct, at most KEEP)
        keys, sample = parts[0][1] if len(parts) == 1 else _bottom(
            np.concatenate([p[1][0] for p in parts]),
            np.concatenate([p[1][1] for p in parts]), KEEP)
        cands = ()
    return (), _Pass(st, values, fixed, counts, keys, sample, cands)


def _combine(stats: list[_Pass]) -> _Pass:
    """The partitions' passes as one: lanes concatenated in order, counts added, the
    samples' bottom ``KEEP``, candidates concatenated in row order."""
    if len(stats) == 1:
        return stats[0]

    def cat(name):
        parts = [getattr(s, name) for s in stats]
        return None if parts[0] is None else np.concatenate(parts)

    keys, sample = _bottom(cat("keys"), cat("sample"), KEEP)
    cands = tuple(np.concatenate(x) for x in zip(*(s.cands for s in stats), strict=True))
    return _Pass(cat("stats"), cat("values"), cat("fixed"),
                 np.sum([s.counts for s in stats], axis=0), keys, sample, cands)


def _eu_pass(blocks: RowBlocks, z, caps, *, cap: float, first: bool,
             **kw) -> tuple[tuple, _Pass]:
    """A selection pass of the Euclidean projection (breakpoints ``z_i``, ``z_i −
    cap_i``; candidates ``(z_i, cap_i)``)."""
    caps = _NO_CAPS if caps is None else caps
    stats = ((lambda lo, hi, lane, out: _eu_stats(z, caps, lo, hi, lane, out))
             if first else None)
    return _selection_pass(blocks, _eu_refine, _eu_gather, stats, 9,
                           lambda lo, hi: (z, caps, cap), 2, 3, **kw)


def _eu_residual_stage(blocks: RowBlocks, z, caps, *, cap: float,
                       tau: float) -> tuple[tuple, np.ndarray]:
    caps = _NO_CAPS if caps is None else caps
    lane, parts = blocks.lane, np.zeros((blocks.n_lanes, 3))
    blocks.lane_map(lambda q0, q1, lo, hi: _eu_residual(z, caps, cap, tau, lo, hi, lane,
                                                        parts[q0:q1]))
    return (), parts


@outputs_only(1)
def _eu_weights_stage(blocks: RowBlocks, z, caps, *, cap: float,
                      tau: float) -> tuple[tuple, None]:
    caps = _NO_CAPS if caps is None else caps
    w = np.empty(blocks.n)
    blocks.lane_map(lambda q0, q1, lo, hi: _eu_weights(z, caps, cap, tau, lo, hi, w))
    return (w,), None


def _log_ratio(lz, caps, cap: float, lo: int, hi: int) -> tuple[np.ndarray, Any]:
    """``(r, log cap)`` of the rows ``lo:hi``, ``r = log cap − log z`` (the KL
    breakpoints): every stage computes them with this one expression, so every stage
    sees the same numbers."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if caps is None:
            log_cap = np.log(np.float64(cap))
        else:
            log_cap = np.log(caps[lo:hi])
        return log_cap - lz[lo:hi], log_cap


def _kl_pass(blocks: RowBlocks, lz, caps, *, cap: float, first: bool,
             **kw) -> tuple[tuple, _Pass]:
    """A selection pass of the KL projection (breakpoints ``r_i = log cap_i − log z_i``;
    candidates ``(r_i, log z_i, cap_i)``)."""
    arr = _NO_CAPS if caps is None else caps
    stats = ((lambda lo, hi, lane, out: _kl_stats(lz, arr, lo, hi, lane, out))
             if first else None)
    return _selection_pass(
        blocks, _kl_refine, _kl_gather, stats, 13,
        lambda lo, hi: (lz, _log_ratio(lz, caps, cap, lo, hi)[0], arr, cap), 3, 4, **kw)


def _kl_weights(blocks: RowBlocks, lz, caps, *, cap: float, left: float,
                log_c_rel: float, top: float) -> tuple[tuple, np.ndarray]:
    """``w = min(cap, exp(log_c_rel + (log z − top)))`` (exactly ``cap`` on the capped
    set ``r ≤ left`` and where the exponent reaches ``log cap``; 0 where
    ``log z = −inf`` or ``cap = 0``), and per lane
    ``Σ w`` (compensated: sum, correction) and ``Σ w`` over the free rows (``r > left``).
    """
    w, lane = np.empty(blocks.n), blocks.lane
    parts = np.zeros((blocks.n_lanes, 3))

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        r, log_cap = _log_ratio(lz, caps, cap, lo, hi)
        c = cap if caps is None else caps[lo:hi]
        t = log_c_rel + (lz[lo:hi] - top)
        with np.errstate(over="ignore", invalid="ignore"):
            # the capped set C = {r ≤ left} at its caps exactly, whatever the rounding
            # of t; the others min(cap, exp t), without overflow where the cap binds
            wr = np.where(r <= left, c, np.where(t < log_cap, np.minimum(c, np.exp(t)), c))
        w[lo:hi] = wr
        _compensated_sums(wr, lo, hi, lane, parts[q0:q1, :2])
        column_kernels.lane_sums(np.where(r > left, wr, 0.0), 0, hi - lo, lane,
                                 parts[q0:q1, 2])

    blocks.lane_map(run)
    return (w,), parts


@outputs_only(1)
def _copy(blocks: RowBlocks, a) -> tuple[tuple, None]:
    return (np.array(a, dtype=np.float64),), None


@outputs_only(1)
def _support_caps(blocks: RowBlocks, lz, caps, *, cap: float) -> tuple[tuple, None]:
    """``w = cap`` where ``log z > −inf``, else 0 (the tight KL projection)."""
    c = cap if caps is None else caps
    return (np.where(lz > -np.inf, c, 0.0),), None


def _kl_top(blocks: RowBlocks, lz) -> tuple[tuple, np.ndarray]:
    lane, out = blocks.lane, np.zeros((blocks.n_lanes, 13))
    blocks.lane_map(lambda q0, q1, lo, hi: _kl_stats(lz, _NO_CAPS, lo, hi, lane,
                                                     out[q0:q1]))
    return (), out


def _kl_exps(blocks: RowBlocks, lz, *, top: float) -> tuple[tuple, np.ndarray]:
    """``e = exp(log z − top)`` and its lanes' sums (pass 2 of the softmax)."""
    e, lane = np.empty(blocks.n), blocks.lane
    parts = np.zeros((blocks.n_lanes, 2))

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        np.exp(np.subtract(lz[lo:hi], top), out=e[lo:hi])
        _compensated_sums(e[lo:hi], lo, hi, lane, parts[q0:q1])

    blocks.lane_map(run)
    return (e,), parts


@outputs_only(1)
def _divide(blocks: RowBlocks, e, *, total: float) -> tuple[tuple, None]:
    """``e / total`` (in place in memory: ``e`` is this projection's own array)."""
    out = e if blocks.in_place else np.empty(blocks.n)
    blocks.lane_map(lambda q0, q1, lo, hi: np.divide(e[lo:hi], total, out=out[lo:hi]))
    return (out,), None


# ---------------------------------------------------------------------------------------
# the client's side: checks, the selection loop, the resolution on the candidates
# ---------------------------------------------------------------------------------------


def _rows(blocks: RowBlocks, a, name: str):
    """Per-row input: a float64 array of ``blocks.n`` rows in memory, a
    :class:`Partitioned` on a cluster, or the blocks' own rows held elsewhere (a GPU's
    device arrays: ``RowBlocks.rows_elsewhere``)."""
    if blocks.n == 0:
        raise ValueError(f"{name} is empty; it needs at least one entry")
    if isinstance(a, Partitioned) or blocks.rows_elsewhere:
        if tuple(a.shape) != (blocks.n,):
            raise ValueError(f"{name} has {a.shape[0]} rows; the blocks have {blocks.n}")
        return a
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.shape != (blocks.n,):
        raise ValueError(f"{name} must have shape ({blocks.n},); got {arr.shape}")
    return arr


def _caps(blocks: RowBlocks, cap) -> tuple[Any, float]:
    """``(per-row caps or None, scalar cap)``: None is no cap (``inf``)."""
    if cap is None:
        return None, math.inf
    if blocks.rows_elsewhere and getattr(cap, "ndim", 0) == 1:
        if tuple(cap.shape) != (blocks.n,):
            raise ValueError(f"cap must be a scalar or have shape ({blocks.n},); got shape "
                             f"{cap.shape}")
        return cap, math.inf
    if isinstance(cap, Partitioned) or (isinstance(cap, np.ndarray) and cap.ndim == 1):
        if cap.shape != (blocks.n,):
            raise ValueError(f"cap must be a scalar or have shape ({blocks.n},); got shape "
                             f"{cap.shape}")
        return (cap if isinstance(cap, Partitioned)
                else np.ascontiguousarray(cap, dtype=np.float64)), math.inf
    if not isinstance(cap, numbers.Real) and not (isinstance(cap, np.ndarray)
                                                  and cap.ndim == 0):
        raise TypeError(f"cap must be None, a number or per-row caps; got "
                        f"{type(cap).__name__}")
    value = float(cap)
    _check_cap_values(math.isnan(value), value)
    return None, value


def _check_cap_values(nan: bool, low: float) -> None:
    if nan:
        raise ValueError("cap contains NaN; caps must be non-negative numbers or np.inf")
    if low < 0:
        raise ValueError("cap contains negative values; caps must be >= 0 (np.inf = no cap)")


def _total(hi: np.ndarray, comp: np.ndarray, n_inf: np.ndarray) -> float:
    """The caps' sum from the lanes' compensated partials: ``inf`` if any cap is; else
    the exactly rounded sum of the partials (``math.fsum`` depends on no order)."""
    if n_inf.sum() > 0:
        return math.inf
    return math.fsum(np.concatenate([hi, comp]).tolist())


def _fsum(parts: list) -> float:
    """The total of the partitions' compensated lane sums ``(sum, correction)``: their
    exactly rounded sum (``math.fsum``), the same bits in any order."""
    return math.fsum(np.concatenate([np.asarray(p).ravel() for p in parts]).tolist())


def _check_feasible(total: float) -> None:
    if total < 1.0 - _TIGHT:
        raise ValueError(
            f"cap is infeasible: the caps sum to {total!r} < 1, so no distribution "
            "satisfies 0 <= w <= cap"
        )


def _n_pivots(blocks: RowBlocks) -> int:
    return min(MAX_PIVOTS, max(MIN_PIVOTS, LANE_BUDGET // blocks.n_lanes))


def _sampling(m: int, lane: int, boost: float = 1.0) -> tuple[int, int]:
    """``(stride, threshold)`` that sample about ``SAMPLE · boost`` of ``m``
    breakpoints: every ``stride``-th row of a lane, thinned by the hash when even a
    lane's stride keeps too many."""
    want = SAMPLE * boost
    stride = int(max(1, min(lane, m // want)))
    rate = want * stride / max(m, 1)
    thr = _ALL if rate >= 1.0 else int(rate * 2.0**64)
    return stride, thr


def _pivots(sample: np.ndarray, a: float, b: float, k: int) -> np.ndarray:
    """Up to ``k`` pivots strictly inside ``(a, b)``: the sample's quantiles there."""
    v = np.sort(sample[(sample > a) & (sample < b)])
    if v.size == 0:
        return _NO_PIVOTS
    k = min(k, v.size)
    idx = ((2 * np.arange(k) + 1) * v.size) // (2 * k)
    return np.unique(v[idx])


def _first_pass(blocks: RowBlocks, stage: Callable, rows, caps, cap: float,
                n_bp: int, piv: np.ndarray = _NO_PIVOTS) -> tuple[Callable[..., _Pass], _Pass]:
    """The selection's first pass over the ``n_bp`` breakpoints of ``rows`` (the checks,
    and the sample, or every breakpoint when few; given pivots ``piv``, the values and
    counts at them instead of the sample), and ``run_pass(**kw)`` for the next passes of
    the same stage."""
    small = n_bp <= GATHER
    stride, thr = _sampling(n_bp, blocks.lane)

    def run_pass(first: bool = False, **kw) -> _Pass:
        return _run(blocks, stage, rows, caps, cap=cap, first=first, **kw)

    first = run_pass(first=True, a=-math.inf, b=math.inf,
                     piv=_NO_PIVOTS if small else piv,
                     stride=0 if small or piv.size else stride, thr=thr, gathering=small,
                     limit=blocks.n)
    return run_pass, first


def _bracket(piv: np.ndarray, res: _Pass, left_of: Callable[[np.ndarray], np.ndarray],
             a: float, b: float) -> tuple[float, float, int]:
    """The bracket between the last of the pivots ``piv`` left of the answer and the
    next one (within ``(a, b)``), and the breakpoints strictly inside it, from a pass
    made with those pivots."""
    left = np.flatnonzero(left_of(res.values))
    j = int(left[-1]) if left.size else -1
    a = float(piv[j]) if j >= 0 else a
    b = float(piv[j + 1]) if j + 1 < piv.size else b
    return a, b, int(res.counts[j + 1])


def _select(blocks: RowBlocks, run_pass: Callable[..., _Pass], first: _Pass, m: int,
            left_of: Callable[[np.ndarray], np.ndarray],
            piv: np.ndarray = _NO_PIVOTS) -> tuple:
    """The selection loop: refine the bracket ``(a, b)`` with pivots until at most
    ``GATHER`` breakpoints remain inside, then gather them.  ``left_of(values)`` says
    from the lanes' values at the pivots (added in lane order) which pivots lie left of
    the answer; ``m`` is the number of breakpoints; ``piv``, the pivots the first pass
    was made with (if any: the bracket starts from them).
    Returns ``(a, b, gathered pass)``."""
    a, b = -math.inf, math.inf
    if piv.size and first.fixed is None:
        a, b, m = _bracket(piv, first, left_of, a, b)
    sample = first.sample
    k, boost = _n_pivots(blocks), 1.0
    while m > GATHER:
        piv = _pivots(sample, a, b, k)
        # sample this pass too unless its bracket will (very likely) be gathered next
        sampling = piv.size == 0 or m > GATHER * piv.size // 4
        stride, thr = _sampling(m, blocks.lane, boost)
        res = run_pass(a=a, b=b, piv=piv, stride=stride if sampling else 0, thr=thr,
                       gathering=False, limit=0)
        if piv.size:
            a, b, m = _bracket(piv, res, left_of, a, b)
        sample = res.sample if sampling else sample
        inside = (sample > a) & (sample < b)
        # no sampled value inside: sample more densely next time (a pass of rate 1
        # keeps the bracket's KEEP smallest hashes, never nothing)
        boost = 1.0 if inside.any() else boost * 64.0
    if first.fixed is not None:
        return a, b, first
    return a, b, run_pass(a=a, b=b, piv=_NO_PIVOTS, stride=0, thr=_ALL, gathering=True,
                          limit=max(m, 1))


def _run(blocks: RowBlocks, stage: Callable, *rows, **consts) -> _Pass:
    return _combine(blocks.map(stage, *rows, **consts)[1])


def _binary_search(t: np.ndarray, is_left: Callable[[float], bool]) -> int:
    """The last index ``k`` of the increasing ``t`` with ``is_left(t[k])`` (``is_left``
    true on a prefix), or -1."""
    lo, hi = -1, t.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if is_left(float(t[mid])):
            lo = mid
        else:
            hi = mid
    return lo


def _eu_resolve(a: float, b: float, res: _Pass) -> float:
    """``τ`` from the gathered rows: the piece ``[left, right]`` between consecutive
    breakpoints where ``g`` crosses 1, then the closed form
    ``τ = right + (Σ_free (z_i − right) + Σ_capped cap_i − 1) / |free|`` on it."""
    zc, cc = res.cands
    fixed = res.fixed
    s_ff = float(ordered_sum(fixed[:, 0]))
    n_ff = float(ordered_sum(fixed[:, 1]))
    s_cap = float(ordered_sum(fixed[:, 2]))
    lc = zc - cc  # -inf where uncapped
    t = np.unique(np.concatenate([zc[(zc > a) & (zc < b)], lc[(lc > a) & (lc < b)]]))

    def fixed_part(x: float) -> float:
        # the fixed rows' Σ clip(z − x, 0, cap): free ones (z ≥ b ≥ x), then capped ones
        return (s_ff + (b - x) * n_ff if n_ff else 0.0) + s_cap

    def g(x: float) -> float:
        terms = np.clip(zc - x, 0.0, cc)
        return float(ordered_sum(np.concatenate(([fixed_part(x)], terms))))

    k = _binary_search(t, lambda x: g(x) >= 1.0)
    left = float(t[k]) if k >= 0 else a
    right = float(t[k + 1]) if k + 1 < t.size else b
    zero = zc <= left
    capped = ~zero & (lc >= right)
    free = ~zero & ~capped
    n_free = n_ff + float(np.count_nonzero(free))
    if n_free == 0 or not math.isfinite(right):
        return left  # g flat on the piece (only through rounding) or every cap binds
    terms = np.where(free, zc - right, np.where(capped, cc, 0.0))
    num = float(ordered_sum(np.concatenate(([fixed_part(right)], terms))))
    tau = right + (num - 1.0) / n_free
    return min(max(tau, left), right)


@stored_as("Near")
class Near(NamedTuple):
    """Where an earlier projection's threshold was: ``tau`` and ``width``, the width of
    the bracket its breakpoints were gathered from (:func:`euclidean_simplex_rows_near`)."""

    tau: float
    width: float


#: The first pass's pivots near an earlier threshold ``τ``, in units of its bracket's
#: width: ``τ``, and ``τ ± 2^k`` widths for k = −4 … 11.
_NEAR = np.concatenate([[0.0], 2.0 ** np.arange(-4, 12), -(2.0 ** np.arange(-4, 12))])


def euclidean_simplex_rows(blocks: RowBlocks, z: Rows, cap: float | Rows | None = None) -> Rows:
    """Euclidean projection of the rows ``z`` onto the (capped) simplex.

    ``argmin ½‖w − z‖²`` over ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``: MABoost's Bregman
    projection (Naghibi & Pfister 2014, Def. 1, eq. (2)) for ``R = ½‖w‖²`` onto the
    simplex (Algorithm 1, step (d)), smooth boosting's ``S_k`` (§3.1) or the
    dataset-combining ``S_c`` (§3.2, eq. (26)).  ``w = clip(z − τ, 0, cap)``, with ``τ``
    found exactly by the map-reduce selection of this module's docstring over the
    breakpoints ``z_i`` and ``z_i − cap_i``, then the closed form on the identified
    piece and one Newton step.  Passes over the rows: 3 when the breakpoints fit in
    ``GATHER``, 5 with one round of refinement (up to about 2 million breakpoints), one
    more a round beyond (see the module's docstring).

    Parameters
    ----------
    blocks : RowBlocks
        The rows' blocks (a
        :class:`~oracleboost.rows.partition_blocks.PartitionBlocks` on a backend's
        partitions).
    z : ndarray of shape (n,) or Partitioned
        The point to project; finite.
    cap : None, float, or ndarray of shape (n,) or Partitioned
        None: the simplex.  Otherwise the caps, ``≥ 0``, ``np.inf`` for an uncapped row;
        ``Σ cap ≥ 1`` (if ``Σ cap = 1`` within 8 ulps the set is the point ``w = cap``,
        which is returned).

    Returns
    -------
    w : ndarray of shape (n,) or Partitioned
        New rows, where ``z`` is: ``0 ≤ w ≤ cap`` (exact zeros off the support),
        ``Σ w = 1``; the same bits for any ``n_jobs`` and number of workers.

    Raises
    ------
    ValueError
        If ``z`` has NaN or inf, a cap is NaN or negative, or ``Σ cap < 1``.
    """
    return euclidean_simplex_rows_near(blocks, z, cap)[0]


def euclidean_simplex_rows_near(blocks: RowBlocks, z: Rows, cap: float | Rows | None = None,
                                near: Near | None = None) -> tuple[Rows, Near | None]:
    """:func:`euclidean_simplex_rows`, and where its threshold was (for the next
    projection), its first pass made with pivots ``near`` an earlier one's threshold
    (``τ`` and ``τ ± 2^k`` times its bracket's width, k = −4 … 11) in place of the
    sample: MABoost's next point moves by at most η_t a row, so its threshold is
    usually within a few widths, and the pass after brackets it to gather (4 passes
    instead of 5).  When it is not, the selection samples and goes on as without
    ``near``.  The answer is exact either way; the pivots decide which rows are summed
    as the bracket's fixed part, so its bits depend on ``near`` (a function of the
    earlier projection alone: the same for any ``n_jobs`` and number of workers)."""
    z = _rows(blocks, z, "z")
    caps, cap = _caps(blocks, cap)
    capped = caps is not None or math.isfinite(cap)
    n_bp = blocks.n * (2 if capped else 1)
    piv = _NO_PIVOTS
    if near is not None and math.isfinite(near.tau) and near.width > 0.0 \
            and math.isfinite(near.width):
        with np.errstate(over="ignore"):
            piv = np.unique(near.tau + near.width * _NEAR)
        piv = piv[np.isfinite(piv)]
    run_pass, first = _first_pass(blocks, _eu_pass, z, caps, cap, n_bp, piv)
    st = first.stats
    if st[:, 2].any():
        raise ValueError("z contains NaN; every entry must be finite")
    if st[:, 0].min() == -math.inf or st[:, 1].max() == math.inf:
        raise ValueError("z contains inf; every entry must be finite")
    if caps is not None:
        _check_cap_values(bool(st[:, 4].any()), float(st[:, 3].min()))
    if capped:
        total = (_total(st[:, 5], st[:, 6], st[:, 7]) if caps is not None
                 else float(blocks.n) * cap)  # n copies of cap: one rounding, as fsum
        _check_feasible(total)
        if total <= 1.0 + _TIGHT:  # the set is {cap}
            w = blocks.map(_copy, caps)[0][0] if caps is not None else blocks.full(cap)
            return w, None

    def left_of(values: np.ndarray) -> np.ndarray:
        return ordered_sum(values) >= 1.0  # g(p) ≥ 1: τ ≥ p

    if caps is not None:
        n_bp = int(ordered_sum(st[:, 8]))
    a, b, res = _select(blocks, run_pass, first, n_bp, left_of,
                        piv if first.fixed is None else _NO_PIVOTS)
    tau = _eu_resolve(a, b, res)
    # Newton step on the identified piece (exactly a no-op in exact arithmetic): the
    # residual 1 − Σ w (summed exactly) over the free rows
    p = np.concatenate(blocks.map(_eu_residual_stage, z, caps, cap=cap, tau=tau)[1])
    r, n_free = 1.0 - _fsum([p[:, :2]]), float(ordered_sum(p[:, 2]))
    if not abs(r) <= 0.5:
        # z − τ rounds to whole ulps of z: entries so large that weights summing to 1
        # are below float64's resolution there (they came out summing to 1 − r)
        top = max(abs(float(st[:, 0].min())), abs(float(st[:, 1].max())))
        raise FloatingPointError(
            f"the Euclidean projection onto the simplex cannot be made in float64 at this "
            f"scale: z reaches magnitude {top:.3g}, where weights summing to 1 are below "
            f"the entries' resolution (they summed to {1.0 - r:.3g}); in MABoost's "
            "Euclidean map this is a learning_rate too large for the data")
    if r != 0.0 and n_free:
        tau -= r / n_free
    w = blocks.map(_eu_weights_stage, z, caps, cap=cap, tau=tau)[0][0]
    return w, Near(tau, b - a) if first.fixed is None else None


def _kl_resolve(a: float, b: float, res: _Pass) -> tuple[float, float, float]:
    """``(left, log c + top, top)`` from the gathered rows: the piece ``[left, right]``
    where ``h`` crosses 1 fixes the capped set ``C = {r_i ≤ left}``; on it exactly
    ``log c = log(1 − Σ_C cap_i) − log Σ_{i∉C} z_i``, clamped to the piece, with ``top``
    the largest free ``log z`` (the free weights are ``exp(log c + top + (log z − top))``).
    """
    rc, lc, cc = res.cands
    fixed = res.fixed
    s_cap = _fsum([fixed[:, :2]])
    tops = fixed[:, 2]
    m_f = float(tops.max())
    with np.errstate(invalid="ignore"):
        s_f = (float(ordered_sum(fixed[:, 3] * np.exp(tops - m_f)))
               if m_f > -math.inf else 0.0)
    t = np.unique(rc)

    def h(x: float) -> float:
        with np.errstate(over="ignore"):
            terms = np.where(rc <= x, cc, np.exp(x + lc))
            free = float(np.exp(x + m_f)) * s_f if s_f > 0.0 else 0.0
        return float(ordered_sum(np.concatenate(([s_cap + free], terms))))

    k = _binary_search(t, lambda x: h(x) <= 1.0)
    left = float(t[k]) if k >= 0 else a
    right = float(t[k + 1]) if k + 1 < t.size else b
    capped = rc <= left
    # exactly: 1 − Σ_C cap cancels when the caps take most of the mass
    mass = 1.0 - _fsum([fixed[:, :2], cc[capped]])
    free_l = lc[~capped]
    top = max(m_f, float(free_l.max(initial=-np.inf)))
    if top == -math.inf:  # every row capped (Σ cap = 1 up to rounding): log c = left
        return left, left, 0.0
    if mass > 0.0:
        first = s_f * math.exp(m_f - top) if m_f > -math.inf else 0.0
        s = float(ordered_sum(np.concatenate(([first], np.exp(free_l - top)))))
        log_c_rel = math.log(mass) - math.log(s)
    else:  # the caps fill the simplex up to rounding: the piece's left end
        log_c_rel = left + top
    # on the piece, as τ is (only rounding can take the closed form outside it)
    if log_c_rel - top < left:
        log_c_rel = left + top
    elif log_c_rel - top > right:
        log_c_rel = right + top
    return left, log_c_rel, top


def _kl_softmax(blocks: RowBlocks, lz, verb: str):
    """``w = exp(log z − max) / Σ exp(log z − max)``: 3 passes."""
    return kl_softmax_rows(blocks, lz, verb)[0]


def kl_softmax_rows(blocks: RowBlocks, log_z: Rows, verb: str = "normalise"
                    ) -> tuple[Rows, float]:
    """The uncapped :func:`kl_simplex_rows` (the softmax ``w = exp(log z − max) / Σ
    exp(log z − max)``, 3 passes) and ``log Σ z = max + log Σ exp(log z − max)``, the
    log-normaliser, from which MABoost's entropy round predicts the next one
    (:func:`.mirror_passes.entropy_step`)."""
    parts = np.concatenate(blocks.map(_kl_top, log_z)[1])
    _check_log(parts)
    top = float(parts[:, 0].max())
    if top == -math.inf:
        raise ValueError(f"log_z is -inf everywhere (z = 0): there is nothing to {verb}")
    (e,), sums = blocks.map(_kl_exps, log_z, top=top)
    total = _fsum(sums)
    return blocks.map(_divide, e, total=total)[0][0], top + math.log(total)


def _check_log(st: np.ndarray) -> None:
    if st[:, 1].any():
        raise ValueError("log_z contains NaN; log-weights must be finite or -inf")
    if st[:, 2].any():
        raise ValueError("log_z contains +inf; log-weights must be finite or -inf")


def kl_simplex_rows(blocks: RowBlocks, log_z: Rows,
                    cap: float | Rows | None = None) -> Rows:
    """KL projection of the rows ``z`` (given as ``log z``) onto the (capped) simplex.

    ``argmin Σ w_i log(w_i/z_i) − w_i + z_i`` over ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``:
    MABoost's Bregman projection (Naghibi & Pfister 2014, Def. 1, eq. (2)) for the
    negative entropy, onto the simplex (Algorithm 1, entropy row: the normalisation
    ``w = z / Σ z``), smooth boosting's ``S_k`` (§3.1) or the dataset-combining ``S_c``
    (§3.2, eq. (26)).

    Uncapped, the softmax of ``log z`` with its maximum subtracted (3 passes).  Capped,
    ``w_i = min(cap_i, c·z_i)``: the capped set ``{r_i ≤ log c}`` (``r_i = log cap_i −
    log z_i``) is found by the map-reduce selection of this module's docstring (with
    ``h(λ) = Σ min(cap_i, exp(λ + log z_i))`` evaluated in log space, no term above its
    cap), then exactly ``log c = log(1 − Σ_C cap_i) − log Σ_{i∉C} z_i`` and one Newton
    step on the piece; passes as for :func:`euclidean_simplex_rows`.

    Parameters
    ----------
    blocks : RowBlocks
    log_z : ndarray of shape (n,) or Partitioned
        ``log z``: finite or ``-inf`` (``z_i = 0``, which stays ``w_i = 0``), at least one
        finite.
    cap : None, float, or ndarray of shape (n,) or Partitioned
        As for :func:`euclidean_simplex_rows`; the caps of the rows with ``z_i > 0``
        must sum to at least 1 (if they sum to 1, ``w = cap`` there and 0 elsewhere).

    Returns
    -------
    w : ndarray of shape (n,) or Partitioned
        New rows on the (capped) simplex; the same bits for any ``n_jobs`` and number of
        workers.

    Raises
    ------
    ValueError
        If ``log_z`` has NaN or ``+inf`` or is all ``-inf``, a cap is NaN or negative,
        the caps sum to less than 1, or the caps of the rows with ``z_i > 0`` do.
    """
    lz = _rows(blocks, log_z, "log_z")
    cap_given = cap
    caps, cap = _caps(blocks, cap)
    if caps is None and cap == math.inf:
        return _kl_softmax(blocks, lz, "normalise" if cap_given is None else "project")
    n_bp = blocks.n
    run_pass, first = _first_pass(blocks, _kl_pass, lz, caps, cap, n_bp)
    st = first.stats
    _check_log(st)
    if caps is not None:
        _check_cap_values(bool(st[:, 5].any()), float(st[:, 4].min()))
    n_pos = float(ordered_sum(st[:, 3]))
    if caps is not None:
        total, total_pos = (_total(st[:, 6], st[:, 7], st[:, 8]),
                            _total(st[:, 9], st[:, 10], st[:, 11]))
    else:  # n copies of the cap: one rounding, as an exactly rounded sum
        total, total_pos = float(blocks.n) * cap, n_pos * cap
    _check_feasible(total)
    if n_pos == 0:
        raise ValueError("log_z is -inf everywhere (z = 0): there is nothing to project")
    if total_pos < 1.0 - _TIGHT:
        raise ValueError(
            "cap is infeasible on the support of z: a KL projection keeps w_i = 0 where "
            f"log_z = -inf, and the caps of the other coordinates sum to {total_pos!r} < 1"
        )
    if total_pos <= 1.0 + _TIGHT:
        return blocks.map(_support_caps, lz, caps, cap=cap)[0][0]

    def left_of(values: np.ndarray) -> np.ndarray:
        return ordered_sum(values) <= 1.0  # h(p) ≤ 1: log c ≥ p

    n_bp = int(ordered_sum(st[:, 12])) if caps is not None else int(n_pos)
    a, b, res = _select(blocks, run_pass, first, n_bp, left_of)
    left, log_c_rel, top = _kl_resolve(a, b, res)
    (w,), parts = blocks.map(_kl_weights, lz, caps, cap=cap, left=left,
                             log_c_rel=log_c_rel, top=top)
    p = np.concatenate(parts)
    # Newton step on the piece (a no-op in exact arithmetic): the free mass scales by
    # 1 + r / s_free
    r, s_free = 1.0 - _fsum([p[:, :2]]), float(ordered_sum(p[:, 2]))
    if r != 0.0 and abs(r) < 0.5 * s_free:
        (w,), _ = blocks.map(_kl_weights, lz, caps, cap=cap, left=left,
                             log_c_rel=log_c_rel + math.log1p(r / s_free), top=top)
    return w
