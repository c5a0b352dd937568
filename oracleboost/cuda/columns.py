"""A finite class's columns on the GPU: ``LinearOracle`` and ``MatrixOracle`` bound to
rows on the device, for :class:`~oracleboost.boosters.AcceleratedMarginClassifier`.

The class's matrix ``A`` (X's rows for ``LinearOracle``, ``H[X]`` for ``MatrixOracle``)
is made and checked on the CPU as in memory, then uploaded once.  Its products are
kernels (:func:`~oracleboost.cuda.row_kernels.row_kernels`):

* ``Aᵀ r`` (the correlation vector): each column's sum over the rows in fixed point, on
  the scale of ``max |A_j| · max |r|`` (so the same bits in any order of the threads);
  ``r`` scaled by ``2^-k`` first where the CPU's products scale it
  (:meth:`~oracleboost.oracles.matrix.BoundColumns._overflow_shift`), and the answer by
  ``2^k`` after;
* ``A w``: each row's sum over the columns in column order, the CPU's bits;
* the answers' outputs ``scale · A_j``, the largest row norm, a row.

``project`` (weighted least squares over the columns) is not on the device: refused by
name.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from oracleboost.cuda.device import fetch, upload
from oracleboost.oracles.base import BoundOracle, Hypothesis
from oracleboost.oracles.matrix import ColumnsHeldElsewhere, column_exponents
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed
from oracleboost.rows.partitioned import NotDistributedError

__all__ = ["DeviceColumns"]

#: Columns a launch of the correlation vector's kernel sums (its shared accumulators).
_CHUNK = 128


class DeviceColumns(ColumnsHeldElsewhere):
    """A ``LinearOracle`` or ``MatrixOracle`` bound to rows on the GPU (``blocks``: the
    fit's :class:`~oracleboost.cuda.blocks.DeviceBlocks`); ``A`` is the class's dense
    matrix on the host, uploaded once."""

    held = "on the GPU during the fit"

    def __init__(self, oracle: Any, A: np.ndarray, make: Any, blocks: Any) -> None:
        if not isinstance(A, np.ndarray):
            raise NotDistributedError(
                f"sparse X does not run on the GPU ({type(oracle).__name__}'s products "
                "read dense rows); pass X.toarray(), or fit on the CPU")
        BoundOracle.__init__(self, oracle, A.shape[0])
        self._make = make
        self.blocks = blocks
        A = np.ascontiguousarray(A, dtype=np.float64)
        peaks = np.maximum(A.max(axis=0), -A.min(axis=0))
        self._peaks = peaks
        self._peak = float(peaks.max())
        self._col_exp = column_exponents(peaks)
        self._n_columns = int(A.shape[1])
        self._A = upload(A)

    def _transposed(self, r: Any, unscale: bool = True) -> np.ndarray:
        blocks = self.blocks
        if getattr(r, "ndim", 1) != 1:
            raise NotDistributedError("several queries a row (multiclass) do not run on "
                                      "the GPU; fit on the CPU")
        top = float(blocks.reduce.abs_max(r)[0])
        k = self._overflow_shift(top, self.n_samples)
        bound = self._peaks * np.ldexp(top, -k)  # each column's terms are at most this
        e = np.array([fixed_point_exponent(float(x), self.n_samples) for x in bound],
                     dtype=np.int64)
        sums = upload(np.zeros(self._n_columns, dtype=np.int64))
        e_d = upload(e)
        for j0 in range(0, self._n_columns, _CHUNK):
            blocks.kernels.column_sums[blocks.grid](self._A, r, k, j0, e_d, sums)
        totals = fetch(sums)
        out = np.array([from_fixed(t, int(x)) for t, x in zip(totals, e, strict=True)])
        if k and unscale:
            with np.errstate(over="ignore"):
                out = np.ldexp(out, k)
        return np.asarray(out, dtype=np.float64)

    def _combine(self, w: np.ndarray) -> Any:
        if w.ndim != 1:
            raise NotDistributedError("several scores a row (multiclass) do not run on the "
                                      "GPU; fit on the CPU")
        k = self._overflow_shift(float(np.max(np.abs(w), initial=0.0)), w.shape[0])
        blocks = self.blocks
        out = blocks.empty()
        blocks.kernels.rows_times[blocks.grid](self._A, upload(np.ldexp(w, -k)), out)
        if k:
            blocks.kernels.ldexps[blocks.grid](out, k, out)
        return out

    def _project(self, target: Any, sample_weight: Any, random_state: Any) -> NoReturn:
        raise NotDistributedError(
            f"{type(self.oracle).__name__}'s project does not run on the GPU (the GPU runs "
            "its correlation vector, for AcceleratedMarginClassifier); fit on the CPU")

    def _outputs(self, j: int, scale: float) -> Any:
        blocks = self.blocks
        out = blocks.empty()
        blocks.kernels.column_times[blocks.grid](self._A, int(j), float(scale), out)
        return out

    def largest_row_norm(self, extra: float = 0.0, peak: float | None = None) -> float:
        """``max_i √(‖A_i‖² + extra)`` (with ``peak``: made on ``A / peak``, scaled
        back), each row's squares added in column order."""
        blocks = self.blocks
        norms = blocks.empty()
        blocks.kernels.row_norms[blocks.grid](self._A, float(extra),
                                             1.0 if peak is None else float(peak), norms)
        top = float(blocks.reduce.maxima(norms)[0])
        return top if peak is None else float(peak) * top

    def row(self, i: int, *others: Any) -> tuple:
        """Row ``i`` of the columns and entry ``i`` of each of ``others`` (device
        arrays), copied to the host."""
        a = fetch(self._A[i])
        return (np.asarray(a, dtype=np.float64),
                *(fetch(o[i:i + 1])[0] for o in others))

    # -- the public queries, for queries held on the device (the boosters' are finite)
    def correlate(self, r: Any, *, random_state: int | None = None) -> Hypothesis:
        return self._correlate(r, random_state)

    def correlation_vector(self, r: Any) -> np.ndarray:
        return self._representable(self._transposed(r), "correlation vector Hᵀr")

    def combine(self, w: Any) -> Any:
        w = np.asarray(w, dtype=np.float64)
        return self._combine(w)

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None) -> NoReturn:
        self._project(target, sample_weight, random_state)
