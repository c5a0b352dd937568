"""Histogram trees over rows held in partitions
(:mod:`oracleboost.oracles.partitioned_hist_trees`) are the trees grown in memory, bit for
bit: proven here through the in-process backend that ``test_backend_extension`` defines
(partitions of unequal sizes held by two in-process "workers"); the Dask backend runs
the same oracle (``test_cluster_hist_trees``)."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from test_backend_extension import BLOCK, Held, HeldBackend, _data, _model, _scores, _split

from oracleboost._validation import normalise_weights
from oracleboost.engine.backends import Backend, register_backend
from oracleboost.oracles import HistTreeOracle
from oracleboost.oracles.partitioned_hist_trees import PartitionedHistTreeOracle
from oracleboost.rows import local_store
from oracleboost.rows.exchange import ThreadExchange
from oracleboost.rows.executor import PartitionRowBlocks, SubmittedCollective
from oracleboost.rows.parallel import max_threads
from oracleboost.rows.partition_blocks import PartitionBlocks, part_value
from oracleboost.rows.partitioned import NotDistributedError, with_ndim

#: The registered boosters whose rounds run on a backend's partitions (the totally
#: corrective ones need every row in one process; accelerated boosting a finite class).
BOOSTERS_ON_PARTITIONS = ["adaboost", "logistic-wolfe", "maboost", "madaboost",
                          "gradient-logistic", "gradient-softmax", "gradient-regression"]


@pytest.fixture
def held():
    backend = HeldBackend()
    with register_backend(lambda X: isinstance(X, Held), backend):
        yield backend


def _trees(**params):
    return HistTreeOracle(**{"num_leaves": 5, "min_data_in_leaf": 3, "block_size": BLOCK,
                             **params})


def _with_nan(X: np.ndarray, seed: int) -> np.ndarray:
    """NaN in column 2 of the first partition's rows only, in column 3 everywhere: a
    feature whose missing-value bin only some partitions' columns ask for."""
    rng = np.random.RandomState(seed + 50)
    X = X.copy()
    X[:64][rng.rand(64) < 0.2, 2] = np.nan
    X[rng.rand(len(X)) < 0.1, 3] = np.nan
    return X


def _tree(h):
    """The tree a hypothesis is (or votes with: a multiclass booster's), or None."""
    return getattr(getattr(h, "inner", h), "tree", None)


def _same_trees(got, expected) -> None:
    """The same hypotheses: each tree's digest (its splits and leaves) and gains."""
    assert [repr(h) for h in got.estimators_] == [repr(h) for h in expected.estimators_]
    for a, b in zip(got.estimators_, expected.estimators_, strict=True):
        if _tree(b) is not None:
            assert _tree(a).digest() == _tree(b).digest()
            np.testing.assert_array_equal(getattr(a, "inner", a).split_gain,
                                          getattr(b, "inner", b).split_gain)


@pytest.mark.parametrize("seed", (0, 1))
@pytest.mark.parametrize("name", BOOSTERS_ON_PARTITIONS)
def test_every_booster_on_partitions_grows_the_trees_grown_in_memory(held, name, seed):
    spec, model = _model(name, _trees())
    X, y = _data(spec.task, seed)
    X = _with_nan(X, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Held(X), y)
        expected = _model(name, _trees())[1].fit(X, y)
    assert held.calls[:2] in (["classification_data", "bind_hist_trees"],
                              ["regression_data", "bind_hist_trees"])
    ((sizes, groups),) = held.placed  # partitions of unequal sizes, in two groups
    assert len(set(sizes)) == 2 and len(groups) == 2
    np.testing.assert_array_equal(_scores(model, X), _scores(expected, X))
    for key, values in expected.history_.items():
        if "time" not in key:
            np.testing.assert_array_equal(model.history_[key], values, err_msg=key)
    _same_trees(model, expected)
    assert any(_tree(h) is not None for h in expected.estimators_)  # trees, not constants


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _bound_pair(held, X, **params):
    """The oracle bound in memory and over the held backend's partitions of X."""
    oracle = _trees(**params)
    rows = held._rows(X, BLOCK)
    on_parts = oracle._bind_partitioned(rows, held)
    assert isinstance(on_parts, PartitionedHistTreeOracle)
    return oracle.bind(X), on_parts, rows.blocks.sizes


def _held(a: np.ndarray, sizes: tuple):
    """``a`` in the backend's partitions, marked with its shape."""
    return with_ndim(_split(a, sizes), a.ndim, a.shape[1] if a.ndim == 2 else None)


def _same_answer(h_mem, h_parts) -> None:
    assert repr(h_mem) == repr(h_parts)
    if hasattr(h_mem, "tree"):
        assert h_mem.tree.digest() == h_parts.tree.digest()
        np.testing.assert_array_equal(_bits(h_mem.split_gain), _bits(h_parts.split_gain))
    out = h_parts.train_output
    got = np.concatenate([part_value(*p) for p in out.parts])  # (in-process: values)
    np.testing.assert_array_equal(_bits(got), _bits(h_mem.train_output))


