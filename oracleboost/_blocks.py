"""Row blocks: the training rows cut into fixed-size blocks, mapped on threads and reduced
in block order.

Every pass a round makes over the training rows (the weights, the oracle's histograms,
the column's sums, the new margins) runs block by block.  A block computes its own small
statistics (a partial sum, a maximum, a histogram) from its rows alone, always in row
order; the statistics are then combined in block order.  The cut depends only on ``n``
and ``block_size``, never on the number of threads, and a block's work does not depend
on which thread does it: a fit is bit for bit the same for every ``n_jobs``.  This is
the library's reproducibility promise for threads (and, with the same blocks on a
cluster's workers, for workers).

Threads take runs of consecutive blocks (``n_jobs`` tasks a map, not one a block: a task
costs tens of microseconds of Python), each block writing only its own slot of the
result.  The compiled kernels release the GIL, and so do NumPy's ufuncs on large arrays,
so the threads run at once.
"""

from __future__ import annotations

import numbers
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["DEFAULT_BLOCK_SIZE", "RowBlocks", "check_n_jobs", "n_threads", "thread_map"]

T = TypeVar("T")

#: Rows of a block unless told otherwise: 2**16 rows are 512 KiB of one float64 vector,
#: so the few vectors a block's pass reads stay in a core's L2 cache between the kernels
#: that read them in turn.
DEFAULT_BLOCK_SIZE = 1 << 16


def check_n_jobs(n_jobs: object, name: str = "n_jobs") -> None:
    """Refuse anything but ``None`` or a non-zero int (LightGBM's ``num_threads``)."""
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0
    ):
        raise ValueError(f"{name} must be None or a non-zero int; got {n_jobs!r}")


def n_threads(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` as LightGBM counts them: ``None`` (LightGBM's
    ``num_threads=0``) is OpenMP's default, ``OMP_NUM_THREADS`` if set, else every CPU
    this process may run on; a negative value counts back from that (-1: all)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    if n_jobs is None:
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        return int(env) if env.isdigit() and int(env) > 0 else cpus
    return int(n_jobs) if n_jobs > 0 else max(1, cpus + 1 + int(n_jobs))


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``threads`` threads (made once: starting threads every
    query would cost more than the work at small ``n``)."""
    with _pools_lock:
        if threads not in _pools:
            _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="oracleboost")
        return _pools[threads]


def thread_map(fn: Callable[..., T], items: Iterable[Any], threads: int,
               star: bool = False) -> list[T]:
    """``[fn(item) for item in items]`` on ``threads`` threads, in order."""
    call = (lambda item: fn(*item)) if star else fn
    items = list(items)
    if threads <= 1 or len(items) <= 1:
        return [call(item) for item in items]
    return list(_pool(threads).map(call, items))


class RowBlocks:
    """The cut of ``n`` rows into blocks of ``block_size`` (the last one shorter).

    Parameters
    ----------
    n : int
        Rows.
    block_size : int, default=DEFAULT_BLOCK_SIZE
        Rows of a block, at least 1.  Results depend on it (it decides the order of the
        sums); they do not depend on ``n_jobs``.
    n_jobs : int or None, default=None
        Threads of :meth:`map` (see :func:`n_threads`).

    Attributes
    ----------
    bounds : list of (int, int)
        ``(start, stop)`` of every block, in order.
    """

    def __init__(self, n: int, block_size: int = DEFAULT_BLOCK_SIZE,
                 n_jobs: int | None = None) -> None:
        if isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral) \
                or block_size < 1:
            raise ValueError(f"block_size must be a positive int; got {block_size!r}")
        check_n_jobs(n_jobs)
        self.n = int(n)
        self.block_size = int(block_size)
        self.n_jobs = n_jobs
        self.bounds = [(a, min(a + self.block_size, self.n))
                       for a in range(0, self.n, self.block_size)] or [(0, 0)]

    def __len__(self) -> int:
        return len(self.bounds)

    def threads(self) -> int:
        return max(1, min(n_threads(self.n_jobs), len(self.bounds)))

    def map(self, fn: Callable[[int, int, int], T]) -> list[T]:
        """``[fn(k, start, stop) for every block k]``, in block order; threads take runs of
        consecutive blocks.  ``fn`` must read and write only its block's rows and slots."""
        k_blocks, threads = len(self.bounds), self.threads()
        if threads <= 1:
            return [fn(k, a, b) for k, (a, b) in enumerate(self.bounds)]
        out: list[Any] = [None] * k_blocks
        cuts = [k_blocks * t // threads for t in range(threads + 1)]

        def run(lo: int, hi: int) -> None:
            for k in range(lo, hi):
                a, b = self.bounds[k]
                out[k] = fn(k, a, b)

        thread_map(run, list(zip(cuts[:-1], cuts[1:], strict=True)), threads, star=True)
        return out


def ordered_sum(parts: Sequence[float]) -> float:
    """``parts[0] + parts[1] + …`` left to right, in float64: the same bits wherever it
    runs (``sum`` compensates since Python 3.12, NumPy sums pairwise)."""
    total = 0.0
    for p in parts:
        total += p
    return total
