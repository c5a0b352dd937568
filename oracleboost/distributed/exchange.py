"""Collective calls on a Dask cluster (:mod:`oracleboost.rows.exchange`): a member a
task, pinned to the worker that holds its partitions, the members' payloads sent from
worker to worker.

A worker receives payloads through a handler of its own (:data:`HANDLER`, installed by
:class:`ExchangePlugin`, as Dask's peer-to-peer shuffle installs its own) into a
mailbox of its process, keyed by the call, the step and the sending member; a member
waits there for the others' payloads of each step.  Only the members' payloads travel
between the workers, never through the scheduler or the client.

A member that waits checks, every :data:`_CHECK_EVERY` seconds, that its own task is
still wanted (the client cancels a call whose other member failed) and that the workers
of the members it waits for still answer; when not, it raises
:class:`~oracleboost.rows.exchange.MemberLostError`, and the client runs the call
again, where the partitions are then (Dask makes a lost worker's results again from
their tasks).  Every member's result depends only on the partitions' data, never on
where they were, so a call run again gives the same bits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from oracleboost.rows.exchange import MemberLostError

__all__ = ["HANDLER", "DaskExchange", "ExchangePlugin", "collective", "run_member_task"]

#: The name of the workers' handler that receives a member's payload
HANDLER = "oracleboost_exchange"

#: Seconds a waiting member goes between checks that its call is still on
_CHECK_EVERY = 1.0

#: Seconds a worker has to answer a waiting member's check before it counts as lost
_ANSWER_WITHIN = 20.0

#: Times the client runs a call whose member was lost before it gives up
_TRIES = 4

# This process's mailbox: (call, step) -> {member: payload}, and how many of this
# process's members have read each step's payloads
_MAILBOX: dict[tuple[str, int], dict[int, Any]] = {}
_READ: dict[tuple[str, int], int] = {}
_COND = threading.Condition()


def _receive(cid: str, step: int, member: int, payload: Any) -> None:
    """The handler: a member's payload for a step, into this process's mailbox."""
    with _COND:
        _MAILBOX.setdefault((cid, step), {})[member] = payload
        _COND.notify_all()


def _forget(cid: str) -> None:
    """Drop whatever the mailbox holds of the call ``cid`` (a call that failed)."""
    with _COND:
        for key in [k for k in _MAILBOX if k[0] == cid]:
            _MAILBOX.pop(key, None)
            _READ.pop(key, None)


class ExchangePlugin(WorkerPlugin):
    """Installs :data:`HANDLER` on every worker, those that join later included."""

    name = "oracleboost-exchange"

    def setup(self, worker: Any) -> None:
        worker.handlers[HANDLER] = _receive


async def _send(worker: Any, addresses: Sequence[str], msg: dict) -> None:
    await asyncio.gather(*(getattr(worker.rpc(a), HANDLER)(**msg) for a in addresses))


async def _answers(worker: Any, address: str) -> None:
    await asyncio.wait_for(worker.rpc(address).identity(), _ANSWER_WITHIN)


class DaskExchange:
    """:class:`~oracleboost.rows.exchange.Exchange` for member ``member`` of the call
    ``cid``, running in a task on a worker; ``places[m]``: the worker of member ``m``."""

    def __init__(self, cid: str, member: int, places: Sequence[str]) -> None:
        from distributed import get_worker
        from distributed.worker import thread_state

        self.worker = get_worker()
        self.key = getattr(thread_state, "key", None)
        self.cid, self.member, self.places = cid, member, list(places)
        self.members = len(places)
        here = self.worker.address
        self._elsewhere = sorted({a for a in places if a != here})
        self._here = sum(a == here for a in places)  # this process's members
        self._step = 0

    def allgather(self, payload: Any) -> list:
        from distributed.protocol import to_serialize
        from distributed.utils import sync

        step = self._step
        self._step += 1
        _receive(self.cid, step, self.member, payload)  # (for the members here)
        if self._elsewhere:
            msg = {"cid": self.cid, "step": step, "member": self.member,
                   "payload": to_serialize(payload)}
            try:
                sync(self.worker.loop, _send, self.worker, self._elsewhere, msg)
            except Exception as exc:
                raise MemberLostError(
                    f"a member of a collective call could not send to the workers "
                    f"{self._elsewhere}: {exc!r}") from exc
        return self._wait(step)

    def _wait(self, step: int) -> list:
        key = (self.cid, step)
        while True:
            with _COND:
                box = _MAILBOX.get(key, {})
                if len(box) < self.members:
                    _COND.wait(_CHECK_EVERY)
                    box = _MAILBOX.get(key, {})
                if len(box) == self.members:
                    payloads = [box[m] for m in range(self.members)]
                    _READ[key] = _READ.get(key, 0) + 1
                    if _READ[key] == self._here:
                        del _MAILBOX[key], _READ[key]
                    return payloads
                missing = [m for m in range(self.members) if m not in box]
            self._check(missing)

    def _check(self, missing: list[int]) -> None:
        """Raise :class:`MemberLostError` if this member's task is no longer wanted or
        a missing member's worker does not answer."""
        from distributed.utils import sync

        ts = self.worker.state.tasks.get(self.key) if self.key is not None else None
        if self.key is not None and (ts is None or ts.state in ("cancelled", "released")):
            raise MemberLostError("the collective call was cancelled")
        for address in sorted({self.places[m] for m in missing} - {self.worker.address}):
            try:
                sync(self.worker.loop, _answers, self.worker, address)
            except Exception as exc:
                raise MemberLostError(
                    f"the worker {address} of a member of a collective call was lost: "
                    f"{exc!r}") from exc


