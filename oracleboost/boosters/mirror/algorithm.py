"""MABoost's algorithm box (Naghibi & Pfister 2014, Algorithm 1): the problem, the state
between rounds and the round.

One round, binary (:func:`binary_round`)::

    (a) h_t = oracle.correlate(w_t · a);  d_t = −a ∘ h_t;  γ_t = −w_tᵀ d_t
    (b) η_t = γ_t / L                      (the variant's rule: :mod:`.variants`)
    (c) ∇R(z_{t+1}) = ∇R(z_t or w_t) + η_t d_t     (the update: :mod:`.updates`)
    (d) w_{t+1} = argmin_{w ∈ S} B_R(w, z_{t+1})   (the projection: :mod:`.updates`)
    f += η_t h_t

The variant, the map, the update and the projection are objects the set-up chose; the
round calls them.  With the entropy map, the lazy update and no cap, (c), (d) and the
next query are one pass (:func:`fused_entropy_step`), the softmax's normaliser predicted
from the column's two masses.  The multiclass round (:func:`multiclass_round`) follows
the ``maboost`` package's construction over the N × (K − 1) cells (:mod:`.cells`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.boosters.mirror import cells as mirror_cells
from oracleboost.boosters.mirror import passes as mirror_passes
from oracleboost.boosters.mirror.maps import MirrorMap
from oracleboost.boosters.mirror.updates import DualUpdate, Projection
from oracleboost.boosters.mirror.variants import Variant
from oracleboost.engine.classifier import SignedColumn
from oracleboost.engine.model import Ensemble
from oracleboost.engine.rounds import Problem, RoundResult, StopReason, draw_seed
from oracleboost.oracles.base import Hypothesis
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Rows
from oracleboost.rows.subsample import RoundDraws

__all__ = ["MirrorProblem", "MirrorState", "start", "initial_state", "binary_round",
           "multiclass_round", "fused_entropy_step", "step_and_project"]


@dataclass
class MirrorProblem(Problem):
    a: np.ndarray  # labels ±1 as int8 (binary) or class indices 0..K−1
    s: np.ndarray | None  # sample weights (binary: None when all are equal)
    s_total: float  # Σ s, summed by lanes
    K: int  # 2 for binary
    cap: object  # per-cell caps (smooth / dataset-combining: a number or rows), or None
    mirror: MirrorMap
    L: float  # the bound on ‖d‖_*², eq. 8–9: 1 (entropy), number of cells (Euclidean)
    variant: Variant  # (b): η_t, the potential, the stops and the bound
    update: DualUpdate  # (c)
    projection: Projection  # (d)
    nu: float  # the learning rate ν, multiplying η_t
    bound: object
    bounded: bool
    secondary: np.ndarray | None
    blocks: RowBlocks  # the rows' blocks, in memory or on a cluster
    log_s: object = None  # log s, for the MadaBoost variant with unequal weights
    cells: RowBlocks | None = None  # multiclass: the blocks of the N × (K − 1) cells
    vote: Callable[[Hypothesis], Hypothesis] | None = None  # multiclass: a hypothesis' vote
    draws: RoundDraws | None = None  # stochastic boosting's draws, None without


@stored_as("MirrorState")
@dataclass(frozen=True)
class MirrorState:
    """Between rounds.  ``w`` is the distribution over cells for the next round;
    ``z`` is the lazy update's dual accumulator (log z for entropy) or, for SparseBoost,
    the unnormalised state y; ``f`` the running vote on the training points;
    ``potential`` Σ_t (η_t γ_t − L η_t²/2)-type sums behind the ``bound`` record.
    Binary fits also carry the oracle's next query ``w · a``, SparseBoost's ‖y‖₁
    (``mass``), the vote's error ε_t (``error``, the MadaBoost variant's step) and, for
    the entropy map's lazy update, ``log_norm = log Σ z`` (``w = z / Σ z``), from which
    the next round predicts its own (:func:`.passes.entropy_step`); for the
    Euclidean map, where the last projection's threshold was (``near``: the next one's
    first pivots, :func:`.row_projections.euclidean_simplex_rows_near`)."""

    w: np.ndarray
    z: np.ndarray | None
    f: np.ndarray
    t: int
    potential: float
    rng: np.random.RandomState
    query: np.ndarray | None = None
    mass: float = 1.0
    error: float = 1.0
    log_norm: float = 0.0  # log Σ z of the lazy entropy average (Σ w_1 = 1: 0)
    near: object = None  # where the Euclidean projection's threshold was (row_projections.Near)
    draw_seed: int | None = None  # the seed of stochastic boosting's draws, if any


def start(blocks: RowBlocks, s: Rows | None, s_total: float, K: int = 2) -> Rows:
    """w_1, the starting distribution over the cells: ``s / Σ s`` (exactly 1/N for
    equal weights), over the K − 1 cells of each row for K > 2.  Made where it is
    read, never kept in the problem: on a cluster it is a float64 array a row."""
    if K > 2:
        return mirror_cells.start(blocks, s, s_total, K - 1)
    if s is None:
        return blocks.full(1.0 / blocks.n)
    return mirror_passes.divided(blocks, s, s_total)


def initial_state(p: MirrorProblem, rng: np.random.RandomState | None
                  ) -> tuple[MirrorState, float | np.ndarray]:
    """The state before round 1 (w_1, the update's z_1) and the vote's intercept, 0."""
    w1 = start(p.blocks, p.s, p.s_total, p.K)
    if p.K > 2:
        z, _ = p.update.start(p.cells, p.mirror, w1)
        state = MirrorState(w=w1, z=z, f=p.blocks.full(np.zeros(p.K)), t=0, potential=0.0,
                            rng=rng)
        return state, np.zeros(p.K)
    z, mass = p.update.start(p.blocks, p.mirror, w1)
    query, _, _ = mirror_passes.query(p.blocks, w1, p.a)
    state = MirrorState(w=w1, z=z, f=p.blocks.full(0.0), t=0, potential=0.0, rng=rng,
                        query=query, mass=mass, error=1.0)
    return state, 0.0


class Moved(NamedTuple):
    """Steps (c) and (d) of a binary round: the dual state, the vote and its sums, the
    new weights, the next query, ``max w``, the exact zeros of w, and the projection's
    hints for the next round."""

    z: Rows | None
    f: Rows
    sums: mirror_passes.VoteSums
    w: Rows
    query: Rows
    top: float
    zeros: int
    log_norm: float
    near: object


def _asked(p: MirrorProblem, state: MirrorState, query: Rows, t: int
           ) -> tuple[Rows, dict]:
    """The oracle's query of round ``t`` and its keywords: ``query`` itself, or with
    stochastic boosting's draws ``query`` on the round's rows (the others 0) and its
    features (Friedman 2002); the step, the weights and the records are every row's."""
    if p.draws is None:
        return query, {}
    return p.draws.query(p.blocks, state.draw_seed, t, query)


def binary_round(p: MirrorProblem, state: MirrorState, ensemble: Ensemble,
                 budget: int, fitted: int = 0) -> RoundResult:
    """Algorithm 1, one round on ±1 labels (the module's box); ``fitted`` rounds before
    it (the draws' round)."""
    stop = p.variant.halt(state)  # the MadaBoost variant: ε_t = 0 makes η_t = 0
    if stop is not None:
        return RoundResult(state, stop=stop)
    # (a) the weak hypothesis on w_t (the query w_t · a came with the state), as a
    #     column u = a h / norm in [−1, 1] with γ_t = Σ w u ≥ 0 (negated if need be)
    asked, only = _asked(p, state, state.query, fitted)
    h = p.bound.correlate(asked, random_state=draw_seed(state.rng), **only)
    col = SignedColumn.of(h, p.a, state.w, p.bounded, p.blocks)
    if isinstance(col, StopReason):
        return RoundResult(state, stop=col)
    # (b) the step η_t of the variant (SparseBoost: and its ℓ1 factor α_t)
    eta, alpha, potential = p.variant.step(p.nu, col.edge, state, p.L, p.blocks.n)
    coef = eta * col.sign / col.norm  # the vote f += η_t h (signed, normalised)
    # another round to come: the oracle may start on its query (on a cluster, the
    # histograms then come back with this pass's stats: a wait fewer a round)
    # (a stochastic fit's next query is another sample: nothing to start on)
    ahead = p.bound._prefetch if budget > 1 and p.draws is None else None
    # (c) the mirror step and (d) the projection, then the next query: one pass where
    #     the projection is a softmax with a predicted normaliser
    moved = fused_entropy_step(p, state, h, col, eta, coef, ahead) \
        if p.projection.fused else None
    if moved is None:
        moved = step_and_project(p, state, h, coef, alpha * eta, ahead)
    term = (h.detach(), coef, col.norm)
    sums, n = moved.sums, p.blocks.n
    record = _record(p, col.edge, eta, sums.loss_mass, sums.wrong_mass, sums.low,
                     ensemble.l1_norm(pending=(term,)), moved.top * n, moved.zeros,
                     theorem_bound(p, potential))
    stop = p.variant.stop(moved.zeros, n)  # SparseBoost: a state of zeros
    if stop is None and col.u_min >= 1.0:
        # γ = 1: every example right with margin 1; the next distribution is the same
        # and so would every later hypothesis be.
        stop = StopReason.PERFECT_HYPOTHESIS
    new = MirrorState(w=moved.w, z=moved.z, f=moved.f, t=state.t + 1, potential=potential,
                      rng=state.rng, query=moved.query, mass=sums.mass, error=record["loss"],
                      log_norm=moved.log_norm, near=moved.near, draw_seed=state.draw_seed)
    return RoundResult(new, (term,), (record,), stop)


def fused_entropy_step(p: MirrorProblem, state: MirrorState, h: Hypothesis, col: SignedColumn,
                       eta: float, coef: float, ahead: Callable | None) -> Moved | None:
    """Steps (c), (d) and the next query in one pass, for the entropy map's lazy,
    uncapped round (:func:`.passes.entropy_step`): the softmax's normaliser predicted
    from the column's two masses, ``log Σ z_{t+1} = log Σ z_t + log Σ w_t e^(−η u)``;
    None where the column predicts none (more than two values) or none finite."""
    log_mass = col.log_exp_mass(eta)
    if log_mass is None or not math.isfinite(state.log_norm + log_mass):
        return None
    step = mirror_passes.entropy_step(
        p.blocks, state.z, state.f, p.a, h.train_output, p.s, coef=coef,
        log_norm=state.log_norm + log_mass, prefetch=ahead)
    return Moved(step.z, step.f, step.sums, step.w, step.query, step.top, step.zeros,
                 step.log_norm, state.near)


def step_and_project(p: MirrorProblem, state: MirrorState, h: Hypothesis, coef: float,
                     alpha_eta: float, ahead: Callable | None) -> Moved:
    """Step (c) by the update with the vote (:func:`.passes.mirror_step`), step (d) by
    the projection, and the next query (:func:`.passes.query`)."""
    point, z, f, sums = mirror_passes.mirror_step(
        p.blocks, state.w, state.z, state.f, p.a, h.train_output, p.s, p.log_s, coef=coef,
        update=p.update, mirror=p.mirror, alpha_eta=alpha_eta)
    w, log_norm, near = p.projection(p.blocks, point, cap=p.cap, mirror=p.mirror,
                                     mass=sums.mass, log_norm=state.log_norm, near=state.near)
    query, top, zeros = mirror_passes.query(p.blocks, w, p.a, prefetch=ahead)
    return Moved(z, f, sums, w, query, top, zeros, log_norm, near)


def multiclass_round(p: MirrorProblem, state: MirrorState, ensemble: Ensemble,
                     fitted: int = 0) -> RoundResult:
    """The ``maboost`` package's multiclass round over the cells W (:mod:`.cells`);
    ``fitted`` rounds before it (the draws' round)."""
    blocks, K, width = p.blocks, p.K, p.K - 1
    q, total = mirror_cells.row_masses(blocks, state.w, width)
    # (a) the learner sees the row sums as example weights: maximise Σ q_i [h(x_i) = c_i]
    r = mirror_cells.query(blocks, q, p.a, total, K)
    r, only = _asked(p, state, r, fitted)
    h = p.bound.correlate(r, random_state=draw_seed(state.rng), **only)
    D, pred, e, n_wrong = mirror_cells.directions(blocks, h.train_output, p.a, state.w,
                                                  width)
    if not e > 0.0:
        # No negation is available for a class vote: the weights would not move and
        # the same hypothesis would come back every round.
        return RoundResult(state, stop=StopReason.ZERO_EDGE)
    # (b) η = ν e / L, (c) over the cells, (d) onto S (S_k) of the N (K − 1) cells
    eta, _, _ = p.variant.step(p.nu, e, state, p.L, p.cells.n)
    point, z = mirror_cells.step_target(p.cells, p.mirror, state.w, state.z, D, eta,
                                        p.update)
    w_next, _, near = p.projection(p.cells, point, cap=p.cap, mirror=p.mirror, mass=1.0,
                                   log_norm=state.log_norm, near=state.near)
    f, bad, wrong, low = mirror_cells.vote(blocks, state.f, pred, p.a, p.s, eta)
    term = (p.vote(h.detach()), eta, 1.0)
    top, zeros = mirror_cells.extremes(p.cells, w_next)
    record = _record(p, e, eta, bad, wrong, low, ensemble.l1_norm(pending=(term,)),
                     top * p.cells.n, zeros, math.nan)
    new = MirrorState(w=w_next, z=z, f=f, t=state.t + 1, potential=math.nan, rng=state.rng,
                      near=near, draw_seed=state.draw_seed)
    stop = StopReason.PERFECT_HYPOTHESIS if n_wrong == 0 and e >= 1.0 else None
    return RoundResult(new, (term,), (record,), stop)


def theorem_bound(p: MirrorProblem, potential: float) -> float:
    """The variant's theorem (1, 3, 4, or 5 corrected) from the run's own η_t, γ_t; NaN
    with a secondary set or a potential not finite."""
    if p.secondary is not None or not math.isfinite(potential):
        return math.nan
    # binary: s is None exactly when the weights are equal
    return p.variant.bound(p.mirror, potential, p.blocks.n, p.s is None, p.nu)


def _record(p: MirrorProblem, edge: float, eta: float, bad: float, wrong: float, low: float,
            l1: float, max_weight: float, zeros: int, bound: float) -> dict[str, float]:
    """A round's record from its sums: the masses the vote (ties counted) and
    ``predict`` get wrong, the smallest margin a f, ‖λ‖₁ with the new term, and the new
    weights' extremes (``max_weight`` scaled by the number of cells)."""
    return {
        "loss": bad / p.s_total,
        "train_error": wrong / p.s_total,
        "edge": edge,
        "step": eta,
        "eta": eta,
        "margin": low / l1 if l1 > 0.0 else math.nan,
        "max_weight": max_weight,
        "n_zero_weights": float(zeros),
        "bound": bound,
    }
