"""Compiled kernels of :class:`~oracleboost.oracles.LightGBMOracle`.

Loops over the ``n`` training rows that run on every query:

``centred_gradients`` / ``centred_target``
    the float32 gradients and Hessians handed to LightGBM for a weighted query (two
    passes: the weighted mean of the target, then ``-w_i (t_i - t_bar)`` and ``w_i``
    with the weights rescaled to mean one), or the centred target that is the label of
    LightGBM's own squared loss for an unweighted one, without the half-dozen
    ``n``-sized temporaries NumPy needs.
``partition_rows``
    which leaf of a just-grown LightGBM tree each training row reaches, found the way
    LightGBM's own ``DataPartition`` finds it: node by node, the rows of a node (a
    segment of an index array) are split by one comparison each into the segments of
    its children, without branches.  The features are read column by column (``X`` is
    stored feature-major), so a node reads one column at increasing rows.  Each row ends
    in the segment of its leaf, in increasing or (flagged) decreasing row order.
``leaf_means`` / ``leaf_means_parallel``
    the weighted mean of the target over each leaf's rows, summed in row order (so the
    sums are bit for bit those of ``np.bincount``, whatever the number of threads), and
    the leaf value of every row; the parallel kernel first partitions blocks of rows, a
    block a thread, then shares the leaves among the threads.

The decision at a node is LightGBM's ``Tree::NumericalDecision``: a row goes left iff
``x <= threshold`` (thresholds are float64), except that a zero goes the node's default
way when the node treats zero as missing (missing type Zero), and a NaN goes where
``nan_left`` says: the default way when the node's missing type is NaN (NaN is the
missing value) or Zero (LightGBM reads the NaN as 0, a zero, missing), else where a 0
goes (missing type None: the NaN is read as 0, left iff ``0 <= threshold``).  As a NaN
compares false, ``x <= threshold`` sends it right, so the kernel reverses the decision
for a NaN whose side is left, as it does for a zero whose side is not ``0 <=
threshold``.  Values with ``|x| <= kZeroThreshold`` must have been replaced by 0
beforehand (``count_tiny``, ``zero_tiny``: LightGBM's prediction drops them as the
zeros of a sparse row).
Categorical nodes are not handled.  The kernels that read ``X`` are handed a read-only
view of it: they never write it, and numba compiles one version for read-only arrays
instead of a second one for writable ones.

Why numba: these are per-row loops whose indices depend on the data (a tree walk,
per-leaf sums), which NumPy can only express with a pass per node and ``n``-sized
temporaries; compiled, the leaves and leaf means of 100,000 x 50 take about 1.5 ms on
one thread (0.8 ms on two) against 11-12 ms for ``Booster.predict(pred_leaf=True)``
alone.  ``nogil=True``: they release the GIL, so that queries on other Python threads
(and LightGBM) run meanwhile.  ``cache=True``: the machine code is cached on disk,
compiled once per machine (about 1.1 s for the serial kernels and 1.5 s more for the
parallel one, at the first query that needs them); later processes load it.
"""

from __future__ import annotations

import numba
import numpy as np

from oracleboost.oracles.trees import ZERO_THRESHOLD

#: LightGBM's ``kZeroThreshold`` (``1e-35f``, a float widened to double).
K_ZERO_THRESHOLD = ZERO_THRESHOLD


@numba.njit(cache=True, nogil=True)
def count_tiny(XT):  # pragma: no cover - compiled
    """The number of entries with ``0 < |x| <= kZeroThreshold`` (LightGBM reads them as
    0).  Only reads ``XT``: it may be a read-only view of the caller's array (a pandas
    DataFrame's values, a memory map)."""
    count = 0
    for f in range(XT.shape[0]):
        for i in range(XT.shape[1]):
            x = XT[f, i]
            if x != 0.0 and abs(x) <= K_ZERO_THRESHOLD:
                count += 1
    return count


@numba.njit(cache=True, nogil=True)
def zero_tiny(XT):  # pragma: no cover - compiled
    """Set the entries with ``0 < |x| <= kZeroThreshold`` to 0, in place.  Only ever
    called on the oracle's own copy: numba types an array's writability, so a kernel
    that writes cannot even be compiled for a read-only one."""
    for f in range(XT.shape[0]):
        for i in range(XT.shape[1]):
            x = XT[f, i]
            if x != 0.0 and abs(x) <= K_ZERO_THRESHOLD:
                XT[f, i] = 0.0


