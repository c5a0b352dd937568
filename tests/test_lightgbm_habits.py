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
    # SoftBoost and TotalBoost keep their model while the oracle repeats a hypothesis
    # and γ̂ falls by ε a round (as in test_callbacks): a coarse ε moves them in 8 rounds
    coarse = {"tol": 0.1} if name in ("softboost", "totalboost") else {}
    est, X, _, _ = _fitted(name, **coarse)
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


# -- eval_metric, eval_names, evals_result_ -------------------------------------------
def _ndcg_scorer(est, X, y, qid):
    """A ranking scorer: the ranker's own score (it takes the eval set's qid)."""
    return est.score(X, y, qid)


#: The scorers of each task: names for scikit-learn's, a callable for the ranker.
METRICS = {"binary": ["accuracy", "neg_log_loss", "roc_auc"],
           "classification": ["accuracy", "neg_log_loss"],
           "regression": ["r2", "neg_mean_squared_error"],
           "ranking": [_ndcg_scorer]}


def _task(name: str) -> str:
    case = CASES[name]
    X, y, extra = case.data()
    if "qid" in extra:
        return "ranking"
    if not case.classifier:
        return "regression"
    return "binary" if len(np.unique(y)) == 2 else "classification"


def _watched_fit(name: str, **params):
    """CASES[name] fitted on the first ~2/3 of its rows (whole queries), watching the
    rest: ``(estimator, (X_val, y_val, scorer metadata), eval_metric)``."""
    case = CASES[name]
    X, y, extra = case.data()
    if "qid" in extra:
        q = extra["qid"]
        train = q < np.unique(q)[14]
    else:
        train = np.arange(len(y)) % 3 != 0
    test = ~train
    params = {"n_estimators": 6, "random_state": 0, **params}
    est = case.make(case.oracle(), **params)
    # a loss without probabilities (the multiclass hinge) is scored without log loss
    metric = [m for m in METRICS[_task(name)]
              if m != "neg_log_loss" or hasattr(est, "predict_proba")]
    fit_kw = {k: v[train] for k, v in extra.items()}
    meta = {k: v[test] for k, v in extra.items()}
    if meta:
        fit_kw["eval_qid"] = [meta["qid"]]
    est.fit(X[train], y[train], eval_set=[(X[test], y[test])], eval_metric=metric, **fit_kw)
    return est, (X[test], y[test], meta), metric


def _cut(est, k: int):
    """The fitted estimator with its model cut back to its first k rounds."""
    import copy

    cut = copy.deepcopy(est)
    cut.ensemble_.truncate(k)
    return cut


