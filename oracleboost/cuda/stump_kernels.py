"""The GPU's stump kernels: fixed-point histograms, the best ±1 stump, AdaBoost's step.

The kernels are numba CUDA kernels, compiled the first time they are asked for
(:func:`kernels`, :func:`histogram_kernel`): importing this module imports nothing of
``numba.cuda``.  Every sum over rows is a sum of int64 values (fixed point,
:mod:`oracleboost.rows.fixed_point`), added with ``cuda.atomic.add``: integer additions
give the same bits in any order, so the GPU's answer does not depend on how its threads
are scheduled, and two runs are bit-identical.

* :func:`histogram_kernel` — ``out[c, j, b] = Σ_{i : codes[j, i] = b} v_c[i]`` over the
  feature-major codes ``(d, n)``, for one or two channels ``v_c`` (the query, and when
  asked a second per-row value: weights, or counts).  A thread block takes a range of
  rows and a group of features, sums them into a shared-memory int64 histogram with
  shared atomics, then adds each non-zero bin to the global histogram with one global
  atomic: the global traffic is a bin's worth a block, not a row's.
* ``sign_scan`` — for each feature (one thread a feature: ``B`` is at most 255 and a
  scan is ``O(B)``), the best ±1 stump by the CPU oracle's rule
  (:func:`oracleboost.oracles._stump_kernels.sign_scan`): thresholds ``t`` left to right,
  the score ``s · (R_right − R_left)``, the first strictly best kept, ``s = +1`` before
  ``s = −1``.  On integers ``R_right = total − R_left`` is exact, so the scores are the
  exact scores of the rounded query and the choice is exact.  A GPU at 255 bins and a
  few features leaves most of its threads idle here; at many features (or for trees'
  many leaves) a warp a feature with a prefix sum over the bins
  (``cub::WarpScan``-style shuffles) and a warp's argmax would replace the loop.
* ``pick`` — one thread: the constants first (``+1``, then ``−1``: the sum of the query
  over all rows, from feature 0's bins, and its negation), then the features in order, the
  first strictly best (the CPU's ``argmax`` over the same list); writes the answer as six
  int64 (what crosses the bus).
* ``fixed_weights`` — AdaBoost's weights in log space, lazily normalised: ``w_i =
  exp(−m_i − top)`` with ``top = −min_i m_i`` (the CPU round's logits ``z = −m`` less
  their maximum: the largest weight is exactly 1), rounded to ``round(w_i · 2^e)`` on the
  scale ``e`` of :func:`~oracleboost.rows.fixed_point.fixed_point_exponent` ``(1, n)``;
  the query is ``y_i`` times it, and ``Σ w`` (an int64) is summed beside.  The weights
  are never divided by their sum: the stump's choice and AdaBoost's step are ratios.
* ``step_margins`` — ``m_i += y_i (c h_i)``, the CPU's formula
  (:func:`oracleboost.rows.column_kernels.step_margins`: ``y h = ±1``, so the product is
  exact and the margins equal the CPU's bit for bit for the same ``c``), and
  ``min_i m_i`` (an atomic minimum: exact in any order) for the next weights.

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

__all__ = ["NO_SCORE", "ANSWER_SIZE", "kernels", "histogram_kernel"]

#: ``numba.cuda``, set by the first kernel factory call (:func:`_load`).  The kernels name
#: it as a module global: numba's CUDA target resolves globals when it compiles, and the
#: simulator swaps a kernel's globals that are ``numba.cuda`` for its own module (a
#: closure's variable would not be swapped).
cuda: Any = None

#: A feature with no threshold scores this (below every real score: the scores of a
#: query summing below 2^62 lie in (−2^62, 2^62)).
NO_SCORE = -(1 << 63)

#: The int64 entries of ``pick``'s answer: ``(candidate, score, total, threshold bin,
#: sign, Σ w)``; ``candidate`` 0 and 1 are the constants +1 and −1, ``2 + j`` feature j.
ANSWER_SIZE = 6


def _load() -> None:
    global cuda
    cuda = cuda_module()


@functools.cache
def histogram_kernel(bins: int, features: int, channels: int) -> Any:
    """The histogram kernel for ``bins`` bins a feature, ``features`` features a thread
    block and ``channels`` (1 or 2) per-row values.

    Launch it on a grid ``(row blocks, ceil(d / features))`` with
    ``(codes, v0, v1, rows_per_block, out)``: ``codes`` uint8 ``(d, n)``, ``v0`` and ``v1``
    int64 ``(n,)`` (``v1`` unread with one channel: any int64 array), ``out`` int64
    ``(channels, d, bins)``, zeroed.  The shared histogram holds ``channels · features ·
    bins`` int64 (the sizes are compile-time constants, hence one kernel a size).
    """
    if channels not in (1, 2):
        raise ValueError(f"channels must be 1 or 2; got {channels!r}")
    _load()
    from numba.core import types

    size = int(bins) * int(features)
    shared_size = size * int(channels)
    two = channels == 2

    @cuda.jit
    def histogram(codes, v0, v1, rows_per_block, out):  # pragma: no cover - device code
        d = codes.shape[0]
        n = codes.shape[1]
        j0 = cuda.blockIdx.y * features
        hist = cuda.shared.array(shared_size, types.int64)
        tid = cuda.threadIdx.x
        width = cuda.blockDim.x
        for k in range(tid, shared_size, width):
            hist[k] = 0
        cuda.syncthreads()
        a = cuda.blockIdx.x * rows_per_block
        b = min(n, a + rows_per_block)
        for i in range(a + tid, b, width):
            x0 = v0[i]
            x1 = v1[i] if two else x0
            for f in range(features):
                j = j0 + f
                if j < d:
                    at = f * bins + int(codes[j, i])
                    cuda.atomic.add(hist, at, x0)
                    if two:
                        cuda.atomic.add(hist, size + at, x1)
        cuda.syncthreads()
        for k in range(tid, size, width):
            j = j0 + k // bins
            if j < d:
                q = k % bins
                for c in range(channels):
                    x = hist[c * size + k]
                    if x != 0:  # an empty bin costs no global atomic
                        cuda.atomic.add(out, (c, j, q), x)

    return counted(histogram)


@functools.cache
def kernels() -> SimpleNamespace:
    """The row and scan kernels (compiled on first launch), as a namespace."""
    _load()
    from numba.core import types

    no_score = NO_SCORE

    @cuda.jit(device=True)
    def rint(x):  # pragma: no cover - device code
        """``x >= 0`` rounded to the nearest integer, half to even (``np.rint``)."""
        f = math.floor(x)
        rest = x - f  # exact: f is x's integer part
        up = rest > 0.5 or (rest == 0.5 and f % 2 == 1)
        return int(f) + (1 if up else 0)

    @cuda.jit
    def zero(hist, answer):  # pragma: no cover - device code
        """Zero a histogram ``(channels, d, B)`` and the answer's ``Σ w``."""
        C, d, B = hist.shape
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for k in range(start, C * d * B, stride):
            hist[k // (d * B), (k // B) % d, k % B] = 0
        if start == 0:
            answer[5] = 0

    @cuda.jit
    def fixed_weights(margins, y, low, scale, query, answer):  # pragma: no cover
        """``query_i = y_i · rint(exp(−m_i − top) · scale)``, ``top = −low[0]``, and
        ``Σ_i rint(...)`` added into ``answer[5]`` (a block's sum first, in shared
        memory, then one global atomic a block)."""
        part = cuda.shared.array(1, types.int64)
        if cuda.threadIdx.x == 0:
            part[0] = 0
        cuda.syncthreads()
        top = -low[0]
        start, stride = cuda.grid(1), cuda.gridsize(1)
        mine = 0
        for i in range(start, margins.shape[0], stride):
            w = rint(math.exp(-margins[i] - top) * scale)
            query[i] = w if y[i] > 0 else -w
            mine += w
        cuda.atomic.add(part, 0, mine)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(answer, 5, part[0])

    @cuda.jit
    def sign_scan(hist, n_bins, allowed, score, thr, sign):  # pragma: no cover
        """Feature j's best ±1 stump on channel 0 of ``hist``, one thread a feature."""
        j = cuda.grid(1)
        if j < n_bins.shape[0]:
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

    @cuda.jit
    def pick(hist, score, thr, sign, low, answer):  # pragma: no cover - device code
        """The answer among the constants and the features' best stumps (one thread),
        into ``answer[0:5]``; ``low[0]`` reset for the step's minimum (the weights,
        which read it, are made by now)."""
        if cuda.grid(1) == 0:
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
            low[0] = math.inf

    @cuda.jit
    def step_margins(codes, y, feature, t, s, c, margins, low):  # pragma: no cover
        """``m_i += y_i · (c · h_i)``, ``h_i = s`` where ``codes[feature, i] > t`` and
        ``−s`` elsewhere (``feature < 0``: the constant ``s``), and ``low[0] = min m``
        (a block's minimum in shared memory, then one global atomic a block)."""
        part = cuda.shared.array(1, types.float64)
        if cuda.threadIdx.x == 0:
            part[0] = math.inf
        cuda.syncthreads()
        start, stride = cuda.grid(1), cuda.gridsize(1)
        mine = math.inf
        for i in range(start, margins.shape[0], stride):
            h = s
            if feature >= 0 and codes[feature, i] <= t:
                h = -s
            m = margins[i] + y[i] * (c * h)
            margins[i] = m
            mine = min(mine, m)
        cuda.atomic.min(part, 0, mine)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.min(low, 0, part[0])

    return SimpleNamespace(zero=counted(zero), fixed_weights=counted(fixed_weights),
                           sign_scan=counted(sign_scan), pick=counted(pick),
                           step_margins=counted(step_margins))


def as_codes(codes: np.ndarray) -> np.ndarray:
    """Feature-major uint8 codes ``(d, n)``, C-contiguous (what the kernels read)."""
    return np.ascontiguousarray(codes, dtype=np.uint8)
