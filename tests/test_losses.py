"""Losses: gradients against finite differences, subgradients, log space, best constants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from oracleboost.losses import (
    LOSSES,
    Absolute,
    Exponential,
    Huber,
    Logistic,
    Squared,
    get_loss,
    weighted_median,
)

rng = np.random.RandomState(0)
Y_PM = np.where(rng.rand(50) > 0.5, 1.0, -1.0)
Y_REAL = rng.randn(50)

SMOOTH = [(Exponential(), Y_PM), (Logistic(), Y_PM), (Squared(), Y_REAL), (Huber(0.7), Y_REAL)]


@pytest.mark.parametrize("loss,y", SMOOTH, ids=lambda v: type(v).__name__)
def test_gradient_matches_finite_differences(loss, y):
    raw = rng.randn(len(y)) * 2
    eps = 1e-6
    numeric = (loss.loss(y, raw + eps) - loss.loss(y, raw - eps)) / (2 * eps)
    np.testing.assert_allclose(loss.gradient(y, raw), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss,y", [(Absolute(), Y_REAL), (Huber(0.3), Y_REAL)])
def test_subgradient_inequality(loss, y):
    """l(g) ≥ l(f) + ∂l(f)·(g − f) pointwise, including at the kinks."""
    f = y.copy()  # at the kink of |f − y|
    f[::2] += rng.randn(25)
    for _ in range(20):
        g = f + rng.randn(len(y)) * 3
        assert np.all(loss.loss(y, g) >= loss.loss(y, f) + loss.gradient(y, f) * (g - f) - 1e-12)


def test_absolute_uses_sign_zero_plus_one():
    # Grubb & Bagnell's counterexample needs sign(0) = +1 (§4).
    assert Absolute().gradient(np.array([2.0]), np.array([2.0]))[0] == 1.0


@pytest.mark.parametrize("loss", [Exponential(), Logistic()], ids=lambda v: type(v).__name__)
def test_margin_losses_in_log_space(loss):
    m = np.array([-50.0, -3.0, 0.0, 2.0, 40.0])
    np.testing.assert_allclose(loss.log_phi(m), np.log(loss.phi(m)), rtol=1e-12)
    np.testing.assert_allclose(np.exp(loss.log_neg_dphi(m)), -loss.dphi(m), rtol=1e-12)
    # Far in the separable tail φ underflows but its log stays exact: log φ(m) ≈ −m.
    far = np.array([800.0, 1e4, 1e6])
    assert np.all(np.isfinite(loss.log_phi(far))) and np.all(np.isfinite(loss.log_neg_dphi(far)))
    np.testing.assert_allclose(loss.log_phi(far), -far, rtol=1e-15)
    np.testing.assert_allclose(loss.log_neg_dphi(far), -far, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=-700, max_value=700))
def test_logistic_log_phi_is_accurate_everywhere(m):
    # log(ln(1 + e^{-m})) computed by brute force in extended precision
    ref = float(np.log(np.log1p(np.exp(np.longdouble(-m)))))
    assert Logistic().log_phi(np.array([m]))[0] == pytest.approx(ref, rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_init_raw_is_the_best_constant(name):
    loss = get_loss(name)
    y = Y_PM if name in ("exponential", "logistic") else Y_REAL
    w = rng.uniform(0.1, 2.0, len(y))
    c = loss.init_raw(y, w)
    best = minimize_scalar(
        lambda v: loss(y, np.full(len(y), v), w), bounds=(-10, 10), method="bounded",
        options={"xatol": 1e-10},
    )
    if name == "huber":  # the weighted median: robust start, not the exact minimiser
        assert loss(y, np.full(len(y), c), w) <= loss(y, np.full(len(y), 0.0), w) + 1e-12
    else:
        assert loss(y, np.full(len(y), c), w) <= best.fun + 1e-9


def test_weighted_median():
    assert weighted_median(np.array([3.0, 1.0, 2.0])) == 2.0
    assert weighted_median(np.array([1.0, 2.0, 10.0]), np.array([1.0, 1.0, 5.0])) == 10.0


def test_probabilities_follow_the_population_minimiser():
    # exp loss: f = ½ log(p/(1−p)) ⇒ p = σ(2f); logistic: p = σ(f)
    p = 0.8
    assert Exponential().inverse_link(np.array([0.5 * np.log(p / (1 - p))]))[0] == pytest.approx(p)
    assert Logistic().inverse_link(np.array([np.log(p / (1 - p))]))[0] == pytest.approx(p)
