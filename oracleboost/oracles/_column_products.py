"""Compiled products of a finite class's columns ``A`` (n, J) with per-row and per-column
vectors, in an order fixed by the code.

``Aᵀ r`` is a sum over the rows: each lane of ``lane`` consecutive rows (see
:mod:`oracleboost.rows.blocks`) sums its rows in row order into its own slot of partials,
and the caller adds the lanes' partials in lane order, so the product is the same bits
on any number of threads and on a cluster's partitions.  ``A w`` is a sum over the
columns: each row's, in column order.  BLAS, which these replace, sums in an order that
depends on the CPU's kernel (OpenBLAS's Haswell and SkylakeX kernels round
differently) and on its threads.
"""

from __future__ import annotations

import numba as nb

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}


@nb.jit(**_JIT)
def _transposed_times(A, R, out):  # pragma: no cover - compiled
    """``out += (Aᵀ R)ᵀ`` for ``A`` (m, J), ``R`` (m, K) and ``out`` (K, J), row by row.
    (Transposed so that the inner loop runs along a row of ``A`` and of ``out``: SIMD
    over the columns, each column's sum still in row order; 4x faster than along K.)"""
    J, K = A.shape[1], R.shape[1]
    for i in range(A.shape[0]):
        for k in range(K):
            rk = R[i, k]
            for j in range(J):
                out[k, j] += A[i, j] * rk


@nb.jit(**_JIT)
def transposed_times(A, R, lo, hi, lane, out):  # pragma: no cover - compiled
    """Each lane's ``(Aᵀ R)ᵀ`` over the rows ``lo:hi`` (``lo`` a lane boundary) into
    ``out[q]`` (zeros on entry; shape (lanes, K, J))."""
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        _transposed_times(A[start:stop], R[start:stop], out[q])
        q += 1


@nb.jit(**_JIT)
def times(A, W, lo, hi, out):  # pragma: no cover - compiled
    """``out[i] = A[i] W`` for the rows ``lo:hi`` (``W`` (J, K), ``out`` (n, K)), each
    entry summed over the columns in order."""
    J, K = W.shape
    for i in range(lo, hi):
        for k in range(K):
            acc = 0.0
            for j in range(J):
                acc += A[i, j] * W[j, k]
            out[i, k] = acc


@nb.jit(**_JIT)
def _projection_sums(A, col_scale, ws, wts, b, q):  # pragma: no cover - compiled
    """With ``a = A[i, j] · col_scale[j]``: ``b[j] += Σ_i a · wts[i]`` and
    ``q[j] += Σ_i a² · ws[i]``, row by row."""
    J = A.shape[1]
    for i in range(A.shape[0]):
        for j in range(J):
            a = A[i, j] * col_scale[j]
            b[j] += a * wts[i]
            q[j] += (a * a) * ws[i]


@nb.jit(**_JIT)
def projection_sums(A, col_scale, ws, wts, lo, hi, lane, out):  # pragma: no cover
    """:func:`_projection_sums` of each lane of ``lo:hi`` into ``out[q, 0]`` (b) and
    ``out[q, 1]`` (q): zeros on entry, shape (lanes, 2, J)."""
    q = 0
    for start in range(lo, hi, lane):
        stop = min(start + lane, hi)
        _projection_sums(A[start:stop], col_scale, ws[start:stop], wts[start:stop],
                         out[q, 0], out[q, 1])
        q += 1


# -- the same products from a CSR matrix's structure ---------------------------------------
# A dense kernel's sum meets the zeros of A too; each adds a product ±0, and a sum that
# starts at +0.0 is never −0.0 (x + (−x) and +0 + −0 round to +0), so adding ±0 changes
# nothing.  These kernels visit the stored entries alone, in the same row order (and, for
# ``A w``, the same column order: sorted indices), making the same products: the same bits.
@nb.jit(**_JIT)
def sparse_transposed_times(indptr, indices, data, R, lo, hi, lane,
                            out):  # pragma: no cover - compiled
    """:func:`transposed_times` of the CSR matrix ``(data, indices, indptr)``."""
    K = R.shape[1]
    q = 0
    for start in range(lo, hi, lane):
        for i in range(start, min(start + lane, hi)):
            for p in range(indptr[i], indptr[i + 1]):
                j, a = indices[p], data[p]
                for k in range(K):
                    out[q, k, j] += a * R[i, k]
        q += 1


@nb.jit(**_JIT)
def sparse_times(indptr, indices, data, W, lo, hi, out):  # pragma: no cover - compiled
    """:func:`times` of the CSR matrix ``(data, indices, indptr)`` (sorted indices)."""
    K = W.shape[1]
    for i in range(lo, hi):
        for k in range(K):
            acc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                acc += data[p] * W[indices[p], k]
            out[i, k] = acc


@nb.jit(**_JIT)
def sparse_projection_sums(indptr, indices, data, col_scale, ws, wts, lo, hi, lane,
                           out):  # pragma: no cover - compiled
    """:func:`projection_sums` of the CSR matrix ``(data, indices, indptr)``."""
    q = 0
    for start in range(lo, hi, lane):
        for i in range(start, min(start + lane, hi)):
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                a = data[p] * col_scale[j]
                out[q, 0, j] += a * wts[i]
                out[q, 1, j] += (a * a) * ws[i]
        q += 1
