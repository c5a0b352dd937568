"""Monitors: what watches a fit's rounds without being part of any algorithm.

The loop (:mod:`.loop`) runs a booster's rounds and commits each one; the policies every
booster shares are monitors that read each round and may ask to stop with a named
reason, never branches inside the loop:

* :class:`NonFiniteLoss` discards a round whose loss is NaN or infinite
  (``"non_finite"``);
* :class:`EvalCurves` adds each watched set's loss (and error) to the round's records
  (``fit(eval_set=...)``, early stopping's held-out rows);
* :class:`Divergence` stops a fit whose loss grows past :data:`DIVERGENCE_FACTOR` times
  its best where the theory promises descent (``"diverged"``), and warns once where the
  step rule allows growth;
* :class:`EarlyStopping` stops after ``n_iter_no_change`` rounds without progress on
  the watched curve and cuts the model back to its best round (``"early_stopping"``);
* :class:`Progress` prints progress lines (``verbose``);
* :class:`~oracleboost.engine.callbacks.SklearnCallbacks` drives scikit-learn's
  callbacks (``set_callbacks``) and stops when one asks (``"callback"``).

A monitor has six hooks, each optional: ``start(run)`` once before the first round,
``before(run)`` before each round is asked for, ``veto(run, result)`` before a round
is committed (a reason discards the round),
``decorate(run, records)`` to add entries to the round's records before they enter the
history, ``after(run, records, stop)`` once the round is committed (a reason stops the
fit; ``stop`` is the reason already given, if any), and ``finish(run)`` after the
last round.  Each hook costs O(1) in the number of rounds run so far, except where a
scikit-learn callback asks for a ``fitted_estimator`` (a copy of the model: see
:mod:`.callbacks`).
"""

from __future__ import annotations

import copy
import math
import sys
import time
import warnings
from collections.abc import Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost.engine.eval_sets import EvalSet
from oracleboost.engine.model import ModelAt
from oracleboost.engine.rounds import BoostingWarning, RoundResult, StopReason

if TYPE_CHECKING:  # pragma: no cover
    from oracleboost.engine.loop import Run

__all__ = [
    "Monitor",
    "NonFiniteLoss",
    "EvalCurves",
    "Divergence",
    "EarlyStopping",
    "Progress",
    "DIVERGENCE_FACTOR",
]

#: A loss above this multiple of its best value so far counts as diverging.  Descent
#: methods never leave their best value behind by such a factor; a factor of 2 catches a
#: slow drift (residual projection with a constant step doubles its loss within a few
#: hundred rounds of its best) well before it explodes.
DIVERGENCE_FACTOR = 2.0


class Monitor:
    """Watches one fit's rounds (see the module docstring); every hook does nothing
    unless a subclass says otherwise."""

    def start(self, run: Run) -> None:
        """Before the first round of this fit (after a warm start's earlier rounds)."""

    def before(self, run: Run) -> None:
        """Before the booster is asked for the next round."""

    def veto(self, run: Run, result: RoundResult) -> StopReason | None:
        """Before ``result`` is committed: a reason discards the round and stops."""
        return None

    def decorate(self, run: Run, records: Sequence[dict[str, float]]) -> None:
        """Add entries to the committed round's records (the model already has it)."""

    def after(self, run: Run, records: Sequence[dict[str, float]],
              stop: StopReason | None) -> StopReason | None:
        """The round is committed: a reason stops the fit."""
        return None

    def finish(self, run: Run) -> None:
        """After the last round (or an interrupt)."""


def log_of_loss(value: float, is_log: bool) -> float:
    """log(loss); −inf for a loss of 0 or below (no ratio to its best is defined)."""
    if is_log:
        return float(value)
    return math.log(value) if value > 0 else -math.inf


class NonFiniteLoss(Monitor):
    """A round whose loss is NaN or infinite is discarded and the fit stops
    (``"non_finite"``).  Boosters that work in log space record ``log_loss``, whose
    finiteness is what counts (their risk may underflow to 0), and a ``loss`` of +inf:
    a finite ``log_loss`` beyond float64's exponent (a step that threw the margins off)."""

    def veto(self, run: Run, result: RoundResult) -> StopReason | None:
        if not result.records:
            return None
        record = result.records[-1]
        value = record["log_loss"] if "log_loss" in record else record["loss"]
        if math.isfinite(value) and record.get("loss", 0.0) != math.inf:
            return None
        t = len(run.history)
        warnings.warn(
            f"{type(run.booster).__name__}: the loss after round {t + 1} is not finite "
            f"({record.get('loss')}); that round was discarded and fitting "
            f"stopped after {t} rounds (stop_reason_='non_finite')",
            BoostingWarning,
            stacklevel=run.stacklevel,
        )
        return StopReason.NON_FINITE


