"""Each Dask worker's peak memory during a block of code, against its memory limit.

A fit on a dask array keeps per-row data on the workers (a byte a feature a row, and a
few float64 arrays a row: the budget is in the Dask guide of the docs), and a worker that
passes 95 % of its ``memory_limit`` is restarted by its nanny.  :func:`watch_worker_memory`
says how close each worker came::

    with watch_worker_memory(client) as memory:
        model.fit(X, y)
    print(memory.report())

It samples each worker process's resident set size (what Dask's nanny compares with the
limit) from a thread inside that process, every ``interval`` seconds, so it works on any
cluster, local or remote, and it says which workers were restarted or lost meanwhile
(their peaks are then unknown: the process that had them is gone).

Dask is an optional dependency (``pip install "oracleboost[dask]"``); this module
imports nothing of it, it only talks to the ``distributed.Client`` it is given.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkerMemory", "watch_worker_memory"]

_MIB = 2**20


class _Sampler(threading.Thread):
    """The largest resident set size of this process, sampled every ``interval`` s."""

    def __init__(self, interval: float) -> None:
        super().__init__(daemon=True, name="oracleboost-worker-memory")
        import psutil  # (a dependency of distributed, so on every worker)

        self.process = psutil.Process()
        self.interval = interval
        self.peak = self.process.memory_info().rss
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.peak = max(self.peak, self.process.memory_info().rss)


#: This worker's samplers, by the token of the watch that started each (watches may
#: overlap: two fits watched from two threads).
_SAMPLERS: dict[str, _Sampler] = {}
_LOCK = threading.Lock()


def _start(token: str, interval: float) -> int:
    """On a worker: start sampling for the watch ``token``; the worker's process id."""
    sampler = _Sampler(interval)
    with _LOCK:
        _SAMPLERS[token] = sampler
    sampler.start()
    return os.getpid()


def _stop(token: str) -> tuple[int, int | None]:
    """On a worker: the process id and the peak of the watch ``token`` (None: this
    process did not start it: a restarted or a new worker)."""
    with _LOCK:
        sampler = _SAMPLERS.pop(token, None)
    if sampler is None:
        return os.getpid(), None
    sampler.stopped.set()
    sampler.join()
    # one last sample: the end of the block may fall between two samples
    return os.getpid(), max(sampler.peak, sampler.process.memory_info().rss)


@dataclass
class WorkerMemory:
    """What :func:`watch_worker_memory` saw, filled when its block ends.

    Attributes
    ----------
    peaks : dict
        Worker address → its process's largest resident set size during the block, in
        bytes (for the workers that were there from start to end).
    limits : dict
        Worker address → its ``memory_limit`` in bytes (0: none set).
    restarted : list of str
        Workers that were restarted or lost during the block, or joined it late: their
        peaks are unknown.
    """

    peaks: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    restarted: list[str] = field(default_factory=list)

    def fraction(self, worker: str) -> float:
        """A worker's peak as a fraction of its limit (NaN when it has none)."""
        limit = self.limits.get(worker, 0)
        return self.peaks[worker] / limit if limit else float("nan")

    def report(self) -> str:
        """A line a worker: its peak against its limit, and the workers restarted."""
        lines = []
        for worker, peak in sorted(self.peaks.items()):
            limit = self.limits.get(worker, 0)
            against = (f" of {limit / _MIB:,.0f} MiB ({100 * peak / limit:.0f} %)" if limit
                       else " (no memory limit)")
            lines.append(f"worker {worker}: peak {peak / _MIB:,.0f} MiB{against}")
        for worker in sorted(self.restarted):
            lines.append(f"worker {worker}: restarted or lost meanwhile, peak unknown")
        return "\n".join(lines)


@contextmanager
def watch_worker_memory(client: Any, interval: float = 0.01) -> Iterator[WorkerMemory]:
    """Sample each worker's resident memory while the block runs (see the module).

    Parameters
    ----------
    client : distributed.Client
        The client of the cluster to watch.
    interval : float, default=0.01
        Seconds between two samples on each worker.  A peak shorter than this may be
        missed.

    Yields
    ------
    WorkerMemory
        Empty inside the block; filled when it ends (also when it raises).
    """
    if not interval > 0:
        raise ValueError(f"interval={interval!r}: must be a positive number of seconds")
    import uuid

    token = uuid.uuid4().hex
    started = client.run(_start, token, float(interval))  # address -> pid
    limits = {address: int(info.get("memory_limit") or 0)
              for address, info in client.scheduler_info()["workers"].items()}
    memory = WorkerMemory(limits={a: limits.get(a, 0) for a in started})
    try:
        yield memory
    finally:
        ended = client.run(_stop, token, on_error="return")
        for address, pid in started.items():
            result = ended.get(address)
            if isinstance(result, tuple) and result[0] == pid and result[1] is not None:
                memory.peaks[address] = int(result[1])
            else:
                memory.restarted.append(address)
        memory.restarted += [a for a in ended if a not in started]
