"""The histogram-tree oracle over rows held in partitions
(:mod:`oracleboost.rows.partition_blocks`).

Each partition keeps, where it is held, the codes of its rows (row-major, binned with
the thresholds of the whole data, as the stump oracle's partitions are: missing values
included, a feature whose column holds NaN in any partition having the missing-value bin
everywhere) and a query's channels (made there from the booster's query).

A tree is grown where the rows are, by a collective call
(:meth:`~oracleboost.rows.partition_blocks.PartitionBlocks.collective`): each group of
partitions (a worker's, on a cluster) is a member, and every member runs
:func:`~.hist_trees.grow_tree`'s loop itself.  For a leaf's histogram each member sums
its partitions' (:func:`~.hist_trees.partition_histogram` of each partition's rows of
the leaf alone), the members exchange them, and each adds them in partition order,
skipping the partitions without such rows, exactly as the oracle in memory sums the
histogram of rows of several partitions; a split partitions each partition's rows of
the leaf in place, stably, and the members exchange how many went left.  So every member
makes the same splits, and a split costs no round trip to the caller: only the tree
comes back.  A later stage makes the tree's outputs on the training rows, from each
partition's rows of each leaf where the member left them in its process
(:mod:`~oracleboost.rows.local_store`), else by walking the tree on the codes.

Only histograms, split counts and the tree travel; a tree is the one grown in memory,
bit for bit.
``correlate``'s scale (the power of two that brings the mean of ``|r|`` into [1, 2)) is
the mean summed partition by partition, as in memory
(:func:`~.hist_trees.partition_mean_abs`).
"""

from __future__ import annotations

