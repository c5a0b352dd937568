"""Categorical columns of a pandas DataFrame with LightGBMOracle (issue 22).

An oracle that declares ``Capabilities.categorical`` is bound with
``categorical_features`` (the columns holding category codes); a booster encodes a
DataFrame's ``category`` columns to codes at fit (``categories_``) and maps new rows
through the stored categories (an unseen category is missing).  LightGBM's trees then
split by sets of categories: the training outputs are ``LightGBMTree.predict`` on the
codes bit for bit, and the first tree is ``lightgbm.train``'s with
``categorical_feature``.  Every other oracle reads a categorical column as before.
"""

from __future__ import annotations

import functools
import pickle

import lightgbm
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from test_lightgbm_missing import _field, _leaf_outputs, _pred_leaf

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import (
    CachedOracle,
    LightGBMOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.oracles import _tree_kernels as kernels
from oracleboost.oracles import lightgbm as lgb_oracle
from oracleboost.oracles.approximate import ApproximateOracle
from oracleboost.oracles.base import Capabilities, Oracle
from oracleboost.oracles.lightgbm import _parse_tree

SEEDS = [0, 1, 2]
COLOURS = np.array(["red", "green", "blue", "black", "white", "grey", "rare"])
SHAPES = np.array(["circle", "square", "star", "hexagon", "odd"])


def _frame(seed: int, n: int = 1200):
    """A DataFrame with two string categorical columns (a rare category each, missing
    values) between numeric columns, and a target that depends on sets of categories."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS, n, p=[0.2, 0.2, 0.15, 0.15, 0.14, 0.14, 0.02]).astype(object)
    colour[rng.uniform(size=n) < 0.08] = None
    shape = rng.choice(SHAPES, n, p=[0.3, 0.3, 0.2, 0.18, 0.02]).astype(object)
    shape[rng.uniform(size=n) < 0.05] = None
    x = rng.normal(size=n)
    frame = pd.DataFrame({
        "x": x,
        "colour": pd.Categorical(colour),
        "z": rng.normal(size=n),
        "shape": pd.Categorical(shape),
    })
    y = (np.where(np.isin(colour, ["red", "black", "grey"]), 2.0, 0.0)
         + np.where(np.isin(shape, ["star", "circle"]), -1.0, 0.5)
         + np.where(pd.isna(colour), 1.0, 0.0) + 0.5 * x + 0.3 * rng.normal(size=n))
    return frame, y, rng


def _codes(frame: pd.DataFrame, categories: dict[int, np.ndarray]) -> np.ndarray:
    """The frame as the fit's codes, computed independently of the library: each value's
    position among the stored categories, NaN where missing or unseen."""
    out = np.empty(frame.shape)
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        if j in categories:
            index = {v: i for i, v in enumerate(categories[j].tolist())}
            out[:, j] = [index.get(v, np.nan) if not pd.isna(v) else np.nan
                         for v in column.astype(object)]
        else:
            out[:, j] = column.to_numpy(dtype=np.float64)
    return out


def _oracle():
    return LightGBMOracle(num_leaves=15, min_data_in_leaf=10)


@pytest.fixture
def record_queries(monkeypatch):
    """The targets every LightGBM oracle is asked for, in order."""
    seen: list[np.ndarray] = []
    answer = lgb_oracle._BoundLightGBM._answer

    def recording(self, target, sample_weight):
        seen.append(np.array(target, copy=True))
        return answer(self, target, sample_weight)

    monkeypatch.setattr(lgb_oracle._BoundLightGBM, "_answer", recording)
    return seen


# -- the oracle: categorical splits, training outputs = predict ---------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_bound_oracle_splits_on_categories_and_outputs_its_predictions(seed):
    frame, y, rng = _frame(seed)
    categories = {1: np.asarray(frame["colour"].cat.categories),
                  3: np.asarray(frame["shape"].cat.categories)}
    X = _codes(frame, categories)
    b = _oracle().bind(X, categorical_features=(1, 3))
    w = rng.uniform(0.0, 2.0, size=len(y))
    for h in (b.project(y), b.project(y, w), b.correlate(y - y.mean())):
        tree = _parse_tree(h.model_str)
        assert tree.categorical and int(_field(h.model_str, "num_cat")) > 0
        np.testing.assert_array_equal(h.predict(X), h.train_output)  # bit for bit
        leaf = _pred_leaf(h.model_str, X)
        np.testing.assert_array_equal(h.train_output,
                                      _leaf_outputs(h.model_str, h.n_leaves)[leaf])


def test_bind_refuses_what_is_no_code():
    frame, y, _ = _frame(0, n=200)
    X = _codes(frame, {j: np.asarray(frame.iloc[:, j].cat.categories) for j in (1, 3)})
    for value in (-1.0, 0.5, 2.0**31):  # negative, a fraction, beyond LightGBM's int
        Xb = X.copy()
        Xb[3, 1] = value
        with pytest.raises(ValueError, match=r"X's column 1 is in categorical_features"):
            _oracle().bind(Xb, categorical_features=(1,))
    with pytest.raises(ValueError, match=r"sorted distinct column indices in \[0, 4\)"):
        _oracle().bind(X, categorical_features=(4,))
    with pytest.raises(ValueError, match="name the categorical columns one way"):
        LightGBMOracle(params={"categorical_feature": [1]}).bind(X, categorical_features=(1,))


# -- a booster's first tree is lightgbm.train's ------------------------------------------

BOOSTERS = {
    "regressor": lambda: FunctionalGradientRegressor(_oracle(), n_estimators=3,
                                                     learning_rate=1.0),
    "coordinate": lambda: CoordinateBoostingClassifier(_oracle(), n_estimators=3),
}


def _labels(name: str, y: np.ndarray) -> np.ndarray:
    return y if name == "regressor" else np.where(y > np.median(y), "high", "low")


@pytest.mark.parametrize("name", list(BOOSTERS))
@pytest.mark.parametrize("seed", SEEDS)
def test_first_round_is_lightgbm_trains_tree(name, seed, record_queries):
    """The first tree is ``lightgbm.train``'s first tree on the same codes with
    ``categorical_feature``, the oracle's parameters and the oracle's first query as
    the oracle hands it to LightGBM (centred, in float32): the same splits, category
    sets, NaN directions, leaf counts and leaves."""
    frame, y, _ = _frame(seed)
    model = BOOSTERS[name]().fit(frame, _labels(name, y))
    assert sorted(model.categories_) == [1, 3]
    np.testing.assert_array_equal(model.categories_[1], np.sort(COLOURS))
    np.testing.assert_array_equal(model.categories_[3], np.sort(SHAPES))
    X = _codes(frame, model.categories_)
    assert np.isnan(X[:, 1]).any() and np.isnan(X[:, 3]).any()
    h = model.estimators_[0]
    label = np.empty(len(y), dtype=np.float32)
    kernels.centred_target(record_queries[0], label)  # what the oracle writes as labels
    params = {**_oracle().lightgbm_params(), "objective": "regression", "learning_rate": 1.0}
    ref = lightgbm.train(params, lightgbm.Dataset(X, label=label, categorical_feature=[1, 3]),
                         num_boost_round=1)
    ref_str = ref.model_to_string()
    assert int(_field(ref_str, "num_cat")) > 0
    for key in ("num_leaves", "num_cat", "split_feature", "threshold", "decision_type",
                "left_child", "right_child", "leaf_count", "internal_count",
                "cat_boundaries", "cat_threshold"):
        assert _field(h.model_str, key) == _field(ref_str, key), key
    leaf = _pred_leaf(h.model_str, X)
    np.testing.assert_array_equal(ref.predict(X, pred_leaf=True).reshape(-1), leaf)
    target = record_queries[0]
    ours = _leaf_outputs(h.model_str, h.n_leaves)
    for j in range(h.n_leaves):  # the exact means of the query in each leaf
        np.testing.assert_allclose(ours[j], np.mean(target[leaf == j]), rtol=1e-12, atol=0)


# -- predicting: the stored categories ---------------------------------------------------------

def _fitted(name: str, seed: int):
    """The 6-round fit of booster ``name`` on ``_frame(seed)``, shared by the tests that
    only read it, with that frame and a fresh generator in the state ``_frame`` leaves."""
    frame, y, rng = _frame(seed)
    return _fit_once(name, seed), frame, y, rng


@functools.cache
def _fit_once(name: str, seed: int):
    frame, y, _ = _frame(seed)
    return BOOSTERS[name]().set_params(n_estimators=6).fit(frame, _labels(name, y))


def _decision(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)


@pytest.mark.parametrize("name", list(BOOSTERS))
@pytest.mark.parametrize("seed", SEEDS)
def test_predictions_read_categories_by_value(name, seed):
    """Rows whose categories are listed in another order, or include one the fit never
    saw (missing, as LightGBM reads it), predict as the fit's codes of their values."""
    model, frame, _, rng = _fitted(name, seed)
    new, _, _ = _frame(seed + 10, n=400)
    colour = np.array(new["colour"].astype(object), dtype=object)
    colour[::9] = "ultraviolet"  # never seen at fit
    new["colour"] = pd.Categorical(colour, categories=rng.permutation(
        np.append(COLOURS, "ultraviolet")))
    new["shape"] = new["shape"].cat.reorder_categories(SHAPES[::-1].tolist())
    codes = _codes(new, model.categories_)
    assert np.isnan(codes[::9, 1]).all()
    raw = _decision(model, new)
    np.testing.assert_array_equal(raw, _decision(model, codes))  # a NumPy X holds codes
    h = model.estimators_
    expected = model.intercept_ + sum(c * e.predict(codes) for c, e in zip(model.coef_, h,
                                                                           strict=True))
    np.testing.assert_allclose(raw, expected, rtol=1e-12, atol=1e-12)
    *_, last = (model.staged_decision_function(new) if hasattr(model, "decision_function")
                else model.staged_predict(new))
    np.testing.assert_array_equal(last, raw)
    # the training frame itself: the running training scores
    np.testing.assert_array_equal(_decision(model, frame), _decision(
        model, _codes(frame, model.categories_)))


def test_eval_sets_map_their_categories():
    frame, y, _ = _frame(4)
    train, held = frame.iloc[:900], frame.iloc[900:].copy()
    held["colour"] = held["colour"].cat.reorder_categories(COLOURS[::-1].tolist())
    model = FunctionalGradientRegressor(_oracle(), n_estimators=4).fit(
        train, y[:900], eval_set=[(held, y[900:])])
    staged = [np.mean(0.5 * (p - y[900:]) ** 2) for p in model.staged_predict(held)]
    np.testing.assert_allclose(model.history_["val_loss_0"], staged, rtol=1e-12)
    codes = _codes(held, model.categories_)
    again = FunctionalGradientRegressor(_oracle(), n_estimators=4).fit(
        train, y[:900], eval_set=[(codes, y[900:])])
    np.testing.assert_array_equal(again.history_["val_loss_0"], model.history_["val_loss_0"])


def test_early_stopping_holds_out_coded_rows():
    frame, y, _ = _frame(5)
    model = FunctionalGradientRegressor(_oracle(), n_estimators=8, n_iter_no_change=2,
                                        random_state=0).fit(frame, y)
    assert np.isfinite(model.history_["heldout_loss"]).all()
    assert sorted(model.categories_) == [1, 3]


def test_a_column_no_longer_categorical_is_named():
    model, frame, _, _ = _fitted("regressor", 0)
    plain = frame.astype({"colour": object})
    before = model.predict(frame)
    with pytest.raises(ValueError, match=r"^X's column 'colour' \(position 1\) was "
                       r"categorical at fit, with categories \['black', "):
        model.predict(plain)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: X: X's column 'shape'"):
        clone(model).fit(frame, _frame(0)[1], eval_set=[(frame.astype({"shape": str}),
                                                         _frame(0)[1])])
    np.testing.assert_array_equal(model.predict(frame), before)


def test_warm_start_needs_the_same_categories():
    frame, y, _ = _frame(6)
    longer = FunctionalGradientRegressor(_oracle(), n_estimators=6).fit(frame, y)
    warm = FunctionalGradientRegressor(_oracle(), n_estimators=3, warm_start=True).fit(frame, y)
    warm.set_params(n_estimators=6).fit(frame, y)
    np.testing.assert_array_equal(warm.predict(frame), longer.predict(frame))
    other = frame.copy()
    other["colour"] = other["colour"].cat.rename_categories(
        {"red": "crimson"})  # the same codes, another meaning
    state = dict(vars(warm))
    with pytest.raises(ValueError, match=r"categories differ .* \(categories_\)"):
        warm.set_params(n_estimators=9).fit(other, y)
    assert vars(warm).keys() == state.keys() and warm.n_estimators_ == 6


# -- wrappers pass the capability and the indices through -----------------------------------

class _CategoricalFiniteClass(Oracle):
    """A finite class declaring that it takes categories (only its capabilities read)."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlation_vector=True, categorical=True)

    def bind(self, X, *, categorical_features=None):  # pragma: no cover - not bound here
        raise NotImplementedError


def test_capabilities():
    assert LightGBMOracle().capabilities.categorical
    assert CachedOracle(LightGBMOracle(), None).capabilities.categorical
    assert ApproximateOracle(_CategoricalFiniteClass()).capabilities.categorical
    for oracle in (StumpOracle(), TreeOracle(), CachedOracle(StumpOracle(), None)):
        assert not oracle.capabilities.categorical
    assert Capabilities().categorical is False


def test_cached_oracle_keys_on_the_categorical_columns(tmp_path):
    frame, y, _ = _frame(7, n=600)
    plain = FunctionalGradientRegressor(_oracle(), n_estimators=4).fit(frame, y)
    cached = CachedOracle(_oracle(), str(tmp_path))
    first = FunctionalGradientRegressor(cached, n_estimators=4).fit(frame, y)
    np.testing.assert_array_equal(first.predict(frame), plain.predict(frame))
    X = _codes(frame, plain.categories_)
    as_codes = cached.bind(X, categorical_features=(1, 3)).project(y)
    as_numbers = cached.bind(X).project(y)  # the same values read as numbers: another key
    assert _parse_tree(as_codes.model_str).categorical
    assert not _parse_tree(as_numbers.model_str).categorical
    assert as_codes.model_str == _oracle().bind(X, categorical_features=(1, 3)).project(y).model_str
    with pytest.raises(TypeError, match="does not take categorical features"):
        CachedOracle(StumpOracle(), None).bind(X, categorical_features=(1,))


# -- other oracles: today's behaviour ---------------------------------------------------------

OTHERS = {
    "stumps": lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=3),
    # a seed: scikit-learn's trees break ties between equal splits at random
    "default": lambda: FunctionalGradientRegressor(n_estimators=3, random_state=0),
    "sklearn_trees": lambda: FunctionalGradientRegressor(TreeOracle(), n_estimators=3,
                                                         random_state=0),
    "cached_stumps": lambda: MirrorBoostingClassifier(CachedOracle(StumpOracle(), None),
                                                      n_estimators=3),
}


@pytest.mark.parametrize("name", list(OTHERS))
def test_other_oracles_refuse_string_categories_as_today(name):
    frame, y, _ = _frame(8, n=300)
    booster = OTHERS[name]()
    labels = y if "Regressor" in type(booster).__name__ else y > np.median(y)
    before = dict(vars(booster))
    with pytest.raises(ValueError, match=r"^X must be numeric for \w+; columns 'colour' "
                       r"\(categorical with categories that are not numbers: encode it "
                       r"first, e\.g\. with OrdinalEncoder or OneHotEncoder\), 'shape'"):
        booster.fit(frame, labels)
    assert vars(booster) == before  # the failed fit left it as it was


@pytest.mark.parametrize("name", list(OTHERS))
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_other_oracles_read_numeric_categories_as_values(name, seed):
    frame, y, rng = _frame(seed, n=300)
    numeric = frame.drop(columns=["colour", "shape"])
    numeric["level"] = pd.Categorical(rng.integers(-2, 5, len(y)) * 1.5)
    plain = numeric.astype({"level": float})
    labels = y if "Regressor" in type(OTHERS[name]()).__name__ else y > np.median(y)
    a, b = OTHERS[name]().fit(numeric, labels), OTHERS[name]().fit(plain, labels)
    assert a.categories_ == {} and b.categories_ == {}
    np.testing.assert_array_equal(_decision(a, numeric), _decision(b, plain))


def test_lightgbm_reads_numeric_categories_as_categories():
    """With an oracle that takes categories a numeric category column is categorical
    too (as LightGBM's own pandas support reads it): its categories are stored."""
    frame, y, rng = _frame(9, n=600)
    frame["level"] = pd.Categorical(rng.integers(-2, 5, len(y)) * 1.5)
    model = FunctionalGradientRegressor(_oracle(), n_estimators=3).fit(frame, y)
    np.testing.assert_array_equal(model.categories_[4], np.arange(-2, 5) * 1.5)
    assert sorted(model.categories_) == [1, 3, 4]


def test_numpy_X_has_no_categorical_columns():
    frame, y, _ = _frame(10, n=400)
    X = np.nan_to_num(np.column_stack([frame["x"], frame["z"]]))
    model = FunctionalGradientRegressor(_oracle(), n_estimators=3).fit(X, y)
    assert model.categories_ == {}
    assert not any(_parse_tree(h.model_str).categorical for h in model.estimators_)


# -- persistence (the export: tests/test_export_categorical.py) ---------------------
def _skops_io():
    """``skops.io``, or a skip: the test extra has skops, but an index without it (an
    offline machine's) installs the smaller ``test-core`` extra instead."""
    return pytest.importorskip("skops.io", reason="skops is not installed (the test extra)")


def _round_trips(model):
    sio = _skops_io()
    data = sio.dumps(model)
    untrusted = sio.get_untrusted_types(data=data)
    assert all(t.startswith("oracleboost.") for t in untrusted), untrusted
    yield sio.loads(data, trusted=untrusted)
    yield pickle.loads(pickle.dumps(model))
    yield from_json(to_json(model))


@pytest.mark.parametrize("name", list(BOOSTERS))
@pytest.mark.parametrize("seed", SEEDS)
def test_round_trips_keep_the_categories(name, seed):
    model, frame, _, _ = _fitted(name, seed)
    new, _, _ = _frame(seed + 20, n=300)
    new["colour"] = new["colour"].cat.reorder_categories(COLOURS[::-1].tolist())
    for loaded in _round_trips(model):
        assert loaded.categories_.keys() == model.categories_.keys()
        for j, values in model.categories_.items():
            np.testing.assert_array_equal(loaded.categories_[j], values)
        for rows in (frame, new):
            np.testing.assert_array_equal(_decision(loaded, rows), _decision(model, rows))

