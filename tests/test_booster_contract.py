"""The contract every public booster keeps, through the shared round loop
(``oracleboost.engine.base``): the history's shared keys, interrupts that keep their
rounds, refits that fail without damage, ``warm_start`` equal to one longer fit, and
fits that never re-predict the training set.

Every booster a later issue adds joins ``CASES``.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from instances import BOOSTERS
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification, make_regression

from oracleboost.boosters import (
    BoostingWarning,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    StopReason,
    reraise_interrupts,
)
from oracleboost.datasets import make_ranking
from oracleboost.losses import Squared
from oracleboost.oracles import Hypothesis, LinearOracle, Oracle, StumpOracle
from oracleboost.oracles.base import BoundOracle

SHARED = ("loss", "edge", "step", "margin", "time", "cumulative_time")


class _Counting(Hypothesis):
    """A hypothesis that counts its ``predict`` calls (on a shared counter)."""

    def __init__(self, inner: Hypothesis, counter: list[int]):
        self.inner, self.counter = inner, counter
        self.train_output, self.key, self.scale = inner.train_output, inner.key, inner.scale

    def predict(self, X):
        self.counter[0] += 1
        return self.inner.predict(X)


class _BoundProbe(BoundOracle):
    def __init__(self, oracle: ProbeOracle, inner: BoundOracle):
        super().__init__(oracle, inner.n_samples)
        self.inner = inner

    def _answer(self, h):
        o = self.oracle
        o.calls[0] += 1
        if o.fail_at is not None and o.calls[0] == o.fail_at:
            raise o.exception
        return None if h is None else _Counting(h, o.predictions)

    def _correlate(self, r, random_state):
        return self._answer(self.inner.correlate(r, random_state=random_state))

    # Finite classes: one correlation vector per step of dual acceleration counts as
    # its query; the column hypotheses are counted like answers.
    def _correlation_vector(self, r):
        self._answer(None)
        return self.inner.correlation_vector(r)

    def _combine(self, w):
        return self.inner.combine(w)

    def _columns(self):
        return self.inner.columns()

    def _column_hypothesis(self, j, scale):
        return _Counting(self.inner.column_hypothesis(j, scale), self.oracle.predictions)

    def _project(self, target, sample_weight, random_state):
        return self._answer(self.inner.project(target, sample_weight, random_state=random_state))


class ProbeOracle(Oracle):
    """Wraps an oracle: counts queries, raises ``exception`` at query ``fail_at``, and
    counts ``predict`` calls on the hypotheses it returned."""

    def __init__(self, inner=None, fail_at=None, exception=None):
        self.inner = inner
        self.fail_at = fail_at
        self.exception = exception
        self.calls = [0]
        self.predictions = [0]

    @property
    def capabilities(self):
        return (self.inner or StumpOracle()).capabilities

    def bind(self, X):
        return _BoundProbe(self, (self.inner or StumpOracle()).bind(X))


def _linear(oracle):
    """The accelerated booster's oracle: LinearOracle, inside a probe when one is given."""
    if isinstance(oracle, ProbeOracle):
        oracle.inner = LinearOracle()
        return oracle
    return LinearOracle()


def _binary():
    X, y = make_classification(200, 6, n_informative=4, flip_y=0.1, random_state=0)
    return X, np.where(y == 1, "yes", "no"), {}


def _regression():
    X, y = make_regression(200, 5, noise=5.0, random_state=0)
    return X, y, {}


def _multiclass():
    X, y = load_iris(return_X_y=True)
    return X, y, {}


def _ranking():
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=5, random_state=0)
    return X, y, {"qid": qid}


