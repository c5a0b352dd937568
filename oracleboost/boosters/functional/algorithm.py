"""Grubb & Bagnell (2011), Algorithms 1–3: the problem, the state and one outer iteration.

Gradient descent in the function space L2(P̂) with the inner product
``<f, g> = Σ_i s_i <f(x_i), g(x_i)> / Σ_i s_i`` (sample weights ``s``; uniform weights
give the paper's (1/N) Σ, §2).  Functions are represented by their values on the training
points, arrays of shape (n,) or (n, K).  ``PROJ(v)`` asks the oracle for the hypothesis
nearest the direction ``v``: ``project(v, s)`` (least squares, eq. 4) or
``correlate(s · v)`` (eq. 3) for classes that cannot project; every step then moves
along the scaled projection ``a · h`` with ``a = <h, v>/||h||²``.

The oracle is asked for directions of *descent* (``v = −∇``, Friedman's
pseudo-residuals) and steps are added; the paper projects ∇ and subtracts.  The two
agree for classes closed under negation; for label-coded multiclass stumps they do
not, and ``project`` (vector-leaf stumps) is the default there.

Algorithm 1, naive (:class:`NaiveProjection`)::

    v = −∇R[f_{t−1}];  h = PROJ(v);  f_t = f_{t−1} + η_t a h

Algorithm 2, repeated (:class:`RepeatedProjection`): outer iteration t fits t weak
learners in succession to what the previous ones left of v, then takes one step.  The
paper prints the inner update unscaled; it is ``v' ← v' − a_k h_k``, which keeps
``v' = v − h*``::

    v' = v;  h* = 0;  for k = 1..t: h_k = PROJ(v'); a_k = <h_k, v'>/||h_k||²;
                                     h* += a_k h_k;  v' −= a_k h_k
    f_t = f_{t−1} + η_t h*

Algorithm 3, residual (:class:`ResidualProjection`): the unprojected part of every past
gradient is carried in Δ, so systematic projection error cannot persist::

    Δ += v;  h = PROJ(Δ);  a = <h, Δ>/||h||²;  f_t = f_{t−1} + η_t a h;  Δ −= a h

The three differ only in what PROJ is asked first, how many weak learners an outer
iteration fits, what each leaves to the next and what is carried to the next iteration:
each is a small frozen object with those four methods (:class:`Projection`), composed
by :func:`functional_round` with the step schedule η_t (a
:class:`~oracleboost.optim.steps.Schedule`: ``constant`` c, ``inv_sqrt`` c/√t (Thms 5,
7), ``inv_t`` c/(λt) (Thms 4, 6 with c = 2 and 1), ``smoothness`` c/Λ (Thm 3 with c = 1);
t = outer iteration, c = ``learning_rate``).  ``n_estimators`` counts weak learners, so
repeated projection runs about √(2T) outer iterations; its last one is truncated to the
budget and still takes its step.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.engine.rounds import Problem, RoundResult, StopReason, draw_seed
from oracleboost.losses import Loss, Squared
from oracleboost.losses.callable_objective import CallableObjective
from oracleboost.optim import row_passes
from oracleboost.optim.steps import RoundView, Schedule
from oracleboost.oracles.base import Hypothesis
from oracleboost.rows import column_kernels
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Rows
from oracleboost.rows.subsample import RoundDraws

__all__ = [
    "PROJECTIONS",
    "PROJECTION_RULES",
    "Projection",
    "NaiveProjection",
    "RepeatedProjection",
    "ResidualProjection",
    "functional_round",
    "initial_state",
    "resumed",
]


@dataclass
class _Problem(Problem):
    """The fit's data inside, the function-space inner product's weights, the bound oracle,
    the projection and the step schedule."""

    y: np.ndarray
    s: np.ndarray
    sw: np.ndarray | None  # s broadcast against f (None: equal weights, which cancel)
    total: float
    query_weight: np.ndarray | None
    weighted: bool  # s is not constant (else the inner product skips it)
    loss: Loss
    f0: np.ndarray
    shape: tuple[int, ...]
    ctx: dict
    bound: Any
    need: str
    projection: Projection
    schedule: Schedule
    view: RoundView  # what the schedule sees: c, λ and Λ
    blocks: RowBlocks
    #: the mean loss by blocks (a pointwise loss whose mean is ``np.average``'s)
    blockwise_loss: bool
    #: ``record(problem, f, l1_norm)``: the estimator's own entries of a round's records
    #: (the margin; a classifier's training error)
    record: Callable[..., dict[str, float]]
    #: the estimator's class name, for messages
    booster: str
    #: ``init_score``: each training row's own starting score, added to f_0 (None: none)
    offset: np.ndarray | None = None
    #: stochastic boosting's draws (``subsample``, ``colsample_bytree``), None without
    draws: RoundDraws | None = None
    #: each weak learner fits Newton's target ``−g/H`` with the weights ``s H``
    #: (``query="newton"``, and a loss given by a function): :func:`newton_view`
    newton: bool = False


@stored_as("FunctionalState")
@dataclass(frozen=True)
class _State:
    """Between outer iterations: f on the training points, Δ (residual projection),
    the outer iteration count t and the generator of oracle seeds."""

    f: np.ndarray
    #: Δ: None where the projection carries none (every rule but Algorithm 3's), so that
    #: no n-sized array of zeros is held through the fit
    residual: np.ndarray | None
    outer: int
    rng: np.random.RandomState
    #: −∇R[f] when the last step already made it (the squared loss's fused pass), else
    #: None: made at the start of the round
    descent: Rows | None = None
    #: that descent's ``max |v|`` and ``Σ s v²`` (inner-product weights), from the same
    #: pass, else None
    descent_norms: tuple[float, float] | None = None
    #: ``(memo, c)`` when that descent is the last target less ``c`` times the last
    #: answer, whose ``query_memo`` is ``memo`` (the naive projection without weights):
    #: the oracle may make its query from it (``_project_shifted``), else None
    shift: tuple | None = None
    #: the loss and the projection's name the fused parts above were made for
    made_for: tuple | None = None
    #: the seed of stochastic boosting's draws (None: the fit draws nothing)
    draw_seed: int | None = None


def initial_state(problem: _Problem, rng: np.random.RandomState | None) -> _State:
    """f_0 on every training row (plus the row's ``init_score``, where given), Δ = 0
    (Algorithm 3, line 1), t = 0.  The rows are made by the problem's row blocks (in
    memory, or on the workers of a cluster); a constant f_0 of vector scores is a row of
    K equal entries."""
    row = np.broadcast_to(np.asarray(problem.f0), problem.shape[1:])
    f = problem.blocks.full(row)
    if problem.offset is not None:  # init_score: in memory (refused elsewhere)
        f = f + problem.offset
    residual = (problem.blocks.full(np.zeros_like(row))
                if problem.projection.carries_residual else None)
    return _State(f=f, residual=residual, outer=0, rng=rng)


def resumed(problem: _Problem, state: _State) -> _State:
    """The state a warm start continues from: the last pass's −∇R[f] (and its norms and
    shift) are the loss's and the projection's it was made for; a warm start that
    changed either makes its own, and one that changed to Algorithm 3 starts from Δ = 0."""
    if problem.projection.carries_residual and state.residual is None:
        row = np.broadcast_to(np.asarray(problem.f0), problem.shape[1:])
        state = dataclasses.replace(state, residual=problem.blocks.full(np.zeros_like(row)))
    if state.descent is None or state.made_for == (problem.loss, problem.projection.name):
        return state
    return dataclasses.replace(state, descent=None, descent_norms=None, shift=None,
                               made_for=None)


# -- the function space's inner product -------------------------------------------------

#: Largest entries within 2**±_SAFE_EXPONENT need no rescaling: the weighted inner
#: products of two such arrays neither overflow nor lose their leading terms to underflow
#: (the sample weights' mean is in [1, 2)), so ``a`` is used as it is.
_SAFE_EXPONENT = 300


def _unit(a: Rows, blocks: RowBlocks, top: float) -> tuple[Rows | None, int]:
    """``(a · 2**-e, e)`` with the largest ``|entry|`` of the copy in [0.5, 1) when ``a``'s
    largest entry ``top`` lies outside 2**±300, else ``(a, 0)``; ``(None, 0)`` when ``a``
    is all zeros.  Scaling by a power of two is exact, so inner products of the copies are
    those of ``a`` times a power of two, without overflow or underflow on the way; in the
    safe band (every ordinary fit) the copy is skipped, which gives the same products."""
    if top == 0.0:
        return None, 0
    e = math.frexp(top)[1]
    if -_SAFE_EXPONENT <= e <= _SAFE_EXPONENT:
        return a, 0
    return row_passes.ldexp(blocks, a, -e), e


class _Target(NamedTuple):
    """A vector PROJ is asked: its ``rows``, its ``unit`` copy (``rows · 2**-exp``, the
    rows themselves in the safe band, None when all zeros) and ``square = <unit, unit>``."""

    rows: Rows
    unit: Rows | None
    exp: int
    square: float


class InnerProduct:
    """``<a, b> = Σ_i s_i a_i·b_i / Σ_i s_i`` on the training rows (L2(P̂), Grubb &
    Bagnell 2011, §2), one compiled pass by row blocks; equal weights cancel.

    The step's inner products are taken on copies scaled by powers of two to a largest
    entry in [0.5, 1) (exact): ``<h, h>`` and ``<v, v>`` neither underflow to 0 (one
    dominant weight leaves the other rows 1e-200 of the mass) nor overflow, and the step
    and the edge are scaled back exactly."""

    def __init__(self, p: _Problem) -> None:
        self.blocks = p.blocks
        self.s, self.mass = (
            (p.s, p.total) if p.weighted else (column_kernels.NO_WEIGHTS, p.blocks.n)
        )

    @property
    def weights(self) -> Rows | None:
        """The weights of the sums, None when equal."""
        return None if self.s is column_kernels.NO_WEIGHTS else self.s

    def __call__(self, a: Rows, b: Rows) -> float:
        return row_passes.weighted_inner(self.blocks, a, b, self.s) / self.mass

    def unit(self, a: Rows, others: tuple = (), known: tuple[float, float] | None = None
             ) -> tuple[Rows | None, int, float, list[float]]:
        """``_unit(a)``, ``max |a|`` and the inner products of the unit copy with itself
        and ``others``: one pass (peak_and_inners) when no copy is needed, the same
        numbers as separate passes; none when ``known`` gives ``a``'s ``(max |a|,
        Σ s a²)`` (the last step's pass made them) and there are no ``others``."""
        if known is not None and not others:
            top, sums = known[0], [known[1]]
        else:
            top, sums = row_passes.peak_and_inners(self.blocks, a, [a, *others], self.s)
        a_unit, e = _unit(a, self.blocks, top)
        if a_unit is None:
            return None, 0, top, [0.0] * (1 + len(others))
        if a_unit is not a:  # scaled: the products of the copy
            return a_unit, e, top, [self(a_unit, b) for b in (a_unit, *others)]
        return a, 0, top, [x / self.mass for x in sums]

    def target(self, rows: Rows, known: tuple[float, float] | None = None) -> _Target:
        unit, e, _, (square,) = self.unit(rows, known=known)
        return _Target(rows, unit, e, square)

    def residual_norm(self, target: Rows, out: Rows, a: float) -> float:
        """``||target − a · out||`` in one pass."""
        return math.sqrt(row_passes.weighted_residual(
            self.blocks, target, out, a, self.s) / self.mass)


class ClassWeightedInnerProduct(InnerProduct):
    """``<a, b> = Σ_i Σ_k w_ik a_ik b_ik / Σ w`` for weights of shape (n, K), one
    column a class (Newton's ``s H`` for vector scores, :func:`newton_view`): each
    product is :class:`InnerProduct`'s unweighted one of ``w · a`` with ``b``, made by
    row blocks in the same fixed order."""

    def __init__(self, p: _Problem) -> None:
        self.blocks, self.mass = p.blocks, p.total
        self.s = column_kernels.NO_WEIGHTS  # (the products are of w · a: no row weights)
        self.w = p.s

    @property
    def weights(self) -> Rows | None:
        return None  # (no weights of a row: the fused squared step never runs here)

    def __call__(self, a: Rows, b: Rows) -> float:
        wa = row_passes.scaled(self.blocks, a, self.w)
        return row_passes.weighted_inner(self.blocks, wa, b, None) / self.mass

    def unit(self, a: Rows, others: tuple = (), known: tuple[float, float] | None = None
             ) -> tuple[Rows | None, int, float, list[float]]:
        top = row_passes.peak(self.blocks, a)
        a_unit, e = _unit(a, self.blocks, top)
        if a_unit is None:
            return None, 0, top, [0.0] * (1 + len(others))
        return a_unit, e, top, [self(a_unit, b) for b in (a_unit, *others)]

    def residual_norm(self, target: Rows, out: Rows, a: float) -> float:
        left = row_passes.combined(self.blocks, target, [(-a, out)])
        return math.sqrt(max(self(left, left), 0.0))


# -- the projections: Algorithms 1, 2 and 3 ----------------------------------------------

@dataclass(frozen=True)
class Projection:
    """How an outer iteration fits its weak learners (Grubb & Bagnell 2011, §§3–4): what
    PROJ is asked first (:meth:`start`), how many weak learners it fits
    (:meth:`learners`), what each answer leaves to the next (:meth:`after`) and what is
    carried to the next iteration (:meth:`carried`).  Each method's default is what two
    of the three algorithms share; a subclass changes the third's."""

    name: ClassVar[str]
    #: PROJ is asked v = −∇R[f] itself and nothing is carried (Algorithm 1): the squared
    #: loss's step pass also gives ``||v − a h||``, and the next query is this one less
    #: the step (what an oracle may make from this query: ``_project_shifted``)
    asks_descent: ClassVar[bool] = False
    #: the guarantees need a decreasing step (Thms 4–7); Thm 3 covers a constant one
    decreasing_step: ClassVar[bool] = True
    #: Δ is carried from one outer iteration to the next (Algorithm 3 alone)
    carries_residual: ClassVar[bool] = False

    def start(self, blocks: RowBlocks, residual: Rows, v: Rows) -> Rows:
        """What PROJ is asked first: v (Algorithms 1 and 2, line 3)."""
        return v

    def learners(self, outer: int, budget: int) -> int:
        """Weak learners of outer iteration ``outer``: one (Algorithms 1 and 3)."""
        return 1

    def after(self, ip: InnerProduct, target: _Target, a: float, out: Rows, fused: bool
              ) -> tuple[_Target, float]:
        """What ``a · h`` leaves unprojected and its norm (Algorithms 2 and 3, line 8).
        Algorithm 2 prints its update unscaled, ``v' ← v' − h_k``; the scaled one keeps
        ``v' = v − h*``, which its analysis (Theorems 4, 5) uses."""
        left = ip.target(row_passes.combined(ip.blocks, target.rows, [(-a, out)]))
        return left, math.ldexp(math.sqrt(left.square), left.exp)

    def carried(self, residual: Rows, left: Rows) -> Rows:
        """Δ for the next iteration: unchanged (None) but for Algorithm 3."""
        return residual


@dataclass(frozen=True)
class NaiveProjection(Projection):
    """Algorithm 1 (Mason et al. 1999; Friedman 2000): one weak learner fitted to
    v = −∇R[f_{t−1}], one step ``η_t a h``.  Linear rate for λ-strongly convex,
    Λ-smooth losses with η = 1/Λ (Theorem 3)."""

    name: ClassVar[str] = "naive"
    asks_descent: ClassVar[bool] = True
    decreasing_step: ClassVar[bool] = False

    def after(self, ip: InnerProduct, target: _Target, a: float, out: Rows, fused: bool
              ) -> tuple[_Target, float]:
        """Nothing is carried: only ``||v − a h||`` is recorded (NaN here when the
        squared loss's step pass gives it)."""
        return target, math.nan if fused else ip.residual_norm(target.rows, out, a)


@dataclass(frozen=True)
class RepeatedProjection(Projection):
    """Algorithm 2: outer iteration t fits t weak learners in succession to what the
    earlier ones left of v (cut to the budget), then takes one step (Theorems 4, 5)."""

    name: ClassVar[str] = "repeated"

    def learners(self, outer: int, budget: int) -> int:
        return min(outer, budget)  # line 4: k = 1..t


@dataclass(frozen=True)
class ResidualProjection(Projection):
    """Algorithm 3: PROJ is asked Δ + v, and what the answer leaves is carried as the
    next Δ (Theorems 6, 7)."""

    name: ClassVar[str] = "residual"
    carries_residual: ClassVar[bool] = True

    def start(self, blocks: RowBlocks, residual: Rows, v: Rows) -> Rows:
        # line 4: Δ + v (1·v is v exactly: the same bits as the sum)
        return row_passes.combined(blocks, residual, [(1.0, v)])

    def carried(self, residual: Rows, left: Rows) -> Rows:
        return left  # line 8: Δ ← Δ − a h


#: The projections by name (``projection=``).
PROJECTION_RULES: dict[str, Projection] = {
    rule.name: rule for rule in (NaiveProjection(), RepeatedProjection(), ResidualProjection())
}
PROJECTIONS = tuple(PROJECTION_RULES)


# -- one outer iteration -----------------------------------------------------------------

class _Answer(NamedTuple):
    """A weak learner of this iteration: ``h``, its coefficient ``a``, its edge, the
    norm of what it left, its seconds and ``max |h|`` on the training rows."""

    h: Hypothesis
    a: float
    edge: float
    left: float
    seconds: float
    top: float


class _Stepped(NamedTuple):
    """f_t, its loss, and what the squared loss's fused pass made as well: the next
    descent, its norms and shift, and the naive answer's ``||v − a h||``."""

    f: Rows
    loss: float
    descent: Rows | None = None
    norms: tuple[float, float] | None = None
    shift: tuple | None = None
    left: float | None = None


def functional_round(p: _Problem, state: _State, ensemble: Any, budget: int,
                     fitted: int = 0) -> RoundResult:
    """One outer iteration t of Algorithm 1, 2 or 3 (``p.projection``; ``budget`` weak
    learners left, ``fitted`` fitted before), Grubb & Bagnell (2011).

    Stochastic boosting (``p.draws``, Friedman 2002): each weak learner is fitted to the
    target on its round's sample of rows and features alone (the other rows' weights 0);
    the step along it, the loss and the records are made on every row."""
    if p.newton or isinstance(p.loss, CallableObjective):
        # the loss's gradient and hessian: Newton's targets and weights (the query's
        # problem; the step's loss and records keep the fit's own weights)
        q, v = newton_view(p, state.f)
    else:
        q = p
        # line 2 (Alg. 3: 3): v = −∇R[f_{t−1}] (the last step's fused pass may have
        # made it)
        v = state.descent if state.descent is not None else descent(p, state.f)
    # (Newton's weights of vector scores, one column a class: their own inner product)
    ip = ClassWeightedInnerProduct(q) if q is not p and q.s.ndim == 2 else InnerProduct(q)
    rule = p.projection
    eta = p.schedule(p.view, state.outer)  # η_t, t = state.outer + 1 (counted from 1)
    outer = state.outer + 1
    first = rule.start(p.blocks, state.residual, v)  # v, or Δ + v (Alg. 3, line 4)
    target = ip.target(first, state.descent_norms if first is state.descent else None)
    vv = target.square if target.unit is v else ip(v, v)  # (v itself: the same product)
    if target.square == 0.0:
        return RoundResult(state, stop=StopReason.ZERO_GRADIENT)
    fused = p.blockwise_loss and type(p.loss) is Squared
    stop, answers = None, []
    for _ in range(rule.learners(outer, budget)):  # Alg. 2, line 4; once for Algs. 1, 3
        t0 = time.perf_counter()
        h = _proj(q, state, target.rows, fitted + len(answers))  # h = PROJ(target)
        _, h_exp, top, (hh, ht) = ip.unit(h.train_output, (target.unit,))
        if hh == 0.0:  # h = 0 wherever the weights are representable
            stop = StopReason.ZERO_HYPOTHESIS
            break
        a = _coefficient(p, ht, hh, target.exp, h_exp)  # a = <h, target>/||h||²
        edge = ht / (math.sqrt(hh) * math.sqrt(target.square))  # Definition 1's cosine
        target, left = rule.after(ip, target, a, h.train_output, fused)  # Algs. 2, 3 l. 8
        answers.append(_Answer(h, a, edge, left, time.perf_counter() - t0, top))
        if target.square == 0.0:
            break  # the gradient is represented exactly: nothing left to fit
    residual = rule.carried(state.residual, target.rows)  # Δ (Alg. 3, line 8)
    if not answers:
        return RoundResult(state, stop=stop)
    # the step f_t = f_{t−1} + η_t Σ_k a_k h_k (Algs. 1, 3 line 4 or 7; Alg. 2 line 10)
    if fused and len(answers) == 1:
        step = _fused_squared_step(p, ip, state.f, answers[0], target.rows, eta, stop,
                                   budget)
        if step.left is not None:
            answers[0] = answers[0]._replace(left=step.left)
    else:
        step = _step(p, state.f, [(eta * x.a, x.h.train_output) for x in answers])
    terms = tuple((x.h.detach(), eta * x.a, x.top) for x in answers)
    shared = {"loss": step.loss, **p.record(p, step.f, ensemble.l1_norm(pending=terms))}
    records = tuple(
        {**shared, "edge": x.edge, "step": eta * x.a, "grad_norm": math.sqrt(vv),
         "residual_norm": x.left, "outer": outer, "time": x.seconds}
        for x in answers
    )
    new = _State(f=step.f, residual=residual, outer=outer, rng=state.rng,
                 descent=step.descent, descent_norms=step.norms, shift=step.shift,
                 made_for=(p.loss, rule.name), draw_seed=state.draw_seed)
    return RoundResult(new, terms, records, stop)


def newton_view(p: _Problem, f: Rows) -> tuple[_Problem, np.ndarray]:
    """The problem as the query sees it for a loss with a gradient g and a hessian H
    (``query="newton"``: a :class:`~oracleboost.losses.base.SecondOrder` loss, or a
    :class:`~oracleboost.losses.CallableObjective`), and the target: PROJ is asked
    ``−g/H`` with the weights ``s H``, the least-squares form of the loss's
    second-order expansion (Friedman, Hastie & Tibshirani 2000; Chen & Guestrin 2016).
    A tree's leaf is then ``−Σ s g / Σ s H``, LightGBM's leaf value, and the step
    coefficient ``a = <h, −g/H>_{sH} / <h, h>_{sH} = Σ s h (−g) / Σ s H h²`` is
    Newton's step along h.  With ``H = 1`` both are the gradient step's, bit for bit
    (``s · 1`` and ``−g / 1`` are ``s`` and ``−g`` exactly).

    Vector scores (f of shape (n, K)) give H of shape (n, K), the hessian's diagonal:
    the weights are ``s_i H_ik``, one column a class, so an oracle that fits each class
    with its own weights (:class:`~oracleboost.oracles.PerClassOracle`) grows a tree a
    class with Newton's leaves, and the inner product sums ``s_i H_ik`` over both
    (:class:`ClassWeightedInnerProduct`)."""
    g, hess = p.loss.grad_hess(p.y, f)
    s = p.s if p.s is None or hess.ndim == 1 else p.s[:, None]
    w = hess if s is None else s * hess
    weighted = not bool((w == w.flat[0]).all())
    qw = w if weighted else None
    # (by lanes, as every sum of the fit; a row's K weights summed in class order)
    total = row_passes.total(p.blocks, w if w.ndim == 1 else w.sum(axis=1))
    view = dataclasses.replace(p, s=w, sw=qw, query_weight=qw, weighted=weighted,
                               total=total)
    return view, -g / hess


def _proj(p: _Problem, state: _State, target: Rows, learner: int) -> Hypothesis:
    """PROJ(target): least squares (eq. 4) with the fit's weights, from the last query's
    memo when ``target`` is the descent the last step's fused pass made; else the inner
    product (eq. 3), asked ``s · target``.  One seed of the state's generator each.

    With stochastic boosting's draws the weak learner ``learner`` (counted from 0 over
    the fit and its warm starts) sees its sample alone: the weights (or ``s · target``)
    of the other rows are 0, and it may use its features alone."""
    seed = draw_seed(state.rng)
    if p.draws is not None:
        return _proj_drawn(p, p.draws, state.draw_seed, target, learner, seed)
    if p.need == "project" and state.shift is not None and target is state.descent:
        return p.bound._project_shifted(target, *state.shift, random_state=seed)
    if p.need == "project":
        return p.bound.project(target, p.query_weight, random_state=seed)
    r = target if p.sw is None else row_passes.scaled(p.blocks, target, p.sw)
    return p.bound.correlate(r, random_state=seed)


def _proj_drawn(p: _Problem, draws: RoundDraws, key: int, target: Rows, learner: int,
                seed: int | None) -> Hypothesis:
    """PROJ(target) on the rows and features drawn for ``learner`` (Friedman 2002)."""
    if p.need == "project":
        w, only = draws.query(p.blocks, key, learner, p.query_weight)
        return p.bound.project(target, w, random_state=seed, **only)
    r = target if p.sw is None else row_passes.scaled(p.blocks, target, p.sw)
    r, only = draws.query(p.blocks, key, learner, r)
    return p.bound.correlate(r, random_state=seed, **only)


def _coefficient(p: _Problem, ht: float, hh: float, t_exp: int, h_exp: int) -> float:
    """``a = <h, v>/<h, h>`` from the unit copies' products, scaled back exactly; an
    ``a`` past float64's range is refused, naming the scales."""
    a = math.ldexp(ht / hh, t_exp - h_exp)
    if not math.isfinite(a):
        raise OverflowError(
            f"{p.booster}: the step <h, v>/<h, h> along "
            f"{type(p.bound.oracle).__name__}'s hypothesis passes float64's range "
            f"(max |h| = {math.ldexp(1.0, h_exp):.3g}, max |v| = "
            f"{math.ldexp(1.0, t_exp):.3g}); rescale y or X"
        )
    return a


def _fused_squared_step(p: _Problem, ip: InnerProduct, f: Rows, answer: _Answer,
                        target: Rows, eta: float, stop: StopReason | None, budget: int
                        ) -> _Stepped:
    """The squared loss's step ``f + c h`` (c = η_t a) of one weak learner, its loss, the
    next round's descent and that descent's norms in one pass
    (:func:`~oracleboost.optim.row_passes.squared_step`: the same bits as separate
    passes); the naive projection's ``||target − a h||`` too.

    With the naive projection and no weights in the query, the next round's query is the
    next descent itself, ``target − c h``: the oracle may start on it (``_prefetch``: on
    a cluster, its histograms then come back with this step's stats, a wait fewer a
    round), and may make it from what it kept of this query (the answer's
    ``query_memo``; kept after the last round too, for a warm start)."""
    c, naive, project = eta * answer.a, p.projection.asks_descent, p.need == "project"
    unweighted = p.query_weight is None if project else p.sw is None
    # (a stochastic fit's next query is on other rows or features: never this shift)
    nxt = naive and unweighted and stop is None and p.draws is None
    memo = answer.h.query_memo if nxt and project else None
    shift = None if memo is None else (memo, c)
    into_h = _spare(answer.h, f)
    step = row_passes.squared_step(
        p.blocks, p.y, f, answer.h.train_output, c, p.s, p.total, inner_s=ip.weights,
        residual_of=(target, answer.a) if naive else None,
        prefetch=functools.partial(p.bound._prefetch, shifted=shift, project=project)
        if nxt and budget > 1 else None, into_h=into_h)
    if into_h:  # (its array now holds the new scores)
        answer.h.train_output, answer.h.spare_train_output = None, False
    if not math.isfinite(step.loss):  # v's sum of squares passes float64's range:
        shift = None  # the next query is summed from its rows (which check it)
    left = math.sqrt(step.residual_square / ip.mass) if naive else None
    return _Stepped(step.f, step.loss, step.descent, (step.descent_peak, step.descent_square),
                    shift, left)


def _spare(h: Hypothesis, f: Rows) -> bool:
    """Whether the step may write the new scores over ``h.train_output``: the oracle
    made it for this answer alone (``Hypothesis.spare_train_output``), and it is a
    writable float64 array of this process shaped as the scores, owning its memory (an
    answer a joblib cache maps from its files with ``mmap_mode="r+"`` is writable, and
    writing there would change the cached answer)."""
    out = h.train_output
    return (h.spare_train_output and isinstance(out, np.ndarray)
            and isinstance(f, np.ndarray) and out.dtype == np.float64
            and out.shape == f.shape and out.flags.c_contiguous and out.flags.writeable
            and out.flags.owndata)


def _step(p: _Problem, f: Rows, outputs: list[tuple[float, Rows]]) -> _Stepped:
    """``f + Σ_k c_k out_k`` (each ``c_k · out_k`` added in turn) and its mean loss."""
    f = row_passes.combined(p.blocks, f, outputs)
    if p.blockwise_loss:
        return _Stepped(f, row_passes.weighted_mean_loss(p.blocks, p.loss, p.y, f, p.s,
                                                         p.total))
    return _Stepped(f, p.loss(p.y, f, p.s, **p.ctx))


def descent(p: _Problem, f: Rows) -> Rows:
    """``−∇R[f]`` on the training points: a pointwise loss block by block; a loss that
    couples the rows (ranking) at once (its gradient in L2(P̂) is N·∂R/∂f(x_n), §2)."""
    if not (p.loss.pointwise and not p.ctx):
        return -p.loss.gradient(p.y, f, **p.ctx)
    return row_passes.descent(p.blocks, p.loss, p.y, f)
