"""Step rules and schedules: the one family behind every booster's step size.

A rule is a small frozen dataclass (its parameters visible in ``repr`` and ``get_params``,
picklable, equal by value, validated when it is made, errors naming the field) that a
booster calls once a round::

    step = rule(view, t)

* ``view`` is what the round offers: :class:`StepState` for coordinate descent (the
  edge, the line along the column, …, each computed on first use), :class:`RoundView`
  for the other boosters.  Every view has ``nu``, the booster's ``learning_rate``.
* ``t`` is the number of steps taken before this one (0 at the first).  It is the only
  memory any rule here has, and the rules keep none themselves: each booster holds t in
  its frozen per-round state and passes it in (the coordinate and accelerated boosters:
  the round; MABoost: ``_State.t``; functional gradient: the outer iteration), so
  ``warm_start`` and pickles continue exactly and two fits never share a count.  This is
  optax's split of a schedule (a pure function of the count) from the state that holds
  the count (``ScaleByScheduleState.count``), without optax's closures.

A :class:`Schedule` is a rule that reads nothing of the round but t (and constants of
the fit): ``schedule.scale(base, t, view)`` shapes any base step, which is how MABoost's
max-margin η is its usual η under :class:`InverseSqrtStep`.  A :class:`Momentum` gives
dual acceleration's β_t.

===================  ==============================================  ===========================
rule                 value                                           used by
===================  ==============================================  ===========================
QuadraticStep        ``ν γ_t / C_t^4`` (T13, L123)                   coordinate "quadratic"
WolfeStep(c1, c2)    a Wolfe step; by default ``c1 = 1 − ν/2``,      coordinate "wolfe"
                     ``c2 = 1 − ν/4`` (T13, eqs. 2.1–2.2; T12,
                     Fig. 7)
AdaBoostStep         ``ν ½ ln((1 + γ_t)/(1 − γ_t))`` (T13, L141)     coordinate "adaboost"
OptimalStep          ``ν argmin_α R(α)`` (T13, L145)                 coordinate "optimal"
ClosedFormStep       ``ν ‖Aᵀ∇L‖_∞ / (ηL)`` (T12, App. D.3)           coordinate "closed_form"
ConstantStep         ``ν``                                           coordinate "constant";
                                                                     functional "constant";
                                                                     accelerated θ (JST Thm 3.1)
InverseSqrtStep      ``ν / √(t + 1)`` (GB Thms 5, 7; JST L21;        functional "inv_sqrt";
                     NP Thm 2)                                       accelerated
                                                                     "normalized_sqrt";
                                                                     MABoost "max_margin"
InverseTimeStep(λ)   ``ν / (λ (t + 1))`` (GB Thms 4, 6)              functional "inv_t"
SmoothnessStep(Λ)    ``ν / Λ`` (GB Thm 3)                            functional "smoothness"
HorizonStep          ``√(ln n / T)`` (JST Thm 4.1)                   accelerated "stochastic",
                                                                     proven schedule
MirrorAscentStep(s)  ``s`` applied to ``ν γ_t / L`` (NP Alg. 1 (b),  MABoost "standard",
                     eqs. 8–9; Thm 2 with s = 1/√(t + 1))            "smooth", "max_margin"
SparseBoostStep(s)   ``η = ν (1 − s) γ_t ‖y_t‖₁ / N`` and            MABoost "sparse"
                     ``α = s γ_t ‖y_t‖₁`` (NP eq. 36)
MadaBoostStep        ``ν ε_t γ_t`` (NP Alg. 3)                       MABoost "madaboost"
NesterovMomentum     ``β_t = t / (t + 1)`` (JST Thm 3.1)             accelerated "accelerated",
                                                                     "stochastic"
ConstantMomentum(β)  ``β_t = β``; 0 is no momentum (JST L21,         the other accelerated
                     Thm 4.1)                                        methods
===================  ==============================================  ===========================

T12/T13: Telgarsky 2012 (JMLR) / 2013 (ICML); GB: Grubb & Bagnell 2011; NP: Naghibi &
Pfister 2014; JST: Ji, Srebro & Telgarsky 2021.  ``step=``, ``schedule=`` and ``method=``
take the names in the last column or the objects (``step=WolfeStep(c1=1/3, c2=1/2)``,
``schedule=InverseTimeStep(strong_convexity=0.5)``, ``method=MomentumMethod(theta=
InverseSqrtStep())`` of :mod:`.accelerated`, which pairs θ_t with β_t); a name and its
object give the same fit bit for bit.  MABoost's ``variant=`` takes names only: a variant
is an algorithm box (Algorithms 1–3) and a constraint set as well as a step, and the
booster picks the variant's rule above; its ``mirror=`` takes a mirror map
(:mod:`.mirror_maps`) or its name.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from oracleboost.losses import MarginLoss
from oracleboost.optim import row_passes
from oracleboost.optim.linesearch import Line, RowLine, exact, wolfe
from oracleboost.rows.partitioned import Rows

if TYPE_CHECKING:  # pragma: no cover - the rules need no classifier at run time
    from oracleboost.engine.classifier import SignedColumn

__all__ = [
    "StepRule",
    "Schedule",
    "Momentum",
    "StepState",
    "RoundView",
    "QuadraticStep",
    "WolfeStep",
    "AdaBoostStep",
    "OptimalStep",
    "ClosedFormStep",
    "ConstantStep",
    "InverseSqrtStep",
    "InverseTimeStep",
    "SmoothnessStep",
    "HorizonStep",
    "MirrorAscentStep",
    "SparseBoostStep",
    "MadaBoostStep",
    "NesterovMomentum",
    "ConstantMomentum",
    "STEP_RULES",
    "SCHEDULES",
    "get_step",
    "get_schedule",
]


# -- what a rule sees ------------------------------------------------------------------


class StepState:
    """What a coordinate-descent step rule sees in a round (Telgarsky 2013, Algorithm 1).

    Every attribute but ``nu``, ``edge``, ``eta`` and the two sums is computed on first
    use, so a rule pays only for what it reads (the AdaBoost step reads no array at all;
    a line search builds the line).

    Attributes
    ----------
    nu : float
        The shrinkage ν (the booster's ``learning_rate``).
    edge : float
        ``γ_t = Σ_i w_i u_i = ||A^T ∇L||_∞ / ||∇L||_1``.
    agreement, disagreement : float
        ``Σ_i w_i (1 + u_i)`` and ``Σ_i w_i (1 − u_i)``, sums of non-negative terms
        (``1 ± γ_t`` without cancellation).
    eta : float
        The loss's η (``φ'' ≤ η φ``).
    query : ndarray
        The query ``w · y``: its magnitudes are the normalised dual weights
        ``w_i ∝ s_i (−φ'(m_i))``, its signs the labels (a pass reads it alone).
    log_s, sample_weight : ndarray or None
        The example weights and their logarithms (None: equal weights, which cancel).
    u : ndarray
        The oriented column, in [−1, 1].
    line : Line
        The risk along the oriented column, scaled by the current risk.
    slope : float
        ``g_t = −R'(0)/R(0) = ||A^T ∇L||_∞ / L``.
    log_c : float
        ``ln C_t`` (0 for the exponential loss).
    """

    def __init__(
        self,
        *,
        loss: MarginLoss,
        margins: np.ndarray,
        column: SignedColumn,
        query: Rows,
        log_s: Rows | None,
        sample_weight: Rows | None,
        nu: float = 1.0,
    ) -> None:
        self.loss, self.margins, self.column, self.query = loss, margins, column, query
        self.log_s, self.sample_weight = log_s, sample_weight
        self.nu = nu
        self.edge = column.edge
        self.agreement, self.disagreement = column.agreement, column.disagreement
        self.eta = loss.eta

    @functools.cached_property
    def u(self) -> Rows:
        col = self.column
        return row_passes.oriented(col.blocks, col.a, col.y, col.norm, col.sign)

    @functools.cached_property
    def line(self) -> Line:
        if self.loss.phi_is_neg_dphi:
            grouped = self._grouped_line()
            if grouped is not None:
                return grouped
        return RowLine.build(self.column.blocks, self.loss, self.margins, self.u,
                             self.log_s, self.column.u_min)

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
        m_lo, m_hi, other = row_passes.two_value_masses(
            col.blocks, col.a, None, self.query, col.norm, col.sign, lo, hi
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
        loss = self.loss
        if not loss.curvature_reads_risk:
            return loss.log_curvature_constant(math.nan)
        return loss.log_curvature_constant(row_passes.curvature_argument(
            self.column.blocks, loss, self.margins, self.sample_weight))


@dataclass(frozen=True)
class RoundView:
    """What a schedule, a momentum or MABoost's η sees in a round.

    ``nu`` is the booster's ``learning_rate``; the other quantities are those the
    booster has (None otherwise): MABoost's edge ``γ_t``, its map's constant ``L``,
    SparseBoost's mass ``‖y_t‖₁``, MadaBoost's error ``ε_t``; the fit's number of rows
    ``n_samples`` and round budget ``horizon`` (dual acceleration); the loss's
    ``strong_convexity`` λ and ``smoothness`` Λ (functional gradient).
    """

    nu: float
    edge: float | None = None
    L: float | None = None
    mass: float | None = None
    error: float | None = None
    n_samples: int | None = None
    horizon: int | None = None
    strong_convexity: float | None = None
    smoothness: float | None = None


# -- the protocol ----------------------------------------------------------------------


@dataclass(frozen=True)
class StepRule:
    """Base of the family: ``rule(view, t) -> step`` (``inf`` when there is no finite one).

    Subclasses are frozen dataclasses whose fields are the rule's parameters, checked
    in ``__post_init__``.  ``name`` is the string an estimator takes for the rule ("" if
    none).  ``uses_line`` says a coordinate rule reads the line or its slope; the
    coordinate booster then checks that the risk decreases along the column to working
    precision before asking for a step.
    """

    name: ClassVar[str] = ""
    uses_line: ClassVar[bool] = False

    def __call__(self, view: Any, t: int) -> float:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Schedule(StepRule):
    """A rule that depends on the round only through t: ``scale(view.nu, t, view)``.

    ``scale(base, t, view)`` is the step of round t + 1 made from the base step
    ``base`` (the learning rate, or MABoost's ``ν γ_t / L``); ``view`` lends the fit's
    constants a schedule may need.  ``decreasing`` marks the schedules under which
    Grubb & Bagnell's Theorems 4–7 bound the average gap over iterates rather than each
    step (the loss may rise between rounds); ``uses_horizon`` those that read the fit's
    round budget T (a warm start cannot then extend the fit).
    """

    decreasing: ClassVar[bool] = False
    uses_horizon: ClassVar[bool] = False  # reads the fit's round budget T

    def __call__(self, view: Any, t: int) -> float:
        return self.scale(view.nu, t, view)

    def scale(self, base: float, t: int, view: Any) -> float:  # pragma: no cover
        """The step of round t + 1 made from ``base``.

        Parameters
        ----------
        base : float
            The base step: the learning rate ν, or MABoost's ``ν γ_t / L``.
        t : int
            The number of steps taken before this one (0 at the first).
        view : StepState or RoundView
            The round's view; lends the fit's constants a schedule may need (the
            loss's strong convexity or smoothness, ``n_samples``, the horizon).

        Returns
        -------
        float
        """
        raise NotImplementedError


@dataclass(frozen=True)
class Momentum(StepRule):
    """A momentum coefficient β_t (Ji, Srebro & Telgarsky 2021, eq. 1.1): the learning
    rate does not enter it."""


def _check_number(rule, field: str, value, *, low: float, high: float = math.inf,
                  low_closed: bool = False, high_closed: bool = False,
                  optional: bool = False) -> None:
    """Refuse ``rule.field = value`` unless it is a real in the interval (or None when
    ``optional``), with an error naming the rule and the field."""
    if value is None and optional:
        return
    ok = isinstance(value, Real) and not isinstance(value, bool) and not math.isnan(value)
    if ok:
        ok = (value >= low if low_closed else value > low) and (
            value <= high if high_closed else value < high)
    if not ok:
        interval = (("[" if low_closed else "(") + f"{low:g}, {high:g}"
                    + ("]" if high_closed else ")"))
        raise ValueError(
            f"{type(rule).__name__}: {field} must be a number in {interval}"
            f"{' or None' if optional else ''}; got {value!r}"
        )


def check_instance(rule, field: str, value, kind: type) -> None:
    """Refuse ``rule.field = value`` unless it is a ``kind``, naming the rule and field."""
    if not isinstance(value, kind):
        raise TypeError(
            f"{type(rule).__name__}: {field} must be a {kind.__name__} of "
            f"oracleboost.optim.steps; got {value!r}"
        )


def _fit_constant(rule, own, view, field: str, advice: str) -> float:
    """The rule's own constant, else the fit's (``view.<field>``), else a ValueError
    naming the field, with ``advice``."""
    value = own if own is not None else getattr(view, field, None)
    if value is None:
        raise ValueError(f"{rule!r} needs {field}: {advice}")
    return value


# -- coordinate descent (Telgarsky 2013, §2; Telgarsky 2012, App. D) --------------------


@dataclass(frozen=True)
class QuadraticStep(StepRule):
    """``α = ν γ_t / C_t^4`` (Telgarsky 2013, L123; Lemma A.0).  ``ν γ_t`` for exp loss."""

    name = "quadratic"

    def __call__(self, view: StepState, t: int) -> float:
        return view.nu * view.edge * math.exp(-4.0 * view.log_c)


@dataclass(frozen=True)
class WolfeStep(StepRule):
    """A Wolfe step by bracketing and bisection (Telgarsky 2012, Fig. 7).

    Parameters
    ----------
    c1, c2 : float or None
        The Wolfe constants, in (0, 1) with ``c1 < c2``.  ``None`` (default) takes
        Telgarsky 2013's shrinkage form ``c1 = 1 − ν/2``, ``c2 = 1 − ν/4`` (eqs.
        2.1–2.2), where ν enters only through them; give ``c1=1/3, c2=1/2`` for the
        2012 analysis (then ν is not used).
    """

    c1: float | None = None
    c2: float | None = None
    name = "wolfe"
    uses_line = True

    def __post_init__(self):
        _check_number(self, "c1", self.c1, low=0.0, high=1.0, optional=True)
        _check_number(self, "c2", self.c2, low=0.0, high=1.0, optional=True)
        if self.c1 is not None and self.c2 is not None and not self.c1 < self.c2:
            raise ValueError(
                f"WolfeStep: c1 must be below c2 (0 < c1 < c2 < 1); got c1={self.c1!r}, "
                f"c2={self.c2!r}"
            )

    def constants(self, nu: float) -> tuple[float, float]:
        """``(c1, c2)`` for the shrinkage ``nu``: the fields where given, else
        Telgarsky (2013)'s ``c1 = 1 − ν/2`` and ``c2 = 1 − ν/4``."""
        c1 = 1.0 - nu / 2.0 if self.c1 is None else self.c1
        c2 = 1.0 - nu / 4.0 if self.c2 is None else self.c2
        if not 0.0 < c1 < c2 < 1.0:  # (the shrinkage form's, for a ν near float64's ε)
            raise ValueError(
                f"WolfeStep: learning_rate ν = {nu!r} makes the Wolfe constants c1 = 1 − "
                f"ν/2 = {c1!r} and c2 = 1 − ν/4 = {c2!r}, which need 0 < c1 < c2 < 1: in "
                "float64 a ν below about 1e-15 rounds them to 1. Use a larger "
                "learning_rate, or WolfeStep(c1=..., c2=...)")
        return c1, c2

    def __call__(self, view: StepState, t: int) -> float:
        return wolfe(view.line, *self.constants(view.nu))


@dataclass(frozen=True)
class AdaBoostStep(StepRule):
    """``α = ν · ½ ln((1 + γ_t)/(1 − γ_t))`` (Freund & Schapire; Telgarsky 2013, L141).

    ``1 ± γ_t`` are summed as ``Σ_i w_i (1 ± u_i)`` (non-negative terms), which keeps
    ``1 − γ_t`` accurate when γ_t is close to 1.
    """

    name = "adaboost"

    def __call__(self, view: StepState, t: int) -> float:
        return view.nu * 0.5 * (math.log(view.agreement) - math.log(view.disagreement))


@dataclass(frozen=True)
class OptimalStep(StepRule):
    """``α = ν · argmin_α R(α)`` by exact line search (Telgarsky 2013, L145)."""

    name = "optimal"
    uses_line = True

    def __call__(self, view: StepState, t: int) -> float:
        return view.nu * exact(view.line)


@dataclass(frozen=True)
class ClosedFormStep(StepRule):
    """``α = ν · ||A^T ∇L||_∞ / (η L)`` (Telgarsky 2012, App. D.3, the step α').

    It guarantees ``R(α') ≤ R(0) − ||A^T∇L||²_∞ / (2ηL)``: three times the Wolfe search's
    guaranteed decrease, but it needs η.
    """

    name = "closed_form"
    uses_line = True

    def __call__(self, view: StepState, t: int) -> float:
        if view.eta is None:
            raise NotImplementedError(
                f"{type(view.loss).__name__} does not define eta (η with φ'' ≤ η φ, "
                "Telgarsky 2012, Def. 19), which step='closed_form' needs; use "
                "step='wolfe' or 'optimal', or set eta on the loss")
        return view.nu * view.slope / view.eta


# -- schedules: the step as a function of t ----------------------------------------------


@dataclass(frozen=True)
class ConstantStep(Schedule):
    """``ν`` every round: the coordinate booster's constant step, Grubb & Bagnell's
    constant η, and θ_t = 1 of dual acceleration (Ji, Srebro & Telgarsky 2021, Thm 3.1)."""

    name = "constant"

    def scale(self, base: float, t: int, view: StepState | RoundView) -> float:
        return base


@dataclass(frozen=True)
class InverseSqrtStep(Schedule):
    """``ν / √(t + 1)``: η_t = c/√t of Grubb & Bagnell (2011, Theorems 5 and 7; t counted
    from 1 there), normalized gradient descent's θ_t = 1/√t (Ji, Srebro & Telgarsky 2021,
    the equation at L21; Nacson et al. 2018), and the 1/√t of MABoost's max-margin
    η_t = γ_t/(L√t) (Naghibi & Pfister 2014, Theorem 2)."""

    name = "inv_sqrt"
    decreasing = True

    def scale(self, base: float, t: int, view: StepState | RoundView) -> float:
        return base / math.sqrt(t + 1)


@dataclass(frozen=True)
class InverseTimeStep(Schedule):
    """``ν / (λ (t + 1))`` for a λ-strongly convex risk (Grubb & Bagnell 2011, Theorems 4
    and 6: c = 2 and c = 1).

    Parameters
    ----------
    strong_convexity : float or None, default=None
        λ > 0.  None takes the estimator's ``strong_convexity``, else the loss's own.
    """

    strong_convexity: float | None = None
    name = "inv_t"
    decreasing = True

    def __post_init__(self):
        _check_number(self, "strong_convexity", self.strong_convexity, low=0.0,
                      optional=True)

    def scale(self, base: float, t: int, view: StepState | RoundView) -> float:
        lam = _fit_constant(
            self, self.strong_convexity, view, "strong_convexity",
            "the loss is not strongly convex; pass strong_convexity=λ to the estimator or "
            "to InverseTimeStep (e.g. for an added (λ/2)||f||² term)")
        return base / (lam * (t + 1))


@dataclass(frozen=True)
class SmoothnessStep(Schedule):
    """``ν / Λ`` for a Λ-strongly smooth risk (Grubb & Bagnell 2011, Theorem 3 with ν = 1).

    Parameters
    ----------
    smoothness : float or None, default=None
        Λ > 0.  None takes the loss's own (an error for a non-smooth loss).
    """

    smoothness: float | None = None
    name = "smoothness"

    def __post_init__(self):
        _check_number(self, "smoothness", self.smoothness, low=0.0, optional=True)

    def scale(self, base: float, t: int, view: StepState | RoundView) -> float:
        return base / _fit_constant(
            self, self.smoothness, view, "smoothness",
            "the loss is not smooth; use a smooth loss or SmoothnessStep(smoothness=Λ)")


@dataclass(frozen=True)
class HorizonStep(Schedule):
    """``θ = √(ln n / T)`` every step, for the horizon T = ``n_estimators`` (Ji, Srebro &
    Telgarsky 2021, Theorem 4.1: Algorithm 2 with β = 0).  The theorem's step: the
    learning rate does not enter it, and a warm start cannot change T."""

    uses_horizon = True

    def scale(self, base: float, t: int, view: StepState | RoundView) -> float:
        advice = "Theorem 4.1's step is for dual acceleration (method='stochastic')"
        n = _fit_constant(self, None, view, "n_samples", advice)
        return math.sqrt(math.log(n) / _fit_constant(self, None, view, "horizon", advice))


# -- MABoost's η (Naghibi & Pfister 2014) -------------------------------------------------


@dataclass(frozen=True)
class MirrorAscentStep(StepRule):
    """``η_t = ν γ_t / L`` (Algorithm 1 (b), eqs. 8–9: L = 1 for the entropy map, N for
    the Euclidean), shaped by ``schedule``: :class:`InverseSqrtStep` gives Theorem 2's
    max-margin ``η_t = ν γ_t / (L √t)``.  ``ν`` is the R package's ``nu``.

    Parameters
    ----------
    schedule : Schedule, default=ConstantStep()
    """

    schedule: Schedule = ConstantStep()

    def __post_init__(self):
        check_instance(self, "schedule", self.schedule, Schedule)

    def __call__(self, view: RoundView, t: int) -> float:
        return self.schedule.scale(view.nu * view.edge / view.L, t, view)


@dataclass(frozen=True)
class SparseBoostStep(StepRule):
    """SparseBoost's ``η_t = ν (1 − s) γ_t ‖y_t‖₁ / N`` and its ℓ1 factor
    ``α_t = s γ_t ‖y_t‖₁`` (Algorithm 2 with eq. 36; s = 0 is its first setting, ½ its
    second; Theorem 4's constant is (1 − s)²).

    Parameters
    ----------
    sparsity : float, default=0.0
        s ∈ [0, 1).
    """

    sparsity: float = 0.0

    def __post_init__(self):
        _check_number(self, "sparsity", self.sparsity, low=0.0, high=1.0, low_closed=True)

    def __call__(self, view: RoundView, t: int) -> float:
        return view.nu * (1.0 - self.sparsity) * view.edge * view.mass / view.n_samples

    def l1(self, view: RoundView) -> float:
        """The ℓ1 factor α_t of eq. 29 (not a vote weight)."""
        return self.sparsity * view.edge * view.mass


@dataclass(frozen=True)
class MadaBoostStep(StepRule):
    """``η_t = ν ε_t γ_t`` with ε_t the training error of H_{t−1} (Algorithm 3; the
    paper's ε_t is circular as printed, note §1.6)."""

    def __call__(self, view: RoundView, t: int) -> float:
        return view.nu * view.error * view.edge


# -- dual acceleration's momentum (Ji, Srebro & Telgarsky 2021) -----------------------------


@dataclass(frozen=True)
class NesterovMomentum(Momentum):
    """``β_t = t / (t + 1)``: Theorem 3.1's momentum (β_t = λ_{t−1}(1 − λ_t)/λ_t with
    λ_t = 2/(t + 2), Lemma 3.2), which makes Algorithm 1 Nesterov's method on the dual."""

    def __call__(self, view: RoundView, t: int) -> float:
        return t / (t + 1.0)


@dataclass(frozen=True)
class ConstantMomentum(Momentum):
    """``β_t = β`` every step; β = 0 (default) is no momentum: normalized and plain
    gradient descent, the batch perceptron, and Algorithm 2 under Theorem 4.1.

    Parameters
    ----------
    beta : float, default=0.0
        β ∈ [0, 1).
    """

    beta: float = 0.0

    def __post_init__(self):
        _check_number(self, "beta", self.beta, low=0.0, high=1.0, low_closed=True)

    def __call__(self, view: RoundView, t: int) -> float:
        return self.beta


# -- names ------------------------------------------------------------------------------

#: The coordinate booster's ``step`` names.
STEP_RULES: dict[str, type[StepRule]] = {
    cls.name: cls
    for cls in (QuadraticStep, WolfeStep, AdaBoostStep, OptimalStep, ClosedFormStep, ConstantStep)
}

#: The functional-gradient boosters' ``schedule`` names.
SCHEDULES: dict[str, type[Schedule]] = {
    cls.name: cls for cls in (ConstantStep, InverseSqrtStep, InverseTimeStep, SmoothnessStep)
}


def resolve_by_name(value, names: dict[str, type], kind: type, what: str):
    """``value`` if it is a ``kind``, else ``names[value]()``; a ValueError for an unknown
    name (the estimators' parameter checks have refused other types already)."""
    if isinstance(value, kind):
        return value
    if value not in names:
        raise ValueError(f"unknown {what} {value!r}; choose one of {sorted(names)}")
    return names[value]()


def get_step(step: str | StepRule) -> StepRule:
    """Resolve a coordinate step rule given by name or instance."""
    return resolve_by_name(step, STEP_RULES, StepRule, "step")


def get_schedule(schedule: str | Schedule) -> Schedule:
    """Resolve a schedule given by name or instance."""
    return resolve_by_name(schedule, SCHEDULES, Schedule, "schedule")
