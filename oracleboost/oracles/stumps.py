"""Decision stumps over binned features: Freund & Schapire's AdaBoost stump and kin.

A decision stump splits on one feature ``j`` at one threshold ``θ``: a point goes to
the LEFT leaf when ``x_j <= θ`` and to the RIGHT leaf otherwise.  :class:`StumpOracle`
answers every query of the Oracle protocol (:mod:`oracleboost.oracles.base`) over the
class of stumps, exactly, by cumulative sums over per-feature bins (Grubb & Bagnell
2011 use stumps as the weak learner of their experiments):

``correlate(r)``, ``r`` of shape ``(n,)``
    ±1 classification stumps ``h(x) = s if x_j > θ else -s`` and the two constants
    ``±1``; the answer maximises ``<r, h>`` (Grubb & Bagnell 2011, eq. 3; every such
    ``h`` has the same norm ``sqrt(n)``).  This is Freund & Schapire's AdaBoost stump:
    weighted classification with labels ``sign(r)`` and weights ``|r|``.
``project(target, sample_weight)``, ``target`` of shape ``(n,)``
    two-valued regression stumps with least-squares leaf values (eq. 4).
``correlate(r)``, ``r`` of shape ``(n, K)``
    label-coded multiclass stumps (Grubb & Bagnell 2011, Theorem 2): each leaf outputs
    the code ``c(k)`` of one class, ``c(k)_k = 1`` and ``-1/(K-1)`` elsewhere.
``project(target, sample_weight)``, ``target`` of shape ``(n, K)``
    vector-valued regression stumps with least-squares leaf vectors.

A training column with NaN gets a bin for its NaN rows, and every split learns where
they go by LightGBM's rule (see :class:`StumpOracle`'s Notes).

Binning is done once, in :meth:`StumpOracle.bind`, into column-major codes; a query is
one compiled pass per feature over its codes (:mod:`._stump_kernels`: the histogram of
the query, then the running sums and the feature's best split), ``O(n d K + d B K)``
for ``B`` bins per feature and ``K`` outputs, with no sorting, on threads by blocks of
features.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from oracleboost._fingerprint import fingerprint
from oracleboost._running_state import stored_as
from oracleboost._validation import check_query
from oracleboost.oracles import _monotone_scans as monotone_scans
from oracleboost.oracles import _stump_kernels as kernels
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X
from oracleboost.oracles.monotone import (
    check_monotone_constraints,
    is_constrained,
    monotone_directions,
)
from oracleboost.oracles.trees import ZERO_THRESHOLD, TreeStructure
from oracleboost.rows.blocks import (
    BLOCKS_PER_PARTITION,
    DEFAULT_BLOCK_SIZE,
    RowBlocks,
    check_n_jobs,
)
from oracleboost.rows.blocks import n_threads as _threads
from oracleboost.rows.blocks import thread_map as _map
from oracleboost.rows.parallel import run_parallel

__all__ = [
    "StumpOracle",
    "BoundStumpOracle",
    "ConstantHypothesis",
    "SignStump",
    "RegressionStump",
    "leaf_table",
    "LabelCodeStump",
    "VectorStump",
    "label_codes",
]

# A query runs on threads only when every thread gets at least this many (row, feature)
# cells (a prediction: (row, round) cells): below it, starting threads costs more than
# it saves.
_MIN_CELLS = 1 << 16

# A shifted histogram (StumpOracle's histogram_refresh) only for data of at least this
# many (row, feature) cells: below, a query's sums take under 50 µs, and small data's
# sums are often exact (integer targets and weights), so that splits of equal score tie
# exactly and the tie rule decides; a shifted histogram's rounding would decide instead
# (a weighted fit and the fit on repeated rows, scikit-learn's check, could then differ).
_MIN_SHIFT_CELLS = 1 << 16

# A scan of histograms (the best split of each feature) runs on threads only when every
# thread gets at least this many bins.
_MIN_SCAN_CELLS = 1 << 16

# The compiled histograms' kernel by name, and the empty arrays that stand for the rows
# and outputs a kernel does not use.
_HIST_KIND = {"hist_1d": kernels.HIST_1D, "hist_2d": kernels.HIST_2D,
              "hist_weighted": kernels.HIST_WEIGHTED, "side_counts": kernels.HIST_SIDE}
_NO_ROWS, _NO_TARGETS = np.empty(0), np.empty((0, 1))
_NO_HIST, _NO_HIST_2D = np.empty((0, 0)), np.empty((0, 0, 0))
_NO_SIDE_ROWS, _NO_SIDE_COUNTS = np.empty(0, np.int32), np.empty(0, np.intp)

# Rows of a block of predict_sum (kernels.stump_sum): a block keeps the values of the
# features its stumps use and its running sums, (m + K) floats a row, within 256 KiB
# (a core's L2) while every round passes over it; 16 to 1024 rows, a multiple of 16.
_BLOCK_FLOATS = 1 << 15
_MIN_BLOCK, _MAX_BLOCK = 16, 1024


def label_codes(n_classes: int) -> np.ndarray:
    """The label codes of Grubb & Bagnell (2011, Theorem 2) as a ``(K, K)`` matrix.

    Row ``k`` is ``c(k)``: ``1`` in column ``k`` and ``-1/(K-1)`` elsewhere, so every
    row sums to zero and ``<r, c(k)> = K/(K-1) * (r_k - mean(r))``.

    Parameters
    ----------
    n_classes : int
        ``K >= 2``.

    Returns
    -------
    codes : ndarray of shape (n_classes, n_classes)
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"n_classes must be at least 2; got {n_classes!r}")
    codes = np.full((K, K), -1.0 / (K - 1))
    np.fill_diagonal(codes, 1.0)
    return codes


def _fmt(v: float | np.ndarray) -> str:
    """A short exact-enough text for a leaf value (scalar or vector) in a repr."""
    if np.ndim(v) == 0:
        return repr(float(v))
    return "[" + ", ".join(f"{x:.6g}" for x in np.asarray(v).ravel()) + "]"


@functools.cache
def _codes_of(n_classes: int) -> np.ndarray:
    """:func:`label_codes` made once per ``K``, read-only (every label-coded stump of a
    model reads it, and ``predict_sum`` reads thousands)."""
    codes = label_codes(n_classes)
    codes.flags.writeable = False
    return codes


def _check_n_jobs(n_jobs: object) -> None:
    check_n_jobs(n_jobs)


def _check_predict_X(X: ArrayLike) -> np.ndarray:
    return check_X(X, allow_nan=True, accept_sparse=True)  # NaN: a missing value


def _check_n_features(X, n_features: int):
    """Validated X, if it has the stump's number of features."""
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features but the hypothesis was fitted on {n_features}"
        )
    return X


def _feature_column(X, j: int) -> np.ndarray:
    """Column ``j`` of X as dense values: a sparse X's column alone is made dense (its
    zeros as ``X.toarray()`` has them)."""
    if sp.issparse(X):
        return X[:, [j]].toarray().ravel()
    return X[:, j]


# Floats of a block of rows of a sparse X made dense for predict_sum (16 MiB): only the
# columns the stumps use, a block of rows at a time.
_SPARSE_BLOCK_FLOATS = 1 << 21


# -- hypotheses ---------------------------------------------------------------------
class _CompiledSum(Hypothesis):
    """A hypothesis with two leaves chosen by one comparison, ``left if x_j <= θ else
    right`` (a NaN going to the side it names), whose rounds an ensemble sums in one
    compiled pass (:meth:`predict_sum`)."""

    def _split_leaves(self) -> tuple[int, int, float, float | np.ndarray, float | np.ndarray,
                                     bool]:
        """``(n_features, j, θ, left, right, nan_left)``: what ``predict`` computes, as
        numbers (``nan_left``: a NaN of feature j goes left)."""
        raise NotImplementedError

    @classmethod
    def predict_sum(
        cls,
        hypotheses: Sequence[Hypothesis],
        coef: np.ndarray,
        X: np.ndarray,
        out: np.ndarray,
        *,
        n_jobs: int | None = None,
    ) -> None:
        """Add ``coef[r] * hypotheses[r].predict(X)`` to ``out`` for every round, in one
        compiled pass: bit for bit the loop of :meth:`Hypothesis.predict_sum`.

        Each stump's feature, threshold and leaves are read once; the products
        ``coef[r] * left`` and ``coef[r] * right`` are rounded to float64 once a round
        (the numbers ``coef[r] * h.predict(X)`` holds, since a prediction is a copy of a
        leaf); then every row adds, in round order, the product of the leaf it falls in,
        with the comparison of ``predict`` (``x_j <= θ``, a NaN to the stump's side for
        it; a constant is a stump with ``θ = +inf`` and equal leaves).  The same
        additions in the same order: the same bits, on any number of threads
        (:func:`kernels.stump_sum`).

        Any mix of :class:`ConstantHypothesis`, :class:`SignStump`,
        :class:`RegressionStump`, :class:`LabelCodeStump` and :class:`VectorStump` is
        summed in one pass.  Anything else takes the default loop, which decides what
        happens: a subclass (its ``predict`` may differ), a leaf that is not finite
        (:class:`~oracleboost.oracles.base.NonFiniteOutput` where a row reaches it), a
        hypothesis fitted on another number of features, leaves not of ``out``'s shape,
        arrays not float64.

        Parameters
        ----------
        hypotheses, coef, X, out
            As in :meth:`Hypothesis.predict_sum`.  ``X`` is not checked again (a caller
            validates it once: finite or NaN, a missing value, routed as ``predict``
            routes it; only blocks of rows that hold a NaN take the kernel's loop that
            tests for it).
        n_jobs : int or None, default=None
            Threads, by blocks of rows, counted as :class:`StumpOracle` counts them
            (LightGBM's ``num_threads``): ``None`` is ``OMP_NUM_THREADS`` if set, else
            every CPU the process may use; ``-1`` all CPUs; ``k`` exactly ``k``.  Fewer
            when a thread would get under 65,536 (row, round) cells.  The answer does not
            depend on it.
        """
        _check_n_jobs(n_jobs)
        table = _leaf_table(hypotheses, coef, X, out)
        if table is None:
            Hypothesis.predict_sum(hypotheses, coef, X, out)
            return
        _stump_sum(X, *table, out, n_jobs)


