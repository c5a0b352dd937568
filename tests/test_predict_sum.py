"""``Hypothesis.predict_sum``: many rounds of one class added to a running sum at once.

The claim under test is bit for bit: the compiled stump sum equals the loop
``out += coef[r] * h.predict(X)`` on every float64 (compared as int64 bit patterns
too, so signed zeros and NaN payloads count), whatever the threads and blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
)
from oracleboost.oracles import stumps
from oracleboost.oracles.base import Hypothesis, NonFiniteOutput, class_runs
from oracleboost.oracles.stumps import (
    ConstantHypothesis,
    LabelCodeStump,
    RegressionStump,
    SignStump,
    StumpOracle,
    VectorStump,
)

SEEDS = range(3)
K = 3  # outputs of the vector-valued hypotheses


# -- helpers ------------------------------------------------------------------------------
def loop(hypotheses, coef, X, out) -> np.ndarray:
    """The reference: one ``predict`` a round, ``out += coef[r] * pred`` (what the model's
    running scores do).  Overflow to inf is part of the answer, not a failure."""
    out = out.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for h, c in zip(hypotheses, np.asarray(coef, dtype=np.float64), strict=True):
            out += c * h.predict(X)
    return out


def assert_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(actual, expected)
    assert actual.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(actual.view(np.int64), expected.view(np.int64))


def summed(hypotheses, coef, X, out, **kw) -> np.ndarray:
    """``predict_sum`` of the first hypothesis' class on a copy of ``out``."""
    out = out.copy()
    type(hypotheses[0]).predict_sum(hypotheses, coef, X, out, **kw)
    return out


def make_X(rng, n: int, d: int = 5) -> np.ndarray:
    """Features with ties: a column of few levels, the others on a coarse grid."""
    X = np.round(rng.normal(size=(n, d)), 1)
    X[:, 0] = rng.integers(0, 3, size=n)
    return X


