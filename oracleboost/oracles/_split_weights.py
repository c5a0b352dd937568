"""The weights a tree's greedy split search sees, when some rows outweigh the rest by far.

scikit-learn's trees search splits with running sums over the rows of a node and take
a side's weight as ``total − left``, in float64.  A row lighter than about ``2**-52``
times the heaviest row of its node is lost in that difference: with one weight ``1e200``
times the others, every node that holds the heavy row sees the other rows' weights as 0
(or as rounding noise), so the search splits at random or not at all, and
:class:`~oracleboost.oracles.TreeOracle`'s trees came back without a split.  (LightGBM
cannot be helped this way: it estimates a leaf's row count from its share of the
weights, so rows of tiny weight never make a leaf of their own, compressed or not.)

In exact arithmetic such a heavy row pins its leaf's value to its own target, and the
splits are decided by the lighter rows, among themselves.  A search that sees the heavy
row only ``2**20`` times heavier than all lighter rows together pins its leaf just as
well (to ``2**-20`` of the lighter rows' pull) and keeps the lighter rows visible.  So
:func:`split_search_weights` compresses the weights, from the lightest up: a row that
outweighs all lighter rows together by more than ``2**20`` is brought down to that
factor, and every heavier row with it by the same ratio (so ratios among the heavy rows
stay as they were).  Where nothing outweighs its lighter rows so far, the weights are
left alone (and the search is the learner's own on the true weights).

The compressed weights steer the split search only; the oracle refits every leaf value
with the true weights (the exact weighted least-squares value on the partition found).
A side effect, harmless for the search: a few rows far lighter than all the others
(``1e-300`` next to ones) become ``2**-20`` times as heavy as the others instead, so
they can break a near tie between splits.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["PIN_FACTOR", "split_search_weights"]

#: How much heavier than all lighter rows together a row may look to the split search.
PIN_FACTOR = 2.0**20


@numba.njit(cache=True, nogil=True)
def _compress(ascending):  # pragma: no cover - compiled
    """The compressed weights of positive weights sorted in increasing order, and
    whether any weight was changed."""
    n = ascending.shape[0]
    out = np.empty(n)
    lighter = 0.0  # the (compressed) weight of the rows before this one
    factor = 1.0  # by which this row and all heavier ones are scaled
    changed = False
    for i in range(n):
        v = ascending[i] * factor
        if lighter > 0.0 and v > PIN_FACTOR * lighter:
            factor *= PIN_FACTOR * lighter / v
            v = PIN_FACTOR * lighter
            changed = True
        out[i] = v
        lighter += v
    return out, changed


def split_search_weights(w: np.ndarray) -> np.ndarray | None:
    """The weights for a split search (see the module docstring), or ``None`` when they
    are ``w`` itself: always when the positive weights span a ratio below ``2**20``
    (one pass; no sort)."""
    positive = w[w > 0]
    if positive.size == 0 or float(positive.max()) <= PIN_FACTOR * float(positive.min()):
        return None
    order = np.argsort(w, kind="stable")
    start = int(np.searchsorted(w[order], 0.0, side="right"))  # zero weights stay 0
    compressed, changed = _compress(w[order[start:]])
    if not changed:
        return None
    out = np.zeros_like(w)
    out[order[start:]] = compressed
    return out
