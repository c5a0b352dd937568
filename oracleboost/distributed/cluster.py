"""Fits on a Dask cluster: the row blocks of :mod:`._blocks`, held by the workers.

A fit on a ``dask.array.Array`` cuts the rows into the same blocks as a fit in memory,
and gives each worker whole **partitions** of ``BLOCKS_PER_PARTITION`` blocks (2**20
rows by default).  Everything a round does over the rows is a *stage* (a function
``stage(blocks, *rows, **consts) -> (outputs, stat)`` of :mod:`.boosters.row_passes`
or of an oracle) that :meth:`ClusterBlocks.map` runs on every partition, on the worker
that holds it (a worker's partitions one after the other in one task a worker thread,
once :meth:`ClusterBlocks.place` has grouped them: a task costs the scheduler and the
worker about a millisecond, a partition's pass a few):

* the stage's per-row **outputs** (margins, weights, the oracle's column) stay on the
  workers, as :class:`Partitioned` arrays: futures, one a partition;
* its **stat** (the lanes' partial sums, a partition's histogram: a few hundred floats)
  comes back to the client, and the client combines the partitions' stats in partition
  order, exactly as the fit in memory combines them (lanes left to right; a histogram
  partition by partition).

A partition starts on a block boundary, and a block on a lane boundary, so every lane
and every block holds the same rows as in memory, and each partial is the same number:
a fit on the cluster is the fit in memory, bit for bit, whatever the number of workers
(``tests/test_cluster.py``).  Only stats and the chosen hypothesis travel; the client
never holds X or any vector of ``n`` rows.

A stage's task never changes its inputs (``ClusterBlocks.in_place`` is False): when a
worker is lost, Dask runs the tasks that made its partitions again, from the graph, and
gets the same numbers.  The scheduler can, because every future a fit holds keeps the
tasks it came from (the stages of the earlier rounds back to the input chunks) as long
as the fit holds it: their specs, not their data (``tests/test_cluster_failure.py``).
What no task makes (data scattered to the lost worker) cannot be made again: the fit
then stops with a :class:`LostRowsError`.

The graphs a fit submits never share a key with the user's own computations nor with
each other, except the user's input keys below them: each submission reads the user's
arrays through a copy under a name of its own (:class:`FreshNames`).  A key submitted
twice with two different tasks (Dask's optimisation fuses a graph's tasks differently
depending on what else the graph holds) is a conflict the scheduler resolves by keeping
the first task and warning ("Detected different `run_spec`", dask/dask#9888); since the
fit keeps its tasks for the whole fit, any computation the user ran on the same arrays
meanwhile (a callback scoring the training data) would meet them.

Dask is an optional dependency (``pip install "oracleboost[dask]"``): nothing here is
imported unless ``fit`` is given a dask array.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from oracleboost.rows.blocks import BLOCKS_PER_PARTITION, LANE_ROWS, RowBlocks, outputs_only
from oracleboost.rows.partitioned import Derived, NotDistributedError, Partitioned, with_ndim

__all__ = ["ClusterBlocks", "FreshNames", "LostRowsError", "gather", "map_rows", "part_value",
           "persisted_parts", "rows_per_partition"]


def refuse_sparse_chunks(X: Any, who: str) -> None:
    """Refuse a dask array whose chunks are scipy sparse matrices (its ``_meta``): the
    fits and predictions on a cluster read dense partitions."""
    import scipy.sparse as sp

    if sp.issparse(getattr(X, "_meta", None)):
        raise TypeError(
            f"X is a dask array of scipy sparse chunks, which {who} does not take on a "
            "cluster; make its chunks dense (X.map_blocks(lambda b: b.toarray())), or fit "
            "in memory on the sparse matrix itself (StumpOracle, TreeOracle, LightGBMOracle "
            "and LinearOracle take scipy sparse X)"
        )


def client_for(who: str):
    """The active ``distributed.Client``, or an error saying how to start one."""
    try:
        from distributed import default_client
    except ImportError as exc:  # pragma: no cover - dask without distributed
        raise ImportError(
            f"{who} on a dask array needs dask.distributed: pip install "
            "'oracleboost[dask]'"
        ) from exc
    try:
        return default_client()
    except ValueError:
        raise ValueError(
            f"{who} on a dask array runs on the cluster of the active distributed.Client; "
            "none is running. Start one first (distributed.Client(LocalCluster()) on one "
            "machine, or Client('tcp://scheduler:8786')), or pass a NumPy array"
        ) from None


def rows_per_partition(block_size: int) -> int:
    """Rows of a worker's partition: ``BLOCKS_PER_PARTITION`` blocks.  A partition must
    start on a lane boundary (so that its lanes are the fit in memory's lanes): a block
    of more than ``LANE_ROWS`` rows must then be a multiple of it."""
    if block_size > LANE_ROWS and block_size % LANE_ROWS:
        raise ValueError(
            f"block_size={block_size}: a fit on a dask array needs a block_size of at most "
            f"{LANE_ROWS} or a multiple of it (the sums' lanes of {LANE_ROWS} rows must not "
            "straddle two workers' partitions)"
        )
    return BLOCKS_PER_PARTITION * block_size


class WorkerBlocks(RowBlocks):
    """A partition's blocks on its worker: one thread (the worker's threads take other
    partitions), and inputs left unchanged; outputs in recycled buffers."""

    in_place = False

    def __init__(self, n: int, block_size: int) -> None:
        super().__init__(n, block_size, n_jobs=1)

    def empty(self, shape: int | tuple[int, ...] | None = None) -> np.ndarray:
        return pooled_empty(self.n if shape is None else shape)


#: A worker's float64 buffers made for stages' outputs, by shape.  A round's outputs
#: are new arrays (a task must not overwrite its inputs), and a new array of megabytes
#: is memory the allocator has just returned to the system (Dask's nannies set
#: MALLOC_TRIM_THRESHOLD_ low): every page of it faults on first write.  Measured at
#: 10^7 × 20 on two local workers, that was more than half of a round's compute (162 ms
#: for the busier worker against 69 ms with the allocator keeping its memory).  Buffers
#: whose only reference is the pool's are handed out again instead.
_POOL: dict[tuple, list[np.ndarray]] = {}
_POOL_LOCK = threading.Lock()

#: Seconds a fit that raised waits for its pending stages before it cancels them (a
#: stage is one pass over a partition; a lost worker's never finishes, hence the cap).
_ABANDON_WAIT = 30.0


def pooled_empty(shape: int | tuple[int, ...]) -> np.ndarray:
    """A float64 array of ``shape``: a pooled one that nothing else references (the
    pool's list, this loop and ``getrefcount``'s argument: 3), or a new one, pooled."""
    key = (shape,) if isinstance(shape, int) else tuple(shape)
    with _POOL_LOCK:
        buffers = _POOL.setdefault(key, [])
        for buf in buffers:
            if sys.getrefcount(buf) == 3:
                return buf
        out = np.empty(key)
        buffers.append(out)
        return out


def release_pool() -> None:
    """Let go of this process's pooled buffers (run on every worker after a fit)."""
    with _POOL_LOCK:
        _POOL.clear()


