"""Fits on a dask array equal the fits in memory, bit for bit (the reproducibility
promise of :mod:`oracleboost.distributed.cluster`), on a LocalCluster of 2 worker processes that
the tests start and close; and what does not run on a cluster says so."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from test_row_blocks import MIRROR_PARAMS  # noqa: E402

from oracleboost.boosters import (  # noqa: E402
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.boosters.mirror.maps import EntropyMap, MirrorMap  # noqa: E402
from oracleboost.oracles import (  # noqa: E402
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    OracleCapabilityError,
    StumpOracle,
)
from oracleboost.rows.partitioned import NotDistributedError  # noqa: E402

# small blocks, so that a few thousand rows make several partitions of 16 blocks
BLOCK = 256
PARTITION = 16 * BLOCK


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def monitor_waits(monkeypatch):
    """A context in which the client's waits for stats (``ClusterBlocks._fetch_pending``:
    one gather each) are counted, into the list it gives."""
    import contextlib

    from oracleboost.distributed.cluster import ClusterBlocks

    fetch = ClusterBlocks._fetch_pending

    @contextlib.contextmanager
    def counting():
        count = [0]

        def counted(self):
            count[0] += 1
            return fetch(self)

        monkeypatch.setattr(ClusterBlocks, "_fetch_pending", counted)
        try:
            yield count
        finally:
            monkeypatch.setattr(ClusterBlocks, "_fetch_pending", fetch)

    return counting


@pytest.fixture
def waits_by_round(monkeypatch):
    """``waits_by_round(count)``: the list of ``count[0]`` as each round of the next fits
    is committed (a monitor of the fit's rounds, heard as the booster's callbacks are)."""
    from oracleboost.engine import base
    from oracleboost.engine.monitors import Monitor

    def watch(count):
        at_ends = []

        class RoundEnds(Monitor):
            def after(self, run, records, stop):
                at_ends.append(count[0])

        monkeypatch.setattr(base, "callback_monitors", lambda booster: [RoundEnds()])
        return at_ends

    return watch


def _waits_a_round(fit, monitor_waits, waits_by_round) -> tuple[object, float]:
    """The fitted model of ``fit()`` (10 rounds) and the client's waits a round over its
    rounds 6 to 9 (neither the first rounds nor the last: the steady rounds' marginal
    cost)."""
    with monitor_waits() as count:
        at_ends = waits_by_round(count)
        model = fit()
    assert len(at_ends) == 10
    return model, (at_ends[8] - at_ends[4]) / 4


def _data(seed: int, n: int = 3 * PARTITION + 1234, d: int = 5):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, 1] = rng.randint(0, 7, n)  # ties, few distinct values
    y = np.where(X[:, 0] + 0.3 * X[:, 1] + rng.randn(n) > 1.0, "yes", "no")
    return X, y


def _booster(**kw):
    return CoordinateBoostingClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                        **kw)


def _same_fit(mem, dk):
    assert mem.stop_reason_ == dk.stop_reason_
    _same_model(mem, dk)


def _same_model(mem, dk):
    """The same rounds, hypotheses, coefficients and classes (the stop reason aside; a
    regressor has no classes)."""
    keys = set(mem.history_) - {"time", "cumulative_time"}
    assert keys == set(dk.history_) - {"time", "cumulative_time"}
    for key in keys:
        np.testing.assert_array_equal(mem.history_[key], dk.history_[key], err_msg=key)
    assert [repr(h) for h in mem.estimators_] == [repr(h) for h in dk.estimators_]
    np.testing.assert_array_equal(mem.coef_, dk.coef_)
    np.testing.assert_array_equal(getattr(mem, "classes_", None), getattr(dk, "classes_", None))


def _ids(value) -> str:
    """A case's id: a parameter dict's values, whether weighted, the seed."""
    if isinstance(value, dict):
        return "-".join(map(str, value.values())) or "default"
    if isinstance(value, bool):
        return "weighted" if value else "unweighted"
    return str(value)


# every step of each loss once, the data's seed alternating along them (both seeds meet
# both losses)
@pytest.mark.parametrize("loss, step, seed", [
    ("exponential", "adaboost", 0),
    ("exponential", "wolfe", 1),
    ("exponential", "optimal", 0),
    ("exponential", "quadratic", 1),
    ("exponential", "closed_form", 0),
    ("logistic", "adaboost", 1),
    ("logistic", "constant", 0),
    ("logistic", "wolfe", 1),
    ("logistic", "optimal", 0),
    ("logistic", "closed_form", 1),
    ("logistic", "quadratic", 0),
])
def test_dask_fit_equals_memory_fit(client, loss, step, seed):
    X, y = _data(seed)
    kw = dict(loss=loss, step=step, n_estimators=12, learning_rate=0.5)
    mem = _booster(**kw).fit(X, y)
    # chunks that are not partitions: the fit cuts its own
    dk = _booster(**kw).fit(da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000))
    _same_fit(mem, dk)
    assert not dk.__dict__.get("_state_")  # nothing of the cluster stays in the model
    Xd = da.from_array(X, chunks=4000)
    for method in ("decision_function", "predict", "predict_proba"):
        out = getattr(dk, method)(Xd)
        assert isinstance(out, da.Array)
        np.testing.assert_array_equal(out.compute(), getattr(mem, method)(X))


def _waiting(case: str):
    """``(make(n_estimators), X, y, same)`` of a case of
    :func:`test_the_client_waits_for_the_workers_so_often_a_round`."""
    linear = case.endswith("-linear")
    case = case.removesuffix("-linear")

    def oracle():
        return LinearOracle(block_size=BLOCK) if linear else StumpOracle(block_size=BLOCK)

    if case == "adaboost":
        X, y = _data(2)
        # (the duality gap's optimum is solved in memory only: not asked of either)
        return (lambda n_estimators: CoordinateBoostingClassifier(
            oracle(), block_size=BLOCK, n_estimators=n_estimators,
            duality_gap=False)), X, y, _same_fit
    if case.startswith("maboost"):
        X, y = _data(6)
        return (lambda n_estimators: MirrorBoostingClassifier(
            oracle(), block_size=BLOCK, mirror=case.split("-")[1],
            n_estimators=n_estimators)), X, y, _same_fit
    X, _ = _data(4)
    return (lambda n_estimators: FunctionalGradientRegressor(
        oracle(), block_size=BLOCK, query=case.split("-")[1],
        n_estimators=n_estimators)), X, X[:, 0] + 0.5 * X[:, 2] ** 2, _same_model


@pytest.mark.parametrize("case, waits", [
    ("adaboost", 2), ("maboost-entropy", 2), ("maboost-euclidean", 5),
    ("regressor-project", 2), ("regressor-correlate", 2),
    ("adaboost-linear", 4), ("regressor-correlate-linear", 2), ("regressor-project-linear", 4),
    ("maboost-entropy-linear", 6),
])
def test_the_client_waits_for_the_workers_so_often_a_round(client, monitor_waits,
                                                           waits_by_round, case, waits):
    """The client's waits for the workers' stats a round, counted as a marginal cost
    (rounds 6 to 9 of a fit of 10), the fit equal to the fit in memory.  The pass
    that makes the oracle's next query lets the stump oracle submit its histograms on it
    before the client waits for the pass's stats (``BoundOracle._prefetch``), so that
    both come back in one gather: AdaBoost waits for the column's sums, then for the
    step's stats with the next histograms (3 waits without the prefetch); the squared
    loss's functional round (naive projection, unit weights) likewise for the answer's
    norms, then the step's (3 without); MABoost's entropy round (lazy, uncapped) for the
    column's sums, then for its one pass's stats (step, softmax and query:
    ``mirror_passes.entropy_step``) with the next histograms; the Euclidean map's 5
    times (6 without: the step, the projection's selection, the query).  LinearOracle
    (a class of columns: its products ``Aᵀr`` prefetched for ``correlate`` only) saves
    the same wait where its query comes from a pass the client waits for: the
    correlating regressor 2 (3 without), MABoost's entropy round 6 (7 without: its
    column takes many values, so it has a peak pass and makes the softmax in three);
    AdaBoost's steps on such a column normalise after the step's pass (4 waits, its
    query made by a pass the client does not wait for), and ``project``'s products
    are other sums (4)."""
    make, X, y, same = _waiting(case)
    Xd = da.from_array(X, chunks=5000)
    dk, counted = _waits_a_round(lambda: make(10).fit(Xd, y), monitor_waits, waits_by_round)
    assert len(dk.history_["loss"]) == 10  # no early stop
    same(make(10).fit(X, y), dk)
    assert counted == waits


def test_a_prefetch_for_a_query_not_asked_is_dropped(client, monitor_waits, waits_by_round,
                                                     monkeypatch):
    """When the step's predicted normaliser misses (here forced: every round), the
    weights are rescaled, the next query is another array, and the histograms the
    oracle started on the step's query are not used: the fit is still the fit in memory,
    waiting once more a round (3) for the histograms of the query asked."""
    from oracleboost.optim import row_passes

    monkeypatch.setattr(row_passes, "NORMALISED_SLACK", -1.0)
    make, X, y, same = _waiting("adaboost")
    Xd = da.from_array(X, chunks=5000)
    dk, counted = _waits_a_round(lambda: make(10).fit(Xd, y), monitor_waits, waits_by_round)
    same(make(10).fit(X, y), dk)
    assert counted == 3


@pytest.mark.parametrize("seed, in_dask, step", [(0, False, "wolfe"),
                                                 (3, True, "closed_form")])
def test_dask_fit_with_weights_equals_memory_fit(client, seed, in_dask, step):
    """Weights (some of them 0: those rows go, in both fits) in a NumPy array or a
    dask array."""
    X, y = _data(seed)
    rng = np.random.RandomState(seed)
    s = rng.exponential(size=len(y)) * 1e-7
    s[rng.rand(len(y)) < 0.1] = 0.0
    sd = da.from_array(s, chunks=7000) if in_dask else s
    mem = _booster(n_estimators=10).fit(X, y, sample_weight=s)
    Xd = da.from_array(X, chunks=5000)
    _same_fit(mem, _booster(n_estimators=10).fit(Xd, y, sample_weight=sd))
    # the lines over the rows read the weights (their logarithms and their minimum)
    kw = dict(loss="logistic", step=step, n_estimators=8)
    _same_fit(_booster(**kw).fit(X, y, sample_weight=s),
              _booster(**kw).fit(Xd, y, sample_weight=sd))


def test_one_partition_and_one_block(client):
    X, y = _data(5, n=200)
    mem = _booster(n_estimators=5).fit(X, y)
    _same_fit(mem, _booster(n_estimators=5).fit(da.from_array(X, chunks=50), y))


def test_staged_on_dask(client):
    X, y = _data(2)
    model = _booster(n_estimators=4).fit(da.from_array(X, chunks=5000), y)
    Xd = da.from_array(X, chunks=3000)
    staged = list(model.staged_decision_function(Xd))
    expect = list(model.staged_decision_function(X))
    assert len(staged) == len(expect) == 4
    for got, want in zip(staged, expect, strict=True):
        np.testing.assert_array_equal(got.compute(), want)
    np.testing.assert_array_equal(list(model.staged_predict(Xd))[-1].compute(),
                                  model.predict(X))


def test_eval_set_on_a_dask_fit(client):
    """Eval sets stay NumPy arrays: their curves are the memory fit's."""
    X, y = _data(4)
    kw = dict(n_estimators=6)
    mem = _booster(**kw).fit(X[:9000], y[:9000], eval_set=[(X[9000:], y[9000:])])
    dk = _booster(**kw).fit(da.from_array(X[:9000], chunks=4000), y[:9000],
                            eval_set=[(X[9000:], y[9000:])])
    np.testing.assert_array_equal(mem.history_["val_loss_0"], dk.history_["val_loss_0"])


