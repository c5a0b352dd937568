"""Totally corrective boosting with K > 2 classes over the N × (K − 1) cells (issue 24,
"Multiclass"): LPBoost's final soft margin is the full LP's optimum over every vote of a
finite class (all label-coded stumps over StumpOracle's bins, or a fixed vote table),
the certificate brackets it every round, the entropy methods reach within ε within
their bounds over N(K − 1) cells, and two classes through the cells give the binary
path's LP."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog
from sklearn.datasets import load_digits, load_iris, make_classification

from oracleboost.boosters import StopReason, TotallyCorrectiveClassifier
from oracleboost.boosters.totally_corrective.estimator import (
    erlpboost_round_bound,
    softboost_round_bound,
)
from oracleboost.oracles import StumpOracle
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis, Oracle

pytest.importorskip("highspy")


# -- the full class and its LP, built here independently of the booster ---------------
def _cells(votes: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """The columns of class votes ``votes`` (J × n) over the cells (i, k ≠ y_i), row by
    row in class order: ``[p_i = y_i] − [p_i = k]``, shape (n (K − 1), J)."""
    rows = []
    for i in range(y.shape[0]):
        for k in range(K):
            if k != y[i]:
                rows.append((votes[:, i] == y[i]).astype(float) - (votes[:, i] == k))
    return np.array(rows)


def _stump_votes(X: np.ndarray, K: int) -> np.ndarray:
    """Every vote of a label-coded stump over exact bins (each distinct value its own
    bin: StumpOracle's bins when a feature has at most 255 values) and the constants,
    without repeats: shape (J, n)."""
    n = X.shape[0]
    votes = [np.full(n, k) for k in range(K)]
    for j in range(X.shape[1]):
        for v in np.unique(X[:, j])[:-1]:
            left = X[:, j] <= v
            votes += [np.where(left, a, b) for a in range(K) for b in range(K) if a != b]
    return np.unique(np.array(votes), axis=0)


def _full_lp(U: np.ndarray, cost: np.ndarray, nu: float) -> float:
    """max ρ − (1/ν) Σ c ξ s.t. U w ≥ ρ − ξ, w on the simplex, ξ ≥ 0, by scipy's HiGHS
    from scratch."""
    M, J = U.shape
    c = np.concatenate([np.zeros(J), [-1.0], cost / nu])
    A_ub = sparse.hstack([sparse.csr_matrix(-U), np.ones((M, 1)), -sparse.identity(M)])
    A_eq = np.concatenate([np.ones(J), [0.0], np.zeros(M)])[None, :]
    bounds = [(0, None)] * J + [(None, None)] + [(0, None)] * M
    res = linprog(c, A_ub=A_ub.tocsr(), b_ub=np.zeros(M), A_eq=A_eq, b_eq=[1.0],
                  bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def _soft_margin(f: np.ndarray, y: np.ndarray, cost: np.ndarray, nu: float) -> float:
    """The model's own soft margin ``max_ρ ρ − (1/ν) Σ c (ρ − m)₊`` over its pairwise
    margins m (concave and piecewise linear in ρ: a breakpoint is optimal)."""
    K = f.shape[1]
    m = np.array([f[i, y[i]] - f[i, k] for i in range(y.shape[0]) for k in range(K)
                  if k != y[i]])
    rho = np.unique(m)
    return float(np.max(rho - (cost[None, :] * np.maximum(rho[:, None] - m[None, :], 0))
                        .sum(axis=1) / nu))


def _costs(s: np.ndarray, K: int) -> np.ndarray:
    return np.repeat(s / s.mean(), K - 1)


def _iris():
    return load_iris(return_X_y=True)


def _digits():
    X, y = load_digits(n_class=4, return_X_y=True)
    return X[:90], y[:90]


def _synthetic():
    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, n_classes=4,
                               n_clusters_per_class=1, random_state=3)
    return np.round(X, 1), y  # few distinct values: a small full class


PROBLEMS = {"iris": _iris, "digits": _digits, "synthetic": _synthetic}


# -- LPBoost reaches the full LP's optimum, the certificate brackets it --------------
@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("nu", [1, 7, 40])
def test_lpboost_reaches_the_full_lp_over_every_stump(problem, nu):
    X, y = PROBLEMS[problem]()
    K = len(np.unique(y))
    U = _cells(_stump_votes(X, K), y, K)
    cost = _costs(np.ones(y.shape[0]), K)
    optimum = _full_lp(U, cost, nu)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=nu, tol=1e-12,
                                        n_estimators=400).fit(X, y)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert abs(model.lp_value_ - optimum) <= 1e-9
    # the model's own soft margin (from its scores, not the LP's value) is the optimum
    assert abs(_soft_margin(model.decision_function(X), y, cost, nu) - optimum) <= 1e-9
    # label-coded stumps answer exactly: the certificate brackets P* every round
    h = model.history_
    assert np.all(h["lp_value"] <= optimum + 1e-9)
    assert np.all(h["upper_bound"] >= optimum - 1e-9)
    assert np.all(np.diff(h["lp_value"]) >= -1e-9)


def test_sample_weights_spread_over_each_rows_cells():
    """Every cell of row i costs c_i = s_i / s̄: the full LP with those costs is the
    optimum; and integer weights are repeated rows, with ν scaled by Σs/N (the caps
    c_i/ν of a row equal its copies' 1/ν' each)."""
    X, y = _iris()
    K, nu = 3, 10.0
    s = np.random.default_rng(0).integers(1, 4, y.shape[0]).astype(float)
    optimum = _full_lp(_cells(_stump_votes(X, K), y, K), _costs(s, K), nu)
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=nu, tol=1e-12,
                                        n_estimators=400).fit(X, y, sample_weight=s)
    assert abs(model.lp_value_ - optimum) <= 1e-9
    rows = np.repeat(np.arange(y.shape[0]), s.astype(int))
    repeated = TotallyCorrectiveClassifier(StumpOracle(), nu=nu * s.sum() / s.size,
                                           tol=1e-12, n_estimators=400)
    repeated.fit(X[rows], y[rows])
    assert abs(repeated.lp_value_ - optimum) <= 1e-9


# -- an exact oracle over a fixed table of class votes (one-hot answers) --------------
class _Vote(Hypothesis):
    def __init__(self, column: np.ndarray, K: int) -> None:
        self.column, self.K = column, K

    def predict(self, X) -> np.ndarray:
        return np.eye(self.K)[self.column[np.asarray(X)[:, 0].astype(int)]]


class _BoundVotes(BoundOracle):
    def __init__(self, oracle, rows: np.ndarray) -> None:
        super().__init__(oracle, rows.shape[0])
        self.rows = rows

    def _correlate(self, r: np.ndarray, random_state) -> Hypothesis:
        P = self.oracle.votes[self.rows]  # n × J
        scores = r[np.arange(P.shape[0])[:, None], P].sum(axis=0)
        j = int(np.argmax(scores))
        h = _Vote(self.oracle.votes[:, j], r.shape[1])
        h.train_output = np.eye(r.shape[1])[P[:, j]]
        return h


class _VoteTable(Oracle):
    """The finite class of the votes ``votes[:, j]`` (rows × J class indices), read at
    the row indices in X: its answer to ``correlate(R)`` maximises ``Σ_i R_(i, p_i)``,
    the one-hot vote's ``<R, h>``, exactly."""

    def __init__(self, votes=None) -> None:
        self.votes = votes

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlate=False, project=False, multiclass_correlate=True,
                            bounded=True)

    def bind(self, X) -> BoundOracle:
        return _BoundVotes(self, np.asarray(X)[:, 0].astype(int))


