"""scikit-learn's callbacks on every booster (scikit-learn ≥ 1.9, ``sklearn.callback``).

``booster.set_callbacks(ProgressBar())`` or ``ScoringMonitor(scoring=...)`` works as on
scikit-learn's own iterative estimators (``LogisticRegression`` shows the pattern): a
fit is one task whose subtasks are its rounds, each begun before the round and ended
after it is committed; a callback whose ``on_fit_task_end`` returns True stops the fit
after that round (``stop_reason_ = "callback"``, resumable by ``warm_start``); a round
that adds nothing to the model (the booster stopped) ends as an empty task, with no
data to score.  A meta-estimator (``GridSearchCV``, ``Pipeline``) propagates its
callbacks into the boosters it fits, and their task trees join its own.

What the hooks get (scikit-learn's ``FitCallback`` protocol): ``X`` and ``y`` as given
to ``fit`` (the training part when early stopping holds rows out), ``metadata`` the
per-row arguments a scorer can take (``BaseBooster._callback_metadata``:
``sample_weight``; the ranker's ``qid``, so a ``ScoringMonitor`` on a ranker needs a
scorer that takes it), and ``fitted_estimator``, a shallow copy of the booster holding
copies of the model and history as they stand (``BaseBooster._fitted_attributes``),
built only when a callback asks for it.  Building it costs O(rounds so far), so a
callback that asks every round (``ScoringMonitor``) makes a fit O(rounds²); its own
scoring, which predicts the whole model every round, is quadratic anyway.

With scikit-learn < 1.9 there is no callback module: :class:`CallbackSupport` adds
nothing and no monitor is made; the boosters fit as they always did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from oracleboost.engine.monitors import Monitor
from oracleboost.engine.rounds import StopReason

if TYPE_CHECKING:  # pragma: no cover
    from oracleboost.engine.base import BaseBooster
    from oracleboost.engine.loop import Run

try:  # scikit-learn >= 1.9
    from sklearn.callback import CallbackSupportMixin as _CallbackSupportMixin
except ImportError:  # pragma: no cover - depends on the installed scikit-learn
    _CallbackSupportMixin = None

__all__ = ["CallbackSupport", "SklearnCallbacks", "callback_monitors", "HAS_CALLBACKS"]

#: Whether the installed scikit-learn has ``sklearn.callback``.
HAS_CALLBACKS = _CallbackSupportMixin is not None

#: The attributes scikit-learn's callback machinery keeps on an estimator during ``fit``;
#: a fit that fails must leave them for ``_fit_context`` to tear the callbacks down.
CALLBACK_ATTRIBUTES = ("_callback_fit_ctx", "_skl_callbacks_to_teardown")

if _CallbackSupportMixin is not None:

    class CallbackSupport(_CallbackSupportMixin):
        """``set_callbacks(*callbacks)`` (scikit-learn's :class:`CallbackSupportMixin`)."""

else:  # pragma: no cover - depends on the installed scikit-learn

    class CallbackSupport:
        """Without ``sklearn.callback`` (scikit-learn < 1.9) there is nothing to add."""


def callback_monitors(booster: BaseBooster) -> list[Monitor]:
    """The callback monitor of this fit when the booster has callbacks (its own, or a
    meta-estimator's propagated to it by ``set_callbacks``); otherwise none, and a fit
    without callbacks pays nothing per round.

    A meta-estimator hands every sub-estimator its context (``_parent_callback_ctx``),
    callbacks or not; but a booster's tasks call only the booster's own callbacks, so
    without any nothing would hear them (scikit-learn's ``LogisticRegression`` likewise
    makes its per-iteration tasks only when ``_skl_callbacks`` is set)."""
    if HAS_CALLBACKS and getattr(booster, "_skl_callbacks", None):
        return [SklearnCallbacks()]
    return []


class SklearnCallbacks(Monitor):
    """The fit's task and one subtask per round, for scikit-learn's callbacks.

    ``start`` sets the callbacks up and begins the fit's task (scikit-learn's
    ``_init_callback_context``, ``call_on_fit_task_begin``), ``before`` and ``after``
    begin and end a round's subtask (``subcontext``), ``finish`` ends the fit's task;
    ``sklearn.base._fit_context`` tears the callbacks down after ``fit``, failed or not.
    """

    def start(self, run: Run) -> None:
        booster = run.booster
        self.data = dict(run.fit_data)
        self.ctx = booster._init_callback_context(
            task_name="fit", max_subtasks=max(booster.n_estimators - len(run.history), 0))
        self.ctx.call_on_fit_task_begin(estimator=booster, **self.data,
                                        reconstruction_attributes=lambda: self._fitted(run))
        self.round_ctx = None

    @staticmethod
    def _fitted(run: Run) -> dict:
        """What makes a shallow copy of the booster predict as the model stands now."""
        return run.booster._fitted_attributes(run)

    def before(self, run: Run) -> None:
        self.round_ctx = self.ctx.subcontext(task_name="round")
        self.round_ctx.call_on_fit_task_begin(
            estimator=run.booster, **self.data,
            reconstruction_attributes=lambda: self._fitted(run))

    def after(self, run: Run, records: Sequence[dict[str, float]],
              stop: StopReason | None) -> StopReason | None:
        ctx, self.round_ctx = self.round_ctx, None
        if not records:
            # The round added nothing (the booster stopped: zero edge, …): an empty task,
            # as LogisticRegression ends its left-over L-BFGS iteration, so that no
            # callback scores a round that history_ does not have.
            ctx.call_on_fit_task_end(estimator=run.booster)
            return None
        wants_stop = ctx.call_on_fit_task_end(
            estimator=run.booster, **self.data,
            reconstruction_attributes=lambda: self._fitted(run))
        return StopReason.CALLBACK if wants_stop else None

    def finish(self, run: Run) -> None:
        if self.round_ctx is not None:  # a round that was discarded, or interrupted
            self.round_ctx.call_on_fit_task_end(estimator=run.booster)
            self.round_ctx = None
        self.ctx.call_on_fit_task_end(estimator=run.booster, **self.data,
                                      reconstruction_attributes=lambda: self._fitted(run))
