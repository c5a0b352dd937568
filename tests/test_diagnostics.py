"""Diagnostics of boosting instances: γ by LP, the hard core, f̄ and ψ^f, the Bregman identity.

Numbers come from Telgarsky (2012) and the implementer's notes (§5.1 of the 2012 note,
§5 of the 2013 note).  The notes write matrices in Telgarsky's convention ``A = −y h``;
the library's margin matrix is ``M = −A``, and every hand instance below is converted.
"""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import xlogy

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
from oracleboost.losses import Exponential, Logistic, MarginLoss

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


# --------------------------------------------------------------------------------------
# Scale robustness, failures, memory, and losses plugged in through their dual methods
# --------------------------------------------------------------------------------------


def scale_instances():
    return [
        ("mixed", mixed_matrix(4, 5, 3, random_state=7)[0]),
        ("schapire", schapire_matrix()),
        ("separable", separable_matrix(12, 5, random_state=0)[0]),
    ]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name, M", scale_instances())
@pytest.mark.parametrize("scale", [1e20, 1e300, "per-column"])
def test_optimal_risk_and_hard_core_ignore_column_scales(loss, name, M, scale):
    # span(M) and the hard core do not change when a column is scaled (λ absorbs it)
    if scale == "per-column":
        scale = np.array([1e300, 1e-150, 1.0, 3e20, 1e-300][: M.shape[1]])
    Ms = M * scale
    base, scaled = optimal_risk(M, loss), optimal_risk(Ms, loss)
    assert scaled.risk == pytest.approx(base.risk, rel=1e-9, abs=1e-300)
    assert scaled.risk_sum == pytest.approx(base.risk_sum, rel=1e-9, abs=1e-300)
    np.testing.assert_array_equal(scaled.core, base.core)
    np.testing.assert_allclose(scaled.dual, base.dual, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled.margins, base.margins, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose((Ms @ scaled.weights)[base.core], base.margins[base.core],
                               rtol=1e-9, atol=1e-9)
    assert scaled.kkt_residual <= 1e-12
    hc, hcs = hard_core(M), hard_core(Ms)
    np.testing.assert_array_equal(hcs.core, hc.core)
    assert hcs.kind == hc.kind
    # the certificates hold for the rescaled matrix (M λ itself is scale-free)
    colmax = np.abs(Ms).max(axis=0)
    check_certificates(Ms / colmax, replace(hcs, certificate=hcs.certificate * colmax))
    z = Ms @ hcs.certificate
    assert np.all(z[~hcs.core] >= 1 - 1e-7) and np.all(np.abs(z[hcs.core]) <= 1e-7)
    assert -conjugate(loss, scaled.dual) == pytest.approx(scaled.risk_sum, rel=1e-9, abs=1e-12)


def test_zero_columns_are_dropped():
    M, core = mixed_matrix(4, 5, 3, random_state=2)
    Mz = np.insert(M, 1, 0.0, axis=1)
    hc = hard_core(Mz)
    np.testing.assert_array_equal(hc.core, core)
    assert hc.certificate[1] == 0.0
    check_certificates(Mz, hc)
    for loss in LOSSES:
        opt, optz = optimal_risk(M, loss), optimal_risk(Mz, loss)
        assert optz.risk_sum == pytest.approx(opt.risk_sum, rel=1e-12)
        assert optz.weights[1] == 0.0
    # all columns zero: every row is in the core and every margin is 0
    hc0 = hard_core(np.zeros((3, 2)))
    assert hc0.kind == "attainable" and hc0.size == 3
    np.testing.assert_allclose(hc0.witness, 1 / 3)
    opt0 = optimal_risk(np.zeros((3, 2)), "logistic")
    assert opt0.risk == pytest.approx(LN2) and np.all(opt0.margins == 0)


def test_diagnostics_error_is_a_runtime_error_and_exported():
    from oracleboost import diagnostics

    assert issubclass(diagnostics.DiagnosticsError, RuntimeError)
    assert "DiagnosticsError" in diagnostics.__all__
    assert "optimal_risk_cost" in diagnostics.__all__


class _FailedLP:
    status, message, x, fun = 4, "numerical trouble (simulated)", None, None


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda: hard_core(schapire_matrix()), "hard_core support LP"),
        (lambda: optimal_risk(schapire_matrix(), "logistic"), "hard_core support LP"),
        (lambda: max_margin(rudin_matrix()), "max_margin LP"),
        (lambda: weak_learning_rate(rudin_matrix()), "weak_learning_rate LP"),
    ],
)
def test_a_failed_lp_raises_diagnostics_error_naming_it(monkeypatch, call, what):
    from oracleboost import diagnostics

    monkeypatch.setattr(diagnostics, "linprog", lambda *a, **k: _FailedLP())
    with pytest.raises(diagnostics.DiagnosticsError, match=what):
        call()