def test_what_does_not_distribute_says_so(client):
    X, y = _data(0, n=3000)
    Xd = da.from_array(X, chunks=1000)
    with pytest.raises(NotDistributedError, match="LightGBMOracle needs every training row"):
        CoordinateBoostingClassifier(LightGBMOracle(), n_estimators=2).fit(Xd, y)
    with pytest.raises(NotDistributedError, match="validation_fraction"):
        _booster(n_iter_no_change=3).fit(Xd, y)
    with pytest.raises(ValueError, match="block_size=5000"):
        CoordinateBoostingClassifier(StumpOracle(block_size=5000), block_size=5000).fit(Xd, y)
    with pytest.raises(ValueError, match="must equal the booster's"):
        CoordinateBoostingClassifier(StumpOracle(), block_size=BLOCK).fit(Xd, y)
    model = _booster(n_estimators=2, warm_start=True).fit(Xd, y)
    with pytest.raises(NotDistributedError, match="warm_start"):
        model.set_params(n_estimators=4).fit(Xd, y)


def _mirror(**kw):
    return MirrorBoostingClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK, **kw)


@pytest.mark.parametrize("params, seed", [(p, i % 2) for i, p in enumerate(MIRROR_PARAMS)],
                         ids=_ids)
def test_mirror_dask_fit_equals_memory_fit(client, params, seed):
    """MABoost (Naghibi & Pfister 2014) on a dask array: every binary variant, both maps
    (the Euclidean projection's threshold by a selection over the partitions), weights
    (some 0) on odd seeds (each map meets both)."""
    X, y = _data(seed)
    s = None
    if seed % 2:
        rng = np.random.RandomState(seed)
        s = rng.uniform(0.5, 2.0, size=len(y))
        s[rng.rand(len(y)) < 0.05] = 0.0
    kw = dict(n_estimators=10, **params)
    mem = _mirror(**kw).fit(X, y, sample_weight=s)
    dk = _mirror(**kw).fit(da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000),
                           sample_weight=s)
    assert len(mem.history_["loss"]) > 3
    _same_fit(mem, dk)
    assert dk.weights_ is None  # the weights stayed on the workers
    Xd = da.from_array(X, chunks=4000)
    for method in ("decision_function", "predict", "predict_proba"):
        out = getattr(dk, method)(Xd)
        assert isinstance(out, da.Array)
        np.testing.assert_array_equal(out.compute(), getattr(mem, method)(X))


