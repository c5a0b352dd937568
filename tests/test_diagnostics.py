"""Diagnostics of boosting instances: γ by LP, the hard core, f̄ and ψ^f, the Bregman identity.

Numbers come from Telgarsky (2012) and the implementer's notes (§5.1 of the 2012 note,
§5 of the 2013 note).  The notes write matrices in Telgarsky's convention ``A = −y h``;
the library's margin matrix is ``M = −A``, and every hand instance below is converted.
"""

import numpy as np
import pytest

from oracleboost.datasets import (
    attainable_matrix,
    matrix_problem,
    mixed_matrix,
    rudin_matrix,
    schapire_matrix,
    separable_matrix,
)
from oracleboost.diagnostics import (
    bregman_gap,
    conjugate,
    dual_feasible_certificate,
    hard_core,
    max_margin,
    optimal_risk,
    weak_learning_rate,
)
from oracleboost.losses import Exponential, Logistic

LOSSES = ["exponential", "logistic"]
LN2 = np.log(2.0)
SEEDS = range(6)

# Remark 39 of Telgarsky (2012), in his A convention.
A1 = np.array([[-1, 1, 0], [1, -1, 0], [-1, -1, 0], [0, 0, -1]], dtype=float)
A2 = np.array([[-1, 1, -1], [1, -1, -1], [-1, -1, -1]], dtype=float)


def g0(loss):
    """Telgarsky's g(0) and g'(0) for a margin loss: φ(0) and −φ'(0)."""
    return (1.0, 1.0) if loss == "exponential" else (LN2, 0.5)


def risk_sum(M, lam, loss):
    return float(np.sum((Exponential() if loss == "exponential" else Logistic()).phi(M @ lam)))


def generated(seed):
    """One instance of each kind, with the hard core built into it."""
    return [
        separable_matrix(12, 5, random_state=seed),
        attainable_matrix(9, 4, random_state=seed),
        mixed_matrix(5, 6, 4, random_state=seed),
    ]


# --------------------------------------------------------------------------------------
# γ: the two LPs
# --------------------------------------------------------------------------------------


def test_rudin_max_margin_is_three_eighths_by_both_lps():
    M = rudin_matrix()
    primal, dual = max_margin(M), weak_learning_rate(M)
    assert primal.gamma == pytest.approx(3 / 8, abs=1e-9)
    assert dual.gamma == pytest.approx(3 / 8, abs=1e-9)
    # the returned certificates achieve the reported values
    assert np.abs(primal.weights).sum() == pytest.approx(1.0, abs=1e-12)
    assert np.min(M @ primal.weights) == pytest.approx(primal.gamma, abs=1e-12)
    assert dual.distribution.min() >= 0 and dual.distribution.sum() == pytest.approx(1.0)
    assert np.max(np.abs(M.T @ dual.distribution)) == pytest.approx(3 / 8, abs=1e-9)


def test_rudin_matrix_note_optimum_attains_three_eighths():
    M = rudin_matrix()
    assert M.shape == (8, 8) and set(np.unique(M)) == {-1.0, 1.0}
    lam = np.array([2, 3, 4, 1, 2, 2, 1, 1]) / 16
    margins = M @ lam / np.abs(lam).sum()
    assert np.all(margins >= 3 / 8 - 1e-15)
    assert margins.min() == pytest.approx(3 / 8, abs=1e-15)


@pytest.mark.parametrize("seed", SEEDS)
def test_primal_and_dual_lp_agree_and_gamma_positive_iff_core_empty(seed):
    rng = np.random.default_rng(seed)
    instances = [M for M, _ in generated(seed)] + [rng.uniform(-1, 1, size=(7, 3))]
    for M in instances:
        primal, dual = max_margin(M), weak_learning_rate(M)
        assert primal.gamma == pytest.approx(dual.gamma, abs=1e-9)
        assert (primal.gamma > 1e-9) == (hard_core(M).size == 0)  # Prop 7


