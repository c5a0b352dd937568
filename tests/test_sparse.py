"""Scipy sparse X (issue 22): StumpOracle and LinearOracle fit it exactly as X.toarray()
(TreeOracle and LightGBMOracle: tests/test_sparse_trees.py).

A fit on CSR or CSC X must equal the fit on the dense matrix bit for bit: the history,
the coefficients, the hypotheses and every prediction (on sparse new rows against the
dense fit on the same rows made dense).  The data have many exact zeros, negative and
positive values, an all-zero column and a column without zeros.  Oracles and boosters
that cannot take sparse X refuse it with a TypeError naming X and ``X.toarray()``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import (
    CachedOracle,
    HistTreeOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.oracles import stumps as stumps_module

FORMATS = {"csr_matrix": sp.csr_matrix, "csc_array": sp.csc_array}
SEEDS = (0, 1, 2)


def _data(seed: int, n: int = 160, d: int = 6):
    """Rows with ~60% exact zeros (negative and positive values otherwise), column 2
    all zero, column 3 without a zero, column 4 small integers (ties)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.6] = 0.0
    X[:, 2] = 0.0
    X[:, 3] = rng.normal(size=n) + 4.0
    X[:, 4] = np.round(2 * X[:, 4])
    f = X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 4] + 0.2 * rng.normal(size=n)
    return X, f, rng


def _bits(a) -> np.ndarray:
    """An array's bits (so that −0.0 and +0.0, and NaNs, are told apart exactly)."""
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return a.view(np.int64)


def _assert_same(a, b) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    np.testing.assert_array_equal(_bits(a), _bits(b))


def _assert_same_fit(dense, sparse) -> None:
    keys = set(dense.history_) - {"time", "cumulative_time"}
    assert keys == set(sparse.history_) - {"time", "cumulative_time"}
    assert len(dense.history_["loss"]) > 1  # a fit of several rounds is compared
    for key in sorted(keys):
        _assert_same(dense.history_[key], sparse.history_[key])
    _assert_same(dense.coef_, sparse.coef_)
    _assert_same(dense.intercept_, sparse.intercept_)
    assert [repr(h) for h in dense.estimators_] == [repr(h) for h in sparse.estimators_]
    assert dense.stop_reason_ == sparse.stop_reason_


def _assert_same_predictions(dense, sparse, X_new: np.ndarray, fmt) -> None:
    S_new = fmt(X_new)
    methods = [m for m in ("decision_function", "predict", "predict_proba")
               if hasattr(dense, m)]
    for m in methods:
        _assert_same(getattr(dense, m)(X_new), getattr(sparse, m)(S_new))
    staged = [m for m in ("staged_decision_function", "staged_predict") if hasattr(dense, m)]
    for m in staged:
        for a, b in zip(getattr(dense, m)(X_new), getattr(sparse, m)(S_new), strict=True):
            _assert_same(a, b)


def _classes(f: np.ndarray, K: int) -> np.ndarray:
    return np.digitize(f, np.quantile(f, np.linspace(0, 1, K + 1)[1:-1]))


def _HGB():
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=3)


def _Ridge():
    from sklearn.linear_model import Ridge

    return Ridge()


STUMPS = StumpOracle(max_bins=16)
SAMPLED = StumpOracle(max_bins=8, bin_sample=64)  # the bins from 64 of the rows

