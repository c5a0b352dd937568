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
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleboost._validation import normalise_weights
from oracleboost.oracles import HistTree, HistTreeOracle
from oracleboost.oracles import _hist_tree_kernels as kernels
from oracleboost.oracles.stumps import ConstantHypothesis, label_codes
from oracleboost.oracles.trees import MISSING_NAN

SEEDS = [0, 1, 2, 3]


# -- the reference grower ----------------------------------------------------------------
def _leaf_gain(G: np.ndarray, H: float, lam: float) -> float:
    s = 0.0
    for g in G:
        s += float(g) * float(g)
    return s / (H + lam)


def reference_tree(X, T, w, *, num_leaves, max_depth=-1, growth="leaf", min_data=1,
                   min_weight=0.0, lam=0.0, skip_unsplittable=False, directions=None):
    """The greedy tree of the definition, by brute force.

    ``X`` (n, d) without NaN, ``T`` (n, K) the targets, ``w`` (n,) the weights as the
    oracle sees them.  The row count of a side is exact with unit weights; else
    LightGBM's estimate from the weights, ``Σ_bins round(H_bin · count / H)``, which the
    oracle documents.  Returns ``(feature, threshold, left, right, value, gains, leaf)``
    in the oracle's layout: internal nodes in the order of their splits, the left child
    keeping its leaf's index, the right child the next index; ``leaf[i]`` the leaf of
    row ``i``.

    ``skip_unsplittable``: LightGBM's shortcut (``SerialTreeLearner::FindBestSplits``),
    which the oracle takes too: a feature without a split of positive gain in a leaf is
    not searched in the leaf's descendants.

    ``directions`` (one of −1, 0, +1 a feature; scalar targets): LightGBM's basic monotone
    constraints.  Every leaf has bounds on its output (at first none); an output is
    ``G / (H + λ)`` clamped to them, and its gain ``2 G v − (H + λ) v²`` at that output
    ``v``; a split on a feature of direction +1 (−1) must give its left child an output
    at most (at least) its right child's, and bounds its children at their outputs'
    midpoint: the left from above (below), the right from below (above)."""
    n, d = X.shape
    bounded = directions is not None
    values = [np.unique(X[:, j]) for j in range(d)]
    unit = bool(np.all(w == 1.0))
    WT = T * w[:, None]

    def sums(rows):
        return WT[rows].sum(axis=0), float(w[rows].sum())

    def output(G, H, lo, hi):
        return min(max(float(G[0]) / (H + lam), lo), hi)

    def gain_of(G, H, lo, hi):
        if not bounded:
            return _leaf_gain(G, H, lam)
        v = output(G, H, lo, hi)
        return 2.0 * float(G[0]) * v - (H + lam) * v * v

    def best_split(rows, depth, searched, lo=-np.inf, hi=np.inf):
        if len(rows) < 2 * min_data or (max_depth >= 0 and depth >= max_depth):
            return None, searched
        gainful = set()
        G, H = sums(rows)
        parent = gain_of(G, H, lo, hi)
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
                if go_left.all() or not go_left.any():  # a side without rows
                    continue
                GL, HL = sums(rows[go_left])
                GR, HR = sums(rows[~go_left])
                if HL < min_weight or HR < min_weight:
                    continue
                if bounded and directions[j] != 0:
                    vl, vr = output(GL, HL, lo, hi), output(GR, HR, lo, hi)
                    if (vl - vr) * directions[j] > 0:
                        continue
                gain = gain_of(GL, HL, lo, hi) + gain_of(GR, HR, lo, hi) - parent
                if gain > 0.0:
                    gainful.add(j)
                if gain > (0.0 if best is None else best[0]):  # strict: leftmost, lowest j
                    best = (gain, j, t, rows[go_left], rows[~go_left], GL, HL, GR, HR)
        return best, (gainful if skip_unsplittable else searched)

    leaves = [np.arange(n)]
    depth = [0]
    first, root_searched = best_split(leaves[0], 0, set(range(d)))
    best, searched = [first], [root_searched]
    lo_b, hi_b = [-np.inf], [np.inf]
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
        gain, j, t, rows_left, rows_right, GL, HL, GR, HR = best[leaf]
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
        lo_b.append(lo_b[leaf])
        hi_b.append(hi_b[leaf])
        if bounded and directions[j] != 0:
            mid = (output(GL, HL, lo_b[leaf], hi_b[leaf])
                   + output(GR, HR, lo_b[leaf], hi_b[leaf])) / 2.0
            if directions[j] > 0:
                hi_b[leaf], lo_b[new] = min(hi_b[leaf], mid), max(lo_b[new], mid)
            else:
                lo_b[leaf], hi_b[new] = max(lo_b[leaf], mid), min(hi_b[new], mid)
        best[leaf], left_searched = best_split(rows_left, depth[leaf], searched[leaf],
                                               lo_b[leaf], hi_b[leaf])
        right_best, right_searched = best_split(rows_right, depth[leaf], searched[leaf],
                                                lo_b[new], hi_b[new])
        best.append(right_best)
        searched[leaf] = left_searched
        searched.append(right_searched)
    value = np.array([sums(rows)[0] / (sums(rows)[1] + lam) for rows in leaves])
    if bounded:
        value = np.clip(value, np.array(lo_b)[:, None], np.array(hi_b)[:, None])
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
    "monotone": ({"num_leaves": 10, "min_data_in_leaf": 4,
                  "monotone_constraints": [-1, 1, 0, -1]}, 1, False),
    "monotone_weighted": ({"num_leaves": 8, "min_data_in_leaf": 2, "reg_lambda": 1.0,
                           "growth": "depth", "monotone_constraints": [-1, 1, 0, 0]}, 1, True),
}


