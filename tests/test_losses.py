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
    MarginLoss,
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


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_init_raw_is_the_best_constant(name, seed):
    # (weights of the test's own seed: the module's generator is at a point that depends
    # on which tests ran before in the process, which pytest-xdist's workers change)
    loss = get_loss(name)
    y = Y_PM if name in ("exponential", "logistic") else Y_REAL
    w = np.random.RandomState(seed).uniform(0.1, 2.0, len(y))
    c = loss.init_raw(y, w)
    if name == "huber":  # the weighted median: a robust start, not the exact minimiser
        half = w.sum() / 2  # at most half the weight on either side of it
        assert w[y < c].sum() <= half and w[y > c].sum() <= half
        assert c in y
        return
    best = minimize_scalar(
        lambda v: loss(y, np.full(len(y), v), w), bounds=(-10, 10), method="bounded",
        options={"xatol": 1e-10},
    )
    assert loss(y, np.full(len(y), c), w) <= best.fun + 1e-9


def test_weighted_median():
    assert weighted_median(np.array([3.0, 1.0, 2.0])) == 2.0
    assert weighted_median(np.array([1.0, 2.0, 10.0]), np.array([1.0, 1.0, 5.0])) == 10.0


def test_probabilities_follow_the_population_minimiser():
    # exp loss: f = ½ log(p/(1−p)) ⇒ p = σ(2f); logistic: p = σ(f)
    p = 0.8
    assert Exponential().inverse_link(np.array([0.5 * np.log(p / (1 - p))]))[0] == pytest.approx(p)
    assert Logistic().inverse_link(np.array([np.log(p / (1 - p))]))[0] == pytest.approx(p)


# --------------------------------------------------------------------------------------
# Dual side of the margin losses: φ'', the conjugate ℓ*, its gradient and Bregman divergence
# (Telgarsky 2012, Example 2, Remark 5, Prop. 32)
# --------------------------------------------------------------------------------------

DUAL = [Exponential(), Logistic()]
DUAL_IDS = ["exponential", "logistic"]


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
def test_d2phi_matches_finite_differences_of_dphi(loss):
    m = np.linspace(-6.0, 6.0, 49)
    h = 1e-5
    numeric = (loss.dphi(m + h) - loss.dphi(m - h)) / (2 * h)
    np.testing.assert_allclose(loss.d2phi(m), numeric, rtol=1e-7, atol=1e-10)
    assert np.all(loss.d2phi(m) > 0)


def test_logistic_d2phi_is_finite_and_symmetric_in_the_tails():
    m = np.array([-800.0, -40.0, 40.0, 800.0])
    d2 = Logistic().d2phi(m)
    assert np.all(np.isfinite(d2)) and d2[0] == d2[3] and d2[1] == d2[2]
    assert d2[1] == pytest.approx(np.exp(-40.0), rel=1e-12)
    assert Logistic().d2phi(np.array([0.0]))[0] == 0.25


