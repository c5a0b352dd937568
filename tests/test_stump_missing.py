"""Missing values (NaN in X) with StumpOracle (issue 22): LightGBM's rule.

A training column with NaN gets a bin for its NaN rows after its finite bins; every
scan tries that bin on the left, then on the right (where its last threshold, +inf,
leaves the NaN rows alone), the second winning only when strictly better.  A stump
keeps the side (``default_left``); a feature without NaN in training reads a NaN as
0.0, as LightGBM does.  The first stump is LightGBM's first split where the answer is
unique; the scans are the best over every candidate (brute force); predictions route
NaN as learned, in ``predict``, the compiled sum and the training outputs; a fit
without NaN is untouched; ±inf is still refused.  (Export: tests/test_export.py.)
"""

from __future__ import annotations

import pickle

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import CachedOracle, Hypothesis, StumpOracle
from oracleboost.oracles.stumps import (
    ConstantHypothesis,
    LabelCodeStump,
    RegressionStump,
    SignStump,
    VectorStump,
    label_codes,
)

TOL = 1e-12
SEEDS = range(4)


# -- the first stump is LightGBM's first split -------------------------------------------------
def _one_split_data(case: str, seed: int = 0, n: int = 200):
    """Feature 1 splits the classes at a gap, its NaN rows all of one class: class 0
    (NaN belongs on the left, ``nan_left``) or class 1 (``nan_right``); or (``nan_alone``)
    the NaN rows alone are class 1, every finite row class 0, with values on both sides
    of 0 (LightGBM's bin of zero then holds rows, so only its forward pass isolates the
    NaN rows: at +inf, NaN to the right).  Features 0 and 2 are noise, 2 with NaN.
    Returns X, y and the gap of feature 1 (its largest left and smallest right value)."""
    rng = np.random.default_rng(seed)
    low, high = ((-4.0, -1.0), (1.0, 4.0)) if case == "nan_alone" else ((1.0, 4.0), (6.0, 9.0))
    x = np.where(rng.uniform(size=n) < 0.5, rng.uniform(*low, n), rng.uniform(*high, n))
    nan = rng.uniform(size=n) < 0.25
    y = (x > high[0] - 0.5).astype(float)
    x[nan] = np.nan
    if case == "nan_alone":
        y = nan.astype(float)
    else:
        y[nan] = 0.0 if case == "nan_left" else 1.0
    X = np.column_stack([rng.normal(size=n), x, rng.normal(size=n)])
    X[rng.uniform(size=n) < 0.1, 2] = np.nan
    finite = x[~nan]
    return X, y, (finite[finite < high[0]].max(), finite[finite >= high[0]].min())


LIGHTGBM = {"num_leaves": 2, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0,
            "lambda_l2": 0, "max_bin": 255, "min_data_in_bin": 1, "verbose": -1,
            "num_threads": 1}


def _left_rows(h: Hypothesis) -> np.ndarray:
    """The training rows a two-leaf stump sends left."""
    left = -h.sign if isinstance(h, SignStump) else h.left
    return h.train_output == left


@pytest.mark.parametrize("query", ["correlate", "project"])
@pytest.mark.parametrize("case", ["nan_left", "nan_right", "nan_alone"])
def test_first_stump_is_lightgbms_first_split(case, query):
    """``lightgbm.train`` with one round of a 2-leaf tree (binary log loss for
    ``correlate``'s ±1 stumps, the squared loss for ``project``'s, whose gain is the
    same Σ S²/W): the same feature, the same partition of the training rows, the same
    default direction, and the threshold in the same gap (LightGBM's midpoints round
    otherwise; ``nan_alone``: +inf in both)."""
    X, y, (lo, hi) = _one_split_data(case)
    objective = "binary" if query == "correlate" else "regression"
    booster = lgb.train({**LIGHTGBM, "objective": objective}, lgb.Dataset(X, y),
                        num_boost_round=1)
    node = booster.dump_model()["tree_info"][0]["tree_structure"]
    text = booster.model_to_string()
    threshold = float(text[text.index("\nthreshold=") + 11:].split("\n", 1)[0])
    bound = StumpOracle(max_bins=255).bind(X)
    assert bound.missing.tolist() == [False, True, True]
    h = bound.correlate(2 * y - 1) if query == "correlate" else bound.project(y)

    assert isinstance(h, SignStump if query == "correlate" else RegressionStump)
    assert node["missing_type"] == "NaN"
    assert (h.feature, h.default_left) == (node["split_feature"], node["default_left"]) \
        == (1, case == "nan_left")
    leaf = booster.predict(X, pred_leaf=True).reshape(-1)
    np.testing.assert_array_equal(_left_rows(h), leaf == 0)  # leaf 0: LightGBM's left
    if case == "nan_alone":
        assert h.threshold == threshold == np.inf
    else:
        assert lo <= h.threshold < hi and lo <= threshold < hi


