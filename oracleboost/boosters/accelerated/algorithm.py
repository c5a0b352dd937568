"""Dual acceleration's algorithm box (Ji, Srebro & Telgarsky 2021, Algorithms 1 and 2):
the problem, the state between rounds and the round.

One round (:func:`accelerated_round`), the momentum form of eq. 1.1 (L94–103)::

    d_t     = Zᵀq_t                 (Algorithm 1; Algorithm 2: a row z_i, i ~ q_t)
    g_t     = β_t (g_{t−1} + d_t)
    w_{t+1} = w_t − θ_t (g_t + d_t)
    q_{t+1} = ∇ψ(Z w_{t+1})         (exponential loss: softmax(Z w_{t+1}))
    the certificate: γ(w_{t+1}) ≤ γ̄ ≤ min(‖Zᵀq_t‖, ‖g_t‖/mass)  (Lemma A, Lemma 3.2)

θ_t and β_t are the :class:`~oracleboost.boosters.accelerated.MomentumMethod`'s rules
(:mod:`oracleboost.optim.steps`); what stands for d_t is a step function of
:data:`STEPS` (the batch direction Zᵀq_t, the risk's gradient, the worst row, a row
drawn from q_t), chosen once when the problem is made.  The record and the stopping
rule read the certificate (:func:`certificate`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.engine.model import KernelModel
from oracleboost.engine.rounds import Problem, RoundResult, StopReason
from oracleboost.losses import MarginLoss
from oracleboost.optim import margin_passes
from oracleboost.optim.steps import RoundView
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Rows

__all__ = ["AcceleratedProblem", "AcceleratedState", "STEPS", "accelerated_round",
           "certificate", "batch_step", "gradient_step", "worst_row_step",
           "sampled_row_step", "row_step"]

#: log of the largest float64: a larger log-loss is a loss beyond float64 (inf).
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


class Moved(NamedTuple):
    """A step's new iterate: the momentum g_t and the mass of the dual points behind it
    (``g_t / gmass = Zᵀμ_t``, μ_t on the simplex), w_{t+1}, and the scores Z g_t (kept
    by Algorithm 2's incremental scores, else as they were) and Z w_{t+1}."""

    g: np.ndarray
    gmass: float
    w: np.ndarray
    Zg: Rows | None
    Zw: Rows


@dataclass
class AcceleratedProblem(Problem):
    """The data inside, seen only through Z's products.

    Binary: ``z_i = −y_i x_i / scale``, ``w`` of shape (J,).  Multiclass (Sec. 5.2, App.
    E): one implicit row ``z_{i,j} = x_i (e_j − e_{c_i})ᵀ / (√2 scale)`` for each example
    i and wrong class j ≠ c_i (the note's sign, consistent with the binary z_i; the
    paper's App. E has the opposite one), never materialised: ``w`` is a (J, K) matrix,
    ``Z w`` the (n, K) matrix of logits ``(S_ij − S_{i c_i})/(√2 scale)`` with S = X w
    and −∞ in the own-class cells, and ``Zᵀ q = Xᵀ(Q − e_c ∘ rowsum Q)/(√2 scale)``.
    """

    y: Rows  # ±1 (binary) or class indices (multiclass)
    K: int  # 2 for binary
    s: Rows  # sample weights (positive)
    log_s: Rows
    s_total: float  # Σ s, by lanes
    n: int
    blocks: RowBlocks  # the rows' passes (margin_passes), in lanes on threads
    bound: object
    scale: float
    fit_intercept: bool
    loss: MarginLoss
    method: object  # the MomentumMethod: θ_t, β_t and the direction's name
    view: RoundView  # what θ_t and β_t see: the learning rate, n and the horizon T
    J: int = 0  # columns of the finite class
    #: row i of the class's columns and its label (in memory, of the columns read once;
    #: on a cluster, from the worker that holds it)
    row_of: Callable[[int], tuple] | None = None
    gram: np.ndarray | None = None  # kernel form: Z Zᵀ, and w = Zᵀa is held as a
    kernel_model: KernelModel | None = None  # kernel form: the (empty) model
    #: what stands for Zᵀq_t (:data:`STEPS`), chosen once from ``method.direction``
    move: Callable[..., Moved] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.move = STEPS[self.method.direction]

    @property
    def multiclass(self) -> bool:
        return self.K > 2

    @property
    def form(self) -> str:
        """How the rows read Z (:func:`.margin_passes.dual_point`)."""
        return "kernel" if self.gram is not None else (
            "multiclass" if self.multiclass else "binary")

    @property
    def width(self) -> int:
        """Entries of Z w a row: K (multiclass), else 1."""
        return self.K if self.multiclass else 1

    def norm(self, v: np.ndarray) -> float:
        """‖v‖₂ (Frobenius for a (J, K) matrix), its squares summed exactly (the same
        bits on every CPU, unlike BLAS's ``dot``); kernel form: ‖Zᵀv‖ = √(vᵀ Z Zᵀ v)."""
        if self.gram is None:
            return math.sqrt(math.fsum(np.square(v).ravel()))
        return math.sqrt(max(float(v @ (self.gram @ v)), 0.0))

    def Z(self, w: np.ndarray) -> Rows:
        """``Z w``; multiclass: the (n, K) logits with 0 in the own-class cells (the
        dual point reads them as −∞: no row of Z, it would force margin 0, L864);
        kernel form: ``Z Zᵀ a``."""
        if self.gram is not None:
            return self.gram @ w
        J = w.shape[0] - int(self.fit_intercept)
        S = self.bound.combine(w[:J])
        return margin_passes.scores(self.blocks, S, self.y, self.scale, self.multiclass,
                                    w[J] if self.fit_intercept else None)

    def dual(self, Zw: Rows) -> margin_passes.DualPoint:
        """The dual point ``q = ∇ψ(Z w)`` (eq. C.1) and what the round reads from it."""
        return margin_passes.dual_point(self.blocks, self.loss, Zw, self.y, self.log_s,
                                        self.s, self.form)

    def query(self, q: Rows) -> tuple[Rows, np.ndarray]:
        """The query ``r`` of a dual point ``q`` and its sums over the rows (what
        :meth:`dual` gives with its ``q``): :meth:`ZT`'s arguments."""
        return margin_passes.query(self.blocks, q, self.y, self.form)

    def ZT(self, r: Rows, r_sums: np.ndarray) -> np.ndarray:
        """``Zᵀ q`` from the dual point's query ``r`` (binary ``−y q``: ``Xᵀ r / scale``;
        multiclass ``Q − e_c ∘ rowsum Q``: ``Xᵀ r / (√2 scale)``) and its sums over the
        rows (the intercept's entries)."""
        if self.gram is not None:
            return np.array(r, copy=True)  # Zᵀq has dual coefficients q (r is q)
        out = self.bound.correlation_vector(r)
        if not self.multiclass:
            if self.fit_intercept:
                out = np.append(out, r_sums[0])
            return out / self.scale
        if self.fit_intercept:
            out = np.vstack([out, r_sums])
        return out / (math.sqrt(2.0) * self.scale)

    def row(self, index: int) -> np.ndarray:
        """The row z of Z with flat index ``index`` (binary: example i; multiclass: the
        cell (i, j) of the (n, K) logits)."""
        if self.gram is not None:
            e = np.zeros(self.n)
            e[index] = 1.0  # z_i = Zᵀ e_i
            return e
        i, j = divmod(index, self.K) if self.multiclass else (index, None)
        x, label = self.row_of(i)
        x = np.asarray(x, dtype=np.float64)
        if self.fit_intercept:
            x = np.append(x, 1.0)
        if not self.multiclass:
            return -label * x / self.scale
        z = np.zeros((x.shape[0], self.K))
        z[:, j] = x
        z[:, label] = -x
        return z / (math.sqrt(2.0) * self.scale)

    def margin_unit(self) -> float:
        """γ_m = √2 × the reduced binary margin (Theorem 5.1: γ̄ = γ̄_m/√2)."""
        return math.sqrt(2.0) if self.multiclass else 1.0


@stored_as("AcceleratedState")
@dataclass(frozen=True)
class AcceleratedState:
    """w_t, the momentum g_{t−1} (and its scores Z g for Algorithm 2), the scores Z w_t,
    the dual point q_t (and what the round reads of it), the best upper bound on γ̄ so
    far, and the sampling generator."""

    w: np.ndarray
    g: np.ndarray
    Zg: Rows | None  # None: zero
    Zw: Rows
    dual: margin_passes.DualPoint
    upper: float
    rng: np.random.RandomState
    gmass: float = 0.0  # the mass of the dual point behind g (Zᵀμ_t = g_t/gmass)
    loss: object = None  # the loss whose dual point ``dual`` is


def accelerated_round(p: AcceleratedProblem, state: AcceleratedState, t: int,
                      tol: float) -> RoundResult:
    """Algorithm 1 (Algorithm 2 with a sampled row), one round (the module's box);
    ``t`` counts the steps taken, ``tol`` is the certificate's gap that stops the fit."""
    # Zᵀq_t: the certificate's first bound, and the batch methods' direction
    ZTq = p.ZT(state.dual.r, state.dual.r_sums)
    beta, theta = p.method.beta(p.view, t), p.method.theta(p.view, t)
    # g_t = β_t (g_{t−1} + d_t), w_{t+1} = w_t − θ_t (g_t + d_t), and Z w_{t+1}
    moved = p.move(p, state, ZTq, beta, theta)
    # q_{t+1} = ∇ψ(Z w_{t+1}), and what the next round and the record read from it
    dual = p.dual(moved.Zw)
    record = certificate(p, state, moved, dual, ZTq, beta, theta)
    upper, margin = record["margin_upper_bound"], record["margin"]
    stop = None
    if upper - margin <= tol:
        stop = StopReason.GAP_CLOSED
    elif upper <= tol and margin <= 0:
        stop = StopReason.NOT_SEPARABLE
    new = AcceleratedState(w=moved.w, g=moved.g, Zg=moved.Zg, Zw=moved.Zw, dual=dual,
                           upper=upper, rng=state.rng, gmass=moved.gmass, loss=p.loss)
    return RoundResult(new, ((moved.w,),), (record,), stop)


def batch_step(p: AcceleratedProblem, state: AcceleratedState, ZTq: np.ndarray,
               beta: float, theta: float) -> Moved:
    """d_t = Zᵀq_t: Algorithm 1 (β_t = t/(t + 1)) and normalized gradient descent
    (β ≡ 0)."""
    gmass = beta * (state.gmass + state.dual.qmass)
    g = beta * (state.g + ZTq)
    w = state.w - theta * (g + ZTq)
    return Moved(g, gmass, w, state.Zg, p.Z(w))


def gradient_step(p: AcceleratedProblem, state: AcceleratedState, ZTq: np.ndarray,
                  beta: float, theta: float) -> Moved:
    """Gradient descent on the risk, without momentum: ∇R(w) = (ℓ'(ψ)/n) Zᵀq_t."""
    # only the scalar factor may underflow (finite: a log-loss beyond float64's, the
    # exponential loss's ℓ' = ℓ, stopped the fit the round before, NonFiniteLoss; the
    # logistic's ℓ' ≤ 1)
    log_scale = state.dual.log_dpsi - math.log(p.s_total)
    w = state.w - theta * math.exp(log_scale) * ZTq
    return Moved(state.g, 0.0, w, state.Zg, p.Z(w))


def worst_row_step(p: AcceleratedProblem, state: AcceleratedState, ZTq: np.ndarray,
                   beta: float, theta: float) -> Moved:
    """d_t = z_i for the worst row i (lowest index): the batch perceptron."""
    i = margin_passes.worst_row(p.blocks, state.dual, p.width)
    return row_step(p, state, p.row(i), beta, theta)


def sampled_row_step(p: AcceleratedProblem, state: AcceleratedState, ZTq: np.ndarray,
                     beta: float, theta: float) -> Moved:
    """Algorithm 2: d_t = z_i for a row i_t ~ q_t (multiclass: a pair (example, class))."""
    i = margin_passes.draw_row(p.blocks, state.dual, state.rng.random_sample(), p.width)
    return row_step(p, state, p.row(i), beta, theta)


def row_step(p: AcceleratedProblem, state: AcceleratedState, z: np.ndarray, beta: float,
             theta: float) -> Moved:
    """The momentum step along one row z of Z, the scores updated incrementally:
    Z g_t = β(Z g_{t−1} + Z z), Z w_{t+1} = Z w_t − θ(Z g_t + Z z)."""
    Zz = p.Z(z)  # one column of the Gram matrix: n kernel evaluations
    gmass = beta * (state.gmass + 1.0)
    g = beta * (state.g + z)
    w = state.w - theta * (g + z)
    Zg, Zw = margin_passes.momentum_scores(p.blocks, state.Zw, state.Zg, Zz, beta, theta)
    return Moved(g, gmass, w, Zg, Zw)


#: What stands for Zᵀq_t, by :class:`MomentumMethod`'s ``direction``.
STEPS: dict[str, Callable[..., Moved]] = {
    "batch": batch_step,
    "gradient": gradient_step,
    "worst_row": worst_row_step,
    "sampled_row": sampled_row_step,
}


def certificate(p: AcceleratedProblem, state: AcceleratedState, moved: Moved,
                dual: margin_passes.DualPoint, ZTq: np.ndarray, beta: float,
                theta: float) -> dict[str, float]:
    """The round's record: the risk, the ℓ2 margin γ(w_{t+1}) = −max_i (Z w)_i / ‖w‖,
    and the running upper bound on γ̄ (weak duality, Lemma A): ‖Zᵀq_t‖ and ‖g_t‖/mass
    (``2g_t/t = Zᵀμ_t``, Lemma 3.2), each over the dual point's mass where it is not 1
    (the logistic ∇ψ with weights below 1; Algorithm 2's averaged rows)."""
    unit = p.margin_unit()  # report γ_m (multiclass) = √2 × the reduced margin
    norm = p.norm(moved.w)
    margin = -unit * dual.top / norm if norm > 0 else 0.0
    gmass = moved.gmass
    mu_bound = unit * p.norm(moved.g) / gmass if beta > 0 and gmass > 0 else math.nan
    edge = unit * p.norm(ZTq) / state.dual.qmass
    upper = min(state.upper, edge)
    if not math.isnan(mu_bound):
        upper = min(upper, mu_bound)
    log_loss = dual.log_sum - math.log(p.s_total)
    return {
        # (a loss beyond float64, the step having thrown the margins far off: inf,
        # with log_loss exact: NonFiniteLoss discards the round and stops the fit)
        "loss": math.exp(log_loss) if log_loss < _LOG_FLOAT_MAX else math.inf,
        "log_loss": log_loss,
        "edge": edge,
        "step": theta,
        "margin": margin,
        "margin_upper_bound": upper,
        "momentum_bound": mu_bound,
        "gap": upper - margin,
        "train_error": dual.wrong / p.s_total,
    }
