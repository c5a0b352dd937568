"""Memory that a histogram tree's histograms reuse from one tree to the next.

A tree keeps a histogram for each leaf that may still split, and sums each of them
in runs of rows (:func:`~.hist_trees.partition_histogram`).  At 50 features of 255 bins
and two channels, a histogram is 200 KB, and a tree of 255 leaves holds 52 MB of them.
When each histogram is a new array, the allocator gives that memory back to the system
after every tree and takes it again during the next one.  Each 4 KB page touched again
is then a page fault: 12,000 faults a tree of 255 leaves at 100,000 × 50, a fifth of the
tree's time.  LightGBM keeps its histograms in a pool (``HistogramPool``).  So does
:func:`buffers_of`: a bound oracle's trees reuse the same memory.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["HistogramBuffers", "buffers_of"]


class HistogramBuffers:
    """Three growing float64 buffers: one holds the leaves' histograms, one the sums of
    one histogram's runs, and one the histograms of a leaf's rows in each partition that
    a collective call's member sums for the others.  Each method returns a view of the
    shape asked for.  The buffer grows when a larger view is asked for; otherwise it is
    reused."""

    def __init__(self) -> None:
        self._leaves = np.empty(0)
        self._runs = np.empty(0)
        self._parts = np.empty(0)

    @staticmethod
    def _view(buffer: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        size = int(np.prod(shape))
        if buffer.size < size:
            buffer = np.empty(size)
        return buffer, buffer[:size].reshape(shape)

    def leaves(self, L: int, F: int, B: int, C: int) -> np.ndarray:
        """``(L, F, B, C)``: a histogram for each of ``L`` leaves (uninitialised)."""
        self._leaves, view = self._view(self._leaves, (L, F, B, C))
        return view

    def runs(self, R: int, F: int, B: int, C: int) -> np.ndarray:
        """``(R, F, B, C)``: a histogram for each of ``R`` runs (uninitialised)."""
        self._runs, view = self._view(self._runs, (R, F, B, C))
        return view

    def parts(self, P: int, F: int, B: int, C: int) -> np.ndarray:
        """``(P, F, B, C)``: a histogram for each of ``P`` partitions (uninitialised)."""
        self._parts, view = self._view(self._parts, (P, F, B, C))
        return view


_lock = threading.Lock()
_free: weakref.WeakKeyDictionary[Any, list[HistogramBuffers]] = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def buffers_of(owner: Any) -> Iterator[HistogramBuffers]:
    """Buffers for one tree of ``owner`` (a bound oracle), kept after the block for its
    next tree.  Two trees grown at once on one oracle (from two threads) get buffers of
    their own.  The buffers are kept beside the owner, never in it: pickling or copying
    a bound oracle carries none of them, and they go when it goes."""
    with _lock:
        free = _free.setdefault(owner, [])
        buffers = free.pop() if free else HistogramBuffers()
    try:
        yield buffers
    finally:
        with _lock:
            free.append(buffers)
