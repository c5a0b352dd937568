"""Functional gradient boosting (Grubb & Bagnell 2011; Friedman 2001; Mason et al. 1999)."""

from oracleboost.boosters.functional.estimator import (
    PROJECTIONS,
    SCHEDULES,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
)

__all__ = [
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "PROJECTIONS",
    "SCHEDULES",
]
