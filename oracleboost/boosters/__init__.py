"""Boosting algorithms as scikit-learn estimators, and what a new booster is built from.

Users fit the estimators (one per paper) or pick one by name from :data:`BOOSTERS`.
Booster authors subclass :class:`BaseBooster` and write ``_setup``, ``_initial_state``
and ``_round`` with the vocabulary of :mod:`.rounds` (:class:`RoundResult`,
:class:`Problem`, :class:`StopReason`, :func:`draw_seed`); the loop (:mod:`.loop`),
its monitors (:mod:`.monitors`) and the model (:mod:`.model`: :class:`Ensemble`,
:class:`Refit` for totally corrective rounds) do the rest.
"""

from .accelerated import AcceleratedMarginClassifier
from .base import BaseBooster
from .classifier import ScoreClassifierMixin, SignedColumn
from .coordinate import CoordinateBoostingClassifier
from .functional import (
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
)
from .history import History
from .loop import reraise_interrupts
from .mirror import MirrorBoostingClassifier
from .model import Ensemble, LinearModel, NonFinitePrediction, Refit
from .monitors import DIVERGENCE_FACTOR, Monitor
from .registry import BOOSTERS, BoosterSpec, register_booster
from .rounds import BoostingWarning, Problem, RoundResult, StopReason, draw_seed, seed_generator
from .steps import STEP_RULES, StepRule, StepState, WolfeStep, get_step

__all__ = [
    # the boosters
    "CoordinateBoostingClassifier",
    "MirrorBoostingClassifier",
    "AcceleratedMarginClassifier",
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "BOOSTERS",
    "BoosterSpec",
    "register_booster",
    # step rules
    "StepRule",
    "StepState",
    "WolfeStep",
    "STEP_RULES",
    "get_step",
    # what fits report
    "StopReason",
    "BoostingWarning",
    "NonFinitePrediction",
    "DIVERGENCE_FACTOR",
    "reraise_interrupts",
    # building a booster
    "BaseBooster",
    "ScoreClassifierMixin",
    "SignedColumn",
    "Problem",
    "RoundResult",
    "Refit",
    "Ensemble",
    "LinearModel",
    "History",
    "Monitor",
    "draw_seed",
    "seed_generator",
]
