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


@pytest.mark.parametrize("name", ["functional", "coordinate"])
def test_class_weight_weighs_early_stopping_s_held_out_rows_too(name):
    # the held-out rows are weighted by their part of the products, as scikit-learn's
    # gradient boosting splits its class-weighted weights
    class_weight = {0: 0.5, 1: 3.0}
    for seed in (0, 1):
        X, y = _binary(seed, 200)
        kw = dict(n_iter_no_change=3, validation_fraction=0.25, random_state=seed)
        a = CLASSIFIERS[name](class_weight=class_weight, **kw).fit(X, y)
        b = CLASSIFIERS[name](**kw).fit(X, y, sample_weight=compute_sample_weight(
            class_weight, y))
        np.testing.assert_array_equal(a.history_["heldout_loss"], b.history_["heldout_loss"])
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


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


# -- init_score ----------------------------------------------------------------------------
def _same_terms(a, b):
    """The two ensembles' rounds: the same hypotheses' outputs and coefficients."""
    assert a.ensemble_.round_delta == b.ensemble_.round_delta
    assert a.ensemble_.round_index == b.ensemble_.round_index


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("projection", ["naive", "residual"])
def test_a_constant_init_score_equals_init(seed, projection):
    X, y = make_regression(120, 4, noise=3.0, random_state=seed)
    c = float(np.random.default_rng(seed).normal(3.0, 2.0))
    Xv, yv = X[:40], y[:40]
    kw = dict(n_estimators=6, projection=projection)
    a = FunctionalGradientRegressor(StumpOracle(), init=c, **kw).fit(
        X, y, eval_set=[(Xv, yv)])
    b = FunctionalGradientRegressor(StumpOracle(), **kw).fit(
        X, y, init_score=np.full(120, c), eval_set=[(Xv, yv)],
        eval_init_score=[np.full(40, c)])
    _same_terms(a, b)
    for key in ("loss", "edge", "step", "grad_norm", "val_loss_0"):
        np.testing.assert_array_equal(a.history_[key], b.history_[key])
    # no best constant over an offset (LightGBM's boost_from_average skipped)
    assert b.intercept_ == 0.0 and a.intercept_ == c
    # predict leaves the offset out; added back, it is init's model (to rounding: the
    # offset enters the sum last instead of first)
    np.testing.assert_allclose(b.predict(X) + c, a.predict(X), rtol=0, atol=1e-12 * abs(c))


@pytest.mark.parametrize("loss, K", [("logistic", 2), ("exponential", 2), ("softmax", 3)])
def test_a_constant_init_score_equals_init_for_the_classifier(loss, K):
    for seed in (0, 1):
        X, y = make_classification(120, 6, n_informative=4, n_classes=K, random_state=seed)
        shape = (120, K) if loss == "softmax" else (120,)
        a = FunctionalGradientClassifier(StumpOracle(), loss=loss, init=-0.5,
                                         n_estimators=6).fit(X, y)
        b = FunctionalGradientClassifier(StumpOracle(), loss=loss, n_estimators=6).fit(
            X, y, init_score=np.full(shape, -0.5))
        _same_terms(a, b)
        for key in ("loss", "train_error", "step"):
            np.testing.assert_array_equal(a.history_[key], b.history_[key])
        # (a margin, or the K class scores: each moves by the offset)
        np.testing.assert_allclose(b.decision_function(X) - 0.5, a.decision_function(X),
                                   rtol=0, atol=1e-12)


def test_init_score_is_learned_on_top_of_as_a_shifted_target():
    # the squared loss at f + o is the squared loss at f of the target y − o: the fit with
    # an offset is the fit of the residual target from 0 (to rounding: y − o is
    # formed in another order)
    for seed in (0, 1, 2):
        X, y = make_regression(120, 4, noise=3.0, random_state=seed)
        o = np.random.default_rng(seed).normal(0.0, 10.0, 120)
        offset = FunctionalGradientRegressor(StumpOracle(), n_estimators=6).fit(
            X, y, init_score=o)
        shifted = FunctionalGradientRegressor(StumpOracle(), n_estimators=6, init=0.0).fit(
            X, y - o)
        np.testing.assert_allclose(offset.predict(X), shifted.predict(X), rtol=0, atol=1e-9)
        np.testing.assert_allclose(offset.history_["loss"], shifted.history_["loss"],
                                   rtol=1e-12)