@dataclass(frozen=True)
class Case:
    """One booster configuration under the contract: a factory ``make(oracle, **params)``,
    its data ``data() -> (X, y, fit keywords)``, whether it is a classifier, whether it
    needs a finite class (the whole correlation vector: ``LinearOracle`` stands in for
    stumps), whether a round may hold several weak learners (repeated projection), and
    the rounds of the longer fit a warm start is compared with."""

    make: Callable
    data: Callable
    classifier: bool
    finite: bool = False
    repeated: bool = False
    warm_rounds: int = 100

    def oracle(self, probe=None):
        """The oracle to fit with, or to set with ``set_params``: ``probe`` or stumps; for
        a finite case, LinearOracle (inside the probe when one is given).  A finite
        case's factory does the same to what it is given, so either path works."""
        if self.finite:
            return _linear(probe)
        return probe if probe is not None else StumpOracle()


_DATA = {"binary": _binary, "classification": _multiclass, "regression": _regression,
         "ranking": _ranking}


def _case(instance) -> Case:
    """A booster of the registry of small instances (tests/instances.py) under the
    contract, with the class' own number of rounds unless a check asks for one; a finite
    case fits LinearOracle, inside the probe when one is given."""
    def make(oracle, **params):
        oracle = _linear(oracle) if instance.finite else oracle
        return instance.build(oracle, **{**instance.params, **params})

    return Case(make, _CASE_DATA.get(instance.name, _DATA[instance.task]),
                instance.classifier, instance.finite,
                repeated=instance.params.get("projection") == "repeated")


#: Data other than the task's, for a variant: sampled dual acceleration on two classes.
_CASE_DATA = {"accelerated_stochastic": _binary}

#: Every booster of the registry of small instances: every registered booster
#: (oracleboost.boosters.BOOSTERS), then the variants whose code paths the registered
#: parameters do not reach.
CASES = {name: _case(instance) for name, instance in BOOSTERS.items()}


def _fit(case: Case, probe=None, **params):
    X, y, extra = case.data()
    params.setdefault("random_state", 0)
    model = case.make(case.oracle(probe), **params)
    return model.fit(X, y, **extra), X, y, extra


def _predict(model, X):
    return model.predict(X)


def check_history_has_the_shared_keys_all_of_one_length(case: Case):
    model, *_ = _fit(case, n_estimators=20)
    keys = SHARED + (("train_error",) if case.classifier else ())
    for key in keys:
        assert key in model.history_, key
    lengths = {k: len(v) for k, v in model.history_.items()}
    assert len(set(lengths.values())) == 1, lengths
    assert lengths["loss"] == model.n_estimators_
    assert np.all(model.history_["time"] >= 0)
    np.testing.assert_allclose(
        model.history_["cumulative_time"], np.cumsum(model.history_["time"]), rtol=1e-12
    )


def check_keyboard_interrupt_keeps_the_completed_rounds(case: Case):
    probe = ProbeOracle(fail_at=30, exception=KeyboardInterrupt())
    with pytest.warns(BoostingWarning, match="interrupted"):
        model, X, _, _ = _fit(case, probe, n_estimators=100)
    assert model.stop_reason_ is StopReason.INTERRUPTED
    # Repeated projection commits whole outer iterations: 30 queries hold 7 of them
    # (1 + 2 + … + 7 = 28 learners); the others commit every learner.
    rounds = len(model.history_["loss"])
    assert rounds in ((28,) if case.repeated else (29, 30))
    assert model.n_estimators_ == rounds
    staged = list(model.staged_predict(X))
    assert len(staged) == rounds
    np.testing.assert_array_equal(staged[-1], model.predict(X))


def check_inside_reraise_interrupts_an_interrupt_propagates_and_rolls_back(case: Case):
    """What `oracleboost reproduce` relies on: Ctrl-C stops the command, it does not leave
    a partly fitted model behind as a result; outside the block the default returns."""
    model, X, y, extra = _fit(case, n_estimators=5)
    before = model.predict(X)
    probe = ProbeOracle(fail_at=30, exception=KeyboardInterrupt())
    model.set_params(oracle=case.oracle(probe), n_estimators=100)
    with reraise_interrupts(), pytest.raises(KeyboardInterrupt):
        model.fit(X, y, **extra)
    assert model.n_estimators_ == 5  # the previous model, whole
    np.testing.assert_array_equal(model.predict(X), before)
    probe = ProbeOracle(fail_at=30, exception=KeyboardInterrupt())
    model.set_params(oracle=case.oracle(probe))
    with pytest.warns(BoostingWarning, match="interrupted"):
        model.fit(X, y, **extra)
    assert model.stop_reason_ is StopReason.INTERRUPTED


