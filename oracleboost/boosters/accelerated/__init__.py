"""Fast margin maximization by dual acceleration (Ji, Srebro & Telgarsky 2021)."""

from oracleboost.boosters.accelerated.estimator import (
    METHODS,
    PROVEN_STOCHASTIC,
    AcceleratedMarginClassifier,
    MomentumMethod,
    PairwiseKernel,
)

__all__ = ["AcceleratedMarginClassifier", "MomentumMethod", "PairwiseKernel", "METHODS",
           "PROVEN_STOCHASTIC"]
