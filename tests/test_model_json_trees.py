"""Boosters over the trees of a trained LightGBM model (``TreeEnsembleOracle``) are saved
as JSON and with ``skops.io``, and a model file's trees are checked before any code
follows their indices.

A coordinate booster and LPBoost re-weighting a 15-tree LightGBM model (NaN routed by
its splits, a categorical feature split by sets of codes) round-trip bit for bit, with
and without ``warm_start``, through JSON and through skops trusting exactly
:func:`oracleboost.persistence.trusted_types`.  A document whose trees are damaged (a
child out of range, a cycle, a node with two parents, a feature beyond X, an array of
the wrong dtype, a NaN leaf, a missing type LightGBM has not, category codes out of
order, trees of different widths) is refused with a ``ValueError`` naming the field's
place; and each damage that can be predicted safely is shown to give a model that fails,
or predicts NaN, when the checks are taken away.
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

from oracleboost import CoordinateBoostingClassifier, TotallyCorrectiveClassifier
from oracleboost.engine.model import NonFinitePrediction
from oracleboost.export import json_model, schema
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import TreeEnsembleOracle

lgb = pytest.importorskip("lightgbm")

BOOSTERS = {
    "coordinate": lambda oracle, **kw: CoordinateBoostingClassifier(oracle, n_estimators=8,
                                                                    **kw),
    "lpboost": lambda oracle, **kw: TotallyCorrectiveClassifier(oracle, method="lpboost",
                                                                n_estimators=8, **kw),
}


@pytest.fixture(scope="module")
def data():
    """200 rows: feature 0 with NaN (which the label depends on), feature 1 category
    codes (three of eight codes are positive), and a LightGBM model of 15 trees that
    splits on both."""
    rng = np.random.default_rng(0)
    n = 200
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.integers(0, 8, n)
    nan = rng.random(n) < 0.2
    score = (X[:, 0] + 1.5 * np.isin(X[:, 1], [1, 4, 6]) + 1.5 * nan - 0.8
             + 0.5 * rng.normal(size=n))
    X[nan, 0] = np.nan
    y = (score > 0).astype(int)
    gbm = lgb.LGBMClassifier(n_estimators=15, num_leaves=4, min_child_samples=5,
                             min_data_per_group=5, cat_smooth=1, verbose=-1)
    gbm.fit(X, y, categorical_feature=[1])
    return X, y, gbm


def _fit(data, booster, warm_start=False):
    X, y, gbm = data
    oracle = TreeEnsembleOracle.from_lightgbm(gbm)
    return BOOSTERS[booster](oracle, warm_start=warm_start).fit(X, y)


@pytest.fixture(scope="module")
def document(data):
    """A fitted coordinate booster's document, with hypotheses split on NaN and on sets
    of category codes."""
    est = _fit(data, "coordinate")
    trees = [h.tree for h in est.estimators_]
    assert any(t.categories_left is not None for t in trees)
    assert any((t.missing == 2).any() for t in trees)
    return json.loads(to_json(est))


@pytest.mark.parametrize("warm_start", [False, True])
@pytest.mark.parametrize("booster", sorted(BOOSTERS))
def test_a_booster_over_an_ensembles_trees_round_trips_through_json(data, booster,
                                                                     warm_start):
    est = _fit(data, booster, warm_start)
    loaded = from_json(to_json(est))
    _assert_same_model(est, loaded, data[0])
    assert [h.tree.categories_left is None for h in loaded.estimators_] == [
        h.tree.categories_left is None for h in est.estimators_]
    assert to_json(loaded) == to_json(est)


@pytest.mark.filterwarnings("ignore:.*added no rounds")  # (LPBoost's gap closed)
@pytest.mark.parametrize("warm_start", [False, True])
@pytest.mark.parametrize("booster", sorted(BOOSTERS))
def test_a_booster_over_an_ensembles_trees_round_trips_through_skops(data, booster,
                                                                      warm_start):
    """Loaded trusting exactly ``trusted_types()`` (the names checked public and on the
    list first); a warm start continues after the round trip as it would have."""
    X, y, _ = data
    est = _fit(data, booster, warm_start)
    loaded = _round_trip(est)
    _assert_same_model(est, loaded, X)
    if warm_start:
        assert_same_running_state(est, loaded)
        first = loaded.estimators_[0]
        est.set_params(n_estimators=12).fit(X, y)
        loaded.set_params(n_estimators=12).fit(X, y)
        assert loaded.n_estimators_ == est.n_estimators_
        for key, value in est.history_.items():
            if "time" not in key:
                np.testing.assert_array_equal(loaded.history_[key], value, err_msg=key)
        for name, value in _outputs(est, X).items():
            np.testing.assert_array_equal(_outputs(loaded, X)[name], value, err_msg=name)
        assert loaded.estimators_[0] is first  # continued, not fitted anew


def test_a_forged_key_is_not_read(document, data):
    """A tree's key names its function (equal trees share a coefficient in a later
    fit); it is made again from the tree at load, so a file cannot make two trees one."""
    doc = copy.deepcopy(document)
    hypotheses = doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"]
    keys = [h["state"]["key"] for h in hypotheses]
    assert len(keys) >= 2 and keys[0] != keys[1]
    hypotheses[0]["state"]["key"] = keys[1]
    loaded = from_json(json.dumps(doc))
    original = from_json(json.dumps(document))
    assert [h.key for h in loaded.estimators_] == [h.key for h in original.estimators_]
    assert loaded.estimators_[0].key != loaded.estimators_[1].key


# -- damaged documents ------------------------------------------------------------------
def _tree(doc, h=0):
    """The fields of hypothesis ``h``'s tree in a document."""
    hypotheses = doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"]
    return hypotheses[h]["state"]["tree"]["state"]


