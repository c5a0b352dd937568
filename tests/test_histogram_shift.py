"""The squared loss's next query from the last one: ``StumpOracle(histogram_refresh)``.

The naive projection's next target is ``y − f − c·h``, this target less ``c`` times the
answer.  The stump oracle makes its histogram as this target's histogram less ``c``
times the answer's, from the counts of the answer's smaller side, and sums every
``histogram_refresh``-th query from its rows again.  These tests hold it to the
histograms summed from the rows and to the answers made from them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracleboost.boosters import FunctionalGradientRegressor
from oracleboost.oracles import StumpOracle, stumps
from oracleboost.oracles import _stump_kernels as kernels
from oracleboost.oracles.stumps import ConstantHypothesis, HistogramMemo, RegressionStump

EPS = np.finfo(float).eps


@pytest.fixture(autouse=True)
def shifted_even_when_small(monkeypatch):
    """Let a few thousand rows use shifted histograms (the oracle keeps data of fewer
    than 65,536 row-feature cells on sums from the rows)."""
    monkeypatch.setattr(stumps, "_MIN_SHIFT_CELLS", 1)


def _data(seed: int, n: int = 3000, d: int = 6):
    """Features with ties and a column with NaN; a target made elementwise (no BLAS:
    the same numbers on every machine)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1], 1)
    X[rng.random(n) < 0.15, 2] = np.nan
    y = X[:, 0] - 2.0 * np.abs(X[:, 1]) + np.where(np.isnan(X[:, 2]), 1.5, X[:, 3] ** 2)
    return X, y + 0.1 * rng.normal(size=n)


def _hist(bound, r: np.ndarray) -> np.ndarray:
    out = np.empty((bound.n_features, bound._B))
    bound._histograms(kernels.hist_1d, (np.ascontiguousarray(r),), (out,))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_shifted_histogram_is_the_summed_one_within_its_roundings(seed):
    """40 queries ``r − c·h`` (32 of them shifted): each shifted histogram is within the
    roundings of the updates and of the sums of the histogram summed from the rows, and
    the answer is the one made from the summed histogram."""
    X, y = _data(seed)
    bound = StumpOracle(block_size=700).bind(X)
    rng = np.random.default_rng(seed + 10)
    r = y.copy()
    h = bound.project(r)
    assert isinstance(h.query_memo, HistogramMemo) and h.query_memo.age == 0
    scale, ages = 0.0, []
    for _ in range(40):
        c = float(rng.uniform(0.05, 1.0))
        memo = h.query_memo
        # the magnitudes the updates and the sums are rounded against
        scale = max(scale, float((_hist(bound, np.abs(r)) +
                                  abs(c) * _hist(bound, np.abs(h.train_output))).max()))
        r = r - c * h.train_output
        h = bound._project_shifted(r, memo, c)
        exact = bound.project(r)
        ages.append(h.query_memo.age)
        summed = exact.query_memo.hist
        rows_a_bin = float(bound._counts.max())
        bound_err = (4 * h.query_memo.age + rows_a_bin) * EPS * scale
        assert np.abs(h.query_memo.hist - summed).max() <= bound_err
        assert type(h) is type(exact)
        if isinstance(h, RegressionStump):
            assert (h.feature, h.threshold, h.default_left) == \
                (exact.feature, exact.threshold, exact.default_left)
            np.testing.assert_allclose([h.left, h.right], [exact.left, exact.right],
                                       rtol=1e-9, atol=1e-12 * scale)
        np.testing.assert_allclose(h.train_output, exact.train_output, rtol=1e-9,
                                   atol=1e-12 * scale)
    # ages 1..31, then a query summed from its rows (age 0), then 1 ...
    assert ages == [*range(1, 32), 0, *range(1, 9)]


def test_a_constant_answer_shifts_every_bin_by_its_count():
    X, y = _data(0, n=500)
    bound = StumpOracle().bind(X)
    r = np.full(500, 3.0)  # one value: the constant, whatever the features
    h = bound.project(r)
    assert isinstance(h, ConstantHypothesis) and h.query_memo.split is None
    target = r - 0.5 * h.train_output
    shifted = bound._project_shifted(target, h.query_memo, 0.5)
    np.testing.assert_array_equal(shifted.query_memo.hist, _hist(bound, target))
    assert shifted.query_memo.age == 1 and float(shifted.predict(X[:1])[0]) == 1.5


