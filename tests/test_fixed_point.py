"""Fixed-point sums (:mod:`oracleboost.rows.fixed_point`): the scale is the largest that
cannot overflow, sums in any order are equal, and the conversions round as documented."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleboost.rows.fixed_point import (
    HEADROOM,
    fixed_point_exponent,
    from_fixed,
    to_fixed,
)

_finite = st.floats(min_value=0.0, max_value=np.finfo(np.float64).max, allow_nan=False,
                    allow_infinity=False)
_counts = st.integers(min_value=1, max_value=1 << 40)


def _largest_term(max_abs: float, e: int) -> int:
    return int(np.rint(np.ldexp(max_abs, e)))


@settings(max_examples=300, deadline=None)
@given(max_abs=_finite.filter(lambda v: v > 0.0), n=_counts)
def test_the_exponent_is_the_largest_without_overflow(max_abs, n):
    e = fixed_point_exponent(max_abs, n)
    assert n * _largest_term(max_abs, e) < HEADROOM  # n terms of the largest value fit
    assert n * _largest_term(max_abs, e + 1) >= HEADROOM  # one bit more could overflow
    assert _largest_term(max_abs, e) >= 1  # the largest value never rounds to 0


@pytest.mark.parametrize("max_abs", [5e-324, 2.2250738585072014e-308, 1e-300, 1.0, 1e300,
                                     np.finfo(np.float64).max])
@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1 << 20, 1 << 40])
def test_the_extremes_of_the_weights(max_abs, n):
    """Subnormal, huge (e negative) and the largest float, up to 2^40 terms: n copies of
    the extreme value in fixed point, and their sum, stay below 2^62 (no overflow in any
    prefix: every partial sum is at most the whole)."""
    e = fixed_point_exponent(max_abs, n)
    top = to_fixed(np.array([max_abs, -max_abs]), e)
    assert top[0] == -top[1] > 0
    assert n * int(top[0]) < HEADROOM


def test_zero_and_bad_arguments():
    assert fixed_point_exponent(0.0, 10) == 0
    assert to_fixed(np.zeros(3), 0).tolist() == [0, 0, 0]
    for bad in (np.inf, np.nan, -1.0):
        with pytest.raises(ValueError, match="max_abs"):
            fixed_point_exponent(bad, 1)
    for bad in (0, -1, 1 << 62, 2.0, True):
        with pytest.raises(ValueError, match="n must be"):
            fixed_point_exponent(1.0, bad)
    with pytest.raises(ValueError, match="NaN or an infinity"):
        to_fixed([1.0, np.nan], 3)
    with pytest.raises(OverflowError, match="does not fit in int64"):
        to_fixed([4.0], 61)
    with pytest.raises(OverflowError, match="exceeds float64's range"):
        from_fixed(np.array([1 << 62]), -1000)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False,
                              allow_subnormal=True), min_size=1, max_size=60),
    seed=st.integers(0, 2**32 - 1),
)
def test_sums_in_any_order_are_equal(values, seed):
    """The fixed-point sum of any permutation (and any grouping: int64 additions are
    associative while nothing overflows) is the same integer, and it is the exact sum of
    the rounded terms."""
    v = np.array(values)
    e = fixed_point_exponent(float(np.abs(v).max()), v.size)
    q = to_fixed(v, e)
    exact = sum(int(x) for x in q)  # Python's integers: no overflow at all
    assert abs(exact) < HEADROOM
    rng = np.random.default_rng(seed)
    for _ in range(3):
        perm = q[rng.permutation(q.size)]
        assert int(perm.sum()) == exact  # NumPy's pairwise sum, another order
        cut = int(rng.integers(0, q.size + 1))
        assert int(perm[:cut].sum()) + int(perm[cut:].sum()) == exact
    running = np.cumsum(q)  # every prefix of this order also fits
    assert (np.abs(running) < HEADROOM).all()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
                       min_size=1, max_size=40))
def test_the_rounding_is_half_a_step(values):
    """Each value is within half a step ``2^-e / 2`` of its image (checked in exact
    rationals: an image above 2^53 is not exactly a float64)."""
    from fractions import Fraction

    v = np.array(values)
    e = fixed_point_exponent(float(np.abs(v).max()), v.size)
    q = to_fixed(v, e)
    step = Fraction(2) ** -e
    for x, s in zip(v, q, strict=True):
        assert abs(Fraction(float(x)) - int(s) * step) <= step / 2


def test_from_fixed_is_exact_below_2_53_and_rounds_above():
    e = 10
    s = np.array([0, 1, -3, (1 << 53) - 1, -(1 << 53) + 1])
    assert from_fixed(s, e).tolist() == [float(x) / 1024 for x in s.tolist()]
    big = np.array([(1 << 60) + 1])  # not a float64: rounded to 2^60
    assert from_fixed(big, 0)[0] == 2.0**60


def test_a_tiny_weight_beside_a_huge_one_is_lost():
    """The documented precision: 1e-300 beside 1e300 rounds to 0 (the CPU keeps it)."""
    v = np.array([1e300, 1e-300, 1e300])
    e = fixed_point_exponent(1e300, v.size)
    q = to_fixed(v, e)
    assert q[1] == 0 and q[0] == q[2] > 0
