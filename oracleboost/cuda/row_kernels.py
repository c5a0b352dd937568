"""The GPU's row kernels: the booster's per-row passes and their exact reductions.

Compiled the first time they are asked for (:func:`row_kernels`); importing this module
imports nothing of ``numba.cuda``.  Every kernel strides over the rows with the whole
grid (``cuda.grid(1)``, ``cuda.gridsize(1)``), so any launch shape covers every row once.

Two kinds:

* **Elementwise** kernels (a row's value depends on its row alone, so any launch gives
  the same bits): the margin losses' logits (``logits``; the loss by its code,
  :data:`LOSS_CODES`), the shifted exps, the entropy's terms, the normalised query, the
  step on the margins with each row's wrong mass, the terms of a column's signed sums,
  a product by a number, a logarithm, a fill.
* **Reductions**, whose order does not change their result: exact extremes
  (``maxima``, ``minima``, ``abs_max``: a thread's running extreme, then one atomic a
  thread) and fixed-point sums (``fixed_sums``: each term rounded to an int64 on the
  scale ``2^e`` of :func:`oracleboost.rows.fixed_point.fixed_point_exponent`, the
  integers added with atomics).  ``2^e`` is applied as two factors ``2^⌈e/2⌉ 2^⌊e/2⌋``
  (``e`` may pass 1023, beyond a float64's powers of two), which is exact: for ``e ≥ 0``
  both factors are at least 1 and the product stays below ``2^62``; for ``e < 0`` a
  product that leaves the normal range after the first factor is below ``2^-1022`` after
  the second, and rounds to 0 either way.

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

__all__ = ["EXP_MAX", "LOSS_CODES", "row_kernels"]

#: ``numba.cuda``, set by :func:`row_kernels` (a module global: see
#: :mod:`.stump_kernels`, whose kernels name it the same way for the same reason).
cuda: Any = None

#: Above this ``exp`` is ``inf`` (and the simulator's ``math.exp`` would raise).
EXP_MAX = 709.782712893384

#: The margin losses whose logits the device computes, by name: their code in the
#: kernels.  (Exponential ``φ(m) = e^{−m}``; logistic ``φ(m) = ln(1 + e^{−m})``.)
LOSS_CODES: dict[str, int] = {"exponential": 0, "logistic": 1}


@functools.cache
def row_kernels() -> SimpleNamespace:
    """The row kernels (compiled on first launch), as a namespace."""
    global cuda
    cuda = cuda_module()
    exp_max = EXP_MAX

    @cuda.jit(device=True)
    def dexp(x):  # pragma: no cover - device code
        """``e^x``, ``inf`` above :data:`EXP_MAX`."""
        return math.inf if x > exp_max else math.exp(x)

    @cuda.jit(device=True)
    def dlog(x):  # pragma: no cover - device code
        """``ln x`` for ``x ≥ 0``, ``−inf`` at 0 (the simulator's ``math.log`` raises)."""
        return -math.inf if x == 0.0 else math.log(x)

    @cuda.jit(device=True)
    def softplus(x):  # pragma: no cover - device code
        """``ln(1 + e^x) = max(x, 0) + log1p(e^{−|x|})``
        (:func:`oracleboost._numerics.softplus`)."""
        return max(x, 0.0) + math.log1p(math.exp(-abs(x)))

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

    # -- reductions -------------------------------------------------------------------
    @cuda.jit
    def maxima(values, out):  # pragma: no cover - device code
        """``out[c] = max(out[c], max_i values[c, i])`` (NaN passed over)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for c in range(values.shape[0]):
            mine = -math.inf
            for i in range(start, values.shape[1], stride):
                x = values[c, i]
                if x > mine:
                    mine = x
            cuda.atomic.max(out, c, mine)

    @cuda.jit
    def minima(values, out):  # pragma: no cover - device code
        """``out[c] = min(out[c], min_i values[c, i])`` (NaN passed over)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for c in range(values.shape[0]):
            mine = math.inf
            for i in range(start, values.shape[1], stride):
                x = values[c, i]
                if x < mine:
                    mine = x
            cuda.atomic.min(out, c, mine)

    @cuda.jit
    def abs_max(values, out):  # pragma: no cover - device code
        """``out[c] = max(out[c], max_i |values[c, i]|)``, a NaN counted as ``inf`` (so
        that a caller sees a non-finite term)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for c in range(values.shape[0]):
            mine = 0.0
            for i in range(start, values.shape[1], stride):
                x = values[c, i]
                a = math.inf if x != x else abs(x)
                if a > mine:
                    mine = a
            cuda.atomic.max(out, c, mine)

    @cuda.jit
    def fixed_sums(values, low, high, out):  # pragma: no cover - device code
        """``out[c] += Σ_i rint(values[c, i] · low[c] · high[c])`` in int64: each term
        rounded once, then added exactly (a thread's running sum, then one atomic)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for c in range(values.shape[0]):
            mine = 0
            f0, f1 = low[c], high[c]
            for i in range(start, values.shape[1], stride):
                mine += rint((values[c, i] * f0) * f1)
            cuda.atomic.add(out, c, mine)

    # -- elementwise ------------------------------------------------------------------
    @cuda.jit
    def to_fixed(values, low, high, out):  # pragma: no cover - device code
        """``out = rint(values · low · high)`` in int64 (a query's fixed-point image,
        :func:`oracleboost.rows.fixed_point.to_fixed` with ``2^e = low · high``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, values.shape[0], stride):
            out[i] = rint((values[i] * low) * high)

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
    def signed_terms(a, y, w, norm, terms):  # pragma: no cover - device code
        """With ``v = y a / norm`` (``y`` of length 0: the label and weight from the
        query ``w``, :func:`oracleboost.rows.column_kernels._label_and_weight`):
        ``terms = (w v, w (1 + v), w (1 − v), v)``."""
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
            terms[0, i] = wi * v
            terms[1, i] = wi * (1.0 + v)
            terms[2, i] = wi * (1.0 - v)
            terms[3, i] = v

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
    def step(m, a, y, c, s, out, wrong):  # pragma: no cover - device code
        """``out = m + y (c a)`` (the CPU's product: the margins equal the CPU's bit for
        bit for the same ``c``) and ``wrong = s [out < 0 or (out = 0 and y > 0)]``
        (``s`` of length 0: unit weights)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, m.shape[0], stride):
            v = m[i] + y[i] * (c * a[i])
            out[i] = v
            bad = v < 0.0 or (v == 0.0 and y[i] > 0)
            weight = s[i] if weighted else 1.0
            wrong[i] = weight if bad else 0.0

    @cuda.jit
    def stump_outputs(codes, feature, t, s, out):  # pragma: no cover - device code
        """A ±1 stump's outputs on the training rows: ``s`` where ``codes[feature] > t``,
        ``−s`` elsewhere (``feature < 0``: the constant ``s``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            h = s
            if feature >= 0 and codes[feature, i] <= t:
                h = -s
            out[i] = h

    kernels = (maxima, minima, abs_max, fixed_sums, to_fixed, fill, logs, scaled, quotient,
               weighted_labels, entropy_step, logits, exps, entropy_terms, normalised,
               signed_terms, step, two_value_terms, risk_terms, stump_outputs)
    return SimpleNamespace(**{k.__name__: counted(k) for k in kernels})
