"""``init_score`` (a per-row starting score) on coordinate-descent boosting and on the
ranker, and its refusal, with the reason, where a booster's mathematics has no place
for it.

Each fit with an offset is checked against a fit that reaches the same problem another
way: for the exponential loss, ``Σ s e^{−y(o + f)} = Σ (s e^{−y o}) e^{−y f}`` is the
risk of the weights ``s e^{−y o}`` without an offset; the first round of any margin loss
weighs the rows ``∝ s (−φ'(y o))``; and an offset that is the decision of a fitted model
of m rounds continues it, so k more rounds are rounds m + 1 … m + k of one longer fit
(a warm start through the offset).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientRanker,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.datasets import make_ranking
from oracleboost.oracles import MatrixOracle, StumpOracle
from oracleboost.rows.partitioned import NotDistributedError

SEEDS = (0, 1, 2)


def _data(seed, n=150):
    X, y = make_classification(n, 5, n_informative=3, weights=[0.6], random_state=seed)
    return X, y, np.where(y == 1, 1.0, -1.0)


def _terms(est, X):
    """Each round's term on X: the coefficient's move and its hypothesis' outputs."""
    e = est.ensemble_
    return [(delta, np.asarray(e.hypotheses[j].predict(X)))
            for j, delta in zip(e.round_index, e.round_delta, strict=True)]


def _assert_same_terms(a, b, X, rtol):
    ta, tb = _terms(a, X), _terms(b, X)
    assert len(ta) == len(tb)
    for (da, ha), (db, hb) in zip(ta, tb, strict=True):
        np.testing.assert_array_equal(ha, hb)  # the same hypotheses, in the same order
        np.testing.assert_allclose(da, db, rtol=rtol, atol=0)


# -- coordinate-descent boosting -------------------------------------------------------------
@pytest.mark.parametrize("step", ["adaboost", "wolfe", "optimal"])
def test_an_offset_under_the_exponential_loss_is_the_weights_s_exp_minus_y_o(step):
    # Σ s e^{−y(o + f)} = Σ (s e^{−yo}) e^{−yf}: the same risk up to a constant factor,
    # so the same dual weights, edges and steps, round by round (to rounding: the
    # weights are made in another order)
    for seed in SEEDS:
        X, y, ypm = _data(seed)
        rng = np.random.default_rng(seed)
        o = rng.normal(0.0, 1.0, y.shape[0])
        s = rng.uniform(0.5, 2.0, y.shape[0])
        kw = dict(step=step, n_estimators=8, duality_gap=False)
        offset = CoordinateBoostingClassifier(**kw).fit(X, y, sample_weight=s, init_score=o)
        weighted = CoordinateBoostingClassifier(**kw).fit(
            X, y, sample_weight=s * np.exp(-ypm * o))
        _assert_same_terms(offset, weighted, X, rtol=1e-9)
        np.testing.assert_allclose(offset.history_["edge"], weighted.history_["edge"],
                                   rtol=1e-9)
        # the recorded risk is of the scores o + f, normalised by Σ s
        f = offset.decision_function(X)
        risk = np.sum(s * np.exp(-ypm * (o + f))) / np.sum(s)
        np.testing.assert_allclose(offset.history_["loss"][-1], risk, rtol=1e-9)
        assert offset.history_["train_error"][-1] == pytest.approx(
            np.sum(s * (ypm * (o + f) <= 0)) / np.sum(s))


def test_the_first_round_weighs_the_rows_by_the_loss_derivative_at_the_offset():
    # the logistic loss' first weights are ∝ −φ'(y o) = σ(−y o): those of a fit without
    # an offset given them as sample weights (−φ'(0) = ½ cancels), so the first
    # hypothesis and edge are that fit's
    for seed in SEEDS:
        X, y, ypm = _data(seed)
        o = np.random.default_rng(seed).normal(0.0, 2.0, y.shape[0])
        kw = dict(loss="logistic", step="wolfe", n_estimators=1)
        offset = CoordinateBoostingClassifier(**kw).fit(X, y, init_score=o)
        weighted = CoordinateBoostingClassifier(**kw).fit(
            X, y, sample_weight=1.0 / (1.0 + np.exp(ypm * o)))
        (_, h_offset), = _terms(offset, X)
        (_, h_weighted), = _terms(weighted, X)
        np.testing.assert_array_equal(h_offset, h_weighted)
        np.testing.assert_allclose(offset.history_["edge"], weighted.history_["edge"],
                                   rtol=1e-12)
        # and the edge by hand: |Σ w y h| with w ∝ σ(−y o)
        w = 1.0 / (1.0 + np.exp(ypm * o))
        w /= w.sum()
        assert offset.history_["edge"][0] == pytest.approx(abs(np.sum(w * ypm * h_offset)),
                                                           rel=1e-12)


