"""Prediction validates X once, at the estimator, not once a hypothesis.

An ensemble sums the predictions of many hypotheses on one X; each hypothesis'
public ``predict`` validates X (a pass over all of it), so an ensemble that called it
for every hypothesis made a linear model over d features quadratic in d (300 rows:
0.5 s at 2,500 features, 190 s at 50,000).  These tests count the validations (not
time) and check that the answers keep their bits.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.utils.validation as skv

import oracleboost.oracles.base as oracle_base
import oracleboost.oracles.matrix as matrix
from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.engine.model import fixed_order_product
from oracleboost.oracles import MatrixOracle, StumpOracle
from oracleboost.oracles.base import predict_validated
from oracleboost.oracles.matrix import LinearCoordinate, MatrixColumn


@pytest.fixture
def checks(monkeypatch):
    """A counter of scikit-learn's ``check_array`` calls (``validate_data`` at the
    estimator and :func:`check_X` in the hypotheses both go through it)."""
    calls = {"n": 0}
    original = skv.check_array

    def counting(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(skv, "check_array", counting)
    monkeypatch.setattr(oracle_base, "check_array", counting)
    return calls


def _data(n: int, d: int, seed: int, classes: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _calls(checks, f) -> int:
    before = checks["n"]
    f()
    return checks["n"] - before


def _prediction_calls(checks, est, X, y) -> list[int]:
    """The validations of each prediction method of ``est`` on X."""
    return [
        _calls(checks, lambda: est.predict(X)),
        _calls(checks, lambda: est.decision_function(X)),
        _calls(checks, lambda: est.predict_proba(X)),
        _calls(checks, lambda: est.score(X, y)),
        _calls(checks, lambda: list(est.staged_decision_function(X))),
    ]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_linear_margin_classifier_validates_X_once_whatever_its_width(
        checks, classes, fit_intercept):
    counts = []
    for d in (8, 40):
        X, y = _data(60, d, 0, classes)
        est = AcceleratedMarginClassifier(n_estimators=5, fit_intercept=fit_intercept)
        est.fit(X, y)
        counts.append(_prediction_calls(checks, est, X, y))
    # the same few validations at 8 and 40 features (one a column: 9 and 41); score
    # also checks y and the predicted labels
    assert counts[0] == counts[1]
    assert max(counts[0]) <= 3


def test_matrix_columns_check_the_row_indices_once(monkeypatch):
    calls = {"n": 0}
    original = matrix._row_indices

    def counting(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    rng = np.random.default_rng(0)
    H = np.sign(rng.normal(size=(50, 30)))
    y = np.where(H[:, 0] + 0.5 * H[:, 1] > 0, 1, -1)
    rows = np.arange(50).reshape(-1, 1)
    est = AcceleratedMarginClassifier(oracle=MatrixOracle(H), n_estimators=5).fit(rows, y)
    monkeypatch.setattr(matrix, "_row_indices", counting)
    est.predict(rows)
    list(est.staged_decision_function(rows))
    assert calls["n"] == 2  # once a prediction, not once a column (30)


def test_fit_s_eval_set_validates_its_X_once(checks):
    counts = []
    for d in (8, 40):
        X, y = _data(60, d, 1)
        est = AcceleratedMarginClassifier(n_estimators=5)
        counts.append(_calls(checks, lambda e=est, X=X, y=y: e.fit(
            X, y, eval_set=[(X[:30], y[:30])])))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_the_linear_model_keeps_its_bits(seed, classes, fit_intercept):
    """predict, the last staged value and the eval curve's scores are the ordered
    product of the columns predicted one by one, bit for bit."""
    X, y = _data(70, 12, seed, classes)
    est = AcceleratedMarginClassifier(n_estimators=12, fit_intercept=fit_intercept,
                                      random_state=seed).fit(X, y)
    model = est.ensemble_
    basis = [h.predict(X) for h in model.columns]  # each column validating X itself
    if fit_intercept:
        basis.append(np.ones(X.shape[0]))
    expected = fixed_order_product(np.column_stack(basis), model.weights[-1]) / model.scale
    got = est.decision_function(X)
    assert np.array_equal(got, expected)
    assert np.array_equal(list(est.staged_decision_function(X))[-1], got)


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
def test_coordinates_read_at_once_equal_their_predictions(layout):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 7))
    X[X < 0.2] = 0.0
    X = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}[layout]
    hs = [LinearCoordinate(j, s) for j, s in [(3, 1.0), (0, -2.5), (3, 0.1), (6, 1e300)]]
    expected = np.column_stack([h.predict(X) for h in hs])
    assert np.array_equal(LinearCoordinate.predict_columns(hs, X), expected)
    H = rng.normal(size=(9, 4))
    cols = [MatrixColumn(H[:, j].copy(), j, s) for j, s in [(2, 1.0), (0, -3.0)]]
    rows = np.array([[4.0], [0.0], [8.0], [4.0]])
    assert np.array_equal(MatrixColumn.predict_columns(cols, rows),
                          np.column_stack([h.predict(rows) for h in cols]))


def test_a_hypothesis_s_own_predict_still_validates_X():
    h = LinearCoordinate(1, 1.0)
    assert np.array_equal(h.predict([[1, 2], [3, 4]]), [2.0, 4.0])  # a list: converted
    with pytest.raises(ValueError, match="NaN"):
        h.predict(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN"):  # and through the batched path
        LinearCoordinate.predict_columns([h], [[1.0, np.nan]])


def test_staged_stumps_validate_X_once(checks):
    """Staged predictions and eval curves predict one round at a time: the rounds'
    stumps do not validate X again (they were once a round)."""
    X, y = _data(80, 6, 2)
    y = y.astype(float)
    counts = []
    for T in (3, 15):
        est = FunctionalGradientRegressor(oracle=StumpOracle(), n_estimators=T,
                                          random_state=0).fit(X, y)
        counts.append(_calls(checks, lambda e=est: list(e.staged_predict(X))))
        counts.append(_calls(checks, lambda e=est: e.fit(X, y, eval_set=[(X, y)])))
    assert counts[0] == counts[2] <= 2
    assert counts[1] == counts[3]


def test_mirror_votes_validate_X_once(checks):
    X, y = _data(90, 5, 4, classes=3)
    counts = []
    for T in (3, 12):
        est = MirrorBoostingClassifier(oracle=StumpOracle(), n_estimators=T,
                                       random_state=0).fit(X, y)
        counts.append(_calls(checks, lambda e=est: list(e.staged_decision_function(X))))
    assert counts[0] == counts[1] <= 2


def test_a_subclass_that_overrides_predict_is_predicted_by_it():
    """The unchecked path is taken only where the class defines it with its predict: a
    user's subclass that changes predict alone is predicted through that predict."""

    class Shifted(LinearCoordinate):
        def predict(self, X):
            return super().predict(X) + 1.0

    X = np.arange(6.0).reshape(3, 2)
    hs = [Shifted(1, 1.0), LinearCoordinate(0, 1.0)]
    assert np.array_equal(predict_validated(hs[0], X), [2.0, 4.0, 6.0])
    assert np.array_equal(LinearCoordinate.predict_columns(hs, X),
                          [[2.0, 0.0], [4.0, 2.0], [6.0, 4.0]])
