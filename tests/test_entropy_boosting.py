"""ERLPBoost, SoftBoost and TotalBoost (issue 24): the entropy solves agree with an
independent solver and certify themselves; each method stops by its own rule within its
round bound, with a final soft margin within ε of the full LP's optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import make_classification

from oracleboost.boosters import StopReason, TotallyCorrectiveClassifier
from oracleboost.boosters.totally_corrective import entropy_duals as ed
from oracleboost.boosters.totally_corrective.estimator import (
    INFEASIBLE_SLACK,
    erlpboost_round_bound,
    softboost_round_bound,
)
from oracleboost.boosters.totally_corrective.soft_margin_lp import SoftMarginLP
from oracleboost.datasets import matrix_problem
from oracleboost.optim.projections import kl_capped_simplex
from oracleboost.oracles import MatrixOracle, StumpOracle

pytest.importorskip("highspy")
pytest.importorskip("clarabel")

from test_totally_corrective import _full_lp  # noqa: E402


def _matrix(seed: int, m: int = 60, n: int = 20, p_plus: float = 0.62) -> np.ndarray:
    """A ±1 matrix leaning to +1, so that the soft-margin optimum is positive."""
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(m, n),
                                              p=[1 - p_plus, p_plus])


def _problem(seed: int, N: int = 30, t: int = 5, nu: float = 3.0):
    M = np.random.default_rng(seed).choice([-1.0, 1.0], size=(N, t))
    return np.ascontiguousarray(M), np.full(N, -math.log(N)), np.full(N, 1.0 / nu)


def _entropy(d, N):
    d = np.maximum(d, 1e-300)
    return float(np.sum(d * np.log(d * N)))


# -- the solves ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed, nu", [(0, 1.0), (1, 3.0), (2, 8.0)])
def test_erlpboost_solve_agrees_with_scipy_and_its_kkt_conditions(seed, nu):
    U, log_d0, caps = _problem(seed, nu=nu)
    N, t = U.shape
    eta = 2 * math.log(N / nu) / 0.1
    sol = ed.solve_regularized(U, t, log_d0, caps, eta)
    # the certificate: d exactly on the capped simplex, α on the simplex, and the gap
    # max_q d·u_q − α·(Uᵀd) between the primal value at d and the dual value
    assert abs(sol.d.sum() - 1) <= 1e-12 and (sol.d >= 0).all() and (sol.d <= caps).all()
    assert abs(sol.alpha.sum() - 1) <= 1e-12 and (sol.alpha >= 0).all()
    assert 0 <= sol.gap <= ed.SOLVER_TOL
    e = U.T @ sol.d
    assert sol.value == pytest.approx(e.max() + _entropy(sol.d, N) / eta, abs=1e-12)
    # KKT: d minimises the Lagrangian (it is the KL projection of d⁰ e^{−ηUα}), and the
    # columns with weight have the largest edge (complementary slackness)
    np.testing.assert_allclose(sol.d, kl_capped_simplex(log_d0 - eta * U @ sol.alpha, caps),
                               rtol=0, atol=1e-12)
    assert np.all(e[sol.alpha > 1e-6] >= e.max() - 1e-8)

    # an independent solve of the primal, min γ + Δ(d, d⁰)/η s.t. Uᵀd ≤ γ, by SLSQP
    def f(x):
        return x[N] + _entropy(x[:N], N) / eta

    def grad(x):
        return np.concatenate([(np.log(np.maximum(x[:N], 1e-300) * N) + 1) / eta, [1.0]])

    cons = [{"type": "eq", "fun": lambda x: x[:N].sum() - 1,
             "jac": lambda x: np.concatenate([np.ones(N), [0.0]])},
            {"type": "ineq", "fun": lambda x: x[N] - U.T @ x[:N],
             "jac": lambda x: np.hstack([-U.T, np.ones((t, 1))])}]
    res = minimize(f, np.concatenate([np.full(N, 1 / N), [1.0]]), jac=grad,
                   constraints=cons, bounds=[(1e-12, caps[0])] * N + [(None, None)],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    # SLSQP's point is feasible to its tolerance: its value is the optimum to ~1e-9
    assert sol.dual_value - 1e-9 <= res.fun <= sol.value + 1e-9
    assert abs(res.fun - sol.value) <= 1e-8


@pytest.mark.parametrize("seed, nu, slack", [(0, 1.0, 0.2), (1, 3.0, 0.01), (2, 8.0, 1e-6)])
def test_softboost_projection_agrees_with_scipy_and_its_kkt_conditions(seed, nu, slack):
    U, log_d0, caps = _problem(seed, nu=nu)
    N, t = U.shape
    lp = SoftMarginLP(np.ones(N), nu)
    for u in U.T:
        lp.add_column(u)
    b = lp.solve().value + slack  # feasible, by ``slack``
    sol = ed.solve_projection(U, t, log_d0, caps, b)
    e = U.T @ sol.d
    assert (sol.alpha >= 0).all() and abs(sol.d.sum() - 1) <= 1e-12
    assert e.max() - b <= 1e-10  # primal feasibility
    assert abs(sol.alpha @ (b - e)) <= 1e-10 * max(1.0, sol.alpha.sum())  # slackness
    np.testing.assert_allclose(sol.d, kl_capped_simplex(log_d0 - U @ sol.alpha, caps),
                               rtol=0, atol=1e-12)
    if slack < 1e-3:
        return  # SLSQP does not reach a set this thin to the tolerance below
    cons = [{"type": "eq", "fun": lambda d: d.sum() - 1, "jac": lambda d: np.ones(N)},
            {"type": "ineq", "fun": lambda d: b - U.T @ d, "jac": lambda d: -U.T}]
    res = minimize(lambda d: _entropy(d, N), np.full(N, 1 / N),
                   jac=lambda d: np.log(np.maximum(d, 1e-300) * N) + 1, constraints=cons,
                   bounds=[(1e-12, caps[0])] * N, method="SLSQP",
                   options={"ftol": 1e-15, "maxiter": 2000})
    assert abs(res.fun - sol.value) <= 1e-8


def test_the_clarabel_start_is_certified_by_the_same_gap(monkeypatch):
    """With no Newton steps from the warm start, the solve starts from Clarabel's
    answer: the same optimum, certified by the same gap."""
    U, log_d0, caps = _problem(3, N=40, t=6, nu=4.0)
    eta = 2 * math.log(10) / 0.01
    warm = ed.solve_regularized(U, 6, log_d0, caps, eta)
    monkeypatch.setattr(ed, "_WARM_ITER", 0)
    cold = ed.solve_regularized(U, 6, log_d0, caps, eta)
    assert cold.conic and not warm.conic
    assert 0 <= cold.gap <= ed.ACCEPT_TOL
    assert abs(cold.value - warm.value) <= 2 * ed.ACCEPT_TOL


def test_a_column_store_never_changes_an_earlier_state():
    store = ed.ColumnStore(3, capacity=2)
    a = store.appended(0, np.array([1.0, 2.0, 3.0]))
    b = a.appended(1, np.array([4.0, 5.0, 6.0]))
    c = a.appended(1, np.array([7.0, 8.0, 9.0]))  # a branch from the state of a
    assert b is a and c is not a
    np.testing.assert_array_equal(b.data[:, 1], [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(c.data[:, :2], [[1, 7], [2, 8], [3, 9]])


# -- the boosters on a finite class --------------------------------------------------------
CASES = [(0, 1, 0.1), (1, 5, 0.01), (2, 5, 0.1)]


@pytest.mark.parametrize("seed, nu, eps", CASES)
def test_erlpboost_reaches_within_eps_of_the_full_lp_within_its_bound(seed, nu, eps):
    M = _matrix(seed)
    optimum = _full_lp(M, nu)
    X, y, H = matrix_problem(M)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), method="erlpboost", nu=nu,
                                        tol=eps, n_estimators=500).fit(X, y)
    h = model.history_
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert len(h["edge"]) <= model.round_bound_ == erlpboost_round_bound(60, nu, eps)
    assert optimum - eps <= model.lp_value_ <= optimum + 1e-9
    # the certificate of the LP over the columns so far brackets the optimum every round
    assert np.all(h["lp_value"] <= optimum + 1e-9) and np.all(h["upper_bound"] >= optimum - 1e-9)
    # the rule did not fire early, and the solves certified themselves
    assert np.all(h["regularized_gap"] > eps / 2)
    assert np.all(h["solver_gap"] <= max(ed.ACCEPT_TOL, 1e-6 * eps))
    # the derivation of the bound: P^t(d^t) − P^{t−1}(d^{t−1}) ≥ min(δ²/(8η), δ/2)
    eta = 2 * math.log(60 / nu) / eps
    rise = np.diff(h["objective"])
    delta = h["regularized_gap"][1:]
    assert np.all(rise >= np.minimum(delta ** 2 / (8 * eta), delta / 2) - 1e-9)


@pytest.mark.parametrize("method, seed, nu, eps",
                         [("softboost", *CASES[0]), ("softboost", *CASES[1]),
                          ("totalboost", 2, 1, 0.1)])
def test_softboost_stops_infeasible_within_eps_and_its_bound(method, seed, nu, eps):
    M = _matrix(seed)
    optimum = _full_lp(M, nu)
    X, y, H = matrix_problem(M)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), method=method, nu=nu, tol=eps,
                                        n_estimators=500).fit(X, y)
    h = model.history_
    assert model.stop_reason_ == StopReason.INFEASIBLE
    assert len(h["edge"]) <= model.round_bound_ == softboost_round_bound(60, nu, eps)
    assert optimum - eps - INFEASIBLE_SLACK <= model.lp_value_ <= optimum + 1e-9
    assert np.all(h["lp_value"] <= optimum + 1e-9) and np.all(h["upper_bound"] >= optimum - 1e-9)
    # the progress the bound rests on (generalised Pythagoras and Pinsker): each
    # projection's relative entropy exceeds the last one's by at least ε²/2
    entropy = np.concatenate([[0.0], h["relative_entropy"][:-1]])  # the last: infeasible
    assert np.isnan(h["relative_entropy"][-1])
    assert np.all(np.diff(entropy) >= eps ** 2 / 2 - 1e-9)
    assert np.all(h["bound"] == h["upper_bound"] - eps)


def test_the_round_bounds():
    assert erlpboost_round_bound(100, 100, 0.1) == 1 == softboost_round_bound(100, 100, 0.1)
    L = math.log(300 / 5)
    assert erlpboost_round_bound(300, 5, 0.01) == 1 + math.ceil(32 * L / 1e-4 - 8 * L / 0.01)
    assert softboost_round_bound(300, 5, 0.1) == math.floor(2 * L / 0.01) + 1


def test_one_point_capped_simplex():
    """ν = N: the capped simplex is d⁰ alone; ERLPBoost closes at its second pricing and
    SoftBoost is infeasible at once."""
    X, y, H = matrix_problem(_matrix(5, m=12, n=6))
    erlp = TotallyCorrectiveClassifier(MatrixOracle(H), method="erlpboost", nu=12,
                                       tol=0.1).fit(X, y)
    soft = TotallyCorrectiveClassifier(MatrixOracle(H), method="softboost", nu=12,
                                       tol=0.1).fit(X, y)
    assert erlp.stop_reason_ == StopReason.GAP_CLOSED and len(erlp.history_["edge"]) == 1
    assert soft.stop_reason_ == StopReason.INFEASIBLE and len(soft.history_["edge"]) == 1


@pytest.mark.parametrize("method", ["erlpboost", "softboost", "totalboost"])
def test_stumps_smoke(method):
    X, y = make_classification(150, 6, random_state=0)
    nu = 1 if method == "totalboost" else 10
    model = TotallyCorrectiveClassifier(StumpOracle(), method=method, nu=nu, tol=0.2,
                                        n_estimators=300).fit(X, y)
    expected = StopReason.GAP_CLOSED if method == "erlpboost" else StopReason.INFEASIBLE
    assert model.stop_reason_ == expected
    assert len(model.history_["edge"]) <= model.round_bound_
    assert model.ensemble_.l1_norm() == pytest.approx(1.0, abs=1e-9)
    assert model.score(X, y) > 0.8
    f = model.decision_function(X)
    ypm = np.where(y == 1, 1.0, -1.0)
    assert model.history_["margin"][-1] == np.min(ypm * f) / model.ensemble_.l1_norm()


def test_a_solver_failure_keeps_the_last_good_model(monkeypatch):
    from oracleboost.boosters.totally_corrective import algorithm as tc

    X, y, H = matrix_problem(_matrix(6))
    good = TotallyCorrectiveClassifier(MatrixOracle(H), method="erlpboost", nu=5, tol=0.05,
                                       n_estimators=4).fit(X, y)
    calls = {"n": 0}
    solve = tc.solve_regularized

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise ed.EntropySolveError("Clarabel ended with status NumericalError")
        return solve(*args, **kwargs)

    monkeypatch.setattr(tc, "solve_regularized", failing)
    with pytest.warns(UserWarning, match="NumericalError"):
        model = TotallyCorrectiveClassifier(MatrixOracle(H), method="erlpboost", nu=5,
                                            tol=0.05, n_estimators=50).fit(X, y)
    assert model.stop_reason_ == StopReason.SOLVER_FAILED
    assert model.n_estimators_ == 4
    np.testing.assert_array_equal(model.decision_function(X), good.decision_function(X))


@pytest.mark.parametrize("method", ["erlpboost", "softboost"])
def test_warm_start_equals_one_longer_fit(method):
    X, y, H = matrix_problem(_matrix(7))
    whole = TotallyCorrectiveClassifier(MatrixOracle(H), method=method, nu=5, tol=0.05,
                                        n_estimators=300).fit(X, y)
    part = TotallyCorrectiveClassifier(MatrixOracle(H), method=method, nu=5, tol=0.05,
                                       n_estimators=3, warm_start=True).fit(X, y)
    assert part.stop_reason_ == StopReason.MAX_ROUNDS
    part.set_params(n_estimators=300).fit(X, y)
    assert part.stop_reason_ == whole.stop_reason_
    np.testing.assert_array_equal(part.history_["objective"], whole.history_["objective"])
    np.testing.assert_array_equal(part.decision_function(X), whole.decision_function(X))


def test_bad_parameters_are_named():
    X, y, H = matrix_problem(_matrix(8, m=20, n=5))
    with pytest.raises(ValueError, match="nu=5"):
        TotallyCorrectiveClassifier(MatrixOracle(H), method="totalboost", nu=5).fit(X, y)
    with pytest.raises(ValueError, match="tol=0"):
        TotallyCorrectiveClassifier(MatrixOracle(H), method="erlpboost", tol=0).fit(X, y)
    with pytest.raises(ValueError, match="one class"):
        TotallyCorrectiveClassifier(method="softboost").fit(np.zeros((9, 2)), np.zeros(9))
