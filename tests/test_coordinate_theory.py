"""Every round of coordinate-descent boosting satisfies the papers' inequalities.

Telgarsky (2013) for the four step rules with shrinkage ν, Telgarsky (2012) for the
Wolfe search, the closed-form step and the approximate oracle.  Runs are replayed from
the fitted ensemble, so every inequality is checked at the exact state the booster was
in (margins ``M λ_t`` in the library's convention; Telgarsky's ``A = −M``).
"""

import functools
import math
import warnings

import numpy as np
import pytest

from oracleboost.boosters import CoordinateBoostingClassifier, StopReason
from oracleboost.datasets import rudin_matrix
from oracleboost.losses import Exponential, Logistic
from oracleboost.optim.steps import WolfeStep
from oracleboost.oracles import ApproximateOracle, MatrixOracle

RUDIN = rudin_matrix()  # Rudin, Daubechies & Schapire (2004), margin convention
GAMMA_RUDIN = 3 / 8  # the LP value (tests/test_diagnostics.py checks it)


def _separable(m=12, n=7, seed=0):
    """[−1, 1] margins with a strictly positive max margin (Telgarsky 2012 note §5.2)."""
    rng = np.random.RandomState(seed)
    A = rng.uniform(-1, 1, size=(m, n))
    lam = rng.randn(n)
    return np.sign(A @ lam)[:, None] * A


def _fit(M, **params):
    m = M.shape[0]
    y = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    clf = CoordinateBoostingClassifier(MatrixOracle(y[:, None] * M), **params)
    return clf.fit(np.arange(m)[:, None], y)


def _replay(clf, M):
    """Per round: (margins before, oriented column u, step α, λ after)."""
    ens = clf.ensemble_
    lam = np.zeros(M.shape[1])
    out = []
    for j, delta in zip(ens.round_index, ens.round_delta, strict=True):
        h = ens.hypotheses[j]
        before = M @ lam
        move = delta * h.scale  # λ_j moves by this much (bounded columns: norm 1)
        u = np.sign(move) * M[:, h.j]
        lam = lam.copy()
        lam[h.j] += move
        out.append((before, u, abs(move), lam))
    return out


def _risk(loss, margins):
    return float(np.mean(loss.phi(margins)))


def _slope(loss, margins, u):
    """g = −R'(0)/R(0) along u: ||A^T ∇L||_∞ / L when u is the best column."""
    return float(np.sum(u * -loss.dphi(margins)) / np.sum(loss.phi(margins)))


def _gamma_bar(M, lam):
    return float(np.min(M @ lam) / np.abs(lam).sum())


CASES = [
    ("exponential", "quadratic"),
    ("exponential", "wolfe"),
    ("exponential", "optimal"),
    ("exponential", "adaboost"),
    ("exponential", "closed_form"),
    ("logistic", "wolfe"),
    ("logistic", "optimal"),
    ("logistic", "closed_form"),
]


@pytest.mark.parametrize("loss,step", CASES)
@pytest.mark.parametrize("nu", [1.0, 0.5, 0.1])
@pytest.mark.parametrize("matrix", ["rudin", "separable"])
def test_risk_decreases_and_edges_are_bounded(loss, step, nu, matrix):
    M = RUDIN if matrix == "rudin" else _separable()
    clf = _fit(M, loss=loss, step=step, learning_rate=nu, n_estimators=300)
    h = clf.history_
    assert clf.stop_reason_ is StopReason.MAX_ROUNDS
    # the risk strictly decreases while γ_t > 0
    assert np.all(np.diff(h["log_loss"]) < 0)
    # γ ≤ γ_t ≤ 1 (Telgarsky 2013, L109): the LP γ is the smallest possible edge
    if matrix == "rudin":
        assert np.all(h["edge"] >= GAMMA_RUDIN - 1e-12)
    assert np.all(h["edge"] <= 1.0 + 1e-12)
    assert np.all(np.isfinite(h["margin"]))


