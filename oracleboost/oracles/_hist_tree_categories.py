"""Categorical features of :class:`~oracleboost.oracles.HistTreeOracle`: their bins and
LightGBM's search for the set of categories a split sends left.

Bins.  A categorical column holds category codes (integers ≥ 0 as float64, NaN for a
missing value; :func:`~oracleboost.oracles.base.check_categorical_features`).  It gets
one bin a category, as LightGBM's ``BinMapper`` gives it: bin 0 holds the missing
values (and every category not kept), bins ``1 .. m`` the categories, most frequent
first (counted over every row; ties: the smaller code first).  At most
:data:`MAX_CATEGORIES` categories are kept, so that a bin is one byte; the less
frequent ones share bin 0 with the missing values.  Bin 0 never goes left, so a split
sends a missing value, a category not kept and (at prediction) a category not seen in
training right, as LightGBM's ``Tree::CategoricalDecision`` sends them.

The search (LightGBM's ``FeatureHistogram::FindBestThresholdCategoricalInner``, without
its random and quantised variants).  With ``count`` rows in the leaf and ``H`` its
weight, a bin's rows are estimated ``round(H_b · count / H)``.

* A feature of at most ``max_cat_to_onehot`` bins (its categories and bin 0, as LightGBM
  counts them) is split one category against the rest: each category with
  ``min_data_in_leaf`` rows and ``min_child_weight`` on both sides.
* Otherwise the categories of at least ``cat_smooth`` rows are sorted by
  ``G_b / (H_b + cat_smooth)`` (stably), and the sets made of the first ``1, 2, …``
  of them, from either end, up to ``min(max_cat_threshold, (used + 1) // 2)``
  categories, are scanned: a set is a candidate once it and the rest have
  ``min_data_in_leaf`` rows and ``min_child_weight`` of weight, the rest at least
  ``min_data_per_group`` rows, and the categories added since the last candidate at
  least ``min_data_per_group`` rows.  The children's gains use ``λ + cat_l2``.

The gain is LightGBM's: ``G_L² / (H_L + λ') + G_R² / (H_R + λ')`` less the leaf's
``G² / (H + λ)``, summed over the query's K channels; the left side's weight starts at
LightGBM's ``kEpsilon`` as its does.  Under monotone constraints on other features
each side's output is clamped to the leaf's bounds and its gain taken there, as the
threshold splits' are.  With K > 1 (vector queries) the categories are
sorted by each channel in turn and every order scanned (K = 1: LightGBM's one order).
A later candidate wins only when strictly better: one-vs-rest in bin order; else the
orders by channel, each from the low end, then from the high end, each set by size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np
import scipy.sparse as sp

from oracleboost.oracles._hist_tree_kernels import NOISE, _clamped, _gain, _gain_at

__all__ = ["MAX_CATEGORIES", "CategoryBins"]

#: Most categories of a feature with a bin of their own (bins 1 .. 255; bin 0 is for
#: missing values and the categories beyond these).
MAX_CATEGORIES = 255

#: LightGBM's ``kEpsilon``: the weight its categorical scan starts a left side with.
_EPSILON = 1e-15


class CategoryBins:
    """The bins of a bound oracle's categorical features.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        The validated float64 rows (a sparse column's implicit zeros are code 0).
    features : sequence of int
        The categorical columns (sorted, checked by ``check_categorical_features``).

    Attributes
    ----------
    features : ndarray of int
        The categorical columns.
    is_categorical : ndarray of bool, shape (n_features,)
    category : list of ndarray of int64
        For each categorical column (in the order of ``features``), the category code
        of bin ``b`` at ``category[k][b - 1]``.
    column_bins : list of ndarray of uint8
        Each categorical column's bin of every row.
    """

    def __init__(self, X, features: Sequence[int]) -> None:
        d = X.shape[1]
        self.features = np.asarray(features, dtype=np.int64)
        self.is_categorical = np.zeros(d, dtype=np.bool_)
        self.is_categorical[self.features] = True
        self.category: list[np.ndarray] = []
        self.column_bins: list[np.ndarray] = []
        # each feature's bins (0: not categorical), as the kernel reads them
        self._n_cat_bins = np.zeros(d, dtype=np.int64)
        for j in self.features.tolist():
            column = (np.asarray(X[:, [j]].toarray()).ravel() if sp.issparse(X)
                      else np.asarray(X[:, j]))
            category, bins = _bin_column(column)
            self.category.append(category)
            self.column_bins.append(bins)
            self._n_cat_bins[j] = category.size + 1

    @property
    def n_bins(self) -> int:
        """The bins of the categorical feature with the most (bin 0 included)."""
        return max(c.size for c in self.category) + 1

    def better_split(self, found: tuple | None, hist: np.ndarray, feats: np.ndarray,
                     K: int, total: np.ndarray, count: float, lam: float, min_data: float,
                     min_weight: float, min_gain: float, bounded: bool, lo_bound: float,
                     hi_bound: float, params: tuple) -> tuple | None:
        """A leaf's best split: ``found`` (the best threshold split, ``(gain, j, t,
        nan_left, left_sums)``, or None) or the best set split of a categorical
        feature among ``feats`` (histograms ``hist[s]``; :func:`best_set_split`), as
        ``(gain, j, bins, False, left_sums)`` with ``bins`` (an array) the bins that go
        left, where its gain is larger, or equal on a lower feature (LightGBM's
        ``SplitInfo`` order), and above ``min_gain``.  ``params``: the oracle's
        ``(max_cat_to_onehot, max_cat_threshold, cat_smooth, cat_l2,
        min_data_per_group)``."""
        out_left = np.empty(K + 1)
        out_bins = np.empty(MAX_CATEGORIES, dtype=np.int64)
        gain, s, n_left = best_set_split(
            hist, feats, self._n_cat_bins, K, total, count, lam, min_data, min_weight,
            bounded, lo_bound, hi_bound, *params, out_left, out_bins)
        if s < 0 or not gain > min_gain:
            return found
        j = int(feats[s])
        if found is not None and (found[0] > gain or (found[0] == gain and found[1] < j)):
            return found
        return gain, j, np.sort(out_bins[:n_left]), False, out_left

    def node(self, j: int, bins: np.ndarray, n_hist_bins: int) -> tuple[np.ndarray, np.ndarray]:
        """A split of feature ``j`` sending ``bins`` left: the table ``goes_left[bin]``
        for the rows, and the sorted category codes that go left (the tree's
        ``categories_left``)."""
        goes_left = np.zeros(n_hist_bins, dtype=np.bool_)
        goes_left[bins] = True
        k = int(np.searchsorted(self.features, j))
        return goes_left, np.sort(self.category[k][bins - 1])


def _bin_column(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A categorical column's categories by bin (most frequent first, the smaller code
    among equals; at most :data:`MAX_CATEGORIES`) and each row's bin (0: missing, or a
    category not kept)."""
    present = ~np.isnan(column)
    codes = column[present].astype(np.int64)
    values, counts = np.unique(codes, return_counts=True)
    order = np.lexsort((values, -counts))[:MAX_CATEGORIES]
    category = values[order]
    # each distinct value's bin: 1 + its rank in ``category``, 0 where not kept
    bin_of_value = np.zeros(values.size, dtype=np.uint8)
    bin_of_value[order] = np.arange(1, order.size + 1, dtype=np.uint8)
    bins = np.zeros(column.size, dtype=np.uint8)
    bins[present] = bin_of_value[np.searchsorted(values, codes)]
    return category, bins


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _side_gain(G, H, K, lam, bounded, lo_bound, hi_bound):  # pragma: no cover - compiled
    """A side's ``Σ_c G_c² / (H + λ)``; with ``bounded`` (K = 1) its output clamped to
    the bounds and the gain ``2 G v − (H + λ) v²`` at it (LightGBM's
    ``GetLeafGainGivenOutput``)."""
    if bounded:  # (the numeric scan's own functions: one gain, the same bits)
        return _gain_at(G[0], H, lam, _clamped(G[0], H, lam, lo_bound, hi_bound))
    return _gain(G, H, K, lam)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def best_set_split(hist, feats, n_cat_bins, K, total, count, lam, min_data, min_weight,
                   bounded, lo_bound, hi_bound, max_cat_to_onehot, max_cat_threshold,
                   cat_smooth, cat_l2, min_data_per_group, out_left,
                   out_bins):  # pragma: no cover - compiled
    """The best split by a set of categories of a leaf over the features ``feats``
    whose ``n_cat_bins[j]`` is not 0 (categorical; bins ``1 .. n_cat_bins[j] − 1`` its
    categories), from their histograms ``hist[s]`` of shape (B, K + 1), the leaf's sums
    ``total`` and rows ``count`` (the rules in the module's notes).

    Returns ``(gain, s, n)``: the gain over the leaf's (as
    :func:`._hist_tree_kernels.best_splits` computes the leaf's, so that the two
    compare), the slot in ``feats`` (−1: none valid) and the number of bins that go
    left, which are ``out_bins[:n]``; ``out_left`` gets the left side's sums (without
    the starting ``kEpsilon``).  Features in order, a later one only when strictly
    better."""
    C = K + 1
    H = total[K]
    cnt_factor = count / H if H > 0 else 0.0
    parent = _side_gain(total, H, K, lam, bounded, lo_bound, hi_bound)
    best = 0.0
    best_s = -1
    best_n = 0
    GL = np.empty(C)
    GR = np.empty(C)
    B = hist.shape[1]
    cnt = np.empty(B)
    used = np.empty(B, dtype=np.int64)
    ctr = np.empty(B)
    for s in range(feats.size):
        j = feats[s]
        nb = n_cat_bins[j]
        if nb == 0:
            continue
        h = hist[s]
        for b in range(1, nb):
            cnt[b] = np.floor(h[b, K] * cnt_factor + 0.5)
        if nb <= max_cat_to_onehot:  # one category against the rest
            for b in range(1, nb):
                hb = h[b, K]
                if cnt[b] < min_data or hb < min_weight:
                    continue
                if count - cnt[b] < min_data:
                    continue
                h_rest = H - hb - _EPSILON
                if h_rest < min_weight:
                    continue
                for c in range(C):
                    GR[c] = total[c] - h[b, c]
                children = (_side_gain(GR, h_rest, K, lam, bounded, lo_bound, hi_bound)
                            + _side_gain(h[b], hb + _EPSILON, K, lam, bounded, lo_bound,
                                         hi_bound))
                gain = children - parent
                if gain > best and gain > NOISE * abs(children):
                    best = gain
                    best_s = s
                    best_n = 1
                    out_bins[0] = b
                    for c in range(C):
                        out_left[c] = h[b, c]
            continue
        n_used = 0
        for b in range(1, nb):
            if cnt[b] >= cat_smooth:
                used[n_used] = b
                n_used += 1
        lam_cat = lam + cat_l2
        max_num_cat = min(max_cat_threshold, (n_used + 1) // 2)
        for c_sort in range(K):
            for k in range(n_used):
                b = used[k]
                ctr[k] = h[b, c_sort] / (h[b, K] + cat_smooth)
            order = used[:n_used][np.argsort(ctr[:n_used], kind="mergesort")]
            for direction in range(2):
                for c in range(C):
                    GL[c] = 0.0
                h_left = _EPSILON
                n_left = 0.0
                group = 0.0
                for i in range(min(n_used, max_num_cat)):
                    b = order[i] if direction == 0 else order[n_used - 1 - i]
                    for c in range(C):
                        GL[c] += h[b, c]
                    h_left += h[b, K]
                    n_left += cnt[b]
                    group += cnt[b]
                    if n_left < min_data or h_left < min_weight:
                        continue
                    n_right = count - n_left
                    if n_right < min_data or n_right < min_data_per_group:
                        break
                    h_right = H - h_left
                    if h_right < min_weight:
                        break
                    if group < min_data_per_group:
                        continue
                    group = 0.0
                    for c in range(C):
                        GR[c] = total[c] - GL[c]
                    children = (_side_gain(GL, h_left, K, lam_cat, bounded, lo_bound,
                                           hi_bound)
                                + _side_gain(GR, h_right, K, lam_cat, bounded, lo_bound,
                                             hi_bound))
                    gain = children - parent
                    if gain > best and gain > NOISE * abs(children):
                        best = gain
                        best_s = s
                        best_n = i + 1
                        for q in range(i + 1):
                            out_bins[q] = (order[q] if direction == 0
                                           else order[n_used - 1 - q])
                        for c in range(C):
                            out_left[c] = GL[c]
    return best, best_s, best_n