# -- the scans: the best over every candidate, LightGBM's tie rule ------------------------------
def _nan_data(rng: np.random.Generator, n: int = 40) -> np.ndarray:
    """Repeated values; NaN in features 0 and 1 (feature 1 one finite value and NaN:
    LightGBM's two-bin case), none in feature 2."""
    X = rng.integers(0, 5, size=(n, 3)).astype(float) * 0.7 - 1.0
    X[rng.uniform(size=n) < 0.3, 0] = np.nan
    X[:, 1] = np.where(rng.uniform(size=n) < 0.4, np.nan, 2.0)
    X[:3, :2] = np.nan
    X[3, 1] = 2.0
    return X


def _candidates(X: np.ndarray):
    """Every split of the class, as (feature, rows sent left): thresholds between
    consecutive finite values, with NaN on the left and on the right where the column
    holds NaN (and NaN alone on the right); NaN read as 0.0 where it holds none."""
    for j in range(X.shape[1]):
        x = X[:, j]
        nan = np.isnan(x)
        values = np.unique(x[~nan])
        for v in values[:-1]:
            if nan.any():
                yield j, (x <= v) | nan
            yield j, x <= v
        if nan.any() and values.size:
            yield j, ~nan


def _brute_sign(X, r):
    best = max(r.sum(), -r.sum())
    for _, left in _candidates(X):
        e = r @ np.where(left, -1.0, 1.0)
        best = max(best, e, -e)
    return best


def _wsse(t, w, out):
    t2, o2 = t.reshape(len(t), -1), out.reshape(len(t), -1)
    return float(np.sum(w[:, None] * (t2 - o2) ** 2))


def _brute_sse(X, t, w):
    t2 = t.reshape(len(t), -1)
    best = _wsse(t2, w, np.tile((w @ t2) / w.sum(), (len(t), 1)))
    for _, left in _candidates(X):
        wl, wr = w[left].sum(), w[~left].sum()
        if wl > 0 and wr > 0:
            a, b = (w[left] @ t2[left]) / wl, (w[~left] @ t2[~left]) / wr
            best = min(best, _wsse(t2, w, np.where(left[:, None], a, b)))
    return best


def _brute_codes(X, r):
    C = label_codes(r.shape[1])
    best = max(float(np.sum(r * c)) for c in C)
    for _, left in _candidates(X):
        L, R = r[left].sum(axis=0) @ C.T, r[~left].sum(axis=0) @ C.T
        best = max(best, L.max() + R.max())
    return best


def _routes_nan_as_learned(h: Hypothesis, X: np.ndarray, bound) -> None:
    """The stump's side for NaN is learned exactly where its feature has a NaN bin;
    its training outputs, ``predict`` on X and on new rows with NaN in every feature
    send NaN there (where the feature had none: where 0.0 goes)."""
    np.testing.assert_array_equal(h.train_output, h.predict(X))
    if isinstance(h, ConstantHypothesis):
        return
    j = h.feature
    assert (h.default_left is not None) == bool(bound.missing[j])
    new = np.random.default_rng(9).normal(size=(6, X.shape[1]))
    new[::2] = np.nan
    out = h.predict(new)
    if h.default_left is None:
        zero = new.copy()
        zero[:, j] = np.nan_to_num(zero[:, j])
        np.testing.assert_array_equal(out, h.predict(zero))
        return
    leaf = h._leaves()[0 if h.default_left else 1]
    for rows, outputs in ((np.isnan(X[:, j]), h.train_output), (np.isnan(new[:, j]), out)):
        assert rows.any()
        np.testing.assert_array_equal(outputs[rows], np.broadcast_to(leaf, outputs[rows].shape))