#: Each variant with weights (some 0) or without; each map and each update meets both.
MULTICLASS_MIRROR_PARAMS = [
    (dict(mirror="entropy"), False),
    (dict(mirror="entropy", update="active"), True),
    (dict(mirror="euclidean"), True),
    (dict(mirror="euclidean", update="lazy", learning_rate=0.5), False),
    # (the weighted fits' largest weight is 10.3 times the mean: a cap above it)
    (dict(mirror="entropy", variant="smooth", smoothness=12.0), True),
    (dict(mirror="euclidean", variant="smooth", smoothness=12.0), True),
    (dict(mirror="euclidean", variant="max_margin"), False),
]


@pytest.mark.parametrize("params, weighted", MULTICLASS_MIRROR_PARAMS, ids=_ids)
def test_mirror_multiclass_dask_fit_equals_memory_fit(client, params, weighted):
    """The package's multiclass construction on a dask array: the N × (K − 1) cells on
    the workers (row masses, label-coded stumps, the cells' mirror step and projection
    by the cells' own lanes), as in memory."""
    X, _ = _data(5)
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [0.5, 1.5, 2.5])  # four classes
    s = _some_zero_weights(len(y), 9) if weighted else None
    kw = dict(n_estimators=8, **params)
    mem = _mirror(**kw).fit(X, y, sample_weight=s)
    dk = _mirror(**kw).fit(da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000),
                           sample_weight=None if s is None else da.from_array(s, chunks=7000))
    assert len(mem.history_["loss"]) > 3
    assert mem.weights_.shape == (np.count_nonzero(s) if weighted else len(y), 3)
    _same_fit(mem, dk)
    Xd = da.from_array(X, chunks=4000)
    for method in ("decision_function", "predict", "predict_proba"):
        np.testing.assert_array_equal(getattr(dk, method)(Xd).compute(),
                                      getattr(mem, method)(X))


def test_mirror_multiclass_sample_group_on_dask_equals_memory_fit(client):
    """Per-cell caps from the rows' groups (§3.2 on the cells)."""
    X, _ = _data(6)
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    group = (np.arange(len(y)) % 3 == 0).astype(int)
    kw = dict(n_estimators=8, mirror="entropy", smoothness=2.0)
    mem = _mirror(**kw).fit(X, y, sample_group=group)
    _same_fit(mem, _mirror(**kw).fit(da.from_array(X, chunks=(3000, 2)), y,
                                     sample_group=da.from_array(group, chunks=6000)))


