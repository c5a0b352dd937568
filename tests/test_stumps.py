"""Tests of StumpOracle against brute force over every stump."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone

from oracleboost.oracles.base import Capabilities
from oracleboost.oracles.stumps import (
    ConstantHypothesis,
    LabelCodeStump,
    RegressionStump,
    SignStump,
    StumpOracle,
    VectorStump,
    label_codes,
)
from oracleboost.oracles.trees import ZERO_THRESHOLD

TOL = 1e-12
SEEDS = range(8)


# -- data and brute force -------------------------------------------------------------
def make_X(rng: np.random.Generator, n: int = 30, d: int = 3) -> np.ndarray:
    """Features with repeated values (and a column with few levels)."""
    X = rng.integers(0, 6, size=(n, d)).astype(float) * 0.7 - 1.0
    X[:, -1] = rng.integers(0, 3, size=n)
    return X


def splits(X: np.ndarray):
    """Every (feature, left mask) of a split between consecutive distinct values."""
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for v in values[:-1]:
            yield j, X[:, j] <= v


def brute_sign_edge(X: np.ndarray, r: np.ndarray) -> float:
    best = max(r.sum(), -r.sum())
    for _, left in splits(X):
        h = np.where(left, -1.0, 1.0)
        best = max(best, r @ h, r @ -h)
    return best


def wsse(t: np.ndarray, w: np.ndarray, out: np.ndarray) -> float:
    t2, o2 = t.reshape(len(t), -1), out.reshape(len(t), -1)
    return float(np.sum(w[:, None] * (t2 - o2) ** 2))


def brute_project_sse(X: np.ndarray, t: np.ndarray, w: np.ndarray) -> float:
    t2 = t.reshape(len(t), -1)
    mean = (w @ t2) / w.sum()
    best = wsse(t2, w, np.tile(mean, (len(t), 1)))
    for _, left in splits(X):
        wl, wr = w[left].sum(), w[~left].sum()
        if wl == 0 or wr == 0:
            continue
        a, b = (w[left] @ t2[left]) / wl, (w[~left] @ t2[~left]) / wr
        best = min(best, wsse(t2, w, np.where(left[:, None], a, b)))
    return best


def codes_matrix(K: int) -> np.ndarray:
    C = np.full((K, K), -1.0 / (K - 1))
    np.fill_diagonal(C, 1.0)
    return C


def brute_code_edge(X: np.ndarray, r: np.ndarray) -> float:
    K = r.shape[1]
    C = codes_matrix(K)
    best = max(float(np.sum(r * C[k])) for k in range(K))
    for _, left in splits(X):
        for kl in range(K):
            for kr in range(K):
                h = np.where(left[:, None], C[kl], C[kr])
                best = max(best, float(np.sum(r * h)))
    return best


def weights(rng: np.random.Generator, n: int, zeros: bool) -> np.ndarray:
    w = rng.uniform(0.1, 3.0, size=n)
    if zeros:
        w[rng.random(n) < 0.4] = 0.0
        w[0] = 1.0  # keep the total positive
    return w


# -- correlate, ±1 stumps ---------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_correlate_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X = make_X(rng)
    r = rng.normal(size=len(X))
    bound = StumpOracle().bind(X)
    h = bound.correlate(r)
    assert isinstance(h, (SignStump, ConstantHypothesis))
    assert abs(r @ h.train_output - brute_sign_edge(X, r)) <= TOL
    assert set(np.unique(h.train_output)) <= {-1.0, 1.0}
    np.testing.assert_array_equal(h.train_output, h.predict(X))


@settings(max_examples=50, deadline=None)
@given(
    X=arrays(
        np.float64,
        st.tuples(st.integers(1, 20), st.integers(1, 3)),
        elements=st.sampled_from([-2.0, -0.5, -0.0, 0.0, 1.0, 3.25, 1e6]),
    ),
    data=st.data(),
)
def test_correlate_brute_force_property(X, data):
    r = data.draw(arrays(np.float64, len(X), elements=st.floats(-10, 10, allow_subnormal=False)))
    h = StumpOracle().bind(X).correlate(r)
    assert abs(r @ h.train_output - brute_sign_edge(X, r)) <= TOL
    np.testing.assert_array_equal(h.train_output, h.predict(X))


@settings(max_examples=50, deadline=None)
@given(
    X=arrays(
        np.float64,
        st.tuples(st.integers(1, 15), st.integers(1, 3)),
        elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
    ),
    data=st.data(),
)
def test_project_brute_force_property(X, data):
    n = len(X)
    t = data.draw(arrays(np.float64, n, elements=st.floats(-10, 10, allow_subnormal=False)))
    w = data.draw(arrays(np.float64, n, elements=st.sampled_from([0.0, 0.25, 1.0, 3.0])))
    if not np.any(w > 0):
        w[0] = 1.0
    h = StumpOracle().bind(X).project(t, sample_weight=w)
    assert abs(wsse(t, w, h.train_output) - brute_project_sse(X, t, w)) <= TOL
    np.testing.assert_array_equal(h.train_output, h.predict(X))


def first_best_sign_stump(X: np.ndarray, r: np.ndarray) -> tuple:
    """The documented tie rule, by enumeration: constants (+1, −1), then features in
    order, thresholds left to right, s = +1 before s = −1; the first maximum wins."""
    best, answer = r.sum(), ("constant", 1)
    if -r.sum() > best:
        best, answer = -r.sum(), ("constant", -1)
    for j in range(X.shape[1]):
        for t, v in enumerate(np.unique(X[:, j])[:-1]):
            e = r @ np.where(X[:, j] <= v, -1.0, 1.0)
            for s in (1, -1):
                if s * e > best:
                    best, answer = s * e, (j, t, s)
    return answer


@settings(max_examples=80, deadline=None)
@given(
    X=arrays(
        np.float64,
        st.tuples(st.integers(2, 40), st.integers(1, 6)),
        elements=st.sampled_from([-3.0, -1.0, 0.0, 0.5, 2.0, 7.0]),
    ),
    data=st.data(),
    n_jobs=st.sampled_from([1, 3]),
)
def test_kernel_follows_the_tie_rule_like_exact_mode(X, data, n_jobs):
    # Integer queries make every candidate's score exact, so ties are real ties and the
    # answer is decided by the tie rule alone: binned (the kernels, on threads or not),
    # exact mode and the enumeration must name the same stump.
    r = data.draw(arrays(np.float64, len(X), elements=st.integers(-3, 3).map(float)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("oracleboost.oracles.stumps._MIN_CELLS", 1)  # threads even when tiny
        binned = StumpOracle(n_jobs=n_jobs).bind(X).correlate(r)
    exact = StumpOracle(exact=True).bind(X).correlate(r)
    assert repr(binned) == repr(exact)
    np.testing.assert_array_equal(binned.train_output, exact.train_output)
    want = first_best_sign_stump(X, r)
    if want[0] == "constant":
        assert isinstance(binned, ConstantHypothesis) and binned.scale == want[1]
    else:
        j, t, s = want
        assert isinstance(binned, SignStump)
        assert (binned.feature, binned.sign) == (j, s)
        values = np.unique(X[:, j])
        assert values[t] <= binned.threshold < values[t + 1]


def test_sign_stump_key_and_scale():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    r = np.where(X[:, 1] > 0.1, 1.0, -1.0) * rng.uniform(0.5, 1.0, size=40)
    bound = StumpOracle().bind(X)
    h_pos, h_neg = bound.correlate(r), bound.correlate(-r)
    assert isinstance(h_pos, SignStump) and isinstance(h_neg, SignStump)
    assert h_pos.feature == 1
    assert h_pos.key == h_neg.key == ("stump", 1, h_pos.threshold)
    assert (h_pos.scale, h_neg.scale) == (1.0, -1.0)
    canonical = np.where(X[:, 1] > h_pos.threshold, 1.0, -1.0)
    np.testing.assert_array_equal(h_pos.train_output, h_pos.scale * canonical)
    np.testing.assert_array_equal(h_neg.train_output, h_neg.scale * canonical)


def test_tie_rule():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    bound = StumpOracle().bind(X)
    # Everything ties at 0: the constant +1 comes first.
    h = bound.correlate(np.zeros(4))
    assert isinstance(h, ConstantHypothesis)
    assert (h.key, h.scale, h.value) == (("constant",), 1.0, 1.0)
    # Only the constant -1 reaches n.
    h = bound.correlate(-np.ones(4))
    assert (h.key, h.scale) == (("constant",), -1.0)
    np.testing.assert_array_equal(h.train_output, -np.ones(4))
    # Three thresholds of both (identical) features tie at 2 with s = +1:
    # feature 0 and its leftmost threshold win.
    h = bound.correlate(np.array([-1.0, 0.0, 0.0, 1.0]))
    assert isinstance(h, SignStump)
    assert (h.feature, h.threshold, h.sign) == (0, 0.5, 1)
    # s = -1 is chosen when it is strictly better.
    h = bound.correlate(np.array([1.0, 0.0, 0.0, -1.0]))
    assert (h.feature, h.threshold, h.sign) == (0, 0.5, -1)


def test_constant_feature_gives_constants_only():
    X = np.full((5, 2), 7.0)
    bound = StumpOracle().bind(X)
    assert [t.size for t in bound.thresholds] == [0, 0]
    h = bound.correlate(np.array([1.0, -3.0, 0.5, 0.0, 0.2]))
    assert isinstance(h, ConstantHypothesis) and h.scale == -1.0
    h = bound.project(np.arange(5.0))
    assert isinstance(h, ConstantHypothesis) and h.value == 2.0


# -- project, regression stumps -----------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighting", ["none", "positive", "zeros"])
def test_project_matches_brute_force(seed, weighting):
    rng = np.random.default_rng(seed)
    X = make_X(rng)
    t = rng.normal(size=len(X)) + X[:, 0]
    w = None if weighting == "none" else weights(rng, len(X), weighting == "zeros")
    h = StumpOracle().bind(X).project(t, sample_weight=w)
    assert isinstance(h, (RegressionStump, ConstantHypothesis))
    assert h.key is None
    w_ = np.ones(len(X)) if w is None else w
    assert abs(wsse(t, w_, h.train_output) - brute_project_sse(X, t, w_)) <= TOL
    np.testing.assert_array_equal(h.train_output, h.predict(X))


def test_project_skips_zero_weight_sides():
    X = np.arange(6.0)[:, None]
    t = np.array([100.0, -100.0, 1.0, 2.0, 3.0, 4.0])
    w = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    h = StumpOracle().bind(X).project(t, sample_weight=w)
    assert isinstance(h, RegressionStump)
    # Best split of the weighted targets 1, 2, 3, 4 is {1, 2} | {3, 4} (SSE 1); the
    # zero-weight rows x = 0, 1 must not make a leaf of their own (that split would
    # divide by zero weight).
    assert (h.threshold, h.left, h.right) == (3.5, 1.5, 3.5)
    assert np.all(np.isfinite(h.train_output))


# -- multiclass ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("K", [2, 3, 4])
def test_label_code_correlate_matches_brute_force(seed, K):
    rng = np.random.default_rng(seed)
    X = make_X(rng, n=20)
    r = rng.normal(size=(len(X), K))
    h = StumpOracle().bind(X).correlate(r)
    assert isinstance(h, (LabelCodeStump, ConstantHypothesis))
    assert h.key is None
    assert h.train_output.shape == (len(X), K)
    C = codes_matrix(K)
    assert all(any(np.array_equal(row, c) for c in C) for row in h.train_output)
    assert abs(np.sum(r * h.train_output) - brute_code_edge(X, r)) <= TOL
    np.testing.assert_array_equal(h.train_output, h.predict(X))


def test_label_codes():
    np.testing.assert_array_equal(
        label_codes(3), [[1.0, -0.5, -0.5], [-0.5, 1.0, -0.5], [-0.5, -0.5, 1.0]]
    )
    with pytest.raises(ValueError, match="n_classes"):
        label_codes(1)


def test_label_code_tie_gives_first_constant():
    X = np.arange(4.0)[:, None]
    h = StumpOracle().bind(X).correlate(np.zeros((4, 3)))
    assert isinstance(h, ConstantHypothesis)
    np.testing.assert_array_equal(h.value, [1.0, -0.5, -0.5])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighting", ["none", "zeros"])
def test_vector_project_matches_brute_force(seed, weighting):
    rng = np.random.default_rng(seed)
    X = make_X(rng)
    t = rng.normal(size=(len(X), 3))
    w = None if weighting == "none" else weights(rng, len(X), True)
    h = StumpOracle().bind(X).project(t, sample_weight=w)
    assert isinstance(h, (VectorStump, ConstantHypothesis))
    w_ = np.ones(len(X)) if w is None else w
    assert h.train_output.shape == t.shape
    assert abs(wsse(t, w_, h.train_output) - brute_project_sse(X, t, w_)) <= TOL
    np.testing.assert_array_equal(h.train_output, h.predict(X))


# -- binned versus exact -----------------------------------------------------------------
def _answers(bound, rng, n):
    r = rng.normal(size=n)
    w = weights(rng, n, True)
    R = rng.normal(size=(n, 3))
    return [
        bound.correlate(r),
        bound.project(r),
        bound.project(r, sample_weight=w),
        bound.correlate(R),
        bound.project(R, sample_weight=w),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_binned_equals_exact_with_few_distinct_values(seed):
    rng = np.random.default_rng(seed)
    n = 600
    X = np.column_stack(
        [
            rng.integers(0, 200, n) * 0.37,
            np.resize(np.arange(255.0), n),  # exactly max_bins distinct values
            rng.integers(0, 4, n),
        ]
    )
    binned, exact = StumpOracle().bind(X), StumpOracle(exact=True).bind(X)
    for tb, te in zip(binned.thresholds, exact.thresholds, strict=True):
        np.testing.assert_array_equal(tb, te)
    X_new = rng.uniform(-5, 260, size=(50, 3))
    for hb, he in zip(
        _answers(binned, np.random.default_rng(seed), n),
        _answers(exact, np.random.default_rng(seed), n),
        strict=True,
    ):
        assert repr(hb) == repr(he)
        np.testing.assert_array_equal(hb.train_output, he.train_output)
        np.testing.assert_array_equal(hb.predict(X_new), he.predict(X_new))


def test_many_distinct_values_are_binned():
    rng = np.random.default_rng(0)
    n = 2000
    X = np.column_stack([rng.normal(size=n), rng.exponential(size=n)])
    bound = StumpOracle().bind(X)
    assert bound.codes.dtype == np.uint8
    for j in range(X.shape[1]):
        thr = bound.thresholds[j]
        assert thr.size == 254  # 255 quantile bins
        assert np.all(np.diff(thr) > 0)
        # Equal-count bins: every bin holds floor(n/255) or ceil(n/255) rows.
        counts = np.bincount(bound.codes[:, j], minlength=255)
        assert counts.min() == n // 255 and counts.max() == -(-n // 255)
        # Each threshold is the midpoint of the data values around it.
        col = np.sort(X[:, j])
        k = np.searchsorted(col, thr, side="right")
        np.testing.assert_array_equal(thr, 0.5 * col[k - 1] + 0.5 * col[k])

    exact = StumpOracle(exact=True).bind(X)
    assert exact.thresholds[0].size == n - 1
    r = np.sign(X[:, 0] - 0.123) + rng.normal(size=n)
    hb, he = bound.correlate(r), exact.correlate(r)
    np.testing.assert_array_equal(hb.train_output, hb.predict(X))
    assert r @ hb.train_output <= r @ he.train_output + TOL
    assert abs(r @ he.train_output - brute_sign_edge(X, r)) <= 1e-9
    # The binned answer is the best stump over its own thresholds.
    best = max(r.sum(), -r.sum())
    for j in range(2):
        for theta in bound.thresholds[j]:
            e = r @ np.where(X[:, j] <= theta, -1.0, 1.0)
            best = max(best, e, -e)
    assert abs(r @ hb.train_output - best) <= 1e-9
    pb, pe = bound.project(r), exact.project(r)
    w1 = np.ones(n)
    assert wsse(r, w1, pe.train_output) <= wsse(r, w1, pb.train_output) + TOL


def test_small_max_bins_and_heavy_ties():
    rng = np.random.default_rng(1)
    n = 1000
    heavy = np.where(rng.random(n) < 0.9, 0.0, rng.normal(size=n))  # 90% at one value
    X = np.column_stack([rng.normal(size=n), heavy])
    bound = StumpOracle(max_bins=4).bind(X)
    assert bound.thresholds[0].size == 3
    np.testing.assert_array_equal(np.bincount(bound.codes[:, 0]), [250, 250, 250, 250])
    assert 1 <= bound.thresholds[1].size <= 3
    many = StumpOracle().bind(X)
    assert 1 <= many.thresholds[1].size <= 254
    h = many.correlate(rng.normal(size=n))
    np.testing.assert_array_equal(h.train_output, h.predict(X))


# -- thresholds and prediction ---------------------------------------------------------------
def leaves(h) -> tuple[np.ndarray, np.ndarray]:
    """Left and right outputs of a stump, read from its public attributes."""
    if isinstance(h, SignStump):
        return np.float64(-h.sign), np.float64(h.sign)
    if isinstance(h, LabelCodeStump):
        C = codes_matrix(h.n_classes)
        return C[h.left_class], C[h.right_class]
    return np.asarray(h.left), np.asarray(h.right)


def test_predict_follows_threshold_rule():
    rng = np.random.default_rng(5)
    X = make_X(rng, n=60)
    bound = StumpOracle().bind(X)
    r = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    hyps = [
        bound.correlate(r),
        bound.project(r + X[:, 1]),
        bound.correlate(np.column_stack([r, -r, 0.3 * r])),
        bound.project(np.column_stack([r, X[:, 2]])),
    ]
    assert [type(h) for h in hyps] == [SignStump, RegressionStump, LabelCodeStump, VectorStump]
    for h in hyps:
        X_new = rng.uniform(-2, 4, size=(200, 3))
        X_new[:7, h.feature] = h.threshold  # exactly on the threshold goes left
        X_new[7:10, h.feature] = np.nextafter(h.threshold, np.inf)
        left, right = leaves(h)
        assert not np.array_equal(left, right)
        goes_left = X_new[:, h.feature] <= h.threshold
        expected = np.array([left if g else right for g in goes_left])
        out = h.predict(X_new)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(out[:7], np.array([left] * 7))
        np.testing.assert_array_equal(out[7:10], np.array([right] * 3))
    h = hyps[0]
    X_new = rng.uniform(-2, 4, size=(50, 3))
    np.testing.assert_array_equal(
        h.predict(X_new), np.where(X_new[:, h.feature] > h.threshold, h.sign, -h.sign)
    )


def test_adjacent_and_extreme_values():
    # a has an odd last mantissa bit, so the rounded midpoint of (a, b) is b: the
    # threshold must fall back to a, or b would go left.
    a = np.nextafter(1.0, 2.0)
    b = np.nextafter(a, 2.0)
    assert 0.5 * a + 0.5 * b == b
    X = np.array([[a, -1.7e308], [b, 1.7e308], [a, 1.7e308]])
    bound = StumpOracle().bind(X)
    # the midpoint of ±1.7e308 is 0.0, moved to LightGBM's threshold 1e-35f (see below)
    assert bound.thresholds[0][0] == a and bound.thresholds[1][0] == ZERO_THRESHOLD
    for r, feature in (([1.0, -1.0, 1.0], 0), ([-1.0, 1.0, -1.0], 0), ([-1.0, 1.0, 1.0], 1)):
        h = bound.correlate(np.array(r))
        assert isinstance(h, SignStump) and h.feature == feature
        np.testing.assert_array_equal(h.train_output, r)
        np.testing.assert_array_equal(h.predict(X), r)


@pytest.mark.parametrize("seed", range(2))
def test_pickle_round_trip(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2000, 4))
    bound = StumpOracle().bind(X)
    r = np.sign(X[:, 2]) + 0.1 * rng.normal(size=len(X))
    R = np.column_stack([r, -r, X[:, 1]])
    X_new = rng.normal(size=(30, 4))
    for h in [
        bound.correlate(r),
        bound.project(r),
        bound.correlate(R),
        bound.project(R),
        bound.correlate(np.zeros(len(X))),
    ]:
        blob = pickle.dumps(h.detach())
        assert len(blob) < 1000  # feature, threshold and leaf values only
        h2 = pickle.loads(blob)
        assert type(h2) is type(h) and repr(h2) == repr(h)
        assert (h2.key, h2.scale) == (h.key, h.scale)
        np.testing.assert_array_equal(h2.predict(X_new), h.predict(X_new))
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(h)).train_output, h.train_output)


def test_reprs():
    assert repr(SignStump(1, 0.5, -1, 3)) == "SignStump(feature=1, threshold=0.5, sign=-1)"
    assert repr(RegressionStump(0, 2.0, 1.5, -3.0, 3)) == (
        "RegressionStump(feature=0, threshold=2.0, left=1.5, right=-3.0)"
    )
    assert "left_class=2" in repr(LabelCodeStump(0, 1.0, 2, 0, 3, 3))
    assert repr(VectorStump(2, 0.25, [1.0, 2.0], [0.5, -1.0], 3)) == (
        "VectorStump(feature=2, threshold=0.25, left=[1, 2], right=[0.5, -1])"
    )
    assert repr(ConstantHypothesis(-1.0, 2)) == "ConstantHypothesis(value=-1.0)"


# -- estimator conventions and bad input ----------------------------------------------------
def test_sklearn_conventions_and_capabilities():
    oracle = StumpOracle(max_bins=16, exact=True)
    assert oracle.get_params() == {"max_bins": 16, "exact": True, "n_jobs": None,
                                   "block_size": 1 << 16, "bin_sample": 200_000,
                                   "histogram_refresh": 32, "monotone_constraints": None,
                                   "device": "cpu"}
    assert clone(oracle).get_params() == oracle.get_params()
    assert oracle.capabilities == Capabilities(
        correlate=True,
        project=True,
        multiclass_correlate=True,
        multiclass_project=True,
        bounded=True,  # correlate answers ±1 stumps and label codes, all in [−1, 1]
        sparse_input=True,  # binned from a sparse X's structure (tests/test_sparse.py)
        allow_nan=True,  # a missing-value bin (tests/test_stump_missing.py)
        feature_subsets=True,  # features= (tests/test_stochastic_boosting.py)
    )
    assert not oracle.capabilities.stochastic
    assert StumpOracle(max_bins=1000).max_bins == 1000  # constructor only stores


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_X_rejected(bad):
    """NaN is a missing value (tests/test_stump_missing.py); ±inf is refused."""
    X = np.ones((5, 2))
    X[2, 1] = bad
    with pytest.raises(ValueError, match="infinity"):
        StumpOracle().bind(X)


@pytest.mark.parametrize("max_bins", [1000, 1, 256, 2.5, True, "255"])
def test_bad_max_bins(max_bins):
    with pytest.raises(ValueError, match="max_bins"):
        StumpOracle(max_bins=max_bins).bind(np.ones((3, 1)))


def test_bad_exact():
    with pytest.raises(ValueError, match="exact"):
        StumpOracle(exact="yes").bind(np.ones((3, 1)))


def test_bad_queries():
    rng = np.random.default_rng(0)
    X = make_X(rng, n=10)
    bound = StumpOracle().bind(X)
    with pytest.raises(ValueError, match=r"\br\b"):
        bound.correlate(np.ones(9))
    with pytest.raises(ValueError, match=r"\br\b"):
        bound.correlate(np.full(10, np.nan))
    with pytest.raises(ValueError, match=r"\br\b.*K >= 2"):
        bound.correlate(np.ones((10, 1)))
    h = bound.project(np.arange(10.0)[:, None])  # a one-column vector target is fine
    assert h.train_output.shape == (10, 1)
    with pytest.raises(ValueError, match="target"):
        bound.project(np.ones(11))
    w = np.ones(10)
    w[3] = -0.5
    with pytest.raises(ValueError, match="sample_weight"):
        bound.project(np.ones(10), sample_weight=w)
    h = bound.correlate(rng.normal(size=10))
    with pytest.raises(ValueError, match="features"):
        h.predict(np.ones((4, 5)))
    with pytest.raises(ValueError, match="infinity"):  # NaN is a missing value; inf is not
        h.predict(np.full((4, 3), np.inf))


# -- numerics -------------------------------------------------------------------------------
@pytest.mark.parametrize("n_jobs", [2, 3, -1])
def test_threads_give_the_same_answers(monkeypatch, n_jobs):
    import oracleboost.oracles.stumps as stumps

    rng = np.random.default_rng(11)
    X = make_X(rng, n=30, d=5)
    r, R = rng.normal(size=30), rng.normal(size=(30, 3))
    w = weights(rng, 30, True)
    whole = StumpOracle(n_jobs=1).bind(X)
    expected = [whole.correlate(r), whole.project(r, w), whole.correlate(R), whole.project(R, w)]
    monkeypatch.setattr(stumps, "_MIN_CELLS", 1)  # threads even for 30 rows
    monkeypatch.setattr(stumps, "_threads", lambda n_jobs: 3 if n_jobs == -1 else n_jobs)
    threaded = StumpOracle(n_jobs=n_jobs).bind(X)
    got = [threaded.correlate(r), threaded.project(r, w), threaded.correlate(R),
           threaded.project(R, w)]
    for g, e in zip(got, expected, strict=True):
        assert repr(g) == repr(e)
        np.testing.assert_array_equal(g.train_output, e.train_output)


@pytest.mark.parametrize("block_size", [1, 7, 13, 30])
def test_row_blocks_sum_in_block_order_whatever_the_threads(monkeypatch, block_size):
    """The histogram of a query is each block's histogram in row order, added in block
    order (DESIGN's reproducibility promise): the same bits on 1, 2 and 3 threads, and
    the bits of that sum written out by hand."""
    import oracleboost.oracles.stumps as stumps
    from oracleboost.oracles import _stump_kernels as kernels

    rng = np.random.default_rng(5)
    n, d = 30, 5
    X = make_X(rng, n=n, d=d)
    # values of many magnitudes, so that another order of the sums changes the bits
    r = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
    monkeypatch.setattr(stumps, "_MIN_CELLS", 1)  # threads even for 30 rows
    got = []
    for n_jobs in (1, 2, 3):
        bound = StumpOracle(n_jobs=n_jobs, block_size=block_size).bind(X)
        hist = np.empty((d, bound._B))
        bound._histograms(kernels.hist_1d, (r,), (hist,))
        got.append((hist, bound.correlate(r), bound.project(r)))
    from oracleboost.rows.blocks import BLOCKS_PER_PARTITION as G

    parts = []
    for a in range(0, n, block_size):
        part = np.zeros((d, bound._B))
        for i in range(a, min(a + block_size, n)):
            for j in range(d):
                part[j, bound.codes[i, j]] += r[i]
        parts.append(part)
    # blocks left to right within a partition of G blocks, then the partitions
    partitions = [sum(parts[g + 1:g + G], parts[g].copy()) for g in range(0, len(parts), G)]
    by_hand = partitions[0]
    for p_sum in partitions[1:]:
        by_hand = by_hand + p_sum
    for hist, h_corr, h_proj in got:
        np.testing.assert_array_equal(hist, by_hand)
        assert repr(h_corr) == repr(got[0][1]) and repr(h_proj) == repr(got[0][2])


def test_thread_count_follows_lightgbm(monkeypatch):
    from oracleboost.oracles.stumps import _threads

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _threads(None) == 3 and _threads(2) == 2
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert _threads(None) == _threads(-1) >= 1
    assert _threads(-2) == max(1, _threads(-1) - 1)


@pytest.mark.parametrize("n_jobs", [0, 1.5, True, "2"])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(ValueError, match="n_jobs"):
        StumpOracle(n_jobs=n_jobs).bind(np.ones((3, 1)))


def test_right_sums_do_not_cancel():
    # total - left would lose the right leaf to cancellation against 1e17.
    X = np.arange(3.0)[:, None]
    h = StumpOracle().bind(X).project(np.array([1e17, 3.0, 5.0]))
    assert isinstance(h, RegressionStump)
    assert (h.threshold, h.left, h.right) == (0.5, 1e17, 4.0)


@pytest.mark.parametrize("seed", range(10))
def test_dominant_answer_is_the_constant(seed):
    # Every split is worse than (or, for equal leaves, the same function as) the
    # constant; rounding between the constant's and the bins' sums must not pick a
    # split, nor a padded threshold of a feature with fewer bins.
    rng = np.random.default_rng(seed)
    n = 997
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 50, n), rng.normal(size=n)])
    bound = StumpOracle(max_bins=100).bind(X)
    assert len({t.size for t in bound.thresholds}) == 3
    h = bound.correlate(rng.uniform(0.1, 1.0, n))
    assert isinstance(h, ConstantHypothesis) and (h.key, h.scale) == (("constant",), 1.0)
    h = bound.correlate(-rng.uniform(0.1, 1.0, n))
    assert isinstance(h, ConstantHypothesis) and h.scale == -1.0
    R = rng.normal(scale=0.01, size=(n, 3))
    R[:, 2] += rng.uniform(1.0, 2.0, n)
    h = bound.correlate(R)
    assert isinstance(h, ConstantHypothesis)
    np.testing.assert_array_equal(h.value, [-0.5, -0.5, 1.0])


# -- the histogram kernel ---------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 7, 8, 9, 23, 64, 1001])
@pytest.mark.parametrize("offset", [0, 1, 5])
@pytest.mark.parametrize("d", [1, 4, 6])
def test_the_histogram_kernel_adds_in_row_order_as_bincount(n, offset, d):
    # hist_1d and hist_weighted read a feature's codes eight at a time as one word, from
    # any byte (the last block's features start unaligned), and the rows past a multiple
    # of 8 one by one; each bin is still the sum of its rows in row order: np.bincount's
    # bits.
    from oracleboost.oracles._stump_kernels import hist_1d, hist_weighted

    rng = np.random.default_rng(n * 100 + offset * 10 + d)
    flat = rng.integers(0, 256, size=offset + d * n, dtype=np.uint8)
    codes = flat[offset:].reshape(d, n)
    v = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
    hist = np.full((d, 256), np.nan)
    hist_1d(codes, v, hist)
    w, t = rng.exponential(size=n), rng.normal(size=(n, 1))
    hist_w, hist_s = np.full((d, 256), np.nan), np.full((d, 256, 1), np.nan)
    hist_weighted(codes, w, t, hist_w, hist_s)
    for j in range(d):
        np.testing.assert_array_equal(hist[j], np.bincount(codes[j], weights=v, minlength=256))
        np.testing.assert_array_equal(hist_w[j], np.bincount(codes[j], weights=w, minlength=256))
        np.testing.assert_array_equal(hist_s[j, :, 0],
                                      np.bincount(codes[j], weights=w * t[:, 0], minlength=256))


@pytest.mark.parametrize("seed", range(3))
def test_codes_are_searchsorted_in_every_layout(seed):
    """The bound codes are ``np.searchsorted(thresholds, x, side="left")`` (NaN: the bin
    after the finite ones) whatever X's layout, the number of thresholds (the kernel's
    fixed search of 255, and exact mode's wider one), the row blocks and the threads."""
    rng = np.random.default_rng(seed)
    n = 1500 + seed * 77
    X = np.column_stack([
        rng.normal(size=n),                       # 254 quantile thresholds
        rng.integers(0, 2, size=n).astype(float),  # one
        np.round(rng.normal(size=n), 1),           # tens, with ties
        np.full(n, 3.25),                          # none
        rng.exponential(size=n) * 1e300,           # near the largest floats
        rng.normal(size=n),                        # with NaN and -0.0 below
        rng.normal(size=n) * 1e-310,               # subnormal
        rng.normal(size=n), rng.normal(size=n),    # a second run of eight features
    ])
    X[rng.random(n) < 0.1, 5] = np.nan
    X[:3, 5] = [-0.0, 0.0, -0.0]
    X[3, 2] = 0.0
    X[4:6, 4] = np.finfo(float).max  # above every threshold, below the padding

    def expected(bound):
        want = np.empty(X.shape, dtype=np.int64)
        for j, thr in enumerate(bound.thresholds):
            want[:, j] = np.searchsorted(thr, X[:, j], side="left")
            want[np.isnan(X[:, j]), j] = thr.size + 1
        return want

    read_only = X.copy()
    read_only.flags.writeable = False
    first = None
    for layout in (X, np.asfortranarray(X), np.hstack([X, X])[:, :X.shape[1]], read_only):
        for oracle in (StumpOracle(block_size=256, n_jobs=2), StumpOracle(n_jobs=1),
                       StumpOracle(exact=True, block_size=300, n_jobs=2)):
            bound = oracle.bind(layout)
            np.testing.assert_array_equal(bound.codes, expected(bound))
            np.testing.assert_array_equal(bound.missing, [j == 5 for j in range(9)])
            if not oracle.exact:
                first = bound.codes if first is None else first
                np.testing.assert_array_equal(bound.codes, first)
    assert max(t.size for t in StumpOracle(exact=True).bind(X).thresholds) > 255


@pytest.mark.parametrize("seed", range(3))
def test_thresholds_stay_off_lightgbms_zero(seed):
    """A threshold never falls within [-1e-35f, 1e-35f), where LightGBM reads every value
    as 0, unless the gap between two training values lies there: a feature coded ±1
    splits at 1e-35f (0.0 stays left), one whose gap's midpoint is a tiny negative
    splits just below -1e-35f (0.0 stays right), and the training codes are those of
    the midpoints."""
    rng = np.random.default_rng(seed)
    tiny = np.array([-1e-36, 1e-36, 0.0])
    X = np.column_stack([
        rng.choice([-1.0, 1.0], 200),
        rng.choice([-4e-35, 2e-35], 200),  # the midpoint -1e-35: just below -1e-35f
        rng.choice(tiny, 200),  # a gap within: kept
        rng.choice([-3.0, 2.0 + seed], 200),
    ])
    bound = StumpOracle().bind(X)
    z = ZERO_THRESHOLD
    below = np.nextafter(-z, -np.inf)
    for j, t in enumerate(bound.thresholds):
        values = np.unique(X[:, j])
        assert t.size == values.size - 1
        assert np.all((values[:-1] <= t) & (t < values[1:]))  # splits the same rows
        mid = 0.5 * values[:-1] + 0.5 * values[1:]
        gap_within = (values[:-1] >= -z) & (values[1:] <= z)
        np.testing.assert_array_equal(t[gap_within], mid[gap_within])
        outside = ~gap_within
        assert not np.any((t[outside] >= -z) & (t[outside] < z))
        # 0.0 keeps the side of the midpoint
        np.testing.assert_array_equal((0.0 <= t)[outside], (0.0 <= mid)[outside])
        assert set(t[outside & ((mid >= -z) & (mid < z))]) <= {z, below}
