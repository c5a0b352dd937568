"""Dual acceleration (Ji, Srebro & Telgarsky 2021) on the GPU backend, on numba's CUDA
simulator (:mod:`cuda_simulator`): ``AcceleratedMarginClassifier`` with
``LinearOracle`` and ``MatrixOracle`` and X on the device, the class's products on the
device (:mod:`oracleboost.cuda.columns`) and the margin passes as device twins.

Against the CPU's fit: the same stop, the coefficients and the decision function equal
to rounding, every record to 1e-12 relatively but the log-loss (to 1e-11: it is the log
of a sum whose terms the device adds in fixed point, and at these margins the sum is
within a few ulps of its largest term, where a log's relative error grows); the
correlation vector ``Zᵀq`` is exact on the rounded terms where the CPU adds floats in
lane order.  The other boosters ask the same columns for ``correlate`` there.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.cuda import CudaBackend, Launch, cuda_module
from oracleboost.engine.backends import is_device_array, register_backend
from oracleboost.oracles import LinearOracle, MatrixOracle
from oracleboost.rows.partitioned import NotDistributedError


def _data(seed: int, n: int = 150, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0.0, 1, 0)
    return X, y


def _problem(kind: str, seed: int = 0):
    """The oracle, X in memory and y: ``LinearOracle`` on features, or ``MatrixOracle``
    on a ±1 matrix of 12 hypotheses (X its row indices)."""
    X, y = _data(seed)
    if kind == "linear":
        return LinearOracle(), X, y
    H = np.sign(np.random.RandomState(seed + 1).randn(X.shape[0], 12))
    return MatrixOracle(H), np.arange(X.shape[0], dtype=np.float64).reshape(-1, 1), y


def _device(X: np.ndarray):
    return cuda_module().to_device(np.ascontiguousarray(X))


@pytest.mark.parametrize("kind, options, weighted", [
    ("linear", {}, False),
    ("linear", {}, True),
    ("matrix", {"fit_intercept": True}, True),
    ("linear", {"loss": "logistic", "fit_intercept": True}, False),
    ("linear", {"method": "normalized"}, False),
    ("matrix", {"method": "perceptron"}, False),  # a row of Z a step (Algorithm 1's)
    # Algorithm 2: a row drawn from the dual point each step (the same draws: the seed)
    ("linear", {"method": "stochastic", "random_state": 0}, True),
])
def test_the_device_fit_is_the_cpu_fit(kind, options, weighted):
    oracle, X, y = _problem(kind)
    w = np.random.RandomState(3).uniform(0.2, 3.0, size=y.size) if weighted else None
    options = {"n_estimators": 8, **options}
    cpu = AcceleratedMarginClassifier(oracle, **options).fit(X, y, w)
    gpu = AcceleratedMarginClassifier(oracle, **options).fit(_device(X), y, w)
    assert gpu.stop_reason_ == cpu.stop_reason_
    # the largest row norm: each row's squares added in column order on the device,
    # by NumPy's einsum on the CPU (its own order): an ulp apart at most
    assert gpu.scale_ == pytest.approx(cpu.scale_, rel=4e-16)
    for key, values in cpu.history_.items():
        if key in ("time", "cumulative_time"):
            continue
        rtol = 1e-11 if key == "log_loss" else 1e-12
        np.testing.assert_allclose(gpu.history_[key], values, rtol=rtol, atol=1e-15,
                                   err_msg=key)
    np.testing.assert_allclose(gpu.coef_, cpu.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gpu.decision_function(X), cpu.decision_function(X),
                               rtol=1e-12, atol=1e-14)


def test_two_device_fits_and_any_launch_give_the_same_bits():
    oracle, X, y = _problem("linear", seed=4)
    dev = _device(X)

    def bits(model) -> tuple:
        return (np.asarray(model.coef_).tobytes(),
                tuple((k, np.asarray(v).tobytes()) for k, v in sorted(model.history_.items())
                      if k not in ("time", "cumulative_time")))

    first = bits(AcceleratedMarginClassifier(oracle, n_estimators=5).fit(dev, y))
    assert bits(AcceleratedMarginClassifier(oracle, n_estimators=5).fit(dev, y)) == first
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=3, rows_per_block=40, features_per_block=1, row_blocks=5))):
        assert bits(AcceleratedMarginClassifier(oracle, n_estimators=5).fit(dev, y)) == first


def test_weights_from_1e_300_to_1e300_neither_overflow_nor_give_nan():
    oracle, X, y = _problem("linear", seed=5)
    w = np.logspace(-300, 300, y.size)
    w[7] = 1e300
    gpu = AcceleratedMarginClassifier(oracle, n_estimators=5).fit(_device(X), y, w)
    cpu = AcceleratedMarginClassifier(oracle, n_estimators=5).fit(X, y, w)
    for key in ("loss", "margin"):
        assert np.isfinite(gpu.history_[key]).all(), key
    assert np.isfinite(gpu.coef_).all()
    np.testing.assert_allclose(gpu.coef_, cpu.coef_, rtol=1e-9, atol=1e-12)


def test_a_row_drawn_from_the_dual_point_is_the_running_sum_s():
    """Algorithm 2's draw over 10,000 rows (three chunks of the device's first pass):
    the first row whose running mass passes the target, as a float running sum over
    every row finds it (targets away from a running sum's rounding), and the last
    positive row for a target at the total."""
    from oracleboost.cuda.blocks import DeviceBlocks
    from oracleboost.cuda.stages import TWINS

    find = TWINS["oracleboost.optim.margin_passes._find_in_lane"]
    rng = np.random.RandomState(8)
    q = rng.exponential(size=10_000)
    q[rng.rand(q.size) < 0.3] = 0.0
    q[-5:] = 0.0
    blocks, dev = DeviceBlocks(q.size), cuda_module().to_device(q)
    running = np.add.accumulate(q)
    for u in (0.0, 1e-6, 0.2, 0.41, 0.409999, 0.75, 0.999999):
        target = u * running[-1]
        _, got = find(blocks, dev, lane_index=0, start=0.0, target=target)
        assert got == int(np.flatnonzero(running > target)[0]), u
    _, got = find(blocks, dev, lane_index=0, start=0.0, target=running[-1])
    assert got == int(np.flatnonzero(q > 0)[-1])


@pytest.mark.parametrize("case, match", [
    ("multiclass", "with 3 classes does not run on the GPU"),
    ("kernel", "kernel form"),
    ("project", "project does not run on the GPU"),
])
def test_what_the_gpu_does_not_run_is_refused_by_name(case, match):
    oracle, X, y = _problem("linear", seed=6)
    if case == "multiclass":
        y = np.digitize(X[:, 0], [-0.5, 0.5])
        model = AcceleratedMarginClassifier(oracle, n_estimators=3)
    elif case == "kernel":
        model = AcceleratedMarginClassifier(None, n_estimators=3, kernel="rbf")
    else:  # the functional regressor asks the columns' project
        model = FunctionalGradientRegressor(oracle, n_estimators=3)
        y = X[:, 0] * 2.0
    before = dict(vars(model))
    with pytest.raises((NotDistributedError, ValueError), match=match):
        model.fit(_device(X), y)
    assert vars(model).keys() == before.keys()


@pytest.mark.parametrize("make, kind", [
    (lambda o: CoordinateBoostingClassifier(o, n_estimators=4), "linear"),
    (lambda o: MirrorBoostingClassifier(o, n_estimators=4), "matrix"),
    (lambda o: FunctionalGradientClassifier(o, n_estimators=4, query="correlate",
                                            validation_fraction=None), "linear"),
])
def test_the_other_boosters_ask_the_columns_on_the_device(make, kind):
    """The columns answer ``correlate`` on the device too (the best column of ``Aᵀr``,
    its outputs a column of the uploaded matrix): the CPU fit's columns every round."""
    oracle, X, y = _problem(kind, seed=7)
    cpu, gpu = make(oracle).fit(X, y), make(oracle).fit(_device(X), y)
    assert [repr(h) for h in gpu.estimators_] == [repr(h) for h in cpu.estimators_]
    np.testing.assert_allclose(gpu.decision_function(X), cpu.decision_function(X),
                               rtol=1e-12, atol=1e-14)
