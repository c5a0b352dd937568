"""TreeEnsembleOracle: a trained LightGBM or scikit-learn ensemble read back as a
finite class, one column per tree, re-weighted by every booster that takes a finite
class."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_regression
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from oracleboost import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.engine.model import Ensemble
from oracleboost.export.lightgbm import lightgbm_model_string, to_lightgbm
from oracleboost.oracles import EnsembleTree, TreeEnsembleOracle


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))[:300]
    X, y = X[idx], y[idx]
    return X[:200], y[:200], X[200:], y[200:]


@pytest.fixture(scope="module")
def lgb_model(data):
    X, y, _, _ = data
    return lgb.LGBMClassifier(n_estimators=25, num_leaves=5, learning_rate=0.2,
                              min_child_samples=5, n_jobs=1, verbose=-1).fit(X, y)


def _tree_outputs(booster: lgb.Booster, X: np.ndarray) -> np.ndarray:
    """LightGBM's own per-tree predictions, shape (n, trees)."""
    return np.column_stack([
        booster.predict(X, start_iteration=t, num_iteration=1, raw_score=True)
        for t in range(booster.num_trees())])


# -- the columns -------------------------------------------------------------------------
@pytest.mark.parametrize("source", ["booster", "sklearn_api", "text"])
def test_columns_are_lightgbm_s_trees_bit_for_bit(data, lgb_model, source):
    X, _, X_test, _ = data
    model = {"booster": lgb_model.booster_, "sklearn_api": lgb_model,
             "text": lgb_model.booster_.model_to_string()}[source]
    oracle = TreeEnsembleOracle.from_lightgbm(model)
    assert len(oracle.trees) == 25 and oracle.capabilities.bounded
    bound = oracle.bind(X)
    A = bound.columns()
    scales = np.array([bound.column_hypothesis(j).tree_scale for j in range(A.shape[1])])
    np.testing.assert_array_equal(A * scales, _tree_outputs(lgb_model.booster_, X))
    # each column in [-1, 1], its largest |entry| over the leaves in (0.5, 1]
    assert np.abs(A).max() <= 1.0
    for j, t in enumerate(oracle.trees):
        assert 0.5 < np.abs(t.value).max() / scales[j] <= 1.0
    # a column's hypothesis predicts new rows as LightGBM does
    ref = _tree_outputs(lgb_model.booster_, X_test)
    for j in (0, 7, 24):
        h = bound.column_hypothesis(j, -2.0)
        np.testing.assert_array_equal(h.predict(X_test) / -2.0 * h.tree_scale, ref[:, j])


def test_missing_values_go_where_lightgbm_sends_them(data):
    X, y, X_test, _ = data
    X = X.copy()
    X[::3, 0] = np.nan  # feature 0 learns where NaN goes
    booster = lgb.train({"objective": "binary", "num_leaves": 5, "verbose": -1,
                         "min_data_in_leaf": 5, "num_threads": 1}, lgb.Dataset(X, y), 10)
    oracle = TreeEnsembleOracle.from_lightgbm(booster)
    X_new = X_test.copy()
    X_new[::2, :3] = np.nan
    A = oracle.bind(X_new).columns()
    scales = np.array([2.0 ** oracle.bind(X_new).column_hypothesis(j).exponent
                       for j in range(A.shape[1])])
    np.testing.assert_array_equal(A * scales, _tree_outputs(booster, X_new))


def _sk_tree_outputs(model, X) -> np.ndarray:
    if isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor)):
        return np.column_stack([t.predict(X) for t in model.estimators_[:, 0]])
    if isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        p = [t.predict_proba(X) for t in model.estimators_]
        return np.column_stack([q[:, 1] - q[:, 0] for q in p])
    return np.column_stack([t.predict(X) for t in model.estimators_])


@pytest.mark.parametrize("make", [
    lambda: GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=0),
    lambda: RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0),
    lambda: ExtraTreesClassifier(n_estimators=6, max_depth=3, random_state=0),
])
def test_scikit_learn_classifiers_trees_bit_for_bit(data, make):
    X, y, X_test, _ = data
    model = make().fit(X, y)
    oracle = TreeEnsembleOracle.from_sklearn(model)
    assert not oracle.capabilities.allow_nan
    for rows in (X, X_test):
        bound = oracle.bind(rows)
        scales = [bound.column_hypothesis(j).tree_scale for j in range(len(oracle.trees))]
        np.testing.assert_array_equal(bound.columns() * scales, _sk_tree_outputs(model, rows))


