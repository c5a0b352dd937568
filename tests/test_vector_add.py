"""``add_pair``: one two-lane add that must give the bits of two scalar adds."""

from __future__ import annotations

import numba
import numpy as np

from oracleboost.rows.vector_add import add_pair


@numba.njit
def _pairs(h, at, a, b):
    for k in range(at.size):
        add_pair(h, np.uint64(at[k]), a[k], b[k])


@numba.njit
def _scalars(h, at, a, b):
    for k in range(at.size):
        h[at[k]] += a[k]
        h[at[k] + 1] += b[k]


def _both(h, at, a, b):
    h1, h2 = h.copy(), h.copy()
    _pairs(h1, at, a, b)
    _scalars(h2, at, a, b)
    return h1, h2


def test_add_pair_gives_the_bits_of_two_scalar_adds():
    rng = np.random.default_rng(0)
    n = 5000
    # magnitudes over the whole range, subnormals and signed zeros among them
    a = rng.normal(size=n) * 10.0 ** rng.integers(-320, 300, n)
    b = rng.normal(size=n) * 10.0 ** rng.integers(-320, 300, n)
    a[::97], b[::89] = -0.0, 0.0
    # indices of both parities (a pair may start at any element) and repeated ones,
    # so that a pair reads what the one before it wrote
    at = rng.integers(0, 63, n)
    h1, h2 = _both(rng.normal(size=64), at, a, b)
    assert np.isfinite(h1).all()
    assert np.array_equal(h1.view(np.uint64), h2.view(np.uint64))


def test_add_pair_overflows_and_propagates_nan_as_scalar_adds():
    at = np.array([0, 0, 2, 4, 4, 6, 9])
    a = np.array([1e308, 1e308, np.inf, np.inf, -1.0, np.nan, -1e308])
    b = np.array([-1e308, -1e308, 1.0, -np.inf, np.inf, 2.0, -1e308])
    h1, h2 = _both(np.zeros(12), at, a, b)
    assert np.array_equal(h1, h2, equal_nan=True)  # (a NaN's payload may differ)
    assert np.isinf(h1).sum() == 4 and np.isnan(h1).sum() == 2  # (not all NaN)


def test_add_pair_refuses_what_it_does_not_serve():
    import pytest

    @numba.njit
    def wrong(h):
        add_pair(h, 0, 1.0, 2.0)

    with pytest.raises(numba.core.errors.TypingError):
        wrong(np.zeros(4, dtype=np.float32))
