"""LPBoost by column generation (issue 24): its final soft margin is the full LP's
optimum over the whole finite class, the certificate brackets that optimum every round,
and a solver failure is a named stop that keeps the last good model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.datasets import load_breast_cancer

from oracleboost.boosters import BoostingWarning, StopReason, TotallyCorrectiveClassifier
from oracleboost.boosters.totally_corrective.soft_margin_lp import (
    LPSolveError,
    SoftMarginLP,
    row_code,
    row_offset,
)
from oracleboost.datasets import matrix_problem, rudin_matrix
from oracleboost.oracles import MatrixOracle, StumpOracle
from oracleboost.oracles.base import OracleCapabilityError

pytest.importorskip("highspy")


def _full_lp(M: np.ndarray, nu: float) -> float:
    """The soft-margin LP over every column of M and its negation (the class closed
    under negation), solved from scratch by scipy's HiGHS: max ρ − (1/ν) Σ ξ s.t.
    Σ_j w_j M_ij ≥ ρ − ξ_i, w on the simplex, ξ ≥ 0."""
    U = np.hstack([M, -M])
    N, J = U.shape
    cost = np.concatenate([np.zeros(J), [-1.0], np.full(N, 1.0 / nu)])
    A_ub = np.hstack([-U, np.ones((N, 1)), -np.eye(N)])
    A_eq = np.concatenate([np.ones(J), [0.0], np.zeros(N)])[None, :]
    bounds = [(0, None)] * J + [(None, None)] + [(0, None)] * N
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(N), A_eq=A_eq, b_eq=[1.0],
                  bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def _random_matrix(seed: int, m: int = 300, n: int = 60) -> np.ndarray:
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(m, n))


MATRICES = {"rudin": lambda: rudin_matrix(), "random-0": lambda: _random_matrix(0),
            "random-1": lambda: _random_matrix(1)}


def _fit_matrix(M, nu, **params):
    X, y, H = matrix_problem(M)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), nu=nu, tol=1e-12,
                                        n_estimators=2 * M.shape[1] + 5, **params)
    return model.fit(X, y)


@pytest.mark.parametrize("matrix", MATRICES)
@pytest.mark.parametrize("nu", [1, 5, 30])
def test_lpboost_reaches_the_full_lps_optimum(matrix, nu):
    M = MATRICES[matrix]()
    if nu > M.shape[0]:
        pytest.skip("nu above the rows")
    optimum = _full_lp(M, nu)
    model = _fit_matrix(M, nu)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert abs(model.lp_value_ - optimum) <= 1e-9
    assert model.lp_value_ - 1e-9 <= optimum <= model.upper_bound_ + 1e-9
    # the certificate brackets the optimum every round, and narrows
    h = model.history_
    assert np.all(h["lp_value"] <= optimum + 1e-9)
    assert np.all(h["upper_bound"] >= optimum - 1e-9)
    assert np.all(np.diff(h["lp_value"]) >= -1e-9) and np.all(np.diff(h["upper_bound"]) <= 0)
    assert np.all(h["gap"] >= -1e-9)
    if nu == 1 and optimum > 0:
        # the hard margin of a separable class: the model's ℓ1 margin is the LP's value
        # (where P* = 0 the LP may weigh h and −h alike; the ensemble then holds their
        # difference, whose ℓ1 norm is smaller than the LP's Σ w = 1)
        assert abs(h["margin"][-1] - optimum) <= 1e-9


def test_the_rudin_matrix_hard_margin_is_three_eighths():
    """Rudin, Daubechies & Schapire's matrix has max ℓ1 margin 3/8 (AdaBoost reaches
    1/3): LPBoost finds 3/8, and predicts with margins of at least 3/8."""
    model = _fit_matrix(rudin_matrix(), 1)
    assert abs(model.lp_value_ - 3 / 8) <= 1e-12
    X, y, _ = matrix_problem(rudin_matrix())
    f = model.decision_function(X)
    assert np.min(y * f) / model.ensemble_.l1_norm() >= 3 / 8 - 1e-12


def test_the_history_margin_is_the_models():
    X, y = load_breast_cancer(return_X_y=True)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=5, n_estimators=40).fit(X, y)
    ypm = np.where(y == 1, 1.0, -1.0)
    f = model.decision_function(X)
    assert model.history_["margin"][-1] == np.min(ypm * f) / model.ensemble_.l1_norm()
    assert model.history_["train_error"][-1] == np.mean((f > 0) != (ypm > 0))
    # the coefficients are the LP's weights over the stumps: an ℓ1 norm of 1
    assert model.ensemble_.l1_norm() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("nu", [1, 5, 30])
def test_stumps_on_breast_cancer_reach_the_stopping_rule(nu):
    X, y = load_breast_cancer(return_X_y=True)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=nu, n_estimators=400).fit(X, y)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert model.upper_bound_ - model.lp_value_ <= model.tol_
    assert model.history_["n_nonzero"][-1] <= model.n_estimators_


def test_a_solver_failure_keeps_the_last_good_model(monkeypatch):
    X, y, H = matrix_problem(_random_matrix(2))
    good = TotallyCorrectiveClassifier(MatrixOracle(H), nu=5, n_estimators=6).fit(X, y)
    calls = {"n": 0}
    solve = SoftMarginLP.solve

    def failing(self):
        calls["n"] += 1
        if calls["n"] == 7:
            raise LPSolveError("HiGHS ended with status Time limit reached")
        return solve(self)

    monkeypatch.setattr(SoftMarginLP, "solve", failing)
    with pytest.warns(BoostingWarning, match="Time limit reached.*solver_failed"):
        model = TotallyCorrectiveClassifier(MatrixOracle(H), nu=5, n_estimators=20).fit(X, y)
    assert model.stop_reason_ == StopReason.SOLVER_FAILED
    assert model.n_estimators_ == 6
    np.testing.assert_array_equal(model.decision_function(X), good.decision_function(X))


def test_the_solver_checks_catch_a_wrong_answer():
    lp = SoftMarginLP(np.ones(4), 1.0)
    lp.add_column(np.array([1.0, 1.0, -1.0, 1.0]))
    lp.add_column(np.array([-1.0, 1.0, 1.0, 1.0]))
    solution = lp.solve()
    assert abs(solution.value - 0.0) <= 1e-12  # w = (½, ½): margins (0, 1, 0, 1)
    with pytest.raises(LPSolveError, match="edge"):
        lp._check(solution.w, solution.d, solution.value - 0.5, solution.rho - 0.5)


def test_the_lp_survives_a_copy_and_a_pickle():
    """A copy or a pickle keeps the columns and builds HiGHS's model again."""
    lp = SoftMarginLP(np.ones(300), 5.0)
    for u in _random_matrix(3)[:, :12].T:
        lp.add_column(u)
    value = lp.solve().value
    again = pickle.loads(pickle.dumps(lp))
    assert again.n_columns == 12 and abs(again.solve().value - value) <= 1e-12


