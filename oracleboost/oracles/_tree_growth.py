"""A histogram tree's growth, compiled.

The tree being grown is a few arrays (:class:`Growth`): for each leaf its rows' count,
depth, sums, output bounds, parent node, the slot of its histogram and its best split;
for each node its split.  The steps of growth are compiled functions of them:

``find_split``
    a leaf's best split from its histogram (:func:`._hist_tree_kernels.best_splits`);
``next_leaf``
    the leaf to split next: the largest gain (best-first) or the shallowest (level by
    level), the lowest leaf among equals;
``make_split``
    the split made: its node recorded, the children's sums, counts, depths and bounds;
``children``
    which child's histogram is summed (the smaller) and which is its parent's less it.

:func:`~.hist_trees.grow_tree` runs these steps from Python, asking the rows (in memory
or held by a cluster's workers) for each split and histogram.  For rows in this process
:func:`grow_in_memory` runs the same steps in one compiled loop, with the rows' splits
and histograms: a tree of 255 leaves makes about 2,000 kernel calls, and from
Python each cost some microseconds of dispatch and of Python between them.  Both run the
same steps in the same order on the same numbers, so they grow the same tree, bit for
bit.

Threads.  The caller sets numba's thread count once, to the oracle's threads; each
kernel then says how many pieces its work is cut into (a split's chunks, a histogram's
spans, a scan's spans), one piece running alone without a parallel region.
(numba's ``set_num_threads`` called from compiled code would keep these functions from
numba's cache: it reads the threading layer through a pointer.)
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from oracleboost.oracles import _hist_tree_kernels as kernels

__all__ = ["Growth", "Limits", "Rules", "new_growth", "can_split", "find_split",
           "next_leaf", "make_split", "children", "count_runs", "histogram_of_runs",
           "leaf_histogram", "split_leaf", "grow_in_memory", "runs_needed"]


class Rules(NamedTuple):
    """The oracle's rules of growth (scalars, as the compiled steps read them)."""

    K: int
    lam: float
    min_data: float
    min_weight: float
    min_gain: float
    max_depth: int
    num_leaves: int
    leaf_wise: bool
    bounded: bool


class Limits(NamedTuple):
    """How the kernels are cut into tasks and when they run on threads (the constants
    of :mod:`.hist_trees` and ``RUN_ROWS``, read when a tree is grown)."""

    run_rows: int
    min_cells: int
    span_bytes: int
    min_split_rows: int


class Growth(NamedTuple):
    """A tree being grown: arrays a leaf (``L = num_leaves`` of them, the first
    ``n_leaves[0]`` in use) and a node (``L − 1``, the first ``n_leaves[0] − 1``), in
    the order of the splits.  A leaf's best split is ``best_feature`` (−1: none),
    ``best_bin`` (the last bin on the left; −1 for a set of categories, kept by the
    caller), ``best_nan_left``, ``best_gain`` and ``best_left`` (the left child's sums).
    A node's children are nodes, or ``~leaf`` for a leaf."""

    count: np.ndarray
    depth: np.ndarray
    sums: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    parent: np.ndarray
    is_left: np.ndarray
    slot: np.ndarray
    best_gain: np.ndarray
    best_feature: np.ndarray
    best_bin: np.ndarray
    best_nan_left: np.ndarray
    best_left: np.ndarray
    usable: np.ndarray
    node_feature: np.ndarray
    node_bin: np.ndarray
    node_left: np.ndarray
    node_right: np.ndarray
    node_default_left: np.ndarray
    node_missing: np.ndarray
    node_gain: np.ndarray
    n_leaves: np.ndarray


