"""What a stored booster carries: the running state a warm start continues from (the
training rows' scores and weights, early stopping's split of the rows) only with
``warm_start=True``.

It is 16 bytes or more per training row: 99.8 % of a pickled 10-round AdaBoost at 10^5
rows, whose pickle now stays a few kilobytes whatever the rows.  A model stored without
it predicts bit for bit, and a warm start after loading it says that it fits anew.
In-process copies (``copy.copy``, ``copy.deepcopy``) keep everything.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from test_booster_contract import CASES

from oracleboost.boosters import (
    BOOSTERS,
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
)
from oracleboost.engine.rounds import BoostingWarning
from oracleboost.oracles import StumpOracle

RUNNING = ("_state_", "_held_out_")


def _rows(n: int, seed: int = 0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 5)
    f = X[:, 0] + 0.5 * X[:, 1]
    return X, (f + 0.5 * rng.randn(n) > 0).astype(int), f + rng.randn(n)


def _skops_io():
    return pytest.importorskip("skops.io", reason="skops is not installed (the test extra)")


def _skops_round_trip(est):
    sio = _skops_io()
    data = sio.dumps(est)
    return sio.loads(data, trusted=sio.get_untrusted_types(data=data))


@pytest.mark.parametrize("make, regression", [
    (lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=10), False),
    (lambda: FunctionalGradientRegressor(StumpOracle(), n_estimators=10), True),
], ids=["adaboost", "gradient-regression"])
def test_a_pickle_does_not_grow_with_the_training_rows(make, regression):
    """10 rounds at 10^4 and 10^5 rows: before, 163 KB and 1.6 MB (AdaBoost; 16 bytes a
    row of running state); now 3.1 and 3.2 KB."""
    sizes = []
    for n in (10_000, 100_000):
        X, y, target = _rows(n)
        est = make().fit(X, target if regression else y)
        sizes.append(len(pickle.dumps(est)))
    assert sizes[1] < 1.1 * sizes[0], sizes
    assert sizes[1] < 100_000, sizes  # (the rows alone would be 1.6 MB)


def test_a_skops_file_does_not_grow_with_the_training_rows():
    sizes = []
    for n in (10_000, 100_000):
        X, y, _ = _rows(n)
        est = CoordinateBoostingClassifier(StumpOracle(), n_estimators=10).fit(X, y)
        sizes.append(len(_skops_io().dumps(est)))
    assert sizes[1] < 1.1 * sizes[0], sizes


def _fitted(name: str, **params):
    X, y, extra = CASES[name].data()
    est = CASES[name].make(None, n_estimators=6, random_state=0, **params)
    return est.fit(X, y, **extra), X, y, extra


def _predictions(est, X) -> np.ndarray:
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.parametrize("name", sorted(BOOSTERS))
@pytest.mark.parametrize("store", ["pickle", "skops"])
def test_a_model_stored_without_warm_start_leaves_its_running_state_out(name, store):
    """Every registered booster (with early stopping's held-out rows, so that both
    running attributes exist): stored with warm_start=False, neither is there and the
    model predicts bit for bit; with warm_start=True both are."""
    round_trip = (lambda e: pickle.loads(pickle.dumps(e))) if store == "pickle" else (
        _skops_round_trip)
    for warm in (False, True):
        est, X, _, _ = _fitted(name, n_iter_no_change=50, warm_start=warm)
        assert all(hasattr(est, a) for a in RUNNING)
        loaded = round_trip(est)
        assert all(hasattr(loaded, a) == warm for a in RUNNING), warm
        np.testing.assert_array_equal(_predictions(loaded, X), _predictions(est, X))
        assert all(hasattr(est, a) for a in RUNNING)  # storing changed nothing


def _json_round_trip(est, tmp_path):
    path = tmp_path / "model.json"
    est.save_model(path)
    return type(est).load_model(path)


@pytest.mark.parametrize("store", ["pickle", "skops", "json"])
def test_a_warm_start_of_a_model_stored_without_its_state_warns_and_fits_anew(store, tmp_path):
    """Before, a pickle (or skops file) carried the state and continued, and a JSON file
    did not and fitted anew, both without a word; now the fit anew says so, and equals a
    fresh fit of the same parameters bit for bit."""
    X, y, _ = _rows(500)
    est = CoordinateBoostingClassifier(StumpOracle(), n_estimators=5).fit(X, y)
    loaded = {"pickle": lambda e: pickle.loads(pickle.dumps(e)), "skops": _skops_round_trip,
              "json": lambda e: _json_round_trip(e, tmp_path)}[store](est)
    loaded.set_params(warm_start=True, n_estimators=8)
    with pytest.warns(BoostingWarning, match="warm_start=True.*no running state.*round 0"):
        loaded.fit(X, y)
    fresh = CoordinateBoostingClassifier(StumpOracle(), n_estimators=8).fit(X, y)
    assert loaded.n_estimators_ == 8
    np.testing.assert_array_equal(loaded.decision_function(X), fresh.decision_function(X))
    with warnings.catch_warnings():  # now it holds the state: the next one continues
        warnings.simplefilter("error", BoostingWarning)
        loaded.set_params(n_estimators=10).fit(X, y)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_a_copy_keeps_the_running_state_and_continues(copier):
    """An in-process copy of a model fitted with warm_start=False continues, with
    warm_start=True, bit for bit as the model itself does (with early stopping's split
    drawn with random_state=None)."""
    X, _, target = _rows(400, seed=3)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=5,
                                      n_iter_no_change=50).fit(X, target)
    other = copier(est)
    assert all(getattr(other, a) is not None for a in RUNNING)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoostingWarning)
        for model in (est, other):
            model.set_params(warm_start=True, n_estimators=9).fit(X, target)
    assert other.n_estimators_ == est.n_estimators_  # (cut back to the best round)
    np.testing.assert_array_equal(other.predict(X), est.predict(X))
    np.testing.assert_array_equal(other.history_["heldout_loss"], est.history_["heldout_loss"])


def test_a_pickle_with_warm_start_continues_bit_for_bit_with_its_held_out_rows():
    """Stored with warm_start=True (and early stopping, random_state=None): the loaded
    model continues exactly as the stored one does, on the same held-out rows."""
    X, _, target = _rows(400, seed=4)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=5, n_iter_no_change=50,
                                      warm_start=True).fit(X, target)
    loaded = pickle.loads(pickle.dumps(est))
    for model in (est, loaded):
        model.set_params(n_estimators=9).fit(X, target)
    np.testing.assert_array_equal(loaded._held_out_[2], est._held_out_[2])
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_array_equal(loaded.history_["heldout_loss"], est.history_["heldout_loss"])
