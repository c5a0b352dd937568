"""Stochastic boosting's row draws on the GPU: the device twin of
:func:`oracleboost.rows.subsample._kept` (part of :data:`oracleboost.cuda.stages.TWINS`).

Row ``i`` of round ``t`` is kept when ``u_i < subsample``, ``u_i`` made from word ``i`` of
NumPy's Philox-4×64 stream keyed by ``(seed, t)`` (:func:`oracleboost.rows.subsample.
row_key`, made on the host: two numbers go to the device).  The stream is
counter-based, so each thread makes the four words of its own counter ``c + 1``
(NumPy's counter is incremented before each block of four words), for rows ``4c .. 4c +
3``: the rows kept are the CPU's, bit for bit, with nothing uploaded but the key.

The 64-bit products Philox needs are made from 32-bit halves, so no operation passes
2^64 (the simulator's NumPy integers would warn where a GPU wraps), and every value is
typed ``uint64`` (numba unifies ``uint64`` with ``int64`` as a float).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost.cuda.device import counted, cuda_module
from oracleboost.rows.partitioned import NotDistributedError
from oracleboost.rows.subsample import row_key

if TYPE_CHECKING:
    from oracleboost.cuda.blocks import DeviceBlocks

__all__ = ["DRAW_TWINS"]

#: ``numba.cuda``, set by :func:`_kernels` (a module global: the simulator swaps a
#: kernel's module global ``cuda`` for its own around a launch).
cuda: Any = None


@functools.cache
def _kernels() -> SimpleNamespace:
    global cuda
    cuda = cuda_module()
    u64 = np.uint64
    low = u64(0xFFFFFFFF)
    s32, s11 = u64(32), u64(11)
    m0, m1 = u64(0xD2E7470EE14C6C93), u64(0xCA5A826395121157)  # Philox's multipliers
    w0, w1 = u64(0x9E3779B97F4A7C15), u64(0xBB67AE8584CAA73B)  # its key's increments
    one = u64(1)

    @cuda.jit(device=True)
    def mulhilo(a, b):  # pragma: no cover - device code
        """The high and low words of the 128-bit ``a · b``, from 32-bit halves."""
        a0, a1, b0, b1 = a & low, a >> s32, b & low, b >> s32
        p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
        mid = (p00 >> s32) + (p01 & low) + (p10 & low)  # below 3 · 2^32
        lo = ((mid & low) << s32) | (p00 & low)
        hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
        return hi, lo

    @cuda.jit(device=True)
    def add(a, b):  # pragma: no cover - device code
        """``a + b`` modulo 2^64, from 32-bit halves."""
        lo = (a & low) + (b & low)
        hi = (a >> s32) + (b >> s32) + (lo >> s32)
        return ((hi & low) << s32) | (lo & low)

    @cuda.jit
    def kept(key0, key1, fraction, a, out):  # pragma: no cover - device code
        """``out[i] = a[i]`` (a row of K) where row ``i`` is kept, 0 elsewhere (``a`` of
        no rows: the 0/1 mask itself); a thread makes Philox-4×64-10's four words of a
        counter and the rows they draw."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        n = out.shape[0]
        mask = a.shape[0] == 0
        for c in range(start, (n + 3) // 4, stride):
            x0, x1, x2, x3 = u64(c) + one, u64(0), u64(0), u64(0)
            k0, k1 = key0, key1
            for r in range(10):
                if r > 0:
                    k0, k1 = add(k0, w0), add(k1, w1)
                hi0, lo0 = mulhilo(m0, x0)
                hi1, lo1 = mulhilo(m1, x2)
                x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
            for j in range(4):
                i = 4 * c + j
                if i < n:
                    word = x0 if j == 0 else (x1 if j == 1 else (x2 if j == 2 else x3))
                    keep = float(word >> s11) * 2.0**-53 < fraction
                    for k in range(out.shape[1]):
                        out[i, k] = (1.0 if mask else a[i, k]) if keep else 0.0

    return SimpleNamespace(kept=counted(kept))


def _kept(blocks: DeviceBlocks, start: Any, *a: Any, seed: int, round: int,
          fraction: float) -> tuple[tuple, None]:
    """The 0/1 mask of round ``round``'s rows, or ``a`` (rows of shape (n,) or (n, K))
    with the rows out of the sample set to 0."""
    if not isinstance(start, int | np.integer) or start != 0:
        raise NotDistributedError("the GPU's rows are one partition, starting at row 0")
    shape = blocks.n if not a else a[0].shape
    out = blocks.empty(shape)
    rows = (a[0] if a[0].ndim == 2 else a[0].reshape(blocks.n, 1)) if a else \
        blocks.empty((0, 1))
    key = row_key(seed, round)
    _kernels().kept[blocks.grid](np.uint64(key[0]), np.uint64(key[1]), float(fraction),
                                 rows, out if out.ndim == 2 else out.reshape(blocks.n, 1))
    return (out,), None


#: The twins of :mod:`oracleboost.rows.subsample`'s stages.
DRAW_TWINS = {"oracleboost.rows.subsample._kept": _kept}
