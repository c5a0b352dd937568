"""LightGBM's and XGBoost's everyday options on the estimators: ``class_weight`` on the
classifiers, ``eval_metric`` by LightGBM's metric names, ``init_score`` and a callable
objective on the functional boosters.

Each is checked against its definition: ``class_weight`` against the same weights given
by hand as ``sample_weight`` (bit for bit), each metric name against its formula
computed here, ``init_score`` against ``init`` (a constant offset), and a callable
objective against the built-in loss whose gradient and hessian it returns.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.class_weight import compute_sample_weight

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.datasets import make_ranking
from oracleboost.losses import ndcg
from oracleboost.oracles import StumpOracle
from oracleboost.rows.partitioned import NotDistributedError

CLASSIFIERS = {
    "functional": lambda **kw: FunctionalGradientClassifier(StumpOracle(), n_estimators=6,
                                                            **kw),
    "coordinate": lambda **kw: CoordinateBoostingClassifier(n_estimators=6, **kw),
    "mirror": lambda **kw: MirrorBoostingClassifier(n_estimators=6, **kw),
    "totally_corrective": lambda **kw: TotallyCorrectiveClassifier(n_estimators=6, **kw),
    "accelerated": lambda **kw: AcceleratedMarginClassifier(n_estimators=6, **kw),
}


def _binary(seed=0, n=120):
    return make_classification(n, 5, weights=[0.7], random_state=seed)


# -- class_weight ------------------------------------------------------------------------
@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0}, {1: 0.25, 0: 2.0}])
def test_class_weight_equals_the_same_weights_given_by_hand(name, class_weight):
    for seed in (0, 1):
        X, y = _binary(seed)
        w = np.random.default_rng(seed).uniform(0.5, 2.0, y.shape[0])
        make = CLASSIFIERS[name]
        a = make(class_weight=class_weight).fit(X, y, sample_weight=w)
        b = make().fit(X, y, sample_weight=w * compute_sample_weight(class_weight, y))
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
        for key in ("loss", "margin"):
            if key in a.history_:
                np.testing.assert_array_equal(a.history_[key], b.history_[key])
        # without sample_weight the products are class_weight's own weights
        c = make(class_weight=class_weight).fit(X, y)
        d = make().fit(X, y, sample_weight=compute_sample_weight(class_weight, y))
        np.testing.assert_array_equal(c.decision_function(X), d.decision_function(X))


def test_class_weight_changes_the_fit_and_takes_string_labels():
    X, y = _binary(2)
    labels = np.array(["no", "yes"])[y]
    plain = CLASSIFIERS["functional"]().fit(X, labels)
    heavy = CLASSIFIERS["functional"](class_weight={"yes": 5.0}).fit(X, labels)
    assert not np.array_equal(plain.decision_function(X), heavy.decision_function(X))
    # the weighted positive class is predicted more often
    assert (heavy.predict(X) == "yes").sum() > (plain.predict(X) == "yes").sum()


@pytest.mark.parametrize("bad, error", [("balance", ValueError), (3.0, ValueError),
                                        (["balanced"], ValueError)])
def test_a_bad_class_weight_is_refused_by_name(bad, error):
    X, y = _binary()
    with pytest.raises(error, match="class_weight"):
        CLASSIFIERS["functional"](class_weight=bad).fit(X, y)


def test_class_weight_is_refused_on_a_dask_array():
    da = pytest.importorskip("dask.array")
    X, y = _binary()
    est = CoordinateBoostingClassifier(n_estimators=2, class_weight="balanced")
    with pytest.raises(NotDistributedError, match="class_weight"):
        est.fit(da.from_array(X, chunks=60), da.from_array(y, chunks=60))
    assert not hasattr(est, "ensemble_")


# -- eval_metric by LightGBM's names -----------------------------------------------------
def _auc(y, score):
    """ROC AUC as the Mann-Whitney statistic: the share of (positive, negative) pairs
    ordered right, ties counting half."""
    pos, neg = score[y == 1], score[y == 0]
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def _log_loss(y, p):
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def test_classification_metric_names_by_hand():
    for seed in (0, 1, 2):
        X, y = _binary(seed, 160)
        Xt, yt, Xv, yv = X[:100], y[:100], X[100:], y[100:]
        est = CLASSIFIERS["functional"]().fit(
            Xt, yt, eval_set=[(Xv, yv)],
            eval_metric=["auc", "binary_logloss", "binary_error", "multi_logloss"])
        got = {k: v[-1] for k, v in est.evals_result_["valid_0"].items()}
        p = est.predict_proba(Xv)[:, 1]
        assert got["auc"] == pytest.approx(_auc(yv, est.decision_function(Xv)), rel=1e-12)
        # LightGBM's sign: the log loss itself (lower is better), not neg_log_loss
        assert got["binary_logloss"] == pytest.approx(_log_loss(yv, p), rel=1e-12)
        assert got["multi_logloss"] == got["binary_logloss"]
        assert got["binary_error"] == pytest.approx(np.mean(est.predict(Xv) != yv),
                                                    rel=1e-12)
        assert got["binary_error"] == pytest.approx(got["error"], rel=1e-12)  # its own curve
        # the booster's loss here is the logistic loss: LightGBM's binary_logloss
        assert got["binary_logloss"] == pytest.approx(got["loss"], rel=1e-12)


def test_multiclass_metric_names_by_hand():
    X, y = make_classification(150, 6, n_informative=4, n_classes=3, random_state=3)
    est = CLASSIFIERS["functional"]().fit(X[:100], y[:100], eval_set=[(X[100:], y[100:])],
                                          eval_metric=["multi_logloss", "multi_error"])
    got = {k: v[-1] for k, v in est.evals_result_["valid_0"].items()}
    P, yv = est.predict_proba(X[100:]), y[100:]
    assert got["multi_logloss"] == pytest.approx(
        -np.mean(np.log(P[np.arange(len(yv)), yv])), rel=1e-12)
    assert got["multi_error"] == pytest.approx(np.mean(est.predict(X[100:]) != yv), rel=1e-12)


def test_regression_metric_names_by_hand():
    X, y = make_regression(150, 4, noise=5.0, random_state=4)
    w = np.random.default_rng(4).uniform(0.5, 2.0, 50)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=6).fit(
        X[:100], y[:100], eval_set=[(X[100:], y[100:])], eval_sample_weight=[w],
        eval_metric=["l2", "mse", "l1", "mae", "rmse"])
    got = {k: v[-1] for k, v in est.evals_result_["valid_0"].items()}
    r = est.predict(X[100:]) - y[100:]
    l2 = float(np.sum(w * r**2) / np.sum(w))  # weighted by eval_sample_weight
    assert got["l2"] == pytest.approx(l2, rel=1e-12) and got["mse"] == got["l2"]
    assert got["l1"] == pytest.approx(float(np.sum(w * abs(r)) / np.sum(w)), rel=1e-12)
    assert got["mae"] == got["l1"]
    assert got["rmse"] == pytest.approx(math.sqrt(l2), rel=1e-12)
    # the squared loss is half the l2
    assert got["l2"] == pytest.approx(2 * got["loss"], rel=1e-12)


def test_ndcg_name_on_the_ranker():
    X, y, q = make_ranking(n_queries=30, random_state=0)
    Xv, yv, qv = make_ranking(n_queries=10, random_state=1)
    est = FunctionalGradientRanker(StumpOracle(), n_estimators=5).fit(
        X, y, q, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric="ndcg")
    assert est.evals_result_["valid_0"]["ndcg"][-1] == ndcg(yv, est.predict(Xv), qv)


def test_an_unknown_metric_name_lists_lightgbm_s_names():
    X, y = _binary()
    with pytest.raises(ValueError, match="eval_metric: 'logloss'.*binary_logloss"):
        CLASSIFIERS["functional"]().fit(X, y, eval_set=[(X, y)], eval_metric="logloss")
    # a scikit-learn scorer name keeps scikit-learn's meaning (and sign)
    est = CLASSIFIERS["functional"]().fit(X, y, eval_set=[(X, y)],
                                          eval_metric="neg_log_loss")
    assert est.evals_result_["training"]["neg_log_loss"][-1] < 0
