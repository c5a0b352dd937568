"""A fitted ensemble of trees leaves the library as a LightGBM model (issue 22):
``to_lightgbm().predict(X, raw_score=True)`` is ``decision_function(X)`` for every
tree-type oracle under every booster that grows an ensemble, round by round
(``num_iteration``), with LightGBM's link where it is the booster's; SHAP's
``TreeExplainer`` reads it and its values add up; what is not a tree is refused by name.
"""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.engine.model import Refit
from oracleboost.export.lightgbm import ExportWarning, lightgbm_model_string
from oracleboost.oracles import (
    HistTreeOracle,
    LightGBMOracle,
    LinearOracle,
    MLPOracle,
    OracleCapabilityError,
    StumpOracle,
    TreeOracle,
)
from oracleboost.oracles.trees import TreeStructure, float32_split

ORACLES = {
    "stumps": lambda: StumpOracle(),
    "sklearn_trees": lambda: TreeOracle(max_depth=3),
    "lightgbm_trees": lambda: LightGBMOracle(num_leaves=7, min_data_in_leaf=5),
    "hist_trees": lambda: HistTreeOracle(num_leaves=7, min_data_in_leaf=5),
}


def _binary(seed):
    return make_classification(600, 8, n_informative=4, random_state=seed)


def _multiclass(seed):
    return make_classification(600, 8, n_informative=5, n_classes=3, random_state=seed)


def _regression(seed):
    X, y = make_regression(600, 8, noise=10.0, random_state=seed)
    return X, y


BOOSTERS = {
    # name: (make(oracle), data, exact): exact when the decision is the model's own sum
    "adaboost": (lambda o: CoordinateBoostingClassifier(o, step="adaboost", n_estimators=25),
                 _binary, True),
    "logistic_wolfe": (lambda o: CoordinateBoostingClassifier(
        o, loss="logistic", step="wolfe", n_estimators=15), _binary, True),
    "maboost": (lambda o: MirrorBoostingClassifier(o, n_estimators=20), _binary, True),
    "maboost_multiclass": (lambda o: MirrorBoostingClassifier(o, n_estimators=20),
                           _multiclass, True),
    "functional_regressor": (lambda o: FunctionalGradientRegressor(o, n_estimators=20),
                             _regression, True),
    "functional_residual": (lambda o: FunctionalGradientRegressor(
        o, projection="repeated", n_estimators=20), _regression, True),
    "functional_logistic": (lambda o: FunctionalGradientClassifier(
        o, loss="logistic", n_estimators=20), _binary, True),
    "functional_softmax": (lambda o: FunctionalGradientClassifier(o, n_estimators=15),
                           _multiclass, True),
    # two classes, vector scores: decision_function is f_1 − f_0, each leaf the difference
    "functional_softmax_binary": (lambda o: FunctionalGradientClassifier(
        o, loss="softmax", n_estimators=20), _binary, False),
}