def test_init_score_with_zero_weights_and_warm_start():
    X, y = make_regression(100, 3, noise=1.0, random_state=5)
    o = np.random.default_rng(5).normal(size=100)
    w = np.ones(100)
    w[::7] = 0.0
    keep = w > 0
    a = FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(
        X, y, sample_weight=w, init_score=o)
    b = FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(
        X[keep], y[keep], init_score=o[keep])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    # a warm start continues with the same offsets, and refuses others
    warm = FunctionalGradientRegressor(StumpOracle(), n_estimators=3, warm_start=True)
    warm.fit(X, y, init_score=o).set_params(n_estimators=5).fit(X, y, init_score=o)
    once = FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(X, y, init_score=o)
    np.testing.assert_array_equal(warm.predict(X), once.predict(X))
    with pytest.raises(ValueError, match="init_score"):
        warm.set_params(n_estimators=6).fit(X, y, init_score=o + 1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"init_score": np.zeros(99)}, r"init_score must have one row per row of X \(100\)"),
    ({"init_score": np.zeros((100, 2))}, r"init_score must have shape \(100,\)"),
    ({"init_score": np.full(100, np.nan)}, "init_score contains NaN"),
    ({"eval_set": [(np.zeros((5, 3)), np.zeros(5))], "eval_init_score": [np.zeros(4)]},
     r"eval_init_score \(eval_set\[0\]\)"),
    ({"eval_set": [(np.zeros((5, 3)), np.zeros(5))], "eval_init_score": []},
     "eval_init_score has 0 entries"),
    ({"eval_init_score": [np.zeros(5)]}, "eval_init_score is given but eval_set is not"),
])
def test_a_bad_init_score_is_refused_by_name(kwargs, match):
    X, y = make_regression(100, 3, random_state=0)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=2)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, **kwargs)
    assert not hasattr(est, "ensemble_")


def test_init_score_is_refused_where_it_cannot_be_kept():
    X, y = make_regression(100, 3, random_state=0)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=2, n_iter_no_change=2)
    with pytest.raises(ValueError, match="init_score with early stopping"):
        est.fit(X, y, init_score=np.zeros(100))
    Xc, yc = _binary()
    with pytest.raises(ValueError, match=r"init_score must have shape \(120, 3\)"):
        Xm, ym = make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)
        FunctionalGradientClassifier(StumpOracle()).fit(Xm, ym, init_score=np.zeros(120))
    # the boosters whose margin is of their own combination take no init_score, and say
    # why
    for make in (CLASSIFIERS[n] for n in ("mirror", "totally_corrective", "accelerated")):
        with pytest.raises(TypeError, match=r"fit\(\) takes no init_score: "):
            make().fit(Xc, yc, init_score=np.zeros(120))
    da = pytest.importorskip("dask.array")
    with pytest.raises(NotDistributedError, match="init_score"):
        FunctionalGradientRegressor(StumpOracle(), init=0.0).fit(
            da.from_array(X, chunks=50), da.from_array(y, chunks=50),
            init_score=np.zeros(100))


# -- a callable objective ------------------------------------------------------------------
def _squared(y_true, y_pred):
    return y_pred - y_true, np.ones_like(y_pred)


def _logistic_unit_hessian(y_true, y_pred):
    """The logistic loss' gradient (LightGBM's binary objective at sigmoid 1: p − y) with
    a unit hessian: the gradient step."""
    return _sigmoid(y_pred) - y_true, np.ones_like(y_pred)


def _logistic(y_true, y_pred):
    p = _sigmoid(y_pred)
    return p - y_true, p * (1.0 - p)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@pytest.mark.parametrize("oracle", [StumpOracle(), None])  # None: TreeOracle(max_depth=3)
def test_a_callable_squared_loss_equals_loss_squared(oracle):
    for seed in (0, 1, 2):
        X, y = make_regression(120, 4, noise=3.0, random_state=seed)
        w = np.random.default_rng(seed).uniform(0.5, 2.0, 120)
        for sw in (None, w):
            kw = dict(n_estimators=6, random_state=seed)
            a = FunctionalGradientRegressor(oracle, **kw).fit(X, y, sample_weight=sw)
            # a function starts at 0: given the squared loss' start, the fits are one
            b = FunctionalGradientRegressor(oracle, loss=_squared, init=a.intercept_,
                                            **kw).fit(X, y, sample_weight=sw)
            np.testing.assert_array_equal(a.predict(X), b.predict(X))
            for key in ("edge", "step", "grad_norm"):
                np.testing.assert_array_equal(a.history_[key], b.history_[key])
            assert np.isnan(b.history_["loss"]).all()  # a function gives no loss value