@numba.njit(cache=True, nogil=True)
def centred_gradients(target, w, grad, hess):  # pragma: no cover - compiled
    """Fill ``grad = -w' (target - t_bar)`` and ``hess = w'`` (float32) for weights
    ``w' = w * n / sum(w)`` and the weighted mean ``t_bar``; ``w`` of length 0 means
    unit weights (``w' = 1``)."""
    n = target.shape[0]
    if w.shape[0] == 0:
        s = 0.0
        for i in range(n):
            s += target[i]
        t_bar = s / n
        for i in range(n):
            grad[i] = -(target[i] - t_bar)
            hess[i] = 1.0
        return
    w_sum = 0.0
    wt_sum = 0.0
    for i in range(n):
        w_sum += w[i]
        wt_sum += w[i] * target[i]
    t_bar = wt_sum / w_sum
    scale = n / w_sum
    for i in range(n):
        ws = w[i] * scale
        grad[i] = -(ws * (target[i] - t_bar))
        hess[i] = ws


@numba.njit(cache=True, nogil=True)
def centred_target(target, out):  # pragma: no cover - compiled
    """Fill ``out = target - mean(target)`` (float32): the labels of a LightGBM squared
    loss whose gradients at a zero score are ``centred_gradients``' for unit weights."""
    n = target.shape[0]
    s = 0.0
    for i in range(n):
        s += target[i]
    t_bar = s / n
    for i in range(n):
        out[i] = target[i] - t_bar


