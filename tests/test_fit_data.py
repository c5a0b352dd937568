"""Memory is a backend (:mod:`oracleboost.engine.fit_data`): a fit's data made where its
rows are, and what a booster asks of it by need."""

from __future__ import annotations

import numpy as np
import pytest

from oracleboost.boosters import AcceleratedMarginClassifier, MirrorBoostingClassifier
from oracleboost.engine.backends import NEEDS, equal_weights
from oracleboost.engine.fit_data import MEMORY, MemoryRows, fit_backend
from oracleboost.oracles import LinearOracle, MatrixOracle, StumpOracle
from oracleboost.oracles.cache import CachedOracle


def _data(seed: int = 0, n: int = 80):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    return X, (X[:, 0] + 0.4 * rng.randn(n) > 0).astype(int)


def test_arrays_fit_in_memory_which_can_do_every_need():
    X, _ = _data()
    assert fit_backend(X) is MEMORY
    assert fit_backend(X.tolist()) is MEMORY
    assert all(MEMORY.can(need) for need in NEEDS)
    with pytest.raises(KeyError, match="unknown need 'rows'"):
        MEMORY.can("rows")


def test_memory_data_keeps_the_rows_of_positive_weight_and_their_weights():
    X, y = _data()
    s = np.where(np.arange(80) % 5 == 0, 0.0, 3.0)
    booster = MirrorBoostingClassifier(StumpOracle(), block_size=16)
    data = MEMORY.classification_data(booster, X, y, s, 16)
    assert isinstance(data.rows, MemoryRows) and data.rows.backend is MEMORY
    assert data.rows.X.shape == (64, 4) and data.rows.blocks.n == 64
    assert data.rows.blocks.block_size == 16
    assert data.ypm.dtype == np.int8 and set(np.unique(data.ypm)) == {-1, 1}
    # the weights are kept in memory even when equal (a backend may drop them)
    assert data.s.shape == (64,) and equal_weights(data.s)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_weights_reads_a_backend_s_weights(seed):
    s = np.random.RandomState(seed).rand(10) + 0.5
    assert equal_weights(None)
    assert equal_weights(np.full(10, s[0]))
    assert not equal_weights(s)


@pytest.mark.parametrize(("group", "message"), [
    (np.zeros(5), r"sample_group must have shape \(80,\); got \(5,\)"),
    (np.full(80, 2), "sample_group must hold 0 .primary. or 1 .secondary. per row"),
])
def test_memory_checks_the_sample_group(group, message):
    X, y = _data()
    booster = MirrorBoostingClassifier(StumpOracle(), smoothness=20)
    with pytest.raises(ValueError, match=message):
        booster.fit(X, y, sample_group=group)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_finite_class_answers_whole_rows_wrapped_or_not(seed):
    # accelerated boosting reads a finite class's J, max |H|, row norms and rows through
    # its bound oracle: a wrapped class (CachedOracle) answers them from its columns
    X, y = _data(seed)
    plain = AcceleratedMarginClassifier(LinearOracle(), n_estimators=8).fit(X, y)
    cached = AcceleratedMarginClassifier(CachedOracle(LinearOracle()), n_estimators=8).fit(X, y)
    matrix = AcceleratedMarginClassifier(MatrixOracle(X), n_estimators=8).fit(
        np.arange(80)[:, None], y)
    np.testing.assert_array_equal(cached.decision_function(X), plain.decision_function(X))
    assert cached.scale_ == plain.scale_ == matrix.scale_
    np.testing.assert_array_equal(matrix.history_["loss"], plain.history_["loss"])
