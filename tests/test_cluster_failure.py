"""A fit on a dask array under trouble equals the fit in memory, bit for bit (issue 21):

* a worker lost in the middle of the fit (its process killed, as the OOM killer or a
  dead machine would): the scheduler runs the tasks that made its partitions again,
  from the graph the fit's futures keep (``oracleboost.distributed.cluster``), and gets the same
  numbers;
* what cannot be made again (futures cancelled by ``Client.restart``) is an error that
  says so;
* Ctrl-C keeps the completed rounds, as in memory;
* the user's own computations on the same dask arrays, before, during (from a callback)
  or after the fit, and two fits on the same arrays: no key is submitted twice with two
  different tasks (dask/dask#9888, "Detected different `run_spec`"), and each fit is the
  fit in memory.

One LocalCluster of 2 worker processes (with nannies, which start a killed worker's
process again) for the module.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pytest.importorskip("sklearn.callback")  # the hooks into the running fit

import dask  # noqa: E402
from test_cluster import BLOCK, PARTITION, _same_model  # noqa: E402
from test_cluster import _data as cluster_data  # noqa: E402

from oracleboost.boosters import (  # noqa: E402
    AcceleratedMarginClassifier,
    BoostingWarning,
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.distributed.cluster import LostRowsError  # noqa: E402
from oracleboost.oracles import HistTreeOracle, LinearOracle, StumpOracle  # noqa: E402

ROUNDS = 15


@pytest.fixture(scope="module")
def client():
    # A LocalCluster forgets a worker whose process is not back lost-worker-timeout
    # (15 s) after it died, and closes its nanny: a worker killed twice within that
    # time can be missing at the check, and the cluster would then shrink for good.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _data(seed: int, n: int = 3 * PARTITION + 1234):
    """test_cluster's data, with weights (rows of weight 0 go: masks, and partitions
    cut anew)."""
    X, y = cluster_data(seed, n)
    rng = np.random.RandomState(seed + 1000)
    s = rng.exponential(size=n)
    s[rng.rand(n) < 0.1] = 0.0
    return X, y, s


def _booster(n_estimators: int = ROUNDS, callback=None):
    model = CoordinateBoostingClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                         n_estimators=n_estimators)
    return model if callback is None else model.set_callbacks(callback)


class AfterRound:
    """A scikit-learn callback that calls ``action()`` once, when round ``at`` (counted
    from 0) has been committed."""

    def __init__(self, at: int, action):
        self.at, self.action, self.done = at, action, False

    def setup(self, estimator, context):
        pass

    def teardown(self, estimator, context):
        pass

    def on_fit_task_begin(self, estimator, context, **kwargs):
        pass

    def on_fit_task_end(self, estimator, context, **kwargs):
        if context.task_name == "round" and context.task_id == self.at and not self.done:
            self.done = True
            self.action()
        return False


# -- a lost worker ---------------------------------------------------------------------
def _kill_a_worker(client) -> None:
    """SIGKILL one worker's process: its data are gone, its nanny starts a new one."""
    address = sorted(client.scheduler_info()["workers"])[0]
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("when", ["between rounds", "during a round"])
def test_a_lost_worker_does_not_change_the_fit(client, when):
    """Round 5 of 15: the worker dies between two rounds (its partitions' margins,
    weights and binned features lost at once), or while the next round's tasks run."""
    client.wait_for_workers(2, timeout=60)
    X, y, s = _data(0)
    mem = _booster().fit(X, y, sample_weight=s)

    def kill():
        if when == "between rounds":
            _kill_a_worker(client)
        else:  # the next round is on the workers by then
            threading.Timer(0.05, _kill_a_worker, (client,)).start()

    callback = AfterRound(5, kill)
    dk = _booster(callback=callback).fit(da.from_array(X, chunks=(3000, 2)),
                                         da.from_array(y, chunks=5000), sample_weight=s)
    assert callback.done
    assert dk.stop_reason_ == mem.stop_reason_
    _same_model(mem, dk)