import copy
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.oracles import _hist_tree_kernels as kernels
from oracleboost.oracles._hist_buffers import HistogramBuffers
from oracleboost.oracles.base import BoundOracle, Hypothesis
from oracleboost.oracles.hist_trees import (
    BoundHistTreeOracle,
    GrownTree,
    HistTreeOracle,
    abs_sum,
    add_in_order,
    grow_tree,
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
from oracleboost.oracles.trees import MISSING_NAN
from oracleboost.rows import local_store
from oracleboost.rows.blocks import RowBlocks, ordered_sum, outputs_only
from oracleboost.rows.exchange import Exchange
from oracleboost.rows.parallel import run_parallel
from oracleboost.rows.partitioned import (
    NotDistributedError,
    Partitioned,
    PerPartition,
    with_ndim,
)

__all__ = ["GrownOnPartitions", "LocalTreeBins", "PartitionedHistTreeOracle", "TreeSpec",
           "local_tree_bins"]


@dataclass(frozen=True)
class LocalTreeBins:
    """A partition's binned rows, where it is held: ``codes`` row-major (``i * d + j``)
    and ``columns`` column-major (``columns[j]``: feature ``j``'s), with what the oracle
    over partitions reads of its stump oracle (the features whose column holds NaN here,
    and the rows a bin).

    Both layouts, as LightGBM keeps both for its row-wise histograms: a histogram reads
    every code of each of a leaf's rows (one run of bytes a row), a split one feature's
    code of each (one byte a row, where the row-major codes cost a cache line a row:
    at 5,000,000 rows a split took three times as long, and more with two workers on
    one machine's memory)."""

    codes: np.ndarray
    columns: np.ndarray
    n_features: int
    _nan_bins: np.ndarray
    _counts: np.ndarray


def local_tree_bins(X: np.ndarray, oracle: StumpOracle,
                    thresholds: list[np.ndarray]) -> LocalTreeBins:
    """A partition's rows binned with the whole data's ``thresholds``
    (:func:`~.partitioned_stumps.local_stump_oracle`), kept row-major and column-major;
    the stump oracle's own codes (column-major by block) are let go."""
    stumps = local_stump_oracle(X, oracle, thresholds)
    codes = np.ascontiguousarray(stumps.codes).reshape(-1)
    columns = np.ascontiguousarray(stumps.codes.T)
    return LocalTreeBins(codes, columns, stumps.n_features, stumps._nan_bins,
                         stumps._counts)


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


class _NotFinite(Exception):
    """A member's root histogram is not finite: the query is refused (by the caller,
    in the words it uses for such a query)."""


#: A member's report of a query that the caller refuses (see :class:`_NotFinite`)
_REFUSED = "not finite"


class TreeSpec:
    """What a member of a tree's collective call reads of the bound oracle to grow the
    tree as :func:`~.hist_trees.grow_tree` grows it: the oracle's parameters (on one
    thread: a member is one of a worker's threads) and the bins.  A categorical
    feature is refused on partitions, so there are no category bins."""

    categories = None

    def __init__(self, bound: PartitionedHistTreeOracle) -> None:
        self.oracle = copy.copy(bound.oracle)
        self.oracle.n_jobs = 1
        self.n_features = bound.n_features
        self.n_hist_bins = bound.n_hist_bins
        self.n_bins, self.missing = bound.n_bins, bound.missing
        self.thresholds = bound.thresholds
        self._directions, self._bounded = bound._directions, bound._bounded
        #: which fit's spec: a process keeps one (:meth:`here`), with its buffers
        self.key = uuid.uuid4().hex
        self._scratch = threading.local()

    def here(self) -> TreeSpec:
        """This fit's spec as this process keeps it from tree to tree (the first one
        it was sent), so that its buffers (:func:`~._hist_buffers.buffers_of`) and
        scratch are reused."""
        return local_store.shared(("tree-spec", self.key), self)

    def _refuse_query(self, r: Any, name: str) -> None:
        raise _NotFinite

    def scratch(self, n: int, dtype: Any) -> np.ndarray:
        """An array of at least ``n`` entries of ``dtype``, kept from tree to tree, the
        calling thread's own (members that share a process run in threads)."""
        kept = getattr(self._scratch, "array", None)
        if kept is None or kept.size < n or kept.dtype != dtype:
            kept = self._scratch.array = np.empty(n, dtype=dtype)
        return kept

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_scratch"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._scratch = threading.local()


class _MemberRows:
    """A member's partitions of the training rows of a tree being grown:
    :class:`~.hist_trees.LeafRows`' methods, for a group of partitions whose other
    groups are the other members of a collective call.

    Each partition's rows of a leaf are a segment of its index array, in row order
    (``start[leaf][p]`` to ``stop[leaf][p]``), and a split partitions each partition's
    segment in place, stably, as in memory.  A leaf's histogram is each partition's
    (:func:`~.hist_trees.partition_histogram` of its rows of the leaf alone), every
    member's exchanged, and added in partition order, skipping the partitions without
    such rows: the histogram in memory, bit for bit.  A split's rows that went left are
    each member's count, exchanged and added (integers: in any order)."""

    def __init__(self, exchange: Exchange, spec: TreeSpec, local: list[LocalTreeBins],
                 g: list[np.ndarray], parts: list[int], width: int, n_rows: int) -> None:
        self.exchange, self.spec = exchange, spec
        self.local, self.channels, self.parts = local, g, parts
        self.width = width
        self.g = np.empty((0, width))  # (what a refusal reads: a member reports it)
        sizes = [c.shape[0] for c in g]
        index = np.int32 if max(sizes, default=0) < 2**31 else np.int64
        self.rows = [np.arange(m, dtype=index) for m in sizes]
        self._tmp = spec.scratch(max(sizes, default=0), index)
        self.start = [[0] * len(sizes)]
        self.stop = [list(sizes)]
        self.total = [int(n_rows)]  # every leaf's rows, in all partitions

    def histogram(self, leaf: int, feats: np.ndarray, out: np.ndarray,
                  buffers: HistogramBuffers) -> np.ndarray:
        # (every array from the buffers, kept from tree to tree: on a Dask worker, whose
        # allocator gives freed memory back at once, a new array's pages fault in)
        hists = buffers.parts(len(self.local), *out.shape)
        mine = []
        for p, (local, g) in enumerate(zip(self.local, self.channels, strict=True)):
            lo, hi = self.start[leaf][p], self.stop[leaf][p]
            if hi == lo:
                continue
            rows = self.rows[p][lo:hi]
            mine.append((self.parts[p], partition_histogram(
                local.codes, local.n_features, rows,
                np.array([0, hi - lo], dtype=np.int64), g, feats,
                self.spec.n_hist_bins, 1, out=hists[p], buffers=buffers)))
        found = sorted((part for payload in self.exchange.allgather(mine)
                        for part in payload), key=lambda part: part[0])
        return add_in_order([h for _, h in found], out)

    def count(self, leaf: int) -> int:
        return self.total[leaf]

    def split(self, leaf: int, j: int, goes_left: np.ndarray) -> int:
        starts, stops = [], []
        went_left = 0
        for p, local in enumerate(self.local):
            lo, hi = self.start[leaf][p], self.stop[leaf][p]
            n_left = 0 if hi == lo else int(kernels.split_rows(
                local.columns[j], self.rows[p], lo, hi, goes_left, self._tmp))
            went_left += n_left
            starts.append(lo + n_left)
            stops.append(hi)
            self.stop[leaf][p] = lo + n_left
        self.start.append(starts)
        self.stop.append(stops)
        n_left = sum(int(k) for k in self.exchange.allgather(went_left))
        self.total.append(self.total[leaf] - n_left)
        self.total[leaf] = n_left
        return n_left

    def counts(self) -> np.ndarray:
        return np.array(self.total)

    def leaves(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Partition ``p``'s rows of every leaf: its index array and each leaf's
        segment of it (starts, stops)."""
        return (self.rows[p], np.array([s[p] for s in self.start], dtype=np.int64),
                np.array([s[p] for s in self.stop], dtype=np.int64))


def _grow_member(exchange: Exchange, blocks: list[RowBlocks], local: list[LocalTreeBins],
                 g: list[np.ndarray], parts: list[int], *, spec: TreeSpec, K: int,
                 features: np.ndarray | None, name: str, width: int, n_rows: int,
                 tree_id: str) -> list:
    """A member of a tree's collective call: the tree grown on its partitions with the
    others' histograms (:class:`_MemberRows`).  Its first partition's stat reports the
    tree and every leaf's rows (the same from every member), or :data:`_REFUSED`.  Each
    partition's rows of each leaf are kept in the process
    (:mod:`~oracleboost.rows.local_store`, under ``(tree_id, partition)``) for the
    outputs' stage: nothing is made from a member's result."""
    spec = spec.here()
    rows = _MemberRows(exchange, spec, local, g, parts, width, n_rows)
    try:
        report: Any = (grow_tree(spec, rows, K, features, name), rows.counts())
    except _NotFinite:
        return [_REFUSED] + [None] * (len(blocks) - 1)
    for p, part in enumerate(parts):  # (for the outputs' stage, if it runs here)
        local_store.keep((tree_id, part), rows.leaves(p))
    return [report] + [None] * (len(blocks) - 1)


@outputs_only(1)
def _leaf_outputs(blocks: RowBlocks, local: LocalTreeBins, part: int, *, tree_id: str,
                  tree: tuple | None, value: np.ndarray) -> tuple[tuple, None]:
    """Each of the partition's rows' leaf value: from its rows of each leaf where the
    tree's member kept them in this process, else by walking the tree on the
    partition's codes (``tree``: its nodes as
    :func:`._hist_tree_kernels.binned_tree_outputs` reads them; None: one leaf).  The
    same rows a leaf either way."""
    kept = local_store.take((tree_id, part))
    out = blocks.empty((blocks.n,) + value.shape[1:])  # (a worker's pooled buffer)
    if tree is None:
        out[:] = value[0]
    elif kept is not None:
        # on one of numba's threads, set for the call: the kernel is a parallel region,
        # whose default team (every core's thread) waits for a thread that the other
        # workers hold the cores of (at 10,000,000 x 20 on two single-threaded workers,
        # 2 to 13 ms a partition where the kernel takes 1 to 2)
        run_parallel(kernels.leaf_outputs, 1, *kept, value, out,
                     kernels.leaf_map(blocks.n, value.shape[0]), 1)
    else:  # (the kernel reads and writes a column a channel)
        kernels.binned_tree_outputs(local.codes, local.n_features, *tree,
                                    value.reshape(value.shape[0], -1),
                                    out.reshape(blocks.n, -1))
    return (out,), None


# -- the client's side ------------------------------------------------------------------------
@dataclass(frozen=True)
class _HeldChannels:
    """A query's channels held with the partitions, as ``grow_tree`` and ``_answer``
    pass them to :meth:`PartitionedHistTreeOracle._refuse_query` (a slice of them is
    themselves: their entries stay where they are)."""

    g: Partitioned
    width: int  # channels a row (C = K + 1)

    def __getitem__(self, key: Any) -> _HeldChannels:
        return self


class GrownOnPartitions:
    """The training rows of a tree grown on the partitions by a collective call
    (:meth:`~oracleboost.rows.partition_blocks.PartitionBlocks.collective`): each
    member grows the tree on its partitions, exchanging histograms and split counts
    with the others; only the tree comes back.  Then :meth:`counts` and
    :meth:`outputs`, as :class:`~.hist_trees.LeafRows` has them."""

    def __init__(self, bound: PartitionedHistTreeOracle, g: _HeldChannels) -> None:
        self.bound = bound
        self.g = g
        self._tree: tuple | None = None  # the nodes, as _leaf_outputs reads them
        self._id = ""  # the tree's, for what its members kept (local_store)
        self._counts = np.array([bound.n_samples])
        self._submitted: tuple | None = None  # (what was asked, its stats' wait)

    def submit(self, K: int, features: np.ndarray | None, name: str) -> None:
        """Submit the tree's collective call now, to be waited for by :meth:`grown`
        (:meth:`PartitionedHistTreeOracle._prefetch`)."""
        b = self.bound
        parts = PerPartition(tuple(range(b.blocks.n_partitions)))
        self._id = uuid.uuid4().hex
        stats = b.blocks.submit_collective(
            _grow_member, b._local, self.g.g, parts, spec=b._spec, K=K, features=features,
            name=name, width=self.g.width, n_rows=b.n_samples, tree_id=self._id)
        self._submitted = ((K, features, name), stats)

    def grown(self, K: int, features: np.ndarray | None, name: str) -> GrownTree:
        b = self.bound
        submitted, self._submitted = self._submitted, None
        if submitted is None or not (submitted[0][0] == K and submitted[0][2] == name
                                     and submitted[0][1] is None and features is None):
            self.submit(K, features, name)
            submitted, self._submitted = self._submitted, None
        assert submitted is not None
        stats = submitted[1]()
        reports = [s for s in stats if s is not None]
        if reports[0] == _REFUSED:
            b._refuse_query(self.g, name)
        grown, counts = reports[0]
        for other, _ in reports[1:]:  # (every member made the same tree)
            if not (np.array_equal(other.bins, grown.bins)
                    and np.array_equal(other.sums, grown.sums)):
                raise RuntimeError("the members of a tree's collective call grew "
                                   "different trees")
        self._counts = counts
        tree = grown.tree
        if tree.n_leaves > 1:
            feature = tree.feature.astype(np.int64)
            missing_bin = np.where(tree.missing == MISSING_NAN, b.n_bins[feature], -1)
            self._tree = (feature, grown.bins.astype(np.int64), missing_bin.astype(np.int64),
                          tree.default_left.astype(np.bool_), tree.left.astype(np.int64),
                          tree.right.astype(np.int64))
        return grown

    def merge(self) -> None:
        """Make every row one leaf again."""
        self._tree = None
        self._counts = np.array([self.bound.n_samples])

    def counts(self) -> np.ndarray:
        return self._counts

    def outputs(self, value: np.ndarray) -> Partitioned:
        """Each training row's leaf value, held with the partitions (``value`` of shape
        (L,) or (L, K))."""
        value = np.ascontiguousarray(value, dtype=np.float64)
        b = self.bound
        parts = PerPartition(tuple(range(b.blocks.n_partitions)))
        (out,), _ = b.blocks.map(_leaf_outputs, b._local, parts, tree_id=self._id,
                                 tree=self._tree, value=value)
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
        self._spec = TreeSpec(self)

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
            return self._answer(self._scaled(r, K), K, "codes", features)
        return self._answer(self._scaled(r, 1), 1, "sign", features)

    def _scaled(self, r: Partitioned, K: int) -> _HeldChannels:
        """``correlate``'s channels: ``r`` scaled by the power of two that brings the
        mean of ``|r|`` into [1, 2), the mean summed partition by partition."""
        size = self.n_samples * K

        def mean_abs(e: int) -> float:
            return float(ordered_sum(self.blocks.map(_abs_sum, r, e=e)[1])) / size

        exponents = power_of_two_exponents(mean_abs)
        (g,), _ = self.blocks.map(_scaled_channels, r, exponents=exponents, K=K)
        return _HeldChannels(g, K + 1)

    def _project(  # type: ignore[override]
            self, target: Partitioned, sample_weight: Partitioned | None,
            random_state: int | None, features: np.ndarray | None = None) -> Hypothesis:
        K = int(target.columns) if target.ndim == 2 else 1
        ahead = self._prefetched
        if ahead is not None and ahead[0] is target and sample_weight is None \
                and features is None and K == 1 and target.ndim == 1:
            return self._answer(ahead[1].g, 1, "value", None)  # (its rows: _leaf_rows)
        self._prefetched = None
        (g,), _ = self.blocks.map(_target_channels, target, sample_weight, K=K)
        kind = "vector" if target.ndim == 2 else "value"
        return self._answer(_HeldChannels(g, K + 1), K, kind,
                            features)

    def _leaf_rows(self, g: _HeldChannels) -> GrownOnPartitions:  # type: ignore[override]
        ahead = self._prefetched
        if ahead is not None and ahead[1].g is g:  # (the tree submitted by _prefetch)
            self._prefetched = None
            return ahead[1]
        return GrownOnPartitions(self, g)

    #: The tree submitted by :meth:`_prefetch`: ``(its target, its rows)``, or None.
    _prefetched: tuple | None = None

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """Submit now the tree that ``project(r)`` without weights will ask for (a
        booster's next query, told before it waits for the stats of the step that made
        ``r``): the workers grow it while the client waits for those stats, a round trip
        a round fewer.  Used if the next query is ``project`` of this very ``r``, without
        weights or features; otherwise never read (the same collective call as the
        query would make: no bit changes).  A query of ``correlate`` is not submitted
        ahead: its scale is a sum over every row, which the client waits for first."""
        self._prefetched = None
        if project and isinstance(r, Partitioned) and r.ndim == 1:
            (g,), _ = self.blocks.map(_target_channels, r, None, K=1)
            rows = GrownOnPartitions(self, _HeldChannels(g, 2))
            rows.submit(1, None, "target")
            self._prefetched = (r, rows)

    # (a query held by the workers is refused in the partitioned stump oracle's words)
    _refuse_query = PartitionedStumpOracle._refuse_query
