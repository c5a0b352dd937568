"""Grubb & Bagnell (2011): the non-smooth counterexample (§4) and Theorem 3's rate.

The counterexample, R[f] = 2|f(x1)| + |f(x2)| with H = {±e_1, ±e_2} on two points, is
written as the absolute loss on targets y = −f_0 with sample weights (2, 1) and f
started at 0: then f − y runs from f_0 = (0.37, 3) exactly as f does in the paper, and
the library's weighted mean loss is R/3.  With weights (2, 1) the library's inner
product is the paper's up to a positive factor, and ``correlate`` receives s·v = the
paper's gradient (2 s_1, s_2), so every projection makes the paper's choice.
"""

import math

import numpy as np
import pytest

from oracleboost.boosters import FunctionalGradientRegressor, StopReason
from oracleboost.oracles import MatrixOracle

F0 = np.array([0.37, 3.0])


def _counterexample(projection, n_learners, c=0.25):
    X = np.arange(2)[:, None]
    reg = FunctionalGradientRegressor(
        MatrixOracle(np.eye(2)),
        loss="absolute",
        projection=projection,
        schedule="inv_sqrt",
        learning_rate=c,
        n_estimators=n_learners,
        query="correlate",  # projection (3) over the four hypotheses ±e_1, ±e_2
        init=0.0,
    )
    return reg.fit(X, -F0, sample_weight=np.array([2.0, 1.0]))


def test_naive_projection_never_corrects_the_second_point():
    reg = _counterexample("naive", 2000)
    R = 3 * reg.history_["loss"]  # the paper's R = 2|f1| + |f2|
    residual = reg.predict(np.arange(2)[:, None]) + F0  # f(x) in the paper's terms
    assert residual[1] == 3.0  # exactly: no step ever moved f(x2)
    assert np.min(R) >= 3.0
    assert all(h.j == 0 for h in reg.estimators_)


@pytest.mark.parametrize("projection,n_learners", [("residual", 2000), ("repeated", 4000)])
def test_repeated_and_residual_projection_converge(projection, n_learners):
    reg = _counterexample(projection, n_learners)
    R = 3 * reg.history_["loss"]
    outer = reg.history_["outer"]
    assert outer[-1] >= 1500  # about 2,000 outer iterations of η_t = 0.25/√t
    assert R[-1] < 0.05
    assert np.mean(R[-len(R) // 10 :]) < 0.2  # the average over the last 10% (note P11)
    assert {h.j for h in reg.estimators_} == {0, 1}  # both points get corrected


def test_repeated_projection_counts_t_learners_per_outer_iteration():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = X[:, 0] - 2 * X[:, 1] ** 2
    reg = FunctionalGradientRegressor(
        MatrixOracle(np.sign(rng.randn(40, 25))), projection="repeated", n_estimators=21,
        learning_rate=0.5,
    ).fit(np.arange(40)[:, None], y)
    outer = reg.history_["outer"]
    # outer iteration t fits t weak learners: 1 + 2 + 3 + 4 + 5 + 6 = 21
    np.testing.assert_array_equal(np.bincount(outer.astype(int))[1:], [1, 2, 3, 4, 5, 6])
    # within an outer iteration f does not move: one loss value per outer iteration
    for t in range(1, 7):
        assert len(set(reg.history_["loss"][outer == t])) == 1
    # the inner residual shrinks: ||v'|| after k projections is non-increasing (Alg. 2)
    for t in range(2, 7):
        r = reg.history_["residual_norm"][outer == t]
        assert np.all(np.diff(r) <= 1e-12)


@pytest.mark.parametrize("n", [6, 10])
def test_theorem3_geometric_rate_on_the_coordinate_basis(n):
    """Squared loss (λ = Λ = 1), η = 1/Λ, H = scaled coordinates {c·e_j}: the edge is
    γ = 1/√N (||v − h||² ≤ (1 − 1/N)||v||² for the best coordinate), and
    R_T − R* ≤ (1 − γ²)^T (R_0 − R*) with R* = 0 (Theorem 3)."""
    rng = np.random.RandomState(n)
    y = rng.randn(n) * 3
    reg = FunctionalGradientRegressor(
        MatrixOracle(np.eye(n)), loss="squared", schedule="smoothness", learning_rate=1.0,
        n_estimators=3 * n, init=0.0,
    ).fit(np.arange(n)[:, None], y)
    R = reg.history_["loss"]
    R0 = 0.5 * np.mean(y**2)
    T = np.arange(1, len(R) + 1)
    assert np.all(R <= (1 - 1 / n) ** T * R0 + 1e-12)
    # each step of the theorem's proof: R_{t+1} ≤ R_t − (γ²/(2Λ)) ||∇R_t||² ... with ||∇||² = 2R
    prev = np.concatenate([[R0], R[:-1]])
    assert np.all(R <= prev * (1 - 1 / n) + 1e-12)
    # the coordinate basis represents any f: the loss reaches 0 within n steps
    assert reg.stop_reason_ is StopReason.ZERO_GRADIENT or R[-1] < 1e-20
    assert len(R) <= n


def test_schedules_follow_their_formulas():
    rng = np.random.RandomState(1)
    X = rng.randn(30, 2)
    y = X[:, 0]
    for schedule, expected in [
        ("constant", lambda t: 0.3),
        ("inv_sqrt", lambda t: 0.3 / math.sqrt(t)),
        ("inv_t", lambda t: 0.3 / (1.0 * t)),  # squared loss: λ = 1
        ("smoothness", lambda t: 0.3 / 1.0),  # squared loss: Λ = 1
    ]:
        reg = FunctionalGradientRegressor(
            MatrixOracle(np.eye(30)), schedule=schedule, learning_rate=0.3, n_estimators=8,
            init=0.0,
        ).fit(np.arange(30)[:, None], y)
        # the coordinate basis fits exactly: a = 1 and step = η_t
        np.testing.assert_allclose(
            reg.history_["step"], [expected(t) for t in range(1, 9)], rtol=1e-12
        )
    with pytest.raises(ValueError, match="strong_convexity"):
        FunctionalGradientRegressor(loss="absolute", schedule="inv_t").fit(X, y)


def test_counterexample_reproduction_curves(tmp_path):
    from oracleboost.experiments import EXPERIMENTS

    curves = EXPERIMENTS["grubb2011-counterexample"](quick=True)
    assert np.all(curves.series["naive"] >= 3.0)
    assert curves.series["repeated"][-1] < 0.05 and curves.series["residual"][-1] < 0.2
    curves.save(tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0