def _trees(callback=None):
    model = FunctionalGradientRegressor(
        HistTreeOracle(num_leaves=8, min_data_in_leaf=20, block_size=BLOCK),
        block_size=BLOCK, n_estimators=ROUNDS, learning_rate=0.3)
    return model if callback is None else model.set_callbacks(callback)


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
@pytest.mark.parametrize("when", ["between rounds", "during a round"])
def test_a_lost_worker_does_not_change_a_fit_of_trees(client, when, weighted):
    """Histogram trees, grown where the rows are by the workers together (a collective
    call, its members exchanging histograms by sockets of their own): a worker lost
    between two rounds, or while the next round's tasks (the next tree's members among
    them) run, and the call is run again where the partitions are then.  Without
    weights each next tree is submitted with the step, before the client waits for the
    step's stats (the oracle's ``_prefetch``): the call lost is one submitted ahead."""
    client.wait_for_workers(2, timeout=60)
    X, _, s = _data(2)
    s = s if weighted else None
    y = X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) - X[:, 2] * X[:, 3]
    mem = _trees().fit(X, y, sample_weight=s)

    def kill():
        if when == "between rounds":
            _kill_a_worker(client)
        else:
            threading.Timer(0.05, _kill_a_worker, (client,)).start()

    callback = AfterRound(5, kill)
    dk = _trees(callback).fit(da.from_array(X, chunks=(3000, 2)),
                              da.from_array(y, chunks=5000), sample_weight=s)
    assert callback.done
    assert dk.stop_reason_ == mem.stop_reason_
    _same_model(mem, dk)


def _accelerated(callback=None):
    model = AcceleratedMarginClassifier(LinearOracle(block_size=BLOCK), block_size=BLOCK,
                                        method="stochastic", n_estimators=ROUNDS, tol=0.0,
                                        random_state=0)
    return model if callback is None else model.set_callbacks(callback)


def _multiclass_mirror(callback=None):
    model = MirrorBoostingClassifier(StumpOracle(block_size=BLOCK), block_size=BLOCK,
                                     mirror="euclidean", n_estimators=ROUNDS)
    return model if callback is None else model.set_callbacks(callback)


@pytest.mark.parametrize("make, classes", [(_accelerated, 2), (_multiclass_mirror, 3)],
                         ids=["accelerated-stochastic", "mirror-multiclass"])
def test_a_lost_worker_does_not_change_other_fits(client, make, classes):
    """The finite class's rows bound on the workers and Algorithm 2's draws from one
    partition (map_one); MABoost's multiclass cells on their own blocks: all made again
    after a worker dies between rounds 5 and 6."""
    client.wait_for_workers(2, timeout=60)
    X, _, s = _data(5)
    y = np.digitize(X[:, 0], [-0.4, 0.4][:classes - 1])
    mem = make().fit(X, y, sample_weight=s)
    callback = AfterRound(5, lambda: _kill_a_worker(client))
    dk = make(callback).fit(da.from_array(X, chunks=(3000, 2)), y, sample_weight=s)
    assert callback.done
    assert dk.stop_reason_ == mem.stop_reason_
    _same_model(mem, dk)


def test_futures_cancelled_mid_fit_say_so(client):
    """What the scheduler cannot make again (here: everything, Client.restart) is an
    error that names the restart and what to do, not a bare FutureCancelledError nor
    advice on how X was made."""
    X, y, _ = _data(4, n=2 * PARTITION)
    model = _booster(callback=AfterRound(2, client.restart))
    with pytest.raises(LostRowsError, match=r"restarted during the fit \(Client.restart\)"
                       r".*fit again") as raised:
        model.fit(da.from_array(X, chunks=3000), y)
    assert "scatter" not in str(raised.value)


