"""The GPU's stump kernels: the query's scale, fixed-point histograms, the best ±1 stump.

The kernels are numba CUDA kernels, compiled the first time they are asked for
(:func:`kernels`, :func:`histogram_kernel`, :func:`histogram_rows_kernel`): importing
this module imports nothing of ``numba.cuda``.  Every sum over rows is a sum of int64
values (fixed point, :mod:`oracleboost.rows.fixed_point`), added with
``cuda.atomic.add``: integer additions give the same bits in any order, so the GPU's
answer does not depend on how its threads are scheduled, and two runs are
bit-identical.

* :func:`histogram_kernel` — ``out[c, j, b] = Σ_{i : codes[j, i] = b} round(v_c[i] ·
  2^{e_c})`` over the feature-major codes ``(d, n)``, for one or two channels ``v_c``
  (the query, and when asked a second per-row value: weights, or counts), each rounded
  to fixed point as it is read (no integer copy of the query is written).  A thread
  block takes a range of rows and a group of features, sums them into a shared-memory
  int64 histogram (each bin two 32-bit words added with the native 32-bit shared
  atomics: a 64-bit shared atomic add would be a compare-and-swap loop), then adds
  each non-zero bin to the global histogram with one global atomic: the global
  traffic is a bin's worth a block, not a row's.
* :func:`histogram_rows_kernel` — the same for up to eight columns of an ``(n, K)``
  array (a class a column) in one pass over the codes, each on its own scale.
* ``unfixed`` — a least-squares query's histograms as floats (the integers' values), for
  the CPU oracle's choice rule
  (:meth:`oracleboost.oracles.stumps.BoundStumpOracle._lsq_choice`).
* ``scan_and_pick`` — one thread block: each feature's best ±1 stump by the CPU
  oracle's rule (:func:`oracleboost.oracles._stump_kernels.sign_scan`, a thread a
  feature: ``B`` is at most 255 and a scan is ``O(B)``): thresholds ``t`` left to
  right, the score ``s · (R_right − R_left)``, the first strictly best kept, ``s = +1``
  before ``s = −1``.  On integers ``R_right = total − R_left`` is exact, so the scores
  are the exact scores of the rounded query and the choice is exact.  Then one thread
  picks: the constants first (``+1``, then ``−1``: the sum of the query over all rows,
  from feature 0's bins, and its negation), then the features in order, the first
  strictly best (the CPU's ``argmax`` over the same list), and writes the answer as six
  int64 (what crosses the bus).  At many features a warp a feature with a prefix sum
  over the bins (``cub::WarpScan``-style shuffles) would replace the loop.

On the simulator (``NUMBA_ENABLE_CUDASIM=1``) the same Python functions run, one Python
thread a GPU thread.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from oracleboost.cuda.device import counted, cuda_module
from oracleboost.cuda.row_kernels import row_kernels

__all__ = ["NO_SCORE", "ANSWER_SIZE", "kernels", "histogram_kernel",
           "histogram_rows_kernel"]

#: ``numba.cuda``, set by the first kernel factory call (:func:`_load`).  The kernels name
#: it as a module global: numba's CUDA target resolves globals when it compiles, and the
#: simulator swaps a kernel's globals that are ``numba.cuda`` for its own module (a
#: closure's variable would not be swapped).
cuda: Any = None

#: A feature with no threshold scores this (below every real score: the scores of a
#: query summing below 2^62 lie in (−2^62, 2^62)).
NO_SCORE = -(1 << 63)

#: The int64 entries of ``scan_and_pick``'s answer: ``(candidate, score, total, threshold
#: bin, sign, finite)``; ``candidate`` 0 and 1 are the constants +1 and −1, ``2 + j``
#: feature j; ``finite`` is 0 when the query held a NaN or an infinity.
ANSWER_SIZE = 6


def _load() -> None:
    global cuda
    cuda = cuda_module()


@functools.cache
def histogram_kernel(bins: int, features: int, channels: int) -> Any:
    """The histogram kernel for ``bins`` bins a feature, ``features`` features a thread
    block and ``channels`` (1 or 2) per-row values.

    Launch it on a grid ``(row blocks, ceil(d / features))`` with
    ``(codes, v0, v1, e, rows_per_block, out)``: ``codes`` uint8 ``(d, n)``, ``v0`` and
    ``v1`` float64 ``(n,)`` (``v1`` unread with one channel: any float64 array), ``e``
    int64 the channels' fixed-point exponents (``v_c`` is summed as ``round(v_c ·
    2^{e[c]})``; a non-finite value as 0: its fit is refused by the caller), ``out``
    int64 ``(channels, d, bins)``, zeroed.  The shared histogram holds ``channels · features ·
    bins`` int64 sums, as pairs of 32-bit words (the sizes are compile-time constants,
    hence one kernel a size).
    """
    if channels not in (1, 2):
        raise ValueError(f"channels must be 1 or 2; got {channels!r}")
    k = kernels()
    fixed, clear, add, flush = k.fixed, k.clear, k.add, k.flush
    smaller = row_kernels().smaller
    from numba.core import types

    size = int(bins) * int(features)
    shared_size = size * int(channels)
    two = channels == 2

    @cuda.jit
    def histogram(codes, v0, v1, e, rows_per_block, out):  # pragma: no cover - device code
        d, n = codes.shape[0], codes.shape[1]
        j0 = cuda.blockIdx.y * features
        hist = cuda.shared.array((2, shared_size), types.uint32)
        clear(hist)
        a = cuda.blockIdx.x * rows_per_block
        e0 = e[0]
        e1 = e[1] if two else e0
        for i in range(a + cuda.threadIdx.x, smaller(n, a + rows_per_block), cuda.blockDim.x):
            x0 = fixed(v0[i], e0)
            x1 = fixed(v1[i], e1) if two else x0
            for f in range(features):
                j = j0 + f
                if j < d:
                    at = f * bins + int(codes[j, i])
                    add(hist, at, x0)
                    if two:
                        add(hist, size + at, x1)
        flush(hist, out, j0, d, bins, size, channels)

    return counted(histogram)


@functools.cache
def histogram_rows_kernel(bins: int, features: int, channels: int) -> Any:
    """The histogram kernel of ``channels`` columns of an ``(n, K)`` array (a class a
    column): ``out[c, j, b] = Σ_{i : codes[j, i] = b} round(v[i, c0 + c] · 2^{e[c]})``
    for ``c < channels``, every column summed in the same pass over the codes (one pass
    for up to ``channels`` classes, where a histogram a class would read the codes once
    a class, and its column strided).

    Launch it on a grid ``(row blocks, ceil(d / features))`` with
    ``(codes, v, c0, e, rows_per_block, out)``: ``out`` int64 ``(channels, d, bins)``,
    zeroed; the rest as :func:`histogram_kernel`'s.
    """
    k = kernels()
    fixed, clear, add, flush = k.fixed, k.clear, k.add, k.flush
    smaller = row_kernels().smaller
    from numba.core import types

    size = int(bins) * int(features)
    shared_size = size * int(channels)

    @cuda.jit
    def histogram_rows(codes, v, c0, e, rows_per_block, out):  # pragma: no cover
        d, n = codes.shape[0], codes.shape[1]
        j0 = cuda.blockIdx.y * features
        hist = cuda.shared.array((2, shared_size), types.uint32)
        x = cuda.local.array(channels, types.int64)
        clear(hist)
        a = cuda.blockIdx.x * rows_per_block
        for i in range(a + cuda.threadIdx.x, smaller(n, a + rows_per_block), cuda.blockDim.x):
            for c in range(channels):
                x[c] = fixed(v[i, c0 + c], e[c])
            for f in range(features):
                j = j0 + f
                if j < d:
                    at = f * bins + int(codes[j, i])
                    for c in range(channels):
                        add(hist, c * size + at, x[c])
        flush(hist, out, j0, d, bins, size, channels)

    return counted(histogram_rows)


@functools.cache
def kernels() -> SimpleNamespace:
    """The row and scan kernels (compiled on first launch), as a namespace."""
    _load()

    no_score = NO_SCORE
    rows = row_kernels()
    rint, ldexp = rows.rint, rows.ldexp

    @cuda.jit(device=True)
    def fixed(x, e):  # pragma: no cover - device code
        """``round(x · 2^e)`` (:func:`oracleboost.rows.fixed_point.to_fixed`'s integer),
        0 for a non-finite ``x``."""
        if x != x or abs(x) == math.inf:
            return 0
        return rint(math.ldexp(x, int(e)))

    # -- a thread block's histogram in shared memory ------------------------------------
    # Each bin's int64 sum is two 32-bit words (``row_kernels``' ``low_word`` and
    # ``high_word``: a GPU has no 64-bit integer add in shared memory).  ``add`` is
    # ``row_kernels``' ``add_words`` again: a device function that names ``cuda`` is
    # called only from its own module's kernels (the simulator swaps that global).
    low_word, high_word, joined = rows.low_word, rows.high_word, rows.joined

    @cuda.jit(device=True)
    def clear(hist):  # pragma: no cover - device code
        """The block's shared words ``(2, size)`` zeroed (every thread calls it)."""
        for k in range(cuda.threadIdx.x, hist.shape[1], cuda.blockDim.x):
            hist[0, k] = 0
            hist[1, k] = 0
        cuda.syncthreads()

    @cuda.jit(device=True)
    def add(hist, at, x):  # pragma: no cover - device code
        """``x`` (int64) added to the bin ``at`` of the shared words."""
        low = low_word(x)
        old = cuda.atomic.add(hist, (0, at), low)
        cuda.atomic.add(hist, (1, at), high_word(x, old, low))

    @cuda.jit(device=True)
    def flush(hist, out, j0, d, bins, size, channels):  # pragma: no cover - device code
        """The block's bins (``channels`` of ``size`` = features · bins, from feature
        ``j0``) added into ``out`` ``(channels, d, bins)``: one global atomic a non-empty
        bin (every thread calls it)."""
        cuda.syncthreads()
        for k in range(cuda.threadIdx.x, size, cuda.blockDim.x):
            j = j0 + k // bins
            if j < d:
                q = k % bins
                for c in range(channels):
                    x = joined(hist, c * size + k)
                    if x != 0:  # an empty bin costs no global atomic
                        cuda.atomic.add(out, (c, j, q), x)

    @cuda.jit
    def scan_and_pick(hist, n_bins, allowed, peaks, score, thr, sign,
                      answer):  # pragma: no cover - device code
        """Every feature's best ±1 stump on channel 0 of ``hist`` (a thread a feature,
        striding), then the answer among the constants and the features (one thread)
        into ``answer``; ``peaks[0]``, the query's ``max |r|`` (the settle's), says
        whether it was finite.  Launch one block."""
        tid = cuda.threadIdx.x
        for j in range(tid, n_bins.shape[0], cuda.blockDim.x):
            best, bt, bs = no_score, -1, 0
            if allowed[j]:
                nb = n_bins[j]
                total = 0
                for q in range(nb):
                    total += hist[0, j, q]
                left = 0
                for t in range(nb - 1):
                    left += hist[0, j, t]
                    e = (total - left) - left  # R_right − R_left, exact
                    if e > best:
                        best, bt, bs = e, t, 1
                    if -e > best:
                        best, bt, bs = -e, t, -1
            score[j] = best
            thr[j] = bt
            sign[j] = bs
        cuda.syncthreads()
        if tid == 0:
            total = 0
            for q in range(hist.shape[2]):
                total += hist[0, 0, q]  # every row is in one of feature 0's bins
            best, at = total, 0
            if -total > best:
                best, at = -total, 1
            for j in range(score.shape[0]):
                if score[j] > best:
                    best, at = score[j], 2 + j
            answer[0] = at
            answer[1] = best
            answer[2] = total
            answer[3] = thr[at - 2] if at >= 2 else -1
            answer[4] = sign[at - 2] if at >= 2 else (1 if at == 0 else -1)
            answer[5] = 1 if peaks[0] < math.inf else 0

    @cuda.jit
    def unfixed(hist, exponents, peaks, out):  # pragma: no cover - device code
        """The float values of the fixed-point histogram ``(channels, d, B)``
        (:func:`oracleboost.rows.fixed_point.from_fixed`: ``float(x) · 2^−e``, ``e`` the
        channel's exponent), NaN for a channel whose values held a NaN or an
        infinity (``peaks[c]`` not finite: its caller refuses the query)."""
        C, d, B = hist.shape
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for k in range(start, C * d * B, stride):
            c, j, b = k // (d * B), (k // B) % d, k % B
            if peaks[c] < math.inf:
                out[c, j, b] = ldexp(float(hist[c, j, b]), -int(exponents[c]))
            else:
                out[c, j, b] = math.nan

    return SimpleNamespace(fixed=fixed, clear=clear, add=add, flush=flush,
                           scan_and_pick=counted(scan_and_pick), unfixed=counted(unfixed))


def as_codes(codes: np.ndarray) -> np.ndarray:
    """Feature-major uint8 codes ``(d, n)``, C-contiguous (what the kernels read)."""
    return np.ascontiguousarray(codes, dtype=np.uint8)
