"""Every hypothesis class runs under every kind of booster, and every fitted model
pickles.  The oracles are every configuration of the registry of small instances
(tests/instances.py); the step rules run on a bounded and two unbounded classes, not on
every class (the rules read only ``Capabilities.bounded``)."""

import pickle

import numpy as np
import pytest
from instances import ORACLES, X_for
from threadpoolctl import threadpool_limits

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    StopReason,
)
from oracleboost.oracles import Oracle


@pytest.fixture(autouse=True)
def one_blas_thread():
    """One BLAS thread: the MLP cells' tiny L-BFGS products are many times slower on two
    threads of a busy 2-core machine (as in tests/test_hostile_matrix.py)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


N, D = 120, 4
rng = np.random.RandomState(0)
X_FEAT = rng.uniform(-1, 1, size=(N, D))
Y_REG = np.sin(3 * X_FEAT[:, 0]) + X_FEAT[:, 1] ** 2 + 0.1 * rng.randn(N)
Y_CLS = np.where(X_FEAT[:, 0] + 0.5 * X_FEAT[:, 1] + 0.3 * rng.randn(N) > 0, "yes", "no")
# A fixed hypothesis matrix: the signs of random projections, one row per example.
H = np.sign(X_FEAT @ rng.randn(D, 30) + 1e-12)


#: Every oracle configuration of the registry of small instances (tests/instances.py).
NAMES = list(ORACLES)


def _oracles(tmp_path):
    """name -> (oracle, the X it fits on: features, or row indices into H)."""
    return {name: (o.make(H=H, cache_dir=tmp_path / "cache"), X_for(name, X_FEAT))
            for name, o in ORACLES.items()}


def test_every_public_oracle_class_has_an_instance(tmp_path):
    """A new oracle class joins every walk over the oracles by one entry in
    tests/instances.py: each public class of oracleboost.oracles has one."""
    import oracleboost.oracles as public

    classes = {cls for name in public.__all__ if isinstance(cls := getattr(public, name), type)
               and issubclass(cls, Oracle) and cls is not Oracle}
    made = {type(oracle) for oracle, _ in _oracles(tmp_path).values()}
    assert classes <= made, sorted(c.__name__ for c in classes - made)


def _roundtrip(model, X):
    clone = pickle.loads(pickle.dumps(model))
    return model.predict(X), clone.predict(X)


@pytest.mark.parametrize("name", NAMES)
def test_coordinate_booster_runs_on_every_oracle(name, tmp_path):
    oracle, X = _oracles(tmp_path)[name]
    clf = CoordinateBoostingClassifier(oracle, n_estimators=15, random_state=0).fit(X, Y_CLS)
    h = clf.history_
    assert len({len(v) for v in h.values()}) == 1 and len(h["loss"]) >= 1
    assert {"loss", "edge", "step", "margin", "train_error", "time"} <= set(h)
    # AdaBoost with the AdaBoost step on columns in [-1, 1] never increases the risk.
    assert np.all(np.diff(h["loss"]) <= 1e-12)
    assert np.all((h["edge"] > 0) & (h["edge"] <= 1))
    # The final training error is what the recorded history says, and it beats chance.
    err = np.mean(clf.predict(X) != Y_CLS)
    assert err == pytest.approx(h["train_error"][-1])
    assert err < 0.4
    staged = list(clf.staged_decision_function(X))
    np.testing.assert_allclose(staged[-1], clf.decision_function(X), rtol=1e-10, atol=1e-10)
    a, b = _roundtrip(clf, X)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(
        pickle.loads(pickle.dumps(clf)).decision_function(X), clf.decision_function(X)
    )


@pytest.mark.parametrize("name", NAMES)
def test_functional_booster_runs_on_every_oracle(name, tmp_path):
    oracle, X = _oracles(tmp_path)[name]
    reg = FunctionalGradientRegressor(
        oracle, loss="squared", n_estimators=15, learning_rate=0.5, random_state=0
    ).fit(X, Y_REG)
    h = reg.history_
    assert len({len(v) for v in h.values()}) == 1 and len(h["loss"]) >= 1
    # Each step moves along <h, -∇>/||h||² h scaled by η = 0.5 ≤ 1/Λ: the squared loss
    # cannot increase (Grubb & Bagnell, Theorem 3's per-step inequality).
    start = 0.5 * np.var(Y_REG)
    losses = np.concatenate([[start], h["loss"]])
    assert np.all(np.diff(losses) <= 1e-12)
    assert losses[-1] < 0.9 * start
    a, b = _roundtrip(reg, X)
    np.testing.assert_allclose(a, b, rtol=0, atol=0)
    np.testing.assert_allclose(
        list(reg.staged_predict(X))[-1], reg.predict(X), rtol=1e-10, atol=1e-10
    )


STEPS = ["quadratic", "wolfe", "adaboost", "optimal", "closed_form", "constant"]
#: The step rules read one property of the class, whether its answers are bounded
#: (``Capabilities.bounded``): every rule runs on a bounded class (stumps) and on two
#: unbounded ones (LightGBM's leaf values, a linear finite class); every class runs the
#: default rule above.
STEP_ORACLES = ["stumps", "lightgbm", "linear"]


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", STEP_ORACLES)
def test_every_step_rule_on_bounded_and_unbounded_classes(name, step, tmp_path):
    """Telgarsky's step rules run through correlate alone, on any hypothesis class."""
    oracle, X = _oracles(tmp_path)[name]
    clf = CoordinateBoostingClassifier(
        oracle, step=step, learning_rate=0.5, n_estimators=8, random_state=0
    ).fit(X, Y_CLS)
    h = clf.history_
    assert clf.stop_reason_ in (StopReason.MAX_ROUNDS, StopReason.INFINITE_STEP)
    assert len(h["loss"]) >= 1
    assert all(np.isfinite(v).all() for v in h.values())
    if step != "constant":  # every other rule is a descent step for the exponential loss
        assert np.all(np.diff(np.concatenate([[1.0], h["loss"]])) < 0)
    np.testing.assert_allclose(
        list(clf.staged_decision_function(X))[-1], clf.decision_function(X), atol=1e-10
    )


