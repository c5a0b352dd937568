"""Row blocks over partitions: the rows of a fit held in partitions where an executor
keeps them (:mod:`.executor`), each stage run where its partition is.

A backend that splits the rows cuts them into the same blocks as a fit in memory, and
gives each place that holds rows whole **partitions** (``BLOCKS_PER_PARTITION`` blocks
each, the last shorter).  Everything a round does over the rows is a *stage* (a
function ``stage(blocks, *rows, **consts) -> (outputs, stat)`` of
:mod:`oracleboost.optim.row_passes` or of an oracle) that :meth:`PartitionBlocks.map`
runs on every partition, where it is held (a group of partitions in one call, once
:meth:`PartitionBlocks.place` has grouped them by where they are):

* the stage's per-row **outputs** (margins, weights, the oracle's column) stay where
  they were made, as :class:`~.partitioned.Partitioned` arrays: a handle a partition;
* its **stat** (the lanes' partial sums, a partition's histogram: a few hundred floats)
  comes back, and the caller combines the partitions' stats in partition order, exactly
  as the fit in memory combines them (lanes left to right; a histogram partition by
  partition).

A partition starts on a block boundary, and a block on a lane boundary, so every lane
and every block holds the same rows as in memory, and each partial is the same number:
a fit over partitions is the fit in memory, bit for bit, whatever the executor and the
grouping.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from oracleboost.rows.blocks import RowBlocks, outputs_only
from oracleboost.rows.executor import Executor, SubmittedCollective
from oracleboost.rows.partitioned import (
    Derived,
    NotDistributedError,
    Partitioned,
    PerPartition,
    with_ndim,
)

__all__ = ["PartitionBlocks", "PartitionedRows", "part_value", "run_group", "run_member"]


def part_value(result: Any, index: tuple[int, int] | None) -> Any:
    """A partition's value from its handle's ``result``: the result itself (``index``
    None: a partition's data as placed), or the ``k``-th output of the ``pos``-th
    partition of the call :meth:`PartitionBlocks.map` ran for its group (``index =
    (pos, k)``)."""
    if index is None:
        return result
    pos, k = index
    return result[pos][0][k]


def _value(ref: tuple) -> Any:
    """A stage's argument where it runs: ``("const", value, None)``, ``("ref", result,
    index)`` or ``("derived", result, index, fn, args)`` (a :class:`Derived`'s part)."""
    kind, value, index = ref[:3]
    if kind == "const":
        return value
    value = part_value(value, index)
    return value if kind == "ref" else ref[3](value, *ref[4])


def _ref(row: Any, i: int) -> tuple:
    """Partition ``i``'s argument of a stage (see :func:`_value`)."""
    if isinstance(row, PerPartition):
        return ("const", row.values[i], None)
    if isinstance(row, Derived):
        return ("derived", *row.parts[i], row.fn, row.args)
    if isinstance(row, Partitioned):
        return ("ref", *row.parts[i])
    return ("const", row, None)


def run_group(make_blocks: Callable[[int, int], RowBlocks], stage: Callable, sizes: list,
              block_size: int, refs: list, consts: dict, anchors: list | None = None
              ) -> list:
    """``stage`` on each partition of a group, in order: one call for them all, so that
    a round costs a call a group and stage, not a call a partition.  Each partition has
    blocks of its own (``make_blocks(n, block_size)``), exactly as when it runs alone:
    the same bits.  ``anchors`` (the group's partitions of the placed data, unread) only
    make the call depend on them: see :meth:`PartitionBlocks.map`."""
    return [stage(make_blocks(n, block_size), *map(_value, r), **consts)
            for n, r in zip(sizes, refs, strict=True)]


def run_member(exchange: Any, make_blocks: Callable[[int, int], RowBlocks], stage: Callable,
               sizes: list, block_size: int, refs: list, consts: dict) -> list:
    """A member of :meth:`PartitionBlocks.collective`: ``stage(exchange, blocks, *rows,
    **consts)`` on its group of partitions at once, ``blocks`` theirs (one a partition,
    as :func:`run_group` makes them) and each of ``rows`` a list of their values: the
    partitions' stats."""
    blocks = [make_blocks(n, block_size) for n in sizes]
    rows = [[_value(part[k]) for part in refs] for k in range(len(refs[0]) if refs else 0)]
    return stage(exchange, blocks, *rows, **consts)


def _group_stats(results: list) -> list:
    return [(len(outputs), stat) for outputs, stat in results]


class _PendingStats:
    """A stage's stats, by partition, fetched on the first ``get()`` together with
    every other pending stage's."""

    def __init__(self, blocks: PartitionBlocks, groups: list, futures: list) -> None:
        self.blocks, self.groups, self.futures = blocks, groups, futures
        self._stats: list | None = None
        self.n_outputs = 0

    def fill(self, gathered: list) -> None:
        self._stats = [None] * self.blocks.n_partitions
        for g, group_stats in zip(self.groups, gathered, strict=True):
            for i, (self.n_outputs, stat) in zip(g, group_stats, strict=True):
                self._stats[i] = stat
        self.futures = []  # released: the caller holds the numbers now

    def get(self) -> list:
        if self._stats is None:
            self.blocks._fetch_pending()
        assert self._stats is not None
        return self._stats


class PartitionBlocks(RowBlocks):
    """The row blocks of a fit whose rows are held in partitions: :class:`RowBlocks`
    (the same blocks and lanes), with :meth:`map` running a stage on every partition,
    where ``executor`` holds it.

    Parameters
    ----------
    executor : Executor
    sizes : sequence of int
        Rows of each partition, in order (all but the last ``BLOCKS_PER_PARTITION``
        blocks).
    block_size : int
    """

    in_place = False
    #: A fit over partitions keeps no running state: it lives where the partitions are
    #: (handles that a pickle could not carry, and that would hold that memory).
    keeps_state = False

    def __init__(self, executor: Executor, sizes: Sequence[int], block_size: int) -> None:
        self.sizes = tuple(int(k) for k in sizes)
        super().__init__(sum(self.sizes), block_size)
        self.executor = executor
        # a call a partition until ``place`` groups them
        self.groups: list[list[int]] = [[i] for i in range(len(self.sizes))]
        self._anchor: Partitioned | None = None  # what ``place`` grouped by
        self._pending: list[_PendingStats] = []  # stats submitted and not yet fetched
        self._calls: list[SubmittedCollective] = []  # collective calls not waited for

    def _fetch_pending(self) -> None:
        """Every pending stage's stats, in one ``gather`` (one round trip)."""
        pending, self._pending = self._pending, []
        gathered = self.executor.gather([f for p in pending for f in p.futures])
        start = 0
        for p in pending:
            stop = start + len(p.futures)
            p.fill(gathered[start:stop])  # (which lets go of p's handles)
            start = stop

    def cells(self, width: int, lane: int) -> PartitionBlocks:
        """The blocks of ``width`` cells a row, each partition's cells with its rows
        (where they are held)."""
        cells = object.__new__(type(self))  # (the same kind of blocks, on the same executor)
        PartitionBlocks.__init__(cells, self.executor, [m * width for m in self.sizes], lane)
        cells.groups = self.groups
        return cells

    def settle(self) -> None:
        """Wait for the stages whose stats are still pending, so that a fit that ends
        lets go of no running call, and let the executor free what the stages hold."""
        if self._pending:
            self._fetch_pending()
        self._wait_calls()
        self.executor.settle()

    def _wait_calls(self) -> None:
        """Wait for the collective calls submitted and not waited for (submitted ahead
        of a query that was not asked: their answers are not read, nor their errors)."""
        calls, self._calls = self._calls, []
        for call in calls:
            with contextlib.suppress(Exception):
                call.wait()

    def abandon(self) -> None:
        """A fit that raised: stop the stages whose stats are still pending and free
        what they hold, without raising over the fit's own error."""
        pending, self._pending = self._pending, []
        calls, self._calls = self._calls, []
        self.executor.abandon([f for p in pending for f in p.futures]
                              + [h for call in calls for h in call.handles])

    def lane_map(self, fn: Callable) -> None:
        raise NotDistributedError("rows held in partitions are passed over by map(stage), "
                                  "where each partition is")

    @property
    def n_partitions(self) -> int:
        return len(self.sizes)

    def place(self, anchor: Partitioned) -> None:
        """Run later stages a call per group of partitions rather than a call per
        partition: the partitions grouped by where ``anchor``'s are (the largest per-row
        data, the oracle's codes), as the executor groups them.  The grouping changes
        where and in how many calls the partitions run, never a partition's numbers nor
        the order their stats are combined in, so it does not change a bit of the fit."""
        groups = self.executor.groups([f for f, _ in anchor.parts])
        self._anchor = anchor
        self.groups = groups

    def map(self, stage: Callable, *rows: Any, **consts: Any) -> tuple[tuple, Any]:
        """``stage(blocks, *rows, **consts)`` on every partition (``Partitioned`` rows give
        each partition its own part; anything else goes to every partition as it is):
        ``(outputs as Partitioned, [stat of each partition, in order])`` (for a
        ``deferred_stat`` stage, an object whose ``get()`` returns that list)."""
        # one ``executor.map`` a stage, a call a group of partitions (see ``place``), its
        # keys named after the stage so that a cluster's dashboard says which pass a
        # task is
        name = f"{getattr(stage, '__name__', 'stage')}-{uuid.uuid4().hex}"
        groups = self.groups
        refs = [[[_ref(r, i) for r in rows] for i in g] for g in groups]
        n_groups = len(groups)
        # A call reading no per-row data (a stage making new rows from numbers alone)
        # could run anywhere, which would then hold another place's rows (measured on a
        # cluster: a worker holding twice its share of starting weights); it is made to
        # depend on its group's placed data instead, so it runs where that data is, as
        # every other stage
        anchors = [None] * n_groups
        if self._anchor is not None and not any(isinstance(r, Partitioned) for r in rows):
            anchors = [[self._anchor.parts[i][0] for i in g] for g in groups]
        executor = self.executor
        results = executor.map(run_group, [executor.worker_blocks] * n_groups,
                               [stage] * n_groups,
                               [[self.sizes[i] for i in g] for g in groups],
                               [self.block_size] * n_groups, refs, [consts] * n_groups,
                               anchors, key=[f"{name}-{j}" for j in range(n_groups)])
        n_out = getattr(stage, "n_outputs", None)
        stats: Any = [None] * len(self.sizes)
        if n_out is None or getattr(stage, "stat_later", False):
            pending = _PendingStats(self, groups, executor.map(
                _group_stats, results, key=[f"{name}-stat-{j}" for j in range(n_groups)]))
            self._pending.append(pending)
            if n_out is None:  # wait for them now
                stats = pending.get()
                n_out = pending.n_outputs
            else:  # a deferred stat: fetched with the next stats waited for
                stats = pending
        # else: no stat: the next stage is submitted at once, behind this one in the
        # same places, and no round trip is made for this one
        where: list = [None] * len(self.sizes)  # (the group's handle, position in it)
        for g, f in zip(groups, results, strict=True):
            for pos, i in enumerate(g):
                where[i] = (f, pos)
        outputs = tuple(Partitioned(tuple((f, (pos, k)) for f, pos in where), self.sizes)
                        for k in range(n_out))
        return outputs, stats

    def collective(self, stage: Callable, *rows: Any, **consts: Any) -> list:
        """``stage`` as a collective call (:mod:`.exchange`): one member a group of
        partitions (see :meth:`place`), all at once, each calling ``stage(exchange,
        blocks, *rows, **consts)`` for its partitions together (each of ``rows`` a list
        of their parts) and returning each partition's stat, in order.  The members
        talk through ``exchange`` alone.  Returns ``[stat of each partition, in
        order]``.

        A collective call makes no per-row outputs: nothing later is made from its
        members' results, so that an executor that makes a lost place's results again
        from their calls never has to run one member alone (its peers are gone)."""
        return self.submit_collective(stage, *rows, **consts)()

    def submit_collective(self, stage: Callable, *rows: Any,
                          **consts: Any) -> Callable[[], list]:
        """:meth:`collective`, submitted now: the returned function waits for it and
        returns its stats (the client waits on nothing before then: a call submitted
        before the wait for another stage's stats runs on the workers meanwhile)."""
        # one collective call at a time on the workers: two whose members started in
        # different orders on two workers would each wait for the other
        self._wait_calls()
        name = f"{getattr(stage, '__name__', 'stage')}-{uuid.uuid4().hex}"
        groups = self.groups
        executor = self.executor
        args = [(executor.worker_blocks, stage, [self.sizes[i] for i in g], self.block_size,
                 [[_ref(r, i) for r in rows] for i in g], consts) for g in groups]
        anchors = [[] if self._anchor is None else [self._anchor.parts[i][0] for i in g]
                   for g in groups]
        call = executor.submit_collective(run_member, args, anchors, key=name)
        self._calls.append(call)

        def stats() -> list:
            if call in self._calls:
                self._calls.remove(call)
            out: list = [None] * len(self.sizes)
            for g, group_stats in zip(groups, call.wait(), strict=True):
                for i, stat in zip(g, group_stats, strict=True):
                    out[i] = stat
            return out

        return stats

    def map_one(self, part: int, stage: Callable, *rows: Any, **consts: Any) -> Any:
        """The stat of ``stage`` on partition ``part`` alone, run where it is (one call:
        a stage that reads one lane, say, need not visit every partition)."""
        name = f"{getattr(stage, '__name__', 'stage')}-{uuid.uuid4().hex}"
        executor = self.executor
        future = executor.submit(run_group, executor.worker_blocks, stage,
                                 [self.sizes[part]], self.block_size,
                                 [[_ref(r, part) for r in rows]], consts, key=name)
        try:
            return executor.gather([future])[0][0][1]
        finally:
            executor.release(future)

    def full(self, value: float | np.ndarray) -> Partitioned:
        """A per-row array of ``value`` (a number, or a row of shape (K,)), where the
        partitions are."""
        value = np.asarray(value, dtype=np.float64)
        (out,), _ = self.map(_full, value=value)
        return with_ndim(out, 1 + value.ndim, value.shape[0] if value.ndim else None)


@outputs_only(1)
def _full(blocks: RowBlocks, *, value: np.ndarray) -> tuple[tuple, None]:
    return (np.full((blocks.n,) + value.shape, value),), None


class PartitionedRows(Protocol):
    """A fit's features held in partitions, as the oracles over partitions bind to them
    (a backend's rows: the Dask one's are
    :class:`oracleboost.distributed.stumps.ClusterRows`)."""

    blocks: PartitionBlocks

    @property
    def n_features(self) -> int: ...

    def blocks_for(self, oracle: Any) -> PartitionBlocks:
        """The blocks, refusing an oracle whose ``block_size`` is not theirs."""

    def bind_partitions(self, bind: Callable, *args: Any) -> Partitioned:
        """``bind(partition's rows of X, *args)`` for each partition, kept where it is,
        and the later stages placed by them (:meth:`PartitionBlocks.place`)."""