@pytest.mark.parametrize("kept", (True, False), ids=("leaves-kept", "tree-walked"))
@pytest.mark.parametrize("seed", (0, 1, 2))
def test_each_query_on_partitions_is_the_query_in_memory(held, monkeypatch, seed, kept):
    """project (weighted, vector), correlate (±1, label-coded), on a feature subset,
    leaf- and depth-wise, with L2 leaves and monotone constraints: queries whose entries
    span many magnitudes (where the order of each sum shows in its bits), on few bins
    (each bin sums rows of every partition).  The training rows' outputs come from the
    rows of each leaf that the members kept, or (where none were kept: a place lost
    after the tree) from the tree walked on each partition's codes."""
    if not kept:
        monkeypatch.setattr(local_store, "take", lambda key: None)
    rng = np.random.RandomState(seed)
    n = 150
    X = _with_nan(rng.randn(n, 4), seed)
    big = np.ldexp(1.0, rng.randint(-40, 40, n))
    t = rng.randn(n) * big
    w = rng.rand(n) * np.ldexp(1.0, rng.randint(-30, 30, n))
    w[rng.rand(n) < 0.1] = 0.0
    R = rng.randn(n, 3) * big[:, None]
    w_norm = normalise_weights(w)  # (as a booster passes them to the workers)
    for params in (dict(max_bins=4), dict(growth="depth", max_depth=2, reg_lambda=0.5),
                   dict(num_leaves=7, min_child_weight=0.5),
                   dict(monotone_constraints=[1, -1, 0, 0])):
        mem, parts, sizes = _bound_pair(held, X, **params)
        asks = [("project", (t,), {}), ("project", (t, w_norm), {}),
                ("correlate", (t,), {}), ("correlate", (t,), {"features": [0, 2, 3]})]
        if "monotone_constraints" not in params:  # (scalar queries only, then)
            asks += [("project", (R,), {}), ("correlate", (R,), {})]
        for method, args, kw in asks:
            h_mem = getattr(mem, method)(*args, **kw)
            h_parts = getattr(parts, method)(*(_held(a, sizes) for a in args), **kw)
            _same_answer(h_mem, h_parts)


def test_a_query_in_memory_and_a_backend_without_trees_are_refused_by_name(held):
    X, y = _data("binary")
    _, parts, _ = _bound_pair(held, X)
    with pytest.raises(NotDistributedError, match="held by the workers"):
        parts.correlate(np.ones(len(X)))
    with pytest.raises(NotDistributedError, match="held by the workers"):
        parts.project(np.ones(len(X)))
    with pytest.raises(NotDistributedError, match="stay with its partitions"):
        parts.codes  # noqa: B018
    with pytest.raises(ValueError, match="monotone_constraints"):
        _trees(monotone_constraints=[1, 0])._bind_partitioned(held._rows(X, BLOCK), held)

    class WithoutTrees(HeldBackend):
        bind_hist_trees = Backend.bind_hist_trees

    with register_backend(lambda a: isinstance(a, Held), WithoutTrees()):
        _, model = _model("adaboost", _trees())
        with pytest.raises(NotDistributedError,
                           match="HistTreeOracle does not run on a held array"):
            model.fit(Held(X), y)


def test_an_infinite_query_on_partitions_is_refused(held):
    X, _ = _data("binary")
    mem, parts, sizes = _bound_pair(held, X)
    t = np.ones(len(X))
    t[5] = np.inf
    with pytest.raises(ValueError, match="target"):
        mem.project(t)
    with pytest.raises(ValueError, match="target contains NaN or inf"):
        parts.project(_held(t, sizes))


