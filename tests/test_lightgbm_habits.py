"""LightGBM's habits on every booster (issue 22): ``num_iteration`` on the prediction
methods, ``eval_metric`` and ``eval_names`` in ``fit``, ``evals_result_`` after it, and
the ranker's NDCG ``score``.

The model after k rounds is defined by the staged methods: ``num_iteration=k`` and the
per-round ``eval_metric`` values must equal what they give at round k, to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from test_booster_contract import CASES

from oracleboost.boosters import AcceleratedMarginClassifier

#: The prediction methods and their staged forms.
METHODS = ("predict", "decision_function", "predict_proba")


def _fitted(name: str, **params):
    """CASES[name] fitted for 8 rounds: ``(estimator, X, y, fit keywords)``."""
    case = CASES[name]
    X, y, extra = case.data()
    params = {"n_estimators": 8, "random_state": 0, **params}
    return case.make(case.oracle(), **params).fit(X, y, **extra), X, y, extra


def _kernel_case():
    X, y = make_classification(80, 4, random_state=1)
    est = AcceleratedMarginClassifier(kernel="rbf", kernel_params={"gamma": 0.3},
                                      n_estimators=8, tol=0.0).fit(X, y)
    return est, X, y


# -- num_iteration --------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_num_iteration_equals_the_staged_value_at_that_round(name):
    est, X, _, _ = _fitted(name)
    n = est.n_estimators_
    assert n >= 2
    checked = 0
    for method in METHODS:
        if not hasattr(est, method):
            continue
        staged = list(getattr(est, f"staged_{method}")(X))
        assert len(staged) == n
        for k in range(1, n + 1):
            np.testing.assert_array_equal(getattr(est, method)(X, num_iteration=k),
                                          staged[k - 1])
        # the rounds differ, so the equalities above tell k apart
        assert not np.array_equal(staged[0], staged[-1]) or method == "predict"
        np.testing.assert_array_equal(getattr(est, method)(X, num_iteration=None),
                                      getattr(est, method)(X))
        checked += 1
    assert checked >= 1


def test_num_iteration_on_a_kernel_model():
    est, X, _ = _kernel_case()
    for method in METHODS:
        staged = list(getattr(est, f"staged_{method}")(X))
        for k in (1, 4, len(staged)):
            np.testing.assert_array_equal(getattr(est, method)(X, num_iteration=k),
                                          staged[k - 1])


@pytest.mark.parametrize("name", ["adaboost", "gradient-regression"])
def test_score_takes_num_iteration(name):
    from sklearn.metrics import accuracy_score, r2_score

    est, X, y, _ = _fitted(name)
    metric = accuracy_score if CASES[name].classifier else r2_score
    w = np.linspace(0.5, 2.0, len(y))
    for k, pred in enumerate(est.staged_predict(X), start=1):
        assert est.score(X, y, w, num_iteration=k) == metric(y, pred, sample_weight=w)


def test_num_iteration_does_not_change_the_fitted_model():
    est, X, _, _ = _fitted("gradient-softmax")
    before = est.decision_function(X)
    rounds = est.n_estimators_
    est.predict(X, num_iteration=2)
    assert est.n_estimators_ == rounds
    np.testing.assert_array_equal(est.decision_function(X), before)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (9, ValueError), (-1, ValueError),
                                        (2.0, TypeError), (True, TypeError),
                                        ("3", TypeError)])
def test_a_bad_num_iteration_is_refused_by_name(bad, error):
    est, X, _, _ = _fitted("adaboost")
    for method in METHODS:
        with pytest.raises(error, match="num_iteration"):
            getattr(est, method)(X, num_iteration=bad)


def test_num_iteration_with_numpy_integers():
    est, X, _, _ = _fitted("adaboost")
    np.testing.assert_array_equal(est.decision_function(X, num_iteration=np.int64(3)),
                                  est.decision_function(X, num_iteration=3))


def test_after_early_stopping_none_is_the_best_iteration():
    est, X, _, _ = _fitted("gradient-regression", n_estimators=400, n_iter_no_change=3,
                           learning_rate=0.5)
    assert est.stop_reason_ == "early_stopping"
    assert est.best_iteration_ == est.n_estimators_ < 400
    np.testing.assert_array_equal(est.predict(X, num_iteration=est.best_iteration_),
                                  est.predict(X))
    with pytest.raises(ValueError, match="num_iteration"):
        est.predict(X, num_iteration=est.best_iteration_ + 1)


def test_num_iteration_on_a_dask_array():
    da = pytest.importorskip("dask.array")
    est, X, _, _ = _fitted("gradient-softmax")
    Xd = da.from_array(X, chunks=(40, X.shape[1]))
    for method in METHODS:
        got = getattr(est, method)(Xd, num_iteration=3)
        assert isinstance(got, da.Array)
        np.testing.assert_array_equal(got.compute(scheduler="synchronous"),
                                      getattr(est, method)(X, num_iteration=3))
    with pytest.raises(ValueError, match="num_iteration"):
        est.predict(Xd, num_iteration=0)
