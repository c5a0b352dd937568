"""scikit-learn's callbacks (``sklearn.callback``, scikit-learn >= 1.9) on every booster
of ``BOOSTERS``: one task per fit with one subtask per round (``ProgressBar``), the score
of the model as it stood after each round (``ScoringMonitor``), a stop asked for by a
callback (``stop_reason_ = "callback"``, continued by ``warm_start``), task trees that
join a meta-estimator's, callbacks torn down after a failed fit, no cost without
callbacks, and boosters that fit where scikit-learn's callback module is hidden.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import instances
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import oracleboost
from oracleboost.boosters import BOOSTERS, BoostingWarning, StopReason
from oracleboost.datasets import make_ranking
from oracleboost.engine import callbacks as booster_callbacks
from oracleboost.losses.ranking import pairwise_disagreement
from oracleboost.oracles import StumpOracle

# Without sklearn.callback (scikit-learn < 1.9) the boosters have no set_callbacks and
# the rest of the suite is the test that they fit.
sklearn_callback = pytest.importorskip("sklearn.callback")
ProgressBar = sklearn_callback.ProgressBar
ScoringMonitor = sklearn_callback.ScoringMonitor

ROUNDS = 5


def _data(task: str):
    """Tiny data for a task: ``(X, y, extra)``, ``extra`` the further arguments of fit."""
    if task == "binary":
        X, y = make_classification(60, 4, random_state=0)
        return X, np.where(y == 1, "yes", "no"), {}
    if task == "classification":
        X, y = make_classification(90, 4, n_informative=3, n_redundant=0, n_classes=3,
                                   random_state=0)
        return X, y, {}
    if task == "regression":
        X, y = make_regression(60, 4, noise=5.0, random_state=0)
        return X, y, {}
    X, y, qid = make_ranking(n_queries=6, docs_per_query=8, n_features=4, random_state=0)
    return X, y, {"qid": qid}


def _fit(name: str, callbacks=(), **params):
    """Fit ``BOOSTERS[name]`` (ROUNDS rounds) with ``callbacks`` set on it."""
    spec = BOOSTERS[name]
    X, y, extra = _data(spec.task)
    est = instances.make(spec, None, **{"n_estimators": ROUNDS, "random_state": 0, **params})
    if callbacks:
        est.set_callbacks(*callbacks)
    return est.fit(X, y, **extra), X, y, extra


class Recorder:
    """A FitCallback (auto-propagated by meta-estimators) that records every hook call:
    ``(hook, estimator name, task name, task id, path of task ids from the root)``."""

    max_propagation_depth = None

    def __init__(self, stop_at_round: int | None = None):
        self.calls = []
        self.stop_at_round = stop_at_round

    def _record(self, hook, estimator, context):
        path, ctx = [], context
        while ctx is not None:
            path.insert(0, ctx.task_id)
            ctx = ctx.parent
        self.calls.append((hook, type(estimator).__name__, context.task_name,
                           context.task_id, tuple(path)))

    def setup(self, estimator, context):
        self._record("setup", estimator, context)

    def teardown(self, estimator, context):
        self._record("teardown", estimator, context)

    def on_fit_task_begin(self, estimator, context):
        self._record("begin", estimator, context)

    def on_fit_task_end(self, estimator, context):
        self._record("end", estimator, context)
        # a stop request after round number stop_at_round (counted from 1)
        return (self.stop_at_round is not None and context.task_name == "round"
                and context.task_id == self.stop_at_round - 1)

    def hooks(self, hook, task_name=None):
        return [c for c in self.calls
                if c[0] == hook and (task_name is None or c[2] == task_name)]


class TreeProgressBar(ProgressBar):
    """A ProgressBar that keeps the root of the task tree of its last fit."""

    def setup(self, estimator, context):
        self.root = context
        super().setup(estimator, context)


def _no_callback_state_left(est):
    return not any(hasattr(est, a) for a in booster_callbacks.CALLBACK_ATTRIBUTES)


# -- ProgressBar: one bar per fit, one step per round ---------------------------------
@pytest.mark.parametrize("name", BOOSTERS)
def test_progress_bar_has_one_fit_task_with_one_subtask_per_round(name):
    from sklearn.callback._progressbar import _run_monitors

    bar = TreeProgressBar()
    est, *_ = _fit(name, [bar])
    assert est.stop_reason_ is StopReason.MAX_ROUNDS
    root = bar.root
    assert (root.task_name, root.parent, root.max_subtasks) == ("fit", None, ROUNDS)
    rounds = list(root._children_map.values())
    assert [(c.task_name, c.task_id, c.max_subtasks) for c in rounds] == [
        ("round", t, 0) for t in range(ROUNDS)]
    assert len(est.history_["loss"]) == ROUNDS
    assert list(root) == [root, *rounds]  # the rounds are leaves
    # torn down: the bar's display thread ended, the fit's callback state removed
    assert root.root_uuid not in _run_monitors
    assert _no_callback_state_left(est)
    assert est._skl_callbacks == [bar]  # set_callbacks outlives the fit


def test_every_begun_round_ends_once_and_in_order():
    recorder = Recorder()
    _fit("adaboost", [recorder])
    tasks = [(hook, task, i) for hook, _, task, i, _ in recorder.calls]
    assert tasks == [
        ("setup", "fit", 0), ("begin", "fit", 0),
        *[x for t in range(ROUNDS) for x in (("begin", "round", t), ("end", "round", t))],
        ("end", "fit", 0), ("teardown", "fit", 0),
    ]


# -- ScoringMonitor: the score of the model truncated to each round -------------------
def _pairs_out_of_order(est, X, y, qid):
    """A ranking score for ScoringMonitor: it gets the ranker's ``qid`` as metadata."""
    return {"pairs_out_of_order": pairwise_disagreement(y, est.predict(X), qid)}


