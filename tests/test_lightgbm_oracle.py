"""LightGBMOracle: one exact weighted least-squares LightGBM tree per query."""

from __future__ import annotations

import pickle

import lightgbm
import numpy as np
import pytest
from sklearn.base import clone

import oracleboost.oracles.lightgbm as lgb_oracle_module
from oracleboost.oracles.base import OracleCapabilityError
from oracleboost.oracles.lightgbm import LightGBMOracle, LightGBMTree, _leaf_means

N, D = 2000, 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    t = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=N) + 0.5
    weights = {
        "uniform": None,
        "spread": 10 ** rng.uniform(-12, 0, size=N),
    }
    return X, t, weights


@pytest.fixture(scope="module")
def bound(data):
    return LightGBMOracle().bind(data[0])


def _leaves(h: LightGBMTree, X: np.ndarray) -> np.ndarray:
    """Leaf index of each row, read from the hypothesis' own model string."""
    booster = lightgbm.Booster(model_str=h.model_str)
    return booster.predict(X, pred_leaf=True).reshape(len(X)).astype(int)


def _leaf_values(h: LightGBMTree) -> np.ndarray:
    booster = lightgbm.Booster(model_str=h.model_str)
    return np.array([booster.get_leaf_output(0, j) for j in range(h.n_leaves)])


def test_module_imports_the_real_lightgbm():
    assert lgb_oracle_module.lgb is lightgbm
    assert hasattr(lgb_oracle_module.lgb, "Booster")


@pytest.mark.parametrize("weighting", ["uniform", "spread"])
def test_leaf_values_are_exact_weighted_means(data, bound, weighting):
    X, t, weights = data
    w = weights[weighting]
    ww = np.ones(N) if w is None else w
    h = bound.project(t, w)
    leaf = _leaves(h, X)
    values = _leaf_values(h)
    assert h.n_leaves == 31 and len(np.unique(leaf)) == 31  # splits were not blocked
    for j in range(h.n_leaves):
        rows = leaf == j
        expected = np.average(t[rows], weights=ww[rows])
        np.testing.assert_allclose(values[j], expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(h.train_output, values[leaf], rtol=1e-15, atol=0)


def test_tiny_weights_do_not_block_splits(data, bound):
    """Only relative weights matter: scaling them by 1e-9 gives the same tree."""
    X, t, weights = data
    w = weights["spread"]
    h = bound.project(t, w)
    h_small = bound.project(t, 1e-9 * w)
    assert h_small.n_leaves == h.n_leaves > 1
    np.testing.assert_array_equal(_leaves(h_small, X), _leaves(h, X))
    np.testing.assert_allclose(h_small.train_output, h.train_output, rtol=1e-12, atol=0)


@pytest.mark.parametrize("weighting", ["uniform", "spread"])
def test_tree_is_weighted_least_squares(data, bound, weighting):
    X, t, weights = data
    w = weights[weighting]
    ww = np.ones(N) if w is None else w
    h = bound.project(t, w)
    sse_tree = np.sum(ww * (t - h.train_output) ** 2)
    sse_const = np.sum(ww * (t - np.average(t, weights=ww)) ** 2)
    assert sse_tree < 0.9 * sse_const
    # moving any leaf value either way increases the weighted squared error
    leaf = _leaves(h, X)
    for j in range(h.n_leaves):
        delta = 1e-6 * max(1.0, abs(h.train_output[leaf == j][0]))
        for sign in (-1, 1):
            moved = h.train_output + sign * delta * (leaf == j)
            assert np.sum(ww * (t - moved) ** 2) > sse_tree
    np.testing.assert_array_equal(h.predict(X), h.train_output)


def test_dataset_is_built_once_per_bind(data, monkeypatch):
    X, t, weights = data
    counts = {"init": 0, "construct": 0}

    class CountingDataset(lightgbm.Dataset):
        def __init__(self, *args, **kwargs):
            counts["init"] += 1
            super().__init__(*args, **kwargs)

        def construct(self):
            if self._handle is None:
                counts["construct"] += 1
            return super().construct()

    monkeypatch.setattr(lightgbm, "Dataset", CountingDataset)
    b = LightGBMOracle(num_leaves=7).bind(X)
    rng = np.random.default_rng(1)
    for _ in range(5):
        b.project(t + rng.normal(size=N), 10 ** rng.uniform(-3, 0, size=N))
    assert counts == {"init": 1, "construct": 1}
    assert b.n_datasets_built == 1
    assert b.n_trees_grown == 5
    # Trees stay in the booster: they are independent (the objective ignores the scores).
    assert b.booster.num_trees() == 5


def test_calls_are_independent_of_earlier_trees(data, bound):
    X, t, weights = data
    first = bound.project(t)
    bound.project(np.cos(X[:, 3]), weights["spread"])
    bound.correlate(-t)
    second = bound.project(t)
    np.testing.assert_array_equal(second.train_output, first.train_output)
    assert second.model_str == first.model_str
    assert second.key == first.key


def test_pickle_is_small_and_round_trips(data, bound):
    X, t, weights = data
    h = bound.project(t, weights["spread"])
    assert h.n_leaves == 31
    fresh = pickle.dumps(h.detach())
    before = h.predict(X)  # builds the lazy booster, which must not be pickled
    payload = pickle.dumps(h.detach())
    assert payload == fresh
    assert len(payload) < 50_000
    h2 = pickle.loads(payload)
    assert h2.train_output is None
    np.testing.assert_array_equal(h2.predict(X), before)
    full = pickle.loads(pickle.dumps(h))
    np.testing.assert_array_equal(full.train_output, h.train_output)
    assert len(pickle.dumps(h)) < 50_000 + 8 * N + 1_000


def test_predict_on_new_data(data, bound):
    X, t, _ = data
    h = bound.project(t)
    X_new = np.random.default_rng(2).normal(size=(50, D))
    out = h.predict(X_new)
    assert out.shape == (50,) and out.dtype == np.float64
    assert np.all(np.isin(out, _leaf_values(h)))
    with pytest.raises(ValueError, match="features"):
        h.predict(X_new[:, :3])


def test_correlate_is_least_squares_fit_of_r(data, bound):
    X, t, _ = data
    r = t - t.mean()
    h = bound.correlate(r)
    np.testing.assert_array_equal(h.train_output, bound.project(r).train_output)
    assert np.dot(r, h.train_output) > 0


@pytest.mark.parametrize("query", ["correlate", "project"])
def test_multiclass_queries_are_refused(data, bound, query):
    X, t, _ = data
    with pytest.raises(OracleCapabilityError, match="LightGBMOracle"):
        getattr(bound, query)(np.column_stack([t, -t]))


def test_capabilities():
    caps = LightGBMOracle().capabilities
    assert caps.correlate and caps.project
    assert not (caps.multiclass_correlate or caps.multiclass_project)
    assert not caps.stochastic and not caps.correlation_vector


def test_constant_target_gives_constant_tree():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 3))
    w = rng.uniform(0.1, 1.0, size=100)
    h = LightGBMOracle().bind(X).project(np.full(100, 2.5), w)
    # rounding noise may still split, but every leaf is refit to the mean (to 1 ulp)
    np.testing.assert_allclose(_leaf_values(h), np.full(h.n_leaves, 2.5), rtol=1e-15, atol=0)
    np.testing.assert_allclose(h.train_output, np.full(100, 2.5), rtol=1e-15, atol=0)


