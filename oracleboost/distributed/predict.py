"""Predictions on a dask array: a fitted booster's prediction method on every row chunk,
where the chunk is, as a dask array."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from oracleboost.distributed.cluster import map_rows, refuse_sparse_chunks

__all__ = ["on_dask"]


def on_dask(estimator: Any, method: Callable, X: Any, *, staged: bool = False) -> Any:
    """``method`` (a prediction method of a fitted ``estimator``) on a dask array X, row
    chunk by row chunk, as a dask array (``staged``: a generator of dask arrays, one a
    round).  The shapes and dtypes are the method's own on one row."""
    check_is_fitted(estimator, "ensemble_")
    refuse_sparse_chunks(X, type(estimator).__name__)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array X; got shape {X.shape}")
    probe = np.zeros((1, X.shape[1]))
    if not staged:
        one = method(probe)
        return map_rows(functools.partial(_on_rows, method, one), X, dtype=one.dtype,
                        columns=None if one.ndim == 1 else one.shape[1])
    return (map_rows(functools.partial(_on_rows, functools.partial(_nth, method, k), one),
                     X, dtype=one.dtype, columns=None if one.ndim == 1 else one.shape[1])
            for k, one in enumerate(method(probe)))


def _on_rows(method: Callable, one: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``method(X)``, and for a chunk of no row (a boolean selection can leave one) an
    empty array shaped as ``one``'s rows (the method itself refuses 0 rows, as
    scikit-learn's estimators do)."""
    if X.shape[0] == 0:
        return np.empty((0,) + one.shape[1:], dtype=one.dtype)
    return method(X)


def _nth(method: Callable, k: int, X: np.ndarray) -> np.ndarray:
    """The ``k``-th array a staged ``method`` yields on X."""
    for i, out in enumerate(method(X)):
        if i == k:
            return out
    raise IndexError(k)  # pragma: no cover - the probe counted the stages