def _decision(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


def _staged(model, X):
    return model.staged_decision_function(X) if hasattr(model, "decision_function") \
        else model.staged_predict(X)


def _export(model, X=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        return model.to_lightgbm(X)


def _assert_close(exported, ours, exact):
    """Bit for bit where the decision is the model's sum; else within the rounding of
    a difference of two sums of terms: 4 ulps of the largest partial sum."""
    if exact:
        np.testing.assert_array_equal(exported, ours)
    else:
        assert np.max(np.abs(exported - ours)) <= 4 * np.finfo(float).eps * (
            1 + np.max(np.abs(ours)))


@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("booster", BOOSTERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_export_predicts_the_decision_function(booster, oracle, seed):
    make, data, exact = BOOSTERS[booster]
    X, y = data(seed)
    try:
        model = make(ORACLES[oracle]()).fit(X, y)
    except OracleCapabilityError as exc:  # e.g. multiclass MABoost needs label-coded stumps
        pytest.skip(str(exc))
    exported = _export(model)
    X_new = np.random.default_rng(seed).normal(size=(300, X.shape[1])) * X.std(axis=0)
    for rows in (X, X_new):
        _assert_close(exported.predict(rows, raw_score=True), _decision(model, rows), exact)
    # round by round: iteration 0 holds the intercept, so num_iteration = k + 1 is round k
    staged = list(_staged(model, X_new))
    assert exported.num_trees() == exported.num_model_per_iteration() * (len(staged) + 1)
    for k in (1, len(staged) // 2, len(staged)):
        _assert_close(exported.predict(X_new, raw_score=True, num_iteration=k + 1),
                      staged[k - 1], exact)


def _with_nan(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """X with NaN in features 0-2: a fifth of the rows of features 1 and 2, and of
    feature 0 half the rows whose y is among its lowest (so that its NaN rows mean
    something)."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[:, 1:3][rng.uniform(size=(len(X), 2)) < 0.2] = np.nan
    X[(y <= np.quantile(y, 0.3)) & (rng.uniform(size=len(X)) < 0.5), 0] = np.nan
    return X


def _missing_types(model) -> set[int]:
    """The LightGBM missing types of the exported model's splits."""
    text = lightgbm_model_string(model, np.zeros((1, model.n_features_in_)))
    types = [int(v) >> 2 & 3 for line in text.splitlines()
             if line.startswith("decision_type=") for v in line[14:].split()]
    return set(types)


@pytest.mark.parametrize("booster", ["adaboost", "logistic_wolfe", "maboost_multiclass",
                                     "functional_regressor", "functional_softmax"])
def test_stumps_with_missing_values_export_bit_for_bit(booster):
    """Stumps fitted on X with NaN (a learned side: missing type NaN, default_left)
    and stumps on features without NaN in training (missing type none: LightGBM reads a
    NaN as 0.0, and so does the stump): the exported model predicts the decision
    function bit for bit on the training rows and on new rows with NaN in every
    feature, round by round.  Over the two seeds both kinds of split are exported."""
    make, data, exact = BOOSTERS[booster]
    types: set[int] = set()
    for seed in (0, 1):
        X, y = data(seed)
        X = _with_nan(X, y, seed)
        model = make(StumpOracle()).fit(X, y)
        types |= _missing_types(model)
        exported = _export(model, X)
        X_new = np.random.default_rng(seed + 7).normal(size=(300, X.shape[1]))
        X_new[np.random.default_rng(seed).uniform(size=X_new.shape) < 0.3] = np.nan
        for rows in (X, X_new):
            _assert_close(exported.predict(rows, raw_score=True), _decision(model, rows),
                          exact)
        staged = list(_staged(model, X_new))
        for k in (1, len(staged) // 2):
            _assert_close(exported.predict(X_new, raw_score=True, num_iteration=k + 1),
                          staged[k - 1], exact)
    assert types == {0, 2}  # learned sides, and NaN read as 0.0


@pytest.mark.parametrize("booster", ["adaboost", "logistic_wolfe", "functional_logistic",
                                     "functional_softmax", "functional_softmax_binary"])
def test_the_objective_is_the_boosters_link(booster):
    """LightGBM's transformed prediction is ``predict_proba`` where the link is one
    LightGBM has (σ(2f), σ(f), softmax)."""
    make, data, exact = BOOSTERS[booster]
    X, y = data(3)
    model = make(StumpOracle()).fit(X, y)
    p = _export(model).predict(X)
    p = np.column_stack([1 - p, p]) if p.ndim == 1 else p
    _assert_close(p, model.predict_proba(X), exact)


def test_a_vote_share_keeps_raw_scores():
    """MABoost's predict_proba is a vote share, not a link LightGBM computes: the model's
    objective is the identity (``regression``), and LightGBM's predict is the raw
    score."""
    X, y = _binary(0)
    model = MirrorBoostingClassifier(StumpOracle(), n_estimators=10).fit(X, y)
    exported = _export(model)
    assert exported.params["objective"] == "regression"
    np.testing.assert_array_equal(exported.predict(X), model.decision_function(X))


@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("data", [_binary, _multiclass])
def test_shap_tree_explainer_adds_up(oracle, data):
    """SHAP's exact TreeSHAP on the exported model: the values plus the expected value
    are the decision (local accuracy); with covers counted on X the expected value is
    the mean decision over X."""
    shap = pytest.importorskip("shap")
    X, y = data(4)
    if oracle == "lightgbm_trees" and data is _multiclass:
        pytest.skip("LightGBMOracle grows no multiclass trees")
    model = FunctionalGradientClassifier(ORACLES[oracle](), n_estimators=12).fit(X, y)
    explainer = shap.TreeExplainer(model.to_lightgbm(X))
    values = np.asarray(explainer.shap_values(X[:40]))
    decision = model.decision_function(X[:40])
    total = values.sum(axis=1) + np.asarray(explainer.expected_value)
    scale = 1 + np.max(np.abs(decision))
    assert np.max(np.abs(total - decision)) <= 1e-12 * scale
    np.testing.assert_allclose(explainer.expected_value,
                               model.decision_function(X).mean(axis=0), rtol=0,
                               atol=1e-12 * scale)


def test_covers_counted_on_X_and_the_warning_without_them():
    X, y = _binary(5)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=10).fit(X, y)
    with pytest.warns(ExportWarning, match="pass X"):
        model.to_lightgbm()
    dump = model.to_lightgbm(X).dump_model()
    for tree in dump["tree_info"][1:]:
        root = tree["tree_structure"]
        assert root["internal_count"] == len(X)
        assert root["left_child"]["leaf_count"] + root["right_child"]["leaf_count"] == len(X)
    # scikit-learn and LightGBM trees carry their training counts: no warning
    for oracle in ("sklearn_trees", "lightgbm_trees"):
        fitted = CoordinateBoostingClassifier(ORACLES[oracle](), n_estimators=5).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ExportWarning)
            fitted.to_lightgbm()


def test_covers_that_leave_a_split_empty_are_warned_of_and_would_give_nan():
    """Covers counted on rows that reach no row of some split: the export warns, and
    the warning is right (LightGBM's TreeSHAP gives NaN); on the training rows no
    warning and no NaN."""
    X, y = _binary(7)
    model = FunctionalGradientClassifier(TreeOracle(max_depth=4), n_estimators=15,
                                         random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExportWarning)
        full = model.to_lightgbm(X)
    assert not np.isnan(full.predict(X[:50], pred_contrib=True)).any()
    few = X[np.random.default_rng(0).choice(len(X), 20, replace=False)]
    with pytest.warns(ExportWarning, match="cover of 0.*NaN.*Predictions are not affected"):
        sparse_covers = model.to_lightgbm(few)
    assert np.isnan(sparse_covers.predict(X[:50], pred_contrib=True)).any()
    np.testing.assert_array_equal(sparse_covers.predict(X, raw_score=True),
                                  model.decision_function(X))


def test_covers_of_a_dataframe_are_checked_as_decision_function_checks_it():
    pd = pytest.importorskip("pandas")
    X, y = _binary(8)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=2), n_estimators=5).fit(frame, y)
    shuffled = frame[frame.columns[::-1]]
    with pytest.raises(ValueError, match="same order"):
        model.decision_function(shuffled)
    with pytest.raises(ValueError, match="same order"):  # not covers of other columns
        model.to_lightgbm(shuffled)
    with pytest.raises(ValueError, match="features"):
        model.to_lightgbm(X[:, :3])
    np.testing.assert_array_equal(model.to_lightgbm(frame).predict(X, raw_score=True),
                                  model.decision_function(frame))


def test_a_totally_corrective_export_iterates_over_hypotheses_not_rounds():
    """As documented: the iterations after the intercept's are the hypotheses at the
    last round's coefficients (each round re-solves them all), not the rounds."""
    X, y = _binary(9)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=5, n_estimators=10).fit(X, y)
    exported = model.to_lightgbm(X)
    ensemble = model.ensemble_
    assert exported.num_trees() == 1 + len(ensemble.hypotheses)
    np.testing.assert_array_equal(exported.predict(X, raw_score=True),
                                  model.decision_function(X))
    f = np.full(len(X), float(np.ravel(ensemble.intercept)[0]))
    for k, (h, coef) in enumerate(zip(ensemble.hypotheses, ensemble.coef, strict=True)):
        f = f + coef * h.predict(X)
        np.testing.assert_allclose(exported.predict(X, raw_score=True, num_iteration=k + 2),
                                   f, rtol=0, atol=1e-12)


def test_the_model_text_round_trips_through_lightgbm(tmp_path):
    """What LightGBM writes of the exported model it reads back to the same model."""
    X, y = _multiclass(6)
    model = FunctionalGradientClassifier(TreeOracle(max_depth=2), n_estimators=8).fit(X, y)
    exported = _export(model)
    exported.save_model(tmp_path / "model.txt")
    again = lgb.Booster(model_file=tmp_path / "model.txt")
    np.testing.assert_array_equal(again.predict(X, raw_score=True), model.decision_function(X))


def test_feature_names_follow_the_fit():
    pd = pytest.importorskip("pandas")
    X, y = _binary(7)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=5).fit(frame, y)
    assert _export(model).feature_name() == list(frame.columns)
    spaced = frame.rename(columns={"f0": "first feature"})
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=5).fit(spaced, y)
    assert _export(model).feature_name()[0] == "first_feature"  # as LightGBM writes it


