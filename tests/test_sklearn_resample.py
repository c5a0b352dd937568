"""SklearnOracle(weighting="resample"): weighted queries fit on a weighted bootstrap."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from oracleboost.boosters.functional.estimator import FunctionalGradientRegressor
from oracleboost.oracles import CachedOracle, SklearnOracle

N = 120


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = np.sort(rng.uniform(-3, 3, N))[:, None]
    y = np.sin(X[:, 0]) + 0.1 * rng.randn(N)
    w = rng.uniform(0.1, 2.0, N)
    return X, y, w


FITS = [0]


class CountingKNN(KNeighborsRegressor):
    def fit(self, X, y):
        FITS[0] += 1
        return super().fit(X, y)


def _booster(oracle, random_state=0, n_estimators=15):
    return FunctionalGradientRegressor(
        oracle, n_estimators=n_estimators, learning_rate=0.3, random_state=random_state
    )


def test_weighted_boosting_of_knn_lowers_the_training_loss(data):
    X, y, w = data
    gb = _booster(SklearnOracle(KNeighborsRegressor(), weighting="resample"), n_estimators=30)
    gb.fit(X, y, sample_weight=w)
    loss = np.asarray(gb.history_["loss"])
    assert loss[-1] < 0.5 * loss[0]
    assert np.mean(np.diff(loss) <= 1e-12) > 0.9  # (almost) every round descends
    weighted_mse = np.average((gb.predict(X) - y) ** 2, weights=w)
    assert weighted_mse < 0.5 * np.average((y - np.average(y, weights=w)) ** 2, weights=w)


def test_fixed_seed_is_deterministic_and_other_seeds_differ(data):
    X, y, w = data
    oracle = SklearnOracle(KNeighborsRegressor(), weighting="resample")
    first = _booster(oracle, random_state=3).fit(X, y, sample_weight=w).predict(X)
    second = _booster(oracle, random_state=3).fit(X, y, sample_weight=w).predict(X)
    other = _booster(oracle, random_state=4).fit(X, y, sample_weight=w).predict(X)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_query_seeds_drive_the_bootstrap(data):
    X, y, w = data
    bound = SklearnOracle(KNeighborsRegressor(), weighting="resample").bind(X)
    a = bound.project(y, w, random_state=1).train_output
    np.testing.assert_array_equal(a, bound.project(y, w, random_state=1).train_output)
    assert not np.array_equal(a, bound.project(y, w, random_state=2).train_output)
    # a seed of None draws fresh: two answers differ (with overwhelming probability)
    fresh = [bound.project(y, w, random_state=None).train_output for _ in range(2)]
    assert not np.array_equal(*fresh)
    # unweighted queries fit the rows as they are, whatever the seed
    plain = KNeighborsRegressor().fit(X, y).predict(X)
    for seed in (1, 2, None):
        np.testing.assert_array_equal(bound.project(y, random_state=seed).train_output, plain)


def test_train_output_is_the_fit_on_all_rows(data):
    X, y, w = data
    h = (
        SklearnOracle(KNeighborsRegressor(), weighting="resample")
        .bind(X)
        .project(y, w, random_state=5)
    )
    assert h.train_output.shape == (N,)
    np.testing.assert_array_equal(h.train_output, h.predict(X))
    # the fitted estimator saw a bootstrap of size n (with repeated rows)
    fitted = h.estimator._fit_X
    assert fitted.shape == X.shape
    assert len(np.unique(fitted[:, 0])) < N


def test_resample_is_stochastic_and_cacheable(data, tmp_path):
    X, y, w = data
    assert SklearnOracle(KNeighborsRegressor(), weighting="resample").capabilities.stochastic
    assert not SklearnOracle(KNeighborsRegressor()).capabilities.stochastic

    def fit():
        oracle = CachedOracle(SklearnOracle(CountingKNN(), weighting="resample"), str(tmp_path))
        return _booster(oracle, random_state=0, n_estimators=10).fit(X, y, sample_weight=w)

    FITS[0] = 0
    first = fit()
    assert FITS[0] == 10
    FITS[0] = 0
    second = fit()
    assert FITS[0] == 0  # every query of the second identical fit hits
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    plain = _booster(SklearnOracle(CountingKNN(), weighting="resample"), n_estimators=10)
    np.testing.assert_array_equal(plain.fit(X, y, sample_weight=w).predict(X), first.predict(X))


def test_pipeline_without_weights_is_boosted_with_resample(data):
    X, y, w = data
    pipe = make_pipeline(StandardScaler(), KNeighborsRegressor())
    with pytest.raises(TypeError, match="Pipeline cannot take sample_weight"):
        _booster(SklearnOracle(pipe)).fit(X, y, sample_weight=w)
    gb = _booster(SklearnOracle(pipe, weighting="resample")).fit(X, y, sample_weight=w)
    loss = np.asarray(gb.history_["loss"])
    assert loss[-1] < loss[0]


def test_classifier_without_weights_correlates_with_resample(data):
    X, y, _ = data
    r = np.sin(X[:, 0]) * np.linspace(0.5, 1.5, N)
    with pytest.raises(TypeError, match=r"weighting='resample'"):
        SklearnOracle(KNeighborsClassifier()).bind(X)
    bound = SklearnOracle(KNeighborsClassifier(), weighting="resample").bind(X)
    h = bound.correlate(r, random_state=0)
    assert set(np.unique(h.train_output)) <= {-1.0, 1.0}
    assert np.dot(r, h.train_output) > 0.5 * np.abs(r).sum()  # a strong edge on this r


def test_type_error_names_the_resample_option(data):
    X, y, w = data
    bound = SklearnOracle(KNeighborsRegressor()).bind(X)
    msg = r"KNeighborsRegressor cannot take sample_weight.*SklearnOracle\(est, weighting='resample'"
    with pytest.raises(TypeError, match=msg):
        bound.project(y, w)
    with pytest.raises(TypeError, match=msg):
        _booster(SklearnOracle(KNeighborsRegressor())).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("bad", ["bootstrap", None, 1])
def test_bad_weighting_is_refused_at_bind(data, bad):
    X, _, _ = data
    oracle = SklearnOracle(KNeighborsRegressor(), weighting=bad)  # constructor only stores
    with pytest.raises(ValueError, match="weighting must be 'sample_weight' or 'resample'"):
        oracle.bind(X)
    with pytest.raises(ValueError, match="weighting"):
        _ = oracle.capabilities


def test_resample_with_stochastic_false_is_refused(data):
    X, _, _ = data
    oracle = SklearnOracle(KNeighborsRegressor(), stochastic=False, weighting="resample")
    with pytest.raises(ValueError, match="weighting='resample'.*stochastic=False"):
        oracle.bind(X)


def test_get_params_and_clone():
    oracle = SklearnOracle(KNeighborsRegressor(n_neighbors=3), weighting="resample")
    params = oracle.get_params(deep=False)
    assert params["weighting"] == "resample"
    assert params["stochastic"] == "auto"
    assert oracle.get_params()["estimator__n_neighbors"] == 3
    copy = clone(oracle)
    assert copy.weighting == "resample" and copy.estimator is not oracle.estimator
    assert SklearnOracle(KNeighborsRegressor()).get_params()["weighting"] == "sample_weight"
    assert oracle.set_params(weighting="sample_weight").weighting == "sample_weight"