def _reference_for(params, X, T, w):
    return reference_tree(
        X, T, np.ones(len(X)) if w is None else normalise_weights(w),
        num_leaves=params["num_leaves"], max_depth=params.get("max_depth", -1),
        growth=params.get("growth", "leaf"), min_data=params.get("min_data_in_leaf", 20),
        min_weight=params.get("min_child_weight", 1e-3), lam=params.get("reg_lambda", 0.0),
        directions=params.get("monotone_constraints"), skip_unsplittable=True)


def _assert_same_tree(h, ref, X, T, w, lam, clamped=False):
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
    # (unless monotone constraints clamp them: then the reference's clamped values)
    w = np.ones(len(X)) if w is None else w
    for q in range(tree.n_leaves if not clamped else 0):
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
                          params.get("reg_lambda", 0.0), "monotone_constraints" in params)


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


# -- threads, partitions and runs ----------------------------------------------------------
def test_every_n_jobs_gives_the_same_bits(monkeypatch):
    """Histograms summed by runs within partitions, runs then partitions added in order:
    one, two or three threads make the same trees bit for bit.  Small blocks, short runs
    and no lower bound on a thread's cells make several partitions, several runs a
    partition and several threads a leaf; low bounds on a split's and an output's rows
    a thread put the splits of large leaves (chunks partitioned, then joined) and the
    training rows' outputs on threads too."""
    import oracleboost.oracles.hist_trees as hist_trees

    monkeypatch.setattr(kernels, "RUN_ROWS", 97)
    monkeypatch.setattr(hist_trees, "_MIN_CELLS_PER_THREAD", 1)
    monkeypatch.setattr(hist_trees, "_MIN_SPLIT_ROWS_PER_THREAD", 64)
    monkeypatch.setattr(hist_trees, "_MIN_OUTPUT_ROWS_PER_THREAD", 16)
    grown = []  # each query's rows, whose tally says what the kernels did
    leaf_rows = hist_trees.BoundHistTreeOracle._leaf_rows

    def kept(self, g):
        grown.append(leaf_rows(self, g))
        return grown[-1]

    monkeypatch.setattr(hist_trees.BoundHistTreeOracle, "_leaf_rows", kept)
    rng = np.random.default_rng(0)
    n = 2500
    X = rng.normal(size=(n, 5))
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    t = np.sin(2 * np.nan_to_num(X[:, 0])) + np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=n)
    w = rng.uniform(0.1, 3.0, size=n)
    r = rng.normal(size=n)
    answers = []
    for n_jobs in (1, 2, 3):
        bound = HistTreeOracle(num_leaves=15, min_data_in_leaf=10, block_size=64,
                               n_jobs=n_jobs).bind(X)
        assert bound._part_starts.size - 1 == 3  # partitions of 16 blocks of 64 rows
        answers.append([bound.project(t, w), bound.correlate(r),
                        bound.project(np.column_stack([t, r]))])
    # the tally: the root's runs, leaves summed in several runs, splits on threads, and
    # the fewest threads of one
    root_runs, several = grown[0].tally[:2]
    # partitions of 1024, 1024 and 452 rows, each cut into runs of 97 from its first
    assert root_runs == 11 + 11 + 5
    assert several > 0  # a leaf's rows in several runs too
    threaded = [rows.tally for rows in grown if rows._threads > 1]
    assert threaded and all(t[2] > 0 and t[3] >= 2 for t in threaded)  # splits on threads
    assert all(rows.tally[2] == 0 for rows in grown if rows._threads == 1)
    first = answers[0]
    for other in answers[1:]:
        for a, b in zip(first, other, strict=True):
            assert a.tree.digest() == b.tree.digest()
            np.testing.assert_array_equal(a.tree.value, b.tree.value)
            np.testing.assert_array_equal(a.split_gain, b.split_gain)
            np.testing.assert_array_equal(a.train_output, b.train_output)