CASES = {
    "adaboost_stumps": (CoordinateBoostingClassifier(STUMPS, n_estimators=25), 2),
    "logistic_wolfe_sampled_bins": (
        CoordinateBoostingClassifier(SAMPLED, loss="logistic", step="wolfe",
                                     n_estimators=20), 2),
    "coordinate_linear": (CoordinateBoostingClassifier(LinearOracle(), loss="logistic",
                                                       step="wolfe", n_estimators=20), 2),
    "mirror_stumps": (MirrorBoostingClassifier(STUMPS, n_estimators=20), 2),
    "mirror_multiclass": (MirrorBoostingClassifier(STUMPS, n_estimators=20), 3),
    "mirror_linear": (MirrorBoostingClassifier(LinearOracle(), n_estimators=15), 2),
    "functional_regressor_stumps": (FunctionalGradientRegressor(STUMPS, n_estimators=25), 0),
    "functional_regressor_huber_sampled": (
        FunctionalGradientRegressor(SAMPLED, loss="huber", n_estimators=20), 0),
    "functional_regressor_linear": (
        FunctionalGradientRegressor(LinearOracle(), n_estimators=20), 0),
    "functional_classifier_stumps": (
        FunctionalGradientClassifier(STUMPS, n_estimators=20), 2),
    "functional_softmax_stumps": (
        FunctionalGradientClassifier(STUMPS, loss="softmax", n_estimators=15), 3),
    "functional_hinge_label_codes": (
        FunctionalGradientClassifier(STUMPS, loss="multiclass_hinge", query="correlate",
                                     n_estimators=15), 3),
    "functional_classifier_linear": (
        FunctionalGradientClassifier(LinearOracle(), n_estimators=15), 2),
}


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=FORMATS.keys())
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=CASES.keys())
def test_sparse_fit_equals_dense_fit(case, seed, fmt):
    est, K = CASES[case]
    X, f, rng = _data(seed)
    y = f if K == 0 else _classes(f, K)
    w = rng.uniform(0.5, 2.0, size=len(y))
    dense = clone(est).set_params(random_state=seed).fit(X, y, sample_weight=w)
    sparse = clone(est).set_params(random_state=seed).fit(fmt(X), y, sample_weight=w)
    _assert_same_fit(dense, sparse)
    X_new, _, _ = _data(seed + 100, n=57)
    _assert_same_predictions(dense, sparse, X_new, fmt)


@pytest.mark.parametrize("oracle", [STUMPS, LinearOracle()], ids=["stumps", "linear"])
@pytest.mark.parametrize("seed", SEEDS)
def test_sparse_ranker_equals_dense(oracle, seed):
    X, f, _ = _data(seed)
    qid = np.repeat(np.arange(16), 10)
    rel = _classes(f, 3).astype(float)
    est = FunctionalGradientRanker(oracle, n_estimators=15, random_state=seed)
    dense = clone(est).fit(X, rel, qid)
    sparse = clone(est).fit(sp.csr_matrix(X), rel, qid)
    _assert_same_fit(dense, sparse)
    _assert_same(dense.predict(X), sparse.predict(sp.csc_matrix(X)))


@pytest.mark.parametrize("seed", SEEDS)
def test_bound_stump_oracle_bins_and_answers_as_dense(seed):
    """The thresholds, codes and every query's answer: those of X.toarray(), for
    sampled and exact bins, with explicit zeros (−0.0 too) and duplicate entries."""
    X, f, rng = _data(seed, n=500)
    for oracle in (StumpOracle(), StumpOracle(max_bins=5, bin_sample=100, block_size=97),
                   StumpOracle(exact=True)):
        dense = oracle.bind(X)
        coo = sp.coo_matrix(X)
        # the same matrix with an explicit 0.0, an explicit −0.0 and a value split in two
        rows = np.concatenate([coo.row, [0, 1, 2, 2]])
        cols = np.concatenate([coo.col, [2, 2, 5, 5]])
        vals = np.concatenate([coo.data, [0.0, -0.0, 0.25, -0.25]])
        odd = sp.coo_matrix((vals, (rows, cols)), shape=X.shape)
        np.testing.assert_array_equal(odd.toarray(), X)
        for S in (sp.csr_matrix(X), sp.csc_array(X), odd):
            bound = oracle.bind(S)
            assert len(bound.thresholds) == len(dense.thresholds)
            for a, b in zip(dense.thresholds, bound.thresholds, strict=True):
                _assert_same(a, b)
            np.testing.assert_array_equal(dense.codes, bound.codes)
            r = rng.normal(size=X.shape[0])
            R = rng.normal(size=(X.shape[0], 3))
            w = rng.uniform(size=len(f)) + 0.1
            for name, args in (("correlate", (r,)), ("correlate", (R,)),
                               ("project", (f, w)), ("project", (R,))):
                h_dense = getattr(dense, name)(*args)
                h_sparse = getattr(bound, name)(*args)
                assert repr(h_dense) == repr(h_sparse)
                _assert_same(h_dense.train_output, h_sparse.train_output)
                _assert_same(h_dense.predict(X), h_sparse.predict(S))


