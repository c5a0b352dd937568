"""LightGBM's everyday options on the estimators, answered through the export to
LightGBM (one implementation): ``predict(X, raw_score=True)``, ``pred_leaf=True`` and
``apply(X)``, ``pred_contrib=True`` (TreeSHAP plus the bias column, summing to the raw
score), and ``importance_type="gain"``; refused by name where the model is not trees.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.export.lightgbm import ExportWarning
from oracleboost.oracles import MLPOracle, StumpOracle, TreeOracle


def _data(kind: str, seed: int):
    if kind == "regression":
        return make_regression(150, 5, noise=5.0, random_state=seed)
    return make_classification(150, 5, n_informative=3, random_state=seed,
                               n_classes=3 if kind == "multiclass" else 2)


MODELS = {
    "adaboost_stumps": (lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=8),
                        "binary"),
    "functional_trees": (lambda: FunctionalGradientClassifier(
        TreeOracle(max_depth=2), loss="logistic", n_estimators=6), "binary"),
    "softmax_trees": (lambda: FunctionalGradientClassifier(
        TreeOracle(max_depth=2), n_estimators=5), "multiclass"),
    "softmax_binary": (lambda: FunctionalGradientClassifier(
        TreeOracle(max_depth=2), loss="softmax", n_estimators=5), "binary"),
    "regressor_trees": (lambda: FunctionalGradientRegressor(
        TreeOracle(max_depth=3), n_estimators=6), "regression"),
    "maboost": (lambda: MirrorBoostingClassifier(StumpOracle(), n_estimators=8), "binary"),
    "totally_corrective": (lambda: TotallyCorrectiveClassifier(
        StumpOracle(), n_estimators=8), "binary"),
}


def _fit(name: str, seed: int):
    make, kind = MODELS[name]
    X, y = _data(kind, seed)
    return make().fit(X, y), X


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        return call(*args, **kwargs)


def _raw(model, X, **kwargs):
    return model.decision_function(X, **kwargs) if hasattr(model, "decision_function") \
        else model.predict(X, **kwargs)


@pytest.mark.parametrize("name", MODELS)
def test_raw_score_leaves_and_contributions_are_the_exports(name):
    """Each option equals the exported Booster's own answer, bit for bit; the
    contributions of each row (one block of n_features + 1 a class score) sum to its
    raw score."""
    for seed in (0, 1):
        model, X = _fit(name, seed)
        rows = X[:30]
        exported = _quiet(model.to_lightgbm)
        raw = _raw(model, rows)
        np.testing.assert_array_equal(model.predict(rows, raw_score=True), raw)
        leaves = model.predict(rows, pred_leaf=True)
        assert leaves.shape == (30, exported.num_trees())
        np.testing.assert_array_equal(leaves, exported.predict(rows, pred_leaf=True))
        np.testing.assert_array_equal(model.apply(rows), leaves)
        contrib = _quiet(model.predict, rows, pred_contrib=True)
        np.testing.assert_array_equal(contrib, exported.predict(rows, pred_contrib=True))
        K = exported.num_model_per_iteration()
        assert contrib.shape == (30, K * (X.shape[1] + 1))
        sums = contrib.reshape(30, K, X.shape[1] + 1).sum(axis=2)
        np.testing.assert_allclose(sums.reshape(raw.shape), raw, rtol=0,
                                   atol=1e-12 * (1 + np.abs(raw).max()))


@pytest.mark.parametrize("name", ["adaboost_stumps", "softmax_trees", "regressor_trees",
                                  "totally_corrective"])
def test_num_iteration_is_the_model_after_that_round(name):
    """``num_iteration=k``: the leaves of the intercept's trees and the first k rounds'
    (the export's ``num_iteration=k + 1``), and contributions that sum to the raw score
    after k rounds; for a totally corrective model, of the model as it stood after
    round k (its hypotheses then, at that round's coefficients)."""
    model, X = _fit(name, 2)
    rows = X[:25]
    exported = _quiet(model.to_lightgbm)
    K = exported.num_model_per_iteration()
    for k in (1, model.n_estimators_ // 2):
        leaves = model.apply(rows, num_iteration=k)
        if name != "totally_corrective":
            np.testing.assert_array_equal(
                leaves, exported.predict(rows, pred_leaf=True, num_iteration=k + 1))
        contrib = _quiet(model.predict, rows, pred_contrib=True, num_iteration=k)
        raw = _raw(model, rows, num_iteration=k)
        sums = contrib.reshape(25, K, -1).sum(axis=2).reshape(raw.shape)
        np.testing.assert_allclose(sums, raw, rtol=0, atol=1e-12 * (1 + np.abs(raw).max()))
    with pytest.raises(ValueError, match="num_iteration"):
        model.apply(rows, num_iteration=model.n_estimators_ + 1)


def test_the_covers_of_stumps_are_said_for_contributions_only():
    model, X = _fit("adaboost_stumps", 3)
    with pytest.warns(ExportWarning, match=r"to_lightgbm\(X_train\)"):
        model.predict(X[:5], pred_contrib=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X[:5], pred_leaf=True)
        model.apply(X[:5])


def test_a_model_that_is_not_trees_is_refused_by_name():
    X, y = _data("regression", 4)
    model = FunctionalGradientRegressor(MLPOracle(max_iter=50), n_estimators=2,
                                        random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict(X, raw_score=True), model.predict(X))
    for option in ("pred_leaf", "pred_contrib"):
        with pytest.raises(ValueError, match=rf"{option}=True.*MLPRegressor.*not a tree"):
            model.predict(X, **{option: True})
    with pytest.raises(ValueError, match="MLPRegressor"):
        model.apply(X)
    assert not hasattr(model.set_params(importance_type="gain"), "feature_importances_")
    Xc, yc = _data("binary", 4)
    dual = AcceleratedMarginClassifier(n_estimators=5).fit(Xc, yc)
    np.testing.assert_array_equal(dual.predict(Xc, raw_score=True),
                                  dual.decision_function(Xc))
    with pytest.raises(ValueError, match="not an ensemble"):
        dual.predict(Xc, pred_leaf=True)


def test_one_option_at_a_time():
    model, X = _fit("adaboost_stumps", 5)
    with pytest.raises(ValueError, match="raw_score=True and pred_leaf=True"):
        model.predict(X, raw_score=True, pred_leaf=True)
    np.testing.assert_array_equal(model.predict(X), model.predict(X, raw_score=False))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gain_of_stumps_by_hand(seed):
    """A stump of leaves ``v_L, v_R`` at coefficient δ, with covers of 1 a leaf, gains
    ``δ² (v_L − v_R)² / 2`` (the squared deviation of its output over its two covers
    lost to the split), summed over the rounds on its feature."""
    X, y = _data("binary", seed)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=10,
                                         importance_type="gain").fit(X, y)
    ensemble = model.ensemble_
    expected = np.zeros(X.shape[1])
    for delta, j in zip(ensemble.round_delta, ensemble.round_index, strict=True):
        h = ensemble.hypotheses[j]
        values = np.unique(h.predict(X))
        assert len(values) == 2
        feature = int(np.argmax(h.feature_importances(X.shape[1])))
        expected[feature] += delta ** 2 * (values[1] - values[0]) ** 2 / 2
    # LightGBM keeps each split's gain as a float32
    np.testing.assert_allclose(model.feature_importances_, expected, rtol=1e-6)


def test_gain_of_trees_is_the_exports():
    X, y = _data("regression", 6)
    model = FunctionalGradientRegressor(TreeOracle(max_depth=3), n_estimators=6,
                                        importance_type="gain").fit(X, y)
    gain = model.feature_importances_
    np.testing.assert_array_equal(gain, model.to_lightgbm().feature_importance("gain"))
    assert (gain > 0).sum() >= 2
    split = model.set_params(importance_type="split").feature_importances_
    assert ((gain > 0) == (split > 0)).all()
