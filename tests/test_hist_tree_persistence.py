"""Boosters over :class:`~oracleboost.oracles.HistTreeOracle` are saved as JSON and with
``skops.io``, their trees are checked as data at load, and they export their gains.

Every booster that takes the class (coordinate, mirror, functional regression,
classification with vector and label-coded trees, ranking, LPBoost), on rows with NaN
in one feature, round-trips through JSON and through skops (with and without
``warm_start``, trusting exactly :func:`oracleboost.persistence.trusted_types`) and
predicts bit for bit; a tree's ``key`` is made again from the tree at load, never read
from the file.  A document whose tree or gains are damaged (a gain of the wrong shape,
NaN or negative, a child out of range, a cycle, a NaN leaf, a feature beyond X) or whose
oracle's parameters are out of range is refused with a ``ValueError`` naming the
field's place.  ``feature_importances_`` reads the trees' split gains: a one-tree model's
``"weight"`` importances are its gains by feature, normalised, and its ``"gain"``
importances (the exported trees') are the same gains times the squared coefficient.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from test_persistence import (
    _assert_same_model,
    _outputs,
    _round_trip,
    assert_same_running_state,
)

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    StopReason,
    TotallyCorrectiveClassifier,
)
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import HistTree, HistTreeOracle

N, D = 200, 4
N_TRAIN = 150


def _oracle(**params) -> HistTreeOracle:
    return HistTreeOracle(num_leaves=5, min_data_in_leaf=5, **params)


#: case -> (booster, task)
CASES = {
    "coordinate": (lambda: CoordinateBoostingClassifier(_oracle(), n_estimators=6), "binary"),
    "mirror-label-coded": (lambda: MirrorBoostingClassifier(_oracle(), n_estimators=6),
                           "multiclass"),
    "regressor": (lambda: FunctionalGradientRegressor(_oracle(growth="depth"),
                                                      n_estimators=6), "regression"),
    "classifier-vector": (lambda: FunctionalGradientClassifier(
        _oracle(), query="project", n_estimators=6), "multiclass"),
    "classifier-label-coded": (lambda: FunctionalGradientClassifier(
        _oracle(), query="correlate", n_estimators=6), "multiclass"),
    "ranker": (lambda: FunctionalGradientRanker(_oracle(), n_estimators=6), "ranking"),
    "lpboost": (lambda: TotallyCorrectiveClassifier(_oracle(), nu=5, n_estimators=6),
                "binary"),
}


def _data(task: str, seed: int = 0):
    """``N`` rows of ``D`` features, feature 0 NaN in a fifth of them (the label
    depends on it being missing), and the task's labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    nan = rng.random(N) < 0.2
    score = X[:, 0] + 0.8 * X[:, 1] - 0.5 * X[:, 2] + 1.2 * nan + 0.3 * rng.normal(size=N)
    X[nan, 0] = np.nan
    if task == "binary":
        return X, np.where(score > 0.3, "yes", "no")
    if task == "multiclass":
        return X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    if task == "regression":
        return X, 10.0 * score + 40.0
    return X, np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75]))  # ranking


