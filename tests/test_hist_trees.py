"""HistTreeOracle against a brute-force greedy tree, and its queries, thread counts,
missing values, sparse input, weights and monotone constraints.

The reference grower below is written from the definition alone: every feature, every
threshold between two consecutive distinct values of the training column, the gain
``Σ_c G_c² / (H + λ)`` of the children less the leaf's, the threshold furthest left,
then the lowest feature, then (best-first) the lowest leaf among equal gains; leaves
``Σ w t / (Σ w + λ)``.  On data with few distinct values a feature (one bin a value)
the oracle's histograms must find the same tree.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracleboost._validation import normalise_weights
from oracleboost.oracles import HistTree, HistTreeOracle

SEEDS = [0, 1, 2, 3]


# -- the reference grower ----------------------------------------------------------------
def _leaf_gain(G: np.ndarray, H: float, lam: float) -> float:
    s = 0.0
    for g in G:
        s += float(g) * float(g)
    return s / (H + lam)


def reference_tree(X, T, w, *, num_leaves, max_depth=-1, growth="leaf", min_data=1,
                   min_weight=0.0, lam=0.0, skip_unsplittable=False):
    """The greedy tree of the definition, by brute force.

    ``X`` (n, d) without NaN, ``T`` (n, K) the targets, ``w`` (n,) the weights as the
    oracle sees them.  The row count of a side is exact with unit weights; else
    LightGBM's estimate from the weights, ``Σ_bins round(H_bin · count / H)``, which the
    oracle documents.  Returns ``(feature, threshold, left, right, value, gains, leaf)``
    in the oracle's layout: internal nodes in the order of their splits, the left child
    keeping its leaf's index, the right child the next index; ``leaf[i]`` the leaf of
    row ``i``.

    ``skip_unsplittable``: LightGBM's shortcut (``SerialTreeLearner::FindBestSplits``):
    a feature without a split of positive gain in a leaf is not searched in the leaf's
    descendants."""
    n, d = X.shape
    values = [np.unique(X[:, j]) for j in range(d)]
    unit = bool(np.all(w == 1.0))
    WT = T * w[:, None]

    def sums(rows):
        return WT[rows].sum(axis=0), float(w[rows].sum())

    def best_split(rows, depth, searched):
        if len(rows) < 2 * min_data or (max_depth >= 0 and depth >= max_depth):
            return None, searched
        gainful = set()
        G, H = sums(rows)
        parent = _leaf_gain(G, H, lam)
        factor = len(rows) / H if H > 0 else 0.0
        best = None
        for j in sorted(searched):
            x = X[rows, j]
            for t in range(len(values[j]) - 1):
                go_left = x <= values[j][t]
                if unit:
                    n_left = float(go_left.sum())
                else:
                    n_left = sum(np.floor(float(w[rows][x == v].sum()) * factor + 0.5)
                                 for v in values[j][:t + 1])
                if n_left < min_data or len(rows) - n_left < min_data:
                    continue
                GL, HL = sums(rows[go_left])
                GR, HR = sums(rows[~go_left])
                if HL < min_weight or HR < min_weight:
                    continue
                gain = _leaf_gain(GL, HL, lam) + _leaf_gain(GR, HR, lam) - parent
                if gain > 0.0:
                    gainful.add(j)
                if gain > (0.0 if best is None else best[0]):  # strict: leftmost, lowest j
                    best = (gain, j, t, rows[go_left], rows[~go_left])
        return best, (gainful if skip_unsplittable else searched)

    leaves = [np.arange(n)]
    depth = [0]
    first, root_searched = best_split(leaves[0], 0, set(range(d)))
    best, searched = [first], [root_searched]
    parent_of = [None]
    feature, threshold, left, right, gains = [], [], [], [], []
    while len(leaves) < num_leaves:
        candidates = [q for q in range(len(leaves)) if best[q] is not None]
        if not candidates:
            break
        if growth == "leaf":
            leaf = max(candidates, key=lambda q: (best[q][0], -q))
        else:
            leaf = min(candidates, key=lambda q: (depth[q], q))
        gain, j, t, rows_left, rows_right = best[leaf]
        node, new = len(feature), len(leaves)
        feature.append(j)
        threshold.append((values[j][t] + values[j][t + 1]) / 2)
        left.append(~leaf)
        right.append(~new)
        gains.append(gain)
        if parent_of[leaf] is not None:
            p, is_left = parent_of[leaf]
            (left if is_left else right)[p] = node
        parent_of[leaf] = (node, True)
        parent_of.append((node, False))
        leaves[leaf] = rows_left
        leaves.append(rows_right)
        depth[leaf] += 1
        depth.append(depth[leaf])
        best[leaf], left_searched = best_split(rows_left, depth[leaf], searched[leaf])
        right_best, right_searched = best_split(rows_right, depth[leaf], searched[leaf])
        best.append(right_best)
        searched[leaf] = left_searched
        searched.append(right_searched)
    value = np.array([sums(rows)[0] / (sums(rows)[1] + lam) for rows in leaves])
    leaf_of = np.empty(n, dtype=np.intp)
    for q, rows in enumerate(leaves):
        leaf_of[rows] = q
    return (np.array(feature, dtype=np.intp), np.array(threshold), np.array(left),
            np.array(right), value, np.array(gains), leaf_of)


def _small_data(seed, n=160, d=4, levels=6, K=1, weighted=False):
    """Integer-valued features (``levels`` distinct values from 1: bins = values, and
    thresholds exact midpoints) and a target of ``K`` continuous columns."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, levels + 1, size=(n, d)).astype(float)
    T = (np.sin(X[:, :1] * (1 + np.arange(K))) + 0.5 * X[:, 1:2] * (-1) ** np.arange(K)
         + rng.normal(scale=0.7, size=(n, K)))
    w = rng.uniform(0.2, 3.0, size=n) if weighted else None
    return X, T, w