def _staged_scores(est, task, X, y, extra) -> list[dict]:
    """The scores ScoringMonitor should log after each round, from the staged
    predictions; the log loss of the probabilities tells rounds apart where the
    accuracy stays the same."""
    if task == "ranking":
        return [{"pairs_out_of_order": pairwise_disagreement(y, pred, extra["qid"])}
                for pred in est.staged_predict(X)]
    if task == "regression":
        return [{"neg_mean_squared_error": -mean_squared_error(y, pred)}
                for pred in est.staged_predict(X)]
    return [{"accuracy": accuracy_score(y, pred),
             "neg_log_loss": -log_loss(y, proba, labels=est.classes_)}
            for pred, proba in zip(est.staged_predict(X), est.staged_predict_proba(X),
                                   strict=True)]


SCORING = {"binary": ["accuracy", "neg_log_loss"],
           "classification": ["accuracy", "neg_log_loss"],
           "regression": "neg_mean_squared_error", "ranking": _pairs_out_of_order}


@pytest.mark.parametrize("name", BOOSTERS)
def test_scoring_monitor_logs_each_round_the_score_of_the_staged_model(name):
    task = BOOSTERS[name].task
    monitor = ScoringMonitor(scoring=SCORING[task])
    # a shrunk step where the booster has one (LPBoost re-solves every coefficient);
    # SoftBoost and TotalBoost keep their model while the oracle repeats a hypothesis
    # and γ̂ falls by ε a round (here TotalBoost's hard-margin LP sits at −1 for its
    # first 17 rounds at the registered ε = 0.02): a coarse ε moves them within ROUNDS
    shrink = ({"learning_rate": 0.5}
              if "learning_rate" in BOOSTERS[name].estimator().get_params()
              else {"tol": 0.1} if BOOSTERS[name].params.get("method") in (
                  "softboost", "totalboost") else {})
    est, X, y, extra = _fit(name, [monitor], **shrink)
    rows = monitor.get_logs().data
    rounds = [r for r in rows if r["task_name"] == "round"]
    assert len(rounds) == len(est.history_["loss"]) == ROUNDS
    assert [r["task_id_path"] for r in rounds] == [(0, t) for t in range(ROUNDS)]
    staged = _staged_scores(est, task, X, y, extra)
    assert len(staged) == ROUNDS
    # the same predictions, so the same scores to the bit
    assert [{k: r[k] for k in staged[0]} for r in rounds] == staged
    # the rounds are told apart (not one model scored again and again)
    assert len({tuple(s.values()) for s in staged}) > 1
    (fit,) = [r for r in rows if r["task_name"] == "fit"]
    assert {k: fit[k] for k in staged[0]} == staged[-1]