@pytest.mark.parametrize("seed", range(6))
def test_each_query_is_the_best_of_every_split_with_nan(seed):
    """±1 stumps, least squares (weighted, some weights 0), label codes and vector
    leaves: the answer's score is the best over every candidate of both directions
    (brute force), and NaN is routed as learned."""
    rng = np.random.default_rng(seed)
    X = _nan_data(rng)
    n = len(X)
    bound = StumpOracle().bind(X)
    assert bound.missing.tolist() == [True, True, False]
    nan0 = np.isnan(X[:, 0])
    r = rng.normal(size=n) + 1.5 * np.where(nan0, rng.choice([-1, 1]), 0.0)
    t = rng.normal(size=n) + 2.0 * nan0
    w = rng.uniform(0.1, 2.0, size=n)
    w[rng.uniform(size=n) < 0.3] = 0.0
    w[0] = 1.0
    R = rng.normal(size=(n, 3)) + nan0[:, None] * [2.0, -1.0, 0.0]

    h = bound.correlate(r)
    assert isinstance(h, (SignStump, ConstantHypothesis))
    assert abs(r @ h.train_output - _brute_sign(X, r)) <= TOL
    _routes_nan_as_learned(h, X, bound)
    for weight in (None, w):
        h = bound.project(t, sample_weight=weight)
        w_ = np.ones(n) if weight is None else weight
        assert abs(_wsse(t, w_, h.train_output) - _brute_sse(X, t, w_)) <= TOL
        _routes_nan_as_learned(h, X, bound)
    h = bound.correlate(R)
    assert isinstance(h, (LabelCodeStump, ConstantHypothesis))
    assert abs(np.sum(R * h.train_output) - _brute_codes(X, R)) <= TOL
    _routes_nan_as_learned(h, X, bound)
    h = bound.project(R, sample_weight=w)
    assert isinstance(h, (VectorStump, ConstantHypothesis))
    assert abs(_wsse(R, w, h.train_output) - _brute_sse(X, R, w)) <= TOL
    _routes_nan_as_learned(h, X, bound)


def test_a_tie_between_the_directions_sends_nan_left():
    """LightGBM's rule: the forward pass (NaN right) replaces the reverse pass's split
    (NaN left) only when strictly better.  NaN rows of query 0 score both alike."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    r = np.array([-1.0, -1.0, 1.0, 1.0, 0.0, 0.0])
    bound = StumpOracle().bind(X)
    for h in (bound.correlate(r), bound.project(r), bound.correlate(np.c_[r, -r])):
        assert (h.threshold, h.default_left) == (1.5, True)
    # a strictly better right side wins
    r[4:] = 0.5
    assert StumpOracle().bind(X).correlate(r).default_left is False


def test_nan_alone_and_a_column_all_nan():
    """NaN alone is a split (+inf, NaN right; LightGBM's forward pass ends there); a
    column of NaN alone has nothing to split and is never chosen."""
    X = np.array([[0.0, np.nan], [1.0, np.nan], [2.0, np.nan], [np.nan, np.nan]])
    bound = StumpOracle().bind(X)
    assert bound.missing.tolist() == [True, False]
    h = bound.correlate(np.array([-1.0, -1.0, -1.0, 3.0]))
    assert (h.feature, h.threshold, h.default_left, h.sign) == (0, np.inf, False, 1)
    np.testing.assert_array_equal(h.train_output, [-1.0, -1.0, -1.0, 1.0])
    np.testing.assert_array_equal(h.predict([[1e300, 0.0], [np.nan, 0.0]]), [-1.0, 1.0])
    only_nan = StumpOracle().bind(X[:, 1:])
    for answer in (only_nan.correlate(np.array([1.0, -2.0, 0.5, 0.25])),
                   only_nan.project(np.arange(4.0))):
        assert isinstance(answer, ConstantHypothesis)


# -- boosters: predictions follow the learned side ----------------------------------------------
def _booster_data(seed: int, n: int = 300):
    """NaN in features 0-2 (the NaN rows of feature 0 push the target one way), none in
    feature 3."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, :3][rng.uniform(size=(n, 3)) < 0.2] = np.nan
    nan0 = np.isnan(X[:, 0])
    score = np.where(nan0, 1.5 * (-1) ** seed, np.nan_to_num(X[:, 0])) + 0.5 * X[:, 3]
    return X, score + 0.3 * rng.normal(size=n)


BOOSTERS = {
    "adaboost": (lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=8),
                 lambda s: (s > 0).astype(int)),
    "regressor": (lambda: FunctionalGradientRegressor(StumpOracle(), n_estimators=8),
                  lambda s: s),
    "label_codes": (lambda: MirrorBoostingClassifier(StumpOracle(), n_estimators=8),
                    lambda s: np.digitize(s, [-0.5, 0.5])),
    "vector_leaves": (lambda: FunctionalGradientClassifier(StumpOracle(), n_estimators=8),
                      lambda s: np.digitize(s, [-0.5, 0.5])),
}


