"""Compiled one-pass reductions of a booster's round over the training rows, by lanes.

A round of coordinate descent reads an oracle's column ``a`` against the labels ``y``
and the weights ``w`` several times: its peak, its edge, the AdaBoost step's two sums,
the new margins, their minimum and the training error.  In NumPy each of these is one
or two passes over ``n`` floats and a temporary array; here they are two passes with no
temporary (at 1,000,000 rows NumPy's passes cost more than the stump oracle's round).

Every kernel covers the rows ``lo:hi`` and writes one partial result per *lane* of
``lane`` consecutive rows (``lo`` is a lane boundary; the last lane may be short).  A
lane's sum is :func:`interleaved_sum`'s: four running sums, row ``i`` into sum ``i mod 4`` in row
order (one running sum waits for each addition before the next: four run 3 to 4 times
faster), except in :func:`_signed_sums`, which sums in row order.  :mod:`.row_passes`
adds the lanes' partials in lane order.
The lanes are fixed by ``n`` alone, and a thread takes whole lanes, so the sums are the
same bits on any number of threads, and one compiled call covers a thread's share (the
Python cost of a call is paid once a thread, not once a lane).  Sums are sequential, in
an order fixed by the code, not by the CPU's vector width, so every machine gets the
same bits.  The weights' ``exp`` is this module's own (:func:`exp`: additions and
products only, on vectors, the same bits on every CPU); the losses' other
transcendental functions stay in NumPy.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}

#: The kernels' "unit weights": an empty array where a weight array ``s`` is expected.
NO_WEIGHTS = np.empty(0)
#: An empty array where an output array is expected: the kernel keeps only its sums.
NO_OUTPUT = np.empty(0)


# -- exp, the same bits on every CPU ---------------------------------------------------------
@intrinsic
def _as_float(typingctx, i):  # pragma: no cover - compiled
    """The float64 whose bits are the int64 ``i``."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _as_int(typingctx, x):  # pragma: no cover - compiled
    """The int64 whose bits are the float64 ``x``."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


_INV_LN2 = 1.4426950408889634
#: ln 2 in two parts (Cody & Waite): ``k · _LN2_HI`` is exact for |k| < 2^11
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: 1.5 · 2^52: adding it rounds to an integer, which then sits in the low bits
_ROUND = 6755399441055744.0
_EXP_MAX = 709.782712893384  # above: inf
_EXP_MIN = -745.1332191019412  # below: 0
_C = tuple(1.0 / math.factorial(k) for k in range(14))


@nb.jit(**_JIT, inline="always")
def exp(x):  # pragma: no cover - compiled
    """``e^x`` to 1 unit in the last place, with IEEE additions and products only, so
    that a loop of it runs on vectors and gives the same bits on every CPU.

    NumPy's ``exp`` is vectorised for float64 only on AVX-512 CPUs (its own kernel)
    and calls the C library's elsewhere (5.5 ns a row on an AMD EPYC without AVX-512,
    where this one took 2.4 ns and rounded otherwise than the C library's in about one
    row in ten).
    ``x = k ln 2 + r`` with ``|r| ≤ ln 2 / 2`` (``k`` rounded to nearest), ``e^r`` by
    its Taylor polynomial of degree 13 (truncation below 10^-17 relatively), its even
    and odd halves each by Horner's rule, and ``2^k`` made from its bits in two
    factors, so that results in the subnormal range round once.  Checked against the C
    library over [−760, 720]: at most 1 unit apart (and 90% of rows equal), the
    overflow and underflow limits, ``±inf`` and NaN the same.
    """
    xc = min(max(x, -746.0), 710.0)
    t = xc * _INV_LN2 + _ROUND
    kd = t - _ROUND
    k = _as_int(t) - _as_int(_ROUND)
    r = (xc - kd * _LN2_HI) - kd * _LN2_LO
    r2 = r * r
    even = _C[2] + r2 * (_C[4] + r2 * (_C[6] + r2 * (_C[8] + r2 * (_C[10] + r2 * _C[12]))))
    odd = _C[3] + r2 * (_C[5] + r2 * (_C[7] + r2 * (_C[9] + r2 * (_C[11] + r2 * _C[13]))))
    p = 1.0 + (r + r2 * (even + r * odd))
    # 2^k = 2^(k + off) · 2^(−off): both factors normal for k in [−1076, 1025]
    off = np.int64(600) if k < 0 else np.int64(-600)
    y = (p * _as_float((k + off + 1023) << 52)) * _as_float((1023 - off) << 52)
    y = math.inf if x > _EXP_MAX else y
    y = 0.0 if x < _EXP_MIN else y
    return x if x != x else y


@nb.jit(**_JIT)
def _shifted_exps(z, top, out):  # pragma: no cover - compiled
    """``out = exp(z − top)`` (:func:`exp`), and ``Σ out`` (:func:`interleaved_sum`)."""
    for i in range(z.shape[0]):
        out[i] = exp(z[i] - top)
    return interleaved_sum(out)


@nb.jit(**_JIT)
def peak(a):  # pragma: no cover - compiled
    """``max_i |a_i|``, as four interleaved running maxima (exact, so their order does not
    matter; one chain waits for each comparison before the next: four ran 3 times
    faster).  A NaN is passed over, as ``max`` passes it."""
    n = a.shape[0]
    q = n - n % 4
    t0, t1, t2, t3 = 0.0, 0.0, 0.0, 0.0
    for i in range(0, q, 4):
        t0 = max(t0, abs(a[i]))
        t1 = max(t1, abs(a[i + 1]))
        t2 = max(t2, abs(a[i + 2]))
        t3 = max(t3, abs(a[i + 3]))
    for i in range(q, n):
        t0 = max(t0, abs(a[i]))
    return max(max(t0, t1), max(t2, t3))


@nb.jit(**_JIT, inline="always")
def _label_and_weight(y, w, i):  # pragma: no cover - compiled
    """Row ``i``'s label ±1 and weight: ``(y[i], w[i])``, or, when ``y`` is empty, from
    the query ``q = w · y`` held in ``w``: ``(copysign(1, q_i), |q_i|)``, the same
    numbers (a product by ±1 is exact, and a zero weight keeps its label as the sign of
    its zero), so that a pass reads one array of the two."""
    if y.shape[0] == 0:
        q = w[i]
        return math.copysign(1.0, q), abs(q)
    return y[i], w[i]


@nb.jit(**_JIT)
def _signed_sums(a, y, w, norm):  # pragma: no cover - compiled
    """With ``v = y * a / norm``: ``(Σ w v, Σ w (1 + v), Σ w (1 − v), min v, max v,
    max |a|)``, each sum in row order (``y`` empty: ``w`` holds the query ``w · y``, see
    :func:`_label_and_weight`).

    The two middle sums are the AdaBoost step's ``Σ w (1 ± u)``, summed as non-negative
    terms so that ``1 − γ`` stays accurate when the edge γ is close to 1.  The peak comes
    along so that a caller who guessed ``norm`` (1 for a bounded class) can check the
    guess without a pass of its own.
    """
    corr, plus, minus = 0.0, 0.0, 0.0
    lo, hi, top = np.inf, -np.inf, 0.0
    # x / 1 is x: a bounded class (norm 1) skips the division, whose throughput (one
    # every 4.5 cycles) bounded the loop: 200 -> 157 µs at 100,000 rows
    unit = norm == 1.0
    for i in range(a.shape[0]):
        yi, wi = _label_and_weight(y, w, i)
        v = yi * a[i] if unit else yi * a[i] / norm
        corr += wi * v
        plus += wi * (1.0 + v)
        minus += wi * (1.0 - v)
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
    class) differs from ``y``.  ``s`` of length 0 means unit weights.  Three loops, each
    on vectors: the margins; their minimum as four interleaved running values; the
    wrong rows, counted in an integer with unit weights (exact, so its order is free)
    and otherwise summed as :func:`interleaved_sum` adds."""
    n = m.shape[0]
    for i in range(n):
        out[i] = m[i] + y[i] * (c * a[i])
    low = _minimum(out)
    q = n - n % 4
    if s.shape[0] == 0:
        count = 0
        for i in range(n):
            count += _wrong(out[i], y[i])
        return low, float(count)
    w0, w1, w2, w3 = 0.0, 0.0, 0.0, 0.0
    for i in range(0, q, 4):
        w0 += s[i] * _wrong(out[i], y[i])
        w1 += s[i + 1] * _wrong(out[i + 1], y[i + 1])
        w2 += s[i + 2] * _wrong(out[i + 2], y[i + 2])
        w3 += s[i + 3] * _wrong(out[i + 3], y[i + 3])
    for i in range(q, n):
        if i - q == 0:
            w0 += s[i] * _wrong(out[i], y[i])
        elif i - q == 1:
            w1 += s[i] * _wrong(out[i], y[i])
        else:
            w2 += s[i] * _wrong(out[i], y[i])
    return low, (w0 + w1) + (w2 + w3)