def test_a_memo_of_other_bins_or_data_is_not_used(monkeypatch):
    X, y = _data(0, n=800)
    h = StumpOracle().bind(X).project(y)
    other = StumpOracle(max_bins=16).bind(X)  # other thresholds
    assert other._shift_plan(h.query_memo) is None
    assert StumpOracle().bind(X)._shift_plan(h.query_memo) is not None  # the same bins
    assert other._shift_plan(None) is None
    assert StumpOracle(histogram_refresh=1).bind(X)._shift_plan(h.query_memo) is None
    # where no query is ever shifted, no answer keeps a memo
    assert StumpOracle(histogram_refresh=1).bind(X).project(y).query_memo is None
    monkeypatch.setattr(stumps, "_MIN_SHIFT_CELLS", X.size + 1)
    assert StumpOracle().bind(X).project(y).query_memo is None


def _counted_kernels(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = stumps.BoundStumpOracle._histograms

    def counting(self, kernel, rows, outs, split=0):
        calls.append(kernel.__name__)
        return real(self, kernel, rows, outs, split)

    monkeypatch.setattr(stumps.BoundStumpOracle, "_histograms", counting)
    return calls


@pytest.mark.parametrize("refresh, rounds", [(1, 20), (32, 70), (5, 23)])
def test_every_refresh_th_query_is_summed_from_its_rows(monkeypatch, refresh, rounds):
    X, y = _data(1, n=1000)
    calls = _counted_kernels(monkeypatch)
    FunctionalGradientRegressor(StumpOracle(histogram_refresh=refresh),
                                n_estimators=rounds).fit(X, y)
    summed = math.ceil(rounds / refresh)
    # (one hist_1d at bind: the rows a bin)
    assert calls.count("hist_1d") == 1 + summed
    assert calls.count("side_counts") == rounds - summed


@pytest.mark.parametrize("params", [
    {"sample_weight": True}, {"projection": "residual"}, {"projection": "repeated"},
    {"loss": "huber"},
])
def test_other_queries_are_summed_from_their_rows(monkeypatch, params):
    """Weights, the other projections and losses: no next query is this one less a step
    along the answer."""
    X, y = _data(2, n=1000)
    calls = _counted_kernels(monkeypatch)
    params = dict(params)
    s = np.random.default_rng(0).uniform(0.5, 2.0, 1000) if params.pop("sample_weight",
                                                                      False) else None
    FunctionalGradientRegressor(StumpOracle(), n_estimators=12, **params).fit(
        X, y, sample_weight=s)
    assert "side_counts" not in calls


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fit_with_shifted_histograms_is_the_fit_summed_from_the_rows(seed):
    """200 rounds: the same stumps, round by round, and the same loss to the roundings."""
    X, y = _data(seed)
    fits = [FunctionalGradientRegressor(StumpOracle(histogram_refresh=k), n_estimators=200,
                                        learning_rate=0.3).fit(X, y) for k in (1, 32)]
    a, b = (m.ensemble_.hypotheses for m in fits)
    assert [(h.feature, h.threshold, h.default_left) for h in a] == \
        [(h.feature, h.threshold, h.default_left) for h in b]
    np.testing.assert_allclose(fits[0].history_["loss"], fits[1].history_["loss"],
                               rtol=1e-10)
    np.testing.assert_allclose(fits[0].predict(X), fits[1].predict(X), rtol=0,
                               atol=1e-10 * np.abs(y).max())


def test_histogram_refresh_is_checked():
    X, y = _data(0, n=50)
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="histogram_refresh"):
            StumpOracle(histogram_refresh=bad).bind(X)


def test_a_warm_start_continues_the_shifted_histograms():
    """The memo is in the booster's state: 40 + 60 rounds are the 100-round fit."""
    X, y = _data(3)
    make = lambda n: FunctionalGradientRegressor(  # noqa: E731
        StumpOracle(), n_estimators=n, warm_start=True)
    long = make(100).fit(X, y)
    warm = make(40).fit(X, y)
    warm.set_params(n_estimators=100).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), long.predict(X))
    np.testing.assert_array_equal(warm.history_["loss"], long.history_["loss"])


def test_a_cached_oracle_fits_what_the_oracle_fits(tmp_path, monkeypatch):
    from oracleboost.oracles import CachedOracle

    X, y = _data(4)
    calls = _counted_kernels(monkeypatch)
    plain = FunctionalGradientRegressor(StumpOracle(), n_estimators=40).fit(X, y)
    assert calls.count("side_counts") == 40 - 2
    for _ in range(2):  # the second from the cache's entries
        calls.clear()
        cached = FunctionalGradientRegressor(CachedOracle(StumpOracle(), str(tmp_path)),
                                             n_estimators=40).fit(X, y)
        np.testing.assert_array_equal(cached.predict(X), plain.predict(X))
    assert "side_counts" not in calls and "hist_1d" not in calls
