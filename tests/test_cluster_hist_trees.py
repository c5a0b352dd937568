"""Histogram trees fitted on a dask array equal the trees fitted in memory, bit for bit,
under every booster that runs on Dask (on a LocalCluster of 2 worker processes that the
tests start and close): only the leaves' histograms and the splits travel, each worker
keeping its partitions' rows ordered by leaf."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from oracleboost.boosters import (  # noqa: E402
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import HistTreeOracle, OracleCapabilityError  # noqa: E402
from oracleboost.rows.partitioned import NotDistributedError  # noqa: E402

# small blocks: the rows make four partitions of 16 blocks (the last one shorter)
BLOCK = 16
N = 3 * 16 * BLOCK + 100


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _data(seed: int, nan: bool):
    rng = np.random.RandomState(seed)
    X = rng.randn(N, 4)
    X[:, 1] = rng.randint(0, 5, N)  # ties, few distinct values
    if nan:  # a column with NaN in the first partition only, one with NaN everywhere
        X[:16 * BLOCK][rng.rand(16 * BLOCK) < 0.2, 2] = np.nan
        X[rng.rand(N) < 0.1, 3] = np.nan
    score = np.nan_to_num(X[:, 0] + 0.4 * X[:, 1] - 0.5 * X[:, 3]) + 0.5 * rng.randn(N)
    return X, score


def _trees(**kw):
    return HistTreeOracle(num_leaves=4, min_data_in_leaf=10, block_size=BLOCK, **kw)


def _same_fit(mem, dk, X) -> None:
    """The same rounds, trees and scores (on X in memory, and on a dask array of X)."""
    keys = set(mem.history_) - {"time", "cumulative_time"}
    assert keys == set(dk.history_) - {"time", "cumulative_time"}
    for key in keys:
        np.testing.assert_array_equal(mem.history_[key], dk.history_[key], err_msg=key)
    assert [repr(h) for h in mem.estimators_] == [repr(h) for h in dk.estimators_]
    trees = 0
    for a, b in zip(mem.estimators_, dk.estimators_, strict=True):
        a, b = getattr(a, "inner", a), getattr(b, "inner", b)  # (a multiclass vote's tree)
        if hasattr(a, "tree"):
            trees += 1
            assert a.tree.digest() == b.tree.digest()
            np.testing.assert_array_equal(a.split_gain, b.split_gain)
    assert trees > 0
    method = "decision_function" if hasattr(mem, "decision_function") else "predict"
    expected = getattr(mem, method)(X)
    np.testing.assert_array_equal(getattr(dk, method)(X), expected)
    np.testing.assert_array_equal(
        getattr(dk, method)(da.from_array(X, chunks=500)).compute(), expected)


def _fits_agree(make, X, y, s=None) -> None:
    mem = make().fit(X, y, sample_weight=s)
    # chunks that are not partitions: the fit cuts its own
    dk = make().fit(da.from_array(X, chunks=(300, 2)), da.from_array(y, chunks=400),
                    sample_weight=None if s is None else da.from_array(s, chunks=350))
    _same_fit(mem, dk, X)


def _weights(seed: int) -> np.ndarray:
    rng = np.random.RandomState(seed + 30)
    s = rng.rand(N) * np.ldexp(1.0, rng.randint(-20, 20, N))
    s[rng.rand(N) < 0.05] = 0.0
    return s


@pytest.mark.parametrize("case, nan", [
    ("regressor", False), ("regressor-weighted", True), ("regressor-correlate", True),
    ("binary", True), ("multiclass", False), ("multiclass-codes", True),
    ("adaboost", True), ("maboost", False),
])
def test_hist_trees_on_a_dask_array_equal_the_trees_in_memory(client, case, nan):
    X, score = _data(len(case), nan)
    s = None
    if case.startswith("regressor"):
        y = score
        s = _weights(1) if case.endswith("weighted") else None
        query = "correlate" if case.endswith("correlate") else "project"
        make = lambda: FunctionalGradientRegressor(  # noqa: E731
            _trees(reg_lambda=1.0), block_size=BLOCK, n_estimators=4, query=query)
    elif case in ("binary", "multiclass", "multiclass-codes"):
        y = score > 0.5 if case == "binary" else np.digitize(score, [0.0, 1.5])
        params = dict(loss="softmax", query="correlate") if case.endswith("codes") else {}
        s = _weights(2) if case == "binary" else None
        make = lambda: FunctionalGradientClassifier(  # noqa: E731
            _trees(growth="depth"), block_size=BLOCK, n_estimators=4, **params)
    elif case.startswith("adaboost"):
        y = score > 0.5
        make = lambda: CoordinateBoostingClassifier(  # noqa: E731
            _trees(), block_size=BLOCK, n_estimators=4, loss="logistic")
    else:
        y = score > 0.5
        make = lambda: MirrorBoostingClassifier(  # noqa: E731
            _trees(), block_size=BLOCK, n_estimators=4)
    _fits_agree(make, X, y, s)


def test_what_trees_cannot_do_on_a_dask_array_is_refused_by_name(client):
    X, score = _data(0, False)
    Xd, yd = da.from_array(X, chunks=500), da.from_array(score > 0.5, chunks=500)
    # the oracle's blocks must be the booster's: the workers' partitions are both
    with pytest.raises(ValueError, match=r"block_size \(64\) must equal the booster's"):
        CoordinateBoostingClassifier(HistTreeOracle(block_size=64), block_size=BLOCK,
                                     n_estimators=2).fit(Xd, yd)
    # a class with no correlation vector: refused as in memory
    with pytest.raises(OracleCapabilityError, match="HistTreeOracle is not one"):
        AcceleratedMarginClassifier(_trees(), block_size=BLOCK, n_estimators=2).fit(Xd, yd)
    with pytest.raises(NotDistributedError, match="warm_start=False"):
        model = CoordinateBoostingClassifier(_trees(), block_size=BLOCK, n_estimators=2,
                                             warm_start=True)
        model.fit(Xd, yd)
        model.fit(Xd, yd)
