"""Reductions of per-row arrays on the GPU whose results do not depend on the launch.

A GPU adds with atomics in whatever order its threads arrive, so a float sum there
changes from run to run.  :class:`Reductions` makes every sum over rows a fixed-point
sum (:mod:`oracleboost.rows.fixed_point`): the terms' largest magnitude first (an exact
maximum), the scale ``2^e`` from it and the number of rows, each term rounded once to an
int64 on that scale, the integers added exactly; one int64 a sum comes back and is
scaled to a float64.  Extremes (minima, maxima) are exact in any order.  So any launch
shape, and any run, gives the same bits.

The cost against a float sum: each term is within ``2^-e / 2`` of its value (about
``2^-52`` of the largest term at a thousand rows, ``2^-62 n`` of it in general), and the
sum, exact on the integers, is rounded once to float64 at the end.  A term below half a
step counts as 0, where a float sum keeps it (and its effect on such a sum is below the
sum's own rounding).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oracleboost.cuda.device import fetch, upload
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed

__all__ = ["Reductions", "scale_factors"]


def scale_factors(e: int) -> tuple[float, float]:
    """``2^e`` as two float64 factors ``(2^⌈e/2⌉, 2^⌊e/2⌋)``, each within float64's
    range for ``|e| ≤ 2046`` (a fixed-point exponent may pass 1023: a scale for subnormal
    terms); their product applied in turn is exact (:mod:`.row_kernels`)."""
    return math.ldexp(1.0, -(-e // 2)), math.ldexp(1.0, e // 2)


class Reductions:
    """Exact reductions over the rows of ``(k, n)`` device arrays (a row a channel),
    launched on ``grid = (blocks, threads)``: ``k`` numbers come back a call.

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

    def _extreme(self, kernel: str, values: Any, start: float) -> np.ndarray:
        values = _channels(values)
        out = upload(np.full(values.shape[0], start))
        getattr(row_kernels(), kernel)[self.grid](values, out)
        return fetch(out)

    def maxima(self, values: Any) -> np.ndarray:
        """``max`` of each channel (``−inf`` for no rows; NaN passed over)."""
        return self._extreme("maxima", values, -math.inf)

    def minima(self, values: Any) -> np.ndarray:
        """``min`` of each channel (``inf`` for no rows; NaN passed over)."""
        return self._extreme("minima", values, math.inf)

    def abs_max(self, values: Any) -> np.ndarray:
        """``max |·|`` of each channel (0 for no rows; ``inf`` if a term is NaN)."""
        return self._extreme("abs_max", values, 0.0)

    def sums(self, values: Any) -> np.ndarray:
        """``Σ`` of each channel, in fixed point (the module's scale for each channel:
        :func:`~oracleboost.rows.fixed_point.fixed_point_exponent` of its largest
        ``|term|`` and the number of rows).

        A channel holding an infinity or a NaN has no fixed-point scale: its sum is
        then made on the host from a copy (it is ``±inf`` or NaN, whatever the order;
        a booster's monitors stop the fit on it)."""
        values = _channels(values)
        k, n = values.shape
        peaks = self.abs_max(values)
        if not np.isfinite(peaks).all():
            return fetch(values).sum(axis=1)
        exponents = [fixed_point_exponent(float(p), max(1, n)) for p in peaks]
        low, high = (np.array(f) for f in zip(*map(scale_factors, exponents), strict=True))
        out = upload(np.zeros(k, dtype=np.int64))
        row_kernels().fixed_sums[self.grid](values, upload(low),
                                            upload(high), out)
        ints = fetch(out)
        return np.array([float(from_fixed(ints[c], exponents[c])) for c in range(k)])

    def fixed(self, values: Any, out: Any) -> int:
        """``values`` (shape (n,), finite) in fixed point into the int64 device array
        ``out``, on the scale of their largest magnitude: returns that exponent ``e``
        (``out = rint(values · 2^e)``, :func:`~oracleboost.rows.fixed_point.to_fixed`'s
        integers).  A NaN or an infinity is refused (``ValueError``)."""
        peak = float(self.abs_max(values)[0])
        if not math.isfinite(peak):
            raise ValueError("the query r must be finite; it holds a NaN or an infinity")
        e = fixed_point_exponent(peak, max(1, values.shape[0]))
        row_kernels().to_fixed[self.grid](values, *scale_factors(e), out)
        return e


def _channels(values: Any) -> Any:
    """``values`` as ``(k, n)``: a per-row array of shape (n,) is one channel."""
    return values.reshape(1, values.shape[0]) if values.ndim == 1 else values
