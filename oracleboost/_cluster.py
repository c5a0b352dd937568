"""Fits on a Dask cluster: the row blocks of :mod:`._blocks`, held by the workers.

A fit on a ``dask.array.Array`` cuts the rows into the same blocks as a fit in memory,
and gives each worker whole **partitions** of ``BLOCKS_PER_PARTITION`` blocks (2**20
rows by default).  Everything a round does over the rows is a *stage* (a function
``stage(blocks, *rows, **consts) -> (outputs, stat)`` of :mod:`.boosters.row_passes`
or of an oracle) that :meth:`ClusterBlocks.map` runs once per partition, on the worker
that holds it:

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

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._blocks import BLOCKS_PER_PARTITION, LANE_ROWS, RowBlocks, outputs_only

__all__ = ["ClusterBlocks", "FreshNames", "LostRowsError", "NotDistributedError",
           "Partitioned", "is_dask_collection", "map_rows", "persisted_parts",
           "rows_per_partition"]


class NotDistributedError(TypeError):
    """A fit on a dask array asked for something that needs every row in one process."""


def is_dask_collection(x: object) -> bool:
    """Whether ``x`` is a Dask collection (without importing Dask)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


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
    partitions), and inputs left unchanged."""

    in_place = False

    def __init__(self, n: int, block_size: int) -> None:
        super().__init__(n, block_size, n_jobs=1)


@dataclass(frozen=True)
class Partitioned:
    """A per-row array (or any per-row object) held by the workers, partition by
    partition: ``parts[i] = (future, index)``, the value being ``future``'s result, or
    its ``index``-th output when ``index`` is not None."""

    parts: tuple
    sizes: tuple
    ndim: int = 1

    @property
    def shape(self) -> tuple[int, ...]:
        return (sum(self.sizes),)


def _value(ref: tuple) -> Any:
    kind, value, index = ref
    return value if kind == "const" or index is None else value[0][index]


def _run_stage(stage: Callable, n: int, block_size: int, refs: list, consts: dict):
    return stage(WorkerBlocks(n, block_size), *map(_value, refs), **consts)


def _stat(result: tuple) -> tuple[int, Any]:
    outputs, stat = result
    return len(outputs), stat


class LostRowsError(RuntimeError):
    """A fit's rows were lost on the cluster and cannot be computed again."""


def _gather(client, futures: list) -> list:
    """``client.gather(futures)``, saying what a cancelled future means to a fit."""
    from concurrent.futures import CancelledError

    try:
        return client.gather(futures)
    except CancelledError as exc:
        # Dask makes a lost worker's results again from their tasks; a cancelled future
        # means it could not: data that only that worker held (arrays made from
        # client.scatter), or the fit's futures cancelled (Client.restart, cancel)
        raise LostRowsError(
            "a fit on a dask array lost rows that cannot be computed again: a lost worker "
            "held data that no task makes (a dask array made from client.scatter's "
            "futures), or the fit's futures were cancelled (Client.restart, "
            "Client.cancel); make X from tasks (dask.array.from_array, from_zarr, "
            "map_blocks, ...) so that Dask can make a lost worker's rows again"
        ) from exc


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

    def __init__(self, client, sizes, block_size: int) -> None:
        self.sizes = tuple(int(k) for k in sizes)
        super().__init__(sum(self.sizes), block_size)
        self.client = client

    def lane_map(self, fn: Callable) -> None:
        raise NotDistributedError("a cluster's rows are passed over by map(stage), on the "
                                  "workers")

    def map(self, stage: Callable, *rows: Any, **consts: Any) -> tuple[tuple, list]:
        """``stage(blocks, *rows, **consts)`` on every partition (``Partitioned`` rows give
        each partition its own part; anything else goes to every partition as it is):
        ``(outputs as Partitioned, [stat of each partition, in order])``."""
        submit = self.client.submit
        results = []
        for i, n in enumerate(self.sizes):
            refs = [("ref", *r.parts[i]) if isinstance(r, Partitioned) else ("const", r, None)
                    for r in rows]
            results.append(submit(_run_stage, stage, n, self.block_size, refs, consts,
                                  pure=False))
        n_out = getattr(stage, "n_outputs", None)
        if n_out is None:
            gathered = _gather(self.client, [submit(_stat, f, pure=False) for f in results])
            n_out, stats = gathered[0][0], [s for _, s in gathered]
        else:
            # no stat to wait for: the next stage is submitted at once, behind this one
            # on the same workers, and the client makes no round trip for this one
            stats = [None] * len(results)
        outputs = tuple(
            Partitioned(tuple((f, k) for f in results), self.sizes) for k in range(n_out)
        )
        return outputs, stats

    def full(self, value: float) -> Partitioned:
        """A per-row array of ``value``, on the workers."""
        (out,), _ = self.map(_full, value=float(value))
        return out


@outputs_only(1)
def _full(blocks: RowBlocks, *, value: float) -> tuple[tuple, None]:
    return (np.full(blocks.n, value),), None


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

    def __call__(self, a, chunks: tuple | None = None):
        """A copy of ``a``; ``chunks``: its chunks, when ``a``'s are unknown (NaN)."""
        return a.map_blocks(_same, name=f"oracleboost-{next(self._count)}-{self._token}",
                            chunks=a.chunks if chunks is None else chunks, dtype=a.dtype,
                            meta=a._meta)


def persisted_parts(array, sizes) -> Partitioned:
    """A :class:`Partitioned` of a persisted 1-D dask array whose chunks are the
    partitions (``client.persist``: the chunks held by the workers as futures)."""
    from dask.core import flatten
    from distributed import futures_of

    futures = {f.key: f for f in futures_of(array)}
    return Partitioned(tuple((futures[k], None) for k in flatten(array.__dask_keys__())),
                       tuple(int(k) for k in sizes))


def map_rows(method: Callable[[np.ndarray], np.ndarray], X, *, dtype,
             columns: int | None = None):
    """``method`` on every row chunk of the dask array ``X``, as a dask array: shape
    (n,) when ``columns`` is None, else (n, columns)."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got {X.ndim} dimensions")
    X = X.rechunk({1: -1})
    if columns is None:
        return X.map_blocks(method, drop_axis=1, dtype=dtype)
    return X.map_blocks(method, chunks=(X.chunks[0], (columns,)), dtype=dtype)

