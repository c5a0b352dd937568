"""A classifier's ``fit`` preamble when X is a dask array (:mod:`oracleboost._cluster`).

The same checks and the same data as :func:`.classification_data` in memory, made on
the workers: the classes (the distinct labels, a small reduction), the weights checked,
the rows of weight 0 dropped, the others normalised by the same power of two, and the
rows cut into partitions of whole blocks.  Only reductions come back to the client.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._cluster import (
    ClusterBlocks,
    NotDistributedError,
    Partitioned,
    client_for,
    from_chunks,
    rows_per_partition,
)
from .._validation import normalising_power
from ..oracles.cluster_stumps import ClusterRows
from .classifier import check_classes

__all__ = ["ClusterClassificationData", "cluster_classification_data"]


@dataclass(frozen=True)
class ClusterClassificationData:
    """Rows of positive weight on the workers: the features (``rows``), the labels as
    ±1 int8 (``ypm``) and the normalised weights ``s`` (None when all are equal)."""

    rows: ClusterRows
    ypm: Partitioned
    s: Partitioned | None


def _dask_rows(a, n: int, name: str, chunks):
    """``a`` (a dask array, or anything NumPy takes) as a 1-D dask array of ``n`` rows."""
    import dask.array as da

    if not hasattr(a, "__dask_graph__"):
        a = np.asarray(a)
        a = da.from_array(a, chunks=chunks if a.shape[:1] == (n,) else "auto")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} entries but X has {n} rows")
    return a.rechunk(chunks)


def _signs(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.where(np.searchsorted(classes, y) == 1, 1, -1).astype(np.int8)


def cluster_classification_data(estimator: Any, X: Any, y: Any, sample_weight: Any,
                                block_size: int, multiclass_in_memory: bool = False
                                ) -> ClusterClassificationData:
    """The preamble of a binary classifier's ``fit`` on a dask array X; sets
    ``classes_`` and ``n_features_in_``.  ``multiclass_in_memory``: the estimator fits
    more than two classes in memory, so more than two here is a ``NotDistributedError``
    (not scikit-learn's binary-only error)."""
    import dask
    import dask.array as da

    name = type(estimator).__name__
    client = client_for(f"{name}.fit")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric for {name}; got a dask array of dtype {X.dtype}")
    X = X.rechunk({1: -1})
    if any(math.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    n, d = X.shape
    P = rows_per_partition(block_size)
    y = _dask_rows(y, n, "y", X.chunks[0])
    s = None if sample_weight is None else _dask_rows(
        sample_weight, n, "sample_weight", X.chunks[0]).astype(np.float64)
    classes = np.unique(da.unique(y).compute())
    check_classification_targets(classes)
    if multiclass_in_memory and len(classes) > 2:
        raise NotDistributedError(
            f"{name} on a dask array is binary for now; y has {len(classes)} classes "
            "(their weights over the rows × classes are not distributed yet): fit a NumPy "
            "array"
        )
    check_classes(name, classes, binary=True)
    if s is not None:
        finite, negative, top, zeros = dask.compute(
            da.isfinite(s).all(), (s < 0).any(), s.max(), (s == 0).any())
        if not finite:
            raise ValueError("sample_weight contains NaN or infinity")
        if negative:
            raise ValueError("sample_weight contains negative values; weights must be "
                             "non-negative")
        if not top > 0:
            raise ValueError("sample_weight sums to zero; at least one weight must be "
                             "positive")
        if zeros:  # rows of weight 0 go, as in memory (they would move the bins)
            keep = s > 0
            X, y, s = X[keep], y[keep], s[keep]
            X, y, s = X.compute_chunk_sizes(), y.compute_chunk_sizes(), s.compute_chunk_sizes()
            n = X.shape[0]
        # normalise_weights' power of two (its sum made by Dask: the power differs from
        # the one in memory only if the mean lies within rounding of a power of two)
        exponent = math.frexp(float(top))[1]
        scaled = float(s.map_blocks(np.ldexp, -exponent, dtype=np.float64).sum().compute())
        s = s.map_blocks(np.ldexp, normalising_power(exponent, scaled, n), dtype=np.float64)
    X = X.astype(np.float64).rechunk((P, d))
    sizes = X.chunks[0]
    blocks = ClusterBlocks(client, sizes, block_size)
    y = y.rechunk((sizes,))
    ypm = from_chunks(client, y.map_blocks(_signs, classes, dtype=np.int8)
                      .to_delayed().ravel().tolist(), sizes)
    weights = None
    if s is not None:
        s = s.rechunk((sizes,))
        low, high = dask.compute(s.min(), s.max())
        if low != high:  # equal weights cancel, as in memory
            weights = from_chunks(client, s.to_delayed().ravel().tolist(), sizes)
    estimator.classes_ = classes
    estimator.n_features_in_ = d
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return ClusterClassificationData(ClusterRows(X, blocks), ypm, weights)