# -- missing values, sparse X, weights -------------------------------------------------------
@pytest.mark.parametrize("side", ["left", "right"])
def test_nan_rows_follow_the_learned_side(side):
    """NaN in feature 1 only.  Where every split on it sends the NaN rows one way, the
    tree is the tree of X whose NaN are replaced by a value below every other (sent
    left) or above (sent right), bit for bit: the same candidate splits with the same
    sums in the same order (feature 0's histogram, which makes the root's sums, has no
    NaN bin)."""
    checked = 0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        X = rng.integers(1, 8, size=(200, 3)).astype(float)
        t = X[:, 1] + 0.5 * X[:, 0] + rng.normal(scale=0.5, size=200)
        missing = rng.uniform(size=200) < 0.25
        X[missing, 1] = np.nan
        t[missing] += -3.0 if side == "left" else 9.0  # NaN rows behave as low / high values
        oracle = HistTreeOracle(num_leaves=8, min_data_in_leaf=5)
        h = oracle.bind(X).project(t)
        tree = h.tree
        np.testing.assert_array_equal(tree.predict(X), h.train_output)
        on_nan = (tree.feature == 1) & (tree.missing == MISSING_NAN)
        # a split's side for NaN, at the nodes the NaN rows reach
        reached = np.zeros(len(tree.feature), dtype=bool)
        node_rows = _node_rows(tree, X)
        for node, rows in node_rows.items():
            reached[node] = bool(np.isnan(X[rows, 1]).any())
        sides = tree.default_left[on_nan & reached]
        assert sides.size >= 1
        if not np.all(sides == (side == "left")):
            continue
        checked += 1
        filled = X.copy()
        filled[missing, 1] = 0.0 if side == "left" else 100.0
        g = oracle.bind(filled).project(t)
        np.testing.assert_array_equal(g.train_output, h.train_output)
        np.testing.assert_array_equal(g.tree.feature, tree.feature)
        np.testing.assert_array_equal(g.split_gain, h.split_gain)
        np.testing.assert_array_equal(g.tree.predict(filled), tree.predict(X))
    assert checked >= 3


def _node_rows(tree, X):
    """The training rows that reach each internal node."""
    out = {}

    def walk(node, rows):
        out[node] = rows
        x = X[rows, tree.feature[node]]
        go_left = np.where(np.isnan(x), tree.default_left[node], x <= tree.threshold[node])
        for child, part in ((tree.left[node], rows[go_left]), (tree.right[node], rows[~go_left])):
            if child >= 0:
                walk(child, part)

    walk(0, np.arange(len(X)))
    return out


def _assert_same_answer(a, b):
    assert type(a) is type(b)
    np.testing.assert_array_equal(a.train_output, b.train_output)
    if isinstance(a, HistTree):
        assert a.tree.digest() == b.tree.digest()
        np.testing.assert_array_equal(a.tree.value, b.tree.value)
        np.testing.assert_array_equal(a.split_gain, b.split_gain)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_array])