def test_zero_is_its_own_bin():
    """A threshold can separate zero from values on either side of it: a feature whose
    label is +1 exactly at its zeros is fitted by two stumps around zero, as dense."""
    x = np.array([-2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0])
    X = np.column_stack([x, np.zeros_like(x)])
    bound = StumpOracle().bind(sp.csr_matrix(X))
    thresholds = bound.thresholds[0]
    assert ((-1.0 < thresholds) & (thresholds < 0.0)).any()
    assert ((0.0 < thresholds) & (thresholds < 1.0)).any()
    assert bound.thresholds[1].size == 0  # the all-zero column has one bin


def test_sparse_predict_sum_by_blocks(monkeypatch):
    """predict_sum on sparse rows, by blocks of a few rows made dense, equals the dense
    compiled sum and the loop of single predictions."""
    X, f, _ = _data(3, n=300)
    est = FunctionalGradientRegressor(STUMPS, n_estimators=30, random_state=0).fit(X, f)
    expected = est.predict(X)
    monkeypatch.setattr(stumps_module, "_SPARSE_BLOCK_FLOATS", 64)  # blocks of a few rows
    for fmt in FORMATS.values():
        _assert_same(est.predict(fmt(X)), expected)
    out = np.zeros(X.shape[0]) + est.intercept_
    hyps = est.ensemble_.hypotheses
    for h, c in zip(hyps, est.coef_, strict=True):
        out += c * h.predict(sp.csc_matrix(X))
    # one term a distinct hypothesis (stumps here do not recur): the same sums
    if len(hyps) == est.ensemble_.n_rounds:
        _assert_same(out, expected)


def test_cached_stumps_on_sparse(tmp_path):
    X, f, _ = _data(4)
    y = _classes(f, 2)
    cached = CachedOracle(STUMPS, memory=str(tmp_path))
    dense = CoordinateBoostingClassifier(STUMPS, n_estimators=10).fit(X, y)
    sparse = CoordinateBoostingClassifier(cached, n_estimators=10).fit(sp.csr_matrix(X), y)
    _assert_same_fit(dense, sparse)


def test_sparse_input_is_never_written_to():
    """A CSR matrix with unsorted indices and two duplicate entries (that add up to the
    zero of X): canonicalised on a copy; the fit is the dense one."""
    X, f, _ = _data(5)
    coo = sp.coo_matrix(X)
    shuffle = np.random.default_rng(0).permutation(coo.nnz)
    order = shuffle[np.argsort(coo.row[shuffle], kind="stable")]  # rows in order, not cols
    indptr = np.concatenate([[0], np.cumsum(np.bincount(coo.row, minlength=X.shape[0]))])
    indptr[-1] += 2
    S = sp.csr_matrix((np.append(coo.data[order], [1.0, -1.0]),
                       np.append(coo.col[order], [2, 2]), indptr), shape=X.shape)
    np.testing.assert_array_equal(S.toarray(), X)
    assert not S.has_canonical_format
    before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
    est = FunctionalGradientRegressor(STUMPS, n_estimators=5)
    sparse = clone(est).fit(S, f)
    _assert_same(sparse.predict(S), clone(est).fit(X, f).predict(X))
    for a, b in zip(before, (S.data, S.indices, S.indptr), strict=True):
        np.testing.assert_array_equal(a, b)