@pytest.mark.parametrize("nu", [1.0, 0.5, 0.25, 0.1])
@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_wolfe_conditions_and_lower_bound(nu, loss):
    """(2.1) sufficient decrease with c1 = 1 − ν/2, (2.2) curvature with c2 = 1 − ν/4, and
    for exp loss every Wolfe step is at least νγ_t/(4 C_t^4) = νγ_t/4 (2013, L518–L522)."""
    lossf = Exponential() if loss == "exponential" else Logistic()
    M = _separable(seed=1)
    clf = _fit(M, loss=loss, step="wolfe", learning_rate=nu, n_estimators=150)
    c1, c2 = 1 - nu / 2, 1 - nu / 4
    for t, (m, u, alpha, _) in enumerate(_replay(clf, M)):
        R0, g = _risk(lossf, m), _slope(lossf, m, u)
        assert _risk(lossf, m + alpha * u) <= R0 * (1 - alpha * c1 * g) * (1 + 1e-12), t
        assert _slope(lossf, m + alpha * u, u) * _risk(lossf, m + alpha * u) / R0 <= c2 * g * (
            1 + 1e-12
        ), t
        if loss == "exponential":
            assert alpha >= nu * clf.history_["edge"][t] / 4 * (1 - 1e-12), t


@pytest.mark.parametrize("nu", [1.0, 0.5, 0.1])
@pytest.mark.parametrize("step", ["quadratic", "optimal"])
def test_risk_bound_exp_quadratic_and_optimal(nu, step):
    """L(Aλ_t) ≤ exp(−ν(2−ν)/2 · Σ_{i≤t} γ_i²) for exp loss (Telgarsky 2013, Lemma 3.1a)."""
    for M in (RUDIN, _separable(seed=2)):
        h = _fit(M, step=step, learning_rate=nu, n_estimators=400).history_
        bound = -nu * (2 - nu) / 2 * np.cumsum(h["edge"] ** 2)
        assert np.all(h["log_loss"] <= bound + 1e-10)


@pytest.mark.parametrize("nu", [1.0, 0.5, 0.2])
def test_margin_bound_quadratic_step(nu):
    """M_t ≥ γ(1 − ν/2) − ln m / (tνγ) once t ≥ 2 ln m / (γ²ν(2−ν)) (2013, Lemma 3.2, Q)."""
    m, g = RUDIN.shape[0], GAMMA_RUDIN
    n_rounds = 3000
    h = _fit(RUDIN, step="quadratic", learning_rate=nu, n_estimators=n_rounds).history_
    t = np.arange(1, n_rounds + 1)
    start = 2 * math.log(m) / (g**2 * nu * (2 - nu))
    later = t >= start
    bound = g * (1 - nu / 2) - math.log(m) / (t * nu * g)
    assert later.sum() > 100
    assert np.all(h["margin"][later] >= bound[later] - 1e-12)


