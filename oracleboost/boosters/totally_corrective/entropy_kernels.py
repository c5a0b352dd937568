"""Compiled products of the entropy-regularised duals (:mod:`.entropy_duals`).

The duals of ERLPBoost and SoftBoost live on the ``t`` columns held so far: each
evaluation mixes the columns (``U λ``, ``N × t``), reads the edges of a distribution
(``Uᵀ d``) and, for Newton's step, a weighted Gram matrix (``Uᵀ W U``, ``N × t²``), then
factors a ``t × t`` matrix.  NumPy would send each of these to BLAS, whose kernels sum in
an order that depends on the CPU (Haswell and SkylakeX round differently): here every sum
runs in an order fixed by the code (rows ascending, columns ascending), so a fit is the
same bits on every machine.  ``U`` is stored row-major, ``(N, capacity)``; only its first
``t`` columns are read.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}


@nb.jit(**_JIT)
def mix(U, t, lam, base, out):  # pragma: no cover - compiled
    """``out_i = base_i − Σ_{q<t} U[i, q] λ_q``, the columns in order."""
    n = U.shape[0]
    for i in range(n):
        acc = 0.0
        for q in range(t):
            acc += U[i, q] * lam[q]
        out[i] = base[i] - acc


@nb.jit(**_JIT)
def edges(U, t, d, out):  # pragma: no cover - compiled
    """``out_q = Σ_i d_i U[i, q]`` for ``q < t``, the rows in order."""
    n = U.shape[0]
    for q in range(t):
        out[q] = 0.0
    for i in range(n):
        di = d[i]
        if di != 0.0:
            for q in range(t):
                out[q] += di * U[i, q]


@nb.jit(**_JIT)
def centred_gram(U, t, d, free, G):  # pragma: no cover - compiled
    """``G = Uᵀ (D − d dᵀ / s) U`` over the rows where ``free`` is true (``D`` = diag d
    there, ``s`` = Σ d there): the curvature of the KL projection's value in ``λ``
    (see :mod:`.entropy_duals`).  Rows in order; returns ``s``."""
    n = U.shape[0]
    m = np.zeros(t)
    for p in range(t):
        for q in range(t):
            G[p, q] = 0.0
    s = 0.0
    for i in range(n):
        if free[i]:
            di = d[i]
            if di != 0.0:
                s += di
                for p in range(t):
                    a = di * U[i, p]
                    m[p] += a
                    for q in range(p + 1):
                        G[p, q] += a * U[i, q]
    for p in range(t):
        for q in range(p + 1):
            value = G[p, q] - (m[p] * m[q] / s if s > 0.0 else 0.0)
            G[p, q] = value
            G[q, p] = value
    return s


@nb.jit(**_JIT)
def cholesky(A, L):  # pragma: no cover - compiled
    """``A = L Lᵀ`` for a symmetric ``A`` (its lower triangle read); False when a pivot
    is not positive (``A`` not positive definite to working precision)."""
    n = A.shape[0]
    for j in range(n):
        acc = A[j, j]
        for k in range(j):
            acc -= L[j, k] * L[j, k]
        if not acc > 0.0:
            return False
        ljj = math.sqrt(acc)
        L[j, j] = ljj
        for i in range(j + 1, n):
            acc = A[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = acc / ljj
        for i in range(j):
            L[i, j] = 0.0
    return True


@nb.jit(**_JIT)
def cholesky_solve(L, b, x):  # pragma: no cover - compiled
    """``x = (L Lᵀ)⁻¹ b`` by the two triangular solves."""
    n = L.shape[0]
    for i in range(n):
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * x[k]
        x[i] = acc / L[i, i]
    for i in range(n - 1, -1, -1):
        acc = x[i]
        for k in range(i + 1, n):
            acc -= L[k, i] * x[k]
        x[i] = acc / L[i, i]


@nb.jit(**_JIT)
def ordered_dot(a, b):  # pragma: no cover - compiled
    """``Σ_q a_q b_q`` in order (a few values: the multipliers against the edges)."""
    total = 0.0
    for q in range(a.shape[0]):
        total += a[q] * b[q]
    return total