def _oracle_trees(doc):
    return doc["estimator"]["state"]["oracle"]["state"]["trees"]["__tuple__"]


def _set(field, i, value):
    def damage(doc):
        _tree(doc)[field]["data"][i] = value
    return damage


def _categorical(doc):
    """The first oracle tree with a categorical set of two codes or more: (its fields,
    the index of the set)."""
    for j, tree in enumerate(_oracle_trees(doc)):
        sets = tree["state"]["categories_left"]
        for i, codes in enumerate([] if sets is None else sets["__tuple__"]):
            if codes is not None and len(codes["data"]) >= 2:
                return j, i, codes
    raise AssertionError("no categorical split of two codes")


def _unsorted_codes(doc):
    _, _, codes = _categorical(doc)
    codes["data"].reverse()


def _with_dtype(field, dtype, kind):
    def damage(doc):
        _tree(doc)[field].update(__ndarray__=dtype,
                                 data=[kind(v) for v in _tree(doc)[field]["data"]])
    return damage


HYPOTHESIS = r"estimator\.ensemble_\.hypotheses\[0\]\.tree"
ORACLE = r"estimator\.oracle\.trees"
#: Each damage with the place (and the words) it is refused by.  Left ones in the
#: fixture's first tree: left = [2, -2, -1] or of that form, three splits (asserted).
DAMAGES = {
    # a child beyond the splits: predict indexes feature[99] (IndexError); LightGBM's
    # compiled predict would read past its arrays
    "child-out-of-range": (_set("left", 0, 99), HYPOTHESIS + r"\.left\[0\]: is 99, not a node"),
    # a leaf beyond the leaves (~(-9) = 8 of 4): value[8], an IndexError
    "leaf-out-of-range": (_set("right", 0, -9), HYPOTHESIS + r"\.right\[0\]: is -9, not a node"),
    # a child pointing back to the root: TreeStructure.apply's walk (and LightGBM's)
    # never ends for the rows sent that way, so predict is not called on it below
    "cycle": (_set("left", 1, 0), HYPOTHESIS + r"\.left\[1\]: is 0, a node reached before "
                                               r"\(a cycle"),
    "self-loop": (lambda d: _tree(d)["right"]["data"].__setitem__(
        1, 1), HYPOTHESIS + r"\.right\[1\]: is 1, a node reached before"),
    # both sides of the root the same node: a tree of fewer nodes than it says
    "two-parents": (lambda d: _tree(d)["right"]["data"].__setitem__(
        0, _tree(d)["left"]["data"][0]), HYPOTHESIS + r"\.right\[0\]: is -?\d+, a node "
                                                      r"reached before"),
    # a feature beyond X: IndexError at predict; LightGBM reads past the row
    "feature-beyond-x": (_set("feature", 0, 4),
                         HYPOTHESIS + r"\.feature\[0\]: is 4, not a feature of the tree's 4"),
    # a negative feature: NumPy reads X's last column, silently another model
    "negative-feature": (_set("feature", 0, -1),
                         HYPOTHESIS + r"\.feature\[0\]: is -1, not a feature"),
    # float features: "arrays used as indices must be of integer type" at predict
    "float-features": (_with_dtype("feature", "<f8", float),
                       HYPOTHESIS + r"\.feature: must be a 1-D integer array, not an array "
                                    r"of dtype float64"),
    # a NaN leaf: the model's decision_function is NaN for the rows reaching it
    "nan-leaf": (_set("value", 0, {"__float__": "nan"}),
                 HYPOTHESIS + r"\.value: must be a 2-D float64 array of finite numbers"),
    # missing type 5: routed as none by predict, but written as decision_type bits that
    # LightGBM reads as another rule (the export would predict otherwise)
    "missing-type": (_set("missing", 0, 5), HYPOTHESIS + r"\.missing\[0\]: is 5, not 0"),
    "short-threshold": (lambda d: _tree(d)["threshold"].update(
        shape=[2], data=_tree(d)["threshold"]["data"][:2]),
        HYPOTHESIS + r"\.threshold: has shape \(2,\); a tree of 4 leaves has 3 splits"),
    "leaf-count-shape": (lambda d: _tree(d)["leaf_count"].update(
        shape=[3], data=_tree(d)["leaf_count"]["data"][:3]),
        HYPOTHESIS + r"\.leaf_count: has shape \(3,\), not \(4,\)"),
    # the export makes a bitset word of each code // 32: a negative index, read from the
    # end; out of order: not a set as LightGBM's bitsets give it
    "unsorted-codes": (_unsorted_codes, ORACLE + r"\[\d+\]\.categories_left\[\d+\]: must be "
                                                 r"distinct category codes"),
    "huge-exponent": (lambda d: d["estimator"]["state"]["ensemble_"]["state"]["hypotheses"][0]
                      ["state"].update(exponent=5000),
                      r"hypotheses\[0\]\.exponent: must be an integer from -1074 to 1024"),
    "tree-width": (lambda d: _tree(d).update(n_features=5),
                   HYPOTHESIS + r"\.n_features: is 5; the model has 4"),
    "oracle-widths": (lambda d: _oracle_trees(d)[3]["state"].update(n_features=5),
                      ORACLE + r"\[3\]\.n_features: is 5; trees\[0\] is over 4"),
    "oracle-n-jobs": (lambda d: d["estimator"]["state"]["oracle"]["state"].update(n_jobs=0),
                      r"estimator\.oracle\.n_jobs: must be null or a non-zero integer"),
    "oracle-block-size": (lambda d: d["estimator"]["state"]["oracle"]["state"].update(
        block_size=0), r"estimator\.oracle\.block_size: must be an integer >= 1"),
    "oracle-no-trees": (lambda d: d["estimator"]["state"]["oracle"]["state"].update(
        trees={"__tuple__": []}), r"estimator\.oracle\.trees: must be a non-empty list"),
}


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_tree_is_refused_by_its_place(name, document):
    damage, where = DAMAGES[name]
    doc = copy.deepcopy(document)
    assert len(_tree(doc)["left"]["data"]) == 3  # (the damages' indices assume it)
    damage(doc)
    with pytest.raises(ValueError, match=where):
        from_json(json.dumps(doc))


