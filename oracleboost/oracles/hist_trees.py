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
``depthwise``); both stop at ``num_leaves`` leaves or when no split gains.  As
LightGBM's ``SerialTreeLearner``, a numeric feature with no valid split in a leaf is not
scanned again below it (its histograms' ``is_splittable``): on the same bins the trees
are LightGBM's.

Sums.  Each histogram is a sum over its rows in row order, by runs of ``RUN_ROWS`` of
them within each partition (``BLOCKS_PER_PARTITION`` row blocks), the runs' sums added
in order and then the partitions': the tree depends on ``n`` and ``block_size``, never
on ``n_jobs``, and a cluster whose workers hold the partitions makes the same sums.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from oracleboost.oracles import _hist_tree_kernels as kernels
from oracleboost.oracles import _tree_growth as growth
from oracleboost.oracles._hist_buffers import HistogramBuffers, buffers_of
from oracleboost.oracles._hist_tree_categories import CategoryBins
from oracleboost.oracles._tree_predict import tree_sum
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Hypothesis,
    Oracle,
    check_categorical_features,
    check_X,
)
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
from oracleboost.rows.parallel import max_threads, run_parallel

__all__ = ["HistTreeOracle", "BoundHistTreeOracle", "HistTree"]

#: A leaf's histogram runs on more threads only when each gets at least this many
#: (row, feature) cells: below it numba's threads cost more than they save.
_MIN_CELLS_PER_THREAD = 1 << 11

#: A task of a leaf's histogram sums at most this many bytes of it: a span of the
#: features whose bins stay in the core's cache while the rows' codes stream past (at
#: 50 features, two spans of 25 sum a tree's histograms in 0.9 of one span's time).
_SPAN_HIST_BYTES = 96 << 10

_GROWTHS = ("leaf", "depth")

#: A split runs on more threads only when each gets at least this many rows.  From the
#: compiled growth loop a parallel region costs a few microseconds: at 100,000 × 50 and
#: 31 leaves on two threads, 4,000 took a tree from 10.4 to 9.9 ms against 12,000 (the
#: bound when each kernel was called from Python), and below it the trees were no faster.
_MIN_SPLIT_ROWS_PER_THREAD = 4_000

#: The training rows' outputs are written on more threads only when each gets at least
#: this many rows.
_MIN_OUTPUT_ROWS_PER_THREAD = 1 << 12


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
        K = self.tree.n_outputs
        out = np.zeros(X.shape[0] if K == 1 else (X.shape[0], K))
        _sum_dense_or_sparse([self.tree], np.ones(1), X, out, None)
        return out

    @classmethod
    def predict_sum(cls, hypotheses: Sequence[Hypothesis], coef: np.ndarray, X: np.ndarray,
                    out: np.ndarray, *, n_jobs: int | None = None) -> None:
        """Add ``coef[r] * hypotheses[r].predict(X)`` to ``out`` for every round, in one
        compiled pass over the rows (:func:`._tree_predict.tree_sum`): bit for bit the
        loop of :meth:`Hypothesis.predict_sum`, on any number of threads.  Rounds that
        are not all :class:`HistTree` of ``out``'s outputs take the default loop."""
        coef = np.asarray(coef, dtype=np.float64)
        K = 1 if out.ndim == 1 else out.shape[1]
        if not (len(hypotheses) and all(type(h) is HistTree and h.tree.n_outputs == K
                                        and h.tree.n_features == X.shape[1]
                                        for h in hypotheses)
                and coef.shape == (len(hypotheses),) and out.dtype == np.float64
                and out.shape[0] == X.shape[0]):
            Hypothesis.predict_sum(hypotheses, coef, X, out)
            return
        _sum_dense_or_sparse([h.tree for h in hypotheses], coef, X, out, n_jobs)

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


