"""Boosting algorithms as scikit-learn estimators."""

from .base import DIVERGENCE_FACTOR, BoostingWarning, Ensemble, StopReason
from .coordinate import CoordinateBoostingClassifier
from .functional import (
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
)

__all__ = [
    "CoordinateBoostingClassifier",
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "Ensemble",
    "StopReason",
    "BoostingWarning",
    "DIVERGENCE_FACTOR",
]
