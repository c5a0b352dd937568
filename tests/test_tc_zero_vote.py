"""Totally corrective boosting and the zero vote: the default ν, the tie-break among
optimal votes, the warning when the model is still the zero function, and an entropy
solve that falls short of its tight tolerance."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_hastie_10_2
from sklearn.model_selection import train_test_split

import oracleboost.boosters.totally_corrective.entropy_duals as entropy_duals
from oracleboost.boosters import TotallyCorrectiveClassifier
from oracleboost.boosters.totally_corrective.soft_margin_lp import SoftMarginLP
from oracleboost.engine.rounds import BoostingWarning
from oracleboost.oracles import StumpOracle

pytest.importorskip("highspy")


def _hastie(seed: int):
    """The grid's hastie_10_2 cell: 1,000 rows, a stratified 70/30 split by the seed."""
    X, y = make_hastie_10_2(n_samples=1000, random_state=0)
    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_default_nu_is_far_from_chance_on_rows_stumps_cannot_separate(seed):
    # nu=1 (the old default) ended with the zero vote here: decision 0, error 1/2
    X_tr, X_te, y_tr, y_te = _hastie(seed)
    model = TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), n_estimators=30,
                                        random_state=seed).fit(X_tr, y_tr)
    assert model.nu_ == len(y_tr) / 2
    assert 1 - model.score(X_te, y_te) < 0.35
    assert np.abs(model.decision_function(X_te)).max() > 0


def test_the_zero_vote_warns_and_has_no_importances():
    X_tr, _, y_tr, _ = _hastie(0)
    with pytest.warns(BoostingWarning, match="zero vote"):
        model = TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), nu=5, n_estimators=30,
                                            random_state=0).fit(X_tr, y_tr)
    assert np.all(model.decision_function(X_tr) == 0)
    assert np.all(model.feature_importances_ == 0)


def test_a_useful_model_does_not_warn():
    X_tr, _, y_tr, _ = _hastie(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoostingWarning)
        model = TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), n_estimators=30,
                                            random_state=0).fit(X_tr, y_tr)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_among_optimal_votes_the_lp_never_takes_the_zero_vote():
    # columns a, −a, b over 3 rows, hard margin: the value is 0 (row 3 has margin 0 in
    # every vote); the zero vote (a and −a in equal weights) and b are both optimal,
    # and HiGHS's own answer is the zero vote
    a, b = np.array([1.0, -1.0, 0.0]), np.array([1.0, 1.0, 0.0])
    lp = SoftMarginLP(np.ones(3), 1.0)
    for u in (a, -a, b):
        lp.add_column(u)
        solution = lp.solve()
    assert solution.value == 0
    # b's margins (1, 1, 0): hard margin 0, the optimum; the certificate's d is the dual's
    np.testing.assert_allclose(lp.margins(solution.w), [1.0, 1.0, 0.0], atol=1e-9)
    assert max(float(solution.d @ u) for u in (a, -a, b)) <= solution.value + 1e-9


def test_an_entropy_solve_short_of_its_tolerance_does_not_end_the_fit(monkeypatch):
    # Newton stopped after 2 steps and no polish: the solve certifies a gap of ~1e-5,
    # above the tight tolerance (1e-8) but far below ε/2; such a solve ended the fit
    # with solver_failed at round 2
    monkeypatch.setattr(entropy_duals, "_WARM_ITER", 2)
    monkeypatch.setattr(entropy_duals, "_POLISH_ITER", 0)
    X, y = make_hastie_10_2(300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoostingWarning)
        model = TotallyCorrectiveClassifier(method="erlpboost", nu=1, n_estimators=40,
                                            random_state=0).fit(X, y)
    assert str(model.stop_reason_) != "solver_failed"
    assert len(model.history_["loss"]) == 40
    gaps = model.history_["solver_gap"]
    assert np.nanmax(gaps) <= 1e-2 * model.tol_
    assert np.nanmax(gaps) > 1e-8  # the loose acceptance was exercised


def test_the_zero_vote_warning_points_at_the_callers_fit():
    X_tr, _, y_tr, _ = _hastie(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BoostingWarning)
        TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), nu=5, n_estimators=30,
                                    random_state=0).fit(X_tr, y_tr)  # this line
    (warning,) = [w for w in caught if issubclass(w.category, BoostingWarning)]
    assert "zero vote" in str(warning.message)
    assert warning.filename == __file__  # not scikit-learn's fit wrapper