@pytest.mark.parametrize("mirror", ["entropy", "euclidean"])
def test_mirror_sample_group_on_dask_equals_memory_fit(client, mirror):
    """§3.2's dataset combining: only the secondary set's weights capped (per-row caps
    on the workers), with weights (some 0: their rows and groups go) and without, the
    groups a NumPy array or a dask array; and a bad group named."""
    X, y = _data(3)
    rng = np.random.RandomState(3)
    group = (rng.rand(len(y)) < 0.3).astype(int)
    s = rng.uniform(0.5, 2.0, size=len(y))
    s[rng.rand(len(y)) < 0.05] = 0.0
    Xd = da.from_array(X, chunks=(3000, 2))
    # (no weights and the groups in NumPy; weights and the groups in dask)
    for weights, g in ((None, group), (s, da.from_array(group, chunks=6000))):
        kw = dict(n_estimators=10, mirror=mirror, smoothness=2.0)
        mem = _mirror(**kw).fit(X, y, sample_weight=weights, sample_group=group)
        assert len(mem.history_["loss"]) > 3
        _same_fit(mem, _mirror(**kw).fit(Xd, y, sample_weight=weights, sample_group=g))
    if mirror == "entropy":  # the caps bind: the same fit without groups differs
        assert not np.array_equal(mem.coef_, _mirror(n_estimators=10, mirror=mirror).fit(
            X, y, sample_weight=s).coef_)
    with pytest.raises(ValueError, match="sample_group must hold 0"):
        _mirror(smoothness=2.0).fit(Xd, y, sample_group=np.full(len(y), 2))


def test_mirror_what_does_not_distribute_says_so(client):
    X, y = _data(0, n=3000)
    Xd = da.from_array(X, chunks=1000)
    with pytest.raises(ValueError, match="variant='sparse'"):
        _mirror(mirror="euclidean", variant="sparse").fit(Xd, np.arange(3000) % 3)

    class OwnMap(MirrorMap):  # a user's map: gradient and project on whole arrays
        def gradient(self, w):
            return np.log(w)

        def project(self, z, cap=None):
            return EntropyMap().project(z, cap)

        def constant(self, n_cells):
            return 1.0

        def error_bound(self, potential, n_rows, equal_weights):
            return np.nan

    np.testing.assert_allclose(  # in memory it works, as the entropy map
        _mirror(mirror=OwnMap(), n_estimators=3).fit(X, y).decision_function(X),
        _mirror(n_estimators=3, update="active").fit(X, y).decision_function(X),
        rtol=1e-12)
    with pytest.raises(NotDistributedError, match="projects rows in memory only"):
        _mirror(mirror=OwnMap()).fit(Xd, y)


#: Each method with weights or without (both losses and both kinds of step meet both).
ACCELERATED_PARAMS = [
    ({"method": "accelerated", "loss": "exponential"}, False),
    ({"method": "accelerated", "loss": "logistic"}, True),
    ({"method": "gradient_descent", "loss": "logistic"}, False),
    ({"method": "perceptron", "loss": "exponential"}, True),
    ({"method": "stochastic", "loss": "logistic"}, True),
    ({"method": "stochastic", "loss": "logistic"}, False),
]


@pytest.mark.parametrize("params, weighted", ACCELERATED_PARAMS, ids=_ids)
def test_accelerated_dask_fit_equals_memory_fit(client, params, weighted):
    """Zw and Zᵀq by LinearOracle's partitions, the dual point's passes, the worst row
    and Algorithm 2's draw (one lane's pass on one worker)."""
    X, y = _data(1)
    X = X / np.abs(X).max(axis=0)
    s = np.random.RandomState(2).uniform(0.5, 3.0, len(y)) if weighted else None
    Xd = da.from_array(X, chunks=(1000, 5))
    sd = None if s is None else da.from_array(s, chunks=900)

    def fit(data, weights):
        return AcceleratedMarginClassifier(
            LinearOracle(block_size=BLOCK), block_size=BLOCK, n_estimators=15, tol=0.0,
            fit_intercept=True, random_state=3, **params).fit(data, y, sample_weight=weights)

    mem, dk = fit(X, s), fit(Xd, sd)
    assert len(mem.history_["margin"]) == 15
    _same_fit(mem, dk)
    assert mem.intercept_ == dk.intercept_
    np.testing.assert_array_equal(dk.decision_function(Xd).compute(),
                                  mem.decision_function(X))


@pytest.mark.parametrize("method", ["accelerated", "perceptron", "stochastic"])
def test_accelerated_multiclass_dask_fit_equals_memory_fit(client, method):
    """The (n, K) scores, dual point and query of Sec. 5.2 on the workers; a row of Z
    is a cell (example, wrong class), fetched with its class."""
    X, _ = _data(4)
    X = X / np.abs(X).max(axis=0)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 2], [-0.3, 0.2])  # three classes
    s = np.random.RandomState(5).uniform(0.5, 3.0, len(y))

    def fit(data, weights):
        return AcceleratedMarginClassifier(
            LinearOracle(block_size=BLOCK), block_size=BLOCK, n_estimators=12, tol=0.0,
            fit_intercept=True, method=method, loss="logistic", random_state=1,
        ).fit(data, y, sample_weight=weights)

    mem = fit(X, s)
    dk = fit(da.from_array(X, chunks=(1500, 5)), da.from_array(s, chunks=2000))
    assert len(mem.history_["margin"]) == 12
    _same_fit(mem, dk)
    np.testing.assert_array_equal(dk.intercept_, mem.intercept_)
    np.testing.assert_array_equal(dk.predict_proba(da.from_array(X, chunks=1000)).compute(),
                                  mem.predict_proba(X))


