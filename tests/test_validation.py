"""Validation curves (``fit(eval_set=...)``) and early stopping, for every booster.

The curves are kept from running scores (one new hypothesis predicted per round); they
must equal what ``staged_predict`` gives on the same data, round by round.  Early
stopping holds out a split, stops after ``n_iter_no_change`` rounds without progress and
keeps the best round's model.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from test_booster_contract import CASES

from oracleboost.boosters import (
    BOOSTERS,
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    StopReason,
    TotallyCorrectiveClassifier,
)
from oracleboost.losses import get_loss
from oracleboost.oracles import StumpOracle


def _split(name):
    """The case's data, cut into a training part and a watched part (whole queries for
    the ranker), with the keyword arguments each part's fit needs."""
    case = CASES[name]
    make, is_classifier = case.make, case.classifier
    X, y, extra = case.data()
    if "qid" in extra:
        q = extra["qid"]
        train = q < np.unique(q)[14]
        test = ~train
        return make, is_classifier, (X[train], y[train], {"qid": q[train]}), (
            X[test], y[test], {"eval_qid": [q[test]]}
        )
    order = np.random.RandomState(1).permutation(len(y))
    train, test = order[: len(y) * 7 // 10], order[len(y) * 7 // 10:]
    return make, is_classifier, (X[train], y[train], {}), (X[test], y[test], {})


def _loss_of(model, y, scores, extra):
    """The booster's own loss of ``scores`` on (y, extra), computed from scratch."""
    if isinstance(model, (CoordinateBoostingClassifier, AcceleratedMarginClassifier)):
        ypm = np.where(y == model.classes_[1], 1.0, -1.0)
        if scores.ndim == 1:
            return float(np.mean(get_loss(model.loss).phi(ypm * scores)))
        index = np.searchsorted(model.classes_, y)
        own = scores[np.arange(len(y)), index][:, None]
        cells = get_loss(model.loss).phi((own - scores) / np.sqrt(2.0))
        cells[np.arange(len(y)), index] = 0.0
        return float(np.mean(cells.sum(axis=1)))
    if isinstance(model, (MirrorBoostingClassifier, TotallyCorrectiveClassifier)):
        # the vote's share of rows at margin ≤ 0 (ties count against)
        index = np.searchsorted(model.classes_, y)
        if scores.ndim == 1:
            margins = np.where(index == 1, 1.0, -1.0) * scores
        else:
            others = scores.copy()
            others[np.arange(len(y)), index] = -np.inf
            margins = scores[np.arange(len(y)), index] - others.max(axis=1)
        return float(np.mean(margins <= 0))
    loss = model._loss_ if isinstance(model, FunctionalGradientClassifier) else get_loss(
        model.loss
    )
    if isinstance(model, FunctionalGradientClassifier):
        index = np.searchsorted(model.classes_, y)
        y = index if scores.ndim == 2 else np.where(index == 1, 1.0, -1.0)
    if isinstance(model, FunctionalGradientRanker):
        return loss(y, scores, groups=extra["eval_qid"][0])
    return loss(y, scores)


def _raw_stages(model, X):
    return list(model._staged_raw(X))


@pytest.mark.parametrize("name", CASES)
def test_eval_set_curves_equal_staged_predict_at_every_round(name):
    make, is_classifier, (X, y, fit_extra), (Xv, yv, eval_extra) = _split(name)
    model = make(StumpOracle(), n_estimators=25, random_state=0)
    model.fit(X, y, **fit_extra, eval_set=[(Xv, yv), (X, y)], **(
        {"eval_qid": eval_extra["eval_qid"] + [fit_extra["qid"]]} if eval_extra else {}
    ))
    h = model.history_
    stages = _raw_stages(model, Xv)
    assert len(stages) == len(h["loss"]) == len(h["val_loss_0"]) == len(h["val_loss_1"]) > 1
    if is_classifier:
        errors = [np.mean(p != yv) for p in model.staged_predict(Xv)]
        # the same count over the same n: equal, not close
        np.testing.assert_array_equal(h["val_error_0"], errors)
    else:
        assert "val_error_0" not in h
    losses = [_loss_of(model, yv, f, eval_extra) for f in stages]
    np.testing.assert_allclose(h["val_loss_0"], losses, rtol=1e-10, atol=1e-300)
    # The second set is the training data: its curve is the training loss (MABoost's
    # `loss` counts ties as errors on both).  Repeated projection records the training
    # loss once per outer iteration (on each of its weak learners' records) and the
    # curves after each weak learner: they meet at the end of each outer iteration.
    ends = np.ones(len(h["loss"]), dtype=bool)
    if "outer" in h:
        ends[:-1] = h["outer"][1:] != h["outer"][:-1]
    np.testing.assert_allclose(h["val_loss_1"][ends], h["loss"][ends], rtol=1e-10)
    if "train_error" in h and is_classifier:
        np.testing.assert_array_equal(h["val_error_1"][ends], h["train_error"][ends])


@pytest.mark.parametrize("name", CASES)
def test_eval_set_never_predicts_the_ensemble_again(name):
    """Each round predicts only its new hypothesis on each watched set."""
    from test_booster_contract import ProbeOracle

    make, _, (X, y, fit_extra), (Xv, yv, eval_extra) = _split(name)
    probe = ProbeOracle()
    model = make(probe, n_estimators=15, random_state=0)
    model.fit(X, y, **fit_extra, eval_set=[(Xv, yv)], **eval_extra)
    # a linear model's columns are predicted once on the set; an ensemble's hypotheses
    # once each (recurring ones come from the cache)
    assert probe.predictions[0] <= max(len(model.history_["loss"]), X.shape[1] + 1)


def test_eval_set_errors_name_the_set():
    X, y = make_classification(100, 4, random_state=0)
    model = CoordinateBoostingClassifier(n_estimators=3)
    with pytest.raises(ValueError, match=r"eval_set\[1\]: X"):
        model.fit(X, y, eval_set=[(X, y), (X[:, :3], y)])
    with pytest.raises(ValueError, match=r"eval_set\[0\].*labels not seen"):
        model.fit(X, y, eval_set=[(X, np.where(y == 1, 1, 7))])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y has shape"):
        model.fit(X, y, eval_set=[(X, y[:-1])])
    with pytest.raises(TypeError, match="list of \\(X, y\\) pairs"):
        model.fit(X, y, eval_set=(X, y))
    with pytest.raises(ValueError, match="eval_sample_weight has 2 entries"):
        model.fit(X, y, eval_set=[(X, y)], eval_sample_weight=[None, None])
    bad = X.copy()
    bad[3, 1] = np.inf  # (NaN is a missing value to the default stumps)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: X.*infinity"):
        model.fit(X, y, eval_set=[(bad, y)])
    with pytest.raises(ValueError, match=r"eval_set\[0\] needs its query ids"):
        FunctionalGradientRanker(n_estimators=2).fit(X, y, np.arange(100) // 10,
                                                     eval_set=[(X, y)])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y must be numeric"):
        FunctionalGradientRegressor(n_estimators=2).fit(
            X, y, eval_set=[(X, np.where(y == 1, "a", "b"))]
        )
    assert not hasattr(model, "ensemble_")  # every failure left it unfitted


def test_eval_sample_weight_weights_the_curves():
    X, y = make_classification(200, 5, flip_y=0.1, random_state=0)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=200)
    model = CoordinateBoostingClassifier(n_estimators=10, random_state=0)
    model.fit(X, y, w, eval_set=[(X, y)], eval_sample_weight=[w])
    np.testing.assert_allclose(model.history_["val_loss_0"], model.history_["loss"], rtol=1e-12)
    # the same weighted sums in two orders (the fit's lanes of four interleaved sums, the
    # eval set's NumPy pairwise sum): equal to rounding (unweighted, the counts are exact
    # and equal bit for bit); the unweighted curve is off by 1.5e-3 to 2.5e-3 here
    np.testing.assert_allclose(model.history_["val_error_0"], model.history_["train_error"],
                               rtol=4e-16, atol=0)


