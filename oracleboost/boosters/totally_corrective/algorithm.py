"""Totally corrective boosting's algorithm box: column generation over any oracle, each
method an object with its round (LPBoost, ERLPBoost, SoftBoost; TotalBoost is SoftBoost
with ν = 1).  The methods' boxes, their certificate and their bounds are derived in
:mod:`.estimator`'s docstring; every round composes the same steps::

    h_t = the oracle's answer to correlate(d_{t−1} ∘ y)          (pricing: price)
    the method's stopping rule (LPBoost: edge_t ≤ γ_{t−1} + tol; ERLPBoost: δ_t ≤ ε/2;
        SoftBoost: the LP's value reaches γ̂_t − ε)
    add the column u_t (column_entries), and the method's d_t: LPBoost the LP's dual,
        ERLPBoost argmin P^t (solve_regularized), SoftBoost the relative-entropy
        projection (solve_projection)
    the soft-margin LP over the columns chosen (solve_with): the coefficients (joined,
        coefficients), the model on the training rows and the record (fit_record)

The method is chosen once, when the problem is made (:data:`BOXES`); the estimator's
round calls its ``round``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.boosters.totally_corrective import vote_cells
from oracleboost.boosters.totally_corrective.entropy_duals import (
    ACCEPT_TOL,
    ColumnStore,
    EntropySolveError,
    solve_projection,
    solve_regularized,
)
from oracleboost.boosters.totally_corrective.soft_margin_lp import LPSolveError, SoftMarginLP
from oracleboost.engine.classifier import SignedColumn, weighted_error
from oracleboost.engine.model import Refit
from oracleboost.engine.rounds import Problem, RoundResult, StopReason, draw_seed
from oracleboost.optim import row_passes
from oracleboost.optim.votes import ArgmaxVote, predicted_index, vote_margins
from oracleboost.oracles.base import Hypothesis
from oracleboost.rows.blocks import RowBlocks

__all__ = ["TCProblem", "TCState", "Entropic", "Method", "LPBoost", "ERLPBoost", "SoftBoost",
           "BOXES", "INFEASIBLE_SLACK", "erlpboost_round_bound", "softboost_round_bound",
           "price", "column_entries", "joined", "coefficients", "fit_record", "vote_metrics",
           "solve_with", "entropy_solve"]

#: A fit's warning (the estimator's ``_warn``: a BoostingWarning at the caller's fit).
Warn = Callable[[str], None]

#: SoftBoost's problem counts as infeasible when the LP's value is within this of the
#: bound ``γ̂ − ε`` (a set that thin has no projection worth computing in floating point;
#: HiGHS's values are good to about this): its guarantee is then ``ε + INFEASIBLE_SLACK``.
INFEASIBLE_SLACK = 1e-9


def erlpboost_round_bound(n: float, nu: float, eps: float) -> int:
    """The most hypotheses ERLPBoost's final LP can hold before its stopping rule fires,
    ``≈ 32 ln(N/ν)/ε²`` (derived in the module docstring; ``n`` the rows, or ``Σ c``)."""
    L = math.log(n / nu) if n > nu else 0.0
    if L == 0.0:
        return 1
    eta = 2.0 * L / eps
    delta, t = 2.0, 2  # δ_2 ≤ 2: round 2 is the first that can stop
    while delta > eps / 2 and delta > 4 * eta:  # the linear regime: δ halves
        delta, t = delta / 2, t + 1
    if delta > eps / 2:  # the quadratic regime: 1/δ grows by 1/(8η) a round
        t += max(0, math.ceil(8 * eta * (2 / eps - 1 / delta)))
    return t - 1  # the stopping round's hypothesis does not join


def softboost_round_bound(n: float, nu: float, eps: float) -> int:
    """SoftBoost's (and TotalBoost's, ν = 1) most rounds, the infeasible one included:
    ``⌊2 ln(N/ν)/ε²⌋ + 1`` (module docstring; the papers state ``⌈2 ln(N/ν)/ε²⌉``)."""
    L = math.log(n / nu) if n > nu else 0.0
    return math.floor(2.0 * L / eps ** 2 + 1e-9) + 1


@dataclass
class TCProblem(Problem):
    y: np.ndarray  # ±1 (binary) or the class indices 0 … K − 1
    s: np.ndarray  # the rows' weights (normalised: mean in [1, 2))
    s_total: float
    cost: np.ndarray  # c_i = s_i / s̄
    bound: object
    bounded: bool
    blocks: RowBlocks
    method: str = "lpboost"
    tol: float = 1e-6  # LPBoost's certificate gap; the others' ε
    nu: float = 1.0  # the capping ν (resolved: nu, or N/2)
    log_d0: np.ndarray | None = None  # log d⁰ = log(c/N)
    caps: np.ndarray | None = None  # c/ν
    eta: float = math.nan  # ERLPBoost's η
    K: int = 2  # the classes
    cells: bool = False  # K > 2: the LP's rows are the N × (K − 1) cells (vote_cells)
    #: the method's round (:data:`BOXES`), chosen once from ``method``
    box: Method = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.box = BOXES[self.method]


@stored_as("Entropic")
@dataclass(frozen=True)
class Entropic:
    """What ERLPBoost and SoftBoost carry between rounds beside the LP: their columns, the
    last solve's multipliers and values (at d_{t−1}), and ERLPBoost's two bounds."""

    store: ColumnStore
    n: int  # columns in the store that are this state's
    alpha: np.ndarray  # the last solve's multipliers
    edges_max: float  # max_q d_{t−1}·u_q over the columns held (−inf before any)
    entropy: float  # Δ(d_{t−1}, d⁰)
    lower: float  # ERLPBoost: θ_{t−1} ≤ P^{t−1}(d^{t−1}) (−inf before any solve)
    reg_upper: float  # ERLPBoost: min_{q ≤ t} P^q(d^{q−1}) (+inf before any pricing)
    coef: np.ndarray  # the ensemble's coefficients from the last LP


_ENTROPY_KEYS = ("objective", "relative_entropy", "solver_gap", "solver_time",
                 "solver_iterations", "conic_start")


def _accept(eps: float) -> float:
    """The largest certified gap of an entropy solve a round accepts: far below the ε/2
    its stopping rule compares (:data:`.entropy_duals.ACCEPT_TOL` at least)."""
    return max(ACCEPT_TOL, 1e-6 * eps)


def _fallback_accept(eps: float) -> float:
    """The largest certified gap (and constraint violation) of an entropy solve a round
    takes when no solve reaches :func:`_accept`: ε/100, still far below the ε/2 the
    stopping rules compare.  The rules read only certified lower values and values at
    points, so the ε-guarantee holds with such a solve; the round bounds assume exact
    minimisers."""
    return 1e-2 * eps


@stored_as("TCState")
@dataclass(frozen=True)
class TCState:
    """Between rounds: the restricted LP (its columns, and HiGHS's model), the current
    dual distribution and value, the columns' signs and norms, and the seeds."""

    lp: SoftMarginLP
    d: np.ndarray  # d_{t−1}
    gamma: float  # γ_{t−1} (−inf before the first solve)
    upper: float  # the least best edge seen: an upper bound on the full LP's optimum
    held: tuple  # the ensemble's hypotheses' training outputs and max |h|, in its order
    factors: tuple  # each column's coefficient per unit weight, on its ensemble hypothesis
    slots: tuple  # each column's hypothesis' index in the ensemble
    seen: frozenset  # (key, orientation) of the columns: a column is added once
    rng: np.random.RandomState
    entropic: Entropic | None = None  # ERLPBoost, SoftBoost and TotalBoost

    def __getstate__(self) -> dict:
        # ``seen`` stored as a tuple (in a fixed order): skops trusts tuples but not
        # frozensets, and loading a stored model asks its user to trust only
        # oracleboost's own classes (tests/test_persistence.py)
        state = dict(vars(self))
        state["seen"] = tuple(sorted(self.seen, key=repr))
        return state

    def __setstate__(self, state: dict) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, frozenset(value) if key == "seen" else value)

    def lp_as_left(self) -> SoftMarginLP:
        """The LP with this state's columns only.  The LP is shared by the states of
        one fit, so a round that added a column and then did not become the state (the
        loop discarded it, an interrupt, a solver failure, early stopping's return to
        an earlier round) left a column too many: taken out here."""
        self.lp.truncate(len(self.factors))
        return self.lp