def check_failed_refit_leaves_the_previous_model_whole(case: Case):
    model, X, y, extra = _fit(case, n_estimators=10)
    before = model.predict(X)
    state = {k: copy.deepcopy(v) for k, v in vars(model).items() if k.endswith("_")}
    # Refit on other labels (classifiers: other class names) with an oracle that fails
    # in round 3.
    if case.classifier:  # the same classes under new names: 3, 7, 11, …
        y2 = 3 + 4 * np.unique(y, return_inverse=True)[1]
    else:
        y2 = -2.0 * y
    probe = ProbeOracle(fail_at=3, exception=RuntimeError("oracle broke"))
    model.set_params(oracle=case.oracle(probe))
    with pytest.raises(RuntimeError, match="oracle broke"):
        model.fit(X, y2, **extra)
    np.testing.assert_array_equal(model.predict(X), before)
    assert set(k for k in vars(model) if k.endswith("_")) == set(state)
    if case.classifier:
        np.testing.assert_array_equal(model.classes_, state["classes_"])
    for key, values in state["history_"].items():
        np.testing.assert_array_equal(model.history_[key], values)
    assert model.stop_reason_ == state["stop_reason_"]


def check_failed_first_fit_leaves_the_estimator_unfitted(case: Case):
    X, y, extra = case.data()
    model = case.make(case.oracle(ProbeOracle(fail_at=3,
                                              exception=ValueError("bad weak learner"))))
    with pytest.raises(ValueError, match="bad weak learner"):
        model.fit(X, y, **extra)
    assert not [k for k in vars(model) if k.endswith("_")]