@nb.jit(**_JIT)
def _minimum(x):  # pragma: no cover - compiled
    """``min x`` as four interleaved running minima (a NaN passed over; ``inf`` for no
    number)."""
    n = x.shape[0]
    l0, l1, l2, l3 = np.inf, np.inf, np.inf, np.inf
    q = n - n % 4
    for i in range(0, q, 4):
        v0, v1, v2, v3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        l0 = v0 if v0 < l0 else l0
        l1 = v1 if v1 < l1 else l1
        l2 = v2 if v2 < l2 else l2
        l3 = v3 if v3 < l3 else l3
    for i in range(q, n):
        v = x[i]
        l0 = v if v < l0 else l0
    return min(min(l0, l1), min(l2, l3))


@nb.jit(**_JIT, inline="always")
def _wrong(v, yi):  # pragma: no cover - compiled
    """1 if a row of new margin ``v`` is wrong (``f = 0`` predicts the negative class),
    else 0, as an integer made by bitwise operations on the comparisons: the test
    written with ``or`` and ``and`` compiles to branches, and a wrong row's sign is
    random (a mispredicted branch a row: 7.7 ms at 1,000,000 rows against 0.24 ms for
    this form's count, numba 0.68)."""
    return np.int64((v < 0.0) | ((v == 0.0) & (yi > 0)))