def test_warm_start_extends_the_curves():
    make, _, (X, y, _e), (Xv, yv, _v) = _split("adaboost")
    one = make(StumpOracle(), n_estimators=20, random_state=0).fit(X, y, eval_set=[(Xv, yv)])
    two = make(StumpOracle(), n_estimators=8, random_state=0, warm_start=True)
    two.fit(X, y, eval_set=[(Xv, yv)])
    two.set_params(n_estimators=20).fit(X, y, eval_set=[(Xv, yv)])
    np.testing.assert_array_equal(two.history_["val_loss_0"], one.history_["val_loss_0"])
    # a continuation that adds a set: NaN for the rounds before it was watched
    three = make(StumpOracle(), n_estimators=8, random_state=0, warm_start=True).fit(X, y)
    three.set_params(n_estimators=12).fit(X, y, eval_set=[(Xv, yv)])
    curve = three.history_["val_loss_0"]
    assert len(curve) == 12 and np.isnan(curve[:8]).all() and np.isfinite(curve[8:]).all()
    np.testing.assert_array_equal(curve[8:], one.history_["val_loss_0"][8:12])


# -- early stopping ---------------------------------------------------------------------

def _noisy(seed=0):
    """Labels with 30% flipped: boosting stumps for long overfits the held-out rows."""
    return make_classification(400, 10, n_informative=3, flip_y=0.3, random_state=seed)