def test_sparse_X_gives_the_dense_answers(fmt):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(250, 6)) * (rng.uniform(size=(250, 6)) < 0.3)  # mostly 0.0
    X[:, 2] = np.where(X[:, 2] != 0, np.abs(X[:, 2]), 0.0)  # 0 the lowest value
    X[rng.uniform(size=250) < 0.1, 4] = np.nan
    t = X[:, 0] - 2 * X[:, 2] + np.isnan(X[:, 4]) + rng.normal(scale=0.3, size=250)
    w = rng.uniform(0.5, 2.0, size=250)
    r = rng.normal(size=(250, 3))
    oracle = HistTreeOracle(num_leaves=10, min_data_in_leaf=4)
    dense, sparse = oracle.bind(X), oracle.bind(fmt(X))
    for query in (lambda b: b.project(t, w), lambda b: b.correlate(t - t.mean()),
                  lambda b: b.project(r), lambda b: b.correlate(r)):
        a, b = query(dense), query(sparse)
        assert isinstance(a, HistTree)
        _assert_same_answer(a, b)
        np.testing.assert_array_equal(a.predict(X), b.predict(fmt(X)))


def test_weights_scale_free_and_dominant():
    """Weights 2**k times others give the same tree bit for bit; 1e-300 and 1e300 times
    others the same tree to the last bits of its leaves; one dominant weight the
    reference grower's tree, finite."""
    X, T, w = _small_data(5, weighted=True)
    t = T[:, 0]
    bound = HistTreeOracle(num_leaves=8, min_data_in_leaf=3, min_child_weight=0.0).bind(X)
    base = bound.project(t, w)
    for k in (-60, -1, 3, 200):
        _assert_same_answer(base, bound.project(t, np.ldexp(w, k)))
    for c in (1e-300, 1e300):
        h = bound.project(t, w * c)
        np.testing.assert_array_equal(h.tree.feature, base.tree.feature)
        np.testing.assert_array_equal(h.tree.threshold, base.tree.threshold)
        np.testing.assert_allclose(h.tree.value, base.tree.value, rtol=1e-13)
    params = {"num_leaves": 8, "min_data_in_leaf": 1, "min_child_weight": 1e-3}
    for big in (50.0, 1e12):
        heavy = np.ones(len(t))
        heavy[7] = big
        h = HistTreeOracle(**params).bind(X).project(t, heavy)
        assert np.isfinite(h.train_output).all()
        ref = _reference_for(params, X, T, heavy)
        if isinstance(h, ConstantHypothesis):  # the estimated counts allow no split
            assert len(ref[0]) == 0
            np.testing.assert_allclose(h.train_output, ref[4][0, 0], rtol=1e-12)
        else:
            _assert_same_tree(h, ref, X, T, normalise_weights(heavy), 0.0)


def test_min_child_weight_zero_with_weights():
    X = np.array([[1, 1], [1, 1], [3, 2], [2, 2], [1, 2], [1, 3], [3, 2], [2, 3], [2, 1],
                  [3, 3], [1, 3], [2, 2], [3, 1], [3, 2], [2, 2], [3, 2]], dtype=float)
    t = np.array([-3, -3, 0, -2, -1, -1, 2, 1, 3, 2, 1, -2, -2, 2, 2, 3], dtype=float)
    w = np.array([1.6, 1.9, 1.8, 0.5, 1.4, 2.7, 1.8, 1.8, 0.8, 2.9, 1.7, 0.9, 2.3, 1.5,
                  2.6, 2.4])
    params = {"num_leaves": 4, "min_data_in_leaf": 1, "min_child_weight": 0.0}
    h = HistTreeOracle(**params).bind(X).project(t, w)
    assert np.all(h.tree.leaf_count >= 1)
    _assert_same_tree(h, _reference_for(params, X, t[:, None], w), X, t[:, None],
                      normalise_weights(w), 0.0)


# -- the queries -----------------------------------------------------------------------------
def test_correlate_answers_signs_at_least_the_best_constant():
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(200, 4))
        r = np.sin(3 * X[:, 0]) * rng.uniform(0.1, 1.0, size=200) + 0.2 * rng.normal(size=200)
        for params in ({"num_leaves": 6, "min_data_in_leaf": 5},
                       {"num_leaves": 4, "growth": "depth", "min_data_in_leaf": 20}):
            h = HistTreeOracle(**params).bind(X).correlate(r)
            assert set(np.unique(h.train_output)) <= {-1.0, 1.0}
            assert isinstance(h, HistTree)
            assert np.sum(r * h.train_output) >= abs(np.sum(r)) - 1e-12
            np.testing.assert_array_equal(h.predict(X), h.train_output)


