"""What a boosting round asks of the GPU (:data:`oracleboost.cuda.device.TRAFFIC`), on
numba's CUDA simulator: its kernel launches and copies, counted (not timed), so that a
change that adds a launch or a copy to a round is caught; and the device's own
fixed-point exponent, which sets every sum's scale on the GPU, equal to the host's.

On a GPU a round's time at small and medium n is mostly latency: each launch costs a
few microseconds, each copy back waits for every kernel before it.  An AdaBoost round
is five launches for the stump (the query's scale, its settle, the histogram, the scan
and pick, the stump's outputs), two for the column's sums and two for the step with the
next weights; three copies back (the answer, the column's sums, the step's sums) and
none to the device.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.cuda import cuda_module
from oracleboost.cuda.device import TRAFFIC
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.oracles import StumpOracle
from oracleboost.rows.fixed_point import fixed_point_exponent

cuda = None  # numba.cuda, set by the test that launches a kernel of its own


def _data(n: int = 160) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3)
    return X, np.where(X[:, 0] + 0.4 * rng.randn(n) > 0, 1, -1)


def _round_cost(make, regression: bool = False, classes: bool = False) -> np.ndarray:
    """A round's ``(launches, copies to the host, copies to the device)``: a fit of four
    rounds less a fit of three (the set-up is the same in both); ``classes``: three."""
    X, y = _data()
    if regression:
        y = X[:, 0] + np.sin(3.0 * X[:, 1])
    if classes:
        y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3)
    costs = []
    for rounds in (3, 4):
        before = np.array(TRAFFIC.snapshot())
        model = make(rounds).fit(X, y)
        costs.append(np.array(TRAFFIC.snapshot()) - before)
        assert len(model.history_["step"]) == rounds  # no stop: every round ran
    return costs[1] - costs[0]


@pytest.mark.parametrize("options, expected", [
    # AdaBoost: 26 launches, 15 copies back and 22 uploads before the stages were fused
    ({}, (9, 3, 0)),
    # the logistic loss (its weights are normalised by a pass of their own): was 30, 18, 27
    ({"loss": "logistic"}, (20, 6, 0)),
    # Wolfe's search on the logistic risk: the line's shares (four launches, two copies)
    # and each evaluation of the risk or its slope (two launches, one copy)
    ({"loss": "logistic", "step": "wolfe"}, (35, 13, 0)),
])
def test_a_coordinate_round_s_launches_and_copies(options, expected):
    cost = _round_cost(lambda k: CoordinateBoostingClassifier(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k, **options))
    assert tuple(cost) == expected


@pytest.mark.parametrize("options, expected", [
    # the entropy map's lazy round, fused (was 20 launches, 13 copies back, 18 uploads)
    ({}, (10, 3, 0)),
    # the mirror step (two launches, one copy), the softmax (its maximum, its exps' sum,
    # the division: five and two) and the next query (two and one)
    ({"update": "active"}, (19, 6, 0)),
    ({"variant": "madaboost"}, (19, 6, 0)),
    # SparseBoost: the state's mass (two launches, one copy), the division (one)
    ({"variant": "sparse", "mirror": "euclidean"}, (16, 5, 0)),
    # the Euclidean map's active round: the projection's first pass (its checks, then
    # the candidates: their count and rows back, the sorted rows up, their values
    # back), its residual and its weights; at a few hundred rows every breakpoint is a
    # candidate (no refinement)
    ({"mirror": "euclidean"}, (21, 10, 2)),
])
def test_a_mirror_round_s_launches_and_copies(options, expected):
    cost = _round_cost(lambda k: MirrorBoostingClassifier(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k, **options))
    assert tuple(cost) == expected


def test_a_functional_regressor_round_s_launches_and_copies():
    """The squared loss's round: the least-squares stump (the scales' fold and settle,
    the histogram, its values, the stump's outputs: five launches, one copy of the
    histograms' values), the inner products of its outputs (two launches, one copy) and
    the step with the next descent (two launches, one copy)."""
    cost = _round_cost(lambda k: FunctionalGradientRegressor(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k), regression=True)
    assert tuple(cost) == (9, 3, 0)


def test_a_functional_classifier_round_s_launches_and_copies():
    """The logistic loss's round: unlike the squared loss's, its step is not fused with
    its records: the descent (one launch), the target's scale and norm, the stump, its
    inner products, the step, the loss's mean and the training error and margin."""
    cost = _round_cost(lambda k: FunctionalGradientClassifier(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k, validation_fraction=None))
    assert tuple(cost) == (17, 6, 0)