@nb.jit(**_JIT)
def _weighted_inner(a, b, s, terms):  # pragma: no cover - compiled
    """``Σ_i s_i Σ_k a[i, k] b[i, k]`` for arrays of shape (n, K); ``s`` of length 0
    means unit weights.  The rows' terms go to ``terms`` (a scratch of length n), then
    :func:`interleaved_sum` adds them (``np.sum(s * a * b)`` makes two temporaries of n; a running
    sum in the loop waits on each addition)."""
    n, K = a.shape
    weighted = s.shape[0] > 0
    if K == 1:  # without the inner loop, which slows this one fourfold
        for i in range(n):
            row = a[i, 0] * b[i, 0]
            terms[i] = s[i] * row if weighted else row
        return interleaved_sum(terms[:n])
    for i in range(n):
        row = 0.0
        for k in range(K):
            row += a[i, k] * b[i, k]
        terms[i] = s[i] * row if weighted else row
    return interleaved_sum(terms[:n])


@nb.jit(**_JIT)
def _weighted_residual(t, a, coef, s, terms):  # pragma: no cover - compiled
    """``Σ_i s_i Σ_k (t[i, k] − coef · a[i, k])²``: what a projection leaves of ``t``,
    without building ``t − coef · a``; ``s`` of length 0 means unit weights; summed as
    :func:`_weighted_inner` sums."""
    n, K = t.shape
    weighted = s.shape[0] > 0
    if K == 1:  # as in _weighted_inner
        for i in range(n):
            r = t[i, 0] - coef * a[i, 0]
            terms[i] = s[i] * (r * r) if weighted else r * r
        return interleaved_sum(terms[:n])
    for i in range(n):
        row = 0.0
        for k in range(K):
            r = t[i, k] - coef * a[i, k]
            row += r * r
        terms[i] = s[i] * row if weighted else row
    return interleaved_sum(terms[:n])


@nb.jit(**_JIT)
def _two_value_masses(a, y, w, norm, sign, lo, hi, terms):  # pragma: no cover - compiled
    """For the column ``u = (y * a / norm) * sign`` with extreme values ``lo`` and
    ``hi``: ``(Σ w [u = lo], Σ w [u = hi], #{u ∉ {lo, hi}})``, branch-free (the value of
    a stump's row is random, and a mispredicted branch a row costs 10 ns); the masses'
    terms go to ``terms`` (a scratch of shape (2, n)) and :func:`interleaved_sum` adds them
    (``y`` empty: ``w`` holds the query, as in :func:`_signed_sums`)."""
    n = a.shape[0]
    other = 0
    for i in range(n):
        yi, wi = _label_and_weight(y, w, i)
        v = yi * a[i] / norm * sign
        at_lo = v == lo
        at_hi = v == hi
        terms[0, i] = wi * at_lo
        terms[1, i] = wi * (at_hi & ~at_lo)
        other += ~(at_lo | at_hi)
    return interleaved_sum(terms[0, :n]), interleaved_sum(terms[1, :n]), other