# -- what every method's round shares --------------------------------------------------
def price(p: TCProblem, state: TCState
          ) -> tuple[Hypothesis, SignedColumn, str] | StopReason:
    """The oracle's best hypothesis under d_{t−1}: ``(h, column, name)``, or the
    stop reason of :meth:`SignedColumn.of` (``zero_hypothesis``, ``zero_edge``).  A
    column is a hypothesis with its orientation (w ≥ 0: h and −h are two columns,
    though the ensemble keeps one coefficient for both); ``name`` identifies it."""
    if p.cells:  # the cells: the query R, the answer's vote as a column
        query = vote_cells.pricing_query(state.d, p.y, p.K)
        h = p.bound.correlate(query, random_state=draw_seed(state.rng))
        column = vote_cells.VoteColumn.of(h, p.y, state.d, p.K)
        return h, column, column.name
    query = row_passes.scaled(p.blocks, p.y, state.d)
    h = p.bound.correlate(query, random_state=draw_seed(state.rng))
    column = SignedColumn.of(h, p.y, state.d, p.bounded, p.blocks)
    if isinstance(column, StopReason):
        return column
    name = None if h.key is None else (h.key, column.sign * h.scale)
    return h, column, name


def column_entries(p: TCProblem, column: SignedColumn) -> np.ndarray:
    """The column's entries u_t over the LP's rows (the cells when K > 2)."""
    if p.cells:
        return column.u
    return row_passes.oriented(p.blocks, column.a, column.y, column.norm, column.sign)


