"""NDCG of any finite relevance grade: the gain 2**y − 1 overflows float64 from y = 1,024,
but a query's NDCG does not change when its gains are divided by one number."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from oracleboost.boosters import FunctionalGradientRanker
from oracleboost.losses import ndcg


def _dcg(rel: list[Fraction], scores: np.ndarray) -> float:
    """DCG of the order of decreasing scores, tied rows sharing their gains' mean over
    the positions they take (scikit-learn's ``ignore_ties=False``)."""
    order = np.argsort(-scores, kind="stable")
    total, start = 0.0, 0
    while start < len(order):
        end = start + 1
        while end < len(order) and scores[order[end]] == scores[order[start]]:
            end += 1
        mean = sum(rel[i] for i in order[start:end]) / (end - start)
        total += float(mean) * sum(1.0 / math.log2(k + 2) for k in range(start, end))
        start = end
    return total


def _exact_ndcg(y, raw, groups) -> float:
    """NDCG with the gains 2**y − 1 as exact integers (integer grades): the reference,
    computed without float64's range."""
    total = 0.0
    queries = np.unique(groups)
    for g in queries:
        grades = [int(v) for v in y[groups == g]]
        scores = raw[groups == g]
        gains = [2**v - 1 for v in grades]
        top = max(gains)
        if top == 0 or len(grades) < 2:
            total += 1.0
            continue
        rel = [Fraction(v, top) for v in gains]  # each gain over the largest: in [0, 1]
        total += _dcg(rel, scores) / _dcg(rel, np.array([float(r) for r in rel]))
    return total / len(queries)


def _direct_ndcg(y, raw, groups) -> float:
    """The plain formula: scikit-learn's ndcg_score on gains 2**y − 1, query by query."""
    values = []
    for g in np.unique(groups):
        gains, scores = 2.0 ** y[groups == g] - 1.0, raw[groups == g]
        values.append(1.0 if len(gains) < 2 or not gains.any()
                      else ndcg_score(gains[None], scores[None]))
    return float(np.mean(values))


def _ranking(seed: int, n: int = 60, top: int = 6, integer: bool = True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, top, size=n).astype(float) if integer else rng.uniform(0, top, n)
    return y, rng.normal(size=n), rng.integers(0, 7, size=n)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("integer", [True, False])
def test_ndcg_is_the_plain_formula_where_it_does_not_overflow(seed, integer):
    y, raw, groups = _ranking(seed, top=30, integer=integer)
    assert ndcg(y, raw, groups) == pytest.approx(_direct_ndcg(y, raw, groups), rel=1e-14)
    if integer:
        assert ndcg(y, raw, groups) == pytest.approx(_exact_ndcg(y, raw, groups), rel=1e-14)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shift", [1_000, 1_100, 5_000])
def test_ndcg_of_grades_beyond_float64_s_gains(seed, shift):
    y, raw, groups = _ranking(seed)
    big = y + shift * (y > 0)  # grades 0 and shift + 1 ... shift + 5
    got = ndcg(big, raw, groups)
    assert np.isfinite(got)
    assert got == pytest.approx(_exact_ndcg(big, raw, groups), rel=1e-14)


def test_grades_whose_gains_differ_by_more_than_float64_holds():
    """Gains 2**2000 − 1 and 2**5 − 1: the small one is lost next to the large one, as
    it is in the exact ratio's float64 value."""
    y = np.array([2000.0, 5.0, 0.0, 1e300])
    raw = np.array([0.0, 1.0, 2.0, 3.0])
    groups = np.array([0, 0, 0, 1])
    expected = (1.0 / math.log2(4) / 1.0 + 1.0) / 2  # the top gain ranked third; a lone row
    assert ndcg(y, raw, groups) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_the_ranker_scores_grades_above_a_thousand(seed):
    y, _, _ = _ranking(seed, n=80)
    rng = np.random.default_rng(seed)
    X = np.column_stack([y + rng.normal(size=80), rng.normal(size=80)])
    qid = np.repeat(np.arange(8), 10)
    est = FunctionalGradientRanker(n_estimators=4, random_state=seed).fit(X, y, qid)
    big = y + 1_100 * (y > 0)
    score = est.score(X, big, qid)
    assert score == pytest.approx(_exact_ndcg(big, est.predict(X), qid), rel=1e-14)
    # the fit itself compares grades only
    grown = FunctionalGradientRanker(n_estimators=4, random_state=seed).fit(X, big, qid)
    np.testing.assert_array_equal(grown.predict(X), est.predict(X))


@pytest.mark.parametrize("bad, match", [
    (np.nan, r"score: y contains NaN"),
    (np.inf, r"score: y contains NaN or inf"),
    (-1.0, r"y must be non-negative"),
])
def test_the_ranker_s_score_names_y(bad, match):
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(30, 2)), rng.integers(0, 3, 30).astype(float), np.arange(30) // 10
    est = FunctionalGradientRanker(n_estimators=2).fit(X, y, qid)
    y_bad = y.copy()
    y_bad[4] = bad
    with pytest.raises(ValueError, match=match):
        est.score(X, y_bad, qid)
    with pytest.raises(ValueError, match=r"y must have shape \(30,\)"):
        est.score(X, y[:, None], qid)
