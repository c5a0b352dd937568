"""Collective calls on a Dask cluster (:mod:`oracleboost.rows.exchange`): one task a
worker for the members whose partitions it holds, pinned there, the members' payloads
sent from worker to worker.

The members meet through Dask's messages between the workers: a worker receives them
through a handler of its own (:data:`HANDLER`, installed by :class:`ExchangePlugin`,
as Dask's peer-to-peer shuffle installs its own) into a mailbox of its process, keyed
by the call, the step and the sending member.  Each member says there where it listens,
and the members then connect by sockets of their own (:mod:`.sockets`), through which
every later exchange goes: a Dask message costs about a millisecond (through each
worker's event loop), a step of a tree is a few.  (Where the workers talk by TLS, every
exchange stays with Dask's messages.)  Only the members' payloads travel between the
workers, never through the scheduler or the client.

A member that waits checks, every :data:`_CHECK_EVERY` seconds, that its own task is
still wanted (the client cancels a call whose other member failed) and that the workers
of the members it waits for still answer; when not, it raises
:class:`~oracleboost.rows.exchange.MemberLostError`, and the client runs the call
again, where the partitions are then (Dask makes a lost worker's results again from
their tasks).  Every member's result depends only on the partitions' data, never on
where they were, so a call run again gives the same bits.  The members' tasks leave the
worker's thread pool while they run (Dask's ``secede``), so that a task a peer waits
for can always run, and nothing depends on them afterwards: their results are fetched
and let go, never made again from their tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from oracleboost.distributed.sockets import SocketMesh
from oracleboost.rows.exchange import MemberLostError

__all__ = ["HANDLER", "DaskExchange", "ExchangePlugin", "collective", "run_place_task",
           "submit_collective"]

#: The name of the workers' handler that receives a member's payload
HANDLER = "oracleboost_exchange"

#: Seconds a waiting member goes between checks that its call is still on
_CHECK_EVERY = 1.0

#: Seconds a worker has to answer a waiting member's check before it counts as lost
_ANSWER_WITHIN = 20.0

#: Times the client runs a call whose member was lost before it gives up
_TRIES = 4

# This process's mailbox: (worker, call, step) -> {member: payload}, and how many of
# that worker's members have read each step's payloads (a process may hold several
# workers: a LocalCluster of threads)
_MAILBOX: dict[tuple[str, str, int], dict[int, Any]] = {}
_READ: dict[tuple[str, str, int], int] = {}
_COND = threading.Condition()

#: Calls in which this process's members could not connect their sockets while their
#: peers answered (a firewall between the workers, say): not empty, its later calls
#: exchange through Dask's messages at once
_NO_SOCKETS: list[str] = []


def _receive(address: str, cid: str, step: int, member: int, payload: Any) -> None:
    """The handler of the worker at ``address``: a member's payload for a step, into
    this process's mailbox."""
    with _COND:
        _MAILBOX.setdefault((address, cid, step), {})[member] = payload
        _COND.notify_all()


def _forget(cid: str) -> None:
    """Drop whatever the mailbox holds of the call ``cid`` (a call that failed)."""
    with _COND:
        for key in [k for k in _MAILBOX if k[1] == cid]:
            _MAILBOX.pop(key, None)
            _READ.pop(key, None)


class ExchangePlugin(WorkerPlugin):
    """Installs :data:`HANDLER` on every worker, those that join later included."""

    name = "oracleboost-exchange"

    def setup(self, worker: Any) -> None:
        address = worker.address

        def receive(cid: str, step: int, member: int, payload: Any) -> None:
            _receive(address, cid, step, member, payload)

        worker.handlers[HANDLER] = receive


async def _send(worker: Any, addresses: Sequence[str], msg: dict) -> None:
    await asyncio.gather(*(getattr(worker.rpc(a), HANDLER)(**msg) for a in addresses))


async def _answers(worker: Any, address: str) -> None:
    await asyncio.wait_for(worker.rpc(address).identity(), _ANSWER_WITHIN)