def joined(p: TCProblem, state: TCState, ensemble: Refit, h: Hypothesis,
           column: SignedColumn) -> tuple:
    """The new column on the ensemble's hypothesis: ``w · sign · h / ‖h‖``, and h is
    (h.scale / first.scale) times the first hypothesis of its key there.  Returns
    (joining, held, factors, slots) after the column.  K > 2: h joins as its vote
    (``ArgmaxVote``, norm 1, the column's weight its coefficient), and ``held`` keeps
    each hypothesis' votes."""
    if p.cells:
        vote = ArgmaxVote(h.detach(), p.K)
        slot = ensemble.index_of(vote)
        joining, held = (), state.held
        if slot is None:
            slot = len(ensemble.hypotheses)
            joining, held = ((vote, 1.0),), (*held, (column.votes, 1.0))
        return joining, held, (*state.factors, 1.0), (*state.slots, slot)
    slot = ensemble.index_of(h)
    joining, held = (), state.held
    if slot is None:
        slot = len(ensemble.hypotheses)
        top = float(row_passes.peak(p.blocks, h.train_output))
        joining = ((h.detach(), top),)
        held = (*held, (h.train_output, top))
        held_scale = h.scale
    else:
        held_scale = ensemble.hypotheses[slot].scale
    factor = column.sign * (h.scale / held_scale) / column.norm
    return joining, held, (*state.factors, factor), (*state.slots, slot)


def coefficients(w: np.ndarray, factors: tuple, slots: tuple, n_held: int) -> np.ndarray:
    """The ensemble's coefficients from the LP's column weights."""
    coef = np.zeros(n_held)
    for wj, c, j in zip(w.tolist(), factors, slots, strict=True):
        coef[j] += wj * c
    return coef


