"""Fitted boosters written as plain JSON text and read back without pickle (issue 22):
every case of ``test_persistence`` predicts bit for bit after the round trip, the text
names only the allow-listed classes and is refused when it comes from a newer format,
and what JSON cannot hold is refused by name.  (Loading untrusted files:
``test_model_json_safety.py``.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from test_persistence import BOOSTERS, CASES, _assert_same_model, _fit

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.model_json import FORMAT_VERSION, from_json, load_model, to_json
from oracleboost.oracles import CachedOracle, StumpOracle


@pytest.mark.parametrize("case", CASES)
def test_json_round_trip_predicts_bit_for_bit(case, tmp_path):
    est, _, _, _, X_test = _fit(case, tmp_path)
    text = to_json(est)
    json.loads(text)  # strict JSON: no NaN or Infinity tokens
    assert "NaN" not in text.replace('"nan"', "") and "Infinity" not in text
    _assert_same_model(est, from_json(text), X_test)


def test_the_file_round_trip_and_the_booster_methods(tmp_path):
    est, _, _, _, X_test = _fit("adaboost-stump", tmp_path)
    path = tmp_path / "model.json"
    est.save_model(path)
    _assert_same_model(est, CoordinateBoostingClassifier.load_model(path), X_test)
    _assert_same_model(est, load_model(path), X_test)
    with pytest.raises(ValueError, match="holds a CoordinateBoostingClassifier, not a "
                                         "FunctionalGradientRegressor"):
        FunctionalGradientRegressor.load_model(path)


def test_the_text_reads_as_the_model(tmp_path):
    """Hypotheses, coefficients, intercept, classes, parameters and the versions are
    there to read."""
    est, *_ = _fit("adaboost-stump", tmp_path)
    doc = json.loads(to_json(est))
    assert doc["format"] == "oracleboost-model" and doc["format_version"] == FORMAT_VERSION
    assert doc["library_version"]
    state = doc["estimator"]["state"]
    assert state["n_estimators"] == est.n_estimators
    assert state["oracle"]["__object__"] == "oracleboost.oracles.stumps:StumpOracle"
    assert state["classes_"]["data"] == est.classes_.tolist()
    ensemble = state["ensemble_"]["state"]
    assert ensemble["coef"] == est.coef_.tolist()
    first = ensemble["hypotheses"][0]
    assert first["__object__"] == "oracleboost.oracles.stumps:SignStump"
    assert first["state"]["feature"] == est.estimators_[0].feature
    assert "_state_" not in state  # warm_start's running state is not written


def test_a_newer_format_is_refused(tmp_path):
    est, *_ = _fit("adaboost-stump", tmp_path)
    doc = json.loads(to_json(est))
    doc["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(ValueError, match=f"format version {FORMAT_VERSION + 1}.*upgrade"):
        from_json(json.dumps(doc))
    with pytest.raises(ValueError, match="not an oracleboost model"):
        from_json('{"format": "something else"}')
    with pytest.raises(ValueError, match="not JSON"):
        from_json("{not json")


def test_only_the_librarys_classes_are_loaded(tmp_path):
    est, *_ = _fit("adaboost-stump", tmp_path)
    doc = json.loads(to_json(est))
    doc["estimator"]["state"]["oracle"]["__object__"] = "os:system"
    with pytest.raises(ValueError, match=r"at estimator\.oracle\.__object__: the class "
                                         r"'os:system' is not one a model file may name"):
        from_json(json.dumps(doc))


def test_what_json_cannot_hold_is_named(tmp_path):
    from joblib import Memory

    X = np.random.default_rng(0).normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    est = CoordinateBoostingClassifier(CachedOracle(StumpOracle(), Memory(tmp_path)),
                                       n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match=r"oracle\.memory is a joblib"):
        to_json(est)
    # a scikit-learn estimator outside the allow-list (its KDTree is no dict of fields):
    # named where it is
    from sklearn.neighbors import KNeighborsRegressor

    from oracleboost.oracles import SklearnOracle

    knn = FunctionalGradientRegressor(SklearnOracle(KNeighborsRegressor(3)),
                                      n_estimators=2).fit(X, X[:, 1])
    with pytest.raises(TypeError, match=r"oracle\.estimator is a sklearn\.neighbors.*"
                                        r"KNeighborsRegressor.*skops\.io can store it"):
        to_json(knn)


def test_a_loaded_model_fits_anew_with_warm_start(tmp_path):
    """The running state is not written: warm_start=True then fits from round 1, as
    after a fit on a cluster, and equals a fresh fit."""
    est, X, y, _, X_test = _fit("adaboost-stump", tmp_path)
    loaded = from_json(to_json(est))
    loaded.set_params(warm_start=True, n_estimators=12)
    fresh = CoordinateBoostingClassifier(StumpOracle(), n_estimators=12).fit(X, y)
    np.testing.assert_array_equal(loaded.fit(X, y).decision_function(X_test),
                                  fresh.decision_function(X_test))


def test_every_allowed_hypothesis_and_model_has_its_fields_checked():
    """The allow-list and the field checks stay together: a hypothesis or model class
    a file may name has the fields its predict reads listed (_json_schema._SPECS), and
    every class a saved case names is allowed (the round trips above)."""
    from oracleboost.export import schema as _json_schema
    from oracleboost.oracles import Hypothesis

    allowed = _json_schema.allowed_classes().values()
    needs = [c for c in allowed if issubclass(c, Hypothesis)
             or c.__name__ in ("Ensemble", "LinearModel", "KernelModel", "PairwiseKernel")]
    assert len(needs) >= 14
    assert [c.__name__ for c in needs if c.__name__ not in _json_schema._SPECS] == []


@pytest.mark.parametrize("est", BOOSTERS, ids=lambda e: type(e).__name__)
def test_an_unfitted_booster_round_trips(est):
    loaded = from_json(to_json(est))
    assert type(loaded) is type(est) and repr(loaded.get_params()) == repr(est.get_params())
    with pytest.raises(NotFittedError):
        loaded.predict(np.zeros((2, 5)))


def _sklearn_estimators():
    from sklearn import dummy, linear_model, neural_network, tree

    regressors = [linear_model.Ridge(), linear_model.LinearRegression(),
                  linear_model.Lasso(alpha=0.01), linear_model.ElasticNet(alpha=0.01),
                  linear_model.SGDRegressor(random_state=0), linear_model.HuberRegressor(),
                  linear_model.BayesianRidge(), tree.ExtraTreeRegressor(max_depth=2,
                                                                        random_state=0),
                  dummy.DummyRegressor(), neural_network.MLPRegressor(max_iter=20,
                                                                      random_state=0)]
    classifiers = [linear_model.LogisticRegression(), linear_model.RidgeClassifier(),
                   tree.ExtraTreeClassifier(max_depth=2, random_state=0),
                   dummy.DummyClassifier(), neural_network.MLPClassifier(max_iter=20,
                                                                         random_state=0)]
    return [(e, "regressor") for e in regressors] + [(e, "classifier") for e in classifiers]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est,kind", _sklearn_estimators(), ids=lambda e: type(e).__name__)
def test_the_allowed_scikit_learn_estimators_round_trip(est, kind):
    """Each scikit-learn estimator a file may hold, fitted as a weak learner, is written
    and read back to the same predictions (an MLP fitted with Adam holds its optimizer)."""
    from oracleboost.oracles import SklearnOracle

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    if kind == "regressor":
        model = FunctionalGradientRegressor(SklearnOracle(est), n_estimators=3)
        model.fit(X, X[:, 0] + 0.1 * rng.normal(size=80))
    else:
        model = CoordinateBoostingClassifier(SklearnOracle(est), n_estimators=3)
        model.fit(X, np.where(X[:, 1] > 0, 1, -1))
    np.testing.assert_array_equal(from_json(to_json(model)).predict(X), model.predict(X))


def test_an_older_version_1_file_without_newer_fields_loads(tmp_path):
    """A field a class gives a default for (a stump's ``default_left``, added after
    version 1 was first written) may be absent: such a file loads and predicts as a
    stump without it always did (a NaN goes where 0.0 goes)."""
    est, _, _, _, X_test = _fit("adaboost-stump", tmp_path)
    doc = json.loads(to_json(est))
    for h in doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"]:
        assert h["state"].pop("default_left") is None
    np.testing.assert_array_equal(from_json(json.dumps(doc)).predict(X_test),
                                  est.predict(X_test))


def test_the_split_a_warm_start_keeps_is_not_written():
    """Early stopping's split of the training rows belongs to the running state a warm
    start continues from, which a JSON file never holds: writing it cost 8 bytes and
    more a training row for nothing."""
    from sklearn.datasets import make_classification

    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import StumpOracle

    X, y = make_classification(400, 5, random_state=0)
    est = CoordinateBoostingClassifier(StumpOracle(), n_estimators=5, warm_start=True,
                                       validation_fraction=0.25, n_iter_no_change=3,
                                       random_state=0).fit(X, y)
    assert hasattr(est, "_held_out_")
    state = json.loads(to_json(est))["estimator"]["state"]
    assert "_held_out_" not in state and "_state_" not in state
    loaded = from_json(to_json(est))
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))