@pytest.mark.parametrize("oracle", ["linear", "matrix"])
def test_finite_classes_dask_fit_equals_memory_fit(client, oracle):
    """LinearOracle's and MatrixOracle's correlate and project (Aᵀr by the workers'
    lanes, the answer's outputs made on the workers) under three boosters."""
    X, y = _data(2)
    n = len(y)
    H = np.sign(X[:, :3]) * np.abs(X[:, 3:4]) / (1.0 + np.abs(X[:, 3:4]))

    def make():
        return (LinearOracle(block_size=BLOCK) if oracle == "linear"
                else MatrixOracle(H, block_size=BLOCK))

    data = X if oracle == "linear" else np.arange(n, dtype=np.float64)[:, None]
    data_d = da.from_array(data, chunks=(1000, data.shape[1]))
    target = X[:, 0] + (y == "yes")
    for build, t in (
        (lambda: CoordinateBoostingClassifier(make(), loss="logistic", step="wolfe",
                                              n_estimators=8, block_size=BLOCK,
                                              duality_gap=False), y),
        (lambda: FunctionalGradientRegressor(make(), n_estimators=8, block_size=BLOCK),
         target),
        (lambda: MirrorBoostingClassifier(make(), n_estimators=8, block_size=BLOCK), y),
    ):
        mem, dk = build().fit(data, t), build().fit(data_d, t)
        assert len(mem.history_["loss"]) > 3
        _same_model(mem, dk)
    # the duality gap: solved over every row in one process, so not on a cluster
    gap = lambda duality_gap: CoordinateBoostingClassifier(  # noqa: E731
        make(), n_estimators=4, block_size=BLOCK, duality_gap=duality_gap)
    with pytest.raises(NotDistributedError, match="duality_gap=True"):
        gap(True).fit(data_d, y)
    mem, dk = gap("auto").fit(data, y), gap("auto").fit(data_d, y)
    assert "gap" in mem.history_ and "gap" not in dk.history_ and dk.optimal_loss_ is None
    for key in set(dk.history_) - {"time", "cumulative_time"}:
        np.testing.assert_array_equal(mem.history_[key], dk.history_[key], err_msg=key)


def test_accelerated_what_does_not_distribute_says_so(client):
    X, y = _data(0, n=2000)
    Xd = da.from_array(X, chunks=500)
    with pytest.raises(NotDistributedError, match="kernel form"):
        AcceleratedMarginClassifier(kernel="rbf", n_estimators=2).fit(Xd, y)
    with pytest.raises(OracleCapabilityError, match="StumpOracle is not one"):
        AcceleratedMarginClassifier(StumpOracle(), n_estimators=2).fit(Xd, y)


def test_bad_input_on_dask_names_it(client):
    X, y = _data(0, n=3000)
    bad = X.copy()
    bad[2500, 3] = np.inf  # NaN is a missing value (test_dask_fit_with_nan_...)
    with pytest.raises(ValueError, match="X contains infinity"):
        _booster().fit(da.from_array(bad, chunks=1000), y)
    with pytest.raises(ValueError, match="exactly two classes"):
        _booster().fit(da.from_array(X, chunks=1000), np.zeros(3000))
    with pytest.raises(ValueError, match="y has 2999 entries"):
        _booster().fit(da.from_array(X, chunks=1000), y[:-1])
    with pytest.raises(ValueError, match="sample_weight contains negative"):
        _booster().fit(da.from_array(X, chunks=1000), y, sample_weight=-np.ones(3000))
    with pytest.raises(TypeError, match="X must be numeric"):
        _booster().fit(da.from_array(X.astype(str), chunks=1000), y)


@pytest.mark.parametrize("make", [
    lambda: FunctionalGradientClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                         n_estimators=4),
    lambda: MirrorBoostingClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                     n_estimators=4),
], ids=["functional", "mirror"])
def test_a_class_only_rows_of_weight_0_hold_is_no_class_on_a_cluster(client, make):
    """Rows of weight 0 go before the classes are found, on a cluster as in memory: a
    class only they hold is none of the fit's (it was kept on a cluster: three classes
    against two); a binary fit left with one class is refused alike."""
    X, _ = _data(3, n=3000)
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # 0, 1, 2
    s = np.where(y == 2, 0.0, 1.0)
    Xd = da.from_array(X, chunks=1000)
    mem, dk = make().fit(X, y, sample_weight=s), make().fit(Xd, y, sample_weight=s)
    np.testing.assert_array_equal(dk.classes_, [0, 1])
    _same_fit(mem, dk)
    binary = (X[:, 0] > 0).astype(int)
    only_one = np.where(binary == 1, 1.0, 0.0)
    for fit_X in (X, Xd):
        with pytest.raises(ValueError, match="only one class"):
            _booster(n_estimators=3).fit(fit_X, binary, sample_weight=only_one)


