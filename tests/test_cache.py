"""CachedOracle: a second identical run never reaches the wrapped oracle."""

import numpy as np
import pytest
from joblib import Memory
from sklearn.linear_model import Ridge

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import CachedOracle, MLPOracle, Oracle, SklearnOracle, StumpOracle
from oracleboost.oracles.base import BoundOracle

CALLS = {"bind": 0, "correlate": 0, "project": 0}


class CountingStumps(Oracle):
    """Stumps that count how often they are bound and asked (module-level: picklable)."""

    def __init__(self, max_bins=255):
        self.max_bins = max_bins

    @property
    def capabilities(self):
        return StumpOracle().capabilities

    def bind(self, X):
        CALLS["bind"] += 1
        return _CountingBound(self, StumpOracle(max_bins=self.max_bins).bind(X))


class _CountingBound(BoundOracle):
    def __init__(self, oracle, inner):
        super().__init__(oracle, inner.n_samples)
        self.inner = inner

    def _correlate(self, r, random_state):
        CALLS["correlate"] += 1
        return self.inner.correlate(r)

    def _project(self, target, sample_weight, random_state):
        CALLS["project"] += 1
        return self.inner.project(target, sample_weight)


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 3)
    y = (X[:, 0] + 0.3 * rng.randn(80) > 0).astype(int)
    return X, y


def _reset():
    for k in CALLS:
        CALLS[k] = 0


def test_second_run_makes_no_inner_call(data, tmp_path):
    X, y = data
    memory = Memory(tmp_path, verbose=0)
    _reset()
    first = CoordinateBoostingClassifier(
        CachedOracle(CountingStumps(), memory), n_estimators=12, random_state=0
    ).fit(X, y)
    assert CALLS["bind"] == 1 and CALLS["correlate"] == 12
    _reset()
    second = CoordinateBoostingClassifier(
        CachedOracle(CountingStumps(), memory), n_estimators=12, random_state=0
    ).fit(X, y)
    assert CALLS == {"bind": 0, "correlate": 0, "project": 0}
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))
    for key in ("loss", "edge", "step", "margin"):
        np.testing.assert_array_equal(first.history_[key], second.history_[key])


def test_changes_miss_the_cache(data, tmp_path):
    X, y = data
    memory = Memory(tmp_path, verbose=0)
    bound = CachedOracle(CountingStumps(), memory).bind(X)
    r = np.linspace(-1, 1, len(X))
    _reset()
    h1 = bound.correlate(r)
    h2 = bound.correlate(r)
    assert CALLS["correlate"] == 1
    np.testing.assert_array_equal(h1.train_output, h2.train_output)
    # another query on the same data
    bound.correlate(r[::-1].copy())
    assert CALLS["correlate"] == 2
    # the other kind of query with the same array
    bound.project(r)
    assert CALLS["project"] == 1
    # changed X
    X2 = X.copy()
    X2[0, 0] += 1e-9
    CachedOracle(CountingStumps(), memory).bind(X2).correlate(r)
    assert CALLS["correlate"] == 3
    # changed oracle parameter
    CachedOracle(CountingStumps(max_bins=16), memory).bind(X).correlate(r)
    assert CALLS["correlate"] == 4
    # the original query is still cached
    CachedOracle(CountingStumps(), memory).bind(X).correlate(r)
    assert CALLS["correlate"] == 4


def test_x_is_fingerprinted_once_per_bind(data, tmp_path, monkeypatch):
    import oracleboost.oracles.cache as cache_module

    X, y = data
    hashed_shapes = []
    real_hash = cache_module.joblib.hash

    def counting_hash(obj, *args, **kwargs):
        if isinstance(obj, np.ndarray) and obj.shape == X.shape:
            hashed_shapes.append(obj.shape)
        return real_hash(obj, *args, **kwargs)

    monkeypatch.setattr(cache_module.joblib, "hash", counting_hash)
    FunctionalGradientRegressor(
        CachedOracle(StumpOracle(), Memory(tmp_path, verbose=0)), n_estimators=10
    ).fit(X, y.astype(float))
    assert len(hashed_shapes) == 1


