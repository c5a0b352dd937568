"""The vocabulary of a round: what a booster's ``_round`` reads and returns.

A booster file reads like its paper's algorithm box: ``_setup`` returns a
:class:`Problem` (what every round reads and never changes), ``_initial_state`` the
state before round 1, and ``_round(problem, state, model, t, budget)`` one round,
returned as a :class:`RoundResult`: the new state, the updates to the model, one
history record per weak learner, and a :class:`StopReason` or ``None``.  Oracle calls
take a seed from :func:`draw_seed`, so a query is a pure function of its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from oracleboost._typing import RandomStateLike
from oracleboost.engine.model import Refit

__all__ = [
    "StopReason",
    "BoostingWarning",
    "RoundResult",
    "Problem",
    "Refit",
    "seed_generator",
    "draw_seed",
]


class BoostingWarning(UserWarning):
    """A fit ended or went on in a way the user should know about (interrupt, divergence)."""


class StopReason(str, Enum):
    """Why fitting ended; kept as ``stop_reason_`` on every fitted booster."""

    MAX_ROUNDS = "max_rounds"  # the round budget n_estimators was used up
    ZERO_EDGE = "zero_edge"  # the oracle's best hypothesis has no correlation: stationary point
    PERFECT_HYPOTHESIS = "perfect_hypothesis"  # a hypothesis classifies every example right
    ZERO_HYPOTHESIS = "zero_hypothesis"  # the oracle returned h = 0 on the training points
    ZERO_GRADIENT = "zero_gradient"  # the loss is at its minimum on the training points
    INFINITE_STEP = "infinite_step"  # no example is hurt by h: the exact step is unbounded
    ZERO_STEP = "zero_step"  # the step rule gave 0 (e.g. the quadratic step, C_t^4 overflowing)
    INTERRUPTED = "interrupted"  # KeyboardInterrupt: the completed rounds are kept
    NON_FINITE = "non_finite"  # the next round's loss was NaN or infinite; it was discarded
    DIVERGED = "diverged"  # the loss grew past DIVERGENCE_FACTOR times its best value
    ZERO_WEIGHTS = "zero_weights"  # SparseBoost: every example's weight is exactly 0
    ZERO_TRAINING_ERROR = "zero_training_error"  # MadaBoost-type: ε_t = 0 makes η_t = 0
    GAP_CLOSED = "gap_closed"  # the margin certificate's gap fell below tol
    EARLY_STOPPING = "early_stopping"  # n_iter_no_change rounds without validation progress
    NOT_SEPARABLE = "not_separable"  # the upper bound on the max margin fell below tol
    CALLBACK = "callback"  # a scikit-learn callback asked the fit to stop
    SOLVER_FAILED = "solver_failed"  # an LP's solution failed its checks: the last good model
    INFEASIBLE = "infeasible"  # SoftBoost: no distribution keeps every edge below γ̂ − ε

    def __str__(self) -> str:
        return self.value

    @property
    def resumable(self) -> bool:
        """Whether ``warm_start`` may run more rounds after a fit that stopped here."""
        return self in (StopReason.MAX_ROUNDS, StopReason.INTERRUPTED,
                        StopReason.EARLY_STOPPING, StopReason.CALLBACK)


@dataclass(frozen=True)
class RoundResult:
    """What one round of a booster returns to the loop.

    Attributes
    ----------
    state : object
        The booster's state after the round (what ``warm_start`` continues from).
        States are never changed in place: the loop keeps references to earlier ones
        (early stopping's best round).
    terms : tuple of tuples
        Corrective updates, each applied as ``model.add(*term)``: for an
        :class:`~oracleboost.engine.model.Ensemble`, ``(h, coef, norm)`` with ``h``
        already detached (``coef · h`` is added; ``norm = max_i |h(x_i)|`` on the
        training rows); for a linear model, ``(w,)``.  Empty when the round stopped
        before taking a step.
    records : tuple of dict
        One history record per weak learner the round used (repeated projection uses
        several).  A record's ``time`` is scaled so that the round's records add up to
        the round's whole wall time (see :mod:`.loop`).
    stop : StopReason or None
        Why fitting ends after this round, or ``None`` to go on.
    refit : Refit or None
        A totally corrective update, applied after ``terms`` as ``model.refit(refit)``:
        hypotheses join and every coefficient is set (LPBoost and its family).
    """

    state: Any
    terms: tuple[tuple[Any, ...], ...] = ()
    records: tuple[dict[str, float], ...] = ()
    stop: StopReason | None = None
    refit: Refit | None = None

    @property
    def n_updates(self) -> int:
        """Model rounds this result adds (one per term, one for a refit)."""
        return len(self.terms) + (self.refit is not None)


@dataclass
class Problem:
    """What a fit's rounds read and never change: the data inside, the bound oracle, the
    resolved loss and options.  Boosters subclass it; ``signature`` identifies the data
    (``warm_start`` continues only on the same data)."""

    signature: str


_MAX_SEED = np.iinfo(np.int32).max


def seed_generator(random_state: RandomStateLike) -> np.random.RandomState | None:
    """The generator of a booster's oracle seeds, made once per fit from its
    ``random_state``: ``None`` when no seed was asked for (``random_state=None``, or
    numpy's global generator, which ``check_random_state(None)`` returns), else
    ``check_random_state(random_state)``.  Kept in the booster's state, so a warm start
    or an unpickled model goes on drawing the same way."""
    rng = check_random_state(random_state)
    return None if rng is np.random.mtrand._rand else rng


def draw_seed(rng: np.random.RandomState | None) -> int | None:
    """The ``random_state`` of one oracle call, from :func:`seed_generator`'s ``rng``.

    A seeded generator gives an int seed, drawn as
    ``sklearn.ensemble._base._set_random_states`` does, so a fixed ``random_state`` gives
    the same seeds, query by query.  ``None`` (the booster's ``random_state`` is None)
    gives ``None``: the oracle draws fresh randomness itself (scikit-learn's meaning of
    ``None``), and a :class:`~oracleboost.oracles.CachedOracle` keys the query as "any
    draw" and reuses a stored answer, as ``joblib.Memory`` does for any function.
    """
    return None if rng is None else int(rng.randint(_MAX_SEED))
