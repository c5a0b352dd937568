"""The GPU's kernels for scores of one column a class: a multiclass fit's ``(n, K)`` rows.

Compiled the first time they are asked for (:func:`class_kernels`); importing this module
imports nothing of ``numba.cuda``.  A thread takes a row (striding over the rows with the
whole grid, as :mod:`.row_kernels`' kernels do) and its K classes in class order, so a
row's value is made by the CPU's operations in the CPU's order
(:mod:`oracleboost.losses.multiclass`, :func:`oracleboost._numerics.class_probabilities`,
:mod:`oracleboost.rows.column_kernels`), and any launch gives the same bits.

These kernels write their sums' terms, one per row, and fold nothing themselves:
:meth:`~oracleboost.cuda.reductions.Reductions.tally` folds and settles them (exact
extremes, fixed-point sums).  That is a launch more a reduction than :mod:`.row_kernels`'
fused folds, and keeps this module free of the device functions that name ``cuda``
(which only the kernels of their own module may call on the simulator).  Elementwise
work on ``(n, K)`` arrays (a sum of terms, a power of two) runs :mod:`.row_kernels`' own
kernels on the flat ``n·K`` view.

The losses by code (:data:`CLASS_LOSS_CODES`): the softmax cross-entropy, and the
multiclass hinge with either rule for tied wrong classes.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

from oracleboost.cuda.device import counted, cuda_module
from oracleboost.cuda.row_kernels import MIRROR_UPDATES, row_kernels

__all__ = ["CLASS_LOSS_CODES", "class_kernels"]

#: ``numba.cuda``, set by :func:`class_kernels` (a module global: the simulator swaps a
#: kernel's module global ``cuda`` for its own around a launch).
cuda: Any = None

#: The multiclass losses the device computes: their code in the kernels.
#: (:class:`~oracleboost.losses.SoftmaxCrossEntropy`; :class:`~oracleboost.losses.
#: MulticlassHinge` with ``tie="first"`` and ``tie="average"``.)
CLASS_LOSS_CODES: dict[str, int] = {"softmax": 0, "multiclass_hinge/first": 1,
                                    "multiclass_hinge/average": 2}


@functools.cache
def class_kernels() -> SimpleNamespace:
    """The kernels (compiled on first launch), as a namespace."""
    global cuda
    cuda = cuda_module()
    larger = row_kernels().larger  # (Python's max of two numbers)
    lazy, active = MIRROR_UPDATES["lazy"], MIRROR_UPDATES["active"]

    @cuda.jit(device=True)
    def wrong_top(f, i, y):  # pragma: no cover - device code
        """``max_{k≠y} f[i, k]`` and its first index (a NaN is the answer, as NumPy's
        ``max`` and ``argmax`` give it)."""
        top, at = -math.inf, -1
        for k in range(f.shape[1]):
            x = f[i, k]
            if k == y:
                continue
            if x != x:
                return x, k
            if x > top or at < 0:
                top, at = x, k
        return top, at

    @cuda.jit(device=True)
    def first_largest(f, i):  # pragma: no cover - device code
        """The class row ``i`` of ``f`` votes for: its first largest score (NumPy's
        ``argmax``, ``predict``'s ties to the lowest class)."""
        best, at = f[i, 0], 0
        for k in range(1, f.shape[1]):
            if f[i, k] > best:
                best, at = f[i, k], k
        return at

    @cuda.jit(device=True)
    def row_loss(code, f, i, y):  # pragma: no cover - device code
        """Row ``i``'s loss.  Softmax: ``logsumexp_k(f_k − f_y)`` as SciPy's
        ``logsumexp`` makes it (the largest terms set apart: ``log1p(Σ_rest e^{d −
        top} / m) + log m + top``, ``m`` the number of largest terms, the rest summed in
        class order); the hinge: ``max(0, 1 + max_{k≠y} f_k − f_y)``."""
        fy = f[i, y]
        if code != 0:
            top, _ = wrong_top(f, i, y)
            return larger(0.0, 1.0 + top - fy)
        top = -math.inf
        for k in range(f.shape[1]):
            top = larger(top, f[i, k] - fy)
        m = 0.0
        rest = 0.0
        for k in range(f.shape[1]):
            d = f[i, k] - fy
            if d == top:
                m += 1.0
            else:
                rest += math.exp(d - top)
        if rest != 0.0:
            rest = rest / m
        return math.log1p(rest) + math.log(m) + top

    @cuda.jit
    def fill_rows(out, row):  # pragma: no cover - device code
        """Every row of ``out`` (n, K) is ``row`` (K,)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            for k in range(out.shape[1]):
                out[i, k] = row[k]

    @cuda.jit
    def index_terms(y, s, c0, terms):  # pragma: no cover - device code
        """``terms[c, i] = s_i [y_i = c0 + c]`` (``s`` of length 0: unit weights): the
        classes' masses, a channel a class."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, y.shape[0], stride):
            w = s[i] if weighted else 1.0
            for c in range(terms.shape[0]):
                terms[c, i] = w if y[i] == c0 + c else 0.0

    @cuda.jit
    def descent(code, y, f, out):  # pragma: no cover - device code
        """``out = −∇l(y, f)`` a row.  Softmax: ``−(p − e_y)``, ``p`` the row's softmax
        as :func:`oracleboost._numerics.class_probabilities` makes it (``std::max``'s
        maximum, ``exp(f_k − top)``, their sum in class order, each divided by it).
        The hinge (Crammer & Singer): ``−(e_{k*} − e_y)`` where ``1 + f_{k*} − f_y >
        0``, ``k*`` the first largest wrong class (``tie="first"``) or each of the tied
        ones a share (``"average"``), else ``−0``; the CPU's operations in its order
        (:class:`oracleboost.losses.MulticlassHinge`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        K = f.shape[1]
        for i in range(start, f.shape[0], stride):
            yi = y[i]
            if code == 0:
                top = f[i, 0]
                for k in range(1, K):
                    top = top if f[i, k] < top else f[i, k]
                total = 0.0
                for k in range(K):
                    e = math.exp(f[i, k] - top)
                    out[i, k] = e
                    total += e
                for k in range(K):
                    p = out[i, k] / total
                    out[i, k] = -(p - 1.0) if k == yi else -p
                continue
            top, at = wrong_top(f, i, yi)
            active = 1.0 + top - f[i, yi] > 0.0
            tied = 0.0
            for k in range(K):
                if k != yi and f[i, k] == top:
                    tied += 1.0
            for k in range(K):
                g = 0.0
                if k == yi:
                    g = -1.0
                elif code == 1:
                    g = 1.0 if k == at else 0.0
                elif f[i, k] == top:
                    g = 1.0 / tied
                out[i, k] = -g if active else -0.0

    @cuda.jit
    def loss_terms(code, y, f, s, terms):  # pragma: no cover - device code
        """``terms[i] = l(y_i, f_i) · s_i`` (``s`` of length 0: ``l``)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, f.shape[0], stride):
            x = row_loss(code, f, i, y[i])
            terms[i] = x * s[i] if weighted else x

    @cuda.jit
    def vote_terms(y, f, s, terms):  # pragma: no cover - device code
        """``terms = (s [argmax f ≠ y], f_y − max_{k≠y} f_k)`` a row (the argmax's ties
        to the lowest class, as ``predict``'s)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, f.shape[0], stride):
            at = first_largest(f, i)
            yi = y[i]
            top, _ = wrong_top(f, i, yi)
            terms[0, i] = (s[i] if weighted else 1.0) if at != yi else 0.0
            terms[1, i] = f[i, yi] - top

    @cuda.jit
    def products(a, b0, b1, nb, s, terms):  # pragma: no cover - device code
        """``terms[c, i] = s_i Σ_k a_ik b_ik`` for ``b0`` (and ``b1``: ``nb`` of them),
        each row's sum in class order from 0 (:func:`oracleboost.rows.column_kernels.
        _weighted_inner`'s), and ``terms[nb, i] = max_k |a_ik|``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, a.shape[0], stride):
            top = 0.0
            for k in range(a.shape[1]):
                x = abs(a[i, k])
                top = math.inf if x != x else larger(top, x)
            terms[nb, i] = top
            for c in range(nb):
                row = 0.0
                for k in range(a.shape[1]):
                    row += a[i, k] * (b0[i, k] if c == 0 else b1[i, k])
                terms[c, i] = s[i] * row if weighted else row

    @cuda.jit
    def residual_terms(t, a, coef, s, terms):  # pragma: no cover - device code
        """``terms[i] = s_i Σ_k (t_ik − coef a_ik)²`` (:func:`oracleboost.rows.
        column_kernels._weighted_residual`'s)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, t.shape[0], stride):
            row = 0.0
            for k in range(t.shape[1]):
                r = t[i, k] - coef * a[i, k]
                row += r * r
            terms[i] = s[i] * row if weighted else row

    @cuda.jit
    def scaled_rows(s, a, out):  # pragma: no cover - device code
        """``out[i, k] = s_i · a_ik``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, a.shape[0], stride):
            for k in range(a.shape[1]):
                out[i, k] = s[i] * a[i, k]

    @cuda.jit
    def row_centred(r, out):  # pragma: no cover - device code
        """``out = r`` less each row's mean (:func:`oracleboost.oracles.stumps.
        row_centred`'s: the row's sum in class order, over K)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        K = r.shape[1]
        for i in range(start, r.shape[0], stride):
            total = 0.0
            for k in range(K):
                total += r[i, k]
            mean = total / K
            for k in range(K):
                out[i, k] = r[i, k] - mean

    @cuda.jit
    def stump_rows(codes, feature, t, leaves, out):  # pragma: no cover
        """A vector stump's outputs on the training rows: the right leaf ``leaves[1]``
        (K,) where ``codes[feature] > t``, the left ``leaves[0]`` elsewhere (``feature <
        0``: the right)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            side = 0 if feature >= 0 and codes[feature, i] <= t else 1
            for k in range(out.shape[1]):
                out[i, k] = leaves[side, k]

    # -- predictions: a vector stump ensemble's scores on X on the device --------------
    @cuda.jit(device=True)
    def goes_left(X, i, feature, threshold, nan_left, r):  # pragma: no cover
        """Whether row ``i`` takes round ``r``'s left leaf: ``x_j ≤ θ``, a NaN to the
        stump's side (:meth:`oracleboost.oracles.stumps._Stump.predict`'s test)."""
        x = float(X[i, feature[r]])
        return nan_left[r] if x != x else x <= threshold[r]

    @cuda.jit
    def stump_scores(X, feature, threshold, lo, hi, nan_left, start,
                     out):  # pragma: no cover - device code
        """``out[i] = start + Σ_r term_r`` a class, the rounds added in order from the
        intercept row ``start`` (K,): the CPU's running sum's bits
        (:func:`oracleboost.oracles._stump_kernels.stump_sum`)."""
        begin_, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(begin_, X.shape[0], stride):
            for k in range(out.shape[1]):
                out[i, k] = start[k]
            for r in range(feature.shape[0]):
                left = goes_left(X, i, feature, threshold, nan_left, r)
                for k in range(out.shape[1]):
                    out[i, k] += lo[r, k] if left else hi[r, k]

    @cuda.jit
    def stump_round(X, feature, threshold, lo, hi, nan_left, r,
                    out):  # pragma: no cover - device code
        """``out += term_r``: one round of the staged sum."""
        begin_, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(begin_, X.shape[0], stride):
            left = goes_left(X, i, feature, threshold, nan_left, r)
            for k in range(out.shape[1]):
                out[i, k] += lo[r, k] if left else hi[r, k]

    # -- MABoost's multiclass cells: N rows of K − 1 cells (boosters.mirror.cells) ------
    @cuda.jit(device=True)
    def row_sum(a, i, width):  # pragma: no cover - device code
        """``a[i·width] + (a[i·width + 1] + …)``: the order of NumPy's sum of a row of up
        to 9 cells (its first cell, then the others' pairwise sum, a running sum from
        −0 below 8 terms); more cells add in turn (rounding apart from NumPy's)."""
        rest = -0.0
        for k in range(1, width):
            rest += a[i * width + k]
        return a[i * width] + rest

    @cuda.jit
    def cell_start(s, total, width, out):  # pragma: no cover - device code
        """Each row's ``(s_i / total) / width`` on its cells (``s`` of length 0: unit
        weights)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        n = out.shape[0] // width
        for i in range(start, n, stride):
            x = (s[i] / total if weighted else 1.0 / total) / width
            for k in range(width):
                out[i * width + k] = x

    @cuda.jit
    def cell_caps(group, cap, width, out):  # pragma: no cover - device code
        """Each cell's cap: ``cap`` on a secondary row's cells, ``inf`` elsewhere."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, group.shape[0], stride):
            x = cap if group[i] else math.inf
            for k in range(width):
                out[i * width + k] = x

    @cuda.jit
    def row_masses(w, width, q):  # pragma: no cover - device code
        """Each row's mass ``q_i = Σ_k W_ik`` (:func:`row_sum`'s order)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, q.shape[0], stride):
            q[i] = row_sum(w, i, width)

    @cuda.jit
    def cell_query(q, a, total, out):  # pragma: no cover - device code
        """``out = (q / total) e_a`` a row: ``(q_i / total) · [k = a_i]``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            x = q[i] / total
            for k in range(out.shape[1]):
                out[i, k] = x * (1.0 if k == a[i] else 0.0)

    @cuda.jit
    def directions(out, a, w, D, pred, terms):  # pragma: no cover - device code
        """From a label-coded answer's outputs (n, K): each row's vote ``argmax`` (the
        first largest), each cell's direction (−1 on every cell of a row voted right,
        +1 on the cell of the class voted wrongly, 0 elsewhere), and the terms ``(−Σ_k
        W_ik D_ik, [vote ≠ a])`` of the edge and of the rows voted wrong."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        width = out.shape[1] - 1
        for i in range(start, out.shape[0], stride):
            at = first_largest(out, i)
            pred[i] = at
            right = at == a[i]
            wrong_cell = at - (1 if at > a[i] else 0)
            for k in range(width):
                if right:
                    D[i * width + k] = -1.0
                else:
                    D[i * width + k] = 1.0 if k == wrong_cell else 0.0
            first = w[i * width] * D[i * width]
            rest = -0.0
            for k in range(1, width):
                rest += w[i * width + k] * D[i * width + k]
            terms[0, i] = -(first + rest)
            terms[1, i] = 0.0 if right else 1.0

    @cuda.jit
    def cell_step(kind, w, z, D, eta, out):  # pragma: no cover - device code
        """Algorithm 1 (c) over the cells, by the update's code
        (:data:`~.row_kernels.MIRROR_UPDATES`): ``z + (η D)`` (lazy), or ``∇R(w) + (η
        D)`` with the entropy's ``log w`` (−inf at 0; active) or the Euclidean ``w``
        (:data:`~.row_kernels.ACTIVE_EUCLIDEAN`)."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.shape[0], stride):
            step = eta * D[i]
            if kind == lazy:
                base = z[i]
            elif kind == active:
                base = -math.inf if w[i] == 0.0 else math.log(w[i])
            else:
                base = w[i]
            out[i] = base + step

    @cuda.jit
    def cell_vote(f, pred, a, s, eta, f_next, terms):  # pragma: no cover - device code
        """The running vote ``f + η e_pred`` and the terms ``(s [margin ≤ 0], s [argmax
        ≠ a], margin)``, the margin ``f_a − max_{k≠a} f_k`` of the new vote."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        weighted = s.shape[0] > 0
        for i in range(start, f.shape[0], stride):
            for k in range(f.shape[1]):
                f_next[i, k] = f[i, k] + eta * (1.0 if k == pred[i] else 0.0)
            at = first_largest(f_next, i)
            yi = a[i]
            top, _ = wrong_top(f_next, i, yi)
            margin = f_next[i, yi] - top
            w = s[i] if weighted else 1.0
            terms[0, i] = w if margin <= 0.0 else 0.0
            terms[1, i] = w if at != yi else 0.0
            terms[2, i] = margin

    @cuda.jit
    def zeros_of(w, out):  # pragma: no cover - device code
        """``out = [w = 0]``."""
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, w.shape[0], stride):
            out[i] = 1.0 if w[i] == 0.0 else 0.0

    kernels = (fill_rows, index_terms, descent, loss_terms, vote_terms, products,
               residual_terms, scaled_rows, row_centred, stump_rows, stump_scores,
               stump_round, cell_start, cell_caps, row_masses, cell_query, directions,
               cell_step, cell_vote, zeros_of)
    return SimpleNamespace(**{k.__name__: counted(k) for k in kernels})