def test_stochastic_oracle_keys_on_seed(data, tmp_path):
    X, y = data
    memory = Memory(tmp_path, verbose=0)
    bound = CachedOracle(MLPOracle(max_iter=30), memory).bind(X)
    r = np.linspace(-1, 1, len(X))
    a = bound.correlate(r, random_state=1).train_output
    b = bound.correlate(r, random_state=2).train_output
    c = bound.correlate(r, random_state=1).train_output
    assert not np.allclose(a, b)  # different seeds: different nets, not a cache hit
    np.testing.assert_array_equal(a, c)


def test_cached_and_uncached_runs_agree_for_every_finite_class(data, tmp_path):
    """Capabilities are the class's, not the bound data's: wrapping in the cache must not
    change how a booster scales columns (it did for LinearOracle with features in [−1, 1])."""
    from oracleboost.oracles import LinearOracle, MatrixOracle

    X, y = data
    Xs = X / np.abs(X).max()  # features in [−1, 1]
    H = np.sign(X @ np.random.RandomState(1).randn(3, 6) + 1e-12)
    for oracle, Xfit in ((LinearOracle(), Xs), (MatrixOracle(H), np.arange(len(X))[:, None])):
        plain = CoordinateBoostingClassifier(oracle, n_estimators=10).fit(Xfit, y)
        cached = CoordinateBoostingClassifier(
            CachedOracle(oracle, Memory(tmp_path, verbose=0)), n_estimators=10
        ).fit(Xfit, y)
        for key in ("loss", "edge", "step", "margin"):
            np.testing.assert_array_equal(plain.history_[key], cached.history_[key])


RIDGE_FITS = [0]


class CountingRidge(Ridge):
    """Ridge that counts its fits (module-level: picklable, and clones count too)."""

    def fit(self, X, y, sample_weight=None):
        RIDGE_FITS[0] += 1
        return super().fit(X, y, sample_weight=sample_weight)


def test_the_readme_caching_example_caches_under_random_state_none(tmp_path):
    """README: ``CachedOracle(SklearnOracle(Ridge()), "cache/")`` under the booster's
    default ``random_state=None``.  Ridge's default solver ignores its seed, so the
    answers are keyed without it: the second identical fit makes no inner call (it
    refitted all 50 weak learners before)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    make = lambda: FunctionalGradientRegressor(  # noqa: E731
        CachedOracle(SklearnOracle(CountingRidge()), str(tmp_path / "cache")), n_estimators=50
    )
    RIDGE_FITS[0] = 0
    first = make().fit(X, y)
    assert RIDGE_FITS[0] == 50
    second = make().fit(X, y)
    assert RIDGE_FITS[0] == 50  # zero inner calls
    np.testing.assert_array_equal(first.predict(X), second.predict(X))


def test_seed_dependence_is_decided_per_estimator():
    from sklearn.linear_model import Lasso, LinearRegression
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor

    assert not SklearnOracle(Ridge()).capabilities.stochastic
    assert SklearnOracle(Ridge(solver="saga")).capabilities.stochastic
    assert not SklearnOracle(LinearRegression()).capabilities.stochastic
    assert not SklearnOracle(KNeighborsRegressor()).capabilities.stochastic
    assert not SklearnOracle(Lasso()).capabilities.stochastic
    assert SklearnOracle(Lasso(selection="random")).capabilities.stochastic
    assert SklearnOracle(DecisionTreeRegressor()).capabilities.stochastic
    assert not SklearnOracle(DecisionTreeRegressor(), stochastic=False).capabilities.stochastic
    with pytest.raises(ValueError, match="stochastic"):
        _ = SklearnOracle(Ridge(), stochastic="sometimes").capabilities
