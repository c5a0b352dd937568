"""Row blocks: the training rows cut into fixed pieces, run on threads and reduced in order.

Every pass a round makes over the training rows (the weights, the oracle's histograms,
the column's sums, the new margins) is cut into pieces fixed by ``n`` and
``block_size`` alone, never by the number of threads:

* **blocks** of ``block_size`` rows (65,536 by default): a histogram is made block by
  block, each block's in row order, and the blocks' histograms are added in order,
  within **partitions** of ``BLOCKS_PER_PARTITION`` blocks and then partition by
  partition (a partition is what a cluster's worker would hold);
* **lanes** of ``min(block_size, LANE_ROWS)`` rows: a scalar sum (a normaliser, an
  edge, an inner product) is each lane's sum in an order fixed by the code (four
  interleaved running sums: ``_column_kernels.interleaved_sum``), the lanes added in order.

A piece's result depends only on its rows, and a thread takes whole pieces, so a fit is
bit for bit the same for every ``n_jobs``: the library's reproducibility promise for
threads (``tests/test_row_blocks.py``).  A different ``block_size`` adds in another
order: the same fit to rounding.

Threads take runs of consecutive pieces (one task a thread, not one a piece: a task
costs tens of microseconds of Python), each piece writing only its own slot of the
result; the calling thread does one run itself.  The compiled kernels release the GIL,
and so do NumPy's ufuncs on large arrays, so the threads run at once.
"""

from __future__ import annotations

import functools
import numbers
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from oracleboost._running_state import stored_as
from oracleboost.rows.parallel import concurrent_launches, kernel_threads

__all__ = ["BLOCKS_PER_PARTITION", "DEFAULT_BLOCK_SIZE", "LANE_ROWS",
           "MIN_ROWS_PER_KERNEL_THREAD", "MIN_ROWS_PER_THREAD",
           "ReadyStats", "RowBlocks", "check_n_jobs", "deferred_stat", "n_threads",
           "ordered_sum", "outputs_only", "thread_map"]

T = TypeVar("T")

#: Rows of a block unless told otherwise: 2**16 rows are 512 KiB of one float64 vector,
#: so the few vectors a block's pass reads stay in a core's L2 cache between the kernels
#: that read them in turn.
DEFAULT_BLOCK_SIZE = 1 << 16

#: Blocks of a partition: a histogram is summed block by block within a partition and
#: partition by partition (16 blocks of 2**16 rows: 2**20 rows, 8 MiB of one float64
#: vector), the unit a worker of a cluster would hold.
BLOCKS_PER_PARTITION = 16

#: Rows of a lane: the scalar passes (sums of n numbers: the weights' normaliser, the
#: edge, the inner products) sum each lane in a fixed order and add the lanes in order.
#: Threads take whole lanes, so lanes small enough to share 100,000 rows evenly
#: between threads, and large enough that a lane's partial costs nothing.
LANE_ROWS = 1 << 12

#: A scalar pass runs on more threads only when each gets at least this many rows: a
#: thread's hand-over costs about as much as a pass over 50,000 rows.
MIN_ROWS_PER_THREAD = 1 << 16