def test_multiclass_correlate_answers_label_codes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    K = 3
    r = rng.normal(size=(150, K))
    r[np.arange(150), np.digitize(X[:, 0], [-0.4, 0.4])] += 1.5
    h = HistTreeOracle(num_leaves=5, min_data_in_leaf=5).bind(X).correlate(r)
    codes = label_codes(K)
    assert isinstance(h, HistTree)
    for row in h.tree.value:  # every leaf the code of the class of largest sum of r
        assert any(np.array_equal(row, c) for c in codes)
    leaf = h.tree.apply(X)
    for q in range(h.tree.n_leaves):
        np.testing.assert_array_equal(h.tree.value[q],
                                      codes[np.argmax(r[leaf == q].sum(axis=0))])
    np.testing.assert_array_equal(h.train_output, h.tree.value[leaf])


def test_features_restrict_the_splits():
    X, T, _ = _small_data(2, d=5)
    t = T[:, 0]
    params = {"num_leaves": 8, "min_data_in_leaf": 3}
    bound = HistTreeOracle(**params).bind(X)
    only = [1, 3, 4]
    h = bound.project(t, features=only)
    assert set(h.tree.feature) <= set(only) and len(set(h.tree.feature)) >= 2
    sub = HistTreeOracle(**params).bind(X[:, only]).project(t)
    np.testing.assert_array_equal(h.tree.feature, np.array(only)[sub.tree.feature])
    np.testing.assert_array_equal(h.tree.threshold, sub.tree.threshold)
    np.testing.assert_allclose(h.train_output, sub.train_output, rtol=1e-12)
    c = bound.correlate(t - t.mean(), features=[0])
    assert set(c.tree.feature) == {0}


BAD_PARAMETERS = [
    ("num_leaves", 1), ("num_leaves", 2.5), ("max_depth", 0), ("max_depth", -2),
    ("growth", "breadth"), ("min_data_in_leaf", 0), ("min_child_weight", -1.0),
    ("min_child_weight", np.inf), ("reg_lambda", -0.5), ("reg_lambda", np.nan),
    ("min_split_gain", -1.0), ("max_bins", 1), ("max_bins", 256), ("block_size", 0),
    ("monotone_constraints", [2, 0, 0]), ("monotone_constraints", [1, 0]),
]


@pytest.mark.parametrize("name,value", BAD_PARAMETERS)
def test_bad_parameters_are_refused_by_name(name, value):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=name):
        HistTreeOracle(**{name: value}).bind(X)


def test_a_constant_target_gives_a_constant():
    X, _, _ = _small_data(0)
    bound = HistTreeOracle(min_data_in_leaf=2).bind(X)
    h = bound.project(np.full(len(X), 2.5))
    assert isinstance(h, ConstantHypothesis)
    np.testing.assert_array_equal(h.train_output, 2.5)
    v = bound.project(np.tile([1.0, -2.0], (len(X), 1)))
    assert isinstance(v, ConstantHypothesis)
    np.testing.assert_array_equal(v.train_output, np.tile([1.0, -2.0], (len(X), 1)))


# -- monotone constraints ---------------------------------------------------------------------
def _assert_monotone(predict, X, directions, grid):
    """``predict`` rises (falls) along each feature of direction +1 (−1), for every row
    of ``X``, over the values ``grid``."""
    for j, direction in enumerate(directions):
        if direction == 0:
            continue
        sweep = np.repeat(X, grid.size, axis=0)
        sweep[:, j] = np.tile(grid, len(X))
        out = predict(sweep).reshape(len(X), grid.size)
        steps = np.diff(out, axis=1) * direction
        assert np.all(steps >= 0), (j, steps.min())