@nb.jit(**_JIT, inline="always")
def _entropy_term(e, t):  # pragma: no cover - compiled
    """``e · t``, the entropy's term of an exp ``e = exp(t)``, and 0 where ``e`` is 0: a
    row whose weight underflowed (``log s = −inf``, so ``t = −inf``) adds ``lim e log e
    = 0``, not ``0 · (−inf)``, which is NaN (a NaN ``e`` stays NaN)."""
    return 0.0 if e == 0.0 else e * t


@nb.jit(**_JIT)
def _normalise(e, z, top, y, total, query, terms):  # pragma: no cover - compiled
    """The weights' last pass: the query ``query = (e · (1 / total)) * y`` (the oracle's
    question, and the weights themselves as ``|query|``: a product by ±1 is exact; a
    product by ``1 / total``, not a quotient: scalar divisions took twice as long as the
    rest of the pass) and, unless ``z`` is empty (the sum made already, with the exps:
    :func:`_neg_margin_exps`), the entropy's sum ``Σ e · (z − top)`` (``e = exp(z −
    top)``; summed by :func:`interleaved_sum`), in one pass instead of three.  The products go to
    ``terms`` (a lane's scratch) first: without a sum in it, the loop runs on vectors."""
    n = e.shape[0]
    scale = 1.0 / total
    if z.shape[0] == 0:
        for i in range(n):
            query[i] = (e[i] * scale) * y[i]
        return 0.0
    for i in range(n):
        ei = e[i]
        query[i] = (ei * scale) * y[i]
        terms[i] = _entropy_term(ei, z[i] - top)
    return interleaved_sum(terms[:n])


@nb.jit(**_JIT, inline="always")
def _neg_logits(m, log_s, z):  # pragma: no cover - compiled
    """The exponential loss's logits ``z = −m + log s`` (``log_s`` of length 0: ``−m``)."""
    if log_s.shape[0] > 0:
        for i in range(m.shape[0]):
            z[i] = -m[i] + log_s[i]
    else:
        for i in range(m.shape[0]):
            z[i] = -m[i]


@nb.jit(**_JIT)
def _neg_margin_exps(m, log_s, top, e, z, terms, low):  # pragma: no cover - compiled
    """The exponential loss's weights at margins ``m``, without keeping its logits: the
    logits ``z = −m + log s`` (``log_s`` of length 0: ``−m``) into the scratch ``z``,
    ``e = exp(z − top)`` (:func:`exp`), and ``(max z, Σ e, Σ e · (z − top))`` (the
    last the entropy's sum, as :func:`_normalise` would make it from the logits; sums
    by :func:`interleaved_sum`).  Three loops over a lane in cache: one loop doing all three
    measured 15% slower.  ``low`` is ``min m`` (:func:`_step_margins`'s): without
    ``log s``, see :func:`_neg_margin_top`."""
    n = m.shape[0]
    if log_s.shape[0] > 0:
        _neg_logits(m, log_s, z)
        total = _shifted_exps(z[:n], top, e)
        for i in range(n):
            terms[i] = _entropy_term(e[i], z[i] - top)
        return z[:n].max(), total, interleaved_sum(terms[:n])
    for i in range(n):  # z = −m is exact: (−m) − top without writing z
        e[i] = exp(-m[i] - top)
    total = interleaved_sum(e[:n])
    for i in range(n):
        terms[i] = _entropy_term(e[i], -m[i] - top)
    return _neg_margin_top(m, low, total), total, interleaved_sum(terms[:n])


@nb.jit(**_JIT)
def _neg_margin_query(m, log_s, top, y, query, z, terms, low):  # pragma: no cover - compiled
    """:func:`_neg_margin_exps` writing ``query = e · y`` instead of ``e``: the same
    exps, maxima and sums (the exps kept in the scratch ``z`` for their sum, after their
    logits are used)."""
    n = m.shape[0]
    if log_s.shape[0] > 0:
        _neg_logits(m, log_s, z)
        peak = z[:n].max()
        for i in range(n):
            t = z[i] - top
            ei = exp(t)
            terms[i] = _entropy_term(ei, t)
            query[i] = ei * y[i]
            z[i] = ei
        return peak, interleaved_sum(z[:n]), interleaved_sum(terms[:n])
    for i in range(n):  # as above with z = −m (exact), not written
        t = -m[i] - top
        ei = exp(t)
        terms[i] = _entropy_term(ei, t)
        query[i] = ei * y[i]
        z[i] = ei
    total = interleaved_sum(z[:n])
    return _neg_margin_top(m, low, total), total, interleaved_sum(terms[:n])