def test_a_scheduler_lost_mid_fit_says_so():
    """A scheduler that stops in the middle of a fit: the error names the lost scheduler
    and what to do, not the user's data (its own cluster: the scheduler goes)."""
    X, y, _ = _data(6, n=2 * PARTITION)
    # the client waits this long for the scheduler to come back before it gives up
    with dask.config.set({"distributed.comm.timeouts.connect": "5s"}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        stop = AfterRound(2, lambda: cluster.sync(cluster.scheduler.close))
        with pytest.raises(LostRowsError, match="lost its connection to the Dask "
                           "scheduler during the fit.*fit again") as raised:
            _booster(callback=stop).fit(da.from_array(X, chunks=3000), y)
    assert stop.done and "scatter" not in str(raised.value)


@pytest.mark.parametrize("reason, words", [
    ("scheduler-restart", "Client.restart"),
    ("scheduler-connection-lost", "Dask scheduler"),
    (None, "client.scatter"),
    ("lost dependencies", "client.scatter"),
])
def test_the_lost_rows_message_follows_the_reason(reason, words):
    """Only a cancel for another reason than a restart or a lost scheduler (a cancel, or
    data no task makes) speaks of how X was made."""
    from distributed.client import (
        CancelledFuturesGroup,
        FutureCancelledError,
        FuturesCancelledError,
    )

    from oracleboost.distributed.cluster import lost_rows_message

    one = FutureCancelledError("key", reason)
    assert words in lost_rows_message(one)
    several = FuturesCancelledError([CancelledFuturesGroup([one], one.reason)])
    assert lost_rows_message(several) == lost_rows_message(one)


def test_the_lost_rows_message_asks_the_client_after_lost_dependencies():
    """The fit's next futures after a restart or a lost scheduler are cancelled for
    'lost dependencies': the client's restart count and status name the event."""
    from types import SimpleNamespace

    from distributed.client import FutureCancelledError

    from oracleboost.distributed.cluster import lost_rows_message

    lost = FutureCancelledError("key", "lost dependencies")
    restarted = SimpleNamespace(generation=2, status="running")
    assert "Client.restart" in lost_rows_message(lost, restarted, generation=1)
    closed = SimpleNamespace(generation=1, status="closed")
    assert "Dask scheduler" in lost_rows_message(lost, closed, generation=1)
    running = SimpleNamespace(generation=1, status="running")
    assert "client.scatter" in lost_rows_message(lost, running, generation=1)


def _pooled_buffers(client) -> dict:
    """How many pooled output buffers each worker holds."""
    from oracleboost.distributed import cluster as _cluster

    return client.run(lambda: sum(len(b) for b in _cluster._POOL.values()))


def test_a_fit_that_raises_lets_the_workers_pooled_buffers_go(client):
    """The workers' recycled output buffers belong to the fit: one that raises (here a
    callback's error after round 4) frees them, as one that ends does."""
    X, y, _ = _data(5, n=2 * PARTITION)
    held = {}

    def fail():
        held.update(_pooled_buffers(client))
        raise RuntimeError("a callback failed")

    with pytest.raises(RuntimeError, match="a callback failed"):
        _booster(callback=AfterRound(3, fail)).fit(da.from_array(X, chunks=3000), y)
    assert sum(held.values()) > 0  # the fit had pooled buffers when it failed
    assert set(_pooled_buffers(client).values()) == {0}
    # and the cluster still fits the same model as memory
    _same_model(_booster().fit(X, y), _booster().fit(da.from_array(X, chunks=3000), y))


# -- Ctrl-C ----------------------------------------------------------------------------
def _interrupt():
    raise KeyboardInterrupt


def test_an_interrupt_from_a_callback_keeps_the_completed_rounds(client):
    X, y, s = _data(1)
    with pytest.warns(BoostingWarning, match="interrupted; the model keeps the 6"):
        mem = _booster(callback=AfterRound(5, _interrupt)).fit(X, y, sample_weight=s)
    with pytest.warns(BoostingWarning, match="interrupted; the model keeps the 6"):
        dk = _booster(callback=AfterRound(5, _interrupt)).fit(
            da.from_array(X, chunks=3000), y, sample_weight=s)
    assert mem.stop_reason_ == dk.stop_reason_ == "interrupted"
    _same_model(mem, dk)


def test_ctrl_c_while_the_workers_compute_keeps_the_completed_rounds(client):
    """SIGINT to this process while the fit waits for the workers (a round's stats):
    the round in flight is dropped, the completed ones are the fit in memory's."""
    X, y, _ = _data(2)
    pid = os.getpid()
    sigint = AfterRound(5, lambda: threading.Timer(
        0.05, os.kill, (pid, signal.SIGINT)).start())
    # Python's own handler, as in a terminal (a test run started in the background by a
    # script has SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dk = _booster(callback=sigint).fit(da.from_array(X, chunks=3000), y)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert dk.stop_reason_ == "interrupted"
    assert any("interrupted" in str(w.message) for w in caught)
    rounds = len(dk.history_["loss"])
    assert 6 <= rounds < ROUNDS
    _same_model(_booster(rounds).fit(X, y), dk)


# -- graph keys shared with the user's computations ------------------------------------
class _Conflicts(logging.Handler):
    """The scheduler's warnings about a key submitted again with another task."""

    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        message = record.getMessage()
        if "Detected different `run_spec`" in message:
            self.messages.append(message)


@contextmanager
def _no_key_conflicts():
    """The scheduler runs in this process (LocalCluster): listen to its log."""
    handler = _Conflicts()
    logger = logging.getLogger("distributed.scheduler")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    assert not handler.messages, handler.messages[0]


def _user_computations(X, y, s):
    """What a user computes on the arrays of the fit (the same keys, other graphs); in
    one graph, since two of the user's own graphs on the same arrays can conflict."""
    def compute():
        dask.compute(X.sum(), y, s.sum(), (s > 0).sum(), X[s > 0].sum(),
                     X.rechunk({1: -1}).astype(np.float64).sum(axis=1), X.mean(axis=0))
    return compute


def _inputs(kind: str, X, y, s):
    if kind == "from_array":
        return (da.from_array(X, chunks=(3000, 2)), da.from_array(y, chunks=5000),
                da.from_array(s, chunks=4000))
    if kind == "rechunked":  # the user's own rechunk keys under the fit's
        return (da.from_array(X, chunks=(1000, 5)).rechunk((2700, 3)),
                da.from_array(y, chunks=1000).rechunk(2222),
                da.from_array(s, chunks=1000).rechunk(3000))
    if kind == "persisted":  # keys that are futures already
        return dask.persist(*_inputs("rechunked", X, y, s))
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["from_array", "rechunked", "persisted"])
def test_user_computations_on_the_same_arrays(client, kind):
    """Before, during (a callback) and after a fit, and a second fit on the same
    arrays: no key conflict, and each fit is the fit in memory."""
    X, y, s = _data(3)
    mem = _booster(6).fit(X, y, sample_weight=s)
    Xd, yd, sd = _inputs(kind, X, y, s)
    user = _user_computations(Xd, yd, sd)
    with _no_key_conflicts():
        user()
        _same_model(mem, _booster(6, AfterRound(2, user)).fit(Xd, yd, sample_weight=sd))
        _same_model(mem, _booster(6).fit(Xd, yd, sample_weight=sd))
        user()


def _generated(block_info=None) -> np.ndarray:
    info = block_info[None]
    rng = np.random.default_rng(info["chunk-location"][0])  # a chunk's rows: its seed
    return rng.standard_normal(info["chunk-shape"])


@pytest.mark.parametrize("make", ["da.random", "map_blocks"])
def test_generated_features(client, make):
    """X made on the workers (the fit reads it twice: a sample, then every row), with
    the user computing on it mid-fit."""
    n = 2 * PARTITION + 777
    if make == "da.random":
        Xd = da.random.default_rng(7).standard_normal((n, 4), chunks=(2500, 4))
    else:
        Xd = da.map_blocks(_generated, chunks=((2500,) * (n // 2500) + (n % 2500,), (4,)),
                           dtype=np.float64)
    X = Xd.compute()
    y = np.where(X[:, 0] - X[:, 2] > 0.3, 1, 0)
    mem = _booster(6).fit(X, y)
    with _no_key_conflicts():
        dk = _booster(6, AfterRound(2, lambda: Xd.mean(axis=0).compute())).fit(Xd, y)
        Xd.sum().compute()
    _same_model(mem, dk)
