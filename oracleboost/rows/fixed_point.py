"""Fixed-point sums: float64 values as int64 multiples of a power of two.

A sum of floats depends on the order of its additions; a sum of integers does not.  A
GPU adds a histogram's entries with atomic additions in whatever order its threads
arrive, so its float sums differ from run to run.  Rounded first to integers on a common
scale ``2^-e`` (XGBoost's "pre-rounding" of gradients), the same values give the same
sum in any order, bit for bit, as long as no sum overflows: every value ``v`` becomes
``round(v · 2^e)``, and ``e`` is chosen from the largest ``|v|`` and the number of terms
so that any sum of them stays below ``2^62`` in magnitude (:func:`fixed_point_exponent`).
The headroom below ``2^63`` leaves room for a difference of two such sums (a stump's
edge ``Σ_right r − Σ_left r``) in int64 too.

Precision.  The rounding step is ``2^-e``: a value below ``2^-e / 2`` in magnitude rounds
to 0, and every value is within ``2^-e / 2`` of its fixed-point image.  With ``n`` values
of at most ``M`` in magnitude, ``2^-e`` is about ``n M / 2^62``: about ``2^-52 M`` at
``n = 1024``.  Weights spread over more than that ratio lose their smallest: a weight
``1e-300`` beside one of ``1e300`` becomes 0 (the CPU's float sums keep it, and its
effect on a sum is below the sum's own rounding there).  That is what "equal to
rounding" means for the fixed-point sums: each term is rounded once, to ``2^-e``, and
then the sums are exact.

Pure NumPy: the GPU backend (:mod:`oracleboost.cuda`) makes its integers on the device
with the same formula, and tests compare the two.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["HEADROOM", "MAX_TERMS", "fixed_point_exponent", "to_fixed", "from_fixed"]

#: Every sum of the chosen number of fixed-point values stays below this in magnitude.
HEADROOM = 1 << 62

#: The most terms :func:`fixed_point_exponent` takes (2^61: then each term is at most 1,
#: and the sum of 2^61 of them is 2^61, below the headroom).
MAX_TERMS = 1 << 61


def _check_count(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_TERMS:
        raise ValueError(f"n must be an int in [1, 2**61]; got {n!r}")
    return int(n)


def _scaled(max_abs: float, e: int) -> int:
    """``round(max_abs · 2^e)`` (half to even) as a Python int, exact: ``ldexp`` by a
    power of two is exact unless the result is subnormal (then far below 1/2, whose
    rounding to 0 is the same either way), and a float64 converts to int exactly."""
    return int(np.rint(np.ldexp(max_abs, e)))


def fixed_point_exponent(max_abs: float, n: int) -> int:
    """The largest ``e`` such that any sum of ``n`` values ``round(v · 2^e)``,
    ``|v| <= max_abs``, stays below ``2^62`` in magnitude.

    Rounding is monotone, so the largest term is ``M = round(max_abs · 2^e)``, and the
    condition is ``n · M < 2^62``; the largest such ``e`` keeps the most precision: one
    more bit and some sum of ``n`` terms could reach ``2^62``.

    Parameters
    ----------
    max_abs : float
        The largest magnitude of the values (finite, ``>= 0``; subnormal and huge values
        are fine: ``e`` is then far above 1023 or negative, which is why the scaling is
        always ``np.ldexp``, never ``2.0 ** e``).
    n : int
        The most terms of a sum, ``1 <= n <= 2^61``.

    Returns
    -------
    e : int
        ``0`` when ``max_abs == 0`` (every value is then 0, on any scale).

    Notes
    -----
    A value below ``2^-e / 2`` in magnitude rounds to 0: beside a largest value of
    ``1e300``, a value ``1e-300`` is lost, where a float sum keeps it (it changes no
    float sum that also holds the large one).  Each value is rounded once, to the nearest
    multiple of ``2^-e``; the sums of the rounded values are exact, so their order does
    not matter.

    Examples
    --------
    >>> from oracleboost.rows.fixed_point import fixed_point_exponent
    >>> fixed_point_exponent(1.0, 1)  # 2^61 < 2^62; 2^62 is not below it
    61
    >>> fixed_point_exponent(1.0, 1024)
    51
    """
    n = _check_count(n)
    m = float(max_abs)
    if not (math.isfinite(m) and m >= 0.0):
        raise ValueError(f"max_abs must be finite and >= 0; got {max_abs!r}")
    if m == 0.0:
        return 0
    # max_abs = f · 2^k with 0.5 <= f < 1, so max_abs · 2^e < 2^(k + e); a first guess
    # from n · 2^(k + e) <= 2^62, then moved by exact integer checks.
    _, k = math.frexp(m)
    e = 62 - k - (n - 1).bit_length()
    while n * _scaled(m, e) >= HEADROOM:
        e -= 1
    while n * _scaled(m, e + 1) < HEADROOM:
        e += 1
    return e


def to_fixed(v: ArrayLike, e: int) -> np.ndarray:
    """``round(v · 2^e)`` as int64, half to even (``np.rint`` of ``np.ldexp(v, e)``,
    whose scaling by a power of two is exact).

    Parameters
    ----------
    v : array-like of float
        Finite values; ``e`` from :func:`fixed_point_exponent` of a bound on ``|v|``.
    e : int

    Returns
    -------
    ndarray of int64, of ``v``'s shape

    Raises
    ------
    ValueError
        ``v`` holds a NaN or an infinity.
    OverflowError
        A value does not fit in int64 on this scale (``|v| · 2^e >= 2^63``): ``e`` was
        not made from a bound on ``|v|``.
    """
    v = np.asarray(v, dtype=np.float64)
    if not np.isfinite(v).all():
        raise ValueError("to_fixed takes finite values; v holds a NaN or an infinity")
    with np.errstate(over="ignore"):  # an overflow is refused just below, by name
        scaled = np.rint(np.ldexp(v, int(e)))
    if scaled.size and not (np.abs(scaled) < 2.0**63).all():
        raise OverflowError(
            f"to_fixed: a value of magnitude {np.abs(v).max():.6g} does not fit in int64 at "
            f"scale 2^{int(e)}; take e from fixed_point_exponent of the largest |v|")
    return scaled.astype(np.int64)


def from_fixed(s: ArrayLike, e: int) -> np.ndarray:
    """The float64 value ``s · 2^-e`` of fixed-point integers ``s``.

    Exact while ``|s| < 2^53`` (every such integer is a float64, and scaling by a power of
    two is exact unless the result leaves float64's normal range); above, ``s`` is first
    rounded to float64's 53 bits, half to even: a relative error of at most ``2^-53``.

    Raises
    ------
    OverflowError
        A value exceeds float64's range on this scale (a sum of many values near the
        largest float).
    """
    s = np.asarray(s)
    with np.errstate(over="ignore"):  # refused just below, by name
        out = np.ldexp(s.astype(np.float64), -int(e))
    if not np.isfinite(out).all():
        raise OverflowError(f"from_fixed: a sum at scale 2^{int(e)} exceeds float64's range")
    return out