def test_scoring_monitor_gets_sample_weight_but_not_sample_group():
    """sample_weight is passed to the scorer (as scikit-learn's estimators pass it);
    MirrorBoostingClassifier's sample_group only shapes the training: given to
    accuracy_score it would fail the fit."""
    X, y, _ = _data("binary")
    w = np.linspace(0.5, 2.0, len(y))
    group = np.arange(len(y)) % 2
    monitor = ScoringMonitor(scoring="accuracy")
    est = BOOSTERS["maboost"].make(None, n_estimators=ROUNDS, smoothness=3.0, random_state=0)
    est.set_callbacks(monitor).fit(X, y, sample_weight=w, sample_group=group)
    logged = [r["accuracy"] for r in monitor.get_logs().data if r["task_name"] == "round"]
    weighted = [accuracy_score(y, p, sample_weight=w) for p in est.staged_predict(X)]
    assert logged == weighted
    assert weighted != [accuracy_score(y, p) for p in est.staged_predict(X)]


def test_a_round_that_adds_nothing_is_an_empty_task():
    """A booster that stops because its next round has nothing to add (zero edge on XOR)
    ends that round's task without data: nothing is scored for a round not in history_."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]] * 5)
    y = np.array([0, 1, 1, 0] * 5)
    monitor, recorder = ScoringMonitor(scoring="accuracy"), Recorder()
    est = BOOSTERS["adaboost"].make(StumpOracle(), n_estimators=ROUNDS)
    est.set_callbacks(monitor, recorder).fit(X, y)
    assert est.stop_reason_ is StopReason.ZERO_EDGE
    assert len(est.history_["loss"]) == 0
    assert len(recorder.hooks("begin", "round")) == len(recorder.hooks("end", "round")) == 1
    assert [r["task_name"] for r in monitor.get_logs().data] == ["fit"]


# -- a callback that asks to stop ------------------------------------------------------
@pytest.mark.parametrize("name", BOOSTERS)
def test_a_stop_request_ends_the_fit_after_that_round_and_warm_start_continues(name):
    stop_after = 3
    recorder = Recorder(stop_at_round=stop_after)
    est, X, y, extra = _fit(name, [recorder], n_estimators=2 * ROUNDS, warm_start=True)
    assert est.stop_reason_ is StopReason.CALLBACK
    assert len(est.history_["loss"]) == est.n_estimators_ == stop_after
    assert len(recorder.hooks("end", "round")) == stop_after
    assert len(list(est.staged_predict(X))) == stop_after
    # continue without the callback: one fit of 2 * ROUNDS rounds
    est.set_callbacks()
    est.fit(X, y, **extra)
    whole, *_ = _fit(name, n_estimators=2 * ROUNDS)
    assert est.stop_reason_ is whole.stop_reason_ is StopReason.MAX_ROUNDS
    np.testing.assert_array_equal(est.history_["loss"], whole.history_["loss"])
    np.testing.assert_array_equal(est.predict(X), whole.predict(X))


# -- meta-estimators --------------------------------------------------------------------
def _booster_trees(recorder, booster_name):
    """The round subtasks of each of the booster's fit tasks: {fit path: [round ids]}."""
    trees = {path: [] for hook, est, task, _, path in recorder.calls
             if hook == "begin" and est == booster_name and task == "fit"}
    for hook, est, task, i, path in recorder.calls:
        if hook == "end" and est == booster_name and task == "round":
            trees[path[:-1]].append(i)
    return trees


@pytest.mark.parametrize("name", ["adaboost", "gradient-regression"])
def test_grid_search_propagates_its_callbacks_into_the_boosters(name):
    spec = BOOSTERS[name]
    X, y, _ = _data(spec.task)
    recorder = Recorder()
    search = GridSearchCV(spec.make(None, n_estimators=ROUNDS, random_state=0),
                          {"learning_rate": [0.3, 1.0]}, cv=2).set_callbacks(recorder)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not support callbacks")
        search.fit(X, y)
    booster = spec.estimator.__name__
    trees = _booster_trees(recorder, booster)
    # 2 candidates x 2 folds (the search's subtask 0), then the refit (its subtask 1):
    # each the booster's fit task, inside the search's tree
    assert sorted(trees) == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1)]
    assert all(rounds == list(range(ROUNDS)) for rounds in trees.values())
    # set up and torn down once, by the outermost estimator
    assert [c[1] for c in recorder.hooks("setup")] == ["GridSearchCV"]
    assert [c[1] for c in recorder.hooks("teardown")] == ["GridSearchCV"]
    # the propagated callbacks and context are gone from the fitted boosters
    assert not hasattr(search.best_estimator_, "_skl_callbacks")
    assert not hasattr(search.best_estimator_, "_parent_callback_ctx")


