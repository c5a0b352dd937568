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
``grubb2011-figure1``         Fig. 1: MMP planning loss (train and held-out), 5-unit nets
``grubb2011-figure2``         Fig. 2: test pairwise disagreement, synthetic ranking, stumps
``grubb2011-figure3-letter``  Fig. 3: training multiclass hinge on UCI letter, stumps
``grubb2011-figure3-*``       … on pendigits, satimage, splice (stand-in for connect-4)
``naghibi2014-label-noise``   OUR experiment (the paper has none): test error vs. flipped
                              training labels, AdaBoost and MABoost variants, breast cancer
``ji2021-figure1``            Fig. 1 on digits 0 vs 1 (not mnist): ℓ2 margin gap γ̄ − γ(w_t)
                              of Alg. 1, NGD (θ = 1, 1/√t), GD, batch perceptron, Alg. 2
``ji2021-figure2``            Fig. 2 analogue: test error on non-separable digits 3 vs 5,
                              PCA(5) (not mnist 3 vs 5), the same six methods
``swap-weak-learner``         OUR experiment (in no paper): swap the weak learner, every
                              booster × every class on digits even vs odd (table in notes)
``lpboost-margins``           OUR experiment (in no paper): soft margin against the round,
                              LPBoost, ERLPBoost, SoftBoost, TotalBoost against AdaBoost,
                              MABoost max-margin, dual acceleration; LP optimum as a line
============================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable

from oracleboost.experiments.base import Curves, ThresholdCurves
from oracleboost.experiments.grubb_bagnell2011 import (
    counterexample,
    figure3_letter,
    figure3_pendigits,
    figure3_satimage,
    figure3_splice,
)
from oracleboost.experiments.grubb_bagnell2011 import figure1 as grubb2011_figure1
from oracleboost.experiments.grubb_bagnell2011 import figure2 as grubb2011_figure2
from oracleboost.experiments.ji2021 import figure1 as ji2021_figure1
from oracleboost.experiments.ji2021 import figure2 as ji2021_figure2
from oracleboost.experiments.naghibi2014 import label_noise
from oracleboost.experiments.soft_margins import lpboost_margins
from oracleboost.experiments.swap import swap_weak_learner
from oracleboost.experiments.telgarsky2012 import lower_bound
from oracleboost.experiments.telgarsky2013 import figure2, figure3, shrinkage_threshold

__all__ = ["EXPERIMENTS", "Curves", "ThresholdCurves"]

EXPERIMENTS: dict[str, Callable[..., Curves]] = {
    "telgarsky2013-figure2": figure2,
    "telgarsky2013-figure3": figure3,
    "telgarsky2013-threshold": shrinkage_threshold,
    "telgarsky2012-lower-bound": lower_bound,
    "grubb2011-counterexample": counterexample,
    "grubb2011-figure1": grubb2011_figure1,
    "grubb2011-figure2": grubb2011_figure2,
    "grubb2011-figure3-letter": figure3_letter,
    "grubb2011-figure3-pendigits": figure3_pendigits,
    "grubb2011-figure3-satimage": figure3_satimage,
    "grubb2011-figure3-splice": figure3_splice,
    "naghibi2014-label-noise": label_noise,
    "ji2021-figure1": ji2021_figure1,
    "ji2021-figure2": ji2021_figure2,
    "swap-weak-learner": swap_weak_learner,
    "lpboost-margins": lpboost_margins,
}
