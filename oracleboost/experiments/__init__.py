"""Reproductions of the papers' figures, each a function ``f(quick=False) -> Curves``.

``EXPERIMENTS`` maps a name to its function; ``quick=True`` is a CI-sized round budget,
the default the full-size run.  Every result draws itself (``.plot()``, ``.save(path)``)
and prints a table (``.to_text()``).

============================  ==========================================================
``telgarsky2013-figure2``     AdaBoost step with shrinkage ν on the Rudin matrix
``telgarsky2013-figure3``     Wolfe step (c1 = 1 − ν/2, c2 = 1 − ν/4) on the Rudin matrix
``telgarsky2013-threshold``   final margin against ν around the paper's 0.92
``telgarsky2012-lower-bound`` Thm 28: logistic exact line search on Schapire's S, gap ≥ 1/(8t)
``grubb2011-counterexample``  §4: naive projection stalls on 2|f(x1)| + |f(x2)|
============================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Curves, ThresholdCurves
from .grubb_bagnell2011 import counterexample
from .telgarsky2012 import lower_bound
from .telgarsky2013 import figure2, figure3, shrinkage_threshold

__all__ = ["EXPERIMENTS", "Curves", "ThresholdCurves"]

EXPERIMENTS: dict[str, Callable[..., Curves]] = {
    "telgarsky2013-figure2": figure2,
    "telgarsky2013-figure3": figure3,
    "telgarsky2013-threshold": shrinkage_threshold,
    "telgarsky2012-lower-bound": lower_bound,
    "grubb2011-counterexample": counterexample,
}
