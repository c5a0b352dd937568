"""Fits on a Dask cluster: the row blocks over partitions
(:mod:`oracleboost.rows.partition_blocks`), held by the workers.

The blocks over partitions run their stages through an executor; here it is Dask's
(:class:`DaskExecutor`: a stage's call a task on the worker that holds its partitions,
Dask's futures for handles, the retries and the recovery of a lost worker's results,
and the workers' pooled buffers).

A fit on a ``dask.array.Array`` cuts the rows into the same blocks as a fit in memory,
and gives each worker whole **partitions** of ``BLOCKS_PER_PARTITION`` blocks (2**20
rows by default).  Everything a round does over the rows is a *stage* (a function
``stage(blocks, *rows, **consts) -> (outputs, stat)`` of :mod:`oracleboost.optim.row_passes`
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

from oracleboost.rows import local_store
from oracleboost.rows.blocks import BLOCKS_PER_PARTITION, LANE_ROWS
from oracleboost.rows.exchange import MemberLostError
from oracleboost.rows.executor import PartitionRowBlocks, SubmittedCollective
from oracleboost.rows.partition_blocks import PartitionBlocks, part_value
from oracleboost.rows.partitioned import Partitioned

__all__ = ["ClusterBlocks", "DaskExecutor", "FreshNames", "LostRowsError", "gather",
           "map_rows", "part_value", "persisted_parts", "rows_per_partition"]


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


class WorkerBlocks(PartitionRowBlocks):
    """A partition's blocks on its worker: one thread (the worker's threads take other
    partitions), and inputs left unchanged; outputs in recycled buffers."""

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
    """Let go of this process's pooled buffers and of what its calls kept for later ones
    (:mod:`oracleboost.rows.local_store`; run on every worker after a fit)."""
    with _POOL_LOCK:
        _POOL.clear()
    local_store.clear()


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


class DaskExecutor:
    """The :class:`~oracleboost.rows.executor.Executor` of a fit on a Dask cluster: each
    call a task of ``client`` (on the worker that holds its inputs), the handles Dask's
    futures; a gather that says what a cancelled future means to the fit (a restart
    counts the client's ``generation`` up: the one the fit started in is kept)."""

    worker_blocks = WorkerBlocks

    def __init__(self, client: Any) -> None:
        self.client = client
        self.generation = getattr(client, "generation", None)
        self._exchanging = False  # (the workers' handler of collective calls installed)
        self._placed: dict = {}  # (where the collective calls' anchors were last found)

    def map(self, fn: Callable, *iterables: Sequence, key: list[str]) -> list:
        # (``client.map``: one message to the scheduler for the whole stage)
        return self.client.map(fn, *iterables, key=key)

    def submit(self, fn: Callable, *args: Any, key: str) -> Any:
        return self.client.submit(fn, *args, key=key)

    def gather(self, handles: list) -> list:
        return gather(self.client, handles, self.generation)

    def collective(self, fn: Callable, args: Sequence[tuple], anchors: Sequence[list], *,
                   key: str) -> list:
        """A task a worker for the members whose anchors it holds, pinned there, the
        members' payloads sent from worker to worker (:mod:`.exchange`); run again
        where a member's worker was lost."""
        from oracleboost.distributed import exchange

        self._register_exchange()
        return self._collective_outcome(
            lambda: exchange.collective(self.client, fn, args, anchors, key, self._placed))

    def submit_collective(self, fn: Callable, args: Sequence[tuple],
                          anchors: Sequence[list], *, key: str) -> SubmittedCollective:
        """:meth:`collective`, submitted now (its tasks queue behind the stages submitted
        before them)."""
        from oracleboost.distributed import exchange

        self._register_exchange()
        finish, tasks = exchange.submit_collective(self.client, fn, args, anchors, key,
                                                   self._placed)
        return SubmittedCollective(lambda: self._collective_outcome(finish), tasks)

    def _register_exchange(self) -> None:
        from oracleboost.distributed import exchange

        if not self._exchanging:
            self.client.register_plugin(exchange.ExchangePlugin())
            self._exchanging = True

    def _collective_outcome(self, call: Callable[[], list]) -> list:
        """``call()`` (a collective call's wait), its losses in this backend's words."""
        from concurrent.futures import CancelledError

        try:
            return call()
        except CancelledError as exc:
            raise LostRowsError(lost_rows_message(exc, self.client, self.generation)) \
                from exc
        except MemberLostError as exc:
            raise LostRowsError(f"a fit on a dask array kept losing workers: {exc}") \
                from exc

    def release(self, handle: Any) -> None:
        handle.release()

    def groups(self, handles: list) -> list[list[int]]:
        """The partitions grouped by the worker that holds ``handles``' data, each
        worker's split into as many runs of consecutive partitions as it has threads (a
        task costs the scheduler and the worker about a millisecond, a partition's pass
        a few)."""
        from concurrent.futures import CancelledError

        from distributed import wait

        try:
            wait(handles)
        except CancelledError as exc:
            raise LostRowsError(lost_rows_message(exc, self.client, self.generation)) from exc
        holders = self.client.who_has(handles)
        threads = self.client.nthreads()
        by_worker: dict[str, list[int]] = {}
        for i, f in enumerate(handles):
            where = sorted(holders.get(f.key, ()))
            by_worker.setdefault(where[0] if where else "", []).append(i)
        groups = []
        for worker, parts in by_worker.items():
            runs = max(1, min(len(parts), threads.get(worker, 1)))
            cuts = [len(parts) * r // runs for r in range(runs + 1)]
            groups += [parts[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        return sorted(groups)

    def settle(self) -> None:
        """Let the workers free their pooled buffers."""
        self.client.run(release_pool)

    def abandon(self, handles: list) -> None:
        """Cancel the pending tasks and let the workers free their pooled buffers,
        without raising over the fit's own error (a lost cluster cannot be asked either;
        the pool is then gone with its workers).

        The pending tasks are waited for (briefly) before they are cancelled: a
        cancelled task that is already running cannot be stopped, and one that takes a
        pooled buffer after ``release_pool`` has run would keep it in the worker's pool
        (seen in CI: two buffers left on each worker)."""
        from distributed import wait

        if handles:
            with contextlib.suppress(Exception):
                wait(handles, timeout=_ABANDON_WAIT)
            with contextlib.suppress(Exception):
                self.client.cancel(handles)
        with contextlib.suppress(Exception):
            self.client.run(release_pool)


class ClusterBlocks(PartitionBlocks):
    """The row blocks of a fit on a cluster: :class:`PartitionBlocks` whose stages run
    as tasks on the workers that hold the partitions (:class:`DaskExecutor`).

    Parameters
    ----------
    client : distributed.Client
    sizes : sequence of int
        Rows of each partition, in order (all but the last ``rows_per_partition``).
    block_size : int
    """

    def __init__(self, client: Any, sizes: Sequence[int], block_size: int) -> None:
        super().__init__(DaskExecutor(client), sizes, block_size)

    @property
    def client(self) -> Any:
        return self.executor.client

    @property
    def generation(self) -> int | None:
        return self.executor.generation

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

