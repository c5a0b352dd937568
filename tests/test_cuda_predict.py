"""Predictions from X on the GPU (:mod:`oracleboost.cuda.predict`), on numba's CUDA
simulator (:mod:`cuda_simulator`): a stump ensemble's scores summed on the device equal
the CPU's bit for bit (the same additions in the same order), stay there as device
arrays, and X never comes back to the host; labels and probabilities are made from the
scores; other models and X the host's checks refuse take the host path.
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
    TotallyCorrectiveClassifier,
)
from oracleboost.cuda import CudaBackend, Launch, cuda_module
from oracleboost.cuda.device import TRAFFIC
from oracleboost.engine.backends import is_device_array, register_backend
from oracleboost.oracles import StumpOracle, TreeOracle


def _data(seed: int, n: int = 150, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, d - 1] = np.round(X[:, d - 1])
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.randn(n) > 0.3, 1, 0)
    return X, y


def _host(a) -> np.ndarray:
    assert is_device_array(a), type(a)
    return a.copy_to_host()


@pytest.fixture(scope="module")
def fitted():
    """A classifier fitted on the CPU, its training and test rows (the test rows with
    NaN: the stumps learned where a NaN goes)."""
    X, y = _data(0)
    X[::9, 1] = np.nan
    model = CoordinateBoostingClassifier(StumpOracle(max_bins=16), n_estimators=7,
                                         loss="logistic").fit(X, y)
    X_test, _ = _data(1, n=70)
    X_test[::5, 1] = np.nan
    return model, X_test


def test_the_scores_are_the_cpu_s_bits_and_stay_on_the_device(fitted):
    model, X_test = fitted
    dev = cuda_module().to_device(X_test)
    before = TRAFFIC.snapshot()
    f = model.decision_function(dev)
    launches, to_host, to_device = np.subtract(TRAFFIC.snapshot(), before)
    np.testing.assert_array_equal(_host(f), model.decision_function(X_test))
    # the rounds' table and a counter up, the counter back: X never crosses the bus
    assert (launches, to_host, to_device) == (2, 1, 6)
    for k in (1, 4, 7):
        np.testing.assert_array_equal(_host(model.decision_function(dev, num_iteration=k)),
                                      model.decision_function(X_test, num_iteration=k))


def test_labels_probabilities_and_stages_equal_the_cpu_s(fitted):
    model, X_test = fitted
    dev = cuda_module().to_device(X_test)
    labels = model.predict(dev)
    assert isinstance(labels, np.ndarray)  # made on the host from the scores
    np.testing.assert_array_equal(labels, model.predict(X_test))
    np.testing.assert_array_equal(model.predict_proba(dev), model.predict_proba(X_test))
    staged = list(model.staged_decision_function(dev))
    expected = list(model.staged_decision_function(X_test))
    assert len(staged) == len(expected) == 7
    for got, want in zip(staged, expected, strict=True):
        np.testing.assert_array_equal(_host(got), want)
    for got, want in zip(model.staged_predict(dev), model.staged_predict(X_test),
                         strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make, on_device", [
    (lambda: MirrorBoostingClassifier(StumpOracle(max_bins=16), n_estimators=5), True),
    (lambda: CoordinateBoostingClassifier(StumpOracle(max_bins=16, device="cuda"),
                                          n_estimators=5), True),
    # a booster with its own map from scores to decision: made on the host from them
    (lambda: FunctionalGradientClassifier(StumpOracle(max_bins=16), n_estimators=5,
                                          validation_fraction=None), False),
])
def test_other_boosters_and_device_fits_score_on_the_device(make, on_device):
    X, y = _data(2)
    model = make().fit(X, y)
    f = model.decision_function(cuda_module().to_device(X))
    assert is_device_array(f) == on_device
    np.testing.assert_array_equal(_host(f) if on_device else f, model.decision_function(X))


def test_a_method_a_booster_makes_its_own_way_takes_the_host_path():
    """MABoost's probabilities are its vote shares (its own ``predict_proba``, not the
    mixin's link): made on a host copy of X, equal to the CPU's."""
    X, y = _data(5)
    model = MirrorBoostingClassifier(StumpOracle(max_bins=16), n_estimators=4).fit(X, y)
    dev = cuda_module().to_device(X)
    np.testing.assert_array_equal(model.predict_proba(dev), model.predict_proba(X))
    for got, want in zip(model.staged_predict_proba(dev), model.staged_predict_proba(X),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(model.predict(dev), model.predict(X))


def test_a_regressor_s_predictions_stay_on_the_device():
    X, _ = _data(3)
    t = 2.0 * X[:, 0] + np.sin(X[:, 1])
    model = FunctionalGradientRegressor(StumpOracle(max_bins=16), n_estimators=6).fit(X, t)
    dev = cuda_module().to_device(X)
    np.testing.assert_array_equal(_host(model.predict(dev)), model.predict(X))
    for got, want in zip(model.staged_predict(dev), model.staged_predict(X), strict=True):
        np.testing.assert_array_equal(_host(got), want)


def test_the_scores_do_not_depend_on_the_launch(fitted):
    model, X_test = fitted
    dev = cuda_module().to_device(X_test)
    first = _host(model.decision_function(dev))
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=3, rows_per_block=10, features_per_block=1, row_blocks=5))):
        assert _host(model.decision_function(dev)).tobytes() == first.tobytes()


@pytest.mark.parametrize("make", [
    # not stumps: trees (the host sums them)
    lambda: CoordinateBoostingClassifier(TreeOracle(max_depth=2), n_estimators=3),
    # refits (every round changes every coefficient)
    lambda: TotallyCorrectiveClassifier(StumpOracle(max_bins=16), n_estimators=3),
    # vector scores (three classes)
    lambda: FunctionalGradientClassifier(StumpOracle(max_bins=16), n_estimators=3,
                                         validation_fraction=None),
])
def test_what_the_device_does_not_sum_is_scored_on_a_host_copy(make):
    X, y = _data(4)
    if "Functional" in type(make()).__name__:
        y = np.digitize(X[:, 0], [-0.5, 0.5])
    model = make().fit(X, y)
    f = model.decision_function(cuda_module().to_device(X))
    assert isinstance(f, np.ndarray)
    np.testing.assert_array_equal(f, model.decision_function(X))


def test_x_the_host_refuses_is_refused_with_its_message(fitted):
    model, X_test = fitted
    bad = X_test.copy()
    bad[2, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.decision_function(cuda_module().to_device(bad))
    with pytest.raises(ValueError, match="features"):
        model.decision_function(cuda_module().to_device(np.ascontiguousarray(X_test[:, :3])))