def test_warm_start_continues_column_generation():
    M = _random_matrix(4)
    optimum = _full_lp(M, 5)
    X, y, H = matrix_problem(M)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), nu=5, tol=1e-12, n_estimators=10,
                                        warm_start=True).fit(X, y)
    assert model.stop_reason_ == StopReason.MAX_ROUNDS
    model.set_params(n_estimators=200).fit(X, y)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert abs(model.lp_value_ - optimum) <= 1e-9


def test_bad_parameters_are_named():
    X, y, H = matrix_problem(rudin_matrix())
    with pytest.raises(ValueError, match="nu=9"):
        TotallyCorrectiveClassifier(MatrixOracle(H), nu=9).fit(X, y)
    with pytest.raises(ValueError, match="nu"):
        TotallyCorrectiveClassifier(MatrixOracle(H), nu=0.5).fit(X, y)
    Xm, ym = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="one class"):
        TotallyCorrectiveClassifier().fit(Xm[:30], np.zeros(30))
    # three classes need multiclass_correlate (the cells' query), which a matrix lacks
    with pytest.raises(OracleCapabilityError, match="multiclass_correlate"):
        TotallyCorrectiveClassifier(MatrixOracle(H)).fit(X, np.arange(X.shape[0]) % 3)


def _restricted_primal(columns: list[np.ndarray], nu: float) -> tuple[float, np.ndarray]:
    """The soft-margin LP over ``columns`` in its primal form (what SoftMarginLP solved
    before it held the dual), from scratch by scipy's HiGHS: its value and the margins
    Σ_j w_j u_j of its solution."""
    U = np.column_stack(columns)
    N, J = U.shape
    cost = np.concatenate([np.zeros(J), [-1.0], np.full(N, 1.0 / nu)])
    A_ub = np.hstack([-U, np.ones((N, 1)), -np.eye(N)])
    A_eq = np.concatenate([np.ones(J), [0.0], np.zeros(N)])[None, :]
    bounds = [(0, None)] * J + [(None, None)] + [(0, None)] * N
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(N), A_eq=A_eq, b_eq=[1.0],
                  bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun), (U * res.x[:J]).sum(axis=1)  # (not BLAS: any CPU kernel)


