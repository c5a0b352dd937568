"""Compiled one-pass reductions of a booster's round over the training rows, by lanes.

A round of coordinate descent reads an oracle's column ``a`` against the labels ``y``
and the weights ``w`` several times: its peak, its edge, the AdaBoost step's two sums,
the new margins, their minimum and the training error.  In NumPy each of these is one
or two passes over ``n`` floats and a temporary array; here they are two passes with no
temporary (at 1,000,000 rows NumPy's passes cost more than the stump oracle's round).

Every kernel covers the rows ``lo:hi`` and writes one partial result per *lane* of
``lane`` consecutive rows (``lo`` is a lane boundary; the last lane may be short), each
lane summed in row order.  :mod:`.row_passes` adds the lanes' partials in lane order.
The lanes are fixed by ``n`` alone, and a thread takes whole lanes, so the sums are the
same bits on any number of threads, and one compiled call covers a thread's share (the
Python cost of a call is paid once a thread, not once a lane).  Sums are sequential, in
an order fixed by the code, not by the CPU's vector width, so every machine gets the
same bits.  The transcendental functions of the losses stay in NumPy, whose vectorised
``exp`` is several times faster than a compiled scalar loop.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}

#: The kernels' "unit weights": an empty array where a weight array ``s`` is expected.
NO_WEIGHTS = np.empty(0)


@nb.jit(**_JIT)
def peak(a):  # pragma: no cover - compiled
    """``max_i |a_i|`` (a maximum: the same in any order)."""
    top = 0.0
    for i in range(a.shape[0]):
        top = max(top, abs(a[i]))
    return top


@nb.jit(**_JIT)
def lane_sums(x, lo, hi, lane, out):  # pragma: no cover - compiled
    """``out[q] = Σ x`` over lane q of ``lo:hi``, in row order."""
    q = 0
    for a in range(lo, hi, lane):
        acc = 0.0
        for i in range(a, min(a + lane, hi)):
            acc += x[i]
        out[q] = acc
        q += 1


@nb.jit(**_JIT)
def signed_sums(a, y, w, norm, lo, hi, lane, out):  # pragma: no cover - compiled
    """With ``v = y * a / norm``, per lane: ``(Σ w v, Σ w (1 + v), Σ w (1 − v), min v,
    max v, max |a|)`` into ``out[q, 0:6]``.

    The two middle sums are the AdaBoost step's ``Σ w (1 ± u)``, summed as non-negative
    terms so that ``1 − γ`` stays accurate when the edge γ is close to 1.  The peak comes
    along so that a caller who guessed ``norm`` (1 for a bounded class) can check the
    guess without a pass of its own.
    """
    q = 0
    for start in range(lo, hi, lane):
        corr, plus, minus = 0.0, 0.0, 0.0
        lo_v, hi_v, top = np.inf, -np.inf, 0.0
        for i in range(start, min(start + lane, hi)):
            v = y[i] * a[i] / norm
            corr += w[i] * v
            plus += w[i] * (1.0 + v)
            minus += w[i] * (1.0 - v)
            lo_v = min(lo_v, v)
            hi_v = max(hi_v, v)
            top = max(top, abs(a[i]))
        out[q, 0], out[q, 1], out[q, 2] = corr, plus, minus
        out[q, 3], out[q, 4], out[q, 5] = lo_v, hi_v, top
        q += 1


@nb.jit(**_JIT)
def step_margins(m, a, y, c, s, out, lo, hi, lane, parts):  # pragma: no cover - compiled
    """``out = m + y * (c * a)`` on ``lo:hi``: the margins after the ensemble's term
    ``c · h`` (the same product the ensemble's decision function adds, so the training
    margins stay ``y`` times it bit for bit), and per lane ``(min out, Σ s [wrong])``
    into ``parts[q]``, where a row is wrong when the sign of ``f = y·out`` (``f = 0``
    predicts the negative class) differs from ``y``.  ``s`` of length 0: unit weights."""
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        low = np.inf
        wrong = 0.0
        for i in range(start, min(start + lane, hi)):
            v = m[i] + y[i] * (c * a[i])
            out[i] = v
            low = min(low, v)
            # Branch-free: a wrong row's sign is random, and a mispredicted branch a row
            # cost more than the arithmetic (8.6 ms against 2.3 ms at 1,000,000 rows).
            is_wrong = (v < 0.0) | ((v == 0.0) & (y[i] > 0.0))
            wrong += s[i] * is_wrong if weighted else 1.0 * is_wrong
        parts[q, 0], parts[q, 1] = low, wrong
        q += 1


@nb.jit(**_JIT)
def weighted_inner(a, b, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane, ``Σ_i s_i Σ_k a[i, k] b[i, k]`` for arrays of shape (n, K); ``s`` of
    length 0 means unit weights.  One pass, no temporary."""
    K = a.shape[1]
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        total = 0.0
        for i in range(start, min(start + lane, hi)):
            row = 0.0
            for k in range(K):
                row += a[i, k] * b[i, k]
            total += s[i] * row if weighted else row
        out[q] = total
        q += 1


@nb.jit(**_JIT)
def weighted_residual(t, a, coef, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """Per lane, ``Σ_i s_i Σ_k (t[i, k] − coef · a[i, k])²``: what a projection leaves
    of ``t``, without building ``t − coef · a``; ``s`` of length 0: unit weights."""
    K = t.shape[1]
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        total = 0.0
        for i in range(start, min(start + lane, hi)):
            row = 0.0
            for k in range(K):
                r = t[i, k] - coef * a[i, k]
                row += r * r
            total += s[i] * row if weighted else row
        out[q] = total
        q += 1


@nb.jit(**_JIT)
def two_value_masses(a, y, w, norm, sign, lo_u, hi_u, lo, hi, lane,
                     out):  # pragma: no cover - compiled
    """For the column ``u = (y * a / norm) * sign`` with extreme values ``lo_u`` and
    ``hi_u``, per lane: ``(Σ w [u = lo_u], Σ w [u = hi_u], #{u ∉ {lo_u, hi_u}})``,
    branch-free (the value of a stump's row is random, and a mispredicted branch a row
    costs 10 ns)."""
    q = 0
    for start in range(lo, hi, lane):
        m_lo, m_hi, other = 0.0, 0.0, 0.0
        for i in range(start, min(start + lane, hi)):
            v = y[i] * a[i] / norm * sign
            at_lo = v == lo_u
            at_hi = v == hi_u
            m_lo += w[i] * at_lo
            m_hi += w[i] * (at_hi & ~at_lo)
            other += 1.0 * ~(at_lo | at_hi)
        out[q, 0], out[q, 1], out[q, 2] = m_lo, m_hi, other
        q += 1


@nb.jit(**_JIT)
def normalise(e, shifted, y, total, query, lo, hi, lane, out):  # pragma: no cover - compiled
    """The weights' last pass on ``lo:hi``: ``e /= total`` (in place: the normalised
    weights ``w``), ``query = w * y`` (the oracle's question) and, per lane,
    ``Σ w · shifted`` (the entropy's inner product), in one pass instead of three."""
    q = 0
    for start in range(lo, hi, lane):
        acc = 0.0
        for i in range(start, min(start + lane, hi)):
            wi = e[i] / total
            e[i] = wi
            query[i] = wi * y[i]
            acc += wi * shifted[i]
        out[q] = acc
        q += 1