@pytest.mark.parametrize("name", NAMES)
def test_functional_classifier_runs_on_every_oracle(name, tmp_path):
    """Logistic loss through any oracle: with η = 0.5 < 2/Λ = 8 each step of
    η <h, v>/||h||² h lowers the risk (Grubb & Bagnell, Thm 3's per-step bound)."""
    from oracleboost.boosters import FunctionalGradientClassifier

    oracle, X = _oracles(tmp_path)[name]
    clf = FunctionalGradientClassifier(
        oracle, loss="logistic", n_estimators=12, learning_rate=0.5, random_state=0
    ).fit(X, Y_CLS)
    losses = clf.history_["loss"]
    assert np.all(np.diff(losses) <= 1e-12)
    assert clf.score(X, Y_CLS) > 0.6
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("mirror", ["entropy", "euclidean"])
@pytest.mark.parametrize("name", NAMES)
def test_mirror_booster_runs_on_every_oracle(name, mirror, tmp_path):
    """MABoost asks only correlate, so every class runs under it; Theorem 1's bound holds
    every round and the distribution stays on the simplex."""
    oracle, X = _oracles(tmp_path)[name]
    clf = MirrorBoostingClassifier(oracle, mirror=mirror, n_estimators=15, random_state=0)
    clf.fit(X, Y_CLS)
    h = clf.history_
    assert len({len(v) for v in h.values()}) == 1 and len(h["loss"]) >= 1
    assert np.all(h["loss"] <= h["bound"] + 1e-12)
    assert np.all((h["edge"] > 0) & (h["edge"] <= 1))
    assert clf.weights_.sum() == pytest.approx(1.0) and np.all(clf.weights_ >= 0)
    err = np.mean(clf.predict(X) != Y_CLS)
    assert err == pytest.approx(h["train_error"][-1])
    a, b = _roundtrip(clf, X)
    np.testing.assert_array_equal(a, b)
