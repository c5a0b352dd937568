"""Finite hypothesis classes given by their columns: a fixed matrix, or linear coordinates.

Both give the whole correlation vector ``H^T r`` at once (the capability dual-averaging
boosters need).  The class is closed under negation (λ may be signed, Telgarsky 2013
§1), so ``correlate`` returns the column with the largest *absolute* inner product,
negated when that inner product is negative; ties go to the lowest column index.
This is Telgarsky's Gauss–Southwell oracle ``argmax_j |(A^T ∇L)_j|``: columns are taken
at the scale they are given (no division by ``||h||``), so give ±1 or [−1, 1] columns
for the papers' guarantees.  ``project`` returns the single best scaled column in
weighted least squares.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
import scipy.sparse as sp

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_finite_array
from oracleboost.oracles import _column_products as products
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Hypothesis,
    Oracle,
    _validated_form,
    check_X,
    max_abs,
)
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks, check_n_jobs, ordered_sum
from oracleboost.rows.partitioned import NotDistributedError

__all__ = ["MatrixOracle", "LinearOracle", "MatrixColumn", "LinearCoordinate"]


class MatrixColumn(Hypothesis):
    """Column ``j`` of a fixed hypothesis matrix, times ``scale``; ``X`` holds row indices."""

    def __init__(self, column: np.ndarray, j: int, scale: float) -> None:
        self.column = column
        self.j = int(j)
        self.scale = float(scale)
        self.key = ("column", self.j)

    def predict(self, X: ArrayLike) -> np.ndarray:
        with np.errstate(over="ignore"):  # beyond float64: the booster names the oracle
            return self.scale * self.column[_row_indices(X, len(self.column))]

    @classmethod
    def predict_columns(cls, hypotheses: Sequence[Hypothesis], X: Any) -> np.ndarray:
        """Every column at the rows X indexes, the row indices checked once (not once a
        column): the products :meth:`predict` forms."""
        lengths = {len(h.column) for h in hypotheses if type(h) is cls}
        if len(lengths) != 1 or not all(type(h) is cls for h in hypotheses):
            return super().predict_columns(hypotheses, X)
        rows = _row_indices(X, lengths.pop())
        with np.errstate(over="ignore"):  # beyond float64: the booster names the oracle
            return np.column_stack([h.scale * h.column[rows] for h in hypotheses])

    def __repr__(self) -> str:
        return f"MatrixColumn(j={self.j}, scale={self.scale:g})"


class LinearCoordinate(Hypothesis):
    """The coordinate hypothesis ``x ↦ scale · x_j``."""

    def __init__(self, j: int, scale: float) -> None:
        self.j = int(j)
        self.scale = float(scale)
        self.key = ("feature", self.j)

    def predict(self, X: ArrayLike) -> np.ndarray:
        return self._predict_validated(check_X(X, accept_sparse=True))

    def _predict_validated(self, X) -> np.ndarray:
        # sparse X: its column j alone, made dense (X.toarray()'s zeros, the same bits)
        column = X[:, [self.j]].toarray().ravel() if sp.issparse(X) else X[:, self.j]
        with np.errstate(over="ignore"):  # beyond float64: the booster names the oracle
            return self.scale * column

    @classmethod
    def predict_columns(cls, hypotheses: Sequence[Hypothesis], X: Any) -> np.ndarray:
        """``scale_r · X[:, j_r]`` for every coordinate at once (validated X, dense or
        sparse): the products :meth:`predict` forms, column by column, in one gather."""
        if not (_validated_form(X) and all(type(h) is cls for h in hypotheses)):
            return super().predict_columns(hypotheses, X)
        js = np.array([h.j for h in hypotheses], dtype=np.intp)
        scales = np.array([h.scale for h in hypotheses], dtype=np.float64)
        columns = X[:, js].toarray() if sp.issparse(X) else X[:, js]
        with np.errstate(over="ignore"):  # beyond float64: the booster names the oracle
            return columns * scales

    def feature_importances(self, n_features: int) -> np.ndarray:
        out = np.zeros(n_features)
        out[self.j] = 1.0
        return out

    def __repr__(self) -> str:
        return f"LinearCoordinate(j={self.j}, scale={self.scale:g})"


def _row_indices(X, n_rows: int) -> np.ndarray:
    if sp.issparse(X):  # row indices are no sparse data: check_X's refusal names X
        check_X(X, who="MatrixOracle (X holds row indices into H)")
    idx = np.asarray(X)
    if idx.ndim == 2 and idx.shape[1] == 1:
        idx = idx[:, 0]
    if idx.ndim != 1:
        raise ValueError(
            f"X must hold row indices into the hypothesis matrix, shape (n,) or (n, 1); "
            f"got shape {idx.shape}"
        )
    if idx.size and not np.all(np.isfinite(idx.astype(np.float64))):
        raise ValueError("X contains NaN or inf; it must hold integer row indices")
    as_int = idx.astype(np.int64)
    if idx.size and (np.any(as_int != idx) or as_int.min() < 0 or as_int.max() >= n_rows):
        raise ValueError(f"X must hold integer row indices in [0, {n_rows}); got {idx[:5]}...")
    return as_int


def _check_blocks(oracle) -> None:
    """The oracle's ``n_jobs`` and ``block_size``, checked at ``bind``."""
    check_n_jobs(oracle.n_jobs)
    bs = oracle.block_size
    if isinstance(bs, bool) or not isinstance(bs, numbers.Integral) or bs < 1:
        raise ValueError(f"block_size must be a positive int; got {bs!r}")