@pytest.mark.parametrize("make", [
    lambda: GradientBoostingRegressor(n_estimators=8, max_depth=2, random_state=0),
    lambda: RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0),
    lambda: ExtraTreesRegressor(n_estimators=5, max_depth=3, random_state=0),
])
def test_scikit_learn_regressors_trees_bit_for_bit(make):
    X, y = make_regression(120, 5, random_state=0)
    model = make().fit(X[:80], y[:80])
    oracle = TreeEnsembleOracle.from_sklearn(model)
    bound = oracle.bind(X[80:])
    scales = [bound.column_hypothesis(j).tree_scale for j in range(len(oracle.trees))]
    np.testing.assert_array_equal(bound.columns() * scales, _sk_tree_outputs(model, X[80:]))


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_histogram_gradient_boosting_trees_add_up_to_its_raw_prediction(kind):
    X, y = make_regression(150, 4, random_state=1)
    X[::7, 1] = np.nan  # its splits learn where NaN goes
    if kind == "regressor":
        model = HistGradientBoostingRegressor(max_iter=6, max_leaf_nodes=5, random_state=0)
    else:
        model = HistGradientBoostingClassifier(max_iter=6, max_leaf_nodes=5, random_state=0)
        y = y > 0
    model.fit(X[:100], y[:100])
    oracle = TreeEnsembleOracle.from_sklearn(model)
    assert oracle.capabilities.allow_nan and len(oracle.trees) == 6
    bound = oracle.bind(X[100:])
    raw = np.full(50, model._baseline_prediction[0, 0])
    for j in range(6):
        raw += bound.columns()[:, j] * bound.column_hypothesis(j).tree_scale
    expected = model.predict(X[100:]) if kind == "regressor" else \
        model.decision_function(X[100:])
    np.testing.assert_array_equal(raw, expected)


# -- every booster re-weights the trees ---------------------------------------------------
BOOSTERS = {
    "adaboost": lambda o: CoordinateBoostingClassifier(o, n_estimators=15),
    "logistic-wolfe": lambda o: CoordinateBoostingClassifier(o, loss="logistic", step="wolfe",
                                                            n_estimators=15),
    "maboost": lambda o: MirrorBoostingClassifier(o, n_estimators=15),
    "accelerated": lambda o: AcceleratedMarginClassifier(o, n_estimators=15),
    "lpboost": lambda o: TotallyCorrectiveClassifier(o, method="lpboost"),
    "softboost": lambda o: TotallyCorrectiveClassifier(o, method="softboost", nu=5, tol=0.05),
    "functional": lambda o: FunctionalGradientClassifier(o, n_estimators=15,
                                                         learning_rate=0.5),
}


def _kept(est):
    """``(intercept, [(coef, hypothesis)])`` of a fitted booster's model."""
    model = est.ensemble_
    if isinstance(model, Ensemble):
        return model.intercept, list(zip(model.coef, model.hypotheses, strict=True))
    return model.intercept(), list(zip(model.coef(), model.columns, strict=True))


@pytest.mark.parametrize("name", BOOSTERS)
def test_every_booster_predicts_the_weighted_sum_of_the_kept_trees(data, lgb_model, name):
    X, y, X_test, _ = data
    est = BOOSTERS[name](TreeEnsembleOracle.from_lightgbm(lgb_model)).fit(X, y)
    intercept, kept = _kept(est)
    assert kept and all(isinstance(h, EnsembleTree) for _, h in kept)
    trees = _tree_outputs(lgb_model.booster_, X_test)  # evaluated by LightGBM
    expected = np.full(len(X_test), float(np.ravel(intercept)[0]))
    for c, h in kept:
        expected += c * h.scale * np.ldexp(trees[:, h.j], -h.exponent)
    decision = est._decision(expected) if hasattr(est, "_decision") else expected
    np.testing.assert_allclose(est.decision_function(X_test), decision, rtol=1e-12,
                               atol=1e-12)
    assert est.score(X_test, data[3]) > 0.85


