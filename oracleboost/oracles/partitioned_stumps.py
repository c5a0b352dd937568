"""The stump oracle over rows held in partitions (:mod:`oracleboost.rows.partition_blocks`).

Each partition keeps, where it is held, a :class:`~.stumps.BoundStumpOracle` of its
rows alone, binned with the thresholds of the whole data (made from the same rows as in
memory: ``StumpOracle._sample``).  A query is then a map over the partitions: each makes
its histogram, block by block in block order, exactly as the oracle in memory makes the
histogram of that partition, and the partitions' histograms are added in partition order
(the order in memory) and scanned for the best split, with the code the oracle in memory
runs.  The answer's outputs on the training rows stay with the partitions.

Missing values (NaN) are fitted as in memory: a feature whose column holds NaN in any
partition has the missing-value bin everywhere (each partition says which features, the
union is taken), so the histograms and the splits are those of the oracle in memory.

The rows this oracle is bound to say where the partitions are (:class:`StumpRows`); the
Dask backend's are :class:`oracleboost.distributed.stumps.ClusterRows`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import numpy as np

from oracleboost.oracles import _stump_kernels as kernels
from oracleboost.oracles.base import BoundOracle, Hypothesis
from oracleboost.oracles.stumps import BoundStumpOracle, StumpOracle, row_centred
from oracleboost.rows.blocks import RowBlocks, deferred_stat, outputs_only
from oracleboost.rows.partition_blocks import PartitionedRows
from oracleboost.rows.partitioned import Derived, NotDistributedError, Partitioned, shaped_like

__all__ = ["PartitionedStumpOracle", "StumpRows", "local_stump_oracle"]


class StumpRows(PartitionedRows, Protocol):
    """Rows held in partitions that a stump oracle binds to: they also make the
    thresholds."""

    def stump_thresholds(self, oracle: StumpOracle) -> tuple[list[np.ndarray], Any]:
        """The thresholds of ``oracle`` in memory (``bin_thresholds`` of its sample
        rows), and the same as an argument of ``bind_partitions`` (a handle, say)."""


def local_stump_oracle(X: np.ndarray, oracle: StumpOracle,
                       thresholds: list[np.ndarray]) -> BoundStumpOracle:
    """A partition's oracle, where it is held (one thread: the partitions run side by
    side).  NaN is a missing value, as in memory; ±inf is refused."""
    if np.isinf(X).any():
        raise ValueError("Input X contains infinity (found in a partition of the dask "
                         "array on a worker); StumpOracle takes finite values and NaN "
                         "(missing)")
    return BoundStumpOracle(oracle, X, thresholds=thresholds, n_jobs=1)


def _partition_histograms(blocks: RowBlocks, local: BoundStumpOracle, *rows: np.ndarray,
                          kernel: str, shapes: tuple, columns: tuple,
                          split: int = 0) -> tuple[tuple, tuple]:
    outs = tuple(np.empty(shape) for shape in shapes)
    rows = tuple(r[:, None] if k in columns else r for k, r in enumerate(rows))
    local._histograms(getattr(kernels, kernel), rows, outs, split)
    return (), outs


@deferred_stat(0)
def _prefetched_histograms(blocks: RowBlocks, local: BoundStumpOracle, *rows: np.ndarray,
                           **consts: Any) -> tuple[tuple, tuple]:
    """:func:`_partition_histograms`, its stats fetched with the next ones waited for
    (``PartitionedStumpOracle._prefetch``)."""
    return _partition_histograms(blocks, local, *rows, **consts)


@dataclass(frozen=True)
class _Column:
    """A per-row array of shape (n,) that a histogram kernel reads as (n, 1) rows (made
    so where the partition is: ``_partition_histograms``' ``columns``)."""

    rows: Partitioned


def _partition_missing(blocks: RowBlocks, local: BoundStumpOracle) -> tuple[tuple, tuple]:
    """The features whose column holds NaN in this partition."""
    return (), (local._nan_bins,)


def _partition_counts(blocks: RowBlocks, local: BoundStumpOracle,
                      width: int) -> tuple[tuple, tuple]:
    """The partition's rows a bin, in the histograms' ``width`` (the bins of the whole
    data: a feature may have its missing-value bin only in other partitions; a query's
    histograms take the caller's shapes, :func:`_partition_histograms`)."""
    counts = np.zeros((local.n_features, width))
    counts[:, :local._counts.shape[1]] = local._counts
    return (), (counts,)


def _add_in_order(stats: list, outs: tuple) -> None:
    """The partitions' histograms added partition by partition, in order: what the
    oracle in memory does after summing each partition's blocks."""
    for k, out in enumerate(outs):
        out[...] = stats[0][k]
        for stat in stats[1:]:
            out += stat[k]


@outputs_only(1)
def _centred(blocks: RowBlocks, r: np.ndarray) -> tuple[tuple, None]:
    return (row_centred(r),), None


def _stump_outputs(local: BoundStumpOracle, j: int, t: int, left, right,
                   nan_left: bool | None) -> np.ndarray:
    """A stump's outputs on a partition's rows, from its codes (where it is held)."""
    return local._outputs(j, t, left, right, nan_left)


class PartitionedStumpOracle(BoundStumpOracle):
    """A :class:`~.stumps.StumpOracle` bound to rows held in partitions: ±1 stumps for
    ``correlate(r)`` with ``r`` held with the rows, the same answer as in memory."""

    #: A partition's oracle, made where it is held: ``(X's rows there, oracle,
    #: thresholds) -> local`` (the histogram trees' keep row-major codes instead).
    _bind_local = staticmethod(local_stump_oracle)

    def __init__(self, oracle: StumpOracle, rows: StumpRows) -> None:
        blocks = rows.blocks_for(oracle)
        BoundOracle.__init__(self, oracle, blocks.n)
        self.n_features = rows.n_features
        self.n_jobs = oracle.n_jobs
        self.blocks = blocks
        thresholds, where = rows.stump_thresholds(oracle)
        self._set_thresholds(thresholds)
        self._local = rows.bind_partitions(self._bind_local, oracle, where)  # the codes
        # a missing-value bin where any partition's column holds NaN
        nan_bins = np.zeros(self.n_features, dtype=bool)
        for (part,) in blocks.map(_partition_missing, self._local)[1]:
            nan_bins |= part
        self._set_nan_bins(nan_bins)
        self._counts = np.empty((self.n_features, self._B))
        _add_in_order(blocks.map(_partition_counts, self._local, width=self._B)[1],
                      (self._counts,))
        self._set_missing()

    @property
    def codes(self) -> np.ndarray:
        raise NotDistributedError("the codes of an oracle over partitions stay with its "
                                  "partitions")

    #: The histograms submitted by :meth:`_prefetch`: ``(kernel, rows, split, pending
    #: stats)``, or None.
    _prefetched: tuple | None = None

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """Submit now the histograms the next query will ask for, their stats to come
        back with the next ones waited for (the booster's step: one round trip a round
        fewer): those of ``r`` (:func:`~._stump_kernels.hist_1d`, what ``correlate(r)``
        and ``project(r)`` without weights make) or, given ``shifted = (memo, c)`` and a
        plan for it (:meth:`_shift_plan`), the counts of the last answer's side that
        ``_project_shifted(r, memo, c)`` makes.  They are used if the next histograms
        asked for are these very ones (the same kernel, rows and split); else dropped
        (the same histograms, made by the same stage: no bit changes)."""
        plan = None if shifted is None else self._shift_plan(shifted[0])
        if plan is not None:
            j, side = plan[:2]
            if j is not None:  # (a constant answer needs no counts)
                self._submit_ahead(kernels.side_counts, side, j)
        elif isinstance(r, Partitioned) and r.ndim == 1:
            self._submit_ahead(kernels.hist_1d, r, 0)

    def _submit_ahead(self, kernel, rows: Any, split: int) -> None:
        _, pending = self.blocks.map(_prefetched_histograms, self._local, rows,
                                     kernel=kernel.__name__,
                                     shapes=((self.n_features, self._B),), columns=(),
                                     split=split)
        self._prefetched = (kernel, rows, split, pending)

    def _histograms(self, kernel, rows, outs, split: int = 0) -> None:
        columns = tuple(k for k, r in enumerate(rows) if isinstance(r, _Column))
        rows = tuple(r.rows if isinstance(r, _Column) else r for r in rows)
        ahead, self._prefetched = self._prefetched, None
        if ahead is not None and ahead[0] is kernel and ahead[1] is rows[0] \
                and ahead[2] == split and len(rows) == 1 \
                and outs[0].shape == (self.n_features, self._B):
            stats = ahead[3].get()  # (one array of rows or bins, into (d, B): the same call)
        else:
            _, stats = self.blocks.map(_partition_histograms, self._local, *rows,
                                       kernel=kernel.__name__,
                                       shapes=tuple(o.shape for o in outs), columns=columns,
                                       split=split)
        _add_in_order(stats, outs)

    def _answer_shifted(self, target: Partitioned, shifted: tuple,
                        random_state: int | None) -> Hypothesis:
        # (the partitions' target: project's checks are the histograms', as in project)
        return self._project(target, None, random_state, shifted)

    @staticmethod
    def _as_column(a: Partitioned) -> _Column:
        return _Column(a)

    def _outputs(self, j: int, t: int, left, right, nan_left: bool | None = None
                 ) -> Partitioned:
        # made by each stage that reads them (a byte a row to read, 0.1 ms a million
        # rows): no call of its own
        vector = np.ndim(left) > 0
        return Derived(self._local.parts, self._local.sizes, 2 if vector else 1,
                       len(left) if vector else None, fn=_stump_outputs,
                       args=(j, t, left, right, nan_left))

    @staticmethod
    def _query(r):
        return r

    def _refuse_query(self, r: Partitioned, name: str = "r") -> NoReturn:  # type: ignore[override]
        raise ValueError(f"{name} contains NaN or inf (held by the workers), or its sums "
                         "over the rows overflow float64; every entry must be finite")

    def _full(self, value: float | np.ndarray) -> Partitioned:
        return self.blocks.full(value)

    def correlate(self, r: Partitioned, *, random_state: int | None = None,
                  features: Any = None) -> Hypothesis:
        """±1 stumps for a query of shape (n,), label-coded stumps for (n, K), held with
        the rows (on the columns ``features`` alone, when given); the same answer as in
        memory."""
        if not isinstance(r, Partitioned) or (r.ndim == 2 and r.columns is None):
            raise NotDistributedError(
                "a cluster's stump oracle answers correlate(r) for a query r of shape (n,) "
                "or (n, K) held by the workers (a booster's weights)"
            )
        return self._correlate(r, random_state, **self._features(features))

    def _row_centred(self, r: Partitioned) -> Partitioned:
        return shaped_like(self.blocks.map(_centred, r)[0][0], r)

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None, features: Any = None) -> Hypothesis:
        """The least-squares stump for a target held with the rows (shape (n,), or (n, K):
        a stump of vector leaves), with the weights ``sample_weight`` (held with the rows,
        normalised by the booster as in memory) or none, on the columns ``features``
        alone when given; the same answer as in memory."""
        if not isinstance(target, Partitioned) or (
                target.ndim == 2 and target.columns is None) or not (
                sample_weight is None or isinstance(sample_weight, Partitioned)):
            raise NotDistributedError(
                "a cluster's stump oracle answers project(target, sample_weight) for a "
                "target of shape (n,) or (n, K) and weights of shape (n,) held by the "
                "workers (a booster's gradient)"
            )
        return self._project(target, sample_weight, random_state,
                             **self._features(features))
