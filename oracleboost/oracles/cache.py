"""Caching oracle calls on disk with ``joblib.Memory``.

``CachedOracle(oracle, memory).bind(X)`` fingerprints ``X`` once, at bind time (the
bytes of its rows in C order, so the fingerprint does not depend on memory layout), and
keys every later call on that fingerprint, the query's name and arrays, the wrapped
oracle's parameters (its pickled hash), the library version and code, and, for stochastic oracles
only, the query's seed (a ``None`` seed keyed as "any draw").  The wrapped oracle is
bound lazily, on the first miss: a second identical run of a booster neither binds nor
calls it.  Every entry stores the key it was computed for next to the answer and is
checked when loaded; an entry that fails the check is recomputed and overwritten.

A full disk: joblib writes each entry to a temporary file and renames it into place,
and when a write failed it left the temporary file behind (six per run of three calls:
an answer and its metadata each) and, on a cache directory never written, failed the fit
with the ``OSError`` of writing its copy of the cached function's code.  The cache uses
joblib's local store through :class:`TidyFileSystemStore`, which removes a temporary
file whose write failed and reports the function-code failure as joblib reports a
failed entry (a ``CacheWarning``): a cache that cannot write leaves nothing behind and
computes the answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import uuid
import warnings

import joblib
import numpy as np
import scipy.sparse as sp
from joblib._store_backends import CacheWarning, FileSystemStoreBackend
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_memory

from oracleboost._fingerprint import code_fingerprint, fingerprint
from oracleboost._typing import ArrayLike
from oracleboost._version import __version__
from oracleboost._warnings import silenced
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Hypothesis,
    Oracle,
    check_X,
    wrapped_categorical_features,
)

__all__ = ["CachedOracle"]

#: The seed part of a key for a stochastic query asked with ``random_state=None``.
ANY_DRAW = "any draw"


class TidyFileSystemStore(FileSystemStoreBackend):
    """joblib's local store, except that a write that fails (a full disk) leaves no
    temporary file, and a failed write of the function's code warns instead of raising.
    Entries are joblib's own, so the caches of either store read each other."""

    def _concurrency_safe_write(self, to_write, filename, write_func):
        # joblib's concurrency_safe_write, with the temporary file removed on failure
        temporary = f"{filename}.{uuid.uuid4().hex}-{os.getpid()}-{id(threading.current_thread())}"
        try:
            write_func(to_write, temporary)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(temporary)
            raise
        self._move_item(temporary, filename)

    def store_cached_func_code(self, call_id, func_code=None):
        # joblib swallows a failed entry with a CacheWarning but let this one raise
        try:
            super().store_cached_func_code(call_id, func_code)
        except OSError as exc:
            warnings.warn(f"Unable to cache to disk: {exc}", CacheWarning, stacklevel=2)


joblib.register_store_backend("oracleboost_local", TidyFileSystemStore)


def _memory(memory) -> joblib.Memory:
    """``check_memory(memory)``, with joblib's local store replaced by
    :class:`TidyFileSystemStore` (same location, same options, same entries)."""
    memory = check_memory(memory)
    if not (
        isinstance(memory, joblib.Memory)
        and memory.location is not None
        and type(memory.store_backend) is FileSystemStoreBackend
    ):
        return memory  # no caching, or a store of the user's own
    return joblib.Memory(
        memory.location,
        backend="oracleboost_local",
        mmap_mode=memory.mmap_mode,
        compress=memory.compress,
        verbose=getattr(memory, "_verbose", 0),
        backend_options=memory.backend_options,
    )


# The library's one fingerprint of data (layout-independent), used here for the bound X
# (once per bind) and for each query's arrays (once per call).
_fingerprint = fingerprint


def _hash_arrays(arrays: tuple) -> str:
    """The query's arrays (and scalars), hashed independently of memory layout."""
    return fingerprint(*arrays)


def _answer(key, inner, arrays, seed):
    """The cached function, keyed on ``key`` alone (the small dict of key material).

    ``inner`` (a thunk giving the bound oracle), ``arrays`` (hashed into ``key``) and
    ``seed`` (in ``key`` as the oracle's capabilities decide) are not hashed by joblib.
    The entry stores ``key`` next to the answer so a load can check it."""
    bound = inner()
    query = key["query"]
    if query == "correlate":
        answer = bound.correlate(arrays[0], random_state=seed)
    elif query == "project":
        answer = bound.project(arrays[0], arrays[1], random_state=seed)
    elif query == "project_shifted":
        answer = bound._project_shifted(*arrays, random_state=seed)
    elif query == "columns":
        answer = np.asarray(bound.columns())
    else:  # column_hypothesis
        answer = bound.column_hypothesis(*arrays)
    return {"key": key, "answer": answer}


def _finite_with_shape(out, ok_shape) -> bool:
    try:
        out = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return ok_shape(out.shape) and bool(np.isfinite(out).all())


