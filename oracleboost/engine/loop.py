"""The round loop every booster runs: preprocess → (round → commit) until a stop →
postprocess, as MiniBoosts' ``run`` reads.

:func:`run_rounds` asks the booster for one round at a time (``_round``), lets the
monitors veto it (:mod:`.monitors`), commits it — the model's updates, the monitors'
additions to its records, the records into the history, the new state — as one step
with SIGINT held back, and lets the monitors ask to stop.  Nothing in a round's
bookkeeping costs more as rounds accumulate: the model keeps running sums, the history
appends, the monitors look at the new records only.

Time: a record's ``time`` is the wall time of its round, from the call of ``_round`` to
the records entering the history (the commit and the validation curves included); when
a round used several weak learners it is shared among their records in proportion to
the times the booster measured for each, else evenly.  ``cumulative_time`` runs on
across warm starts.

Interrupts: a ``KeyboardInterrupt`` keeps every completed round (``stop_reason_ =
"interrupted"`` and a warning) unless the fit runs inside :func:`reraise_interrupts`,
where it propagates and the estimator is rolled back (the transaction of
:meth:`~oracleboost.engine.base.BaseBooster._fit_rounds`).
"""

from __future__ import annotations

import signal
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from oracleboost.engine.history import History
from oracleboost.engine.monitors import Monitor
from oracleboost.engine.rounds import BoostingWarning, Problem, StopReason

__all__ = ["Run", "run_rounds", "reraise_interrupts"]


#: Whether a KeyboardInterrupt in ``fit`` keeps the completed rounds (the default) or
#: propagates (inside :func:`reraise_interrupts`).
_KEEP_ROUNDS_ON_INTERRUPT: ContextVar[bool] = ContextVar(
    "oracleboost_keep_rounds_on_interrupt", default=True)


@contextmanager
def reraise_interrupts() -> Iterator[None]:
    """Within the block, Ctrl-C in a booster's ``fit`` propagates instead of keeping rounds.

    A user's own ``fit`` keeps its completed rounds when interrupted
    (``stop_reason_ = "interrupted"``): the user asked for that model and can continue
    it.  A program that runs fits for the user (an experiment, a grid) must instead stop
    when the user presses Ctrl-C, not finish with a partly fitted model recorded as a
    result: it runs them inside this block, where ``KeyboardInterrupt`` leaves the
    estimator as it was before ``fit`` (the loop's transaction) and propagates.  The
    setting is a context variable: it holds in this thread (and in the tasks it starts
    with a copy of its context), nests, and is restored on exit.
    """
    token = _KEEP_ROUNDS_ON_INTERRUPT.set(False)
    try:
        yield
    finally:
        _KEEP_ROUNDS_ON_INTERRUPT.reset(token)


@contextmanager
def _sigint_held():
    """Hold SIGINT back while a round is committed, then deliver it.

    Only the main thread receives signals; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # no signal support here (e.g. an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, None)
            else:
                raise KeyboardInterrupt


@dataclass
class Run:
    """One fit in progress: what the loop and the monitors share.

    ``state`` is the booster's state after the last committed round; ``stop`` is set
    when the loop ends.  ``fit_data`` is what ``fit`` was given (``X``, ``y`` and the
    ``metadata`` such as ``sample_weight``: what scikit-learn's callbacks see).
    ``stacklevel`` makes the monitors' warnings point at the caller of ``fit``.
    """

    booster: Any
    problem: Problem
    model: Any
    history: History
    state: Any
    monitors: list[Monitor] = field(default_factory=list)
    fit_data: dict = field(default_factory=dict)
    stop: StopReason | None = None
    stacklevel: int = 7


def _spread_time(records: Sequence[dict[str, float]], elapsed: float) -> None:
    """Share a round's wall time among its records (see the module docstring)."""
    own = [r.get("time") for r in records]
    total = sum(t for t in own if t is not None and t > 0)
    for record, t in zip(records, own, strict=True):
        if total > 0 and t is not None:
            record["time"] = elapsed * max(t, 0.0) / total
        else:
            record["time"] = elapsed / len(records)


def run_rounds(run: Run, n_estimators: int, stop: StopReason | None = None) -> Run:
    """Run ``run.booster``'s rounds until a stop or ``n_estimators`` weak learners in all
    (the history's length; a warm start's earlier rounds count).  ``stop`` is a stop
    carried over from an earlier fit that cannot resume."""
    booster, history, model = run.booster, run.history, run.model
    for monitor in run.monitors:
        monitor.start(run)
    try:
        while stop is None and len(history) < n_estimators:
            for monitor in run.monitors:
                monitor.before(run)
            t = len(history)
            t0 = time.perf_counter()
            result = booster._round(run.problem, run.state, model, t, n_estimators - t)
            veto = next((reason for m in run.monitors
                         if (reason := m.veto(run, result)) is not None), None)
            if veto is not None:
                stop = veto
                break
            records = result.records
            with _sigint_held():
                for term in result.terms:
                    model.add(*term)
                if result.refit is not None:
                    model.refit(result.refit)
                for monitor in run.monitors:
                    monitor.decorate(run, records)
                if records:
                    _spread_time(records, time.perf_counter() - t0)
                for record in records:
                    record["cumulative_time"] = (
                        history.last("cumulative_time", 0.0) + record["time"])
                    history.append(**record)
                run.state = result.state
            stop = result.stop
            for monitor in run.monitors:
                reason = monitor.after(run, records, stop)
                if stop is None:
                    stop = reason
    except KeyboardInterrupt:
        if len(history) == 0 or not _KEEP_ROUNDS_ON_INTERRUPT.get():
            raise  # the fit's transaction restores the estimator as it was
        stop = StopReason.INTERRUPTED
        warnings.warn(
            f"{type(booster).__name__}: interrupted; the model keeps the {len(history)} "
            "completed rounds (stop_reason_='interrupted'; warm_start=True continues)",
            BoostingWarning,
            stacklevel=run.stacklevel - 2,
        )
    for monitor in run.monitors:
        monitor.finish(run)
    run.stop = StopReason.MAX_ROUNDS if stop is None else stop
    return run