def _vote_table(seed: int, n: int = 80, J: int = 50, K: int = 4):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(K), rng.integers(0, K, n - K)])
    # votes right with probability 0.4, else a random class
    right = rng.random((n, J)) < 0.4
    votes = np.where(right, y[:, None], rng.integers(0, K, (n, J)))
    return np.arange(n)[:, None], y, votes


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nu", [1, 5, 30])
def test_lpboost_over_a_vote_table_reaches_its_full_lp(seed, nu):
    X, y, votes = _vote_table(seed)
    K = 4
    optimum = _full_lp(_cells(votes.T, y, K), _costs(np.ones(y.shape[0]), K), nu)
    model = TotallyCorrectiveClassifier(_VoteTable(votes), nu=nu, tol=1e-12,
                                        n_estimators=200).fit(X, y)
    assert model.stop_reason_ == StopReason.GAP_CLOSED
    assert abs(model.lp_value_ - optimum) <= 1e-9
    h = model.history_
    assert np.all(h["lp_value"] <= optimum + 1e-9)
    assert np.all(h["upper_bound"] >= optimum - 1e-9)


@pytest.mark.parametrize("method,nu", [("erlpboost", 5), ("softboost", 5),
                                       ("totalboost", 1)])
@pytest.mark.parametrize("eps", [0.1, 0.02])
def test_the_entropy_methods_reach_within_eps_within_their_bounds(method, nu, eps):
    X, y, votes = _vote_table(2, n=60, J=40)
    K, cells = 4, 60 * 3
    optimum = _full_lp(_cells(votes.T, y, K), _costs(np.ones(y.shape[0]), K), nu)
    model = TotallyCorrectiveClassifier(_VoteTable(votes), method=method, nu=nu, tol=eps,
                                        n_estimators=500).fit(X, y)
    assert model.stop_reason_ in (StopReason.GAP_CLOSED, StopReason.INFEASIBLE)
    assert optimum - eps - 1e-9 <= model.lp_value_ <= optimum + 1e-9
    assert model.lp_value_ - 1e-9 <= optimum <= model.upper_bound_ + 1e-9
    bound = (erlpboost_round_bound if method == "erlpboost" else softboost_round_bound)(
        cells, nu, eps)
    assert model.round_bound_ == bound  # over the N (K − 1) cells
    assert model.n_estimators_ <= bound