class EvalCurves(Monitor):
    """The booster's own loss (and a classifier's error) on each watched set after every
    weak learner, from the model's running scores: each round predicts only its new
    hypotheses on a set (see :mod:`.validation`); and each ``eval_metric`` scorer's
    value, the scorer given a shallow copy of the booster whose model answers on the set
    from those running scores (:class:`~oracleboost.engine.model.ModelAt`): one
    scorer call per round, set and metric, with no prediction of the model."""

    def __init__(self, evals: Sequence[EvalSet], metrics: tuple[str, ...]) -> None:
        self.evals, self.metrics = list(evals), metrics

    def start(self, run: Run) -> None:
        for ev in self.evals:
            run.history.declare(*(ev.key(m) for m in (*self.metrics, *ev.scorers)))
            ev.scores = run.model.running_scores(ev.X)
            if ev.offset is not None:  # the set's own starting scores (eval_init_score)
                ev.scores.intercept = ev.scores.intercept + ev.offset
                if not run.model.n_rounds:  # (nothing to catch up: a fresh fit)
                    continue
            ev.scores.catch_up(run.model)  # a warm start: its rounds so far, once
        # the booster as a scorer sees it: its fitted attributes, the model swapped in
        self.view = copy.copy(run.booster) if any(ev.scorers for ev in self.evals) else None

    def decorate(self, run: Run, records: Sequence[dict[str, float]]) -> None:
        for ev in self.evals:
            values = []
            for scores in ev.scores.advance(run.model):
                value = run.booster._eval_metrics(run.problem, ev.target, ev.weight, scores)
                if ev.scorers:
                    value.update(self._scored(run, ev, scores))
                values.append(value)
            # one model round per record (one record per weak learner)
            for record, value in zip(records, values, strict=True):
                for metric, v in value.items():
                    record[ev.key(metric)] = v

    def _scored(self, run: Run, ev: EvalSet, scores: np.ndarray) -> dict[str, float]:
        """Each scorer of ``ev`` on the model after the round just summed."""
        view = self.view
        view.ensemble_ = ModelAt(run.model, ev.scores.done, ev.X, scores)
        X, y = ev.given
        out = {}
        for name, scorer in ev.scorers.items():
            try:
                value = scorer(view, X, y, **ev.metadata)
            except (TypeError, ValueError, AttributeError) as exc:  # (AttributeError: a
                # scorer that needs predict_proba of a regressor)
                raise _naming(exc, f"eval_metric {name!r} on eval set {ev.name!r}") from exc
            if isinstance(value, bool) or not isinstance(value, Real):
                raise TypeError(
                    f"eval_metric {name!r} returned {type(value).__name__} {value!r}; a "
                    "scorer must return one number"
                )
            out[name] = float(value)
        view.ensemble_ = None  # the model goes on growing: hold no cut of it
        return out


def _naming(exc: Exception, where: str) -> Exception:
    """``exc`` again, its message prefixed by ``where`` (``exc`` itself when its type
    cannot be made from a message alone)."""
    try:
        return type(exc)(f"{where}: {exc}")
    except Exception:  # an exception type with other required arguments
        return exc


