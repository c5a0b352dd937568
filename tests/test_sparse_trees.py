"""Scipy sparse X with tree oracles (issue 22): TreeOracle and LightGBMOracle fit CSR and
CSC X exactly as ``X.toarray()``.

LightGBM bins a sparse matrix itself, from the same rows and values as the dense one,
and the oracle reads the training rows' leaves with LightGBM's own walk on it;
scikit-learn's trees are grown on the float32 array a dense fit casts X to (its sparse
splitter grows other trees) and predict sparse rows as they are.  So every booster's
fit on sparse X is its dense fit bit for bit: history, coefficients, trees, every
prediction (on sparse new rows), the staged ones, and the export (``to_lightgbm(X)``
counting covers on sparse rows, and its predictions).  ``SklearnOracle`` takes sparse X
where its estimator's tags do, and gives what that estimator computes on it.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeRegressor
from test_sparse import _assert_same, _assert_same_fit, _assert_same_predictions, _classes, _data

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.export.lightgbm import lightgbm_model_string
from oracleboost.oracles import LightGBMOracle, SklearnOracle, TreeOracle

ORACLES = {
    "tree": lambda: TreeOracle(max_depth=3),
    # one thread: tiny trees grow 5 to 10 times faster on a busy machine (OpenMP's
    # threads wait for each other), and threads never change a tree
    "lightgbm": lambda: LightGBMOracle(num_leaves=7, min_data_in_leaf=5,
                                       params={"num_threads": 1}),
}

BOOSTERS = {
    # name: (make(oracle), K: 0 regression, 2 or 3 classes, -1 ranking)
    "adaboost": (lambda o: CoordinateBoostingClassifier(o, n_estimators=8), 2),
    "logistic_wolfe": (lambda o: CoordinateBoostingClassifier(
        o, loss="logistic", step="wolfe", n_estimators=6), 2),
    "maboost": (lambda o: MirrorBoostingClassifier(o, n_estimators=8), 2),
    "functional_regressor": (lambda o: FunctionalGradientRegressor(o, n_estimators=8), 0),
    "functional_logistic": (lambda o: FunctionalGradientClassifier(
        o, loss="logistic", n_estimators=8), 2),
    "functional_softmax": (lambda o: FunctionalGradientClassifier(o, n_estimators=5), 3),
    "lpboost": (lambda o: TotallyCorrectiveClassifier(o, n_estimators=6), 2),
    "ranker": (lambda o: FunctionalGradientRanker(o, n_estimators=6), -1),
}

# one format a seed: CSR (matrix) on seed 0, CSC (array) on seed 1
CELLS = [(b, o, seed) for b in BOOSTERS for o in ORACLES for seed in (0, 1)
         if not (b == "functional_softmax" and o == "lightgbm")]  # one output a tree
FORMATS = {0: sp.csr_matrix, 1: sp.csc_array}


def _fit(est, X, y, w, qid):
    if qid is not None:
        return est.fit(X, y, qid)
    return est.fit(X, y, sample_weight=w)


@pytest.mark.parametrize("booster, oracle, seed", CELLS)
def test_sparse_fit_equals_dense_fit(booster, oracle, seed):
    make, K = BOOSTERS[booster]
    fmt = FORMATS[seed]
    X, f, rng = _data(seed)
    qid = np.repeat(np.arange(16), 10) if K < 0 else None
    y = {0: f, -1: _classes(f, 3).astype(float)}.get(K, _classes(f, max(K, 2)))
    w = None if K < 0 else rng.uniform(0.5, 2.0, size=len(y))
    est = make(ORACLES[oracle]()).set_params(random_state=seed)
    dense = _fit(clone(est), X, y, w, qid)
    sparse = _fit(clone(est), fmt(X), y, w, qid)
    for model in (dense, sparse):  # LPBoost's seconds in HiGHS: a time, not a result
        model.history_.pop("solver_time", None)
    _assert_same_fit(dense, sparse)
    X_new, _, _ = _data(seed + 100, n=57)
    _assert_same_predictions(dense, sparse, X_new, fmt)
    # the export: covers counted on sparse rows, the same model text; its predictions
    assert lightgbm_model_string(sparse, fmt(X)) == lightgbm_model_string(dense, X)
    exported = sparse.to_lightgbm(fmt(X))
    decision = dense.decision_function if hasattr(dense, "decision_function") else dense.predict
    _assert_same(exported.predict(sp.csr_matrix(X_new), raw_score=True), decision(X_new))


@pytest.mark.parametrize("oracle", list(ORACLES))
def test_early_stopping_holds_out_sparse_rows(oracle):
    """Held-out rows taken from a sparse X (and an eval set of sparse rows) fit and
    score as the dense ones."""
    X, f, rng = _data(3, n=240)
    y = _classes(f, 2)
    est = FunctionalGradientClassifier(ORACLES[oracle](), n_estimators=12, n_iter_no_change=3,
                                       validation_fraction=0.25, random_state=0)
    X_eval, f_eval, _ = _data(4, n=60)
    dense = clone(est).fit(X, y, eval_set=[(X_eval, _classes(f_eval, 2))])
    sparse = clone(est).fit(sp.csc_matrix(X), y,
                            eval_set=[(sp.csr_array(X_eval), _classes(f_eval, 2))])
    _assert_same_fit(dense, sparse)
    _assert_same(dense.history_["val_loss_0"], sparse.history_["val_loss_0"])
    assert dense.best_iteration_ == sparse.best_iteration_


def test_lightgbm_takes_nan_stored_in_sparse_X():
    """Missing values stored in a sparse matrix are LightGBM's missing values, as in
    the dense X."""
    X, f, rng = _data(5, n=300)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = _classes(np.nan_to_num(f), 2)
    est = CoordinateBoostingClassifier(ORACLES["lightgbm"](), n_estimators=8)
    dense, sparse = clone(est).fit(X, y), clone(est).fit(sp.csr_matrix(X), y)
    _assert_same_fit(dense, sparse)
    _assert_same(dense.decision_function(X), sparse.decision_function(sp.csc_matrix(X)))
    assert sparse.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="Input X contains NaN"):  # NaN only where taken
        CoordinateBoostingClassifier(ORACLES["tree"](), n_estimators=2).fit(
            sp.csr_matrix(X), y)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_array], ids=["csr", "csc"])
def test_bound_lightgbm_answers_as_dense(fmt):
    """Every query's tree (its model text) and training outputs, weighted or not, and
    categorical codes held in a sparse column."""
    X, f, rng = _data(6, n=400)
    X[:, 4] = np.abs(X[:, 4])  # small integers: category codes, zeros among them
    w = rng.uniform(0.1, 2.0, size=len(f))
    oracle = ORACLES["lightgbm"]()
    for cats in (None, (4,)):
        dense, sparse = (oracle.bind(A, categorical_features=cats) for A in (X, fmt(X)))
        for args in ((f,), (f, w)):
            a, b = dense.project(*args), sparse.project(*args)
            assert a.model_str == b.model_str
            _assert_same(a.train_output, b.train_output)
            _assert_same(a.predict(X), b.predict(fmt(X)))
        b = sparse.correlate(f - f.mean())
        _assert_same(b.train_output, dense.correlate(f - f.mean()).train_output)


def test_tree_oracle_grows_on_float32_rows():
    """The bound TreeOracle holds the float32 dense rows the dense fit casts X to, and
    its trees are the dense ones."""
    X, f, _ = _data(7)
    bound = TreeOracle().bind(sp.csc_matrix(X))
    assert bound.X.dtype == np.float32 and bound.X.shape == X.shape
    np.testing.assert_array_equal(bound.X, X.astype(np.float32))
    a, b = TreeOracle().bind(X).project(f, random_state=0), bound.project(f, random_state=0)
    _assert_same(a.estimator.tree_.value, b.estimator.tree_.value)
    _assert_same(a.predict(X), b.predict(sp.csr_matrix(X)))


@pytest.mark.parametrize("estimator", [DecisionTreeRegressor(max_depth=3, random_state=0),
                                       Ridge(alpha=0.5)], ids=["tree", "ridge"])
def test_sklearn_oracle_gives_its_estimators_sparse_fit(estimator):
    """SklearnOracle with an estimator whose tags take sparse X: its answer is the
    estimator's own fit on the sparse X (scikit-learn's sparse routines)."""
    X, f, rng = _data(8)
    S = sp.csc_matrix(X)
    w = rng.uniform(0.5, 2.0, size=len(f))
    oracle = SklearnOracle(estimator)
    assert oracle.capabilities.sparse_input
    h = oracle.bind(S).project(f, w)
    ref = clone(estimator).fit(S, f, sample_weight=w)
    _assert_same(h.train_output, ref.predict(S))
    _assert_same(h.predict(sp.csr_matrix(X)), ref.predict(sp.csr_matrix(X)))
