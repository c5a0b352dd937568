"""The histogram-tree oracle over rows held in partitions
(:mod:`oracleboost.rows.partition_blocks`).

Each partition keeps, where it is held, the codes of its rows (row-major, binned with
the thresholds of the whole data, as the stump oracle's partitions are: missing values
included, a feature whose column holds NaN in any partition having the missing-value bin
everywhere), a query's channels (made there from the booster's query), and its rows of
each leaf, in row order (one index array a leaf).
The client grows the tree (:func:`~.hist_trees.grow_tree`), counting each leaf's rows
partition by partition, and asks the partitions for

* a leaf's histogram: each partition's sum over the leaf's rows there
  (:func:`~.hist_trees.partition_histogram` of that partition alone), which the client
  adds in partition order, skipping the partitions without such rows, exactly as the
  oracle in memory sums the histogram of rows of several partitions;
* a split: each partition splits its rows of the leaf (stably, the left rows first, on a
  copy of them alone: a task leaves its inputs as they were) and says how many rows
  went left;
* the tree's outputs on the training rows, which stay with the partitions.

Only histograms and splits travel; a tree is the one grown in memory, bit for bit.
``correlate``'s scale (the power of two that brings the mean of ``|r|`` into [1, 2)) is
the mean summed partition by partition, as in memory
(:func:`~.hist_trees.partition_mean_abs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.oracles import _hist_tree_kernels as kernels
from oracleboost.oracles._hist_buffers import HistogramBuffers
from oracleboost.oracles.base import BoundOracle, Hypothesis
from oracleboost.oracles.hist_trees import (
    BoundHistTreeOracle,
    HistTreeOracle,
    abs_sum,
    add_in_order,
    partition_histogram,
    power_of_two_exponents,
    scaled_by,
)
from oracleboost.oracles.monotone import monotone_directions
from oracleboost.oracles.partitioned_stumps import (
    PartitionedStumpOracle,
    StumpRows,
    local_stump_oracle,
)
from oracleboost.oracles.stumps import StumpOracle, row_centred
from oracleboost.rows.blocks import RowBlocks, ordered_sum, outputs_only
from oracleboost.rows.partitioned import (
    NotDistributedError,
    Partitioned,
    PerPartition,
    with_ndim,
)

__all__ = ["LocalTreeBins", "PartitionedHistTreeOracle", "PartitionedLeafRows",
           "local_tree_bins"]


@dataclass(frozen=True)
class LocalTreeBins:
    """A partition's binned rows, where it is held: ``codes`` row-major (``i * d + j``),
    with what the oracle over partitions reads of its stump oracle (the features whose
    column holds NaN here, and the rows a bin)."""

    codes: np.ndarray
    n_features: int
    _nan_bins: np.ndarray
    _counts: np.ndarray


def local_tree_bins(X: np.ndarray, oracle: StumpOracle,
                    thresholds: list[np.ndarray]) -> LocalTreeBins:
    """A partition's rows binned with the whole data's ``thresholds``
    (:func:`~.partitioned_stumps.local_stump_oracle`), kept row-major; the stump
    oracle's own codes are let go."""
    stumps = local_stump_oracle(X, oracle, thresholds)
    codes = np.ascontiguousarray(stumps.codes).reshape(-1)
    return LocalTreeBins(codes, stumps.n_features, stumps._nan_bins, stumps._counts)


class _PartitionBins(PartitionedStumpOracle):
    """The stump oracle's bins over partitions (thresholds, NaN bins and the rows a
    bin, as the partitioned stump oracle makes them), each partition keeping its codes
    row-major (:func:`local_tree_bins`)."""

    _bind_local = staticmethod(local_tree_bins)


# -- the stages (each run on a partition, where it is held) ---------------------------------
def _abs_sum(blocks: RowBlocks, r: np.ndarray, *, e: int) -> tuple[tuple, float]:
    return (), abs_sum(r, e)


