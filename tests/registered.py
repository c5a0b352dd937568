"""A registered booster as the tests of rounds make it: one that runs several rounds on
their small data.

LPBoost and ERLPBoost take ν = N/2 by default (``TotallyCorrectiveClassifier``'s
docstring, and so ``BOOSTERS``): on these tests' few, nearly separable rows the
soft-margin optimum is then reached within a round or two and the fit stops with its
certificate closed, leaving no rounds to interrupt, call back or continue.  The tests
fit those two with ν = 5, the capping the registry gave them before.
"""

from __future__ import annotations

from typing import Any

#: Parameters that keep a registered booster going on the tests' small data.
SEVERAL_ROUNDS: dict[str, dict[str, Any]] = {"lpboost": {"nu": 5}, "erlpboost": {"nu": 5}}


def make(spec, oracle=None, **params):
    """``spec.make(oracle, **params)``, with :data:`SEVERAL_ROUNDS`' parameters under
    ``params``."""
    return spec.make(oracle, **{**SEVERAL_ROUNDS.get(spec.name, {}), **params})
