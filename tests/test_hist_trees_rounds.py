"""Boosting rounds of HistTreeOracle's trees equal LightGBM's on the same bins.

On features of at most 100 distinct integers (one bin a value in both libraries) and
half-integer targets, the residual descent ``t ← t − 0.1·h`` with ``h`` the answer of
``project(t)`` grows LightGBM's trees: after every round the residuals equal those of
``lightgbm.train`` (``objective="regression"``, ``learning_rate=0.1``, the same
``num_leaves`` and leaf constraints) to float32 rounding, LightGBM's gradients being
float32.  One stale split (a leaf split twice at the same threshold) made them part
after two rounds: this checks every round of several seeds and tree sizes.
"""

from __future__ import annotations

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from oracleboost.oracles import HistTreeOracle  # noqa: E402


def _data(seed: int, n: int = 1000, d: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 60, size=(n, d)).astype(float)
    y = 0.5 * X[:, 0] + 20 * np.sin(X[:, 1] / 9) + 3 * rng.normal(size=n)
    return X, np.round(2 * y) / 2


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("leaves", [4, 31])
def test_rounds_follow_lightgbm(seed, leaves):
    X, y = _data(seed)
    rounds = 15
    params = dict(objective="regression", num_leaves=leaves, learning_rate=0.1,
                  min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0,
                  max_bin=255, verbosity=-1, num_threads=1, deterministic=True)
    booster = lgb.train(params, lgb.Dataset(X, y), rounds)
    bound = HistTreeOracle(num_leaves=leaves, n_jobs=1).bind(X)
    t = y - y.mean()
    scale = np.abs(y).max()
    for r in range(rounds):
        h = bound.project(t)
        t = t - 0.1 * h.train_output
        theirs = y - booster.predict(X, num_iteration=r + 1)
        assert np.abs(t - theirs).max() <= 1e-6 * scale, f"round {r}"
        assert h.tree.n_leaves == booster.dump_model()["tree_info"][r]["num_leaves"]