def test_monotone_constraints_hold_for_every_answer():
    directions = [1, -1, 0, 1]
    grid = np.linspace(-3, 3, 41)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(250, 4))
        # a target against the constraints in part, so that they bind
        t = (X[:, 0] - np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] - 0.5 * X[:, 3]
             + 0.3 * rng.normal(size=250))
        bound = HistTreeOracle(num_leaves=12, min_data_in_leaf=5,
                               monotone_constraints=directions).bind(X)
        rows = rng.normal(size=(40, 4))
        answers = [bound.project(t), bound.project(t, rng.uniform(0.2, 2.0, size=250)),
                   bound.correlate(t - np.median(t))]
        for h in answers:
            assert isinstance(h, HistTree)
            _assert_monotone(h.predict, rows, directions, grid)
        assert any(set(h.tree.feature) & {0, 1, 3} for h in answers)


def test_a_boosted_model_under_monotone_constraints_is_monotone():
    from oracleboost.boosters import FunctionalGradientRegressor

    directions = [1, -1, 0]
    grid = np.linspace(-3, 3, 31)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(250, 3))
    y = X[:, 0] - np.sin(2 * X[:, 0]) - X[:, 1] + X[:, 2] ** 2 + 0.3 * rng.normal(size=250)
    oracle = HistTreeOracle(num_leaves=6, min_data_in_leaf=5, monotone_constraints=directions)
    model = FunctionalGradientRegressor(oracle, n_estimators=15, random_state=0).fit(X, y)
    _assert_monotone(model.predict, rng.normal(size=(30, 3)), directions, grid)


def test_a_constant_target_with_weights_gives_a_constant():
    X, _, w = _small_data(0, weighted=True)
    h = HistTreeOracle(min_data_in_leaf=2).bind(X).project(np.full(len(X), 2.5), w)
    assert isinstance(h, ConstantHypothesis)


# -- every booster -----------------------------------------------------------------------------
def _booster_names():
    from instances import REGISTERED_BOOSTERS

    return [name for name, b in REGISTERED_BOOSTERS.items() if not b.finite]


@pytest.mark.parametrize("name", _booster_names())
def test_every_booster_fits_with_hist_trees(name):
    from instances import REGISTERED_BOOSTERS

    from oracleboost.boosters import TotallyCorrectiveClassifier

    spec = REGISTERED_BOOSTERS[name]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    f = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + 0.3 * rng.normal(size=120)
    model = spec.make(HistTreeOracle(num_leaves=4, min_data_in_leaf=5), n_estimators=4)
    if isinstance(model, TotallyCorrectiveClassifier):
        pytest.importorskip("highspy")
        pytest.importorskip("clarabel")
    if spec.task == "ranking":
        y = np.digitize(f, [-0.5, 0.5]).astype(float)
        model.fit(X, y, np.repeat(np.arange(12), 10))
        assert np.isfinite(model.predict(X)).all()
        return
    if spec.task == "regression":
        model.fit(X, f)
        assert np.mean((model.predict(X) - f) ** 2) < 0.7 * np.var(f)
        return
    y = np.digitize(f, [0.0] if spec.task == "binary" else [-0.5, 0.5])
    model.fit(X, y)
    assert len(model.history_["loss"]) >= 1
    assert np.mean(model.predict(X) == y) > np.bincount(y).max() / len(y)  # beats a constant


def test_correlate_with_a_zero_query_answers_a_constant():
    X = np.random.default_rng(0).normal(size=(50, 3))
    h = HistTreeOracle(min_data_in_leaf=3).bind(X).correlate(np.zeros(50))
    assert isinstance(h, ConstantHypothesis)
    np.testing.assert_array_equal(h.train_output, 1.0)


def test_correlate_does_not_depend_on_the_scale_of_r():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    r = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=50)
    bound = HistTreeOracle(min_data_in_leaf=3).bind(X)
    base = bound.correlate(r)
    for k in (-1000, 1000, 1022):
        _assert_same_answer(base, bound.correlate(np.ldexp(r, k)))


