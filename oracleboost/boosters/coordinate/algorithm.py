"""Coordinate-descent boosting's algorithm box (Telgarsky 2013, Algorithm 1; Telgarsky
2012, Algorithm 2): the problem, the state between rounds and the round.

One round (:func:`coordinate_round`), in this library's sign convention (margins
``y f`` positive when right; the papers' ``A = −y h`` and ``z = Aλ = −margin``)::

    1. w ∝ s ∘ (−φ'(y f)), normalised in log space, and the query w ∘ y
                                      (made by the last round: the state's ``dual``)
    2. h_t = oracle.correlate(w ∘ y), as a column in [−1, 1]
    3. γ_t = |Σ_i w_i y_i h_t(x_i)| = ‖Aᵀ∇L‖_∞ / ‖∇L‖_1, and the sign σ_t making it ≥ 0
    4. α_t = the step rule's step (:mod:`oracleboost.optim.steps`), times ν
    5. f ← f + α_t σ_t h_t, and the next round's weights (:func:`step_margins`)

The step rule is the object the set-up chose; the round calls it
(:func:`step_size`).  The margins' update and the next weights are one pass over the
rows (:func:`step_margins`); the round's record is made beside the round
(:func:`record`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.engine.classifier import SignedColumn
from oracleboost.engine.model import Ensemble
from oracleboost.engine.rounds import (
    BoostingWarning,
    Problem,
    RoundResult,
    StopReason,
    draw_seed,
)
from oracleboost.losses import MarginLoss
from oracleboost.optim import row_passes
from oracleboost.optim.steps import StepRule, StepState
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.subsample import RoundDraws

__all__ = ["CoordinateProblem", "CoordinateState", "coordinate_round", "step_size",
           "step_margins", "record", "dual_weights"]


@dataclass
class CoordinateProblem(Problem):
    """The fit's data inside: labels ±1, weights, the bound oracle and the options.

    Every row has positive weight (``fit`` drops the others).  ``log_s`` is None when
    the weights are all equal: they then cancel from the normalised dual weights, and
    ``s_total`` (the risk's normaliser) is ``n``.  On a cluster ``s`` is None then.
    """

    ypm: np.ndarray
    s: np.ndarray | None
    s_total: float
    log_s: np.ndarray | None
    loss: MarginLoss
    bound: object
    rule: StepRule
    nu: float
    bounded: bool
    optimal_loss: float | None
    blocks: RowBlocks
    #: stochastic boosting's draws (``subsample``, ``colsample_bytree``), None without
    draws: RoundDraws | None = None
    #: ``init_score``'s starting margins ``y_i o_i`` (None: the rounds start at 0)
    start: np.ndarray | None = None
    #: ``max_i |o_i|`` (0 without an offset): what a perfect hypothesis' step outweighs
    #: besides the model's own terms
    offset_bound: float = 0.0


@stored_as("CoordinateState")
@dataclass(frozen=True)
class CoordinateState:
    """Between rounds: the margins ``y_i f(x_i)``, the next round's dual weights with
    their query, entropy (a function: read when the round is recorded) and logits'
    maxima (:class:`.row_passes.DualWeights`), and the generator of oracle seeds."""

    margins: np.ndarray
    dual: row_passes.DualWeights
    rng: np.random.RandomState
    loss: MarginLoss | None = None  # the loss whose weights ``dual`` holds
    draw_seed: int | None = None  # the seed of stochastic boosting's draws, if any


def dual_weights(p: CoordinateProblem, margins: np.ndarray) -> row_passes.DualWeights:
    """Step 1: the normalised dual weights ``w ∝ s · (−φ'(margins))`` in log space, the
    oracle's query ``w · y``, the weights' Shannon entropy (Telgarsky 2012, Remark 5)
    and the log-risk at ``margins`` (:func:`.row_passes.dual_weights`)."""
    return row_passes.dual_weights(p.blocks, p.loss, margins, p.log_s, p.ypm,
                                   math.log(p.s_total))


def coordinate_round(p: CoordinateProblem, state: CoordinateState, ensemble: Ensemble, t: int,
                     budget: int, who: str) -> RoundResult:
    """Telgarsky (2013), Algorithm 1, one round (the module's box).  ``t`` counts the
    rounds before this one (a schedule's count), ``budget`` the rounds left with this
    one, ``who`` names the estimator in a warning."""
    query = state.dual.query  # 1. w and w ∘ y came with the state
    # 2. the oracle's answer as a column in [−1, 1]: bounded classes as they are
    #    (Telgarsky's A), scale-free ones rescaled to max |h| = 1;
    # 3. its edge γ_t and the sign σ_t that makes it positive (the passes read the
    #    query alone: the weights are its magnitudes)
    #    (stochastic boosting: the oracle sees round t's rows and features alone; the
    #    edge, the step and the weights are every row's)
    asked, only = (query, {}) if p.draws is None else \
        p.draws.query(p.blocks, state.draw_seed, t, query)
    h = p.bound.correlate(asked, random_state=draw_seed(state.rng), **only)
    col = SignedColumn.of(h, p.ypm, None, p.bounded, p.blocks, query=query)
    if isinstance(col, StopReason):
        return RoundResult(state, stop=col)
    # 4. the step α_t
    stop, view = None, None
    if col.u_min >= 1.0:
        # γ_t = 1: the step is unbounded (Telgarsky 2013 ignores this case).  Take the
        # limit's direction: a coefficient larger than ‖λ‖_1 (and than any row's
        # init_score), so that h decides every training point, then stop.
        alpha = ensemble.l1_norm() + 1.0 + p.offset_bound
        stop = StopReason.PERFECT_HYPOTHESIS
    else:
        stepped = step_size(p, state, col, t, who)
        if isinstance(stepped, StopReason):
            return RoundResult(state, stop=stepped)
        alpha, view = stepped
    # 5. f += α_t σ_t h_t / ‖h_t‖ and the next round's weights
    coef = alpha * col.sign / col.norm
    # another round to come: the oracle may start on the next query (on a cluster, its
    # histograms then come back with this step's stats: a wait fewer a round)
    # (a stochastic fit's next query is another sample: nothing to start on)
    ahead = getattr(p.bound, "_prefetch", None) \
        if stop is None and budget > 1 and p.draws is None else None
    margins, low, wrong, dual = step_margins(p, state, col, alpha, coef, ahead)
    term = (h.detach(), coef, col.norm)
    margin = low / ensemble.l1_norm(pending=(term,))  # the ℓ1 margin with the new term
    rec = record(p, state, col, alpha, view, dual.log_loss, margin, wrong)
    new = CoordinateState(margins=margins, dual=dual, rng=state.rng, loss=p.loss,
                          draw_seed=state.draw_seed)
    return RoundResult(new, (term,), (rec,), stop)


def step_size(p: CoordinateProblem, state: CoordinateState, col: SignedColumn, t: int,
              who: str) -> tuple[float, StepState] | StopReason:
    """Step 4: the step rule's α_t (with ν) and the view of the line it read, or the
    round's stop: a risk that does not fall along h (``zero_edge``), an infinite step,
    or a zero one (warned when the rule divided by Telgarsky's C_t and it underflowed)."""
    view = StepState(
        loss=p.loss,
        margins=state.margins,
        column=col,
        query=state.dual.query,
        log_s=p.log_s,
        sample_weight=None if p.log_s is None else p.s,  # equal weights cancel
        nu=p.nu,
    )
    if p.rule.uses_line and not view.slope > 0.0:
        # The risk does not decrease along h to working precision: the edge is zero up
        # to rounding (an attainable optimum reached, Telgarsky 2012, §6.3-6.4).
        return StopReason.ZERO_EDGE
    alpha = p.rule(view, t)
    if alpha == np.inf:
        return StopReason.INFINITE_STEP
    if not alpha > 0.0:
        if "log_c" in vars(view) and view.log_c > 0.0:  # the rule divided by C_t^k
            warnings.warn(
                f"{who}: the {p.rule.name!r} step is 0 at round "
                f"{t + 1}: it divides by a power of Telgarsky's (2013) curvature "
                f"constant C_t = exp({view.log_c:.4g}), which grows with the risk "
                "summed over the rows (not averaged), so it underflows on "
                "this data; step='wolfe' or 'optimal' take steps here",
                BoostingWarning,
                stacklevel=4,  # the caller of the estimator's round
            )
        return StopReason.ZERO_STEP
    return alpha, view


def step_margins(p: CoordinateProblem, state: CoordinateState, col: SignedColumn,
                 alpha: float, coef: float, ahead: Callable | None) -> tuple:
    """Step 5 and the next round's step 1 in one pass (:func:`.row_passes.step_and_weights`):
    the new margins, their least value, the mass of rows wrong, and the new dual weights.

    Every margin moves by at most ``|coef| max |a| ≤ |coef| ‖h‖``; for the exponential
    loss the new weights' normaliser is the risk's times ``Z_t = Σ w e^(−α u)``
    (Schapire & Singer 1999), known from the column's sums when it has two values."""
    s = p.s if p.log_s is not None else column_kernels.NO_WEIGHTS  # equal ones cancel
    normaliser = None
    if p.loss.log_weight_is_neg_margin:
        log_z = col.log_exp_mass(alpha)
        if log_z is not None:
            normaliser = state.dual.log_loss + math.log(p.s_total) + log_z
    return row_passes.step_and_weights(
        p.blocks, p.loss, state.margins, col.a, p.ypm, coef, abs(coef) * col.norm, s,
        p.log_s, math.log(p.s_total), state.dual.tops, normaliser, prefetch=ahead)


def record(p: CoordinateProblem, state: CoordinateState, col: SignedColumn, alpha: float,
           view: StepState | None, log_loss: float, margin: float,
           wrong: float) -> dict[str, float]:
    """A round's record: the new risk (and its log), the ℓ1 margin, the training error,
    γ_t, α_t, the entropy of the weights the round used, a search's cost (R and R'
    evaluated) and, with the optimal risk known, the duality gap (Telgarsky 2012)."""
    out = {
        "loss": math.exp(log_loss),
        "log_loss": log_loss,
        "margin": margin,
        "train_error": wrong / p.s_total,
        "edge": col.edge,
        "step": alpha,
        "entropy": state.dual.entropy(),  # of the weights this round used
    }
    if p.rule.uses_line and view is not None:
        out["line_evaluations"] = float(view.line.evaluations[0])
    if p.optimal_loss is not None:
        out["gap"] = out["loss"] - p.optimal_loss
    return out
