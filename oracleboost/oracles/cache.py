"""Caching oracle calls on disk with ``joblib.Memory``.

``CachedOracle(oracle, memory).bind(X)`` fingerprints ``X`` once (``joblib.hash``), at
bind time, and keys every later call on that fingerprint, the query's name and arrays,
the wrapped oracle's parameters (its pickled hash), the library version and, for
stochastic oracles only, the query's seed.  The wrapped oracle is bound lazily, on
the first miss: a second identical run of a booster neither binds nor calls it.
"""

from __future__ import annotations

import joblib
import numpy as np
from sklearn.utils.validation import check_memory

from .. import __version__
from .base import BoundOracle, Capabilities, Oracle

__all__ = ["CachedOracle"]


def _answer(inner, query, oracle_token, fingerprint, version, arrays, seed):
    """The cached function; ``inner`` (a thunk giving the bound oracle) is not hashed."""
    bound = inner()
    if query == "correlate":
        return bound.correlate(arrays[0], random_state=seed)
    if query == "project":
        return bound.project(arrays[0], arrays[1], random_state=seed)
    if query == "columns":
        return bound.columns()
    if query == "column_hypothesis":
        return bound.column_hypothesis(*arrays)
    return bound.correlation_vector(arrays[0])


class _BoundCached(BoundOracle):
    def __init__(self, oracle: CachedOracle, X, fingerprint: str):
        super().__init__(oracle, len(X))
        self._X = X
        self._inner = None
        self.fingerprint = fingerprint
        self._token = joblib.hash(oracle.oracle)
        self._call = check_memory(oracle.memory).cache(_answer, ignore=["inner"])
        self.n_inner_binds = 0

    def _bound(self) -> BoundOracle:
        if self._inner is None:
            self._inner = self.oracle.oracle.bind(self._X)
            self.n_inner_binds += 1
        return self._inner

    def _key_seed(self, random_state):
        return random_state if self.capabilities.stochastic else None

    def _correlate(self, r, random_state):
        return self._call(
            self._bound, "correlate", self._token, self.fingerprint, __version__,
            (r,), self._key_seed(random_state),
        )

    def _project(self, target, sample_weight, random_state):
        return self._call(
            self._bound, "project", self._token, self.fingerprint, __version__,
            (target, sample_weight), self._key_seed(random_state),
        )

    # Products with a finite class's matrix pass through uncached: hashing the query
    # vector and reading an entry from disk costs more than the product itself, and
    # dual acceleration asks for one every step.
    def _correlation_vector(self, r):
        return self._bound().correlation_vector(r)

    def _combine(self, w):
        return self._bound().combine(w)

    def _columns(self):
        return self._call(
            self._bound, "columns", self._token, self.fingerprint, __version__, (), None
        )

    def _column_hypothesis(self, j, scale):
        return self._call(
            self._bound, "column_hypothesis", self._token, self.fingerprint, __version__,
            (j, scale), None,
        )


class CachedOracle(Oracle):
    """Wrap an oracle so that its answers are cached on disk.

    Parameters
    ----------
    oracle : Oracle
        The wrapped hypothesis class.
    memory : str, joblib.Memory or None
        Where to cache (a directory or a ``joblib.Memory``); ``None`` disables caching
        while keeping the wrapper, as scikit-learn's ``Pipeline(memory=None)`` does.

    Notes
    -----
    A cache key holds the fingerprint of ``X`` (hashed once per ``bind``), the query and
    its arrays (hashed per call, O(n)), ``joblib.hash(oracle)`` and the library version;
    a seed is part of the key only for oracles that declare themselves stochastic.
    """

    def __init__(self, oracle: Oracle, memory=None):
        self.oracle = oracle
        self.memory = memory

    @property
    def capabilities(self) -> Capabilities:
        return self.oracle.capabilities

    def bind(self, X) -> BoundOracle:
        if not isinstance(self.oracle, Oracle):
            raise TypeError(f"CachedOracle wraps an Oracle; got {type(self.oracle).__name__}")
        # Validate X exactly as the wrapped oracle will (it may hold row indices), but
        # without binding it: that is deferred to the first cache miss.
        X = np.asarray(X)
        if X.ndim == 0 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty array; got shape {X.shape}")
        if np.issubdtype(X.dtype, np.number) and not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or inf; every entry must be finite")
        return _BoundCached(self, X, joblib.hash(X))
