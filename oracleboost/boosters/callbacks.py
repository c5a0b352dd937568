"""scikit-learn's callbacks on every booster (scikit-learn ≥ 1.9, ``sklearn.callback``).

``booster.set_callbacks(ProgressBar())`` or ``ScoringMonitor(scoring=...)`` works as on
scikit-learn's own iterative estimators (``LogisticRegression`` shows the pattern): a
fit is one task whose subtasks are its rounds, each begun before the round and ended
after it is committed; a callback whose ``on_fit_task_end`` returns True stops the fit
after that round (``stop_reason_ = "callback"``, resumable by ``warm_start``).  A
meta-estimator (``GridSearchCV``, ``Pipeline``) propagates its callbacks into the
boosters it fits, and their task trees join its own.  The ``fitted_estimator`` a
callback may ask for is a shallow copy of the booster holding a copy of the model as it
is after the round (built only when asked).

With scikit-learn < 1.9 there is no callback module: :class:`CallbackSupport` adds
nothing and no monitor is made; the boosters fit as they always did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .monitors import Monitor
from .rounds import StopReason

if TYPE_CHECKING:  # pragma: no cover
    from .loop import Run

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


def callback_monitors(booster) -> list[Monitor]:
    """The callback monitor of this fit: when callbacks are set on the booster or a
    meta-estimator has attached its context to it; otherwise none (a fit without
    callbacks pays nothing per round)."""
    if not HAS_CALLBACKS:
        return []
    if getattr(booster, "_skl_callbacks", None) or hasattr(booster, "_parent_callback_ctx"):
        return [SklearnCallbacks()]
    return []


class SklearnCallbacks(Monitor):
    """The fit's task and one subtask per round, for scikit-learn's callbacks."""

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

    def after(self, run: Run, records, stop):
        ctx, self.round_ctx = self.round_ctx, None
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
