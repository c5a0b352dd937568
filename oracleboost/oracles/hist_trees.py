"""Histogram trees: LightGBM's regression trees, grown by the library on the stump
oracle's bins and row blocks.

:class:`HistTreeOracle` grows one tree a query, as LightGBM grows one a round
(``src/treelearner/serial_tree_learner.cpp``), from per-row sums of the query:

``project(target, sample_weight)``
    the least-squares tree (Grubb & Bagnell 2011, eq. 4): splits chosen by the decrease
    of the weighted squared error, leaves the weighted means ``Σ w t / (Σ w + λ)``;
    vector leaves for a target of shape ``(n, K)``.
``correlate(r)``, ``r`` of shape ``(n,)``
    a tree with ±1 leaves (eq. 3; Freund & Schapire's weighted classification with
    labels ``sign(r)`` and weights ``|r|``): its splits those of the least-squares tree
    of ``sign(r)`` weighted by ``|r|`` (the weighted Gini criterion, as CART and
    scikit-learn's AdaBoost trees choose them), each leaf the sign of its rows' sum
    of ``r``.  Given the splits, those leaves maximise the edge ``<r, h>``, which is then
    at least the best constant's.
``correlate(r)``, ``r`` of shape ``(n, K)``
    a label-coded tree (Grubb & Bagnell 2011, Theorem 2): splits of the least-squares
    tree of the row-centred ``r``, each leaf the code ``c(k)`` of the class with the
    largest sum of ``r`` over its rows.

Growth.  The root's histogram is one pass over every row; after a split, the histogram
of the child with fewer rows is summed from its rows and the other's is its parent's
less that one (LightGBM's histogram subtraction).  The rows of each leaf are a segment
of one index array, in row order, and a split partitions its leaf's segment in place.
``growth="leaf"`` splits the leaf of largest gain next (best-first, LightGBM's),
``growth="depth"`` the shallowest leaf that can split (level by level, XGBoost's
``depthwise``); both stop at ``num_leaves`` leaves or when no split gains.

Sums.  Each histogram is a sum over its rows in row order within each partition
(``BLOCKS_PER_PARTITION`` row blocks), the partitions' sums added in order: the tree
depends on ``n`` and ``block_size``, never on ``n_jobs``, and a cluster whose workers
hold the partitions makes the same sums.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from oracleboost.oracles import _hist_tree_kernels as kernels
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X
from oracleboost.oracles.monotone import (
    check_monotone_constraints,
    is_constrained,
    monotone_directions,
)
from oracleboost.oracles.stumps import (
    BoundStumpOracle,
    ConstantHypothesis,
    StumpOracle,
    label_codes,
    row_centred,
)
from oracleboost.oracles.trees import MISSING_NAN, MISSING_NONE, TreeStructure
from oracleboost.rows.blocks import (
    BLOCKS_PER_PARTITION,
    DEFAULT_BLOCK_SIZE,
    check_n_jobs,
    ordered_sum,
)
from oracleboost.rows.blocks import n_threads as _threads
from oracleboost.rows.parallel import run_parallel

__all__ = ["HistTreeOracle", "BoundHistTreeOracle", "HistTree"]

#: A leaf's histogram runs on more threads only when each gets at least this many
#: (row, feature) cells: below it numba's threads cost more than they save.
_MIN_CELLS_PER_THREAD = 1 << 15

_GROWTHS = ("leaf", "depth")


class HistTree(Hypothesis):
    """A tree grown by :class:`HistTreeOracle`.

    Parameters
    ----------
    tree : TreeStructure
        Its splits (LightGBM's layout and missing-value rules), leaves and covers (the
        training rows of each leaf).
    split_gain : ndarray of shape (n_leaves - 1,)
        The gain of each split, in the order of ``tree``'s internal nodes (the order
        the splits were made).
    """

    def __init__(self, tree: TreeStructure, split_gain: np.ndarray) -> None:
        self.tree = tree
        self.split_gain = np.asarray(split_gain, dtype=np.float64)
        self.key = ("hist_tree", tree.digest())

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a stored tree; its ``key`` (the name of its function) is made again
        from the tree, never taken from a file."""
        self.__dict__.update(state)
        self.key = ("hist_tree", self.tree.digest())

    def predict(self, X: ArrayLike) -> np.ndarray:
        return self._predict_validated(check_X(X, allow_nan=True, accept_sparse=True,
                                               who="a HistTree hypothesis"))

    def _predict_validated(self, X: Any) -> np.ndarray:
        if X.shape[1] != self.tree.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the tree was grown on "
                             f"{self.tree.n_features}")
        if not sp.issparse(X):
            return self.tree.predict(X)
        X = X.tocsr()
        step = max(1, (1 << 20) // max(1, X.shape[1]))  # rows made dense at a time
        parts = [self.tree.predict(X[a:a + step].toarray())
                 for a in range(0, X.shape[0], step)]
        return np.concatenate(parts)

    def tree_structure(self) -> TreeStructure:
        return self.tree

    def feature_importances(self, n_features: int) -> np.ndarray:
        """The tree's split gains summed per feature, normalised (LightGBM's
        ``importance_type="gain"``); zeros for a tree without splits."""
        out = np.zeros(n_features)
        np.add.at(out, self.tree.feature, np.maximum(self.split_gain, 0.0))
        total = out.sum()
        return out / total if total > 0 else out

    def __repr__(self) -> str:
        return (f"HistTree(n_leaves={self.tree.n_leaves}, n_outputs={self.tree.n_outputs}, "
                f"n_features={self.tree.n_features})")


def _check_int(value: object, name: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an int of at least {minimum}; got {value!r}")


def _check_float(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number of at least 0; got {value!r}")


class HistTreeOracle(Oracle):
    """Regression trees over binned features, grown leaf-wise or depth-wise on
    histograms (LightGBM's trees, as a weak-learner class of every booster).

    Answers all four queries of the protocol: the least-squares tree for
    ``project`` (Grubb & Bagnell 2011, eq. 4), vector leaves for a target of shape
    ``(n, K)``, a ±1 tree for ``correlate(r)`` (eq. 3) and a label-coded tree for
    ``correlate`` of shape ``(n, K)`` (Theorem 2).  See the module's notes for how a tree
    is grown.

    Parameters
    ----------
    num_leaves : int, default=31
        Most leaves of a tree, at least 2 (LightGBM's ``num_leaves``).
    max_depth : int, default=-1
        Most splits on a path from the root; ``-1`` no limit.
    growth : {"leaf", "depth"}, default="leaf"
        ``"leaf"``: split the leaf of largest gain next (LightGBM's best-first growth);
        ``"depth"``: split the shallowest leaf that gains, lowest leaf first (level by
        level, XGBoost's ``grow_policy="depthwise"``).
    min_data_in_leaf : int, default=20
        Fewest training rows of a leaf (counted from the weights, as LightGBM counts:
        a bin's rows are its weight times the leaf's rows over its weight).
    min_child_weight : float, default=1e-3
        Least weight of a leaf (LightGBM's ``min_sum_hessian_in_leaf``), in the units
        of the normalised weights: ``project``'s weights scaled by a power of two to a
        mean in [1, 2), ``correlate``'s ``|r|`` likewise.
    reg_lambda : float, default=0.0
        L2 regularisation of the leaves (LightGBM's ``lambda_l2``): a leaf is
        ``Σ w t / (Σ w + reg_lambda)``.  ``0`` gives the least-squares fit.
    min_split_gain : float, default=0.0
        Least decrease of the weighted squared error a split must make (LightGBM's
        ``min_gain_to_split``); a split must always decrease it.
    max_bins : int, default=255
        Finite bins of a feature, in ``2 .. 255`` (the stump oracle's bins: a feature
        with at most this many distinct values gets one bin a value, else quantile
        bins; a column with NaN gets a bin for them besides).
    monotone_constraints : sequence of {-1, 0, 1} or None, default=None
        One entry per feature, as LightGBM spells it: +1, the tree rises with the
        feature; −1, falls; 0, free.  Enforced as LightGBM's
        ``monotone_constraints_method="basic"``: a split on a constrained feature keeps
        its children's outputs in order, and bounds every leaf below it at their
        midpoint.  Scalar queries only (the class has no multiclass capability then).
    n_jobs : int or None, default=None
        Threads of a query, as LightGBM's ``num_threads``; the answer does not depend
        on it.
    block_size : int, default=65536
        Rows of a row block (:mod:`oracleboost.rows.blocks`); the histograms are
        summed by partitions of ``BLOCKS_PER_PARTITION`` blocks, so the trees depend on
        it to rounding.
    bin_sample : int or None, default=200000
        Rows the bins are made from (LightGBM's ``bin_construct_sample_cnt``); ``None``
        every row.

    Notes
    -----
    Missing values: a feature whose training column holds NaN has a bin for them, and
    each split learns where they go (LightGBM's missing type NaN, its two scans: the
    missing rows on the left of every threshold, then on the right; the second wins
    only when strictly better).  A feature without NaN in training sends a NaN at
    prediction where 0.0 goes (missing type none), as LightGBM does.

    Tie rule: the threshold furthest left, then the lowest feature, then (leaf-wise)
    the lowest leaf.

    Examples
    --------
    >>> import numpy as np
    >>> from oracleboost.oracles import HistTreeOracle
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> bound = HistTreeOracle(num_leaves=3, min_data_in_leaf=1).bind(X)
    >>> h = bound.project(np.array([0.0, 1.0, 4.0, 4.0]))
    >>> h
    HistTree(n_leaves=3, n_outputs=1, n_features=1)
    >>> h.train_output
    array([0., 1., 4., 4.])
    """

    def __init__(self, num_leaves: int = 31, max_depth: int = -1, growth: str = "leaf",
                 min_data_in_leaf: int = 20, min_child_weight: float = 1e-3,
                 reg_lambda: float = 0.0, min_split_gain: float = 0.0, max_bins: int = 255,
                 monotone_constraints: Sequence[int] | None = None,
                 n_jobs: int | None = None, block_size: int = DEFAULT_BLOCK_SIZE,
                 bin_sample: int | None = 200_000) -> None:
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.growth = growth
        self.min_data_in_leaf = min_data_in_leaf
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.min_split_gain = min_split_gain
        self.max_bins = max_bins
        self.monotone_constraints = monotone_constraints
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.bin_sample = bin_sample

    @property
    def capabilities(self) -> Capabilities:
        multiclass = not is_constrained(self.monotone_constraints)
        return Capabilities(
            correlate=True,
            project=True,
            multiclass_correlate=multiclass,
            multiclass_project=multiclass,
            closed_under_negation=multiclass,
            bounded=True,  # correlate answers ±1 or label codes
            sparse_input=True,  # binned from the structure, as the stump oracle bins
            allow_nan=True,
            feature_subsets=True,
        )

    def _check_params(self) -> None:
        _check_int(self.num_leaves, "num_leaves", 2)
        md = self.max_depth
        if isinstance(md, bool) or not isinstance(md, numbers.Integral) or (
                md < 1 and md != -1):
            raise ValueError(f"max_depth must be -1 (no limit) or an int of at least 1; "
                             f"got {md!r}")
        if self.growth not in _GROWTHS:
            raise ValueError(f"growth must be one of {_GROWTHS}; got {self.growth!r}")
        _check_int(self.min_data_in_leaf, "min_data_in_leaf", 1)
        _check_float(self.min_child_weight, "min_child_weight")
        _check_float(self.reg_lambda, "reg_lambda")
        _check_float(self.min_split_gain, "min_split_gain")
        check_n_jobs(self.n_jobs)
        check_monotone_constraints(self.monotone_constraints)
        self._stump_oracle()._check_params()  # max_bins, block_size, bin_sample

    def _stump_oracle(self) -> StumpOracle:
        """The stump oracle whose bins the trees grow on."""
        return StumpOracle(max_bins=self.max_bins, n_jobs=self.n_jobs,
                           block_size=self.block_size, bin_sample=self.bin_sample)

    def bind(self, X: ArrayLike) -> BoundHistTreeOracle:
        """Bin every feature of ``X`` once (as :meth:`StumpOracle.bind` does: dense or
        sparse, finite or NaN) and return the oracle over its rows."""
        self._check_params()
        X = check_X(X, allow_nan=True, accept_sparse=True, who="HistTreeOracle")
        monotone_directions(self.monotone_constraints, X.shape[1])  # one a feature
        return BoundHistTreeOracle(self, self._stump_oracle().bind(X))

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundOracle:
        """The oracle over rows held in a backend's partitions: each tree grown from
        the partitions' histograms, added in order (``backend.bind_hist_trees``; on
        Dask, :class:`oracleboost.oracles.partitioned_hist_trees.PartitionedHistTreeOracle`)."""
        self._check_params()
        monotone_directions(self.monotone_constraints, rows.n_features)  # one a feature
        return backend.bind_hist_trees(self, rows)


class BoundHistTreeOracle(BoundOracle):
    """A :class:`HistTreeOracle` bound to ``n`` training rows.

    Attributes
    ----------
    n_features : int
    thresholds : list of ndarray
        The candidate thresholds of each feature (those of :class:`StumpOracle`).
    n_bins : ndarray of shape (n_features,)
        Finite bins of each feature.
    missing : ndarray of bool, shape (n_features,)
        Features with a missing-value bin (code ``n_bins[j]``).
    codes : ndarray of uint8, shape (n_samples * n_features,)
        The bins of the rows, row-major.
    """

    _correlate_checks_query = False
    _project_checks_target = False

    def __init__(self, oracle: HistTreeOracle, bins: BoundStumpOracle) -> None:
        super().__init__(oracle, bins.n_samples)
        self.n_features = bins.n_features
        self.n_jobs = oracle.n_jobs
        self.thresholds = bins.thresholds
        self.n_bins = np.asarray(bins.n_bins, dtype=np.int64)
        self.missing = np.asarray(bins.missing, dtype=np.bool_)
        self.n_hist_bins = int(bins._B)
        # the codes row-major (a row's codes one run of bytes); the stump oracle's
        # feature-major blocks are dropped
        self.codes = np.ascontiguousarray(bins.codes).reshape(-1)
        directions = monotone_directions(oracle.monotone_constraints, self.n_features)
        self._directions = (np.zeros(self.n_features, np.int64) if directions is None
                            else np.asarray(directions, np.int64))
        self._bounded = directions is not None
        starts = [a for a, _ in bins.blocks.bounds][::BLOCKS_PER_PARTITION]
        self._part_starts = np.array(starts + [self.n_samples], dtype=np.int64)

    # -- the queries --------------------------------------------------------------------
    def _correlate(self, r: np.ndarray, random_state: int | None,
                   features: np.ndarray | None = None) -> Hypothesis:
        if r.ndim == 2:
            K = r.shape[1]
            if K < 2:
                raise ValueError(
                    f"r of shape (n, K) needs K >= 2 classes for label-coded trees; got "
                    f"K={K} (pass r of shape (n,) for binary ±1 trees)")
            rc = _power_of_two_scaled(row_centred(r), self._part_starts)
            g = np.empty((self.n_samples, K + 1))
            g[:, :K] = rc
            g[:, K] = 1.0
            return self._answer(g, K, "codes", features)
        scaled = _power_of_two_scaled(r, self._part_starts)
        g = np.empty((self.n_samples, 2))
        g[:, 0] = scaled
        np.abs(scaled, out=g[:, 1])
        return self._answer(g, 1, "sign", features)

    def _project(self, target: np.ndarray, sample_weight: np.ndarray | None,
                 random_state: int | None, features: np.ndarray | None = None
                 ) -> Hypothesis:
        K = target.shape[1] if target.ndim == 2 else 1
        g = np.empty((self.n_samples, K + 1))
        w = np.ones(self.n_samples) if sample_weight is None else sample_weight
        with np.errstate(over="ignore", invalid="ignore"):
            g[:, :K] = target.reshape(self.n_samples, K) * w[:, None]
        g[:, K] = w
        return self._answer(g, K, "vector" if target.ndim == 2 else "value", features)

    # -- growing a tree -------------------------------------------------------------------
    def _leaf_rows(self, g: np.ndarray) -> LeafRows:
        """The rows of a tree being grown on the channels ``g`` (here: in memory)."""
        return LeafRows(self, g)

    def _answer(self, g: np.ndarray, K: int, kind: str, features: np.ndarray | None
                ) -> Hypothesis:
        rows = self._leaf_rows(g)
        grown = grow_tree(self, rows, K, features)
        d = self.n_features
        sums = grown.sums
        if kind == "codes":
            value = label_codes(K)[np.argmax(sums[:, :K], axis=1)]
        else:
            value = leaf_values(sums, K, float(self.oracle.reg_lambda), grown.bounds)
            if kind == "sign":
                value = np.where(value >= 0.0, 1.0, -1.0)
        tree = grown.tree
        if kind == "sign" and tree.n_leaves > 1 and self._bounded:
            # a constant is always allowed: keep the tree only if its edge is not less
            total = float(np.sum(sums[:, 0]))
            if float(np.sum(value[:, 0] * sums[:, 0])) < abs(total):
                tree = TreeStructure.constant(0.0, d)
                value = np.array([[1.0 if total >= 0.0 else -1.0]])
                rows.merge()
        if not np.isfinite(value).all():
            self._refuse_query(g[:, 0] if K == 1 else g[:, :K],
                               "target" if kind in ("value", "vector") else "r")
        vector = kind in ("vector", "codes")
        if tree.n_leaves == 1:
            v = value[0] if vector else float(value[0, 0])
            h: Hypothesis = ConstantHypothesis(v, d)
            if kind == "sign":
                h.key, h.scale = ("constant",), float(v)
        else:
            h = HistTree(tree.with_values(value if vector else value[:, :1]).with_counts(
                rows.counts().astype(np.float64)), grown.gains)
        h.train_output = rows.outputs(value if vector else value[:, 0])
        return h


class LeafRows:
    """The training rows of a tree being grown, leaf by leaf, in this process's memory.

    The rows of every leaf are a segment of one index array, in row order; a split
    partitions its leaf's segment in place, stably (the left child's rows first, LightGBM's
    ``DataPartition``).  A leaf's histogram is each partition's sum over the leaf's rows
    there, in row order, the partitions' sums added in order; the features are cut into
    runs, a task a partition and a run, on numba's threads.

    A backend that holds the rows in partitions elsewhere provides the same four
    methods (:meth:`histogram`, :meth:`split`, :meth:`counts`, :meth:`outputs`, and
    :meth:`merge`), each partition doing for its rows what this does for them."""

    def __init__(self, bound: BoundHistTreeOracle, g: np.ndarray) -> None:
        self.bound = bound
        self.g = np.ascontiguousarray(g, dtype=np.float64)
        n = bound.n_samples
        self.rows = np.arange(n, dtype=np.int64)
        self._tmp = np.empty(n, dtype=np.int64)
        self.start, self.stop = [0], [n]

    def histogram(self, leaf: int, feats: np.ndarray) -> np.ndarray:
        """The histogram ``(F, B, C)`` of the leaf's rows over the features ``feats``."""
        b = self.bound
        lo, hi = self.start[leaf], self.stop[leaf]
        segment = self.rows[lo:hi]
        C = self.g.shape[1]
        if hi - lo == b.n_samples:  # every row, in order: the rows' own channels
            part_seg, ordered = b._part_starts, self.g
        else:
            part_seg = np.searchsorted(segment, b._part_starts).astype(np.int64)
            ordered = np.empty((hi - lo, C))
            kernels.gather(self.rows, lo, hi, self.g, ordered)
        return partition_histogram(b.codes, b.n_features, segment, part_seg, ordered,
                                   feats, b.n_hist_bins, b.n_jobs)

    def count(self, leaf: int) -> int:
        return self.stop[leaf] - self.start[leaf]

    def split(self, leaf: int, j: int, goes_left: np.ndarray) -> int:
        """Split the leaf by feature ``j``'s bins (``goes_left[code]``): its left rows
        stay the leaf, its right rows become a new leaf (the next index).  Returns how
        many went left."""
        lo, hi = self.start[leaf], self.stop[leaf]
        b = self.bound
        n_left = int(kernels.split_rows(b.codes, b.n_features, self.rows, lo, hi, j,
                                        goes_left, self._tmp))
        self.stop[leaf] = lo + n_left
        self.start.append(lo + n_left)
        self.stop.append(hi)
        return n_left

    def merge(self) -> None:
        """Make every row one leaf again."""
        self.start, self.stop = [0], [self.bound.n_samples]

    def counts(self) -> np.ndarray:
        """Every leaf's rows."""
        return np.array(self.stop) - np.array(self.start)

    def outputs(self, value: np.ndarray) -> np.ndarray:
        """Each training row's leaf value (``value`` of shape (L,) or (L, K))."""
        starts = np.array(self.start, dtype=np.int64)
        stops = np.array(self.stop, dtype=np.int64)
        value = np.ascontiguousarray(value, dtype=np.float64)
        out = np.empty((self.bound.n_samples,) + value.shape[1:])
        if value.ndim == 2:
            kernels.leaf_outputs_2d(self.rows, starts, stops, value, out)
        else:
            kernels.leaf_outputs(self.rows, starts, stops, value, out)
        return out


def partition_histogram(codes: np.ndarray, d: int, rows: np.ndarray, part_seg: np.ndarray,
                        g: np.ndarray, feats: np.ndarray, n_hist_bins: int,
                        n_jobs: int | None) -> np.ndarray:
    """The histogram ``(F, B, C)`` of ``rows`` (increasing; their channels ``g``, in
    the same order) over the features ``feats``, with ``rows[part_seg[p]:part_seg[p +
    1]]`` those of partition ``p``: each partition's rows cut into runs of
    ``RUN_ROWS``, each run summed in row order (a task of numba's threads), a
    partition's runs added in order, then the partitions in order.  A worker holding
    one partition calls it with ``part_seg = [0, len(rows)]``."""
    F, C = feats.size, g.shape[1]
    run = kernels.RUN_ROWS
    run_seg = [int(part_seg[0])]
    last_of_part = []
    for p in range(part_seg.size - 1):
        k0, k1 = int(part_seg[p]), int(part_seg[p + 1])
        run_seg.extend(range(k0 + run, k1, run))
        if k1 > k0:
            run_seg.append(k1)
        last_of_part.append(len(run_seg) - 1)
    R = len(run_seg) - 1
    out = np.empty((max(R, 1), F, n_hist_bins, C))
    if R == 0:
        out[0] = 0.0
        return out[0]
    threads = max(1, min(_threads(n_jobs), (rows.size * F) // _MIN_CELLS_PER_THREAD))
    spans = max(1, min(F, -(-threads // R)))  # spans of features a run
    cuts = np.array([F * t // spans for t in range(spans + 1)], dtype=np.int64)
    run_parallel(kernels.leaf_histograms, threads, codes, d, rows,
                 np.array(run_seg, dtype=np.int64), g, feats, cuts, out)
    hist = None
    first = 0
    for last in last_of_part:  # a partition's runs, in order; then the partitions
        if last == first:
            continue
        part = out[first]
        for r in range(first + 1, last):
            part += out[r]
        if hist is None:
            hist = part
        else:
            hist += part
        first = last
    return hist


class GrownTree(NamedTuple):
    """:func:`grow_tree`'s tree (leaf values 0), its splits' gains, its leaves' sums
    ``(L, K + 1)`` and (under monotone constraints) their output bounds, else None."""

    tree: TreeStructure
    gains: np.ndarray
    sums: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray] | None


def leaf_values(sums: np.ndarray, K: int, lam: float,
                bounds: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Each leaf's ``G / (H + λ)`` (0 where ``H + λ`` is 0), clamped to its ``bounds``
    (under monotone constraints: ``(lower, upper)``, a value a leaf)."""
    H = sums[:, K:K + 1] + lam
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        value = np.where(H > 0, sums[:, :K] / np.where(H > 0, H, 1.0), 0.0)
    if bounds is not None:
        value = np.clip(value, bounds[0][:, None], bounds[1][:, None])
    return value


def grow_tree(bound: BoundHistTreeOracle, rows: Any, K: int,
              features: np.ndarray | None) -> GrownTree:
    """Grow one tree on ``rows`` (a :class:`LeafRows`, or a backend's rows with its
    methods) by the oracle's rules: best-first or level by level, each leaf's best split
    from its histogram (:func:`._hist_tree_kernels.best_splits`), the smaller child's
    histogram summed and the larger's its parent's less it."""
    o = bound.oracle
    d = bound.n_features
    C = K + 1
    feats = (np.arange(d, dtype=np.int64) if features is None
             else np.asarray(features, dtype=np.int64))
    lam, min_data = float(o.reg_lambda), float(o.min_data_in_leaf)
    min_weight, min_gain = float(o.min_child_weight), float(o.min_split_gain)
    max_depth, num_leaves = int(o.max_depth), int(o.num_leaves)
    n_bins, missing, bounded = bound.n_bins, bound.missing, bound._bounded
    directions = bound._directions

    hists: list[np.ndarray | None] = [rows.histogram(0, feats)]
    total = np.empty(C)
    kernels.column_total(hists[0][0], total)
    if not np.isfinite(total).all():
        g = rows.g
        bound._refuse_query(g[:, 0] if K == 1 else g[:, :K], "target")
    sums, depth, count = [total], [0], [rows.count(0)]
    lo_b, hi_b = [-np.inf], [np.inf]
    parent_of: list[tuple[int, bool] | None] = [None]
    best: list[tuple | None] = [None]
    # the internal nodes, in the order of their splits
    feature, threshold, left, right, default_left, missing_type, gains = ([] for _ in
                                                                          range(7))

    def can_split(leaf: int) -> bool:
        return count[leaf] >= 2 * min_data and (max_depth < 0 or depth[leaf] < max_depth)

    def find(leaf: int) -> None:
        best[leaf] = None
        if not can_split(leaf) or hists[leaf] is None:
            return
        GL = np.empty(C)
        gain, s, t, nan_left = kernels.best_splits(
            hists[leaf], feats, n_bins, missing, K, sums[leaf], float(count[leaf]), lam,
            min_data, min_weight, directions, bounded, lo_b[leaf], hi_b[leaf], GL)
        if s >= 0 and gain > min_gain:
            best[leaf] = (gain, int(feats[s]), int(t), bool(nan_left), GL)

    find(0)
    while len(sums) < num_leaves:
        candidates = [leaf for leaf in range(len(sums)) if best[leaf] is not None]
        if not candidates:
            break
        if o.growth == "leaf":  # largest gain, lowest leaf among equals
            leaf = max(candidates, key=lambda q: (best[q][0], -q))
        else:  # shallowest, lowest leaf among equals
            leaf = min(candidates, key=lambda q: (depth[q], q))
        gain, j, t, nan_left, GL = best[leaf]
        nb = int(n_bins[j])
        goes_left = np.zeros(bound.n_hist_bins, dtype=np.bool_)
        goes_left[:t + 1] = True
        if missing[j]:
            goes_left[nb] = nan_left
        n_all = count[leaf]
        n_left = rows.split(leaf, j, goes_left)
        node, new = len(feature), len(sums)
        feature.append(j)
        threshold.append(float(bound.thresholds[j][t]) if t < nb - 1 else np.inf)
        default_left.append(bool(nan_left) if missing[j] else True)
        missing_type.append(MISSING_NAN if missing[j] else MISSING_NONE)
        left.append(~leaf)
        right.append(~new)
        gains.append(float(gain))
        if parent_of[leaf] is not None:
            p, is_left = parent_of[leaf]
            (left if is_left else right)[p] = node
        parent_of[leaf] = (node, True)
        parent_of.append((node, False))
        # the children: the left keeps the leaf's index, the right is the new leaf
        GR = sums[leaf] - GL
        sums[leaf] = GL
        sums.append(GR)
        count[leaf] = n_left
        count.append(n_all - n_left)
        depth[leaf] += 1
        depth.append(depth[leaf])
        lo_b.append(lo_b[leaf])
        hi_b.append(hi_b[leaf])
        direction = int(directions[j])
        if bounded and direction != 0:  # LightGBM's basic method: bound at the midpoint
            vl = _clamp(GL[0] / (GL[K] + lam), lo_b[leaf], hi_b[leaf])
            vr = _clamp(GR[0] / (GR[K] + lam), lo_b[leaf], hi_b[leaf])
            mid = (vl + vr) / 2.0
            if direction > 0:
                hi_b[leaf] = min(hi_b[leaf], mid)
                lo_b[new] = max(lo_b[new], mid)
            else:
                lo_b[leaf] = max(lo_b[leaf], mid)
                hi_b[new] = min(hi_b[new], mid)
        parent_hist = hists[leaf]
        hists[leaf] = None
        hists.append(None)
        best.append(None)
        if len(sums) < num_leaves and (can_split(leaf) or can_split(new)):
            small, large = (leaf, new) if count[leaf] <= count[new] else (new, leaf)
            hists[small] = rows.histogram(small, feats)
            parent_hist -= hists[small]  # LightGBM's histogram subtraction
            hists[large] = parent_hist
            find(leaf)
            find(new)
    L = len(sums)
    if L == 1:
        tree = TreeStructure.constant(0.0, d)
    else:
        tree = TreeStructure(
            n_features=d, feature=np.array(feature, dtype=np.intp),
            threshold=np.array(threshold, dtype=np.float64),
            left=np.array(left, dtype=np.intp), right=np.array(right, dtype=np.intp),
            value=np.zeros((L, 1)), default_left=np.array(default_left, dtype=bool),
            missing=np.array(missing_type, dtype=np.intp))
    return GrownTree(tree, np.array(gains), np.array(sums),
                     (np.array(lo_b), np.array(hi_b)) if bounded else None)


def _clamp(v: float, lo: float, hi: float) -> float:
    return min(max(v, lo), hi)


def power_of_two_exponents(mean_abs: Callable[[int], float]) -> tuple[int, int] | None:
    """The powers of two that bring the mean of ``|r|`` into [1, 2): ``(e, a)``, ``r``
    being scaled as ``ldexp(ldexp(r, e), a)`` (``a`` in -1, 0, 1 corrects the log's
    rounding), or None when the mean is 0 or not finite (``r`` is kept as it is).
    ``mean_abs(e)`` is the mean of ``|ldexp(r, e)|``, summed partition by partition
    (:func:`partition_mean_abs`), wherever ``r`` is held."""
    m = mean_abs(0)
    if not np.isfinite(m) or m == 0.0:
        return None
    e = -int(np.floor(np.log2(m)))
    m2 = mean_abs(e)
    return e, (-1 if m2 >= 2.0 else 1 if m2 < 1.0 else 0)


def scaled_by(r: np.ndarray, exponents: tuple[int, int] | None) -> np.ndarray:
    """``r`` scaled by :func:`power_of_two_exponents`' answer (exact: the signs and
    ratios are kept)."""
    if exponents is None:
        return r
    e, a = exponents
    scaled = np.ldexp(r, e)
    return np.ldexp(scaled, a) if a else scaled


def abs_sum(r: np.ndarray, e: int) -> float:
    """``Σ |ldexp(r, e)|`` over one partition's rows (NumPy's sum)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.sum(np.abs(np.ldexp(r, e) if e else r)))


def partition_mean_abs(r: np.ndarray, starts: np.ndarray, e: int) -> float:
    """The mean of ``|ldexp(r, e)|``: each partition's sum (rows ``starts[p]`` to
    ``starts[p + 1]``), the partitions' sums added in order, so that rows held in
    partitions elsewhere give the same number."""
    sums = [abs_sum(r[a:b], e) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    return float(ordered_sum(sums)) / r.size


def _power_of_two_scaled(r: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``r`` times the power of two that brings the mean of ``|r|`` into [1, 2) (exact:
    the signs and ratios are kept), so that ``min_child_weight`` reads ``|r|`` as it
    reads normalised weights; ``r`` itself when it is all zeros.  The mean is summed by
    the partitions that start at ``starts`` (:func:`partition_mean_abs`)."""
    return scaled_by(r, power_of_two_exponents(
        lambda e: partition_mean_abs(r, starts, e)))