@nb.jit(**_JIT)
def _neg_margin_top(m, low, total):  # pragma: no cover - compiled
    """``max(−m)`` given ``low = min m`` (:func:`_step_margins`'s, which passes over a
    NaN) and the exps' sum ``total`` (NaN exactly when a margin is NaN, ``top`` being
    finite): ``−low``, the same number without a pass, except where ``max`` itself must
    decide (a NaN margin, or a zero, whose sign ``−low`` might not keep)."""
    if low == 0.0 or total != total:
        return (-m).max()
    return -low


@nb.jit(**_JIT)
def interleaved_sum(x):  # pragma: no cover - compiled
    """``Σ x`` as four interleaved running sums: ``s_k`` adds the rows ``i ≡ k (mod
    4)`` in row order, and the sum is ``(s_0 + s_1) + (s_2 + s_3)``.  The order is the
    code's, not the CPU's, so every machine gets the same bits; four chains of additions
    instead of one run 3.5 times faster (one addition waits for the one before it)."""
    n = x.shape[0]
    m = n - n % 4
    s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
    for i in range(0, m, 4):
        s0 += x[i]
        s1 += x[i + 1]
        s2 += x[i + 2]
        s3 += x[i + 3]
    for i in range(m, n):  # the last rows of a lane whose length is not a multiple of 4
        if i - m == 0:
            s0 += x[i]
        elif i - m == 1:
            s1 += x[i]
        else:
            s2 += x[i]
    return (s0 + s1) + (s2 + s3)


# -- the lane drivers: a single-range kernel above on each lane's slices ---------------------
# (Calling the one-range loop on slices keeps its code generation: a loop nest written
# out measured 30% slower at 1,000,000 rows.)  The lanes run on numba's threads
# (``prange``), as many as the caller's setting (:meth:`oracleboost.rows.blocks.RowBlocks.
# lane_map` sets it from ``n_jobs``); each lane writes only its own slot.
_PARALLEL = {**_JIT, "parallel": True}


@nb.jit(**_JIT)
def lane_rows(lo, hi, lane, q):  # pragma: no cover - compiled
    """Rows ``(start, stop)`` of lane ``q`` of ``lo:hi``."""
    start = lo + q * lane
    return start, min(start + lane, hi)


@nb.jit(**_JIT)
def count_lanes(lo, hi, lane):  # pragma: no cover - compiled
    return (hi - lo + lane - 1) // lane