def test_single_all_right_column_has_gamma_one_and_empty_core():
    M = np.ones((5, 1))  # A = −1_{5×1}
    assert max_margin(M).gamma == pytest.approx(1.0, abs=1e-12)
    assert weak_learning_rate(M).gamma == pytest.approx(1.0, abs=1e-12)
    assert hard_core(M).kind == "separable"
    assert optimal_risk(M, "logistic").risk == 0.0


@pytest.mark.parametrize("m", [1, 2, 5])
def test_identity_has_gamma_one_over_m(m):
    M = np.eye(m)  # A = −I_m
    assert max_margin(M).gamma == pytest.approx(1 / m, abs=1e-12)
    assert weak_learning_rate(M).gamma == pytest.approx(1 / m, abs=1e-12)
    np.testing.assert_allclose(weak_learning_rate(M).distribution, np.full(m, 1 / m))
    assert hard_core(M).kind == "separable"


def test_non_separable_gamma_is_zero_not_negative():
    # Over the ℓ1 *sphere* the best margin of [[1], [−1]] is −1; over the ball (LP duality) 0.
    M = np.array([[1.0], [-1.0]])
    assert max_margin(M).gamma == pytest.approx(0.0, abs=1e-12)
    assert weak_learning_rate(M).gamma == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------------------
# Hard core
# --------------------------------------------------------------------------------------


def check_certificates(M, hc):
    m = M.shape[0]
    assert hc.dual_value + hc.primal_value == pytest.approx(m, abs=1e-7)
    assert hc.dual_value == pytest.approx(hc.size, abs=1e-7)
    w = hc.witness
    assert np.all(w >= 0) and np.all(w[~hc.core] == 0) and np.all(w[hc.core] > 1e-9)
    assert np.max(np.abs(M.T @ w)) <= 1e-9
    z = M @ hc.certificate
    assert np.all(z[~hc.core] >= 1 - 1e-7)
    assert np.max(np.abs(z[hc.core]), initial=0.0) <= 1e-7 * max(1.0, np.abs(z).max())


def test_schapire_hard_core_and_certificate():
    M = schapire_matrix()
    np.testing.assert_array_equal(M, -np.array([[-1, 1], [1, -1], [-1, -1]]))
    hc = hard_core(M)
    np.testing.assert_array_equal(hc.core, [True, True, False])
    assert hc.kind == "mixed"
    np.testing.assert_allclose(hc.witness, [0.5, 0.5, 0.0])
    lam = hc.certificate  # ∝ (1, 1): S_+ λ = 0 and row 3 < 0 (margin > 0)
    assert lam[0] == pytest.approx(lam[1]) and lam[0] > 0
    check_certificates(M, hc)


def test_remark_39_instances():
    hc1 = hard_core(-A1)
    np.testing.assert_array_equal(hc1.core, [True, True, False, False])
    check_certificates(-A1, hc1)
    hc2 = hard_core(-A2)
    assert hc2.kind == "separable"
    assert max_margin(-A2).gamma == pytest.approx(1.0, abs=1e-12)
    assert weak_learning_rate(-A2).gamma == pytest.approx(1.0, abs=1e-12)


def test_attainable_three_by_one_core_is_everything():
    hc = hard_core(np.array([[-1.0], [1.0], [1.0]]))  # A = [[1], [−1], [−1]]
    assert hc.kind == "attainable"
    np.testing.assert_allclose(hc.witness, [0.5, 0.25, 0.25])