def coefficients(rng, R: int, regime: str = "ordinary") -> np.ndarray:
    """Coefficients of every sign and scale, with zeros, negative zeros and subnormal
    ones ("ordinary"); "huge" adds some near the float64 maximum, whose products and
    sums overflow to ±inf and then to NaN (inf − inf), as they do in the loop."""
    c = rng.normal(size=R) * 10.0 ** rng.integers(-3, 3, size=R)
    special = [0.0, -0.0, 5e-324, -7.5e-310, 1e-300]
    if regime == "huge":
        special += [1e300, -1e300, 1.5e308, -1.5e308, 2.0**600]
    at = rng.integers(0, R, size=min(R, max(2, R // 50)))
    c[at] = rng.choice(special, size=at.size)
    return c


def leaf(rng, vector: bool):
    v = rng.normal(size=K) * 10.0 ** rng.integers(-2, 9, size=K) if vector else (
        float(rng.normal() * 10.0 ** rng.integers(-2, 9)))
    return v


def random_hypotheses(kind: str, rng, X: np.ndarray, R: int) -> list[Hypothesis]:
    """``R`` hypotheses of one class whose thresholds are values of ``X`` (rows equal to
    a threshold go left) or lie between them; one in ten is a constant of that shape."""
    n, d = X.shape
    vector = kind in ("vector", "codes", "vector_constant")
    hs: list[Hypothesis] = []
    for _ in range(R):
        j = int(rng.integers(d))
        theta = float(X[rng.integers(n), j]) + (0.05 if rng.random() < 0.3 else 0.0)
        if kind == "sign":
            h = SignStump(j, theta, int(rng.choice([-1, 1])), d)
        elif kind == "regression":
            h = RegressionStump(j, theta, leaf(rng, False), leaf(rng, False), d)
        elif kind == "codes":
            kl, kr = rng.choice(K, size=2, replace=False)
            h = LabelCodeStump(j, theta, int(kl), int(kr), K, d)
        elif kind == "vector":
            h = VectorStump(j, theta, leaf(rng, True), leaf(rng, True), d)
        else:
            h = ConstantHypothesis(leaf(rng, vector), d)
        hs.append(h)
    return hs


KINDS = ["sign", "regression", "codes", "vector", "constant", "vector_constant"]


def start(rng, n: int, vector: bool) -> np.ndarray:
    """A running sum already holding an intercept (and a -0.0 or two)."""
    out = rng.normal(size=(n, K) if vector else n)
    out.flat[:2] = -0.0
    return out


# -- hand-built hypotheses of every class -----------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("R", [1, 2, 3000])
@pytest.mark.parametrize("regime", ["ordinary", "huge"])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_class_bit_for_bit_on_one_and_two_threads(kind, R, regime, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n = 1037  # not a multiple of any block size
    X = make_X(rng, n)
    hs = random_hypotheses(kind, rng, X, R)
    coef = coefficients(rng, R, regime)
    out0 = start(rng, n, kind in ("vector", "codes", "vector_constant"))
    expected = loop(hs, coef, X, out0)

    monkeypatch.setattr(stumps, "_MIN_CELLS", 1)  # let small sums use every thread
    threads = []
    real_map = stumps._map
    monkeypatch.setattr(stumps, "_map", lambda fn, items, n_threads, star=False: (
        threads.append(n_threads), real_map(fn, items, n_threads, star))[1])
    for n_jobs in (1, 2):
        assert_bits(summed(hs, coef, X, out0, n_jobs=n_jobs), expected)
    assert threads == [1, 2]  # the compiled path ran, on one thread then on two


@pytest.mark.parametrize("seed", SEEDS)
def test_blocks_and_threads_do_not_change_the_bits(seed, monkeypatch):
    """Tiny blocks, three threads, a single row, fewer rows than a block."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(stumps, "_MIN_CELLS", 1)
    for n in (1, 15, 17, 1037):
        X = make_X(rng, n)
        hs = random_hypotheses("regression", rng, X, 500)
        coef = coefficients(rng, 500)
        out0 = start(rng, n, False)
        expected = loop(hs, coef, X, out0)
        for floats, n_jobs in ((1 << 15, 3), (16, 1), (16, 3), (1 << 20, 2)):
            monkeypatch.setattr(stumps, "_BLOCK_FLOATS", floats)
            assert_bits(summed(hs, coef, X, out0, n_jobs=n_jobs), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_mixed_stump_classes_in_one_call(seed):
    """±1 stumps and constants (what AdaBoost's correlate returns) in one pass."""
    rng = np.random.default_rng(seed)
    X = make_X(rng, 300)
    hs = [h for pair in zip(random_hypotheses("sign", rng, X, 200),
                            random_hypotheses("regression", rng, X, 200),
                            random_hypotheses("constant", rng, X, 200), strict=True)
          for h in pair]
    coef = coefficients(rng, len(hs))
    out0 = start(rng, 300, False)
    assert_bits(summed(hs, coef, X, out0), loop(hs, coef, X, out0))


@pytest.mark.parametrize("layout", ["fortran", "strided", "read_only"])
def test_layouts_of_X_and_out(layout):
    """X as a DataFrame gives it (Fortran order), a column slice, a read-only array;
    ``out`` as a strided column of a larger array is updated in place."""
    rng = np.random.default_rng(0)
    base = make_X(rng, 700, 10)
    X = {"fortran": np.asfortranarray(base[:, :5]), "strided": base[:, ::2],
         "read_only": base[:, :5].copy()}[layout]
    X.flags.writeable = layout != "read_only"
    hs = random_hypotheses("vector", rng, X, 400)
    coef = coefficients(rng, 400)
    holder = rng.normal(size=(700, 2 * K))
    out = holder[:, ::2]  # not contiguous
    expected = loop(hs, coef, X, out)
    VectorStump.predict_sum(hs, coef, X, out, n_jobs=2)
    assert_bits(out, expected)
    assert_bits(holder[:, ::2], expected)  # in place, not a copy


# -- hypotheses as the oracle returns them ----------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("max_bins", [8, 255])
def test_hypotheses_of_the_real_oracle(seed, max_bins):
    """Stumps from ``StumpOracle().bind(X)`` queries (quantile-binned thresholds with
    ``max_bins=8``), detached as an ensemble keeps them, predicted on new rows, on the
    training rows, and on rows equal to their thresholds."""
    rng = np.random.default_rng(seed)
    n, d = 400, 6
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1], 1)  # ties
    bound = StumpOracle(max_bins=max_bins).bind(X)
    labels = rng.integers(0, K, size=n)
    by_class: dict[type, list[Hypothesis]] = {}
    for _ in range(150):
        r = rng.normal(size=n) + 0.5 * np.sign(X[:, rng.integers(d)])
        queries = [
            bound.correlate(r),
            bound.project(r * 3.0, rng.random(n)),
            bound.correlate(np.eye(K)[labels] * rng.random((n, 1)) - 1.0 / K),
            bound.project(rng.normal(size=(n, K)) + np.eye(K)[labels]),
        ]
        for h in queries:
            by_class.setdefault(type(h), []).append(h.detach())
    assert {SignStump, RegressionStump, LabelCodeStump, VectorStump} <= set(by_class)

    new = rng.normal(size=(500, d))
    at = [h for h in by_class[RegressionStump] + by_class[SignStump] if hasattr(h, "threshold")]
    for i, h in enumerate(at[:500]):
        new[i, h.feature] = h.threshold  # exactly on the threshold: goes left
    for rows in (new, X):
        for cls, hs in by_class.items():
            # 600 rounds, each hypothesis recurring: 240,000 (row, round) cells or more,
            # enough for two threads' blocks (65,536 cells a thread at the least)
            hs = hs * 4
            coef = coefficients(rng, len(hs))
            vector = np.ndim(hs[0].predict(rows[:1])) == 2
            out0 = start(rng, len(rows), vector)
            expected = loop(hs, coef, rows, out0)
            for n_jobs in (1, 2):
                assert_bits(summed(hs, coef, rows, out0, n_jobs=n_jobs), expected)
            assert cls.predict_sum.__func__ is stumps._CompiledSum.predict_sum.__func__


def rounds_sum(ensemble, X) -> np.ndarray:
    """``intercept + Σ_r round_delta[r] h_{round_index[r]}(X)`` through ``predict_sum``,
    consecutive rounds grouped by class, as a model would call it."""
    hs = [ensemble.hypotheses[j] for j in ensemble.round_index]
    coef = np.asarray(ensemble.round_delta, dtype=np.float64)
    out = np.zeros((len(X),) + np.shape(ensemble.intercept)) + ensemble.intercept
    for cls, a, b in class_runs(hs):
        cls.predict_sum(hs[a:b], coef[a:b], X, out)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_fitted_ensembles_equal_the_models_decision(seed):
    """AdaBoost (recurring stumps, coefficients folded by scale), gradient boosting of
    regression stumps with an intercept, and softmax boosting with vector-leaf and
    label-coded stumps: the grouped ``predict_sum`` equals the model's running sum."""
    Xc, yc = make_classification(400, 6, random_state=seed)
    Xr, yr = make_regression(400, 6, noise=1.0, random_state=seed)
    X3, y3 = make_classification(400, 6, n_informative=4, n_classes=3, random_state=seed)
    models = [
        (CoordinateBoostingClassifier(StumpOracle(max_bins=16), step="adaboost",
                                      n_estimators=200), Xc, yc),
        (FunctionalGradientRegressor(StumpOracle(), n_estimators=200, learning_rate=0.1),
         Xr, yr),
        (FunctionalGradientClassifier(StumpOracle(), loss="softmax", query="project",
                                      n_estimators=60), X3, y3),
        (FunctionalGradientClassifier(StumpOracle(), loss="softmax", query="correlate",
                                      n_estimators=60), X3, y3),
    ]
    new = np.random.default_rng(seed).normal(size=(333, 6))
    for model, X, y in models:
        ens = model.fit(X, y).ensemble_
        for rows in (X, new):
            assert_bits(rounds_sum(ens, rows), ens.decision_function(rows))


# -- what the default loop decides --------------------------------------------------------
class NaNOnNegatives(Hypothesis):
    """Predicts ``x_0``, and NaN (or inf) where it is negative."""

    def __init__(self, bad: float = np.nan):
        self.bad = bad

    def predict(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.where(X[:, 0] < 0, self.bad, X[:, 0])


@pytest.mark.parametrize(("bad", "word"), [(np.nan, "NaN"), (np.inf, "inf")])
def test_default_raises_on_a_non_finite_prediction_naming_the_hypothesis(bad, word):
    X = np.array([[1.0], [-1.0], [2.0], [-3.0]])
    good, h = NaNOnNegatives(0.0), NaNOnNegatives(bad)
    out = np.full(4, 0.5)
    # No repr of its own: named by its class, not by an address.
    with pytest.raises(NonFiniteOutput, match=f"^a weak learner \\(NaNOnNegatives\\) predicted "
                                              f"{word} on 2 of 4 rows of X") as info:
        Hypothesis.predict_sum([good, h], np.array([2.0, 1.0]), X, out)
    assert isinstance(info.value, FloatingPointError)
    assert info.value.h is h
    assert_bits(info.value.pred, h.predict(X))
    # The rounds before it were added, as the loop adds them; nothing of the bad one.
    assert_bits(out, 0.5 + 2.0 * good.predict(X))


def test_class_runs():
    a, b, c = SignStump(0, 0.0, 1, 1), ConstantHypothesis(1.0, 1), RegressionStump(0, 0, 1, 2, 1)
    hs = [a, a, b, a, c, c, c]
    assert list(class_runs(hs)) == [(SignStump, 0, 2), (ConstantHypothesis, 2, 3),
                                    (SignStump, 3, 4), (RegressionStump, 4, 7)]
    assert list(class_runs([])) == []


def test_default_is_the_loop_for_any_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    hs = [NaNOnNegatives(0.0) for _ in range(5)]
    coef = coefficients(rng, 5)
    out0 = start(rng, 50, False)
    out = out0.copy()
    NaNOnNegatives.predict_sum(hs, coef, X, out)
    assert_bits(out, loop(hs, coef, X, out0))
    Hypothesis.predict_sum([], np.empty(0), X, out)  # nothing to add
    assert_bits(out, loop(hs, coef, X, out0))
    with pytest.raises(ValueError):
        Hypothesis.predict_sum(hs, coef[:4], X, out)


def test_stumps_hand_the_unusual_to_the_default():
    """A non-finite leaf raises where a row reaches it, with the rounds before added; a
    subclass keeps its own predict; a stump of other features fails as predict fails."""
    X = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 5.0]])
    ok = RegressionStump(0, 0.5, 1.0, 2.0, 2)
    nan_right = RegressionStump(1, 0.0, 3.0, np.nan, 2)
    out = np.zeros(3)
    with pytest.raises(NonFiniteOutput, match=r"a weak learner \(RegressionStump\(feature=1, "
                       r"threshold=0\.0, left=3\.0, right=nan\)\) predicted NaN on 2 of 3"):
        RegressionStump.predict_sum([ok, nan_right], np.array([1.0, 1.0]), X, out)
    assert_bits(out, ok.predict(X))
    # A NaN leaf no row reaches changes nothing: the loop does not raise either.
    unreached = RegressionStump(1, 10.0, 3.0, np.nan, 2)
    out = np.zeros(3)
    RegressionStump.predict_sum([unreached], np.array([2.0]), X, out)
    assert_bits(out, np.full(3, 6.0))

    class Shifted(RegressionStump):
        def predict(self, X):
            return super().predict(X) + 1.0

    hs = [Shifted(0, 0.5, 1.0, 2.0, 2), ok]
    out0 = np.zeros(3)
    assert_bits(summed(hs, np.array([1.0, 3.0]), X, out0), loop(hs, [1.0, 3.0], X, out0))

    with pytest.raises(ValueError, match="X has 2 features but the hypothesis was fitted on 3"):
        SignStump.predict_sum([SignStump(0, 0.5, 1, 3)], np.ones(1), X, np.zeros(3))
    with pytest.raises(ValueError, match="n_jobs must be None or a non-zero int"):
        SignStump.predict_sum([SignStump(0, 0.5, 1, 2)], np.ones(1), X, np.zeros(3), n_jobs=0)
