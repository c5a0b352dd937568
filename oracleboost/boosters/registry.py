"""``BOOSTERS``: every booster the library offers, by name, in one place.

Each entry is a :class:`BoosterSpec`: the estimator class, the parameters that make the
named algorithm (AdaBoost is the coordinate booster with the exponential loss and the
AdaBoost step), the task, the query it asks the oracle, and the paper.  The grid
(:mod:`oracleboost.grid`), the command line, the ``swap-weak-learner`` experiment, the
benchmarks and the contract tests all read it, so a new booster joins them by one call
of :func:`register_booster`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oracleboost.oracles.base import Oracle

__all__ = ["BoosterSpec", "BOOSTERS", "register_booster"]

TASKS = ("binary", "classification", "regression", "ranking")


@dataclass(frozen=True)
class BoosterSpec:
    """One named booster.

    Attributes
    ----------
    name : str
        The registry key (``oracleboost grid --boosters NAME``).
    estimator : type
        The estimator class.
    params : dict
        The parameters that make this algorithm (the rest are the class' defaults).
    task : {"binary", "classification", "regression", "ranking"}
        What it fits: two classes only, any number of classes, a real target, or
        relevance grades within queries (``fit(X, y, qid)``).
    query : str
        The capability it needs of an oracle (``correlate``, ``project`` or
        ``correlation_vector``); the oracles that have it can be swapped in.
    paper : str
        Where the algorithm comes from.
    """

    name: str
    estimator: type
    params: dict[str, Any] = field(default_factory=dict)
    task: str = "classification"
    query: str = "correlate"
    paper: str = ""

    def make(self, oracle: Oracle | None = None, **params: Any) -> Any:
        """A new, unfitted estimator: ``estimator(oracle, **self.params, **params)``."""
        return self.estimator(oracle, **{**self.params, **params})

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.estimator.__name__}({params})"


#: Every booster, by name, in the order the tables list them.
BOOSTERS: dict[str, BoosterSpec] = {}


def register_booster(spec: BoosterSpec) -> BoosterSpec:
    """Add ``spec`` to :data:`BOOSTERS` under ``spec.name`` (a name is taken once)."""
    if spec.task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {spec.task!r}")
    if BOOSTERS.get(spec.name, spec) != spec:
        raise ValueError(f"a booster named {spec.name!r} is already registered")
    BOOSTERS[spec.name] = spec
    return spec


def _register_the_library_s() -> None:
    from oracleboost.boosters.accelerated.estimator import AcceleratedMarginClassifier
    from oracleboost.boosters.coordinate.estimator import CoordinateBoostingClassifier
    from oracleboost.boosters.functional.estimator import (
        FunctionalGradientClassifier,
        FunctionalGradientRanker,
        FunctionalGradientRegressor,
    )
    from oracleboost.boosters.mirror.estimator import MirrorBoostingClassifier
    from oracleboost.boosters.totally_corrective.estimator import TotallyCorrectiveClassifier

    telgarsky = "Telgarsky, JMLR 2012; ICML 2013"
    for spec in (
        BoosterSpec("adaboost", CoordinateBoostingClassifier,
                    {"loss": "exponential", "step": "adaboost"}, "binary", "correlate",
                    "Freund & Schapire, JCSS 1997; " + telgarsky),
        BoosterSpec("logistic-wolfe", CoordinateBoostingClassifier,
                    {"loss": "logistic", "step": "wolfe"}, "binary", "correlate", telgarsky),
        BoosterSpec("maboost", MirrorBoostingClassifier, {}, "classification", "correlate",
                    "Naghibi & Pfister, NeurIPS 2014"),
        BoosterSpec("madaboost", MirrorBoostingClassifier, {"variant": "madaboost"},
                    "binary", "correlate", "Naghibi & Pfister, NeurIPS 2014"),
        BoosterSpec("gradient-logistic", FunctionalGradientClassifier,
                    {"loss": "logistic", "learning_rate": 0.5}, "binary", "project",
                    "Grubb & Bagnell, ICML 2011; Friedman, AoS 2001"),
        BoosterSpec("gradient-softmax", FunctionalGradientClassifier,
                    {"loss": "softmax"}, "classification", "project",
                    "Grubb & Bagnell, ICML 2011; Friedman, AoS 2001"),
        BoosterSpec("gradient-regression", FunctionalGradientRegressor, {}, "regression",
                    "project", "Grubb & Bagnell, ICML 2011; Friedman, AoS 2001"),
        BoosterSpec("gradient-ranking", FunctionalGradientRanker, {}, "ranking", "project",
                    "Grubb & Bagnell, ICML 2011"),
        BoosterSpec("accelerated", AcceleratedMarginClassifier, {}, "classification",
                    "correlation_vector", "Ji, Srebro & Telgarsky, ICML 2021"),
        # The totally corrective methods share ν = 5 (a count: about five rows may
        # violate the soft margin), so the first three solve one soft-margin problem;
        # TotalBoost is the hard margin, ν = 1.  ε (``tol``) trades the accuracy
        # guarantee against rounds (the bounds grow as 1/ε²) and, for ERLPBoost, the
        # cost of a round (η = 2 ln(N/ν)/ε stiffens its entropy solve).  Measured on
        # breast cancer stumps (ν = 5; LPBoost's optimum 0.141; a shared 2-core
        # machine): ERLPBoost ε = 0.1 ends at 0.134 after 59 rounds (2.6 s), ε = 0.05 at
        # 0.139 after 78 (7.1 s); SoftBoost ε = 0.02 at 0.140 after 96 (6.4 s), ε = 0.01 at
        # 0.141 after 128 (20 s).  LPBoost's ``tol`` is the certificate's gap (1e-6).
        # LPBoost and ERLPBoost take the default ν = N/2: with ν = 5 on hastie_10_2 (rows
        # stumps do not separate in 30 rounds) the LP's value stayed 0 and its only
        # optimal vote was the zero vote (test error 0.4967, chance); N/2 gave 0.22–0.25.
        BoosterSpec("lpboost", TotallyCorrectiveClassifier, {"method": "lpboost"},
                    "classification", "correlate", "Demiriz, Bennett & Shawe-Taylor, MLJ 2002"),
        BoosterSpec("erlpboost", TotallyCorrectiveClassifier,
                    {"method": "erlpboost", "tol": 0.1}, "binary", "correlate",
                    "Warmuth, Glocer & Vishwanathan, ALT 2008"),
        BoosterSpec("softboost", TotallyCorrectiveClassifier,
                    {"method": "softboost", "nu": 5, "tol": 0.02}, "binary", "correlate",
                    "Warmuth, Glocer & Rätsch, NIPS 2007"),
        BoosterSpec("totalboost", TotallyCorrectiveClassifier,
                    {"method": "totalboost", "nu": 1, "tol": 0.02}, "binary", "correlate",
                    "Warmuth, Liao & Rätsch, ICML 2006"),
    ):
        register_booster(spec)


_register_the_library_s()
