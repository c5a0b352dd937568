"""A newcomer's booster, defined here and nowhere else: a totally corrective toy that
re-solves every coefficient by least squares each round.  It fits, predicts, stages,
warm-starts and passes the whole booster contract (``test_booster_contract.CONTRACT``)
with no edit outside this file: what the house offers a booster author is enough.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from sklearn.base import RegressorMixin
from test_booster_contract import CONTRACT, Case, _regression

from oracleboost.boosters import (
    BaseBooster,
    Problem,
    Refit,
    RoundResult,
    StopReason,
    draw_seed,
    seed_generator,
)
from oracleboost.engine.base import ScoreRegressorMixin, data_signature, validate_input
from oracleboost.oracles import StumpOracle

# -- the toy: 30 lines of booster ----------------------------------------------------------


@dataclass(frozen=True)
class _State:
    columns: tuple  # the training outputs of the ensemble's hypotheses, in its order
    f: np.ndarray
    rng: object


@dataclass
class _Problem(Problem):
    y: np.ndarray  # centred: the intercept is the mean
    mean: float
    bound: object


class LeastSquaresRefit(ScoreRegressorMixin, RegressorMixin, BaseBooster):
    """Each round: project the residual, then refit every coefficient by least squares."""

    _default_query = "project"

    def __init__(self, oracle=None, n_estimators=30, learning_rate=1.0, random_state=None,
                 verbose=0, warm_start=False, n_iter_no_change=None,
                 validation_fraction=0.1, tol=1e-4):
        self.oracle, self.n_estimators, self.learning_rate = oracle, n_estimators, learning_rate
        self.random_state, self.verbose, self.warm_start = random_state, verbose, warm_start
        self.n_iter_no_change, self.validation_fraction, self.tol = (
            n_iter_no_change, validation_fraction, tol)

    def fit(self, X, y):
        return self._fit_rounds(X, y, None)

    def _setup(self, X, y, _):
        X, y = validate_input(self, X, y, y_numeric=True)
        return _Problem(data_signature(X, y), y - y.mean(), y.mean(), self._bind(X, "project"))

    def _history_keys(self, p):
        return ("loss", "edge", "step", "margin", "time")

    def _initial_state(self, p):
        return _State((), np.zeros_like(p.y), seed_generator(self.random_state)), p.mean

    def _round(self, p, state, model, t, budget):
        r = p.y - state.f
        h = p.bound.project(r, random_state=draw_seed(state.rng))
        out = h.train_output
        if not np.any(out) or model.index_of(h) is not None:
            return RoundResult(state, stop=StopReason.ZERO_EDGE)  # no new column
        H = np.column_stack([*state.columns, out])
        coef = np.linalg.lstsq(H, p.y, rcond=None)[0]
        f = H @ coef
        record = {"loss": 0.5 * float(np.mean((p.y - f) ** 2)), "step": float(coef[-1]),
                  "edge": float(out @ r / np.sqrt((out @ out) * (r @ r))), "margin": np.nan}
        refit = Refit(coef, ((h.detach(), float(np.abs(out).max())),))
        return RoundResult(_State((*state.columns, out), f, state.rng), records=(record,),
                           refit=refit)


# -- what it can do ------------------------------------------------------------------------

# (30 rounds for the warm start: every round refits every column it holds, so the
# contract's 100 took a minute; the continuation starts at round 15)
TOY = Case(lambda o, **kw: LeastSquaresRefit(o, **kw), _regression, classifier=False,
           warm_rounds=30)


@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__[6:])
def test_the_toy_passes_the_booster_contract(check):
    check(TOY)


def test_the_toy_fits_predicts_stages_and_warm_starts():
    X, y, _ = _regression()
    model = LeastSquaresRefit(StumpOracle(), n_estimators=25, random_state=0).fit(X, y)
    assert model.n_estimators_ == 25 and model.stop_reason_ is StopReason.MAX_ROUNDS
    # totally corrective: the training loss never rises (each refit includes the last)
    assert np.all(np.diff(model.history_["loss"]) <= 1e-12 * model.history_["loss"][0])
    # the model is the least-squares fit on every column it holds, refitted each round
    pred = model.predict(X)
    np.testing.assert_allclose(pred - y.mean(), model._state_.f, rtol=1e-10, atol=1e-10)
    staged = list(model.staged_predict(X))
    assert len(staged) == 25
    np.testing.assert_array_equal(staged[-1], pred)
    # every round's coefficients are its own least-squares solution (not a running sum)
    assert not np.allclose(model.coef_, [model.history_["step"][i] for i in range(25)])
    warm = LeastSquaresRefit(StumpOracle(), n_estimators=10, random_state=0, warm_start=True)
    warm.fit(X, y).set_params(n_estimators=25).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), pred)
    np.testing.assert_array_equal(warm.history_["loss"], model.history_["loss"])


def test_a_refit_round_can_be_cut_back_exactly():
    """Early stopping's cut (``Ensemble.truncate``) replays refits: the cut model equals a
    fit stopped there, bit for bit."""
    X, y, _ = _regression()
    long = LeastSquaresRefit(StumpOracle(), n_estimators=20, random_state=0).fit(X, y)
    short = LeastSquaresRefit(StumpOracle(), n_estimators=12, random_state=0).fit(X, y)
    cut = long.ensemble_.copy()
    cut.truncate(12)
    np.testing.assert_array_equal(cut.decision_function(X), short.predict(X))
    assert cut.l1_norm() == short.ensemble_.l1_norm()
    assert list(long.ensemble_.l1_norms())[11] == short.ensemble_.l1_norm()
