"""Hypothesis classes behind the Oracle protocol (see :mod:`oracleboost.oracles.base`)."""

from oracleboost.oracles.approximate import ApproximateOracle
from oracleboost.oracles.base import (
    BinaryOnlyOracleError,
    BoundOracle,
    Capabilities,
    Hypothesis,
    NonFiniteOutput,
    Oracle,
    OracleCapabilityError,
)
from oracleboost.oracles.cache import CachedOracle
from oracleboost.oracles.defaults import default_oracle
from oracleboost.oracles.hist_trees import HistTree, HistTreeOracle
from oracleboost.oracles.lightgbm import LightGBMOracle
from oracleboost.oracles.matrix import LinearOracle, MatrixOracle
from oracleboost.oracles.per_class import PerClassHypothesis, PerClassOracle
from oracleboost.oracles.sklearn import MLPOracle, SklearnOracle, TreeOracle
from oracleboost.oracles.stumps import StumpOracle
from oracleboost.oracles.tree_ensemble import EnsembleTree, TreeEnsembleOracle

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
    "HistTreeOracle",
    "HistTree",
    "LightGBMOracle",
    "SklearnOracle",
    "MLPOracle",
    "MatrixOracle",
    "LinearOracle",
    "TreeEnsembleOracle",
    "EnsembleTree",
    "CachedOracle",
    "ApproximateOracle",
    "PerClassOracle",
    "PerClassHypothesis",
    "default_oracle",
]