@pytest.mark.parametrize(("seed", "nu"), [(0, 1), (1, 5), (2, 30)])
def test_the_dual_route_solves_the_primal_of_every_round(seed, nu):
    """HiGHS holds the dual; every round's value is the restricted primal's (solved
    from scratch, as before), and on a matrix in general position (whose LPs have one
    solution each) the model's margins are the primal solution's: the coefficients
    read from the row duals are the primal's coefficients."""
    M = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(120, 25))
    X, y, H = matrix_problem(M)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), nu=nu, tol=1e-12,
                                        n_estimators=60).fit(X, y)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    columns = model._state_.lp.columns
    assert len(columns) == model.n_estimators_
    for k in range(1, len(columns) + 1):
        value, margins = _restricted_primal(columns[:k], nu)
        assert abs(model.history_["lp_value"][k - 1] - value) <= 1e-9
    assert abs(model.lp_value_ - _full_lp(M, nu)) <= 1e-9
    # the ensemble's f on row i is Σ_j w_j h_j(x_i)/‖h_j‖: y ∘ f are the LP's margins
    np.testing.assert_allclose(y * model.decision_function(X), margins, rtol=0, atol=1e-9)


def test_a_solve_past_the_iteration_guard_goes_on_with_highs_defaults(monkeypatch):
    """A warm solve that reaches the cycling guard's iteration count goes on from where
    it stopped with HiGHS's defaults (cost perturbation on) and ends at the same
    optimum."""
    from oracleboost.boosters.totally_corrective import soft_margin_lp

    M = _random_matrix(3)
    monkeypatch.setattr(soft_margin_lp, "_iteration_guard", lambda n_rows: 1)
    guarded = _fit_matrix(M, 5)
    assert guarded.stop_reason_ == StopReason.GAP_CLOSED
    optimum = _full_lp(M, 5)
    assert abs(guarded.lp_value_ - optimum) <= 1e-9
    # the certificate brackets the optimum every round (each solve checked by SoftMarginLP)
    history = guarded.history_
    assert (history["lp_value"] <= optimum + 1e-9).all()
    assert (history["upper_bound"] >= optimum - 1e-9).all()
    assert history["solver_iterations"].max() > 1


def test_each_round_warm_starts_from_the_last_basis():
    """A round adds one row to HiGHS's model and re-solves from the last basis: once
    the LP has some columns, a round's dual simplex iterations are a small fraction of
    a solve from scratch of the same LP (a model built again every round would take
    about as many as that).  "Some columns" is 60 here: with each row written by its
    offset (soft_margin_lp), a cold solve over 40 of these columns took only 100
    iterations, 3 times a warm round's 33."""
    X, y = load_breast_cancer(return_X_y=True)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=30, tol=0.0,
                                        n_estimators=80).fit(X, y)
    iterations = model.history_["solver_iterations"]
    assert iterations.shape == (80,)
    lp = model._state_.lp
    for k in (60, 80):
        cold = SoftMarginLP(lp.cost, lp.nu)
        for u in lp.columns[:k]:
            cold.add_column(u)
        solution = cold.solve()
        assert abs(solution.value - model.history_["lp_value"][k - 1]) <= 1e-9
        warm = np.median(iterations[k - 10:k])
        assert warm * 5 <= solution.iterations, (k, warm, solution.iterations)