def test_per_row_arrays_of_unknown_chunks_fit_as_in_memory(client, caplog):
    """X, y and sample_weight selected by one dask mask (rows of unknown count in each)
    fit as the same rows in memory (y was refused: 'y has nan entries'), and the
    scheduler meets no key twice with two tasks (dask/dask#9888's warning)."""
    import logging

    X, y = _data(4, n=4000)
    s = np.random.RandomState(4).exponential(size=len(y))
    Xd, yd, sd = (da.from_array(a, chunks=1000) for a in (X, y, s))
    keep = Xd[:, 2] > -1.0
    mask = X[:, 2] > -1.0
    mem = _booster(n_estimators=4).fit(X[mask], y[mask], sample_weight=s[mask])
    with caplog.at_level(logging.WARNING, logger="distributed"):
        dk = _booster(n_estimators=4).fit(Xd[keep], yd[keep], sample_weight=sd[keep])
    _same_fit(mem, dk)
    assert not [r for r in caplog.records if "run_spec" in r.getMessage()]
    with pytest.raises(ValueError, match="sample_weight must be 1-D"):
        _booster().fit(Xd, y, sample_weight=s[:, None])


def test_prediction_on_a_chunk_of_no_row_and_bad_input_on_dask_named(client):
    """A chunk of 0 rows (a mask may leave one) predicts as nothing (it raised
    scikit-learn's 0-sample error at compute); X of no feature or no row, 1-D X,
    2-D weights and a dask eval set or covers get errors that say what is wrong."""
    X, y = _data(5, n=3000)
    Xd = da.from_array(X, chunks=1000)
    model = _booster(n_estimators=3).fit(X, y)
    sparse = Xd[da.from_array((np.arange(3000) // 1000) != 1, chunks=1000)]
    for name in ("predict", "decision_function", "predict_proba"):
        got = getattr(model, name)(sparse).compute()
        keep = (np.arange(3000) // 1000) != 1
        np.testing.assert_array_equal(got, getattr(model, name)(X[keep]))
    staged = [a.compute() for a in model.staged_decision_function(sparse)]
    np.testing.assert_array_equal(staged[-1], model.decision_function(X[keep]))
    with pytest.raises(ValueError, match="Expected a 2-D dask array"):
        model.predict(Xd[:, 0])
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        _booster().fit(Xd[:, :0], y)
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        FunctionalGradientRegressor(StumpOracle(), n_estimators=2).fit(Xd[:0], X[:0, 0])
    with pytest.raises(NotDistributedError, match=r"eval_set\[0\].*NumPy"):
        _booster(n_estimators=2).fit(Xd[:2000], y[:2000], eval_set=[(Xd[2000:], y[2000:])])
    with pytest.raises(NotDistributedError, match="covers.*NumPy"):
        model.to_lightgbm(Xd)


def _stage_sums(blocks, a, *, c: float):
    """A stage with two outputs and a stat: the partition's sum."""
    return (a * c, a + c), float(np.sum(a))


def test_grouped_tasks_keep_each_partitions_outputs_and_stats(client):
    """``ClusterBlocks.place``: a task a worker runs several partitions (grouped by where
    the anchor's parts are, not in order), yet each partition's outputs and stats stay its
    own; a deferred stat, fetched with the next stats waited for, is its stage's."""
    from oracleboost.distributed.cluster import ClusterBlocks, part_value
    from oracleboost.rows.blocks import deferred_stat
    from oracleboost.rows.partitioned import Partitioned

    sizes = [PARTITION] * 5 + [77]
    a = np.random.RandomState(0).randn(sum(sizes))
    cuts = np.cumsum([0, *sizes])
    parts = [a[i:j] for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
    futures = client.scatter(parts, hash=False)
    anchor = Partitioned(tuple((f, None) for f in futures), tuple(sizes))
    blocks = ClusterBlocks(client, sizes, BLOCK)
    blocks.place(anchor)
    assert sorted(i for g in blocks.groups for i in g) == list(range(len(sizes)))
    assert len(blocks.groups) == 2  # 2 workers of one thread: a task each

    deferred = deferred_stat(2)(lambda blocks, a, *, c: _stage_sums(blocks, a, c=c))
    (scaled, shifted), later = blocks.map(deferred, anchor, c=2.0)
    (twice, _), stats = blocks.map(_stage_sums, scaled, c=1.0)  # fetches `later` too
    assert stats == [float(np.sum(p * 2.0)) for p in parts]
    assert later.get() == [float(np.sum(p)) for p in parts]

    def fetch(p):
        results = client.gather([f for f, _ in p.parts])
        return np.concatenate([part_value(r, k) for r, (_, k) in zip(results, p.parts,
                                                                     strict=True)])

    np.testing.assert_array_equal(fetch(shifted), a + 2.0)
    np.testing.assert_array_equal(fetch(twice), a * 2.0)
    blocks.settle()


# -- the functional-gradient regressor (Grubb & Bagnell 2011) ------------------------------
#: Each projection and loss with weights (some 0) or without, on data of seed 0 or 1:
#: both seeds and both kinds of weights meet each projection, and the losses whose
#: initial value is a weighted quantile of y meet both kinds of weights.
REGRESSOR_PARAMS = [
    (dict(projection="naive"), False, 0),
    (dict(projection="naive"), True, 1),
    (dict(projection="residual"), True, 0),
    (dict(projection="repeated", n_estimators=7), False, 1),
    (dict(projection="repeated", n_estimators=7), True, 0),
    (dict(loss="huber", schedule="inv_sqrt"), True, 1),  # init: the weighted median, by passes
    (dict(loss="huber", schedule="inv_sqrt"), False, 0),
    (dict(loss="absolute", init=0.0, projection="residual"), True, 0),
    (dict(loss="quantile", learning_rate=0.3), False, 1),
    (dict(loss="quantile", learning_rate=0.3), True, 0),
    (dict(query="correlate", projection="residual"), True, 1),  # ±1 stumps for s · v
    (dict(query="correlate", projection="residual"), False, 0),
]



def _regression_data(seed: int, n: int = 3 * PARTITION + 1234, d: int = 5):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, 1] = rng.randint(0, 7, n)  # ties, few distinct values
    y = 3.0 * X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.randn(n)
    return X, y


def _some_zero_weights(n: int, seed: int) -> np.ndarray:
    """Exponential weights, a tenth of them 0 (those rows go, in both fits)."""
    rng = np.random.RandomState(seed)
    s = rng.exponential(size=n)
    s[rng.rand(n) < 0.1] = 0.0
    return s


def _regressor(**kw):
    return FunctionalGradientRegressor(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                       **{"n_estimators": 10, **kw})


@pytest.mark.parametrize("params, weighted, seed", REGRESSOR_PARAMS, ids=_ids)
def test_regressor_dask_fit_equals_memory_fit(client, params, weighted, seed):
    """Every projection and pointwise loss, with and without weights (some 0): the
    rounds, stumps, coefficients, intercept and predictions of the fit in memory."""
    X, y = _regression_data(seed)
    s = _some_zero_weights(len(y), seed + 10) if weighted else None
    mem = _regressor(**params).fit(X, y, sample_weight=s)
    dk = _regressor(**params).fit(
        da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000),
        sample_weight=None if s is None else da.from_array(s, chunks=7000))
    _same_fit(mem, dk)
    assert not dk.__dict__.get("_state_")
    out = dk.predict(da.from_array(X, chunks=4000))
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), mem.predict(X))


def test_dask_fit_with_nan_equals_memory_fit(client):
    """Missing values: a feature with NaN in one partition only gets its missing-value
    bin on every partition (the union of the workers' answers), so the stumps, their
    learned sides and the predictions (NaN rows too) are those of the fit in memory;
    for ±1 stumps, regression stumps and label-coded stumps."""
    X, y = _regression_data(4)
    rng = np.random.RandomState(4)
    X[rng.rand(*X.shape) < 0.15] = np.nan
    X[:, 0] = np.where(X[:, 0] > 0, X[:, 0], np.nan)  # a feature whose NaN say much
    X[:, 2] = np.nan_to_num(X[:, 2])
    X[-100:, 2] = np.nan  # NaN in the last partition alone
    Xd = da.from_array(X, chunks=(3000, 2))
    mem = _regressor().fit(X, y)
    _same_fit(mem, dk := _regressor().fit(Xd, y))
    assert any(getattr(h, "default_left", None) is not None for h in mem.estimators_)
    np.testing.assert_array_equal(dk.predict(da.from_array(X, chunks=4000)).compute(),
                                  mem.predict(X))
    labels = np.where(np.isnan(X[:, 0]) | (y > 1), "a", "b")
    _same_fit(_booster(n_estimators=6).fit(X, labels), _booster(n_estimators=6).fit(Xd, labels))
    classes = np.digitize(y, [-0.5, 0.5]) + 2 * np.isnan(X[:, 0])
    kw = {"n_estimators": 5, "loss": "softmax", "query": "correlate"}
    _functional_classifier_fits_agree(X, classes, None, kw, rounds=3)


@pytest.mark.parametrize("group_bytes", [8, 2**24])
@pytest.mark.parametrize("bin_sample", [997, None])
def test_sampled_thresholds_are_those_in_memory(client, monkeypatch, bin_sample,
                                                group_bytes):
    """The bins are made on the workers from each partition's own sample rows, a run of
    features at a time (one feature a run at 8 bytes: every run boundary), with NaN, and
    are the thresholds in memory, so the fit is too."""
    from oracleboost.distributed import stumps as cluster_stumps

    monkeypatch.setattr(cluster_stumps, "_SAMPLE_GROUP_BYTES", group_bytes)
    X, y = _data(5, d=6)
    X[np.random.RandomState(5).rand(*X.shape) < 0.1] = np.nan
    oracle = StumpOracle(block_size=BLOCK, bin_sample=bin_sample)
    make = lambda: CoordinateBoostingClassifier(oracle, block_size=BLOCK,  # noqa: E731
                                                n_estimators=6)
    Xd = da.from_array(X, chunks=(3000, 4))
    thresholds = client.compute(cluster_stumps.sampled_thresholds(
        Xd.rechunk((PARTITION, -1)), (PARTITION,) * 3 + (1234,), oracle)).result()
    for got, want in zip(thresholds, oracle.bind(X).thresholds, strict=True):
        np.testing.assert_array_equal(got, want)
    _same_fit(make().fit(X, y), make().fit(Xd, y))


def test_regressor_equal_weights_cancel_in_memory_and_on_a_cluster(client):
    """Equal weights (any value) fit as no weights, bit for bit, in both places."""
    X, y = _regression_data(2, n=PARTITION + 100)
    mem = _regressor().fit(X, y)
    np.testing.assert_array_equal(
        mem.predict(X), _regressor().fit(X, y, sample_weight=np.full(len(y), 3.0)).predict(X))
    dk = _regressor().fit(da.from_array(X, chunks=2000), y,
                          sample_weight=np.full(len(y), 3.0))
    np.testing.assert_array_equal(mem.predict(X), dk.predict(X))


def test_regressor_what_does_not_distribute_says_so(client):
    X, y = _regression_data(0, n=3000)
    Xd = da.from_array(X, chunks=1000)
    with pytest.raises(NotDistributedError):
        FunctionalGradientRegressor(n_estimators=2).fit(Xd, y)  # the default: trees
    bad = y.copy()
    bad[5] = np.inf
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        _regressor().fit(Xd, bad)


#: As REGRESSOR_PARAMS: each loss, projection and query with weights or without, on
#: data of seed 0 or 1.
CLASSIFIER_PARAMS = [
    (dict(), False, 0),  # logistic, naive projection
    (dict(), True, 1),
    (dict(loss="exponential", projection="residual"), True, 0),
    (dict(projection="repeated", n_estimators=6), False, 1),
    (dict(loss="logistic", init=0.3, schedule="inv_sqrt", learning_rate=2.0), True, 1),
    (dict(query="correlate"), False, 0),
    (dict(query="correlate"), True, 1),
]


@pytest.mark.parametrize("params, weighted, seed", CLASSIFIER_PARAMS, ids=_ids)
def test_functional_classifier_dask_fit_equals_memory_fit(client, params, weighted, seed):
    """The binary functional-gradient classifier: its rounds (training error and margin
    included), stumps, coefficients, classes and probabilities, as in memory."""
    X, y = _data(seed)
    s = _some_zero_weights(len(y), seed + 20) if weighted else None
    _functional_classifier_fits_agree(X, y, s, {"n_estimators": 10, **params})


def _functional_classifier_fits_agree(X, y, s, params, rounds: int = 1) -> None:
    """A FunctionalGradientClassifier fitted on X in memory and on a dask array: the same
    fit, and the same predictions on a dask array of X."""
    make = lambda: FunctionalGradientClassifier(  # noqa: E731
        StumpOracle(block_size=BLOCK), block_size=BLOCK, **params)
    mem = make().fit(X, y, sample_weight=s)
    dk = make().fit(da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000),
                    sample_weight=None if s is None else da.from_array(s, chunks=7000))
    assert len(mem.history_["loss"]) >= rounds
    _same_fit(mem, dk)
    Xd = da.from_array(X, chunks=4000)
    for method in ("predict", "predict_proba", "decision_function"):
        if hasattr(mem, method):
            np.testing.assert_array_equal(getattr(dk, method)(Xd).compute(),
                                          getattr(mem, method)(X))


