"""Boosting algorithms as scikit-learn estimators."""

from .accelerated import AcceleratedMarginClassifier
from .base import DIVERGENCE_FACTOR, BoostingWarning, Ensemble, StopReason, reraise_interrupts
from .coordinate import CoordinateBoostingClassifier
from .functional import (
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
)
from .mirror import MirrorBoostingClassifier

__all__ = [
    "CoordinateBoostingClassifier",
    "MirrorBoostingClassifier",
    "AcceleratedMarginClassifier",
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "Ensemble",
    "StopReason",
    "BoostingWarning",
    "DIVERGENCE_FACTOR",
    "reraise_interrupts",
]
