"""AdaBoost stumps on a dask array three times larger than each worker's memory limit.

X (float64, 3.2 million rows × 128 features: 3.3 GB) is generated chunk by chunk on the
workers and never exists in this process; each worker of the LocalCluster may hold
1 GiB.  The workers keep one byte a feature a row (the bins) and a few floats a row.
The first round is checked against the answer computed by hand: feature 3 takes the
values 0..9, the label is ``x3 >= 5`` flipped where ``x4 < 0.1``, every other feature
is noise, so the first stump is ``x3 > 4.5`` and its edge is ``1 − 2 · flips / n``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from oracleboost.boosters import CoordinateBoostingClassifier  # noqa: E402
from oracleboost.oracles import StumpOracle  # noqa: E402
from oracleboost.oracles.stumps import SignStump  # noqa: E402

ROWS, FEATURES, BLOCK = 3_200_000, 128, 8192
LIMIT = 2**30


def _signal(chunk: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Features 3 and 4 of a chunk, from a stream of their own (the chunk's seed and 1):
    the labels and the flips are made again from them alone, not from all of X."""
    rng = np.random.default_rng([chunk, 1])
    return rng.integers(0, 10, rows), rng.random(rows)


def _features(block_info=None) -> np.ndarray:
    info = block_info[None]
    rows, cols = info["chunk-shape"]
    chunk = info["chunk-location"][0]
    X = np.random.default_rng(chunk).random((rows, cols))
    X[:, 3], X[:, 4] = _signal(chunk, rows)
    return X


def _labels(block_info=None) -> np.ndarray:
    # y is its own graph (features 3 and 4 made again from the chunk's seed), sharing no
    # task with X
    info = block_info[None]
    x3, x4 = _signal(info["chunk-location"][0], info["chunk-shape"][0])
    return ((x3 >= 5) ^ (x4 < 0.1)).astype(np.int8)


def _flips(block_info=None) -> np.ndarray:
    chunk = block_info[None]["chunk-location"][0]
    _, x4 = _signal(chunk, ROWS_OF[chunk])
    return np.array([int((x4 < 0.1).sum())])


_CHUNK = 16 * BLOCK
ROWS_OF = (_CHUNK,) * (ROWS // _CHUNK) + ((ROWS % _CHUNK,) if ROWS % _CHUNK else ())


def test_adaboost_on_data_three_times_a_worker():
    assert ROWS * FEATURES * 8 >= 3 * LIMIT
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit=LIMIT, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        chunk = 16 * BLOCK
        rows = (chunk,) * (ROWS // chunk) + ((ROWS % chunk,) if ROWS % chunk else ())
        X = da.map_blocks(_features, chunks=(rows, (FEATURES,)), dtype=np.float64)
        y = da.map_blocks(_labels, chunks=(rows,), dtype=np.int8)
        flips = int(da.map_blocks(_flips, chunks=((1,) * len(rows),),
                                  dtype=np.int64).sum().compute())
        model = CoordinateBoostingClassifier(
            StumpOracle(block_size=BLOCK), block_size=BLOCK, n_estimators=2,
        ).fit(X, y)
        workers = client.scheduler_info()["workers"]
        assert len(workers) == 2  # none was lost to memory
        assert all(w["memory_limit"] == LIMIT for w in workers.values())
    first = model.estimators_[0]
    assert isinstance(first, SignStump)
    assert (first.feature, first.threshold, first.sign) == (3, 4.5, 1)
    edge = 1.0 - 2.0 * flips / ROWS
    assert model.history_["edge"][0] == pytest.approx(edge, rel=1e-12)
    assert model.history_["train_error"][0] == flips / ROWS  # a count: exact
    assert model.history_["step"][0] == pytest.approx(
        0.5 * math.log((1 + edge) / (1 - edge)), rel=1e-12)
    assert len(model.estimators_) == 2
    assert model.history_["loss"][1] < model.history_["loss"][0]