def test_a_multiclass_round_s_launches_and_copies():
    """The softmax's round at three classes: as the logistic's, but the vector-leaf
    stump sums the classes' columns by bins in one pass (four launches and a copy back
    for up to eight classes), its two leaves are uploaded for its outputs, and the sums
    of the (n, K) rows fold their extremes in a launch of their own."""
    cost = _round_cost(lambda k: FunctionalGradientClassifier(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k, validation_fraction=None),
        classes=True)
    assert tuple(cost) == (22, 6, 1)


def test_a_multiclass_maboost_round_s_launches_and_copies():
    """MABoost over the cells at three classes (the entropy map, lazy): the row masses,
    the (n, K) query and its label-coded stump (one histogram pass for up to eight
    classes), the cells' directions and edge, the mirror step, the softmax over the
    cells, the vote and the weights' extremes."""
    cost = _round_cost(lambda k: MirrorBoostingClassifier(
        StumpOracle(max_bins=16, device="cuda"), n_estimators=k), classes=True)
    assert tuple(cost) == (27, 7, 1)


@pytest.mark.filterwarnings("ignore:Simulator timings are bogus")
def test_a_profile_times_every_launch_and_copy_back():
    """``profiled``: every launch and copy back of the block is counted by kernel (the
    same counts as :data:`TRAFFIC`'s), each kernel's device time is read from its
    events, the fit's answer is unchanged, and nothing is timed after the block."""
    from oracleboost.cuda.device import profiled

    X, y = _data()
    make = lambda: CoordinateBoostingClassifier(  # noqa: E731
        StumpOracle(max_bins=16, device="cuda"), n_estimators=3)
    plain = make().fit(X, y)
    before = np.array(TRAFFIC.snapshot())
    with profiled() as profile:
        timed = make().fit(X, y)
    launches, to_host, _ = np.array(TRAFFIC.snapshot()) - before
    assert sum(int(c) for c, _ in profile.host.values()) == launches
    assert profile.fetches[0] == to_host
    assert {"histogram", "scan_and_pick", "settle"} <= set(profile.host)
    device = profile.device()
    assert set(device) == set(profile.host) and min(device.values()) >= 0.0
    assert [repr(h) for h in timed.estimators_] == [repr(h) for h in plain.estimators_]
    assert TRAFFIC.profile is None


def test_the_device_s_exponent_is_the_host_s():
    """The scale of every sum on the device (``row_kernels().exponent``, run in a
    kernel) equals :func:`fixed_point_exponent` for largest magnitudes from subnormal to
    near the largest float and counts from 1 to 2^40."""
    rng = np.random.RandomState(1)
    peaks = np.concatenate([[0.0, 5e-324, 2.2250738585072014e-308, 1.0, 0.5, 2.0,
                             np.nextafter(1.0, 2.0), 1.7e308],
                            10.0 ** rng.uniform(-310, 308, 40)])
    counts = np.array([1, 2, 3, 4, 1000, 1024, 1025, 65536, 10**7, 2**40])
    pairs = np.array([(p, c) for p in peaks for c in counts], dtype=object)
    m = np.array([float(p) for p, _ in pairs])
    n = np.array([int(c) for _, c in pairs], dtype=np.int64)
    global cuda  # a kernel's module global: the simulator swaps it for its own module
    cuda = cuda_module()
    out = cuda.to_device(np.zeros(m.size, dtype=np.int64))
    exponent = row_kernels().exponent

    @cuda.jit
    def run(m, n, out):
        i = cuda.grid(1)
        if i < m.shape[0]:
            out[i] = exponent(m[i], n[i])

    run[-(-m.size // 32), 32](cuda.to_device(m), cuda.to_device(n), out)
    got = out.copy_to_host()
    want = [fixed_point_exponent(p, int(c)) for p, c in zip(m, n, strict=True)]
    assert got.tolist() == want
