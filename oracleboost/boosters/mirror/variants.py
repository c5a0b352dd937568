"""MABoost's variants as small objects (Naghibi & Pfister 2014, Algorithms 1–3).

A variant is what a round asks of the paper's box beyond the map: its step (b) (η_t by
a step rule of :mod:`oracleboost.optim.steps`, SparseBoost's ℓ1 factor α_t, and the
potential behind the theorem's bound), the update (c) it runs (:mod:`.updates`), its
stops, and the bound of its theorem.  ``MirrorBoostingClassifier(variant=...)`` names
one; the fit makes the object once (:func:`make_variant`) and the round only calls it:

* :class:`MABoost` (``"standard"``): Algorithm 1, η_t = ν γ_t / L (eqs. 8–9), the
  lazy or the active update, Theorem 1's bound;
* :class:`MaxMargin` (``"max_margin"``): η_t = ν γ_t / (L √t) (Theorem 2);
* :class:`Smooth` (``"smooth"``): Algorithm 1 on the capped simplex S_k (§3.1; the cap
  is the problem's), its bound no lower than 1/k (Theorem 3);
* :class:`SparseBoost` (``"sparse"``): Algorithm 2 with eq. 36, Theorem 4's bound, a
  state of zeros stops the fit;
* :class:`MadaBoost` (``"madaboost"``): Algorithm 3, η_t = ν ε_t γ_t, stopping at zero
  training error, the bound √(2/Σγ²) (Theorem 5, corrected: note §2).

The first three are Algorithm 1 itself (``algorithm_1``): any map, either update, the
dataset-combining set S_c and the multiclass construction; the last two are binary boxes
of their own, each with the one map and update its algorithm states
(``mirror_type``, ``default_update``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from oracleboost.boosters.mirror.maps import EntropyMap, EuclideanMap, MirrorMap
from oracleboost.boosters.mirror.updates import (
    ActiveUpdate,
    DualUpdate,
    LazyUpdate,
    MadaBoostUpdate,
    SparseBoostUpdate,
)
from oracleboost.engine.rounds import StopReason
from oracleboost.optim.steps import (
    InverseSqrtStep,
    MadaBoostStep,
    MirrorAscentStep,
    RoundView,
    SparseBoostStep,
    StepRule,
)

if TYPE_CHECKING:
    from oracleboost.boosters.mirror.algorithm import MirrorState

__all__ = ["Variant", "MABoost", "MaxMargin", "Smooth", "SparseBoost", "MadaBoost", "VARIANTS",
           "make_variant"]


@dataclass(frozen=True)
class Variant:
    """Base: Algorithm 1's box with the step rule ``rule`` (see the module).

    Class attributes: ``name`` (the estimator's ``variant``), ``algorithm_1`` (Algorithm
    1 itself: any map and update, ``sample_group`` and multiclass), ``mirror_type`` and
    ``default_update`` (the map and update a box of its own requires; None: any),
    ``box`` (that box, in words), ``parameters`` (the estimator's options it reads) and
    ``capped`` (it caps every weight at k/N)."""

    rule: StepRule = MirrorAscentStep()

    name: ClassVar[str] = ""
    algorithm_1: ClassVar[bool] = True
    mirror_type: ClassVar[type[MirrorMap]] = MirrorMap
    default_update: ClassVar[str | None] = None
    box: ClassVar[str] = "Algorithm 1"
    parameters: ClassVar[tuple[str, ...]] = ()
    capped: ClassVar[bool] = False

    @classmethod
    def of(cls, smoothness: float | None, sparsity: float | None) -> Variant:
        """The variant for the estimator's ``smoothness`` and ``sparsity``."""
        return cls()

    def accepts(self, mirror: MirrorMap, update: str) -> bool:
        """Whether the box runs with ``mirror`` and the update named ``update``."""
        return self.default_update is None or (isinstance(mirror, self.mirror_type)
                                               and update == self.default_update)

    def update(self, lazy: bool) -> DualUpdate:
        """Step (c): the lazy or the active update (Algorithm 1 (c))."""
        return LazyUpdate() if lazy else ActiveUpdate()

    def halt(self, state: MirrorState) -> StopReason | None:
        """A stop before the round asks the oracle (None: go on)."""
        return None

    def step(self, nu: float, gamma: float, state: MirrorState, L: float,
             n: int) -> tuple[float, float, float]:
        """Step (b): ``(η_t, α_t, potential)``, with ``η_t = ν γ_t / L`` by the rule after
        ``state.t`` rounds, no ℓ1 factor, and Theorem 1's ``Σ (η γ − L η²/2)``."""
        eta = self.rule(RoundView(nu=nu, edge=gamma, L=L), state.t)
        # η·η, not η**2: a float's ** raises OverflowError where · gives inf
        return eta, 0.0, state.potential + eta * gamma - L * (eta * eta) / 2

    def stop(self, zeros: int, n: int) -> StopReason | None:
        """A stop after the round, from the new weights' exact zeros (None: go on)."""
        return None

    def bound(self, mirror: MirrorMap, potential: float, n_rows: int, equal_weights: bool,
              nu: float) -> float:
        """Theorem 1's bound on the training error (eqs. 15/18 with the regret bound 13)
        from the run's own potential, at most 1; NaN where the theorem gives none."""
        value = mirror.error_bound(potential, n_rows, equal_weights)
        return value if math.isnan(value) else min(1.0, value)


@dataclass(frozen=True)
class MABoost(Variant):
    """Algorithm 1 as printed: ``η_t = ν γ_t / L``."""

    name = "standard"


@dataclass(frozen=True)
class MaxMargin(Variant):
    """Theorem 2's max-margin variant: ``η_t = ν γ_t / (L √t)``."""

    rule: StepRule = MirrorAscentStep(InverseSqrtStep())
    name = "max_margin"


@dataclass(frozen=True)
class Smooth(Variant):
    """Smooth-MABoost (§3.1): Algorithm 1 on the capped simplex S_k, every weight at most
    k/N (``smoothness`` k; the cap is the problem's); Theorem 3: the error is at most
    1/k once Theorem 1's bound is below it, so the bound is no lower than 1/k."""

    smoothness: float | None = None
    name = "smooth"
    parameters = ("smoothness",)
    capped = True

    @classmethod
    def of(cls, smoothness: float | None, sparsity: float | None) -> Variant:
        return cls(smoothness=None if smoothness is None else float(smoothness))

    def bound(self, mirror: MirrorMap, potential: float, n_rows: int, equal_weights: bool,
              nu: float) -> float:
        value = super().bound(mirror, potential, n_rows, equal_weights, nu)
        return value if math.isnan(value) else max(1.0 / self.smoothness, value)


@dataclass(frozen=True)
class SparseBoost(Variant):
    """SparseBoost (Algorithm 2, eq. 36): the active Euclidean update of an unnormalised
    state y, ``η_t = ν (1 − s) γ_t ‖y_t‖₁ / N`` and ``α_t = s γ_t ‖y_t‖₁``
    (:class:`~oracleboost.optim.steps.SparseBoostStep`); Theorem 4's bound; a state that
    is all zeros stops the fit."""

    rule: StepRule = SparseBoostStep()
    name = "sparse"
    algorithm_1 = False
    mirror_type = EuclideanMap
    default_update = "active"
    box = "SparseBoost (Algorithm 2), an active update with the Euclidean map"
    parameters = ("sparsity",)

    @classmethod
    def of(cls, smoothness: float | None, sparsity: float | None) -> Variant:
        return cls(SparseBoostStep(0.0 if sparsity is None else float(sparsity)))

    def update(self, lazy: bool) -> DualUpdate:
        return SparseBoostUpdate()

    def step(self, nu: float, gamma: float, state: MirrorState, L: float,
             n: int) -> tuple[float, float, float]:
        view = RoundView(nu=nu, edge=gamma, mass=state.mass, n_samples=n)
        eta, alpha = self.rule(view, state.t), self.rule.l1(view)  # eq. 36, the ℓ1 factor
        potential = state.potential + eta * (gamma * state.mass - alpha) - n * (eta * eta) / 2
        return eta, alpha, potential

    def stop(self, zeros: int, n: int) -> StopReason | None:
        return StopReason.ZERO_WEIGHTS if zeros == n else None


@dataclass(frozen=True)
class MadaBoost(Variant):
    """The MadaBoost variant (Algorithm 3): the lazy entropy update with the double
    projection (:class:`.updates.MadaBoostUpdate`), ``η_t = ν ε_t γ_t`` with ε_t the
    training error of H_{t−1} (note §1.6), stopping when ε_t = 0; the bound √(2/Σγ_t²)
    at ν = 1 (Theorem 5, corrected: note §2)."""

    rule: StepRule = MadaBoostStep()
    name = "madaboost"
    algorithm_1 = False
    mirror_type = EntropyMap
    default_update = "lazy"
    box = "Algorithm 3, the lazy update with the entropy map"

    def update(self, lazy: bool) -> DualUpdate:
        return MadaBoostUpdate()

    def halt(self, state: MirrorState) -> StopReason | None:
        # ε_t, the training error of H_{t−1} (ties counted; ε_1 = 1), is 0: η_t = 0
        return StopReason.ZERO_TRAINING_ERROR if state.error == 0.0 else None

    def step(self, nu: float, gamma: float, state: MirrorState, L: float,
             n: int) -> tuple[float, float, float]:
        eta = self.rule(RoundView(nu=nu, edge=gamma, error=state.error), state.t)
        return eta, 0.0, state.potential + gamma**2

    def bound(self, mirror: MirrorMap, potential: float, n_rows: int, equal_weights: bool,
              nu: float) -> float:
        if nu != 1.0:
            return math.nan
        return min(1.0, math.sqrt(2.0 / potential)) if potential > 0 else 1.0


#: The variants by the estimator's names.
VARIANTS: dict[str, type[Variant]] = {
    cls.name: cls for cls in (MABoost, MaxMargin, Smooth, SparseBoost, MadaBoost)}


def make_variant(name: str, smoothness: float | None = None,
                 sparsity: float | None = None) -> Variant:
    """The variant named ``name`` (a key of :data:`VARIANTS`) for the estimator's
    ``smoothness`` and ``sparsity``."""
    return VARIANTS[name].of(smoothness, sparsity)