def _fit(case: str, **params):
    make, task = CASES[case]
    if case == "lpboost":
        pytest.importorskip("highspy")
    est = make().set_params(**params)
    X, y = _data(task)
    fit_kw = {"qid": np.repeat(np.arange(N_TRAIN // 10), 10)} if task == "ranking" else {}
    est.fit(X[:N_TRAIN], y[:N_TRAIN], **fit_kw)
    return est, X[:N_TRAIN], y[:N_TRAIN], fit_kw, np.array(X[N_TRAIN:], copy=True)


def _trees(est) -> list[HistTree]:
    """The model's trees (MABoost's multiclass votes hold theirs as ``inner``)."""
    found = [getattr(h, "inner", h) for h in est.ensemble_.hypotheses]
    return [h for h in found if isinstance(h, HistTree)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_round_trip_predicts_bit_for_bit(case):
    est, _, _, _, X_test = _fit(case)
    trees = _trees(est)
    assert trees and any((h.tree.missing == 2).any() for h in trees)  # NaN routed
    loaded = from_json(to_json(est))
    _assert_same_model(est, loaded, X_test)  # the keys too
    for a, b in zip(trees, _trees(loaded), strict=True):
        np.testing.assert_array_equal(b.split_gain, a.split_gain)
        assert b.tree.digest() == a.tree.digest()


@pytest.mark.parametrize("case", ["coordinate", "classifier-vector", "lpboost"])
def test_skops_round_trip_trusts_the_list_and_a_warm_start_continues(case):
    est, X, y, fit_kw, X_test = _fit(case)
    _assert_same_model(est, _round_trip(est), X_test)  # only public, trusted types

    warm, *_ = _fit(case, warm_start=True)
    assert warm.stop_reason_ == StopReason.MAX_ROUNDS
    loaded = _round_trip(warm)
    _assert_same_model(warm, loaded, X_test)
    assert_same_running_state(warm, loaded)
    first = loaded.ensemble_.hypotheses[0]
    warm.set_params(n_estimators=9).fit(X, y, **fit_kw)
    loaded.set_params(n_estimators=9).fit(X, y, **fit_kw)
    assert loaded.n_estimators_ == warm.n_estimators_ > 6
    for key, value in warm.history_.items():
        if "time" not in key:
            np.testing.assert_array_equal(loaded.history_[key], value, err_msg=key)
    for name, value in _outputs(warm, X_test).items():
        np.testing.assert_array_equal(_outputs(loaded, X_test)[name], value, err_msg=name)
    assert loaded.ensemble_.hypotheses[0] is first  # continued, not fitted anew


# -- hostile documents --------------------------------------------------------------------
@pytest.fixture(scope="module")
def document():
    est, *_ = _fit("coordinate")
    doc = json.loads(to_json(est))
    hypotheses = doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"]
    first = next(i for i, h in enumerate(hypotheses)
                 if h["__object__"] == "oracleboost.oracles.hist_trees:HistTree")
    assert hypotheses[first]["state"]["tree"]["state"]["left"]["shape"][0] >= 2
    return doc, first


def _hist_tree(doc: dict, first: int) -> dict:
    return doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"][first]["state"]


def _set(array: dict, i: int, value) -> None:
    array["data"][i] = value


DAMAGES = [
    (lambda h: h["split_gain"]["data"].pop() and h["split_gain"].update(
        shape=[len(h["split_gain"]["data"])]),
     r"\.split_gain: has shape \(\d+,\); a tree of \d+ leaves has \d+ splits"),
    (lambda h: _set(h["split_gain"], 0, {"__float__": "nan"}),
     r"\.split_gain: must be a 1-D float64 array of finite numbers >= 0"),
    (lambda h: _set(h["split_gain"], 0, -1.0),
     r"\.split_gain: must be a 1-D float64 array of finite numbers >= 0"),
    (lambda h: h.pop("split_gain"), r"\.split_gain: missing \(HistTree needs it\)"),
    (lambda h: h.update(tree=None), r"\.tree: must be a TreeStructure"),
    (lambda h: _set(h["tree"]["state"]["left"], 0, 99),
     r"\.tree\.left\[0\]: is 99, not a node of a tree of \d+ splits"),
    (lambda h: _set(h["tree"]["state"]["right"], 1, 0),
     r"\.tree\.left: and right do not reach|\.tree\.right\[1\]: is 0, a node reached before"),
    (lambda h: _set(h["tree"]["state"]["value"], 0, {"__float__": "nan"}),
     r"\.tree\.value: must be a 2-D float64 array of finite numbers"),
    (lambda h: _set(h["tree"]["state"]["feature"], 0, D),
     rf"\.tree\.feature\[0\]: is {D}, not a feature of the tree's {D}"),
    (lambda h: h["tree"]["state"].update(n_features=D + 1),
     rf"\.tree\.n_features: is {D + 1}; the model has {D}"),
]


@pytest.mark.parametrize("damage,where", DAMAGES)
def test_a_damaged_tree_is_refused_by_its_place(damage, where, document):
    doc, first = copy.deepcopy(document[0]), document[1]
    damage(_hist_tree(doc, first))
    with pytest.raises(ValueError, match=rf"estimator\.ensemble_\.hypotheses\[{first}\]{where}"):
        from_json(json.dumps(doc))


@pytest.mark.parametrize("name,value,message", [
    ("num_leaves", 1, "num_leaves must be an int of at least 2"),
    ("growth", "wide", "growth must be one of"),
    ("max_bins", 1000, "max_bins"),
    ("reg_lambda", {"__float__": "nan"}, "reg_lambda must be a finite number"),
    ("monotone_constraints", [2, 0, 0, 0], "monotone_constraints"),
])
def test_an_oracle_with_a_parameter_out_of_range_is_refused(name, value, message, document):
    doc = copy.deepcopy(document[0])
    doc["estimator"]["state"]["oracle"]["state"][name] = value
    with pytest.raises(ValueError, match=rf"at estimator\.oracle: .*{message}"):
        from_json(json.dumps(doc))


def test_an_oracle_parameter_missing_is_named(document):
    doc = copy.deepcopy(document[0])
    doc["estimator"]["state"]["oracle"]["state"].pop("min_data_in_leaf")
    with pytest.raises(ValueError, match=r"estimator\.oracle\.min_data_in_leaf: missing"):
        from_json(json.dumps(doc))


def test_the_key_is_made_from_the_tree_not_read_from_the_file(document):
    """A file's key would let two different trees share a coefficient (the ensemble
    merges hypotheses of one key): it is made again from the tree."""
    doc, first = copy.deepcopy(document[0]), document[1]
    h = _hist_tree(doc, first)
    original = from_json(json.dumps(doc)).ensemble_.hypotheses[first].key
    h["key"] = {"__tuple__": ["hist_tree", "forged"]}
    loaded = from_json(json.dumps(doc)).ensemble_.hypotheses[first]
    assert loaded.key == original == ("hist_tree", loaded.tree.digest())


def test_a_vote_among_more_classes_than_the_model_has_is_refused():
    """MABoost's multiclass trees vote through ``ArgmaxVote``: a leaf of 4 outputs in a
    model of 3 classes would vote for a class the model has not (an ``IndexError`` at
    predict for rows that reach it)."""
    est, *_ = _fit("mirror-label-coded")
    doc = json.loads(to_json(est))
    vote = doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"][0]["state"]
    value = vote["inner"]["state"]["tree"]["state"]["value"]
    leaves, K = value["shape"]
    rows = np.array(value["data"]).reshape(leaves, K)
    value.update(shape=[leaves, K + 1],
                 data=np.hstack([rows, np.full((leaves, 1), 1e9)]).ravel().tolist())
    with pytest.raises(ValueError, match=r"hypotheses\[0\]\.inner\.tree\.value: has 4 "
                                         r"outputs a leaf; the vote is among 3 classes"):
        from_json(json.dumps(doc))


def test_an_untouched_document_loads(document):
    """(The damages above fail for what they change, not for what the fixture is.)"""
    doc, first = document
    loaded = from_json(json.dumps(doc))
    assert isinstance(loaded.ensemble_.hypotheses[first], HistTree)
    assert set(_outputs(loaded, np.zeros((2, D))))


# -- importances --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_importances_read_the_split_gains(seed):
    """One least-squares tree of unit weights: each split's gain ``G_L²/H_L + G_R²/H_R
    − G²/H`` is the decrease of the squared error, which the export writes as
    ``W_L W_R / (W_L + W_R) · (m_L − m_R)²`` of the tree's output (its leaves times the
    coefficient δ): so ``"gain"`` is the split gains by feature times δ² (LightGBM
    keeps each as a float32), and ``"weight"`` the split gains by feature, normalised."""
    X, y = _data("regression", seed)
    est = FunctionalGradientRegressor(_oracle(), n_estimators=1).fit(X, y)
    (h,) = est.estimators_
    assert isinstance(h, HistTree) and h.tree.n_leaves == 5
    by_feature = np.zeros(D)
    np.add.at(by_feature, h.tree.feature, h.split_gain)
    assert by_feature[3] < by_feature.max()  # a feature the label does not read
    np.testing.assert_allclose(est.feature_importances_, by_feature / by_feature.sum(),
                               rtol=1e-12)
    delta = float(est.coef_[0])
    gain = est.set_params(importance_type="gain").feature_importances_
    np.testing.assert_allclose(gain, by_feature * delta**2, rtol=1e-6)
    split = est.set_params(importance_type="split").feature_importances_
    np.testing.assert_array_equal(split, np.bincount(h.tree.feature, minlength=D))