@pytest.mark.parametrize("nu", [1.0, 0.6, 0.3])
def test_adaboost_and_optimal_steps_coincide_on_pm1_columns(nu):
    """For ±1 columns and exp loss α^O(ν) = α^A(ν) (2013, L145) and the risk ratio is
    cosh α − γ sinh α per round."""
    a = _fit(RUDIN, step="adaboost", learning_rate=nu, n_estimators=200)
    o = _fit(RUDIN, step="optimal", learning_rate=nu, n_estimators=200)
    # trajectories agree until ~1e-13 differences flip a tie; compare the first 150 rounds
    np.testing.assert_allclose(o.history_["step"][:150], a.history_["step"][:150], rtol=1e-8)
    for clf in (a, o):
        h = clf.history_
        ratio = np.diff(np.concatenate([[0.0], h["log_loss"]]))
        alpha, g = h["step"], h["edge"]
        np.testing.assert_allclose(
            ratio, np.log(np.cosh(alpha) - g * np.sinh(alpha)), rtol=1e-8, atol=1e-12
        )


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_per_step_decrease_wolfe_2012_and_closed_form(loss):
    """Telgarsky 2012, Prop. 38 and App. D.3 (η = 1 for both losses, |A_ij| ≤ 1):
    Wolfe(1/3, 1/2): f_{t+1} ≤ f_t − ||A^T∇f||²_∞/(6ηf_t); closed form: … /(2ηf_t)."""
    lossf = Exponential() if loss == "exponential" else Logistic()
    for step, const in ((WolfeStep(c1=1 / 3, c2=1 / 2), 6.0), ("closed_form", 2.0)):
        for M in (_separable(seed=3), RUDIN):
            clf = _fit(M, loss=loss, step=step, n_estimators=200)
            for t, (m, u, alpha, _) in enumerate(_replay(clf, M)):
                g = _slope(lossf, m, u)  # the exact oracle's column: g = ||A^T∇f||_∞ / f
                ratio = _risk(lossf, m + alpha * u) / _risk(lossf, m)
                assert ratio <= 1 - g**2 / const + 1e-12, (step, t)


@functools.cache
def _exact_closed_form_on_rudin():
    """The exact oracle's run the approximate ones are compared with (one fit for every
    c0: it does not depend on c0)."""
    return _fit(RUDIN, step="closed_form", n_estimators=3000)


@pytest.mark.parametrize("c0", [0.5, 0.25])
def test_approximate_oracle_pays_c0_squared(c0):
    """An oracle returning edges ≥ c0 × the best (2012, App. E): Prop. 38's decrease holds
    with the factor c0², and the rounds needed grow like c0^{−2}.

    The weak answers are the scaled copies c0·h_j of the best column (the adversarial
    choice).  Measured on the Rudin matrix with the closed-form step, rounds to reach
    risk e^{−20}: 89 (exact), 504 (c0 = 1/2), 2202 (c0 = 1/4): exponents log(ratio)/log(1/c0)
    of 2.5 and 2.3, i.e. the c0² of the rate and a little more.  (A line search is
    invariant to rescaling the column, so the Wolfe step does not slow down here.)
    """
    H = np.hstack([RUDIN, c0 * RUDIN])
    exact = _exact_closed_form_on_rudin()
    m = RUDIN.shape[0]
    y = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    approx = CoordinateBoostingClassifier(
        ApproximateOracle(MatrixOracle(y[:, None] * H), c0=c0),
        step="closed_form",
        n_estimators=3000,
    ).fit(np.arange(m)[:, None], y)
    lossf = Exponential()
    for t, (mg, u, alpha, _) in enumerate(_replay(approx, H)):
        best = float(np.max(np.abs(RUDIN.T @ -lossf.dphi(mg)))) / np.sum(lossf.phi(mg))
        ratio = _risk(lossf, mg + alpha * u) / _risk(lossf, mg)
        assert ratio <= 1 - c0**2 * best**2 / 2 + 1e-12, t
        assert abs(_slope(lossf, mg, u)) >= c0 * best * (1 - 1e-9), t

    def rounds_to(clf, level=-20.0):
        ll = clf.history_["log_loss"]
        return int(np.argmax(ll < level)) + 1

    exponent = math.log(rounds_to(approx) / rounds_to(exact)) / math.log(1 / c0)
    assert 2.0 <= exponent <= 2.7


