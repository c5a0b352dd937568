"""The primal gap f(Aλ_t) − f̄ recorded by the booster (Telgarsky 2012, §4–6).

Geometric on weakly learnable (separable, Thm 21) and attainable (Thm 23) instances,
like 1/t on mixed ones (Thm 27), with the Wolfe search of the analysis (c1 = 1/3,
c2 = 1/2).  The gap is checked against the Bregman divergence between the dual
optimum and the dual iterate (the Key identity of the note, §1.4).
"""

import numpy as np
import pytest

from oracleboost.boosters import CoordinateBoostingClassifier
from oracleboost.datasets import (
    attainable_matrix,
    matrix_problem,
    mixed_matrix,
    schapire_matrix,
    separable_matrix,
)
from oracleboost.diagnostics import bregman_gap, optimal_risk
from oracleboost.optim.steps import WolfeStep
from oracleboost.oracles import MatrixOracle

WOLFE_2012 = WolfeStep(c1=1 / 3, c2=1 / 2)


def _fit(M, loss, n_rounds, step=WOLFE_2012):
    X, y, H = matrix_problem(M)
    return CoordinateBoostingClassifier(
        MatrixOracle(H), loss=loss, step=step, n_estimators=n_rounds
    ).fit(X, y)


def _lam(clf, n):
    lam = np.zeros(n)
    for h, c in zip(clf.estimators_, clf.coef_, strict=True):
        lam[h.j] += c * h.scale
    return lam


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_gap_is_geometric_when_separable(loss):
    M, core = separable_matrix(12, 6, random_state=0)
    assert not core.any()
    clf = _fit(M, loss, 300)
    assert clf.optimal_loss_ == pytest.approx(0.0, abs=1e-12)  # f̄ = 0 (Thm 11)
    gap = clf.history_["gap"]
    t = np.arange(len(gap))
    slope, _ = np.polyfit(t[50:], np.log(gap[50:]), 1)
    assert slope < -0.01
    # geometric: every 50 rounds the gap shrinks by a constant factor
    assert np.all(gap[100::50] / gap[50:-50:50][: len(gap[100::50])] < 0.6)


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_gap_is_geometric_when_attainable(loss):
    M, core = attainable_matrix(10, 4, random_state=1)
    assert core.all()
    clf = _fit(M, loss, 400)
    gap = clf.history_["gap"]
    assert np.all(gap > -1e-12)
    reached = np.argmax(gap < 1e-10 * clf.optimal_loss_)
    assert 0 < reached < 300, "the attainable gap must fall below 1e-10·f̄ quickly"
    ratios = gap[1:reached] / gap[: reached - 1]
    assert np.max(ratios) < 0.95  # linear convergence, a factor at least 0.95 per round


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_gap_is_like_one_over_t_when_mixed(loss):
    M, core = mixed_matrix(4, 5, 4, random_state=2)
    assert 0 < core.sum() < len(core)
    clf = _fit(M, loss, 3000)
    gap = clf.history_["gap"]
    t = np.arange(1, len(gap) + 1)
    tg = t * gap
    # t · gap_t levels off: neither geometric (→ 0) nor slower than 1/t (→ ∞)
    assert 0.5 < tg[2999] / tg[999] < 1.5
    assert gap[2999] / gap[999] > 0.2  # far from geometric decay over 2,000 rounds
    assert np.all(gap > 0)


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_recorded_gap_equals_the_bregman_divergence(loss):
    """f(Aλ_t) − f̄ = B_{f*}(ψ^f, ∇f(Aλ_t)) on Schapire's S (note §1.4)."""
    M = schapire_matrix()
    clf = _fit(M, loss, 40)
    opt = optimal_risk(M, loss)
    lam = _lam(clf, M.shape[1])
    bg = bregman_gap(M, lam, loss, opt)
    m = M.shape[0]
    assert clf.history_["gap"][-1] * m == pytest.approx(bg.bregman, rel=1e-6, abs=1e-12)
    assert clf.optimal_loss_ * m == pytest.approx(2 * np.log(2) if loss == "logistic" else 2)


def test_no_gap_for_infinite_classes_and_when_switched_off():
    from oracleboost.oracles import StumpOracle

    rng = np.random.RandomState(0)
    X = rng.randn(30, 2)
    y = (X[:, 0] > 0).astype(int)
    clf = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(X, y)
    assert clf.optimal_loss_ is None and "gap" not in clf.history_
    M = schapire_matrix()
    Xm, ym, H = matrix_problem(M)
    off = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=3, duality_gap=False)
    assert "gap" not in off.fit(Xm, ym).history_