def test_lpboost_thins_the_model_and_its_export_reads_back(data, lgb_model):
    X, y, X_test, _ = data
    est = TotallyCorrectiveClassifier(TreeEnsembleOracle.from_lightgbm(lgb_model),
                                      method="lpboost").fit(X, y)
    _, kept = _kept(est)
    used = [h.j for c, h in kept if c != 0.0]
    assert 0 < len(used) < 25  # fewer trees than the model
    # the library's export is a LightGBM model of the kept trees ...
    exported = to_lightgbm(est)
    raw = exported.predict(X_test, raw_score=True)
    np.testing.assert_allclose(raw, est.decision_function(X_test), rtol=1e-12, atol=1e-12)
    contrib = exported.predict(X_test, pred_contrib=True)  # (TreeSHAP works on it)
    np.testing.assert_allclose(contrib.sum(axis=1), raw, rtol=1e-9, atol=1e-9)
    # ... which reads back as a class whose trees add up to it
    back = TreeEnsembleOracle.from_lightgbm(lightgbm_model_string(est)).bind(X_test)
    total = np.zeros(len(X_test))
    for j in range(back.n_columns):
        total += back.columns()[:, j] * back.column_hypothesis(j).tree_scale
    np.testing.assert_array_equal(total, raw)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scikit_learn_trees_split_at_zero_export_as_they_predict(seed):
    """A scikit-learn tree on a ±1 feature splits at 0.0, which LightGBM cannot tell
    from values within 1e-35 of 0; read back, the tree routes such values as LightGBM
    does, so its export is taken and predicts as the model, tiny values included."""
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(150, 3))
    X = np.column_stack([X, rng.normal(size=150)])
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=150) > 0).astype(int)
    gb = GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=seed).fit(X, y)
    est = CoordinateBoostingClassifier(TreeEnsembleOracle.from_sklearn(gb),
                                       n_estimators=6).fit(X, y)
    X_tiny = X.copy()
    X_tiny[:40, 0], X_tiny[40:80, 1] = 1e-40, -1e-40
    exported = to_lightgbm(est, X)
    for rows in (X, X_tiny):
        np.testing.assert_array_equal(exported.predict(rows, raw_score=True),
                                      est.decision_function(rows))


# -- refusals ----------------------------------------------------------------------------
def test_refusals_name_what_is_wrong(data):
    X, y, _, _ = data
    y3 = np.arange(len(y)) % 3
    multi = lgb.LGBMClassifier(n_estimators=2, n_jobs=1, verbose=-1).fit(X, y3)
    with pytest.raises(ValueError, match="multiclass"):
        TreeEnsembleOracle.from_lightgbm(multi)
    with pytest.raises(ValueError, match="multiclass"):
        TreeEnsembleOracle.from_sklearn(
            GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(X, y3))
    linear = lgb.train({"objective": "regression", "linear_tree": True, "verbose": -1,
                        "num_threads": 1},
                       lgb.Dataset(X[:, :3], y.astype(float)), 2)
    with pytest.raises(ValueError, match="linear leaves"):
        TreeEnsembleOracle.from_lightgbm(linear)
    with pytest.raises(ValueError, match="not LightGBM model text"):
        TreeEnsembleOracle.from_lightgbm("hello")
    with pytest.raises(TypeError, match="lightgbm.Booster"):
        TreeEnsembleOracle.from_lightgbm(3)
    with pytest.raises(TypeError, match="GradientBoosting"):
        TreeEnsembleOracle.from_sklearn(lgb.LGBMClassifier())
    with pytest.raises(ValueError, match="not fitted"):
        TreeEnsembleOracle.from_lightgbm(lgb.LGBMClassifier())
    with pytest.raises(ValueError, match="trees is empty"):
        TreeEnsembleOracle(trees=[]).bind(X)
    with pytest.raises(TypeError, match="sequence of TreeStructure"):
        TreeEnsembleOracle(trees=None).bind(X)
    oracle = TreeEnsembleOracle.from_sklearn(
        RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y))
    with pytest.raises(ValueError, match="trained on 30"):
        oracle.bind(X[:, :5])
    with pytest.raises(ValueError, match="NaN"):
        oracle.bind(np.where(X > 1000, np.nan, X))

