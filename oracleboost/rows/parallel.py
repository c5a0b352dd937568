"""numba's parallel kernels (``prange``) on a chosen number of threads.

A round's passes over the rows are short (a pass over 100,000 rows takes tens of
microseconds), and handing work to a Python thread costs about as much (a wake-up, the
GIL); numba's threads start a parallel region in about 2 µs.  The kernels that run on
them split their work into pieces fixed by the data alone (row blocks, lanes, runs of
features), each piece written into its own slot, so the answer does not depend on how
many threads run them (:mod:`oracleboost.rows.blocks`).

numba's default threading layer is OpenMP (TBB when installed), the runtime LightGBM's
threads use too.  Its ``workqueue`` fallback is not safe when several Python threads
launch kernels at once, so there a lock makes them take turns.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numba
import numpy as np

__all__ = ["concurrent_launches", "kernel_threads", "max_threads", "run_parallel"]

_lock = threading.RLock()  # a kernel_threads block may run run_parallel


def max_threads() -> int:
    """Threads numba's parallel kernels may use (``NUMBA_NUM_THREADS``)."""
    return int(numba.config.NUMBA_NUM_THREADS)


@numba.njit(parallel=True, cache=True)
def _probe(out):  # pragma: no cover - compiled
    for i in numba.prange(out.shape[0]):
        out[i] = i


@functools.cache
def _layer() -> str:
    """numba's threading layer (chosen at its first parallel kernel: run one)."""
    _probe(np.empty(1))
    return str(numba.threading_layer())


def concurrent_launches() -> bool:
    """Whether several Python threads may run parallel kernels at once (not on
    numba's ``workqueue`` layer)."""
    return _layer() != "workqueue"


def _unsafe_layer() -> bool:
    return not concurrent_launches()


@functools.cache
def _thread_count_calls() -> tuple[Callable[[], int], Callable[[int], None]]:
    """numba's get and set of the calling thread's count, without the checks of the
    public functions (they start the pool and validate on every call: 5 µs a get and a
    set, against 1 µs here; a round makes tens of calls).  The public ones if numba
    no longer has these."""
    numba.get_num_threads()  # starts the threads once
    try:
        from numba.np.ufunc import parallel
        return parallel._get_num_threads, parallel._set_num_threads
    except (ImportError, AttributeError):  # pragma: no cover - another numba
        return numba.get_num_threads, numba.set_num_threads


def _switch(threads: int) -> int | None:
    """Set the calling thread's count to ``threads`` (at most :func:`max_threads`) if it
    differs; the count it was, to restore, or None when it was already that."""
    threads = max(1, min(int(threads), max_threads()))
    get, set_ = _thread_count_calls()
    previous = get()
    if previous == threads:
        return None
    set_(threads)
    return previous


def _restore(previous: int | None) -> None:
    if previous is not None:
        _thread_count_calls()[1](previous)


@contextlib.contextmanager
def kernel_threads(threads: int) -> Iterator[None]:
    """Within the block, the calling thread's parallel kernels run on ``threads`` of
    numba's threads (at most :func:`max_threads`); on the ``workqueue`` layer, one
    Python thread at a time.  The count is set only when it differs, and restored."""
    with _lock if _unsafe_layer() else contextlib.nullcontext():
        previous = _switch(threads)
        try:
            yield
        finally:
            _restore(previous)


def run_parallel(kernel: Callable[..., Any], threads: int, *args: Any) -> Any:
    """``kernel(*args)`` with numba's thread count set to ``threads`` (at most
    :func:`max_threads`) for this call; the setting is the calling thread's own and is
    restored afterwards.  (:func:`kernel_threads` without a context manager's generator:
    a tree of 255 leaves makes a thousand calls, and the generator cost 1.5 µs each.)"""
    if _unsafe_layer():
        with kernel_threads(threads):
            return kernel(*args)
    previous = _switch(threads)
    try:
        return kernel(*args)
    finally:
        _restore(previous)