@pytest.mark.parametrize("seed", SEEDS)
def test_zero_row_is_always_in_the_core(seed):
    M, _ = separable_matrix(6, 3, random_state=seed)
    Mz = np.insert(M, 2, 0.0, axis=0)
    hc = hard_core(Mz)
    np.testing.assert_array_equal(hc.core, np.arange(7) == 2)
    check_certificates(Mz, hc)
    for loss in LOSSES:
        g, dg = g0(loss)
        opt = optimal_risk(Mz, loss)
        assert opt.risk_sum == pytest.approx(g, abs=1e-12)  # the zero row contributes g(0)
        np.testing.assert_allclose(opt.dual, np.where(np.arange(7) == 2, dg, 0.0), atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_hard_cores_match_construction_and_certificates(seed):
    kinds = ["separable", "attainable", "mixed"]
    for (M, core), kind in zip(generated(seed), kinds, strict=True):
        assert np.max(np.abs(M)) == pytest.approx(1.0)
        hc = hard_core(M)
        np.testing.assert_array_equal(hc.core, core)
        assert hc.kind == kind
        check_certificates(M, hc)


@pytest.mark.parametrize("seed", SEEDS)
def test_row_permutation_and_column_negation_invariance(seed):
    rng = np.random.default_rng(seed)
    M, core = mixed_matrix(4, 5, 3, random_state=seed)
    perm = rng.permutation(M.shape[0])
    np.testing.assert_array_equal(hard_core(M[perm]).core, core[perm])
    flipped = M.copy()
    flipped[:, rng.integers(M.shape[1])] *= -1
    np.testing.assert_array_equal(hard_core(flipped).core, core)
    Ms, _ = separable_matrix(8, 4, random_state=seed)
    Msf = Ms.copy()
    Msf[:, 1] *= -1
    assert max_margin(Msf).gamma == pytest.approx(max_margin(Ms).gamma, abs=1e-9)
    assert weak_learning_rate(Msf).gamma == pytest.approx(weak_learning_rate(Ms).gamma, abs=1e-9)


# --------------------------------------------------------------------------------------
# Optimal risk and dual optimum
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "loss, f_bar, psi, lam",
    [
        ("exponential", 2 * np.sqrt(2), [np.sqrt(2), 1 / np.sqrt(2), 1 / np.sqrt(2)], LN2 / 2),
        ("logistic", np.log(27 / 4), [2 / 3, 1 / 3, 1 / 3], LN2),
    ],
)
def test_attainable_three_by_one_closed_forms(loss, f_bar, psi, lam):
    # Note §5.1.3: A = [[1], [−1], [−1]], i.e. margins M = −A; λ̄ is in A's sign.
    M = np.array([[-1.0], [1.0], [1.0]])
    opt = optimal_risk(M, loss)
    assert opt.risk_sum == pytest.approx(f_bar, abs=1e-10)
    assert opt.risk == pytest.approx(f_bar / 3, abs=1e-10)
    np.testing.assert_allclose(opt.dual, psi, rtol=0, atol=1e-10)
    np.testing.assert_allclose(opt.margins, [-lam, lam, lam], rtol=0, atol=1e-10)
    assert opt.weights[0] == pytest.approx(lam, abs=1e-10)
    assert opt.core.all()