class Divergence(Monitor):
    """Judge the loss against its best so far, on log(loss) (the log-space boosters
    record it directly; the others' losses are positive or exactly 0).  Past
    :data:`DIVERGENCE_FACTOR` times the best: stop (``"diverged"``) where the booster's
    theory promises descent, warn once and go on where its step rule allows growth."""

    def __init__(self, growth_allowed: bool, hint: str) -> None:
        self.growth_allowed, self.hint = growth_allowed, hint
        self.warned = False

    def start(self, run: Run) -> None:
        self.log_key = "log_loss" if "log_loss" in run.history.keys() else None
        key = self.log_key or "loss"
        self.best = min((log_of_loss(v, bool(self.log_key)) for v in run.history.column(key)),
                        default=math.inf)

    def after(self, run: Run, records: Sequence[dict[str, float]],
              stop: StopReason | None) -> StopReason | None:
        if not records:
            return None
        last = records[-1]
        value = log_of_loss(last[self.log_key or "loss"], bool(self.log_key))
        verdict = None
        if stop is None and math.isfinite(self.best) and (
            value > self.best + math.log(DIVERGENCE_FACTOR)
        ):
            what = (
                f"{type(run.booster).__name__}: the loss rose to {last['loss']:.6g}, "
                f"more than {DIVERGENCE_FACTOR:g} times its best value "
                f"({math.exp(self.best):.6g}), at round {len(run.history)}"
            )
            if not self.growth_allowed:
                verdict = StopReason.DIVERGED
                warnings.warn(f"{what}; fitting stopped (stop_reason_='diverged'). "
                              f"{self.hint}", BoostingWarning, stacklevel=run.stacklevel)
            elif not self.warned:
                self.warned = True
                warnings.warn(f"{what}; this step rule allows the loss to rise, so fitting "
                              "goes on (history_['loss'] shows the curve)", BoostingWarning,
                              stacklevel=run.stacklevel)
        self.best = min(self.best, value)
        return verdict


class EarlyStopping(Monitor):
    """Watch one curve; stop after ``patience`` rounds without progress and cut the
    model back to the best round (scikit-learn's ``n_iter_no_change``; LightGBM's
    ``best_iteration`` for what is kept).

    A value below ``best − tol`` is progress and restarts the count.  The best point
    (the smallest value, even by less than ``tol``) is where the model is cut back to:
    ``rows`` history records, ``rounds`` model rounds and the booster's ``state`` after
    it (states are never changed in place, so keeping a reference is enough).
    ``curve`` is the watched value after each round, the cut ones included: a
    continuation (warm start) extends the curve up to its best round.
    """

    def __init__(self, key: str, patience: int, tol: float, earlier: Sequence[float] = ()) -> None:
        self.key, self.patience, self.tol = key, int(patience), float(tol)
        self.curve = list(earlier[: int(np.argmin(earlier)) + 1] if len(earlier) else ())
        self.waited = 0

    def start(self, run: Run) -> None:
        seen = run.history.column(self.key)
        value = seen[-1] if seen else math.inf
        self.best = value if math.isfinite(value) else math.inf
        self.rows, self.rounds, self.state = len(run.history), run.model.n_rounds, run.state

    def update(self, value: float, rows: int, rounds: int, state: Any) -> bool:
        """Take the value after a round; True when the patience has run out."""
        progress = value < self.best - self.tol  # False for NaN
        if value < self.best:
            self.best, self.rows, self.rounds, self.state = value, rows, rounds, state
        self.waited = 0 if progress else self.waited + 1
        return self.waited >= self.patience

    def after(self, run: Run, records: Sequence[dict[str, float]],
              stop: StopReason | None) -> StopReason | None:
        if not records:
            return None
        value = records[-1][self.key]
        self.curve.append(value)
        patience_out = self.update(value, len(run.history), run.model.n_rounds, run.state)
        return StopReason.EARLY_STOPPING if patience_out and stop is None else None

    def finish(self, run: Run) -> None:
        if self.rows < len(run.history):
            ran = len(run.history)
            run.model.truncate(self.rounds)
            run.history.truncate(self.rows)
            run.state = self.state
            if run.booster.verbose:
                print(f"kept the first {self.rows} of {ran} weak learners, where "
                      f"{self.key} was least ({self.best:.6g})", file=sys.stdout)


class Progress(Monitor):
    """``verbose``: a line every ~10% of the budget (every round if ``verbose > 1``)."""

    def __init__(self, verbose: int, n_estimators: int) -> None:
        self.every = 1 if verbose > 1 else max(1, n_estimators // 10)
        self.last = n_estimators - 1

    def start(self, run: Run) -> None:
        self.clock = time.perf_counter()

    def after(self, run: Run, records: Sequence[dict[str, float]],
              stop: StopReason | None) -> StopReason | None:
        first = len(run.history) - len(records)
        for i, record in enumerate(records):
            t = first + i
            if t == 0:
                print(f"{'round':>7} " + " ".join(f"{k:>12}" for k in record), file=sys.stdout)
            if t % self.every == 0 or t == self.last:
                cols = " ".join(f"{v:12.6g}" for v in record.values())
                print(f"{t + 1:7d} {cols}   ({time.perf_counter() - self.clock:.1f}s)",
                      file=sys.stdout)
        return None