@numba.njit(cache=True, nogil=True)
def partition_rows(
    XT, feature, threshold, zero_flip, nan_left, left, right, start, stop, rows, bounds
):  # pragma: no cover - compiled
    """Group rows ``start..stop-1`` by the leaf they reach.

    ``XT`` is ``X`` transposed (features x rows, C-contiguous).  Internal node ``k``
    splits on ``feature[k]`` at ``threshold[k]``; children ``left[k]``, ``right[k]``
    are nodes if ``>= 0`` and leaves ``~child`` otherwise (LightGBM's encoding; node 0
    is the root).  ``zero_flip[k]`` reverses the decision for ``x == 0`` (a node whose
    missing value is zero, with a default side other than the one ``0 <= threshold``
    gives); ``nan_left[k]`` sends a NaN left (it may be False where the node's feature
    holds no NaN, whatever the node's rule: the fast loop then serves the node).

    ``rows`` has shape ``(2, n)``: the rows of the nodes at depth ``d >= 1`` are kept in
    ``rows[(d - 1) % 2]``, a node's segment split into its children's in the other
    array, left rows written forwards from the segment's start and right rows
    backwards from its end (no second pass; a right child's rows come out in reverse
    order).  Segments of nodes not on one path are disjoint, so a segment is never
    overwritten before it is split.  On return leaf ``j``'s rows are
    ``rows[bounds[j, 2] >> 1, bounds[j, 0]:bounds[j, 1]]``, in increasing order if
    ``bounds[j, 2] & 1 == 0``, else decreasing.  Only columns ``start..stop-1`` of
    ``rows`` are written, so disjoint row ranges can be partitioned on threads.
    """
    n_nodes = feature.shape[0]
    st_node = np.empty(n_nodes + 1, np.int64)
    st_a = np.empty(n_nodes + 1, np.int64)
    st_b = np.empty(n_nodes + 1, np.int64)
    st_depth = np.empty(n_nodes + 1, np.int64)
    st_rev = np.empty(n_nodes + 1, np.int64)
    st_node[0] = 0
    st_a[0] = start
    st_b[0] = stop
    st_depth[0] = 0
    st_rev[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        node = st_node[sp]
        a = st_a[sp]
        b = st_b[sp]
        depth = st_depth[sp]
        rev = st_rev[sp]
        col = XT[feature[node]]
        t = threshold[node]
        flip = zero_flip[node]
        nan = nan_left[node]
        dst = rows[depth % 2]
        src = rows[(depth + 1) % 2]  # rows[(depth - 1) % 2]; unused at the root
        # Branch-free: each row is written at both ends and one end advances.  The
        # zero and NaN tests are a separate loop (they double the cost of a
        # comparison); the root reads the rows in order.  A NaN compares false: right,
        # unless reversed.
        lo = a
        hi = b - 1
        if depth == 0:
            for r in range(a, b):
                x = col[r]
                go_left = np.int64((x <= t) != (((x == 0.0) & flip) | ((x != x) & nan)))
                dst[lo] = r
                dst[hi] = r
                lo += go_left
                hi -= 1 - go_left
        elif flip or nan:
            for k in range(a, b):
                r = src[k]
                x = col[r]
                go_left = np.int64((x <= t) != (((x == 0.0) & flip) | ((x != x) & nan)))
                dst[lo] = r
                dst[hi] = r
                lo += go_left
                hi -= 1 - go_left
        else:
            for k in range(a, b):
                r = src[k]
                go_left = np.int64(col[r] <= t)
                dst[lo] = r
                dst[hi] = r
                lo += go_left
                hi -= 1 - go_left
        for child, c_a, c_b, c_rev in ((left[node], a, lo, rev), (right[node], lo, b, 1 - rev)):
            if child < 0:
                bounds[~child, 0] = c_a
                bounds[~child, 1] = c_b
                bounds[~child, 2] = 2 * (depth % 2) + c_rev
            else:
                st_node[sp] = child
                st_a[sp] = c_a
                st_b[sp] = c_b
                st_depth[sp] = depth + 1
                st_rev[sp] = c_rev
                sp += 1


@numba.njit(cache=True, nogil=True)
def _leaf_mean(j, rows, bounds, target, w, values, out):  # pragma: no cover - compiled
    """``leaf_means`` for leaf ``j``."""
    sw = 0.0
    swt = 0.0
    for p in range(bounds.shape[0]):
        seg = rows[bounds[p, j, 2] >> 1]
        a = bounds[p, j, 0]
        b = bounds[p, j, 1]
        step = 1
        if bounds[p, j, 2] & 1:  # decreasing rows: read backwards
            a, b, step = b - 1, a - 1, -1
        if w.shape[0] == 0:
            sw += abs(b - a)
            for k in range(a, b, step):
                swt += target[seg[k]]
        else:
            for k in range(a, b, step):
                r = seg[k]
                sw += w[r]
                swt += w[r] * target[r]
    v = swt / sw if sw > 0.0 else 0.0
    if abs(v) <= K_ZERO_THRESHOLD:
        v = 0.0
    values[j] = v
    for p in range(bounds.shape[0]):
        seg = rows[bounds[p, j, 2] >> 1]
        for k in range(bounds[p, j, 0], bounds[p, j, 1]):
            out[seg[k]] = v


@numba.njit(cache=True, nogil=True)
def leaf_means(rows, bounds, target, w, values, out):  # pragma: no cover - compiled
    """Weighted mean of ``target`` over each leaf's rows and every row's leaf value.

    ``bounds`` has shape ``(n_parts, n_leaves, 3)``: part ``p``'s rows of leaf ``j``
    as ``partition_rows`` leaves them.  Each leaf is summed in row order (the parts'
    segments in order, each read in increasing row order), as ``np.bincount`` sums.
    A leaf of zero total weight gets 0, and a value with ``|v| <= kZeroThreshold`` is
    stored as 0 (LightGBM's ``Tree::SetLeafOutput`` rounds it so).  ``w`` of length 0
    means unit weights.  Writes ``values[j]`` and ``out[i]`` (the value of row ``i``'s
    leaf).
    """
    for j in range(bounds.shape[1]):
        _leaf_mean(j, rows, bounds, target, w, values, out)


@numba.njit(cache=True, nogil=True, parallel=True)
def leaf_means_parallel(
    XT, feature, threshold, zero_flip, nan_left, left, right, cuts, rows, bounds, target, w,
    values, out,
):  # pragma: no cover - compiled
    """``partition_rows`` on the row blocks ``cuts[p]..cuts[p+1]-1`` (a block a thread)
    into ``bounds[p]``, then ``leaf_means`` with the leaves shared among the threads:
    the same results as the serial kernels, whatever the number of threads."""
    for p in numba.prange(bounds.shape[0]):
        partition_rows(
            XT, feature, threshold, zero_flip, nan_left, left, right, cuts[p], cuts[p + 1],
            rows, bounds[p],
        )
    for j in numba.prange(bounds.shape[1]):
        _leaf_mean(j, rows, bounds, target, w, values, out)