@nb.jit(**_PARALLEL)
def lane_sums(x, lo, hi, lane, out):  # pragma: no cover - compiled
    """``out[q] = Σ x`` over lane q of ``lo:hi`` (:func:`interleaved_sum`)."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        out[q] = interleaved_sum(x[start:stop])


def _weighed(w, i, x):  # pragma: no cover - compiled only
    """``w[i] · x``, or ``x`` when ``w`` is None (unit weights)."""


@overload(_weighed, inline="always", jit_options=_JIT)
def _weighed_impl(w, i, x):  # pragma: no cover - compiled
    # Chosen by w's type when a kernel is compiled, so that a loop holds no test of it
    # (a test a row kept these loops from being compiled to straight code: 4x slower)
    if isinstance(w, types.NoneType):
        return lambda w, i, x: x
    return lambda w, i, x: w[i] * x


def _minus_scaled(t, coef, hi, i):  # pragma: no cover - compiled only
    """``t[i] − coef · hi``, or 0 when ``t`` is None."""


@overload(_minus_scaled, inline="always", jit_options=_JIT)
def _minus_scaled_impl(t, coef, hi, i):  # pragma: no cover - compiled
    if isinstance(t, types.NoneType):
        return lambda t, coef, hi, i: 0.0
    return lambda t, coef, hi, i: t[i] - coef * hi


def _rows_of(a, start, stop):  # pragma: no cover - compiled only
    """``a[start:stop]``, or None when ``a`` is None."""


@overload(_rows_of, inline="always", jit_options=_JIT)
def _rows_of_impl(a, start, stop):  # pragma: no cover - compiled
    if isinstance(a, types.NoneType):
        return lambda a, start, stop: None
    return lambda a, start, stop: a[start:stop]


@nb.jit(**_JIT, inline="always")
def _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i):  # pragma: no cover
    """Row ``i`` of :func:`_squared_step`: writes ``f_new[i]`` and ``v[i]``, returns the
    row's terms of the loss, of ``Σ s' v²`` and of the residual, and ``|v_i|``.  ``h[i]``
    is read before anything is written: ``f_new`` may be ``h`` itself."""
    hi = h[i]
    fi = f[i] + c * hi
    f_new[i] = fi
    d = fi - y[i]
    v[i] = -d
    sq = d * d
    r = _minus_scaled(t, coef, hi, i)
    return (_weighed(s, i, 0.5 * sq), _weighed(inner_s, i, sq), _weighed(inner_s, i, r * r),
            abs(d))


@nb.jit(**_JIT)
def _squared_step(f, y, h, c, s, inner_s, t, coef, f_new, v,
                  out):  # pragma: no cover - compiled
    """The squared loss's round after its step, in one pass: ``f_new = f + c h``, the
    next descent direction ``v = −(f_new − y)``, and into ``out``:

    * ``out[0] = Σ s ½ (f_new − y)²``, the loss;
    * ``out[1] = max |v|`` and ``out[2] = Σ s' v²``: the next round's :func:`peak` and
      :func:`_weighted_inner` of ``v`` with itself, which it then need not pass over;
    * ``out[3] = Σ s' (t − coef h)²``: this round's :func:`_weighted_residual` of the
      target ``t`` that the oracle answered with ``h`` (0 when ``t`` is None).

    ``s`` weighs the loss and ``s'`` (``inner_s``) the inner products; None means unit
    weights (they differ when equal weights cancel from the products).  Each sum is
    :func:`interleaved_sum`'s four running sums, kept in registers: the numbers of NumPy's
    ``f + c·h``, ``−(f − y)`` and ``½ (f − y)**2 · s`` and of the separate passes, bit
    for bit (``v·v`` is ``(f_new − y)²``: a sign is exact)."""
    n = f.shape[0]
    m = n - n % 4
    l0, l1, l2, l3 = 0.0, 0.0, 0.0, 0.0  # the loss
    q0, q1, q2, q3 = 0.0, 0.0, 0.0, 0.0  # Σ s' v²
    r0, r1, r2, r3 = 0.0, 0.0, 0.0, 0.0  # the residual
    p0, p1, p2, p3 = 0.0, 0.0, 0.0, 0.0  # max |v|
    for i in range(0, m, 4):  # interleaved_sum's order: row i into sum i mod 4
        a, b, e, g = _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i)
        l0, q0, r0, p0 = l0 + a, q0 + b, r0 + e, max(p0, g)
        a, b, e, g = _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i + 1)
        l1, q1, r1, p1 = l1 + a, q1 + b, r1 + e, max(p1, g)
        a, b, e, g = _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i + 2)
        l2, q2, r2, p2 = l2 + a, q2 + b, r2 + e, max(p2, g)
        a, b, e, g = _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i + 3)
        l3, q3, r3, p3 = l3 + a, q3 + b, r3 + e, max(p3, g)
    for i in range(m, n):  # the short last run: rows into sums 0, 1, 2, as interleaved_sum does
        a, b, e, g = _squared_row(f, y, h, c, s, inner_s, t, coef, f_new, v, i)
        p0 = max(p0, g)
        if i - m == 0:
            l0, q0, r0 = l0 + a, q0 + b, r0 + e
        elif i - m == 1:
            l1, q1, r1 = l1 + a, q1 + b, r1 + e
        else:
            l2, q2, r2 = l2 + a, q2 + b, r2 + e
    out[0] = (l0 + l1) + (l2 + l3)
    out[1] = max(max(p0, p1), max(p2, p3))
    out[2] = (q0 + q1) + (q2 + q3)
    out[3] = (r0 + r1) + (r2 + r3)


@nb.jit(**_JIT, inline="always")
def _peak_row(a, b, s, i):  # pragma: no cover - compiled
    """Row ``i`` of :func:`_peak_products`: its terms ``s a a`` and ``s a b`` (0 when
    ``b`` is None) and ``|a_i|``."""
    ai = a[i]
    return _weighed(s, i, ai * ai), _weighed(s, i, _times(ai, b, i)), abs(ai)


def _times(x, b, i):  # pragma: no cover - compiled only
    """``x · b[i]``, or 0 when ``b`` is None."""


@overload(_times, inline="always", jit_options=_JIT)
def _times_impl(x, b, i):  # pragma: no cover - compiled
    if isinstance(b, types.NoneType):
        return lambda x, b, i: 0.0
    return lambda x, b, i: x * b[i]


@nb.jit(**_JIT)
def _peak_products(a, b, s, out):  # pragma: no cover - compiled
    """``out[0] = max |a|``, ``out[1] = Σ s a a`` and ``out[2] = Σ s a b`` (0 when ``b``
    is None; ``s`` None: unit weights) in one pass: the numbers of :func:`peak` and of
    :func:`_weighted_inner` of ``a`` with itself and with ``b``, bit for bit (the same
    terms, ``s · (a · b)``, in :func:`interleaved_sum`'s four running sums, kept in registers; a
    maximum is exact, so the order of :func:`peak`'s chains does not matter)."""
    n = a.shape[0]
    m = n - n % 4
    q0, q1, q2, q3 = 0.0, 0.0, 0.0, 0.0  # Σ s a a
    r0, r1, r2, r3 = 0.0, 0.0, 0.0, 0.0  # Σ s a b
    p0, p1, p2, p3 = 0.0, 0.0, 0.0, 0.0  # max |a|
    for i in range(0, m, 4):
        x, y, g = _peak_row(a, b, s, i)
        q0, r0, p0 = q0 + x, r0 + y, max(p0, g)
        x, y, g = _peak_row(a, b, s, i + 1)
        q1, r1, p1 = q1 + x, r1 + y, max(p1, g)
        x, y, g = _peak_row(a, b, s, i + 2)
        q2, r2, p2 = q2 + x, r2 + y, max(p2, g)
        x, y, g = _peak_row(a, b, s, i + 3)
        q3, r3, p3 = q3 + x, r3 + y, max(p3, g)
    for i in range(m, n):  # as interleaved_sum
        x, y, g = _peak_row(a, b, s, i)
        p0 = max(p0, g)
        if i - m == 0:
            q0, r0 = q0 + x, r0 + y
        elif i - m == 1:
            q1, r1 = q1 + x, r1 + y
        else:
            q2, r2 = q2 + x, r2 + y
    out[0] = max(max(p0, p1), max(p2, p3))
    out[1] = (q0 + q1) + (q2 + q3)
    out[2] = (r0 + r1) + (r2 + r3)


@nb.jit(**_PARALLEL)
def peak_products(a, b, s, lo, hi, lane, parts):  # pragma: no cover - compiled
    """:func:`_peak_products` of every lane of ``lo:hi`` into ``parts[q, 0:3]`` (``b``,
    ``s``: arrays, or None)."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        _peak_products(a[start:stop], _rows_of(b, start, stop), _rows_of(s, start, stop),
                       parts[q])


@nb.jit(**_PARALLEL)
def squared_step(f, y, h, c, s, inner_s, t, coef, lo, hi, lane, f_new, v,
                 parts):  # pragma: no cover - compiled
    """:func:`_squared_step` on every lane of ``lo:hi``, lane ``q``'s four numbers into
    ``parts[q]`` (``s``, ``inner_s``, ``t``: arrays, or None)."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        _squared_step(f[start:stop], y[start:stop], h[start:stop], c,
                      _rows_of(s, start, stop), _rows_of(inner_s, start, stop),
                      _rows_of(t, start, stop), coef, f_new[start:stop], v[start:stop],
                      parts[q])


