"""Fast margin maximization by dual acceleration (Ji, Srebro & Telgarsky 2021)."""

from oracleboost.boosters.accelerated.estimator import (
    METHODS,
    PROVEN_STOCHASTIC,
    AcceleratedMarginClassifier,
    MomentumMethod,
)

__all__ = ["AcceleratedMarginClassifier", "MomentumMethod", "METHODS", "PROVEN_STOCHASTIC"]
