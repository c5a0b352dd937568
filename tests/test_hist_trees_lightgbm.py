"""HistTreeOracle's trees are LightGBM's trees on the same bins.

One round of ``lightgbm.train`` (objective ``regression``, ``learning_rate=1``,
``boost_from_average=False``, unit weights) grows the least-squares tree of the labels:
its gradients are ``−y`` and its hessians 1, so its leaves are ``Σ y / (n + λ)`` and its
split gains ``G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)``, what ``project(y)`` grows.  The
features are small positive integers (fewer distinct values than ``max_bin``, and
``min_data_in_bin=1``: both libraries bin one value a bin) and the labels halves of
integers (exact in LightGBM's float32 gradients, and their sums exact in both).

What differs, and how the comparison allows for it:

* LightGBM's model text prints a split's gain with 6 significant digits (and keeps it
  as float32): gains are compared with ``rtol=6e-6``.  Its hessian sums carry
  ``kEpsilon`` (1e-15): leaf values are compared with ``rtol=1e-12``.
* LightGBM scans thresholds right to left and keeps the first best, the oracle left to
  right: where two thresholds split a leaf's rows alike (a value absent from the leaf)
  they may pick different ones, so the splits are compared by the rows they send left.
* LightGBM does not search, in a leaf's descendants, a feature that had no split of
  positive gain in the leaf (``SerialTreeLearner::FindBestSplits``); the oracle takes
  the same shortcut, and so does the brute-force grower of tests/test_hist_trees.py
  with ``skip_unsplittable``: all three trees are compared.  (With ``max_depth`` too:
  both stop a leaf at that depth.)
"""

from __future__ import annotations

import numpy as np
import pytest
from test_hist_trees import reference_tree

from oracleboost.oracles import HistTreeOracle
from oracleboost.oracles.trees import MISSING_NAN

lgb = pytest.importorskip("lightgbm")


def _data(seed, n=240, d=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 9, size=(n, d)).astype(float)
    y = (rng.integers(-40, 41, size=n) + 10 * X[:, 0] - 6 * X[:, 2] + 4 * X[:, 3]) / 2.0
    return X, y


