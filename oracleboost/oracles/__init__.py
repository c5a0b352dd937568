"""Hypothesis classes behind the Oracle protocol (see :mod:`oracleboost.oracles.base`)."""

from .approximate import ApproximateOracle
from .base import (
    BinaryOnlyOracleError,
    BoundOracle,
    Capabilities,
    Hypothesis,
    NonFiniteOutput,
    Oracle,
    OracleCapabilityError,
)
from .cache import CachedOracle
from .defaults import default_oracle
from .lightgbm import LightGBMOracle
from .matrix import LinearOracle, MatrixOracle
from .sklearn import MLPOracle, SklearnOracle, TreeOracle
from .stumps import StumpOracle

__all__ = [
    "Oracle",
    "BoundOracle",
    "Hypothesis",
    "Capabilities",
    "OracleCapabilityError",
    "BinaryOnlyOracleError",
    "NonFiniteOutput",
    "StumpOracle",
    "TreeOracle",
    "LightGBMOracle",
    "SklearnOracle",
    "MLPOracle",
    "MatrixOracle",
    "LinearOracle",
    "CachedOracle",
    "ApproximateOracle",
    "default_oracle",
]
