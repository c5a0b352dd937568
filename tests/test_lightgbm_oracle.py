"""LightGBMOracle: one exact weighted least-squares LightGBM tree per query."""

from __future__ import annotations

import pickle
import subprocess
import sys

import lightgbm
import numba
import numpy as np
import pytest
from sklearn.base import clone

import oracleboost.oracles.lightgbm as lgb_oracle_module
from oracleboost.oracles.base import OracleCapabilityError
from oracleboost.oracles.lightgbm import (
    LightGBMOracle,
    LightGBMTree,
    _feature_major,
    _leaf_means,
    _nan_features,
    _node_rules,
    _parse_tree,
    _thread_setting,
    _tree_leaves,
    _tree_text,
    _with_leaf_values,
)

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
    assert lgb_oracle_module._lgb() is lightgbm
    assert hasattr(lgb_oracle_module._lgb(), "Booster")


def test_the_package_imports_lightgbm_only_when_a_lightgbm_oracle_runs():
    """Importing the boosters and oracles leaves LightGBM unimported (90 ms and 40 MB
    a process that never calls it)."""
    code = ("import sys, oracleboost.boosters, oracleboost.oracles; "
            "print('lightgbm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


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
    assert caps.allow_nan  # LightGBM's missing values


def test_constant_target_gives_constant_tree():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 3))
    w = rng.uniform(0.1, 1.0, size=100)
    h = LightGBMOracle().bind(X).project(np.full(100, 2.5), w)
    # rounding noise may split (or not), but every leaf is refit to the mean (to 1 ulp)
    if h.model_str is None:
        assert h.constant == pytest.approx(2.5, rel=1e-15, abs=0)
    else:
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
    # NaN is a missing value (tests/test_lightgbm_missing.py); inf is refused
    with pytest.raises(ValueError, match="X contains infinity"):
        LightGBMOracle().bind(np.array([[0.0, np.inf], [1.0, 2.0]]))
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


# -- the leaves of the training rows, without Booster.predict ------------------------------

KZ = lgb_oracle_module.kernels.K_ZERO_THRESHOLD  # LightGBM's kZeroThreshold (1e-35f)


def _pred_leaf(model_str: str, X: np.ndarray) -> np.ndarray:
    booster = lightgbm.Booster(model_str=model_str)
    return booster.predict(X, pred_leaf=True).reshape(len(X)).astype(np.intp)


def _walk(model_str: str, X: np.ndarray) -> np.ndarray:
    tree = _parse_tree(model_str)
    assert not tree.categorical
    return _tree_leaves(tree, _feature_major(X))


def _on_thresholds(model_str: str, n_rows: int, d: int, rng) -> np.ndarray:
    """Rows whose every feature sits on a threshold of the tree, one ulp either side of
    one, at zero, or at and around LightGBM's zero threshold."""
    t = _parse_tree(model_str).threshold
    specials = [0.0, -0.0, 1e-36, -1e-36, KZ, -KZ, np.nextafter(KZ, 1), np.nextafter(-KZ, -1)]
    values = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), specials])
    return rng.choice(values, size=(n_rows, d))


def _dataset(kind: str, rng):
    n = 3000
    if kind == "discrete":  # ties everywhere, a constant feature, many zeros
        X = np.column_stack([
            rng.integers(0, 4, n), rng.integers(-3, 3, n) * 0.5, np.full(n, 7.0),
            np.where(rng.uniform(size=n) < 0.6, 0.0, rng.normal(size=n)),
        ]).astype(float)
    else:
        X = rng.normal(size=(n, 5))
        X[rng.uniform(size=X.shape) < 0.2] = 0.0
        X[:, 4] = -1.5  # constant
        X[::7, 1] = 1e-36  # below kZeroThreshold: LightGBM reads it as 0
    t = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 3] == 0) + 0.3 * rng.normal(size=n)
    return X, t


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
@pytest.mark.parametrize(
    "params", [{}, {"zero_as_missing": True}, {"use_missing": False}, {"max_bin": 7}]
)
def test_leaves_are_those_of_pred_leaf(kind, params):
    rng = np.random.default_rng(6)
    X, t = _dataset(kind, rng)
    b = LightGBMOracle(num_leaves=31, min_data_in_leaf=5, params=params).bind(X)
    w = rng.uniform(0.0, 2.0, size=len(X))
    for h in (b.project(t), b.project(t, w), b.correlate(np.cos(3 * X[:, 0]))):
        assert h.n_leaves > 4
        leaf = _pred_leaf(h.model_str, X)
        np.testing.assert_array_equal(_walk(h.model_str, X), leaf)
        np.testing.assert_array_equal(h.train_output, _leaf_values(h)[leaf])
        np.testing.assert_array_equal(h.predict(X), h.train_output)
        X_ties = _on_thresholds(h.model_str, 2000, X.shape[1], rng)
        np.testing.assert_array_equal(_walk(h.model_str, X_ties), _pred_leaf(h.model_str, X_ties))


