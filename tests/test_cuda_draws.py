"""Stochastic boosting's row draws on the GPU (:mod:`oracleboost.cuda.draws`), on numba's
CUDA simulator (:mod:`cuda_simulator`): NumPy's Philox-4×64 words made on the device
from the round's key alone, so the rows kept are the CPU's bit for bit, and a fit with
``subsample`` and ``colsample_bytree`` takes the CPU fit's stumps in every round, for
every booster that draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.cuda import cuda_module
from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.cuda.draws import _kept
from oracleboost.oracles import StumpOracle
from oracleboost.rows.subsample import row_uniforms


@pytest.mark.parametrize("n", [1, 6, 7, 203])
def test_the_rows_kept_are_the_cpu_s(n):
    """The mask, and rows of one value or of K, for seeds, rounds and fractions: each
    row's draw is word i of the CPU's stream (four words a counter, the last counter
    cut short)."""
    rng = np.random.RandomState(n)
    blocks = DeviceBlocks(n)
    cuda = cuda_module()
    for seed, round, fraction in ((0, 0, 0.5), (2**62 + 11, 7, 0.1), (12345, 999, 0.93)):
        keep = row_uniforms(seed, round, 0, n) < fraction
        (mask,), _ = _kept(blocks, 0, seed=seed, round=round, fraction=fraction)
        np.testing.assert_array_equal(mask.copy_to_host(), keep.astype(np.float64))
        for a in (rng.randn(n), rng.randn(n, 3)):
            (out,), _ = _kept(blocks, 0, cuda.to_device(a), seed=seed, round=round,
                              fraction=fraction)
            want = np.where(keep if a.ndim == 1 else keep[:, None], a, 0.0)
            np.testing.assert_array_equal(out.copy_to_host(), want)


def _data(seed: int = 0, n: int = 160):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    t = 2.0 * X[:, 0] + np.sin(3.0 * X[:, 1]) + 0.3 * rng.randn(n)
    return X, t


def _split(h) -> tuple:
    return (h.feature, h.threshold) if hasattr(h, "threshold") else repr(h)


@pytest.mark.parametrize("make, target", [
    (lambda **kw: CoordinateBoostingClassifier(**kw), "binary"),
    (lambda **kw: CoordinateBoostingClassifier(loss="logistic", **kw), "binary"),
    (lambda **kw: MirrorBoostingClassifier(**kw), "binary"),
    (lambda **kw: MirrorBoostingClassifier(mirror="euclidean", **kw), "binary"),
    (lambda **kw: FunctionalGradientRegressor(**kw), "values"),
    (lambda **kw: FunctionalGradientClassifier(validation_fraction=None, **kw), "binary"),
    (lambda **kw: FunctionalGradientClassifier(validation_fraction=None, **kw), "classes"),
    (lambda **kw: FunctionalGradientClassifier(validation_fraction=None, query="correlate",
                                               **kw), "classes"),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_stochastic_fit_takes_the_cpu_fit_s_stumps(make, target, weighted):
    X, t = _data()
    y = {"values": t, "binary": (t > 0).astype(int), "classes": np.digitize(t, [-1, 1])}[
        target]
    w = np.random.RandomState(1).uniform(0.2, 3.0, y.size) if weighted else None
    options = {"n_estimators": 4, "subsample": 0.5, "colsample_bytree": 0.7,
               "random_state": 3}
    cpu = make(oracle=StumpOracle(max_bins=16), **options).fit(X, y, w)
    gpu = make(oracle=StumpOracle(max_bins=16, device="cuda"), **options).fit(X, y, w)
    assert [_split(h) for h in gpu.estimators_] == [_split(h) for h in cpu.estimators_]
    for key in ("edge", "step"):
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-15, err_msg=key)