def vote_metrics(target: np.ndarray, weight: np.ndarray | None,
                 scores: np.ndarray) -> dict[str, float]:
    """A set's ``loss``, the weighted share of rows whose vote margin is at most 0 (ties
    count against; MABoost's ``loss``), and ``error``, that of ``predict`` (ties to the
    lowest class).  ``target`` is ±1 (binary scores) or the class indices (K > 2)."""
    margins = vote_margins(target if scores.ndim == 2 else
                           np.where(target > 0, 1.0, -1.0), scores)
    wrong = predicted_index(scores) != (target if scores.ndim == 2 else target > 0)
    return {"loss": weighted_error(margins <= 0, weight),
            "error": weighted_error(wrong, weight)}


def fit_record(p: TCProblem, coef: np.ndarray, held: tuple) -> dict:
    """The model on the training rows, Σ_j coef_j h_j summed in the ensemble's order
    (as its decision_function sums a refit: the same bits): its loss, ℓ1 margin and
    training error."""
    if p.cells:
        f = vote_cells.vote_scores([v for v, _ in held], coef, p.K)
        record = vote_cells.vote_record(p.y, f, p.s, p.s_total,
                                        math.fsum(abs(c) for c in coef.tolist()))
        return {**record, "loss": vote_metrics(p.y, p.s, f)["loss"]}
    f = row_passes.combined(p.blocks, p.blocks.full(0.0), [
        (c, a) for c, (a, _) in zip(coef.tolist(), held, strict=True)])
    error, low = row_passes.error_and_margin(p.blocks, p.y, f, p.s, p.s_total)
    l1 = math.fsum(abs(c) * top for c, (_, top) in zip(coef.tolist(), held, strict=True))
    return {"loss": vote_metrics(p.y, p.s, f)["loss"],
            "margin": low / l1 if l1 > 0 else math.nan, "train_error": error}


def solver_failed(p: TCProblem, warn: Warn, t: int, what: str, exc: Exception) -> StopReason:
    """``solver_failed``, warned with the solver's words: the model keeps the last good
    round."""
    warn(f"method={p.method!r}: {what} failed at round {t + 1} ({exc}); the model "
         "keeps the last good round (stop_reason_='solver_failed')")
    return StopReason.SOLVER_FAILED


def entropy_solve(solve: Callable, p: TCProblem, t: int, what: str, warn: Warn) -> Any:
    """An entropy solve's answer; one certified only to :func:`_fallback_accept`
    (Newton's iteration limit, Clarabel short of its tolerance) is taken too, its
    gap recorded in ``history_["solver_gap"]``; else ``solver_failed`` (warned)."""
    try:
        return solve()
    except EntropySolveError as exc:
        sol, loose = exc.solution, _fallback_accept(p.tol)
        if sol is not None and sol.gap <= loose and sol.violation <= loose:
            return sol
        return solver_failed(p, warn, t, what, exc)


def solve_with(p: TCProblem, state: TCState, u: np.ndarray, t: int, warn: Warn) -> Any:
    """The soft-margin LP over the state's columns and ``u``, from the last basis:
    its solution, or ``solver_failed`` (warned, with the solver's status) with the
    LP left as the state holds it (built again from the good columns if fitting
    goes on)."""
    lp = state.lp_as_left()
    lp.add_column(u)
    try:
        return lp.solve()
    except LPSolveError as exc:
        state.lp_as_left()
        return solver_failed(p, warn, t, "the LP", exc)


def lp_record(solution, edge: float, upper: float, step: float) -> dict:
    """The restricted LP's part of a round's record: its value γ_t, the certificate
    (edge_t, the least edge, their gap), the new column's weight, the weights held."""
    return {"lp_value": solution.value, "edge": edge, "upper_bound": upper,
            "gap": upper - solution.value, "step": step,
            "n_nonzero": float(np.count_nonzero(solution.w)),
            "lp_time": solution.seconds}


def entropy_record(sol, lp_solution) -> dict:
    """An entropy solve's part of a round's record (the LP's time added to the solver's)."""
    lp_time = 0.0 if lp_solution is None else lp_solution.seconds
    return {"objective": sol.dual_value if sol.violation == 0.0 else sol.value,
            "relative_entropy": sol.entropy, "solver_gap": sol.gap,
            "solver_time": sol.seconds + lp_time,
            "solver_iterations": float(sol.iterations),
            "conic_start": float(sol.conic)}