def test_zero_as_missing_sends_zeros_to_the_default_side():
    rng = np.random.default_rng(7)
    X, t = _dataset("continuous", rng)
    h = LightGBMOracle(min_data_in_leaf=5, params={"zero_as_missing": True}).bind(X).project(t)
    assert _parse_tree(h.model_str).zero_flip.any()  # the case the kernel must reverse
    np.testing.assert_array_equal(_walk(h.model_str, X), _pred_leaf(h.model_str, X))


def test_many_rows_and_threads_give_the_same_leaves(monkeypatch):
    # More rows than LightGBM bins from (bin_construct_sample_cnt = 200,000), and the
    # rows partitioned in blocks on threads.
    rng = np.random.default_rng(8)
    n = 250_000
    X = np.round(rng.normal(size=(n, 3)), 3)  # ties
    t = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    w = rng.uniform(0.5, 1.5, size=n)
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(lgb_oracle_module, "_lightgbm_thread_count", lambda _, k=threads: k)
        b = LightGBMOracle(num_leaves=31).bind(X)
        assert b._n_parts == min(threads, numba.config.NUMBA_NUM_THREADS)
        results.append((b.project(t), b.project(t, w)))
    for single, threaded in zip(*results, strict=True):
        assert threaded.model_str == single.model_str
        np.testing.assert_array_equal(threaded.train_output, single.train_output)
        leaf = _pred_leaf(single.model_str, X)
        np.testing.assert_array_equal(_walk(single.model_str, X), leaf)
        np.testing.assert_array_equal(single.train_output, _leaf_values(single)[leaf])


def test_categorical_splits_fall_back_to_lightgbm_walk():
    rng = np.random.default_rng(9)
    n = 2000
    X = np.column_stack([rng.integers(0, 8, n), rng.normal(size=n)]).astype(float)
    t = np.where(np.isin(X[:, 0], [1, 4, 6]), 2.0, 0.0) + X[:, 1] + 0.1 * rng.normal(size=n)
    with pytest.warns(UserWarning, match="categorical_feature"):
        b = LightGBMOracle(num_leaves=8, params={"categorical_feature": [0]}).bind(X)
    h = b.project(t)
    assert _parse_tree(h.model_str).categorical
    leaf = _pred_leaf(h.model_str, X)
    np.testing.assert_array_equal(h.train_output, _leaf_values(h)[leaf])
    for j in np.unique(leaf):
        np.testing.assert_allclose(_leaf_values(h)[j], t[leaf == j].mean(), rtol=1e-12)


def test_unweighted_queries_grow_the_trees_of_unit_weights(data, bound):
    # Unweighted queries use LightGBM's own squared loss (labels overwritten in place,
    # constant Hessian), weighted ones custom gradients: the same trees and values.
    X, t, _ = data
    for target in (t, np.cos(X[:, 3]), t, -t):
        a = bound.project(target)
        b = bound.project(target, np.ones(N))
        assert a.n_leaves == 31
        assert _tree_text(a.model_str) == _tree_text(b.model_str)
        assert a.key == b.key
        np.testing.assert_array_equal(a.train_output, b.train_output)


def test_kernel_sums_are_those_of_bincount(data):
    # Leaves are summed in row order, as np.bincount sums.
    X, t, weights = data
    b = LightGBMOracle(num_leaves=31).bind(X)
    for w in (None, weights["spread"]):
        h = b.project(t, w)
        leaf = _pred_leaf(h.model_str, X)
        expected = _leaf_means(leaf, t, np.ones(N) if w is None else w, h.n_leaves)
        np.testing.assert_array_equal(_leaf_values(h), expected)


