"""The stump oracle over rows held by a Dask cluster's workers: the rows' side of
:class:`~oracleboost.oracles.partitioned_stumps.PartitionedStumpOracle` (which makes the
histograms partition by partition and adds them in order), on Dask.

:class:`ClusterRows` holds the fit's features as a dask array whose row chunks are the
partitions: the thresholds of the oracle in memory are made on the workers from the
same sample rows (:func:`sampled_thresholds`), and each partition is binned in the very
task that makes its float64 rows, the workers then holding one byte a feature a row.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.distributed.cluster import ClusterBlocks, gather
from oracleboost.oracles.partitioned_stumps import PartitionedStumpOracle
from oracleboost.oracles.stumps import StumpOracle, bin_thresholds
from oracleboost.rows.partitioned import Partitioned

__all__ = ["ClusterRows", "ClusterStumpOracle"]


@dataclass(frozen=True)
class ClusterRows:
    """A fit's training features on a cluster: ``X``, a float64 dask array whose row
    chunks are the partitions of ``blocks``; ``copy()`` makes ``X`` again under names of
    its own (:class:`~oracleboost.distributed.cluster.FreshNames`), for each graph that reads it."""

    X: object
    blocks: ClusterBlocks
    copy: Callable[[], Any] | None = None
    #: The backend the rows are on (the oracles bind through it).
    backend: Any = None

    def fresh(self) -> Any:
        """``X`` (a dask array) for one graph: a copy when there is a ``copy``."""
        return self.X if self.copy is None else self.copy()

    def blocks_for(self, oracle: Any) -> ClusterBlocks:
        """The blocks, refusing an oracle whose ``block_size`` is not theirs."""
        if int(oracle.block_size) != self.blocks.block_size:
            raise ValueError(
                f"the oracle's block_size ({oracle.block_size}) must equal the booster's "
                f"({self.blocks.block_size}) for a fit on a dask array: the workers' "
                "partitions are whole blocks of both"
            )
        return self.blocks

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def stump_thresholds(self, oracle: StumpOracle) -> tuple[list[np.ndarray], Any]:
        """The thresholds of ``oracle`` in memory, made on the workers
        (:func:`sampled_thresholds`), and their future (what the partitions bin with)."""
        client = self.blocks.client
        # X is read twice (the sample, then every row to bin it; holding it between the
        # two would take 8 bytes a feature a row), each time from a copy of its own: the
        # second graph must not resubmit the first one's keys (see FreshNames)
        thresholds = client.compute(sampled_thresholds(self.fresh(), self.blocks.sizes,
                                                       oracle))
        return gather(client, [thresholds], self.blocks.generation)[0], thresholds

    def bind_partitions(self, bind: Callable, *args: Any) -> Partitioned:
        """``bind(partition's rows of X, *args)`` on each partition's worker, kept there
        (futures as a :class:`Partitioned`), and the later stages placed by them: a task
        a worker thread, where that partition's oracle is."""
        # bound in the very task that makes the partition's float64 rows (Dask's
        # optimisation fuses the blockwise chain, as long as no axis is dropped): a
        # worker thread holds one partition of X at a time, then only its codes; a task
        # of its own for the binding let a worker hold the next partition's rows too
        bound = self.fresh().map_blocks(_bound, bind, *args, dtype=object,
                                        meta=np.empty((0, 0), dtype=object))
        local = self.blocks.client.compute(
            bound.to_delayed(optimize_graph=True).ravel().tolist())
        out = Partitioned(tuple((f, None) for f in local), self.blocks.sizes)
        self.blocks.place(out)
        return out


def _bound(rows: np.ndarray, bind: Callable, *args: Any) -> Any:
    return bind(rows, *args)


#: Bytes of float64 sample values one task of :func:`sampled_thresholds` bins: a run
#: of features of the sample, the one copy of them a worker makes at a time.
_SAMPLE_GROUP_BYTES = 16 * 2**20


def _sample_rows_of(part: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return part[rows]


def _group_thresholds(columns: np.ndarray, max_bins: int, exact: bool
                      ) -> list[np.ndarray]:
    return bin_thresholds(columns, max_bins, exact)


def _joined(groups: list) -> list[np.ndarray]:
    return [t for group in groups for t in group]


def sampled_thresholds(X: Any, sizes: tuple, oracle: StumpOracle) -> Any:
    """The thresholds of the oracle in memory, ``bin_thresholds(X[sample_rows])``, as a
    ``dask.delayed`` made on the workers without holding the sample in one place: each
    partition keeps its own sample rows (``X`` is read in its partitions, ``sizes``
    rows each: what is binned next), and a run of features at a time is joined and
    binned (:data:`_SAMPLE_GROUP_BYTES`).  A feature's thresholds are made from its
    own column of the sample (:func:`~.stumps.bin_thresholds`), so the runs give the
    thresholds of the whole sample.  What the workers hold meanwhile is the sample,
    ``bin_sample × d × 8`` bytes over all of them, and one run's copy a task: never
    X (``dask.array``'s ``X[rows]`` made chunks as tall as X's and joined them all
    on one worker)."""
    import dask

    n, d = sum(sizes), X.shape[1]
    sample = oracle._sample(n)
    starts = np.cumsum((0,) + tuple(sizes))
    parts = X.to_delayed().ravel().tolist()
    if sample is not None:
        cuts = np.searchsorted(sample, starts)
        parts = [dask.delayed(_sample_rows_of)(part, sample[a:b] - start)
                 for part, a, b, start in zip(parts, cuts[:-1], cuts[1:], starts[:-1],
                                              strict=True)]
        n = sample.size
    width = max(1, _SAMPLE_GROUP_BYTES // (8 * n))
    groups = []
    for j in range(0, d, width):
        columns = [dask.delayed(operator.getitem)(
            part, (slice(None), slice(j, j + width))) for part in parts]
        groups.append(dask.delayed(_group_thresholds)(
            dask.delayed(np.concatenate)(columns), oracle.max_bins,
            oracle.exact))
    return dask.delayed(_joined)(groups)


class ClusterStumpOracle(PartitionedStumpOracle):
    """A :class:`~oracleboost.oracles.stumps.StumpOracle` bound to rows on a Dask
    cluster (:class:`ClusterRows`): ±1 stumps for ``correlate(r)`` with ``r`` held by the
    workers, the same answer as in memory."""