def _sum_dense_or_sparse(trees: list[TreeStructure], coef: np.ndarray, X: Any, out: np.ndarray,
                         n_jobs: int | None) -> None:
    """:func:`tree_sum` on dense X, or on a sparse X by blocks of rows made dense (each
    row's sum depends on that row alone: the bits of ``X.toarray()``)."""
    if not sp.issparse(X):
        tree_sum(trees, coef, X, out, n_jobs)
        return
    X = X.tocsr()
    step = max(1, (1 << 20) // max(1, X.shape[1]))  # rows made dense at a time
    for a in range(0, X.shape[0], step):
        tree_sum(trees, coef, X[a:a + step].toarray(), out[a:a + step], n_jobs)


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
    max_cat_to_onehot : int, default=4
        A categorical feature of at most this many bins (its categories and the bin
        of missing values, as LightGBM counts them) is split one category against the
        rest (LightGBM's ``max_cat_to_onehot``).
    max_cat_threshold : int, default=32
        Most categories a set split sends left (LightGBM's ``max_cat_threshold``).
    cat_smooth : float, default=10.0
        A set split sorts the categories by ``G / (H + cat_smooth)``, their sum of the
        query over their weight, smoothed towards 0; categories of fewer rows than it
        stay out of every set (LightGBM's ``cat_smooth``).
    cat_l2 : float, default=10.0
        Added to ``reg_lambda`` in the gains of set splits (LightGBM's ``cat_l2``).  It
        only chooses the split: every leaf is ``Σ w t / (Σ w + reg_lambda)``.
    min_data_per_group : int, default=100
        Fewest rows of the categories a set split adds to its set between two
        candidate sets, and of the rest (LightGBM's ``min_data_per_group``).

    Notes
    -----
    Missing values: a feature whose training column holds NaN has a bin for them, and
    each split learns where they go (LightGBM's missing type NaN, its two scans: the
    missing rows on the left of every threshold, then on the right; the second wins
    only when strictly better).  A feature without NaN in training sends a NaN at
    prediction where 0.0 goes (missing type none), as LightGBM does.

    Tie rule: the threshold furthest left, then the lowest feature, then (leaf-wise)
    the lowest leaf.

    Categorical features (``bind(X, categorical_features=...)``, which boosters pass for
    a pandas DataFrame's ``category`` columns): a split sends a set of categories left,
    found as LightGBM finds it (``FindBestThresholdCategoricalInner``: one category
    against the rest for few categories, else the categories sorted by
    ``G / (H + cat_smooth)`` and sets taken from either end), the gains those of the
    other splits.  A feature's bins are its categories, most frequent first, at most
    255 of them; a missing value and the categories beyond them go right at every
    split, and so does, at prediction, a category not seen in training (LightGBM sends
    all three right).  For vector queries (K > 1) the categories are sorted by each
    of the K sums in turn.  Monotone constraints on a categorical feature are
    refused, as LightGBM refuses them.

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
                 bin_sample: int | None = 200_000, max_cat_to_onehot: int = 4,
                 max_cat_threshold: int = 32, cat_smooth: float = 10.0,
                 cat_l2: float = 10.0, min_data_per_group: int = 100) -> None:
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
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.min_data_per_group = min_data_per_group

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
            categorical=True,  # set splits of category codes, as LightGBM's
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
        _check_int(self.max_cat_to_onehot, "max_cat_to_onehot", 1)
        _check_int(self.max_cat_threshold, "max_cat_threshold", 1)
        _check_float(self.cat_smooth, "cat_smooth")
        _check_float(self.cat_l2, "cat_l2")
        _check_int(self.min_data_per_group, "min_data_per_group", 1)
        self._stump_oracle()._check_params()  # max_bins, block_size, bin_sample

    def _stump_oracle(self) -> StumpOracle:
        """The stump oracle whose bins the trees grow on."""
        return StumpOracle(max_bins=self.max_bins, n_jobs=self.n_jobs,
                           block_size=self.block_size, bin_sample=self.bin_sample)

    def _category_params(self) -> tuple[int, int, float, float, float]:
        """The parameters of set splits, as :mod:`._hist_tree_categories` reads them."""
        return (int(self.max_cat_to_onehot), int(self.max_cat_threshold),
                float(self.cat_smooth), float(self.cat_l2), float(self.min_data_per_group))

    def bind(self, X: ArrayLike, *, categorical_features: Sequence[int] | None = None
             ) -> BoundHistTreeOracle:
        """Bin every feature of ``X`` once (as :meth:`StumpOracle.bind` does: dense or
        sparse, finite or NaN) and return the oracle over its rows.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        categorical_features : sequence of int or None, default=None
            Columns of X holding category codes (integers ≥ 0 as floats, NaN for
            missing), split by sets of categories; a booster passes a DataFrame's
            ``category`` columns here.  None: every column is numerical.
        """
        self._check_params()
        X = check_X(X, allow_nan=True, accept_sparse=True, who="HistTreeOracle")
        directions = monotone_directions(self.monotone_constraints, X.shape[1])
        categories = None
        if categorical_features is not None and len(categorical_features) > 0:
            features = check_categorical_features(X, categorical_features)
            constrained = [j for j in features
                           if directions is not None and directions[j] != 0]
            if constrained:
                raise ValueError(
                    f"monotone_constraints constrains the categorical feature(s) "
                    f"{constrained}: categories have no order to keep (LightGBM refuses "
                    "this too); set their entries to 0")
            categories = CategoryBins(X, features)
        return BoundHistTreeOracle(self, self._stump_oracle().bind(X), categories)

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
    columns : ndarray of uint8, shape (n_features, n_samples)
        The same bins, column-major.
    categories : CategoryBins or None
        The bins of the categorical features (a categorical feature has no thresholds:
        ``n_bins`` 1, no missing-value bin, its codes those of ``categories``); None
        when there are none.
    """

    _correlate_checks_query = False
    _project_checks_target = False

    def __init__(self, oracle: HistTreeOracle, bins: BoundStumpOracle,
                 categories: CategoryBins | None = None) -> None:
        super().__init__(oracle, bins.n_samples)
        self.n_features = bins.n_features
        self.n_jobs = oracle.n_jobs
        self.thresholds = bins.thresholds
        self.n_bins = np.asarray(bins.n_bins, dtype=np.int64)
        self.missing = np.asarray(bins.missing, dtype=np.bool_)
        self.n_hist_bins = int(bins._B)
        # The codes in both layouts, as LightGBM keeps both for its row-wise histograms:
        # a histogram reads every code of each of a leaf's rows (row-major: one run of
        # bytes a row), a split one feature's code of each (column-major: one byte a
        # row, where the row-major codes cost a cache line; at 1,000,000 × 20 a tree's
        # 30 splits of 6,000,000 rows in all took 21 ms of its 76 on one thread).
        # The row-major codes are made in the stump oracle's buffer: its block of rows
        # a .. b holds their codes feature by feature in the same bytes (a·d .. b·d)
        # that hold them row by row, so each block is copied into the columns, then
        # transposed in place.
        codes = bins._codes
        d = bins.n_features
        self.columns = np.empty((d, bins.n_samples), dtype=codes.dtype)
        for (a, b), block in zip(bins.blocks.bounds, bins._block_codes, strict=True):
            self.columns[:, a:b] = block
            codes[a * d:b * d] = block.T.ravel()  # (ravel copies: the block is read first)
        bins._codes = bins._block_codes = None  # the stump oracle's views, not kept
        self.codes = codes
        directions = monotone_directions(oracle.monotone_constraints, self.n_features)
        self._directions = (np.zeros(self.n_features, np.int64) if directions is None
                            else np.asarray(directions, np.int64))
        self._bounded = directions is not None
        starts = [a for a, _ in bins.blocks.bounds][::BLOCKS_PER_PARTITION]
        self._part_starts = np.array(starts + [self.n_samples], dtype=np.int64)
        self.categories = categories
        if categories is not None:
            self._use_category_bins(categories)

    def _use_category_bins(self, categories: CategoryBins) -> None:
        """Replace the numerical bins of the categorical features by their category
        bins: no thresholds to scan, the codes the categories' bins."""
        d = self.n_features
        self.thresholds = list(self.thresholds)
        self.n_bins, self.missing = self.n_bins.copy(), self.missing.copy()
        for j, bins in zip(categories.features.tolist(), categories.column_bins,
                           strict=True):
            self.thresholds[j] = np.zeros(0)
            self.n_bins[j] = 1
            self.missing[j] = False
            self.codes[j::d] = bins
            self.columns[j] = bins
        self.n_hist_bins = int(max(int((self.n_bins + self.missing).max()),
                                   categories.n_bins))

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
            return self._answer(np.ascontiguousarray(rc, dtype=np.float64), K, "codes",
                                features)  # (unit weights: no column of ones)
        scaled = _power_of_two_scaled(r, self._part_starts)
        g = np.empty((self.n_samples, 2))
        g[:, 0] = scaled
        np.abs(scaled, out=g[:, 1])
        return self._answer(g, 1, "sign", features)

    def _project(self, target: np.ndarray, sample_weight: np.ndarray | None,
                 random_state: int | None, features: np.ndarray | None = None
                 ) -> Hypothesis:
        K = target.shape[1] if target.ndim == 2 else 1
        t = target.reshape(self.n_samples, K)
        if sample_weight is None:  # unit weights: the target alone (no column of ones)
            g = np.ascontiguousarray(t, dtype=np.float64)
        else:  # (no n-sized temporaries: written in place)
            g = np.empty((self.n_samples, K + 1))
            with np.errstate(over="ignore", invalid="ignore"):
                np.multiply(t, sample_weight[:, None], out=g[:, :K])
            g[:, K] = sample_weight
        return self._answer(g, K, "vector" if target.ndim == 2 else "value", features)

    # -- growing a tree -------------------------------------------------------------------
    def _leaf_rows(self, g: np.ndarray) -> LeafRows:
        """The rows of a tree being grown on the channels ``g`` (here: in memory)."""
        return LeafRows(self, g)

    def _answer(self, g: np.ndarray, K: int, kind: str, features: np.ndarray | None
                ) -> Hypothesis:
        rows = self._leaf_rows(g)
        grown = rows.grown(K, features, "target" if kind in ("value", "vector") else "r")
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
        # (a new array of this process, which the oracle keeps no reference to)
        h.spare_train_output = isinstance(h.train_output, np.ndarray)
        return h


class LeafRows:
    """The training rows of a tree being grown, leaf by leaf, in this process's memory.

    The rows of every leaf are a segment of one index array, in row order; a split
    partitions its leaf's segment in place, stably (the left child's rows first, LightGBM's
    ``DataPartition``).  A leaf's histogram is :func:`partition_histogram` of its rows'
    channels ``g``: ``(n, K + 1)``, the weight last, or ``(n, K)`` for unit weights.

    A backend that holds the rows in partitions elsewhere provides the same five
    methods (:meth:`histogram`, :meth:`split`, :meth:`counts`, :meth:`outputs`, and
    :meth:`merge`), each partition doing for its rows what this does for them.  In
    memory a tree is grown by one compiled loop (:meth:`grow`) that makes the same
    splits and histograms as these methods.

    ``tally`` counts what the kernels did (for tests): the root's runs, the histograms
    of leaves in several runs, the splits on threads and the fewest threads of one."""

    def __init__(self, bound: BoundHistTreeOracle, g: np.ndarray) -> None:
        self.bound = bound
        self.g = np.ascontiguousarray(g, dtype=np.float64)
        n = bound.n_samples
        index = np.int32 if n < 2**31 else np.int64  # half the bytes of a row's index
        self.rows = np.arange(n, dtype=index)
        # (in the rows' type: searchsorted would otherwise convert a leaf's rows)
        self._part_starts = bound._part_starts.astype(index)
        self._tmp = np.empty(n, dtype=index)
        self._threads = _kernel_threads(bound.n_jobs)  # once a query (it asks the OS)
        self._limits = _limits()
        # a second buffer, for splits on threads
        threaded = self._threads > 1 and n >= 2 * self._limits.min_split_rows
        self._right = np.empty(n if threaded else 0, dtype=index)
        self.start, self.stop = [0], [n]
        self.tally = np.zeros(4, dtype=np.int64)

    def _runs(self, buffers: HistogramBuffers, feats: np.ndarray, C: int) -> np.ndarray:
        """Memory for the sums of a leaf histogram's runs (as many as the root has,
        which no leaf exceeds)."""
        R = int(growth.count_runs(self.bound._part_starts, self._limits.run_rows))
        return buffers.runs(growth.runs_needed(R, self._threads), feats.size,
                            self.bound.n_hist_bins, C).reshape(-1)

    def histogram(self, leaf: int, feats: np.ndarray, out: np.ndarray,
                  buffers: HistogramBuffers) -> np.ndarray:
        """The histogram ``(F, B, C)`` of the leaf's rows over the features ``feats``,
        written into ``out`` (``buffers``: memory for its runs' sums).  Each row's
        channels are read where they are, with its codes: copying a leaf's channels
        into its rows' order first (LightGBM's ordered gradients) made a second pass
        over the same scattered rows (at 1,000,000 × 20, a tree took 66 against 58 ms
        on one thread, and the copy's buffer was 4 MB)."""
        b = self.bound
        lo, hi = self.start[leaf], self.stop[leaf]
        runs = self._runs(buffers, feats, out.shape[-1])
        run_parallel(growth.leaf_histogram, self._threads, b.codes, b.n_features,
                     self.rows, lo, hi, self.g, self._part_starts, feats, self._threads,
                     out, runs, self._limits, self.tally)
        return out

    def grown(self, K: int, features: np.ndarray | None, name: str) -> GrownTree:
        """The tree grown on these rows (:func:`grow_tree`)."""
        return grow_tree(self.bound, self, K, features, name)

    def count(self, leaf: int) -> int:
        return self.stop[leaf] - self.start[leaf]

    def split(self, leaf: int, j: int, goes_left: np.ndarray) -> int:
        """Split the leaf by feature ``j``'s bins (``goes_left[code]``): its left rows
        stay the leaf, its right rows become a new leaf (the next index).  Returns how
        many went left.  (Only the rows' indices move: a child's channels are gathered
        when its histogram is asked, for half the time of copying them here, where the
        rows of the side not kept would cost a write each.)"""
        lo, hi = self.start[leaf], self.stop[leaf]
        b = self.bound
        n_left = int(run_parallel(growth.split_leaf, self._threads, b.columns[j],
                                  self.rows, lo, hi, goes_left, self._tmp, self._right,
                                  self._threads, self._limits, self.tally))
        self.stop[leaf] = lo + n_left
        self.start.append(lo + n_left)
        self.stop.append(hi)
        return n_left

    def grow(self, st: growth.Growth, rules: growth.Rules, feats: np.ndarray,
             slots: np.ndarray, buffers: HistogramBuffers) -> None:
        """Grow the tree ``st`` from its root (whose histogram is in ``slots[0]``) by
        :func:`grow_tree`'s steps in one compiled loop
        (:func:`._tree_growth.grow_in_memory`), with this object's splits and
        histograms."""
        b = self.bound
        n = b.n_samples
        L = rules.num_leaves
        start = np.zeros(L, dtype=np.int64)
        stop = np.zeros(L, dtype=np.int64)
        stop[0] = n
        runs = self._runs(buffers, feats, slots.shape[-1])
        run_parallel(growth.grow_in_memory, self._threads, st, rules, feats, b.n_bins,
                     b.missing, b._directions, b.codes, b.columns, b.n_features, self.rows,
                     start, stop, self.g, self._part_starts, slots, runs, self._tmp,
                     self._right, self._threads, self._limits, self.tally)
        leaves = int(st.n_leaves[0])
        self.start, self.stop = start[:leaves].tolist(), stop[:leaves].tolist()

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
        chunks = max(1, min(self._threads, self.rows.size // _MIN_OUTPUT_ROWS_PER_THREAD))
        run_parallel(kernels.leaf_outputs, chunks, self.rows, starts, stops, value, out,
                     kernels.leaf_map(out.shape[0], starts.size), chunks)
        return out


def _kernel_threads(n_jobs: int | None) -> int:
    """Threads for a tree's kernels: ``n_jobs``' (:func:`~oracleboost.rows.blocks.n_threads`),
    at most numba's."""
    return max(1, min(_threads(n_jobs), max_threads()))


def _limits() -> growth.Limits:
    """The constants above (and ``RUN_ROWS``), as the compiled loops read them: read at
    each query, so that a test may lower them."""
    return growth.Limits(kernels.RUN_ROWS, _MIN_CELLS_PER_THREAD, _SPAN_HIST_BYTES,
                         _MIN_SPLIT_ROWS_PER_THREAD)


def partition_histogram(codes: np.ndarray, d: int, rows: np.ndarray, part_seg: np.ndarray,
                        g: np.ndarray, feats: np.ndarray, n_hist_bins: int,
                        n_jobs: int | None, out: np.ndarray | None = None,
                        buffers: HistogramBuffers | None = None,
                        channels: int | None = None) -> np.ndarray:
    """The histogram ``(F, B, C)`` of ``rows`` (increasing; row ``i``'s channels
    ``g[i]``) over the features ``feats``, with ``rows[part_seg[p]:part_seg[p + 1]]``
    those of partition ``p``: each partition's rows cut into runs of ``RUN_ROWS``, each
    run summed in row order (a task of numba's threads), a partition's runs added in
    order, then the partitions in order (:func:`._tree_growth.histogram_of_runs`).  A
    worker holding one partition calls it with ``part_seg = [0, len(rows)]``.  ``g``
    has a column a channel, or one fewer for unit weights (the last channel then counts
    the rows: no column of ones is kept or read), as ``out`` or ``channels`` then says.
    Written into ``out`` where given; the runs' sums are kept in ``buffers`` where given
    (see :mod:`._hist_buffers`), else in a new array."""
    F = feats.size
    # the histogram's channels: g's columns, or one more (unit weights)
    C = out.shape[-1] if out is not None else (channels or g.shape[1])
    if out is None:
        out = np.empty((F, n_hist_bins, C))
    limits = _limits()
    part_seg = np.asarray(part_seg, dtype=np.int64)
    R = int(growth.count_runs(part_seg, limits.run_rows))
    threads = _kernel_threads(n_jobs)
    shape = (growth.runs_needed(R, threads), F, n_hist_bins, C) if R > 1 else (0,)
    runs = buffers.runs(*shape) if buffers is not None and R > 1 else np.empty(shape)
    run_parallel(growth.histogram_of_runs, threads, codes, d, rows, part_seg, g, feats,
                 threads, out, runs.reshape(-1), limits)
    return out


def add_in_order(parts: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    """``out = ((parts[0] + parts[1]) + parts[2]) + …`` (0 when there are none): the
    partitions' histograms added in partition order, the same bits wherever the
    partitions are."""
    if not parts:
        out[...] = 0.0
    elif len(parts) == 1:
        out[...] = parts[0]
    else:
        np.add(parts[0], parts[1], out=out)
        for part in parts[2:]:
            out += part
    return out


class GrownTree(NamedTuple):
    """:func:`grow_tree`'s tree (leaf values 0), its splits' gains, its leaves' sums
    ``(L, K + 1)``, (under monotone constraints) their output bounds, else None, and
    each node's threshold as a bin (the last bin that goes left; -1 for a set of
    categories)."""

    tree: TreeStructure
    gains: np.ndarray
    sums: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray] | None
    bins: np.ndarray


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
              features: np.ndarray | None, name: str = "target") -> GrownTree:
    """Grow one tree on ``rows`` (a :class:`LeafRows`, or a backend's rows with its
    methods) by the oracle's rules: best-first or level by level, each leaf's best split
    from its histogram (:func:`._hist_tree_kernels.best_splits`), the smaller child's
    histogram summed and the larger's its parent's less it.

    The tree being grown is :class:`._tree_growth.Growth`, and each step of growth is a
    compiled function of it (:mod:`._tree_growth`).  Rows in this process grow the tree
    in one compiled loop of those steps (:meth:`LeafRows.grow`); other rows, and trees
    with categorical features (whose set splits are found in Python), by the loop
    :func:`_grow_by_steps`, which asks the rows for each split and histogram.

    The histograms are kept in the bound oracle's buffers
    (:func:`._hist_buffers.buffers_of`), a slot a leaf index: a split's smaller child
    is summed into the slot of the new leaf's index (which no histogram has used), and
    its larger child takes its parent's slot, where the subtraction is made.  So each
    slot holds the histogram of one leaf at a time."""
    with buffers_of(bound) as buffers:
        return _grow_tree(bound, rows, K, features, name, buffers)


def _grow_tree(bound: BoundHistTreeOracle, rows: Any, K: int, features: np.ndarray | None,
               name: str, buffers: HistogramBuffers) -> GrownTree:
    o = bound.oracle
    C = K + 1
    feats = (np.arange(bound.n_features, dtype=np.int64) if features is None
             else np.asarray(features, dtype=np.int64))
    rules = growth.Rules(K, float(o.reg_lambda), float(o.min_data_in_leaf),
                         float(o.min_child_weight), float(o.min_split_gain),
                         int(o.max_depth), int(o.num_leaves), o.growth == "leaf",
                         bool(bound._bounded))
    slots = buffers.leaves(rules.num_leaves, feats.size, bound.n_hist_bins, C)
    rows.histogram(0, feats, slots[0], buffers)
    total = np.empty(C)
    kernels.column_total(slots[0][0], total)
    if not np.isfinite(total).all():
        g = rows.g
        bound._refuse_query(g[:, 0] if K == 1 else g[:, :K], name)
    st = growth.new_growth(rules.num_leaves, feats.size, C, total, rows.count(0))
    categories_left = None
    if isinstance(rows, LeafRows) and bound.categories is None:
        rows.grow(st, rules, feats, slots, buffers)
    else:
        categories_left = _grow_by_steps(bound, rows, st, rules, feats, slots, buffers)
    return _grown(bound, st, categories_left)


def _grow_by_steps(bound: BoundHistTreeOracle, rows: Any, st: growth.Growth,
                   rules: growth.Rules, feats: np.ndarray, slots: np.ndarray,
                   buffers: HistogramBuffers) -> list[np.ndarray | None]:
    """Grow the tree ``st`` from its root (its histogram in ``slots[0]``) by the
    compiled steps of :mod:`._tree_growth`, asking ``rows`` for each split and
    histogram (:func:`._tree_growth.grow_in_memory` is this loop, compiled, for rows in
    memory).  Categorical features are scanned at every leaf for a set of categories
    (:meth:`._hist_tree_categories.CategoryBins.better_split`).  Returns each node's
    categories on the left (None for a threshold)."""
    o = bound.oracle
    n_bins, missing, directions = bound.n_bins, bound.missing, bound._directions
    cats = bound.categories
    cat_params = o._category_params()
    threads = _kernel_threads(o.n_jobs)  # (the features of a leaf's scan, spread over them)
    no_minus = np.empty((0, 0, 0))
    sets: dict[int, np.ndarray] = {}  # a leaf's best set of categories: its bins
    categories_left: list[np.ndarray | None] = []

    def find(leaf: int, minus: np.ndarray = no_minus) -> None:
        """The leaf's best split, from its histogram (less ``minus`` first, if given)."""
        hist = slots[st.slot[leaf]]
        if not run_parallel(growth.find_split, threads, st, rules, leaf, hist, minus,
                            feats, n_bins, missing, directions, threads):
            return
        if cats is None:
            return
        st.usable[leaf] |= cats.is_categorical[feats]  # (scanned at every leaf)
        found = None
        if st.best_feature[leaf] >= 0:
            found = (float(st.best_gain[leaf]), int(st.best_feature[leaf]),
                     int(st.best_bin[leaf]), bool(st.best_nan_left[leaf]),
                     st.best_left[leaf].copy())
        better = cats.better_split(found, hist, feats, rules.K, st.sums[leaf],
                                   float(st.count[leaf]), rules.lam, rules.min_data,
                                   rules.min_weight, rules.min_gain, rules.bounded,
                                   float(st.lo[leaf]), float(st.hi[leaf]), cat_params)
        if better is not found:  # a set of categories
            gain, j, bins, _, left = better
            st.best_gain[leaf], st.best_feature[leaf], st.best_bin[leaf] = gain, j, -1
            st.best_nan_left[leaf] = False
            st.best_left[leaf] = left
            sets[leaf] = bins

    find(0)
    while st.n_leaves[0] < rules.num_leaves:
        leaf = int(growth.next_leaf(st, rules))
        if leaf < 0:
            break
        j, t = int(st.best_feature[leaf]), int(st.best_bin[leaf])
        if t < 0:  # a set of categories goes left
            goes_left, cats_left = cats.node(j, sets.pop(leaf), bound.n_hist_bins)
        else:
            cats_left = None
            goes_left = np.zeros(bound.n_hist_bins, dtype=np.bool_)
            goes_left[:t + 1] = True
            if missing[j]:
                goes_left[n_bins[j]] = st.best_nan_left[leaf]
        n_left = rows.split(leaf, j, goes_left)
        new = int(growth.make_split(st, rules, leaf, n_left, bool(missing[j]),
                                    cats_left is not None, directions))
        categories_left.append(cats_left)
        small, large = growth.children(st, rules, leaf, new)
        if small < 0:
            continue
        rows.histogram(small, feats, slots[new], buffers)
        find(small)
        if growth.can_split(st, rules, large):
            # LightGBM's histogram subtraction, made by the scan (feature by feature,
            # on its threads): the larger child's histogram is its parent's less the
            # smaller child's
            find(large, minus=slots[new])
    return categories_left


def _grown(bound: BoundHistTreeOracle, st: growth.Growth,
           categories_left: list[np.ndarray | None] | None) -> GrownTree:
    """The grown tree ``st`` as a :class:`GrownTree`."""
    d = bound.n_features
    L = int(st.n_leaves[0])
    nodes = L - 1
    if L == 1:
        tree = TreeStructure.constant(0.0, d)
    else:
        feature = st.node_feature[:nodes]
        threshold = np.empty(nodes)
        for node, (j, t) in enumerate(zip(feature.tolist(), st.node_bin[:nodes].tolist(),
                                          strict=True)):
            if t < 0:  # a set of categories (as LightGBM writes such a node)
                threshold[node] = 0.0
            else:
                threshold[node] = (bound.thresholds[j][t] if t < bound.n_bins[j] - 1
                                   else np.inf)
        sets = (tuple(categories_left) if categories_left is not None and any(
            c is not None for c in categories_left) else None)
        tree = TreeStructure(
            n_features=d, feature=feature.astype(np.intp), threshold=threshold,
            left=st.node_left[:nodes].astype(np.intp),
            right=st.node_right[:nodes].astype(np.intp), value=np.zeros((L, 1)),
            default_left=st.node_default_left[:nodes].copy(),
            missing=np.where(st.node_missing[:nodes], MISSING_NAN,
                             MISSING_NONE).astype(np.intp),
            categories_left=sets)
    return GrownTree(tree, st.node_gain[:nodes].copy(), st.sums[:L].copy(),
                     (st.lo[:L].copy(), st.hi[:L].copy()) if bound._bounded else None,
                     st.node_bin[:nodes].copy())


def power_of_two_exponents(mean_abs: Callable[[int], float]) -> tuple[int, int] | None:
    """The powers of two that bring the mean of ``|r|`` into [1, 2): ``(e, a)``, ``r``
    being scaled as ``ldexp(ldexp(r, e), a)`` (``a`` in -1, 0, 1 corrects the log's
    rounding), or None when the mean is 0 or not finite (``r`` is kept as it is).
    ``mean_abs(e)`` is the mean of ``|ldexp(r, e)|``, summed partition by partition
    (:func:`partition_mean_abs`), wherever ``r`` is held."""
    m, e0 = mean_abs(0), 0
    if m == np.inf:  # finite entries near the float64 maximum: their sum overflows
        e0 = -64  # (n · 2**1024 · 2**-64 is finite below 2**64 rows)
        m = mean_abs(e0)
    if not np.isfinite(m) or m == 0.0:
        return None
    e = e0 - int(np.floor(np.log2(m)))
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