@outputs_only(1)
def _centred(blocks: RowBlocks, r: np.ndarray) -> tuple[tuple, None]:
    return (row_centred(r),), None


@outputs_only(1)
def _scaled_channels(blocks: RowBlocks, r: np.ndarray, *, exponents: tuple | None,
                     K: int) -> tuple[tuple, None]:
    """``correlate``'s channels, as in memory: ``(scaled r, |scaled r|)`` for ``r`` of
    shape (n,), the scaled row-centred r for (n, K) (unit weights: no column of ones)."""
    scaled = scaled_by(r, exponents)
    if not (K == 1 and r.ndim == 1):
        return (np.ascontiguousarray(scaled.reshape(blocks.n, K), dtype=np.float64),), None
    g = np.empty((blocks.n, 2))
    g[:, 0] = scaled
    np.abs(scaled, out=g[:, 1])
    return (g,), None


@outputs_only(1)
def _target_channels(blocks: RowBlocks, target: np.ndarray, w: np.ndarray | None, *,
                     K: int) -> tuple[tuple, None]:
    """``project``'s channels, as in memory: ``(w · target, w)``, or the target alone
    for unit weights (no column of ones)."""
    n = blocks.n
    if w is None:
        return (np.ascontiguousarray(target.reshape(n, K), dtype=np.float64),), None
    g = np.empty((n, K + 1))
    with np.errstate(over="ignore", invalid="ignore"):
        g[:, :K] = target.reshape(n, K) * w[:, None]
    g[:, K] = w
    return (g,), None


def _leaf_histogram(blocks: RowBlocks, local: LocalTreeBins, g: np.ndarray,
                    leaves: tuple | None, *, leaf: int, feats: np.ndarray,
                    n_hist_bins: int, channels: int) -> tuple[tuple, Any]:
    """The partition's histogram of a leaf's rows (``leaves[leaf]``; ``leaves`` None:
    no split yet, every row in order), None when it holds none of them."""
    if leaves is None:
        if blocks.n == 0:
            return (), None
        rows, ordered = np.arange(blocks.n, dtype=np.int64), g
    else:
        rows = leaves[leaf]
        if rows.size == 0:
            return (), None
        ordered = np.empty((rows.size, g.shape[1]))
        kernels.gather(rows, 0, rows.size, g, ordered, 1)
    return (), partition_histogram(local.codes, local.n_features, rows,
                                   np.array([0, rows.size], dtype=np.int64), ordered,
                                   feats, n_hist_bins, 1, channels=channels)


def _split(blocks: RowBlocks, local: LocalTreeBins, leaves: tuple | None, *, leaf: int,
           j: int, goes_left: np.ndarray) -> tuple[tuple, int]:
    """The partition's rows of each leaf after the leaf's split: its rows in row order,
    the left ones staying the leaf, the right ones a new last leaf (a stable partition),
    and how many went left.  Only the split leaf's rows are copied: a task leaves its
    inputs as they were, and the other leaves' arrays are shared, not copied (a copy of
    every row a split cost a tenth of a round's time at 10,000,000 rows)."""
    if leaves is None:
        leaves = (np.arange(blocks.n, dtype=np.int64),)
    rows = leaves[leaf].copy()
    n_left = int(kernels.split_rows(local.codes, local.n_features, rows, 0, rows.size, j,
                                    goes_left, np.empty(rows.size, dtype=np.int64)))
    new = list(leaves)
    new[leaf] = rows[:n_left]
    new.append(rows[n_left:])
    return (tuple(new),), n_left