class _BoundCached(BoundOracle):
    def __init__(self, oracle: CachedOracle, X, fingerprint: str,
                 categorical_features: tuple[int, ...] | None = None):
        super().__init__(oracle, X.shape[0])
        self._X = X
        self._categorical = categorical_features
        self._inner = None
        self._bind_lock = threading.Lock()
        self.fingerprint = fingerprint
        self._token = joblib.hash(oracle.oracle)
        self._code = code_fingerprint(oracle.oracle)
        self._call = _memory(oracle.memory).cache(
            _answer, ignore=["inner", "arrays", "seed"]
        )
        self.n_inner_binds = 0

    def _bound(self) -> BoundOracle:
        with self._bind_lock:  # threads sharing this bound oracle bind the inner one once
            if self._inner is None:
                # the keyword only where there are categorical columns: an oracle
                # without the capability is never given it (its bind takes X alone)
                kw = ({} if self._categorical is None
                      else {"categorical_features": self._categorical})
                self._inner = self.oracle.oracle.bind(self._X, **kw)
                self.n_inner_binds += 1
        return self._inner

    def _key_seed(self, random_state):
        if not self.capabilities.stochastic:
            return None
        return ANY_DRAW if random_state is None else int(random_state)

    def _key(self, query: str, arrays: tuple, random_state) -> dict:
        return {
            "query": query,
            "oracle": self._token,
            "X": self.fingerprint,
            # the same values as codes of categories or as numbers are other data
            "categorical": (None if self._categorical is None
                            else list(self._categorical)),
            "version": __version__,
            "code": self._code,
            "arrays": _hash_arrays(arrays),
            "seed": self._key_seed(random_state),
        }

    def _valid(self, entry, key: dict, arrays: tuple) -> bool:
        """Whether a loaded entry is the answer to ``key``: computed for this key, of the
        right type, with finite outputs of the shape the query implies."""
        if not isinstance(entry, dict) or entry.get("key") != key:
            return False
        answer, n = entry.get("answer"), self.n_samples
        if key["query"] == "columns":
            return isinstance(answer, np.ndarray) and _finite_with_shape(
                answer, lambda s: len(s) == 2 and s[0] == n
            )
        if not isinstance(answer, Hypothesis):
            return False
        if key["query"] in ("correlate", "project", "project_shifted"):
            shape = arrays[0].shape  # (n,) or (n, K), as the query
            return _finite_with_shape(answer.train_output, lambda s: s == shape)
        return _finite_with_shape(answer.train_output, lambda s: len(s) in (1, 2) and s[0] == n)

    def _cached(self, query: str, arrays: tuple, random_state=None):
        key = self._key(query, arrays, random_state)
        args = (key, self._bound, arrays, random_state)
        call = self._call
        if call.check_call_in_cache(*args):
            # A reference to the stored entry (nothing computed), loaded here so that a
            # corrupt or foreign entry is recomputed quietly instead of joblib logging
            # the traceback of its failed load.
            try:
                with silenced():  # (safe on threads, as catch_warnings is not)
                    entry = call.call_and_shelve(*args).get()
            except Exception:  # truncated, unreadable, cleared meanwhile: recompute
                entry = None
            if self._valid(entry, key, arrays):
                return entry["answer"]
        # A miss, or an entry that failed the check: compute and (over)write it.
        entry, _ = call.call(*args)
        return entry["answer"]

    def _correlate(self, r, random_state):
        return self._cached("correlate", (r,), random_state)

    def _project(self, target, sample_weight, random_state):
        return self._cached("project", (target, sample_weight), random_state)

    def _project_shifted(self, target, memo, c, *, random_state=None):
        # The wrapped oracle's answer, keyed on the query, the memo it starts from and the
        # step: a cached fit gets the answers (and their memos) an uncached fit makes.
        return self._cached("project_shifted", (target, memo, float(c)), random_state)

    # Products with a finite class's matrix pass through uncached: hashing the query
    # vector and reading an entry from disk costs more than the product itself, and
    # dual acceleration asks for one every step.
    def _correlation_vector(self, r):
        return self._bound().correlation_vector(r)

    def _combine(self, w):
        return self._bound().combine(w)

    def _columns(self):
        return self._cached("columns", ())

    def _column_hypothesis(self, j, scale):
        return self._cached("column_hypothesis", (j, scale))


