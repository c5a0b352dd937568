"""The stump oracle over rows held by a Dask cluster's workers.

Each worker keeps, for each of its partitions, a :class:`~.stumps.BoundStumpOracle` of
the partition's rows alone, binned with the thresholds of the whole data (made from
the same rows as in memory: :func:`~.stumps.sample_rows`).  A query is then a map over
the partitions: each worker makes its partition's histogram, block by block in block
order, exactly as the oracle in memory makes the histogram of that partition, and the
client adds the partitions' histograms in partition order (the order in memory) and
scans them for the best split, with the code the oracle in memory runs.  The answer's
outputs on the training rows stay on the workers.  The float64 features are read once,
to bin them; the workers then hold one byte a feature a row.

Missing values (NaN) are fitted as in memory: a feature whose column holds NaN in any
partition has the missing-value bin everywhere (the workers say which features, the
client takes their union), so the histograms and the splits are those of the oracle in
memory.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from oracleboost.distributed.cluster import ClusterBlocks, gather
from oracleboost.oracles import _stump_kernels as kernels
from oracleboost.oracles.base import BoundOracle, Hypothesis
from oracleboost.oracles.stumps import BoundStumpOracle, StumpOracle, bin_thresholds, row_centred
from oracleboost.rows.blocks import RowBlocks, deferred_stat, outputs_only
from oracleboost.rows.partitioned import Derived, NotDistributedError, Partitioned, shaped_like

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


def _local_oracle(X: np.ndarray, oracle: StumpOracle,
                  thresholds: list[np.ndarray]) -> BoundStumpOracle:
    """A partition's oracle, on its worker (one thread: the worker's threads take
    other partitions).  NaN is a missing value, as in memory; ±inf is refused."""
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
    """:func:`_partition_histograms`, its stats fetched with the next ones the client
    waits for (``ClusterStumpOracle._prefetch``)."""
    return _partition_histograms(blocks, local, *rows, **consts)


@dataclass(frozen=True)
class _Column:
    """A per-row array of shape (n,) that a histogram kernel reads as (n, 1) rows (made
    so on the workers: ``_partition_histograms``' ``columns``)."""

    rows: Partitioned


def _partition_missing(blocks: RowBlocks, local: BoundStumpOracle) -> tuple[tuple, tuple]:
    """The features whose column holds NaN in this partition."""
    return (), (local._nan_bins,)


def _partition_counts(blocks: RowBlocks, local: BoundStumpOracle,
                      width: int) -> tuple[tuple, tuple]:
    """The partition's rows a bin, in the histograms' ``width`` (the bins of the whole
    data: a feature may have its missing-value bin only in other partitions; a query's
    histograms take the client's shapes, :func:`_partition_histograms`)."""
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
    """A stump's outputs on a partition's rows, from its codes (on its worker)."""
    return local._outputs(j, t, left, right, nan_left)


class ClusterStumpOracle(BoundStumpOracle):
    """A :class:`~.stumps.StumpOracle` bound to rows on a Dask cluster: ±1 stumps for
    ``correlate(r)`` with ``r`` held by the workers, the same answer as in memory."""

    def __init__(self, oracle: StumpOracle, rows: ClusterRows) -> None:

        blocks = rows.blocks_for(oracle)
        BoundOracle.__init__(self, oracle, blocks.n)
        self.n_features = rows.X.shape[1]
        self.n_jobs = oracle.n_jobs
        self.blocks = blocks
        client = blocks.client
        # X is read twice (the sample, then every row to bin it; holding it between the
        # two would take 8 bytes a feature a row), each time from a copy of its own: the
        # second graph must not resubmit the first one's keys (see FreshNames)
        thresholds = client.compute(sampled_thresholds(rows.fresh(), blocks.sizes,
                                                       oracle))
        self._set_thresholds(gather(client, [thresholds], blocks.generation)[0])
        self._local = rows.bind_partitions(_local_oracle, oracle, thresholds)  # the codes
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
        raise NotDistributedError("the codes of a cluster's oracle stay on its workers")

    #: The histograms submitted by :meth:`_prefetch`: ``(kernel, rows, split, pending
    #: stats)``, or None.
    _prefetched: tuple | None = None

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """Submit now the histograms the next query will ask for, their stats to come
        back with the next ones the client waits for (the booster's step: one round trip
        a round fewer): those of ``r`` (:func:`~._stump_kernels.hist_1d`, what
        ``correlate(r)`` and ``project(r)`` without weights make) or, given ``shifted =
        (memo, c)`` and a plan for it (:meth:`_shift_plan`), the counts of the last
        answer's side that ``_project_shifted(r, memo, c)`` makes.  They are used if the
        next histograms asked for are these very ones (the same kernel, rows and split);
        else dropped (the same histograms, made by the same stage: no bit changes)."""
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
        # (the workers' target: project's checks are the histograms', as in project)
        return self._project(target, None, random_state, shifted)

    @staticmethod
    def _as_column(a: Partitioned) -> _Column:
        return _Column(a)

    def _outputs(self, j: int, t: int, left, right, nan_left: bool | None = None
                 ) -> Partitioned:
        # made by each stage that reads them (a byte a row to read, 0.1 ms a million
        # rows): no task of its own
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

    def correlate(self, r: Partitioned, *, random_state: int | None = None) -> Hypothesis:
        """±1 stumps for a query of shape (n,), label-coded stumps for (n, K), held by
        the workers; the same answer as in memory."""
        if not isinstance(r, Partitioned) or (r.ndim == 2 and r.columns is None):
            raise NotDistributedError(
                "a cluster's stump oracle answers correlate(r) for a query r of shape (n,) "
                "or (n, K) held by the workers (a booster's weights)"
            )
        return self._correlate(r, random_state)

    def _row_centred(self, r: Partitioned) -> Partitioned:
        return shaped_like(self.blocks.map(_centred, r)[0][0], r)

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None) -> Hypothesis:
        """The least-squares stump for a target held by the workers (shape (n,), or (n, K):
        a stump of vector leaves), with the weights ``sample_weight`` (held by the workers,
        normalised by the booster as in memory) or none; the same answer as in memory."""
        if not isinstance(target, Partitioned) or (
                target.ndim == 2 and target.columns is None) or not (
                sample_weight is None or isinstance(sample_weight, Partitioned)):
            raise NotDistributedError(
                "a cluster's stump oracle answers project(target, sample_weight) for a "
                "target of shape (n,) or (n, K) and weights of shape (n,) held by the "
                "workers (a booster's gradient)"
            )
        return self._project(target, sample_weight, random_state)