def test_a_totally_corrective_round_exports_its_coefficients():
    """After a refit the model sums ``intercept + Σ_j c_j h_j`` afresh: so does the
    export (one iteration a hypothesis, then the corrective rounds after it)."""
    X, y = _binary(8)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=12).fit(X, y)
    ens = model.ensemble_
    rng = np.random.default_rng(0)
    ens.refit(Refit(coef=rng.normal(size=len(ens.hypotheses))))
    h = ens.hypotheses[3]
    ens.add(h, 0.25, 1.0)
    np.testing.assert_array_equal(_export(model).predict(X, raw_score=True),
                                  model.decision_function(X))


@pytest.mark.parametrize("make, what", [
    (lambda: CoordinateBoostingClassifier(LinearOracle(), n_estimators=5), "LinearCoordinate"),
    (lambda: FunctionalGradientRegressor(MLPOracle(max_iter=20), n_estimators=2),
     "weak learner MLPRegressor is"),  # the net's own class, not its wrapper's
    (lambda: AcceleratedMarginClassifier(n_estimators=5), "LinearModel"),
])
def test_what_is_not_a_tree_is_refused_by_name(make, what):
    X, y = _binary(9)
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y if not isinstance(model, FunctionalGradientRegressor) else y * 1.0)
    with pytest.raises(ValueError, match=what):
        model.to_lightgbm()


