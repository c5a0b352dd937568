"""Quantile, multiclass and pairwise ranking losses: gradients in the L2(P̂) convention,
subgradients at the kinks, known values, best constants, bad input."""

import math
import time

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from scipy.special import softmax

from oracleboost.losses import (
    LOSSES,
    STRUCTURED_LOSSES,
    Absolute,
    Loss,
    MulticlassHinge,
    MulticlassLoss,
    PairwiseHinge,
    Quantile,
    SoftmaxCrossEntropy,
    get_loss,
    pairwise_disagreement,
    register_loss,
    weighted_median,
    weighted_quantile,
)
from oracleboost.losses.multiclass import ZERO_PRIOR_LOG

EPS = 1e-6


def ip(a, b):
    """⟨a, b⟩_P̂ = (1/N) Σ_n a_n · b_n (rows of vector scores are dotted)."""
    return float(np.sum(np.asarray(a) * np.asarray(b))) / len(a)


def ranking_data(rng, sizes=(7, 1, 5, 9, 4, 6), levels=4):
    """Shuffled rows, non-contiguous query ids, a singleton query, graded relevance."""
    qid = np.repeat(np.array([30, 4, 17, 8, 99, 2])[: len(sizes)], sizes)
    y = rng.integers(0, levels, len(qid)).astype(float)
    perm = rng.permutation(len(qid))
    return y[perm], qid[perm]


def brute_pairs(y, groups):
    n = len(y)
    return [(i, j) for i in range(n) for j in range(n) if groups[i] == groups[j] and y[i] > y[j]]


def brute_hinge(y, f, groups, margin):
    """R and N·∂R/∂f_n from the definition, one pair at a time."""
    pairs = brute_pairs(y, groups)
    n = len(y)
    risk = sum(max(0.0, margin - (f[i] - f[j])) for i, j in pairs) / len(pairs)
    g = np.zeros(n)
    for i, j in pairs:
        if f[i] - f[j] < margin:
            g[i] -= 1.0
            g[j] += 1.0
    return risk, g * n / len(pairs)


# -- quantile ----------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_quantile_gradient_matches_finite_differences_away_from_the_kink(alpha):
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    raw = y + rng.choice([-1, 1], 200) * rng.uniform(0.01, 3.0, 200)  # |r| ≥ 0.01 ≫ EPS
    loss = Quantile(alpha)
    numeric = (loss.loss(y, raw + EPS) - loss.loss(y, raw - EPS)) / (2 * EPS)
    np.testing.assert_allclose(loss.gradient(y, raw), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_quantile_subgradient_inequality_including_r_zero(alpha):
    rng = np.random.default_rng(2)
    y = rng.normal(size=60)
    f = y.copy()
    f[::2] += rng.normal(size=30)  # half the examples sit exactly at r = 0
    loss = Quantile(alpha)
    grad = loss.gradient(y, f)
    for scale in (1e-3, 1.0, 5.0):
        for _ in range(30):
            g = f + scale * rng.normal(size=60)
            assert np.all(loss.loss(y, g) >= loss.loss(y, f) + grad * (g - f) - 1e-12)
            assert loss(y, g) >= loss(y, f) + ip(g - f, grad) - 1e-12


def test_quantile_kink_convention_matches_absolute():
    y = np.array([0.0, 1.5, -2.0])
    f = np.array([0.0, 1.5, 3.0])  # r = 0, 0, < 0
    np.testing.assert_array_equal(Quantile(0.3).gradient(y, f), [0.7, 0.7, 0.7])
    np.testing.assert_array_equal(Quantile(0.3).gradient(y, -f - 1.0)[2], -0.3)
    # Quantile(½) = ½ |f − y| with sign(0) = +1, kink included
    f = np.array([0.0, 2.0, -1.0])
    np.testing.assert_array_equal(Quantile(0.5).gradient(y, f), 0.5 * Absolute().gradient(y, f))
    np.testing.assert_allclose(Quantile(0.5).loss(y, f), 0.5 * Absolute().loss(y, f))


def test_quantile_loss_values():
    loss = Quantile(0.2)
    np.testing.assert_allclose(loss.loss(np.array([3.0, 0.0]), np.array([1.0, 2.0])), [0.4, 1.6])


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.5, 0.77])
def test_quantile_init_raw_is_the_best_constant(alpha):
    rng = np.random.default_rng(3)
    y = rng.normal(size=41) * 2
    w = rng.uniform(0.1, 2.0, 41)
    loss = Quantile(alpha)
    c = loss.init_raw(y, w)
    best = minimize_scalar(
        lambda v: loss(y, np.full(41, v), w),
        bounds=(-10, 10),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert loss(y, np.full(41, c), w) <= best.fun + 1e-12
    # and it is the lower weighted quantile by its definition
    order = np.argsort(y)
    cum = np.cumsum(w[order])
    assert c == y[order][np.argmax(cum >= alpha * cum[-1])]


def test_weighted_quantile_extends_weighted_median():
    rng = np.random.default_rng(4)
    y, w = rng.normal(size=30), rng.uniform(0, 1, 30)
    assert weighted_quantile(y, 0.5, w) == weighted_median(y, w)
    assert weighted_quantile(np.array([3.0, 1.0, 2.0]), 0.2) == 1.0
    assert weighted_quantile(np.array([3.0, 1.0, 2.0]), 0.9) == 3.0
    # a zero-weight point is never the quantile
    assert weighted_quantile(np.array([1.0, 2.0, 3.0]), 0.5, np.array([1.0, 0.0, 1.0])) == 1.0


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, np.nan, "a", None, True])
def test_quantile_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        Quantile(alpha)