def test_infinite_and_zero_steps_are_reported():
    # A column that no example gets wrong but one abstains on: no finite exact step.
    M = np.array([[1.0, -1.0], [0.5, 1.0], [1.0, 1.0]])
    clf = _fit(M, step="optimal", n_estimators=10)
    assert clf.stop_reason_ is StopReason.INFINITE_STEP
    assert all(np.isfinite(v).all() for v in clf.history_.values())
    # The quadratic step for logistic loss is ν γ_t / C_t^4 = ν γ_t 2^{−8m} at t = 1:
    # below the smallest double for m ≳ 135 (Telgarsky 2013 note, §7).
    # The fit stops with a warning that names the constant, not silently; on the
    # matrix itself (m = 8) the step is taken, without a warning.
    from oracleboost.boosters import BoostingWarning

    big = np.tile(RUDIN, (20, 1))
    with pytest.warns(BoostingWarning, match="curvature constant C_t = exp"):
        clf = _fit(big, loss="logistic", step="quadratic", n_estimators=5)
    assert clf.stop_reason_ is StopReason.ZERO_STEP
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoostingWarning)
        small = _fit(RUDIN, loss="logistic", step="quadratic", n_estimators=5)
    assert len(small.history_["step"]) >= 1 and small.history_["step"][0] > 0


@pytest.mark.parametrize("step", ["quadratic", "wolfe", "optimal", "closed_form"])
def test_long_separable_runs_stay_finite(step):
    """5,000 rounds with exponential loss: no NaN, inf or warning; the margin keeps improving.

    The exact step runs on the Rudin matrix: on a random [−1, 1] matrix some column hurts no
    example and then has no finite minimiser (reported as ``infinite_step``, tested above).
    """
    import warnings

    M = RUDIN if step == "optimal" else _separable(seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            clf = _fit(M, step=step, n_estimators=5000)
    h = clf.history_
    assert clf.stop_reason_ is StopReason.MAX_ROUNDS
    assert all(np.isfinite(h[k]).all() for k in ("log_loss", "margin", "edge", "step"))
    assert h["log_loss"][-1] < math.log(1e-300) or h["log_loss"][-1] < -100
    assert h["margin"][-1] > h["margin"][999] > h["margin"][99]


@pytest.mark.parametrize("seed", range(5))
def test_grouped_line_of_a_two_valued_column_is_the_line_over_rows(seed):
    # For the exponential loss the line depends on the rows only through the weight on
    # each value of the column: a stump's line has two points.  The grouped line must
    # give the per-row line's values, slopes and steps, and not be used for columns
    # with more values or for other losses.
    from oracleboost.boosters import SignedColumn
    from oracleboost.losses import get_loss
    from oracleboost.optim.linesearch import RowLine, exact, wolfe
    from oracleboost.optim.steps import StepState
    from oracleboost.oracles.base import Hypothesis

    class Column(Hypothesis):
        def predict(self, X):  # pragma: no cover - never asked
            raise NotImplementedError

    rng = np.random.default_rng(seed)
    n = 500
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    margins = rng.normal(scale=2.0, size=n)
    two_valued = np.where(rng.random(n) < 0.6, y, -y).astype(float)
    for a, grouped in ((two_valued, True), (rng.uniform(-1, 1, n), False)):
        for name in ("exponential", "logistic"):
            loss = get_loss(name)
            z = loss.log_neg_dphi(margins)
            w = np.exp(z - z.max())
            w /= w.sum()
            h = Column()
            h.train_output = a
            col = SignedColumn.of(h, y, w, bounded=True)
            state = StepState(loss=loss, margins=margins, column=col, query=w * y,
                              log_s=None, sample_weight=None)
            rows = RowLine.build(col.blocks, loss, margins, state.u, None, col.u_min)
            assert (state.line.u.size == 2) is (grouped and name == "exponential")
            for alpha in (0.0, 0.1, 0.7, 3.0):
                assert state.line.delta(alpha) == pytest.approx(rows.delta(alpha), rel=1e-12)
                assert state.line.slope(alpha) == pytest.approx(rows.slope(alpha), rel=1e-12)
            assert wolfe(state.line, 0.5, 0.75) == pytest.approx(wolfe(rows, 0.5, 0.75))
            assert exact(state.line) == pytest.approx(exact(rows), rel=1e-9)