def part_value(result: Any, index: tuple[int, int] | None) -> Any:
    """A partition's value from its future's ``result``: the result itself (``index``
    None: a persisted chunk), or the ``k``-th output of the ``pos``-th partition of the
    task :meth:`ClusterBlocks.map` ran for its group (``index = (pos, k)``)."""
    if index is None:
        return result
    pos, k = index
    return result[pos][0][k]


def _value(ref: tuple) -> Any:
    """A stage's argument on its worker: ``("const", value, None)``, ``("ref", result,
    index)`` or ``("derived", result, index, fn, args)`` (a :class:`Derived`'s part)."""
    kind, value, index = ref[:3]
    if kind == "const":
        return value
    value = part_value(value, index)
    return value if kind == "ref" else ref[3](value, *ref[4])


def _run_group(stage: Callable, sizes: list, block_size: int, refs: list,
               consts: dict, anchors: list | None = None) -> list:
    """``stage`` on each partition of a group (one worker's), in order: one task for
    them all, so that a round costs a task a worker and stage, not a task a partition
    (each task costs the scheduler and the worker about a millisecond).  Each partition
    has blocks of its own, exactly as when it runs alone: the same bits.  ``anchors``
    (the group's partitions of the placed data, unread) only make the task depend on
    them: see :meth:`ClusterBlocks.map`."""
    return [stage(WorkerBlocks(n, block_size), *map(_value, r), **consts)
            for n, r in zip(sizes, refs, strict=True)]