def _leaf_table(hypotheses, coef, X, out) -> tuple[np.ndarray, ...] | None:
    """``(feature, threshold, lo, hi, nan_left)`` of the rounds, with ``lo[r] = coef[r] * left_r``
    and ``hi[r] = coef[r] * right_r`` of shape (R, K), or ``None`` when the kernel must
    not sum them (see :meth:`_CompiledSum.predict_sum`)."""
    if not (
        (isinstance(X, np.ndarray) or sp.issparse(X) and X.format in ("csr", "csc"))
        and X.dtype == np.float64 and X.ndim == 2
        and X.shape[0] > 0
        and isinstance(out, np.ndarray) and out.dtype == np.float64 and out.ndim in (1, 2)
        and out.shape[0] == X.shape[0] and out.flags.writeable
    ):
        return None
    return leaf_table(hypotheses, coef, X.shape[1], out.shape[1:])


def leaf_table(hypotheses: Sequence[Hypothesis], coef: ArrayLike, n_features: int,
               leaf_shape: tuple[int, ...] = ()) -> tuple[np.ndarray, ...] | None:
    """The rounds of ``Σ_r coef[r] · hypotheses[r](x)`` as a table a kernel sums (here
    and on the GPU): ``(feature, threshold, lo, hi, nan_left)`` with ``lo[r] = coef[r] ·
    left_r`` and ``hi[r] = coef[r] · right_r`` of shape (R, K) (``K = 1`` for scalar
    leaves, ``leaf_shape = ()``), rounded to float64 as ``coef[r] * h.predict(X)``
    rounds them; or ``None`` where the rounds are not all stumps of this module's
    classes (exactly: a subclass may predict otherwise) with finite leaves of that
    shape, on ``n_features`` features."""
    R = len(hypotheses)
    coef = np.asarray(coef, dtype=np.float64)  # as the default loop takes it
    if not (R > 0 and coef.shape == (R,) and all(type(h) in _COMPILED for h in hypotheses)):
        return None
    n_features_of, feature, threshold, left, right, nan_left = zip(
        *(h._split_leaves() for h in hypotheses), strict=True
    )
    try:
        left, right = np.array(left, dtype=np.float64), np.array(right, dtype=np.float64)
    except ValueError:  # scalar and vector leaves mixed
        return None
    feature = np.array(feature, dtype=np.intp)
    d, leaf = n_features, (R, *leaf_shape)
    if not (
        left.shape == leaf and right.shape == leaf
        and np.isfinite(left).all() and np.isfinite(right).all()
        and all(m == d for m in n_features_of) and ((0 <= feature) & (feature < d)).all()
    ):
        return None
    K = int(np.prod(leaf_shape, dtype=np.int64)) if leaf_shape else 1
    # The products coef[r] * leaf, rounded to float64 as `coef[r] * h.predict(X)` rounds them.
    with np.errstate(over="ignore"):  # an overflow to ±inf is the loop's answer too
        lo = coef[:, None] * left.reshape(R, K)
        hi = coef[:, None] * right.reshape(R, K)
    return feature, np.array(threshold, dtype=np.float64), lo, hi, np.array(nan_left, dtype=bool)