def test_the_compiled_sum_of_mixed_trees_is_their_predictions():
    """Trees with and without categorical splits, summed in one pass, equal the loop of
    their own predictions; a set holding a code near 2**31 (as a stored tree may) is
    searched like any other."""
    from oracleboost.oracles._tree_predict import tree_sum
    from oracleboost.oracles.trees import TreeStructure

    numeric = TreeStructure(
        n_features=2, feature=np.array([1]), threshold=np.array([0.5]),
        left=np.array([-1]), right=np.array([-2]), value=np.array([[5.0], [6.0]]),
        default_left=np.array([False]), missing=np.array([0]))
    mixed = TreeStructure(
        n_features=2, feature=np.array([0, 1]), threshold=np.array([0.0, 0.3]),
        left=np.array([1, -1]), right=np.array([-2, -3]),
        value=np.array([[1.0], [2.0], [3.0]]), default_left=np.array([False, True]),
        missing=np.array([2, 0]), categories_left=(np.array([1, 3, 2**31 - 2]), None))
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 6, 200).astype(float), rng.random(200)]
    X[::7, 0] = 2**31 - 2
    X[::11, 0] = np.nan
    coef = np.array([1.0, -2.0, 0.5])
    trees = [numeric, mixed, mixed]
    out = np.zeros(200)
    tree_sum(trees, coef, X, out)
    loop = np.zeros(200)
    for c, t in zip(coef, trees, strict=True):
        loop += c * t.predict(X)
    np.testing.assert_array_equal(out, loop)


