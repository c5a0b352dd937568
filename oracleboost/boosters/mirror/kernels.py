"""The compiled pass of MABoost's entropy round (Naghibi & Pfister 2014, Algorithm 1,
the entropy map with the lazy update, uncapped): steps (c) and (d) and the next query in
one pass over the rows, lane by lane (:mod:`.column_kernels`' lanes and sums).

With ``u = sign · a h / norm`` and the lazy dual average ``log z``, step (c) is
``log z_{t+1} = log z_t − η u`` and step (d), the KL projection onto the simplex, is
the softmax ``w_{t+1} = exp(log z_{t+1} − L_{t+1})`` with ``L_{t+1} = log Σ z_{t+1}``.
Since ``w_t = exp(log z_t − L_t)``, ``L_{t+1} = L_t + log Σ w_t e^(−η u)``, which a
column of two values gives from its two sums (:meth:`.classifier.SignedColumn.log_exp_mass`,
AdaBoost's ``log Z_t``).  With that prediction the exps are the weights, and the same pass
writes the oracle's next query ``w · a``: one pass instead of the step's, the softmax's
three and the query's.  The caller checks that the exps sum to 1 and otherwise projects
as without the prediction (:func:`.passes.entropy_step`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from oracleboost.rows.column_kernels import count_lanes, exp, interleaved_sum, lane_rows

_JIT = {"nopython": True, "nogil": True, "cache": True, "boundscheck": False,
        "error_model": "numpy"}
_PARALLEL = {**_JIT, "parallel": True}

#: The columns of a lane's stats: the vote's error with ties counted (``Σ s [a f ≤ 0]``,
#: a count without weights), predict's error, ``min a f``, 0 (SparseBoost's mass, not
#: this variant's), ``Σ e``, ``max e`` and the exact zeros of ``e``.
N_STATS = 7


@nb.jit(**_JIT)
def _entropy_lane(z, f, a, h, s, coef, log_norm, target, f_new, e, query, terms,
                  out):  # pragma: no cover - compiled
    """One lane: ``target = log z + (a h)(−coef)`` and ``f_new = f + coef h`` (the
    products and sums of :func:`.passes.mirror_step`, the same bits), the vote's
    record sums, ``e = exp(target − log_norm)`` (:func:`.column_kernels.exp`) and
    ``query = e · a``; ``out[0:7]`` as :data:`N_STATS` says.  ``s`` of length 0: unit
    weights (the errors are counts, exact in any order); else their sums by
    :func:`.column_kernels.interleaved_sum`, through the scratch ``terms`` (two rows)."""
    n = z.shape[0]
    weighted = s.shape[0] > 0
    wrong, mistaken, low = 0, 0, math.inf
    for i in range(n):
        ai = np.float64(a[i])
        hi = h[i]
        t = z[i] + (ai * hi) * (-coef)
        target[i] = t
        fi = f[i] + coef * hi
        f_new[i] = fi
        m = ai * fi
        low = m if m < low else low
        bad = m <= 0.0  # ties counted as errors
        missed = (fi > 0.0) != (ai > 0.0)  # predict: f = 0 says classes_[0]
        if weighted:
            terms[0, i] = s[i] if bad else 0.0
            terms[1, i] = s[i] if missed else 0.0
        else:
            wrong += bad
            mistaken += missed
    zeros, top = 0, -math.inf
    for i in range(n):  # its own loop: on vectors
        ei = exp(target[i] - log_norm)
        e[i] = ei
        query[i] = ei * np.float64(a[i])
    for i in range(n):
        ei = e[i]
        zeros += ei == 0.0
        top = ei if ei > top else top
    if weighted:
        out[0], out[1] = interleaved_sum(terms[0, :n]), interleaved_sum(terms[1, :n])
    else:
        out[0], out[1] = float(wrong), float(mistaken)
    out[2], out[3], out[4], out[5], out[6] = low, 0.0, interleaved_sum(e), top, float(zeros)


@nb.jit(**_PARALLEL)
def entropy_step(z, f, a, h, s, coef, log_norm, target, f_new, e, query, lo, hi, lane,
                 parts):  # pragma: no cover - compiled
    """:func:`_entropy_lane` on every lane of ``lo:hi``, lane ``q``'s stats into
    ``parts[q]``."""
    weighted = s.shape[0] > 0
    for q in nb.prange(count_lanes(lo, hi, lane)):
        start, stop = lane_rows(lo, hi, lane, q)
        _entropy_lane(z[start:stop], f[start:stop], a[start:stop], h[start:stop],
                      s[start:stop] if weighted else s, coef, log_norm,
                      target[start:stop], f_new[start:stop], e[start:stop],
                      query[start:stop], np.empty((2, stop - start if weighted else 0)),
                      parts[q])
