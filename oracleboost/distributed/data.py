"""A classifier's ``fit`` preamble when X is a dask array (:mod:`oracleboost.distributed.cluster`).

The same checks and the same data as :func:`.classification_data` in memory, made on
the workers: the classes (the distinct labels, a small reduction), the weights checked,
the rows of weight 0 dropped, the others normalised by the same power of two, and the
rows cut into partitions of whole blocks.  Only reductions come back to the client.

Every graph submitted here reads the user's arrays through copies of its own
(:class:`~oracleboost.distributed.cluster.FreshNames`), and each is submitted once: the checks in
one graph; the labels, the weights and the mask of kept rows in a second, persisted
(the rows of weight 0 dropped chunk by chunk, by sizes counted in the first, not by
``compute_chunk_sizes`` graphs); the features in the oracle's two.  So the fit submits
no key twice with two different tasks (dask/dask#9888), and a user's computation on
the same arrays meets none of the keys it built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from oracleboost._validation import normalising_power
from oracleboost.distributed.cluster import (
    ClusterBlocks,
    FreshNames,
    client_for,
    gather,
    persisted_parts,
    refuse_sparse_chunks,
    rows_per_partition,
)
from oracleboost.distributed.stumps import ClusterRows
from oracleboost.engine.classifier import check_classes
from oracleboost.rows.blocks import RowBlocks, outputs_only
from oracleboost.rows.partitioned import Partitioned

__all__ = ["ClusterClassificationData", "cluster_classification_data",
           "cluster_regression_data"]


@dataclass(frozen=True)
class ClusterClassificationData:
    """Rows of positive weight on the workers: the features (``rows``), the labels as
    ±1 int8 (``ypm``) and the normalised weights ``s`` (None when all are equal)."""

    rows: ClusterRows
    ypm: Partitioned
    s: Partitioned | None
    #: MABoost's ``sample_group`` (True: the secondary set), when given
    group: Partitioned | None = None


@dataclass(frozen=True)
class ClusterRegressionData:
    """Rows of positive weight on the workers: the features (``rows``), the float64
    targets ``y`` and the normalised weights ``s`` (None when all are equal)."""

    rows: ClusterRows
    y: Partitioned
    s: Partitioned | None


def _dask_rows(a, n: int, name: str, chunks, fresh: FreshNames, counted: tuple | None):
    """``a`` (a dask array, or anything NumPy takes) as a 1-D dask array of ``n`` rows
    (a NumPy array in ``chunks``, a dask array as it is; one whose rows are of unknown
    count, as ``fresh``'s copy declaring the ``counted`` ones)."""
    import dask.array as da

    if not hasattr(a, "__dask_graph__"):
        a = np.asarray(a)
    if a.ndim != 1:  # (before from_array, whose chunks are 1-D)
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if not hasattr(a, "__dask_graph__"):
        a = da.from_array(a, chunks=chunks if a.shape[:1] == (n,) else "auto")
    if counted is not None:
        a = fresh(a, (counted,))
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} entries but X has {n} rows")
    return a


def _block_rows(block: np.ndarray) -> np.ndarray:
    return np.full((1,) * block.ndim, block.shape[0], dtype=np.int64)


def _count_unknown_rows(client: Any, fresh: FreshNames, arrays: dict) -> tuple[dict, dict]:
    """The dask arrays among ``arrays`` whose rows are of unknown count (a boolean
    selection, a dask dataframe's values): their row chunks by name, all counted in one
    graph, and copies of the per-row ones (all but X) persisted by that same graph.
    Such arrays often share a user's graph (``X[mask]``, ``y[mask]``), and each later
    graph built on them would hold its keys again, optimised its own way (a conflict
    the scheduler warns of, dask/dask#9888): after this, only X's graphs hold them."""
    from dask.core import flatten
    from distributed import futures_of

    todo = {name: a for name, a in arrays.items()
            if hasattr(a, "__dask_graph__") and a.ndim >= 1
            and any(math.isnan(c) for c in a.chunks[0])}
    if not todo:
        return {}, {}
    copies = {name: fresh(a) for name, a in todo.items() if name != "X"}
    counts = [(copies[name] if name in copies else fresh(a)).map_blocks(
        _block_rows, chunks=tuple((1,) * len(c) for c in a.chunks), dtype=np.int64)
        for name, a in todo.items()]
    done = client.persist(list(copies.values()) + counts)
    persisted = dict(zip(copies, done[:len(copies)], strict=True))
    counted = {}
    for (name, a), c in zip(todo.items(), done[len(copies):], strict=True):
        futures = {f.key: f for f in futures_of(c)}  # the blocks' counts, in block order
        rows = np.concatenate(gather(client, [futures[k] for k in flatten(c.__dask_keys__())]))
        counted[name] = tuple(int(v) for v in rows.reshape(len(a.chunks[0]), -1)[:, 0])
    return counted, persisted