def test_trees_grown_at_once_on_one_oracle_equal_those_grown_one_by_one():
    """A bound oracle keeps its trees' histograms in buffers it reuses: trees grown at
    once from several Python threads must each get buffers of their own, or they would
    sum into each other's histograms."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(7)
    n, d = 150_000, 6  # three partitions: several runs a leaf
    X = rng.normal(size=(n, d))
    bound = HistTreeOracle(num_leaves=63, min_data_in_leaf=5, n_jobs=1).bind(X)
    targets = [np.sin(3 * X[:, k % d]) + rng.normal(size=n) for k in range(6)]
    alone = [bound.project(t).train_output for t in targets]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda t: bound.project(t).train_output, targets * 3))
    for k, out in enumerate(together):
        assert np.array_equal(out, alone[k % len(targets)])


def test_a_tree_reuses_its_oracles_histogram_buffers():
    """The histograms of a bound oracle's trees are kept in one set of buffers, reused
    from tree to tree, and never pickled with the oracle."""
    import pickle

    from oracleboost.oracles._hist_buffers import _free, buffers_of

    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 4))
    bound = HistTreeOracle(num_leaves=15, min_data_in_leaf=5).bind(X)
    first = bound.project(X[:, 0]).train_output
    (buffers,) = _free[bound]
    kept = buffers._leaves
    second = bound.project(X[:, 0]).train_output
    assert _free[bound] == [buffers] and buffers._leaves is kept
    assert np.array_equal(first, second)
    with buffers_of(bound) as held:  # held: a tree grown now gets buffers of its own
        assert held is buffers
        assert np.array_equal(bound.project(X[:, 0]).train_output, first)
    assert len(_free[bound]) == 2
    copy = pickle.loads(pickle.dumps(bound))
    assert copy not in _free
    assert np.array_equal(copy.project(X[:, 0]).train_output, first)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_step_over_a_trees_outputs_fits_the_same_bits(monkeypatch, seed):
    """The squared loss's step writes its new scores over the tree's outputs on the
    training rows (the oracle's own new array: one n-sized array less at the fit's
    peak): the same fit as the step into a new array, bit for bit."""
    import oracleboost.boosters.functional.algorithm as algorithm
    from oracleboost import FunctionalGradientRegressor

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3000, 5))
    y = 2.0 * X[:, 0] + np.sin(3.0 * X[:, 1]) + 0.1 * rng.normal(size=3000)

    def fit():
        return FunctionalGradientRegressor(HistTreeOracle(num_leaves=7), n_estimators=15,
                                           learning_rate=0.3).fit(X, y)

    spared = []
    spare = algorithm._spare
    monkeypatch.setattr(algorithm, "_spare", lambda h, f: spared.append(spare(h, f))
                        or spared[-1])
    over = fit()
    assert len(spared) == 15 and all(spared)  # (every step wrote over the outputs)
    monkeypatch.setattr(algorithm, "_spare", lambda h, f: False)
    fresh = fit()
    np.testing.assert_array_equal(over.predict(X), fresh.predict(X))
    for key in ("loss", "step", "edge", "grad_norm", "residual_norm"):
        np.testing.assert_array_equal(over.history_[key], fresh.history_[key])


def test_only_an_answers_own_writable_outputs_are_written_over():
    """The step writes over ``train_output`` only where the oracle says the array is
    the answer's own, and only a writable float64 array shaped as the scores (a
    read-only array, for example one a joblib cache maps from its files, is not)."""
    from oracleboost.boosters.functional.algorithm import _spare

    X = np.random.default_rng(4).normal(size=(500, 3))
    h = HistTreeOracle(num_leaves=4).bind(X).project(X[:, 0])
    f = np.zeros(500)
    assert h.spare_train_output and _spare(h, f)
    assert not _spare(h, np.zeros(499)) and not _spare(h, np.zeros((500, 1)))
    h.train_output.flags.writeable = False
    assert not _spare(h, f)
    assert not h.detach().spare_train_output
    assert not ConstantHypothesis(1.0, 3).spare_train_output  # (the default)


@pytest.mark.parametrize("mmap_mode", [None, "r", "r+", "c"])
def test_a_cached_answer_is_never_written_over(tmp_path, mmap_mode):
    """An answer served again by a joblib cache (here mapped from its files, writable
    with ``mmap_mode="r+"``) keeps its outputs: the step writes its new scores elsewhere,
    and every fit from the cache is the first fit, bit for bit."""
    import joblib

    from oracleboost import FunctionalGradientRegressor
    from oracleboost.oracles.cache import CachedOracle

    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 4))
    y = X[:, 0] + np.sin(2.0 * X[:, 1])
    memory = joblib.Memory(tmp_path, mmap_mode=mmap_mode, verbose=0)

    def fit():
        return FunctionalGradientRegressor(
            CachedOracle(HistTreeOracle(num_leaves=5), memory=memory),
            n_estimators=5).fit(X, y)

    first = fit()
    for again in (fit(), fit()):
        np.testing.assert_array_equal(again.predict(X), first.predict(X))
        np.testing.assert_array_equal(again.history_["loss"], first.history_["loss"])


@pytest.mark.parametrize("seed", [0, 1])
def test_a_warm_start_that_switches_to_residual_projection_starts_from_zero(seed):
    """A fit whose projection carries no Δ holds none (no array of zeros through the
    fit); a warm start that switches to ``projection="residual"`` (Algorithm 3) starts
    from Δ = 0: its first round asks Δ + v = v, the naive round's query, and so makes
    the same round."""
    from oracleboost import FunctionalGradientRegressor

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + np.sin(2.0 * X[:, 1]) + 0.1 * rng.normal(size=600)

    def warm(second):
        m = FunctionalGradientRegressor(HistTreeOracle(num_leaves=5), n_estimators=5,
                                        schedule="inv_sqrt", warm_start=True).fit(X, y)
        assert m._state_.residual is None
        return m.set_params(n_estimators=6, projection=second).fit(X, y)

    switched, naive = warm("residual"), warm("naive")
    assert switched._state_.residual.shape == (600,)
    np.testing.assert_array_equal(switched.predict(X), naive.predict(X))
    for key in ("loss", "step", "edge"):
        np.testing.assert_array_equal(switched.history_[key], naive.history_[key])


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(1, 40_000), min_size=1, max_size=40),
       F=st.integers(1, 60), width=st.integers(1, 30), T=st.integers(1, 16))
def test_a_leafs_histogram_is_cut_into_pieces_that_tile_it_in_equal_shares(sizes, F, width,
                                                                              T):
    """:func:`plan_pieces`: every (run, feature) cell in exactly one piece, in order, a
    piece at most ``width`` features of one run; thread t's share of the cells within
    one run's cells of the equal share (cut at the nearest feature)."""
    run_seg = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    pieces, shares = kernels.plan_pieces(run_seg, F, width, T)
    assert shares[0] == 0 and shares[-1] == len(pieces) and np.all(np.diff(shares) >= 0)
    cells = [(r, s) for r, s0, s1 in pieces for s in range(s0, s1)]
    assert cells == [(r, s) for r in range(len(sizes)) for s in range(F)]
    assert np.all(pieces[:, 2] - pieces[:, 1] <= width)
    work = [sum(sizes[r] * (s1 - s0) for r, s0, s1 in pieces[shares[t]:shares[t + 1]])
            for t in range(T)]
    total = sum(sizes) * F
    for t in range(T):
        assert abs(work[t] - total / T) <= max(sizes) + 1e-9 * total
