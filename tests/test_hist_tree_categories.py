"""HistTreeOracle's categorical features: splits that send a set of categories left.

The splits are LightGBM's (``FindBestThresholdCategoricalInner``): on the same data and
parameters one round of ``lightgbm.train`` makes the same splits with the same gains;
a DataFrame's ``category`` columns reach the oracle through every booster, and the
exported LightGBM model predicts what the model predicts, bit for bit, on unseen
categories and missing values too.

One rule of LightGBM's growth is not the library's: a feature with no valid split in a
leaf is never scanned again in that leaf's descendants (its ``is_splittable``), where
the library scans every feature in every leaf.  The trees compared here are small
enough that it does not bite (with 8 leaves it does on one of these seeds: a set of odd
categories that no split could use at a leaf becomes a valid split two levels down).
"""

from __future__ import annotations

import lightgbm
import numpy as np
import pytest
import scipy.sparse as sp
from test_categorical import _codes, _frame
from test_export_categorical import _new_rows

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
)
from oracleboost.oracles import HistTreeOracle
from oracleboost.oracles._hist_tree_categories import MAX_CATEGORIES

SEEDS = [0, 1, 2]


def _data(seed: int, n: int = 300, dyadic: bool = False):
    """An integer-valued numeric column (binned alike by LightGBM and the stump oracle),
    a categorical column of 10 categories with missing values, one of 3 categories; a
    target that depends on the parity of the first's categories.  ``dyadic``: targets
    on a grid of 1/64, whose sums float32 gradients and float64 sums both hold exactly."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, 10, n).astype(float)
    cat[rng.uniform(size=n) < 0.05] = np.nan
    small = rng.integers(0, 3, n).astype(float)
    x = rng.integers(0, 20, n).astype(float)
    X = np.column_stack([x, cat, small])
    y = (np.where(np.nan_to_num(cat, nan=1.0) % 2 == 0, 1.0, -1.0) + 0.015 * x
         + 0.5 * (small == 1) + 0.3 * rng.normal(size=n))
    if dyadic:
        y = np.round(y * 64) / 64
    return X, y


CAT_PARAMS = [
    {},
    {"min_data_per_group": 5, "cat_smooth": 1.0},
    {"max_cat_to_onehot": 12, "min_data_per_group": 5},  # one-vs-rest on 10 categories
    {"cat_l2": 1.0, "cat_smooth": 5.0, "min_data_per_group": 20, "max_cat_threshold": 3},
]


def _lightgbm_tree(X, y, leaves: int, cat: dict) -> lightgbm.Booster:
    params = dict(objective="regression", num_leaves=leaves, min_data_in_leaf=5,
                  learning_rate=1.0, boost_from_average=False, lambda_l2=0.5,
                  min_sum_hessian_in_leaf=1e-3, min_data_in_bin=1, verbose=-1,
                  num_threads=1, feature_pre_filter=False, **cat)
    data = lightgbm.Dataset(X, y, categorical_feature=[1, 2])
    return lightgbm.train(params, data, num_boost_round=1)


def _lightgbm_splits(booster: lightgbm.Booster) -> list[tuple[int, str | None, float]]:
    """Each split's feature, its set of categories (``"a||b"``; None for a threshold)
    and gain, in the order the splits were made."""
    out = []

    def walk(node):
        if "split_index" not in node:
            return
        cats = node["threshold"] if node["decision_type"] == "==" else None
        out.append((node["split_index"], node["split_feature"], cats, node["split_gain"]))
        walk(node["left_child"])
        walk(node["right_child"])

    walk(booster.dump_model()["tree_info"][0]["tree_structure"])
    return [s[1:] for s in sorted(out)]


def _oracle(**kw) -> HistTreeOracle:
    return HistTreeOracle(min_data_in_leaf=5, reg_lambda=0.5, **kw)


@pytest.mark.parametrize("cat", CAT_PARAMS)
def test_the_splits_and_gains_are_lightgbms(cat):
    for seed in SEEDS:
        X, y = _data(seed)
        theirs = _lightgbm_splits(_lightgbm_tree(X, y, 6, cat))
        h = _oracle(num_leaves=6, **cat).bind(X, categorical_features=[1, 2]).project(y)
        t = h.tree
        assert t.categories_left is not None
        ours = [(int(t.feature[i]), None if t.categories_left[i] is None
                 else "||".join(str(c) for c in t.categories_left[i].tolist()))
                for i in range(t.n_leaves - 1)]
        assert ours == [s[:2] for s in theirs]
        # LightGBM writes a gain with 6 significant digits
        np.testing.assert_allclose(h.split_gain, [s[2] for s in theirs], rtol=1e-5)


def test_the_leaves_are_lightgbms_without_cat_l2():
    """With ``cat_l2=0`` LightGBM's leaves are the same ``G / (H + λ)`` (targets whose
    sums both hold exactly), and the routing of missing values and of categories not
    seen in training is the same."""
    cat = {"cat_l2": 0.0, "min_data_per_group": 5, "cat_smooth": 1.0}
    for seed in SEEDS:
        X, y = _data(seed, dyadic=True)
        booster = _lightgbm_tree(X, y, 6, cat)
        h = _oracle(num_leaves=6, **cat).bind(X, categorical_features=[1, 2]).project(y)
        new = X.copy()
        new[::3, 1] = [np.nan, 10.0, 11.0, 300.0] * (len(new[::3]) // 4) + [
            np.nan] * (len(new[::3]) % 4)
        new[1::5, 2] = np.nan
        for rows in (X, new):
            np.testing.assert_allclose(h.predict(rows), booster.predict(rows), rtol=1e-12,
                                       atol=0)
        np.testing.assert_array_equal(h.predict(X), h.train_output)


def test_a_set_split_finds_what_one_category_against_the_rest_cannot():
    """The target is the parity of the category (10 categories): one split by a set of
    categories fits it; the best one-vs-rest split (``max_cat_to_onehot`` above the
    bins) leaves most of its variance."""
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        cat = rng.integers(0, 10, 300).astype(float)
        y = np.where(cat % 2 == 0, 1.0, -1.0) + 0.1 * rng.normal(size=300)
        X = cat[:, None]
        errors = {}
        for name, onehot in (("set", 4), ("one", 11)):
            oracle = HistTreeOracle(num_leaves=2, min_data_in_leaf=5, cat_smooth=1.0,
                                    min_data_per_group=5, max_cat_to_onehot=onehot)
            h = oracle.bind(X, categorical_features=[0]).project(y)
            errors[name] = float(np.sum((y - h.train_output) ** 2))
            if name == "set":
                assert h.tree.categories_left[0].tolist() in ([0, 2, 4, 6, 8],
                                                              [1, 3, 5, 7, 9])
            else:
                assert h.tree.categories_left[0].size == 1
        assert errors["set"] < 0.05 * errors["one"]


BOOSTERS = {
    "functional_regressor": (lambda o: FunctionalGradientRegressor(o, n_estimators=5), "reg"),
    "functional_logistic": (lambda o: FunctionalGradientClassifier(
        o, loss="logistic", n_estimators=5), "binary"),
    "functional_softmax": (lambda o: FunctionalGradientClassifier(o, n_estimators=5),
                           "three"),
    "adaboost": (lambda o: CoordinateBoostingClassifier(o, n_estimators=5), "binary"),
}


@pytest.mark.parametrize("name", BOOSTERS)
def test_category_frames_through_boosters_and_the_export(name):
    make, kind = BOOSTERS[name]
    frame, y, _ = _frame(0, n=300)
    if kind == "binary":
        y = np.where(y > np.median(y), "high", "low")
    elif kind == "three":
        y = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    oracle = HistTreeOracle(num_leaves=7, min_data_in_leaf=10, min_data_per_group=20,
                            cat_smooth=5.0)
    model = make(oracle).fit(frame, y)
    assert sorted(model.categories_) == [1, 3]
    trees = [h.tree_structure() for h in model.ensemble_.hypotheses]
    assert any(t.categories_left is not None for t in trees)
    exported = model.to_lightgbm()
    decision = model.decision_function if hasattr(model, "decision_function") \
        else model.predict
    for rows in (frame, _new_rows(0)):  # the new rows: unseen categories, NaN
        ours = decision(rows)
        np.testing.assert_array_equal(exported.predict(rows, raw_score=True), ours)
        np.testing.assert_array_equal(
            exported.predict(_codes(rows, model.categories_), raw_score=True), ours)


def test_n_jobs_and_sparse_rows_change_no_bit():
    rng = np.random.default_rng(0)
    n = 30_000  # enough (row, feature) cells for a histogram on two threads
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 40, n).astype(float),
                         rng.integers(0, 6, n).astype(float)])
    X[rng.uniform(size=n) < 0.05, 1] = np.nan
    y = np.sin(np.nan_to_num(X[:, 1], nan=-1.0)) + 0.3 * X[:, 0] + rng.normal(size=n)

    def answers(rows, n_jobs):
        oracle = HistTreeOracle(num_leaves=15, n_jobs=n_jobs, block_size=1024)
        bound = oracle.bind(rows, categorical_features=[1, 2])
        return bound.project(y), bound.correlate(y - y.mean())

    first = answers(X, 1)
    assert all(h.tree.categories_left is not None for h in first)
    for rows, n_jobs in ((X, 2), (X, 4), (sp.csr_matrix(X), 2)):
        for a, b in zip(first, answers(rows, n_jobs), strict=True):
            assert a.key == b.key
            np.testing.assert_array_equal(a.train_output, b.train_output)


def test_beyond_255_categories_the_rarest_go_with_the_missing_values():
    rng = np.random.default_rng(0)
    n_cat = MAX_CATEGORIES + 45
    # category c appears about in proportion to n_cat - c: the highest codes are rarest
    p = np.arange(n_cat, 0, -1, dtype=float)
    cat = rng.choice(n_cat, size=20_000, p=p / p.sum()).astype(float)
    y = np.where(cat >= 200, 5.0, 0.0) + rng.normal(size=cat.size)
    X = cat[:, None]
    bound = HistTreeOracle(num_leaves=4, min_data_per_group=10, cat_smooth=1.0).bind(
        X, categorical_features=[0])
    values, counts = np.unique(cat, return_counts=True)
    kept = bound.categories.category[0]
    assert kept.size == MAX_CATEGORIES
    assert np.all(np.diff(counts[np.searchsorted(values, kept)]) <= 0)  # most frequent first
    dropped = np.setdiff1d(values, kept)
    h = bound.project(y)
    assert h.tree.categories_left is not None
    for cats in h.tree.categories_left:
        assert cats is None or not np.isin(cats, dropped).any()
    # a dropped category, a missing value and a category never seen go the same way
    rows = np.array([[dropped[0]], [np.nan], [10_000.0]])
    assert np.unique(h.predict(rows)).size == 1


def test_monotone_constraints_keep_their_order_beside_a_categorical_feature():
    X, y = _data(0)
    y = y + 0.1 * X[:, 0]
    oracle = HistTreeOracle(num_leaves=8, min_data_in_leaf=5, min_data_per_group=10,
                            cat_smooth=1.0, monotone_constraints=[1, 0, 0])
    h = oracle.bind(X, categorical_features=[1, 2]).project(y)
    assert h.tree.categories_left is not None
    grid = np.linspace(-1, 21, 45)
    for c1 in [0.0, 1.0, 5.0, np.nan]:
        for c2 in [0.0, 1.0, 2.0]:
            rows = np.column_stack([grid, np.full_like(grid, c1), np.full_like(grid, c2)])
            assert np.all(np.diff(h.predict(rows)) >= 0)


def test_refusals_name_their_argument():
    X, _ = _data(0)
    with pytest.raises(ValueError, match="monotone_constraints.*categorical"):
        HistTreeOracle(monotone_constraints=[0, 1, 0]).bind(X, categorical_features=[1, 2])
    for name, value in (("max_cat_to_onehot", 0), ("max_cat_threshold", 0),
                        ("cat_smooth", -1.0), ("cat_l2", np.inf),
                        ("min_data_per_group", 1.5)):
        with pytest.raises(ValueError, match=name):
            HistTreeOracle(**{name: value}).bind(X, categorical_features=[1])
    bad = X.copy()
    bad[0, 1] = 2.5
    with pytest.raises(ValueError, match="categorical_features"):
        HistTreeOracle().bind(bad, categorical_features=[1])
    assert HistTreeOracle().capabilities.categorical


@pytest.mark.parametrize("growth", ["leaf", "depth"])
def test_every_leaf_keeps_min_data_in_leaf_rows(growth):
    """A tree stops where no leaf can split: no split is made twice, no leaf is empty,
    each leaf has ``min_data_in_leaf`` rows (the rows here all weigh the same)."""
    for seed in SEEDS:
        X, y = _data(seed, n=200)
        oracle = HistTreeOracle(growth=growth, min_data_in_leaf=20, min_data_per_group=5,
                                cat_smooth=1.0)
        h = oracle.bind(X, categorical_features=[1, 2]).project(y)
        assert h.tree.categories_left is not None
        assert h.tree.leaf_count.min() >= 20
        assert np.array_equal(np.bincount(h.tree.apply(X)), h.tree.leaf_count)
