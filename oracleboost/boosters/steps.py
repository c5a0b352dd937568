"""Step rules of coordinate-descent boosting (Telgarsky 2013, §2; Telgarsky 2012, App. D).

A step rule is a small frozen dataclass (inspectable, picklable, visible in ``repr``)
that maps the state of a round to a step α ≥ 0 along the oriented column.  Every rule
takes the shrinkage ν (the booster's ``learning_rate``).  From least to most aggressive:

==============  =====================================================================
``quadratic``   ``ν γ_t / C_t^4``: minimiser of the quadratic upper bound (2013, L123)
``wolfe``       any α satisfying Wolfe's conditions with ``c1 = 1 − ν/2``, ``c2 = 1 − ν/4``
                (2013, eqs. 2.1–2.2); ``WolfeStep(c1=1/3, c2=1/2)`` is the 2012 search
``adaboost``    ``ν · ½ ln((1 + γ_t)/(1 − γ_t))`` (2013, L141)
``optimal``     ``ν · argmin_α R(α)`` (2013, L145; Friedman's shrinkage)
``closed_form`` ``ν · ||A^T ∇L||_∞ / (η L)`` (2012, App. D.3)
``constant``    ``ν`` every round
==============  =====================================================================
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import _column_kernels as column_kernels
from .linesearch import Line, exact, wolfe

__all__ = [
    "StepState",
    "StepRule",
    "QuadraticStep",
    "WolfeStep",
    "AdaBoostStep",
    "OptimalStep",
    "ClosedFormStep",
    "ConstantStep",
    "STEP_RULES",
    "get_step",
]


class StepState:
    """What a step rule may look at in a round.

    Every attribute but ``edge``, ``eta`` and the two sums is computed on first use, so
    a rule pays only for what it reads (the AdaBoost step reads no array at all; a line
    search builds the line).

    Attributes
    ----------
    edge : float
        ``γ_t = Σ_i w_i u_i = ||A^T ∇L||_∞ / ||∇L||_1``.
    agreement, disagreement : float
        ``Σ_i w_i (1 + u_i)`` and ``Σ_i w_i (1 − u_i)``, sums of non-negative terms
        (``1 ± γ_t`` without cancellation).
    eta : float
        The loss's η (``φ'' ≤ η φ``).
    w : ndarray
        Normalised dual weights ``w_i ∝ s_i (−φ'(m_i))``.
    u : ndarray
        The oriented column, in [−1, 1].
    line : Line
        The risk along the oriented column, scaled by the current risk.
    slope : float
        ``g_t = −R'(0)/R(0) = ||A^T ∇L||_∞ / L``.
    log_c : float
        ``ln C_t`` (0 for the exponential loss).
    """

    def __init__(self, *, loss, margins, column, w, log_s, sample_weight):
        self.loss, self.margins, self.column, self.w = loss, margins, column, w
        self.log_s, self.sample_weight = log_s, sample_weight
        self.edge = column.edge
        self.agreement, self.disagreement = column.agreement, column.disagreement
        self.eta = loss.eta

    @functools.cached_property
    def u(self) -> np.ndarray:
        return self.column.u

    @functools.cached_property
    def line(self) -> Line:
        if self.loss.phi_is_neg_dphi:
            grouped = self._grouped_line()
            if grouped is not None:
                return grouped
        return Line.build(self.loss, self.margins, self.u, self.log_s)

    def _grouped_line(self) -> Line | None:
        """The line of the exponential loss over the column's two values, if it has two.

        For φ = e^{−m}, ``R(α)/R(0) = Σ_i ρ_i e^{−α u_i}`` with ``ρ = w`` (the dual
        weights are the risk's shares), so rows with equal ``u_i`` merge into one of
        mass ``Σ w_i``: a stump's line has two points, whatever ``n``, and a line search
        costs microseconds instead of passes over the rows.  Columns with more values
        (trees, regressors) get the line over the rows.
        """
        col = self.column
        lo, hi = col.u_min, col.u_max
        m_lo, m_hi, other = column_kernels.two_value_masses(
            col.a, col.y, self.w, col.norm, col.sign, lo, hi
        )
        if other:
            return None
        values, masses = (np.array([lo]), np.array([m_lo])) if lo == hi else (
            np.array([lo, hi]), np.array([m_lo, m_hi])
        )
        with np.errstate(divide="ignore"):  # a weight that underflowed to 0: log 0 = -inf
            log_rho = np.log(masses)
        return Line(self.loss, np.zeros(values.size), values, log_rho)

    @functools.cached_property
    def slope(self) -> float:
        return -self.line.slope(0.0)

    @functools.cached_property
    def log_c(self) -> float:
        return self.loss.log_curvature_constant(self.margins, self.sample_weight)


class StepRule:
    """Base class: ``step(state, nu) -> α`` (``inf`` when the rule has no finite step).

    ``uses_line`` (default True) says the rule reads the line or its slope; the booster
    then checks that the risk decreases along the column to working precision before
    asking for a step.
    """

    name: str = ""
    uses_line: bool = True

    def step(self, state: StepState, nu: float) -> float:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class QuadraticStep(StepRule):
    """``α = ν γ_t / C_t^4`` (Telgarsky 2013, L123; Lemma A.0).  ``ν γ_t`` for exp loss."""

    name = "quadratic"
    uses_line = False

    def step(self, state, nu):
        return nu * state.edge * math.exp(-4.0 * state.log_c)


@dataclass(frozen=True)
class WolfeStep(StepRule):
    """A Wolfe step by bracketing and bisection (Telgarsky 2012, Fig. 7).

    Parameters
    ----------
    c1, c2 : float or None
        The Wolfe constants.  ``None`` (default) takes Telgarsky 2013's shrinkage form
        ``c1 = 1 − ν/2``, ``c2 = 1 − ν/4``, where ν enters only through them; give
        ``c1=1/3, c2=1/2`` for the 2012 analysis (then ν is not used).
    """

    c1: float | None = None
    c2: float | None = None
    name = "wolfe"

    def constants(self, nu: float) -> tuple[float, float]:
        c1 = 1.0 - nu / 2.0 if self.c1 is None else self.c1
        c2 = 1.0 - nu / 4.0 if self.c2 is None else self.c2
        return c1, c2

    def step(self, state, nu):
        return wolfe(state.line, *self.constants(nu))


@dataclass(frozen=True)
class AdaBoostStep(StepRule):
    """``α = ν · ½ ln((1 + γ_t)/(1 − γ_t))`` (Freund & Schapire; Telgarsky 2013, L141).

    ``1 ± γ_t`` are summed as ``Σ_i w_i (1 ± u_i)`` (non-negative terms), which keeps
    ``1 − γ_t`` accurate when γ_t is close to 1.
    """

    name = "adaboost"
    uses_line = False

    def step(self, state, nu):
        return nu * 0.5 * (math.log(state.agreement) - math.log(state.disagreement))


@dataclass(frozen=True)
class OptimalStep(StepRule):
    """``α = ν · argmin_α R(α)`` by exact line search (Telgarsky 2013, L145)."""

    name = "optimal"

    def step(self, state, nu):
        return nu * exact(state.line)


@dataclass(frozen=True)
class ClosedFormStep(StepRule):
    """``α = ν · ||A^T ∇L||_∞ / (η L)`` (Telgarsky 2012, App. D.3, the step α').

    It guarantees ``R(α') ≤ R(0) − ||A^T∇L||²_∞ / (2ηL)``: three times the Wolfe search's
    guaranteed decrease, but it needs η.
    """

    name = "closed_form"

    def step(self, state, nu):
        return nu * state.slope / state.eta


@dataclass(frozen=True)
class ConstantStep(StepRule):
    """``α = ν`` every round (the booster's ``learning_rate`` is the step)."""

    name = "constant"
    uses_line = False

    def step(self, state, nu):
        return nu


STEP_RULES: dict[str, type[StepRule]] = {
    cls.name: cls
    for cls in (QuadraticStep, WolfeStep, AdaBoostStep, OptimalStep, ClosedFormStep, ConstantStep)
}


def get_step(step: str | StepRule) -> StepRule:
    """Resolve a step rule given by name or instance."""
    if isinstance(step, StepRule):
        return step
    if step not in STEP_RULES:
        raise ValueError(f"unknown step {step!r}; choose one of {sorted(STEP_RULES)}")
    return STEP_RULES[step]()