@pytest.mark.parametrize("method", ["erlpboost", "softboost"])
def test_the_entropy_methods_on_iris_stumps(method):
    X, y = _iris()
    nu, eps = 10, 0.05
    optimum = _full_lp(_cells(_stump_votes(X, 3), y, 3), _costs(np.ones(150), 3), nu)
    model = TotallyCorrectiveClassifier(StumpOracle(), method=method, nu=nu, tol=eps,
                                        n_estimators=300).fit(X, y)
    assert model.stop_reason_ in (StopReason.GAP_CLOSED, StopReason.INFEASIBLE)
    assert optimum - eps - 1e-9 <= model.lp_value_ <= optimum + 1e-9
    assert np.all(model.history_["upper_bound"] >= optimum - 1e-9)


# -- two classes through the cells are the binary LP ---------------------------------
@pytest.mark.parametrize("method,nu", [("lpboost", 5), ("erlpboost", 5), ("softboost", 5)])
def test_two_classes_through_the_cells_are_the_binary_path(monkeypatch, method, nu):
    """At K = 2 a cell is a row, the vote's column [p = y] − [p ≠ y] is y h for the ±1
    stump, and the label-coded query's best stump is the binary query's: the same LP
    over the same columns in the same order.  Agreement to 1e-12, not bits: the cells
    sum the edges in numpy's order, the binary path by lanes."""
    X, y = make_classification(150, 5, random_state=1)
    params = dict(method=method, nu=nu, tol=1e-9 if method == "lpboost" else 0.05,
                  n_estimators=60)
    binary = TotallyCorrectiveClassifier(StumpOracle(), **params).fit(X, y)
    monkeypatch.setattr(TotallyCorrectiveClassifier, "_uses_cells",
                        staticmethod(lambda K: K >= 2))
    cells = TotallyCorrectiveClassifier(StumpOracle(), **params).fit(X, y)
    assert cells.decision_function(X).shape == (150, 2)
    assert cells.n_estimators_ == binary.n_estimators_
    assert cells.stop_reason_ == binary.stop_reason_
    for key in ("lp_value", "edge", "upper_bound", "step", "margin"):
        np.testing.assert_allclose(cells.history_[key], binary.history_[key], rtol=0,
                                   atol=1e-12, err_msg=key)
    # the votes agree round by round; ``loss`` (the share of rows at margin ≤ 0) and
    # ``train_error`` jump at a tied vote (margin 0 in exact arithmetic), which the two
    # sum orders round to either side: they differ by at most the share of rows within
    # rounding of a tie (lpboost, ν = 5: 56% of the rows in rounds 7–9, where HiGHS's
    # vertex is a vote that ties them)
    staged = zip(cells.staged_decision_function(X), binary.staged_decision_function(X),
                 strict=True)
    for r, (f_cells, f_binary) in enumerate(staged):
        np.testing.assert_allclose(f_cells[:, 1] - f_cells[:, 0], f_binary, atol=1e-12)
        near_tie = np.mean(np.abs(f_binary) <= 1e-12)
        for key in ("loss", "train_error"):
            assert abs(cells.history_[key][r] - binary.history_[key][r]) <= near_tie, (key, r)
    f = cells.decision_function(X)
    np.testing.assert_allclose(f[:, 1] - f[:, 0], binary.decision_function(X), atol=1e-12)
    np.testing.assert_allclose(cells.predict_proba(X), binary.predict_proba(X), atol=1e-12)
    assert np.array_equal(cells.predict(X), binary.predict(X))