CASES = {  # name: (oracle parameters, K, weighted)
    "leaf": ({"num_leaves": 8, "min_data_in_leaf": 5}, 1, False),
    "leaf_lambda": ({"num_leaves": 10, "min_data_in_leaf": 3, "reg_lambda": 2.5}, 1, False),
    "leaf_weighted": ({"num_leaves": 8, "min_data_in_leaf": 2, "min_child_weight": 0.5},
                      1, True),
    "weighted_lambda": ({"num_leaves": 6, "min_data_in_leaf": 1, "reg_lambda": 0.7}, 1, True),
    "depth": ({"num_leaves": 12, "growth": "depth", "min_data_in_leaf": 4}, 1, False),
    "depth_limited": ({"num_leaves": 31, "growth": "depth", "max_depth": 3,
                       "min_data_in_leaf": 2}, 1, True),
    "leaf_max_depth": ({"num_leaves": 9, "max_depth": 2, "min_data_in_leaf": 1}, 1, False),
    "vector": ({"num_leaves": 7, "min_data_in_leaf": 4, "reg_lambda": 1.0}, 3, False),
    "vector_weighted": ({"num_leaves": 7, "min_data_in_leaf": 2}, 2, True),
}


def _reference_for(params, X, T, w):
    return reference_tree(
        X, T, np.ones(len(X)) if w is None else normalise_weights(w),
        num_leaves=params["num_leaves"], max_depth=params.get("max_depth", -1),
        growth=params.get("growth", "leaf"), min_data=params.get("min_data_in_leaf", 20),
        min_weight=params.get("min_child_weight", 1e-3), lam=params.get("reg_lambda", 0.0))


def _assert_same_tree(h, ref, X, T, w, lam):
    feature, threshold, left, right, value, gains, leaf_of = ref
    assert isinstance(h, HistTree)
    tree = h.tree
    np.testing.assert_array_equal(tree.feature, feature)
    np.testing.assert_array_equal(tree.threshold, threshold)
    np.testing.assert_array_equal(tree.left, left)
    np.testing.assert_array_equal(tree.right, right)
    np.testing.assert_array_equal(tree.apply(X), leaf_of)
    assert np.all(tree.leaf_count >= 1)  # no split leaves a side empty
    np.testing.assert_allclose(tree.value, value, rtol=1e-12, atol=0)
    np.testing.assert_allclose(h.split_gain, gains, rtol=1e-9, atol=1e-12)
    # the leaves are the weighted least-squares fit of the rows the tree sends there
    w = np.ones(len(X)) if w is None else w
    for q in range(tree.n_leaves):
        rows = leaf_of == q
        fit = (w[rows, None] * T[rows]).sum(axis=0) / (w[rows].sum() + lam)
        np.testing.assert_allclose(tree.value[q], fit, rtol=1e-12)
    out = h.train_output.reshape(len(X), -1)
    np.testing.assert_array_equal(out, tree.value[leaf_of])


@pytest.mark.parametrize("case", list(CASES))
def test_the_tree_is_the_brute_force_greedy_tree(case):
    params, K, weighted = CASES[case]
    for seed in SEEDS:
        X, T, w = _small_data(seed, K=K, weighted=weighted)
        bound = HistTreeOracle(**params).bind(X)
        h = bound.project(T if K > 1 else T[:, 0], w)
        ref = _reference_for(params, X, T, w)
        assert len(ref[0]) >= 3, "the case should grow a tree of several splits"
        _assert_same_tree(h, ref, X, T, None if w is None else normalise_weights(w),
                          params.get("reg_lambda", 0.0))


def test_exact_ties_follow_the_tie_rule():
    """Targets and weights of small integers make every sum exact, so equal gains are
    equal bits: the threshold furthest left, the lowest feature, the lowest leaf win.
    Duplicated features and mirrored targets make such ties common."""
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        base = rng.integers(1, 5, size=(120, 2)).astype(float)
        X = np.column_stack([base, base[:, ::-1], base])  # every split three times over
        t = rng.integers(-3, 4, size=120).astype(float)
        w = rng.integers(1, 4, size=120).astype(float)
        for growth in ("leaf", "depth"):
            params = {"num_leaves": 10, "min_data_in_leaf": 1, "growth": growth}
            h = HistTreeOracle(**params).bind(X).project(t, w)
            ref = _reference_for(params, X, t[:, None], w)
            _assert_same_tree(h, ref, X, t[:, None], normalise_weights(w), 0.0)
            assert np.all(h.tree.feature < 2)  # the lowest of equal features
