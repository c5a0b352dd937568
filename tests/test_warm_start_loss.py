"""A warm start that changes the loss continues from the margins, with the new loss's
weights from its first round on (the running weights belong to the loss that made them)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from oracleboost.boosters import CoordinateBoostingClassifier
from oracleboost.oracles import LinearOracle, StumpOracle


def _entropy(w: np.ndarray) -> float:
    w = w / w.sum()
    return float(-(w * np.log(w)).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_first_round_after_a_change_of_loss_uses_the_new_losss_weights(seed):
    X, y = make_classification(300, 8, random_state=seed)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=5, warm_start=True,
                                         random_state=seed).fit(X, y)
    margins = np.where(y == model.classes_[1], 1.0, -1.0) * model.decision_function(X)
    model.set_params(loss="logistic", n_estimators=7).fit(X, y)
    # the entropy a round records is that of the weights it used: round 6's are the
    # logistic loss's at the margins after round 5, w ∝ 1 / (1 + e^m), not AdaBoost's
    logistic, exponential = _entropy(1 / (1 + np.exp(margins))), _entropy(np.exp(-margins))
    assert abs(logistic - exponential) > 1e-3  # the test can tell them apart
    assert model.history_["entropy"][5] == pytest.approx(logistic, rel=1e-12)
    assert len(model.history_["loss"]) == 7


def test_the_optimum_and_gap_follow_the_loss_of_the_continued_fit():
    X, y = make_classification(200, 5, random_state=0)
    model = CoordinateBoostingClassifier(LinearOracle(), n_estimators=3, warm_start=True,
                                         random_state=0).fit(X, y)
    model.set_params(loss="logistic", n_estimators=6).fit(X, y)
    fresh = CoordinateBoostingClassifier(LinearOracle(), loss="logistic", n_estimators=1,
                                         random_state=0).fit(X, y)
    assert model.optimal_loss_ == fresh.optimal_loss_
    # the gap of a continued round: its loss less the logistic optimum
    np.testing.assert_allclose(model.history_["gap"][3:],
                               model.history_["loss"][3:] - fresh.optimal_loss_)


def test_the_same_loss_continues_bit_for_bit():
    X, y = make_classification(300, 8, random_state=0)
    one = CoordinateBoostingClassifier(StumpOracle(), loss="logistic", n_estimators=8,
                                       random_state=0).fit(X, y)
    two = CoordinateBoostingClassifier(StumpOracle(), loss="logistic", n_estimators=4,
                                       warm_start=True, random_state=0).fit(X, y)
    two.set_params(n_estimators=8).fit(X, y)
    for key in ("loss", "entropy", "edge", "step"):
        np.testing.assert_array_equal(one.history_[key], two.history_[key])


def test_functional_boosting_after_a_change_of_loss_makes_the_new_losss_gradient():
    """The squared loss's last pass makes the next round's −∇R[f] (a fused pass kept in
    the state); a warm start with another loss must make its own.  The reference is the
    same state without the fused parts: the round then makes the gradient itself."""
    import dataclasses
    import pickle

    from sklearn.datasets import make_regression

    from oracleboost.boosters import FunctionalGradientRegressor

    X, y = make_regression(400, 6, noise=5.0, random_state=0)
    # (a fixed init: the starting score is then the same for both losses)
    model = FunctionalGradientRegressor(StumpOracle(), loss="squared", init=0.0,
                                        n_estimators=4, warm_start=True,
                                        random_state=0).fit(X, y)
    assert model._state_.descent is not None  # the fused pass made it
    reference = pickle.loads(pickle.dumps(model))
    reference._state_ = dataclasses.replace(reference._state_, descent=None,
                                            descent_norms=None, shift=None)
    for m in (model, reference):
        m.set_params(loss="absolute", n_estimators=8).fit(X, y)
    for key in ("loss", "edge", "step", "grad_norm"):
        np.testing.assert_array_equal(model.history_[key], reference.history_[key], key)


def test_dual_acceleration_after_a_change_of_loss_steps_on_the_new_losss_dual():
    """The state's dual point q = ∇ψ(Zw) is the loss's; a warm start with another loss
    continues from the same Zw with the new loss's q (the reference: that q, made by
    the new fit's own problem)."""
    import dataclasses
    import pickle

    from oracleboost.boosters import AcceleratedMarginClassifier
    from oracleboost.oracles import LinearOracle

    X, y = make_classification(300, 6, random_state=0)
    model = AcceleratedMarginClassifier(LinearOracle(), loss="exponential", n_estimators=3,
                                        warm_start=True, random_state=0).fit(X, y)
    reference = pickle.loads(pickle.dumps(model))
    reference.set_params(loss="logistic", n_estimators=6)
    problem = reference._setup(X, y, None)
    reference._state_ = dataclasses.replace(reference._state_,
                                            dual=problem.dual(reference._state_.Zw))
    for m in (model, reference):
        m.set_params(loss="logistic", n_estimators=6).fit(X, y)
    for key in ("loss", "edge", "step", "margin"):
        np.testing.assert_array_equal(model.history_[key], reference.history_[key], key)


def test_a_change_of_loss_that_moves_the_starting_score_is_refused_by_name():
    from sklearn.datasets import make_regression

    from oracleboost.boosters import FunctionalGradientRegressor

    X, y = make_regression(200, 4, noise=5.0, random_state=0)
    model = FunctionalGradientRegressor(StumpOracle(), n_estimators=2, warm_start=True,
                                        random_state=0).fit(X, y)
    before = model.history_["loss"].copy()
    with pytest.raises(ValueError, match=r"the starting score \(that loss and init make"):
        model.set_params(loss="absolute", n_estimators=4).fit(X, y)
    np.testing.assert_array_equal(model.history_["loss"], before)  # left as it was