def check_warm_start_equals_one_longer_fit(case: Case):
    long, X, _, _ = _fit(case, n_estimators=case.warm_rounds)
    _, y, extra = case.data()
    # Repeated projection truncates its last outer iteration to the budget (P3), so a
    # continuation equals the longer fit when the first budget ends an outer iteration:
    # 45 = 1 + 2 + … + 9 learners.
    first = 45 if case.repeated else 50
    # A stopping rule may end the longer fit early (LPBoost's certificate closes on iris
    # in 30 rounds): the continuation then starts halfway through it.
    first = min(first, len(long.history_["loss"]) // 2)
    warm = case.make(case.oracle(), n_estimators=first, random_state=0, warm_start=True)
    warm.fit(X, y, **extra)
    assert len(warm.history_["loss"]) == first
    warm.set_params(n_estimators=case.warm_rounds)
    warm.fit(X, y, **extra)
    np.testing.assert_allclose(  # the clock runs on across the warm start
        warm.history_["cumulative_time"], np.cumsum(warm.history_["time"]), rtol=1e-12
    )
    assert warm.stop_reason_ == long.stop_reason_
    np.testing.assert_array_equal(_predict(warm, X), _predict(long, X))
    for key in long.history_:
        if key not in ("time", "cumulative_time") and not key.endswith("_time"):
            # (wall-clock records, "solver_time" too, differ from run to run)
            np.testing.assert_array_equal(warm.history_[key], long.history_[key], err_msg=key)
    raw = "decision_function" if hasattr(long, "decision_function") else "predict"
    np.testing.assert_array_equal(getattr(warm, raw)(X), getattr(long, raw)(X))


def test_warm_start_refuses_other_data_and_a_smaller_budget():
    model, X, y, _ = _fit(CASES["gradient-regression"], n_estimators=20, warm_start=True)
    with pytest.raises(ValueError, match="same data"):
        model.set_params(n_estimators=30).fit(X + 1.0, y)
    with pytest.raises(ValueError, match="n_estimators=10"):
        model.set_params(n_estimators=10).fit(X, y)
    assert len(model.history_["loss"]) == 20  # both failures left the model as it was
    model.set_params(n_estimators=20).fit(X, y)  # the same budget: nothing to add
    assert len(model.history_["loss"]) == 20


def test_warm_start_after_an_interrupt_continues():
    probe = ProbeOracle(fail_at=12, exception=KeyboardInterrupt())
    with pytest.warns(BoostingWarning):
        model, X, y, _ = _fit(CASES["adaboost"], probe, n_estimators=40, warm_start=True)
    assert model.stop_reason_ is StopReason.INTERRUPTED
    model.fit(X, y)
    assert model.stop_reason_ is StopReason.MAX_ROUNDS
    assert len(model.history_["loss"]) == 40


def check_fit_never_predicts_the_training_set_again(case: Case):
    probe = ProbeOracle()
    model, X, _, _ = _fit(case, probe, n_estimators=25)
    assert probe.calls[0] >= 20
    assert probe.predictions[0] == 0
    model.predict(X)  # prediction on new data does call them
    assert probe.predictions[0] > 0


def test_residual_projection_with_a_constant_step_stops_when_it_diverges():
    """The issue's run: residual projection with a constant step (outside Grubb &
    Bagnell's theorems) drifts away from its best loss and, unchecked, reaches 1e15 by
    10,000 rounds.  It stops, with a named reason and a warning, within 1,000 rounds of
    its best loss."""
    rng = np.random.RandomState(0)
    X = rng.randn(200, 2)
    y = np.sin(X[:, 0]) + X[:, 1]
    with pytest.warns(BoostingWarning, match="diverged"):
        model = FunctionalGradientRegressor(
            StumpOracle(), projection="residual", n_estimators=10_000
        ).fit(X, y)
    assert model.stop_reason_ is StopReason.DIVERGED
    loss = model.history_["loss"]
    best = int(np.argmin(loss))
    assert len(loss) - 1 - best <= 1000
    assert loss[-1] > 2 * loss[best]
    assert np.all(np.isfinite(loss))


class _Overflowing(Squared):
    """Squared loss that overflows to inf once a score passes 1.5 (as a loss of scores
    near 1e308 would)."""

    def loss(self, y, raw):
        return np.where(np.abs(raw) > 1.5, np.inf, super().loss(y, raw))


def test_a_non_finite_loss_stops_and_discards_that_round():
    """A round whose loss is not finite is discarded and the fit stops with
    ``non_finite``; the rounds before it are kept and the model stays finite."""
    rng = np.random.RandomState(0)
    X = rng.randn(50, 2)
    y = 2.0 * np.sign(X[:, 0])
    with pytest.warns(BoostingWarning, match="not finite"):
        model = FunctionalGradientRegressor(
            StumpOracle(), loss=_Overflowing(), learning_rate=0.5, init=0.0, n_estimators=50
        ).fit(X, y)
    assert model.stop_reason_ is StopReason.NON_FINITE
    assert 1 <= len(model.history_["loss"]) < 50
    assert np.all(np.isfinite(model.history_["loss"]))
    assert np.max(np.abs(model.predict(X))) <= 1.5


def test_growth_under_a_decreasing_schedule_warns_once_and_goes_on():
    """With the 1/√t schedule (Theorems 5 and 7 bound the average gap, not each step) a
    loss that overshoots past twice its best warns once and the fit continues; the same
    overshoot under a constant step stops it."""
    X, y, _ = _binary()
    params = dict(loss="logistic", learning_rate=500.0, n_estimators=60, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = FunctionalGradientClassifier(StumpOracle(), schedule="inv_sqrt", **params)
        model.fit(X, y)
    growth = [w for w in caught if issubclass(w.category, BoostingWarning)]
    loss = model.history_["loss"]
    assert np.any(loss > 2 * np.minimum.accumulate(loss))  # it did overshoot
    assert model.stop_reason_ is StopReason.MAX_ROUNDS and len(loss) == 60
    assert len(growth) == 1 and "goes on" in str(growth[0].message)
    with pytest.warns(BoostingWarning, match="diverged"):
        constant = FunctionalGradientClassifier(StumpOracle(), schedule="constant", **params)
        constant.fit(X, y)
    assert constant.stop_reason_ is StopReason.DIVERGED


def check_equal_sample_weights_change_nothing(case: Case):
    # Equal weights cancel from every risk, distribution and inner product: a constant
    # sample_weight of 2.5 gives the unweighted model (up to rounding in the sums).
    X, y, extra = case.data()
    if "sample_weight" not in inspect.signature(case.make(None).fit).parameters:
        return  # the ranker: no sample_weight in fit
    plain = case.make(case.oracle(), n_estimators=20, random_state=0).fit(X, y, **extra)
    weighted = case.make(case.oracle(), n_estimators=20, random_state=0).fit(
        X, y, sample_weight=np.full(len(y), 2.5), **extra
    )
    if case.classifier:
        np.testing.assert_array_equal(weighted.predict(X), plain.predict(X))
    else:
        np.testing.assert_allclose(weighted.predict(X), plain.predict(X), rtol=1e-9)
    np.testing.assert_allclose(weighted.history_["loss"], plain.history_["loss"], rtol=1e-9)


class _GateOracle(ProbeOracle):
    """A probe whose first query signals ``started`` and waits for ``release``: a fit
    held open in the middle of its first round."""

    def __init__(self, inner=None):
        super().__init__(inner)
        self.started = threading.Event()
        self.release = threading.Event()

    def __getstate__(self):  # events do not pickle; an unpickled gate is open
        return {k: v for k, v in vars(self).items() if k not in ("started", "release")}

    def __setstate__(self, state):
        vars(self).update(state)
        self.started, self.release = threading.Event(), threading.Event()
        self.started.set()
        self.release.set()

    def bind(self, X):
        bound = super().bind(X)
        answer = bound._answer

        def gated(h):
            if not self.started.is_set():
                self.started.set()
                assert self.release.wait(30), "the test never released the fit"
            return answer(h)

        bound._answer = gated
        return bound


def check_a_second_concurrent_fit_is_refused(case: Case):
    """Two fits of one estimator on two threads left a mixed model (the ensemble of one,
    the classes_ of the other; 6 runs of 10).  The second fit now raises a RuntimeError
    naming the estimator, before changing anything; the first completes whole, and the
    estimator fits, clones and pickles as before."""
    X, y, extra = case.data()
    gate = _GateOracle()
    est = case.make(case.oracle(gate), n_estimators=5, random_state=0)
    outcome = {}

    def first():
        try:
            est.fit(X, y, **extra)
        except BaseException as exc:  # reported below
            outcome["error"] = exc

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert gate.started.wait(30)
        seen = dict(vars(est))
        other = np.where(y == y[0], "first", "other") if case.classifier else y + 1.0
        with pytest.raises(RuntimeError, match=rf"^{type(est).__name__} \(id 0x[0-9a-f]+\) "
                           r"is already being fitted in another thread"):
            est.fit(X, other, **extra)
        assert vars(est).keys() == seen.keys()  # the refused fit touched nothing
    finally:
        gate.release.set()
        thread.join(60)
    assert "error" not in outcome, outcome.get("error")
    np.testing.assert_array_equal(
        est.predict(X), case.make(case.oracle(ProbeOracle()), n_estimators=5,
                                  random_state=0).fit(X, y, **extra).predict(X)
    )
    if case.classifier:
        assert set(est.classes_) == set(np.unique(y))
    # nothing of the guard stays on the estimator: it refits, clones and pickles
    est.fit(X, y, **extra)
    assert not any(isinstance(v, type(threading.Lock())) for v in vars(est).values())
    twin = clone(est)
    twin.oracle.release.set()  # a clone's gate is a new one
    np.testing.assert_array_equal(twin.fit(X, y, **extra).predict(X), est.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), est.predict(X))


#: The contract, one check per promise; every booster, and a new one in any test file
#: (``check(Case(...))``), must pass them all.
CONTRACT = [value for key, value in list(globals().items()) if key.startswith("check_")]


@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__[6:])
@pytest.mark.parametrize("name", CASES)
def test_contract(name, check):
    check(CASES[name])
