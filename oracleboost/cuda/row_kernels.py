"""The GPU's row kernels: the booster's per-row passes and their exact reductions.

Compiled the first time they are asked for (:func:`row_kernels`); importing this module
imports nothing of ``numba.cuda``.  Every kernel strides over the rows with the whole
grid (``cuda.grid(1)``, ``cuda.gridsize(1)``), so any launch shape covers every row once.

Two kinds:

* **Elementwise** kernels (a row's value depends on its row alone, so any launch gives
  the same bits): the margin losses' logits (``logits``; the loss by its code,
  :data:`LOSS_CODES`), the shifted exps, the entropy's terms, the normalised query, the
  step on the margins with each row's wrong mass, the terms of a column's signed sums,
  the oriented column and the terms of the risk and its slope along it (the line
  searches), a product by a number, a logarithm, a fill.
* **Reductions**, whose order does not change their result, in two launches a stage
  whatever its channels (:class:`~oracleboost.cuda.reductions.Reductions`): a kernel
  *folds* each channel's exact extremes (``max |x|``, ``min``, ``max``: a thread's
  running values, then a block's in shared memory, then one global atomic a block; an
  elementwise kernel folds its own outputs as it writes them, ``fold`` those of any
  array), and ``settle`` sums the channels in fixed point, each term rounded once to an
  int64 ``round(x · 2^e)`` on the scale of
  :func:`oracleboost.rows.fixed_point.fixed_point_exponent` (:func:`exponent`, its
  device twin, made from the folded maximum on the device), the integers added with
  atomics (a block's in shared memory as two 32-bit words: see ``add_words``), and its
  last block writes every channel's results into one buffer (one copy
  back) and resets the fold's.  ``ldexp`` by ``e`` is exact where it matters: ``e`` may
  pass 1023, and a term it scales out of the normal range is far below 1/2, and rounds
  to 0 either way.

Device functions that name ``cuda`` (``publish``, ``add_words``) are called only from
this module's kernels: the simulator swaps a kernel's module global ``cuda`` for its own
around a launch, and a device function of another module would see the real one.

The formulas are the CPU's (:mod:`oracleboost.rows.column_kernels`,
:mod:`oracleboost.losses.margin`), with the device's ``exp``, ``log`` and ``log1p``
(CUDA's libdevice on a GPU, the C library's on the simulator) where the CPU has its own:
at most an ulp apart.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

from oracleboost.cuda.device import counted, cuda_module
from oracleboost.rows.fixed_point import HEADROOM

__all__ = ["EXP_MAX", "LOSS_CODES", "MAX_CHANNELS", "MIRROR_UPDATES", "REGRESSION_CODES",
           "row_kernels"]

#: ``numba.cuda``, set by :func:`row_kernels` (a module global: see
#: :mod:`.stump_kernels`, whose kernels name it the same way for the same reason).
cuda: Any = None

#: Above this ``exp`` is ``inf`` (and the simulator's ``math.exp`` would raise).
EXP_MAX = 709.782712893384

#: The most channels a stage's reduction folds and settles at once
#: (:class:`~oracleboost.cuda.reductions.Reductions`).
MAX_CHANNELS = 8

#: The margin losses whose logits the device computes, by name: their code in the
#: kernels.  (Exponential ``φ(m) = e^{−m}``; logistic ``φ(m) = ln(1 + e^{−m})``.)
LOSS_CODES: dict[str, int] = {"exponential": 0, "logistic": 1}

#: MABoost's updates (c) the device's mirror step makes, by name: their code in the
#: kernel (:mod:`oracleboost.boosters.mirror.updates`).
MIRROR_UPDATES: dict[str, int] = {"lazy": 0, "active": 1, "sparse": 2, "madaboost": 3}
#: The regression losses the device computes, by name: their (negative) code in the
#: kernels, beside the margin losses' :data:`LOSS_CODES`.
REGRESSION_CODES: dict[str, int] = {"squared": -1, "absolute": -2, "huber": -3,
                                    "quantile": -4}

#: The active update's code with the Euclidean map (``∇R(w) = w``).
ACTIVE_EUCLIDEAN = 4


@functools.cache
def row_kernels() -> SimpleNamespace:
    """The row kernels (compiled on first launch), as a namespace."""
    global cuda
    cuda = cuda_module()
    from numba.core import types

    exp_max = EXP_MAX
    max_channels = MAX_CHANNELS
    headroom = HEADROOM

    @cuda.jit(device=True)
    def dexp(x):  # pragma: no cover - device code
        """``e^x``, ``inf`` above :data:`EXP_MAX`."""
        return math.inf if x > exp_max else math.exp(x)

    @cuda.jit(device=True)
    def dexpm1(x):  # pragma: no cover - device code
        """``e^x − 1``, ``inf`` above :data:`EXP_MAX`."""
        return math.inf if x > exp_max else math.expm1(x)

    @cuda.jit(device=True)
    def dlog(x):  # pragma: no cover - device code
        """``ln x`` for ``x ≥ 0``, ``−inf`` at 0 (the simulator's ``math.log`` raises)."""
        return -math.inf if x == 0.0 else math.log(x)

    @cuda.jit(device=True)
    def ldexp(x, e):  # pragma: no cover - device code
        """``x · 2^e``, ``±inf`` past float64's range: a GPU's ``ldexp`` (the
        simulator's ``math.ldexp`` would raise)."""
        if x != 0.0 and x == x and abs(x) < math.inf:
            _, k = math.frexp(x)
            if k + e > 1024:
                return math.inf if x > 0.0 else -math.inf
        return math.ldexp(x, e)

    @cuda.jit(device=True)
    def larger(a, b):  # pragma: no cover - device code
        """Python's ``max(a, b)``: ``b`` where ``b > a``, else ``a``.  (The kernels do not
        call ``max`` or ``min`` of numbers: numba 0.68's own CUDA target types them by
        an overload of any number of arguments that it cannot compile for a GPU.)"""
        return b if b > a else a

    @cuda.jit(device=True)
    def smaller(a, b):  # pragma: no cover - device code
        """Python's ``min(a, b)``: ``b`` where ``b < a``, else ``a``."""
        return b if b < a else a

    @cuda.jit(device=True)
    def softplus(x):  # pragma: no cover - device code
        """``ln(1 + e^x) = max(x, 0) + log1p(e^{−|x|})``
        (:func:`oracleboost._numerics.softplus`)."""
        return larger(x, 0.0) + math.log1p(math.exp(-abs(x)))

    @cuda.jit(device=True)
    def log_neg_dphi(code, m):  # pragma: no cover - device code
        """``ln(−φ'(m))``: ``−m`` (exponential), ``−softplus(m)`` (logistic)."""
        if code == 0:
            return -m
        return -softplus(m)

    @cuda.jit(device=True)
    def log_phi(code, m):  # pragma: no cover - device code
        """``ln φ(m)``: ``−m`` (exponential); the logistic's as
        :meth:`oracleboost.losses.Logistic.log_phi` computes it (a series past m = 30,
        where ``log1p(e^{−m})`` underflows)."""
        if code == 0:
            return -m
        if m > 30.0:
            u = math.exp(-m)
            return -m + math.log1p(-u / 2.0 + u * u / 3.0)
        return dlog(softplus(-m))

    @cuda.jit(device=True)
    def log_phi_shift(code, m, d):  # pragma: no cover - device code
        """``ln φ(m + d) − ln φ(m)``: ``−d`` for the exponential (no cancellation at
        margins in the thousands), the difference of the logs for the logistic
        (:meth:`oracleboost.losses.MarginLoss.log_phi_shift`)."""
        if code == 0:
            return -d
        return log_phi(code, m + d) - log_phi(code, m)

    @cuda.jit(device=True)
    def log_neg_dphi_shift(code, m, d):  # pragma: no cover - device code
        """``ln(−φ'(m + d)) − ln φ(m)`` (``−d`` for the exponential)."""
        if code == 0:
            return -d
        return log_neg_dphi(code, m + d) - log_phi(code, m)

    @cuda.jit(device=True)
    def phi(code, m):  # pragma: no cover - device code
        """``φ(m)``: ``e^{−m}`` (exponential), ``softplus(−m)`` (logistic)."""
        if code == 0:
            return dexp(-m)
        return softplus(-m)

    @cuda.jit(device=True)
    def rint(x):  # pragma: no cover - device code
        """``x`` rounded to the nearest integer, half to even (``np.rint``)."""
        a = abs(x)
        f = math.floor(a)
        rest = a - f  # exact: f is a's integer part
        up = rest > 0.5 or (rest == 0.5 and f % 2 == 1)
        r = int(f) + (1 if up else 0)
        return r if x >= 0.0 else -r

    # -- int64 sums in shared memory as two 32-bit words ------------------------------
    # A GPU has no 64-bit integer add in shared memory: ``cuda.atomic.add`` on a shared
    # int64 compiles to a compare-and-swap loop, retried while other threads write the
    # same bin.  A 64-bit sum is instead kept as two uint32 words, ``words[0, at]`` (the
    # low) and ``words[1, at]`` (the high), each added with the native 32-bit atomic: the
    # low word of ``x``, then the high word plus the carry out of that add (read from
    # the low word's old value).  Sums mod 2^64 do not depend on the order of the adds,
    # so the joined words are the exact sum in any order (XGBoost's shared histograms
    # add the same way).  The words are passed as uint64 below 2^32: the device's
    # atomic takes their low 32 bits; the simulator's (NumPy) wraps on the store, not
    # in an add that would warn.
    @cuda.jit(device=True)
    def low_word(x):  # pragma: no cover - device code
        """The low 32 bits of the int64 ``x``."""
        return types.uint64(x & 0xFFFFFFFF)

    @cuda.jit(device=True)
    def high_word(x, old, low):  # pragma: no cover - device code
        """The high word to add after ``low`` was added to a low word that held ``old``:
        ``x``'s high 32 bits plus the carry, mod 2^32."""
        carry = 1 if int(old) + int(low) > 0xFFFFFFFF else 0
        return types.uint64(((x >> 32) + carry) & 0xFFFFFFFF)

    @cuda.jit(device=True)
    def joined(words, at):  # pragma: no cover - device code
        """The int64 sum held in ``words[0, at]`` (low) and ``words[1, at]`` (high)."""
        high = int(words[1, at])
        if high >= 0x80000000:
            high -= 0x100000000
        return high * 0x100000000 + int(words[0, at])

    @cuda.jit(device=True)
    def zero_words(words):  # pragma: no cover - device code
        """The shared ``words`` (2, size) zeroed by the block's threads (a
        ``cuda.syncthreads()`` must follow before they are added to)."""
        for t in range(cuda.threadIdx.x, words.shape[1], cuda.blockDim.x):
            words[0, t] = 0
            words[1, t] = 0

    @cuda.jit(device=True)
    def add_words(words, at, x):  # pragma: no cover - device code
        """``x`` (int64) added to the sum at ``at`` of the shared ``words`` (2, size)."""
        low = low_word(x)
        old = cuda.atomic.add(words, (0, at), low)
        cuda.atomic.add(words, (1, at), high_word(x, old, low))

    # -- reductions: a stage's channels folded, then settled in one launch ------------
    @cuda.jit(device=True)
    def exponent(m, n):  # pragma: no cover - device code
        """:func:`oracleboost.rows.fixed_point.fixed_point_exponent` of a finite ``m ≥ 0``
        and ``n`` terms, on the device: the first guess from ``frexp``, then the exact
        integer checks ``n · M < 2^62`` written as ``M ≤ (2^62 − 1) // n`` (no product to
        overflow int64; ``M < 2^63`` at every ``e`` the loops try)."""
        if m == 0.0:
            return 0
        _, k = math.frexp(m)
        bits = 0
        rest = n - 1
        while rest > 0:
            bits += 1
            rest >>= 1
        e = 62 - k - bits
        limit = (headroom - 1) // n
        while rint(math.ldexp(m, e)) > limit:
            e -= 1
        while rint(math.ldexp(m, e + 1)) <= limit:
            e += 1
        return e

    # A kernel that folds extremes keeps a thread's running ``(max |x|, min, max)`` of
    # each channel in a local ``(3, MAX_CHANNELS)`` array (``mine``: :func:`begin`
    # empties it, :func:`see` updates it), and ends with :func:`publish`.  (A local
    # array is made in the kernel itself: a device function cannot return one.)
    @cuda.jit(device=True)
    def begin(mine):  # pragma: no cover - device code
        """A thread's running extremes ``mine`` (3, MAX_CHANNELS), empty: ``(0, inf,
        −inf)`` a channel."""
        for c in range(max_channels):
            mine[0, c] = 0.0
            mine[1, c] = math.inf
            mine[2, c] = -math.inf

    @cuda.jit(device=True)
    def see(mine, c, x):  # pragma: no cover - device code
        """Channel ``c`` of a thread's running extremes takes ``x``: ``max |x|`` (a NaN
        counted as ``inf``, so that a caller sees a non-finite term), ``min`` and
        ``max`` (NaN passed over)."""
        a = math.inf if x != x else abs(x)
        if a > mine[0, c]:
            mine[0, c] = a
        if x < mine[1, c]:
            mine[1, c] = x
        if x > mine[2, c]:
            mine[2, c] = x

    @cuda.jit(device=True)
    def publish(ext, mine, k):  # pragma: no cover - device code
        """The block's extremes of channels ``0:k`` (its threads' ``mine`` in a shared
        ``(3, MAX_CHANNELS)`` array, one atomic a thread a channel), then one global
        atomic a block a channel into ``ext``.  Every thread of the block must call
        it."""
        shared = cuda.shared.array((3, max_channels), types.float64)
        tid = cuda.threadIdx.x
        if tid == 0:
            for c in range(k):
                shared[0, c] = 0.0
                shared[1, c] = math.inf
                shared[2, c] = -math.inf
        cuda.syncthreads()
        for c in range(k):
            cuda.atomic.max(shared, (0, c), mine[0, c])
            cuda.atomic.min(shared, (1, c), mine[1, c])
            cuda.atomic.max(shared, (2, c), mine[2, c])
        cuda.syncthreads()
        if tid == 0:
            for c in range(k):
                cuda.atomic.max(ext, (c, 0), shared[0, c])
                cuda.atomic.min(ext, (c, 1), shared[1, c])
                cuda.atomic.max(ext, (c, 2), shared[2, c])

    @cuda.jit(device=True)
    def cleared(hist, start, stride):  # pragma: no cover - device code
        """A histogram ``(C, d, B)`` zeroed by a kernel's threads striding over it."""
        C, d, B = hist.shape
        for k in range(start, C * d * B, stride):
            hist[k // (d * B), (k // B) % d, k % B] = 0

    @cuda.jit
    def fold(values, ext):  # pragma: no cover - device code
        """The extremes of each row ``c`` of ``values`` ``(k, n)`` into ``ext[c]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        k = values.shape[0]
        for c in range(k):
            for i in range(start, values.shape[1], stride):
                see(mine, c, values[c, i])
        publish(ext, mine, k)

    @cuda.jit
    def start_query(r, ext, hist):  # pragma: no cover - device code
        """A stump query's first pass: ``max |r|`` folded into channel 0 of ``ext`` (its
        fixed-point scale, made on the device by the settle after it: the scale never
        crosses the bus) and the histogram ``(channels, d, B)`` zeroed."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, r.shape[0], stride):
            see(mine, 0, r[i])
        cleared(hist, start, stride)
        publish(ext, mine, 1)

    @cuda.jit
    def start_columns(v, c0, k, ext, hist):  # pragma: no cover - device code
        """The first pass of the sums by bins of columns ``c0 … c0 + k − 1`` of ``v``
        ``(n, K)``: each one's extremes folded into channel ``c − c0`` of ``ext`` (their
        fixed-point scales, made on the device by the settle after it), a row's columns
        read together, and the histogram ``(k, d, B)`` zeroed."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, v.shape[0], stride):
            for c in range(k):
                see(mine, c, v[i, c0 + c])
        cleared(hist, start, stride)
        publish(ext, mine, k)

    @cuda.jit
    def lsq_start(t, w, wt, ext, hist):  # pragma: no cover - device code
        """A least-squares stump query's first pass: the weighted target ``wt = w t``
        (:func:`oracleboost.oracles._stump_kernels.hist_weighted`'s product; ``w`` of
        length 0: unit weights, ``t`` itself is summed and ``wt`` not written), the
        extremes of the summed target folded into ``ext[0]`` and of ``w`` into
        ``ext[1]`` (their fixed-point scales, made on the device by the settle after
        it), and the histogram ``(channels, d, B)`` zeroed."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = w.shape[0] > 0
        for i in range(start, t.shape[0], stride):
            if weighted:
                wi = w[i]
                x = wi * t[i]
                wt[i] = x
                see(mine, 1, wi)
            else:
                x = t[i]
            see(mine, 0, x)
        cleared(hist, start, stride)
        publish(ext, mine, 2 if weighted else 1)

    @cuda.jit
    def settle(values, k, summed, n, ext, acc, count, out, outf):  # pragma: no cover
        """The fixed-point sums of the rows ``c`` of ``values`` whose bit is set in
        ``summed``, each on the scale of its folded ``max |x|`` (``ext[c, 0]``,
        :func:`exponent` of it and ``n``; a channel with a non-finite term is not
        summed), then, in the last block to finish (its ticket from ``count``), every
        channel's ``(max |x|, min, max)`` into ``outf[c, 0:3]``, its sum and exponent
        into ``out[c, 3:5]`` (``out`` and ``outf`` one buffer: one copy back), and
        ``ext``, ``acc`` and ``count`` reset for the next stage."""
        sums = cuda.shared.array((2, max_channels), types.uint32)
        last = cuda.shared.array(1, types.int64)
        tid = cuda.threadIdx.x
        zero_words(sums)
        cuda.syncthreads()
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for c in range(k):
            peak = ext[c, 0]
            if (summed >> c) & 1 and peak < math.inf:
                e = exponent(peak, n)
                mine = 0
                for i in range(start, values.shape[1], stride):
                    mine += rint(math.ldexp(values[c, i], e))
                add_words(sums, c, mine)
        cuda.syncthreads()
        if tid == 0:
            for c in range(k):
                block_sum = joined(sums, c)
                if block_sum != 0:
                    cuda.atomic.add(acc, c, block_sum)
            cuda.threadfence()  # this block's sums seen before its ticket
            last[0] = 1 if cuda.atomic.add(count, 0, 1) == cuda.gridDim.x - 1 else 0
        cuda.syncthreads()
        if tid == 0 and last[0] == 1:
            cuda.threadfence()
            for c in range(k):
                peak = ext[c, 0]
                outf[c, 0] = peak
                outf[c, 1] = ext[c, 1]
                outf[c, 2] = ext[c, 2]
                out[c, 3] = cuda.atomic.add(acc, c, 0)  # every block's sum, read whole
                out[c, 4] = exponent(peak, n) if peak < math.inf else 0
                ext[c, 0] = 0.0
                ext[c, 1] = math.inf
                ext[c, 2] = -math.inf
                acc[c] = 0
            count[0] = 0

    # -- elementwise ------------------------------------------------------------------
    @cuda.jit
    def fill(out, value):  # pragma: no cover - device code
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            out[i] = value

    @cuda.jit
    def logs(a, out):  # pragma: no cover - device code
        """``out = ln a`` (``−inf`` where ``a`` is 0: a weight that underflowed)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            out[i] = dlog(a[i])

    @cuda.jit
    def scaled(a, scale, out):  # pragma: no cover - device code
        """``out = a · scale``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            out[i] = a[i] * scale

    @cuda.jit
    def quotient(a, divisor, out):  # pragma: no cover - device code
        """``out = a / divisor`` (a quotient, not a product by the reciprocal: the CPU's
        bits)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            out[i] = a[i] / divisor

    @cuda.jit
    def weighted_labels(w, a, out, zeros):  # pragma: no cover - device code
        """MABoost's query ``out = w · a`` and ``zeros = [w = 0]`` (to be counted)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, w.shape[0], stride):
            out[i] = w[i] * a[i]
            zeros[i] = 1.0 if w[i] == 0.0 else 0.0

    @cuda.jit
    def entropy_step(z, f, a, h, s, coef, log_norm, target, f_new, e, query,
                     terms):  # pragma: no cover - device code
        """MABoost's entropy round in one pass
        (:func:`oracleboost.boosters.mirror.kernels._entropy_lane`'s formulas):
        ``target = log z + (a h)(−coef)``, ``f_new = f + coef h``, ``e = exp(target −
        log_norm)``, ``query = e a``, and per row ``terms = (s [a f ≤ 0], s [sign f ≠
        a], [e = 0], a f)`` (``s`` of length 0: unit weights)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, z.shape[0], stride):
            ai = float(a[i])
            hi = h[i]
            t = z[i] + (ai * hi) * (-coef)
            target[i] = t
            fi = f[i] + coef * hi
            f_new[i] = fi
            m = ai * fi
            weight = s[i] if weighted else 1.0
            terms[0, i] = weight if m <= 0.0 else 0.0  # ties counted as errors
            terms[1, i] = weight if (fi > 0.0) != (ai > 0.0) else 0.0  # f = 0: classes_[0]
            ei = dexp(t - log_norm)
            e[i] = ei
            query[i] = ei * ai
            terms[2, i] = 1.0 if ei == 0.0 else 0.0
            terms[3, i] = m

    @cuda.jit
    def logits(code, m, log_s, separate, z, lp):  # pragma: no cover - device code
        """``z = ln(−φ'(m)) + ln s`` and, with ``separate``, ``lp = ln φ(m) + ln s``
        (``log_s`` of length 0: no ``ln s``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = log_s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            zi = log_neg_dphi(code, m[i])
            if weighted:
                zi += log_s[i]
            z[i] = zi
            if separate:
                li = log_phi(code, m[i])
                if weighted:
                    li += log_s[i]
                lp[i] = li

    @cuda.jit
    def exps(z, top, out):  # pragma: no cover - device code
        """``out = exp(z − top)``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, z.shape[0], stride):
            out[i] = dexp(z[i] - top)

    @cuda.jit
    def entropy_terms(e, z, top, out):  # pragma: no cover - device code
        """``out = e · (z − top)``, 0 where ``e`` is 0 (``lim e ln e = 0``, not
        ``0 · (−inf)``: :func:`oracleboost.rows.column_kernels._entropy_term`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, e.shape[0], stride):
            ei = e[i]
            out[i] = 0.0 if ei == 0.0 else ei * (z[i] - top)

    @cuda.jit
    def normalised(e, scale, y, query):  # pragma: no cover - device code
        """``query = (e · scale) · y`` (``scale = 1 / Σ e``: the CPU's product)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, e.shape[0], stride):
            query[i] = (e[i] * scale) * y[i]

    @cuda.jit
    def signed_terms(a, y, w, norm, terms, ext):  # pragma: no cover - device code
        """With ``v = y a / norm`` (``y`` of length 0: the label and weight from the
        query ``w``, :func:`oracleboost.rows.column_kernels._label_and_weight`):
        ``terms = (w v, w (1 + v), w (1 − v), v)``, each row's extremes folded into
        ``ext[0:4]`` and those of ``a`` into ``ext[4]`` (``max |a|``: not written)."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        labelled = y.shape[0] > 0
        unit = norm == 1.0
        for i in range(start, a.shape[0], stride):
            if labelled:
                yi, wi = float(y[i]), w[i]
            else:
                q = w[i]
                yi, wi = math.copysign(1.0, q), abs(q)
            v = yi * a[i] if unit else yi * a[i] / norm
            t0, t1, t2 = wi * v, wi * (1.0 + v), wi * (1.0 - v)
            terms[0, i] = t0
            terms[1, i] = t1
            terms[2, i] = t2
            terms[3, i] = v
            see(mine, 0, t0)
            see(mine, 1, t1)
            see(mine, 2, t2)
            see(mine, 3, v)
            see(mine, 4, a[i])
        publish(ext, mine, 5)

    @cuda.jit
    def two_value_terms(a, w, norm, sign, lo, hi, terms):  # pragma: no cover - device code
        """For ``u = (y a / norm) · sign`` (labels and weights from the query ``w``):
        ``terms = (w [u = lo], w [u = hi, u ≠ lo], [u ∉ {lo, hi}])``
        (:func:`oracleboost.rows.column_kernels._two_value_masses`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            q = w[i]
            yi, wi = math.copysign(1.0, q), abs(q)
            v = yi * a[i] / norm * sign
            at_lo = v == lo
            at_hi = v == hi
            terms[0, i] = wi if at_lo else 0.0
            terms[1, i] = wi if (at_hi and not at_lo) else 0.0
            terms[2, i] = 0.0 if (at_lo or at_hi) else 1.0

    @cuda.jit
    def risk_terms(code, m, s, out):  # pragma: no cover - device code
        """``out = s φ(m)`` (``s`` of length 0: ``φ(m)``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            out[i] = s[i] * phi(code, m[i]) if weighted else phi(code, m[i])

    @cuda.jit
    def step(m, a, y, c, s, out, wrong, ext):  # pragma: no cover - device code
        """``out = m + y (c a)`` (the CPU's product: the margins equal the CPU's bit for
        bit for the same ``c``) and ``wrong = s [out < 0 or (out = 0 and y > 0)]``
        (``s`` of length 0: unit weights); the extremes of ``wrong`` folded into
        ``ext[0]``, those of ``out`` into ``ext[1]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            v = m[i] + y[i] * (c * a[i])
            out[i] = v
            bad = v < 0.0 or (v == 0.0 and y[i] > 0)
            weight = s[i] if weighted else 1.0
            w = weight if bad else 0.0
            wrong[i] = w
            see(mine, 0, w)
            see(mine, 1, v)
        publish(ext, mine, 2)

    @cuda.jit
    def exponential_step(m, a, y, c, s, log_s, top, margins, out, asked, terms,
                         ext):  # pragma: no cover - device code
        """The exponential loss's step and next weights in one pass
        (:func:`oracleboost.rows.column_kernels.exponential_step`'s formulas): the
        margins ``m + y (c a)``, the logits ``z = −m' + log s`` (not kept), ``e = exp(z
        − top)`` written to ``out`` (``asked``: ``e · y``, the next query), and the terms
        ``(s [wrong], e, e (z − top))`` (0 where ``e`` is 0); the extremes of the terms
        folded into ``ext[0:3]``, of the margins into ``ext[3]``, of ``z`` into
        ``ext[4]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        logged = log_s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            v = m[i] + y[i] * (c * a[i])
            margins[i] = v
            bad = v < 0.0 or (v == 0.0 and y[i] > 0)
            w = (s[i] if weighted else 1.0) if bad else 0.0
            z = -v + log_s[i] if logged else -v
            t = z - top
            ei = dexp(t)
            entropy = 0.0 if ei == 0.0 else ei * t
            out[i] = ei * y[i] if asked else ei
            terms[0, i] = w
            terms[1, i] = ei
            terms[2, i] = entropy
            see(mine, 0, w)
            see(mine, 1, ei)
            see(mine, 2, entropy)
            see(mine, 3, v)
            see(mine, 4, z)
        publish(ext, mine, 5)

    @cuda.jit
    def ldexps(a, e, out):  # pragma: no cover - device code
        """``out = a · 2^e`` (exact for any ``e``, ``±inf`` past float64's range)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            out[i] = ldexp(a[i], int(e))

    @cuda.jit
    def products(a, b0, b1, nb, s, terms, ext):  # pragma: no cover - device code
        """The terms ``s (a b_k)`` of the inner products of ``a`` with ``b0`` (and
        ``b1``: ``nb`` of them) into ``terms[k]`` (``s`` of length 0: unit weights;
        :func:`oracleboost.rows.column_kernels._peak_row`'s), their extremes folded into
        ``ext[0:nb]`` and those of ``a`` into ``ext[nb]`` (``max |a|``)."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, a.shape[0], stride):
            ai = a[i]
            for k in range(nb):
                x = ai * (b0[i] if k == 0 else b1[i])
                if weighted:
                    x = s[i] * x
                terms[k, i] = x
                see(mine, k, x)
            see(mine, nb, ai)
        publish(ext, mine, nb + 1)

    @cuda.jit
    def squared_step(f, y, h, c, s, inner_s, t, coef, f_new, v, terms,
                     ext):  # pragma: no cover - device code
        """The squared loss's step in one pass
        (:func:`oracleboost.rows.column_kernels._squared_row`'s formulas): ``f_new = f +
        c h``, ``v = −(f_new − y)`` and the terms ``(s ½ d², s' d², s' (t − coef h)²)``
        with ``d = f_new − y`` (``s``, ``inner_s``, ``t`` of length 0: unit weights, no
        target), their extremes folded into ``ext[0:3]`` and those of ``d`` into
        ``ext[3]`` (``max |v|``)."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        inner = inner_s.shape[0] > 0
        targeted = t.shape[0] > 0
        for i in range(start, f.shape[0], stride):
            fi = f[i] + c * h[i]
            f_new[i] = fi
            d = fi - y[i]
            v[i] = -d
            sq = d * d
            r = t[i] - coef * h[i] if targeted else 0.0
            x0 = s[i] * (0.5 * sq) if weighted else 0.5 * sq
            x1 = inner_s[i] * sq if inner else sq
            x2 = inner_s[i] * (r * r) if inner else r * r
            terms[0, i] = x0
            terms[1, i] = x1
            terms[2, i] = x2
            see(mine, 0, x0)
            see(mine, 1, x1)
            see(mine, 2, x2)
            see(mine, 3, d)
        publish(ext, mine, 4)

    # -- the risk along a column, for the line searches -------------------------------
    @cuda.jit
    def oriented(a, y, norm, sign, u):  # pragma: no cover - device code
        """``u = ((y a) / norm) · sign``, the CPU's operations in its order
        (:func:`oracleboost.optim.row_passes._oriented`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            u[i] = (float(y[i]) * a[i]) / norm * sign

    @cuda.jit
    def risk_logits(code, m, log_s, out, ext):  # pragma: no cover - device code
        """``out = ln φ(m) + ln s`` (``log_s`` of length 0: no ``ln s``), its extremes
        folded into ``ext[0]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = log_s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            x = log_phi(code, m[i])
            if weighted:
                x += log_s[i]
            out[i] = x
            see(mine, 0, x)
        publish(ext, mine, 1)

    @cuda.jit
    def line_rho(lr, top, log_rho, rho, ext):  # pragma: no cover - device code
        """``log_rho = lr − top`` (``log_rho`` may be ``lr``) and ``rho = exp(log_rho)``,
        the extremes of ``rho`` folded into ``ext[0]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lr.shape[0], stride):
            t = lr[i] - top
            log_rho[i] = t
            r = dexp(t)
            rho[i] = r
            see(mine, 0, r)
        publish(ext, mine, 1)

    @cuda.jit
    def line_delta(code, m, u, rho, alpha, terms, ext):  # pragma: no cover - device code
        """``terms = ρ expm1(ln φ(m + α u) − ln φ(m))`` (``inf`` where the risk
        overflows; NaN where ``ρ`` is 0 there, as on the CPU), folded into ``ext[0]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, m.shape[0], stride):
            x = rho[i] * dexpm1(log_phi_shift(code, m[i], alpha * u[i]))
            terms[i] = x
            see(mine, 0, x)
        publish(ext, mine, 1)

    @cuda.jit
    def line_slope(code, m, u, log_rho, alpha, terms, ext):  # pragma: no cover
        """``terms = u exp(ln ρ + ln(−φ'(m + α u)) − ln φ(m))``, folded into ``ext[0]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, m.shape[0], stride):
            x = u[i] * dexp(log_rho[i] + log_neg_dphi_shift(code, m[i], alpha * u[i]))
            terms[i] = x
            see(mine, 0, x)
        publish(ext, mine, 1)

    # -- a binary score's records: the functional classifier -----------------------------
    @cuda.jit
    def class_terms(y, s, terms):  # pragma: no cover - device code
        """``terms = (s [y > 0], s [y < 0])`` (``s`` of length 0: unit weights)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, y.shape[0], stride):
            w = s[i] if weighted else 1.0
            terms[0, i] = w if y[i] > 0 else 0.0
            terms[1, i] = w if y[i] < 0 else 0.0

    @cuda.jit
    def error_terms(y, f, s, terms, ext):  # pragma: no cover - device code
        """``terms = (s [(f > 0) ≠ (y > 0)], y f)`` (``predict`` says ``classes_[1]``
        where ``f > 0``), folded into ``ext[0:2]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, y.shape[0], stride):
            fi = f[i]
            w = (s[i] if weighted else 1.0) if (fi > 0.0) != (y[i] > 0) else 0.0
            m = float(y[i]) * fi
            terms[0, i] = w
            terms[1, i] = m
            see(mine, 0, w)
            see(mine, 1, m)
        publish(ext, mine, 2)

    @cuda.jit(device=True)
    def regression_loss(code, p, y, raw):  # pragma: no cover - device code
        """A regression loss ``l(y, raw)`` by its code (:data:`REGRESSION_CODES`; ``p``
        Huber's δ or the quantile's α): :mod:`oracleboost.losses.regression`'s
        formulas in their order."""
        if code == -1:  # squared
            d = raw - y
            return 0.5 * (d * d)
        if code == -2:  # absolute
            return abs(raw - y)
        if code == -3:  # Huber
            r = abs(raw - y)
            return 0.5 * (r * r) if r <= p else p * (r - 0.5 * p)
        r = y - raw  # quantile (pinball)
        return p * r if r >= 0.0 else (p - 1.0) * r

    @cuda.jit(device=True)
    def regression_gradient(code, p, y, f):  # pragma: no cover - device code
        """``∂l/∂f`` of the regression loss ``code`` (the CPU's choices at the kinks)."""
        d = f - y
        if code == -1:
            return d
        if code == -2:
            return 1.0 if d >= 0.0 else -1.0
        if code == -3:
            return -p if d < -p else (p if d > p else d)
        return 1.0 - p if d >= 0.0 else -p

    @cuda.jit
    def loss_terms(code, p, y, raw, s, terms, ext):  # pragma: no cover - device code
        """``terms = l(y, raw) · s`` (``s`` of length 0: ``l(y, raw)``): the margin loss
        ``φ(y raw)`` of ``code ≥ 0``, or a regression loss (``code < 0``,
        :func:`regression_loss`); folded into ``ext[0]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, y.shape[0], stride):
            if code < 0:
                x = regression_loss(code, p, y[i], raw[i])
            else:
                x = phi(code, float(y[i]) * raw[i])
            if weighted:
                x = x * s[i]
            terms[i] = x
            see(mine, 0, x)
        publish(ext, mine, 1)

    @cuda.jit
    def regression_descent(code, p, y, f, out):  # pragma: no cover - device code
        """``out = −∂l/∂f`` of a regression loss (``np.negative`` of the CPU's
        gradient)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, f.shape[0], stride):
            out[i] = -regression_gradient(code, p, y[i], f[i])

    @cuda.jit
    def margin_descent(code, y, f, out):  # pragma: no cover - device code
        """``out = −(y φ'(y f))`` with ``φ' = −exp(ln(−φ'))``: the margin loss's
        ``−∇``, the CPU's operations (:meth:`oracleboost.losses.MarginLoss.gradient`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, f.shape[0], stride):
            yi = float(y[i])
            out[i] = -(yi * -dexp(log_neg_dphi(code, yi * f[i])))

    @cuda.jit
    def combined(a, b0, c0, b1, c1, nb, out):  # pragma: no cover - device code
        """``out = a + c0 b0 (+ c1 b1)``, added in that order (``nb`` terms, 1 or 2;
        ``out`` may be ``a``): :func:`oracleboost.optim.row_passes._combined`'s."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            x = a[i] + c0 * b0[i]
            if nb > 1:
                x += c1 * b1[i]
            out[i] = x

    @cuda.jit
    def residual_terms(t, a, coef, s, terms, ext):  # pragma: no cover - device code
        """``terms = s (t − coef a)²`` (``s`` of length 0: unit weights), folded into
        ``ext[0]`` (:func:`oracleboost.rows.column_kernels._weighted_residual`'s)."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, t.shape[0], stride):
            r = t[i] - coef * a[i]
            x = s[i] * (r * r) if weighted else r * r
            terms[i] = x
            see(mine, 0, x)
        publish(ext, mine, 1)

    @cuda.jit
    def products_of(s, a, out):  # pragma: no cover - device code
        """``out = s · a``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            out[i] = s[i] * a[i]

    # -- MABoost's mirror step and the softmax projection ----------------------------------
    @cuda.jit
    def mirror_step(kind, w, z, f, a, h, s, log_s, coef, alpha_eta, target, z_new, f_new,
                    terms, ext):  # pragma: no cover - device code
        """Algorithm 1 (c) and the vote (:func:`oracleboost.boosters.mirror.passes.
        _mirror_step`'s operations in its order): with ``d = (a h)(−coef)`` the point
        ``target`` of the update ``kind`` (:data:`MIRROR_UPDATES`: lazy ``z + d``;
        active ``ln w + d`` with the entropy map, ``w + d`` with the Euclidean
        (:data:`ACTIVE_EUCLIDEAN`); SparseBoost's ``max((z + d) − α η, 0)``; the
        MadaBoost variant's ``min(z + d, 0) (+ ln s)``, its dual ``z + d`` into
        ``z_new``), the vote ``f_new = f + coef h``, and the terms ``(s [a f' ≤ 0],
        s [predict wrong], a f')`` (``s`` or ``log_s`` of length 0: unit weights),
        folded into ``ext[0:3]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        logged = log_s.shape[0] > 0
        for i in range(start, a.shape[0], stride):
            ai = float(a[i])
            hv = h[i]
            d = (ai * hv) * (-coef)
            fi = f[i] + coef * hv
            f_new[i] = fi
            if kind == 0:
                t = z[i] + d
            elif kind == 1:
                t = dlog(w[i]) + d
            elif kind == 4:  # the Euclidean map's active update: ∇R(w) = w
                t = w[i] + d
            elif kind == 2:
                t = (z[i] + d) - alpha_eta
                t = t if t > 0.0 else 0.0
            else:
                dual = z[i] + d
                z_new[i] = dual
                t = dual if dual < 0.0 else 0.0
                if logged:
                    t += log_s[i]
            target[i] = t
            m = ai * fi
            weight = s[i] if weighted else 1.0
            x0 = weight if m <= 0.0 else 0.0  # ties counted as errors
            x1 = weight if (fi > 0.0) != (ai > 0.0) else 0.0  # f = 0: classes_[0]
            terms[0, i] = x0
            terms[1, i] = x1
            terms[2, i] = m
            see(mine, 0, x0)
            see(mine, 1, x1)
            see(mine, 2, m)
        publish(ext, mine, 3)

    @cuda.jit
    def log_flags(lz, terms, ext):  # pragma: no cover - device code
        """For log-weights ``lz``: ``terms = (lz where it is finite or −inf, else −inf;
        [NaN]; [+inf]; [lz > −inf])``, folded into ``ext[0:4]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            x = lz[i]
            nan = x != x
            pinf = x == math.inf
            top = -math.inf if (nan or pinf) else x
            x1 = 1.0 if nan else 0.0
            x2 = 1.0 if pinf else 0.0
            x3 = 1.0 if (not nan and x > -math.inf) else 0.0
            terms[0, i] = top
            terms[1, i] = x1
            terms[2, i] = x2
            terms[3, i] = x3
            see(mine, 0, top)
            see(mine, 1, x1)
            see(mine, 2, x2)
            see(mine, 3, x3)
        publish(ext, mine, 4)

    # -- predictions: a stump ensemble's scores on X on the device ---------------------
    @cuda.jit(device=True)
    def leaf_of(X, i, feature, threshold, lo, hi, nan_left, r):  # pragma: no cover
        """Round ``r``'s term on row ``i``: ``lo[r]`` where ``x_j ≤ θ`` (a NaN to the
        stump's side), else ``hi[r]`` (:meth:`oracleboost.oracles.stumps._Stump.
        predict`'s comparison)."""
        x = float(X[i, feature[r]])
        left = nan_left[r] if x != x else x <= threshold[r]
        return lo[r] if left else hi[r]

    @cuda.jit
    def stump_scores(X, feature, threshold, lo, hi, nan_left, start, out):  # pragma: no cover
        """``out = start + Σ_r term_r``, the rounds added in order (``start`` the
        intercept): the bits of the CPU's running sum
        (:class:`oracleboost.engine.model.RunningScores`)."""
        begin_, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(begin_, X.shape[0], stride):
            f = start
            for r in range(feature.shape[0]):
                f += leaf_of(X, i, feature, threshold, lo, hi, nan_left, r)
            out[i] = f

    @cuda.jit
    def stump_round(X, feature, threshold, lo, hi, nan_left, r, out):  # pragma: no cover
        """``out += term_r``: one round of the staged sum."""
        begin_, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(begin_, X.shape[0], stride):
            out[i] += leaf_of(X, i, feature, threshold, lo, hi, nan_left, r)

    @cuda.jit
    def non_finite(X, count):  # pragma: no cover - device code
        """``count[0] +=`` the NaN entries of ``X``, ``count[1] +=`` the infinite ones
        (one atomic a thread that saw any)."""
        begin_, stride = cuda.grid(1), cuda.gridsize(1)
        n, d = X.shape
        nan, inf = 0, 0
        for k in range(begin_, n * d, stride):
            x = float(X[k // d, k % d])
            if x != x:
                nan += 1
            elif x == math.inf or x == -math.inf:
                inf += 1
        if nan > 0:
            cuda.atomic.add(count, 0, nan)
        if inf > 0:
            cuda.atomic.add(count, 1, inf)

    # -- the Euclidean projection onto the (capped) simplex: row_projections' passes ----
    @cuda.jit(device=True)
    def cap_of(caps, cap, i):  # pragma: no cover - device code
        """Row ``i``'s cap: ``caps[i]``, or the one ``cap`` (``caps`` of length 0)."""
        return caps[i] if caps.shape[0] > 0 else cap

    @cuda.jit(device=True)
    def pivots_below(piv, P, x):  # pragma: no cover - device code
        """The number of the increasing ``piv[0:P]`` below ``x`` (a binary search)."""
        lo_, hi_ = 0, P
        while lo_ < hi_:
            mid = (lo_ + hi_) // 2
            if piv[mid] < x:
                lo_ = mid + 1
            else:
                hi_ = mid
        return lo_

    @cuda.jit(device=True)
    def sample_key(i, kind):  # pragma: no cover - device code
        """A row's breakpoint's place in the sample's order: a multiplicative hash of
        its position (Park and Miller's, modulo the prime 2^31 − 1: no product
        overflows)."""
        return ((i * 4 + kind) * 48271 + 11) % 2147483647

    @cuda.jit
    def eu_stats(z, caps, terms, ext):  # pragma: no cover - device code
        """The first pass's checks (:func:`oracleboost.optim.row_projections._eu_stats`):
        ``terms = (the finite caps, [cap = inf], the breakpoints a row)`` (0 without
        caps), folded into ``ext[0:3]``; ``z`` into ``ext[3]``, ``[z NaN]`` into
        ``ext[4]``, the caps into ``ext[5]`` and ``[cap NaN]`` into ``ext[6]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        has = caps.shape[0] > 0
        for i in range(start, z.shape[0], stride):
            x = z[i]
            see(mine, 3, x)
            see(mine, 4, 1.0 if x != x else 0.0)
            t0, t1, t2 = 0.0, 0.0, 0.0
            if has:
                c = caps[i]
                if c != c:
                    see(mine, 6, 1.0)
                else:
                    see(mine, 5, c)
                    t2 = (1.0 if c > 0.0 else 0.0) + (1.0 if 0.0 < c < math.inf else 0.0)
                    if c == math.inf:
                        t1 = 1.0
                    else:
                        t0 = c
            terms[0, i] = t0
            terms[1, i] = t1
            terms[2, i] = t2
            see(mine, 0, t0)
            see(mine, 1, t1)
            see(mine, 2, t2)
        publish(ext, mine, 7)

    @cuda.jit
    def eu_gather(z, caps, cap, a, b, idx, count, fixed, ext):  # pragma: no cover
        """The rows with a breakpoint strictly inside ``(a, b)``: their indices appended
        to ``idx`` (in any order: the caller sorts them), their number into
        ``count[0]``; and the others' terms ``fixed = ((z − b) [free], [free], cap
        [capped])`` (:func:`oracleboost.optim.row_projections._eu_gather`), folded into
        ``ext[0:3]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, z.shape[0], stride):
            c = cap_of(caps, cap, i)
            f0, f1, f2 = 0.0, 0.0, 0.0
            if c > 0.0:
                x = z[i]
                y = x - c if c < math.inf else -math.inf  # (x may be inf: not checked yet)
                cand = (a < x and x < b) or (a < y and y < b)
                if cand:
                    slot = cuda.atomic.add(count, 0, 1)
                    if slot < idx.shape[0]:
                        idx[slot] = i
                elif a < x and y <= a:  # free (then x ≥ b)
                    f0 = 0.0 if x == b else x - b  # (x = b = inf: z is refused after)
                    f1 = 1.0
                elif y >= b:  # capped
                    f2 = c
            fixed[0, i] = f0
            fixed[1, i] = f1
            fixed[2, i] = f2
            see(mine, 0, f0)
            see(mine, 1, f1)
            see(mine, 2, f2)
        publish(ext, mine, 3)

    @cuda.jit
    def take(src, idx, out):  # pragma: no cover - device code
        """``out[j] = src[idx[j]]``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for j in range(start, idx.shape[0], stride):
            out[j] = src[idx[j]]

    @cuda.jit
    def eu_refine(z, caps, cap, a, b, piv, P, e, acc, counts):  # pragma: no cover
        """A refinement pass (:func:`oracleboost.optim.row_projections._eu_refine`'s
        buckets): for each breakpoint ``x`` (``z_i``; ``z_i − cap_i`` where the cap is
        finite) its bucket ``k`` (the pivots below it), and into ``acc[0 or 2, k]`` the
        fixed-point ``round((x − piv[k − 1]) · 2^e)`` and into ``acc[1 or 3, k]`` one
        (``k ≥ 1``; bucket 0 is never read); ``counts[k]`` += the breakpoints strictly
        inside ``(a, b)`` and strictly between pivots ``k − 1`` and ``k``.  A block adds
        in shared memory, then once into the global arrays: integers, any order."""
        sacc = cuda.shared.array((2, 4 * 129), types.uint32)  # (r, k) at r·129 + k
        scnt = cuda.shared.array((2, 129), types.uint32)
        tid = cuda.threadIdx.x
        zero_words(sacc)
        zero_words(scnt)
        cuda.syncthreads()
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, z.shape[0], stride):
            c = cap_of(caps, cap, i)
            if not c > 0.0:
                continue
            for kind in range(2):
                if kind == 1 and not c < math.inf:
                    break
                x = z[i] if kind == 0 else z[i] - c
                k = pivots_below(piv, P, x)
                if k > 0:
                    add_words(sacc, 2 * kind * 129 + k, rint(math.ldexp(x - piv[k - 1], e)))
                    add_words(sacc, (2 * kind + 1) * 129 + k, 1)
                if a < x and x < b and not (k < P and piv[k] == x):
                    add_words(scnt, k, 1)
        cuda.syncthreads()
        for t in range(tid, P + 1, cuda.blockDim.x):
            for r in range(4):
                held = joined(sacc, r * 129 + t)
                if held != 0:
                    cuda.atomic.add(acc, (r, t), held)
            held = joined(scnt, t)
            if held != 0:
                cuda.atomic.add(counts, t, held)

    @cuda.jit
    def eu_sample(z, caps, cap, a, b, stride_, thr, count, keys, vals):  # pragma: no cover
        """Every ``stride_``-th row's breakpoints strictly inside ``(a, b)`` whose
        :func:`sample_key` is at most ``thr``: appended to ``keys`` and ``vals`` (in any
        order; ``keys`` of length 0: only counted into ``count[0]``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        m = (z.shape[0] + stride_ - 1) // stride_
        for j in range(start, m, stride):
            i = j * stride_
            c = cap_of(caps, cap, i)
            if not c > 0.0:
                continue
            for kind in range(2):
                if kind == 1 and not c < math.inf:
                    break
                x = z[i] if kind == 0 else z[i] - c
                if a < x and x < b:
                    key = sample_key(i, kind)
                    if key <= thr:
                        slot = cuda.atomic.add(count, 0, 1)
                        if slot < keys.shape[0]:
                            keys[slot] = key
                            vals[slot] = x

    @cuda.jit(device=True)
    def clip(x, tau, c):  # pragma: no cover - device code
        """``clip(x − τ, 0, c)`` (:func:`oracleboost.optim.row_projections._clip`)."""
        v = x - tau
        v = v if v > 0.0 else 0.0
        return v if v < c else c

    @cuda.jit
    def eu_residual(z, caps, cap, tau, terms, ext):  # pragma: no cover - device code
        """``terms = (clip(z − τ, 0, cap), [0 < w < cap])``, folded into ``ext[0:2]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, z.shape[0], stride):
            c = cap_of(caps, cap, i)
            w = clip(z[i], tau, c)
            free = 1.0 if (w > 0.0 and w < c) else 0.0
            terms[0, i] = w
            terms[1, i] = free
            see(mine, 0, w)
            see(mine, 1, free)
        publish(ext, mine, 2)

    @cuda.jit
    def eu_weights(z, caps, cap, tau, w):  # pragma: no cover - device code
        """``w = clip(z − τ, 0, cap)``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, z.shape[0], stride):
            w[i] = clip(z[i], tau, cap_of(caps, cap, i))

    @cuda.jit
    def group_caps(group, cap, out):  # pragma: no cover - device code
        """``out = cap`` on the rows of ``group``, ``inf`` elsewhere."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, group.shape[0], stride):
            out[i] = cap if group[i] else math.inf

    @cuda.jit
    def above(w, caps, flags):  # pragma: no cover - device code
        """``flags = [w > cap]``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, w.shape[0], stride):
            flags[i] = 1.0 if w[i] > caps[i] else 0.0

    # -- the KL projection onto a capped simplex: row_projections' passes -----------------
    @cuda.jit(device=True)
    def log_ratio(lz, caps, log_cap, i):  # pragma: no cover - device code
        """Row ``i``'s breakpoint ``r = log cap − log z`` (``log_cap`` the one cap's log
        where ``caps`` has length 0): one expression for every pass, so that every pass
        compares the same numbers (:func:`oracleboost.optim.row_projections.
        _log_ratio`)."""
        lc = dlog(caps[i]) if caps.shape[0] > 0 else log_cap
        return lc - lz[i]

    @cuda.jit
    def kl_cap_stats(lz, caps, terms, ext):  # pragma: no cover - device code
        """The caps' checks (:func:`oracleboost.optim.row_projections._kl_stats`):
        ``terms = (finite caps, [cap = inf], finite caps where log z > −inf, [cap = inf
        and log z > −inf], the breakpoints)``, folded into ``ext[0:5]``; the caps into
        ``ext[5]``, ``[cap NaN]`` into ``ext[6]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            c = caps[i]
            x = lz[i]
            t0, t1, t2, t3, t4 = 0.0, 0.0, 0.0, 0.0, 0.0
            if c != c:
                see(mine, 6, 1.0)
            else:
                see(mine, 5, c)
                support = x > -math.inf
                if c > 0.0 and c < math.inf and support:
                    t4 = 1.0
                if c == math.inf:
                    t1 = 1.0
                    t3 = 1.0 if support else 0.0
                else:
                    t0 = c
                    t2 = c if support else 0.0
            terms[0, i] = t0
            terms[1, i] = t1
            terms[2, i] = t2
            terms[3, i] = t3
            terms[4, i] = t4
            see(mine, 0, t0)
            see(mine, 1, t1)
            see(mine, 2, t2)
            see(mine, 3, t3)
            see(mine, 4, t4)
        publish(ext, mine, 7)

    @cuda.jit
    def kl_gather(lz, caps, cap, log_cap, a, b, idx, count, fixed, ext):  # pragma: no cover
        """The capped rows with ``r`` strictly inside ``(a, b)``: their indices appended
        to ``idx`` (any order), their number into ``count[0]``; ``fixed = (cap [r ≤ a],
        log z [free: r ≥ b or uncapped], else −inf)`` (rows with ``cap = 0`` or
        ``log z = −inf`` count nowhere), folded into ``ext[0:2]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            c = cap_of(caps, cap, i)
            x = lz[i]
            f0, f1 = 0.0, -math.inf
            if c > 0.0 and x > -math.inf:
                r = log_ratio(lz, caps, log_cap, i)
                if c < math.inf and a < r and r < b:
                    slot = cuda.atomic.add(count, 0, 1)
                    if slot < idx.shape[0]:
                        idx[slot] = i
                elif c < math.inf and r <= a:
                    f0 = c
                else:
                    f1 = x
            fixed[0, i] = f0
            fixed[1, i] = f1
            see(mine, 0, f0)
            see(mine, 1, f1)
        publish(ext, mine, 2)

    @cuda.jit
    def kl_take(lz, caps, cap, log_cap, idx, cr, cl, cc):  # pragma: no cover
        """The candidates' ``(r, log z, cap)`` at the rows ``idx``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for j in range(start, idx.shape[0], stride):
            i = idx[j]
            cr[j] = log_ratio(lz, caps, log_cap, i)
            cl[j] = lz[i]
            cc[j] = cap_of(caps, cap, i)

    @cuda.jit
    def shifted_exps(x, top, out):  # pragma: no cover - device code
        """``out = exp(x − top)`` (0 where ``x = −inf``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            out[i] = 0.0 if x[i] == -math.inf else dexp(x[i] - top)

    @cuda.jit
    def uncapped_logs(lz, caps, out):  # pragma: no cover - device code
        """``out = log z`` on the uncapped rows (``cap = inf``), ``−inf`` elsewhere."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            out[i] = lz[i] if caps[i] == math.inf else -math.inf

    @cuda.jit
    def finite_part(a, out):  # pragma: no cover - device code
        """``out = a`` where finite, 0 elsewhere."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            x = a[i]
            out[i] = x if (x == x and x < math.inf and x > -math.inf) else 0.0

    @cuda.jit
    def kl_refine(lz, caps, cap, log_cap, a, b, piv, P, e, acc, counts):  # pragma: no cover
        """A refinement pass (:func:`oracleboost.optim.row_projections._kl_refine`'s
        buckets) over the capped rows: for each one's ``r`` its bucket ``k``, into
        ``acc[0, k]`` its cap and (``k ≥ 1``) into ``acc[1, k]`` ``exp(p_{k−1} + log z)``
        (below its cap), both in fixed point at ``2^e``; ``counts[k]`` += the ``r``
        strictly inside ``(a, b)`` and strictly between pivots ``k − 1`` and ``k``."""
        sacc = cuda.shared.array((2, 2 * 129), types.uint32)  # (r, k) at r·129 + k
        scnt = cuda.shared.array((2, 129), types.uint32)
        tid = cuda.threadIdx.x
        zero_words(sacc)
        zero_words(scnt)
        cuda.syncthreads()
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            c = cap_of(caps, cap, i)
            x = lz[i]
            if not (c > 0.0 and x > -math.inf and c < math.inf):
                continue
            r = log_ratio(lz, caps, log_cap, i)
            k = pivots_below(piv, P, r)
            if a < r and r < b and not (k < P and piv[k] == r):
                add_words(scnt, k, 1)
            add_words(sacc, k, rint(math.ldexp(c, e)))
            if k > 0:
                add_words(sacc, 129 + k, rint(math.ldexp(dexp(piv[k - 1] + x), e)))
        cuda.syncthreads()
        for t in range(tid, P + 1, cuda.blockDim.x):
            for r_ in range(2):
                held = joined(sacc, r_ * 129 + t)
                if held != 0:
                    cuda.atomic.add(acc, (r_, t), held)
            held = joined(scnt, t)
            if held != 0:
                cuda.atomic.add(counts, t, held)

    @cuda.jit
    def kl_sample(lz, caps, cap, log_cap, a, b, stride_, thr, count, keys,
                  vals):  # pragma: no cover - device code
        """Every ``stride_``-th capped row's ``r`` strictly inside ``(a, b)`` whose
        :func:`sample_key` is at most ``thr``, appended as :func:`eu_sample` appends."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        m = (lz.shape[0] + stride_ - 1) // stride_
        for j in range(start, m, stride):
            i = j * stride_
            c = cap_of(caps, cap, i)
            x = lz[i]
            if not (c > 0.0 and x > -math.inf and c < math.inf):
                continue
            r = log_ratio(lz, caps, log_cap, i)
            if a < r and r < b:
                key = sample_key(i, 0)
                if key <= thr:
                    slot = cuda.atomic.add(count, 0, 1)
                    if slot < keys.shape[0]:
                        keys[slot] = key
                        vals[slot] = r

    @cuda.jit
    def kl_weights(lz, caps, cap, log_cap, left, log_c_rel, top, w, terms,
                   ext):  # pragma: no cover - device code
        """``w = cap`` on the capped set ``r ≤ left`` and where ``t = log_c_rel + (log z
        − top)`` reaches ``log cap``, else ``min(cap, exp t)``; 0 where ``cap = 0`` or
        ``log z = −inf`` (:func:`oracleboost.optim.row_projections._kl_weights`);
        ``terms = (w, w [r > left])`` folded into ``ext[0:2]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            c = cap_of(caps, cap, i)
            x = lz[i]
            wr, free = 0.0, 0.0
            if c > 0.0 and x > -math.inf:
                r = log_ratio(lz, caps, log_cap, i)
                lc = dlog(c) if caps.shape[0] > 0 else log_cap
                t = log_c_rel + (x - top)
                if r <= left:
                    wr = c
                elif t < lc:
                    e_ = dexp(t)
                    wr = e_ if e_ < c else c
                else:
                    wr = c
                free = wr if r > left else 0.0
            w[i] = wr
            terms[0, i] = wr
            terms[1, i] = free
            see(mine, 0, wr)
            see(mine, 1, free)
        publish(ext, mine, 2)

    @cuda.jit
    def support_caps(lz, caps, cap, w):  # pragma: no cover - device code
        """``w = cap`` where ``log z > −inf``, else 0."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, lz.shape[0], stride):
            w[i] = cap_of(caps, cap, i) if lz[i] > -math.inf else 0.0

    # -- a finite class's columns (LinearOracle, MatrixOracle) and the margin booster ----
    @cuda.jit
    def column_sums(A, r, k, j0, e, out):  # pragma: no cover - device code
        """``out[j] += Σ_i round((A[i, j] · (r_i · 2^-k)) · 2^e[j])`` for the columns
        ``j0 … j0 + 127`` (fixed point at each column's scale; a block adds its rows in
        shared memory, then once into ``out``: integers, any order)."""
        sacc = cuda.shared.array((2, 128), types.uint32)
        tid = cuda.threadIdx.x
        J = A.shape[1]
        width = smaller(128, J - j0)
        zero_words(sacc)
        cuda.syncthreads()
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, A.shape[0], stride):
            ri = math.ldexp(r[i], -k)
            for c in range(width):
                j = j0 + c
                add_words(sacc, c, rint(math.ldexp(A[i, j] * ri, int(e[j]))))
        cuda.syncthreads()
        for t in range(tid, width, cuda.blockDim.x):
            held = joined(sacc, t)
            if held != 0:
                cuda.atomic.add(out, j0 + t, held)

    @cuda.jit
    def rows_times(A, w, out):  # pragma: no cover - device code
        """``out[i] = Σ_j A[i, j] w[j]``, each row's sum over the columns in order
        (:func:`oracleboost.oracles._column_products.times`: the CPU's bits)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, A.shape[0], stride):
            acc = 0.0
            for j in range(A.shape[1]):
                acc += A[i, j] * w[j]
            out[i] = acc

    @cuda.jit
    def row_norms(A, extra, peak, out):  # pragma: no cover - device code
        """``out[i] = √(Σ_j (A[i, j] / peak)² + extra / peak / peak)`` (``peak = 1``: the
        plain norms), each row's squares added in column order."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        scaled_ = peak != 1.0
        for i in range(start, A.shape[0], stride):
            acc = 0.0
            for j in range(A.shape[1]):
                x = A[i, j] / peak if scaled_ else A[i, j]
                acc += x * x
            out[i] = math.sqrt(acc + (extra / peak / peak if scaled_ else extra))

    @cuda.jit
    def column_times(A, j, scale, out):  # pragma: no cover - device code
        """``out = scale · A[:, j]``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, A.shape[0], stride):
            out[i] = scale * A[i, j]

    @cuda.jit
    def margin_scores(S, y, has_b, b, scale, out):  # pragma: no cover - device code
        """The binary scores ``Z w = −y (S + b) / scale`` (``has_b`` false: ``−y S /
        scale``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, S.shape[0], stride):
            si = S[i] + b if has_b else S[i]
            out[i] = (-float(y[i]) * si) / scale

    @cuda.jit
    def dual_terms(code, Zw, log_s, s, xi, lp, terms, ext):  # pragma: no cover
        """``xi = Zw``, ``lp = ln φ(−xi) + ln s``, and the terms ``s [xi ≥ 0]``; the
        extremes of ``lp`` folded into ``ext[0]``, of ``xi`` into ``ext[1]``, of the
        terms into ``ext[2]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, Zw.shape[0], stride):
            x = Zw[i]
            xi[i] = x
            v = log_phi(code, -x) + log_s[i]
            lp[i] = v
            bad = s[i] if x >= 0.0 else 0.0
            terms[i] = bad
            see(mine, 0, v)
            see(mine, 1, x)
            see(mine, 2, bad)
        publish(ext, mine, 3)

    @cuda.jit
    def first_at(x, value, out):  # pragma: no cover - device code
        """``out[0] = min {i : x_i = value}`` (``out[0]`` starts at ``len(x)``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            if x[i] == value:
                cuda.atomic.min(out, 0, i)

    @cuda.jit
    def momentum(Zw, Zg, Zz, beta, theta, g, w):  # pragma: no cover - device code
        """Algorithm 2's scores updated by one row: ``g = β (Zg + Zz)`` (``Zg`` of length
        0: ``β (0 + Zz)``), ``w = Zw − θ (g + Zz)``
        (:func:`oracleboost.optim.margin_passes._momentum`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        has_g = Zg.shape[0] > 0
        for i in range(start, Zz.shape[0], stride):
            z = Zz[i]
            gi = beta * ((Zg[i] if has_g else 0.0) + z)
            g[i] = gi
            w[i] = Zw[i] - theta * (gi + z)

    @cuda.jit
    def chunk_sums(q, chunk, e, out):  # pragma: no cover - device code
        """``out[c] += Σ round(q_i · 2^e)`` over the rows of chunk ``c`` (``chunk`` rows
        each): a row's thread adds its term to its chunk's integer (any order)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, q.shape[0], stride):
            v = rint(math.ldexp(q[i], e))
            if v != 0:
                cuda.atomic.add(out, i // chunk, v)

    @cuda.jit
    def negated_labels(q, y, r):  # pragma: no cover - device code
        """The binary query ``r = −y q``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, q.shape[0], stride):
            r[i] = -float(y[i]) * q[i]

    @cuda.jit
    def dual_q(code, xi, y, log_s, log_dpsi, q, r, ext):  # pragma: no cover
        """``q = exp(ln(−φ'(−xi)) + ln s − ln ℓ'(ψ))`` and the binary query ``r = −y q``;
        the extremes of ``q`` folded into ``ext[0]``, of ``r`` into ``ext[1]``."""
        mine = cuda.local.array((3, max_channels), types.float64)
        begin(mine)
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, xi.shape[0], stride):
            qi = dexp((log_neg_dphi(code, -xi[i]) + log_s[i]) - log_dpsi)
            q[i] = qi
            ri = -float(y[i]) * qi
            r[i] = ri
            see(mine, 0, qi)
            see(mine, 1, ri)
        publish(ext, mine, 2)

    @cuda.jit
    def stump_outputs(codes, feature, t, left, right, out):  # pragma: no cover
        """A stump's outputs on the training rows: ``right`` where ``codes[feature] >
        t``, ``left`` elsewhere (``feature < 0``: the constant ``right``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            h = right
            if feature >= 0 and codes[feature, i] <= t:
                h = left
            out[i] = h

    kernels = (fold, start_query, start_columns, lsq_start, settle, fill, logs, scaled,
               quotient, weighted_labels, entropy_step, logits, exps, entropy_terms, normalised,
               signed_terms, step, exponential_step, two_value_terms, risk_terms, stump_outputs,
               ldexps, products, squared_step, oriented, risk_logits,
               line_rho, line_delta, line_slope, class_terms, error_terms,
               loss_terms, regression_descent, margin_descent, combined, residual_terms,
               products_of,
               mirror_step, log_flags, stump_scores, stump_round, non_finite, eu_stats,
               eu_gather, take, eu_refine, eu_sample, eu_residual, eu_weights, group_caps,
               above, kl_cap_stats, kl_gather, kl_take, shifted_exps, uncapped_logs,
               finite_part, kl_refine, kl_sample, kl_weights, support_caps, column_sums,
               rows_times, row_norms, column_times, margin_scores, dual_terms, dual_q,
               negated_labels, first_at, momentum, chunk_sums)
    # the device functions too, for the other kernel factories (:mod:`.stump_kernels`)
    return SimpleNamespace(**{k.__name__: counted(k) for k in kernels}, rint=rint,
                           exponent=exponent, begin=begin, see=see, publish=publish,
                           larger=larger, smaller=smaller, ldexp=ldexp,
                           low_word=low_word, high_word=high_word, joined=joined)
