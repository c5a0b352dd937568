"""Many trees' predictions summed in one compiled pass (``TreeStructure``s, LightGBM's
routing rules).

:func:`tree_sum` adds ``coef[r] * tree_r(x)`` to ``out`` for every row and every tree r
in order, each product rounded to float64 before its sum: bit for bit the loop
``out += coef[r] * tree_r.predict(X)``.  The trees are packed once into flat arrays
(:func:`pack`): the nodes of tree r are ``node_start[r] ..``, its leaves
``leaf_start[r] ..``, children indices local to the tree (``c >= 0`` a node, ``c < 0``
the leaf ``~c``), and the leaves already multiplied by their round's coefficient (the
numbers ``coef[r] * predict`` holds).

The decision at a node is :meth:`TreeStructure.apply`'s (LightGBM's
``NumericalDecision``): a value of magnitude at most ``1e-35f`` reads as 0; a NaN at a
split of missing type none reads as 0; at a split of missing type zero a 0 goes the
default way; at one of missing type NaN a NaN does; else ``x <= threshold``.  At a
categorical split (``CategoricalDecision``) a row goes left iff its value, truncated, is
a code in the node's set (its sorted codes, searched); NaN, negative values and values
from 2**31 go right.

Rows are independent: threads take blocks of rows and the bits do not depend on them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from oracleboost.oracles.trees import MISSING_NAN, MISSING_ZERO, ZERO_THRESHOLD, TreeStructure
from oracleboost.rows.blocks import n_threads as _threads
from oracleboost.rows.blocks import thread_map as _map

__all__ = ["pack", "tree_sum"]

#: Rows a block: a thread walks every tree over its block before the next block, so the
#: tree's nodes and the block's rows stay in cache.
_BLOCK_ROWS = 2048
#: A prediction runs on more threads only when each gets this many (row, tree) cells.
_MIN_CELLS = 1 << 17


def pack(trees: Sequence[TreeStructure], coef: np.ndarray) -> tuple[np.ndarray, ...]:
    """The trees and their coefficients as the kernel's flat arrays."""
    R = len(trees)
    K = trees[0].n_outputs
    nodes = np.zeros(R + 1, np.int64)
    leaves = np.zeros(R + 1, np.int64)
    for r, t in enumerate(trees):
        nodes[r + 1] = nodes[r] + t.n_leaves - 1
        leaves[r + 1] = leaves[r] + t.n_leaves
    feature = np.concatenate([t.feature for t in trees]).astype(np.int64)
    threshold = np.concatenate([t.threshold for t in trees]).astype(np.float64)
    left = np.concatenate([t.left for t in trees]).astype(np.int64)
    right = np.concatenate([t.right for t in trees]).astype(np.int64)
    default_left = np.concatenate([t.default_left for t in trees]).astype(np.bool_)
    missing = np.concatenate([t.missing for t in trees]).astype(np.int64)
    with np.errstate(over="ignore"):  # an overflow to ±inf is the loop's answer too
        value = np.concatenate([np.asarray(c, np.float64) * t.value.reshape(-1, K)
                                for c, t in zip(coef, trees, strict=True)])
    # categorical sets: node i's sorted codes are cats[cat_start[i]:cat_start[i + 1]]
    # (searched, not a bitset: a set's size, not its largest code, decides the memory,
    # so a stored tree with a code near 2**31 costs no more than one with code 3)
    sets = [None if t.categories_left is None else t.categories_left[c]
            for t in trees for c in range(t.n_leaves - 1)]
    categorical = np.array([c is not None for c in sets], dtype=np.bool_)
    sizes = [0 if c is None else len(c) for c in sets]
    cat_start = np.zeros(len(sets) + 1, np.int64)
    np.cumsum(sizes, out=cat_start[1:])
    cats = (np.concatenate([np.asarray(c, np.int64) for c in sets if c is not None])
            if any(sizes) else np.zeros(0, np.int64))
    return (nodes, leaves, feature, threshold, left, right, default_left, missing,
            categorical, cat_start, cats, value)


@numba.njit(cache=True, nogil=True)
def _sum_block(X, a, b, nodes, leaves, feature, threshold, left, right, default_left,
               missing, categorical, cat_start, cats, value, out):  # pragma: no cover
    K = value.shape[1]
    for r in range(nodes.size - 1):
        n0 = nodes[r]
        l0 = leaves[r]
        single = nodes[r + 1] == n0
        for i in range(a, b):
            c = 0
            if not single:
                while c >= 0:
                    node = n0 + c
                    raw = X[i, feature[node]]
                    if categorical[node]:
                        go_left = False
                        if raw > -1.0 and raw < 2147483648.0:  # False for NaN
                            code = np.int64(raw)  # truncates
                            c0, c1 = cat_start[node], cat_start[node + 1]
                            at = c0 + np.searchsorted(cats[c0:c1], code)
                            go_left = at < c1 and cats[at] == code
                    else:
                        x = raw
                        is_nan = np.isnan(x)
                        if not is_nan and abs(x) <= ZERO_THRESHOLD:
                            x = 0.0
                        m = missing[node]
                        if is_nan and m != MISSING_NAN:
                            x = 0.0
                            is_nan = False
                        if (m == MISSING_ZERO and x == 0.0) or (m == MISSING_NAN and is_nan):
                            go_left = default_left[node]
                        else:
                            go_left = x <= threshold[node]
                    c = left[node] if go_left else right[node]
                c = ~c
            leaf = l0 + c
            for k in range(K):
                out[i, k] += value[leaf, k]


def tree_sum(trees: Sequence[TreeStructure], coef: np.ndarray, X: np.ndarray, out: np.ndarray,
             n_jobs: int | None = None) -> None:
    """Add ``coef[r] * trees[r].predict(X)`` to ``out`` (shape (n,) or (n, K)) for every
    tree in order, bit for bit that loop; ``X`` dense float64 of the trees' features."""
    packed = pack(trees, np.asarray(coef, np.float64))
    n = X.shape[0]
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    K = packed[-1].shape[1]
    sums = out.reshape(n, K)
    copied = not sums.flags.c_contiguous
    if copied:
        sums = np.ascontiguousarray(sums)
    blocks = [(a, min(n, a + _BLOCK_ROWS)) for a in range(0, n, _BLOCK_ROWS)]
    threads = max(1, min(_threads(n_jobs), len(blocks), n * len(trees) // _MIN_CELLS))
    cut = [len(blocks) * t // threads for t in range(threads + 1)]

    def run(t: int) -> None:
        for a, b in blocks[cut[t]:cut[t + 1]]:
            _sum_block(X, a, b, *packed, sums)

    _map(run, range(threads), threads)
    if copied:
        out[...] = sums.reshape(out.shape)