@pytest.mark.parametrize("name", CASES)
def test_each_round_s_score_is_the_scorer_on_the_model_cut_to_that_round(name):
    from sklearn.metrics import get_scorer

    est, (Xv, yv, meta), metric = _watched_fit(name)
    n = est.n_estimators_
    assert len(est.history_["loss"]) == n >= 2
    for m in metric:
        scorer, key = (get_scorer(m), m) if isinstance(m, str) else (m, m.__name__)
        logged = est.history_[f"val_{key}_0"]
        assert len(logged) == n
        for k in (1, n // 2, n):
            assert logged[k - 1] == scorer(_cut(est, k), Xv, yv, **meta)
        assert logged[-1] == scorer(est, Xv, yv, **meta)
        assert est.evals_result_["valid_0"][key] == logged.tolist()
    # and against the staged predictions, every round
    if _task(name) == "ranking":
        from oracleboost.losses import ndcg

        staged = [ndcg(yv, p, meta["qid"]) for p in est.staged_predict(Xv)]
        assert est.history_["val__ndcg_scorer_0"].tolist() == staged
        assert [est.score(Xv, yv, meta["qid"], num_iteration=k) for k in range(1, n + 1)] \
            == staged
    elif _task(name) == "regression":
        from sklearn.metrics import r2_score

        staged = [r2_score(yv, p) for p in est.staged_predict(Xv)]
        assert est.history_["val_r2_0"].tolist() == staged
    else:
        from sklearn.metrics import accuracy_score, log_loss

        if "neg_log_loss" in metric:
            staged = [-log_loss(yv, p, labels=est.classes_)
                      for p in est.staged_predict_proba(Xv)]
            assert est.history_["val_neg_log_loss_0"].tolist() == staged
        assert est.history_["val_accuracy_0"].tolist() == [
            accuracy_score(yv, est.predict(Xv, num_iteration=k)) for k in range(1, n + 1)]


def test_the_scorer_gets_the_eval_sample_weight():
    from sklearn.metrics import accuracy_score

    X, y = make_classification(150, 5, flip_y=0.2, random_state=0)
    Xt, yt, Xv, yv = X[:100], y[:100], X[100:], y[100:]
    w = np.linspace(0.1, 3.0, len(yv))
    est = CASES["adaboost"].make(None, n_estimators=6).fit(
        Xt, yt, eval_set=[(Xv, yv)], eval_sample_weight=[w], eval_metric="accuracy")
    weighted = [accuracy_score(yv, p, sample_weight=w) for p in est.staged_predict(Xv)]
    assert est.history_["val_accuracy_0"].tolist() == weighted
    assert weighted != [accuracy_score(yv, p) for p in est.staged_predict(Xv)]


def test_evals_result_in_lightgbm_s_shape():
    X, y = make_classification(150, 5, random_state=0)
    Xt, yt, Xv, yv = X[:100], y[:100], X[100:], y[100:]
    est = CASES["gradient-logistic"].make(None, n_estimators=5)
    est.fit(Xt, yt, eval_set=[(Xt, yt), (Xv, yv)], eval_metric="roc_auc")
    result = est.evals_result_
    # LightGBM's names: the training data itself is "training", the others valid_<i>
    assert list(result) == ["training", "valid_1"]
    for i, name in enumerate(result):
        assert list(result[name]) == ["loss", "error", "roc_auc"]
        for metric, values in result[name].items():
            assert isinstance(values, list) and all(type(v) is float for v in values)
            assert values == est.history_[f"val_{metric}_{i}"].tolist()
            assert len(values) == 5
    est.fit(Xt, yt, eval_set=[(Xv, yv), (Xt, yt)], eval_names=["valid", "train"])
    assert list(est.evals_result_) == ["valid", "train"]
    assert list(est.evals_result_["valid"]) == ["loss", "error"]
    assert est.fit(Xt, yt).evals_result_ == {}  # as LightGBM's without eval_set
    reg = CASES["gradient-regression"]
    Xr, yr, _ = reg.data()
    fitted = reg.make(None, n_estimators=3).fit(Xr, yr, eval_set=[(Xr[:50], yr[:50])])
    assert list(fitted.evals_result_["valid_0"]) == ["loss"]  # no error for a regressor


def test_evals_result_before_fit_is_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        _ = CASES["adaboost"].make(None).evals_result_


@pytest.mark.parametrize("name", ["adaboost", "gradient-softmax", "accelerated",
                                  "gradient-ranking"])
def test_warm_start_continues_the_scores_and_evals_result(name):
    once, _, metric = _watched_fit(name, n_estimators=8)
    case = CASES[name]
    X, y, extra = case.data()
    est, _, _ = _watched_fit(name, n_estimators=4, warm_start=True)
    # the same call again with a larger budget continues
    est.set_params(n_estimators=8)
    if "qid" in extra:
        q = extra["qid"]
        train = q < np.unique(q)[14]
        fit_kw = {"qid": q[train], "eval_qid": [q[~train]]}
    else:
        train = np.arange(len(y)) % 3 != 0
        fit_kw = {}
    est.fit(X[train], y[train], eval_set=[(X[~train], y[~train])], eval_metric=metric,
            **fit_kw)
    assert len(est.history_["loss"]) == 8
    assert est.evals_result_ == once.evals_result_


def test_early_stopping_cuts_the_scores_with_the_model():
    from sklearn.metrics import r2_score

    case = CASES["gradient-regression"]
    X, y, _ = case.data()
    est = case.make(None, n_estimators=400, learning_rate=0.5, n_iter_no_change=3,
                    random_state=0)
    est.fit(X[:150], y[:150], eval_set=[(X[150:], y[150:])], eval_metric="r2",
            eval_names=["valid"])
    assert est.stop_reason_ == "early_stopping"
    curve = est.evals_result_["valid"]["r2"]
    assert len(curve) == est.best_iteration_ == est.n_estimators_ < 400
    assert curve == [r2_score(y[150:], p) for p in est.staged_predict(X[150:])]
    assert "heldout_r2" not in est.history_  # the held-out rows are not scored


@pytest.mark.parametrize("kwargs, error, match", [
    ({"eval_metric": "no_such_scorer"}, ValueError, "eval_metric"),
    ({"eval_metric": ["accuracy", "accuracy"]}, ValueError, "eval_metric names 'accuracy' twice"),
    ({"eval_metric": {"loss": "accuracy"}}, ValueError, "eval_metric: 'loss'"),
    ({"eval_metric": 3}, TypeError, "eval_metric"),
    ({"eval_metric": [3]}, TypeError, "eval_metric"),
    ({"eval_metric": lambda est, X, y: 1.0}, ValueError, "eval_metric: cannot name"),
    ({"eval_names": ["a", "b"]}, ValueError, "eval_names has 2 names"),
    ({"eval_names": "valid"}, TypeError, "eval_names"),
    ({"eval_names": [3]}, TypeError, "eval_names"),
])
def test_bad_eval_arguments_are_refused_by_name(kwargs, error, match):
    X, y = make_classification(60, 4, random_state=0)
    est = CASES["adaboost"].make(None, n_estimators=3)
    with pytest.raises(error, match=match):
        est.fit(X, y, eval_set=[(X, y)], **kwargs)
    assert not hasattr(est, "ensemble_")


def test_a_metric_style_callable_is_refused_with_the_way_to_wrap_it():
    from sklearn.metrics import accuracy_score

    X, y = make_classification(60, 4, random_state=0)
    with pytest.raises(TypeError, match="make_scorer"):
        CASES["adaboost"].make(None, n_estimators=3).fit(
            X, y, eval_set=[(X, y)], eval_metric=accuracy_score)


def test_eval_arguments_without_an_eval_set_are_refused():
    X, y = make_classification(60, 4, random_state=0)
    for kwargs in ({"eval_metric": "accuracy"}, {"eval_names": ["a"]}):
        with pytest.raises(ValueError, match="is given but eval_set is not"):
            CASES["adaboost"].make(None, n_estimators=3).fit(X, y, **kwargs)


def test_a_failing_scorer_names_itself_and_leaves_the_estimator_unfitted():
    X, y = make_classification(60, 4, random_state=0)
    est = CASES["gradient-regression"].make(None, n_estimators=3)
    Xr, yr = X.copy(), y * 3.5
    with pytest.raises(AttributeError, match="eval_metric 'roc_auc' on eval set 'training'"):
        est.fit(Xr, yr, eval_set=[(Xr, yr)], eval_metric="roc_auc")
    assert not hasattr(est, "ensemble_")
    with pytest.raises(ValueError, match="eval_metric 'accuracy' on eval set 'training'"):
        est.fit(Xr, yr, eval_set=[(Xr, yr)], eval_metric="accuracy")
    assert not hasattr(est, "ensemble_")

    def half(est, X, y, sample_weight=None):
        return "a half"

    with pytest.raises(TypeError, match="eval_metric 'half' returned str"):
        est.fit(Xr, y.astype(float), eval_set=[(Xr, y)], eval_metric=half)
    assert not hasattr(est, "ensemble_")


def test_a_dataframe_eval_set_is_scored_without_feature_name_warnings():
    import warnings

    pd = pytest.importorskip("pandas")
    X, y = make_classification(90, 4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    est = CASES["gradient-logistic"].make(None, n_estimators=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(frame[:60], y[:60], eval_set=[(frame[60:], y[60:])], eval_metric="accuracy")
    assert est.evals_result_["valid_0"]["accuracy"][-1] == est.score(frame[60:], y[60:])


# -- the ranker's score: NDCG as LightGBM computes it ---------------------------------
def test_ndcg_by_hand():
    from math import log2

    from oracleboost.losses import ndcg

    y = np.array([2.0, 0.0, 1.0, 0.0, 0.0, 3.0])
    f = np.array([0.1, 0.3, 0.2, 5.0, 1.0, -1.0])
    qid = np.array([7, 7, 7, 8, 8, 9])
    # query 7 ranks its rows 1, 2, 0 (relevance 0, 1, 2); the ideal order is 2, 1, 0
    dcg = 0 / log2(2) + (2**1 - 1) / log2(3) + (2**2 - 1) / log2(4)
    ideal = (2**2 - 1) / log2(2) + (2**1 - 1) / log2(3) + 0 / log2(4)
    # query 8 has no relevant row and query 9 one row: every order is ideal (1, as LightGBM)
    expected = (dcg / ideal + 1.0 + 1.0) / 3
    assert ndcg(y, f, qid) == pytest.approx(expected, rel=1e-15)
    assert ndcg(y, -f, qid) != ndcg(y, f, qid)
    with pytest.raises(ValueError, match="non-negative"):
        ndcg(y - 1, f, qid)


def test_the_ranker_s_score_is_ndcg_and_cross_validate_routes_qid():
    import sklearn
    from sklearn.model_selection import GroupKFold, cross_validate

    from oracleboost.losses import ndcg

    case = CASES["gradient-ranking"]
    X, y, extra = case.data()
    q = extra["qid"]
    est = case.make(None, n_estimators=5, random_state=0).fit(X, y, q)
    assert est.score(X, y, q) == ndcg(y, est.predict(X), q)
    with pytest.raises(ValueError, match="qid"):
        est.score(X, y, q[:-1])
    # cross_validate's default scorer is score(X, y, qid): qid reaches it by routing
    with sklearn.config_context(enable_metadata_routing=True):
        routed = case.make(None, n_estimators=5, random_state=0)
        routed.set_fit_request(qid=True).set_score_request(qid=True)
        cv = GroupKFold(n_splits=3)
        got = cross_validate(routed, X, y, params={"qid": q, "groups": q}, cv=cv,
                             error_score="raise")["test_score"]
        for (train, test), score in zip(cv.split(X, y, q), got, strict=True):
            fold = case.make(None, n_estimators=5, random_state=0).fit(X[train], y[train],
                                                                        q[train])
            assert score == fold.score(X[test], y[test], q[test])