def _new_state(state: TCState, d: np.ndarray, gamma: float, upper: float, held: tuple,
               factors: tuple, slots: tuple, name, entropic: Entropic | None) -> TCState:
    """The state after a round that solved: the new column ``name`` seen."""
    return TCState(lp=state.lp, d=d, gamma=gamma, upper=upper, held=held, factors=factors,
                   slots=slots, seen=state.seen | {name} - {None}, rng=state.rng,
                   entropic=entropic)


# -- the methods ------------------------------------------------------------------------
class Method:
    """A totally corrective method: its round, the history it records beyond the LP's,
    whether it carries an entropy solve's state (:class:`Entropic`), and its bound on
    the rounds (``round_bound_``)."""

    name: str = ""
    entropic: bool = False
    extra_keys: tuple[str, ...] = ()

    def round(self, p: TCProblem, state: TCState, ensemble: Refit, t: int,
              warn: Warn) -> RoundResult:
        raise NotImplementedError

    def round_bound(self, n: float, nu: float, tol: float) -> int | None:
        """The most rounds the method can use (None: no bound)."""
        return None


class LPBoost(Method):
    """LPBoost (Demiriz, Bennett & Shawe-Taylor 2002): the restricted LP's dual is
    d_t, and the certificate's gap stops it."""

    name = "lpboost"

    def round(self, p: TCProblem, state: TCState, ensemble: Refit, t: int,
              warn: Warn) -> RoundResult:
        start = time.perf_counter()
        # 1. pricing: the oracle's best hypothesis under d_{t−1}
        priced = price(p, state)
        if isinstance(priced, StopReason):
            stop = StopReason.GAP_CLOSED if priced is StopReason.ZERO_EDGE else priced
            return RoundResult(state, stop=stop)
        h, column, name = priced
        edge, gap = column.edge, column.edge - state.gamma
        upper = min(state.upper, edge)  # every pricing's best edge bounds P* above
        # 2. no hypothesis improves on the restricted LP: the certificate closes (a
        #    column it holds has an edge of at most γ: it can only be one by rounding)
        if gap <= p.tol or name in state.seen:
            return RoundResult(replace(state, upper=upper), stop=StopReason.GAP_CLOSED)
        # 3. the new column, and the LP over every column, from the last basis
        u = column_entries(p, column)
        solution = solve_with(p, state, u, t, warn)
        if isinstance(solution, StopReason):
            return RoundResult(state, stop=solution)
        joining, held, factors, slots = joined(p, state, ensemble, h, column)
        coef = coefficients(solution.w, factors, slots, len(held))
        # 4. the model on the training rows, and the round's record
        record = {
            **fit_record(p, coef, held),
            "lp_value": solution.value,
            "edge": edge,
            "upper_bound": upper,
            "gap": upper - solution.value,
            "step": float(solution.w[-1]),
            "n_nonzero": float(np.count_nonzero(solution.w)),
            "solver_time": solution.seconds,
            "solver_iterations": float(solution.iterations),
            "time": time.perf_counter() - start,
        }
        new = _new_state(state, solution.d, solution.value, upper, held, factors, slots,
                         name, None)
        return RoundResult(new, records=(record,), refit=Refit(coef, joining))