def test_disagreeing_certificates_raise_diagnostics_error(monkeypatch):
    from oracleboost import diagnostics

    real = diagnostics.linprog

    def wrong_core(*args, **kwargs):  # claims the full core, certificate is the real one
        res = real(*args, **kwargs)
        m = res.x.shape[0] // 2
        res.x = np.concatenate([np.ones(m), res.x[m:]])
        return res

    monkeypatch.setattr(diagnostics, "linprog", wrong_core)
    with pytest.raises(diagnostics.DiagnosticsError, match="disagree"):
        hard_core(schapire_matrix())
    with pytest.raises(RuntimeError):  # the old contract still holds
        hard_core(schapire_matrix())


def test_no_quadratic_memory_in_the_number_of_rows():
    # 20000 rows: one m × m float64 array alone would take 3.2 GB
    import tracemalloc

    rng = np.random.default_rng(0)
    M = rng.choice([-1.0, 1.0], size=(20000, 4))
    tracemalloc.start()
    try:
        opt = optimal_risk(M, "logistic")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert opt.core.all() and opt.kkt_residual <= 1e-10
    assert peak < 64 * 2**20


def test_optimal_risk_cost_is_linear_and_far_below_quadratic():
    from oracleboost.diagnostics import optimal_risk_cost

    c1, c2 = optimal_risk_cost((100_000, 8)), optimal_risk_cost((200_000, 8))
    c0 = optimal_risk_cost((0, 8))
    assert c0 > 0 and c2 - c1 == pytest.approx(c1 - c0)  # linear in m
    assert optimal_risk_cost((1000, 16)) - optimal_risk_cost((1000, 8)) == pytest.approx(
        optimal_risk_cost((1000, 8)) - optimal_risk_cost((1000, 0))
    )  # linear in n
    assert c1 < 8 * 100_000**2 / 50  # an m × m float64 array is 80 GB; the estimate ≈ 1 GB
    assert c1 >= 2 * 100_000 * 8 * 8  # at least the LP's nonzeros as float64
    with pytest.raises(ValueError, match="non-negative"):
        optimal_risk_cost((-1, 3))


class _DoubledExponential(MarginLoss):
    """φ(m) = exp(−2m): ℓ(z) = e^{2z}, ℓ*(p) = (p/2) ln(p/2) − p/2 (not registered)."""

    def log_phi(self, m):
        return -2.0 * np.asarray(m, dtype=np.float64)

    def log_neg_dphi(self, m):
        return np.log(2.0) - 2.0 * np.asarray(m, dtype=np.float64)

    def d2phi(self, m):
        return 4.0 * np.exp(-2.0 * np.asarray(m, dtype=np.float64))

    def conjugate(self, psi, weight=1.0):
        p, w = np.broadcast_arrays(np.asarray(psi, float), np.asarray(weight, float))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xlogy(p / 2, p / (2 * w)) - p / 2
        ok = (p >= 0) & (w > 0)
        return np.where(ok, out, np.where((p == 0) & (w == 0), 0.0, np.inf))

    def init_raw(self, y, sample_weight=None):
        return 0.0


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_user_loss_with_dual_methods_is_accepted(seed):
    # inf_λ Σ e^{−2 (Mλ)_i} = inf_λ Σ e^{−(Mλ)_i}: same risk, dual doubled, margins halved
    M, _ = mixed_matrix(3, 5, 3, random_state=seed)
    loss = _DoubledExponential()
    opt, ref = optimal_risk(M, loss), optimal_risk(M, "exponential")
    assert opt.risk_sum == pytest.approx(ref.risk_sum, rel=1e-12)
    np.testing.assert_allclose(opt.dual, 2 * ref.dual, rtol=1e-10)
    np.testing.assert_allclose(opt.margins[opt.core], ref.margins[ref.core] / 2, atol=1e-10)
    assert -conjugate(loss, opt.dual) == pytest.approx(opt.risk_sum, rel=1e-12)
    lam = np.random.default_rng(seed).normal(size=M.shape[1])
    res = bregman_gap(M, lam, loss, opt)  # the generic Fenchel–Young Bregman term
    assert res.bregman == pytest.approx(res.gap, rel=1e-9, abs=1e-10)
    cert = dual_feasible_certificate(M, lam, loss)
    assert cert.gap_bound >= res.gap - 1e-10


def test_a_user_loss_without_dual_methods_is_rejected():
    from test_losses import _BareMargin  # a margin loss from log φ only

    with pytest.raises(ValueError, match="loss=.*d2phi and conjugate"):
        optimal_risk(schapire_matrix(), _BareMargin())
    with pytest.raises(ValueError, match="d2phi"):
        conjugate(_BareMargin(), [0.5])


def test_newton_failure_is_a_diagnostics_error():
    from oracleboost.diagnostics import DiagnosticsError

    class Flat(_DoubledExponential):
        def d2phi(self, m):  # a wrong curvature: the Newton system is singular
            return np.zeros_like(np.asarray(m, dtype=np.float64))

    with pytest.raises(DiagnosticsError, match="optimal_risk"):
        optimal_risk(np.array([[-1.0], [1.0], [1.0]]), Flat())
