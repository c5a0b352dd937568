"""Where a fit's partitions run: the executor protocol, and a plain one in this process.

A backend that splits the rows keeps each partition where it puts it (a worker of a
cluster, say) and runs there the *stages* of :class:`~.partition_blocks.PartitionBlocks`
(functions of one partition's blocks and rows).  What it must give the blocks is an
:class:`Executor`: run a function on given arguments (some of them handles of earlier
results) where they are, hand back handles, gather handles' values, and group the
partitions by where they are held.  Everything else (which stage runs on which
partition, the order the partitions' stats are combined in) is the blocks' own, so a
fit is the same, bit for bit, on every executor.

:class:`InProcessExecutor` runs every call at once in this process, its handles being
the values themselves: the rows held in partitions without a cluster (a backend's tests,
say).  The Dask one is :class:`oracleboost.distributed.cluster.DaskExecutor`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from oracleboost.rows import local_store
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.exchange import run_members_in_threads

__all__ = ["Executor", "InProcessExecutor", "PartitionRowBlocks", "SubmittedCollective"]


class PartitionRowBlocks(RowBlocks):
    """One partition's blocks where it is held: one thread (the executor runs the
    partitions side by side, if at all) and a stage's inputs left unchanged (an executor
    may run a stage again from the same inputs)."""

    in_place = False

    def __init__(self, n: int, block_size: int) -> None:
        super().__init__(n, block_size, n_jobs=1)


@dataclass(frozen=True)
class SubmittedCollective:
    """A collective call submitted (:meth:`Executor.submit_collective`): ``wait()``
    waits for it and returns what :meth:`Executor.collective` returns; ``handles`` are
    its running calls, which :meth:`Executor.abandon` may stop."""

    wait: Callable[[], list]
    handles: list


class Executor(Protocol):
    """What :class:`~.partition_blocks.PartitionBlocks` runs its stages through.

    A *handle* is whatever the executor gives for a result it holds (a future, or the
    value itself); arguments of :meth:`map` and :meth:`submit` may hold handles, nested
    in lists, which the executor replaces by their values where the call runs."""

    #: The blocks a stage gets for its partition (called with ``(n, block_size)``).
    worker_blocks: Callable[[int, int], RowBlocks]

    def map(self, fn: Callable, *iterables: Sequence, key: list[str]) -> list:
        """``fn`` on each tuple of ``iterables``' items, named by ``key``: a handle
        each."""

    def submit(self, fn: Callable, *args: Any, key: str) -> Any:
        """``fn(*args)``, named ``key``: a handle."""

    def gather(self, handles: list) -> list:
        """The values of ``handles``, in order."""

    def collective(self, fn: Callable, args: Sequence[tuple], anchors: Sequence[list], *,
                   key: str) -> list:
        """A collective call (:mod:`.exchange`): ``fn(exchange, *args[m])`` for every
        member ``m``, all running at once, each where ``anchors[m]`` (handles) are held,
        with an :class:`~.exchange.Exchange` between them.  Returns the members'
        results (values, not handles: nothing is made later from a member), once every
        member has finished; raises the first member's error that is not a
        :class:`~.exchange.MemberLostError` (an executor whose places can be lost runs
        the call again after such a loss)."""

    def submit_collective(self, fn: Callable, args: Sequence[tuple],
                          anchors: Sequence[list], *, key: str) -> SubmittedCollective:
        """:meth:`collective`, started now where the executor can (behind the calls
        submitted before it), waited for by the answer's ``wait()``."""

    def release(self, handle: Any) -> None:
        """Let go of a handle's result."""

    def groups(self, handles: list) -> list[list[int]]:
        """The partitions whose data are ``handles`` (one a partition), in groups that
        run together (one call a group): every index once, each group in order and the
        groups sorted."""

    def settle(self) -> None:
        """A fit ended: free what its stages still hold where they ran."""

    def abandon(self, handles: list) -> None:
        """A fit raised: stop the calls of ``handles`` still running and free what they
        hold, never raising."""


class InProcessExecutor:
    """An :class:`Executor` that runs every call at once, in this process, its handles
    the values.  ``workers`` in-process "workers" hold the partitions, consecutive runs
    of them each: :meth:`groups` gives a group a worker."""

    worker_blocks = PartitionRowBlocks

    def __init__(self, workers: int = 1) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int; got {workers!r}")
        self.workers = workers

    def map(self, fn: Callable, *iterables: Sequence, key: list[str]) -> list:
        return [fn(*args) for args in zip(*iterables, strict=True)]

    def submit(self, fn: Callable, *args: Any, key: str) -> Any:
        return fn(*args)

    def gather(self, handles: list) -> list:
        return list(handles)

    def collective(self, fn: Callable, args: Sequence[tuple], anchors: Sequence[list], *,
                   key: str) -> list:
        # (each member a thread: the members must run at once to exchange)
        return run_members_in_threads(fn, args)

    def submit_collective(self, fn: Callable, args: Sequence[tuple],
                          anchors: Sequence[list], *, key: str) -> SubmittedCollective:
        # (run when waited for: the same results, nothing to cancel)
        return SubmittedCollective(lambda: self.collective(fn, args, anchors, key=key), [])

    def release(self, handle: Any) -> None:
        pass

    def groups(self, handles: list) -> list[list[int]]:
        n = len(handles)
        runs = max(1, min(n, self.workers))
        cuts = [n * r // runs for r in range(runs + 1)]
        return [list(range(a, b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]

    def settle(self) -> None:
        local_store.clear()  # (what collective calls kept for later stages)

    def abandon(self, handles: list) -> None:
        local_store.clear()