def new_growth(L: int, F: int, C: int, total: np.ndarray, count: int) -> Growth:
    """A tree of one leaf, the root, of ``count`` rows with the sums ``total``, whose
    histogram is in slot 0 and which may scan every one of the ``F`` features."""
    nodes = max(L - 1, 0)
    growth = Growth(
        count=np.zeros(L, np.int64), depth=np.zeros(L, np.int64), sums=np.zeros((L, C)),
        lo=np.full(L, -np.inf), hi=np.full(L, np.inf), parent=np.full(L, -1, np.int64),
        is_left=np.zeros(L, np.bool_), slot=np.full(L, -1, np.int64),
        best_gain=np.zeros(L), best_feature=np.full(L, -1, np.int64),
        best_bin=np.zeros(L, np.int64), best_nan_left=np.zeros(L, np.bool_),
        best_left=np.zeros((L, C)), usable=np.zeros((L, F), np.bool_),
        node_feature=np.zeros(nodes, np.int64), node_bin=np.zeros(nodes, np.int64),
        node_left=np.zeros(nodes, np.int64), node_right=np.zeros(nodes, np.int64),
        node_default_left=np.zeros(nodes, np.bool_),
        node_missing=np.zeros(nodes, np.bool_), node_gain=np.zeros(nodes),
        n_leaves=np.ones(1, np.int64))
    growth.count[0] = count
    growth.sums[0] = total
    growth.slot[0] = 0
    growth.usable[0] = True
    return growth


# -- the steps ------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def can_split(st, rules, leaf):  # pragma: no cover - compiled
    """Whether the leaf has the rows (``2 min_data``) and the depth to split."""
    return st.count[leaf] >= 2 * rules.min_data and (
        rules.max_depth < 0 or st.depth[leaf] < rules.max_depth)


@numba.njit(cache=True, nogil=True)
def find_split(st, rules, leaf, hist, minus, feats, n_bins, missing, directions,
               threads):  # pragma: no cover - compiled
    """The leaf's best split among its usable features, from its histogram ``hist``
    (less ``minus`` first, where not empty), scanned in ``threads`` spans on as many
    threads; a valid one (gaining more than ``min_gain``) becomes the leaf's best.
    Returns whether the leaf was scanned (it can split)."""
    st.best_feature[leaf] = -1
    if not can_split(st, rules, leaf):
        return False
    usable = st.usable[leaf]
    gain, s, t, nan_left = kernels.best_splits(
        hist, feats, usable, n_bins, missing, rules.K, st.sums[leaf],
        float(st.count[leaf]), rules.lam, rules.min_data, rules.min_weight,
        rules.min_gain, directions, rules.bounded, st.lo[leaf], st.hi[leaf],
        st.best_left[leaf], usable, threads, minus)
    if s >= 0 and gain > rules.min_gain:
        st.best_gain[leaf] = gain
        st.best_feature[leaf] = feats[s]
        st.best_bin[leaf] = t
        st.best_nan_left[leaf] = nan_left
    return True


@numba.njit(cache=True, nogil=True)
def next_leaf(st, rules):  # pragma: no cover - compiled
    """The leaf to split next among those with a best split: the largest gain
    (best-first) or the shallowest (level by level), the lowest leaf among equals; −1
    when none can split."""
    best = -1
    key_best = np.inf
    for leaf in range(st.n_leaves[0]):
        if st.best_feature[leaf] < 0:
            continue
        key = -st.best_gain[leaf] if rules.leaf_wise else float(st.depth[leaf])
        if key < key_best:
            key_best = key
            best = leaf
    return best