def _stumps(model) -> list:
    hs = [getattr(h, "inner", h) for h in model.ensemble_.hypotheses]  # MABoost's votes
    return [h for h in hs if not isinstance(h, ConstantHypothesis)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", BOOSTERS)
def test_boosters_route_nan_as_their_stumps_learned(name, seed):
    """Every stump of a fit sends NaN to its learned side (a feature without NaN in
    training: where 0.0 goes), and the compiled sum of the rounds is the loop of their
    predictions bit for bit on rows with NaN; the NaN rows of feature 0 are learned."""
    make, target = BOOSTERS[name]
    X, s = _booster_data(seed)
    model = make().fit(X, target(s))
    stumps = _stumps(model)
    learned = [h for h in stumps if h.default_left is not None]
    assert any(h.feature == 0 for h in learned)
    assert all(h.feature != 3 for h in learned)
    new = np.random.default_rng(seed + 100).normal(size=(50, 4))
    new[np.random.default_rng(seed).uniform(size=new.shape) < 0.3] = np.nan
    for h in stumps:
        rows = np.isnan(new[:, h.feature])
        out = h.predict(new)[rows]
        leaf = h._leaves()[0 if h._nan_left() else 1]
        np.testing.assert_array_equal(out, np.broadcast_to(leaf, out.shape))
        if h.default_left is None:
            assert h._nan_left() == (0.0 <= h.threshold)
    hs, coef = model.ensemble_.hypotheses, np.linspace(0.5, 1.5, len(model.ensemble_.hypotheses))
    out = np.zeros((len(new),) + hs[0].predict(new).shape[1:])
    type(hs[0]).predict_sum(hs, coef, new, out)
    loop = np.zeros_like(out)
    Hypothesis.predict_sum(hs, coef, new, loop)
    np.testing.assert_array_equal(out, loop)


def test_compiled_sum_takes_the_nan_loop_only_in_blocks_with_nan():
    """Rows with NaN far apart: the blocks of the compiled sum that hold one route it,
    the others compare only; the sum is the loop's whatever the block."""
    X, s = _booster_data(0, n=3000)
    model = FunctionalGradientRegressor(StumpOracle(), n_estimators=10).fit(X, s)
    new = np.nan_to_num(X)
    new[[7, 1500, 2999], :] = np.nan
    hs = model.ensemble_.hypotheses
    coef = np.ones(len(hs))
    out, loop = np.zeros(len(new)), np.zeros(len(new))
    type(hs[0]).predict_sum(hs, coef, new, out)
    Hypothesis.predict_sum(hs, coef, new, loop)
    np.testing.assert_array_equal(out, loop)


# -- nothing changes without NaN ----------------------------------------------------------------
@pytest.mark.parametrize("name", BOOSTERS)
def test_a_fit_without_nan_is_untouched_by_a_column_of_nan(name):
    """On X without NaN every feature is scanned, and summed, by the loops that have no
    missing-value bin.  Appending a column all NaN (a NaN bin, nothing to split) leaves
    the fit bit for bit as it was: the same stumps (none with a learned side), the same
    coefficients and the same decisions, on rows with and without NaN."""
    make, target = BOOSTERS[name]
    X, s = _booster_data(1)
    X = np.nan_to_num(X)
    y = target(s)
    plain = make().fit(X, y)
    bound = StumpOracle().bind(X)
    assert not bound.missing.any() and bound.codes.max() < bound.n_bins.max()
    wide = make().fit(np.c_[X, np.full(len(X), np.nan)], y)
    assert [repr(h) for h in wide.ensemble_.hypotheses] == \
        [repr(h) for h in plain.ensemble_.hypotheses]
    assert all(h.default_left is None for h in _stumps(plain))
    np.testing.assert_array_equal(wide.ensemble_.round_delta, plain.ensemble_.round_delta)
    decide = "predict" if name == "regressor" else "decision_function"
    rows = np.random.default_rng(0).normal(size=(30, 4))
    rows[::3, ::2] = np.nan  # NaN where training had none: read as 0.0
    for Z in (X, rows):
        np.testing.assert_array_equal(getattr(wide, decide)(np.c_[Z, np.zeros(len(Z))]),
                                      getattr(plain, decide)(Z))


def test_sparse_x_with_nan_fits_as_dense():
    """A stored NaN of sparse X is missing, as in ``X.toarray()``: the same fit."""
    X, s = _booster_data(2)
    X[np.abs(np.nan_to_num(X, nan=1.0)) < 0.7] = 0.0
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=6)
    dense = clone(est).fit(X, s)
    for fmt in ("csr", "csc"):
        sparse = clone(est).fit(sp.csr_matrix(X).asformat(fmt), s)
        assert [repr(h) for h in sparse.ensemble_.hypotheses] == \
            [repr(h) for h in dense.ensemble_.hypotheses]
        np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_pandas_missing_values_fit_as_nan():
    """A DataFrame with NaN, and with pandas' nullable NA, fits the model of the same
    NumPy array with NaN, bit for bit; so does the cache."""
    X, s = _booster_data(3)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    nullable = frame.astype("Float64")
    nullable.iloc[:, 0] = nullable.iloc[:, 0].mask(np.isnan(X[:, 0]), pd.NA)
    assert nullable.iloc[:, 0].isna().sum() == np.isnan(X[:, 0]).sum()
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=4)
    expected = clone(est).fit(X, s).predict(X)
    assert est.__sklearn_tags__().input_tags.allow_nan
    for data in (frame, nullable):
        np.testing.assert_array_equal(clone(est).fit(data, s).predict(data), expected)
    cached = FunctionalGradientRegressor(CachedOracle(StumpOracle(), None), n_estimators=4)
    np.testing.assert_array_equal(cached.fit(X, s).predict(X), expected)