def run_member_task(fn: Callable, cid: str, member: int, places: Sequence[str],
                    *args: Any) -> Any:
    """A member's task: ``fn(exchange, *args)`` with a :class:`DaskExchange`."""
    exchange = DaskExchange(cid, member, places)
    try:
        return fn(exchange, *args)
    except BaseException:
        _forget(cid)
        raise


def _places(client: Any, anchors: Sequence[list], generation: int | None) -> list[str]:
    """Each member's worker: the one that holds most of its anchors (handles), those
    lost made again first; a member without anchors goes round the workers."""
    from concurrent.futures import CancelledError

    from distributed import wait

    from oracleboost.distributed.cluster import LostRowsError, lost_rows_message

    flat = [f for group in anchors for f in group]
    if flat:
        try:
            wait(flat)
        except CancelledError as exc:
            raise LostRowsError(lost_rows_message(exc, client, generation)) from exc
    holders = client.who_has(flat) if flat else {}
    workers = sorted(client.scheduler_info()["workers"])
    places = []
    for m, group in enumerate(anchors):
        votes: dict[str, int] = {}
        for f in group:
            for w in holders.get(f.key, ()):
                votes[w] = votes.get(w, 0) + 1
        places.append(min(votes, key=lambda w: (-votes[w], w)) if votes
                      else workers[m % len(workers)])
    return places


def _outcome(client: Any, futures: list, places: list[str]) -> BaseException | None:
    """Wait for a call's members: None when all finished, else the error to act on (a
    member's own, or :class:`MemberLostError` when a member's worker left)."""
    from distributed import wait

    while True:
        pending = [f for f in futures if f.status == "pending"]
        if pending:
            with contextlib.suppress(TimeoutError):
                wait(pending, timeout=_CHECK_EVERY, return_when="FIRST_COMPLETED")
        erred = [f for f in futures if f.status == "error"]
        if erred:
            errors = [f.exception() for f in erred]
            return next((e for e in errors if not isinstance(e, MemberLostError)), errors[0])
        if all(f.status == "finished" for f in futures):
            return None
        if any(f.status == "cancelled" for f in futures):
            from concurrent.futures import CancelledError

            return CancelledError("a member of a collective call was cancelled")
        present = set(client.scheduler_info()["workers"])
        gone = [p for f, p in zip(futures, places, strict=True)
                if f.status == "pending" and p not in present]
        if gone:
            return MemberLostError(f"the workers {sorted(set(gone))} left the cluster")


def collective(client: Any, fn: Callable, args: Sequence[tuple], anchors: Sequence[list],
               key: str, generation: int | None) -> list:
    """The Dask executor's collective call (see
    :meth:`oracleboost.rows.executor.Executor.collective`): a task a member, pinned to
    its place; run again where a member was lost."""
    from concurrent.futures import CancelledError

    from oracleboost.distributed.cluster import LostRowsError, lost_rows_message

    error: BaseException | None = None
    for attempt in range(_TRIES):
        places = _places(client, anchors, generation)
        cid = f"{key}-{attempt}"
        futures = [client.submit(run_member_task, fn, cid, m, places, *args[m],
                                 key=f"{cid}-{m}", workers=[places[m]],
                                 allow_other_workers=False, pure=False)
                   for m in range(len(args))]
        error = _outcome(client, futures, places)
        if error is None:
            return futures
        with contextlib.suppress(Exception):
            client.cancel(futures)
        with contextlib.suppress(Exception):
            client.run(_forget, cid)
        if isinstance(error, CancelledError):
            raise LostRowsError(lost_rows_message(error, client, generation)) from error
        if not isinstance(error, MemberLostError):
            raise error
    raise LostRowsError(f"a collective call lost a member {_TRIES} times: {error}")
