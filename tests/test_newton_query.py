"""Newton's step for the built-in losses (``query="newton"``) and one tree a class
(:class:`~oracleboost.oracles.PerClassOracle`).

The hessians of the squared, logistic, exponential and softmax losses are the finite
differences of their gradients; under the squared loss (H = 1) ``query="newton"`` is
``query="project"`` bit for bit, and a binary fit is the fit of a loss given as a
function returning the same gradient and hessian, bit for bit.  ``PerClassOracle``'s
answer holds, for each class, the wrapped oracle's own projection of that column with
that column's weights (and seed); a three-class Newton fit of a tree a class reaches a
lower training log-loss in 20 rounds than the vector-leaf gradient fit, on every seed
tried.  The model saves and loads (JSON, skops) and predicts bit for bit, and what
Newton's query cannot do is refused by name.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from oracleboost.boosters import FunctionalGradientClassifier, FunctionalGradientRegressor
from oracleboost.losses import (
    Absolute,
    Exponential,
    Huber,
    Logistic,
    MulticlassHinge,
    PairwiseHinge,
    Quantile,
    SecondOrder,
    SoftmaxCrossEntropy,
    Squared,
)
from oracleboost.losses.base import HESSIAN_FLOOR
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import (
    HistTreeOracle,
    OracleCapabilityError,
    PerClassHypothesis,
    PerClassOracle,
    SklearnOracle,
)
from oracleboost.oracles.per_class import class_seeds

SEEDS = (0, 1, 2)


def _tree(**params) -> HistTreeOracle:
    return HistTreeOracle(num_leaves=6, min_data_in_leaf=5, **params)


def _regression(seed: int, n: int = 150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, 3.0 * X[:, 0] - X[:, 1] ** 2 + 0.5 * rng.normal(size=n), rng.uniform(0.5, 2, n)


def _classes(seed: int, K: int, n: int = 200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.4 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.arange(1, K) / K))
    return X, y


def _log_loss(clf, X, y) -> float:
    p = clf.predict_proba(X)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


# -- the hessians -------------------------------------------------------------------------

def _points(loss, seed: int):
    rng = np.random.default_rng(seed)
    n = 40
    if isinstance(loss, SoftmaxCrossEntropy):
        return rng.integers(0, 4, n), 2.0 * rng.normal(size=(n, 4))
    if isinstance(loss, Squared):
        return rng.normal(size=n), rng.normal(size=n)
    return np.where(rng.random(n) < 0.5, -1.0, 1.0), 2.0 * rng.normal(size=n)


@pytest.mark.parametrize("loss", [Squared(), Logistic(), Exponential(),
                                  SoftmaxCrossEntropy()], ids=repr)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_hessian_is_the_derivative_of_the_gradient(loss, seed):
    y, raw = _points(loss, seed)
    g, hess = loss.grad_hess(y, raw)
    np.testing.assert_array_equal(g, loss.gradient(y, raw))  # the gradient's own bits
    np.testing.assert_array_equal(hess, loss.hessian(y, raw))
    assert hess.shape == raw.shape and (hess > 0).all()
    step = 1e-5
    for k in range(1 if raw.ndim == 1 else raw.shape[1]):  # a class's score alone
        bump = np.zeros_like(raw)
        if raw.ndim == 1:
            bump[:] = step
        else:
            bump[:, k] = step
        diff = (loss.gradient(y, raw + bump) - loss.gradient(y, raw - bump)) / (2 * step)
        got = hess if raw.ndim == 1 else hess[:, k]
        want = diff if raw.ndim == 1 else diff[:, k]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_the_hessian_is_floored_where_it_underflows():
    assert Logistic().hessian(np.array([1.0, -1.0]), np.array([800.0, 800.0])).tolist() == \
        [HESSIAN_FLOOR, HESSIAN_FLOOR]
    assert Exponential().hessian(np.array([1.0]), np.array([800.0]))[0] == HESSIAN_FLOOR
    hess = SoftmaxCrossEntropy().hessian(np.array([0]), np.array([[0.0, 900.0, -900.0]]))
    assert (hess == HESSIAN_FLOOR).all()
    # where it is representable, it is the exact second derivative
    assert Logistic().hessian(np.array([1.0]), np.array([0.0]))[0] == 0.25


def test_losses_without_a_hessian_do_not_claim_one():
    for loss in (Absolute(), Huber(), Quantile(0.3), MulticlassHinge(), PairwiseHinge()):
        assert not isinstance(loss, SecondOrder)
        assert not hasattr(loss, "hessian")


# -- the booster --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_newton_is_project_under_the_squared_loss_bit_for_bit(seed, weighted):
    X, y, s = _regression(seed)
    s = s if weighted else None
    fits = [FunctionalGradientRegressor(_tree(), n_estimators=8, query=query,
                                        random_state=seed).fit(X, y, sample_weight=s)
            for query in ("project", "newton")]
    np.testing.assert_array_equal(fits[1].predict(X), fits[0].predict(X))
    for key in ("loss", "step", "edge", "grad_norm"):
        np.testing.assert_array_equal(fits[1].history_[key], fits[0].history_[key])


@pytest.mark.parametrize("loss", [Logistic(), Exponential()], ids=repr)
@pytest.mark.parametrize("seed", SEEDS)
def test_binary_newton_is_the_fit_of_the_same_gradient_and_hessian_as_a_function(loss, seed):
    X, y = _classes(seed, 2)
    s = np.random.default_rng(seed).uniform(0.5, 2.0, len(y))

    def objective(y01, raw):
        return loss.grad_hess(np.where(y01 > 0, 1.0, -1.0), raw)

    newton = FunctionalGradientClassifier(_tree(), loss=loss, query="newton", n_estimators=8,
                                          random_state=seed).fit(X, y, sample_weight=s)
    given = FunctionalGradientClassifier(_tree(), loss=objective, init=newton.intercept_,
                                         n_estimators=8, random_state=seed
                                         ).fit(X, y, sample_weight=s)
    np.testing.assert_array_equal(newton.decision_function(X), given.decision_function(X))
    np.testing.assert_array_equal(newton.history_["step"], given.history_["step"])
    # and it is not the gradient fit
    plain = FunctionalGradientClassifier(_tree(), loss=loss, n_estimators=8,
                                         random_state=seed).fit(X, y, sample_weight=s)
    assert not np.array_equal(plain.decision_function(X), newton.decision_function(X))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_tree_a_class_with_newton_leaves_fits_better_than_vector_leaves(seed):
    X, y = _classes(seed, 3)
    newton = FunctionalGradientClassifier(PerClassOracle(_tree()), query="newton",
                                          n_estimators=20, random_state=seed).fit(X, y)
    vector = FunctionalGradientClassifier(_tree(), n_estimators=20, random_state=seed
                                          ).fit(X, y)
    assert all(isinstance(h, PerClassHypothesis) for h in newton.ensemble_.hypotheses)
    assert _log_loss(newton, X, y) < _log_loss(vector, X, y)
    np.testing.assert_allclose(newton.history_["loss"][-1], _log_loss(newton, X, y))
    # predict_sum's compiled columns are the loop of single predictions
    staged = list(newton.staged_decision_function(X))[-1]
    np.testing.assert_array_equal(staged, newton.decision_function(X))


# -- the oracle ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_each_class_s_answer_is_the_wrapped_oracle_s_projection_of_its_column(seed):
    rng = np.random.default_rng(seed)
    X, _ = _classes(seed, 3, n=120)
    K = 3
    target, w = rng.normal(size=(120, K)), rng.uniform(0.01, 1.0, (120, K))
    X_new = rng.normal(size=(30, 4))
    oracle = _tree()
    plain = oracle.bind(X)
    for weights in (w, w[:, 0], None):
        h = PerClassOracle(oracle).bind(X).project(target, weights, random_state=seed)
        assert h.train_output.shape == (120, K) and h.predict(X_new).shape == (30, K)
        for k, sub_seed in enumerate(class_seeds(seed, K)):
            wk = weights if weights is None or weights.ndim == 1 else weights[:, k]
            own = plain.project(target[:, k], wk, random_state=sub_seed)
            np.testing.assert_array_equal(h.train_output[:, k], own.train_output)
            np.testing.assert_array_equal(h.predict(X_new)[:, k], own.predict(X_new))
            assert h.parts[k].train_output is None  # (kept once, in the answer)
    one = PerClassOracle(oracle).bind(X).project(target[:, 0], w[:, 0], random_state=seed)
    same = plain.project(target[:, 0], w[:, 0], random_state=seed)
    np.testing.assert_array_equal(one.train_output, same.train_output)


def test_the_seeds_of_a_class_are_drawn_from_the_query_s():
    assert class_seeds(7, 4) == class_seeds(7, 4)
    assert len(set(class_seeds(7, 4))) == 4 and class_seeds(7, 4) != class_seeds(8, 4)
    assert class_seeds(None, 3) == [None, None, None]


# -- saving and loading ---------------------------------------------------------------------

def _fitted():
    X, y = _classes(0, 3, n=120)
    clf = FunctionalGradientClassifier(PerClassOracle(_tree()), query="newton",
                                       n_estimators=5, random_state=0).fit(X, y)
    return clf, X


def test_json_round_trip_predicts_bit_for_bit():
    clf, X = _fitted()
    loaded = from_json(to_json(clf))
    assert isinstance(loaded.oracle, PerClassOracle)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))


def test_skops_round_trip_trusts_the_list():
    pytest.importorskip("skops")
    import skops.io as sio

    from oracleboost.persistence import trusted_types

    clf, X = _fitted()
    loaded = sio.loads(sio.dumps(clf), trusted=trusted_types())
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_a_part_of_several_outputs_is_refused_at_load():
    clf, _ = _fitted()
    doc = json.loads(to_json(clf))
    vector = json.loads(to_json(FunctionalGradientClassifier(
        _tree(), n_estimators=1).fit(*_classes(0, 3, n=120))))
    part = vector["estimator"]["state"]["ensemble_"]["state"]["hypotheses"][0]
    first = doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"][0]
    first["state"]["parts"][1] = part
    with pytest.raises(ValueError, match=r"hypotheses\[0\]\.parts\[1\]: must predict one "):
        from_json(json.dumps(doc))


# -- refusals -------------------------------------------------------------------------------

def test_what_newton_cannot_do_is_refused_by_name():
    X, y, _ = _regression(0)
    with pytest.raises(ValueError, match=r"query='newton'.*loss='absolute' has none"):
        FunctionalGradientRegressor(_tree(), loss="absolute", query="newton").fit(X, y)
    Xc, yc = _classes(0, 3, n=90)
    with pytest.raises(ValueError, match=r"query='newton'.*'multiclass_hinge' has none"):
        FunctionalGradientClassifier(PerClassOracle(_tree()), loss="multiclass_hinge",
                                     query="newton").fit(Xc, yc)
    stumps = SklearnOracle(DecisionTreeClassifier(max_depth=1))
    with pytest.raises(ValueError, match=r"query='newton'.*DecisionTreeClassifier|"
                                         r"query='newton'.*SklearnOracle does not answer"):
        FunctionalGradientClassifier(stumps, query="newton").fit(*_classes(0, 2, n=90))
    with pytest.raises(ValueError, match=r"query='newton'.*HistTreeOracle does not take.*"
                                         r"PerClassOracle\(HistTreeOracle"):
        FunctionalGradientClassifier(_tree(), query="newton").fit(Xc, yc)


def test_weights_a_class_are_taken_by_the_wrapper_alone():
    X, _ = _classes(0, 3, n=60)
    target, w = np.ones((60, 3)), np.ones((60, 3))
    with pytest.raises(ValueError, match="sample_weight"):
        _tree().bind(X).project(target, w)  # one weight a row, as before
    bound = PerClassOracle(_tree()).bind(X)
    with pytest.raises(ValueError, match=r"sample_weight has shape \(60, 2\)"):
        bound.project(target, w[:, :2])
    with pytest.raises(ValueError, match="negative"):
        bound.project(target, -w)
    zero = w.copy()
    zero[:, 2] = 0.0
    with pytest.raises(ValueError, match="column 2 sums to zero"):
        bound.project(target, zero)
    with pytest.raises(OracleCapabilityError, match="PerClassOracle cannot answer correlate"):
        bound.correlate(np.ones((60, 3)))  # (one fit a class answers project)
    with pytest.raises(TypeError, match="PerClassOracle's `oracle` argument"):
        PerClassOracle(DecisionTreeClassifier()).bind(X)


def test_a_query_of_one_output_is_the_wrapped_oracles_own():
    """project and correlate of shape (n,) go to the wrapped oracle as they are: the
    same answer, bit for bit."""
    X, _ = _classes(1, 2, n=80)
    r = np.random.default_rng(1).normal(size=80)
    inner, outer = _tree().bind(X), PerClassOracle(_tree()).bind(X)
    for query in ("correlate", "project"):
        a = getattr(inner, query)(r, random_state=3)
        b = getattr(outer, query)(r, random_state=3)
        assert np.array_equal(a.train_output, b.train_output)
        assert np.array_equal(a.predict(X), b.predict(X))


def test_export_to_lightgbm_is_refused_by_name():
    clf, _ = _fitted()
    with pytest.raises(ValueError, match="PerClassHypothesis is not a tree"):
        clf.to_lightgbm()
