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
    """``max_i |a_i|``."""
    top = 0.0
    for i in range(a.shape[0]):
        top = max(top, abs(a[i]))
    return top


@nb.jit(**_JIT)
def _signed_sums(a, y, w, norm):  # pragma: no cover - compiled
    """With ``v = y * a / norm``: ``(Σ w v, Σ w (1 + v), Σ w (1 − v), min v, max v,
    max |a|)``.

    The two middle sums are the AdaBoost step's ``Σ w (1 ± u)``, summed as non-negative
    terms so that ``1 − γ`` stays accurate when the edge γ is close to 1.  The peak comes
    along so that a caller who guessed ``norm`` (1 for a bounded class) can check the
    guess without a pass of its own.
    """
    corr, plus, minus = 0.0, 0.0, 0.0
    lo, hi, top = np.inf, -np.inf, 0.0
    for i in range(a.shape[0]):
        v = y[i] * a[i] / norm
        corr += w[i] * v
        plus += w[i] * (1.0 + v)
        minus += w[i] * (1.0 - v)
        lo = min(lo, v)
        hi = max(hi, v)
        top = max(top, abs(a[i]))
    return corr, plus, minus, lo, hi, top


@nb.jit(**_JIT)
def _step_margins(m, a, y, c, s, out):  # pragma: no cover - compiled
    """``out = m + y * (c * a)``: the margins after the ensemble's term ``c · h`` (the
    same product the ensemble's decision function adds, so the training margins stay
    ``y`` times it bit for bit), and from the new margins ``(min out, Σ s [wrong])``,
    where a row is wrong when the sign of ``f = y·out`` (``f = 0`` predicts the negative
    class) differs from ``y``.  ``s`` of length 0 means unit weights."""
    lo = np.inf
    wrong = 0.0
    weighted = s.shape[0] > 0
    for i in range(m.shape[0]):
        v = m[i] + y[i] * (c * a[i])
        out[i] = v
        lo = min(lo, v)
        # Branch-free: a wrong row's sign is random, and a mispredicted branch a row
        # cost more than the arithmetic (8.6 ms against 2.3 ms at 1,000,000 rows).
        is_wrong = (v < 0.0) | ((v == 0.0) & (y[i] > 0.0))
        wrong += s[i] * is_wrong if weighted else 1.0 * is_wrong
    return lo, wrong


@nb.jit(**_JIT)
def _weighted_inner(a, b, s):  # pragma: no cover - compiled
    """``Σ_i s_i Σ_k a[i, k] b[i, k]`` for arrays of shape (n, K); ``s`` of length 0
    means unit weights.  One pass, no temporary (``np.sum(s * a * b)`` makes two)."""
    n, K = a.shape
    weighted = s.shape[0] > 0
    total = 0.0
    for i in range(n):
        row = 0.0
        for k in range(K):
            row += a[i, k] * b[i, k]
        total += s[i] * row if weighted else row
    return total


@nb.jit(**_JIT)
def _weighted_residual(t, a, coef, s):  # pragma: no cover - compiled
    """``Σ_i s_i Σ_k (t[i, k] − coef · a[i, k])²``: what a projection leaves of ``t``,
    without building ``t − coef · a``; ``s`` of length 0 means unit weights."""
    n, K = t.shape
    weighted = s.shape[0] > 0
    total = 0.0
    for i in range(n):
        row = 0.0
        for k in range(K):
            r = t[i, k] - coef * a[i, k]
            row += r * r
        total += s[i] * row if weighted else row
    return total


@nb.jit(**_JIT)
def _two_value_masses(a, y, w, norm, sign, lo, hi):  # pragma: no cover - compiled
    """For the column ``u = (y * a / norm) * sign`` with extreme values ``lo`` and
    ``hi``: ``(Σ w [u = lo], Σ w [u = hi], #{u ∉ {lo, hi}})``, branch-free (the value of
    a stump's row is random, and a mispredicted branch a row costs 10 ns)."""
    m_lo, m_hi, other = 0.0, 0.0, 0
    for i in range(a.shape[0]):
        v = y[i] * a[i] / norm * sign
        at_lo = v == lo
        at_hi = v == hi
        m_lo += w[i] * at_lo
        m_hi += w[i] * (at_hi & ~at_lo)
        other += ~(at_lo | at_hi)
    return m_lo, m_hi, other


