"""Small, fast instances of every booster and every oracle, by name: the one place the
tests' parametrised walks over boosters and oracles take them from (in the spirit of
scikit-learn's ``instance_generator``).

* :data:`BOOSTERS`: every registered booster (``oracleboost.boosters.BOOSTERS``) as a
  :class:`BoosterInstance`, then :data:`VARIANTS`, configurations whose code paths the
  registered parameters do not reach (another step rule, mirror map, sampling method,
  projection or loss).  ``instance.make(oracle, **params)`` is a new estimator with few
  rounds; ``oracle=None`` leaves the booster's default oracle.
* :data:`ORACLES`: every oracle class, in the configurations the tests use, as an
  :class:`OracleInstance`; ``instance.make(H=..., cache_dir=...)`` is a new oracle.  The
  finite classes of a fixed matrix (``rows``) are fitted on X holding row indices into
  ``H``; :func:`X_for` gives the X an oracle is fitted on.

A booster added to the registry joins every walk over :data:`BOOSTERS`; an oracle class
added to the library joins the walks by one entry in :data:`ORACLES`
(tests/test_every_oracle.py checks that every public oracle class has one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from oracleboost.boosters import (
    BOOSTERS as REGISTERED,
)
from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import (
    ApproximateOracle,
    CachedOracle,
    HistTreeOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    PerClassOracle,
    SklearnOracle,
    StumpOracle,
    TreeEnsembleOracle,
    TreeOracle,
)

#: Parameters that keep a registered booster going on the tests' small data.
#:
#: LPBoost and ERLPBoost take ν = N/2 by default (``TotallyCorrectiveClassifier``'s
#: docstring, and so the registry): on the tests' few, nearly separable rows the
#: soft-margin optimum is then reached within a round or two and the fit stops with its
#: certificate closed, leaving no rounds to interrupt, call back or continue.  The tests
#: fit those two with ν = 5, the capping the registry gave them before.
SEVERAL_ROUNDS: dict[str, dict[str, Any]] = {"lpboost": {"nu": 5}, "erlpboost": {"nu": 5}}

#: Rounds of a small instance when a test asks for no other number.
ROUNDS = 10


def make(spec, oracle=None, **params):
    """``spec.make(oracle, **params)``, with :data:`SEVERAL_ROUNDS`' parameters under
    ``params``."""
    return spec.make(oracle, **{**SEVERAL_ROUNDS.get(spec.name, {}), **params})


# -- boosters ---------------------------------------------------------------------------
@dataclass(frozen=True)
class BoosterInstance:
    """One booster configuration.

    ``build(oracle, **params)`` makes the estimator; ``task`` is the registry's
    (``binary``, ``classification``, ``regression``, ``ranking``) and ``query`` the
    capability it asks of an oracle (``correlate``, ``project`` or
    ``correlation_vector``: then only a finite class with its whole correlation vector
    serves, and the tests' default is ``LinearOracle``)."""

    name: str
    build: Callable[..., Any]
    task: str
    query: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def finite(self) -> bool:
        return self.query == "correlation_vector"

    @property
    def classifier(self) -> bool:
        return self.task in ("binary", "classification")

    def make(self, oracle=None, **params):
        """A new estimator: :data:`ROUNDS` rounds, seed 0, this instance's parameters,
        then ``params``."""
        return self.build(oracle, **{"n_estimators": ROUNDS, "random_state": 0,
                                     **self.params, **params})


def _registered(spec) -> BoosterInstance:
    # dual acceleration's certificate would stop it within the few rounds asked: tol 0
    params = {"tol": 0.0} if spec.query == "correlation_vector" else {}
    return BoosterInstance(spec.name, lambda oracle, **kw: make(spec, oracle, **kw),
                           spec.task, spec.query, params)


#: Configurations whose code paths the registered parameters do not reach.
VARIANTS: dict[str, BoosterInstance] = {
    instance.name: instance for instance in (
        BoosterInstance("coordinate_wolfe", CoordinateBoostingClassifier, "binary",
                        "correlate", {"step": "wolfe", "learning_rate": 0.5}),
        BoosterInstance("mirror_euclidean_smooth", MirrorBoostingClassifier, "binary",
                        "correlate",
                        {"mirror": "euclidean", "variant": "smooth", "smoothness": 3.0}),
        BoosterInstance("mirror_sparse", MirrorBoostingClassifier, "binary", "correlate",
                        {"mirror": "euclidean", "variant": "sparse"}),
        BoosterInstance("accelerated_stochastic", AcceleratedMarginClassifier,
                        "classification", "correlation_vector",
                        {"method": "stochastic", "tol": 0.0}),
        BoosterInstance("functional_residual", FunctionalGradientRegressor, "regression",
                        "project",
                        {"projection": "residual", "schedule": "inv_sqrt",
                         "learning_rate": 0.5}),
        BoosterInstance("functional_repeated", FunctionalGradientRegressor, "regression",
                        "project", {"projection": "repeated"}),
        BoosterInstance("functional_multiclass_hinge", FunctionalGradientClassifier,
                        "classification", "project", {"loss": "multiclass_hinge"}),
    )
}

#: Every registered booster, then the variants.
BOOSTERS: dict[str, BoosterInstance] = {
    name: _registered(spec) for name, spec in REGISTERED.items()} | VARIANTS

#: The registered boosters alone.
REGISTERED_BOOSTERS: dict[str, BoosterInstance] = {
    name: BOOSTERS[name] for name in REGISTERED}

#: One registered booster per query an oracle answers: the axis on which every oracle is
#: tested (``correlate``: AdaBoost; ``project``: least-squares functional gradient;
#: ``correlation_vector``: dual acceleration, finite classes only).
BY_QUERY: dict[str, str] = {"correlate": "adaboost", "project": "gradient-regression",
                            "correlation_vector": "accelerated"}


# -- oracles ----------------------------------------------------------------------------
@dataclass(frozen=True)
class OracleInstance:
    """One oracle configuration: ``build(H, cache_dir)`` makes it; ``rows``: X holds row
    indices into the hypothesis matrix ``H``; ``finite``: a finite class with its whole
    correlation vector (what dual acceleration needs)."""

    name: str
    build: Callable[[Any, Any], Any]
    rows: bool = False
    finite: bool = False

    def make(self, H=None, cache_dir=None):
        if self.rows and H is None:
            raise ValueError(f"oracle {self.name!r} needs its hypothesis matrix H")
        if self.name.startswith("cached") and cache_dir is None:
            raise ValueError(f"oracle {self.name!r} needs a cache directory")
        return self.build(H, cache_dir)

    def serves(self, booster: BoosterInstance) -> bool:
        """Whether ``booster`` can fit with this oracle (README's table: dual
        acceleration needs a finite class)."""
        return self.finite or not booster.finite


def _tree_ensemble(n_features: int = 4) -> TreeEnsembleOracle:
    """The 12 trees of a small LightGBM model over ``n_features`` features of values in
    [-1, 1] (the walks' X), as a finite class."""
    import lightgbm as lgb

    rng = np.random.RandomState(1)
    X = rng.uniform(-1, 1, size=(200, n_features))
    y = np.sin(3 * X[:, 0]) + X[:, 1] - X[:, -1] ** 2 + 0.1 * rng.randn(200)
    booster = lgb.train({"objective": "regression", "num_leaves": 4, "verbose": -1,
                         "min_data_in_leaf": 5, "num_threads": 1}, lgb.Dataset(X, y), 12)
    return TreeEnsembleOracle.from_lightgbm(booster)


ORACLES: dict[str, OracleInstance] = {
    instance.name: instance for instance in (
        OracleInstance("stumps", lambda H, c: StumpOracle()),
        OracleInstance("stumps_exact", lambda H, c: StumpOracle(exact=True)),
        OracleInstance("tree", lambda H, c: TreeOracle(max_depth=2)),
        OracleInstance("lightgbm", lambda H, c: LightGBMOracle(num_leaves=4,
                                                               min_data_in_leaf=5)),
        OracleInstance("hist_tree", lambda H, c: HistTreeOracle(num_leaves=4,
                                                                min_data_in_leaf=5)),
        OracleInstance("per_class", lambda H, c: PerClassOracle(HistTreeOracle(
            num_leaves=4, min_data_in_leaf=5))),
        OracleInstance("sklearn", lambda H, c: SklearnOracle(
            DecisionTreeRegressor(max_depth=2))),
        OracleInstance("sklearn_classifier", lambda H, c: SklearnOracle(
            DecisionTreeClassifier(max_depth=1))),
        OracleInstance("sklearn_ridge", lambda H, c: SklearnOracle(Ridge(alpha=1.0))),
        OracleInstance("sklearn_no_weights", lambda H, c: SklearnOracle(
            KNeighborsRegressor(5))),
        OracleInstance("mlp", lambda H, c: MLPOracle(max_iter=15)),
        OracleInstance("matrix", lambda H, c: MatrixOracle(H), rows=True, finite=True),
        OracleInstance("linear", lambda H, c: LinearOracle(), finite=True),
        OracleInstance("cached", lambda H, c: CachedOracle(LinearOracle(), str(c)),
                       finite=True),
        OracleInstance("cached_stumps", lambda H, c: CachedOracle(StumpOracle(), str(c))),
        OracleInstance("approximate",
                       lambda H, c: ApproximateOracle(MatrixOracle(H), c0=0.5),
                       rows=True, finite=True),
        OracleInstance("tree_ensemble", lambda H, c: _tree_ensemble(), finite=True),
    )
}

#: One configuration of each oracle class (the wrapped scikit-learn estimator a depth-2
#: tree, the cache around LinearOracle): the oracle axis of the product tests.
ONE_PER_CLASS = ("stumps", "tree", "lightgbm", "sklearn", "mlp", "matrix", "linear",
                 "cached", "approximate")


def X_for(oracle: str, X_features: np.ndarray) -> np.ndarray:
    """The X ``oracle`` is fitted on: the features, or for a class of a fixed matrix the
    row indices 0..n-1 (as a column of floats)."""
    if ORACLES[oracle].rows:
        return np.arange(len(X_features), dtype=float)[:, None]
    return X_features