def test_rows_are_written_by_their_most_common_value():
    """A row of HiGHS's model is ``d · (u − v) − γ ≤ −v`` with ``v`` the value most of
    u's entries take (0 on a tie with 0): the same LP, and ρ read back through the
    offsets, against linprog on the columns as they are."""
    assert row_offset(np.array([0.5, 0.5, -0.5])) == 0.5
    assert row_offset(np.array([-1.0, 1.0, 2.0])) == -1.0  # a tie: the smallest value
    assert row_offset(np.array([0.0, 1.0, 1.0, 0.0, 3.0])) == 0.0  # a tie with 0
    rng = np.random.default_rng(3)
    # columns whose most common values are +1, −1, 0.5 and (for the last) none
    columns = [np.where(rng.random(40) < p, v, -v) for p, v in ((0.8, 1.0), (0.7, -1.0),
                                                              (0.9, 0.5))]
    columns.append(rng.uniform(-1.0, 1.0, 40))
    lp = SoftMarginLP(np.ones(40), 4.0)
    for u in columns:
        lp.add_column(u)
    solution = lp.solve()
    U = np.column_stack(columns)
    # the primal, max ρ − (1/ν) Σ ξ over (w, ρ, ξ), from scratch
    J = U.shape[1]
    res = linprog(np.concatenate([np.zeros(J), [-1.0], np.full(40, 0.25)]),
                  A_ub=np.hstack([-U, np.ones((40, 1)), -np.eye(40)]), b_ub=np.zeros(40),
                  A_eq=np.concatenate([np.ones(J), np.zeros(41)])[None, :], b_eq=[1.0],
                  bounds=[(0, None)] * J + [(None, None)] + [(0, None)] * 40,
                  method="highs")
    assert abs(solution.value + res.fun) <= 1e-9
    # ρ read back through the offsets gives the primal's objective (without them the
    # solve's own check raises: row 0's dual alone is ρ − Σ w_j v_j)
    margins = U @ solution.w
    assert abs(solution.rho - np.maximum(solution.rho - margins, 0).sum() / 4.0
               - solution.value) <= 1e-9


def test_rows_are_written_as_differences_where_that_is_sparser():
    """A column close to an earlier one (or to its negation) is written as the
    difference from that row (``σ_k`` in it): the same LP's value and a ρ that gives
    the primal's objective, also after the chained rows are cut off and added again."""
    rng = np.random.default_rng(7)
    n = 60
    base = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    other = np.where(rng.random(n) < 0.85, 1.0, -1.0)  # sparse by its offset
    near = base.copy()
    near[:3] *= -1.0  # 3 entries from base
    negated_near = -other
    negated_near[10] *= -1.0  # 1 entry from −other
    columns = [base, other, near, negated_near, rng.uniform(-1.0, 1.0, n)]
    codes = [row_code(u, columns[:j]) for j, u in enumerate(columns)]
    assert [(c.parent, c.sign) for c in codes] == [(-1, 0.0), (-1, 0.0), (0, 1.0),
                                                   (1, -1.0), (-1, 0.0)]
    assert [int(np.count_nonzero(c.entries)) for c in codes[2:4]] == [3, 1]
    nu = 6.0
    lp = SoftMarginLP(np.ones(n), nu)
    for u in columns:
        lp.add_column(u)
    solution = lp.solve()
    assert abs(solution.value - _restricted_primal(columns, nu)[0]) <= 1e-9
    margins = np.column_stack(columns) @ solution.w
    assert abs(solution.rho - np.maximum(solution.rho - margins, 0).sum() / nu
               - solution.value) <= 1e-9
    lp.truncate(2)  # the difference rows go, with their σ
    assert abs(lp.solve().value - _restricted_primal(columns[:2], nu)[0]) <= 1e-9
    for u in columns[2:]:
        lp.add_column(u)
    assert abs(lp.solve().value - solution.value) <= 1e-9


def test_a_discarded_round_leaves_the_lp_as_it_was(monkeypatch):
    """The loop may discard a round after the booster added its column (a monitor's
    veto): the LP then holds the committed rounds' columns only, with the basis it had,
    and a continuation goes on as a fit that never had that round."""
    from oracleboost.engine.monitors import NonFiniteLoss

    M = np.random.default_rng(5).uniform(-1.0, 1.0, size=(150, 40))
    X, y, H = matrix_problem(M)
    params = dict(nu=5, tol=1e-12)
    full = TotallyCorrectiveClassifier(MatrixOracle(H), n_estimators=12, **params).fit(X, y)

    def veto_round_seven(self, run, result):  # (a resumable reason)
        return StopReason.CALLBACK if len(run.history) == 6 else None

    monkeypatch.setattr(NonFiniteLoss, "veto", veto_round_seven)
    model = TotallyCorrectiveClassifier(MatrixOracle(H), n_estimators=12, warm_start=True,
                                        **params).fit(X, y)
    monkeypatch.undo()
    assert model.stop_reason_ == StopReason.CALLBACK and model.n_estimators_ == 6
    lp = model._state_.lp
    assert lp.n_columns == 6 and lp._highs.getNumRow() == 7  # Σ d = 1, and 6 columns
    # the basis from before the discarded round: solved again, nothing to do
    solution = lp.solve()
    assert solution.iterations == 0 and solution.value == model.lp_value_
    model.fit(X, y)  # (the model was handed over to this continuation's copy)
    assert model.n_estimators_ == 12
    np.testing.assert_allclose(model.history_["lp_value"], full.history_["lp_value"],
                               rtol=0, atol=1e-12)


