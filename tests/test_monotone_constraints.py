"""Monotone constraints on StumpOracle and TreeOracle: every booster that accepts a
constrained oracle fits a model whose decision never moves against a constraint."""

from __future__ import annotations

import numpy as np
import pytest

from oracleboost import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.oracles import OracleCapabilityError, StumpOracle, TreeOracle

CONSTRAINTS = [1, -1, 1, 0]


def _data(seed: int, n: int = 120, nan: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    # feature 2 enters as a sine: the unconstrained fit bends against its constraint
    f = X[:, 0] - X[:, 1] + np.sin(3 * X[:, 2]) + 0.5 * X[:, 3] ** 2
    y = (f + rng.normal(scale=0.5, size=n) > 0.5).astype(int)
    yr = f + rng.normal(scale=0.3, size=n)
    if nan:
        X[::9, 0] = np.nan
    return X, y, yr


def _violations(decide, X, constraints) -> tuple[int, int]:
    """Steps of the decision against a constraint, and steps checked: each constrained
    feature varied over a grid (past the data on both sides) with the others fixed at
    the values of 30 rows."""
    rows = X[:30]
    bad = checked = 0
    for j, c in enumerate(constraints):
        if c == 0:
            continue
        finite = X[:, j][np.isfinite(X[:, j])]
        grid = np.linspace(finite.min() - 1.0, finite.max() + 1.0, 61)
        Z = np.repeat(rows, grid.size, axis=0)
        Z[:, j] = np.tile(grid, len(rows))
        f = np.asarray(decide(Z)).reshape(len(rows), grid.size)
        steps = c * np.diff(f, axis=1)
        bad += int(np.sum(steps < 0))
        checked += steps.size
    return bad, checked


CLASSIFIERS = {
    "adaboost": lambda o, s: CoordinateBoostingClassifier(o, n_estimators=25, random_state=s),
    "logistic-wolfe": lambda o, s: CoordinateBoostingClassifier(
        o, loss="logistic", step="wolfe", n_estimators=25, random_state=s),
    "maboost": lambda o, s: MirrorBoostingClassifier(o, n_estimators=25, random_state=s),
    "madaboost": lambda o, s: MirrorBoostingClassifier(o, variant="madaboost",
                                                       n_estimators=25, random_state=s),
    "lpboost": lambda o, s: TotallyCorrectiveClassifier(o, method="lpboost", n_estimators=25,
                                                        random_state=s),
    "erlpboost": lambda o, s: TotallyCorrectiveClassifier(o, method="erlpboost", tol=0.1,
                                                          n_estimators=25, random_state=s),
    "gradient-logistic": lambda o, s: FunctionalGradientClassifier(o, n_estimators=25,
                                                                   random_state=s),
}
ORACLES = {
    "stumps": lambda: StumpOracle(monotone_constraints=CONSTRAINTS),
    "trees": lambda: TreeOracle(max_depth=2, monotone_constraints=CONSTRAINTS),
}


def _coefficients(est) -> np.ndarray:
    """The coefficients of the hypotheses that use a constrained feature."""
    model = est.ensemble_
    return np.array([c for c, h in zip(model.coef, model.hypotheses, strict=True)
                     if h.feature_importances(4)[:3].any()])


#: Run by default; the others (the same checks) with the slow tests.
QUICK = ("adaboost", "maboost", "lpboost", "gradient-logistic")


@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("booster", [
    b if b in QUICK else pytest.param(b, marks=pytest.mark.slow) for b in CLASSIFIERS])
def test_no_classifier_moves_against_a_constraint(booster, oracle):
    total_checked = 0
    moved = 0
    for seed in range(3):
        X, y, _ = _data(seed)
        est = CLASSIFIERS[booster](ORACLES[oracle](), seed).fit(X, y)
        bad, checked = _violations(est.decision_function, X, CONSTRAINTS)
        assert bad == 0, (seed, bad)
        total_checked += checked
        # the hypotheses on constrained features enter with coefficients >= 0
        assert np.all(_coefficients(est) >= 0.0)
        f = est.decision_function(X)
        moved += int(np.ptp(f) > 0)
    assert total_checked == 3 * 3 * 30 * 60 and moved == 3  # the models are not constant


@pytest.mark.parametrize("oracle", ORACLES)
def test_regression_never_moves_against_a_constraint(oracle):
    for seed in range(3):
        X, _, yr = _data(seed)
        est = FunctionalGradientRegressor(ORACLES[oracle](), n_estimators=60,
                                          learning_rate=1.0, random_state=seed).fit(X, yr)
        assert _violations(est.predict, X, CONSTRAINTS)[0] == 0
        assert est.score(X, yr) > 0.3


@pytest.mark.parametrize("oracle", ORACLES)
def test_rounds_on_drawn_features_keep_the_constraints(oracle):
    """Rounds on drawn features keep each drawn feature's constraint (a tree grown on
    some columns is constrained as those columns are)."""
    for seed in range(3):
        X, y, yr = _data(seed)
        est = FunctionalGradientRegressor(ORACLES[oracle](), n_estimators=40,
                                          learning_rate=1.0, colsample_bytree=0.5,
                                          random_state=seed).fit(X, yr)
        assert _violations(est.predict, X, CONSTRAINTS)[0] == 0
        est = CoordinateBoostingClassifier(ORACLES[oracle](), n_estimators=25,
                                           colsample_bytree=0.5, random_state=seed).fit(X, y)
        assert _violations(est.decision_function, X, CONSTRAINTS)[0] == 0


@pytest.mark.parametrize("make", [
    lambda o: FunctionalGradientRegressor(o, subsample=0.7),
    lambda o: CoordinateBoostingClassifier(o, subsample=0.7),
    lambda o: MirrorBoostingClassifier(o, subsample=0.7)])
def test_row_samples_are_refused_with_constraints(make):
    """A learner fitted on a sample has an edge >= 0 there, but the booster steps on
    every row, where the step may be negative and would reverse the constraint."""
    X, y, yr = _data(0)
    est = make(StumpOracle(monotone_constraints=CONSTRAINTS))
    with pytest.raises(ValueError, match="subsample=0.7 cannot be used with StumpOracle's "
                                         "monotone_constraints"):
        est.fit(X, yr if isinstance(est, FunctionalGradientRegressor) else y)
    make(StumpOracle()).fit(X, yr if isinstance(est, FunctionalGradientRegressor) else y)


def test_the_unconstrained_fit_does_move_against_them():
    # (so the checks above can fail: feature 2's sine bends the free fit both ways)
    X, y, yr = _data(0)
    free = FunctionalGradientRegressor(StumpOracle(), n_estimators=60,
                                       learning_rate=1.0).fit(X, yr)
    assert _violations(free.predict, X, CONSTRAINTS)[0] > 0
    free = CoordinateBoostingClassifier(StumpOracle(), n_estimators=25).fit(X, y)
    assert _violations(free.decision_function, X, CONSTRAINTS)[0] > 0


def test_missing_values_keep_finite_values_monotone():
    for seed in range(3):
        X, y, yr = _data(seed, nan=True)
        o = StumpOracle(monotone_constraints=CONSTRAINTS)
        est = CoordinateBoostingClassifier(o, n_estimators=25).fit(X, y)
        assert _violations(est.decision_function, X, CONSTRAINTS)[0] == 0
        reg = FunctionalGradientRegressor(o, n_estimators=25).fit(X, yr)
        assert _violations(reg.predict, X, CONSTRAINTS)[0] == 0


# -- the oracle's answers ------------------------------------------------------------------
def _sign_edges(x: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every threshold between distinct values of x and the edge of the stump that is +1
    right of it, by brute force."""
    values = np.unique(x)
    thresholds = (values[:-1] + values[1:]) / 2
    edges = np.array([np.sum(r * np.where(x > t, 1.0, -1.0)) for t in thresholds])
    return thresholds, edges


@pytest.mark.parametrize("direction", [1, -1])
def test_correlate_answers_the_best_stump_of_the_allowed_sign(direction):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(80, 1))
        r = np.sin(3 * X[:, 0]) + rng.normal(scale=0.3, size=80)
        h = StumpOracle(exact=True, monotone_constraints=[direction]).bind(X).correlate(r)
        _, edges = _sign_edges(X[:, 0], r)
        best = max(np.max(direction * edges), abs(r.sum()))
        np.testing.assert_allclose(np.sum(r * h.train_output), best, rtol=1e-12)
        assert np.all(direction * np.diff(h.predict(np.sort(X, axis=0))) >= 0) or \
            h.feature_importances(1).sum() == 0


def test_project_answers_leaves_in_the_allowed_order():
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(80, 2))
        t = -np.abs(X[:, 0]) + X[:, 1] + rng.normal(scale=0.2, size=80)
        w = rng.uniform(0.5, 2.0, size=80)
        bound = StumpOracle(exact=True, monotone_constraints=[1, -1]).bind(X)
        h = bound.project(t, w)
        if h.feature_importances(2).sum() == 0:
            continue  # the constant
        left, right = h.predict(np.array([[-9.0, -9.0]])), h.predict(np.array([[9.0, 9.0]]))
        j = int(np.argmax(h.feature_importances(2)))
        assert [1, -1][j] * (right[0] - left[0]) >= 0
        # the best of the allowed splits, by brute force over feature 0 and 1
        best = np.sum(w * t) ** 2 / np.sum(w)
        for k, c in enumerate([1, -1]):
            values = np.unique(X[:, k])
            for thr in (values[:-1] + values[1:]) / 2:
                side = X[:, k] > thr
                a = np.sum(w * t * ~side) / np.sum(w * ~side)
                b = np.sum(w * t * side) / np.sum(w * side)
                if c * (b - a) >= 0:
                    best = max(best, np.sum(w * ~side) * a * a + np.sum(w * side) * b * b)
        fit = h.train_output
        np.testing.assert_allclose(np.sum(w * fit * fit), best, rtol=1e-9)


def test_all_zero_constraints_are_the_unconstrained_class():
    X, y, yr = _data(1)
    a = FunctionalGradientRegressor(StumpOracle(), n_estimators=10).fit(X, yr)
    b = FunctionalGradientRegressor(StumpOracle(monotone_constraints=[0, 0, 0, 0]),
                                    n_estimators=10).fit(X, yr)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


# -- refusals ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [StumpOracle, TreeOracle])
def test_bad_constraints_are_refused_by_name(make):
    X, y, _ = _data(0, n=40)
    with pytest.raises(ValueError, match="monotone_constraints has 3 entries, but X has 4"):
        make(monotone_constraints=[1, 0, 1]).bind(X)
    with pytest.raises(ValueError, match="monotone_constraints must hold -1, 0 or"):
        make(monotone_constraints=[1, 0, 2, 0]).bind(X)
    with pytest.raises(TypeError, match="monotone_constraints must be None or a sequence"):
        make(monotone_constraints="increasing").bind(X)
    # vector leaves have no order: multiclass boosters are refused
    y3 = np.arange(len(y)) % 3
    with pytest.raises(OracleCapabilityError):
        FunctionalGradientClassifier(make(monotone_constraints=CONSTRAINTS), loss="softmax",
                                     n_estimators=2).fit(X, y3)