@pytest.mark.parametrize("name", CASES)
def test_early_stopping_keeps_the_best_round(name):
    make, data = CASES[name].make, CASES[name].data
    X, y, extra = data()
    model = make(StumpOracle(), n_estimators=300, random_state=0, n_iter_no_change=5)
    model.fit(X, y, **extra)
    curve = model.validation_loss_  # the held-out loss after each round
    best = int(np.argmin(curve))
    if model.stop_reason_ == StopReason.EARLY_STOPPING:
        # it stopped n_iter_no_change rounds after its last progress, which is at or
        # before the best round
        assert 0 <= len(curve) - (best + 1) <= 5 and len(curve) >= 6
    assert len(model.history_["loss"]) == model.best_iteration_ == model.n_estimators_
    assert model.history_["heldout_loss"][-1] == curve.min()
    if "outer" in model.history_:  # functional boosters count rounds as outer iterations
        assert model.history_["outer"][-1] == best + 1
    else:
        assert model.n_estimators_ == best + 1
    # the model is the best round's: its staged predictions stop there
    assert len(list(model.staged_predict(X[:5]))) == model.n_estimators_


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: CoordinateBoostingClassifier(**kw),
        lambda **kw: MirrorBoostingClassifier(**kw),
        lambda **kw: FunctionalGradientClassifier(StumpOracle(), learning_rate=0.5, **kw),
    ],
    ids=["coordinate", "mirror", "functional"],
)
def test_early_stopping_stops_on_a_noisy_problem(make, seed):
    X, y = _noisy(seed)
    model = make(n_estimators=1000, n_iter_no_change=10, random_state=seed).fit(X, y)
    assert model.stop_reason_ == StopReason.EARLY_STOPPING
    assert model.n_estimators_ < 1000
    assert model.n_estimators_ == int(np.argmin(model.validation_loss_)) + 1
    assert len(model.validation_loss_) >= model.n_estimators_ + 1


def test_early_stopping_on_an_eval_set_keeps_the_model_of_least_loss():
    """validation_fraction=None watches eval_set[0]: the kept model's loss on it,
    computed from scratch, is the smallest value of the curve."""
    X, y = _noisy(3)
    Xv, yv = _noisy(4)
    model = CoordinateBoostingClassifier(
        n_estimators=500, n_iter_no_change=8, validation_fraction=None, random_state=0
    ).fit(X, y, eval_set=[(Xv, yv)])
    assert model.stop_reason_ == StopReason.EARLY_STOPPING
    kept = _loss_of(model, yv, model.decision_function(Xv), {})
    np.testing.assert_allclose(kept, model.validation_loss_.min(), rtol=1e-12)
    assert kept <= model.validation_loss_.min() * (1 + 1e-12)
    assert np.mean(model.predict(Xv) != yv) == model.history_["val_error_0"][-1]


def test_early_stopping_is_reproducible_under_random_state():
    X, y = _noisy(1)
    fits = [
        MirrorBoostingClassifier(n_estimators=500, n_iter_no_change=6, random_state=7).fit(X, y)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(fits[0].validation_loss_, fits[1].validation_loss_)
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))
    other = MirrorBoostingClassifier(n_estimators=500, n_iter_no_change=6, random_state=8)
    other.fit(X, y)
    # another seed holds out other rows
    assert not np.array_equal(other._held_out_[2], fits[0]._held_out_[2])


def test_held_out_split_is_stratified_and_keeps_queries_whole():
    X, y = _noisy(0)
    model = CoordinateBoostingClassifier(n_estimators=3, n_iter_no_change=2,
                                         validation_fraction=0.25, random_state=0).fit(X, y)
    _, train, held = model._held_out_
    assert len(held) == 100 and len(np.intersect1d(train, held)) == 0
    assert abs(np.mean(y[held]) - np.mean(y)) <= 0.01
    make, data = CASES["gradient-ranking"].make, CASES["gradient-ranking"].data
    Xr, yr, extra = data()
    ranker = make(StumpOracle(), n_estimators=3, n_iter_no_change=2, random_state=0)
    ranker.fit(Xr, yr, **extra)
    _, train, held = ranker._held_out_
    assert not set(extra["qid"][train]) & set(extra["qid"][held])