@numba.njit(cache=True, nogil=True, error_model="numpy")
def make_split(st, rules, leaf, n_left, feature_missing, categorical,
               directions):  # pragma: no cover - compiled
    """Record the leaf's best split, whose left side has ``n_left`` rows, as a node: the
    left child keeps the leaf's index, the right child is a new leaf (returned).  A
    missing value goes the learned way where the feature has a missing-value bin
    (``feature_missing``), left where it has none, right for a set of categories (as
    LightGBM writes such a node).  Under monotone constraints the children's outputs are
    bounded at the midpoint of their values (LightGBM's basic method)."""
    node = st.n_leaves[0] - 1
    new = st.n_leaves[0]
    st.n_leaves[0] += 1
    j = st.best_feature[leaf]
    st.node_feature[node] = j
    st.node_bin[node] = st.best_bin[leaf]
    if categorical:
        st.node_default_left[node] = False
        st.node_missing[node] = True
    else:
        st.node_default_left[node] = st.best_nan_left[leaf] if feature_missing else True
        st.node_missing[node] = feature_missing
    st.node_left[node] = ~leaf
    st.node_right[node] = ~new
    st.node_gain[node] = st.best_gain[leaf]
    p = st.parent[leaf]
    if p >= 0:
        if st.is_left[leaf]:
            st.node_left[p] = node
        else:
            st.node_right[p] = node
    st.parent[leaf] = node
    st.is_left[leaf] = True
    st.parent[new] = node
    st.is_left[new] = False
    for c in range(st.sums.shape[1]):
        left = st.best_left[leaf, c]
        st.sums[new, c] = st.sums[leaf, c] - left
        st.sums[leaf, c] = left
    n_all = st.count[leaf]
    st.count[leaf] = n_left
    st.count[new] = n_all - n_left
    st.depth[leaf] += 1
    st.depth[new] = st.depth[leaf]
    st.lo[new] = st.lo[leaf]
    st.hi[new] = st.hi[leaf]
    direction = directions[j]
    if rules.bounded and direction != 0:
        K = rules.K
        vl = kernels._clamped(st.sums[leaf, 0], st.sums[leaf, K], rules.lam, st.lo[leaf],
                              st.hi[leaf])
        vr = kernels._clamped(st.sums[new, 0], st.sums[new, K], rules.lam, st.lo[leaf],
                              st.hi[leaf])
        mid = (vl + vr) / 2.0
        if direction > 0:
            st.hi[leaf] = min(st.hi[leaf], mid)
            st.lo[new] = max(st.lo[new], mid)
        else:
            st.lo[leaf] = max(st.lo[leaf], mid)
            st.hi[new] = min(st.hi[new], mid)
    st.usable[new] = st.usable[leaf]
    st.best_feature[leaf] = -1  # spent: the children find their own
    st.best_feature[new] = -1
    return new


@numba.njit(cache=True, nogil=True)
def children(st, rules, leaf, new):  # pragma: no cover - compiled
    """After a split of ``leaf`` into ``leaf`` and ``new``: ``(small, large)``, the
    child whose histogram is summed from its rows (the one with fewer, the left among
    equals) and the other, whose histogram is its parent's less that one; ``(−1, −1)``
    when neither will split (the tree is full, or neither can).  The small child's
    histogram goes to the slot of the new leaf's index, which no histogram has used,
    and the large child takes its parent's slot, where the subtraction is made: each
    slot holds one leaf's histogram at a time."""
    parent_slot = st.slot[leaf]
    st.slot[leaf] = -1
    st.slot[new] = -1
    if st.n_leaves[0] >= rules.num_leaves or not (
            can_split(st, rules, leaf) or can_split(st, rules, new)):
        return -1, -1
    if st.count[leaf] <= st.count[new]:
        small, large = leaf, new
    else:
        small, large = new, leaf
    st.slot[small] = new
    st.slot[large] = parent_slot
    return small, large


# -- histograms -----------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def count_runs(part_seg, run_rows):  # pragma: no cover - compiled
    """The runs of ``run_rows`` rows (counted from each partition's first) of rows cut
    into partitions at ``part_seg``."""
    R = 0
    for p in range(part_seg.size - 1):
        R += (part_seg[p + 1] - part_seg[p] + run_rows - 1) // run_rows
    return R