#: Rows a thread of numba's gets in a compiled lane kernel: a parallel region starts in
#: about 2 µs, a pass over this many rows takes 5 to 20.
MIN_ROWS_PER_KERNEL_THREAD = 1 << 14


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
    """``[fn(item) for item in items]`` on ``threads`` threads, in order.

    The calling thread does the first item itself while the pool does the others: one
    wake-up fewer a map, and no thread idles waiting (a map costs tens of microseconds
    of hand-over, comparable to a pass over 100,000 rows)."""
    call = (lambda item: fn(*item)) if star else fn
    items = list(items)
    threads = min(threads, len(items))
    if threads <= 1:
        return [call(item) for item in items]
    # `threads` runs of consecutive items, one a thread, each run in order
    cuts = [len(items) * t // threads for t in range(threads + 1)]

    def run(t: int) -> list[T]:
        return [call(item) for item in items[cuts[t]:cuts[t + 1]]]

    pool = _pool(threads - 1)
    futures = [pool.submit(run, t) for t in range(1, threads)]
    try:
        first = run(0)
    except BaseException:
        wait(futures)  # the others finish before the error leaves: nothing writes later
        raise
    return [*first, *(x for f in futures for x in f.result())]


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
        Threads of :meth:`lane_map` (see :func:`n_threads`).

    Attributes
    ----------
    bounds : list of (int, int)
        ``(start, stop)`` of every block, in order.
    """

    n: int
    block_size: int
    n_jobs: int | None
    bounds: list[tuple[int, int]]

    #: Whether a pass may overwrite the per-row arrays an earlier pass of the same round
    #: made (in memory, yes: it saves a copy; on a cluster's worker, no: a task must leave
    #: its inputs as they were, so that Dask may run it again after a lost worker).
    in_place = True
    #: Whether the booster may keep the fit's running state after ``fit`` (for
    #: ``warm_start``): in memory, yes; a backend whose state lives elsewhere says no.
    keeps_state = True
    #: Whether the per-row arrays the passes take are held off this process's memory in
    #: a form of their own (a GPU's device arrays): a pass takes them as they are, never
    #: through ``np.asarray`` (a copy to the host).
    rows_elsewhere = False

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

    @property
    def lane(self) -> int:
        """Rows of a lane: the unit of the scalar passes' sums (``LANE_ROWS``, or the
        block when blocks are smaller)."""
        return min(self.block_size, LANE_ROWS)

    @property
    def n_lanes(self) -> int:
        return max(1, -(-self.n // self.lane))

    def lane_map(self, fn: Callable[[int, int, int, int], object]) -> None:
        """``fn(q_lo, q_hi, lo, hi)`` over runs of whole lanes ``q_lo:q_hi`` (rows
        ``lo:hi``) that cover every row, one run a Python thread.  ``fn`` writes lane
        ``q``'s partials into slot ``q`` of its outputs: the same slots and values on
        any number of threads.  A Python thread gets at least ``MIN_ROWS_PER_THREAD``
        rows.

        Below that, one run covers every row, and the compiled lane kernels it calls
        (:mod:`oracleboost.rows.column_kernels`) share their lanes among numba's
        threads instead (at least ``MIN_ROWS_PER_KERNEL_THREAD`` rows each): they start
        in microseconds, where a Python thread's hand-over costs tens, and they do not
        wait for the GIL between NumPy calls."""
        runs = self._runs
        if len(runs) == 1:  # most passes at small n: no thread_map to go through
            with kernel_threads(self._kernel_threads):
                fn(*runs[0])
        else:
            def run(*lanes: int) -> None:
                with kernel_threads(1):
                    fn(*lanes)

            thread_map(run, runs, len(runs), star=True)

    @property
    def python_threads(self) -> bool:
        """Whether :meth:`lane_map` hands its runs to Python threads (enough rows: at
        least ``MIN_ROWS_PER_THREAD`` a thread).  Then a fit's other passes run on
        Python threads too, and numba's kernels on one of its threads each: numba's idle
        threads spin for a while after a parallel region (OpenMP's default), and on a
        machine with as many cores as threads a spinning thread slows a Python thread
        that wants its core (at 1,000,000 rows × 20 on two threads, a round took 9.1 ms
        with the two kinds mixed against 6.7 ms with OpenMP's threads asleep)."""
        return len(self._runs) > 1

    @functools.cached_property
    def _kernel_threads(self) -> int:
        """numba's threads for the compiled kernels of a single run."""
        return max(1, min(n_threads(self.n_jobs), self.n_lanes,
                          self.n // MIN_ROWS_PER_KERNEL_THREAD))

    @functools.cached_property
    def _runs(self) -> list[tuple[int, int, int, int]]:
        """:meth:`lane_map`'s runs, one a thread (fixed for a fit: read once)."""
        lanes, lane = self.n_lanes, self.lane
        threads = max(1, min(n_threads(self.n_jobs), lanes, self.n // MIN_ROWS_PER_THREAD))
        if not concurrent_launches():  # numba's workqueue: its kernels one thread at a time
            threads = 1
        cuts = [lanes * t // threads for t in range(threads + 1)]
        return [(q0, q1, q0 * lane, min(self.n, q1 * lane))
                for q0, q1 in zip(cuts[:-1], cuts[1:], strict=True)]

    def cells(self, width: int, lane: int) -> RowBlocks:
        """The blocks of ``width`` cells a row (a row's cells consecutive), in blocks of
        ``lane`` cells: here one cut of ``n × width`` cells; a backend that splits the
        rows keeps each partition's cells with its rows."""
        return RowBlocks(self.n * width, lane, self.n_jobs)

    def settle(self) -> None:
        """A fit that ended: let go of what its passes still hold (in memory, nothing;
        a backend waits for its pending work and frees its buffers)."""

    def abandon(self) -> None:
        """A fit that raised: as :meth:`settle`, never raising over the fit's error."""

    def map(self, stage: Callable[..., tuple[tuple, Any]], *rows: Any,
            **consts: Any) -> tuple[tuple, Any]:
        """``stage(blocks, *rows, **consts) -> (outputs, stat)`` over every row: here
        once, on these blocks (the stage runs its own lanes on threads), giving
        ``(outputs, [stat])``.  Blocks over partitions
        (:class:`oracleboost.rows.partition_blocks.PartitionBlocks`: a cluster's) run the
        same stage once per partition, its outputs staying where the partition is and
        its stats coming back in partition order: a caller that combines the list in
        order gets the same bits from both.  A :func:`deferred_stat` stage gives,
        in place of the list, an object whose ``get()`` returns it."""
        outputs, stat = stage(self, *rows, **consts)
        return outputs, ReadyStats([stat]) if getattr(stage, "stat_later", False) else [stat]

    def empty(self, shape: int | tuple[int, ...] | None = None) -> np.ndarray:
        """A new per-row array for a stage's output (``shape`` defaults to ``(n,)``),
        its values undefined.  On a cluster's worker it may be a buffer of an earlier
        round that nothing holds any more (:func:`oracleboost.distributed.cluster.pooled_empty`).
        In memory it is ``np.empty``: a fit's process keeps the memory it frees (glibc
        raises its mmap threshold after the first free), so a round's new arrays do not
        fault (measured at 1,000,000 rows: no page faults a round, and such a pool was
        no faster)."""
        return np.empty(self.n if shape is None else shape)

    def map_one(self, part: int, stage: Callable[..., tuple[tuple, Any]], *rows: Any,
                **consts: Any) -> Any:
        """The stat of ``stage`` on partition ``part`` alone (in memory, the one
        partition: every row); its outputs are dropped."""
        if part != 0:
            raise IndexError(f"partition {part} of 1")
        return stage(self, *rows, **consts)[1]

    def full(self, value: float | np.ndarray) -> np.ndarray:
        """A per-row array of ``value`` (a number, or a row of shape (K,))."""
        value = np.asarray(value, dtype=np.float64)
        return np.full((self.n,) + value.shape, value)


def outputs_only(n_outputs: int) -> Callable[[Callable], Callable]:
    """Mark a stage whose stat is always None and that returns ``n_outputs`` per-row
    arrays: on a cluster,
    :meth:`~oracleboost.rows.partition_blocks.PartitionBlocks.map` then returns at once,
    without a round trip to the workers (its stats are a list of None)."""
    def mark(stage: Callable) -> Callable:
        stage.n_outputs = n_outputs  # type: ignore[attr-defined]
        return stage
    return mark


def deferred_stat(n_outputs: int) -> Callable[[Callable], Callable]:
    """Mark a stage that returns ``n_outputs`` per-row arrays and a stat its caller reads
    later, not at once: :meth:`RowBlocks.map` then gives, in place of the list of stats,
    an object whose ``get()`` returns it.  On a cluster the client does not wait for the
    stage: its stats come back with the next stats the client waits for (one round trip
    fewer), or when ``get()`` is called first."""
    def mark(stage: Callable) -> Callable:
        stage.n_outputs = n_outputs  # type: ignore[attr-defined]
        stage.stat_later = True  # type: ignore[attr-defined]
        return stage
    return mark


@stored_as("ReadyStats")
class ReadyStats:
    """The stats of a :func:`deferred_stat` stage run in memory: ready at once."""

    def __init__(self, stats: list) -> None:
        self._stats = stats

    def get(self) -> list:
        return self._stats


def ordered_sum(parts: ArrayLike) -> Any:
    """``parts[0] + parts[1] + …`` along axis 0, left to right, in float64: the same bits
    wherever it runs (``np.add.accumulate`` is sequential by definition; ``np.sum`` is
    pairwise and Python's ``sum`` compensates since 3.12)."""
    parts = np.asarray(parts, dtype=np.float64)
    if parts.shape[0] == 1:  # one term: itself (accumulate's answer, without its cost)
        return parts[0]
    return np.add.accumulate(parts, axis=0)[-1]