# -- the estimator's surface ----------------------------------------------------------
def test_shapes_string_labels_and_the_class_mapping():
    X, y = _iris()
    names = np.array(["virginica?", "a-setosa", "m-versicolor"])[y]  # classes_ resorted
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=10, n_estimators=60).fit(X, names)
    assert list(model.classes_) == ["a-setosa", "m-versicolor", "virginica?"]
    f, p = model.decision_function(X), model.predict_proba(X)
    assert f.shape == p.shape == (150, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(p >= 0)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(f, axis=1)])
    assert model.score(X, names) > 0.9
    # the LP does not depend on the classes' names (their order permutes the cells)
    kw = dict(nu=10, tol=1e-12, n_estimators=300)
    renamed = TotallyCorrectiveClassifier(StumpOracle(), **kw).fit(X, names)
    plain = TotallyCorrectiveClassifier(StumpOracle(), **kw).fit(X, y)
    assert abs(plain.lp_value_ - renamed.lp_value_) <= 1e-9
    staged = list(model.staged_predict_proba(X))
    assert len(staged) == model.n_estimators_ and staged[-1].shape == (150, 3)
    assert model.__sklearn_tags__().classifier_tags.multi_class


def test_the_history_records_the_vote_and_an_eval_set():
    X, y = _iris()
    model = TotallyCorrectiveClassifier(StumpOracle(), nu=10, n_estimators=30)
    model.fit(X[::2], y[::2], eval_set=[(X[1::2], y[1::2])])
    f = model.decision_function(X[::2])
    yi = y[::2]
    rows = np.arange(yi.shape[0])
    others = f.copy()
    others[rows, yi] = -np.inf
    h = model.history_
    assert h["margin"][-1] == pytest.approx(np.min(f[rows, yi] - others.max(axis=1)),
                                            abs=1e-12)
    assert h["train_error"][-1] == pytest.approx(np.mean(np.argmax(f, axis=1) != yi))
    assert h["loss"][-1] == np.mean(f[rows, yi] - others.max(axis=1) <= 0)
    fe = model.decision_function(X[1::2])
    assert h["val_error_0"][-1] == pytest.approx(np.mean(np.argmax(fe, axis=1) != y[1::2]))
    re = np.arange(fe.shape[0])
    other = fe.copy()
    other[re, y[1::2]] = -np.inf
    assert h["val_loss_0"][-1] == np.mean(fe[re, y[1::2]] - other.max(axis=1) <= 0)


def test_nu_counts_cells():
    X, y = _iris()
    TotallyCorrectiveClassifier(StumpOracle(), nu=300, n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match=r"nu=301.*300 cells"):
        TotallyCorrectiveClassifier(StumpOracle(), nu=301, n_estimators=5).fit(X, y)


def test_score_valued_answers_enter_as_their_votes():
    """A regression tree's (N, K) answer maximises the score differences' edge, a
    surrogate: its argmax vote enters the LP, whose solution is still checked."""
    from sklearn.tree import DecisionTreeRegressor

    from oracleboost.oracles import SklearnOracle

    X, y = _iris()
    model = TotallyCorrectiveClassifier(SklearnOracle(DecisionTreeRegressor(max_depth=2)),
                                        nu=10, n_estimators=20, random_state=0).fit(X, y)
    assert model.decision_function(X).shape == (150, 3)
    assert np.isfinite(model.lp_value_) and model.score(X, y) > 0.9
    assert all(type(h).__name__ == "ArgmaxVote" for h in model.ensemble_.hypotheses)