@pytest.mark.parametrize("loss, step", [("logistic", "wolfe"), ("exponential", "adaboost")])
def test_an_offset_of_a_fitted_decision_continues_that_fit(loss, step):
    # (to rounding: the longer fit's weights are normalised by what the round before
    # carried, AdaBoost's by the running product of Z_t (Schapire & Singer 1999); the
    # fit with the offset makes them afresh from the margins)
    rtol = 1e-12
    m, k = 6, 5
    for seed in SEEDS:
        X, y, _ = _data(seed)
        kw = dict(loss=loss, step=step, learning_rate=0.5, duality_gap=False)
        first = CoordinateBoostingClassifier(n_estimators=m, **kw).fit(X, y)
        more = CoordinateBoostingClassifier(n_estimators=k, **kw).fit(
            X, y, init_score=first.decision_function(X))
        longer = CoordinateBoostingClassifier(n_estimators=m + k, **kw).fit(X, y)
        _assert_same_terms(more, _Rounds(longer, m), X, rtol)
        for key in ("loss", "edge", "step", "train_error"):
            np.testing.assert_allclose(more.history_[key], longer.history_[key][m:],
                                       rtol=rtol, atol=0)
        # predict leaves the offset out: the new rounds' decision alone
        np.testing.assert_allclose(
            more.decision_function(X) + first.decision_function(X),
            longer.decision_function(X), rtol=0, atol=1e-12)


class _Rounds:
    """A fitted booster's rounds from ``start`` on, as :func:`_terms` reads them."""

    def __init__(self, est, start):
        e = est.ensemble_

        class _E:
            hypotheses = e.hypotheses
            round_index = e.round_index[start:]
            round_delta = e.round_delta[start:]

        self.ensemble_ = _E


def test_a_perfect_hypothesis_outweighs_the_offset():
    # one stump separates the rows (γ = 1, an unbounded step): the step taken must
    # decide every row against an offset of the wrong sign, as it does without one
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    ypm = np.where(y == 1, 1.0, -1.0)
    for scale in (0.5, 5.0, 40.0):
        est = CoordinateBoostingClassifier(n_estimators=3).fit(X, y, init_score=-scale * ypm)
        assert str(est.stop_reason_) == "perfect_hypothesis"
        assert np.all(ypm * (-scale * ypm + est.decision_function(X)) > 0)
        assert est.history_["train_error"][-1] == 0.0


def test_eval_init_score_is_added_to_the_eval_set_s_scores():
    X, y, ypm = _data(3, n=200)
    o = np.random.default_rng(3).normal(0.0, 1.0, 200)
    tr, va = slice(0, 140), slice(140, 200)
    est = CoordinateBoostingClassifier(n_estimators=6, duality_gap=False).fit(
        X[tr], y[tr], init_score=o[tr], eval_set=[(X[tr], y[tr]), (X[va], y[va])],
        eval_init_score=[o[tr], o[va]])
    # the training rows with their offsets as an eval set: the training curve
    np.testing.assert_allclose(est.history_["val_loss_0"], est.history_["loss"], rtol=1e-12)
    np.testing.assert_array_equal(est.history_["val_error_0"], est.history_["train_error"])
    # the held-out curve at the end: the risk of o + f by hand
    f = est.decision_function(X[va])
    np.testing.assert_allclose(est.history_["val_loss_1"][-1],
                               np.mean(np.exp(-ypm[va] * (o[va] + f))), rtol=1e-12)


def test_an_offset_keeps_zero_weight_rows_out_and_a_warm_start_its_offset():
    X, y, _ = _data(4, n=120)
    o = np.random.default_rng(4).normal(size=120)
    w = np.ones(120)
    w[::5] = 0.0
    keep = w > 0
    a = CoordinateBoostingClassifier(n_estimators=5).fit(X, y, sample_weight=w, init_score=o)
    b = CoordinateBoostingClassifier(n_estimators=5).fit(X[keep], y[keep], init_score=o[keep])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    warm = CoordinateBoostingClassifier(n_estimators=3, warm_start=True)
    warm.fit(X, y, init_score=o).set_params(n_estimators=5).fit(X, y, init_score=o)
    once = CoordinateBoostingClassifier(n_estimators=5).fit(X, y, init_score=o)
    np.testing.assert_array_equal(warm.decision_function(X), once.decision_function(X))
    with pytest.raises(ValueError, match="init_score"):
        warm.set_params(n_estimators=6).fit(X, y, init_score=o + 1.0)