class DaskExchange:
    """:class:`~oracleboost.rows.exchange.Exchange` for member ``member`` of the call
    ``cid``, running on ``worker`` in the task ``key`` (``places[m]``: the worker of
    member ``m``); ``abort`` is set when a member of the same task failed."""

    def __init__(self, cid: str, member: int, places: Sequence[str], worker: Any,
                 key: Any, abort: threading.Event) -> None:
        self.worker, self.key, self.abort = worker, key, abort
        self.cid, self.member, self.places = cid, member, list(places)
        self.members = len(places)
        here = self.worker.address
        self._elsewhere = sorted({a for a in places if a != here})
        self._here = sum(a == here for a in places)  # this process's members
        self._step = 0
        self._mesh: SocketMesh | bool | None = None  # (made at the first exchange)

    def allgather(self, payload: Any) -> list:
        if self._mesh is None:
            self._mesh = self._connect()
        if self._mesh is False:
            return self._through_dask(payload)
        return self._mesh.allgather(
            payload, lambda: self._check(range(self.members)), _CHECK_EVERY)

    def _connect(self) -> SocketMesh | bool:
        """Sockets between the members (:mod:`.sockets`), met through Dask's messages;
        False (every exchange through Dask's messages) for a single member, where a
        worker's address is not plain TCP (TLS, say: the sockets would not be), or where
        the sockets cannot connect (a firewall between the workers, say).

        The members agree: each says where it listens (or that it will not: this
        process failed to connect before), and after connecting whether it could; all
        use the sockets, or none.  A process whose sockets failed to connect while
        the others answered does not try again in its later calls (``_NO_SOCKETS``)."""
        if self.members == 1 or not all(a.startswith("tcp://") for a in self.places):
            return False
        mesh = None
        if not _NO_SOCKETS:
            host = self.worker.address[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
            with contextlib.suppress(OSError):
                mesh = SocketMesh(self.member, self.members, host, _ANSWER_WITHIN)
        addresses = self._through_dask(None if mesh is None else mesh.address)
        if mesh is None or any(a is None for a in addresses):
            if mesh is not None:
                mesh.close()
            return False
        try:
            mesh.connect([tuple(a) for a in addresses])
            connected = True
        except MemberLostError:
            connected = False
        # (a member lost meanwhile is found by this exchange's checks, and raises)
        agreed = all(self._through_dask(connected))
        if not connected:  # (the others answered: the sockets, not they, failed)
            _NO_SOCKETS.append(self.cid)
        if not agreed:
            mesh.close()
            return False
        return mesh

    def close(self) -> None:
        if self._mesh:
            self._mesh.close()

    def _through_dask(self, payload: Any) -> list:
        """An exchange through Dask's messages between the workers (the mailbox)."""
        from distributed.protocol import to_serialize
        from distributed.utils import sync

        step = self._step
        self._step += 1
        # (for the members here: a copy, as the sender may reuse its arrays at once)
        _receive(self.worker.address, self.cid, step, self.member, copy.deepcopy(payload))
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
        key = (self.worker.address, self.cid, step)
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

    def _check(self, missing: Iterable[int]) -> None:
        """Raise :class:`MemberLostError` if this member's task is no longer wanted or
        a missing member's worker does not answer."""
        from distributed.utils import sync

        if self.abort.is_set():
            raise MemberLostError("a member of the collective call failed")
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


def run_place_task(fn: Callable, cid: str, members: list[int], places: Sequence[str],
                   args: list[tuple]) -> Any:
    """A worker's task of a collective call: ``fn(exchange, *args[k])`` for each of its
    ``members`` (their results in order; the result itself for one member), each with
    a :class:`DaskExchange`, several members each in a thread of their own (they must
    run at once; the kernels release the GIL).  A member that fails stops the
    others here (``abort``); its own error is raised."""
    from concurrent.futures import ThreadPoolExecutor

    from distributed import get_worker, rejoin, secede
    from distributed.worker import thread_state

    worker, key = get_worker(), getattr(thread_state, "key", None)
    abort = threading.Event()

    def one(k: int) -> Any:
        exchange = DaskExchange(cid, members[k], places, worker, key, abort)
        try:
            return fn(exchange, *args[k])
        except BaseException:
            abort.set()
            _forget(cid)
            raise
        finally:
            exchange.close()

    # A member waiting for its peers must not hold one of the worker's threads: a
    # peer's input that Dask makes again after a lost worker could be given to this
    # worker and wait for that thread for ever.  So the task leaves the worker's pool
    # (Dask's secede: the worker may start another task meanwhile) and joins it again
    # at the end.
    secede()
    try:
        if len(members) == 1:
            return one(0)
        with ThreadPoolExecutor(len(members)) as pool:
            futures = [pool.submit(one, k) for k in range(len(members))]
            errors = [f.exception() for f in futures]
        first = next((e for e in errors if e is not None
                      and not isinstance(e, MemberLostError)),
                     next((e for e in errors if e is not None), None))
        if first is not None:
            raise first
        return [f.result() for f in futures]
    finally:
        rejoin()


def _places(client: Any, anchors: Sequence[list], known: dict | None,
            ask: bool = False) -> list[str]:
    """Each member's worker: the one that holds most of its anchors (handles); a
    member without anchors goes round the workers.  ``known`` keeps the answer for the
    same anchors, used unless ``ask`` (after a lost member)."""
    keys = tuple(tuple(f.key for f in group) for group in anchors)
    if known is not None and not ask and known.get("anchors") == keys:
        return known["places"]
    flat = [f for group in anchors for f in group]
    holders = client.who_has(flat) if flat else {}
    workers = None
    places = []
    for m, group in enumerate(anchors):
        votes: dict[str, int] = {}
        for f in group:
            for w in holders.get(f.key, ()):
                votes[w] = votes.get(w, 0) + 1
        if votes:
            places.append(min(votes, key=lambda w: (-votes[w], w)))
        else:
            workers = workers or sorted(client.scheduler_info()["workers"])
            places.append(workers[m % len(workers)])
    if known is not None and all(holders.get(f.key) for f in flat):
        known.update(anchors=keys, places=places)
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


def _results(client: Any, futures: list, places: list[str]) -> list | None:
    """The finished members' results, fetched; None when a worker that held one left
    first (Dask would run its task again, and a member cannot run alone).  The futures
    are released: nothing later depends on them."""
    from distributed import TimeoutError as DaskTimeout

    results = []
    for f, place in zip(futures, places, strict=True):
        while True:
            try:
                results.append(f.result(timeout=_CHECK_EVERY))
                break
            except (TimeoutError, DaskTimeout):
                if place not in set(client.scheduler_info()["workers"]):
                    return None
    for f in futures:
        f.release()
    return results


def _submit(client: Any, fn: Callable, args: Sequence[tuple], anchors: Sequence[list],
            key: str, known: dict | None, attempt: int) -> tuple[list, dict[str, list[int]]]:
    """Attempt ``attempt`` of a collective call submitted: its tasks (one a place) and
    the members of each place."""
    places = _places(client, anchors, known, ask=attempt > 0)
    cid = f"{key}-{attempt}"
    by_place: dict[str, list[int]] = {}
    for m, place in enumerate(places):
        by_place.setdefault(place, []).append(m)
    tasks = [client.submit(run_place_task, fn, cid, members, places,
                           [args[m] for m in members], key=f"{cid}-{members[0]}",
                           workers=[place], allow_other_workers=False, pure=False)
             for place, members in by_place.items()]
    return tasks, by_place


def submit_collective(client: Any, fn: Callable, args: Sequence[tuple],
                      anchors: Sequence[list], key: str, known: dict | None = None
                      ) -> tuple[Callable[[], list], list]:
    """:func:`collective`, its first attempt submitted now: ``(wait, tasks)``, where
    ``wait()`` waits for it (and makes the later attempts, where a member was lost) and
    returns the members' results, and ``tasks`` are the first attempt's futures.  Until
    ``wait`` is called the client waits on nothing: the workers run the call behind the
    stages submitted before it."""
    first = _submit(client, fn, args, anchors, key, known, 0)
    return (lambda: collective(client, fn, args, anchors, key, known, first)), first[0]


def collective(client: Any, fn: Callable, args: Sequence[tuple], anchors: Sequence[list],
               key: str, known: dict | None = None,
               submitted: tuple[list, dict[str, list[int]]] | None = None) -> list:
    """The Dask executor's collective call (see
    :meth:`oracleboost.rows.executor.Executor.collective`): a task a worker for its
    members (:func:`run_place_task`), pinned there; run again where a member was lost.
    The members' results, by member.  Raises ``CancelledError`` when an input or a
    member was cancelled, and :class:`MemberLostError` after ``_TRIES`` lost members.
    ``submitted``: the first attempt's tasks, already submitted
    (:func:`submit_collective`)."""
    from distributed import wait

    error: BaseException | None = None
    for attempt in range(_TRIES):
        if attempt:  # (the anchors' places then, where Dask has made them again; a
            # cancelled one raises CancelledError)
            wait([f for group in anchors for f in group])
        tasks, by_place = (submitted if attempt == 0 and submitted is not None else
                           _submit(client, fn, args, anchors, key, known, attempt))
        cid = f"{key}-{attempt}"
        error = _outcome(client, tasks, list(by_place))
        if error is None:
            results = _results(client, tasks, list(by_place))
            if results is not None:
                out: list = [None] * len(args)
                for got, members in zip(results, by_place.values(), strict=True):
                    for k, m in enumerate(members):
                        out[m] = got if len(members) == 1 else got[k]
                return out
            error = MemberLostError("a worker that held a member's result was lost")
        with contextlib.suppress(Exception):
            client.cancel(tasks)
        with contextlib.suppress(Exception):
            client.run(_forget, cid)
        if not isinstance(error, MemberLostError):  # (a member's own, or a cancel)
            raise error
    raise MemberLostError(f"a collective call lost a member {_TRIES} times: {error}")