def _lightgbm_tree(X, y, num_leaves, min_data, min_hessian, lam, max_depth, **extra):
    params = {**extra, "objective": "regression", "learning_rate": 1.0, "boost_from_average": False,
              "max_depth": max_depth, "num_leaves": num_leaves, "min_data_in_leaf": min_data,
              "min_sum_hessian_in_leaf": min_hessian, "lambda_l2": lam,
              "min_data_in_bin": 1, "max_bin": 255, "num_threads": 1,
              "deterministic": True, "force_row_wise": True, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
    splits, leaves = {}, {}

    def walk(node):
        if "split_index" in node:
            splits[node["split_index"]] = node
            walk(node["left_child"])
            walk(node["right_child"])
        else:
            leaves[node.get("leaf_index", 0)] = node["leaf_value"]

    walk(booster.dump_model()["tree_info"][0]["tree_structure"])
    order = sorted(splits)
    return (booster, np.array([splits[i]["split_feature"] for i in order], dtype=np.intp),
            np.array([splits[i]["split_gain"] for i in order]),
            np.array([leaves[q] for q in range(len(leaves))]))


#: y rises with features 0 and 3: constraints against them bind
MONOTONE = [-1, 1, 0, -1]


@pytest.mark.parametrize("num_leaves,min_data,lam,max_depth,directions", [
    (6, 5, 0.0, -1, None), (8, 5, 1.5, -1, None), (12, 3, 0.5, -1, None),
    (12, 4, 0.5, 3, None), (6, 5, 0.5, -1, MONOTONE), (10, 3, 0.0, -1, MONOTONE)])
def test_split_gains_and_leaves_equal_lightgbm(num_leaves, min_data, lam, max_depth,
                                               directions):
    """With ``directions``, LightGBM's ``monotone_constraints_method="basic"`` against the
    oracle's ``monotone_constraints``: the same splits, gains and clamped leaves."""
    extra = {} if directions is None else {"monotone_constraints": directions,
                                           "monotone_constraints_method": "basic"}
    for seed in range(6):
        X, y = _data(seed)
        booster, feature, gain, leaf_value = _lightgbm_tree(
            X, y, num_leaves, min_data, 1e-3, lam, max_depth, **extra)
        h = HistTreeOracle(num_leaves=num_leaves, min_data_in_leaf=min_data, reg_lambda=lam,
                           max_depth=max_depth,
                           monotone_constraints=directions).bind(X).project(y)
        kw = {"num_leaves": num_leaves, "min_data": min_data, "min_weight": 1e-3,
              "lam": lam, "max_depth": max_depth, "directions": directions}
        ref = reference_tree(X, y[:, None], np.ones(len(y)), skip_unsplittable=True, **kw)
        np.testing.assert_array_equal(h.tree.feature, ref[0])
        np.testing.assert_array_equal(feature, ref[0])
        np.testing.assert_allclose(gain, ref[5], rtol=6e-6)
        np.testing.assert_allclose(leaf_value, ref[4][:, 0], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(booster.predict(X, pred_leaf=True)[:, 0], ref[6])
        np.testing.assert_allclose(gain, h.split_gain, rtol=6e-6)
        np.testing.assert_allclose(leaf_value, h.tree.value[:, 0], rtol=1e-12, atol=1e-12)
        # the same rows in the same leaves
        np.testing.assert_allclose(booster.predict(X), h.train_output, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(booster.predict(X, pred_leaf=True)[:, 0],
                                      h.tree.apply(X))


def test_the_monotone_comparison_binds():
    """The constraints of the comparison above change the trees."""
    changed = 0
    for seed in range(6):
        X, y = _data(seed)
        kw = {"num_leaves": 6, "min_data_in_leaf": 5, "reg_lambda": 0.5}
        free = HistTreeOracle(**kw).bind(X).project(y)
        bound = HistTreeOracle(monotone_constraints=MONOTONE, **kw).bind(X).project(y)
        changed += not np.array_equal(free.train_output, bound.train_output)
    assert changed >= 4


def test_missing_values_split_as_lightgbm_splits_them():
    """NaN in features 1-3 (LightGBM's missing type NaN, its two scans): the same
    features, gains and training outputs, and the same outputs on new rows with NaN.
    A split that puts the NaN rows alone on one side may be written mirrored (LightGBM:
    NaN left of its zero bin; the oracle: every value left, NaN right), so sides,
    thresholds and leaf numbers are not compared."""
    nan_splits = 0
    for seed in range(6):
        X, y = _data(seed)
        rng = np.random.default_rng(seed + 100)
        X[:, 1:][rng.uniform(size=(len(X), 3)) < 0.15] = np.nan
        y[np.isnan(X[:, 1])] += 15.0
        booster, feature, gain, _ = _lightgbm_tree(X, y, 4, 5, 1e-3, 0.5, -1)
        h = HistTreeOracle(num_leaves=4, min_data_in_leaf=5, reg_lambda=0.5).bind(X).project(y)
        np.testing.assert_array_equal(h.tree.feature, feature)
        np.testing.assert_allclose(gain, h.split_gain, rtol=6e-6)
        np.testing.assert_allclose(booster.predict(X), h.train_output, rtol=1e-12, atol=0)
        X_new = rng.integers(1, 9, size=(100, 4)).astype(float)
        X_new[rng.uniform(size=X_new.shape) < 0.3] = np.nan
        np.testing.assert_allclose(booster.predict(X_new), h.predict(X_new), rtol=1e-12,
                                   atol=0)
        nan_splits += int(np.sum(h.tree.missing == MISSING_NAN))
    assert nan_splits >= 6  # splits that learn where NaN goes


# -- the export --------------------------------------------------------------------------------
def _nan_data(seed, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.uniform(size=X.shape) < 0.15] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1]) - np.nan_to_num(X[:, 2]) ** 2 \
        + rng.normal(scale=0.3, size=n)
    return X, y


def _booster_cells():
    from oracleboost.boosters import (
        CoordinateBoostingClassifier,
        FunctionalGradientClassifier,
        FunctionalGradientRegressor,
        MirrorBoostingClassifier,
    )

    return {  # name: (make(oracle), the labels from y)
        "functional_regressor": (lambda o: FunctionalGradientRegressor(o, n_estimators=6),
                                 lambda y: y),
        "functional_logistic": (lambda o: FunctionalGradientClassifier(
            o, loss="logistic", n_estimators=6), lambda y: (y > 0.3).astype(int)),
        "functional_softmax": (lambda o: FunctionalGradientClassifier(o, n_estimators=4),
                               lambda y: np.digitize(y, [-0.5, 0.8])),
        "adaboost": (lambda o: CoordinateBoostingClassifier(o, n_estimators=6),
                     lambda y: (y > 0.3).astype(int)),
        "maboost": (lambda o: MirrorBoostingClassifier(o, n_estimators=6),
                    lambda y: (y > 0.3).astype(int)),
    }


@pytest.mark.parametrize("booster", list(_booster_cells()))
def test_the_export_predicts_the_decision_function_bit_for_bit(booster):
    make, labels = _booster_cells()[booster]
    for seed in (0, 1):
        X, y = _nan_data(seed)
        model = make(HistTreeOracle(num_leaves=6, min_data_in_leaf=5)).fit(X, labels(y))
        exported = model.to_lightgbm(X)
        decision = (model.decision_function if hasattr(model, "decision_function")
                    else model.predict)
        X_new, _ = _nan_data(seed + 10, n=150)
        X_new[:5] = np.nan  # rows of NaN alone
        for rows in (X, X_new):
            np.testing.assert_array_equal(exported.predict(rows, raw_score=True),
                                          decision(rows))
