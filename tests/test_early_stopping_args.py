"""Early stopping's parameters, and a warm start's, in combinations that would do
something else than asked without a word.

* ``n_iter_no_change`` with ``validation_fraction=None`` and no ``eval_set`` has no loss
  to watch: refused at ``fit``, naming the three, by every registered booster; with an
  ``eval_set`` (or held-out rows) the same fit runs and stops early.
* A fit anew (``warm_start=False``) draws its held-out rows with its own
  ``validation_fraction`` and ``random_state``, as a fresh estimator does; a warm start
  holds out the rows its fit held out, and refuses to hold out others.
* A warm start that cannot add rounds says so (``BoostingWarning``).

(scikit-learn ignores ``tol`` and ``validation_fraction`` when early stopping is off, and
so does oracleboost: those are not refused.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_booster_contract import CASES

from oracleboost.boosters import (
    BOOSTERS,
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    StopReason,
)
from oracleboost.engine.rounds import BoostingWarning

REGISTERED = sorted(BOOSTERS)
NO_WATCH = r"n_iter_no_change=3.*validation_fraction=None.*eval_set"


def _data(name: str):
    X, y, extra = CASES[name].data()
    return X, y, extra


def _watched(X, y, extra):
    """A watched set cut from the data (whole queries for the ranker), and the fit's own
    keywords for the rest."""
    if "qid" in extra:
        q = extra["qid"]
        train = q < np.unique(q)[14]
        return (X[train], y[train], {"qid": q[train]}), (X[~train], y[~train],
                                                         {"eval_qid": [q[~train]]})
    cut = len(y) * 3 // 4
    return (X[:cut], y[:cut], {}), (X[cut:], y[cut:], {})


@pytest.mark.parametrize("name", REGISTERED)
@pytest.mark.parametrize("eval_set", [None, []], ids=["no-eval-set", "empty-eval-set"])
def test_early_stopping_with_nothing_to_watch_is_refused(name, eval_set):
    """Before, the loop watched the training loss: AdaBoost, the functional boosters and
    the ranker ran to n_estimators (stop_reason_ 'max_rounds'), MadaBoost and the totally
    corrective methods stopped after their first round, without a word."""
    X, y, extra = _data(name)
    model = CASES[name].make(None, n_estimators=30, n_iter_no_change=3,
                             validation_fraction=None)
    kw = {} if eval_set is None else {"eval_set": eval_set}
    with pytest.raises(ValueError, match=NO_WATCH):
        model.fit(X, y, **extra, **kw)
    assert not hasattr(model, "ensemble_")  # refused before anything was fitted


@pytest.mark.parametrize("name", REGISTERED)
def test_early_stopping_on_an_eval_set_or_held_out_rows_still_runs(name):
    """The refusal does not touch a fit that has a loss to watch: ``eval_set[0]``
    (``validation_fraction=None``), or the held-out rows (the default fraction)."""
    (X, y, extra), (Xv, yv, eval_extra) = _watched(*_data(name))
    on_set = CASES[name].make(None, n_estimators=30, n_iter_no_change=3,
                              validation_fraction=None, random_state=0)
    on_set.fit(X, y, **extra, eval_set=[(Xv, yv)], **eval_extra)
    assert on_set.best_iteration_ == len(on_set.history_["val_loss_0"])
    assert len(on_set.validation_loss_) >= on_set.best_iteration_ >= 1
    held = CASES[name].make(None, n_estimators=30, n_iter_no_change=3, random_state=0)
    held.fit(X, y, **extra)
    assert held.best_iteration_ == len(held.history_["heldout_loss"]) >= 1


def test_tol_and_validation_fraction_without_early_stopping_are_ignored():
    """As in scikit-learn's gradient boosting: no early stopping, no hold-out, no error."""
    X, y, _ = _data("adaboost")
    plain = CoordinateBoostingClassifier(n_estimators=5).fit(X, y)
    other = CoordinateBoostingClassifier(n_estimators=5, validation_fraction=None,
                                         tol=0.5).fit(X, y)
    np.testing.assert_array_equal(other.decision_function(X), plain.decision_function(X))
    assert other.best_iteration_ is None and not hasattr(other, "_held_out_")


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_anew_draws_its_own_held_out_rows(seed):
    """A second fit of one estimator with another validation_fraction or random_state
    equals a fresh estimator's fit with them (before, it reused the first fit's split)."""
    X, y, _ = _data("adaboost")
    model = CoordinateBoostingClassifier(n_estimators=20, n_iter_no_change=3,
                                         random_state=seed).fit(X, y)
    for params in ({"validation_fraction": 0.4}, {"random_state": seed + 10}):
        model.set_params(**params).fit(X, y)
        fresh = CoordinateBoostingClassifier(**model.get_params()).fit(X, y)
        np.testing.assert_array_equal(model._held_out_[2], fresh._held_out_[2])
        np.testing.assert_array_equal(model.decision_function(X), fresh.decision_function(X))
        np.testing.assert_array_equal(model.history_["heldout_loss"],
                                      fresh.history_["heldout_loss"])