@outputs_only(1)
def _split_counted(blocks: RowBlocks, local: LocalTreeBins, leaves: tuple | None,
                   n_left: int, *, leaf: int, j: int, goes_left: np.ndarray
                   ) -> tuple[tuple, None]:
    """:func:`_split` whose rows that go left the client has counted already (``n_left``,
    from the leaf's histogram): no stat, so no wait.  A count that is not the
    partition's own stops the fit here, before any stage reads the leaves made from
    it."""
    outputs, counted = _split(blocks, local, leaves, leaf=leaf, j=j, goes_left=goes_left)
    if counted != n_left:
        raise RuntimeError(f"a split sent {counted} rows of a partition left, where its "
                           f"histogram counted {n_left}")
    return outputs, None


def _less(parent: np.ndarray | None, child: np.ndarray | None) -> np.ndarray | None:
    """A partition's rows a bin of a split's other child (None: none there)."""
    if parent is None or child is None:
        return parent
    return parent - child


@outputs_only(1)
def _leaf_outputs(blocks: RowBlocks, leaves: tuple | None, *, value: np.ndarray
                  ) -> tuple[tuple, None]:
    """Each of the partition's rows' leaf value (``leaves`` None: one leaf)."""
    out = np.empty((blocks.n,) + value.shape[1:])
    if leaves is None:
        out[:] = value[0]
    else:
        for leaf, rows in enumerate(leaves):
            out[rows] = value[leaf]
    return (out,), None


# -- the client's side ------------------------------------------------------------------------
@dataclass(frozen=True)
class _HeldChannels:
    """A query's channels held with the partitions, as ``grow_tree`` and ``_answer``
    pass them to :meth:`PartitionedHistTreeOracle._refuse_query` (a slice of them is
    themselves: their entries stay where they are)."""

    g: Partitioned
    width: int  # channels a row (C = K + 1)
    #: Whether the last channel is 1 on every row: its histogram then counts each
    #: bin's rows, exactly (``project`` without weights, label-coded ``correlate``)
    unit: bool = False

    def __getitem__(self, key: Any) -> _HeldChannels:
        return self