@pytest.mark.parametrize("loss", LOSSES)
def test_schapire_optimum(loss):
    g, dg = g0(loss)
    opt = optimal_risk(schapire_matrix(), loss)
    assert opt.risk_sum == pytest.approx(2 * g, abs=1e-12)  # 2 (exp), 2 ln 2 (logistic)
    assert opt.risk == pytest.approx(2 * g / 3, abs=1e-12)
    np.testing.assert_allclose(opt.dual, [dg, dg, 0.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(opt.margins[:2], 0.0, atol=1e-12)
    assert opt.margins[2] == np.inf
    np.testing.assert_array_equal(opt.core, [True, True, False])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", SEEDS)
def test_optimum_kkt_and_limit_of_certified_sequence(loss, seed):
    for M, core in generated(seed)[1:]:
        opt = optimal_risk(M, loss)
        np.testing.assert_array_equal(opt.core, core)
        assert opt.kkt_residual <= 1e-12
        assert np.all(opt.dual[core] > 0) and np.all(opt.dual[~core] == 0)
        # f̄ is the limit along λ̄ + c λ_cert (Thm 17): rows off the core vanish
        cert = hard_core(M).certificate
        far = risk_sum(M, opt.weights + 40 * cert / max(1.0, np.abs(M @ cert).min()), loss)
        assert far == pytest.approx(opt.risk_sum, abs=1e-9)
        # and no λ does better
        rng = np.random.default_rng(seed)
        for lam in rng.normal(size=(20, M.shape[1])):
            assert risk_sum(M, opt.weights + 0.3 * lam, loss) >= opt.risk_sum - 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_exp_dual_optimum_is_max_entropy(seed):
    # Note §1.4: for exp, p* = ψ/||ψ||_1 maximises Shannon entropy on Δ ∩ Ker(M^T), and
    # f̄ = exp(H(p*)).
    M, _ = mixed_matrix(3, 5, 3, random_state=seed)
    opt = optimal_risk(M, "exponential")
    p = opt.dual[opt.core] / opt.dual.sum()
    assert opt.risk_sum == pytest.approx(np.exp(-np.sum(p * np.log(p))), rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_integer_sample_weights_equal_duplicated_rows(loss):
    M, _ = mixed_matrix(3, 4, 3, random_state=1)
    counts = np.array([1, 3, 2, 1, 2, 1, 4])
    weighted = optimal_risk(M, loss, sample_weight=counts)
    dup = optimal_risk(np.repeat(M, counts, axis=0), loss)
    assert weighted.risk == pytest.approx(dup.risk, abs=1e-12)
    assert weighted.risk_sum == pytest.approx(dup.risk_sum, abs=1e-12)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    np.testing.assert_allclose(weighted.dual, np.add.reduceat(dup.dual, starts), atol=1e-12)
    # a zero weight removes the row
    w = np.ones(M.shape[0])
    w[0] = 0.0
    dropped = optimal_risk(M, loss, sample_weight=w)
    assert dropped.risk_sum == pytest.approx(optimal_risk(M[1:], loss).risk_sum, abs=1e-12)
    assert np.isnan(dropped.margins[0]) and dropped.dual[0] == 0


def test_optimal_risk_rejects_unsupported_losses():
    with pytest.raises(ValueError, match="loss"):
        optimal_risk(schapire_matrix(), "squared")
    with pytest.raises(ValueError, match="loss"):
        optimal_risk(schapire_matrix(), "hinge")


# --------------------------------------------------------------------------------------
# Conjugates, the Bregman identity, strong duality
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [1e-3, 0.2, 0.5, 0.9, 1 - 1e-6])
def test_conjugate_is_fenchel_young_tight(p):
    # g*(p) = p z − g(z) at z = (g')^{-1}(p)
    z = np.log(p)
    assert conjugate("exponential", [p]) == pytest.approx(p * z - np.exp(z), abs=1e-14)
    z = np.log(p / (1 - p))
    assert conjugate("logistic", [p]) == pytest.approx(p * z - np.logaddexp(0, z), abs=1e-14)


def test_conjugate_domain_and_minimum():
    assert conjugate("exponential", [0.0, 0.0]) == 0.0
    assert conjugate("logistic", [0.0, 1.0]) == 0.0
    assert conjugate("exponential", [1.0]) == pytest.approx(-1.0)  # −g(0) at g'(0)
    assert conjugate("logistic", [0.5]) == pytest.approx(-LN2)
    assert conjugate("logistic", [1.5]) == np.inf
    assert conjugate("exponential", [-1e-9, 1.0]) == np.inf
    assert conjugate("exponential", [2.0, 1.0], sample_weight=[0.0, 1.0]) == np.inf
    assert conjugate("exponential", [0.0, 1.0], sample_weight=[0.0, 1.0]) == -1.0
    # perspective: s g*(p/s)
    assert conjugate("logistic", [1.5], sample_weight=[3.0]) == pytest.approx(3 * -LN2)


def mixed_instances():
    return [("schapire", schapire_matrix()), ("mixed", mixed_matrix(4, 5, 3, random_state=7)[0])]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name, M", mixed_instances())
def test_strong_duality_and_bregman_identity(loss, name, M):
    opt = optimal_risk(M, loss)
    assert -conjugate(loss, opt.dual) == pytest.approx(opt.risk_sum, abs=1e-12)  # Thm 4
    rng = np.random.default_rng(0)
    for scale in [0.0, 0.1, 1.0, 3.0]:
        lam = scale * rng.normal(size=M.shape[1])
        res = bregman_gap(M, lam, loss, opt)
        assert res.gap >= -1e-12
        assert res.bregman == pytest.approx(res.gap, abs=1e-10)
    # along the certified sequence the gap closes (both sides → 0)
    cert = hard_core(M).certificate
    res = bregman_gap(M, opt.weights + 30 * cert, loss, opt)
    assert abs(res.gap) < 1e-9 and abs(res.bregman) < 1e-9


@pytest.mark.parametrize("loss", LOSSES)
def test_bregman_identity_with_sample_weights(loss):
    M, _ = mixed_matrix(3, 4, 3, random_state=3)
    w = np.array([0.5, 2.0, 1.0, 3.0, 0.25, 1.5, 0.75])
    opt = optimal_risk(M, loss, sample_weight=w)
    assert -conjugate(loss, opt.dual, w) == pytest.approx(opt.risk_sum, abs=1e-12)
    lam = np.random.default_rng(1).normal(size=3)
    res = bregman_gap(M, lam, loss, opt, sample_weight=w)
    assert res.total_weight == pytest.approx(w.sum())
    assert res.bregman == pytest.approx(res.gap, abs=1e-10)


@pytest.mark.parametrize("B", [0.5, 2.0, 10.0])
def test_schapire_l1_ball_gap_closed_form(B):
    # Telgarsky (2012, G.6): inf_{||λ||_1 ≤ B} f(Sλ) − f̄_S = ln(1 + e^{−B}) at (B/2, B/2).
    res = bregman_gap(schapire_matrix(), [B / 2, B / 2], "logistic")
    assert res.gap == pytest.approx(np.log1p(np.exp(-B)), abs=1e-12)
    assert res.bregman == pytest.approx(np.log1p(np.exp(-B)), abs=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", SEEDS)
def test_dual_feasible_certificate_bounds_the_gap(loss, seed):
    for M, _ in generated(seed):
        opt = optimal_risk(M, loss)
        rng = np.random.default_rng(seed)
        for lam in [np.zeros(M.shape[1]), rng.normal(size=M.shape[1])]:
            cert = dual_feasible_certificate(M, lam, loss)
            assert np.all(cert.dual >= 0) and np.max(np.abs(M.T @ cert.dual)) <= 1e-10
            if loss == "logistic":
                assert np.all(cert.dual <= 1.0)
            gap = bregman_gap(M, lam, loss, opt).gap
            assert cert.gap_bound >= gap - 1e-10
    # attainable case: the certificate closes as λ → λ̄
    M, _ = attainable_matrix(8, 3, random_state=seed)
    opt = optimal_risk(M, loss)
    near = dual_feasible_certificate(M, opt.weights + 1e-6, loss)
    assert 0 <= near.gap_bound < 1e-9


# --------------------------------------------------------------------------------------
# Datasets
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("M", [rudin_matrix(), schapire_matrix(), -A1, np.ones((1, 2))])
def test_matrix_problem_invariant(M):
    X, y, H = matrix_problem(M)
    np.testing.assert_array_equal(y[:, None] * H, M)
    np.testing.assert_array_equal(X[:, 0], np.arange(M.shape[0]))
    assert X.shape == (M.shape[0], 1) and set(np.unique(y)) <= {-1.0, 1.0}
    if M.shape[0] >= 2:
        assert set(np.unique(y)) == {-1.0, 1.0}


def test_matrix_problem_drives_the_coordinate_booster():
    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import MatrixOracle

    M = rudin_matrix()
    X, y, H = matrix_problem(M)
    clf = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=40).fit(X, y)
    lam = np.zeros(M.shape[1])
    for h, c in zip(clf.ensemble_.hypotheses, clf.ensemble_.coef, strict=True):
        lam[h.j] += c * h.scale
    np.testing.assert_allclose(y * clf.decision_function(X), M @ lam, atol=1e-12)
    # no weighting beats the LP's maximum margin
    assert np.all(clf.history_["margin"] <= max_margin(M).gamma + 1e-12)


@pytest.mark.parametrize("gen, args", [
    (separable_matrix, (6, 3)), (attainable_matrix, (6, 3)), (mixed_matrix, (3, 3, 3)),
])
def test_generators_are_seeded(gen, args):
    a, b, c = gen(*args, random_state=4), gen(*args, random_state=4), gen(*args, random_state=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    assert np.all(np.abs(a[0]) <= 1.0)
    with pytest.raises(ValueError, match="n"):
        gen(*args[:-1], 0, random_state=0)