def _scaled(v: np.ndarray, k: int) -> np.ndarray:
    """``v · 2**-k`` (exact) as C-ordered rows of shape (m, K)."""
    return np.ascontiguousarray(v if k == 0 else np.ldexp(v, -k)).reshape(v.shape[0], -1)


def unscaled(out: np.ndarray, k: int) -> np.ndarray:
    """``out · 2**k``; entries beyond float64 become ±inf (the public methods say so)."""
    if k == 0:
        return out
    with np.errstate(over="ignore"):
        return np.ldexp(out, k)


def transposed_parts(blocks: RowBlocks, A: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """Each lane's ``(Aᵀ (r · 2**-k))ᵀ``, shape (lanes, K, J): added in lane order, the
    product (:mod:`._column_products`)."""
    R = _scaled(r, k)
    parts = np.zeros((blocks.n_lanes, R.shape[1], A.shape[1]))
    if sp.issparse(A):
        blocks.lane_map(lambda q0, q1, lo, hi: products.sparse_transposed_times(
            A.indptr, A.indices, A.data, R, lo, hi, blocks.lane, parts[q0:q1]))
        return parts
    blocks.lane_map(lambda q0, q1, lo, hi: products.transposed_times(
        A, R, lo, hi, blocks.lane, parts[q0:q1]))
    return parts


def rows_times(blocks: RowBlocks, A: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """``A (w · 2**-k)``, each row's sum over the columns in order, shaped as ``w``'s
    rows (n,) or (n, K)."""
    W = _scaled(w, k)
    out = blocks.empty((A.shape[0], W.shape[1]))
    if sp.issparse(A):
        blocks.lane_map(lambda q0, q1, lo, hi: products.sparse_times(
            A.indptr, A.indices, A.data, W, lo, hi, out))
    else:
        blocks.lane_map(lambda q0, q1, lo, hi: products.times(A, W, lo, hi, out))
    return out.reshape((A.shape[0],) + w.shape[1:])


def projection_parts(blocks: RowBlocks, A: np.ndarray, w: np.ndarray | None,
                     target: np.ndarray, e_w: int, e_t: int,
                     col_exp: np.ndarray) -> np.ndarray:
    """Each lane's ``b = A_sᵀ(w_s t_s)`` and ``q = (A_s²)ᵀ w_s`` (shape (lanes, 2, J))
    on values scaled by powers of two (exact): column j by ``2**-col_exp[j]``, ``w`` by
    ``2**-e_w``, ``t`` by ``2**-e_t`` (``w`` None: ones)."""
    w = np.ones(A.shape[0]) if w is None else w
    w_s = np.ldexp(w, -e_w)
    wt_s = w_s * np.ldexp(target, -e_t)
    col_scale = np.ldexp(1.0, -col_exp)
    parts = np.zeros((blocks.n_lanes, 2, A.shape[1]))
    if sp.issparse(A):
        blocks.lane_map(lambda q0, q1, lo, hi: products.sparse_projection_sums(
            A.indptr, A.indices, A.data, col_scale, w_s, wt_s, lo, hi, blocks.lane,
            parts[q0:q1]))
        return parts
    blocks.lane_map(lambda q0, q1, lo, hi: products.projection_sums(
        A, col_scale, w_s, wt_s, lo, hi, blocks.lane, parts[q0:q1]))
    return parts


def column_exponents(peaks: np.ndarray) -> np.ndarray:
    """Per column j: ``max |A_j| < 2**e_j`` from the columns' peaks (at least -1000, so
    that the factor 2**-e stays finite for tiny columns)."""
    return np.maximum(np.frexp(peaks)[1], -1000)


class BoundColumns(BoundOracle):
    """A finite class held as its matrix ``A`` on the training points (n, J).

    Products with ``A`` are computed so that nothing overflows on the way (columns near
    1e308, or squared above ~1e154, made ``A.T @ r`` and ``A**2`` overflow): a query
    vector is scaled by a power of two first where the product could pass float64's
    range, and ``project`` works on values scaled by powers of two.  Powers of two
    scale exactly, so on ordinary data the answers are those of the plain formulas.

    The sums over rows (``Aᵀ r``, ``project``'s) are made by lanes of ``blocks``
    (:mod:`oracleboost.rows.blocks`) on its threads and added in lane order, each row's sum
    over the columns (``A w``) in column order: the same bits for every ``n_jobs``, on
    every CPU (:mod:`._column_products`), and on a cluster's partitions
    (:mod:`oracleboost.oracles.partitioned_columns`).
    """

    def __init__(self, oracle, A: np.ndarray, make, blocks: RowBlocks | None = None):
        super().__init__(oracle, A.shape[0])
        self.A = A
        self._make = make
        self.blocks = blocks if blocks is not None else RowBlocks(
            A.shape[0], int(oracle.block_size), oracle.n_jobs)
        # per column j: max |A_j| < 2**col_exp[j]; computed on first use
        self._col_exp: np.ndarray | None = None

    @property
    def n_columns(self) -> int:
        return self.A.shape[1]

    def row(self, i: int, *others: np.ndarray) -> tuple:
        # (a row of sparse A made dense alone, not the whole matrix each step)
        a = self.A[i].toarray()[0] if sp.issparse(self.A) else self.A[i]
        return (a, *(o[i] for o in others))

    def _column_exponents(self) -> np.ndarray:
        if self._col_exp is None:
            A = self.A
            peaks = (abs(A).max(axis=0).toarray().ravel() if sp.issparse(A)  # zeros: 0
                     else np.maximum(A.max(axis=0), -A.min(axis=0)))
            self._col_exp = column_exponents(peaks)
        return self._col_exp

    def _overflow_shift(self, peak: float, length: int) -> int:
        """``k > 0`` when a product with a vector of ``max |v| = peak`` could pass
        float64's range unless ``v`` is scaled by ``2**-k`` first; else 0.  Every partial
        sum is at most ``max|A| · Σ|v_i| < 2**(e_A + e_v + bits(length))``."""
        e_a = int(self._column_exponents().max())
        e_v = int(np.frexp(peak)[1])
        return max(0, e_a + e_v + int(length).bit_length() - 1021)

    def _transposed(self, r, unscale: bool = True) -> np.ndarray:
        """``Aᵀ r`` (``r`` of shape (n,) or (n, K)), by lanes added in order, without
        overflow on the way: ``r`` is scaled by ``2**-k`` (exact) where needed and the
        product by ``2**k`` after (``unscale``), or left scaled for callers that only
        compare."""
        k = self._overflow_shift(max_abs(r), self.n_samples)
        parts = transposed_parts(self.blocks, self.A, r, k)
        return self._finish_transposed(parts, k, unscale, np.ndim(r))

    def _finish_transposed(self, parts: np.ndarray, k: int, unscale: bool,
                           ndim: int) -> np.ndarray:
        out = ordered_sum(parts).T
        out = out[:, 0] if ndim == 1 else out
        return unscaled(out, k) if unscale else out

    def _correlation_vector(self, r):
        return self._transposed(r)

    def _combine(self, w):
        k = self._overflow_shift(max_abs(w), w.shape[0])
        return unscaled(rows_times(self.blocks, self.A, w, k), k)

    def _columns(self):
        if sp.issparse(self.A):  # made dense when asked (a duality gap's LP needs it)
            dense = self.A.toarray()
            dense.flags.writeable = False
            return dense
        view = self.A.view()
        view.flags.writeable = False  # the class's own matrix: read it, never change it
        return view

    def _column_hypothesis(self, j, scale):
        if not 0 <= j < self.n_columns:
            raise IndexError(f"column {j} out of range for {self.n_columns} hypotheses")
        return self._answer(j, scale)

    def _correlate(self, r, random_state):
        c = self._transposed(r, unscale=False)  # Aᵀr up to a power of two
        j = int(np.argmax(np.abs(c)))  # first index on ties
        return self._answer(j, 1.0 if c[j] >= 0 else -1.0)

    def _project(self, target, sample_weight, random_state):
        # The best column in weighted least squares: argmax_j b_j²/q_j with b = Aᵀ(w t),
        # q = (A²)ᵀw, and its coefficient b_j/q_j.  Computed on values scaled by powers
        # of two (exact): column j by 2**-e_j (max |A_j| < 1), w and t to max < 1, so
        # |b_j| < n, q_j < n and b_j²/q_j <= Σ w t² < n (Cauchy–Schwarz) never overflow.
        # The gains all scale by one power of two (same argmax, same ties) and the
        # coefficient is scaled back exactly.
        w_top = 1.0 if sample_weight is None else float(sample_weight.max())
        e_w, e_t = int(np.frexp(w_top)[1]), int(np.frexp(max_abs(target))[1])
        parts = projection_parts(self.blocks, self.A, sample_weight, target, e_w, e_t,
                                 self._column_exponents())
        return self._projection_answer(parts, e_t)

    def _projection_answer(self, parts: np.ndarray, e_t: int):
        b, q = ordered_sum(parts)
        col_exp = self._column_exponents()
        gain = np.where(q > 0, b**2 / np.where(q > 0, q, 1.0), -np.inf)
        j = int(np.argmax(gain))
        if not q[j] > 0:
            return self._answer(j, 0.0)
        with np.errstate(over="ignore"):  # a coefficient beyond float64: reported by _checked
            scale = float(np.ldexp(b[j] / q[j], e_t - int(col_exp[j])))
        return self._answer(j, scale)

    def _answer(self, j, scale):
        h = self._make(j, scale)
        h.train_output = self._outputs(j, scale)
        return h

    def _outputs(self, j: int, scale: float):
        """The answer ``scale · A_j`` on the training rows."""
        return column_outputs(self.A, j, scale)


class ColumnsHeldElsewhere(BoundColumns):
    """:class:`BoundColumns` whose matrix is held off this process (a cluster's workers,
    a GPU): its columns' peaks are taken at bind (``_peak``, ``_col_exp``,
    ``_n_columns``, set by the subclass), and the matrix itself is never read here."""

    #: Where the columns are, for the refusals' messages.
    held: str = "elsewhere"

    @property
    def A(self) -> NoReturn:  # type: ignore[override]
        raise NotDistributedError(f"the class's columns stay {self.held}")

    @property
    def n_columns(self) -> int:
        return self._n_columns

    @property
    def peak(self) -> float:
        """``max |A|`` (the columns' peaks, taken at bind)."""
        return self._peak

    def _columns(self) -> NoReturn:
        raise NotDistributedError(
            f"the class's columns stay {self.held}; their products (correlation_vector, "
            "combine) run there")


def column_outputs(A: np.ndarray, j: int, scale: float) -> np.ndarray:
    """``scale · A[:, j]`` (non-finite entries are reported by the public methods)."""
    column = A[:, [j]].toarray().ravel() if sp.issparse(A) else A[:, j]
    with np.errstate(over="ignore", invalid="ignore"):
        return scale * column


class MatrixOracle(Oracle):
    """A fixed, finite hypothesis class given as a matrix ``H[i, j] = h_j(x_i)``.

    ``X`` passed to ``bind`` and to a hypothesis' ``predict`` holds row indices into
    ``H`` (shape ``(n,)`` or ``(n, 1)``), so train and test points are rows of one
    matrix.  Telgarsky's ``A = -y h`` is ``-y[:, None] * H`` in this convention.

    Parameters
    ----------
    H : array-like of shape (n_rows, n_hypotheses)
    n_jobs : int or None, default=None
        Threads of the products' passes over the rows, counted as LightGBM counts
        ``num_threads`` (:func:`oracleboost.rows.blocks.n_threads`); the answers do not
        depend on it.
    block_size : int, default=65536
        Rows of a block (:mod:`oracleboost.rows.blocks`): sums over the rows are made by
        lanes of at most 4,096 rows within blocks, added in order.

    Examples
    --------
    Three hypotheses given by their values on three points; ``X`` holds row indices
    into ``H``:

    >>> import numpy as np
    >>> from oracleboost.oracles import MatrixOracle
    >>> H = np.array([[1.0, -1.0, 1.0], [1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]])
    >>> bound = MatrixOracle(H).bind(np.arange(3).reshape(-1, 1))
    >>> r = np.array([1.0, 1.0, -1.0])
    >>> bound.correlation_vector(r)  # Hᵀ r: every column's edge at once
    array([ 3., -1., -1.])
    >>> bound.correlate(r)
    MatrixColumn(j=0, scale=1)
    """

    def __init__(self, H: ArrayLike, n_jobs: int | None = None,
                 block_size: int = DEFAULT_BLOCK_SIZE) -> None:
        self.H = H
        self.n_jobs = n_jobs
        self.block_size = block_size

    @property
    def capabilities(self) -> Capabilities:
        H = _checked_H(self.H, finite=False)
        return Capabilities(correlation_vector=True, bounded=bool(np.all(np.abs(H) <= 1.0)))

    def bind(self, X: ArrayLike) -> BoundOracle:
        _check_blocks(self)
        return BoundColumns(self, *self._matrix_of(X))

    def _matrix_of(self, X: ArrayLike) -> tuple[np.ndarray, Callable]:
        """``A = H[X]`` (X: row indices) and the maker of its column hypotheses."""
        H = _checked_H(self.H)
        rows = _row_indices(X, H.shape[0])
        if rows.size == 0:
            raise ValueError("X holds no row indices")
        return H[rows], functools.partial(_matrix_column, H)

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundOracle:
        """The class over row indices held in a backend's partitions (each partition
        takes its rows of H), by products summed over them (``backend.bind_columns``)."""
        _check_blocks(self)
        return backend.bind_columns(self, rows,
                                    functools.partial(_matrix_column, _checked_H(self.H)))


def _checked_H(H: ArrayLike, finite: bool = True) -> np.ndarray:
    """``H`` as a 2-D float64 array of at least one row and one column (finite unless
    ``finite`` is False), or an error naming it."""
    if sp.issparse(H):
        raise TypeError("MatrixOracle takes a dense H (its columns are read whole); got a "
                        f"scipy sparse {type(H).__name__}: pass H.toarray()")
    H = check_finite_array(H, "H", ndim=(2,), finite=finite)
    if 0 in H.shape:
        raise ValueError(f"H must hold at least one row and one column (a hypothesis); got "
                         f"shape {H.shape}")
    return H


def _matrix_column(H: np.ndarray, j: int, scale: float) -> MatrixColumn:
    return MatrixColumn(H[:, j].copy(), j, scale)


class LinearOracle(Oracle):
    """Linear coordinates: the hypotheses are the features ``x ↦ x_j`` (and their negations).

    The class of coordinate descent on a linear model; scale features to [−1, 1] for the
    boosting guarantees.  Gives the whole correlation vector ``X^T r``.

    Sparse X (CSR or CSC, matrix or array) is kept as CSR, never made dense (but by
    ``columns()``, which returns the dense matrix): ``Xᵀr``, ``X w`` and ``project``'s
    sums visit the stored entries alone, in the dense kernels' order (each lane's rows
    in row order; each row's columns in column order), so they equal the dense
    answers bit for bit: a zero's product ±0 never changes a sum that starts at +0.0.

    Parameters
    ----------
    n_jobs : int or None, default=None
        Threads of the products' passes over the rows (as :class:`MatrixOracle`'s).
    block_size : int, default=65536
        Rows of a block: the order of the sums over the rows (as
        :class:`MatrixOracle`'s).

    Examples
    --------
    >>> import numpy as np
    >>> from oracleboost.oracles import LinearOracle
    >>> X = np.array([[1.0, 0.5], [2.0, -1.0], [-1.0, 2.0]])
    >>> bound = LinearOracle().bind(X)
    >>> bound.correlation_vector(np.array([1.0, 1.0, -1.0]))  # Xᵀ r
    array([ 4. , -2.5])
    >>> h = bound.correlate(np.array([1.0, 1.0, -1.0]))
    >>> h, h.train_output
    (LinearCoordinate(j=0, scale=1), array([ 1.,  2., -1.]))
    """

    def __init__(self, n_jobs: int | None = None, block_size: int = DEFAULT_BLOCK_SIZE) -> None:
        self.n_jobs = n_jobs
        self.block_size = block_size

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlation_vector=True, sparse_input=True)

    def bind(self, X: ArrayLike) -> BoundOracle:
        # Not declared bounded: a capability must not depend on the data bound (a
        # CachedOracle, which binds lazily, could not see it), so boosters rescale each
        # coordinate to max |x_j| = 1 on the training set.  Use MatrixOracle for columns
        # whose given scale in [−1, 1] should be kept.
        # C order whatever the caller's layout (a DataFrame's values are Fortran-ordered):
        # the products' kernels read rows of A (and a fit must not depend on how X was
        # laid out in memory).
        _check_blocks(self)
        return BoundColumns(self, *self._matrix_of(X))

    def _matrix_of(self, X: ArrayLike) -> tuple[np.ndarray, Callable]:
        X = check_X(X, accept_sparse=True, who="LinearOracle")
        if sp.issparse(X):  # rows of A: CSR (canonical: each row's columns in order)
            X = X.tocsr()
            if not X.has_canonical_format:  # pragma: no cover - scipy's conversion sorts
                X.sum_duplicates()
            return X, LinearCoordinate
        return np.ascontiguousarray(X), LinearCoordinate

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundOracle:
        """The coordinates of rows held in a backend's partitions, by products summed
        over them (``backend.bind_columns``)."""
        _check_blocks(self)
        return backend.bind_columns(self, rows, LinearCoordinate)
