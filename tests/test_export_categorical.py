"""The export of LightGBM's categorical splits (issue 22).

A model fitted with ``LightGBMOracle`` on a DataFrame's ``category`` columns has trees
that split by sets of category codes.  ``to_lightgbm()`` writes them in LightGBM's
format (``decision_type`` bit 1, ``threshold`` an index into ``cat_boundaries``, the
sets as ``cat_threshold`` bitsets) with the fit's ``categories_`` as the model's
``pandas_categorical``, so that ``predict(X_df, raw_score=True)`` is
``decision_function(X_df)`` bit for bit for the DataFrames a user predicts on: other
category orders, unseen categories, missing values; and a NumPy X of codes.
"""

from __future__ import annotations

import copy
import functools

import lightgbm
import numpy as np
import pandas as pd
import pytest
from test_categorical import COLOURS, SHAPES, _codes, _frame
from test_lightgbm_missing import _field

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.export.lightgbm import _tree_block
from oracleboost.oracles import LightGBMOracle
from oracleboost.oracles.trees import TreeStructure


def _oracle():
    # one thread: small trees grow several times faster on a busy machine
    return LightGBMOracle(num_leaves=7, min_data_in_leaf=10, params={"num_threads": 1})


BOOSTERS = {
    "adaboost": (lambda: CoordinateBoostingClassifier(_oracle(), n_estimators=6), "cls"),
    "logistic_wolfe": (lambda: CoordinateBoostingClassifier(
        _oracle(), loss="logistic", step="wolfe", n_estimators=6), "cls"),
    "maboost": (lambda: MirrorBoostingClassifier(_oracle(), n_estimators=6), "cls"),
    "functional_regressor": (lambda: FunctionalGradientRegressor(_oracle(), n_estimators=6),
                             "reg"),
    "functional_logistic": (lambda: FunctionalGradientClassifier(
        _oracle(), loss="logistic", n_estimators=6), "cls"),
    "lpboost": (lambda: TotallyCorrectiveClassifier(_oracle(), n_estimators=6),
                "cls"),
    "ranker": (lambda: FunctionalGradientRanker(_oracle(), n_estimators=6), "rank"),
}


