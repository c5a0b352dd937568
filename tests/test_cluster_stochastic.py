"""Stochastic boosting on a dask array (``pytest -m cluster``): each partition draws its
own rows from the fit's seed, the round and the rows' global indices
(:mod:`oracleboost.rows.subsample`), so a subsampled fit on a LocalCluster of 2 worker
processes is the fit in memory, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from test_cluster import BLOCK, _data, _same_model  # noqa: E402

from oracleboost.boosters import (  # noqa: E402
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
)
from oracleboost.oracles import StumpOracle  # noqa: E402

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_a_subsampled_fit_on_a_dask_array_is_the_fit_in_memory(client):
    X, labels = _data(0)  # 3 partitions and a part, in chunks of other sizes
    y = (labels == "yes").astype(float) + 0.1 * X[:, 0]
    for make in (CoordinateBoostingClassifier, FunctionalGradientRegressor):
        target = labels if make is CoordinateBoostingClassifier else y

        def booster(make=make, **draws):
            return make(StumpOracle(block_size=BLOCK), block_size=BLOCK, n_estimators=8,
                        random_state=5, **draws)

        draws = dict(subsample=0.5, colsample_bytree=0.6)
        mem = booster(**draws).fit(X, target)
        dk = booster(**draws).fit(da.from_array(X, chunks=(3000, 2)),
                                  da.from_array(target, chunks=5000))
        _same_model(mem, dk)
        assert mem.stop_reason_ == dk.stop_reason_
        plain = booster().fit(X, target)  # (the draws changed the fit)
        assert not np.array_equal(plain.history_["loss"], mem.history_["loss"])
