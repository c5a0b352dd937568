"""Synthetic ranking data of Grubb & Bagnell's (2011) experiments, §5, Figure 2.

:func:`make_ranking` is a synthetic stand-in for MSLR-WEB10K.

References
----------
Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from oracleboost._typing import RandomStateLike
from oracleboost.datasets._common import _check_size

__all__ = ["make_ranking"]

_N_GRADES = 5  # relevance 0..4, as in LETOR / MSLR-WEB10K


def make_ranking(
    n_queries: int = 100,
    docs_per_query: int = 20,
    n_features: int = 10,
    random_state: RandomStateLike = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LETOR-like synthetic ranking data with graded relevance 0–4.

    MSLR-WEB10K (10,000 queries, 136 features, relevance 0–4) cannot be downloaded
    offline; this generator stands in for it.  Features ``x ~ N(0, I_p)``; a latent
    score ``s = w·x + ½((v·x)² − 1) + 0.3 ε`` with random unit vectors w, v (one pair
    for the whole data set) and ``ε ~ N(0, 1)``; within each query, relevance is the
    equal-frequency quantile bin of s: the document of within-query rank r (0 = lowest
    s) gets ``⌊5 r / m⌋`` for m documents per query.  So every query with m ≥ 5 holds
    each grade ⌊m/5⌋ or ⌈m/5⌉ times, and pairs are only comparable within a query.

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries (≥ 1).
    docs_per_query : int, default=20
        Documents per query (≥ 2).
    n_features : int, default=10
        Feature dimension p (≥ 1).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of float64, shape (n_queries * docs_per_query, n_features)
    relevance : ndarray of int64, shape (n_queries * docs_per_query,)
        Grades in {0, …, 4}; larger is more relevant.
    qid : ndarray of int64, shape (n_queries * docs_per_query,)
        ``0, …, 0, 1, …, 1, …``: each query's documents are contiguous rows.
    """
    n_queries = _check_size(n_queries, "n_queries", 1)
    m = _check_size(docs_per_query, "docs_per_query", 2)
    p = _check_size(n_features, "n_features", 1)
    rng = check_random_state(random_state)
    w = rng.standard_normal(p)
    w /= np.linalg.norm(w)
    v = rng.standard_normal(p)
    v /= np.linalg.norm(v)
    n = n_queries * m
    X = rng.standard_normal((n, p))
    score = X @ w + 0.5 * ((X @ v) ** 2 - 1.0) + 0.3 * rng.standard_normal(n)
    order = np.argsort(score.reshape(n_queries, m), axis=1, kind="stable")
    rank = np.argsort(order, axis=1, kind="stable")
    relevance = (_N_GRADES * rank // m).astype(np.int64).ravel()
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), m)
    return X, relevance, qid