class PartitionedLeafRows:
    """The training rows of a tree being grown, held in partitions: :class:`LeafRows`'
    methods, each a map over the partitions.  The client keeps every leaf's segment in
    each partition (``start[leaf][p]``, ``stop[leaf][p]``); the partitions keep their
    rows' order.

    A split waits for the partitions' counts of the rows that went left, unless the
    query's last channel is 1 on every row: each partition's histogram then counts the
    leaf's rows a bin (kept, and for the larger child its parent's less the smaller
    child's, as the histograms are), and the client counts the rows a split sends left
    itself, a wait fewer a split."""

    def __init__(self, bound: PartitionedHistTreeOracle, g: _HeldChannels) -> None:
        self.bound = bound
        self.g = g
        self.sizes = bound.blocks.sizes
        # each partition's rows of each leaf (a tuple of arrays, by leaf); None: no split
        # yet, every row in order
        self.merge()

    def histogram(self, leaf: int, feats: np.ndarray, out: np.ndarray,
                  buffers: HistogramBuffers) -> np.ndarray:
        """The histogram ``(F, B, C)`` of the leaf's rows over the features ``feats``:
        the partitions' histograms added in order (those without the leaf's rows left
        out, as in memory), into ``out``.  (``buffers`` serves a histogram summed here;
        the partitions sum theirs where they are.)"""
        b = self.bound
        _, stats = b.blocks.map(_leaf_histogram, b._local, self.g.g, self.leaves,
                                leaf=leaf, feats=feats,
                                n_hist_bins=b.n_hist_bins, channels=self.g.width)
        add_in_order([part for part in stats if part is not None], out)
        if self.g.unit:
            self._keep_bin_rows(leaf, feats, stats)
        return out

    def _keep_bin_rows(self, leaf: int, feats: np.ndarray, stats: list) -> None:
        """Keep each partition's rows a bin of the leaf (the last channel of its
        histogram) and, after a split, of its sibling."""
        last = self.g.width - 1
        rows = [None if s is None else np.array(s[:, :, last]) for s in stats]
        self._bin_rows[leaf] = (feats, rows)
        parent, self._split_parent = self._split_parent, None
        if parent is not None and leaf in parent[:2] and np.array_equal(parent[2], feats):
            other = parent[1] if leaf == parent[0] else parent[0]
            self._bin_rows[other] = (feats, [_less(p, c) for p, c in
                                             zip(parent[3], rows, strict=True)])

    def count(self, leaf: int) -> int:
        return int(sum(self.stop[leaf]) - sum(self.start[leaf]))

    def split(self, leaf: int, j: int, goes_left: np.ndarray) -> int:
        """Split the leaf by feature ``j``'s bins in every partition (the left rows stay
        the leaf, the right ones become the next leaf); how many went left.  (A
        partition gathers a leaf's channels when its histogram is asked.)"""
        b = self.bound
        known = self._bin_rows.pop(leaf, None)
        self._split_parent = None
        if known is None:
            (leaves,), n_left = b.blocks.map(_split, b._local, self.leaves,
                                             leaf=leaf, j=int(j), goes_left=goes_left)
        else:  # counted here, from the leaf's rows a bin: submitted without a wait
            feats, rows = known
            at = int(np.flatnonzero(feats == j)[0])
            n_left = [0 if r is None else int(r[at][goes_left].sum()) for r in rows]
            (leaves,), _ = b.blocks.map(_split_counted, b._local, self.leaves,
                                        PerPartition(tuple(n_left)), leaf=leaf, j=int(j),
                                        goes_left=goes_left)
            self._split_parent = (leaf, len(self.start), feats, rows)
        self.leaves = leaves
        lo, hi = self.start[leaf], self.stop[leaf]
        mid = [a + int(k) for a, k in zip(lo, n_left, strict=True)]
        self.stop[leaf] = mid
        self.start.append(mid)
        self.stop.append(list(hi))
        return int(sum(int(k) for k in n_left))

    def merge(self) -> None:
        """Make every row one leaf again."""
        self.leaves: Partitioned | None = None
        self.start = [[0] * len(self.sizes)]
        self.stop = [list(self.sizes)]
        # a leaf -> (features, each partition's rows a bin of them, or None), and the
        # last split's (leaf, new leaf, features, rows a bin) until a child's histogram
        self._bin_rows: dict[int, tuple[np.ndarray, list]] = {}
        self._split_parent: tuple | None = None

    def counts(self) -> np.ndarray:
        """Every leaf's rows."""
        return np.array([self.count(leaf) for leaf in range(len(self.start))])

    def outputs(self, value: np.ndarray) -> Partitioned:
        """Each training row's leaf value, held with the partitions (``value`` of shape
        (L,) or (L, K))."""
        value = np.ascontiguousarray(value, dtype=np.float64)
        (out,), _ = self.bound.blocks.map(_leaf_outputs, self.leaves, value=value)
        return with_ndim(out, value.ndim, value.shape[1] if value.ndim == 2 else None)


