"""The oracle a booster uses when it is given none, chosen by the query it asks.

Boosters learn what an oracle can do from the protocol (a declared capability), never
by importing a concrete oracle; the same holds for their defaults, which live here, in
the oracles' room, keyed by the capability the booster needs.
"""

from __future__ import annotations

from oracleboost.oracles.base import Oracle

__all__ = ["default_oracle", "DEFAULT_ORACLES"]


def _stumps() -> Oracle:
    from oracleboost.oracles.stumps import StumpOracle

    return StumpOracle()


def _trees() -> Oracle:
    from oracleboost.oracles.sklearn import TreeOracle

    return TreeOracle()


def _linear() -> Oracle:
    from oracleboost.oracles.matrix import LinearOracle

    return LinearOracle()


#: The default oracle for each query a booster may need: ±1 decision stumps for
#: weighted classification (``correlate``, ``multiclass_correlate``); scikit-learn
#: trees of depth 3 for least squares (``project``, ``multiclass_project``: gradient
#: boosting's usual weak learner); the coordinates of x for a finite class with its
#: whole correlation vector (``correlation_vector``: dual acceleration).
DEFAULT_ORACLES = {
    "correlate": _stumps,
    "multiclass_correlate": _stumps,
    "project": _trees,
    "multiclass_project": _trees,
    "correlation_vector": _linear,
}


def default_oracle(capability: str) -> Oracle:
    """A new instance of the default oracle for boosters that need ``capability``."""
    try:
        make = DEFAULT_ORACLES[capability]
    except KeyError:
        raise ValueError(f"no default oracle for {capability!r}; choose one of "
                         f"{sorted(DEFAULT_ORACLES)}") from None
    return make()
