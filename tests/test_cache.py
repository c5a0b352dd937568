"""CachedOracle: a second identical run never reaches the wrapped oracle."""

import joblib
import numpy as np
import pytest
from joblib import Memory
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import (
    CachedOracle,
    MLPOracle,
    Oracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis

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
    """X is hashed once, at bind; per-call keys hash only the query (never X again)."""
    import oracleboost.oracles.cache as cache_module

    X, y = data
    fingerprints, hashed_x = [], []
    real_fingerprint, real_hash = cache_module._fingerprint, cache_module.joblib.hash

    def counting_fingerprint(obj):
        fingerprints.append(obj.shape)
        return real_fingerprint(obj)

    def counting_hash(obj, *args, **kwargs):
        if isinstance(obj, np.ndarray) and obj.shape == X.shape:
            hashed_x.append(obj.shape)
        return real_hash(obj, *args, **kwargs)

    monkeypatch.setattr(cache_module, "_fingerprint", counting_fingerprint)
    monkeypatch.setattr(cache_module.joblib, "hash", counting_hash)
    FunctionalGradientRegressor(
        CachedOracle(StumpOracle(), Memory(tmp_path, verbose=0)), n_estimators=10
    ).fit(X, y.astype(float))
    assert fingerprints == [X.shape] and hashed_x == []


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


FITS = {"ridge": 0, "tree": 0}


class CountingRidge(Ridge):
    """Ridge that counts its fits (module-level: picklable, and clones count too)."""

    def fit(self, X, y, sample_weight=None):
        FITS["ridge"] += 1
        return super().fit(X, y, sample_weight=sample_weight)


class CountingTree(DecisionTreeRegressor):
    """A scikit-learn tree that counts its fits (it has a random_state: stochastic)."""

    def fit(self, X, y, sample_weight=None, check_input=True):
        FITS["tree"] += 1
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


def test_the_readme_caching_example_makes_no_inner_call_on_a_second_fit(tmp_path, monkeypatch):
    """README, verbatim but for the counting Ridge:
    ``FunctionalGradientRegressor(CachedOracle(SklearnOracle(Ridge()), "cache/"),
    n_estimators=50).fit(X, y)`` under the default ``random_state=None``.  The issue
    counted 50 Ridge fits, then 50 again; the second fit must make none."""
    from sklearn.datasets import load_diabetes

    monkeypatch.chdir(tmp_path)  # "cache/" is relative, as in the README
    X, y = load_diabetes(return_X_y=True)
    FITS["ridge"] = 0
    gb2 = FunctionalGradientRegressor(CachedOracle(SklearnOracle(CountingRidge()), "cache/"),
                                      n_estimators=50).fit(X, y)
    assert FITS["ridge"] == 50
    again = FunctionalGradientRegressor(CachedOracle(SklearnOracle(CountingRidge()), "cache/"),
                                        n_estimators=50).fit(X, y)
    assert FITS["ridge"] == 50  # zero inner calls
    np.testing.assert_array_equal(gb2.predict(X), again.predict(X))
    assert (tmp_path / "cache").is_dir()


def _count_estimator_fits(monkeypatch):
    """Count every fit a scikit-learn-backed oracle makes (TreeOracle builds its trees
    inside bind, so its estimators cannot be swapped for counting subclasses)."""
    from oracleboost.oracles import sklearn as sklearn_module

    fits = [0]
    real = sklearn_module._BoundEstimator._fit

    def counting(self, *args, **kwargs):
        fits[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(sklearn_module._BoundEstimator, "_fit", counting)
    return fits


@pytest.mark.parametrize(
    "make_oracle",
    [
        lambda: SklearnOracle(DecisionTreeRegressor(max_depth=3)),
        lambda: TreeOracle(max_depth=3),
    ],
    ids=["sklearn_tree", "tree_oracle"],
)
def test_the_readme_pattern_with_a_tree_caches_under_random_state_none(
    make_oracle, tmp_path, monkeypatch
):
    """Trees take a seed (stochastic); under the booster's random_state=None each query
    is keyed as "any draw", so a second identical fit reuses every stored tree."""
    from sklearn.datasets import load_diabetes

    assert make_oracle().capabilities.stochastic
    X, y = load_diabetes(return_X_y=True)
    fits = _count_estimator_fits(monkeypatch)
    cache = str(tmp_path / "cache")
    first = FunctionalGradientRegressor(CachedOracle(make_oracle(), cache), n_estimators=50)
    first.fit(X, y)
    assert fits[0] == 50
    second = FunctionalGradientRegressor(CachedOracle(make_oracle(), cache), n_estimators=50)
    second.fit(X, y)
    assert fits[0] == 50  # zero inner calls
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    np.testing.assert_array_equal(first.history_["loss"], second.history_["loss"])


def test_a_counting_tree_under_random_state_none_is_fitted_once_per_query(tmp_path):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    make = lambda: FunctionalGradientRegressor(  # noqa: E731
        CachedOracle(SklearnOracle(CountingTree(max_depth=3)), str(tmp_path)), n_estimators=20
    )
    FITS["tree"] = 0
    first = make().fit(X, y)
    assert FITS["tree"] == 20
    second = make().fit(X, y)
    assert FITS["tree"] == 20
    np.testing.assert_array_equal(first.predict(X), second.predict(X))


def test_a_fixed_random_state_keys_on_the_seed(tmp_path, monkeypatch):
    """With a fixed random_state nothing changes: int seeds, keyed exactly."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    fits = _count_estimator_fits(monkeypatch)

    def fit(seed):
        return FunctionalGradientRegressor(
            CachedOracle(SklearnOracle(DecisionTreeRegressor(max_depth=3)), str(tmp_path)),
            n_estimators=10, random_state=seed,
        ).fit(X, y)

    plain = FunctionalGradientRegressor(
        SklearnOracle(DecisionTreeRegressor(max_depth=3)), n_estimators=10, random_state=0
    ).fit(X, y)
    fits[0] = 0
    first = fit(0)
    assert fits[0] == 10
    second = fit(0)
    assert fits[0] == 10  # exact hits
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    np.testing.assert_array_equal(plain.predict(X), first.predict(X))  # cache changes nothing
    fit(1)  # another seed: the first query is the same, its seed is not
    assert fits[0] > 10


@pytest.mark.parametrize(
    "estimator",
    [Ridge(), CountingRidge(), LinearRegression(), KNeighborsRegressor(n_neighbors=3)],
    ids=["ridge", "ridge_subclass", "linear_regression", "knn"],
)
def test_seed_free_queries_hit_whatever_the_seed(estimator, data, tmp_path, monkeypatch):
    X, _ = data
    oracle = SklearnOracle(estimator)
    assert oracle.capabilities.stochastic is False
    fits = _count_estimator_fits(monkeypatch)
    r = np.linspace(-1, 1, len(X))
    bound = CachedOracle(oracle, str(tmp_path)).bind(X)
    answers = [bound.correlate(r, random_state=s).train_output for s in (1, 2, None, 7)]
    assert fits[0] == 1
    for a in answers[1:]:
        np.testing.assert_array_equal(answers[0], a)


NOISY_CALLS = [0]


class _Values(Hypothesis):
    def __init__(self, values):
        self.values = values

    def predict(self, X):
        return np.zeros(len(X))


class NoisyOracle(Oracle):
    """A stochastic class: the answer to ``r`` is ``r`` plus seeded noise (a seed of None
    draws fresh noise, scikit-learn's meaning of None)."""

    @property
    def capabilities(self):
        return Capabilities(correlate=True, project=False, stochastic=True)

    def bind(self, X):
        return _NoisyBound(self, len(X))


class _NoisyBound(BoundOracle):
    def _correlate(self, r, random_state):
        NOISY_CALLS[0] += 1
        h = _Values(None)
        h.train_output = r + np.random.RandomState(random_state).randn(len(r))
        return h


def test_a_stochastic_query_under_none_reuses_the_stored_draw(data, tmp_path):
    X, _ = data
    r = np.linspace(-1, 1, len(X))
    NOISY_CALLS[0] = 0
    bound = CachedOracle(NoisyOracle(), str(tmp_path)).bind(X)
    any1 = bound.correlate(r).train_output
    any2 = CachedOracle(NoisyOracle(), str(tmp_path)).bind(X).correlate(r).train_output
    assert NOISY_CALLS[0] == 1  # no seed asked for: the stored draw is reused
    np.testing.assert_array_equal(any1, any2)
    # int seeds are keyed exactly, apart from the "any draw" entry
    a = bound.correlate(r, random_state=1).train_output
    b = bound.correlate(r, random_state=2).train_output
    c = bound.correlate(r, random_state=1).train_output
    assert NOISY_CALLS[0] == 3
    np.testing.assert_array_equal(a, r + np.random.RandomState(1).randn(len(r)))
    np.testing.assert_array_equal(a, c)
    assert not np.allclose(a, b) and not np.allclose(a, any1)
    np.testing.assert_array_equal(bound.correlate(r).train_output, any1)
    assert NOISY_CALLS[0] == 3


class SeedProbe(Oracle):
    """Records the seed of every query (stochastic, so boosters' seeds matter)."""

    def __init__(self, seeds=None):
        self.seeds = seeds

    @property
    def capabilities(self):
        return Capabilities(correlate=True, project=True, stochastic=True)

    def bind(self, X):
        return _SeedProbeBound(self, StumpOracle().bind(X))


class _SeedProbeBound(BoundOracle):
    def __init__(self, oracle, inner):
        super().__init__(oracle, inner.n_samples)
        self.inner = inner

    def _correlate(self, r, random_state):
        self.oracle.seeds.append(random_state)
        return self.inner.correlate(r)

    def _project(self, target, sample_weight, random_state):
        self.oracle.seeds.append(random_state)
        return self.inner.project(target, sample_weight)


@pytest.mark.parametrize("booster", ["coordinate", "functional", "mirror"])
def test_boosters_pass_none_seeds_exactly_when_their_random_state_is_none(booster, data):
    from oracleboost.boosters import MirrorBoostingClassifier

    X, y = data
    make = {
        "coordinate": lambda o, s: CoordinateBoostingClassifier(o, n_estimators=5, random_state=s),
        "functional": lambda o, s: FunctionalGradientRegressor(o, n_estimators=5, random_state=s),
        "mirror": lambda o, s: MirrorBoostingClassifier(o, n_estimators=5, random_state=s),
    }[booster]
    target = y.astype(float) if booster == "functional" else y
    seeds_none, seeds_0 = [], []
    make(SeedProbe(seeds_none), None).fit(X, target)
    make(SeedProbe(seeds_0), 0).fit(X, target)
    assert len(seeds_none) == len(seeds_0) == 5
    assert seeds_none == [None] * 5
    rng = np.random.RandomState(0)  # a fixed random_state draws the seeds it always drew
    assert seeds_0 == [int(rng.randint(np.iinfo(np.int32).max)) for _ in range(5)]


def test_draw_seed():
    from oracleboost.boosters import draw_seed, seed_generator

    assert seed_generator(None) is None
    assert seed_generator(np.random.mtrand._rand) is None
    assert draw_seed(None) is None
    seeded = seed_generator(3)
    expected = np.random.RandomState(3).randint(np.iinfo(np.int32).max, size=2).tolist()
    assert [draw_seed(seeded), draw_seed(seeded)] == expected
    assert type(draw_seed(seed_generator(5))) is int


@pytest.mark.parametrize("make", ["coordinate", "functional"])
def test_seeds_stay_none_across_a_warm_start(make):
    # "No seed asked for" is decided once per fit and kept in the state, so the rounds
    # of a warm start (whose state is a deep copy) still pass None to the oracle.
    from sklearn.datasets import make_classification

    from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor

    seeds = []

    class Recording(StumpOracle):
        def bind(self, X):
            bound = super().bind(X)
            # the hooks every query reaches (project, and the squared loss's next query
            # made from the last one, _project_shifted, end in _project)
            correlate, project = bound._correlate, bound._project

            def c(r, random_state):
                seeds.append(random_state)
                return correlate(r, random_state)

            def p(t, w, random_state, *shifted):
                seeds.append(random_state)
                return project(t, w, random_state, *shifted)

            bound._correlate, bound._project = c, p
            return bound

    X, y = make_classification(100, 4, random_state=0)
    model = (CoordinateBoostingClassifier if make == "coordinate"
             else FunctionalGradientRegressor)(Recording(), n_estimators=5, warm_start=True)
    model.fit(X, y)
    model.set_params(n_estimators=10).fit(X, y)
    assert len(seeds) == 10 and all(s is None for s in seeds)


# -- entries are checked on load ----------------------------------------------------------
def _entries(root):
    return set(root.rglob("output.pkl"))


def _assert_quiet(capfd, caplog):
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Exception" not in out + err, out + err
    assert not [rec for rec in caplog.records if rec.name.startswith("joblib") or
                "Traceback" in rec.getMessage()]


def test_an_entry_of_another_key_copied_over_is_detected(data, tmp_path, capfd, caplog):
    """Both entries are valid hypotheses of the right shape: only the key material stored
    next to the answer tells them apart."""
    X, _ = data
    r = np.linspace(-1, 1, len(X)) ** 3
    bound = CachedOracle(CountingStumps(), str(tmp_path)).bind(X)
    _reset()
    h_a = bound.correlate(r)
    (entry_a,) = _entries(tmp_path)
    h_b = bound.correlate(np.roll(r, 7))
    (entry_b,) = _entries(tmp_path) - {entry_a}
    assert not np.array_equal(h_a.train_output, h_b.train_output)
    assert CALLS["correlate"] == 2
    entry_b.write_bytes(entry_a.read_bytes())  # A's answer under B's key

    fresh = CachedOracle(CountingStumps(), str(tmp_path)).bind(X)
    again_b = fresh.correlate(np.roll(r, 7))
    assert CALLS["correlate"] == 3  # detected and recomputed
    np.testing.assert_array_equal(again_b.train_output, h_b.train_output)
    fresh.correlate(np.roll(r, 7))
    fresh.correlate(r)
    assert CALLS["correlate"] == 3  # B overwritten with its own answer; A untouched
    _assert_quiet(capfd, caplog)


def _truncated(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _not_a_hypothesis(path):  # the right key material, a wrong answer
    entry = joblib.load(path)
    entry["answer"] = "not a hypothesis"
    joblib.dump(entry, path)


def _another_object(path):
    joblib.dump(["some", "other", "object"], path)


def _bare_hypothesis(path):  # the answer without its key material
    joblib.dump(joblib.load(path)["answer"], path)


def _wrong_shape(path):
    entry = joblib.load(path)
    entry["answer"].train_output = entry["answer"].train_output[:-1]
    joblib.dump(entry, path)


def _non_finite(path):
    entry = joblib.load(path)
    entry["answer"].train_output = np.full_like(entry["answer"].train_output, np.nan)
    joblib.dump(entry, path)


def _garbage(path):
    path.write_bytes(b"\x00not a pickle at all")


@pytest.mark.parametrize(
    "corrupt",
    [_truncated, _garbage, _another_object, _not_a_hypothesis, _bare_hypothesis, _wrong_shape,
     _non_finite],
)
def test_corrupted_entries_are_recomputed_silently(corrupt, data, tmp_path, capfd, caplog):
    X, _ = data
    r = np.linspace(-1, 1, len(X)) ** 3
    _reset()
    h = CachedOracle(CountingStumps(), str(tmp_path)).bind(X).correlate(r)
    (entry,) = _entries(tmp_path)
    corrupt(entry)
    capfd.readouterr()
    again = CachedOracle(CountingStumps(), str(tmp_path)).bind(X).correlate(r)
    assert CALLS["correlate"] == 2
    np.testing.assert_array_equal(h.train_output, again.train_output)
    CachedOracle(CountingStumps(), str(tmp_path)).bind(X).correlate(r)
    assert CALLS["correlate"] == 2  # the entry was overwritten with a good one
    _assert_quiet(capfd, caplog)


def test_a_corrupted_columns_entry_is_recomputed(tmp_path, capfd, caplog):
    from oracleboost.oracles import MatrixOracle

    H = np.sign(np.random.RandomState(0).randn(12, 4))
    rows = np.arange(12)[:, None]
    CachedOracle(MatrixOracle(H), str(tmp_path)).bind(rows).columns()
    (entry,) = _entries(tmp_path)
    joblib.dump({"answer": H[:-1]}, entry)
    np.testing.assert_array_equal(
        CachedOracle(MatrixOracle(H), str(tmp_path)).bind(rows).columns(), H
    )
    _assert_quiet(capfd, caplog)


def test_a_fortran_ordered_or_strided_copy_of_x_hits(data, tmp_path):
    X, _ = data
    r = np.linspace(-1, 1, len(X))
    _reset()
    h = CachedOracle(CountingStumps(), str(tmp_path)).bind(X).correlate(r)
    wide = np.repeat(X, 2, axis=1)[:, ::2]  # a non-contiguous view with X's values
    big_endian = X.astype(X.dtype.newbyteorder(">"))
    for same in (np.asfortranarray(X), wide, big_endian):
        assert not same.flags.c_contiguous or same.dtype != X.dtype
        again = CachedOracle(CountingStumps(), str(tmp_path)).bind(same).correlate(r)
        np.testing.assert_array_equal(h.train_output, again.train_output)
    assert CALLS == {"bind": 1, "correlate": 1, "project": 0}
    # a query block in Fortran order hits too
    R = np.ascontiguousarray(np.stack([r, -r], axis=1))
    bound = CachedOracle(CountingStumps(), str(tmp_path)).bind(X)
    a = bound.project(R)
    b = bound.project(np.asfortranarray(R))
    assert CALLS["project"] == 1 and a.train_output.shape == R.shape
    np.testing.assert_array_equal(a.train_output, b.train_output)


def test_cached_oracle_of_a_non_oracle_raises_a_type_error_naming_it(data):
    X, y = data
    with pytest.raises(TypeError, match="`oracle` argument must be an Oracle.*got object"):
        CachedOracle(object()).bind(X)
    with pytest.raises(TypeError, match="`oracle` argument"):
        _ = CachedOracle(object(), None).capabilities
    with pytest.raises(TypeError, match="`oracle` argument must be an Oracle"):
        FunctionalGradientRegressor(CachedOracle(object()), n_estimators=3).fit(X, y * 1.0)
    with pytest.raises(TypeError, match=r"SklearnOracle\(estimator\)"):
        CachedOracle(Ridge()).bind(X)


def test_seed_dependence_is_decided_per_estimator():
    from sklearn.linear_model import Lasso, LassoCV, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    assert not SklearnOracle(Ridge()).capabilities.stochastic
    assert SklearnOracle(Ridge(solver="saga")).capabilities.stochastic
    assert not SklearnOracle(LinearRegression()).capabilities.stochastic
    assert not SklearnOracle(KNeighborsRegressor()).capabilities.stochastic
    assert not SklearnOracle(Lasso()).capabilities.stochastic
    assert SklearnOracle(Lasso(selection="random")).capabilities.stochastic
    assert not SklearnOracle(LassoCV()).capabilities.stochastic
    assert not SklearnOracle(LogisticRegression()).capabilities.stochastic
    assert SklearnOracle(LogisticRegression(solver="saga")).capabilities.stochastic
    assert not SklearnOracle(SVC()).capabilities.stochastic
    assert SklearnOracle(SVC(probability=True)).capabilities.stochastic
    # nested estimators: each owner of a random_state decides for itself
    assert not SklearnOracle(make_pipeline(StandardScaler(), Ridge())).capabilities.stochastic
    assert SklearnOracle(
        make_pipeline(StandardScaler(), Ridge(solver="sag"))
    ).capabilities.stochastic
    assert SklearnOracle(DecisionTreeRegressor()).capabilities.stochastic
    assert not SklearnOracle(DecisionTreeRegressor(), stochastic=False).capabilities.stochastic
    with pytest.raises(ValueError, match="stochastic"):
        _ = SklearnOracle(Ridge(), stochastic="sometimes").capabilities


class _FullDisk:
    """Files the cache opens for writing accept 10 bytes, then fail as a full disk does."""

    def __init__(self, monkeypatch):
        import errno
        import io

        from joblib._store_backends import FileSystemStoreBackend

        class Full(io.FileIO):
            def write(self, b):
                super().write(bytes(b)[:10])
                raise OSError(errno.ENOSPC, "No space left on device")

        def open_item(store, f, mode):
            return Full(f, mode) if "w" in mode else open(f, mode)

        monkeypatch.setattr(FileSystemStoreBackend, "_open_item", open_item)


def _files(root):
    """The cache's files, but for the .gitignore joblib writes at its root (a plain
    write, outside the store)."""
    return {p for p in root.rglob("*") if p.is_file() and p.name != ".gitignore"}


@pytest.mark.parametrize("fresh", [False, True], ids=["used-cache", "fresh-cache"])
def test_a_full_disk_leaves_no_temporary_files(data, tmp_path, monkeypatch, fresh):
    """joblib writes an entry to a temporary file and renames it; on a full disk it left
    the temporary file (six per run of three calls: output.pkl and metadata.json each),
    and on a cache directory never written the fit failed with the OSError of writing
    the function's code.  Now nothing is left and the fit computes its answers: equal to
    an uncached fit, with joblib's CacheWarning.  Once there is room again the cache
    fills as usual."""
    X, y = data
    y_reg = X[:, 0] + 0.1 * X[:, 1]
    kw = dict(n_estimators=3, random_state=0)
    if not fresh:  # a cache in use: the function's code is already there
        FunctionalGradientRegressor(CachedOracle(StumpOracle(), str(tmp_path)), **kw).fit(
            X, y_reg + 1.0
        )
    before = _files(tmp_path)
    with monkeypatch.context() as patch:
        _FullDisk(patch)
        with pytest.warns(joblib._store_backends.CacheWarning, match="No space left"):
            cached = FunctionalGradientRegressor(
                CachedOracle(StumpOracle(), str(tmp_path)), **kw
            ).fit(X, y_reg)
    assert _files(tmp_path) == before
    plain = FunctionalGradientRegressor(StumpOracle(), **kw).fit(X, y_reg)
    np.testing.assert_array_equal(cached.predict(X), plain.predict(X))
    # room again: three entries (an answer and its metadata each) and nothing else
    again = CachedOracle(StumpOracle(), str(tmp_path))
    FunctionalGradientRegressor(again, **kw).fit(X, y_reg)
    new = _files(tmp_path) - before
    assert sorted(p.name for p in new if p.name != "func_code.py") == (
        ["metadata.json"] * 3 + ["output.pkl"] * 3
    )


def test_changed_code_misses_the_cache(data, tmp_path, monkeypatch):
    """The key holds the code: the package's sources, and a user's oracle's own file, so
    an edited checkout (same version) or an edited oracle never reads the old answers."""
    import importlib
    import sys

    import oracleboost._fingerprint as fp

    X, _ = data
    memory = Memory(tmp_path / "cache", verbose=0)
    r = np.linspace(-1, 1, len(X))
    _reset()
    CachedOracle(CountingStumps(), memory).bind(X).correlate(r)
    CachedOracle(CountingStumps(), memory).bind(X).correlate(r)
    assert CALLS["correlate"] == 1
    monkeypatch.setattr(fp, "_package_digest", lambda: "an edited checkout")
    CachedOracle(CountingStumps(), memory).bind(X).correlate(r)
    assert CALLS["correlate"] == 2
    monkeypatch.undo()

    # a user's oracle in its own module: editing the file (and reloading) misses
    module = tmp_path / "users_stumps.py"
    source = ("from oracleboost.oracles import StumpOracle\n"
              "class UsersStumps(StumpOracle):\n    pass\n")
    module.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    users = importlib.import_module("users_stumps")
    try:
        key = CachedOracle(users.UsersStumps(), memory).bind(X)._key("correlate", (r,), None)
        again = CachedOracle(users.UsersStumps(), memory).bind(X)._key("correlate", (r,), None)
        assert key == again
        module.write_text(source + "# edited\n")
        users = importlib.reload(users)
        edited = CachedOracle(users.UsersStumps(), memory).bind(X)._key("correlate", (r,), None)
        assert edited["code"] != key["code"] and edited["X"] == key["X"]
    finally:
        sys.modules.pop("users_stumps", None)
