"""Booster behaviour: the papers' per-round identities, log-space runs, explicit stops."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, make_classification

from oracleboost.boosters import (
    BoostingWarning,
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
    StopReason,
)
from oracleboost.datasets import matrix_problem, rudin_matrix
from oracleboost.oracles import MatrixOracle, StumpOracle

# Rudin, Daubechies & Schapire (2004, Thm 7) in their convention M_ij = y_i h_j(x_i)
# (Telgarsky's A = −M).  Max ℓ1 margin 3/8; AdaBoost from uniform weights converges to 1/3.
RUDIN = rudin_matrix()  # Rudin, Daubechies & Schapire (2004), margin convention


def _rudin_problem():
    """Labels and hypothesis matrix H with y_i H_ij = RUDIN_ij (two classes, as fit needs)."""
    _, y, H = matrix_problem(RUDIN)
    return y, H


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("nu", [1.0, 0.5, 0.25])
def test_adaboost_risk_ratio_is_the_closed_form(cancer, nu):
    """±1 columns, exp loss, step α = ν artanh γ_t: L_t/L_{t−1} is exactly
    ½(1−γ²)^{ν/2}((1+γ)^{1−ν} + (1−γ)^{1−ν}) (Telgarsky 2013, Lemma B.0; √(1−γ²) at ν = 1)."""
    X, y = cancer
    clf = CoordinateBoostingClassifier(StumpOracle(), n_estimators=40, learning_rate=nu).fit(X, y)
    h = clf.history_
    g = h["edge"]
    log_ratio = np.diff(np.concatenate([[0.0], h["log_loss"]]))  # L_0 = 1 at f = 0
    expected = np.log(
        0.5 * (1 - g**2) ** (nu / 2) * ((1 + g) ** (1 - nu) + (1 - g) ** (1 - nu))
    )
    np.testing.assert_allclose(log_ratio, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h["step"], nu * np.arctanh(g), rtol=1e-9)
    # history["loss"] is the weighted exponential risk of the fitted scores
    f = clf.decision_function(X)
    ypm = np.where(y == clf.classes_[1], 1.0, -1.0)
    assert h["loss"][-1] == pytest.approx(np.mean(np.exp(-ypm * f)), rel=1e-10)


def test_long_separable_run_stays_finite_in_log_space():
    """10,000 AdaBoost rounds on the Rudin matrix: the risk underflows, nothing else does."""
    y, H = _rudin_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Underflow is the point (the risk itself goes below 1e-300); the rest must not happen.
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            clf = CoordinateBoostingClassifier(
                MatrixOracle(H), n_estimators=10_000
            ).fit(np.arange(8)[:, None], y)
    h = clf.history_
    assert clf.stop_reason_ is StopReason.MAX_ROUNDS
    for key in ("log_loss", "edge", "step", "margin"):
        assert np.all(np.isfinite(h[key])), key
    assert h["log_loss"][-1] < np.log(1e-300)  # far below what exp() can represent
    assert np.all(np.diff(h["log_loss"]) < 0)
    assert np.all(h["edge"] >= 3 / 8 - 1e-9)  # γ_t ≥ γ = 3/8 (Telgarsky 2013, §2)
    # AdaBoost from the uniform start cycles to margin 1/3, not the maximum 3/8.
    assert abs(h["margin"][-1] - 1 / 3) < 1e-3


def test_merged_hypotheses_give_the_l1_norm_over_distinct_columns():
    y, H = _rudin_problem()
    clf = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=200).fit(
        np.arange(8)[:, None], y
    )
    assert len(clf.estimators_) <= 8  # columns recur and share a coefficient
    lam = np.zeros(8)
    for hyp, c in zip(clf.estimators_, clf.coef_, strict=True):
        lam[hyp.j] += c * hyp.scale
    margins = RUDIN @ lam
    assert clf.history_["margin"][-1] == pytest.approx(margins.min() / np.abs(lam).sum())


def test_perfect_hypothesis_stops_with_zero_error():
    X = np.linspace(-1, 1, 30)[:, None]
    y = (X[:, 0] > 0.1).astype(int)
    clf = CoordinateBoostingClassifier(StumpOracle(), n_estimators=20).fit(X, y)
    assert clf.stop_reason_ is StopReason.PERFECT_HYPOTHESIS
    assert clf.n_estimators_ == 1
    assert clf.history_["train_error"][-1] == 0.0
    assert clf.history_["margin"][-1] == pytest.approx(1.0)
    np.testing.assert_array_equal(clf.predict(X), y)


def test_zero_edge_is_a_reported_stop():
    X = np.zeros((10, 2))  # every stump is constant
    y = np.array([0, 1] * 5)  # and a constant has no correlation with balanced labels
    clf = CoordinateBoostingClassifier(StumpOracle(), n_estimators=20).fit(X, y)
    assert clf.stop_reason_ is StopReason.ZERO_EDGE
    assert clf.n_estimators_ == 0
    assert set(clf.history_) >= {"loss", "edge", "step", "margin", "train_error", "time"}
    assert all(len(v) == 0 for v in clf.history_.values())
    assert clf.predict(X).shape == (10,)


def test_zero_gradient_is_a_reported_stop():
    X = np.random.RandomState(0).randn(20, 2)
    reg = FunctionalGradientRegressor(StumpOracle(), n_estimators=10).fit(X, np.full(20, 3.0))
    assert reg.stop_reason_ is StopReason.ZERO_GRADIENT
    np.testing.assert_allclose(reg.predict(X), 3.0)


def test_integer_weights_equal_duplicated_rows():
    rng = np.random.RandomState(1)
    X = rng.randn(30, 3)
    y = X[:, 0] - X[:, 1] + 0.2 * rng.randn(30)
    w = rng.randint(1, 4, size=30)
    Xd, yd = np.repeat(X, w, axis=0), np.repeat(y, w)
    a = FunctionalGradientRegressor(StumpOracle(exact=True), n_estimators=15).fit(X, y, w)
    b = FunctionalGradientRegressor(StumpOracle(exact=True), n_estimators=15).fit(Xd, yd)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-10, atol=1e-10)
    yc = (y > 0).astype(int)
    c = CoordinateBoostingClassifier(StumpOracle(exact=True), n_estimators=15).fit(X, yc, w)
    d = CoordinateBoostingClassifier(StumpOracle(exact=True), n_estimators=15).fit(
        Xd, np.repeat(yc, w)
    )
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(X), rtol=1e-9)
    np.testing.assert_allclose(c.history_["margin"], d.history_["margin"], rtol=1e-9)


def test_zero_weight_rows_are_ignored():
    rng = np.random.RandomState(2)
    X = rng.randn(40, 2)
    y = (X[:, 0] > 0).astype(int)
    w = np.ones(40)
    w[:10] = 0.0
    a = CoordinateBoostingClassifier(StumpOracle(exact=True), n_estimators=10).fit(X, y, w)
    b = CoordinateBoostingClassifier(StumpOracle(exact=True), n_estimators=10).fit(X[10:], y[10:])
    np.testing.assert_allclose(a.history_["loss"], b.history_["loss"], rtol=1e-10)
    np.testing.assert_allclose(a.history_["margin"], b.history_["margin"], rtol=1e-10)


def test_estimator_contract(cancer):
    X, y = cancer
    clf = CoordinateBoostingClassifier(StumpOracle(max_bins=32), n_estimators=10, random_state=0)
    assert clone(clf).get_params()["oracle"].max_bins == 32
    clf.fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_.take(np.argmax(proba, axis=1)), clf.predict(X))
    staged = list(clf.staged_predict_proba(X))
    assert len(staged) == clf.n_estimators_
    np.testing.assert_allclose(staged[-1], proba)
    assert 0.9 < clf.score(X, y) <= 1.0
    # refitting resets the learned state
    clf.set_params(n_estimators=3).fit(X, y)
    assert clf.n_estimators_ == 3 and len(clf.history_["loss"]) == 3
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))


def test_verbose_reports_progress(cancer, capsys):
    X, y = cancer
    CoordinateBoostingClassifier(StumpOracle(), n_estimators=20, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "edge" in out and "margin" in out
    rounds = [int(line.split()[0]) for line in out.strip().splitlines()[1:]]
    assert rounds == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 20]  # every 2nd round, and the last


def test_string_labels_and_classes(cancer):
    X, y = cancer
    labels = np.where(y == 1, "benign", "malignant")
    clf = CoordinateBoostingClassifier(n_estimators=5).fit(X, labels)
    assert list(clf.classes_) == ["benign", "malignant"]
    assert set(clf.predict(X)) <= {"benign", "malignant"}


@pytest.mark.parametrize("scale", [1e20, 1e300])
def test_a_linear_class_with_huge_features_fits_with_its_gap(cancer, scale):
    """Features scaled by 1e20 or 1e300 made the duality-gap LP fail (HiGHS) and the fit
    with it.  The optimal risk is invariant under column scaling, so the gap is tracked
    and equals the unscaled run's."""
    from oracleboost.oracles import LinearOracle

    X, y = cancer
    X = X[:, :5] / np.abs(X[:, :5]).max(axis=0)
    ref = CoordinateBoostingClassifier(LinearOracle(), n_estimators=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = CoordinateBoostingClassifier(LinearOracle(), n_estimators=5).fit(X * scale, y)
    assert np.all(np.isfinite(big.history_["gap"]))
    np.testing.assert_allclose(big.optimal_loss_, ref.optimal_loss_, rtol=1e-9)
    np.testing.assert_allclose(big.history_["loss"], ref.history_["loss"], rtol=1e-9)


def test_a_tall_finite_class_fits_in_bounded_memory():
    """A ±1 matrix of shape (100,000, 8): the hard core once built np.eye(100000)
    (74.5 GiB).  "auto" now decides by the diagnostic's estimated memory and skips the
    gap here; the fit itself holds O(n) arrays only (peak traced allocations, which
    include NumPy's, measured 23 MiB; 134 MiB with duality_gap=True)."""
    import tracemalloc

    rng = np.random.RandomState(0)
    H = np.where(rng.rand(100_000, 8) < 0.5, -1.0, 1.0)
    y = np.where(H[:, 0] + H[:, 1] + 0.5 * rng.randn(100_000) > 0, 1, 0)
    tracemalloc.start()
    try:
        clf = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=10).fit(
            np.arange(100_000)[:, None], y
        )
        peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert clf.optimal_loss_ is None and "gap" not in clf.history_
    assert len(clf.history_["loss"]) == 10
    assert peak_mib < 100  # H itself is 6 MiB; eye(100000) would be 74.5 GiB