def test_a_fit_anew_with_random_state_none_draws_new_held_out_rows():
    X, y, _ = _data("gradient-regression")
    model = FunctionalGradientRegressor(n_estimators=3, n_iter_no_change=2)
    splits = {tuple(model.fit(X, y)._held_out_[2]) for _ in range(4)}
    assert len(splits) > 1  # 4 draws of 20 rows of 200 all equal: about 1e-78


def test_a_warm_start_keeps_its_held_out_rows_also_with_random_state_none():
    X, y, _ = _data("gradient-regression")
    model = FunctionalGradientRegressor(n_estimators=4, n_iter_no_change=50, warm_start=True)
    held = model.fit(X, y)._held_out_[2]
    first = model.estimators_[0]
    model.set_params(n_estimators=8).fit(X, y)
    np.testing.assert_array_equal(model._held_out_[2], held)
    assert model.estimators_[0] is first  # continued, not fitted anew


def test_a_warm_start_refuses_another_validation_fraction():
    """Before, the error said that X, y or sample_weight differed."""
    X, y, _ = _data("adaboost")
    model = CoordinateBoostingClassifier(n_estimators=4, n_iter_no_change=50,
                                         warm_start=True, random_state=0).fit(X, y)
    rounds = model.n_estimators_
    with pytest.raises(ValueError, match=r"validation_fraction=0\.3 differs from the 0\.1"):
        model.set_params(n_estimators=8, validation_fraction=0.3).fit(X, y)
    assert model.n_estimators_ == rounds  # the fitted model as it was


@pytest.mark.parametrize("turn", ["on", "off"])
def test_a_warm_start_refuses_to_turn_the_hold_out_on_or_off(turn):
    """Turning early stopping's hold-out on or off changes the rows trained on: refused
    naming n_iter_no_change and validation_fraction (before: 'X, y or sample_weight
    differ')."""
    X, y, _ = _data("adaboost")
    first = {"n_iter_no_change": None} if turn == "on" else {"n_iter_no_change": 50}
    model = CoordinateBoostingClassifier(n_estimators=4, warm_start=True, random_state=0,
                                         **first).fit(X, y)
    rounds = model.n_estimators_
    then = {"n_iter_no_change": 50} if turn == "on" else {"n_iter_no_change": None}
    with pytest.raises(ValueError, match="held out.*n_iter_no_change and validation_fraction"):
        model.set_params(n_estimators=8, **then).fit(X, y)
    assert model.n_estimators_ == rounds


@pytest.mark.parametrize("seed", range(3))
def test_a_warm_start_that_cannot_add_rounds_warns(seed):
    """SparseBoost that stopped with every weight 0 ('zero_weights', not resumable): a
    warm start to more rounds adds none, and says so."""
    from sklearn.datasets import make_classification

    X, y = make_classification(200, n_features=5, n_informative=3, n_redundant=0,
                               random_state=seed)
    model = MirrorBoostingClassifier(mirror="euclidean", variant="sparse", sparsity=0.9,
                                     learning_rate=100.0, n_estimators=50).fit(X, y)
    assert model.stop_reason_ == StopReason.ZERO_WEIGHTS
    rounds = model.n_estimators_
    with pytest.warns(BoostingWarning, match="stop_reason_='zero_weights'.*added no rounds"):
        model.set_params(warm_start=True, n_estimators=60).fit(X, y)
    assert model.n_estimators_ == rounds
    with warnings.catch_warnings():  # not raising n_estimators asks for nothing more
        warnings.simplefilter("error", BoostingWarning)
        model.set_params(n_estimators=rounds).fit(X, y)