def _positive(s: np.ndarray) -> np.ndarray:
    return np.array([np.count_nonzero(s > 0)])


def _kept_rows(a: np.ndarray, keep: np.ndarray) -> np.ndarray:
    return a[keep]


@outputs_only(1)
def _scaled_by(blocks: RowBlocks, s: np.ndarray, *, power: int) -> tuple[tuple, None]:
    return (np.ldexp(s, power),), None


def _class_index(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.searchsorted(classes, y).astype(np.int64)


def _signs(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.where(np.searchsorted(classes, y) == 1, 1, -1).astype(np.int8)


def cluster_classification_data(estimator: Any, X: Any, y: Any, sample_weight: Any,
                                block_size: int, sample_group: Any = None,
                                scale_free: bool = True,
                                labels: str = "signs") -> ClusterClassificationData:
    """The preamble of a classifier's ``fit`` on a dask array X; sets ``classes_`` and
    ``n_features_in_``.  ``sample_group`` (0 or 1 a row, checked on
    the workers) follows the rows kept, as ``group`` (True: 1).  ``scale_free``
    False: the weights are kept as given (a risk that sums them, as
    ``BaseBooster._scale_free_weights`` says), equal or not.  ``labels``: ``"signs"``
    (two classes, as ±1), ``"index"`` (any number of classes, as class indices) or
    ``"auto"`` (±1 for two classes, indices for more); ``ypm`` holds them."""
    rows, labels, weights, group = _cluster_rows(
        estimator, X, y, sample_weight, block_size, classes=True,
        group=sample_group, scale_free=scale_free, labels=labels)
    return ClusterClassificationData(rows, labels, weights, group)


def cluster_regression_data(estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int) -> ClusterRegressionData:
    """The preamble of a regressor's ``fit`` on a dask array X: y numeric and finite
    (checked on the workers), as float64; sets ``n_features_in_``."""
    rows, target, weights, _ = _cluster_rows(estimator, X, y, sample_weight, block_size,
                                             classes=False)
    return ClusterRegressionData(rows, target, weights)


def _cluster_rows(estimator: Any, X: Any, y: Any, sample_weight: Any, block_size: int, *,
                  classes: bool, group: Any = None, scale_free: bool = True,
                  labels: str = "signs"):
    """``(rows, targets, weights, group)`` on the workers: ``classes``: y's classes (set
    as ``classes_``) and the labels (as ``labels`` says); else y as float64, checked
    finite; ``group``
    None, or the rows' 0/1 groups as booleans."""
    import dask.array as da
    from distributed import futures_of

    name = type(estimator).__name__
    refuse_sparse_chunks(X, name)  # before asking for a client: no cluster helps it
    client = client_for(f"{name}.fit")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric for {name}; got a dask array of dtype {X.dtype}")
    fresh = FreshNames()  # a copy of the user's arrays for each graph (see its doc)
    counted, persisted = _count_unknown_rows(client, fresh, {
        "X": X, "y": y, "sample_weight": sample_weight, "sample_group": group})
    y = persisted.get("y", y)
    sample_weight = persisted.get("sample_weight", sample_weight)
    group = persisted.get("sample_group", group)
    row_chunks = counted.get("X", X.chunks[0])
    n, d = sum(row_chunks), X.shape[1]
    if d == 0 or n == 0:  # scikit-learn's words, as in memory
        raise ValueError(f"Found array with {d} feature(s) (shape=({n}, {d})) while a minimum "
                         f"of 1 is required by {name}." if d == 0 else
                         f"Found array with 0 sample(s) (shape=(0, {d})) while a minimum "
                         f"of 1 is required by {name}.")
    P = rows_per_partition(block_size)
    y = _dask_rows(y, n, "y", row_chunks, fresh, counted.get("y"))
    s = None if sample_weight is None else _dask_rows(
        sample_weight, n, "sample_weight", row_chunks, fresh, counted.get("sample_weight"))
    g = None if group is None else _dask_rows(group, n, "sample_group", row_chunks, fresh,
                                              counted.get("sample_group"))

    def column(a, dtype=None):
        """A copy of a per-row input, in X's row chunks."""
        a = fresh(a).rechunk((row_chunks,))
        return a if dtype is None else a.astype(dtype)

    # the first graph: the classes (or y's finiteness), the weights' checks and each
    # chunk's positive weights
    w = None if s is None else column(s, np.float64)
    if classes:
        # the classes of the rows that are kept (weight > 0), as in memory, where the
        # rows of weight 0 go first: a class only they hold is no class of the fit
        labels_kept = column(y) if w is None else column(y)[w > 0]
        checks = [da.unique(labels_kept)]
    else:
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric for {name}; got a dask array of dtype "
                             f"{y.dtype}")
        checks = [da.isfinite(column(y, np.float64)).all()]
    if s is not None:
        checks += [da.isfinite(w).all(), (w < 0).any(), w.max(),
                   w.map_blocks(_positive, chunks=((1,) * len(row_chunks),), dtype=np.int64)]
    if g is not None:
        checks += [da.isin(column(g), [0, 1]).all()]
    checks = gather(client, client.compute(checks))
    if g is not None and not checks.pop():
        raise ValueError("sample_group must hold 0 (primary) or 1 (secondary) per row")
    kept = None  # the rows each of X's row chunks keeps, when some have weight 0
    if s is not None:
        finite, negative, top, positive = checks[1:]
        if not finite:
            raise ValueError("sample_weight contains NaN or infinity")
        if negative:
            raise ValueError("sample_weight contains negative values; weights must be "
                             "non-negative")
        if not top > 0:
            raise ValueError("sample_weight sums to zero; at least one weight must be "
                             "positive")
        if int(positive.sum()) < n:  # rows of weight 0 go, as in memory (they would
            kept = tuple(int(k) for k in positive)  # move the bins)
            n = sum(kept)
    # the classes after the weights' checks (as in memory: the classes are those of the
    # rows of positive weight, which the checks must first find there are)
    if classes:
        found = np.unique(checks[0])
        check_classification_targets(found)
        check_classes(name, found, binary=labels == "signs")
    elif not checks[0]:
        raise ValueError("Input y contains NaN or infinity (found on the workers)")

    def kept_rows(a, keep):
        """``a``'s rows where ``keep`` (chunk by chunk: the sizes are known)."""
        if kept is None:
            return a
        index = "ij"[:a.ndim]
        return da.blockwise(_kept_rows, index, a, index, keep, "i",
                            adjust_chunks={"i": kept}, dtype=a.dtype, meta=a._meta)

    sizes = (P,) * (n // P) + ((n % P,) if n % P else ())
    blocks = ClusterBlocks(client, sizes, block_size)

    def signs(column_y):
        """The ±1 labels (or class indices), or the float64 targets, in partitions."""
        if not classes:
            return column_y.astype(np.float64).rechunk((sizes,))
        if labels == "index" or len(found) > 2:  # the class indices, as np.unique's inverse
            return column_y.rechunk((sizes,)).map_blocks(_class_index, found, dtype=np.int64)
        return column_y.rechunk((sizes,)).map_blocks(_signs, found, dtype=np.int8)

    # the second graph, persisted: the labels, the weights, their sum and extremes, and
    # the mask of the kept rows (X's graphs read it), each made once
    keep = weights = groups = None
    if s is None:
        (labels,) = client.persist([signs(column(y))])
        if g is not None:
            (groups,) = client.persist([(column(g) != 0).rechunk((sizes,))])
    else:
        w = column(s, np.float64)
        mask = w > 0
        w = kept_rows(w, mask)
        # normalise_weights' power of two (its sum made by Dask: the power differs from
        # the one in memory only if the mean lies within rounding of a power of two)
        exponent = math.frexp(float(top))[1]
        labels, w, *scalars = client.persist(
            [signs(kept_rows(column(y), mask)), w.rechunk((sizes,)),
             w.map_blocks(np.ldexp, -exponent, dtype=np.float64).sum(), w.min(), w.max()]
            + ([] if kept is None else [mask])
            + ([] if g is None else [kept_rows(column(g) != 0, mask).rechunk((sizes,))]))
        if g is not None:
            groups = scalars.pop()
        if kept is not None:
            keep = scalars.pop()
        scaled, low, high = (float(v) for v in gather(
            client, [futures_of(a)[0] for a in scalars]))
        if not scale_free:  # kept as given
            weights = persisted_parts(w, sizes)
        elif low != high:  # equal weights cancel, as in memory
            (weights,), _ = blocks.map(_scaled_by, persisted_parts(w, sizes),
                                       power=normalising_power(exponent, scaled, n))

    def features():
        """A copy of X's rows of positive weight, float64, in partitions."""
        a = kept_rows(fresh(X, (row_chunks, X.chunks[1])).rechunk({1: -1}), keep)
        return a.astype(np.float64).rechunk((P, d))

    if classes:
        estimator.classes_ = found
    estimator.n_features_in_ = d
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return (ClusterRows(features(), blocks, features), persisted_parts(labels, sizes),
            weights, None if groups is None else persisted_parts(groups, sizes))
