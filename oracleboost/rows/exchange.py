"""Collective calls: the places that hold a fit's partitions working on one task
together, each telling the others what it found.

Most of a fit's work over partitions is a *stage* (:mod:`.partition_blocks`): every
place runs it on its own partitions and only a stat comes back to the caller, which
combines the stats and decides what to ask next.  A tree grown that way costs a round
trip to the places for every split.  A *collective* call instead runs one *member* a
group of partitions, all at once; the members exchange what each found
(:meth:`Exchange.allgather`: every member's payload, in member order, to every member)
and each decides the next step itself.  Every member gets the same payloads and runs
the same deterministic code, so every member makes the same decisions, and only the
result comes back.

:class:`ThreadExchange` runs the members in threads of this process (the in-process
executor's collectives); the Dask one, between the workers of a cluster, is
:mod:`oracleboost.distributed.exchange`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

__all__ = ["Exchange", "MemberLostError", "ThreadExchange", "run_members_in_threads"]


class MemberLostError(RuntimeError):
    """A member of a collective call stopped (it raised, or the place it ran on was
    lost) before giving its payload: the others cannot go on.  The caller runs the call
    again, or raises the member's own error."""


class Exchange(Protocol):
    """What a member of a collective call is given to talk to the others."""

    #: This member's index, and how many members the call has
    member: int
    members: int

    def allgather(self, payload: Any) -> list:
        """Every member's ``payload`` for this step, in member order (this one's
        included).  Every member must call it the same number of times, in the same
        order: the ``k``-th calls of all members are one exchange.  The others'
        payloads are the caller's to read until its next call (an exchange between
        processes may hand out views of its buffers), never to change."""


_MISSING = object()


class _Steps:
    """The payloads of a collective call whose members are threads of this process."""

    def __init__(self, members: int) -> None:
        self.members = members
        self.cond = threading.Condition()
        self.boxes: dict[int, list] = {}  # step -> payloads by member (or _MISSING)
        self.read: dict[int, int] = {}  # step -> members that took its payloads
        self.failed: str | None = None


class ThreadExchange:
    """:class:`Exchange` for member ``member`` of a call whose members are threads of
    this process (made by :func:`run_members_in_threads`)."""

    def __init__(self, steps: _Steps, member: int) -> None:
        self._steps = steps
        self.member = member
        self.members = steps.members
        self._step = 0

    def allgather(self, payload: Any) -> list:
        s, step = self._steps, self._step
        self._step += 1
        payload = copy.deepcopy(payload)  # (the caller may reuse its arrays at once)
        with s.cond:
            box = s.boxes.setdefault(step, [_MISSING] * s.members)
            box[self.member] = payload
            s.cond.notify_all()
            while s.failed is None and any(p is _MISSING for p in box):
                s.cond.wait()
            if s.failed is not None:
                raise MemberLostError(s.failed)
            s.read[step] = s.read.get(step, 0) + 1
            if s.read[step] == s.members:  # (every member has it: let it go)
                del s.boxes[step], s.read[step]
            return list(box)


def run_members_in_threads(fn: Callable, args: Sequence[tuple]) -> list:
    """``fn(exchange, *args[m])`` for every member ``m`` at once, each in a thread of
    its own, the members exchanging through a :class:`ThreadExchange`: their results, in
    member order.  A member that raises stops the others (their exchanges raise
    :class:`MemberLostError`), and its error is raised here."""
    steps = _Steps(len(args))

    def member(m: int) -> Any:
        try:
            return fn(ThreadExchange(steps, m), *args[m])
        except BaseException as exc:
            with steps.cond:
                if steps.failed is None:
                    steps.failed = f"member {m} of a collective call raised {exc!r}"
                steps.cond.notify_all()
            raise

    if len(args) == 1:
        return [member(0)]
    with ThreadPoolExecutor(len(args)) as pool:
        futures = [pool.submit(member, m) for m in range(len(args))]
        errors = [f.exception() for f in futures]
    first = next((e for e in errors if e is not None and not isinstance(e, MemberLostError)),
                 next((e for e in errors if e is not None), None))
    if first is not None:
        raise first
    return [f.result() for f in futures]