@numba.njit(cache=True, nogil=True)
def histogram_of_runs(codes, d, rows, part_seg, g, feats, threads, out, runs_buf,
                      limits):  # pragma: no cover - compiled
    """:func:`~.hist_trees.partition_histogram`'s sums, into ``out`` of shape ``(F, B,
    C)``: each partition's rows cut into runs, each run summed in row order by
    :func:`._hist_tree_kernels.leaf_histograms` on at most ``threads`` threads (into
    ``runs_buf``, flat, of at least :func:`runs_needed` histograms when there is more
    than one run), a partition's runs added in order, then the partitions in order.  Row
    ``i``'s channels are ``g[i]``.  Returns the number of runs."""
    F, B, C = out.shape
    run = limits.run_rows
    P = part_seg.size - 1
    R = count_runs(part_seg, run)
    run_seg = np.empty(R + 1, np.int64)
    last_of_part = np.empty(P, np.int64)
    run_seg[0] = part_seg[0]
    q = 0
    for p in range(P):
        k0, k1 = part_seg[p], part_seg[p + 1]
        k = k0 + run
        while k < k1:
            q += 1
            run_seg[q] = k
            k += run
        if k1 > k0:
            q += 1
            run_seg[q] = k1
        last_of_part[p] = q
    if R == 0:
        out[...] = 0.0
        return R
    cells = F * B * C
    T = max(1, min(threads, (rows.size * F) // limits.min_cells))
    # the features in spans whose bins (at most span_bytes) stay in the core's cache
    width = max(1, limits.span_bytes // (B * C * 8))
    # scattered rows (a small share of the span they lie in) are prefetched
    sparse = rows.size > 0 and 4 * rows.size < rows[rows.size - 1] - rows[0]
    if R == 1:  # one run: summed where it is asked for
        pieces, shares = kernels.plan_pieces(run_seg, F, width, T)
        kernels.leaf_histograms(codes, d, rows, run_seg, g, feats, pieces, shares,
                                out.reshape((1, F, B, C)), sparse, T == 1)
        return R
    if T == 1:
        _runs_one_by_one(codes, d, rows, run_seg, last_of_part, g, feats, width, out,
                         runs_buf, sparse)
        return R
    runs = runs_buf[:R * cells].reshape((R, F, B, C))
    pieces, shares = kernels.plan_pieces(run_seg, F, width, T)
    kernels.leaf_histograms(codes, d, rows, run_seg, g, feats, pieces, shares, runs,
                            sparse, False)
    # each partition's sum (its runs added in order, into its first run's), then the
    # partitions' sums added in order (:func:`~.hist_trees.add_in_order`)
    flat = runs_buf
    of = out.reshape(-1)
    first = 0
    n_parts = 0
    for p in range(P):
        last = last_of_part[p]
        if last == first:
            continue
        a = first * cells
        for r in range(first + 1, last):
            b = r * cells
            for c in range(cells):
                flat[a + c] += flat[b + c]
        if n_parts == 0:
            for c in range(cells):
                of[c] = flat[a + c]
        else:
            for c in range(cells):
                of[c] += flat[a + c]
        n_parts += 1
        first = last
    return R


@numba.njit(cache=True, nogil=True)
def _runs_one_by_one(codes, d, rows, run_seg, last_of_part, g, feats, width, out,
                     scratch, sparse):  # pragma: no cover - compiled
    """:func:`histogram_of_runs`' sums on one thread, in two histograms of ``scratch``
    where the runs on threads take one each: each run summed, then added to its
    partition's sum at once (the first partition's sum is ``out`` itself), each later
    partition's sum added to ``out`` when done.  The same adds in the same order as the
    runs' sums added after all are made, so the same bits."""
    F, B, C = out.shape
    cells = F * B * C
    of = out.reshape(-1)
    run = scratch[:cells]
    part = scratch[cells:2 * cells]
    one = np.empty(2, np.int64)
    one[0], one[1] = 0, 1
    pieces, shares = kernels.plan_pieces(one, F, width, 1)
    first = 0
    n_parts = 0
    for p in range(last_of_part.size):
        last = last_of_part[p]
        if last == first:
            continue
        acc = of if n_parts == 0 else part
        for r in range(first, last):
            one[0], one[1] = run_seg[r], run_seg[r + 1]
            into = acc if r == first else run
            kernels.leaf_histograms(codes, d, rows, one, g, feats, pieces, shares,
                                    into.reshape((1, F, B, C)), sparse, True)
            if r > first:
                for c in range(cells):
                    acc[c] += run[c]
        if n_parts > 0:
            for c in range(cells):
                of[c] += part[c]
        n_parts += 1
        first = last


def runs_needed(R: int, threads: int) -> int:
    """Histograms of :func:`histogram_of_runs`' ``runs_buf`` for at most ``R`` runs on
    ``threads`` threads: one a run on threads, two on one (:func:`_runs_one_by_one`)."""
    return R if threads > 1 else min(R, 2)


@numba.njit(cache=True, nogil=True)
def leaf_histogram(codes, d, rows, start, stop, g, part_starts, feats, threads, out,
                   runs_buf, limits, tally):  # pragma: no cover - compiled
    """A leaf's histogram in memory (:meth:`~.hist_trees.LeafRows.histogram`):
    :func:`histogram_of_runs` of its rows, each row's channels read where they are
    (``g[i]``)."""
    n = rows.size
    segment = rows[start:stop]
    m = stop - start
    if m == n:  # every row, in order: its channels one after another
        part_seg = part_starts.astype(np.int64)
    else:
        part_seg = np.searchsorted(segment, part_starts).astype(np.int64)
    R = histogram_of_runs(codes, d, segment, part_seg, g, feats, threads, out, runs_buf,
                          limits)
    if m == n:
        tally[0] = R
    elif R > 1:
        tally[1] += 1


@numba.njit(cache=True, nogil=True)
def split_leaf(column, rows, start, stop, goes_left, tmp, right, threads, limits,
               tally):  # pragma: no cover - compiled
    """:meth:`~.hist_trees.LeafRows.split` of the segment ``rows[start:stop]`` by the
    split feature's codes ``column`` (one byte a row: the column-major codes): on
    threads, LightGBM's way (each chunk partitioned into two buffers, then the chunks'
    sides joined), where each thread gets ``min_split_rows``; returns how many went
    left."""
    m = stop - start
    if threads > 1 and m >= limits.min_split_rows * 2:
        T = max(1, min(threads, m // limits.min_split_rows))
        bounds = np.empty(T + 1, np.int64)
        for t in range(T + 1):
            bounds[t] = m * t // T
        counts = np.empty(T, np.int64)
        kernels.split_chunks(column, rows, start, goes_left, bounds, tmp, right, counts)
        n_left = 0
        for t in range(T):
            n_left += counts[t]
        kernels.split_join(rows, start, bounds, tmp, right, counts, n_left)
        tally[2] += 1
        tally[3] = T if tally[3] == 0 else min(tally[3], T)
        return n_left
    return kernels.split_rows(column, rows, start, stop, goes_left, tmp)


@numba.njit(cache=True, nogil=True)
def grow_in_memory(st, rules, feats, n_bins, missing, directions, codes, columns, d, rows,
                   start, stop, g, part_starts, slots, runs_buf, tmp, right, threads,
                   limits, tally):  # pragma: no cover - compiled
    """Grow the tree from its root (its histogram in ``slots[0]``) on rows in this
    process: :func:`~.hist_trees.grow_tree`'s loop, compiled, with :class:`LeafRows`'
    splits and histograms (``start``, ``stop``: each leaf's segment of ``rows``)."""
    no_minus = np.empty((0, 0, 0))
    goes_left = np.zeros(slots.shape[2], np.bool_)
    find_split(st, rules, 0, slots[0], no_minus, feats, n_bins, missing, directions,
               threads)
    while st.n_leaves[0] < rules.num_leaves:
        leaf = next_leaf(st, rules)
        if leaf < 0:
            break
        j = st.best_feature[leaf]
        t = st.best_bin[leaf]
        goes_left[:] = False
        goes_left[:t + 1] = True
        if missing[j]:
            goes_left[n_bins[j]] = st.best_nan_left[leaf]
        n_left = split_leaf(columns[j], rows, start[leaf], stop[leaf], goes_left, tmp,
                            right, threads, limits, tally)
        new = make_split(st, rules, leaf, n_left, missing[j], False, directions)
        start[new] = start[leaf] + n_left
        stop[new] = stop[leaf]
        stop[leaf] = start[leaf] + n_left
        parent_slot = st.slot[leaf]
        small, large = children(st, rules, leaf, new)
        if small < 0:
            continue
        leaf_histogram(codes, d, rows, start[small], stop[small], g, part_starts, feats,
                       threads, slots[new], runs_buf, limits, tally)
        find_split(st, rules, small, slots[new], no_minus, feats, n_bins, missing,
                   directions, threads)
        if can_split(st, rules, large):
            # LightGBM's histogram subtraction, made by the scan (feature by feature,
            # on its threads): the larger child's histogram is its parent's less the
            # smaller child's
            find_split(st, rules, large, slots[parent_slot], slots[new], feats, n_bins,
                       missing, directions, threads)
