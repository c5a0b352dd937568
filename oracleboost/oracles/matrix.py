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

import numpy as np

from .._validation import check_finite_array
from .base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X

__all__ = ["MatrixOracle", "LinearOracle", "MatrixColumn", "LinearCoordinate"]


class MatrixColumn(Hypothesis):
    """Column ``j`` of a fixed hypothesis matrix, times ``scale``; ``X`` holds row indices."""

    def __init__(self, column: np.ndarray, j: int, scale: float):
        self.column = column
        self.j = int(j)
        self.scale = float(scale)
        self.key = ("column", self.j)

    def predict(self, X) -> np.ndarray:
        return self.scale * self.column[_row_indices(X, len(self.column))]

    def __repr__(self) -> str:
        return f"MatrixColumn(j={self.j}, scale={self.scale:g})"


class LinearCoordinate(Hypothesis):
    """The coordinate hypothesis ``x ↦ scale · x_j``."""

    def __init__(self, j: int, scale: float):
        self.j = int(j)
        self.scale = float(scale)
        self.key = ("feature", self.j)

    def predict(self, X) -> np.ndarray:
        return self.scale * check_X(X)[:, self.j]

    def feature_importances(self, n_features: int) -> np.ndarray:
        out = np.zeros(n_features)
        out[self.j] = 1.0
        return out

    def __repr__(self) -> str:
        return f"LinearCoordinate(j={self.j}, scale={self.scale:g})"


def _row_indices(X, n_rows: int) -> np.ndarray:
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


class _BoundColumns(BoundOracle):
    def __init__(self, oracle, A: np.ndarray, make):
        super().__init__(oracle, A.shape[0])
        self.A = A
        self._make = make

    def _correlation_vector(self, r):
        return self.A.T @ r

    def _combine(self, w):
        return self.A @ w

    def _columns(self):
        view = self.A.view()
        view.flags.writeable = False  # the class's own matrix: read it, never change it
        return view

    def _column_hypothesis(self, j, scale):
        if not 0 <= j < self.A.shape[1]:
            raise IndexError(f"column {j} out of range for {self.A.shape[1]} hypotheses")
        return self._answer(j, scale)

    def _correlate(self, r, random_state):
        c = self.A.T @ r
        j = int(np.argmax(np.abs(c)))  # first index on ties
        return self._answer(j, 1.0 if c[j] >= 0 else -1.0)

    def _project(self, target, sample_weight, random_state):
        w = np.ones(self.n_samples) if sample_weight is None else sample_weight
        b = self.A.T @ (w * target)
        q = (self.A**2).T @ w
        gain = np.where(q > 0, b**2 / np.where(q > 0, q, 1.0), -np.inf)
        j = int(np.argmax(gain))
        return self._answer(j, b[j] / q[j] if q[j] > 0 else 0.0)

    def _answer(self, j, scale):
        h = self._make(j, scale)
        h.train_output = scale * self.A[:, j]
        return h


class MatrixOracle(Oracle):
    """A fixed, finite hypothesis class given as a matrix ``H[i, j] = h_j(x_i)``.

    ``X`` passed to ``bind`` and to a hypothesis' ``predict`` holds row indices into
    ``H`` (shape ``(n,)`` or ``(n, 1)``), so train and test points are rows of one
    matrix.  Telgarsky's ``A = -y h`` is ``-y[:, None] * H`` in this convention.

    Parameters
    ----------
    H : array-like of shape (n_rows, n_hypotheses)
    """

    def __init__(self, H):
        self.H = H

    @property
    def capabilities(self) -> Capabilities:
        H = np.asarray(self.H, dtype=np.float64)
        return Capabilities(correlation_vector=True, bounded=bool(np.all(np.abs(H) <= 1.0)))

    def bind(self, X) -> BoundOracle:
        H = check_finite_array(self.H, "H", ndim=(2,))
        rows = _row_indices(X, H.shape[0])
        if rows.size == 0:
            raise ValueError("X holds no row indices")
        A = H[rows]
        return _BoundColumns(self, A, lambda j, s: MatrixColumn(H[:, j].copy(), j, s))


class LinearOracle(Oracle):
    """Linear coordinates: the hypotheses are the features ``x ↦ x_j`` (and their negations).

    The class of coordinate descent on a linear model; scale features to [−1, 1] for the
    boosting guarantees.  Gives the whole correlation vector ``X^T r``.
    """

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlation_vector=True)

    def bind(self, X) -> BoundOracle:
        # Not declared bounded: a capability must not depend on the data bound (a
        # CachedOracle, which binds lazily, could not see it), so boosters rescale each
        # coordinate to max |x_j| = 1 on the training set.  Use MatrixOracle for columns
        # whose given scale in [−1, 1] should be kept.
        return _BoundColumns(self, check_X(X), LinearCoordinate)
