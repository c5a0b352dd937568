"""The GPU's exact integer sums where their 32-bit words carry, on numba's CUDA simulator.

A GPU has no 64-bit integer add in shared memory, so a block's int64 sums (the stump
histograms, a stage's reductions, the projections' buckets, the columns' products) are
kept as two 32-bit words, the carry out of the low word's add going into the high word.
These tests give them terms near the fixed-point scale's limit, of both signs, so that
the low word carries or borrows on most adds and the sums cross zero: each sum must be
the exact integer sum, the same bits under any launch.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here  # noqa: F401

from oracleboost.cuda import DeviceStumps, Launch, cuda_module
from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.oracles import StumpOracle
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed, to_fixed

SEEDS = [0, 1, 2]


def _terms(seed: int, n: int) -> np.ndarray:
    """Terms of both signs, their largest at the scale's limit, their sum near 0."""
    rng = np.random.RandomState(seed)
    r = rng.uniform(-1.0, 1.0, size=n)
    r[: n // 2] = -r[n // 2: 2 * (n // 2)]  # pairs that cancel to the bit ...
    r[0] = 1.0  # ... but for the largest
    return rng.permutation(r)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_stages_sums_are_the_exact_integer_sums(seed):
    """``Reductions.sums``: the fixed-point sum of each channel, made from its exact
    integer sum, on two launch shapes."""
    n = 500
    values = np.stack([_terms(seed, n), 3.0 * _terms(seed + 10, n), -_terms(seed + 20, n)])
    expected = []
    for v in values:
        e = fixed_point_exponent(float(np.abs(v).max()), n)
        q = to_fixed(v, e)
        assert max(abs(int(x)) for x in q) > 2**52  # every add carries in the low word
        expected.append(float(from_fixed(sum(int(x) for x in q), e)))
    cuda = cuda_module()
    for grid in [(2, 8), (5, 3)]:
        got = DeviceBlocks(n, grid).reduce.sums(cuda.to_device(values))
        assert got.tolist() == expected


@pytest.mark.parametrize("seed", SEEDS)
def test_a_histograms_bins_are_the_exact_integer_sums(seed):
    """A stump query's histogram: every bin the exact sum of its rows' integers, under
    the default launch and one of a row a thread block."""
    rng = np.random.RandomState(seed)
    n, d = 300, 3
    X = rng.randn(n, d)
    bound = StumpOracle(max_bins=8).bind(X)
    r = _terms(seed, n)
    q = to_fixed(r, fixed_point_exponent(float(np.abs(r).max()), n))
    codes_T = bound.codes.T
    bins = int(bound.n_bins.max())
    expected = [[sum(int(x) for x, b in zip(q, codes_T[j], strict=True) if b == k)
                 for k in range(bins)] for j in range(d)]
    assert max(abs(int(x)) for x in q) > 2**52
    for launch in (None, Launch(4, 1, 2, 3)):
        device = DeviceStumps(bound, launch=launch)
        device.correlate(r)
        assert device._dev.hist.copy_to_host()[0].tolist() == expected