def test_early_stopping_off_by_default_and_bad_fraction_is_named():
    X, y = _noisy(0)
    model = CoordinateBoostingClassifier(n_estimators=5).fit(X, y)
    assert model.best_iteration_ is None and len(model.validation_loss_) == 0
    assert "heldout_loss" not in model.history_
    tiny = CoordinateBoostingClassifier(n_estimators=5, n_iter_no_change=2,
                                        validation_fraction=0.001)
    with pytest.raises(ValueError, match="validation_fraction=0.001"):
        tiny.fit(X, y)
    # weights are named by the argument they came from, held-out rows included
    w = np.ones(len(y))
    w[::2] = -1.0
    with pytest.raises(ValueError, match="^sample_weight contains negative"):
        tiny.set_params(validation_fraction=0.2).fit(X, y, w)
    held = CoordinateBoostingClassifier(n_estimators=3, n_iter_no_change=2,
                                        random_state=0).fit(X, y)._held_out_[2]
    w = np.ones(len(y))
    w[held] = 0.0
    with pytest.raises(ValueError, match=r"^sample_weight \(its held-out rows\) sums to zero"):
        CoordinateBoostingClassifier(n_estimators=3, n_iter_no_change=2,
                                     random_state=0).fit(X, y, w)
    # the split comes after the label checks: their messages are scikit-learn's
    with pytest.raises(ValueError, match="Unknown label type"):
        tiny.set_params(validation_fraction=0.2).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="infinity"):  # NaN is missing to the stumps
        tiny.fit(np.where(X > 2.5, np.inf, X), y)


def test_warm_start_after_early_stopping_continues_from_the_best_round():
    X, y = _noisy(2)
    model = CoordinateBoostingClassifier(n_estimators=400, n_iter_no_change=5,
                                         warm_start=True, random_state=0).fit(X, y)
    assert model.stop_reason_ == StopReason.EARLY_STOPPING
    kept, curve = model.n_estimators_, model.validation_loss_.copy()
    model.set_params(n_estimators=500).fit(X, y)
    # the same held-out rows and the same deterministic rounds: the same best round
    assert model.n_estimators_ == kept
    # (it may wait longer: its patience restarts at the best round)
    np.testing.assert_array_equal(model.validation_loss_[: len(curve)], curve)


@pytest.mark.parametrize("early", [False, True], ids=["full", "early_stopped"])
@pytest.mark.parametrize("name", CASES)
def test_last_staged_prediction_equals_predict_bit_for_bit(name, early):
    """As scikit-learn's gradient boosting guarantees; also for a model cut back to its
    best round."""
    make, data = CASES[name].make, CASES[name].data
    X, y, extra = data()
    params = {"n_iter_no_change": 3} if early else {}
    model = make(StumpOracle(), n_estimators=30, random_state=0, **params).fit(X, y, **extra)
    staged = list(model.staged_predict(X))
    assert len(staged) == model.n_estimators_
    np.testing.assert_array_equal(staged[-1], model.predict(X))
    raw = list(model._staged_raw(X))
    assert np.array_equal(raw[-1], model._raw(X))
    if early:
        # the cut model is the one a fit stopped at that round would give
        again = make(StumpOracle(), n_estimators=model.n_estimators_, random_state=0,
                     n_iter_no_change=3 * 30).fit(X, y, **extra)
        assert np.array_equal(again._raw(X), model._raw(X))


@pytest.mark.parametrize("name", list(BOOSTERS))
def test_early_stopping_on_a_dataframe_keeps_its_feature_names(name):
    # The held-out split used to hand the fit a bare array: feature_names_in_ was lost
    # and predict on the same DataFrame warned that it has feature names.
    pd = pytest.importorskip("pandas")
    case = CASES[name]
    X, y, extra = case.data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    kw = dict(n_estimators=4, n_iter_no_change=2, validation_fraction=0.25, random_state=0)
    model = case.make(case.oracle(None), **kw).fit(frame, y, **extra)
    plain = case.make(case.oracle(None), **kw).fit(X, y, **extra)
    assert list(model.feature_names_in_) == list(frame.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names"
        scores = model.predict(frame)
    np.testing.assert_array_equal(scores, plain.predict(X))