def test_learned_sides_survive_json_and_pickle():
    """``default_left`` is a stump's field: a model read back from JSON or a pickle
    routes NaN as the fitted one, bit for bit; a stump pickled before the field
    existed reads as a feature without NaN (a NaN goes where 0.0 goes)."""
    X, s = _booster_data(5)
    model = FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(X, s)
    assert any(h.default_left is not None for h in _stumps(model))
    for copy in (from_json(to_json(model)), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    old = SignStump(0, 0.5, 1, 2)
    del old.__dict__["default_left"]
    np.testing.assert_array_equal(old.predict([[np.nan, 1.0], [0.0, 1.0]]), [-1.0, -1.0])


# -- infinity is refused ------------------------------------------------------------------------
def test_infinity_is_refused_naming_x():
    X, s = _booster_data(4, n=60)
    bad = X.copy()
    bad[5, 3] = -np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        StumpOracle().bind(bad)
    booster = FunctionalGradientRegressor(StumpOracle(), n_estimators=2)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        booster.fit(bad, s)
    assert not hasattr(booster, "ensemble_")  # the failed fit left it as it was
    booster.fit(X, s)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        booster.predict(bad)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        booster.ensemble_.hypotheses[-1].predict(bad)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        booster.fit(sp.csr_matrix(np.nan_to_num(bad, nan=0.0, posinf=np.inf,
                                                neginf=-np.inf)), s)
    with pytest.raises(ValueError, match="X contains inf"):
        CachedOracle(StumpOracle(), None).bind(bad)
