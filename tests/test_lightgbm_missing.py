"""Missing values (NaN in X) with LightGBMOracle (issue 22).

A booster takes NaN in X exactly when its oracle declares it
(``Capabilities.allow_nan``; its scikit-learn tag ``input_tags.allow_nan`` says the
same); LightGBM's trees then route a NaN as LightGBM's ``NumericalDecision`` does,
in the leaf kernel that computes the training outputs, in ``LightGBMTree.predict`` and
in the exported model.  Every other oracle keeps refusing NaN, naming X.
"""

from __future__ import annotations

import lightgbm
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import (
    CachedOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.oracles import _tree_kernels as kernels
from oracleboost.oracles.approximate import ApproximateOracle
from oracleboost.oracles.base import Capabilities, Oracle
from oracleboost.oracles.lightgbm import (
    _feature_major,
    _leaf_values,
    _nan_features,
    _parse_tree,
    _tree_block,
    _tree_leaves,
)

SEEDS = [0, 1, 2]
MISSING_PARAMS = [{}, {"zero_as_missing": True}, {"use_missing": False}]


def _data(seed: int, n: int = 1500, d: int = 5):
    """Features with NaN (20% of features 0-2, all of row block 0::50), zeros, a
    feature without NaN (3) and a target that depends on where the NaN are."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.uniform(size=X.shape) < 0.1] = 0.0
    X[:, :3][rng.uniform(size=(n, 3)) < 0.2] = np.nan
    X[::50, :3] = np.nan  # rows missing in every feature that has NaN
    missing = np.isnan(X)
    t = (np.where(missing[:, 0], 1.5, np.sin(2 * np.nan_to_num(X[:, 0])))
         + np.where(missing[:, 1], -1.0, X[:, 1]) * (X[:, 3] > 0)
         + 0.3 * rng.normal(size=n))
    return X, t, rng


def _pred_leaf(model_str: str, X: np.ndarray) -> np.ndarray:
    booster = lightgbm.Booster(model_str=model_str)
    return booster.predict(X, pred_leaf=True).reshape(len(X)).astype(np.intp)


def _leaf_outputs(model_str: str, n_leaves: int) -> np.ndarray:
    booster = lightgbm.Booster(model_str=model_str)
    return np.array([booster.get_leaf_output(0, j) for j in range(n_leaves)])


def _field(model_str: str, key: str) -> str:
    block = _tree_block(model_str)
    start = block.index(f"\n{key}=") + len(key) + 2
    return block[start: block.index("\n", start)]


def _missing_types(model_str: str) -> np.ndarray:
    return (np.array(_field(model_str, "decision_type").split(), dtype=int) >> 2) & 3


def _with_nan_rows(model_str: str, X: np.ndarray, rng) -> np.ndarray:
    """Rows whose features sit on a threshold of the tree, one ulp either side, at 0, or
    are NaN: every rule of NumericalDecision at once."""
    t = _parse_tree(model_str).threshold
    values = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf),
                             [0.0, -0.0, 1e-36, np.nan, np.nan, np.nan]])
    return rng.choice(values, size=(2000, X.shape[1]))


# -- the leaf kernel routes NaN as LightGBM does -------------------------------------------

@pytest.mark.parametrize("params", MISSING_PARAMS)
@pytest.mark.parametrize("seed", SEEDS)
def test_training_outputs_route_nan_as_lightgbm(params, seed):
    """The kernel's leaves are those of LightGBM's ``pred_leaf`` on X with NaN (and on
    rows made of thresholds, their neighbours, zeros and NaN), so the training outputs
    equal ``LightGBMTree.predict`` on the training X bit for bit, NaN rows included."""
    X, t, rng = _data(seed)
    b = LightGBMOracle(num_leaves=31, min_data_in_leaf=5, params=params).bind(X)
    w = rng.uniform(0.0, 2.0, size=len(X))
    nan_rules = 0
    for h in (b.project(t), b.project(t, w), b.correlate(np.cos(3 * np.nan_to_num(X[:, 1])))):
        assert h.n_leaves > 8
        tree = _parse_tree(h.model_str)
        types = _missing_types(h.model_str)
        if not params:  # NaN is the missing value of the features that hold NaN
            assert (types[np.isin(tree.feature, [0, 1, 2])] == 2).all()
        # a node of a feature with NaN that sends a NaN left, where x <= t cannot
        nan_rules += int(np.sum(tree.nan_left & np.isin(tree.feature, [0, 1, 2])))
        leaf = _pred_leaf(h.model_str, X)
        np.testing.assert_array_equal(_tree_leaves(tree, _feature_major(X)), leaf)
        np.testing.assert_array_equal(h.train_output, _leaf_outputs(h.model_str, h.n_leaves)[leaf])
        np.testing.assert_array_equal(h.predict(X), h.train_output)
        # the tree as exported (TreeStructure, LightGBM's rules) routes them the same
        np.testing.assert_array_equal(h.tree_structure().apply(X), leaf)
        X_edge = _with_nan_rows(h.model_str, X, rng)
        edge_leaf = _pred_leaf(h.model_str, X_edge)
        np.testing.assert_array_equal(_tree_leaves(tree, _feature_major(X_edge)), edge_leaf)
        np.testing.assert_array_equal(h.tree_structure().apply(X_edge), edge_leaf)
    assert nan_rules > 0  # the case the kernel must reverse occurred


@pytest.mark.parametrize("seed", SEEDS)
def test_nan_leaves_do_not_depend_on_threads(seed):
    """Blocks of rows partitioned on threads give the leaves and sums of one block."""
    X, t, rng = _data(seed)
    h = LightGBMOracle(min_data_in_leaf=5).bind(X).project(t)
    tree, XT = _parse_tree(h.model_str), _feature_major(X)
    w = rng.uniform(0.5, 1.5, size=len(X))
    rows = np.empty((2, len(X)), dtype=np.int32)
    one = _leaf_values(tree, XT, t, w, 1, rows, _nan_features(XT))
    three = _leaf_values(tree, XT, t, w, 3, rows, _nan_features(XT))
    for a, b in zip(one, three, strict=True):
        np.testing.assert_array_equal(a, b)


# -- a fit with NaN: LightGBM's own first tree ----------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_first_round_is_lightgbm_trains_tree(seed):
    """The first tree of a functional regressor on X with NaN is ``lightgbm.train``'s
    first tree on the same X, parameters and the centred target the oracle hands
    LightGBM (the negative gradient y - f_0, centred again, in float32): the same
    splits, NaN directions and leaves; its leaf values are the exact means of y - f_0,
    LightGBM's the means of the float32 centred labels."""
    X, y, _ = _data(seed)
    oracle = LightGBMOracle(num_leaves=15, min_data_in_leaf=10)
    model = FunctionalGradientRegressor(oracle, n_estimators=1, learning_rate=1.0).fit(X, y)
    h = model.estimators_[0]
    target = y - model.intercept_  # the squared loss' negative gradient at f_0
    label = np.empty(len(y), dtype=np.float32)
    kernels.centred_target(target, label)  # what the oracle writes as LightGBM's labels
    params = {**oracle.lightgbm_params(), "objective": "regression", "learning_rate": 1.0}
    ref = lightgbm.train(params, lightgbm.Dataset(X, label=label), num_boost_round=1)
    ref_str = ref.model_to_string()
    for key in ("num_leaves", "split_feature", "threshold", "decision_type", "left_child",
                "right_child", "leaf_count", "internal_count"):
        assert _field(h.model_str, key) == _field(ref_str, key), key
    assert (_missing_types(ref_str) == 2).any()  # NaN-directed splits
    leaf = _pred_leaf(h.model_str, X)
    np.testing.assert_array_equal(ref.predict(X, pred_leaf=True).reshape(-1), leaf)
    ours = _leaf_outputs(h.model_str, h.n_leaves)
    theirs = _leaf_outputs(ref_str, h.n_leaves)
    t_bar = float(np.sum(target)) / len(target)
    centred = target - t_bar
    for j in range(h.n_leaves):
        rows = leaf == j
        np.testing.assert_allclose(ours[j], np.mean(target[rows]), rtol=1e-12, atol=0)
        # LightGBM's value: the mean of the labels, each target - t_bar rounded to
        # float32 (relative error 2**-24), summed in double over the leaf's rows
        bound = (2.0**-24 + rows.sum() * 2.0**-53) * np.abs(centred[rows]).max()
        assert abs((ours[j] - t_bar) - theirs[j]) <= bound


# -- boosters: fit, predict and export with NaN -------------------------------------------

def _boosters():
    lgb = LightGBMOracle(num_leaves=7, min_data_in_leaf=5)
    return {
        "regressor": (FunctionalGradientRegressor(lgb, n_estimators=6), "y"),
        "classifier": (FunctionalGradientClassifier(lgb, n_estimators=6), "binary"),
        "coordinate": (CoordinateBoostingClassifier(lgb, n_estimators=6), "binary"),
        "mirror": (MirrorBoostingClassifier(lgb, n_estimators=6), "binary"),
        "cached": (FunctionalGradientRegressor(CachedOracle(lgb, None), n_estimators=6), "y"),
    }


def _labels(kind: str, y: np.ndarray) -> np.ndarray:
    if kind == "y":
        return y
    return (y > np.median(y)).astype(int)


def _decision(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)


@pytest.mark.parametrize("name", list(_boosters()))
@pytest.mark.parametrize("seed", SEEDS)
def test_boosters_fit_predict_and_export_with_nan(name, seed):
    booster, kind = _boosters()[name]
    X, y, rng = _data(seed, n=600)
    y = _labels(kind, y)
    model = clone(booster).fit(X, y)
    assert model.__sklearn_tags__().input_tags.allow_nan
    assert np.isnan(X).any()
    # new rows: NaN where training had them, NaN in feature 4 (none in training), all NaN
    X_new, _, _ = _data(seed + 100, n=300)
    X_new[::7, 4] = np.nan
    X_new[::11] = np.nan
    exported = model.to_lightgbm(X)
    for rows in (X, X_new):
        raw = _decision(model, rows)
        assert np.isfinite(raw).all()
        np.testing.assert_array_equal(exported.predict(rows, raw_score=True), raw)
        *_, last = model.staged_decision_function(rows) if hasattr(
            model, "staged_decision_function") else model.staged_predict(rows)
        np.testing.assert_array_equal(last, raw)


@pytest.mark.parametrize("seed", SEEDS)
def test_nan_in_a_feature_without_nan_in_training_is_read_as_zero(seed):
    """LightGBM's rule where a split's feature had no NaN in training (missing type
    None): a NaN is read as 0."""
    X, y, _ = _data(seed, n=600)
    model = FunctionalGradientRegressor(
        LightGBMOracle(num_leaves=7, min_data_in_leaf=5), n_estimators=6).fit(X, y)
    used = {int(f) for h in model.estimators_ for f in h.tree_structure().feature}
    assert 3 in used  # the feature without NaN is split on
    X_new, _, _ = _data(seed + 100, n=300)
    X_nan, X_zero = X_new.copy(), X_new.copy()
    X_nan[:, 3], X_zero[:, 3] = np.nan, 0.0
    np.testing.assert_array_equal(model.predict(X_nan), model.predict(X_zero))
    assert not np.array_equal(model.predict(X_nan), model.predict(X_new))


def test_ranker_and_eval_sets_take_nan():
    X, y, rng = _data(3, n=400)
    qid = np.repeat(np.arange(40), 10)
    rel = np.digitize(y, np.quantile(y, [0.5, 0.8]))
    ranker = FunctionalGradientRanker(LightGBMOracle(num_leaves=7, min_data_in_leaf=5),
                                      n_estimators=4).fit(X, rel, qid=qid)
    assert np.isfinite(ranker.predict(X)).all()
    reg = FunctionalGradientRegressor(LightGBMOracle(num_leaves=7, min_data_in_leaf=5),
                                      n_estimators=4)
    reg.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])])
    # the squared loss ½(f - y)² on the eval set, round by round
    staged = [np.mean(0.5 * (p - y[300:]) ** 2) for p in reg.staged_predict(X[300:])]
    np.testing.assert_allclose(reg.history_["val_loss_0"], staged, rtol=1e-12)