def test_a_booster_s_own_callback_sees_its_rounds_inside_the_search_s_tree():
    """A callback set on the booster itself (not auto-propagated: each clone keeps it)
    scores rounds whose task paths start at the search's root: one run, the search's."""
    X, y, _ = _data("binary")
    monitor = ScoringMonitor(scoring="accuracy")
    booster = BOOSTERS["adaboost"].make(None, n_estimators=ROUNDS, random_state=0)
    GridSearchCV(booster.set_callbacks(monitor), {"learning_rate": [0.3, 1.0]}, cv=2).fit(X, y)
    (run,) = monitor.get_logs(select="all")
    assert run.estimator_name == "GridSearchCV"
    rounds = [r for r in run.data if r["task_name"] == "round"]
    assert len(rounds) == 5 * ROUNDS  # 4 fits of the search and the refit
    assert {r["task_id_path"][0] for r in rounds} == {0}
    assert {len(r["task_id_path"]) for r in rounds} == {4, 3}  # search/fold/fit/round


def test_pipeline_propagates_its_callbacks_into_the_booster():
    X, y, _ = _data("binary")
    recorder, bar = Recorder(), TreeProgressBar()
    pipe = make_pipeline(StandardScaler(), BOOSTERS["adaboost"].make(
        None, n_estimators=ROUNDS, random_state=0)).set_callbacks(recorder, bar)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not support callbacks")
        pipe.fit(X, y)
    assert _booster_trees(recorder, "CoordinateBoostingClassifier") == {
        (0, 1): list(range(ROUNDS))}  # the pipeline's second step
    # the ProgressBar's tree: the pipeline's fit, its steps, the booster's rounds
    (booster_fit,) = [c for c in bar.root if c.estimator_name == "CoordinateBoostingClassifier"
                      and c.task_name == "fit"]
    assert booster_fit.source_estimator_name == "Pipeline"
    assert len(booster_fit._children_map) == ROUNDS


# -- verbose ------------------------------------------------------------------------------
def test_verbose_prints_the_same_lines_with_callbacks(capsys):
    def rounds_printed(callbacks):
        _fit("adaboost", callbacks, verbose=2)
        header, *lines = capsys.readouterr().out.splitlines()
        # the header and each line's round number; the rest holds timings
        return [header, *(line.split()[0] for line in lines)]

    without = rounds_printed(())
    assert without[1:] == [str(t) for t in range(1, ROUNDS + 1)]
    assert without[0].split()[0] == "round"
    assert rounds_printed([Recorder()]) == without


# -- a failed fit, and a fit without callbacks ---------------------------------------------
class _FailingStumps(StumpOracle):
    """Stumps whose third query raises: a weak learner that fails mid-fit."""

    def _failure(self):
        return RuntimeError("the weak learner failed")

    def bind(self, X):
        bound = super().bind(X)
        calls, answer = [0], bound._correlate

        def failing(r, random_state):
            calls[0] += 1
            if calls[0] == 3:
                raise self._failure()
            return answer(r, random_state)

        bound._correlate = failing
        return bound


@pytest.mark.parametrize("fitted_before", [False, True])
def test_a_failed_fit_still_tears_the_callbacks_down(fitted_before):
    X, y, _ = _data("binary")
    recorder = Recorder()
    est = BOOSTERS["adaboost"].make(StumpOracle(), n_estimators=ROUNDS, random_state=0)
    if fitted_before:
        est.fit(X, y)
        before = est.predict(X)
    est.set_callbacks(recorder).set_params(oracle=_FailingStumps())
    with pytest.raises(RuntimeError, match="weak learner failed"):
        est.fit(X, y)
    assert [c[0] for c in recorder.calls if c[2] == "fit"] == ["setup", "begin", "teardown"]
    assert len(recorder.hooks("begin", "round")) == 3  # failed in the third
    assert _no_callback_state_left(est)
    assert est._skl_callbacks == [recorder]
    # the transaction: the estimator as it was before the failed fit
    if fitted_before:
        np.testing.assert_array_equal(est.predict(X), before)
    else:
        assert not hasattr(est, "ensemble_")
    # and its callbacks still work
    est.set_params(oracle=StumpOracle()).fit(X, y)
    assert len(recorder.hooks("setup")) == len(recorder.hooks("teardown")) == 2


class _InterruptedStumps(_FailingStumps):
    """Stumps whose third query is interrupted (Ctrl-C)."""

    def _failure(self):
        return KeyboardInterrupt()