def test_a_callable_logistic_gradient_equals_the_built_in_logistic_loss():
    # the built-in logistic loss here is log(1 + e^{−y f}) with y = ±1, whose gradient
    # in f is σ(f) − [y = 1]: the same function LightGBM's binary objective gives.  With
    # a unit hessian the callable's step is the gradient step the built-in loss takes
    # (bit for bit where the gradients agree bit for bit: here to rounding, since σ(f)
    # − 1 and −σ(−f) round differently, so the fits are compared to a tolerance).
    from oracleboost.losses import Logistic

    def library_gradient(y_true, y_pred):  # the library's own formula, as a function
        return Logistic().gradient(np.where(y_true > 0, 1.0, -1.0), y_pred), \
            np.ones_like(y_pred)

    for seed in (0, 1, 2):
        X, y = _binary(seed)
        kw = dict(n_estimators=8, init=0.0)
        a = FunctionalGradientClassifier(StumpOracle(), **kw).fit(X, y)
        b = FunctionalGradientClassifier(StumpOracle(), loss=library_gradient, **kw).fit(X, y)
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
        np.testing.assert_array_equal(a.history_["train_error"], b.history_["train_error"])
        c = FunctionalGradientClassifier(StumpOracle(), loss=_logistic_unit_hessian,
                                         **kw).fit(X, y)
        np.testing.assert_allclose(c.decision_function(X), a.decision_function(X),
                                   rtol=0, atol=1e-12)


def test_a_callable_hessian_gives_lightgbm_s_newton_leaf_values():
    # one stump, learning_rate 1, start 0: each side's value is −Σ s g / Σ s H over its
    # rows (LightGBM's leaf value without regularisation), and h = that, scaled by
    # Newton's step along it, which is 1 for a least-squares fit
    for seed in (0, 1, 2):
        X, y = _binary(seed)
        w = np.random.default_rng(seed).uniform(0.5, 2.0, y.shape[0])
        est = FunctionalGradientClassifier(StumpOracle(), loss=_logistic, n_estimators=1,
                                           learning_rate=1.0).fit(X, y, sample_weight=w)
        f = est.decision_function(X)
        g, H = _logistic(y.astype(float), np.zeros(y.shape[0]))
        sides = np.unique(f)
        assert len(sides) == 2
        for value in sides:
            rows = f == value
            assert value == pytest.approx(-np.sum(w[rows] * g[rows]) / np.sum(w[rows] * H[rows]),
                                          rel=1e-12)
        # Newton's leaves differ from the gradient step's (the mean of −g on each side)
        plain = FunctionalGradientClassifier(StumpOracle(), loss=_logistic_unit_hessian,
                                             n_estimators=1, learning_rate=1.0).fit(
            X, y, sample_weight=w)
        assert not np.allclose(plain.decision_function(X), f)


def test_a_callable_objective_records_no_loss_and_gives_no_probabilities():
    X, y = _binary(3)
    est = FunctionalGradientClassifier(StumpOracle(), loss=_logistic, n_estimators=4).fit(
        X[:80], y[:80], eval_set=[(X[80:], y[80:])], eval_metric="auc")
    assert np.isnan(est.history_["loss"]).all() and np.isnan(est.history_["val_loss_0"]).all()
    assert est.stop_reason_ == "max_rounds"
    assert est.intercept_ == 0.0  # no best constant of an unknown loss
    assert not hasattr(est, "predict_proba")  # no link to probabilities is known
    assert set(est.predict(X)) <= {0, 1}
    assert np.isfinite(est.evals_result_["valid_0"]["auc"]).all()


def _bad_grad(y_true, y_pred):
    return y_pred[:-1], np.ones_like(y_pred)


def _zero_hess(y_true, y_pred):
    return y_pred - y_true, np.zeros_like(y_pred)


@pytest.mark.parametrize("params, match", [
    ({"loss": _bad_grad}, "returned grad of shape"),
    ({"loss": _zero_hess}, "hessian that is not positive"),
    ({"loss": _squared, "projection": "residual"}, "projection='naive'"),
    ({"loss": _squared, "n_iter_no_change": 2}, "no loss value for early stopping"),
])
def test_a_callable_objective_s_limits_are_refused_by_name(params, match):
    X, y = make_regression(80, 3, random_state=0)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=2, **params)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert not hasattr(est, "ensemble_")
    Xm, ym = make_classification(90, 6, n_informative=4, n_classes=3, random_state=0)
    with pytest.raises(ValueError, match="two classes"):
        FunctionalGradientClassifier(StumpOracle(), loss=_logistic).fit(Xm, ym)
    da = pytest.importorskip("dask.array")
    with pytest.raises(NotDistributedError, match="loss=<function>"):
        FunctionalGradientRegressor(StumpOracle(), loss=_squared, init=0.0).fit(
            da.from_array(X, chunks=40), da.from_array(y, chunks=40))
