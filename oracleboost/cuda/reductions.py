"""Reductions of per-row arrays on the GPU whose results do not depend on the launch.

A GPU adds with atomics in whatever order its threads arrive, so a float sum there
changes from run to run.  :class:`Reductions` makes every sum over rows a fixed-point
sum (:mod:`oracleboost.rows.fixed_point`): the terms' largest magnitude first (an exact
maximum), the scale ``2^e`` from it and the number of rows, each term rounded once to an
int64 on that scale, the integers added exactly; one int64 a sum comes back and is
scaled to a float64.  Extremes (minima, maxima) are exact in any order.  So any launch
shape, and any run, gives the same bits.  The scale is made on the device from the
folded maximum and never crosses the bus: a stage's reduction is two launches and one
copy back, whatever its channels.

The cost against a float sum: each term is within ``2^-e / 2`` of its value (about
``2^-52`` of the largest term at a thousand rows, ``2^-62 n`` of it in general), and the
sum, exact on the integers, is rounded once to float64 at the end.  A term below half a
step counts as 0, where a float sum keeps it (and its effect on such a sum is below the
sum's own rounding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.cuda.device import fetch, upload
from oracleboost.cuda.row_kernels import MAX_CHANNELS, row_kernels
from oracleboost.rows.fixed_point import from_fixed

__all__ = ["Reductions", "Tallied"]


@dataclass(frozen=True)
class Tallied:
    """A stage's channels reduced on the device (:meth:`Reductions.settle`): each one's
    ``max |x|`` (``inf`` if a term is NaN or infinite), ``min`` and ``max`` (NaN passed
    over; ``inf`` and ``−inf`` for no rows), and the sums asked for (NaN for the
    others), as float64 arrays of one entry a channel."""

    peak: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sums: np.ndarray


class Reductions:
    """Exact reductions over the rows of ``(k, n)`` device arrays (a row a channel),
    launched on ``grid = (blocks, threads)``: a stage's channels come back together.

    A stage's reduction is two launches and one copy back, whatever its channels: its
    kernel (or :meth:`tally`'s ``fold``) *folds* each channel's extremes into a buffer
    on the device, then ``settle`` sums the channels asked for, each on the fixed-point
    scale of its own ``max |x|`` (read on the device: the scale never crosses the bus),
    and its last block writes every channel's extremes and sums into one buffer, copied
    back once, and resets the fold buffers for the next stage.  (Two launches, because a
    sum's scale needs the extremes of every row before its first term is rounded.)

    Parameters
    ----------
    cuda : module
        ``numba.cuda`` (:func:`oracleboost.cuda.device.cuda_module`).
    grid : (int, int)
        Blocks and threads a block of every launch; the results do not depend on it.
    """

    def __init__(self, cuda: Any, grid: tuple[int, int]) -> None:
        self.cuda = cuda
        self.grid = grid
        empty = np.zeros((MAX_CHANNELS, 3))
        empty[:, 1], empty[:, 2] = math.inf, -math.inf
        #: the channels' folded ``(max |x|, min, max)``, reset by every settle
        self.ext = upload(empty)
        self._acc = upload(np.zeros(MAX_CHANNELS, dtype=np.int64))
        self._count = upload(np.zeros(1, dtype=np.int64))
        self._out = cuda.device_array((MAX_CHANNELS, 5), dtype=np.int64)
        #: the last settle's channels' ``max |x|`` and fixed-point exponents, on the
        #: device (a kernel after it reads its scales there)
        self.peaks = self._out.view(np.float64)[:, 0]
        self.exponents = self._out[:, 4]

    def settle(self, values: Any, k: int, summed: tuple[int, ...] = (),
               n: int | None = None, *, read: bool = True) -> Tallied | None:
        """After a kernel folded channels ``0:k`` into :attr:`ext`: the fixed-point sums
        of the rows ``summed`` of ``values`` (:func:`~oracleboost.rows.fixed_point.
        fixed_point_exponent` of each one's ``max |x|`` and ``n``, the number of rows by
        default), and every channel's extremes.  A summed channel holding an infinity or
        a NaN has no fixed-point scale: its sum is then made on the host from a copy
        (``±inf`` or NaN, whatever the order; a booster's monitors stop the fit on it).

        ``read=False``: nothing is copied back (None); the results stay in
        :attr:`peaks` and :attr:`exponents` for the kernels after it."""
        values = _channels(values)
        if not 1 <= k <= MAX_CHANNELS or any(c >= min(k, values.shape[0]) for c in summed):
            raise ValueError(f"settle takes 1 to {MAX_CHANNELS} channels, sums among the "
                             f"rows of values; got k={k}, summed={summed}")
        n = values.shape[1] if n is None else n
        mask = sum(1 << c for c in summed)
        row_kernels().settle[self.grid](values, k, mask, max(1, n), self.ext, self._acc,
                                        self._count, self._out,
                                        self._out.view(np.float64))
        if not read:
            return None
        host = fetch(self._out)[:k]
        extremes = host.view(np.float64)[:, :3]
        sums = np.full(k, math.nan)
        for c in summed:
            if math.isfinite(extremes[c, 0]):
                sums[c] = float(from_fixed(host[c, 3], int(host[c, 4])))
            else:
                sums[c] = fetch(values[c]).sum()
        return Tallied(extremes[:, 0].copy(), extremes[:, 1].copy(), extremes[:, 2].copy(),
                       sums)

    def tally(self, values: Any, summed: tuple[int, ...] = ()) -> Tallied:
        """Every channel of ``values`` folded, then settled (:meth:`settle`)."""
        values = _channels(values)
        row_kernels().fold[self.grid](values, self.ext)
        return self.settle(values, values.shape[0], summed)

    def maxima(self, values: Any) -> np.ndarray:
        """``max`` of each channel (``−inf`` for no rows; NaN passed over)."""
        return self.tally(values).high

    def minima(self, values: Any) -> np.ndarray:
        """``min`` of each channel (``inf`` for no rows; NaN passed over)."""
        return self.tally(values).low

    def abs_max(self, values: Any) -> np.ndarray:
        """``max |·|`` of each channel (0 for no rows; ``inf`` if a term is NaN)."""
        return self.tally(values).peak

    def sums(self, values: Any) -> np.ndarray:
        """``Σ`` of each channel, in fixed point (the module's scale for each channel:
        :func:`~oracleboost.rows.fixed_point.fixed_point_exponent` of its largest
        ``|term|`` and the number of rows)."""
        values = _channels(values)
        return self.tally(values, tuple(range(values.shape[0]))).sums


def _channels(values: Any) -> Any:
    """``values`` as ``(k, n)``: a per-row array of shape (n,) is one channel."""
    return values.reshape(1, values.shape[0]) if values.ndim == 1 else values