# -- softmax cross-entropy -----------------------------------------------------------------


def test_softmax_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    n, K = 40, 5
    y = rng.integers(0, K, n)
    raw = rng.normal(size=(n, K)) * 2
    loss = SoftmaxCrossEntropy()
    grad = loss.gradient(y, raw)
    assert grad.shape == (n, K)
    for k in range(K):
        e = np.zeros((n, K))
        e[:, k] = EPS
        numeric = (loss.loss(y, raw + e) - loss.loss(y, raw - e)) / (2 * EPS)
        np.testing.assert_allclose(grad[:, k], numeric, rtol=1e-6, atol=1e-8)


def test_softmax_known_values_and_stability():
    loss = SoftmaxCrossEntropy()
    K = 7
    y = np.arange(14) % K
    np.testing.assert_allclose(loss.loss(y, np.zeros((14, K))), np.log(K), rtol=1e-15)
    assert loss(y, np.zeros((14, K))) == pytest.approx(np.log(K), rel=1e-15)
    big = np.array([[1e4, -1e4, 0.0], [1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow is benign
        val = loss.loss(np.array([0, 1, 2]), big)
        grad = loss.gradient(np.array([0, 1, 2]), big)
    np.testing.assert_allclose(val, [0.0, 2e4, np.log(3)], rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(grad[0], [0.0, 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(grad[1], [1.0, -1.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(grad[2], [1 / 3, 1 / 3, -2 / 3], rtol=1e-15)
    np.testing.assert_allclose(loss.inverse_link(big).sum(axis=1), 1.0, rtol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_softmax_probabilities_are_lightgbms_bit_for_bit(seed):
    """``inverse_link`` is LightGBM's ``Common::Softmax``: the row maximum, the C
    library's ``exp`` (``math.exp`` here), the sum in class order, a division, on every
    CPU (NumPy's own ``exp`` on AVX-512 rounds otherwise in about 5% of rows)."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=rng.choice([0.5, 5.0, 50.0]), size=(400, int(rng.integers(2, 9))))
    expected = np.empty_like(raw)
    for i, row in enumerate(raw):
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = 0.0
        for v in e:
            total += v
        expected[i] = [v / total for v in e]
    np.testing.assert_array_equal(SoftmaxCrossEntropy().inverse_link(raw), expected)


def test_softmax_subgradient_inequality_and_smoothness_half():
    """Convexity, and R[g] ≤ R[f] + ⟨g − f, ∇⟩ + (Λ/2)‖g − f‖² with Λ = ½ (tight-ish)."""
    rng = np.random.default_rng(6)
    n, K = 30, 4
    y = rng.integers(0, K, n)
    loss = SoftmaxCrossEntropy()
    assert loss.smoothness == 0.5
    worst = 0.0
    for _ in range(200):
        f = rng.normal(size=(n, K)) * 2
        g = f + rng.normal(size=(n, K)) * rng.choice([1e-2, 1.0, 4.0])
        lin = loss(y, f) + ip(g - f, loss.gradient(y, f))
        assert loss(y, g) >= lin - 1e-12
        quad = 0.5 * ip(g - f, g - f)
        assert loss(y, g) <= lin + loss.smoothness * quad + 1e-12
        worst = max(worst, (loss(y, g) - lin) / quad)
    # K = 2, f = 0, a small step along (1, −1): the curvature ratio approaches ½ from below
    y2 = np.zeros(1, dtype=int)
    d = np.array([[1.0, -1.0]]) * 1e-3
    lin = loss(y2, np.zeros((1, 2))) + ip(d, loss.gradient(y2, np.zeros((1, 2))))
    assert (loss(y2, d) - lin) / (0.5 * ip(d, d)) == pytest.approx(0.5, rel=1e-5)


def test_softmax_init_raw_is_the_best_constant():
    rng = np.random.default_rng(7)
    n, K = 60, 4
    y = rng.integers(0, K, n)
    w = rng.uniform(0.1, 2.0, n)
    loss = SoftmaxCrossEntropy()
    c = loss.init_raw(y, w)
    assert c.shape == (K,)
    prior = np.bincount(y, weights=w, minlength=K) / w.sum()
    np.testing.assert_allclose(softmax(c), prior, rtol=1e-14)

    def risk(v):
        return loss(y, np.broadcast_to(v, (n, K)), w)

    best = minimize(risk, np.zeros(K), method="BFGS", options={"gtol": 1e-10})
    assert risk(c) <= best.fun + 1e-12


def test_softmax_init_raw_with_a_zero_weight_class():
    y = np.array([0, 1, 1, 2, 2, 2])
    w = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])  # class 2 has no weight
    loss = SoftmaxCrossEntropy()
    c = loss.init_raw(y, w)
    assert np.all(np.isfinite(c))
    assert c[2] == ZERO_PRIOR_LOG == pytest.approx(np.log(np.finfo(float).eps))
    np.testing.assert_allclose(c[:2], np.log([1 / 3, 2 / 3]), rtol=1e-15)
    # the risk is the −∞ optimum's up to float64 resolution
    optimum = -(np.log(1 / 3) + 2 * np.log(2 / 3)) / 3
    assert loss(y, np.broadcast_to(c, (6, 3)), w) == pytest.approx(optimum, rel=1e-14)
    # K is read from y unless given; an absent trailing class also gets the finite floor
    assert loss.init_raw(y, w, n_classes=5).tolist()[3:] == [ZERO_PRIOR_LOG] * 2


# -- multiclass hinge ----------------------------------------------------------------------


@pytest.mark.parametrize("tie", ["first", "average"])
def test_multiclass_hinge_gradient_matches_finite_differences_away_from_kinks(tie):
    rng = np.random.default_rng(8)
    n, K = 300, 5
    y = rng.integers(0, K, n)
    raw = rng.normal(size=(n, K)) * 1.5
    loss = MulticlassHinge(tie)
    # away from kinks: the hinge argument and the top-two wrong scores are not within 1e-4
    rows = np.arange(n)
    wrong = raw.copy()
    wrong[rows, y] = -np.inf
    top2 = np.sort(wrong, axis=1)[:, -2:]
    arg = 1 + top2[:, 1] - raw[rows, y]
    keep = (np.abs(arg) > 1e-4) & (top2[:, 1] - top2[:, 0] > 1e-4)
    y, raw = y[keep], raw[keep]
    assert keep.sum() > 250 and (loss.loss(y, raw) == 0).any() and (loss.loss(y, raw) > 0).any()
    grad = loss.gradient(y, raw)
    for k in range(K):
        e = np.zeros(raw.shape)
        e[:, k] = EPS
        numeric = (loss.loss(y, raw + e) - loss.loss(y, raw - e)) / (2 * EPS)
        np.testing.assert_allclose(grad[:, k], numeric, rtol=1e-6, atol=1e-8)


def _kinky_scores(K):
    """Rows at f = 0 (all wrong classes tie), at an exact hinge kink, and with a tie above."""
    return np.array(
        [
            [0.0] * K,
            [1.0, 0.0] + [0.0] * (K - 2),  # y = 0: 1 + 0 − 1 = 0, exactly at the kink
            [0.5, 2.0, 2.0] + [-1.0] * (K - 3),  # y = 0: wrong classes 1 and 2 tie, active
            [3.0, 1.0, 2.0] + [2.0] * (K - 3),  # y = 0: ties at 2.0 and exactly at the kink
        ]
    ), np.array([1, 0, 0, 0])


@pytest.mark.parametrize("tie", ["first", "average"])
def test_multiclass_hinge_subgradient_inequality_at_kinks(tie):
    rng = np.random.default_rng(9)
    K = 4
    loss = MulticlassHinge(tie)
    kinks, y_k = _kinky_scores(K)
    f = np.vstack([np.zeros((20, K)), kinks, rng.integers(-1, 2, (20, K)).astype(float)])
    y = np.concatenate([rng.integers(0, K, 20), y_k, rng.integers(0, K, 20)])
    grad = loss.gradient(y, f)
    for scale in (1e-3, 0.1, 1.0, 3.0):
        for _ in range(50):
            g = f + scale * rng.normal(size=f.shape)
            assert loss(y, g) >= loss(y, f) + ip(g - f, grad) - 1e-12
            # pointwise too: each row's vector is a subgradient of that example's loss
            per = loss.loss(y, f) + np.sum((g - f) * grad, axis=1)
            assert np.all(loss.loss(y, g) >= per - 1e-12)


def test_multiclass_hinge_conventions_at_ties_and_kinks():
    K = 4
    f, y = _kinky_scores(K)
    first = MulticlassHinge("first").gradient(y, f)
    avg = MulticlassHinge("average").gradient(y, f)
    # f = 0, y = 1: first wrong class is 0; average spreads 1/3 over classes 0, 2, 3
    np.testing.assert_array_equal(first[0], [1.0, -1.0, 0.0, 0.0])
    np.testing.assert_allclose(avg[0], [1 / 3, -1.0, 1 / 3, 1 / 3], rtol=1e-15)
    # exactly at the hinge's kink: the zero subgradient
    np.testing.assert_array_equal(first[1], np.zeros(K))
    np.testing.assert_array_equal(avg[1], np.zeros(K))
    # tie between wrong classes 1 and 2 in the active region
    np.testing.assert_array_equal(first[2], [-1.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(avg[2], [-1.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(first[3], np.zeros(K))
    # every row sums to zero (e_k − e_y or a convex combination of them)
    np.testing.assert_allclose(avg.sum(axis=1), 0.0, atol=1e-15)


def test_multiclass_hinge_known_values():
    rng = np.random.default_rng(10)
    for K in (2, 3, 26):
        y = rng.integers(0, K, 50)
        for tie in ("first", "average"):
            loss = MulticlassHinge(tie)
            np.testing.assert_array_equal(loss.loss(y, np.zeros((50, K))), 1.0)
            assert loss(y, np.zeros((50, K))) == 1.0
            np.testing.assert_array_equal(loss.init_raw(y), np.zeros(K))
    f = np.array([[2.0, 0.5, 1.5], [0.0, 0.0, 3.0]])
    np.testing.assert_allclose(MulticlassHinge().loss([0, 1], f), [0.5, 4.0])


def test_multiclass_hinge_init_raw_is_f0_zero():
    y = np.array([0, 2, 2, 1])
    assert MulticlassHinge().init_raw(y).shape == (3,)
    assert MulticlassHinge().init_raw(y, n_classes=5).shape == (5,)


@pytest.mark.parametrize("tie", ["last", "random", None, "First"])
def test_multiclass_hinge_rejects_bad_tie(tie):
    with pytest.raises(ValueError, match="tie"):
        MulticlassHinge(tie=tie)


@pytest.mark.parametrize("loss", [SoftmaxCrossEntropy(), MulticlassHinge()])
def test_multiclass_losses_check_their_arguments(loss):
    with pytest.raises(ValueError, match="raw"):
        loss.loss(np.array([0, 1]), np.zeros(2))
    with pytest.raises(ValueError, match="class indices"):
        loss.gradient(np.array([0, 3]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="integer"):
        loss.loss(np.array([0.5, 1.0]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="rows"):
        loss.loss(np.array([0, 1, 1]), np.zeros((2, 3)))


# -- pairwise ranking hinge ----------------------------------------------------------------


@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_ranking_gradient_is_n_times_the_derivative_of_r(margin):
    """g_n = N · ∂R/∂f_n by central differences of the whole objective R, off the kinks."""
    rng = np.random.default_rng(11)
    y, qid = ranking_data(rng)
    n = len(y)
    loss = PairwiseHinge(margin)
    f = rng.normal(size=n) * 1.5
    for i, j in brute_pairs(y, qid):  # no pair within 1e-4 of the kink
        assert abs(f[i] - f[j] - margin) > 1e-4
    grad = loss.gradient(y, f, groups=qid)
    numeric = np.empty(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = EPS
        numeric[k] = n * (loss(y, f + e, groups=qid) - loss(y, f - e, groups=qid)) / (2 * EPS)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    assert np.any(grad != 0)


def test_ranking_matches_brute_force_on_every_query_shape():
    rng = np.random.default_rng(12)
    for _ in range(10):
        y, qid = ranking_data(rng, sizes=tuple(rng.integers(1, 12, 6)), levels=3)
        if not brute_pairs(y, qid):
            continue
        f = rng.integers(-2, 3, len(y)).astype(float) * 0.5  # ties and exact kinks
        for margin in (1.0, 0.5):
            loss = PairwiseHinge(margin)
            risk, grad = brute_hinge(y, f, qid, margin)
            assert loss(y, f, groups=qid) == pytest.approx(risk, rel=1e-14)
            np.testing.assert_allclose(loss.gradient(y, f, groups=qid), grad, rtol=1e-14)
        pairs = brute_pairs(y, qid)
        for ties, tau in (("count", 1.0), ("half", 0.5), ("ignore", 0.0)):
            want = sum((f[i] < f[j]) + tau * (f[i] == f[j]) for i, j in pairs) / len(pairs)
            assert pairwise_disagreement(y, f, qid, ties=ties) == pytest.approx(want, rel=1e-14)


def test_ranking_large_query_is_split_into_row_blocks(monkeypatch):
    import oracleboost.losses.ranking as ranking

    rng = np.random.default_rng(13)
    y, qid = ranking_data(rng, sizes=(40, 3, 25), levels=5)
    f = rng.normal(size=len(y))
    loss = PairwiseHinge()
    ref = (loss(y, f, groups=qid), loss.gradient(y, f, groups=qid))
    monkeypatch.setattr(ranking, "_BLOCK", 100)  # 40² and 25² exceed it
    assert loss(y, f, groups=qid) == pytest.approx(ref[0], rel=1e-14)
    np.testing.assert_allclose(loss.gradient(y, f, groups=qid), ref[1], rtol=1e-14)


def test_ranking_subgradient_inequality_at_ties_and_the_margin():
    rng = np.random.default_rng(14)
    y, qid = ranking_data(rng, levels=3)
    n = len(y)
    loss = PairwiseHinge()
    starts = [
        np.zeros(n),  # every pair tied
        rng.integers(-2, 3, n).astype(float),  # ties and pairs exactly at the margin 1
        rng.integers(0, 3, n) * 0.5,
    ]
    for f in starts:
        grad = loss.gradient(y, f, groups=qid)
        for scale in (1e-3, 0.1, 1.0, 4.0):
            for _ in range(30):
                g = f + scale * rng.normal(size=n)
                assert loss(y, g, groups=qid) >= loss(y, f, groups=qid) + ip(g - f, grad) - 1e-12


def test_ranking_kink_convention_pair_at_the_margin_is_satisfied():
    y = np.array([2.0, 1.0, 0.0])
    qid = np.zeros(3, dtype=int)
    loss = PairwiseHinge(margin=1.0)
    # pairs (0,1), (0,2), (1,2); f_0 − f_1 = 1 exactly, f_0 − f_2 = 2, f_1 − f_2 = 1 exactly
    np.testing.assert_array_equal(loss.gradient(y, np.array([2.0, 1.0, 0.0]), groups=qid), 0.0)
    # tied scores: every pair violated; N/|P| = 1; doc 0 better than 2 others, doc 2 worse
    np.testing.assert_array_equal(loss.gradient(y, np.zeros(3), groups=qid), [-2.0, 0.0, 2.0])


def test_ranking_known_values():
    rng = np.random.default_rng(15)
    y, qid = ranking_data(rng)
    zero = np.zeros(len(y))
    for margin in (1.0, 0.25, 3.0):
        assert PairwiseHinge(margin)(y, zero, groups=qid) == pytest.approx(margin, rel=1e-15)
    assert pairwise_disagreement(y, zero, qid, ties="count") == 1.0
    assert pairwise_disagreement(y, zero, qid, ties="half") == 0.5
    assert pairwise_disagreement(y, zero, qid, ties="ignore") == 0.0
    assert pairwise_disagreement(y, zero, qid) == 0.5  # default "half"
    # the relevance itself ranks perfectly; its negation violates every pair
    assert pairwise_disagreement(y, y, qid, ties="count") == 0.0
    assert pairwise_disagreement(y, -y, qid, ties="ignore") == 1.0
    assert PairwiseHinge()(y, 10 * y, groups=qid) == 0.0
    assert PairwiseHinge().init_raw(y) == 0.0


def test_ranking_is_fast_on_1000_queries_of_50_documents():
    rng = np.random.default_rng(16)
    qid = np.repeat(np.arange(1000), 50)
    y = rng.integers(0, 5, len(qid)).astype(float)
    f = rng.normal(size=len(qid))
    perm = rng.permutation(len(qid))
    qid, y, f = qid[perm], y[perm], f[perm]
    loss = PairwiseHinge()
    loss.gradient(y, f, groups=qid)  # warm-up
    t0 = time.perf_counter()
    loss.gradient(y, f, groups=qid)
    loss(y, f, np.ones(len(y)), groups=qid)
    pairwise_disagreement(y, f, qid)
    assert time.perf_counter() - t0 < 1.0


def test_ranking_bad_input_is_named():
    rng = np.random.default_rng(17)
    y, qid = ranking_data(rng)
    f = rng.normal(size=len(y))
    loss = PairwiseHinge()
    with pytest.raises(ValueError, match="groups"):
        loss.gradient(y, f)
    with pytest.raises(ValueError, match="groups"):
        loss(y, f)
    with pytest.raises(ValueError, match="groups"):
        loss(y, f, None, groups=qid[:-1])
    with pytest.raises(ValueError, match="groups"):
        loss.gradient(y, f, groups=qid[:, None])
    with pytest.raises(ValueError, match="groups"):
        pairwise_disagreement(y, f, None)
    with pytest.raises(ValueError, match="sample_weight"):
        loss(y, f, rng.uniform(0.5, 1.0, len(y)), groups=qid)
    assert loss(y, f, np.full(len(y), 3.0), groups=qid) == loss(y, f, groups=qid)
    with pytest.raises(ValueError, match="ties"):
        pairwise_disagreement(y, f, qid, ties="drop")
    with pytest.raises(ValueError, match="margin"):
        PairwiseHinge(margin=0.0)
    with pytest.raises(ValueError, match="margin"):
        PairwiseHinge(margin=np.inf)
    with pytest.raises(NotImplementedError, match="pointwise"):
        loss.loss(y, f)
    with pytest.raises(ValueError, match="no ranking pairs"):
        loss(np.ones(4), np.zeros(4), groups=np.arange(4) // 2)
    with pytest.raises(ValueError, match="raw"):
        loss.gradient(y, f[:-1], groups=qid)


# -- the subgradient check has teeth -------------------------------------------------------


def test_a_wrong_subgradient_fails_the_inequality():
    """The checks above would catch a wrong convention: outside the subdifferential,
    some nearby g violates R[g] ≥ R[f] + ⟨g − f, v⟩."""
    rng = np.random.default_rng(18)

    def violated(risk, f, v):
        return any(
            risk(g) < risk(f) + ip(g - f, v) - 1e-12
            for g in (f + 1e-3 * rng.normal(size=f.shape) for _ in range(200))
        )

    y = np.zeros(5)
    q = Quantile(0.3)
    assert not violated(lambda g: q(y, g), np.zeros(5), q.gradient(y, np.zeros(5)))
    assert violated(lambda g: q(y, g), np.zeros(5), np.full(5, 1.0))  # 1 ∉ [−0.3, 0.7]

    h, yc, f0 = MulticlassHinge(), np.array([0, 1, 2]), np.zeros((3, 3))
    assert violated(lambda g: h(yc, g), f0, -h.gradient(yc, f0))
    assert violated(lambda g: h(yc, g), f0, 2.0 * h.gradient(yc, f0))

    r, yr, qid = PairwiseHinge(), np.array([1.0, 0.0, 2.0]), np.zeros(3, dtype=int)
    v = r.gradient(yr, np.zeros(3), groups=qid)
    assert not violated(lambda g: r(yr, g, groups=qid), np.zeros(3), v)
    assert violated(lambda g: r(yr, g, groups=qid), np.zeros(3), v / 3)  # missing the factor N


# -- registry and the booster's calling convention ----------------------------------------


def test_registry_names_and_kinds():
    assert type(get_loss("quantile")) is Quantile
    assert type(get_loss("softmax")) is SoftmaxCrossEntropy
    assert type(get_loss("multiclass_hinge")) is MulticlassHinge
    assert type(get_loss("pairwise_hinge")) is PairwiseHinge
    assert "quantile" in LOSSES
    assert set(STRUCTURED_LOSSES) >= {"softmax", "multiclass_hinge", "pairwise_hinge"}
    assert not set(LOSSES) & set(STRUCTURED_LOSSES)
    assert all(c.pointwise and c.raw_ndim == 1 for c in LOSSES.values())
    assert get_loss("softmax", MulticlassLoss).raw_ndim == 2
    with pytest.raises(ValueError, match="loss=.*not a MulticlassLoss"):
        get_loss("pairwise_hinge", MulticlassLoss)
    with pytest.raises(ValueError, match="unknown loss 'softmax_cross_entropy'"):
        get_loss("softmax_cross_entropy")
    assert PairwiseHinge.context_keys == ("groups",) and not PairwiseHinge.pointwise
    assert Quantile(0.3) == Quantile(0.3) != Quantile(0.4)
    assert MulticlassHinge("average") != MulticlassHinge()


def test_register_loss_refuses_a_second_class_under_a_taken_name():
    class Fake(Loss):
        name = "softmax"

    with pytest.raises(ValueError, match="softmax"):
        register_loss(Fake)
    assert register_loss(SoftmaxCrossEntropy) is SoftmaxCrossEntropy  # idempotent
    with pytest.raises(TypeError):
        register_loss(object)


def test_booster_calling_convention():
    """``v = −loss.gradient(y, f, **ctx)`` and ``loss(y, f, s, **ctx)``."""
    rng = np.random.default_rng(19)
    s = np.ones(12)
    for loss, y, f in [
        (Quantile(0.2), rng.normal(size=12), rng.normal(size=12)),
        (SoftmaxCrossEntropy(), np.arange(12) % 3, rng.normal(size=(12, 3))),
        (MulticlassHinge(), np.arange(12) % 3, rng.normal(size=(12, 3))),
    ]:
        assert loss.gradient(y, f, **{}).shape == f.shape
        assert np.isfinite(loss(y, f, s, **{}))
        f0 = np.broadcast_to(np.asarray(loss.init_raw(y, s), dtype=float), f.shape)
        assert np.isfinite(loss(y, f0, s))
        with pytest.raises(TypeError):
            loss(y, f, s, groups=np.zeros(12))  # pointwise losses take no context
    y, qid = ranking_data(rng)
    ctx = {"groups": qid}
    f = rng.normal(size=len(y))
    loss = PairwiseHinge()
    assert loss.gradient(y, f, **ctx).shape == f.shape
    assert loss(y, f, np.ones(len(y)), **ctx) == loss(y, f, **ctx)