class ERLPBoost(Method):
    """ERLPBoost (Warmuth, Glocer & Vishwanathan 2008): d_t = argmin P^t over the capped
    simplex, stopped when δ_t ≤ ε/2."""

    name = "erlpboost"
    entropic = True
    extra_keys = ("regularized_upper", "regularized_gap")

    def round(self, p: TCProblem, state: TCState, ensemble: Refit, t: int,
              warn: Warn) -> RoundResult:
        en = state.entropic
        start = time.perf_counter()
        # 1. pricing under d_{t−1}
        priced = price(p, state)
        if isinstance(priced, StopReason):
            return RoundResult(state, stop=priced)
        h, column, name = priced
        edge = column.edge
        upper = min(state.upper, edge)
        # 2. the stopping rule: δ_t = min_{q ≤ t} P^q(d^{q−1}) − P^{t−1}(d^{t−1}) ≤ ε/2,
        #    with P^t(d^{t−1}) = max(edge_t, max_{q<t} d^{t−1}·u_q) + Δ(d^{t−1}, d⁰)/η
        #    (its value at a point: exact) and P^{t−1}(d^{t−1}) taken as the last solve's
        #    dual value θ_{t−1}, a lower bound (the rule errs toward going on)
        reg_upper = min(en.reg_upper, max(edge, en.edges_max) + en.entropy / p.eta)
        if reg_upper - en.lower <= p.tol / 2 or name in state.seen:
            # (a column held already cannot close less: δ_t ≤ the last solve's gap)
            return RoundResult(replace(state, upper=upper,
                                       entropic=replace(en, reg_upper=reg_upper)),
                               stop=StopReason.GAP_CLOSED)
        # 3. d^t = argmin P^t over the capped simplex (the dual Newton method)
        u = column_entries(p, column)
        store = en.store.appended(en.n, u)
        sol = entropy_solve(
            lambda: solve_regularized(store.data, en.n + 1, p.log_d0, p.caps, p.eta,
                                      en.alpha, _accept(p.tol)),
            p, t, "ERLPBoost's solve", warn)
        if isinstance(sol, StopReason):
            return RoundResult(state, stop=sol)
        # 4. the soft-margin LP over the columns chosen: the round's coefficients
        solution = solve_with(p, state, u, t, warn)
        if isinstance(solution, StopReason):
            return RoundResult(state, stop=solution)
        joining, held, factors, slots = joined(p, state, ensemble, h, column)
        coef = coefficients(solution.w, factors, slots, len(held))
        record = {
            **fit_record(p, coef, held),
            **lp_record(solution, edge, upper, float(solution.w[-1])),
            **entropy_record(sol, solution),
            "regularized_upper": reg_upper,
            "regularized_gap": reg_upper - en.lower,
            "time": time.perf_counter() - start,
        }
        entropic = Entropic(store=store, n=en.n + 1, alpha=sol.alpha,
                            edges_max=float(sol.edges.max()), entropy=sol.entropy,
                            lower=sol.dual_value, reg_upper=reg_upper, coef=coef)
        new = _new_state(state, sol.d, solution.value, upper, held, factors, slots, name,
                         entropic)
        return RoundResult(new, records=(record,), refit=Refit(coef, joining))

    def round_bound(self, n: float, nu: float, tol: float) -> int | None:
        return erlpboost_round_bound(n, nu, tol)


class Restricted(NamedTuple):
    """SoftBoost's restricted LP after a pricing: its value and solution (None when the
    column was held already: nothing solved), the columns for the projection, and the
    ensemble's coefficients with the round's LP record."""

    value: float
    solution: object
    store: ColumnStore
    n: int
    joining: tuple
    held: tuple
    factors: tuple
    slots: tuple
    coef: np.ndarray
    record: dict