def _stump_sum(X, feature, threshold, lo, hi, nan_left, out, n_jobs) -> None:
    """``kernels.stump_sum`` over all rows, by blocks, on threads; a sparse X by blocks
    of rows of the columns the stumps use, made dense (each row's sum does not depend
    on the blocks, so the bits are those of ``X.toarray()``)."""
    if sp.issparse(X):
        used, slot = np.unique(feature, return_inverse=True)
        Xu = X[:, used].tocsr()  # rows of the used columns, cut by blocks below
        n, step = X.shape[0], max(1, _SPARSE_BLOCK_FLOATS // used.size)
        slot = slot.astype(np.intp, copy=False)
        for a in range(0, n, step):
            b = min(n, a + step)
            _stump_sum(Xu[a:b].toarray(), slot, threshold, lo, hi, nan_left, out[a:b], n_jobs)
        return
    n, R = X.shape[0], feature.shape[0]
    used, slot = np.unique(feature, return_inverse=True)  # the columns a block copies
    slot = slot.astype(np.intp, copy=False)
    K = lo.shape[1]
    block = min(_MAX_BLOCK, max(_MIN_BLOCK, _BLOCK_FLOATS // (used.size + K)))
    block -= block % _MIN_BLOCK
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    X = X.view()
    X.flags.writeable = False  # X reaches the kernel read-only: one compiled version
    sums = out.reshape(n, K)  # a view when out is contiguous: the kernel adds into out
    copied = not sums.flags.c_contiguous
    if copied:  # the kernel's layout; copying there and back is exact
        sums = np.ascontiguousarray(sums)
    # Threads take consecutive blocks of rows; each row is summed by one thread alone.
    n_blocks = -(-n // block)
    n_threads = min(_threads(n_jobs), n_blocks, max(1, n * R // _MIN_CELLS))
    bounds = [min(n, block * (n_blocks * k // n_threads)) for k in range(n_threads + 1)]
    _map(
        lambda a, b: kernels.stump_sum(X, used, slot, threshold, lo, hi, nan_left, sums, a, b,
                                       block),
        zip(bounds[:-1], bounds[1:], strict=True),
        n_threads,
        star=True,
    )
    if copied:
        out[...] = sums.reshape(out.shape)


class ConstantHypothesis(_CompiledSum):
    """The constant function ``x -> value`` (the "no split" stump).

    Parameters
    ----------
    value : float or ndarray of shape (K,)
        Output for every point; a vector gives outputs of shape ``(m, K)``.
    n_features : int
        Number of features of the data it applies to (checked by :meth:`predict`).
    """

    def __init__(self, value: float | np.ndarray, n_features: int) -> None:
        self.value = float(value) if np.ndim(value) == 0 else np.array(value, dtype=np.float64)
        self.n_features = int(n_features)

    def predict(self, X: ArrayLike) -> np.ndarray:
        return self._predict_validated(_check_predict_X(X))

    def _predict_validated(self, X) -> np.ndarray:
        X = _check_n_features(X, self.n_features)
        shape = (X.shape[0],) + np.shape(self.value)
        return np.broadcast_to(np.asarray(self.value, dtype=np.float64), shape).copy()

    def feature_importances(self, n_features: int) -> np.ndarray:
        return np.zeros(n_features)  # uses no feature

    def tree_structure(self) -> TreeStructure:
        return TreeStructure.constant(self.value, self.n_features)

    def _split_leaves(self):
        # x <= +inf holds for every finite x; with equal leaves the side does not matter
        # (nor where a NaN goes).
        return self.n_features, 0, np.inf, self.value, self.value, True

    def __repr__(self) -> str:
        return f"ConstantHypothesis(value={_fmt(self.value)})"


class _Stump(_CompiledSum):
    """Shared parts of the two-leaf stumps: ``left`` if ``x_j <= threshold`` else ``right``.

    A missing value (NaN) of feature ``j`` goes left when ``default_left`` is True,
    right when False: the side learned from the training rows whose ``x_j`` was NaN
    (LightGBM's missing type NaN).  ``default_left`` None: the feature had no NaN in
    training, and a NaN goes where ``0.0`` goes (LightGBM reads it as 0 on a split of
    missing type none, ``Tree::NumericalDecision``), so that the exported tree
    predicts the same.
    """

    feature: int
    threshold: float
    n_features: int
    #: Where a NaN of the feature goes (None: where 0.0 goes); the class's value is
    #: what stumps pickled before missing values were learned read.
    default_left: bool | None = None

    def _leaves(self) -> tuple[float | np.ndarray, float | np.ndarray]:
        raise NotImplementedError

    def _nan_left(self) -> bool:
        """Whether a NaN of the feature goes left (see the class's docstring)."""
        if self.default_left is None:
            return bool(0.0 <= self.threshold)
        return bool(self.default_left)

    def _split_leaves(self):
        return (self.n_features, self.feature, self.threshold, *self._leaves(),
                self._nan_left())

    def tree_structure(self) -> TreeStructure:
        return TreeStructure.stump(self.n_features, self.feature, self.threshold,
                                   *self._leaves(), nan_left=self.default_left)

    def _missing_repr(self) -> str:
        return "" if self.default_left is None else f", default_left={self.default_left}"

    def feature_importances(self, n_features: int) -> np.ndarray:
        out = np.zeros(n_features)
        out[self.feature] = 1.0  # one split, on one feature
        return out

    def predict(self, X: ArrayLike) -> np.ndarray:
        return self._predict_validated(_check_predict_X(X))

    def _predict_validated(self, X) -> np.ndarray:
        X = _check_n_features(X, self.n_features)
        left, right = self._leaves()
        column = _feature_column(X, self.feature)
        goes_left = column <= self.threshold
        missing = np.isnan(column)
        if missing.any():
            goes_left[missing] = self._nan_left()
        if np.ndim(left) == 0:
            return np.where(goes_left, float(left), float(right))
        return np.where(goes_left[:, None], left, right)


class SignStump(_Stump):
    """Freund & Schapire's AdaBoost stump: ``sign if x_j > threshold else -sign``.

    The canonical function is ``x -> +1 if x_j > threshold else -1``; this hypothesis
    is ``sign`` times it, hence ``key = ("stump", feature, threshold)`` and
    ``scale = sign``.

    Parameters
    ----------
    feature : int
        Column ``j`` split on.
    threshold : float
        ``θ``; points with ``x_j <= θ`` go left.
    sign : {+1, -1}
        Output on the right leaf.
    n_features : int
        Number of features of the data it applies to.
    default_left : bool or None, default=None
        Where a NaN of the feature goes: left (True) or right (False), as learned from
        the training rows where it was missing; None (a feature without NaN in
        training): where 0.0 goes, as LightGBM routes it.  The key then carries it.
    """

    def __init__(self, feature: int, threshold: float, sign: int, n_features: int,
                 default_left: bool | None = None) -> None:
        if sign not in (1, -1):
            raise ValueError(f"sign must be +1 or -1; got {sign!r}")
        self.feature = int(feature)
        self.threshold = float(threshold)
        self.sign = int(sign)
        self.n_features = int(n_features)
        self.default_left = None if default_left is None else bool(default_left)
        self.key = ("stump", self.feature, self.threshold) + (
            () if self.default_left is None else (self.default_left,))
        self.scale = float(self.sign)

    def _leaves(self) -> tuple[float, float]:
        return -float(self.sign), float(self.sign)

    def __repr__(self) -> str:
        return (
            f"SignStump(feature={self.feature}, threshold={self.threshold!r}, "
            f"sign={self.sign:+d}{self._missing_repr()})"
        )


class RegressionStump(_Stump):
    """Two-valued regression stump: ``left if x_j <= threshold else right``.

    Parameters
    ----------
    feature : int
    threshold : float
    left, right : float
        Leaf values (weighted means of the target on each side when fitted by
        :meth:`BoundStumpOracle.project`).
    n_features : int
    default_left : bool or None, default=None
        Where a NaN of the feature goes (as in :class:`SignStump`).
    """

    def __init__(self, feature: int, threshold: float, left: float, right: float, n_features: int,
                 default_left: bool | None = None):
        self.feature = int(feature)
        self.threshold = float(threshold)
        self.left = float(left)
        self.right = float(right)
        self.n_features = int(n_features)
        self.default_left = None if default_left is None else bool(default_left)

    def _leaves(self) -> tuple[float, float]:
        return self.left, self.right

    def __repr__(self) -> str:
        return (
            f"RegressionStump(feature={self.feature}, threshold={self.threshold!r}, "
            f"left={self.left!r}, right={self.right!r}{self._missing_repr()})"
        )


class LabelCodeStump(_Stump):
    """Label-coded multiclass stump (Grubb & Bagnell 2011, Theorem 2).

    Outputs the code ``c(left_class)`` if ``x_j <= threshold`` and ``c(right_class)``
    otherwise (see :func:`label_codes`); predictions have shape ``(m, n_classes)``.
    Stores only the two class indices, not the code vectors.

    Parameters
    ----------
    feature : int
    threshold : float
    left_class, right_class : int
        Classes predicted on each side, in ``0 .. n_classes - 1``.
    n_classes : int
    n_features : int
    default_left : bool or None, default=None
        Where a NaN of the feature goes (as in :class:`SignStump`).
    """

    def __init__(
        self,
        feature: int,
        threshold: float,
        left_class: int,
        right_class: int,
        n_classes: int,
        n_features: int,
        default_left: bool | None = None,
    ) -> None:
        self.feature = int(feature)
        self.threshold = float(threshold)
        self.left_class = int(left_class)
        self.right_class = int(right_class)
        self.n_classes = int(n_classes)
        self.n_features = int(n_features)
        self.default_left = None if default_left is None else bool(default_left)

    def _leaves(self) -> tuple[np.ndarray, np.ndarray]:
        codes = _codes_of(self.n_classes)
        return codes[self.left_class], codes[self.right_class]

    def __repr__(self) -> str:
        return (
            f"LabelCodeStump(feature={self.feature}, threshold={self.threshold!r}, "
            f"left_class={self.left_class}, right_class={self.right_class}, "
            f"n_classes={self.n_classes}{self._missing_repr()})"
        )


class VectorStump(_Stump):
    """Vector-valued regression stump: leaf vectors ``left`` / ``right`` of length ``K``.

    Parameters
    ----------
    feature : int
    threshold : float
    left, right : ndarray of shape (K,)
        Leaf vectors (weighted mean targets when fitted by least squares).
    n_features : int
    default_left : bool or None, default=None
        Where a NaN of the feature goes (as in :class:`SignStump`).
    """

    def __init__(
        self,
        feature: int,
        threshold: float,
        left: np.ndarray,
        right: np.ndarray,
        n_features: int,
        default_left: bool | None = None,
    ) -> None:
        self.feature = int(feature)
        self.threshold = float(threshold)
        self.left = np.array(left, dtype=np.float64)
        self.right = np.array(right, dtype=np.float64)
        self.n_features = int(n_features)
        self.default_left = None if default_left is None else bool(default_left)

    def _leaves(self) -> tuple[np.ndarray, np.ndarray]:
        return self.left, self.right

    def __repr__(self) -> str:
        return (
            f"VectorStump(feature={self.feature}, threshold={self.threshold!r}, "
            f"left={_fmt(self.left)}, right={_fmt(self.right)}{self._missing_repr()})"
        )


#: The classes :meth:`_CompiledSum.predict_sum` sums itself (exactly these: a subclass
#: may predict otherwise).
_COMPILED = frozenset({ConstantHypothesis, SignStump, RegressionStump, LabelCodeStump,
                       VectorStump})


# -- binning --------------------------------------------------------------------------
def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Thresholds ``θ`` with ``lo <= θ < hi``, as close to the midpoint as floats allow.

    ``0.5*lo + 0.5*hi`` cannot overflow (``(lo + hi) / 2`` can); when ``lo`` and ``hi``
    are adjacent floats (or subnormal) the rounded midpoint may equal ``hi``, which
    would send the training value ``hi`` to the left, so it falls back to ``lo``.
    """
    mid = 0.5 * lo + 0.5 * hi
    ok = (lo <= mid) & (mid < hi)
    return _off_zero(lo, hi, np.where(ok, mid, lo))


#: The largest float below ``-ZERO_THRESHOLD``: a split there sends every value LightGBM
#: reads as 0 to the right, as a split at ``ZERO_THRESHOLD`` sends them to the left.
_BELOW_ZERO = float(np.nextafter(-ZERO_THRESHOLD, -np.inf))


def _off_zero(lo: np.ndarray, hi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``theta`` moved out of ``[-1e-35f, 1e-35f)`` where the gap ``[lo, hi)`` allows.

    LightGBM reads every value of magnitude at most ``1e-35f`` as 0, so no LightGBM
    split separates two such values; a threshold in that range (0.0: a feature coded
    ±1) would make a stump that ``to_lightgbm`` cannot write.  Any threshold in
    ``[lo, hi)`` splits the training values alike, so this one takes LightGBM's own
    thresholds around zero, ``1e-35f`` or just below ``-1e-35f``, keeping 0.0 on the
    side the midpoint put it (and with it NaN's side, which follows 0.0's); only a gap
    that lies within ``[-1e-35f, 1e-35f]`` keeps its midpoint.
    """
    near = (theta >= -ZERO_THRESHOLD) & (theta < ZERO_THRESHOLD)
    if not near.any():
        return theta
    up = hi > ZERO_THRESHOLD  # ZERO_THRESHOLD lies in [lo, hi)
    down = lo <= _BELOW_ZERO  # _BELOW_ZERO lies in [lo, hi)
    zero_left = theta >= 0.0
    to_up = near & up & (zero_left | ~down)
    to_down = near & down & ~to_up
    return np.where(to_up, ZERO_THRESHOLD, np.where(to_down, _BELOW_ZERO, theta))


def _bin_feature(col: np.ndarray, max_bins: int, exact: bool) -> np.ndarray:
    """Thresholds (strictly increasing) for one feature column, from its values that are
    not NaN (NaN rows get a bin of their own, after these: LightGBM's rule, which bins a
    column's other values as if the NaN rows were not there)."""
    values, counts = np.unique(col, return_counts=True)
    return _bin_values(*_without_nan(values, counts, col.size), max_bins, exact)


def _without_nan(values: np.ndarray, counts: np.ndarray,
                 n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``np.unique``'s distinct values and counts of ``n`` values, and ``n``, without
    the NaN (which ``np.unique`` puts last, counted once)."""
    if values.size and np.isnan(values[-1]):
        return values[:-1], counts[:-1], n - int(counts[-1])
    return values, counts, n


def _bin_values(values: np.ndarray, counts: np.ndarray, n: int, max_bins: int,
                exact: bool) -> np.ndarray:
    """Thresholds (strictly increasing) for a column of ``n`` values whose distinct
    values are ``values`` (increasing), ``counts[k]`` times each: the one edge rule of
    dense and sparse columns."""
    if exact or values.size <= max_bins:
        cuts = np.arange(values.size - 1)
    else:
        # Quantile bins: cut after the first distinct value at which the cumulative
        # count reaches k*n/max_bins, k = 1..max_bins-1.  Compared in integers
        # (cum*max_bins >= k*n) so the bins are exactly reproducible.  Heavy ties may
        # merge cuts, giving fewer than max_bins bins, never more.
        cum = np.cumsum(counts, dtype=np.int64)
        targets = n * np.arange(1, max_bins, dtype=np.int64)
        cuts = np.unique(np.searchsorted(cum * max_bins, targets, side="left"))
        cuts = cuts[cuts < values.size - 1]
    return _midpoints(values[cuts], values[cuts + 1])


def _sparse_column_values(data: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(col, return_counts=True)`` of a column of ``n`` values whose stored
    entries are ``data`` (each row at most once) and whose other ``n - data.size``
    entries are zeros, without making the column: the zeros join an explicit zero's
    count (``-0.0 == 0.0``: one distinct value, as ``np.unique`` counts them), or come
    in as a value ``0.0`` of their own."""
    values, counts = np.unique(data, return_counts=True)
    zeros = n - data.size
    if zeros == 0:
        return values, counts
    at = int(np.searchsorted(values, 0.0, side="left"))
    if at < values.size and values[at] == 0.0:
        counts[at] += zeros
        return values, counts
    return (np.insert(values, at, 0.0), np.insert(counts, at, zeros))


def sample_rows(n: int, size: int | None) -> np.ndarray | None:
    """The rows the bins are made from: every row (None) when ``n <= size``, else
    ``size`` rows evenly spread, ``⌊k n / size⌋`` for ``k = 0 .. size − 1`` (a rule of
    ``n`` alone: the same rows in memory and on a cluster, with no generator whose
    stream could change between NumPy versions)."""
    if size is None or n <= size:
        return None
    return (np.arange(size, dtype=np.int64) * n) // size


def bin_thresholds(X: np.ndarray, max_bins: int, exact: bool,
                   n_jobs: int | None = 1) -> list[np.ndarray]:
    """Every feature's thresholds (:func:`_bin_feature`), from the rows of ``X``."""
    threads = min(_threads(n_jobs), X.shape[1])
    return _map(lambda j: _bin_feature(X[:, j], int(max_bins), bool(exact)),
                range(X.shape[1]), max(1, threads))


def sparse_bin_thresholds(X: sp.csc_matrix, rows: np.ndarray | None, max_bins: int,
                          exact: bool, n_jobs: int | None = 1) -> list[np.ndarray]:
    """:func:`bin_thresholds` of ``X.toarray()[rows]`` (``rows`` None: every row, else
    increasing row indices, :func:`sample_rows`) for a canonical CSC matrix ``X``, from
    its stored values and the count of its zeros: the same edge rule
    (:func:`_bin_values`) on the same distinct values and counts, so the same
    thresholds, without a dense column."""
    n = X.shape[0]
    if rows is None:
        m, in_sample = n, None
    else:
        m = rows.size
        in_sample = np.zeros(n, dtype=bool)
        in_sample[rows] = True

    def feature(j: int) -> np.ndarray:
        lo, hi = X.indptr[j], X.indptr[j + 1]
        data = X.data[lo:hi]
        if in_sample is not None:
            data = data[in_sample[X.indices[lo:hi]]]
        return _bin_values(*_without_nan(*_sparse_column_values(data, m), m), int(max_bins),
                           bool(exact))

    return _map(feature, range(X.shape[1]), max(1, min(_threads(n_jobs), X.shape[1])))


#: Features a task of binning codes (:func:`._stump_kernels.bin_block`): eight float64
#: values, one cache line of a C-ordered row.
_BIN_FEATURES = 8


def padded_thresholds(thresholds: Sequence[np.ndarray]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`._stump_kernels.bin_block`'s thresholds: every feature's, padded with
    ``+inf`` to ``SEARCH_WIDTH`` (255) entries, or for more thresholds (exact mode) to
    ``2^k − 1`` (``k`` the bit length of their count): a binary search of fixed steps;
    one feature after another; where each starts (and the last ends); how many each
    has.  ``+inf`` lies below no value, so a code counts the feature's own thresholds
    only."""
    counts = np.array([t.size for t in thresholds], dtype=np.int64)
    sizes = np.array([max(kernels.SEARCH_WIDTH, (1 << int(m).bit_length()) - 1)
                      for m in counts], dtype=np.int64)
    starts = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    padded = np.full(int(starts[-1]), np.inf)
    for j, t in enumerate(thresholds):
        padded[starts[j]:starts[j] + t.size] = t
    return padded, starts, counts


# -- the oracle -----------------------------------------------------------------------
class StumpOracle(Oracle):
    """Decision stumps over binned features (Freund & Schapire's AdaBoost stump).

    Answers all four queries of the protocol exactly over the class of stumps whose
    thresholds lie between consecutive bins: ±1 stumps for ``correlate(r)``
    (Grubb & Bagnell 2011, eq. 3), least-squares two-leaf stumps for ``project``
    (eq. 4), label-coded multiclass stumps (Theorem 2) and vector-leaf stumps for
    ``(n, K)`` queries.  The constant ("no split") hypotheses are always candidates.

    Parameters
    ----------
    max_bins : int, default=255
        Maximum number of bins per feature, in ``2 .. 255``.  A feature with at most
        ``max_bins`` distinct values gets one bin per value (so binned and exact search
        coincide); otherwise it gets at most ``max_bins`` quantile bins (equal-count,
        deterministic).  Ignored when ``exact=True``.
    exact : bool, default=False
        Use every threshold between consecutive distinct values of each feature.
        Memory and query time grow with the number of distinct values; meant for
        small ``n``.
    n_jobs : int or None, default=None
        Threads a query uses, by blocks of features, as LightGBM's ``num_threads``:
        ``None`` is OpenMP's default (``OMP_NUM_THREADS`` if set, else every CPU the
        process may use), ``-1`` all CPUs, ``k`` exactly ``k``.  Small queries (fewer
        than 65,536 row-feature cells a thread) run on one.  The answer does not depend
        on the number of threads.
    block_size : int, default=65536
        Rows of a block (:mod:`oracleboost.rows.blocks`).  A histogram is made block by
        block, each block's in row order, and the blocks' histograms are added in
        block order; threads take blocks (and, when blocks are fewer than threads,
        groups of features within them).  The sums, and so ties between nearly equal
        splits, depend on ``block_size``; nothing depends on ``n_jobs``.
    bin_sample : int or None, default=200000
        The bins are made from at most this many rows, evenly spread over the data
        (:func:`sample_rows`; LightGBM's ``bin_construct_sample_cnt`` has the same
        default); ``None`` uses every row.  The same rows in memory and on a cluster,
        so both fits bin alike.  Ignored when ``exact=True`` (every row).
    histogram_refresh : int, default=32
        When a booster's next query is its last one less a step along the answer (the
        squared loss's naive projection: the descent ``y − f − c·h`` after the target
        ``y − f``; :meth:`BoundStumpOracle._project_shifted`), the query's histogram is
        the last one less ``c`` times the answer's, and the answer's histogram needs only
        the counts of its smaller side's rows in each bin (LightGBM subtracts a leaf's
        histogram from its parent's within a tree; here across rounds).  It is the same
        number in exact arithmetic, rounded otherwise; every ``histogram_refresh``-th
        query is summed from its rows again, so that the histograms' rounding stays
        within about ``histogram_refresh`` roundings of the sums (a sum over a bin's
        rows is itself rounded once a row).  ``1`` sums every query from its rows, as
        do data of fewer than 65,536 row-feature cells (where the sums are cheap, and
        often exact: equal splits then tie exactly, and the tie rule decides).
        Nothing else uses it: ``correlate``, weighted queries and the other losses'
        queries are always summed from their rows.
    monotone_constraints : sequence of {-1, 0, 1} or None, default=None
        One entry per feature, as LightGBM spells it: +1, every stump on that feature
        rises with it (its right leaf at least its left); −1, falls; 0, free.
        ``correlate`` then answers with the ±1 stump of the allowed direction only (or
        a constant, always a candidate: the answer's edge is never negative), and
        ``project`` with the best least-squares stump among the splits whose leaves are
        in the allowed order (LightGBM's ``monotone_constraints_method="basic"``).
        Binary and regression queries only: the class has no multiclass capability
        then (vector leaves have no order).  A booster keeps its model monotone only if
        it never gives a stump a negative coefficient; those that may refuse a
        constrained oracle (see :mod:`oracleboost.oracles.monotone`).
    device : {"cpu", "cuda"}, default="cpu"
        Where a booster's fit answers this oracle's queries and runs its own passes over
        the rows.  ``"cuda"``: on one NVIDIA GPU (:mod:`oracleboost.cuda`), the codes
        uploaded once and the per-row state (margins, weights) kept there for the whole
        fit, only the chosen stump and a few scalars coming back each round; every sum
        over rows in fixed point, so the fit is the same bit for bit in every run and
        equal to the CPU's to rounding.  A fit given X on the GPU (a CuPy or numba
        device array) runs there whatever this says.  The GPU answers ``correlate``
        (±1 stumps) on dense X without missing values, categorical features,
        ``exact=True`` or ``monotone_constraints``; what it does not run is refused by
        name.  ``bind(X)`` outside a booster is for ``"cpu"`` only.

    Notes
    -----
    Thresholds are midpoints between the largest training value of the left bin and
    the smallest of the right bin, and a point goes left when ``x_j <= θ``, so
    ``predict`` on the training rows reproduces ``train_output``.

    Tie rule: among candidates with equal objective, the lowest index wins, in the
    order constants first (``+1`` before ``-1``; class ``0`` before ``1`` ... for
    label codes), then feature ``0 .. d-1``, thresholds left to right, and for ±1
    stumps ``s = +1`` before ``s = -1``; within a label-coded leaf the lowest class.
    On a feature with missing values, every candidate sending NaN left comes before
    every one sending it right (below).  A split whose two leaves are equal is the
    constant function and is returned as the constant.

    Missing values, by LightGBM's rule.  A training column that holds NaN (and finite
    values) gets a bin for its NaN rows after its finite bins, whose edges are made
    from the finite values alone (LightGBM's ``MissingType::NaN``, its NaN bin last;
    ``max_bins`` counts the finite bins, where LightGBM's ``max_bin`` counts the NaN
    bin too).  Every query's scan of such a feature is LightGBM's
    ``FindBestThresholdSequentially`` (``src/treelearner/feature_histogram.hpp``): its
    reverse pass first, the NaN bin on the left of every threshold
    (``default_left = true``), then its forward pass, the NaN bin on the right, whose
    last threshold, ``+inf``, leaves the NaN rows alone on the right (as LightGBM
    writes that split); a split of the second pass wins only when strictly better
    (``best_gain > output->gain``), so a tie between the directions sends NaN left.
    The stump keeps the side as ``default_left``; ``predict``, the compiled sum and
    :meth:`~oracleboost.oracles.Hypothesis.tree_structure` (missing type NaN) route
    a NaN there.  A feature without NaN in training gives stumps of
    ``default_left=None``: a NaN at prediction goes where ``0.0`` goes, as LightGBM's
    ``Tree::NumericalDecision`` reads it on a split of missing type none, so the
    exported model predicts what ``decision_function`` does, bit for bit.  A feature
    without NaN is scanned and summed by the loops that know no missing bin: fits on
    X without NaN are what they were.  ±inf is refused.

    Departures from LightGBM: whether a column has missing values is decided from every
    row (LightGBM looks at its bin sample only); a column all NaN is never split on
    (LightGBM's trivial feature); LightGBM's bins include one ending at ``1e-35``,
    which can be empty and then isolates the NaN rows on the left at that threshold,
    where the stump isolates them on the right at ``+inf`` (the same partition of the
    training rows; new values at most ``1e-35`` go the other way); within one
    direction the first best threshold from the left wins (LightGBM's reverse pass
    keeps the last).

    Examples
    --------
    Bound once to the training rows, the class answers both queries: ``correlate`` with
    the ±1 stump of largest weighted edge, ``project`` with the two-valued least-squares
    stump:

    >>> import numpy as np
    >>> from oracleboost.oracles import StumpOracle
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> bound = StumpOracle().bind(X)
    >>> h = bound.correlate(np.array([-1.0, -1.0, 1.0, 1.0]))
    >>> h
    SignStump(feature=0, threshold=1.5, sign=+1)
    >>> h.train_output, h.predict(np.array([[0.5], [2.5]]))
    (array([-1., -1.,  1.,  1.]), array([-1.,  1.]))
    >>> bound.project(np.array([0.0, 0.0, 2.0, 4.0]))
    RegressionStump(feature=0, threshold=1.5, left=0.0, right=3.0)
    """

    def __init__(self, max_bins: int = 255, exact: bool = False, n_jobs: int | None = None,
                 block_size: int = DEFAULT_BLOCK_SIZE,
                 bin_sample: int | None = 200_000, histogram_refresh: int = 32,
                 monotone_constraints: Sequence[int] | None = None,
                 device: str = "cpu") -> None:
        self.max_bins = max_bins
        self.exact = exact
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.bin_sample = bin_sample
        self.histogram_refresh = histogram_refresh
        self.monotone_constraints = monotone_constraints
        self.device = device

    @property
    def capabilities(self) -> Capabilities:
        # monotone stumps have scalar leaves: a vector leaf has no order to keep
        multiclass = not is_constrained(self.monotone_constraints)
        return Capabilities(
            correlate=True,
            project=True,
            multiclass_correlate=multiclass,
            multiclass_project=multiclass,
            closed_under_negation=multiclass,
            bounded=True,  # correlate answers ±1 or label codes in [−1, 1]
            sparse_input=True,  # binned from the structure, as X.toarray() would be
            allow_nan=True,  # a missing-value bin with a learned side (LightGBM's rule)
            feature_subsets=True,  # the scan's best split among the given features
        )

    def _check_params(self) -> None:
        mb = self.max_bins
        if isinstance(mb, bool) or not isinstance(mb, numbers.Integral) or not 2 <= mb <= 255:
            raise ValueError(f"max_bins must be an int in [2, 255]; got {mb!r}")
        if not isinstance(self.exact, (bool, np.bool_)):
            raise ValueError(f"exact must be a bool; got {self.exact!r}")
        _check_n_jobs(self.n_jobs)
        bs = self.block_size
        if isinstance(bs, bool) or not isinstance(bs, numbers.Integral) or bs < 1:
            raise ValueError(f"block_size must be a positive int; got {bs!r}")
        ns = self.bin_sample
        if ns is not None and (isinstance(ns, bool) or not isinstance(ns, numbers.Integral)
                               or ns < 2):
            raise ValueError(f"bin_sample must be None or an int of at least 2; got {ns!r}")
        hr = self.histogram_refresh
        if isinstance(hr, bool) or not isinstance(hr, numbers.Integral) or hr < 1:
            raise ValueError(f"histogram_refresh must be an int of at least 1; got {hr!r}")
        check_monotone_constraints(self.monotone_constraints)
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda'; got {self.device!r}")

    def _sample(self, n: int) -> np.ndarray | None:
        """The rows the bins are made from (None: every row)."""
        return None if self.exact else sample_rows(n, self.bin_sample)

    def bind(self, X: ArrayLike) -> BoundStumpOracle:
        """Bin every feature of ``X`` once and return the oracle over its rows.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
            Numeric training features, finite or NaN (a missing value: see the class's
            Notes; ±inf is refused).  Sparse X (CSR or CSC, matrix or array;
            other formats are read as CSR) is binned from its stored values and its
            zeros' count, column by column, never made dense: the thresholds and codes
            are those of ``X.toarray()`` (zero is a value like any other, with its own
            bin; a stored NaN is missing), so every answer, and every fit, equals the
            dense one bit for bit.

        Returns
        -------
        BoundStumpOracle
        """
        self._check_params()
        if self.device != "cpu":
            # the GPU's rows live with a booster's fit (its backend binds them there)
            raise ValueError(
                f"StumpOracle(device={self.device!r}).bind(X) binds in this process's "
                "memory, which device='cpu' does; pass the oracle to a booster to fit on "
                "the GPU (through CachedOracle it cannot: the cache holds answers in "
                "memory), or set device='cpu'")
        X = check_X(X, allow_nan=True, accept_sparse=True, who="StumpOracle")
        monotone_directions(self.monotone_constraints, X.shape[1])  # one a feature
        if sp.issparse(X):
            X = _canonical_csc(X)
        return BoundStumpOracle(self, X)

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundStumpOracle:
        """The oracle over rows held in a backend's partitions: histograms summed over
        them (``backend.bind_stumps``; on Dask,
        :class:`oracleboost.oracles.partitioned_stumps.PartitionedStumpOracle`)."""
        self._check_params()
        return backend.bind_stumps(self, rows)


def _holds_nan(X) -> bool:
    """Whether dense or sparse ``X`` holds a NaN."""
    return bool(np.isnan(X.data if sp.issparse(X) else X).any())


def _canonical_csc(X):
    """A canonical CSR or CSC matrix (:func:`~.base.check_X`) as canonical CSC: the
    binning reads it column by column."""
    X = X.tocsc()  # a canonical CSR becomes a canonical CSC; a CSC stays itself
    if not X.has_canonical_format:  # pragma: no cover - scipy's conversion sorts
        X.sum_duplicates()
    return X


def row_centred(r: np.ndarray) -> np.ndarray:
    """``r − mean_k r_k`` row by row (each row's mean from that row alone)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return r - r.mean(axis=1, keepdims=True)


@stored_as("HistogramMemo")
@dataclass(frozen=True, eq=False)
class HistogramMemo:
    """What ``project(target)`` without weights keeps of its query, on its answer
    (``query_memo``): the histogram of ``target`` it scanned, for a next query
    ``target − c·answer`` (:meth:`BoundStumpOracle._project_shifted`).

    ``bins`` is the fingerprint of the thresholds the histogram was made with, ``age``
    the queries since one was summed from its rows, and ``split`` the answer:
    ``(feature, last bin on the left, NaN rows go left, left leaf, right leaf)``, or
    None for a constant answer ``value``.  A booster keeps it between rounds (its
    ``warm_start`` state: a continued fit makes the histograms the longer fit makes)."""

    hist: np.ndarray
    bins: str
    age: int
    split: tuple | None
    value: float = 0.0


class BoundStumpOracle(BoundOracle):
    """A :class:`StumpOracle` bound to ``n`` training rows.

    Attributes
    ----------
    n_features : int
    thresholds : list of ndarray
        ``thresholds[j]`` are the (strictly increasing) candidate thresholds of
        feature ``j``; it has ``n_bins[j] - 1`` entries.
    n_bins : ndarray of shape (n_features,)
        Finite bins of each feature.
    missing : ndarray of bool, shape (n_features,)
        Features with a missing-value bin: their training column holds NaN, whose rows
        have the code ``n_bins[j]``, after the finite bins (LightGBM's missing type NaN),
        and finite values.  (A column all NaN has nothing to split, as LightGBM's
        trivial feature: its rows have the code 1, and it is not split on.)
    codes : ndarray of shape (n_samples, n_features), uint8 (wider only in exact mode)
        Bin of every training value: ``codes[i, j] = #{t : thresholds[j][t] < X[i, j]}``,
        so ``codes[i, j] <= t`` exactly when ``X[i, j] <= thresholds[j][t]``, and
        ``n_bins[j]`` where ``X[i, j]`` is NaN.  (A copy: the oracle keeps the codes by
        row block.)
    blocks : RowBlocks
        The row blocks.  Each block keeps its rows' codes feature-major and contiguous,
        ``(n_features, rows)``: the codes of one feature in one block are consecutive
        bytes, which is what the histogram kernels read (20% faster than strided
        slices of one array), and a block is what a worker would hold.
    """

    # A query's NaN or inf reaches its histogram's bins (every row is in one of feature
    # 0's), and a stump's outputs are its leaves, ±1 or class codes for ``correlate``:
    # neither needs a pass over the rows of its own (two at 1,000,000 rows cost 0.5 ms,
    # 6% of a round on two threads).
    _correlate_checks_query = True
    _correlate_outputs_finite = True
    # The same for a target of ``project``: its NaN or inf reaches the bins, and the
    # stump's outputs are its two leaves, checked when made (the checks' passes cost
    # 85-110 µs at 100,000 rows, 6% of a regressor's round on two threads)
    _project_checks_target = True
    _project_outputs_finite = True

    def __init__(self, oracle: StumpOracle, X: np.ndarray,
                 thresholds: list[np.ndarray] | None = None, n_jobs: object = "oracle"):
        super().__init__(oracle, X.shape[0])
        n, d = X.shape
        self.n_features = d
        self.n_jobs = oracle.n_jobs if n_jobs == "oracle" else n_jobs
        n_threads = min(_threads(self.n_jobs), d)
        sparse = sp.issparse(X)
        if thresholds is None:
            rows = oracle._sample(n)
            if sparse:
                thresholds = sparse_bin_thresholds(X, rows, oracle.max_bins, oracle.exact,
                                                   self.n_jobs)
            else:
                thresholds = bin_thresholds(X if rows is None else X[rows],
                                            oracle.max_bins, oracle.exact, self.n_jobs)
        self._set_thresholds(thresholds)
        self.blocks = RowBlocks(n, int(oracle.block_size), self.n_jobs)
        # Codes 0 .. n_bins[j] − 1, and n_bins[j] for NaN.  That one more code needs a
        # wider type only at 256 (or 65,536) bins, in exact mode: look for NaN then.
        top = self._B - 1
        if np.min_scalar_type(top + 1) != np.min_scalar_type(top) and _holds_nan(X):
            top += 1
        dtype = np.min_scalar_type(top)
        # the blocks one after another in one buffer (what the compiled histograms read)
        self._codes = np.empty(n * d, dtype=dtype)
        self._block_codes = [self._codes[a * d:b * d].reshape(d, b - a)
                             for a, b in self.blocks.bounds]
        padded, starts, counts = padded_thresholds(self.thresholds)
        # searchsorted(side="left") counts thresholds strictly below x: x == θ goes left.
        if sparse:
            zero = np.zeros((1, 1))

            def sparse_codes(j: int) -> int:
                # the column's codes (a byte a row): every row the zeros' code, then the
                # stored values' own, by the same kernel; then cut into the blocks
                lo, hi = X.indptr[j], X.indptr[j + 1]
                column = np.empty((1, n), dtype=dtype)
                stored = np.empty((1, hi - lo), dtype=dtype)
                nan = np.zeros(1, dtype=np.int64)
                feature = (padded, starts[j:j + 2], counts[j:j + 1])
                kernels.bin_block(zero, 0, 1, 0, 1, *feature, column, nan)
                column[0, 1:] = column[0, 0]
                kernels.bin_block(X.data[lo:hi].reshape(-1, 1), 0, hi - lo, 0, 1, *feature,
                                  stored, nan)
                column[0, X.indices[lo:hi]] = stored[0]
                for (a, b), block in zip(self.blocks.bounds, self._block_codes, strict=True):
                    block[j] = column[0, a:b]
                return int(nan[0])

            nan_rows = np.array(_map(sparse_codes, range(d), n_threads), dtype=np.int64)
        else:
            # tasks of one row block and a run of features (a 64-byte line of a
            # C-ordered row): the codes are integers, the same whoever makes them
            tasks = [(k, j0, min(d, j0 + _BIN_FEATURES))
                     for k in range(len(self.blocks.bounds))
                     for j0 in range(0, d, _BIN_FEATURES)]

            def codes(k: int, j0: int, j1: int) -> np.ndarray:
                (a, b), nan = self.blocks.bounds[k], np.zeros(j1 - j0, dtype=np.int64)
                kernels.bin_block(X, a, b, j0, j1, padded, starts, counts,
                                  self._block_codes[k][j0:j1], nan)
                return nan

            nan_rows = np.zeros(d, dtype=np.int64)
            for (_, j0, j1), nan in zip(tasks, _map(codes, tasks, _threads(self.n_jobs),
                                                    star=True), strict=True):
                nan_rows[j0:j1] += nan
        self._set_nan_bins(nan_rows > 0)
        self._counts = np.empty((d, self._B))  # unweighted W per bin
        self._histograms(kernels.hist_1d, (np.ones(n),), (self._counts,))
        self._set_missing()

    def _set_thresholds(self, thresholds: list[np.ndarray]) -> None:
        self.thresholds = thresholds
        self.n_bins = np.array([t.size + 1 for t in self.thresholds], dtype=np.intp)
        self._set_nan_bins(np.zeros(self.n_bins.size, dtype=bool))
        self.missing = self._nan_bins

    def _set_nan_bins(self, nan_bins: np.ndarray) -> None:
        """Give the features ``nan_bins`` (whose columns hold NaN) a bin for it, after
        their finite ones: the histograms' width."""
        self._nan_bins = nan_bins
        self._B = int((self.n_bins + nan_bins).max())  # bins per feature after padding

    def _set_missing(self) -> None:
        """The features scanned with their missing-value bin (from the counts): those
        with NaN rows and finite rows.  Every finite row of the sample that made the
        bins is in one of them, and the first holds the smallest value, so bin 0 is
        empty only in a column with no finite row, whose one split would leave a side
        empty."""
        self.missing = self._nan_bins & (self._counts[:, 0] > 0)

    @property
    def codes(self) -> np.ndarray:
        return np.concatenate(self._block_codes, axis=1).T

    @functools.cached_property
    def _directions(self) -> np.ndarray | None:
        """The oracle's ``monotone_constraints`` (one entry a feature), or None."""
        return monotone_directions(self.oracle.monotone_constraints, self.n_features)

    # -- the kernels, by row blocks (and blocks of features) on threads ---------------------
    def _histograms(self, kernel: Callable[..., None], rows: tuple[np.ndarray, ...],
                    outs: tuple[np.ndarray, ...], split: int = 0) -> None:
        """``kernel(codes, *rows, *outs)`` over every row block, each block's histograms
        added into ``outs`` (of shape ``(d, B, ...)``) in block order
        (:func:`._stump_kernels.histograms`, on numba's threads).  For
        :func:`~._stump_kernels.side_counts`, ``rows`` is the split's table of bins (not
        a row array) and ``split`` its feature: each block's rows on the counted side are
        listed once (:func:`~._stump_kernels.side_rows`), then counted by its tasks.

        A task is one row block and one run of features; its kernel call reads only
        those codes and rows and writes only its block's partial histograms, whose sums
        are in row order.  The partials are then added in block order, within each
        partition of ``BLOCKS_PER_PARTITION`` blocks and then partition by partition
        (what a worker of a cluster holds: the same order is followed there without
        sending every block's histogram), feature by feature: the bits depend on the
        blocks, never on the threads.  With one block the kernel writes ``outs`` itself.
        """
        d, bounds = self.n_features, self.blocks.bounds
        k_blocks = len(bounds)
        threads, tasks, runs, starts, stops = self._tasks(
            min(_threads(self.n_jobs), max(1, (self.n_samples * d) // _MIN_CELLS)))
        kind = _HIST_KIND[kernel.__name__]
        v, t = _NO_ROWS, _NO_TARGETS
        out_w, out_s = _NO_HIST, _NO_HIST_2D
        if kind in (kernels.HIST_1D, kernels.HIST_SIDE):
            (v,), (out_w,) = rows, outs
        elif kind == kernels.HIST_2D:
            (t,), (out_s,) = rows, outs
        else:
            (v, t), (out_w, out_s) = rows, outs

        def partials(out: np.ndarray) -> np.ndarray:
            if out.size == 0:  # not this kernel's
                return out[None]
            return out[None] if k_blocks == 1 else np.empty((k_blocks,) + out.shape)

        v, t = np.ascontiguousarray(v), np.ascontiguousarray(t)
        parts_w, parts_s = partials(out_w), partials(out_s)
        # side_counts: each block's rows on the split's counted side (v: its table of
        # bins), listed once, and how many a block
        listed, counts = _NO_SIDE_ROWS, _NO_SIDE_COUNTS
        if kind == kernels.HIST_SIDE:
            listed = np.empty(self.n_samples, np.int32)
            counts = np.empty(k_blocks, np.intp)
            if self.blocks.python_threads:
                def list_block(k: int) -> None:
                    a, b = bounds[k]
                    counts[k] = kernels.side_rows(self._block_codes[k][split], v,
                                                  listed[a:b])

                _map(list_block, range(k_blocks), threads)
            else:
                run_parallel(kernels.block_side_rows, threads, self._codes, d, starts,
                             stops, split, v, listed, counts)
        if not self.blocks.python_threads:
            run_parallel(kernels.histograms, threads, kind, self._codes, d, starts, stops,
                         tasks, runs, BLOCKS_PER_PARTITION, v, t, parts_w, parts_s, out_w,
                         out_s, listed, counts)
            return
        # Rows enough for Python threads (RowBlocks.python_threads): the round's other
        # passes run on them, so these do too, each run a call on one of numba's
        # threads; then the partials' sums, by runs of features
        def run(r: int) -> None:
            run_parallel(kernels.histograms, 1, kind, self._codes, d, starts, stops, tasks,
                         runs[r:r + 2], 0, v, t, parts_w, parts_s, out_w, out_s, listed,
                         counts)

        _map(run, range(len(runs) - 1), len(runs) - 1)
        if k_blocks > 1:
            self._by_feature(lambda fa, fb: kernels.add_histograms(
                kind, fa, fb, BLOCKS_PER_PARTITION, parts_w, parts_s, out_w, out_s),
                k_blocks * max(1, t.shape[1]))

    def _tasks(self, threads: int) -> tuple:
        """:meth:`_histograms`' tasks on at most ``threads`` threads: ``(threads, tasks,
        runs, starts, stops)``, made once for each number of threads (a round's query
        asks for them again: 20 µs of Python each time at 100,000 × 50 rows and
        features, 34 µs at 1,000,000 × 20)."""
        plans = self.__dict__.setdefault("_task_plans", {})
        if threads in plans:
            return plans[threads]
        d, bounds = self.n_features, self.blocks.bounds
        k_blocks = len(bounds)
        # Features are split when blocks are few for the threads (or unequal: the last
        # one is short), so that every thread gets about the same number of cells.
        groups = 1 if threads == 1 else max(1, min(d, -(-4 * threads // k_blocks)))
        cuts = [d * g // groups for g in range(groups + 1)]
        tasks = np.array([(k, fa, fb) for k in range(k_blocks)
                          for fa, fb in zip(cuts[:-1], cuts[1:], strict=True)], dtype=np.intp)
        used = min(threads, len(tasks))
        # Consecutive runs of tasks of about equal cost (cells), one run a thread.
        cost = np.cumsum([(bounds[k][1] - bounds[k][0]) * (fb - fa) for k, fa, fb in tasks])
        runs = np.array([0, *np.searchsorted(cost, cost[-1] * np.arange(1, used) / used,
                                             side="right").tolist(), len(tasks)], dtype=np.intp)
        starts = np.array([a for a, _ in bounds], dtype=np.intp)
        stops = np.array([b for _, b in bounds], dtype=np.intp)
        plans[threads] = (used, tasks, runs, starts, stops)
        return plans[threads]

    def _by_feature(self, block: Callable[[int, int], None], width: int = 1) -> None:
        """Run ``block(a, b)`` over blocks of features ``a:b`` that cover them all (a
        scan of histograms of ``width`` columns).

        A block reads and writes only its features' slices of the arrays it closes over,
        so the answer does not depend on the number of threads.  A scan reads ``B ×
        width`` numbers a feature, whatever ``n``: a thread takes at least
        ``_MIN_SCAN_CELLS`` of them (at 50 features of 255 bins, the scan takes 44 µs on
        one thread, and 160 µs when handed to two).
        """
        d = self.n_features
        n_threads = min(_threads(self.n_jobs), d,
                        max(1, (d * self._B * width) // _MIN_SCAN_CELLS))
        bounds = [d * k // n_threads for k in range(n_threads + 1)]
        _map(block, zip(bounds[:-1], bounds[1:], strict=True), n_threads, star=True)

    @staticmethod
    def _total(hist: np.ndarray) -> np.ndarray:
        """``Σ_i v_i`` of the rows a histogram ``hist`` (``(d, B, ...)``) was made of, from
        feature 0's bins (every row falls in one), correctly rounded (``math.fsum``): no
        pass over the rows, and the same numbers the splits' scores are made of."""
        h0 = hist[0].reshape(hist.shape[1], -1)
        return np.array([math.fsum(h0[:, k]) for k in range(h0.shape[1])])

    def _query_total(self, hist: np.ndarray, r: np.ndarray, name: str = "r") -> np.ndarray:
        """:meth:`_total` of a query's histogram, refusing the query (``_refuse_query``,
        ``name`` its argument) when its sums are not finite: a NaN or inf of ``r``
        reaches feature 0's bins, since every row is in one of them, and so do sums
        that overflow."""
        if not np.isfinite(hist[0]).all():
            self._refuse_query(r, name)
        try:
            return self._total(hist)
        except OverflowError:  # finite bins whose sum does not fit
            self._refuse_query(r, name)

    def _split(self, j: int, t: int) -> float:
        """The threshold after bin ``t`` of feature ``j``: ``+inf`` after its last finite
        bin (a split that leaves the NaN rows alone on the right; LightGBM writes it so)."""
        if t == self.n_bins[j] - 1:
            return math.inf
        return float(self.thresholds[j][t])

    def _default_left(self, j: int, nan_left: np.ndarray) -> bool | None:
        """A stump's ``default_left`` on feature ``j``, from a scan's ``nan_left``: None
        where the feature has no missing-value bin."""
        return bool(nan_left[j]) if self.missing[j] else None

    def _outputs(self, j: int, t: int, left, right, nan_left: bool | None = None) -> np.ndarray:
        """Outputs on the training rows of the stump (j, t) with these leaves: shape (n,)
        for scalar leaves, (n, K) for vectors; ``nan_left``: the feature's NaN rows go
        left (else right, as their code ``n_bins[j] > t`` sends them)."""
        scalar = np.ndim(left) == 0
        left = np.atleast_1d(np.asarray(left, dtype=np.float64))
        right = np.atleast_1d(np.asarray(right, dtype=np.float64))
        out = np.empty((self.n_samples, left.size))
        size = self.blocks.block_size
        nan_code = int(self.n_bins[j])

        def run(q0: int, q1: int, lo: int, hi: int) -> None:
            # elementwise, block by block: a thread's run of lanes may start or end
            # inside a block
            a = lo
            while a < hi:
                k, off = divmod(a, size)
                b = min(hi, (k + 1) * size)
                c = self._block_codes[k][j, off:off + b - a]
                if nan_left:
                    kernels.leaf_outputs_nan_left(c, t, nan_code, left, right, out[a:b])
                else:
                    kernels.leaf_outputs(c, t, left, right, out[a:b])
                a = b

        self.blocks.lane_map(run)
        return out[:, 0] if scalar else out

    @staticmethod
    def _query(r: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(r)  # the kernels' layout (a no-op when it is)

    def _full(self, value: float | np.ndarray) -> np.ndarray:
        value = np.asarray(value, dtype=np.float64)
        return np.full((self.n_samples,) + value.shape, value)

    @staticmethod
    def _as_column(a: np.ndarray) -> np.ndarray:
        """A target of shape (n,) as the (n, 1) rows the weighted kernel reads."""
        return a[:, None]

    # -- queries --------------------------------------------------------------------------
    @staticmethod
    def _only(score: np.ndarray, features: np.ndarray | None) -> None:
        """A scan's scores kept for ``features`` alone (the others -inf, so that no split
        on them is chosen; a constant's score is never -inf), in place."""
        if features is not None:
            keep = np.zeros(score.shape[0], dtype=bool)
            keep[features] = True
            score[~keep] = -np.inf

    def _correlate(self, r: np.ndarray, random_state: int | None,
                   features: np.ndarray | None = None) -> Hypothesis:
        if r.ndim == 2:
            return self._correlate_codes(r, features)
        r = self._query(r)
        d = self.n_features
        hist, score = np.empty((d, self._B)), np.empty(d)
        thr, sign = np.empty(d, np.intp), np.empty(d, np.intp)
        nan_left = np.zeros(d, dtype=bool)
        self._histograms(kernels.hist_1d, (r,), (hist,))
        total = float(self._query_total(hist, r)[0])

        def block(a: int, b: int) -> None:
            kernels.sign_scan(hist[a:b], self.n_bins[a:b], self.missing[a:b], score[a:b],
                              thr[a:b], sign[a:b], nan_left[a:b])

        self._by_feature(block)
        if self._directions is not None:  # constrained features: the allowed sign only
            monotone_scans.sign_rescan(hist, self.n_bins, self.missing, self._directions,
                                       score, thr, sign, nan_left)
        self._only(score, features)
        # Constants first (+1 before −1), then features in order: the documented tie rule.
        best = int(np.argmax(np.concatenate([[total, -total], score])))
        if best < 2:
            s = 1 if best == 0 else -1
            h: Hypothesis = ConstantHypothesis(float(s), d)
            h.key, h.scale = ("constant",), float(s)
            h.train_output = self._full(float(s))
            return h
        j = best - 2
        t, s = int(thr[j]), int(sign[j])
        default_left = self._default_left(j, nan_left)
        h = SignStump(j, self._split(j, t), s, d, default_left)
        h.train_output = self._outputs(j, t, -float(s), float(s), default_left)
        return h

    def _correlate_codes(self, r: np.ndarray, features: np.ndarray | None = None
                         ) -> Hypothesis:
        # <r_i, c(k)> = K/(K-1) (r_ik - mean_k' r_ik'): each leaf takes the class with
        # the largest column sum of the row-centred r; the factor K/(K-1) is dropped.
        # Centring shifts every candidate's score by the same sum_i mean_i r_i, so it
        # does not change the answer; it keeps the sums small when rows share a large
        # offset, so the comparisons lose less to rounding.
        n, K = r.shape
        if K < 2:
            raise ValueError(
                f"r of shape (n, K) needs K >= 2 classes for label-coded stumps; got K={K} "
                "(pass r of shape (n,) for binary ±1 stumps)"
            )
        d = self.n_features
        rc = self._row_centred(r)
        codes = label_codes(K)
        hist = np.empty((d, self._B, K))
        self._histograms(kernels.hist_2d, (rc,), (hist,))
        split, best = self._code_choice(hist, self._query_total(hist, r), features)
        if split is not None:
            j, t, kl, kr, default_left = split
            h: Hypothesis = LabelCodeStump(j, self._split(j, t), kl, kr, K, d, default_left)
            h.train_output = self._outputs(j, t, codes[kl], codes[kr], default_left)
            return h
        h = ConstantHypothesis(codes[best], d)
        h.train_output = self._full(codes[best])
        return h

    def _code_choice(self, hist: np.ndarray, total: np.ndarray,
                     features: np.ndarray | None) -> tuple[tuple | None, int]:
        """The label-coded stump's choice from the histogram ``hist`` (d, B, K) of the
        row-centred query and its column sums ``total``: ``((j, t, k_left, k_right,
        default_left), −1)`` for feature j's split after bin t, or ``(None, k)`` for the
        constant ``c(k)``.  The constants first, then the features in order, the first
        strictly best; a split with the same class on both sides is the constant of
        the best column.  (The GPU's stumps choose with this rule too, from their
        fixed-point histograms.)"""
        d, K = self.n_features, hist.shape[2]
        score = np.empty(d)
        thr, k_left, k_right = (np.empty(d, np.intp) for _ in range(3))
        nan_left = np.zeros(d, dtype=bool)

        def block(a: int, b: int) -> None:
            kernels.code_scan(
                hist[a:b], self.n_bins[a:b], self.missing[a:b], score[a:b], thr[a:b],
                k_left[a:b], k_right[a:b], nan_left[a:b]
            )

        self._by_feature(block, K)
        self._only(score, features)
        best = int(np.argmax(np.concatenate([total, score])))
        if best >= K:
            j = best - K
            t, kl, kr = int(thr[j]), int(k_left[j]), int(k_right[j])
            if kl != kr:
                return (j, t, kl, kr, self._default_left(j, nan_left)), -1
            best = int(np.argmax(total))  # same class on both sides: the constant c(kl)
        return None, best

    def _answer_peak(self, h: Hypothesis) -> float:
        """``max |h.train_output|`` from the leaves (every row takes one of them)."""
        left, right = h._split_leaves()[3:5]
        return float(max(np.max(np.abs(left)), np.max(np.abs(right))))

    @staticmethod
    def _row_centred(r: np.ndarray) -> np.ndarray:
        """``r`` less each row's mean (a bad r: refused by the histograms' check)."""
        return row_centred(r)

    def _project(
        self, target: np.ndarray, sample_weight: np.ndarray | None, random_state: int | None,
        shifted: tuple[np.ndarray, int] | None = None,
        features: np.ndarray | None = None,
    ) -> Hypothesis:
        """The least-squares stump (on ``features`` alone, when given); ``shifted =
        (histogram, age)``: ``target``'s histogram, made by :meth:`_project_shifted` (no
        weights, shape (n,))."""
        vector = target.ndim == 2
        target = self._query(target)  # the kernels' layout (a no-op when it is)
        t2 = target if vector else self._as_column(target)
        n, K = self.n_samples, (target.shape[1] if vector else 1)
        d = self.n_features
        hist_s = np.empty((d, self._B, K))
        if sample_weight is None:
            W_tot = float(n)
            hist_w = self._counts  # counted once, at bind
            if shifted is not None:  # made by _project_shifted
                hist_s = shifted[0][:, :, None]
            elif K == 1:  # one accumulator: the kernel shared with correlate
                self._histograms(kernels.hist_1d, (target if target.ndim == 1 else
                                                   target.reshape(n),),
                                 (hist_s.reshape(d, self._B),))
            else:
                self._histograms(kernels.hist_2d, (t2,), (hist_s,))
        else:
            hist_w = np.empty((d, self._B))
            self._histograms(kernels.hist_weighted, (sample_weight, t2), (hist_w, hist_s))
            W_tot = float(self._total(hist_w)[0])
        S_tot = self._query_total(hist_s, target, "target")
        split, mean = self._lsq_choice(hist_w, hist_s, S_tot, W_tot, features, target)
        if split is not None:
            j, t, a, b, default_left = split
            theta = self._split(j, t)
            h: Hypothesis
            if vector:
                h = VectorStump(j, theta, a, b, d, default_left)
                h.train_output = self._outputs(j, t, a, b, default_left)
            else:
                h = RegressionStump(j, theta, float(a[0]), float(b[0]), d, default_left)
                h.train_output = self._outputs(j, t, float(a[0]), float(b[0]),
                                               default_left)
                if sample_weight is None:
                    h.query_memo = self._memo(
                        hist_s, shifted, (j, t, bool(default_left),
                                          float(a[0]), float(b[0])))
            return h
        if vector:
            h = ConstantHypothesis(mean, d)
            h.train_output = self._full(mean)
        else:
            h = ConstantHypothesis(float(mean[0]), d)
            h.train_output = self._full(float(mean[0]))
            if sample_weight is None:
                h.query_memo = self._memo(hist_s, shifted, None, float(mean[0]))
        return h

    def _lsq_choice(self, hist_w: np.ndarray, hist_s: np.ndarray, S_tot: np.ndarray,
                    W_tot: float, features: np.ndarray | None, target: Any
                    ) -> tuple[tuple | None, np.ndarray]:
        """The least-squares stump's choice from the histograms of the weights
        ``hist_w`` (d, B) and of the weighted target ``hist_s`` (d, B, K) and their
        totals: ``((j, t, a, b, default_left), mean)`` for feature j's split after bin t
        with leaves ``a`` and ``b`` (K values each), or ``(None, mean)`` for the
        constant ``mean = S_tot / W_tot``.  Every candidate scores ``Σ_k S_k²/W`` of its
        sides (the constant ``S·(S/W)``); the first strictly best wins, the constant
        first.  A non-finite mean or leaf refuses ``target`` by name.  (The GPU's
        stumps choose with this rule too, from their fixed-point histograms.)"""
        d, K = self.n_features, hist_s.shape[2]
        score, thr = np.empty(d), np.empty(d, np.intp)
        sums_left, sums_right, sums_w = np.empty((d, K)), np.empty((d, K)), np.empty((d, 2))
        nan_left = np.zeros(d, dtype=bool)

        def block(a: int, b: int) -> None:
            kernels.lsq_scan(hist_w[a:b], hist_s[a:b], self.n_bins[a:b], self.missing[a:b],
                             score[a:b], thr[a:b], sums_left[a:b], sums_right[a:b], sums_w[a:b],
                             nan_left[a:b])

        self._by_feature(block, K + 1)
        if self._directions is not None:  # constrained features: leaves in order only
            monotone_scans.lsq_rescan(hist_w, hist_s, self.n_bins, self.missing,
                                      self._directions, score, thr, sums_left, sums_right,
                                      sums_w, nan_left)
        self._only(score, features)
        mean = S_tot / W_tot
        # The constant's score S·(S/W), as the scan scores a side: inf past float64's
        # range (as in the scan, silently), and such an answer is refused by its squared
        # norm (project's _check_squared_norm), not by a warning here
        with np.errstate(over="ignore"):
            constant = float((S_tot * mean).sum())
        best = int(np.argmax(np.concatenate([[constant], score])))
        if not np.isfinite(mean).all():  # a mean of finite sums past float64's range
            self._refuse_query(target, "target")
        if best > 0:
            j = best - 1
            t = int(thr[j])
            a, b = sums_left[j] / sums_w[j, 0], sums_right[j] / sums_w[j, 1]
            if not (np.isfinite(a).all() and np.isfinite(b).all()):
                self._refuse_query(target, "target")
            if not np.array_equal(a, b):
                return (j, t, a, b, self._default_left(j, nan_left)), mean
        return None, mean

    # -- the next query as this one less a step along the answer --------------------------
    @functools.cached_property
    def _bins_key(self) -> str:
        """The fingerprint of the bins (a memo is used only with the bins it was made
        with)."""
        return fingerprint(self.n_bins, self.missing, *self.thresholds)

    def _memo(self, hist_s: np.ndarray, shifted: tuple | None, split: tuple | None,
              value: float = 0.0) -> HistogramMemo | None:
        """The answer's memo; None where no query is ever shifted (``histogram_refresh
        = 1``, or data under ``_MIN_SHIFT_CELLS``): nothing kept in a booster's state
        or a cache's entries that no query could use."""
        if (self.oracle.histogram_refresh == 1
                or self.n_samples * self.n_features < _MIN_SHIFT_CELLS):
            return None
        return HistogramMemo(hist_s[:, :, 0], self._bins_key,
                             0 if shifted is None else shifted[1], split, value)

    #: The last :meth:`_shift_plan`: ``(memo, plan)`` (one plan a memo: a prefetch
    #: and the query after it share its table).
    _last_plan: tuple | None = None

    def _shift_plan(self, memo: object) -> tuple | None:
        """How to make the histogram of ``memo``'s query less a step along its answer:
        ``(feature, table of its bins on the counted side, leaf of that side, the other
        leaf)`` (the counted side is the smaller one; feature None: a constant answer),
        or None when the next query is to be summed from its rows (a memo of other bins,
        ``histogram_refresh`` reached, or data of fewer than ``_MIN_SHIFT_CELLS``
        cells)."""
        if self._last_plan is not None and self._last_plan[0] is memo:
            return self._last_plan[1]
        plan = None
        if (isinstance(memo, HistogramMemo)
                and self.n_samples * self.n_features >= _MIN_SHIFT_CELLS
                and memo.bins == self._bins_key
                and memo.hist.shape == (self.n_features, self._B)
                and memo.age + 1 < self.oracle.histogram_refresh):
            if memo.split is None:
                plan = (None, None, memo.value, memo.value)
            else:
                j, t, nan_left, left, right = memo.split
                side = np.zeros(self._B)
                side[:t + 1] = 1.0
                if nan_left:
                    side[self.n_bins[j]] = 1.0
                # whole numbers below 2**53: exact in any order
                on_left = float(self._counts[j][side > 0].sum())
                plan = (j, side, left, right)
                if 2 * on_left > self.n_samples:
                    plan = (j, 1.0 - side, right, left)
        self._last_plan = (memo, plan)
        return plan

    def _project_shifted(self, target: np.ndarray, memo: object, c: float, *,
                         random_state: int | None = None) -> Hypothesis:
        """``project(target)`` without weights, where ``target`` is ``q − c·h`` in exact
        arithmetic, ``h`` the answer to the earlier ``project(q)`` without weights that
        left ``memo`` (``h.query_memo``): the squared loss's next descent.

        ``target``'s histogram is ``q``'s less ``c`` times ``h``'s, and ``h``'s (its
        leaves ``a``, ``b`` on the rows of each bin) is ``a·L + b·(N − L)``, ``N`` the
        rows a bin and ``L`` those on the counted side
        (:func:`~._stump_kernels.side_counts`: whole numbers, the same on any threads
        and workers).  The scan and the answer are ``project``'s.  Summed from the rows
        instead (``project(target)``) when the plan says so (:meth:`_shift_plan`) or the
        shifted histogram is not finite (then the sums from the rows refuse what is
        not)."""
        plan = self._shift_plan(memo)
        if plan is None:
            return self.project(target, random_state=random_state)
        j, side, counted, other = plan
        on_side = np.zeros((self.n_features, self._B))  # (a constant: no row counted)
        if j is not None:
            self._histograms(kernels.side_counts, (side,), (on_side,), split=j)
        hist = np.empty_like(on_side)
        if not kernels.shifted_histogram(memo.hist, on_side, self._counts, counted, other,
                                         float(c), hist):
            return self.project(target, random_state=random_state)
        return self._answer_shifted(target, (hist, memo.age + 1), random_state)

    def _answer_shifted(self, target: np.ndarray, shifted: tuple,
                        random_state: int | None) -> Hypothesis:
        """:meth:`_project` from the shifted histogram, with ``project``'s checks."""
        target = check_query(target, self.n_samples, "target", finite=False)
        self._require("project", 1)
        h = self._checked(self._project(target, None, random_state, shifted), target.shape,
                          finite=self._project_outputs_finite)
        self._check_squared_norm(h, None, target)
        return h
