"""A finite class of columns (``LinearOracle``, ``MatrixOracle``) over rows held in
partitions (:mod:`oracleboost.rows.partition_blocks`).

Each partition keeps, where it is held, its rows of the class's matrix ``A`` (X's rows
for ``LinearOracle``; ``H[X]`` for ``MatrixOracle``) as a bound oracle of its own.  A
product is then a map over the partitions: ``Aᵀ r`` comes back as each partition's
lanes' partials, which are added in lane order, exactly as the oracle in memory adds its
lanes (a partition starts on a lane boundary); ``A w`` and an answer's outputs stay with
the partitions.  The overflow guards read the global peaks (of the columns at bind; of
the query with its partials, in the same pass), so every product is the product in
memory, bit for bit.

The rows this oracle is bound to say where the partitions are
(:class:`~oracleboost.rows.partition_blocks.PartitionedRows`); the Dask backend's are
:class:`oracleboost.distributed.stumps.ClusterRows`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from oracleboost._numerics import largest_row_norm
from oracleboost._validation import check_finite_array
from oracleboost.oracles.base import BoundOracle, Hypothesis, max_abs
from oracleboost.oracles.matrix import (
    BoundColumns,
    ColumnsHeldElsewhere,
    column_exponents,
    column_outputs,
    projection_parts,
    rows_times,
    transposed_parts,
    unscaled,
)
from oracleboost.rows.blocks import RowBlocks, deferred_stat, outputs_only
from oracleboost.rows.partition_blocks import PartitionBlocks, PartitionedRows
from oracleboost.rows.partitioned import Derived, NotDistributedError, Partitioned, with_ndim

__all__ = ["PartitionedColumns", "local_columns"]


def local_columns(X: np.ndarray, oracle: Any, block_size: int,
                  make_blocks: Callable[[int, int], RowBlocks]) -> BoundColumns:
    """A partition's rows of the class, where it is held (on ``make_blocks``' blocks:
    one thread)."""
    A, make = oracle._matrix_of(X)
    return BoundColumns(oracle, A, make, blocks=make_blocks(A.shape[0], block_size))


def _column_peaks(blocks: RowBlocks, local: BoundColumns) -> tuple[tuple, np.ndarray]:
    return (), np.maximum(local.A.max(axis=0), -local.A.min(axis=0))


def _transposed(blocks: RowBlocks, local: BoundColumns, r, *,
                k: int) -> tuple[tuple, tuple[float, np.ndarray]]:
    return (), (max_abs(r), transposed_parts(blocks, local.A, r, k))


@deferred_stat(0)
def _prefetched_transposed(blocks: RowBlocks, local: BoundColumns, r, *,
                           k: int) -> tuple[tuple, tuple[float, np.ndarray]]:
    """:func:`_transposed`, its stats fetched with the next ones the client waits for
    (``PartitionedColumns._prefetch``)."""
    return _transposed(blocks, local, r, k=k)


@outputs_only(1)
def _times(blocks: RowBlocks, local: BoundColumns, *, w: np.ndarray,
           k: int) -> tuple[tuple, None]:
    return (unscaled(rows_times(blocks, local.A, w, k), k),), None


def _projection_peaks(blocks: RowBlocks, w, target) -> tuple[tuple, tuple]:
    return (), (None if w is None else float(w.max()), max_abs(target))


def _projection(blocks: RowBlocks, local: BoundColumns, w, target, *, e_w: int, e_t: int,
                col_exp: np.ndarray) -> tuple[tuple, np.ndarray]:
    return (), projection_parts(blocks, local.A, w, target, e_w, e_t, col_exp)


def _largest_row_norm(blocks: RowBlocks, local: BoundColumns, *, extra: float,
                      peak: float | None) -> tuple[tuple, float]:
    return (), largest_row_norm(local.A, extra, peak)


def _row(blocks: RowBlocks, local: BoundColumns, *others, i: int) -> tuple[tuple, tuple]:
    return (), (np.array(local.A[i], dtype=np.float64), *(o[i] for o in others))


def _local_outputs(local: BoundColumns, j: int, scale: float) -> np.ndarray:
    return column_outputs(local.A, j, scale)


class PartitionedColumns(ColumnsHeldElsewhere):
    """A ``LinearOracle`` or ``MatrixOracle`` bound to rows held in partitions: the same
    answers as in memory, for queries held with the rows."""

    held = "on the cluster's workers"

    blocks: PartitionBlocks

    def __init__(self, oracle: Any, rows: PartitionedRows, make: Callable) -> None:
        blocks = rows.blocks_for(oracle)
        BoundOracle.__init__(self, oracle, blocks.n)
        self._make = make
        self.blocks = blocks
        self._local = rows.bind_partitions(local_columns, oracle, blocks.block_size,
                                           blocks.executor.worker_blocks)
        peaks = np.max(blocks.map(_column_peaks, self._local)[1], axis=0)
        self._peak = float(peaks.max())  # max |A|
        self._col_exp = column_exponents(peaks)
        self._n_columns = int(peaks.shape[0])

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """Submit now the products ``Aᵀr`` (unscaled) that ``correlate(r)`` starts from,
        their stats to come back with the next ones the client waits for (the booster's
        step: one round trip a round fewer).  Used if the next products asked for are of
        this very ``r``; else dropped (the same stage: no bit changes).  Nothing for a
        ``project`` (its products are others: ``Aᵀ(w t)`` and ``(A²)ᵀw``, scaled)."""
        if not project and shifted is None and isinstance(r, Partitioned) and r.ndim == 1:
            _, pending = self.blocks.map(_prefetched_transposed, self._local, r, k=0)
            self._prefetched = (r, pending)

    _prefetched: tuple | None = None

    def _transposed(self, r, unscale: bool = True) -> np.ndarray:
        # the query's peak comes with the partials made unscaled; a query large enough
        # to need scaling (beyond ~1e300 a row) is made again, scaled
        ahead, self._prefetched = self._prefetched, None
        if ahead is not None and ahead[0] is r:
            stats = ahead[1].get()
        else:
            stats = self.blocks.map(_transposed, self._local, r, k=0)[1]
        k = self._overflow_shift(max(peak for peak, _ in stats), self.n_samples)
        if k:
            stats = self.blocks.map(_transposed, self._local, r, k=k)[1]
        parts = np.concatenate([p for _, p in stats])
        return self._finish_transposed(parts, k, unscale, r.ndim)

    def _combine(self, w: np.ndarray) -> Partitioned:
        k = self._overflow_shift(max_abs(w), w.shape[0])
        (out,), _ = self.blocks.map(_times, self._local, w=w, k=k)
        return out if w.ndim == 1 else with_ndim(out, 2, w.shape[1])

    def _project(self, target, sample_weight, random_state):
        stats = self.blocks.map(_projection_peaks, sample_weight, target)[1]
        w_top = 1.0 if sample_weight is None else max(w for w, _ in stats)
        e_w, e_t = int(np.frexp(w_top)[1]), int(np.frexp(max(t for _, t in stats))[1])
        parts = self.blocks.map(_projection, self._local, sample_weight, target, e_w=e_w,
                                e_t=e_t, col_exp=self._col_exp)[1]
        return self._projection_answer(np.concatenate(parts), e_t)

    def _outputs(self, j: int, scale: float) -> Derived:
        # made by each stage that reads them (a column of the partition's rows)
        return Derived(self._local.parts, self._local.sizes, 1, fn=_local_outputs,
                       args=(j, scale))

    def largest_row_norm(self, extra: float = 0.0, peak: float | None = None) -> float:
        """:func:`~oracleboost._numerics.largest_row_norm` over every partition's rows."""
        return max(self.blocks.map(_largest_row_norm, self._local, extra=float(extra),
                                   peak=peak)[1])

    def row(self, i: int, *others: Partitioned) -> tuple:
        """Row ``i`` of the columns and entry ``i`` of each of ``others`` (per-row arrays
        held with the rows), from where they are held: one call."""
        sizes = self.blocks.sizes
        part = int(np.searchsorted(np.cumsum(sizes), i, side="right"))
        return self.blocks.map_one(part, _row, self._local, *others,
                                   i=i - int(sum(sizes[:part])))

    # -- the public queries, for queries held with the rows (no n-long checks here: the
    # boosters' queries are made finite where the partitions are)
    def correlate(self, r: Partitioned, *, random_state: int | None = None) -> Hypothesis:
        if not isinstance(r, Partitioned) or r.ndim != 1:
            raise NotDistributedError(
                f"a cluster's {type(self.oracle).__name__} answers correlate(r) for a query "
                "r of shape (n,) held by the workers"
            )
        return self._correlate(r, random_state)

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None) -> Hypothesis:
        if not isinstance(target, Partitioned) or target.ndim != 1 or not (
                sample_weight is None or isinstance(sample_weight, Partitioned)):
            raise NotDistributedError(
                f"a cluster's {type(self.oracle).__name__} answers project(target, "
                "sample_weight) for a target of shape (n,) and weights held by the workers"
            )
        return self._project(target, sample_weight, random_state)

    def correlation_vector(self, r: Any) -> np.ndarray:
        if not isinstance(r, Partitioned):
            raise NotDistributedError(
                f"a cluster's {type(self.oracle).__name__} answers correlation_vector(r) "
                "for r held by the workers"
            )
        return self._representable(self._transposed(r), "correlation vector Hᵀr")

    def combine(self, w: Any) -> Partitioned:
        w = np.asarray(w, dtype=np.float64)
        if w.ndim not in (1, 2):
            raise ValueError(f"w must have shape (J,) or (J, k); got {w.shape}")
        check_finite_array(w, "w", ndim=(1, 2))
        return self._combine(w)