def test_the_ranker_exports_its_scores():
    X, y = _regression(10)
    relevance = np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))
    qid = np.repeat(np.arange(60), 10)
    model = FunctionalGradientRanker(StumpOracle(), n_estimators=10).fit(X, relevance, qid=qid)
    np.testing.assert_array_equal(_export(model).predict(X), model.predict(X))


# -- float32 thresholds ---------------------------------------------------------------
def _around(t: float) -> np.ndarray:
    """Doubles at and next to the float32 rounding boundaries near ``t``."""
    with np.errstate(over="ignore"):
        return _near(t)


def _near(t: float) -> np.ndarray:
    lo = np.float32(t)
    points = []
    for f in (np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))):
        for g in (f, np.nextafter(f, np.float32(np.inf))):
            mid = (float(f) + float(g)) / 2
            points += [mid, np.nextafter(mid, -np.inf), np.nextafter(mid, np.inf), float(f)]
    points += [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)]
    return np.array(points)


def test_float32_split_routes_as_a_float32_comparison():
    rng = np.random.default_rng(11)
    thresholds = np.concatenate([
        rng.normal(size=300) * 10.0 ** rng.integers(-30, 30, size=300),
        [0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 3.4028234663852886e38, -3.4028234663852886e38],
        # midpoints of consecutive float32s, as scikit-learn's thresholds are
        [(float(np.float32(v)) + float(np.nextafter(np.float32(v), np.float32(np.inf)))) / 2
         for v in rng.normal(size=100)],
    ])
    for t in thresholds:
        x = _around(t)
        with np.errstate(over="ignore"):
            want = x.astype(np.float32) <= t
        assert np.array_equal(x <= float32_split(t), want), t


def test_sklearn_trees_split_where_float32_rounding_decides():
    """X of doubles that float32 rounds onto and across a scikit-learn tree's
    thresholds: the export routes them as the tree does."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=400) > 0.1, 1, -1)
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=3), n_estimators=8).fit(X, y)
    # thresholds that float32 rounding decides (not float32 values, nor their midpoints)
    assert any(float32_split(t) != t for h in model.estimators_
               for t in h.estimator.tree_.threshold[h.estimator.tree_.feature >= 0])
    thresholds = [t for h in model.estimators_
                  for t in h.estimator.tree_.threshold[h.estimator.tree_.feature >= 0]]
    near = np.concatenate([_around(t) for t in thresholds])
    X_new = np.repeat(near[:, None], 3, axis=1)
    np.testing.assert_array_equal(_export(model).predict(X_new, raw_score=True),
                                  model.decision_function(X_new))


def test_tree_structure_predicts_as_the_hypothesis():
    """The protocol's promise: a hypothesis' tree has its predict's leaves and routing."""
    for name, oracle in ORACLES.items():
        X, y = (_binary if name == "lightgbm_trees" else _multiclass)(13)
        model = FunctionalGradientClassifier(oracle(), n_estimators=6).fit(X, y)
        for h in model.estimators_:
            tree = h.tree_structure()
            assert isinstance(tree, TreeStructure)
            np.testing.assert_array_equal(tree.predict(X), h.predict(X))


def test_the_model_string_is_text_lightgbm_reads():
    X, y = _binary(14)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        text = lightgbm_model_string(model)
    assert text.startswith("tree\nversion=v4\n") and "end of trees" in text
    assert lgb.Booster(model_str=text).num_trees() == 4


def test_splits_that_change_nothing_are_not_exported():
    """A scikit-learn classification tree splits where the impurity falls even if both
    sides predict the same class: the export drops such splits (the same function)."""
    X, y = _binary(15)
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=4), n_estimators=6).fit(X, y)
    trees = [h.tree_structure() for h in model.estimators_]
    pruned = [t.pruned() for t in trees]
    assert sum(p.n_leaves for p in pruned) < sum(t.n_leaves for t in trees)
    for t, p in zip(trees, pruned, strict=True):
        np.testing.assert_array_equal(p.predict(X), t.predict(X))
        counts = np.bincount(t.apply(X), minlength=t.n_leaves)
        assert np.bincount(p.apply(X), minlength=p.n_leaves).sum() == counts.sum()
    np.testing.assert_array_equal(_export(model).predict(X, raw_score=True),
                                  model.decision_function(X))
