"""numba's parallel kernels (``prange``) on a chosen number of threads.

A round's passes over the rows are short (a pass over 100,000 rows takes tens of
microseconds), and handing work to a Python thread costs about as much (a wake-up, the
GIL); numba's threads start a parallel region in about 2 µs.  The kernels that run on
them split their work into pieces fixed by the data alone (row blocks, lanes, runs of
features), each piece written into its own slot, so the answer does not depend on how
many threads run them (:mod:`oracleboost._blocks`).

numba's default threading layer is OpenMP (TBB when installed), the runtime LightGBM's
threads use too.  Its ``workqueue`` fallback is not safe when several Python threads
launch kernels at once, so there a lock makes them take turns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numba

__all__ = ["max_threads", "run_parallel"]

_lock = threading.Lock()


def max_threads() -> int:
    """Threads numba's parallel kernels may use (``NUMBA_NUM_THREADS``)."""
    return int(numba.config.NUMBA_NUM_THREADS)


def _unsafe_layer() -> bool:
    try:
        return numba.threading_layer() == "workqueue"
    except ValueError:  # no parallel kernel has run yet: the layer is not chosen
        return True


def run_parallel(kernel: Callable[..., Any], threads: int, *args: Any) -> Any:
    """``kernel(*args)`` with numba's thread count set to ``threads`` (at most
    :func:`max_threads`) for this call; the setting is the calling thread's own and is
    restored afterwards."""
    threads = max(1, min(int(threads), max_threads()))
    if _unsafe_layer():
        with _lock:
            return _call(kernel, threads, args)
    return _call(kernel, threads, args)


def _call(kernel: Callable[..., Any], threads: int, args: tuple) -> Any:
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(previous)
