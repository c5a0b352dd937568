"""Boosting algorithms as scikit-learn estimators, and what a new booster is built from.

Users fit the estimators (one per paper) or pick one by name from :data:`BOOSTERS`.
Their step sizes come from one family of rules and schedules (:mod:`.steps`: the table
of which booster uses which), MABoost's geometry from the mirror maps
(:mod:`.mirror_maps`), and dual acceleration's methods are :class:`MomentumMethod`
objects: each parameter takes the object or its name.
Booster authors subclass :class:`BaseBooster` and write ``_setup``, ``_initial_state``
and ``_round`` with the vocabulary of :mod:`.rounds` (:class:`RoundResult`,
:class:`Problem`, :class:`StopReason`, :func:`draw_seed`); the loop (:mod:`.loop`),
its monitors (:mod:`.monitors`) and the model (:mod:`.model`: :class:`Ensemble`,
:class:`Refit` for totally corrective rounds) do the rest.
"""

from oracleboost.boosters.accelerated.estimator import (
    METHODS,
    AcceleratedMarginClassifier,
    MomentumMethod,
)
from oracleboost.boosters.coordinate.estimator import CoordinateBoostingClassifier
from oracleboost.boosters.functional.estimator import (
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
)
from oracleboost.boosters.mirror.estimator import MirrorBoostingClassifier
from oracleboost.boosters.mirror.maps import MIRROR_MAPS, EntropyMap, EuclideanMap, MirrorMap
from oracleboost.boosters.registry import BOOSTERS, BoosterSpec, register_booster
from oracleboost.boosters.totally_corrective.estimator import TotallyCorrectiveClassifier
from oracleboost.engine.base import BaseBooster
from oracleboost.engine.classifier import ScoreClassifierMixin, SignedColumn
from oracleboost.engine.history import History
from oracleboost.engine.loop import reraise_interrupts
from oracleboost.engine.model import Ensemble, LinearModel, NonFinitePrediction, Refit
from oracleboost.engine.monitors import DIVERGENCE_FACTOR, Monitor
from oracleboost.engine.rounds import (
    BoostingWarning,
    Problem,
    RoundResult,
    StopReason,
    draw_seed,
    seed_generator,
)
from oracleboost.optim.steps import (
    SCHEDULES,
    STEP_RULES,
    AdaBoostStep,
    ClosedFormStep,
    ConstantMomentum,
    ConstantStep,
    HorizonStep,
    InverseSqrtStep,
    InverseTimeStep,
    Momentum,
    NesterovMomentum,
    OptimalStep,
    QuadraticStep,
    RoundView,
    Schedule,
    SmoothnessStep,
    StepRule,
    StepState,
    WolfeStep,
    get_schedule,
    get_step,
)

__all__ = [
    # the boosters
    "CoordinateBoostingClassifier",
    "MirrorBoostingClassifier",
    "AcceleratedMarginClassifier",
    "TotallyCorrectiveClassifier",
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "BOOSTERS",
    "BoosterSpec",
    "register_booster",
    # step rules and schedules (steps.py), mirror maps, dual acceleration's methods
    "StepRule",
    "Schedule",
    "Momentum",
    "StepState",
    "RoundView",
    "QuadraticStep",
    "WolfeStep",
    "AdaBoostStep",
    "OptimalStep",
    "ClosedFormStep",
    "ConstantStep",
    "InverseSqrtStep",
    "InverseTimeStep",
    "SmoothnessStep",
    "HorizonStep",
    "NesterovMomentum",
    "ConstantMomentum",
    "STEP_RULES",
    "SCHEDULES",
    "get_step",
    "get_schedule",
    "MirrorMap",
    "EntropyMap",
    "EuclideanMap",
    "MIRROR_MAPS",
    "MomentumMethod",
    "METHODS",
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