def test_an_interrupted_fit_ends_its_open_round_and_its_fit_task():
    """Ctrl-C in round 3 keeps two rounds (stop_reason_='interrupted'): the open round's
    task ends empty, the fit's task ends as the model stands, the callbacks are torn
    down."""
    X, y, _ = _data("binary")
    recorder, monitor = Recorder(), ScoringMonitor(scoring="accuracy")
    est = BOOSTERS["adaboost"].make(_InterruptedStumps(), n_estimators=ROUNDS, random_state=0)
    with pytest.warns(BoostingWarning, match="interrupted"):
        est.set_callbacks(recorder, monitor).fit(X, y)
    assert est.stop_reason_ is StopReason.INTERRUPTED
    assert len(est.history_["loss"]) == 2
    assert [c[0] for c in recorder.calls if c[2] == "round"] == ["begin", "end"] * 3
    assert [c[0] for c in recorder.calls if c[2] == "fit"] == [
        "setup", "begin", "end", "teardown"]
    rows = monitor.get_logs().data
    assert [r["task_name"] for r in rows] == ["fit", "round", "round"]
    assert rows[0]["accuracy"] == est.score(X, y)
    assert _no_callback_state_left(est)


def test_a_fit_without_callbacks_makes_no_callback_monitor(monkeypatch):
    made = []
    original = booster_callbacks.SklearnCallbacks.__init__

    def counting(self, *args, **kwargs):
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(booster_callbacks.SklearnCallbacks, "__init__", counting)
    est, X, y, _ = _fit("adaboost")
    assert made == []
    assert _no_callback_state_left(est)
    est.set_callbacks(Recorder()).fit(X, y)
    assert len(made) == 1
    est.set_callbacks().fit(X, y)  # callbacks removed: none again
    assert len(made) == 1
    clone(est).fit(X, y)
    assert len(made) == 1
    # Inside a meta-estimator without callbacks (scikit-learn still hands each booster
    # its context), or whose callbacks do not reach the booster, there is nothing to
    # hear the booster's tasks: no monitor either.
    GridSearchCV(clone(est), {"learning_rate": [0.5, 1.0]}, cv=2).fit(X, y)
    make_pipeline(StandardScaler(), clone(est)).set_callbacks(
        TreeProgressBar(max_propagation_depth=0)).fit(X, y)
    assert len(made) == 1


# -- scikit-learn's callback module hidden ------------------------------------------------
_HIDDEN = textwrap.dedent('''
    import importlib.abc
    import sys
    import warnings

    import numpy as np
    import instances

    # 1. Load oracleboost once, so that every scikit-learn module it uses is loaded
    #    (some of them import sklearn.callback themselves), then forget oracleboost.
    import oracleboost.boosters
    for name in [m for m in sys.modules if m.split(".")[0] == "oracleboost"]:
        del sys.modules[name]

    # 2. Hide sklearn.callback and import oracleboost again: its import of the module
    #    fails as on scikit-learn < 1.9.
    class Hide(importlib.abc.MetaPathFinder):
        asked = []

        def find_spec(self, name, path, target=None):
            if name.split(".")[:2] == ["sklearn", "callback"]:
                self.asked.append(name)
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    import sklearn
    saved = {m: sys.modules.pop(m) for m in list(sys.modules)
             if m.split(".")[:2] == ["sklearn", "callback"]}
    hidden_attribute = sklearn.__dict__.pop("callback", None)
    sys.meta_path.insert(0, Hide())
    from oracleboost.boosters import BOOSTERS
    from oracleboost.engine import callbacks
    from oracleboost.datasets import make_ranking
    sys.meta_path.pop(0)
    # 3. scikit-learn gets its module back: its _fit_context imports it in every fit.
    sys.modules.update(saved)
    if hidden_attribute is not None:
        sklearn.callback = hidden_attribute

    assert Hide.asked, "oracleboost never asked for sklearn.callback"
    assert callbacks.HAS_CALLBACKS is False

    from sklearn.datasets import make_classification, make_regression
    from sklearn.model_selection import GridSearchCV
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = make_classification(60, 4, random_state=0)
    X3, y3 = make_classification(90, 4, n_informative=3, n_redundant=0, n_classes=3,
                                 random_state=0)
    Xr, yr = make_regression(60, 4, random_state=0)
    Xq, yq, qid = make_ranking(n_queries=6, docs_per_query=8, n_features=4, random_state=0)
    data = {"binary": (X, y), "classification": (X3, y3), "regression": (Xr, yr),
            "ranking": (Xq, yq, qid)}
    for name, spec in BOOSTERS.items():
        est = instances.make(spec, None, n_estimators=3, random_state=0)
        assert not hasattr(est, "set_callbacks"), name
        est.fit(*data[spec.task])
        assert len(est.history_["loss"]) == 3, name
        assert est.predict(data[spec.task][0]).shape == (len(data[spec.task][1]),), name
        assert not hasattr(est, "_callback_fit_ctx"), name
        try:  # _fit_context still validates the parameters before fit
            spec.make(None, n_estimators=0).fit(*data[spec.task])
        except InvalidParameterError as exc:
            assert "n_estimators" in str(exc), name
        else:
            raise AssertionError(f"{name}: n_estimators=0 was accepted")

    # A meta-estimator's callbacks do not reach a booster without callback support:
    # scikit-learn warns, as for any such estimator, and the search fits.
    class Recorder:
        max_propagation_depth = None
        def setup(self, estimator, context): pass
        def teardown(self, estimator, context): pass
        def on_fit_task_begin(self, estimator, context): pass
        def on_fit_task_end(self, estimator, context): pass

    search = GridSearchCV(BOOSTERS["adaboost"].make(None, n_estimators=3),
                          {"learning_rate": [0.5, 1.0]}, cv=2).set_callbacks(Recorder())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    assert any("does not support callbacks" in str(w.message) for w in caught)
    print("fitted", len(BOOSTERS))
''')


