"""The functional-gradient classifier and ranker (Grubb & Bagnell 2011) on bundled data."""

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris

from oracleboost.boosters import FunctionalGradientClassifier, FunctionalGradientRanker
from oracleboost.losses import pairwise_disagreement
from oracleboost.oracles import StumpOracle
from oracleboost.oracles.stumps import LabelCodeStump, VectorStump


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


@pytest.mark.parametrize("projection", ["naive", "repeated", "residual"])
def test_softmax_with_vector_stumps_descends(digits, projection):
    """Softmax is ½-smooth: with least-squares stumps and η = 1 ≤ 1/Λ every naive step
    lowers the risk (Theorem 3's per-step inequality), and so does every repeated one (a
    better fit of the same gradient).  Residual projection steps along the carried
    residual, not the current gradient: it need not descend every round, only overall."""
    X, y = digits
    clf = FunctionalGradientClassifier(
        StumpOracle(), loss="softmax", projection=projection, learning_rate=1.0,
        n_estimators=60,
    ).fit(X, y)
    h = clf.history_
    per_outer = [h["loss"][h["outer"] == t][0] for t in np.unique(h["outer"])]
    if projection == "residual":
        assert per_outer[-1] < 0.3 * per_outer[0]
    else:
        assert np.all(np.diff(per_outer) < 0)
    assert h["loss"][0] < np.log(10)  # below the value at the class priors' start
    assert all(isinstance(e, VectorStump) for e in clf.estimators_)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_.take(proba.argmax(axis=1)), clf.predict(X))
    assert h["train_error"][-1] == pytest.approx(np.mean(clf.predict(X) != y))


def test_multiclass_hinge_residual_beats_naive(digits):
    """On the non-smooth multiclass hinge with η_t = 1/√t the residual projection lowers
    the training loss far below the naive one's (Grubb & Bagnell, §5(c))."""
    X, y = digits
    common = dict(loss="multiclass_hinge", schedule="inv_sqrt", learning_rate=1.0,
                  n_estimators=150, init=0.0)
    naive = FunctionalGradientClassifier(StumpOracle(), projection="naive", **common).fit(X, y)
    resid = FunctionalGradientClassifier(StumpOracle(), projection="residual", **common).fit(X, y)
    assert naive.history_["loss"][0] <= 1.0  # f_0 = 0 gives hinge 1 on every example
    assert resid.history_["loss"][-1] < 0.5 * naive.history_["loss"][-1]
    assert not hasattr(resid, "predict_proba")  # the hinge has no link


def test_label_coded_stumps_through_correlate(digits):
    X, y = digits
    clf = FunctionalGradientClassifier(
        StumpOracle(), loss="multiclass_hinge", projection="residual", query="correlate",
        schedule="inv_sqrt", learning_rate=1.0, n_estimators=60, init=0.0,
    ).fit(X, y)
    assert all(isinstance(e, LabelCodeStump) for e in clf.estimators_)
    K = 10
    codes = {1.0, -1.0 / (K - 1)}
    out = clf.estimators_[0].predict(X[:5])
    assert set(np.round(out.ravel(), 12)) <= {round(c, 12) for c in codes}
    assert clf.history_["loss"][-1] < clf.history_["loss"][0]


def test_binary_logistic_and_string_labels():
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    labels = np.where(y[keep] == 1, "versicolor", "virginica")
    clf = FunctionalGradientClassifier(StumpOracle(), n_estimators=40, learning_rate=0.5)
    clf.fit(X[keep], labels)
    assert clf.decision_function(X[keep]).shape == (keep.sum(),)
    assert clf.score(X[keep], labels) > 0.9
    with pytest.raises(ValueError, match="binary"):
        FunctionalGradientClassifier(loss="logistic").fit(X, y)


def _queries(n_queries=60, m=12, d=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n_queries * m, d)
    score = X[:, 0] + 0.5 * np.tanh(2 * X[:, 1]) + 0.3 * rng.randn(len(X))
    qid = np.repeat(np.arange(n_queries), m)
    rel = np.zeros(len(X), dtype=int)
    for q in range(n_queries):
        idx = qid == q
        rel[idx] = np.searchsorted(np.quantile(score[idx], [0.2, 0.4, 0.6, 0.8]), score[idx])
    return X, rel, qid


@pytest.mark.parametrize("projection", ["naive", "residual"])
def test_ranker_learns_the_order(projection):
    X, rel, qid = _queries()
    Xt, relt, qidt = _queries(seed=1)
    rk = FunctionalGradientRanker(
        StumpOracle(), projection=projection, n_estimators=80, learning_rate=0.5
    ).fit(X, rel, qid)
    assert rk.history_["loss"][-1] < 0.6 * rk.history_["loss"][0]
    before = pairwise_disagreement(relt, np.zeros(len(Xt)), qidt, ties="half")
    after = pairwise_disagreement(relt, rk.predict(Xt), qidt, ties="half")
    assert before == pytest.approx(0.5)
    assert after < 0.25
    with pytest.raises(ValueError, match="qid"):
        rk.fit(X, rel, qid[:-1])


@pytest.mark.parametrize("projection", ["naive", "residual"])
def test_planning_loss_with_five_unit_nets(projection):
    """Maximum margin planning (Grubb & Bagnell §5(a)) with 5-hidden-unit nets: the
    training loss falls from its f = 0 value to below a tenth within 20 learners (measured
    over the worlds' and the nets' seeds 0-4: below a tenth by learner 13 at the latest)."""
    from oracleboost.boosters import FunctionalGradientRegressor
    from oracleboost.datasets import make_grid_worlds
    from oracleboost.losses.planning import PlanningLoss
    from oracleboost.oracles import MLPOracle

    worlds = make_grid_worlds(n_maps=8, size=12, random_state=0)
    loss = PlanningLoss(worlds)
    reg = FunctionalGradientRegressor(
        MLPOracle(), loss=loss, projection=projection, schedule="inv_sqrt",
        learning_rate=1.0, n_estimators=20, init=0.0, random_state=0,
    ).fit(worlds.X, np.zeros(worlds.n_states))
    start = loss(np.zeros(worlds.n_states), np.zeros(worlds.n_states))
    assert reg.history_["loss"][-1] < 0.1 * start
    assert reg.estimators_[0].estimator.hidden_layer_sizes == (5,)


def test_regressor_refuses_classification_losses():
    from oracleboost.boosters import FunctionalGradientRegressor

    X = np.random.RandomState(0).randn(20, 2)
    for loss in ("logistic", "softmax", "pairwise_hinge"):
        with pytest.raises(ValueError, match="loss"):
            FunctionalGradientRegressor(loss=loss).fit(X, np.zeros(20))