def test_single_leaf_trees_are_weighted_means():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 3))
    b = LightGBMOracle(min_gain_to_split=1e-6).bind(X)
    w = rng.uniform(0.1, 1.0, size=100)
    t_flat = 2.5 + 1e-9 * rng.normal(size=100)  # no split gains 1e-6: one leaf
    h = b.project(t_flat, w)
    assert h.n_leaves == 1
    mean = np.average(t_flat, weights=w)
    np.testing.assert_allclose(h.train_output, np.full(100, mean), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(h.predict(X), h.train_output)
    assert b.n_boosters_built == 2  # LightGBM keeps a first empty tree: fresh booster
    t = X[:, 0] + 0.1 * rng.normal(size=100)
    h2 = b.project(t, w)  # the oracle recovers from the empty tree
    assert h2.n_leaves > 1
    np.testing.assert_array_equal(h2.predict(X), h2.train_output)
    np.testing.assert_array_equal(b.project(t, w).train_output, h2.train_output)
    assert b.booster.num_trees() == 2  # the two trees grown since the fresh booster


def test_no_splittable_feature_gives_weighted_mean_constant():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))  # 30 < 2 * min_data_in_leaf: no split is possible
    t = rng.normal(size=30)
    w = rng.uniform(size=30)
    b = LightGBMOracle().bind(X)
    h = b.project(t, w)
    mean = np.average(t, weights=w)
    np.testing.assert_allclose(h.train_output, np.full(30, mean), rtol=1e-12, atol=0)
    np.testing.assert_allclose(h.predict(X[:3]), np.full(3, mean), rtol=1e-12, atol=0)
    assert pickle.loads(pickle.dumps(h)).predict(X[:1])[0] == h.constant


def test_leaf_with_zero_weight_gets_zero():
    leaf = np.array([0, 0, 1, 1, 2, 2])
    target = np.array([1.0, 3.0, 5.0, 7.0, 9.0, 11.0])
    w = np.array([1.0, 3.0, 0.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(_leaf_means(leaf, target, w, 3), [2.5, 0.0, 10.0])
    # a leaf no training row reaches (possible on LightGBM's bins) also gets 0
    np.testing.assert_array_equal(_leaf_means(leaf, target, w, 4), [2.5, 0.0, 10.0, 0.0])


def test_bind_errors():
    with pytest.raises(ValueError, match="at least 2"):
        LightGBMOracle().bind(np.zeros((1, 3)))
    with pytest.raises(ValueError):
        LightGBMOracle().bind(np.array([[0.0, np.nan], [1.0, 2.0]]))
    X = np.random.default_rng(5).normal(size=(50, 2))
    with pytest.raises(ValueError, match="num_leaves"):
        LightGBMOracle(num_leaves=1).bind(X)
    with pytest.raises(ValueError, match="bagging"):
        LightGBMOracle(params={"subsample": 0.5, "subsample_freq": 1}).bind(X)
    with pytest.raises(ValueError, match="feature_fraction"):
        LightGBMOracle(params={"colsample_bytree": 0.5}).bind(X)
    with pytest.raises(TypeError, match="random_state"):
        LightGBMOracle(random_state=np.random.default_rng(0)).bind(X)


def test_params_merge_last_and_resolve_aliases(data):
    X, t, _ = data
    o = LightGBMOracle(num_leaves=31, random_state=7, params={"max_leaves": 4, "n_jobs": 1})
    p = o.lightgbm_params()
    assert p["num_leaves"] == 4 and p["num_threads"] == 1 and p["seed"] == 7
    assert "max_leaves" not in p
    assert o.bind(X).project(t).n_leaves == 4


def test_sklearn_parameters():
    o = LightGBMOracle(num_leaves=7, params={"max_bin": 63})
    assert o.get_params()["num_leaves"] == 7
    c = clone(o)
    assert c.get_params() == o.get_params() and c is not o
