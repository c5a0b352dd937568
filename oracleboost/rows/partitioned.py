"""Per-row data held in partitions: the type every backend that splits the rows uses
(:class:`Partitioned`), the marks of its shape, and the error a backend raises for what it
cannot do.  The blocks that run a fit's passes over such rows are
:mod:`oracleboost.rows.partition_blocks`; no backend lives here: the Dask one is
:mod:`oracleboost.distributed`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

__all__ = ["NotDistributedError", "Partitioned", "PerPartition", "Rows", "Derived",
           "is_dask_collection", "with_ndim", "shaped_like"]


class NotDistributedError(TypeError):
    """A fit on a dask array asked for something that needs every row in one process."""


def is_dask_collection(x: object) -> bool:
    """Whether ``x`` is a Dask collection (without importing Dask)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


@dataclass(frozen=True)
class Partitioned:
    """A per-row array (or any per-row object) held in partitions (by a cluster's
    workers, say): ``parts[i] = (handle, index)``, the value being the result of the
    executor's ``handle`` (a future), or its ``index``-th output when ``index`` is not
    None (:func:`oracleboost.rows.partition_blocks.part_value`)."""

    parts: tuple
    sizes: tuple
    ndim: int = 1
    columns: int | None = None  # K of an (n, K) array, when the client knows it

    @property
    def shape(self) -> tuple[int, ...]:
        n = sum(self.sizes)
        return (n,) if self.ndim == 1 else (n, self.columns)


def with_ndim(rows: Any, ndim: int, columns: int | None = None) -> Any:
    """Per-row ``rows`` marked as of ``ndim`` dimensions (and ``columns`` for two): a
    :class:`Partitioned` (whose stage cannot tell the client its outputs' shape without
    a round trip) as such, an array in memory as it is."""
    if isinstance(rows, Partitioned):
        return dataclasses.replace(rows, ndim=ndim, columns=columns if ndim == 2 else None)
    return rows


def shaped_like(rows: Any, like: Any) -> Any:
    """``rows`` marked with the shape of ``like`` (see :func:`with_ndim`)."""
    if isinstance(rows, Partitioned):
        return with_ndim(rows, like.ndim, like.shape[1] if like.ndim == 2 else None)
    return rows


@dataclass(frozen=True)
class Derived(Partitioned):
    """A per-row array that no task holds: partition ``i``'s value is
    ``fn(value of parts[i], *args)``, made on its worker by each stage that reads it.
    For arrays cheap to make from what the workers hold and read by few stages (a
    stump's outputs, from the partition's codes): no task of its own a round (each
    costs the scheduler a millisecond), and no memory between stages."""

    fn: Callable | None = None
    args: tuple = ()


@dataclass(frozen=True)
class PerPartition:
    """A stage's argument that differs by partition: partition ``i`` gets ``values[i]``
    as it is (where the first row of each partition is, say: a draw keyed by a row's
    global index), by :meth:`~oracleboost.rows.partition_blocks.PartitionBlocks.map`.
    Rows in memory are one partition: a caller passes ``values[0]`` itself there."""

    values: tuple


#: Per-row values where the rows are: a NumPy array in memory, or a :class:`Partitioned`
#: held in a backend's partitions (a Dask cluster's workers).
Rows: TypeAlias = np.ndarray | Partitioned
