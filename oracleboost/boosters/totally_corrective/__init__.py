"""Totally corrective boosting: column generation over any oracle (LPBoost, ERLPBoost,
SoftBoost, TotalBoost)."""

from oracleboost.boosters.totally_corrective.estimator import (
    METHODS,
    TotallyCorrectiveClassifier,
    erlpboost_round_bound,
    softboost_round_bound,
)

__all__ = [
    "TotallyCorrectiveClassifier",
    "METHODS",
    "erlpboost_round_bound",
    "softboost_round_bound",
]
