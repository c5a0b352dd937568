"""Boosting algorithms as scikit-learn estimators."""

from .base import Ensemble, StopReason
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
]