def test_warm_start_recognises_the_same_sparse_data():
    X, f, _ = _data(6)
    est = FunctionalGradientRegressor(STUMPS, n_estimators=5, warm_start=True)
    est.fit(sp.csr_matrix(X), f)
    est.set_params(n_estimators=10).fit(sp.csc_matrix(X), f)  # same values, other format
    full = FunctionalGradientRegressor(STUMPS, n_estimators=10).fit(X, f)
    _assert_same(est.predict(X), full.predict(X))
    X2 = X.copy()
    X2[0, 0] += 1.0
    with pytest.raises(ValueError, match="warm_start"):
        est.set_params(n_estimators=12).fit(sp.csr_matrix(X2), f)


# -- tags and refusals ----------------------------------------------------------------------
@pytest.mark.parametrize("est, sparse", [
    (CoordinateBoostingClassifier(), True),  # default: stumps
    (MirrorBoostingClassifier(), True),
    (FunctionalGradientClassifier(), True),  # default project: scikit-learn trees
    (FunctionalGradientClassifier(StumpOracle()), True),
    (FunctionalGradientRegressor(), True),
    (FunctionalGradientRegressor(StumpOracle()), True),
    (FunctionalGradientRegressor(LinearOracle()), True),
    (CoordinateBoostingClassifier(CachedOracle(StumpOracle())), True),
    (CoordinateBoostingClassifier(LightGBMOracle()), True),
    (FunctionalGradientClassifier(HistTreeOracle()), True),
    (CoordinateBoostingClassifier(CachedOracle(TreeOracle())), True),
    (FunctionalGradientRegressor(MLPOracle()), False),
    (FunctionalGradientRegressor(SklearnOracle(_HGB())), False),
    (FunctionalGradientRegressor(SklearnOracle(_Ridge())), True),  # its tags take it
    (AcceleratedMarginClassifier(), False),
])
def test_sparse_tag_is_honest(est, sparse):
    assert est.__sklearn_tags__().input_tags.sparse is sparse
    X, f, _ = _data(7)
    y = _classes(f, 2)
    if sparse:
        clone(est).set_params(n_estimators=3).fit(sp.csr_array(X), y)
    else:
        with pytest.raises(TypeError, match=r"X is a scipy sparse matrix.*X\.toarray\(\)"):
            clone(est).set_params(n_estimators=3).fit(sp.csr_array(X), y)


@pytest.mark.parametrize("oracle, name", [
    (SklearnOracle(_HGB()), "SklearnOracle"),  # its tags refuse sparse X
    (MLPOracle(), "MLPOracle"),
    (MatrixOracle(np.eye(4)), "MatrixOracle"),
    (CachedOracle(MLPOracle()), "MLPOracle"),
])
def test_dense_only_oracles_refuse_sparse_by_name(oracle, name):
    X = sp.csr_matrix(np.eye(4))
    with pytest.raises(TypeError, match=rf"X is a scipy sparse matrix.*{name}.*X\.toarray"):
        oracle.bind(X)


def test_refused_fit_leaves_the_estimator_as_it_was():
    X, f, _ = _data(8)
    est = FunctionalGradientRegressor(MLPOracle(max_iter=20), n_estimators=2).fit(X, f)
    before = est.predict(X)
    with pytest.raises(TypeError, match="FunctionalGradientRegressor with MLPOracle"):
        est.fit(sp.csr_matrix(X), f)
    _assert_same(est.predict(X), before)
    with pytest.raises(TypeError, match=r"X\.toarray\(\)"):
        est.predict(sp.csr_matrix(X))


def test_a_hypothesis_of_a_dense_only_class_refuses_sparse_rows():
    X, f, _ = _data(9)
    h = MLPOracle(max_iter=20).bind(X).project(f)  # an MLPRegressor's tags take it: not here
    with pytest.raises(TypeError, match=r"X is a scipy sparse matrix.*X\.toarray"):
        h.predict(sp.csr_matrix(X))


def test_dask_array_of_sparse_chunks_is_refused():
    da = pytest.importorskip("dask.array")
    X, f, _ = _data(10)
    y = _classes(f, 2)
    dX = da.from_array(X, chunks=(40, 6)).map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match="dask array of scipy sparse chunks"):
        CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(dX, y)
    est = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match="dask array of scipy sparse chunks"):
        est.predict(dX)