class CachedOracle(Oracle):
    """Wrap an oracle so that its answers are cached on disk.

    Parameters
    ----------
    oracle : Oracle
        The wrapped hypothesis class.  Anything else raises a ``TypeError`` naming this
        argument when the wrapper is used (its ``capabilities`` or ``bind``); a
        scikit-learn estimator is wrapped as ``CachedOracle(SklearnOracle(est), ...)``.
    memory : str, joblib.Memory or None
        Where to cache (a directory or a ``joblib.Memory``); ``None`` disables caching
        while keeping the wrapper, as scikit-learn's ``Pipeline(memory=None)`` does.

    Notes
    -----
    **Keys.**  A cache key holds the fingerprint of ``X`` (hashed once per ``bind``, from
    its values in C order: a Fortran-ordered copy of ``X`` hits the same entries), the
    indices of its categorical columns (``bind``'s ``categorical_features``), the
    query and its arrays (hashed per call, O(n)), ``joblib.hash(oracle)``, the
    library version and its code (:func:`oracleboost._fingerprint.code_fingerprint`:
    every source file of the package, and the wrapped oracle's class's own file when
    it is a user's), so that an edited checkout or a user's changed oracle never reads
    answers cached by the old code.

    **Seeds.**  A seed is part of the key only for oracles that declare themselves
    stochastic (``capabilities.stochastic``): a non-stochastic oracle (``StumpOracle``,
    ``LightGBMOracle``, ``SklearnOracle(Ridge())`` with Ridge's default solver, any
    estimator without a ``random_state``) hits whatever the seeds.  For a stochastic
    oracle an int seed is keyed exactly, so a booster with a fixed ``random_state``
    reproduces its run and hits on every call of a second identical fit.  A seed of
    ``None`` asks for no particular draw (boosters pass ``None`` when their own
    ``random_state`` is ``None``; see :func:`oracleboost.engine.base.draw_seed`): it is
    keyed as "any draw", so the first answer is stored and reused by later identical
    queries, as ``joblib.Memory`` does for any function.  A stored draw is as good as a
    fresh one; a second identical fit under ``random_state=None`` hits on every call.

    **Entries are checked on load.**  Each entry stores, next to the answer, the key
    material it was computed for.  A loaded entry is used only if it is that key's
    (an entry of another key copied over it is not), and its answer is a
    :class:`~oracleboost.oracles.base.Hypothesis` whose ``train_output`` is finite with
    the shape the query implies (that of ``r`` or ``target``: (n,) or (n, K)), or for
    ``columns()`` a finite array with n rows.  Otherwise, or if the entry cannot be read
    (a truncated file), the answer is recomputed and the entry overwritten, quietly.

    Examples
    --------
    The second identical query is read from the cache's one entry:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from oracleboost.oracles import CachedOracle, TreeOracle
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> target = np.array([0.0, 0.0, 2.0, 4.0])
    >>> folder = tempfile.TemporaryDirectory()
    >>> oracle = CachedOracle(TreeOracle(max_depth=1), folder.name)
    >>> first = oracle.bind(X).project(target, random_state=0)
    >>> again = oracle.bind(X).project(target, random_state=0)
    >>> first.train_output, np.array_equal(again.train_output, first.train_output)
    (array([0., 0., 3., 3.]), True)
    >>> len(list(Path(folder.name).rglob("output.pkl")))
    1
    >>> folder.cleanup()
    """

    def __init__(self, oracle: Oracle, memory: str | joblib.Memory | None = None) -> None:
        self.oracle = oracle
        self.memory = memory

    def _wrapped(self) -> Oracle:
        oracle = self.oracle
        if not isinstance(oracle, Oracle):
            hint = (
                "; wrap a scikit-learn estimator as SklearnOracle(estimator) first"
                if isinstance(oracle, BaseEstimator)
                else ""
            )
            raise TypeError(
                "CachedOracle's `oracle` argument must be an Oracle (a hypothesis class "
                f"such as StumpOracle()); got {type(oracle).__name__}{hint}"
            )
        return oracle

    @property
    def capabilities(self) -> Capabilities:
        # (queries on a subset of the features are not keyed: refused by the cache; nor
        # are weights a class, which its project does not take)
        return dataclasses.replace(self._wrapped().capabilities, feature_subsets=False,
                                   per_class_weights=False)

    def bind(self, X: ArrayLike, *,
             categorical_features: tuple[int, ...] | None = None) -> BoundOracle:
        """Fingerprint X and return the caching bound oracle; the wrapped oracle is
        bound on the first miss (with ``categorical_features``, which only an oracle
        declaring ``capabilities.categorical`` takes, and which the cache keys on)."""
        self._wrapped()
        categorical = wrapped_categorical_features(self, categorical_features)
        # Validate X exactly as the wrapped oracle will (it may hold row indices), but
        # without binding it: that is deferred to the first cache miss.
        if sp.issparse(X):  # the wrapped class takes it, or check_X refuses it by name
            X = check_X(X, allow_nan=self.capabilities.allow_nan,
                        accept_sparse=self.capabilities.sparse_input,
                        who=type(self._wrapped()).__name__)
            return _BoundCached(self, X, _fingerprint(X))
        X = np.asarray(X)
        if X.ndim == 0 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty array; got shape {X.shape}")
        if np.issubdtype(X.dtype, np.number):
            if self.capabilities.allow_nan:  # NaN is a missing value to the wrapped class
                if np.isinf(X).any():
                    raise ValueError("X contains inf; every entry must be finite or NaN")
            elif not np.all(np.isfinite(X)):
                raise ValueError("X contains NaN or inf; every entry must be finite")
        return _BoundCached(self, X, _fingerprint(X), categorical)

