"""A ±1-label booster's passes over the training rows, by row blocks on threads.

Each function runs a kernel of :mod:`._column_kernels` (or NumPy's ufuncs) on every row
block of :class:`~oracleboost._blocks.RowBlocks` and combines the blocks' small results
in block order: sums left to right, minima and maxima (exact in any order).  A block's
result depends only on its rows, so a fit is bit for bit the same for every ``n_jobs``;
with one block (``n <= block_size``) each function is its kernel on the whole arrays.
"""

from __future__ import annotations

import math

import numpy as np

from .._blocks import RowBlocks, ordered_sum
from ..losses import MarginLoss
from . import _column_kernels as column_kernels

__all__ = ["peak", "signed_sums", "step_margins", "two_value_masses", "dual_weights"]


def peak(blocks: RowBlocks, a: np.ndarray) -> float:
    """``max_i |a_i|``."""
    return max(blocks.map(lambda k, lo, hi: column_kernels.peak(a[lo:hi])))


def signed_sums(blocks: RowBlocks, a: np.ndarray, y: np.ndarray, w: np.ndarray,
                norm: float) -> tuple[float, float, float, float, float, float]:
    """:func:`._column_kernels.signed_sums` by blocks: the three sums in block order,
    the extremes over blocks."""
    parts = blocks.map(lambda k, lo, hi: column_kernels.signed_sums(
        a[lo:hi], y[lo:hi], w[lo:hi], norm))
    if len(parts) == 1:
        return parts[0]
    corr, plus, minus, lo, hi, top = zip(*parts, strict=True)
    return (ordered_sum(corr), ordered_sum(plus), ordered_sum(minus), min(lo), max(hi),
            max(top))


def step_margins(blocks: RowBlocks, m: np.ndarray, a: np.ndarray, y: np.ndarray, c: float,
                 s: np.ndarray, out: np.ndarray) -> tuple[float, float]:
    """:func:`._column_kernels.step_margins` by blocks: ``(min out, Σ s [wrong])``."""
    weighted = s.shape[0] > 0
    parts = blocks.map(lambda k, lo, hi: column_kernels.step_margins(
        m[lo:hi], a[lo:hi], y[lo:hi], c, s[lo:hi] if weighted else s, out[lo:hi]))
    low, wrong = zip(*parts, strict=True)
    return min(low), ordered_sum(wrong)


def two_value_masses(blocks: RowBlocks, a: np.ndarray, y: np.ndarray, w: np.ndarray,
                     norm: float, sign: float, lo: float, hi: float) -> tuple[float, float, int]:
    """:func:`._column_kernels.two_value_masses` by blocks."""
    parts = blocks.map(lambda k, i, j: column_kernels.two_value_masses(
        a[i:j], y[i:j], w[i:j], norm, sign, lo, hi))
    m_lo, m_hi, other = zip(*parts, strict=True)
    return ordered_sum(m_lo), ordered_sum(m_hi), sum(other)


def dual_weights(blocks: RowBlocks, loss: MarginLoss, margins: np.ndarray,
                 log_s: np.ndarray | None, y: np.ndarray,
                 log_mass: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The normalised dual weights ``w ∝ s · (−φ'(margins))`` in log space, the oracle's
    query ``w · y``, the weights' Shannon entropy (Telgarsky 2012, Remark 5) and the
    log-risk ``log(Σ s φ(margins) / Σ s)`` (``log_mass`` is ``log Σ s``).

    Three maps over the blocks, each followed by a reduction:

    1. the logits ``z = log(−φ'(m)) + log s`` and their maximum ``top`` (and, unless
       ``φ = −φ'``, the log-risk terms ``log φ(m) + log s`` and their maximum);
    2. ``w = exp(z − top)`` (NumPy's vectorised ``exp``, in place) and its sum ``total``;
    3. ``w /= total``, ``query = w · y`` and ``Σ w (z − top)``, one compiled pass.

    The entropy ``−Σ w log w = log total − Σ w (z − top)`` reuses the shifted logits;
    for the exponential loss (φ = −φ') the normaliser is the risk itself, so one ``exp``
    a row gives all four.
    """
    n = margins.shape[0]
    z, w, query = np.empty(n), np.empty(n), np.empty(n)
    separate = not loss.phi_is_neg_dphi
    log_phi = np.empty(n) if separate else None

    def logits(k: int, a: int, b: int) -> tuple[float, float]:
        zb = loss.log_neg_dphi(margins[a:b])
        if log_s is not None:
            np.add(zb, log_s[a:b], out=z[a:b])
        else:
            z[a:b] = zb
        if not separate:
            return float(z[a:b].max()), -math.inf
        lp = loss.log_phi(margins[a:b])
        if log_s is not None:
            np.add(lp, log_s[a:b], out=log_phi[a:b])
        else:
            log_phi[a:b] = lp
        return float(z[a:b].max()), float(log_phi[a:b].max())

    tops = blocks.map(logits)
    top = max(t for t, _ in tops)
    top_phi = max(t for _, t in tops)

    def exps(k: int, a: int, b: int) -> tuple[float, float]:
        zb, wb = z[a:b], w[a:b]
        np.subtract(zb, top, out=zb)
        np.exp(zb, out=wb)
        phi_sum = (float(np.exp(log_phi[a:b] - top_phi).sum())
                   if separate and math.isfinite(top_phi) else 0.0)
        return float(wb.sum()), phi_sum

    sums = blocks.map(exps)
    total = ordered_sum([t for t, _ in sums])
    # normalises w in place; a compiled sum, as np.dot's BLAS rounds by CPU
    inner = ordered_sum(blocks.map(lambda k, a, b: column_kernels.normalise(
        w[a:b], z[a:b], y[a:b], total, query[a:b])))
    entropy = math.log(total) - inner
    if not separate:
        log_loss = top + math.log(total) - log_mass
    elif not math.isfinite(top_phi):
        log_loss = top_phi - log_mass  # all -inf (empty sum) or a +inf term
    else:
        log_loss = top_phi + math.log(ordered_sum([p for _, p in sums])) - log_mass
    return w, query, entropy, log_loss
