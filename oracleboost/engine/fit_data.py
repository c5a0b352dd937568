"""A fit's data, made by the backend where its rows are: memory is a backend too.

``fit`` asks :func:`fit_backend` for X's backend once, and the backend makes the fit's
data (:meth:`~oracleboost.engine.backends.Backend.classification_data`,
:meth:`~oracleboost.engine.backends.Backend.regression_data`): the features as *rows*
(with their row blocks, and the backend that binds an oracle to them), the labels or
targets, the weights.  A booster builds its problem from that one object, in memory or
on a cluster alike; what it can do only with every row in this process (an exact
optimum, a warm start's signature) it asks of the backend by need
(:meth:`~oracleboost.engine.backends.Backend.can`), never by name.

:class:`MemoryBackend` is this process's memory: the rows are NumPy (or SciPy sparse)
arrays, passed over by threads (:mod:`oracleboost.rows`), checked by
:func:`~oracleboost.engine.classifier.classification_data`, and any oracle binds to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost._validation import check_sample_weight
from oracleboost.engine.backends import Backend, backend_for, device_backend
from oracleboost.engine.classifier import classification_data
from oracleboost.engine.input import check_offset, validate_input
from oracleboost.oracles.base import BoundOracle, Oracle
from oracleboost.rows.blocks import RowBlocks

__all__ = ["MEMORY", "MemoryBackend", "MemoryClassificationData", "MemoryRegressionData",
           "MemoryRows", "fit_backend"]


@dataclass(frozen=True)
class MemoryRows:
    """A fit's features in this process: ``X`` (validated: float64 or sparse), its row
    blocks (on the booster's threads), and the backend."""

    X: Any
    blocks: RowBlocks
    backend: Backend


@dataclass(frozen=True)
class MemoryClassificationData:
    """A classifier's data in memory, as a backend gives it: ``ypm`` the labels (±1
    ``int8`` for two classes, or class indices), ``s`` the normalised weights of the kept
    rows, ``group`` MABoost's secondary set (True) when given.  In memory ``s`` is kept
    even when every weight is equal (a backend may give None then: they cancel); the
    boosters read both alike (:func:`oracleboost.engine.backends.equal_weights`)."""

    rows: MemoryRows
    ypm: np.ndarray
    s: np.ndarray
    group: np.ndarray | None = None
    #: ``init_score`` of the kept rows (float64, one row per row), None when not given
    offset: np.ndarray | None = None


@dataclass(frozen=True)
class MemoryRegressionData:
    """A regressor's data in memory: float64 targets ``y`` and the weights ``s`` (None:
    no weights were given, every row's is 1)."""

    rows: MemoryRows
    y: np.ndarray
    s: np.ndarray | None
    #: ``init_score`` of the kept rows, None when not given
    offset: np.ndarray | None = None


class MemoryBackend(Backend):
    """Rows in this process's memory: every need is met, any oracle binds.  (A fitted
    booster predicts on arrays in memory itself: :func:`backend_for` is None for them.)"""

    name = "memory"
    collection = "arrays in memory"
    cannot: dict[str, str] = {}

    def rows(self, estimator: Any, X: Any, block_size: int) -> MemoryRows:
        """``X``'s rows, in blocks of ``block_size`` on the estimator's threads."""
        return MemoryRows(X, RowBlocks(X.shape[0], block_size, estimator.n_jobs), self)

    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, sample_group: Any = None,
                            scale_free: bool = True,
                            labels: str = "signs",
                            offset: Any = None) -> MemoryClassificationData:
        # (``scale_free`` is the estimator's own ``_scale_free_weights`` in memory;
        # ``offset`` is ``init_score``, cut with the rows of weight 0)
        if sample_group is not None:
            sample_group = _checked_group(sample_group, np.shape(X)[0])
        if offset is not None:
            offset = check_offset(offset, np.shape(X)[0])
        data = classification_data(estimator, X, y, sample_weight, sample_group, offset,
                                   binary=labels == "signs")
        two = labels == "signs" or (labels == "auto" and data.n_classes == 2)
        ypm = data.signs(np.int8) if two else data.y_index
        group, offset = data.rows
        return MemoryClassificationData(
            self.rows(estimator, data.X, block_size), ypm, data.s,
            group, offset)

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int, offset: Any = None) -> MemoryRegressionData:
        X, y = validate_input(estimator, X, y, y_numeric=True)
        if offset is not None:
            offset = check_offset(offset, X.shape[0])
        if sample_weight is None:  # unit weights: none kept (n·8 bytes less at the peak)
            return MemoryRegressionData(self.rows(estimator, X, block_size), y, None, offset)
        s = check_sample_weight(sample_weight, X.shape[0])
        X, y, s, offset = estimator._positive_weight_rows(X, y, s, offset)
        return MemoryRegressionData(self.rows(estimator, X, block_size), y, s, offset)

    def bind(self, oracle: Oracle, rows: MemoryRows, **keywords: Any) -> BoundOracle:
        return oracle.bind(rows.X, **keywords)



def _checked_group(sample_group: Any, n: int) -> np.ndarray:
    """MABoost's ``sample_group`` as a mask of the secondary set, checked."""
    g = np.asarray(sample_group)
    if g.shape != (n,):
        raise ValueError(f"sample_group must have shape ({n},); got {g.shape}")
    if not np.isin(g, (0, 1)).all():
        raise ValueError("sample_group must hold 0 (primary) or 1 (secondary) per row")
    return g.astype(bool)


#: This process's memory, the backend of every fit not given another's collection.
MEMORY = MemoryBackend()


def fit_backend(X: Any, oracle: Any = None) -> Backend:
    """The backend a fit on ``X`` runs on: ``X``'s (:func:`backend_for`); for rows in
    memory, the backend of the ``oracle``'s ``device`` (``StumpOracle(device="cuda")``:
    :func:`~oracleboost.engine.backends.device_backend`), else memory."""
    backend = backend_for(X)
    wanted = None if oracle is None else device_backend(oracle)
    if backend is None:
        backend = wanted
    elif wanted is not None and wanted.name != backend.name:
        raise ValueError(
            f"the oracle's device={oracle.device!r} runs a fit on {wanted.collection}, but "
            f"X is {backend.collection}; pass X in memory (NumPy) or set the oracle's "
            "device='cpu'")
    return MEMORY if backend is None else backend