@nb.jit(**_JIT)
def _normalise(e, z, top, y, total, w, query):  # pragma: no cover - compiled
    """The weights' last pass: ``w = e / total`` (``w`` may be ``e`` itself: in place),
    ``query = w * y`` (the oracle's question) and ``Σ w · (z − top)`` (the entropy's
    inner product; ``e = exp(z − top)``), in one pass instead of three."""
    acc = 0.0
    for i in range(e.shape[0]):
        wi = e[i] / total
        w[i] = wi
        query[i] = wi * y[i]
        acc += wi * (z[i] - top)
    return acc


@nb.jit(**_JIT)
def _sum(x):  # pragma: no cover - compiled
    """``Σ x`` in row order."""
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


@nb.jit(**_JIT)
def lane_sums(x, lo, hi, lane, out):  # pragma: no cover - compiled
    """``out[q] = Σ x`` over lane q of ``lo:hi``, in row order."""
    q = 0
    for start in range(lo, hi, lane):
        out[q] = _sum(x[start:min(start + lane, hi)])
        q += 1


# -- the lane drivers: a single-range kernel above on each lane's slices ---------------------
# (Calling the one-range loop on slices keeps its code generation: a loop nest written
# out measured 30% slower at 1,000,000 rows.)
@nb.jit(**_JIT)
def signed_sums(a, y, w, norm, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_signed_sums` of every lane of ``lo:hi`` into ``out[q, 0:6]``."""
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        r = _signed_sums(a[start:stop], y[start:stop], w[start:stop], norm)
        for k in range(6):
            out[q, k] = r[k]
        q += 1


@nb.jit(**_JIT)
def step_margins(m, a, y, c, s, out, lo, hi, lane, parts):  # pragma: no cover - compiled
    """:func:`_step_margins` on ``lo:hi`` (``out`` filled), each lane's ``(min, wrong)``
    into ``parts[q]``."""
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        sw = s[start:stop] if weighted else s
        low, wrong = _step_margins(m[start:stop], a[start:stop], y[start:stop], c, sw,
                                   out[start:stop])
        parts[q, 0], parts[q, 1] = low, wrong
        q += 1


@nb.jit(**_JIT)
def weighted_inner(a, b, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_weighted_inner` of every lane of ``lo:hi`` into ``out[q]``."""
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        out[q] = _weighted_inner(a[start:stop], b[start:stop],
                                 s[start:stop] if weighted else s)
        q += 1


@nb.jit(**_JIT)
def weighted_residual(t, a, coef, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_weighted_residual` of every lane of ``lo:hi`` into ``out[q]``."""
    weighted = s.shape[0] > 0
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        out[q] = _weighted_residual(t[start:stop], a[start:stop], coef,
                                    s[start:stop] if weighted else s)
        q += 1


@nb.jit(**_JIT)
def two_value_masses(a, y, w, norm, sign, lo_u, hi_u, lo, hi, lane,
                     out):  # pragma: no cover - compiled
    """:func:`_two_value_masses` of every lane of ``lo:hi`` into ``out[q, 0:3]``."""
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        m_lo, m_hi, other = _two_value_masses(a[start:stop], y[start:stop], w[start:stop],
                                              norm, sign, lo_u, hi_u)
        out[q, 0], out[q, 1], out[q, 2] = m_lo, m_hi, other
        q += 1


@nb.jit(**_JIT)
def normalise(e, z, top, y, total, w, query, lo, hi, lane, out):  # pragma: no cover
    """:func:`_normalise` on every lane of ``lo:hi``, each lane's ``Σ w · (z − top)``
    into ``out[q]``."""
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        out[q] = _normalise(e[start:stop], z[start:stop], top, y[start:stop], total,
                            w[start:stop], query[start:stop])
        q += 1