def _without_tree_checks(monkeypatch) -> None:
    """The reader with no check of a TreeStructure's fields, and without its last resort
    (a prediction on a row of zeros, which misses a damage that row does not reach)."""
    monkeypatch.delitem(schema._SPECS, "TreeStructure")
    monkeypatch.delitem(schema._CROSS, "TreeStructure")
    monkeypatch.setattr(json_model, "check_fitted", lambda estimator, where: None)


@pytest.mark.parametrize("name,error", [
    ("child-out-of-range", IndexError), ("leaf-out-of-range", IndexError),
    ("feature-beyond-x", IndexError), ("float-features", IndexError),
    ("nan-leaf", NonFinitePrediction)])
def test_without_the_checks_the_damage_fails_at_predict(name, error, document, data,
                                                         monkeypatch):
    """The same documents, read without the checks, load into models that fail when they
    predict X ..."""
    damage, _ = DAMAGES[name]
    doc = copy.deepcopy(document)
    damage(doc)
    _without_tree_checks(monkeypatch)
    model = from_json(json.dumps(doc))
    with pytest.raises(error):
        model.decision_function(data[0])


def test_without_the_checks_a_negative_feature_reads_another_column(document, data,
                                                                     monkeypatch):
    """... or predict otherwise: a feature of -1 reads X's last column."""
    damage, _ = DAMAGES["negative-feature"]
    doc = copy.deepcopy(document)
    damage(doc)
    _without_tree_checks(monkeypatch)
    X = data[0]
    damaged = from_json(json.dumps(doc)).decision_function(X)
    intact = from_json(json.dumps(document)).decision_function(X)
    assert np.isfinite(damaged).all() and not np.array_equal(damaged, intact)


def _chain(doc) -> int:
    """A hypothesis whose tree has a split below a split below the root."""
    for h in range(len(doc["estimator"]["state"]["ensemble_"]["state"]["hypotheses"])):
        tree = _tree(doc, h)
        if any(c > 0 for k in range(1, len(tree["left"]["data"]))
               for c in (tree["left"]["data"][k], tree["right"]["data"][k])):
            return h
    raise AssertionError("no tree of depth 3")


def test_a_tree_numbered_otherwise_is_read(document, data):
    """Any numbering of the splits is a tree: a tree's splits renumbered so that a child
    comes before its parent load and predict as before."""
    doc = copy.deepcopy(document)
    tree = _tree(doc, _chain(doc))
    n = len(tree["left"]["data"])
    new = [0, *range(n - 1, 0, -1)]  # split k becomes split new[k] (the root stays)
    old = {f: list(tree[f]["data"]) for f in ("feature", "threshold", "left", "right",
                                              "default_left", "missing")}
    for field, values in old.items():
        for k, v in enumerate(values):
            tree[field]["data"][new[k]] = new[v] if field in ("left", "right") and v >= 0 \
                else v
    if tree["categories_left"] is not None:
        sets = list(tree["categories_left"]["__tuple__"])
        for k, v in enumerate(sets):
            tree["categories_left"]["__tuple__"][new[k]] = v
    left, right = tree["left"]["data"], tree["right"]["data"]
    assert any(c >= 0 and c < k for k in range(n) for c in (left[k], right[k]))
    X = data[0]
    np.testing.assert_array_equal(from_json(json.dumps(doc)).decision_function(X),
                                  from_json(json.dumps(document)).decision_function(X))