# -- the user's thread count --------------------------------------------------------------


def test_trees_grow_on_the_users_thread_count(data, monkeypatch):
    """LightGBM keeps one process-wide thread count, which every predict without
    num_threads resets to OpenMP's default: later trees of any booster then grow on
    OMP_NUM_THREADS threads whatever their own num_threads.  The oracle grows on its
    own count and leaves LightGBM's as it found it."""
    from threadpoolctl import threadpool_limits

    X, t, weights = data
    lib = lightgbm.basic._LIB
    setting = _thread_setting()
    seen = []
    update = lightgbm.Booster.update

    def recording_update(self, *args, **kwargs):
        seen.append(lib.OMP_NUM_THREADS())  # what LightGBM's parallel loops will use
        return update(self, *args, **kwargs)

    def no_predict(*args, **kwargs):
        raise AssertionError("a query must not call Booster.predict (it resets the threads)")

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with threadpool_limits(1, user_api="openmp"):  # OMP_NUM_THREADS=1 at start-up
        b2 = LightGBMOracle(params={"num_threads": 2}).bind(X)
        b0 = LightGBMOracle().bind(X)  # num_threads 0: OpenMP's default
        h = b2.project(t)
        monkeypatch.setattr(lightgbm.Booster, "update", recording_update)
        for reset in (None, 0, 2, 3):
            if reset is not None:  # someone else's LightGBM call sets the count
                lightgbm.Booster(model_str=h.model_str).predict(X[:5], num_threads=reset)
            found = setting.value
            with monkeypatch.context() as m:
                m.setattr(lightgbm.Booster, "predict", no_predict)
                b2.project(t)
                b2.project(t, weights["spread"])
                b2.correlate(-t)
                b0.project(t, weights["spread"])
            assert setting.value == found
            h.predict(X[:5])  # the hypothesis predicts on its oracle's count ...
            assert setting.value == found  # ... and leaves LightGBM's count alone too
    assert seen == [2, 2, 2, 1] * 4


def test_tree_predict_uses_its_oracles_thread_count(data):
    X, t, _ = data
    h = LightGBMOracle(params={"n_jobs": 2}).bind(X).project(t)
    assert h.num_threads == 2
    assert pickle.loads(pickle.dumps(h)).num_threads == 2
    old = pickle.loads(pickle.dumps(h))
    del old.__dict__["num_threads"]  # a pickle made before the attribute existed
    assert old.num_threads == 0
    np.testing.assert_array_equal(old.predict(X), h.train_output)


def test_model_string_is_lightgbms_own(data, bound):
    """The oracle writes the refit leaf values into the model string itself; the string
    is the one set_leaf_output and model_to_string give, byte for byte."""
    X, t, weights = data
    rng = np.random.default_rng(10)
    h = bound.project(t, weights["spread"])
    booster = lightgbm.Booster(model_str=h.model_str)
    assert booster.model_to_string() == h.model_str
    values = np.concatenate([
        rng.normal(size=h.n_leaves) * 10.0 ** rng.integers(-30, 300, size=h.n_leaves),
        [0.0, 1.0, -2.5, 1e-5, 123456789.0, np.nextafter(KZ, 1), np.pi, -1 / 3, -1e300, 0.1],
    ])[::-1]  # the kernel stores |v| <= kZeroThreshold as 0, as set_leaf_output does
    tree = lightgbm.Booster(model_str=_with_leaf_values(h.model_str, values[: h.n_leaves]))
    for j, v in enumerate(values[: h.n_leaves]):
        booster.set_leaf_output(0, j, float(v))
    assert tree.model_to_string() == booster.model_to_string()
    assert _with_leaf_values(h.model_str, values[: h.n_leaves]) == booster.model_to_string()