def test_pandas_missing_values_fit_as_nan():
    """A DataFrame with NaN, and with pandas' nullable NA, fits the model of the same
    NumPy array with NaN, bit for bit."""
    X, y, _ = _data(4, n=500)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    nullable = frame.astype("Float64")
    nullable.iloc[:, 0] = nullable.iloc[:, 0].mask(np.isnan(X[:, 0]), pd.NA)
    assert nullable.iloc[:, 0].isna().sum() == np.isnan(X[:, 0]).sum()
    est = FunctionalGradientRegressor(LightGBMOracle(num_leaves=7, min_data_in_leaf=5),
                                      n_estimators=4)
    expected = clone(est).fit(X, y).predict(X)
    for data in (frame, nullable):
        np.testing.assert_array_equal(clone(est).fit(data, y).predict(data), expected)


# -- every other oracle refuses NaN; the tags tell which take it -------------------------------

# StumpOracle (the default of correlate's boosters) takes NaN too: test_stump_missing.
REFUSING = {
    "trees_correlate": lambda: CoordinateBoostingClassifier(TreeOracle(), n_estimators=3),
    "default_project": lambda: FunctionalGradientRegressor(n_estimators=3),
    "sklearn_trees": lambda: FunctionalGradientRegressor(TreeOracle(), n_estimators=3),
    "sklearn": lambda: FunctionalGradientRegressor(SklearnOracle(Ridge()), n_estimators=3),
    "cached_trees": lambda: CoordinateBoostingClassifier(CachedOracle(TreeOracle(), None),
                                                         n_estimators=3),
    "linear": lambda: AcceleratedMarginClassifier(LinearOracle(), n_estimators=3),
    "mirror_trees": lambda: MirrorBoostingClassifier(TreeOracle(), n_estimators=3),
}