def test_the_boosters_fit_where_sklearn_callback_is_hidden():
    """Every booster of BOOSTERS fits where oracleboost cannot import sklearn.callback.

    What "hidden" means here: hidden from oracleboost's import, not from scikit-learn.
    scikit-learn 1.9's ``_fit_context`` imports ``sklearn.callback._callback_support``
    inside every decorated ``fit``, and ``sklearn.pipeline``, ``sklearn.model_selection``,
    ``sklearn.linear_model`` and ``sklearn.preprocessing`` import the package when
    loaded: a 1.9 without the package does not work at all, whatever oracleboost does.
    On scikit-learn 1.6-1.8, which oracleboost still supports, neither the package nor
    those imports exist.  What oracleboost itself must survive is its own ``from
    sklearn.callback import CallbackSupportMixin`` failing.  So, in a fresh
    interpreter, oracleboost is imported once (loading the scikit-learn modules it
    uses), forgotten, and imported again while a meta-path finder makes every
    ``sklearn.callback`` import fail (the finder checks it was asked); then
    scikit-learn gets its module back.  (Faking an older scikit-learn instead would mean
    replacing ``_fit_context`` by a copy, and testing the copy.)  The boosters then have
    no ``set_callbacks`` (the fallback ``CallbackSupport``), fit and predict through
    scikit-learn's real ``_fit_context`` (which still validates the parameters, and
    finds no callback state to tear down), and a GridSearchCV's callbacks pass them by
    with scikit-learn's "does not support callbacks" warning.
    """
    root = Path(oracleboost.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    done = subprocess.run([sys.executable, "-c", _HIDDEN], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["fitted", str(len(BOOSTERS))]


def test_a_refused_concurrent_fit_leaves_the_running_fit_s_callbacks_alone():
    """The second fit of one estimator is refused before scikit-learn's ``_fit_context``
    runs, so it tears down nothing of the first fit's callbacks (it did: the running fit
    lost its callback context mid-fit and a ProgressBar failed with a KeyError)."""
    import threading

    X, y, _ = _data("binary")
    started, release = threading.Event(), threading.Event()

    class Gate(StumpOracle):
        def bind(self, X):
            bound = super().bind(X)
            answer = bound._correlate

            def gated(r, random_state):
                if not started.is_set():
                    started.set()
                    assert release.wait(30)
                return answer(r, random_state)

            bound._correlate = gated
            return bound

    recorder = Recorder()
    est = BOOSTERS["adaboost"].make(Gate(), n_estimators=ROUNDS, random_state=0)
    est.set_callbacks(recorder)
    failure = []
    thread = threading.Thread(target=lambda: failure.append(None) if est.fit(X, y) is None
                              else None)
    thread.start()
    try:
        assert started.wait(30)
        with pytest.raises(RuntimeError, match="already being fitted in another thread"):
            est.fit(X, y)
        assert recorder.hooks("teardown") == []  # the running fit keeps its callbacks
    finally:
        release.set()
        thread.join(60)
    assert not failure and est.n_estimators_ == ROUNDS
    assert len(recorder.hooks("setup")) == len(recorder.hooks("teardown")) == 1
    assert len(recorder.hooks("end", "round")) == ROUNDS
    assert _no_callback_state_left(est)