def test_the_coordinate_booster_refuses_what_an_offset_leaves_undefined():
    X, y, _ = _data(0, n=100)
    o = np.zeros(100)
    with pytest.raises(ValueError, match="duality_gap=True is not defined with init_score"):
        CoordinateBoostingClassifier(duality_gap=True, n_estimators=2).fit(X, y, init_score=o)
    # "auto" records no gap with an offset (it does without one, on a finite class)
    H = np.where(np.random.default_rng(0).random((100, 6)) < 0.5, -1.0, 1.0)
    rows = np.arange(100)[:, None]
    kw = dict(duality_gap="auto", n_estimators=2)
    assert "gap" in CoordinateBoostingClassifier(MatrixOracle(H), **kw).fit(rows, y).history_
    est = CoordinateBoostingClassifier(MatrixOracle(H), **kw).fit(rows, y, init_score=o)
    assert "gap" not in est.history_ and est.optimal_loss_ is None
    with pytest.raises(ValueError, match="init_score with early stopping"):
        CoordinateBoostingClassifier(n_iter_no_change=2).fit(X, y, init_score=o)
    with pytest.raises(ValueError, match=r"init_score must have shape \(100,\)"):
        CoordinateBoostingClassifier().fit(X, y, init_score=np.zeros((100, 2)))
    est = CoordinateBoostingClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="init_score contains NaN"):
        est.fit(X, y, init_score=np.full(100, np.nan))
    assert not hasattr(est, "ensemble_")
    da = pytest.importorskip("dask.array")
    with pytest.raises(NotDistributedError, match="init_score"):
        CoordinateBoostingClassifier(duality_gap=False).fit(
            da.from_array(X, chunks=50), da.from_array(y, chunks=50), init_score=o)


# -- the ranker ------------------------------------------------------------------------------
def test_the_ranker_s_offset_of_a_fitted_ranking_continues_that_fit():
    # the pairwise loss reads o + f: the scores of an m-round ranker as the offset, and
    # k rounds more are rounds m + 1 … m + k of one longer fit
    m, k = 5, 4
    for seed in SEEDS:
        X, rel, qid = make_ranking(n_queries=12, docs_per_query=10, random_state=seed)
        first = FunctionalGradientRanker(StumpOracle(), n_estimators=m).fit(X, rel, qid)
        more = FunctionalGradientRanker(StumpOracle(), n_estimators=k).fit(
            X, rel, qid, init_score=first.predict(X))
        longer = FunctionalGradientRanker(StumpOracle(), n_estimators=m + k).fit(X, rel, qid)
        _assert_same_terms(more, _Rounds(longer, m), X, rtol=1e-12)
        np.testing.assert_allclose(more.history_["loss"], longer.history_["loss"][m:],
                                   rtol=1e-12)
        assert more.intercept_ == 0.0


def test_a_constant_offset_within_each_query_leaves_the_ranking_fit():
    for seed in SEEDS:
        X, rel, qid = make_ranking(n_queries=12, docs_per_query=10, random_state=seed)
        _, query = np.unique(qid, return_inverse=True)
        per_query = np.random.default_rng(seed).normal(0.0, 5.0, query.max() + 1)[query]
        kw = dict(n_estimators=6)
        plain = FunctionalGradientRanker(StumpOracle(), **kw).fit(X, rel, qid)
        shifted = FunctionalGradientRanker(StumpOracle(), **kw).fit(
            X, rel, qid, init_score=per_query, eval_set=[(X, rel)], eval_qid=[qid],
            eval_init_score=[per_query])
        _assert_same_terms(plain, shifted, X, rtol=1e-12)
        np.testing.assert_allclose(shifted.history_["loss"], plain.history_["loss"],
                                   rtol=1e-12)
        # the eval set's curve adds its offset, as the training loss does
        np.testing.assert_allclose(shifted.history_["val_loss_0"], shifted.history_["loss"],
                                   rtol=1e-12)


def test_the_ranker_refuses_a_bad_offset_by_name():
    X, rel, qid = make_ranking(n_queries=5, docs_per_query=8, random_state=0)
    n = X.shape[0]
    with pytest.raises(ValueError, match=rf"init_score must have one row per row of X \({n}\)"):
        FunctionalGradientRanker(StumpOracle()).fit(X, rel, qid, init_score=np.zeros(n - 1))
    with pytest.raises(ValueError, match="init_score with early stopping"):
        FunctionalGradientRanker(StumpOracle(), n_iter_no_change=2).fit(
            X, rel, qid, init_score=np.zeros(n))


# -- the boosters whose margin is of their own combination -----------------------------------
@pytest.mark.parametrize("make, why", [
    (MirrorBoostingClassifier, "mirror ascent"),
    (TotallyCorrectiveClassifier, "convex combination"),
    (AcceleratedMarginClassifier, "l2-normalised margin"),
])
@pytest.mark.parametrize("argument", ["init_score", "eval_init_score"])
def test_the_normalised_margin_boosters_refuse_an_offset_saying_why(make, why, argument):
    X, y, _ = _data(0, n=60)
    est = make(n_estimators=2)
    with pytest.raises(TypeError, match=rf"fit\(\) takes no {argument}: .*{why}"):
        est.fit(X, y, **{argument: np.zeros(60)})
    assert not hasattr(est, "ensemble_")