def test_a_failing_diagnostic_warns_and_records_nan(monkeypatch):
    """An LP that fails inside the history bookkeeping costs its diagnostic only."""
    import oracleboost.diagnostics as diagnostics

    def broken(*args, **kwargs):
        raise diagnostics.DiagnosticsError("HiGHS failed on a diagnostics LP: test")

    monkeypatch.setattr(diagnostics, "optimal_risk", broken)
    y, H = _rudin_problem()
    with pytest.warns(BoostingWarning, match="could not be computed"):
        clf = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=20).fit(
            np.arange(8)[:, None], y
        )
    assert np.all(np.isnan(clf.history_["gap"]))
    assert np.all(np.isfinite(clf.history_["loss"])) and len(clf.history_["loss"]) == 20


@pytest.mark.parametrize("step", ["adaboost", "wolfe"])
def test_training_margins_are_the_decision_function_bit_for_bit(step):
    # The round adds to the training margins the same product c·h(x) that the
    # ensemble's decision function adds, so the two never drift apart.
    X, y = make_classification(500, 8, random_state=3)
    clf = CoordinateBoostingClassifier(StumpOracle(), step=step, n_estimators=60).fit(X, y)
    ypm = np.where(y == clf.classes_[1], 1.0, -1.0)
    np.testing.assert_array_equal(clf._state_.margins, ypm * clf.decision_function(X))