@nb.jit(**_PARALLEL)
def signed_sums(a, y, w, norm, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_signed_sums` of every lane of ``lo:hi`` into ``out[q, 0:6]``."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        r = _signed_sums(a[start:stop], y[start:stop], w[start:stop], norm)
        for k in range(6):
            out[q, k] = r[k]


@nb.jit(**_PARALLEL)
def step_margins(m, a, y, c, s, out, lo, hi, lane, parts):  # pragma: no cover - compiled
    """:func:`_step_margins` on ``lo:hi`` (``out`` filled), each lane's ``(min, wrong)``
    into ``parts[q]``."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        parts[q, 0], parts[q, 1] = _step_lane(m, a, y, c, s, out, start, stop)


@nb.jit(**_JIT, inline="always")
def _step_lane(m, a, y, c, s, out, start, stop):  # pragma: no cover - compiled
    """:func:`_step_margins` on the rows ``start:stop`` (``s`` of length 0: unit
    weights)."""
    sw = s[start:stop] if s.shape[0] > 0 else s
    return _step_margins(m[start:stop], a[start:stop], y[start:stop], c, sw,
                         out[start:stop])


@nb.jit(**_PARALLEL)
def weighted_inner(a, b, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_weighted_inner` of every lane of ``lo:hi`` into ``out[q]``."""
    weighted = s.shape[0] > 0
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        out[q] = _weighted_inner(a[start:stop], b[start:stop],
                                 s[start:stop] if weighted else s, np.empty(stop - start))


@nb.jit(**_PARALLEL)
def weighted_residual(t, a, coef, s, lo, hi, lane, out):  # pragma: no cover - compiled
    """:func:`_weighted_residual` of every lane of ``lo:hi`` into ``out[q]``."""
    weighted = s.shape[0] > 0
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        out[q] = _weighted_residual(t[start:stop], a[start:stop], coef,
                                    s[start:stop] if weighted else s, np.empty(stop - start))


@nb.jit(**_PARALLEL)
def two_value_masses(a, y, w, norm, sign, lo_u, hi_u, lo, hi, lane,
                     out):  # pragma: no cover - compiled
    """:func:`_two_value_masses` of every lane of ``lo:hi`` into ``out[q, 0:3]``."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        m_lo, m_hi, other = _two_value_masses(a[start:stop], y[start:stop], w[start:stop],
                                              norm, sign, lo_u, hi_u,
                                              np.empty((2, stop - start)))
        out[q, 0], out[q, 1], out[q, 2] = m_lo, m_hi, other