def test_scores_stay_zero_whatever_the_params(data):
    """Unweighted queries use LightGBM's squared loss at the boosters' training scores,
    which the oracle keeps at 0: a learning rate or boosting from the average given in
    params would move them, so both are fixed, and refused when asked for."""
    X, t, _ = data
    for params in ({"eta": 0.3}, {"boost_from_average": True}):
        with pytest.raises(ValueError, match="the booster, not the tree, chooses the step"):
            LightGBMOracle(params=params).bind(X)
    o = LightGBMOracle()
    p = o.lightgbm_params()
    assert p["learning_rate"] == 1e-300 and p["boost_from_average"] is False
    b = o.bind(X)
    for target in (t, np.cos(X[:, 3]), -t):
        a, c = b.project(target), b.project(target, np.ones(N))
        np.testing.assert_array_equal(a.train_output, c.train_output)
    scores = b.unit_booster._Booster__inner_predict(data_idx=0)
    assert np.all(scores == 0.0)


def test_unweighted_single_leaf_tree_renews_the_booster():
    # On a booster's first iteration LightGBM keeps a tree without splits and, with its
    # own objective, adds the label mean to the training scores: the oracle starts afresh.
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    b = LightGBMOracle(min_gain_to_split=1e-6).bind(X)
    t_flat = 2.5 + 1e-9 * rng.normal(size=300)
    h = b.project(t_flat)
    assert h.n_leaves == 1 and h.model_str is None
    np.testing.assert_allclose(h.train_output, np.full(300, t_flat.mean()), rtol=1e-15)
    t = X[:, 0] + 0.1 * rng.normal(size=300)
    h2 = b.project(t)
    assert h2.n_leaves > 1
    assert np.all(b.unit_booster._Booster__inner_predict(data_idx=0) == 0.0)
    np.testing.assert_array_equal(h2.train_output, b.project(t, np.ones(300)).train_output)
    np.testing.assert_array_equal(h2.predict(X), h2.train_output)


@pytest.mark.parametrize("n_parts", [1, 3])
def test_leaf_segments_cover_the_rows_in_order(data, bound, n_parts):
    """partition_rows leaves every row in exactly one leaf segment, in increasing order
    (or decreasing, as flagged), so leaf sums run in row order whatever the blocks."""
    X, t, _ = data
    h = bound.project(t)
    tree = _parse_tree(h.model_str)
    XT = _feature_major(X)
    rows = np.full((2, N), -1, dtype=np.int32)
    bounds = np.zeros((n_parts, tree.n_leaves, 3), dtype=np.int64)
    cuts = [N * p // n_parts for p in range(n_parts + 1)]
    args = (XT, *_node_rules(tree, _nan_features(XT)))
    for p in range(n_parts):
        lgb_oracle_module.kernels.partition_rows(*args, cuts[p], cuts[p + 1], rows, bounds[p])
    expected = _pred_leaf(h.model_str, X)
    seen = np.zeros(N, dtype=int)
    for p in range(n_parts):
        for j, (a, b, where) in enumerate(bounds[p]):
            seg = rows[where >> 1, a:b]
            if where & 1:
                seg = seg[::-1]
            assert np.all(np.diff(seg) > 0)
            assert np.all((cuts[p] <= seg) & (seg < cuts[p + 1]))
            assert np.all(expected[seg] == j)
            seen[seg] += 1
    assert np.all(seen == 1)


def test_read_only_fortran_X_binds_without_being_written(data):
    """A read-only Fortran-ordered float64 X (what a pandas DataFrame's values are) used
    to fail to compile: the kernel that zeroes LightGBM's tiny values wrote into a view
    of the caller's array.  It binds now, to the trees of a writable copy, and a tiny
    value is zeroed on the oracle's own copy, never in X."""
    X, t, weights = data
    X_tiny = X.copy()
    X_tiny[3, 1] = 1e-40  # LightGBM reads |x| <= 1e-35 as 0
    for source in (X, X_tiny):
        ro = np.asfortranarray(source)
        ro.flags.writeable = False
        before = ro.copy()
        for w in (None, weights["spread"]):
            h = LightGBMOracle(num_leaves=8).bind(ro).project(t, w)
            ref = LightGBMOracle(num_leaves=8).bind(source.copy()).project(t, w)
            assert h.model_str == ref.model_str
            np.testing.assert_array_equal(h.train_output, ref.train_output)
        np.testing.assert_array_equal(ro, before)
    XT = _feature_major(np.asfortranarray(X_tiny))
    assert XT[1, 3] == 0.0 and X_tiny[3, 1] == 1e-40 and not XT.flags.writeable