def test_functional_classifier_what_does_not_distribute_says_so(client):
    X, y = _data(0, n=3000)
    Xd = da.from_array(X, chunks=1000)
    make = lambda **kw: FunctionalGradientClassifier(  # noqa: E731
        StumpOracle(block_size=BLOCK), block_size=BLOCK, n_estimators=2, **kw)
    # a margin loss on three classes: refused in the words it is refused in memory
    message = "loss='logistic' scores one margin .binary. but y has 3 classes"
    with pytest.raises(ValueError, match=message):
        make(loss="logistic").fit(X, np.arange(3000) % 3)
    with pytest.raises(ValueError, match=message):
        make(loss="logistic").fit(Xd, np.arange(3000) % 3)


#: Each loss, projection and query with weights or without (the label-coded stumps
#: without weights: test_dask_fit_with_nan_equals_memory_fit).
MULTICLASS_PARAMS = [
    (dict(), False),  # 'auto': softmax for three classes, naive projection
    (dict(), True),
    (dict(loss="softmax", projection="residual", n_classes=2), True),
    (dict(loss="softmax", projection="repeated", n_estimators=5), False),
    (dict(loss="multiclass_hinge", schedule="inv_sqrt", learning_rate=1.0), True),
    (dict(loss="softmax", init=0.5), False),
    (dict(loss="softmax", query="correlate"), True),  # label-coded stumps
]