@pytest.mark.parametrize("name", list(REFUSING))
def test_other_oracles_refuse_nan_naming_x(name):
    X, y, _ = _data(5, n=200)
    y = (y > np.median(y)).astype(int)
    booster = REFUSING[name]()
    assert booster.__sklearn_tags__().input_tags.allow_nan is False
    before = dict(vars(booster))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        booster.fit(X, y)
    assert vars(booster).keys() == before.keys()  # the failed fit left it as it was
    fitted = booster.fit(np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fitted.predict(X)


def test_infinity_is_refused_even_with_lightgbm():
    X, y, _ = _data(6, n=200)
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        FunctionalGradientRegressor(LightGBMOracle(), n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="X contains inf"):
        CachedOracle(LightGBMOracle(), None).bind(X)


class _NaNFiniteClass(Oracle):
    """A finite class declaring that it takes NaN (only its capabilities are read)."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlation_vector=True, allow_nan=True)

    def bind(self, X):  # pragma: no cover - not bound here
        raise NotImplementedError


def test_wrappers_pass_their_oracles_answer_through():
    assert CachedOracle(LightGBMOracle(), None).capabilities.allow_nan
    assert CachedOracle(StumpOracle(), None).capabilities.allow_nan
    assert not CachedOracle(TreeOracle(), None).capabilities.allow_nan
    assert ApproximateOracle(_NaNFiniteClass()).capabilities.allow_nan
    H = np.sign(np.random.default_rng(0).normal(size=(10, 3)))
    assert not ApproximateOracle(MatrixOracle(H)).capabilities.allow_nan
    assert FunctionalGradientRegressor(CachedOracle(LightGBMOracle(), None)) \
        .__sklearn_tags__().input_tags.allow_nan
    # an oracle that cannot say: no NaN (its fit names what is wrong with it)
    assert not FunctionalGradientRegressor(CachedOracle("stumps", None)) \
        .__sklearn_tags__().input_tags.allow_nan


@pytest.mark.parametrize("seed", SEEDS)
def test_warm_start_and_early_stopping_with_nan(seed):
    """The fit's fingerprint and held-out split take NaN: a warm start continues on the
    same X with NaN as one longer fit does, and early stopping holds rows out of it."""
    X, y, _ = _data(seed, n=500)
    oracle = LightGBMOracle(num_leaves=7, min_data_in_leaf=5)
    longer = FunctionalGradientRegressor(oracle, n_estimators=6).fit(X, y)
    warm = FunctionalGradientRegressor(oracle, n_estimators=3, warm_start=True).fit(X, y)
    warm.set_params(n_estimators=6).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), longer.predict(X))
    stopped = FunctionalGradientRegressor(oracle, n_estimators=6, n_iter_no_change=2,
                                          random_state=seed).fit(X, y)
    assert np.isfinite(stopped.history_["heldout_loss"]).all()