def _group_stats(results: list) -> list:
    return [(len(outputs), stat) for outputs, stat in results]


class LostRowsError(RuntimeError):
    """A fit's rows were lost on the cluster and cannot be computed again."""


#: What a fit on a dask array says when its futures are cancelled, by the reason Dask
#: gives (``FutureCancelledError.reason``): the cluster's events, and what to do.
_CANCELLED = {
    "scheduler-restart": (
        "the cluster was restarted during the fit (Client.restart), which drops every "
        "result its workers held, the fit's rows among them; fit again on the restarted "
        "cluster"),
    "scheduler-connection-lost": (
        "the client lost its connection to the Dask scheduler during the fit (the "
        "scheduler stopped, or the network between them failed), and with it every "
        "result the workers held for the fit; fit again once the client is connected "
        "to a scheduler"),
}


def lost_rows_message(exc: BaseException, client: Any = None,
                      generation: int | None = None) -> str:
    """What a fit whose futures were cancelled (``exc``: Dask's ``CancelledError``, of
    one future or of several) lost, and what to do: a cluster event (a restart, a lost
    scheduler) or the data no task can make again.  The reason Dask gives names the
    event only for the futures it cancels itself; the fit's next futures, whose inputs
    went with it, are cancelled for 'lost dependencies' (or no reason): so the client
    says too, by its ``generation`` (counted up by a restart; ``generation`` is the
    one the fit started in) and its status (no longer running without a scheduler)."""
    groups = getattr(exc, "error_groups", None)  # (``wait``'s error: reasons by group)
    reason = groups[0].reason if groups else getattr(exc, "reason", None)
    if generation is not None and getattr(client, "generation", generation) != generation:
        reason = "scheduler-restart"
    elif reason != "scheduler-restart" and getattr(client, "status", "running") != "running":
        reason = "scheduler-connection-lost"
    if reason in _CANCELLED:
        return f"a fit on a dask array lost its rows: {_CANCELLED[reason]}"
    return (
        "a fit on a dask array lost rows that cannot be computed again: a lost worker "
        "held data that no task makes (a dask array made from client.scatter's "
        "futures), or the fit's futures were cancelled (Client.cancel); make X from "
        "tasks (dask.array.from_array, from_zarr, map_blocks, ...) so that Dask can "
        "make a lost worker's rows again"
    )


def gather(client: Any, futures: list, generation: int | None = None) -> list:
    """``client.gather(futures)``, saying what a cancelled future means to a fit that
    started in the client's ``generation`` (see :func:`lost_rows_message`)."""
    from concurrent.futures import CancelledError

    try:
        return client.gather(futures)
    except CancelledError as exc:
        # Dask makes a lost worker's results again from their tasks; a cancelled future
        # means it could not: the whole cluster's results dropped (a restart, a lost
        # scheduler), or data that only a lost worker held, or a cancel
        raise LostRowsError(lost_rows_message(exc, client, generation)) from exc