class SoftBoost(Method):
    """SoftBoost (Warmuth, Glocer & Rätsch 2007; TotalBoost, Warmuth, Liao & Rätsch 2006,
    is ν = 1): d_t is the relative-entropy projection of d⁰ onto the edge constraints
    ``d·u_q ≤ γ̂_t − ε``, stopped when they leave no point of the capped simplex."""

    name = "softboost"
    entropic = True
    extra_keys = ("bound",)

    def round(self, p: TCProblem, state: TCState, ensemble: Refit, t: int,
              warn: Warn) -> RoundResult:
        en = state.entropic
        start = time.perf_counter()
        # 1. pricing under d_{t−1}; γ̂_t, the least edge seen, is also the certificate's
        #    upper bound
        priced = price(p, state)
        if isinstance(priced, StopReason):
            return RoundResult(state, stop=priced)
        h, column, name = priced
        upper = min(state.upper, column.edge)
        bound = upper - p.tol  # the edge constraints' right-hand side γ̂_t − ε
        # 2. the LP over the columns: its value min_{d ∈ S} max_q d·u_q decides whether
        #    {d ∈ S : d·u_q ≤ γ̂_t − ε ∀ q} is empty, and gives the coefficients
        lp = self.restricted(p, state, ensemble, h, column, name, upper, t, warn)
        if isinstance(lp, StopReason):
            return RoundResult(state, stop=lp)
        record = {**fit_record(p, lp.coef, lp.held), **lp.record, "bound": bound}
        refit = Refit(lp.coef, lp.joining)
        # 3. infeasible (within INFEASIBLE_SLACK): stop; the column joined the final LP
        if lp.value >= bound - INFEASIBLE_SLACK:
            record.update({key: math.nan for key in _ENTROPY_KEYS})
            record["solver_time"] = record["lp_time"]
            record["time"] = time.perf_counter() - start
            new = replace(state, gamma=lp.value, upper=upper, held=lp.held,
                          factors=lp.factors, slots=lp.slots,
                          seen=state.seen | {name} - {None},
                          entropic=replace(en, store=lp.store, n=lp.n, coef=lp.coef))
            return RoundResult(new, records=(record,), refit=refit,
                               stop=StopReason.INFEASIBLE)
        # 4. d^t: the relative-entropy projection of d⁰ onto the constraints
        sol = entropy_solve(
            lambda: solve_projection(lp.store.data, lp.n, p.log_d0, p.caps, bound,
                                     en.alpha, _accept(p.tol)),
            p, t, "SoftBoost's projection", warn)
        if isinstance(sol, StopReason):
            state.lp_as_left()
            return RoundResult(state, stop=sol)
        record.update(entropy_record(sol, lp.solution))
        if lp.solution is None:
            record["solver_time"] = sol.seconds
        record["time"] = time.perf_counter() - start
        entropic = Entropic(store=lp.store, n=lp.n, alpha=sol.alpha,
                            edges_max=float(sol.edges.max()), entropy=sol.entropy,
                            lower=-math.inf, reg_upper=math.inf, coef=lp.coef)
        new = _new_state(state, sol.d, lp.value, upper, lp.held, lp.factors, lp.slots,
                         name, entropic)
        return RoundResult(new, records=(record,), refit=refit)

    @staticmethod
    def restricted(p: TCProblem, state: TCState, ensemble: Refit, h: Hypothesis,
                   column: SignedColumn, name: str, upper: float, t: int,
                   warn: Warn) -> Restricted | StopReason:
        """Step 2: the new column added and the LP solved from the last basis, or, for a
        column held already (it adds no constraint: only γ̂ moved), the last LP as it
        was; ``solver_failed`` when the LP's solve fails."""
        en, edge = state.entropic, column.edge
        state.lp_as_left()
        if name in state.seen:
            coef = en.coef
            record = {"lp_value": state.gamma, "edge": edge, "upper_bound": upper,
                      "gap": upper - state.gamma, "step": 0.0,
                      "n_nonzero": float(np.count_nonzero(coef)), "lp_time": 0.0}
            return Restricted(state.gamma, None, en.store, en.n, (), state.held,
                              state.factors, state.slots, coef, record)
        u = column_entries(p, column)
        solution = solve_with(p, state, u, t, warn)
        if isinstance(solution, StopReason):
            return solution
        store = en.store.appended(en.n, u)
        joining, held, factors, slots = joined(p, state, ensemble, h, column)
        coef = coefficients(solution.w, factors, slots, len(held))
        return Restricted(solution.value, solution, store, en.n + 1, joining, held,
                          factors, slots, coef,
                          lp_record(solution, edge, upper, float(solution.w[-1])))

    def round_bound(self, n: float, nu: float, tol: float) -> int | None:
        return softboost_round_bound(n, nu, tol)


#: The methods by name, chosen once when a problem is made (TotalBoost is SoftBoost
#: with ν = 1, which the set-up fixes).
BOXES: dict[str, Method] = {"lpboost": LPBoost(), "erlpboost": ERLPBoost(),
                            "softboost": SoftBoost(), "totalboost": SoftBoost()}
