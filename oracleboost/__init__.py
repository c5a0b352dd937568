"""oracleboost: boosting where every booster talks to weak learners through an Oracle protocol.

The estimators, oracles, losses and the model files' functions are importable from here,
as in LightGBM and XGBoost::

    from oracleboost import CoordinateBoostingClassifier, StumpOracle

They are imported on first use (PEP 562's module ``__getattr__``), not by ``import
oracleboost``: the command line imports this package, and must start without loading
NumPy-heavy modules, scikit-learn, numba or LightGBM.  The submodules
(:mod:`oracleboost.boosters`, :mod:`oracleboost.oracles`, :mod:`oracleboost.losses`, ...)
hold everything else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from oracleboost._version import __version__

#: Public name -> the module that defines it (imported when the name is first read);
#: its keys are ``__all__`` (a literal below, for tools that read the source).
_LAZY: dict[str, str] = {
    # the boosters
    "CoordinateBoostingClassifier": "oracleboost.boosters",
    "MirrorBoostingClassifier": "oracleboost.boosters",
    "AcceleratedMarginClassifier": "oracleboost.boosters",
    "TotallyCorrectiveClassifier": "oracleboost.boosters",
    "FunctionalGradientRegressor": "oracleboost.boosters",
    "FunctionalGradientClassifier": "oracleboost.boosters",
    "FunctionalGradientRanker": "oracleboost.boosters",
    # the oracles: the protocol, the hypothesis classes and the wrappers
    "Oracle": "oracleboost.oracles",
    "StumpOracle": "oracleboost.oracles",
    "TreeOracle": "oracleboost.oracles",
    "HistTreeOracle": "oracleboost.oracles",
    "LightGBMOracle": "oracleboost.oracles",
    "SklearnOracle": "oracleboost.oracles",
    "MLPOracle": "oracleboost.oracles",
    "MatrixOracle": "oracleboost.oracles",
    "LinearOracle": "oracleboost.oracles",
    "TreeEnsembleOracle": "oracleboost.oracles",
    "CachedOracle": "oracleboost.oracles",
    "ApproximateOracle": "oracleboost.oracles",
    "PerClassOracle": "oracleboost.oracles",
    # the losses
    "Loss": "oracleboost.losses",
    "MarginLoss": "oracleboost.losses",
    "RegressionLoss": "oracleboost.losses",
    "MulticlassLoss": "oracleboost.losses",
    "RankingLoss": "oracleboost.losses",
    "Exponential": "oracleboost.losses",
    "Logistic": "oracleboost.losses",
    "Squared": "oracleboost.losses",
    "Absolute": "oracleboost.losses",
    "Huber": "oracleboost.losses",
    "Quantile": "oracleboost.losses",
    "SoftmaxCrossEntropy": "oracleboost.losses",
    "MulticlassHinge": "oracleboost.losses",
    "PairwiseHinge": "oracleboost.losses",
    # a fitted model in a file, and outside the library
    "save_model": "oracleboost.model_json",
    "load_model": "oracleboost.model_json",
    "to_lightgbm": "oracleboost.export.lightgbm",
}

__all__ = [
    "__version__",
    # the boosters
    "CoordinateBoostingClassifier",
    "MirrorBoostingClassifier",
    "AcceleratedMarginClassifier",
    "TotallyCorrectiveClassifier",
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    # the oracles: the protocol, the hypothesis classes and the wrappers
    "Oracle",
    "StumpOracle",
    "TreeOracle",
    "HistTreeOracle",
    "LightGBMOracle",
    "SklearnOracle",
    "MLPOracle",
    "MatrixOracle",
    "LinearOracle",
    "TreeEnsembleOracle",
    "CachedOracle",
    "ApproximateOracle",
    "PerClassOracle",
    # the losses
    "Loss",
    "MarginLoss",
    "RegressionLoss",
    "MulticlassLoss",
    "RankingLoss",
    "Exponential",
    "Logistic",
    "Squared",
    "Absolute",
    "Huber",
    "Quantile",
    "SoftmaxCrossEntropy",
    "MulticlassHinge",
    "PairwiseHinge",
    # a fitted model in a file, and outside the library
    "save_model",
    "load_model",
    "to_lightgbm",
]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports
    from oracleboost.boosters import (
        AcceleratedMarginClassifier,
        CoordinateBoostingClassifier,
        FunctionalGradientClassifier,
        FunctionalGradientRanker,
        FunctionalGradientRegressor,
        MirrorBoostingClassifier,
        TotallyCorrectiveClassifier,
    )
    from oracleboost.export.lightgbm import to_lightgbm
    from oracleboost.losses import (
        Absolute,
        Exponential,
        Huber,
        Logistic,
        Loss,
        MarginLoss,
        MulticlassHinge,
        MulticlassLoss,
        PairwiseHinge,
        Quantile,
        RankingLoss,
        RegressionLoss,
        SoftmaxCrossEntropy,
        Squared,
    )
    from oracleboost.model_json import load_model, save_model
    from oracleboost.oracles import (
        ApproximateOracle,
        CachedOracle,
        HistTreeOracle,
        LightGBMOracle,
        LinearOracle,
        MatrixOracle,
        MLPOracle,
        Oracle,
        PerClassOracle,
        SklearnOracle,
        StumpOracle,
        TreeEnsembleOracle,
        TreeOracle,
    )


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use, and keep the name here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'oracleboost' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
