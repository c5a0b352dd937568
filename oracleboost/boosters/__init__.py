"""Boosting algorithms as scikit-learn estimators."""

from .base import Ensemble, StopReason
from .coordinate import CoordinateBoostingClassifier
from .functional import FunctionalGradientRegressor

__all__ = [
    "CoordinateBoostingClassifier",
    "FunctionalGradientRegressor",
    "Ensemble",
    "StopReason",
]