class PartitionedHistTreeOracle(BoundHistTreeOracle):
    """A :class:`~.hist_trees.HistTreeOracle` bound to rows held in partitions
    (:class:`~.partitioned_stumps.StumpRows`, a backend's): the four queries for a query
    held with the rows, the same trees as in memory, their outputs on the training rows
    held with the partitions."""

    def __init__(self, oracle: HistTreeOracle, rows: StumpRows) -> None:
        bins = _PartitionBins(oracle._stump_oracle(), rows)
        BoundOracle.__init__(self, oracle, bins.n_samples)
        self.n_features = bins.n_features
        self.categories = None  # (a backend refuses categorical columns: "categories")
        self.n_jobs = oracle.n_jobs
        self.blocks = bins.blocks
        self.thresholds = bins.thresholds
        self.n_bins = np.asarray(bins.n_bins, dtype=np.int64)
        self.missing = np.asarray(bins.missing, dtype=np.bool_)
        self.n_hist_bins = int(bins._B)
        self._local = bins._local  # the partitions' codes
        directions = monotone_directions(oracle.monotone_constraints, self.n_features)
        self._directions = (np.zeros(self.n_features, np.int64) if directions is None
                            else np.asarray(directions, np.int64))
        self._bounded = directions is not None

    @property
    def codes(self) -> np.ndarray:
        raise NotDistributedError("the codes of an oracle over partitions stay with its "
                                  "partitions")

    # -- the queries --------------------------------------------------------------------
    def correlate(self, r: Partitioned, *, random_state: int | None = None,
                  features: Any = None) -> Hypothesis:
        """A ±1 tree for a query of shape (n,), a label-coded tree for (n, K), held with
        the rows (on the columns ``features`` alone, when given); the same tree as in
        memory."""
        if not isinstance(r, Partitioned) or (r.ndim == 2 and r.columns is None):
            raise NotDistributedError(
                "a cluster's histogram-tree oracle answers correlate(r) for a query r of "
                "shape (n,) or (n, K) held by the workers (a booster's weights)")
        self._require("correlate", r.ndim)
        return self._correlate(r, random_state, **self._features(features))

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None, features: Any = None) -> Hypothesis:
        """The least-squares tree for a target held with the rows (shape (n,), or (n, K):
        vector leaves), with the weights ``sample_weight`` (held with the rows, normalised
        by the booster as in memory) or none; the same tree as in memory."""
        if not isinstance(target, Partitioned) or (
                target.ndim == 2 and target.columns is None) or not (
                sample_weight is None or isinstance(sample_weight, Partitioned)):
            raise NotDistributedError(
                "a cluster's histogram-tree oracle answers project(target, sample_weight) "
                "for a target of shape (n,) or (n, K) and weights of shape (n,) held by "
                "the workers (a booster's gradient)")
        self._require("project", target.ndim)
        return self._project(target, sample_weight, random_state,
                             **self._features(features))

    def _correlate(self, r: Partitioned, random_state: int | None,  # type: ignore[override]
                   features: np.ndarray | None = None) -> Hypothesis:
        if r.ndim == 2:
            K = int(r.columns)
            if K < 2:
                raise ValueError(
                    f"r of shape (n, K) needs K >= 2 classes for label-coded trees; got "
                    f"K={K} (pass r of shape (n,) for binary ±1 trees)")
            (r,), _ = self.blocks.map(_centred, r)
            return self._answer(self._scaled(r, K, unit=True), K, "codes", features)
        return self._answer(self._scaled(r, 1), 1, "sign", features)

    def _scaled(self, r: Partitioned, K: int, unit: bool = False) -> _HeldChannels:
        """``correlate``'s channels: ``r`` scaled by the power of two that brings the
        mean of ``|r|`` into [1, 2), the mean summed partition by partition."""
        size = self.n_samples * K

        def mean_abs(e: int) -> float:
            return float(ordered_sum(self.blocks.map(_abs_sum, r, e=e)[1])) / size

        exponents = power_of_two_exponents(mean_abs)
        (g,), _ = self.blocks.map(_scaled_channels, r, exponents=exponents, K=K)
        return _HeldChannels(g, K + 1, unit)

    def _project(  # type: ignore[override]
            self, target: Partitioned, sample_weight: Partitioned | None,
            random_state: int | None, features: np.ndarray | None = None) -> Hypothesis:
        K = int(target.columns) if target.ndim == 2 else 1
        (g,), _ = self.blocks.map(_target_channels, target, sample_weight, K=K)
        kind = "vector" if target.ndim == 2 else "value"
        return self._answer(_HeldChannels(g, K + 1, sample_weight is None), K, kind,
                            features)

    def _leaf_rows(self, g: _HeldChannels) -> PartitionedLeafRows:  # type: ignore[override]
        return PartitionedLeafRows(self, g)

    # (a query held by the workers is refused in the partitioned stump oracle's words)
    _refuse_query = PartitionedStumpOracle._refuse_query