def test_early_stopping_cuts_the_lp_back_with_the_model():
    """Early stopping returns to an earlier round's state: the LP shared by the fit's
    states goes back to that round's columns (here the first: LPBoost's randomized vote
    is at its best on the held-out rows after one round), and warm_start continues
    from there."""
    X, y = load_breast_cancer(return_X_y=True)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=5, n_estimators=60,
                                        n_iter_no_change=3, validation_fraction=0.3,
                                        random_state=0, warm_start=True).fit(X, y)
    assert model.stop_reason_ == StopReason.EARLY_STOPPING
    kept, ran = len(model.history_["lp_value"]), len(model.validation_loss_)
    assert kept < ran  # later rounds were cut
    lp = model._state_.lp
    assert lp.n_columns == kept and lp._highs.getNumRow() == kept + 1
    assert abs(lp.solve().value - model.lp_value_) <= 1e-12
    # the continuation runs the cut rounds again, as they were (the same patience
    # keeps the same held-out split), and stops there again
    curve = model.validation_loss_
    model.set_params(n_estimators=kept + 5).fit(X, y)
    np.testing.assert_allclose(model.validation_loss_, curve, rtol=0, atol=1e-12)
    assert model._state_.lp.n_columns == len(model.history_["lp_value"]) == kept


def test_truncate_names_a_bad_count():
    lp = SoftMarginLP(np.ones(4), 1.0)
    lp.add_column(np.array([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="n_columns=2"):
        lp.truncate(2)


# -- the four methods in the shared machinery: warm start, eval sets, early stopping ------
def _registered(method: str, **params) -> TotallyCorrectiveClassifier:
    """The method as registered in BOOSTERS (its ε), on stumps, with ν = 5 (TotalBoost:
    1) unless given: these tests' round counts were measured at the capping the grid
    used before LPBoost and ERLPBoost took the default ν = N/2 (which ends ERLPBoost's
    fit on these rows within a few rounds: nothing left to continue)."""
    from oracleboost.boosters import BOOSTERS

    params.setdefault("nu", 1 if method == "totalboost" else 5)
    return BOOSTERS[method].make(StumpOracle(), random_state=0, **params)


def _small(seed: int = 0, n: int = 160):
    from sklearn.datasets import make_classification

    return make_classification(n, 5, n_informative=3, flip_y=0.1, random_state=seed)


METHODS = ("lpboost", "erlpboost", "softboost", "totalboost")


def _same_history(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if not key.endswith("time"):  # wall clocks differ from run to run
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize("method", METHODS)
def test_warm_start_equals_one_longer_fit_for_every_method(method):
    """Column generation continues where it stopped: the LP from its model and basis,
    the entropy methods from their columns, multipliers and bounds.  6 rounds and then
    14 give the bits of one 14-round fit: model, history, certificate and state."""
    X, y = _small()
    whole = _registered(method, n_estimators=14).fit(X, y)
    assert whole.stop_reason_ == StopReason.MAX_ROUNDS  # the continuation has work to do
    warm = _registered(method, n_estimators=6, warm_start=True).fit(X, y)
    assert len(warm.history_["loss"]) == 6
    warm.set_params(n_estimators=14).fit(X, y)
    assert warm.stop_reason_ == whole.stop_reason_
    _same_history(warm.history_, whole.history_)
    np.testing.assert_array_equal(warm.decision_function(X), whole.decision_function(X))
    assert (warm.lp_value_, warm.upper_bound_) == (whole.lp_value_, whole.upper_bound_)
    a, b = warm._state_, whole._state_
    np.testing.assert_array_equal(a.d, b.d)
    assert a.lp.n_columns == b.lp.n_columns == len(a.factors)
    if method != "lpboost":
        assert a.entropic.n == b.entropic.n
        np.testing.assert_array_equal(a.entropic.alpha, b.entropic.alpha)
        assert (a.entropic.lower, a.entropic.reg_upper, a.entropic.entropy) == (
            b.entropic.lower, b.entropic.reg_upper, b.entropic.entropy)


@pytest.mark.parametrize("method", METHODS)
def test_early_stopping_on_an_eval_set_keeps_the_best_round_for_every_method(method):
    """With an eval set watched (validation_fraction=None), the model kept is the round
    of least ``val_loss_0``: the history ends there, the model equals a fit of that
    many rounds bit for bit, and the LP (and entropy state) holds that round's columns,
    so the certificate is that round's.  (Here LPBoost keeps 6 rounds, SoftBoost 14,
    TotalBoost 11 and ERLPBoost 1: see the next tests for why the first is favoured.)"""
    X, y = _small(0, 260)
    train, held = slice(0, 160), slice(160, None)
    model = _registered(method, n_estimators=40, n_iter_no_change=15,
                        validation_fraction=None)
    model.fit(X[train], y[train], eval_set=[(X[held], y[held])])
    h, curve = model.history_, model.validation_loss_
    kept = len(h["loss"])
    assert kept == model.best_iteration_ == model.n_estimators_ == int(np.argmin(curve)) + 1
    assert h["val_loss_0"][-1] == curve.min()
    np.testing.assert_array_equal(h["val_loss_0"], curve[:kept])
    if model.stop_reason_ == StopReason.EARLY_STOPPING:
        assert len(curve) - kept >= 15
    plain = _registered(method, n_estimators=kept).fit(X[train], y[train],
                                                      eval_set=[(X[held], y[held])])
    _same_history(h, plain.history_)
    np.testing.assert_array_equal(model.decision_function(X), plain.decision_function(X))
    assert len(list(model.staged_predict(X[held]))) == kept
    state = model._state_
    assert state.lp.n_columns == len(state.factors) == plain._state_.lp.n_columns
    assert (model.lp_value_, model.upper_bound_) == (h["lp_value"][-1], h["upper_bound"][-1])
    if method != "lpboost":
        assert state.entropic.n == plain._state_.entropic.n


@pytest.mark.parametrize("method", METHODS)
def test_validation_fraction_holds_out_rows_and_warm_start_goes_on_from_the_best(method):
    """Early stopping's own held-out rows (validation_fraction): the model is the best
    round's, and warm_start continues from it on the same split, seeing the same
    curve again (the cut rounds are deterministic)."""
    X, y = _small(2)
    model = _registered(method, n_estimators=30, n_iter_no_change=3,
                        validation_fraction=0.25, warm_start=True).fit(X, y)
    curve = model.validation_loss_.copy()
    kept = len(model.history_["loss"])
    assert kept == int(np.argmin(curve)) + 1 and model.history_["heldout_loss"][-1] == curve.min()
    model.set_params(n_estimators=kept + len(curve)).fit(X, y)
    np.testing.assert_array_equal(model.validation_loss_[: len(curve)], curve)
    assert model._state_.lp.n_columns == len(model._state_.factors)


@pytest.mark.parametrize("seed", range(3))
def test_early_stopping_watches_the_votes_error_not_the_first_round(seed):
    """``loss`` is the vote's share of rows at margin ≤ 0, so early stopping can keep a
    later round.  Session 13's ``loss``, the randomized vote's error (the w-weighted
    mean of the columns' own errors), was never below round 1's, and early stopping
    kept round 1 on every held-out split."""
    X, y = load_breast_cancer(return_X_y=True)
    # (ν = 40 of 398 training rows: a soft margin; measured over seeds 0–4, the kept
    # round's held-out error is 0.012–0.053 against round 1's 0.076–0.111; with ν = 5
    # LPBoost's early vertices are poor votes and a patience of 10 can end at round 1)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=40, n_estimators=60,
                                        n_iter_no_change=10, validation_fraction=0.3,
                                        random_state=seed).fit(X, y)
    curve = model.validation_loss_
    kept = len(model.history_["lp_value"])
    assert kept > 1 and curve[kept - 1] < curve[0]
    assert curve[kept - 1] == curve.min()


@pytest.mark.parametrize("method", METHODS)
def test_threads_do_not_change_the_fit(method):
    """The passes over the rows sum block by block in a fixed order: the threads that
    run the blocks leave every bit of the fit as it was (the reproducibility promise)."""
    X, y = _small(3)
    one = _registered(method, n_estimators=12, n_jobs=1, block_size=32).fit(X, y)
    many = _registered(method, n_estimators=12, n_jobs=2, block_size=32).fit(X, y)
    _same_history(one.history_, many.history_)
    np.testing.assert_array_equal(one.decision_function(X), many.decision_function(X))
    np.testing.assert_array_equal(one._state_.d, many._state_.d)