@pytest.mark.parametrize("weighted", (False, True))
def test_a_tree_is_one_collective_call_exchanging_histograms_and_split_counts(
        held, monkeypatch, weighted):
    """A tree of L leaves is one collective call between the partitions' holders (and
    a stage for its channels, one for its outputs): they exchange L - 1 histograms (the
    root's, then the smaller child's of each split but the last one), each partition's
    of shape (F, B, C), and L - 1 counts of rows that went left; only the tree and its
    leaves' counts come back, no per-row array."""
    X, y = _data("regression", 3)
    w = np.random.RandomState(3).rand(len(y)) + 0.5
    mem, parts, sizes = _bound_pair(held, X, num_leaves=6)
    calls, exchanged = [], []
    real_map, real_submit = PartitionBlocks.map, PartitionBlocks.submit_collective
    real_allgather = ThreadExchange.allgather

    def recording_map(self, stage, *rows, **consts):
        calls.append(stage.__name__)
        return real_map(self, stage, *rows, **consts)

    def recording_submit(self, stage, *rows, **consts):
        wait = real_submit(self, stage, *rows, **consts)

        def recorded():
            stats = wait()
            calls.append(stage.__name__)
            exchanged.append(stats)
            return stats

        return recorded

    def recording_allgather(self, payload):
        if self.member == 0:
            exchanged.append(payload)
        return real_allgather(self, payload)

    monkeypatch.setattr(PartitionBlocks, "map", recording_map)
    monkeypatch.setattr(PartitionBlocks, "submit_collective", recording_submit)
    monkeypatch.setattr(ThreadExchange, "allgather", recording_allgather)
    args = (y, normalise_weights(w)) if weighted else (y,)
    h = parts.project(*(_held(a, sizes) for a in args))
    _same_answer(mem.project(*args), h)
    L = h.tree.n_leaves
    assert L == 6
    assert calls == ["_target_channels", "_grow_member", "_leaf_outputs"]
    *payloads, stats = exchanged
    histograms = [p for p in payloads if isinstance(p, list)]
    counts = [p for p in payloads if not isinstance(p, list)]
    assert len(histograms) == L - 1 and len(counts) == L - 1
    for payload in histograms:  # (member 0's partitions with rows of the leaf)
        for part, hist in payload:
            assert 0 <= part < len(sizes)
            assert hist.shape == (X.shape[1], parts.n_hist_bins, 2)
    assert all(isinstance(c, int) for c in counts)
    reports = [s for s in stats if s is not None]
    assert len(reports) == 2  # (one a member: the same tree)
    for grown, counts in reports:  # (the splits; the leaves' values are set here)
        np.testing.assert_array_equal(grown.tree.feature, h.tree.feature)
        np.testing.assert_array_equal(grown.tree.threshold, h.tree.threshold)
        np.testing.assert_array_equal(counts, h.tree.leaf_count)


@pytest.mark.skipif(max_threads() < 2, reason="numba has one thread here")
def test_a_partitions_outputs_run_on_one_of_numbas_threads(monkeypatch):
    """A partition's stage runs where the worker's other threads and processes hold the
    other cores: its compiled outputs kernel (a parallel region) runs on one of numba's
    threads, not on numba's default team, which would wait for a busy core's thread."""
    from oracleboost.oracles import _hist_tree_kernels as kernels
    from oracleboost.oracles.partitioned_hist_trees import _leaf_outputs

    real, seen = kernels.leaf_outputs, []

    def spy(*args):
        seen.append(numba.get_num_threads())
        return real(*args)

    monkeypatch.setattr(kernels, "leaf_outputs", spy)
    n = 10
    rows = np.array([0, 2, 5, 7, 1, 3, 4, 6, 8, 9], dtype=np.int32)  # leaves' segments
    local_store.keep(("tree", 0), (rows, np.array([0, 4]), np.array([4, 10])))
    (out,), _ = _leaf_outputs(PartitionRowBlocks(n, BLOCK), None, 0, tree_id="tree",
                              tree=(), value=np.array([-1.0, 2.0]))
    assert seen == [1]
    np.testing.assert_array_equal(out, np.where(np.isin(np.arange(n), rows[:4]), -1.0, 2.0))


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_a_tree_submitted_ahead_is_the_tree_asked_for_and_used_only_for_its_query(
        held, monkeypatch, seed):
    """``_prefetch(r, project=True)`` submits the collective call of ``project(r)``: the
    next ``project(r)`` waits for that call (no other), and answers as in memory; a
    query of another target, or with weights, makes its own call (the one submitted
    ahead is waited for first, its answer unread: one call at a time on the workers); a
    call submitted and never asked for is waited for when the fit settles."""
    X, y = _data("regression", seed)
    mem, parts, sizes = _bound_pair(held, X, num_leaves=6)
    submitted, waited = [], []
    real_submit = held.executor.submit_collective

    def recording_submit(fn, args, anchors, *, key):
        call = real_submit(fn, args, anchors, key=key)
        k = len(submitted)
        submitted.append(k)

        def wait():
            waited.append(k)
            return call.wait()

        return SubmittedCollective(wait, call.handles)

    monkeypatch.setattr(held.executor, "submit_collective", recording_submit)
    r = _held(y, sizes)
    parts._prefetch(r, project=True)
    assert submitted == [0] and waited == []
    _same_answer(mem.project(y), parts.project(r))
    assert submitted == [0] and waited == [0]  # the call submitted ahead, no new one
    other = y[::-1].copy()
    w = normalise_weights(np.random.RandomState(seed).rand(len(y)) + 0.5)
    for query, expected in (
            (lambda: parts.project(_held(other, sizes)), lambda: mem.project(other)),
            (lambda: parts.project(r, _held(w, sizes)), lambda: mem.project(y, w))):
        parts._prefetch(r, project=True)
        ahead = submitted[-1]
        _same_answer(expected(), query())
        assert submitted[-1] == ahead + 1  # the query's own call ...
        assert waited[-2:] == [ahead, ahead + 1]  # ... after the one submitted ahead
    parts._prefetch(r, project=True)
    parts.blocks.settle()
    assert waited == submitted  # the last one, never asked for, waited for too
    parts._prefetch(r)  # a correlate's hint: nothing submitted (its scale comes first)
    parts._prefetch(_held(np.c_[y, y], sizes), project=True)  # (n, K): not ahead
    assert len(submitted) == 6
