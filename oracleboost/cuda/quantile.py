"""The device twins of the weighted quantile's passes (:mod:`oracleboost.rows.quantile`):
part of :data:`oracleboost.cuda.stages.TWINS`.

The client side is the CPU's (:func:`~oracleboost.rows.quantile.weighted_quantile`): it
narrows the keys in play by passes that bring back each bin's mass and its smallest and
largest key.  Here a pass is one kernel: each row's order-preserving int64 key from its
float's bits, its bin, the bin's mass as an int64 sum of the weights rounded to fixed
point (:mod:`oracleboost.rows.fixed_point`, the scale of the largest weight) and its
extremes by integer atomics: exact in any order, so the bits do not depend on the
launch.  The masses equal the CPU's lane sums to rounding; the bin chosen, and so the
quantile, is the CPU's unless the running mass meets the target within rounding.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost.cuda.device import counted, cuda_module, fetch, upload
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed
from oracleboost.rows.quantile import float_key

if TYPE_CHECKING:
    from oracleboost.cuda.blocks import DeviceBlocks

__all__ = ["QUANTILE_TWINS"]

#: ``numba.cuda``, set by :func:`_kernels` (a module global: the simulator swaps a
#: kernel's module global ``cuda`` for its own around a launch).
cuda: Any = None

_INT64_MIN = np.iinfo(np.int64).min
_INT64_MAX = np.iinfo(np.int64).max


@functools.cache
def _kernels() -> SimpleNamespace:
    global cuda
    cuda = cuda_module()
    rint = row_kernels().rint

    @cuda.jit(device=True)
    def key(bits):  # pragma: no cover - device code
        """A float's order-preserving int64 key from its bits (−0 and +0: one key)."""
        if bits < 0:
            if bits == -0x7FFFFFFFFFFFFFFF - 1:
                return 0
            return bits ^ 0x7FFFFFFFFFFFFFFF
        return bits

    @cuda.jit(device=True)
    def bin_of(k, lo_key, shift):  # pragma: no cover - device code
        """``(k − lo_key) >> shift`` for ``k ≥ lo_key`` without overflowing int64 (the
        CPU's unsigned difference): keys of one sign subtract exactly; else the two
        positive parts are shifted apart and their low bits' carry added."""
        if (k >= 0) == (lo_key >= 0):
            return (k - lo_key) >> shift
        m = -lo_key  # (lo_key < 0 ≤ k; a finite value's key is above −2^63)
        mask = (1 << shift) - 1
        return (k >> shift) + (m >> shift) + (((k & mask) + (m & mask)) >> shift)

    @cuda.jit
    def bin_masses(bits, s, e, lo_key, hi_key, shift, mass, kmin,
                   kmax):  # pragma: no cover - device code
        """Each bin's mass ``Σ round(s_i · 2^e)`` (``s`` of length 0: counts) of the keys
        in ``[lo_key, hi_key]``, and its smallest and largest key."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, bits.shape[0], stride):
            k = key(bits[i])
            if k < lo_key or k > hi_key:
                continue
            b = bin_of(k, lo_key, shift)
            cuda.atomic.add(mass, b, rint(math.ldexp(s[i], e)) if weighted else 1)
            cuda.atomic.min(kmin, b, k)
            cuda.atomic.max(kmax, b, k)

    return SimpleNamespace(bin_masses=counted(bin_masses))


def _range_stage(blocks: DeviceBlocks, y: Any) -> tuple[tuple, tuple[int, int]]:
    """The smallest and largest key of ``y``: those of its exact minimum and maximum
    (the keys are in the floats' order)."""
    got = blocks.reduce.tally(y)
    return (), (float_key(float(got.low[0])), float_key(float(got.high[0])))


def _bins_stage(blocks: DeviceBlocks, y: Any, s: Any, *, lo_key: int, hi_key: int,
                shift: int, n_bins: int) -> tuple[tuple, tuple]:
    """``(mass (1, n_bins), kmin, kmax)``: each bin's mass (its weights' fixed-point sum,
    or its count), smallest and largest key."""
    weights = blocks.optional(s)
    e = 0
    if s is not None:
        e = fixed_point_exponent(float(blocks.reduce.maxima(s)[0]), blocks.n)
    sums = upload(np.zeros(n_bins, dtype=np.int64))
    kmin = upload(np.full(n_bins, _INT64_MAX, dtype=np.int64))
    kmax = upload(np.full(n_bins, _INT64_MIN, dtype=np.int64))
    _kernels().bin_masses[blocks.grid](y.view(np.int64), weights, int(e), int(lo_key),
                                       int(hi_key), int(shift), sums, kmin, kmax)
    # (counts are exact integers: the fixed point of unit weights at e = 0)
    masses = from_fixed(fetch(sums), int(e)).reshape(1, n_bins)
    return (), (masses, fetch(kmin), fetch(kmax))


_QUANTILE = "oracleboost.rows.quantile"

#: The twins of :mod:`oracleboost.rows.quantile`'s stages.
QUANTILE_TWINS = {f"{_QUANTILE}._range_stage": _range_stage,
                  f"{_QUANTILE}._bins_stage": _bins_stage}