def _numerical_conjugate(loss, p, s):
    """``sup_m (−p m − s φ(m))`` by Brent's method on the convex ``s φ(m) + p m``."""
    res = minimize_scalar(
        lambda m: s * float(loss.phi(np.array([m]))[0]) + p * m,
        bracket=(-5.0, 5.0), method="brent", options={"xtol": 1e-12},
    )
    return -res.fun


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
@pytest.mark.parametrize("s", [1.0, 0.3, 4.0])
def test_conjugate_matches_a_numerical_sup(loss, s):
    for frac in [0.02, 0.2, 0.5, 0.8, 0.97]:
        p = frac * s
        ref = _numerical_conjugate(loss, p, s)
        assert float(loss.conjugate(p, s)) == pytest.approx(ref, rel=1e-9, abs=1e-11)
    if loss.dual_bound == np.inf:  # exp: the sup is finite above g'(0) too
        assert float(loss.conjugate(3.0 * s, s)) == pytest.approx(
            _numerical_conjugate(loss, 3.0 * s, s), rel=1e-9
        )


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
def test_fenchel_young_equality_at_the_dual_point(loss):
    # ψ = s ℓ'(z) = s (−φ'(m)) ⇒ s ℓ*(ψ/s) + s ℓ(z) = ψ z with z = −m (Prop. 32).
    m = np.linspace(-20.0, 30.0, 101)
    for s in [1.0, 0.25, 7.0]:
        psi = s * -loss.dphi(m)
        fy = loss.conjugate(psi, s) + s * loss.phi(m) + psi * m
        scale = np.abs(psi * m) + s * loss.phi(m) + np.abs(loss.conjugate(psi, s))
        assert np.all(np.abs(fy) <= 1e-13 * np.maximum(scale, 1.0))
        # the mirror map inverts the dual map, as well as ψ's rounding allows: ψ/s = σ(−m)
        # near 1 (logistic, m ≪ 0) leaves s − ψ only e^{m}-relative precision
        cond = 1.0 + (np.exp(np.abs(m)) if loss.dual_bound == 1.0 else 0.0)
        assert np.all(np.abs(loss.conjugate_grad(psi, s) + m) <= 1e-14 * cond + 1e-14 * np.abs(m))
        # (s − ψ) is rounded to ε s, so the binary KL is exact only to about ε s
        assert np.all(np.abs(loss.conjugate_bregman(psi, m, s)) <= 1e-14 * (scale + s))


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
def test_fenchel_young_inequality_and_bregman_forms(loss):
    r = np.random.default_rng(0)
    m = r.normal(scale=3.0, size=200)
    s = r.uniform(0.1, 3.0, size=200)
    psi = s * r.uniform(0.0, 1.0, size=200) * (1.0 if loss.dual_bound == 1.0 else 2.0)
    fy = loss.conjugate(psi, s) + s * loss.phi(m) + psi * m
    assert np.all(fy >= -1e-12)
    # the relative-entropy form equals the Fenchel–Young gap (the generic default)
    bregman = loss.conjugate_bregman(psi, m, s)
    np.testing.assert_allclose(bregman, fy, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(MarginLoss.conjugate_bregman(loss, psi, m, s), fy, atol=1e-11)


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
def test_bregman_stays_exact_where_the_dual_iterate_underflows(loss):
    # at m = 800 the dual iterate e^{−800} underflows, but ln of it is exact
    psi = np.array([0.3])
    if loss.dual_bound == 1.0:  # ψ ln(ψ/q) + (1 − ψ) ln((1 − ψ)/(1 − q)) with q → 0
        expected = 0.3 * np.log(0.3) + 0.3 * 800.0 + 0.7 * np.log(0.7)
    else:  # ψ ln(ψ/q) − ψ + q
        expected = 0.3 * np.log(0.3) + 0.3 * 800.0 - 0.3
    assert float(loss.conjugate_bregman(psi, np.array([800.0]))[0]) == pytest.approx(
        expected, rel=1e-14
    )


@pytest.mark.parametrize("loss", DUAL, ids=DUAL_IDS)
def test_conjugate_domain_and_broadcasting(loss):
    assert float(loss.conjugate(0.0)) == 0.0
    assert float(loss.conjugate(-1e-12)) == np.inf
    assert float(loss.conjugate(0.0, 0.0)) == 0.0  # zero weight, zero dual: contributes 0
    assert float(loss.conjugate(0.1, 0.0)) == np.inf
    assert float(loss.conjugate(2.0 * loss.dual_bound if loss.dual_bound < np.inf else 1e300)) == (
        np.inf if loss.dual_bound < np.inf else pytest.approx(1e300 * np.log(1e300) - 1e300)
    )
    # the minimum of ℓ* is −ℓ(0) at ℓ'(0) (Lemma 2)
    p0 = float(-loss.dphi(np.array([0.0]))[0])
    assert float(loss.conjugate(p0)) == pytest.approx(-float(loss.phi(np.array([0.0]))[0]))
    out = loss.conjugate(np.full((3, 1), 0.25), np.array([1.0, 0.5, 2.0]))
    assert out.shape == (3, 3) and np.isfinite(out).all()
    assert loss.conjugate_bregman([0.2, -0.1], [0.0, 0.0]).tolist()[1] == np.inf


class _BareMargin(MarginLoss):
    """A margin loss without the dual side: φ(m) = exp(−m) from log φ only."""

    def log_phi(self, m):
        return -np.asarray(m, dtype=np.float64)

    def log_neg_dphi(self, m):
        return -np.asarray(m, dtype=np.float64)

    def init_raw(self, y, sample_weight=None):
        return 0.0


def test_dual_methods_are_optional_and_say_so():
    assert Exponential().has_conjugate and Logistic().has_conjugate
    bare = _BareMargin()
    assert not bare.has_conjugate
    with pytest.raises(NotImplementedError, match="_BareMargin does not implement d2phi"):
        bare.d2phi(np.zeros(2))
    with pytest.raises(NotImplementedError, match="_BareMargin does not implement conjugate"):
        bare.conjugate(np.zeros(2))
    with pytest.raises(NotImplementedError, match="conjugate_grad"):
        bare.conjugate_grad(np.zeros(2))


def test_a_users_margin_loss_without_the_curvature_constant_is_named_by_the_quadratic_step():
    # the base class's missing methods used to raise a bare NotImplementedError
    from sklearn.datasets import make_classification

    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.losses.margin import MarginLoss

    class DoubledExponential(MarginLoss):
        def log_phi(self, m):
            return -2.0 * np.asarray(m)

        def log_neg_dphi(self, m):
            return np.log(2.0) - 2.0 * np.asarray(m)

        def init_raw(self, y, w=None):
            return 0.0

    X, y = make_classification(100, 4, random_state=0)
    with pytest.raises(NotImplementedError, match="log_curvature_constant.*step='wolfe'"):
        CoordinateBoostingClassifier(loss=DoubledExponential(), step="quadratic",
                                     n_estimators=3).fit(X, y)
    with pytest.raises(NotImplementedError, match="DoubledExponential does not define "
                                                  "inverse_link"):
        DoubledExponential().inverse_link(np.zeros(2))
    # η: the closed-form step α = slope/η needs it, and a default of 1 would overstep
    # φ = e^{−2m} (η = 4) fourfold; unstated, the step names what is missing
    with pytest.raises(NotImplementedError, match="DoubledExponential does not define eta"):
        CoordinateBoostingClassifier(loss=DoubledExponential(), step="closed_form",
                                     n_estimators=3).fit(X, y)
    DoubledExponential.eta = 4.0  # φ'' = 4 φ: stated, the step runs and lowers the risk
    est = CoordinateBoostingClassifier(loss=DoubledExponential(), step="closed_form",
                                       n_estimators=5).fit(X, y)
    assert np.all(np.diff(est.history_["loss"]) < 0)
    assert Exponential().eta == 1.0 and Logistic().eta == 1.0