@nb.jit(**_PARALLEL)
def normalise(e, z, top, y, total, query, lo, hi, lane, out):  # pragma: no cover
    """:func:`_normalise` on every lane of ``lo:hi``, each lane's ``Σ e · (z − top)``
    into ``out[q]`` (0 when ``z`` is empty)."""
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        out[q] = _normalise(e[start:stop], z[start:stop], top, y[start:stop], total,
                            query[start:stop], np.empty(stop - start))


@nb.jit(**_PARALLEL)
def exponential_step(m, a, y, c, s, log_s, top, out, e, query, lo, hi, lane, parts, tops,
                     sums):  # pragma: no cover - compiled
    """The exponential loss's step and weights in one pass, lane by lane: each lane's
    :func:`_step_margins` (``out``, and ``(min, wrong)`` into ``parts[q]``), its logits
    ``z = −out + log s`` (``log(−φ'(m)) = −m``; kept only in a lane's scratch) and their
    maximum into ``tops[q, 0]``, and ``e = exp(z − top)`` with its sum and the entropy's
    sum ``Σ e (z − top)`` (:func:`_neg_margin_exps`) into ``sums[q, 0:2]``, while the
    lane's rows are in cache.  With ``query`` (not empty), ``query = e * y`` instead of
    ``e`` (``e`` is then empty: the exps stay in a lane's scratch): the oracle's next
    question when ``top`` is the weights' log-normaliser (``Σ e`` is then 1 and no
    normalising pass follows), and the weights themselves, as ``|query|``.

    The numbers are those of the NumPy steps they replace (``−m``, ``+ log s``,
    ``− top``), then :func:`exp`."""
    logged = log_s.shape[0] > 0
    asked = query.shape[0] > 0
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        parts[q, 0], parts[q, 1] = _step_lane(m, a, y, c, s, out, start, stop)
        ls = log_s[start:stop] if logged else log_s
        if asked:
            tops[q, 0], sums[q, 0], sums[q, 1] = _neg_margin_query(
                out[start:stop], ls, top, y[start:stop], query[start:stop],
                np.empty(stop - start), np.empty(stop - start), parts[q, 0])
        else:
            tops[q, 0], sums[q, 0], sums[q, 1] = _neg_margin_exps(
                out[start:stop], ls, top, e[start:stop], np.empty(stop - start),
                np.empty(stop - start), parts[q, 0])


@nb.jit(**_PARALLEL)
def shifted_exps(z, top, out, lo, hi, lane, sums):  # pragma: no cover - compiled
    """``out = exp(z − top)`` on ``lo:hi`` (:func:`exp`; ``out`` may be ``z``), each
    lane's sum into ``sums[q]``.  ``out`` of length 0: the sums only (a lane's
    scratch holds the exps)."""
    keep = out.shape[0] > 0
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        dest = out[start:stop] if keep else np.empty(stop - start)
        sums[q] = _shifted_exps(z[start:stop], top, dest)