@pytest.mark.parametrize("params, weighted", MULTICLASS_PARAMS, ids=_ids)
def test_functional_multiclass_dask_fit_equals_memory_fit(client, params, weighted):
    """Vector scores (n, K) on the workers: the softmax and hinge gradients, stumps of
    vector leaves (the histograms of K columns) or label-coded stumps, the vote margin
    and error, f_0 from the classes' masses; as in memory."""
    params = dict(params)
    n_classes = params.pop("n_classes", 3)
    X, _ = _data(3)
    y = np.digitize(X[:, 0] + 0.4 * X[:, 1], [0.8, 2.0][:n_classes - 1])
    s = _some_zero_weights(len(y), 7) if weighted else None
    _functional_classifier_fits_agree(X, y, s, {"n_estimators": 8, **params}, rounds=5)


def test_the_squared_losss_next_histograms_are_shifted_on_a_cluster(client, monkeypatch):
    """The naive projection's next query is this one less a step along the answer: the
    workers count the answer's smaller side by bins, the client shifts the histograms
    (``StumpOracle(histogram_refresh)``), every 4th query summed from its rows, as in
    memory: the same fit."""
    from oracleboost.distributed.stumps import ClusterStumpOracle

    kernels_asked = []
    real = ClusterStumpOracle._histograms

    def recording(self, kernel, rows, outs, split=0):
        kernels_asked.append(kernel.__name__)
        return real(self, kernel, rows, outs, split)

    monkeypatch.setattr(ClusterStumpOracle, "_histograms", recording)
    X, y = _regression_data(5)
    make = lambda: FunctionalGradientRegressor(  # noqa: E731
        StumpOracle(block_size=BLOCK, histogram_refresh=4), block_size=BLOCK,
        n_estimators=10)
    dk = make().fit(da.from_array(X, chunks=(3000, 2)), y)
    _same_fit(make().fit(X, y), dk)
    assert kernels_asked.count("side_counts") == 10 - 3  # rounds 1, 5 and 9 summed
    assert kernels_asked.count("hist_1d") == 3