class _PendingStats:
    """A stage's stats on the cluster, by partition, fetched on the first ``get()``
    together with every other pending stage's."""

    def __init__(self, blocks: ClusterBlocks, groups: list, futures: list) -> None:
        self.blocks, self.groups, self.futures = blocks, groups, futures
        self._stats: list | None = None
        self.n_outputs = 0

    def fill(self, gathered: list) -> None:
        self._stats = [None] * self.blocks.n_partitions
        for g, group_stats in zip(self.groups, gathered, strict=True):
            for i, (self.n_outputs, stat) in zip(g, group_stats, strict=True):
                self._stats[i] = stat
        self.futures = []  # released: the client holds the numbers now

    def get(self) -> list:
        if self._stats is None:
            self.blocks._fetch_pending()
        assert self._stats is not None
        return self._stats


class ClusterBlocks(RowBlocks):
    """The row blocks of a fit on a cluster: :class:`RowBlocks` (the same blocks and
    lanes), with :meth:`map` running a stage on every partition's worker.

    Parameters
    ----------
    client : distributed.Client
    sizes : sequence of int
        Rows of each partition, in order (all but the last ``rows_per_partition``).
    block_size : int
    """

    in_place = False
    #: A fit on a cluster keeps no running state: it lives on the workers (futures that
    #: a pickle could not carry, and that would hold the workers' memory).
    keeps_state = False

    def __init__(self, client: Any, sizes: Sequence[int], block_size: int) -> None:
        self.sizes = tuple(int(k) for k in sizes)
        super().__init__(sum(self.sizes), block_size)
        self.client = client
        self.generation = getattr(client, "generation", None)  # (a restart counts it up)
        # a task a partition until ``place`` groups them by worker
        self.groups: list[list[int]] = [[i] for i in range(len(self.sizes))]
        self._anchor: Partitioned | None = None  # what ``place`` grouped by
        self._pending: list[_PendingStats] = []  # stats submitted and not yet fetched

    def _fetch_pending(self) -> None:
        """Every pending stage's stats, in one ``gather`` (one round trip)."""
        pending, self._pending = self._pending, []
        gathered = gather(self.client, [f for p in pending for f in p.futures],
                          self.generation)
        start = 0
        for p in pending:
            stop = start + len(p.futures)
            p.fill(gathered[start:stop])  # (which lets go of p's futures)
            start = stop

    def cells(self, width: int, lane: int) -> ClusterBlocks:
        """The blocks of ``width`` cells a row, each partition's cells with its rows (on
        the same worker)."""
        cells = ClusterBlocks(self.client, [m * width for m in self.sizes], lane)
        cells.groups = self.groups
        return cells

    def settle(self) -> None:
        """Wait for the stages whose stats are still pending, so that a fit that ends
        lets go of no running task (Dask would log the cancelled task as a warning), and
        let the workers free their pooled buffers."""
        if self._pending:
            self._fetch_pending()
        self.client.run(release_pool)

    def abandon(self) -> None:
        """A fit that raised: cancel the stages whose stats are still pending and let the
        workers free their pooled buffers, without raising over the fit's own error (a
        lost cluster cannot be asked either; the pool is then gone with its workers).

        The pending stages are waited for (briefly) before they are cancelled: a
        cancelled task that is already running cannot be stopped, and one that takes a
        pooled buffer after ``release_pool`` has run would keep it in the worker's pool
        (seen in CI: two buffers left on each worker)."""
        from distributed import wait

        pending, self._pending = self._pending, []
        futures = [f for p in pending for f in p.futures]
        if futures:
            with contextlib.suppress(Exception):
                wait(futures, timeout=_ABANDON_WAIT)
            with contextlib.suppress(Exception):
                self.client.cancel(futures)
        with contextlib.suppress(Exception):
            self.client.run(release_pool)

    def lane_map(self, fn: Callable) -> None:
        raise NotDistributedError("a cluster's rows are passed over by map(stage), on the "
                                  "workers")

    @property
    def n_partitions(self) -> int:
        return len(self.sizes)

    def place(self, anchor: Partitioned) -> None:
        """Run later stages a task per worker thread rather than a task per partition:
        the partitions grouped by the worker that holds ``anchor``'s (the largest per-row
        data, the oracle's codes), each worker's split into as many runs of consecutive
        partitions as it has threads.  The grouping changes where and in how many tasks
        the partitions run, never a partition's numbers nor the order the client
        combines them in, so it does not change a bit of the fit."""
        from concurrent.futures import CancelledError

        from distributed import wait

        futures = [f for f, _ in anchor.parts]
        try:
            wait(futures)
        except CancelledError as exc:
            raise LostRowsError(lost_rows_message(exc, self.client, self.generation)) from exc
        holders = self.client.who_has(futures)
        self._anchor = anchor
        threads = self.client.nthreads()
        by_worker: dict[str, list[int]] = {}
        for i, f in enumerate(futures):
            where = sorted(holders.get(f.key, ()))
            by_worker.setdefault(where[0] if where else "", []).append(i)
        groups = []
        for worker, parts in by_worker.items():
            runs = max(1, min(len(parts), threads.get(worker, 1)))
            cuts = [len(parts) * r // runs for r in range(runs + 1)]
            groups += [parts[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        self.groups = sorted(groups)

    def map(self, stage: Callable, *rows: Any, **consts: Any) -> tuple[tuple, Any]:
        """``stage(blocks, *rows, **consts)`` on every partition (``Partitioned`` rows give
        each partition its own part; anything else goes to every partition as it is):
        ``(outputs as Partitioned, [stat of each partition, in order])`` (for a
        ``deferred_stat`` stage, an object whose ``get()`` returns that list)."""
        # one graph a stage (``client.map``: one message to the scheduler), a task a
        # group of partitions (see ``place``), its keys named after the stage so that
        # the dashboard and the task stream say which pass a task is
        name = f"{getattr(stage, '__name__', 'stage')}-{uuid.uuid4().hex}"
        groups = self.groups
        refs = [[[_ref(r, i) for r in rows] for i in g] for g in groups]
        n_groups = len(groups)
        # A task reading no per-row data of the workers (a stage making new rows from
        # numbers alone) would run on whichever worker the scheduler picks, which then
        # holds another worker's rows (measured: a worker holding twice its share of
        # starting weights); it is made to depend on its group's placed data instead,
        # so the scheduler runs it where that data is, as every other stage
        anchors = [None] * n_groups
        if self._anchor is not None and not any(isinstance(r, Partitioned) for r in rows):
            anchors = [[self._anchor.parts[i][0] for i in g] for g in groups]
        results = self.client.map(_run_group, [stage] * n_groups,
                                  [[self.sizes[i] for i in g] for g in groups],
                                  [self.block_size] * n_groups, refs, [consts] * n_groups,
                                  anchors, key=[f"{name}-{j}" for j in range(n_groups)])
        n_out = getattr(stage, "n_outputs", None)
        stats: Any = [None] * len(self.sizes)
        if n_out is None or getattr(stage, "stat_later", False):
            pending = _PendingStats(self, groups, self.client.map(
                _group_stats, results, key=[f"{name}-stat-{j}" for j in range(n_groups)]))
            self._pending.append(pending)
            if n_out is None:  # wait for them now
                stats = pending.get()
                n_out = pending.n_outputs
            else:  # a deferred stat: fetched with the next stats waited for
                stats = pending
        # else: no stat: the next stage is submitted at once, behind this one on the
        # same workers, and the client makes no round trip for this one
        where: list = [None] * len(self.sizes)  # (the group's future, position in it)
        for g, f in zip(groups, results, strict=True):
            for pos, i in enumerate(g):
                where[i] = (f, pos)
        outputs = tuple(Partitioned(tuple((f, (pos, k)) for f, pos in where), self.sizes)
                        for k in range(n_out))
        return outputs, stats

    def map_one(self, part: int, stage: Callable, *rows: Any, **consts: Any) -> Any:
        """The stat of ``stage`` on partition ``part`` alone, run on a worker (one task:
        a stage that reads one lane, say, need not visit every partition)."""
        name = f"{getattr(stage, '__name__', 'stage')}-{uuid.uuid4().hex}"
        future = self.client.submit(_run_group, stage, [self.sizes[part]], self.block_size,
                                    [[_ref(r, part) for r in rows]], consts, key=name)
        try:
            return gather(self.client, [future], self.generation)[0][0][1]
        finally:
            future.release()

    def full(self, value: float | np.ndarray) -> Partitioned:
        """A per-row array of ``value`` (a number, or a row of shape (K,)), on the
        workers."""
        value = np.asarray(value, dtype=np.float64)
        (out,), _ = self.map(_full, value=value)
        return with_ndim(out, 1 + value.ndim, value.shape[0] if value.ndim else None)


def _ref(row: Any, i: int) -> tuple:
    """Partition ``i``'s argument of a stage (see :func:`_value`)."""
    if isinstance(row, Derived):
        return ("derived", *row.parts[i], row.fn, row.args)
    if isinstance(row, Partitioned):
        return ("ref", *row.parts[i])
    return ("const", row, None)


@outputs_only(1)
def _full(blocks: RowBlocks, *, value: np.ndarray) -> tuple[tuple, None]:
    return (np.full((blocks.n,) + value.shape, value),), None


def _same(block):
    return block


class FreshNames:
    """Copies of dask arrays under names no other graph uses: ``fresh(a)`` is ``a``
    behind one task a chunk that returns it, named ``oracleboost-<count>-<fit's token>``.

    Every array derived from such a copy (rechunked, masked, cast) has keys of its own
    too, so two graphs built on two copies share only the user's keys below; Dask's
    optimisation fuses most of those into the copy's tasks (a chain of one task a chunk
    becomes one task under a new name), so that the user's own computations on the same
    arrays, before, during or after the fit, meet few of the fit's keys and none that
    the fit built.  A fit makes one copy for each graph it submits: the same copy in
    two submissions would give its derived keys two sets of tasks (fused differently in
    each graph), a conflict the scheduler warns about (dask/dask#9888).
    ``graph_manipulation.clone``, which would rename every key, fails on sliced and
    rechunked arrays (dask 2026.8: "Missing dependency").
    """

    def __init__(self) -> None:
        self._token = uuid.uuid4().hex
        self._count = itertools.count()

    def __call__(self, a: Any, chunks: tuple | None = None) -> Any:
        """A copy of ``a``; ``chunks``: its chunks, when ``a``'s are unknown (NaN)."""
        return a.map_blocks(_same, name=f"oracleboost-{next(self._count)}-{self._token}",
                            chunks=a.chunks if chunks is None else chunks, dtype=a.dtype,
                            meta=a._meta)


def persisted_parts(array: Any, sizes: Sequence[int]) -> Partitioned:
    """A :class:`Partitioned` of a persisted 1-D dask array whose chunks are the
    partitions (``client.persist``: the chunks held by the workers as futures)."""
    from dask.core import flatten
    from distributed import futures_of

    futures = {f.key: f for f in futures_of(array)}
    return Partitioned(tuple((futures[k], None) for k in flatten(array.__dask_keys__())),
                       tuple(int(k) for k in sizes))


def map_rows(method: Callable[[np.ndarray], np.ndarray], X: Any, *, dtype: Any,
             columns: int | None = None) -> Any:
    """``method`` on every row chunk of the dask array ``X``, as a dask array: shape
    (n,) when ``columns`` is None, else (n, columns)."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got {X.ndim} dimensions")
    X = X.rechunk({1: -1})
    if columns is None:
        return X.map_blocks(method, drop_axis=1, dtype=dtype)
    return X.map_blocks(method, chunks=(X.chunks[0], (columns,)), dtype=dtype)