@functools.cache  # the tests only read the fits: each fitted once
def _fit(name: str, seed: int, n: int = 600):
    make, kind = BOOSTERS[name]
    frame, y, _ = _frame(seed, n=n)
    if kind == "cls":
        return make().fit(frame, np.where(y > np.median(y), "high", "low")), frame
    if kind == "rank":
        rel = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(float)
        return make().fit(frame, rel, np.repeat(np.arange(n // 10), 10)), frame
    return make().fit(frame, y), frame


def _decision(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


def _staged(model, X):
    return model.staged_decision_function(X) if hasattr(model, "decision_function") \
        else model.staged_predict(X)


def _new_rows(seed: int) -> pd.DataFrame:
    """Rows whose category columns list their categories in other orders and hold an
    unseen category and missing values."""
    new, _, _ = _frame(seed + 50, n=300)
    rng = np.random.default_rng(seed)
    colour = np.array(new["colour"].astype(object), dtype=object)
    colour[::7] = "ultraviolet"
    new["colour"] = pd.Categorical(colour, categories=rng.permutation(
        np.append(COLOURS, "ultraviolet")))
    new["shape"] = new["shape"].cat.reorder_categories(SHAPES[::-1].tolist())
    assert new["colour"].isna().any() and new["shape"].isna().any()
    return new


@pytest.mark.parametrize("name, seed", [(name, 0) for name in BOOSTERS]
                         + [("functional_regressor", 1), ("adaboost", 1)])
def test_the_export_predicts_category_frames_bit_for_bit(name, seed):
    model, frame = _fit(name, seed)
    assert sorted(model.categories_) == [1, 3]
    trees = [h.tree_structure() for h in model.ensemble_.hypotheses]
    assert any(t.categories_left is not None for t in trees)  # categorical splits exported
    exported = model.to_lightgbm()
    new = _new_rows(seed)
    for rows in (frame, new):
        ours = _decision(model, rows)
        np.testing.assert_array_equal(exported.predict(rows, raw_score=True), ours)
        # a NumPy X holds the fit's codes, in both
        np.testing.assert_array_equal(
            exported.predict(_codes(rows, model.categories_), raw_score=True), ours)
    if model.ensemble_.refits:  # totally corrective: the last round's coefficients only
        return
    staged = list(_staged(model, new))
    for k in (1, len(staged)):
        np.testing.assert_array_equal(
            exported.predict(new, raw_score=True, num_iteration=k + 1), staged[k - 1])


def test_the_categorical_fields_are_lightgbms_own():
    """A LightGBM tree's categorical splits as the export writes them are the fields
    LightGBM wrote (bitset words, boundaries, the nodes' indices and decision types)."""
    model, _ = _fit("functional_regressor", 0)
    written = 0
    for h in model.estimators_:
        tree = h.tree_structure()
        if tree.categories_left is None:
            continue
        block = "\nTree=0\n" + _tree_block(tree, None)  # LightGBM's node numbering
        for key in ("num_cat", "split_feature", "threshold", "decision_type", "left_child",
                    "right_child", "cat_boundaries", "cat_threshold", "leaf_value",
                    "leaf_count"):
            ours, theirs = _field(block, key).split(), _field(h.model_str, key).split()
            if key in ("threshold", "leaf_value", "leaf_count"):  # written as %.17g
                np.testing.assert_array_equal(np.array(ours, float), np.array(theirs, float),
                                              err_msg=key)
            else:
                assert ours == theirs, key
        written += 1
    assert written > 0


def _weird_codes(n: int, rng) -> np.ndarray:
    """Codes as a NumPy X may hold them: fractions (truncated), −0.5 (truncated to 0),
    negatives, NaN, codes beyond every bitset and beyond int32."""
    v = rng.choice([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.7, -0.5, -1.0, -3.2, np.nan, 40.0,
                    1e6, 2.0**31 + 5, 1e300], size=n)
    return v


def test_tree_structure_routes_codes_as_lightgbm():
    model, frame = _fit("functional_regressor", 0)
    rng = np.random.default_rng(0)
    X = _codes(_new_rows(0), model.categories_)
    X[:, 1] = _weird_codes(len(X), rng)
    X[:, 3] = _weird_codes(len(X), rng)
    for h in model.estimators_:
        tree = h.tree_structure()
        booster = lightgbm.Booster(model_str=h.model_str)
        np.testing.assert_array_equal(tree.apply(X),
                                      booster.predict(X, pred_leaf=True).reshape(-1))
        np.testing.assert_array_equal(tree.predict(X), h.predict(X))


def test_covers_counted_on_the_training_frame_are_lightgbms_counts():
    """Counting the covers on the training DataFrame (category columns, missing values)
    with TreeStructure's routing gives each tree's own training counts."""
    model, frame = _fit("functional_regressor", 0)
    own = model.to_lightgbm().dump_model()["tree_info"]
    counted = model.to_lightgbm(frame).dump_model()["tree_info"]
    assert len(own) == len(counted) == 1 + len(model.estimators_)
    for a, b in zip(own[1:], counted[1:], strict=True):
        assert _leaf_counts(a) == _leaf_counts(b)
        assert sum(_leaf_counts(b)) == len(frame)


def _leaf_counts(tree: dict) -> list[int]:
    out = []

    def walk(node):
        if "leaf_index" in node:
            out.append(node.get("leaf_count"))
            return
        walk(node["left_child"])
        walk(node["right_child"])

    walk(tree["tree_structure"])
    return out


def test_shap_tree_explainer_adds_up_on_categories():
    """SHAP's default TreeExplainer (path-dependent, no background: LightGBM's own
    TreeSHAP) on a DataFrame with category columns: local accuracy."""
    shap = pytest.importorskip("shap")
    model, frame = _fit("functional_regressor", 0)
    explainer = shap.TreeExplainer(model.to_lightgbm(frame))
    new = _new_rows(0)
    values = np.asarray(explainer.shap_values(new))
    decision = model.predict(new)
    scale = 1 + np.max(np.abs(decision))
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, decision,
                               rtol=0, atol=1e-12 * scale)
    assert np.abs(values[:, [1, 3]]).max() > 0  # the category columns carry credit


def test_categories_that_json_cannot_hold_are_refused_by_name():
    frame, y, _ = _frame(6, n=300)
    frame["day"] = pd.Categorical(pd.to_datetime("2024-01-01") + pd.to_timedelta(
        np.arange(300) % 5, unit="D"))
    model = FunctionalGradientRegressor(_oracle(), n_estimators=2).fit(frame, y)
    with pytest.raises(ValueError, match=r"categories_ cannot be written as the exported "
                       r"model's pandas_categorical"):
        model.to_lightgbm()


def test_a_tree_structure_with_categories_checks_its_length():
    with pytest.raises(ValueError, match="categories_left has 2 entries"):
        TreeStructure(
            n_features=1, feature=np.zeros(1, dtype=np.intp), threshold=np.zeros(1),
            left=np.array([-1]), right=np.array([-2]), value=np.zeros((2, 1)),
            default_left=np.zeros(1, bool), missing=np.zeros(1, dtype=np.intp),
            categories_left=(None, None))


def test_split_importances_count_categorical_splits():
    """``importance_type="split"`` reads the trees' splits, categorical ones included
    (it raised before they had a TreeStructure), as LightGBM counts them in the export."""
    model, _ = _fit("functional_regressor", 0)
    split = copy.deepcopy(model).set_params(importance_type="split")  # the cached fit kept
    exported = model.to_lightgbm().feature_importance("split")
    np.testing.assert_array_equal(split.feature_importances_, exported)
    assert exported[[1, 3]].sum() > 0
