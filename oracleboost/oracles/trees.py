"""Hypotheses as trees of threshold splits: the form in which a fitted ensemble leaves
the library (:mod:`oracleboost.export.lightgbm`: a ``lightgbm.Booster``, hence SHAP's TreeSHAP
and every tool that reads LightGBM models).

A hypothesis that is such a tree says so through :meth:`Hypothesis.tree_structure
<oracleboost.oracles.base.Hypothesis.tree_structure>`; the others (a column of a fixed
matrix, a neural net, a linear model) return ``None`` and cannot be exported as trees.

The layout is LightGBM's (``tree.h``): internal nodes ``0 .. L − 2``, node 0 the root;
a child index ``c >= 0`` is an internal node, ``c < 0`` the leaf ``~c``; a row goes left
at node ``i`` iff ``x[feature[i]] <= threshold[i]``, compared in float64, with
LightGBM's rules for missing values (``missing``: 0 none, a NaN read as 0; 1 zero, a
value of magnitude at most 1e-35 goes the default side; 2 NaN, a NaN goes the default
side).  A LightGBM tree grown on category codes also has categorical splits
(``categories_left``): a row goes left iff its code is in the node's set, by
LightGBM's ``Tree::CategoricalDecision``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["TreeStructure", "float32_split"]

#: LightGBM's ``kZeroThreshold``: a value of magnitude at most this is zero to it (its
#: dense rows drop such entries before predicting, and zero-as-missing splits test it).
#: It is the float ``1e-35f``, compared with doubles: 1.0000000180025095e-35, not the
#: double 1e-35 (a value between the two is 0 to LightGBM, and a split at zero has
#: the threshold -1e-35f).
ZERO_THRESHOLD = float(np.float32(1e-35))

MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2


@dataclass(frozen=True)
class TreeStructure:
    """A binary tree of threshold splits with scalar or vector leaves.

    Parameters
    ----------
    n_features : int
        Number of input features of the data it applies to.
    feature, threshold, left, right : ndarray of shape (L − 1,)
        The internal nodes' split feature, threshold (a row goes left iff
        ``x[feature] <= threshold``, in float64) and children (``c >= 0`` an internal
        node, ``c < 0`` the leaf ``~c``).
    value : ndarray of shape (L, K)
        The leaves' outputs (K = 1 for a scalar hypothesis).
    default_left : ndarray of bool, shape (L − 1,)
        Where a missing value goes (see ``missing``).
    missing : ndarray of int, shape (L − 1,)
        LightGBM's missing type of each split: 0 none, 1 zero, 2 NaN.
    leaf_count : ndarray of shape (L,) or None
        How many training rows (or weight) reached each leaf, where the hypothesis knows
        it: the covers of SHAP's path-dependent TreeSHAP.
    categories_left : tuple of (ndarray of int or None), length L − 1, or None
        Categorical splits (LightGBM's trees on category codes): entry i is None for a
        threshold split, else the sorted category codes that go left at node i (its
        ``threshold`` is then unused); None: no categorical split.  A row goes left
        iff ``int(x)`` (truncated) is in the set: NaN, a negative code and a code
        beyond int32 go right, as LightGBM's ``Tree::CategoricalDecision`` sends them
        on x86-64 (where ``static_cast<int>`` of NaN is negative).
    """

    n_features: int
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    default_left: np.ndarray
    missing: np.ndarray
    leaf_count: np.ndarray | None = None
    categories_left: tuple[np.ndarray | None, ...] | None = None

    def __post_init__(self) -> None:
        L = self.value.shape[0]
        if self.value.ndim != 2 or L < 1:
            raise ValueError(f"a tree's leaf values have shape (L, K); got {self.value.shape}")
        for name in ("feature", "threshold", "left", "right", "default_left", "missing"):
            if getattr(self, name).shape != (L - 1,):
                raise ValueError(
                    f"a tree of {L} leaves has {L - 1} internal nodes; its {name} has shape "
                    f"{getattr(self, name).shape}"
                )
        if self.leaf_count is not None and self.leaf_count.shape != (L,):
            raise ValueError(f"leaf_count has shape {self.leaf_count.shape}, not ({L},)")
        if self.categories_left is not None and len(self.categories_left) != L - 1:
            raise ValueError(f"a tree of {L} leaves has {L - 1} internal nodes; its "
                             f"categories_left has {len(self.categories_left)} entries")

    # -- construction ------------------------------------------------------------------
    @classmethod
    def constant(cls, value: float | np.ndarray, n_features: int) -> TreeStructure:
        """The tree of one leaf: ``x -> value``."""
        empty = np.zeros(0)
        return cls(
            n_features=int(n_features), feature=empty.astype(np.intp), threshold=empty,
            left=empty.astype(np.intp), right=empty.astype(np.intp),
            value=np.asarray(value, dtype=np.float64).reshape(1, -1),
            default_left=empty.astype(bool), missing=empty.astype(np.intp),
        )

    @classmethod
    def stump(cls, n_features: int, feature: int, threshold: float,
              left: float | np.ndarray, right: float | np.ndarray,
              nan_left: bool | None = None) -> TreeStructure:
        """``left if x[feature] <= threshold else right``.  ``nan_left`` None: a split
        of missing type none (a NaN is read as 0); a bool: of missing type NaN, a NaN
        going left when True."""
        leaves = np.stack([np.asarray(left, dtype=np.float64).ravel(),
                           np.asarray(right, dtype=np.float64).ravel()])
        return cls(
            n_features=int(n_features), feature=np.array([feature], dtype=np.intp),
            threshold=np.array([threshold], dtype=np.float64),
            left=np.array([-1], dtype=np.intp), right=np.array([-2], dtype=np.intp),
            value=leaves, default_left=np.array([True if nan_left is None else nan_left]),
            missing=np.array([MISSING_NONE if nan_left is None else MISSING_NAN],
                             dtype=np.intp),
        )

    def with_values(self, value: np.ndarray) -> TreeStructure:
        """The same splits with other leaf values, of shape (L, K')."""
        return replace(self, value=np.asarray(value, dtype=np.float64))

    def with_counts(self, leaf_count: np.ndarray | None) -> TreeStructure:
        """The same tree with other covers."""
        return replace(self, leaf_count=leaf_count)

    def pruned(self) -> TreeStructure:
        """The same function without the splits that do not change it: each subtree
        whose leaves all hold the same values becomes one leaf (its covers summed).
        A scikit-learn classification tree splits where the Gini impurity falls even if
        both sides predict the same class; such a split is no split of the function."""
        if self.n_leaves == 1:
            return self
        count = self.leaf_count
        feature, threshold, left, right, default_left, missing = [], [], [], [], [], []
        sets: list[np.ndarray | None] = []
        values: list[np.ndarray] = []
        counts: list[float] = []

        def same(c: int) -> np.ndarray | None:
            """The one value of the subtree's leaves, or None when they differ."""
            if c < 0:
                return self.value[~c]
            a, b = same(int(self.left[c])), same(int(self.right[c]))
            return a if a is not None and b is not None and np.array_equal(a, b) else None

        def cover(c: int) -> float:
            if count is None:
                return 0.0
            if c < 0:
                return float(count[~c])
            return cover(int(self.left[c])) + cover(int(self.right[c]))

        def build(c: int) -> int:
            if c < 0 or same(c) is not None:
                values.append(self.value[~c] if c < 0 else same(c))
                counts.append(cover(c))
                return ~(len(values) - 1)
            i = len(feature)
            feature.append(self.feature[c])
            threshold.append(self.threshold[c])
            default_left.append(self.default_left[c])
            missing.append(self.missing[c])
            sets.append(None if self.categories_left is None else self.categories_left[c])
            left.append(0)
            right.append(0)
            left[i] = build(int(self.left[c]))
            right[i] = build(int(self.right[c]))
            return i

        build(0)
        return TreeStructure(
            n_features=self.n_features, feature=np.array(feature, dtype=np.intp),
            threshold=np.array(threshold, dtype=np.float64),
            left=np.array(left, dtype=np.intp), right=np.array(right, dtype=np.intp),
            value=np.array(values, dtype=np.float64).reshape(len(values), -1),
            default_left=np.array(default_left, dtype=bool),
            missing=np.array(missing, dtype=np.intp),
            leaf_count=None if count is None else np.array(counts),
            categories_left=tuple(sets) if any(c is not None for c in sets) else None,
        )

    # -- reading ------------------------------------------------------------------------
    def digest(self, suffix: str = "") -> str:
        """A name of the function (splits, leaves and missing-value rules; not the
        covers), with ``suffix`` appended: equal trees get equal names, so that an
        ensemble gives them one coefficient."""
        h = hashlib.sha256()
        for a in (self.feature, self.threshold, self.left, self.right, self.value,
                  self.default_left, self.missing):
            h.update(np.ascontiguousarray(a).tobytes())
        for cats in self.categories_left or ():
            h.update(b"-" if cats is None else np.ascontiguousarray(cats).tobytes())
        h.update(suffix.encode())
        return h.hexdigest()

    @property
    def n_leaves(self) -> int:
        return int(self.value.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self.value.shape[1])

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf each row of ``X`` (float64, shape (n, n_features)) reaches, by
        LightGBM's rules (``NumericalDecision``, and its dense rows, which read a value
        of magnitude at most 1e-35 as 0; ``CategoricalDecision`` at categorical
        splits)."""
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        node = np.zeros(n, dtype=np.intp)
        if self.n_leaves == 1:
            return node
        active = np.arange(n)
        while active.size:
            i = node[active]
            x = X[active, self.feature[i]]
            x = np.where(np.abs(x) <= ZERO_THRESHOLD, 0.0, x)
            missing = self.missing[i]
            is_nan = np.isnan(x)
            x = np.where(is_nan & (missing != MISSING_NAN), 0.0, x)
            default = ((missing == MISSING_ZERO) & (x == 0.0)) | (
                (missing == MISSING_NAN) & is_nan)
            with np.errstate(invalid="ignore"):
                go_left = np.where(default, self.default_left[i], x <= self.threshold[i])
            if self.categories_left is not None:
                self._categorical_sides(i, X[active, self.feature[i]], go_left)
            child = np.where(go_left, self.left[i], self.right[i])
            node[active] = child
            active = active[child >= 0]
        return ~node

    def _categorical_sides(self, node: np.ndarray, x: np.ndarray, go_left: np.ndarray) -> None:
        """Set ``go_left`` (in place) for the rows at categorical nodes: left iff the
        truncated code is in the node's set; NaN, negative codes and codes beyond
        int32 go right (LightGBM's ``CategoricalDecision`` on x86-64)."""
        for c in np.unique(node):
            cats = self.categories_left[c]
            if cats is None:
                continue
            at = node == c
            v = x[at]
            with np.errstate(invalid="ignore"):
                ok = (v > -1.0) & (v < 2.0**31)  # False for NaN
            code = np.trunc(np.where(ok, v, 0.0)).astype(np.int64)
            go_left[at] = ok & np.isin(code, cats)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The leaves' values for the rows of ``X``: shape (n,) when K = 1, else (n, K)."""
        out = self.value[self.apply(X)]
        return out[:, 0] if self.n_outputs == 1 else out

    def internal_counts(self, leaf_count: np.ndarray) -> np.ndarray:
        """Each internal node's cover: the sum of its leaves' covers."""
        counts = np.zeros(self.n_leaves - 1)

        def total(c: int) -> float:
            if c < 0:
                return float(leaf_count[~c])
            counts[c] = total(int(self.left[c])) + total(int(self.right[c]))
            return float(counts[c])

        if self.n_leaves > 1:
            total(0)
        return counts


def float32_split(threshold: float) -> float:
    """The float64 threshold ``t`` such that ``x <= t`` exactly when
    ``float32(x) <= threshold``: the split of a scikit-learn tree (which casts X to
    float32 and compares it with its float64 threshold) made by a float64 comparison.

    With ``lo`` the largest float32 at most ``threshold`` and ``hi`` the next float32,
    ``float32(x) <= lo`` holds for every x below their midpoint ``m`` (exact in float64),
    and at ``m`` itself when ties round to ``lo`` (round half to even: ``lo``'s last bit
    is 0).  Above float32's range every x rounds to inf and goes right.
    """
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("a split threshold is NaN")
    with np.errstate(over="ignore"):  # beyond float32's range: ±inf, handled below
        lo = np.float32(threshold)
        if float(lo) > threshold:  # rounded up: the float32 below
            lo = np.nextafter(lo, np.float32(-np.inf))
        if np.isinf(lo):
            return threshold  # -inf: nothing is at most it, in either comparison
        hi = np.nextafter(lo, np.float32(np.inf))
    if np.isinf(hi):  # lo is float32's largest: x rounds to it below max + ulp/2
        ulp = float(lo) - float(np.nextafter(lo, np.float32(0)))
        mid = float(lo) + ulp / 2
    else:
        mid = (float(lo) + float(hi)) / 2  # exact: 25 significant bits
    even = int(np.array(lo).view(np.uint32)) & 1 == 0
    return mid if even else float(np.nextafter(mid, -np.inf))
